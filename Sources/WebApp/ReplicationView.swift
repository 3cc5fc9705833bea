/// What the pages show of replication (GET /api/replication): a store shipping its events to
/// a NATS cluster, or a read-only replica following one. The web app does not know the
/// replication module; the program that runs both fills this in.
public struct ReplicationView: Encodable, Sendable, Equatable {
    public enum Role: String, Encodable, Sendable {
        /// This store's events are shipped to the cluster.
        case primary
        /// This store is a read-only copy of a stream.
        case replica
        /// This device syncs through the cluster (docs/SYNC.md): it ships its logs and takes
        /// the other devices' as they land.
        case sync
    }

    public var role: Role
    public var stream: String
    /// The cluster's URLs, credentials hidden.
    public var servers: String
    /// Events in this store.
    public var events: UInt64
    /// Events the other side lacks: not yet acknowledged by the cluster (primary), or in the
    /// stream but not yet here (replica).
    public var lagEvents: UInt64
    /// Photos not yet uploaded (primary; a replica fetches a batch's photos before its events).
    public var pendingPhotos: Int
    /// Photos that could not be had: gone from the blob folder before upload (primary), or not
    /// in the cluster's bucket (replica).
    public var missingPhotos: Int
    /// A rewrite of the stream is under way (a place forgotten after it was shipped is being
    /// taken out of it): shipping waits for it on the primary, and a replica waits for the
    /// stream to be whole again. Not a failure: the lag grows meanwhile.
    public var rewriting: Bool
    /// The last error, while it lasts.
    public var lastError: String?
    /// With sync: the other devices' events in the cluster not yet taken here, how many other
    /// devices there are, and when the cluster last answered (ISO 8601).
    public var receiveEvents: UInt64?
    public var peers: Int?
    public var lastContact: String?
    /// With sync: whether the connection to the cluster is up now. While it is down, what is
    /// left to receive is what the cluster held when it was last seen, so "nothing" there does
    /// not mean up to date.
    public var connected: Bool?

    public init(
        role: Role, stream: String, servers: String, events: UInt64, lagEvents: UInt64, pendingPhotos: Int, missingPhotos: Int,
        rewriting: Bool = false, lastError: String?
    ) {
        self.role = role
        self.stream = stream
        self.servers = servers
        self.events = events
        self.lagEvents = lagEvents
        self.pendingPhotos = pendingPhotos
        self.missingPhotos = missingPhotos
        self.rewriting = rewriting
        self.lastError = lastError
    }

    enum CodingKeys: String, CodingKey {
        case role, stream, servers, events, rewriting
        case lagEvents = "lag_events"
        case pendingPhotos = "pending_photos"
        case missingPhotos = "missing_photos"
        case lastError = "last_error"
        case receiveEvents = "receive_events"
        case peers
        case lastContact = "last_contact"
        case connected
    }
}
