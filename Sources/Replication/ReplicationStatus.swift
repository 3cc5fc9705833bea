import Foundation

/// Where replication stands: what the local log holds, what the cluster acknowledged.
public struct ReplicationStatus: Codable, Equatable, Sendable {
    public var stream: String
    public var servers: String
    public var localEvents: UInt64
    public var acknowledgedEvents: UInt64
    /// Events in the local log the cluster has not acknowledged.
    public var lagEvents: UInt64
    public var photosUploaded: Int
    /// Photos the shipped events name that the bucket does not have yet.
    public var photosPending: Int
    /// Photos an event names whose bytes the store no longer had when they were to be shipped.
    public var photosMissing: Int
    public var connected: Bool
    /// The last failure, while replication retries (nil when the last attempt worked).
    public var lastError: String?
    public var acknowledgedAt: String?
    /// The step of a rewrite under way (a forgotten place being taken out of the stream).
    public var rewrite: RewriteStep?

    /// What a store's record says, beside a log that holds `localEvents` (no cluster asked).
    public init(record: ReplicationRecord, localEvents: UInt64) {
        self.init(
            stream: record.stream, servers: record.servers, localEvents: localEvents, acknowledgedEvents: record.acknowledgedEvent,
            lagEvents: localEvents - min(localEvents, record.acknowledgedEvent), photosUploaded: record.photosUploaded,
            photosPending: 0, photosMissing: record.photosMissing, connected: false, lastError: nil,
            acknowledgedAt: record.acknowledgedAt, rewrite: record.rewrite)
    }

    init(
        stream: String, servers: String, localEvents: UInt64, acknowledgedEvents: UInt64, lagEvents: UInt64, photosUploaded: Int,
        photosPending: Int, photosMissing: Int, connected: Bool, lastError: String?, acknowledgedAt: String?,
        rewrite: RewriteStep? = nil
    ) {
        self.stream = stream
        self.servers = servers
        self.localEvents = localEvents
        self.acknowledgedEvents = acknowledgedEvents
        self.lagEvents = lagEvents
        self.photosUploaded = photosUploaded
        self.photosPending = photosPending
        self.photosMissing = photosMissing
        self.connected = connected
        self.lastError = lastError
        self.acknowledgedAt = acknowledgedAt
        self.rewrite = rewrite
    }
}
