import EventLog
import FileIO

/// One of a store's logs as a replicator ships it: the store's own, or its copy of another
/// device's log (docs/REPLICATION.md, "A store of several devices").
struct ShippedLog: Sendable {
    /// The log's folder.
    let path: String
    /// A copy of another device's log: it may lag behind the device's own stream, which another
    /// store (the device itself) ships too.
    let isCopy: Bool
    /// Whether any forget in the store asks for a rewrite of the stream (a store of several
    /// devices, where a forget erases the copies' events too), rather than only a
    /// `PlaceForgotten` shipped in this log.
    let rewritesOnEveryForget: Bool

    /// The store's own log, in a store of one device.
    init(ownLogOf store: String) {
        self.init(path: Path.join(store, "log"), isCopy: false, rewritesOnEveryForget: false)
    }

    init(path: String, isCopy: Bool, rewritesOnEveryForget: Bool) {
        self.path = path
        self.isCopy = isCopy
        self.rewritesOnEveryForget = rewritesOnEveryForget
    }
}
