/// What a prepared append makes of its ``CommitSlot``: the events' payloads, and what to do if
/// the log takes them. The log calls `accepted` (on its writer, before the write) only when the
/// events go into the record being built; when they do not fit in what is left of it, the
/// request waits for the next record and is prepared again there, so a preparer changes its
/// own state in `accepted`, never in the preparation itself.
public struct PreparedEvents {
    public var payloads: [[UInt8]]
    public var accepted: (() -> Void)?

    public init(payloads: [[UInt8]], accepted: (() -> Void)? = nil) {
        self.payloads = payloads
        self.accepted = accepted
    }
}
