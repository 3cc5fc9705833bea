import FileIO

/// What ``LogRepair`` would cut, decided before anything is touched.
public struct RepairPlan: Sendable, Hashable, CustomStringConvertible {
    /// The first damage, as verification names it; nil when the log needs no repair.
    public var damage: VerificationReport.Problem?
    /// The segment cut at ``offset`` (everything from there on goes).
    public var segment: String?
    public var offset: Int64 = 0
    /// Later segments that go whole.
    public var laterSegments: [String] = []
    /// Bytes that leave the log (copied to `quarantine/` first).
    public var bytes: Int64 = 0
    /// The first sequence number that leaves the log.
    public var firstDroppedSequence: UInt64 = 0
    /// The last sequence number that intact batch headers after the cut still name, if any:
    /// the events dropped are at least `firstDroppedSequence...lastDroppedSequence`.
    public var lastDroppedSequence: UInt64?

    /// The log's format.
    public var format = LogFormatVersion.v1
    /// How much of a segment's start is its header (a cut inside it takes the whole segment).
    var headerSize: Int64 = 0
    /// The log's folder.
    public var directory = ""
    /// Format 2: key summaries whose keys are not their blocks' (``VerificationReport/Problem/Kind/keySummary``),
    /// removed whole; derived data, which the next writer builds again. No event is touched.
    public var keySummaries: [String] = []

    public var isNeeded: Bool { damage != nil || !keySummaries.isEmpty }

    public var description: String {
        var summaries = ""
        if !keySummaries.isEmpty {
            summaries = "key summaries that disagree with their blocks: \(keySummaries.map(Path.name(of:)).joined(separator: ", "));"
                + " repair would remove \(keySummaries.count == 1 ? "it" : "them") (the next open for changes builds"
                + " \(keySummaries.count == 1 ? "it" : "them") again from the events)"
        }
        guard let damage, let segment else {
            return summaries.isEmpty ? "the log needs no repair" : summaries + "; no event is dropped"
        }
        var text = (summaries.isEmpty ? "" : summaries + "\n") + "damage: \(damage)\nrepair would cut \(bytes) bytes from offset \(offset) of \(segment)"
        if !laterSegments.isEmpty { text += " and remove \(laterSegments.count) later file(s)" }
        if let last = lastDroppedSequence, last >= firstDroppedSequence {
            text += ", dropping events \(firstDroppedSequence)…\(last) (\(last - firstDroppedSequence + 1) as far as intact headers show)"
        } else {
            text += ", dropping events from \(firstDroppedSequence) on"
        }
        return text + "; every byte cut is kept in quarantine/"
    }
}
