import EventLog
import Synchronization

extension TouristStore {
    /// Whether this store is a read-only replica (``StoreOptions/replicaOf``).
    public var isReplica: Bool { options.replicaOf != nil }

    /// Whether this replica takes other devices' events (``StoreOptions/replicaTakesOtherDevices``).
    public var replicaTakesOtherDevices: Bool { isReplica && options.replicaTakesOtherDevices }

    /// Throws what every action on a replica throws, for work that would end in an action (a
    /// photo download, say) and should be refused before it starts.
    ///
    /// - Throws: ``DomainError`` `.readOnly` on a replica.
    public func refuseChangesOnReplica() throws {
        if let refusal = processor.refusal { throw DomainError(.readOnly, refusal) }
    }

    /// Appends events that the original store holds, verbatim — same sequence numbers, payloads
    /// and times, so the same chain — and applies them. The caller has checked them against the
    /// heads the original shipped; this store's log then computes the same heads, which the
    /// returned one lets the caller confirm. A `PlaceForgotten` among them erases the place's
    /// earlier events here too, as its original did (erasing keeps the chain).
    ///
    /// - Throws: ``DomainError`` `.invalidArgument` when the first event does not follow this
    ///   store's last, or an event is erased; `.undecodableEvent`; `.storage`.
    @discardableResult
    public func appendReplicated(_ events: [LogEvent]) async throws -> LogHead {
        let result = Mutex<LogHead?>(nil)
        try await processor.exclusively { [self] access in
            let (recorded, head) = try await access.appendReplicated(events)
            result.withLock { $0 = head }
            for case .placeForgotten(let pin, _) in recorded.map(\.event) {
                _ = try await forgetExclusively(pin, access: access, progress: nil)
            }
        }
        return result.withLock { $0 }!
    }

    /// The head of the store's log after `sequence` (nil past its end).
    public func head(at sequence: UInt64) throws -> LogHead? {
        do { return try LogReader(directory: log.directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec).head(at: sequence) } catch {
            throw Self.storageError(error, "cannot read the log of \(folder)")
        }
    }

    /// The log's identity (nil for a format-1 log, whose chain links batches).
    public func logIdentity() throws -> LogIdentity? {
        guard log.format == .v2 else { return nil }
        do { return try LogReader(directory: log.directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec).identity() } catch {
            throw Self.storageError(error, "cannot read the log of \(folder)")
        }
    }
}
