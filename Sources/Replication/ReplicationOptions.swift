import Foundation

/// How a replicator ships.
public struct ReplicationOptions: Sendable {
    /// The stream's name (default `VT_` and the log id).
    public var stream: String? = nil
    /// Copies the cluster keeps (default 3, or 1 on a server that is not clustered).
    public var replicas: Int? = nil
    /// The most events, and bytes of body, one message carries.
    public var maxBatchEvents = 4096
    public var maxBatchBytes = 512 << 10
    /// How often a caught-up replicator looks at the log again.
    public var pollInterval: Duration = .milliseconds(20)
    /// How long a running replicator waits after a message that was not full before it reads the
    /// log again, so that a busy app's events travel many to a message. Every message costs the
    /// cluster a round of consensus; one per commit would take the CPU the app's own commits need.
    public var linger: Duration = .milliseconds(50)
    /// How long to wait before trying the cluster again after a failure.
    public var retryDelay: Duration = .milliseconds(200)
    /// The most photos uploaded at once: each is a few round trips to the stream's leader, which
    /// a replicated stream answers only once a majority has the message. A batch uploads fewer
    /// when it names few (``Replicator/uploadsAtOnce(photos:limit:)``).
    public var concurrentUploads = 32
    /// How long ``Replicator/shipAvailable()`` keeps retrying before it gives up.
    public var giveUpAfter: Duration = .seconds(60)
    /// How long ``Replicator/start(store:connection:servers:options:)`` waits for a cluster that
    /// does not answer yet because it lost a server (a leader being elected), as a restore does.
    public var electionPatience: Duration = .seconds(90)
    /// Told, once for each request it waits for, what a start is waiting for (`vt replicate`
    /// prints it).
    public var onWait: (@Sendable (String) -> Void)? = nil

    public init() {}
}
