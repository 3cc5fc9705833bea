/// Where a scan of a hot-tail segment stood after one of its records: the offset after it, the
/// next sequence and the last event's time, and the chain's head there. Another scan of the
/// same segment can start from it instead of from the segment's first record.
///
/// After a crash, an opening store looks up the head at its newest snapshot by rehashing the
/// active segment from its start up to it; then its replay read the same records again to reach
/// the events after it, and the background check of the tail checkpoint rehashed them a third
/// time (docs/BENCHMARKS-JOURNAL.md, "Open after a crash: one pass over the segment's start"). The
/// lookup's scan checked each record's CRC and hashed each event, so the later scans may start
/// where it stopped. A segment's records are only ever appended to, so what lies before a
/// record boundary stays as it was read for as long as the segment is the same file: its path
/// and first sequence, and its header's chain (a log cut back by `vt repair` and written again
/// keeps neither). Positions are meant to be used at once, by the same opener.
struct TailPosition: Sendable, Equatable {
    let path: String
    let firstSequence: UInt64
    let chainBefore: ChainHash
    let offset: Int64
    let nextSequence: UInt64
    let time: Int64
    let chain: ChainHash

    /// The last event before it.
    var sequence: UInt64 { nextSequence - 1 }

    /// The chain's head after that event.
    var head: LogHead { LogHead(sequence: sequence, hash: chain) }

    /// The same point as a tail checkpoint writes it.
    var point: TailCheckpoint.Point { TailCheckpoint.Point(dataEnd: offset, nextSequence: nextSequence, lastTime: time, chain: chain) }

    /// Whether it is a position in the segment `header` heads, at `path`.
    func isIn(_ path: String, _ header: TailSegmentHeader) -> Bool {
        self.path == path && firstSequence == header.firstSequence && chainBefore == header.chainBefore
            && offset >= Int64(LogFormat.segmentHeaderSize) && nextSequence >= header.firstSequence
    }
}
