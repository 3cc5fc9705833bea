/// A Flickr API key. It prints as `•••` so that it cannot reach a log line, an error message
/// or an event by accident; only ``FlickrClient`` reads ``secret`` to build a request.
///
/// ```swift
/// let key = try FlickrAPIKey.configured()     // FLICKR_API_KEY, or the config file
/// print(key)                                  // •••
/// ```
public struct FlickrAPIKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    package let secret: String

    /// Refuses an empty key and characters that do not belong in one (Flickr keys are 32 hex
    /// digits; any printable ASCII without spaces is accepted, for compatible services).
    public init(_ text: String) throws(PhotoSourceError) {
        let trimmed = text.trimmingWhitespace
        guard !trimmed.isEmpty else { throw PhotoSourceError(.configuration, "the Flickr API key is empty") }
        guard trimmed.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw PhotoSourceError(.configuration, "the Flickr API key holds spaces or characters outside printable ASCII")
        }
        secret = trimmed
    }

    public var description: String { "•••" }
    public var debugDescription: String { "FlickrAPIKey(•••)" }

    /// `text` with every occurrence of the key replaced by `•••`: applied to anything the
    /// service or the network sends back before it becomes a message.
    public func redact(_ text: String) -> String {
        // Matched as Unicode scalars, not Characters: a combining mark after the key's last
        // character makes a different Character, and the key would not be recognised.
        String(text.unicodeScalars.replacing(secret.unicodeScalars, with: "•••".unicodeScalars))
    }

    /// The environment variable that holds the key.
    public static let environmentVariable = "FLICKR_API_KEY"

    /// The key from `FLICKR_API_KEY`, else from the config file
    /// (`$XDG_CONFIG_HOME/virtual-tourist/flickr-api-key`, by default under `~/.config`), else
    /// nil: no key is configured.
    ///
    /// - Throws: ``PhotoSourceError`` `.configuration` when a key is set but unusable, or the
    ///   file exists and cannot be read.
    public static func configured(environment: [String: String]) throws(PhotoSourceError) -> FlickrAPIKey? {
        if let value = environment[environmentVariable] {
            return try FlickrAPIKey(value)
        }
        guard let path = configFilePath(environment: environment) else { return nil }
        guard let text = try ConfigFile.read(path) else { return nil }
        do { return try FlickrAPIKey(text) } catch {
            throw PhotoSourceError(.configuration, "\(path): \(error.message)")
        }
    }

    /// Where the key file is looked for.
    public static func configFilePath(environment: [String: String]) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/virtual-tourist/flickr-api-key"
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.config/virtual-tourist/flickr-api-key"
    }
}

extension String {
    package var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
