import DeviceLogs
import EventLog
import FileIO
import NATSClient

extension Replicator {
    /// One stream holds one log: shipping this device's alone would let a restore bring back a
    /// store without the other devices' events (docs/DEVICES.md, "Replication of several
    /// devices"), so ``Replicator/start(store:connection:servers:options:)`` refuses a store of
    /// several devices before anything is made; ``MapReplicator`` ships such a store.
    static func refuseSeveralDevices(_ folder: String) throws {
        let several: Bool
        do { several = try StoreDevices.knowsAnother(store: folder) } catch {
            throw ReplicationError.invalid("the store at \(folder) cannot be replicated: \(error)")
        }
        if several {
            throw ReplicationError.invalid(
                "the store at \(folder) is one of several devices of its map: a Replicator ships one log, so a restore would lack the other devices' events; MapReplicator ships each device's log (vt replicate uses it)")
        }
    }

    /// Makes the stream, or finds it; returns the replicas its bucket should have too. Without
    /// an explicit count, 3 on a cluster and 1 on a lone server (which refuses more).
    static func makeStream(_ stream: ReplicationStream, jetStream: JetStream, options: ReplicationOptions) async throws -> Int {
        let replicas = options.replicas
        if let replicas, !(1...5).contains(replicas) {
            throw ReplicationError.invalid("a stream keeps 1 to 5 copies, not \(replicas)")
        }
        do {
            let info = try await throughElection("create the stream \(stream.name)", options: options) {
                try await jetStream.createOrLookUpStream(stream.configuration(replicas: replicas ?? 3))
            }
            guard info.config.subjects == [stream.subject] else {
                throw ReplicationError.conflict(
                    "the stream \(stream.name) exists with subjects \(info.config.subjects), not [\(stream.subject)]: it is not a store's replica")
            }
            return info.config.replicas
        } catch let error as JetStreamAPIError where replicas == nil && error.errorCode == 10074 {
            // "replicas > 1 not supported in non-clustered mode"
            _ = try await clusterCall("create the stream \(stream.name)") {
                try await throughElection("create the stream \(stream.name)", options: options) {
                    try await jetStream.createOrLookUpStream(stream.configuration(replicas: 1))
                }
            }
            return 1
        } catch let error as JetStreamAPIError {
            throw ReplicationError.cluster("the cluster refused to create the stream \(stream.name): \(error)")
        } catch let error as NATSError {
            throw ReplicationError.cluster("cannot reach JetStream to create the stream \(stream.name): \(error)")
        }
    }

    /// What the stream already holds of this store: the head it acknowledged last and the stream
    /// sequence of that message. Refuses a stream that holds another history.
    static func reconcile(
        _ stream: ReplicationStream, jetStream: JetStream, identity: LogIdentity, reader: LogReader, store: String, isCopy: Bool,
        options: ReplicationOptions
    ) async throws -> (LogHead, UInt64) {
        let found: (sequence: UInt64, summary: BatchHeader.Summary)?
        do {
            // Served by the stream's own leader, which a lost server may have taken with it.
            found = try await throughElection("read the last message of stream \(stream.name)", options: options) {
                try await StreamReading.lastBatch(of: stream, jetStream: jetStream)
            }
        } catch let error as ReplicationError {
            throw error
        } catch {
            throw ReplicationError.cluster("cannot read the last message of stream \(stream.name): \(error)")
        }
        guard let (sequence, summary) = found else { return (LogHead(sequence: 0, hash: identity.anchor), 0) }
        guard summary.identity == identity else {
            throw ReplicationError.conflict(
                "the stream \(stream.name) holds the log \(summary.identity.logIDHex), not this store's \(identity.logIDHex);"
                    + " choose another stream with --stream")
        }
        let local = try storage { try reader.head(at: summary.last) }
        guard let local else {
            if isCopy {
                // The device itself (or another store) shipped further than this copy reaches:
                // nothing to ship until the copy grows past the stream, if it is the same history.
                try await checkCopyAgrees(stream, jetStream: jetStream, reader: reader, lastMessage: sequence, options: options)
                return (LogHead(sequence: summary.last, hash: summary.head), sequence)
            }
            let mine = (try? reader.lastSequence()) ?? 0
            throw ReplicationError.conflict(
                "the stream \(stream.name) holds events up to \(summary.last), but the store at \(store) only up to \(mine):"
                    + " another copy of this store wrote them. Nothing was overwritten; restore from the stream (vt restore) to continue from it")
        }
        guard local.hash == summary.head else {
            throw ReplicationError.conflict(
                "the stream \(stream.name) and the store at \(store) differ at or before event \(summary.last)"
                    + " (head \(summary.head.description.prefix(16))… there, \(local.hash.description.prefix(16))… here):"
                    + " another copy of this store wrote to the stream. Nothing was overwritten")
        }
        return (local, sequence)
    }

    /// A stream found empty that this store had shipped to: shipped again from its first event,
    /// unless its device is rewriting it (``emptyStreamError(_:jetStream:shipped:)``), which at
    /// a start is the cluster's state to wait out.
    static func waitOutRewrite(of stream: ReplicationStream, shipped: UInt64, jetStream: JetStream, options: ReplicationOptions) async throws {
        let found = try await clusterCall("look up the safety copy \(stream.safetyCopy.name)") {
            try await emptyStreamError(stream, jetStream: jetStream, shipped: shipped)
        }
        if case .rewriting(let reason) = found { throw ReplicationError.cluster(reason) }
        options.onWait?("the stream \(stream.name) is empty, though this store shipped \(shipped) messages to it; shipping the log into it again")
    }

    /// The record once the photo bucket is found made anew: its list of uploads emptied, so that
    /// every photo goes again (asking the bucket first where the stream already holds events).
    static func forgetUploads(
        _ old: ReplicationRecord, stream: ReplicationStream, store: String, fileSystem: any FileSystem, options: ReplicationOptions
    ) throws -> ReplicationRecord {
        let path = ReplicationRecord.photosPath(store: store, stream: stream.name)
        do { try fileSystem.writeAtomically([], to: path) } catch {
            throw ReplicationError.storage("cannot empty \(path): \(error)")
        }
        options.onWait?("the photo bucket \(stream.bucket) was made again since this store last shipped to it; uploading its photos again")
        var record = old
        record.photosUploaded = 0
        record.photosMissing = 0
        return record
    }

    /// Where shipping stood when a rewrite began replacing the stream: the safety copy's last
    /// message, which must agree with the log. (Not the record: a batch whose acknowledgement
    /// was lost is in the copy, and not yet in the record.)
    static func resumeReplacing(
        _ record: ReplicationRecord, stream: ReplicationStream, jetStream: JetStream, reader: LogReader, store: String,
        options: ReplicationOptions
    ) async throws -> (LogHead, UInt64) {
        let copy = stream.safetyCopy
        let found: (sequence: UInt64, summary: BatchHeader.Summary)?
        do {
            found = try await throughElection("read the safety copy \(copy.name)", options: options) {
                try await StreamReading.lastBatch(of: copy, jetStream: jetStream)
            }
        } catch let error as ReplicationError {
            throw error
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.streamNotFound {
            found = nil
        } catch {
            throw ReplicationError.cluster("cannot read the safety copy \(copy.name): \(error)")
        }
        guard let (sequence, summary) = found else {
            throw ReplicationError.storage(
                "the stream \(stream.name) was being rewritten, but its safety copy \(copy.name) is gone, so the cluster holds no whole copy;"
                    + " remove \(ReplicationRecord.path(store: store, stream: stream.name)) and the store is shipped again from its first event")
        }
        let local = try storage { try reader.head(at: summary.last) }
        guard let local, local.hash == summary.head else {
            throw ReplicationError.conflict(
                "the safety copy \(copy.name) ends at event \(summary.last) with a head this store's log does not have: it is another history."
                    + " Nothing was deleted")
        }
        return (local, sequence)
    }

    /// Runs a request to the cluster, naming what it was for when it fails.
    static func clusterCall<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as ReplicationError { throw error } catch {
            throw ReplicationError.cluster("cannot \(what): \(error)")
        }
    }

    /// Like ``clusterCall(_:_:)``, but what the cluster cures by itself within `patience` (a
    /// leader election after a server died: timeouts, no responders, a reconnect) is retried.
    static func patientClusterCall<T>(
        _ what: String, patience: Duration = .seconds(90), _ body: () async throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + patience
        while true {
            do { return try await body() } catch let error as ReplicationError { throw error } catch let error as JetStreamAPIError
                where error.errorCode == 10059
            {
                throw ReplicationError.cluster("cannot \(what): \(error)")  // the stream is gone: no wait brings it back
            } catch where isTransient(error) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(250))
            } catch {
                throw ReplicationError.cluster("cannot \(what): \(error)")
            }
        }
    }

    /// Runs a request of a start again while the cluster does not answer it because it lost a
    /// server (no reply, no responders, JetStream "temporarily unavailable" while a leader is
    /// elected), for at most ``ReplicationOptions/electionPatience``, telling
    /// ``ReplicationOptions/onWait`` once what it waits for. Anything else, and the last failure
    /// once the patience is spent, goes up as it came.
    static func throughElection<T>(
        _ what: String, options: ReplicationOptions, _ body: () async throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + options.electionPatience
        var told = false
        while true {
            do { return try await body() } catch where isElection(error) && ContinuousClock.now < deadline {
                if !told {
                    told = true
                    let seconds = options.electionPatience.components.seconds
                    options.onWait?(
                        "waiting for the cluster to \(what): \(error) (a server lost, a leader being elected); for up to \(seconds) s")
                }
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// What a cluster cures by itself after losing a server: no reply in time, no responder yet,
    /// a connection lost while the client moves to another server, and JetStream's "temporarily
    /// unavailable" (10008) during an election. Not a closed connection, a server's refusal or
    /// another 503 (JetStream not enabled, no resources): waiting would not cure those.
    static func isElection(_ error: any Error) -> Bool {
        switch error {
        case NATSError.timeout, NATSError.noResponders, NATSError.connectionLost: true
        case let error as JetStreamAPIError: error.errorCode == 10008
        default: false
        }
    }
}
