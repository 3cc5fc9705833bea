/// What ``LogReader`` asks of a format: its files listed again, cursors, heads, the last event,
/// and which ranges may hold some keys. ``BlockTailReading`` reads format 2 and
/// ``LegacyReading`` format 1; ``LogFormatVersion/reading(directory:fileSystem:reader:)`` is the
/// one place that picks. For one thread at a time, as its reader.
protocol FormatReading: AnyObject {
    /// Lists the directory again, to see files created since.
    func refresh() throws
    /// A cursor's engine over these files.
    func cursor(start: LogCursor.Start, lastSequence: UInt64?, lastTime: LogTimestamp?, tailPosition: TailPosition?) -> any CursorEngine
    /// The head at `sequence` (``LogReader/head(at:)``).
    func head(at sequence: UInt64) throws -> LogHead?
    /// ``head(at:)`` begun now, on another core where the format allows it.
    func headInBackground(at sequence: UInt64) -> PendingHead
    /// The sequence number of the last complete event (0 for an empty log).
    func lastSequence() throws -> UInt64
    /// The ranges within `from...through` that may hold an event whose key lies in `keys`
    /// (``LogReader/ranges(mayHoldKeysIn:function:from:through:)``).
    func ranges(mayHoldKeysIn keys: ClosedRange<UInt64>, function: String, from: UInt64, through: UInt64) throws -> [ClosedRange<UInt64>]
    /// Checks every byte of the log into `report` (``LogVerifier``), keys against `keys`' summaries.
    func verify(keys: BlockKeys?, report: inout VerificationReport, progress: ((Int64, Int64) -> Void)?) throws
    /// The cut that repairing the log would make (``LogRepair``). Changes nothing.
    func planRepair(keys: BlockKeys?) throws -> RepairPlan
    /// The log's identity (``LogReader/identity()``): nil while it has no data file.
    func identity() throws -> LogIdentity?
}
