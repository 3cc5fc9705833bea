import FileIO

/// What makes one log's chain its own: the log id and the origin its anchor is derived from
/// (FORMAT.md, "The event chain"). Two logs with the same identity and the same events have
/// the same head hash after every event, however their files group them.
public struct LogIdentity: Hashable, Sendable {
    /// The 16-byte log id.
    public var logID: [UInt8]
    /// The format-1 history an upgraded log is anchored to (``LogOrigin/none`` otherwise).
    public var origin: LogOrigin

    public init(logID: [UInt8], origin: LogOrigin) {
        self.logID = logID
        self.origin = origin
    }

    /// The chain's head before event 1.
    public var anchor: ChainHash { origin.anchor(logID: logID) }

    /// The log id as 32 lowercase hex digits, as FORMAT.md shows it.
    public var logIDHex: String { hex(logID) }
}

extension LogOrigin: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sequence)
        hasher.combine(hash?.bytes)
    }
}

extension LogReader {
    /// The identity of a format-2 log (nil while it has no data file). A format-1 log has a
    /// chain over batches, not events, and is refused: `vt upgrade` converts it.
    public func identity() throws -> LogIdentity? {
        try refresh()
        return try reading?.identity()
    }
}
