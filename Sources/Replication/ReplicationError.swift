/// Why replication, a restore or a follower stopped. Each description is a sentence a person
/// can act on; none carries a password or token.
public enum ReplicationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stream holds a history this store does not share: another copy of the store wrote to
    /// it, or the store was restored and then changed. Nothing was overwritten.
    case conflict(String)
    /// A stream message that is not what replication writes, or is damaged.
    case malformedMessage(String)
    /// The stream's events do not chain to the heads shipped with them.
    case chainMismatch(String)
    /// There is no such stream (or bucket) on the cluster.
    case streamNotFound(String)
    /// The request itself cannot be carried out (a bad argument, a folder that is not empty, a
    /// format-1 store).
    case invalid(String)
    /// The local store could not be read or written.
    case storage(String)
    /// The cluster could not be reached or refused a request.
    case cluster(String)
    /// A place is being forgotten in the store: its events are shipped once they are erased.
    /// Retried, like a cluster that is away.
    case forgetting(String)
    /// The cluster failed while the stream was being rewritten; the rewrite goes on from its
    /// step when it is retried.
    case rewriting(String)

    public var description: String {
        switch self {
        case .conflict(let text): "replication conflict: \(text)"
        case .malformedMessage(let text): "a replication message is malformed: \(text)"
        case .chainMismatch(let text): "the stream does not match its chain: \(text)"
        case .streamNotFound(let text): text
        case .invalid(let text): text
        case .storage(let text): text
        case .cluster(let text): text
        case .forgetting(let text): text
        case .rewriting(let text): text
        }
    }
}
