/// Everything the log can refuse or fail at: a code to branch on, a message for people, where
/// in the log it happened when that is known, and the underlying cause.
///
/// ```swift
/// do { _ = try EventLog.open(at: path) }
/// catch let error as LogError where error.code == .locked { print(error.message) }
/// ```
public struct LogError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The path cannot hold a log (not a directory, or a directory holding something else).
        public static let notALog = Code("not-a-log")
        /// A file of the log has a format version this code does not read.
        public static let unsupportedVersion = Code("unsupported-version")
        /// Another writer holds the log's lock.
        public static let locked = Code("locked")
        /// Damage that is not a torn tail: checksum, chain, sequence or structure (FORMAT.md,
        /// "Recovery and damage"). ``LogError/file``, ``LogError/offset`` and
        /// ``LogError/sequence`` say where.
        public static let corrupt = Code("corrupt")
        /// One event is larger than the configured limit.
        public static let eventTooLarge = Code("event-too-large")
        /// One append is larger than a batch may be.
        public static let batchTooLarge = Code("batch-too-large")
        /// The clock reads earlier than the last event's time.
        public static let clockWentBackwards = Code("clock-went-backwards")
        /// An argument is out of its range (a configuration value, a sequence number of 0).
        public static let invalidArgument = Code("invalid-argument")
        /// The log was closed.
        public static let closed = Code("closed")
        /// An earlier `fsync` or write failed in a way that leaves the file's state unknown; the
        /// log refuses further appends until it is reopened (which recovers from the disk).
        public static let writerFailed = Code("writer-failed")
        /// The log is in format 1, which this version reads, verifies and upgrades but no longer
        /// writes: ``LogUpgrade`` (`vt upgrade`) converts it, keeping the old log beside the new.
        public static let needsUpgrade = Code("needs-upgrade")
        /// A system call failed; ``LogError/cause`` holds the ``FileIO/IOError``.
        public static let io = Code("io")
    }

    public var code: Code
    public var message: String
    /// The file concerned, when there is one.
    public var file: String?
    /// The byte offset in ``file``, when known.
    public var offset: Int64?
    /// The sequence number concerned (for damage: the one expected at ``offset``).
    public var sequence: UInt64?
    /// The error underneath, such as an ``FileIO/IOError``.
    public var cause: (any Error)?

    public init(
        _ code: Code, _ message: String, file: String? = nil, offset: Int64? = nil,
        sequence: UInt64? = nil, cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.offset = offset
        self.sequence = sequence
        self.cause = cause
    }

    /// The message, then the cause. Messages name their place themselves.
    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause)"
    }
}

import FileIO

extension LogError {
    /// Wraps a failed system call.
    static func io(_ error: IOError, _ doing: String) -> LogError {
        LogError(.io, "cannot \(doing)\(error.advice)", file: error.path, cause: error)
    }

    /// Damage at a place in a segment.
    static func corrupt(_ what: String, file: String, offset: Int64, sequence: UInt64) -> LogError {
        LogError(
            .corrupt,
            "the log is damaged: \(what) in \(file) at offset \(offset), where sequence \(sequence) was expected;"
                + " nothing was changed (repair cuts the log back to the last good batch, keeping a copy)",
            file: file, offset: offset, sequence: sequence
        )
    }
}

/// Runs `body`, turning an ``IOError`` into a ``LogError`` that says what was being done.
@inline(__always)
func io<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as IOError { throw LogError.io(error, doing()) }
}
