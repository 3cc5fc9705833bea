import FileIO

/// Why the blob store refused or failed.
public struct BlobError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Not 64 hexadecimal digits.
        public static let invalidDigest = Code("invalid-digest")
        /// Over the size limit.
        public static let tooLarge = Code("too-large")
        /// Not one of the accepted media types (an HTML error page, say).
        public static let unacceptableType = Code("unacceptable-type")
        /// A roots provider could not say what is in use: collection refuses to run.
        public static let rootsUnavailable = Code("roots-unavailable")
        /// A file system call failed; ``BlobError/cause`` holds the ``FileIO/IOError``.
        public static let io = Code("io")
    }

    public var code: Code
    public var message: String
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause)"
    }

    static func io(_ error: any Error, _ doing: String) -> BlobError {
        if let error = error as? BlobError { return error }
        return BlobError(.io, "cannot \(doing)\((error as? IOError)?.advice ?? "")", cause: error)
    }
}
