/// Told, once for each record that holds events a prepared append of its own was accepted for,
/// how that record ended: written (and synced as the durability says), with the log's head
/// after it; or failed, when the events are not the log's (or, after a failed sync, their fate
/// is the next open's). Called on the log's writer after the write and before any of the
/// record's appends return, in the order of the records. A log takes one settler: its one
/// preparing appender (a store's action processor).
public protocol CommitSettler: AnyObject, Sendable {
    func settle(_ outcome: Result<LogHead, LogError>)
}
