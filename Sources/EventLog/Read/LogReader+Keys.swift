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
        if reading == nil { try refresh() }
        return try reading?.ranges(mayHoldKeysIn: keys, function: function, from: from, through: through) ?? [from...through]
    }
}
