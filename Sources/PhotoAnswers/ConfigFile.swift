import FileIO

/// Reads the small configuration file that may hold the API key, through the project's file
/// interface.
enum ConfigFile {
    /// The most a key file may hold: it is one line.
    static let maxBytes = 4096

    /// The file's text, or nil when there is no such file.
    static func read(_ path: String, fileSystem: any FileSystem = PosixFileSystem()) throws(PhotoSourceError) -> String? {
        let bytes: [UInt8]
        do {
            guard let status = try fileSystem.status(path) else { return nil }
            guard status.kind == .file else { throw PhotoSourceError(.configuration, "\(path) is not a file") }
            guard status.size <= maxBytes else {
                throw PhotoSourceError(.configuration, "\(path) is larger than \(maxBytes) bytes; it should hold only the key")
            }
            let file = try fileSystem.openFile(path, .readOnly)
            defer { try? file.close() }
            bytes = try file.read(count: maxBytes + 1, at: 0)
        } catch let error as PhotoSourceError {
            throw error
        } catch {
            throw PhotoSourceError(.configuration, "cannot read \(path): \(error)")
        }
        guard bytes.count <= maxBytes else {
            throw PhotoSourceError(.configuration, "\(path) is larger than \(maxBytes) bytes; it should hold only the key")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PhotoSourceError(.configuration, "\(path) is not UTF-8 text")
        }
        return text
    }
}
