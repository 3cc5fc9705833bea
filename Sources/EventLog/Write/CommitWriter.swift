import FileIO

/// What ``GroupCommit`` needs of a writer: format 1's ``LegacyWriter`` or format 2's
/// ``TailWriter``. Used by one thread at a time (the group-commit leader).
protocol CommitWriter: AnyObject {
    var directory: String { get }
    var nextSequence: UInt64 { get }
    /// The chain's head after the last event written (format 1: the last batch's hash).
    var headHash: ChainHash { get }
    /// The time of the last event written; nil for an empty log.
    var lastEventTime: LogTimestamp? { get }
    var hasUnsyncedWrites: Bool { get }
    /// Set once a failure left the files in a state only a reopen sorts out: every append is
    /// refused from then on.
    var failure: LogError? { get }
    func commit(_ group: [AppendRequest]) -> [Result<Range<UInt64>, LogError>]
    func sync() throws
    func close() throws
}
