/// Which parts of the log a question about a few keys has to read.
extension LogReader {
    /// The sequence ranges within `from...through`, ascending and apart, that may hold an event
    /// whose key (by the key function named `function`, FORMAT.md "Key summaries") lies in
    /// `keys`. Every event with such a key is inside them; events without one may be too.
    ///
    /// Blocks whose summary names no such key are left out; a block file without a usable
    /// summary, and the hot tail, are given whole. A format-1 log gives `from...through`.
    /// Reading the summaries costs a small file a block file, checked as FORMAT.md asks.
    public func ranges(mayHoldKeysIn keys: ClosedRange<UInt64>, function: String, from: UInt64, through: UInt64) throws -> [ClosedRange<UInt64>] {
        guard from >= 1, from <= through else { return [] }
        if segments.isEmpty { try refresh() }
        guard format == .v2 else { return [from...through] }
        var directory = LogDirectory(directory: self.directory, fileSystem: fileSystem)
        try directory.refresh()
        var ranges: [ClosedRange<UInt64>] = []
        let files = directory.files
        for (index, file) in files.enumerated() {
            let fileLast = index + 1 < files.count ? files[index + 1].firstSequence - 1 : UInt64.max
            guard file.firstSequence <= through, fileLast >= from else { continue }
            let wanted = max(from, file.firstSequence)...min(through, fileLast)
            guard case .blocks(let header) = file.kind,
                let summary = KeySummary.read(beside: header, in: self.directory, function: function, fileSystem: fileSystem)
            else {
                ranges.appendJoining(wanted)
                continue
            }
            for range in summary.ranges(holding: keys, lastSequence: header.lastSequence) where range.overlaps(wanted) {
                ranges.appendJoining(range.clamped(to: wanted))
            }
        }
        return ranges
    }
}
