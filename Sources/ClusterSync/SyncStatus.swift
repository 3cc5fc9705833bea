import Foundation

/// Where a device's sync through the cluster stands (`vt sync --with nats://…`, the web app's
/// `GET /api/sync`): what it still has to send and to receive, and when the cluster last
/// answered.
public struct SyncStatus: Codable, Equatable, Sendable {
    /// Another device of the map, as this one sees its stream.
    public struct Peer: Codable, Equatable, Sendable {
        public var device: String
        public var name: String?
        /// The events of its log this store holds, and the last the cluster was seen to hold.
        public var eventsHeld: UInt64
        public var streamEvents: UInt64
        public var eventsToReceive: UInt64 { streamEvents - min(streamEvents, eventsHeld) }
        public var photosReceived: Int = 0
        public var photosMissing: Int = 0
        /// Why its events are not taken now (a rewritten history is refused here), nil when they are.
        public var lastError: String?
    }

    public var device: String
    public var name: String?
    /// The cluster's servers, credentials hidden.
    public var servers: String
    public var connected: Bool
    /// This store's events and photos not yet acknowledged by the cluster (its own log's and the
    /// copies' it ships too).
    public var eventsToSend: UInt64
    public var photosToSend: Int
    public var peers: [Peer]
    /// When the cluster last acknowledged or delivered something (ISO 8601), nil if never.
    public var lastContact: String?
    public var lastError: String?

    public var eventsToReceive: UInt64 { peers.reduce(0) { $0 + $1.eventsToReceive } }

    /// Whether nothing is left to send or receive.
    public var isCaughtUp: Bool { eventsToSend == 0 && photosToSend == 0 && eventsToReceive == 0 }
}
