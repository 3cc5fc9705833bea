import BlobStore
import DeviceLogs
import EventLog
import Foundation
import NATSClient
import Replication
import VirtualTourist

/// Finding the map's other devices, and taking their events from their streams.
extension ClusterSync {
    /// Every other device of the map this store knows or a bucket names: the store's copies,
    /// then what the buckets of this device's stream and of each device found say, followed
    /// until no new device comes (a device's own `device.json` from its bucket is kept for its
    /// name). A bucket of another map is passed over.
    func discover() async throws -> [DeviceID] {
        var found = Set(try StoreSync.devices(of: store.folder).others)
        var asked: Set<DeviceID> = []
        var waiting = [this.device] + found.sorted()
        while let device = waiting.popLast() {
            guard asked.insert(device).inserted else { continue }
            let said = try await patiently("read the map's devices in the bucket of VT_\(device)") {
                try await DeviceStreamReader.mapDevices(jetStream: jetStream, device: device)
            }
            guard let said, said.file.device == device, said.file.map == this.map else { continue }
            if device != this.device { shared.withLock { $0.files[device] = said.file } }
            for next in said.devices where next != this.device && found.insert(next).inserted { waiting.append(next) }
        }
        return found.sorted()
    }

    /// Takes every event `device`'s stream holds now (its end when this starts); nothing when the
    /// cluster has no stream of it yet.
    func takeAvailable(from device: DeviceID, progress: (@Sendable (String) -> Void)?) async throws {
        let deadline = ContinuousClock.now + options.patience
        var reader: DeviceStreamReader? = nil
        var end: UInt64? = nil
        while true {
            do {
                if reader == nil {
                    reader = try await openReader(device)
                    guard let opened = reader else { return }
                    if end == nil { end = try await opened.lookAtEnd() }
                }
                let held = heldEvents(of: device)
                guard held < end! else { return }
                progress?("taking device \(name(of: device))'s events \(held + 1)…\(end!)")
                let batches = try await reader!.next(batch: 256, expires: .seconds(2))
                for batch in batches { try await apply(batch, from: reader!) }
            } catch let error where DeviceStreamReader.isTransient(error) && ContinuousClock.now < deadline {
                shared.withLock { $0.lastError = "\(error)" }
                reader = nil
                try await Task.sleep(for: .milliseconds(250))
            } catch let error as DomainError where error.code == .invalidArgument {
                // A history that does not check: this device is named, the others are taken.
                note(device) { $0.lastError = error.message }
                return
            } catch let error as ReplicationError {
                switch error {
                case .chainMismatch, .conflict, .malformedMessage:
                    note(device) { $0.lastError = "\(error)" }
                    return
                default: throw error
                }
            }
        }
    }

    /// Follows every other device's stream live, finding new devices as they appear.
    func takeLive() async {
        await withTaskGroup(of: Void.self) { group in
            var following: Set<DeviceID> = []
            while !Task.isCancelled {
                do {
                    for device in try await discover() {
                        if following.insert(device).inserted { group.addTask { await self.follow(device) } }
                        // What is left to receive comes from the stream itself, not from the
                        // reader's own account: a reader that is stuck does not say "up to date".
                        if let last = try await DeviceStreamReader.lastEvent(jetStream: jetStream, device: device) {
                            note(device) { $0.streamEvents = max($0.streamEvents, last) }
                        }
                    }
                } catch {
                    shared.withLock { $0.lastError = "\(error)" }
                }
                try? await Task.sleep(for: options.discoveryInterval)
            }
            group.cancelAll()
        }
    }

    /// Takes `device`'s events as they land until cancelled, or until its history fails a check.
    private func follow(_ device: DeviceID) async {
        var reader: DeviceStreamReader? = nil
        while !Task.isCancelled {
            do {
                if reader == nil {
                    reader = try await openReader(device)
                    if reader == nil {
                        try await Task.sleep(for: options.discoveryInterval)
                        continue
                    }
                }
                for batch in try await reader!.next(batch: 256, expires: options.pollExpiry) { try await apply(batch, from: reader!) }
                let seen = reader!.streamEvents
                note(device) { $0.streamEvents = max($0.streamEvents, seen) }
            } catch is CancellationError {
                return
            } catch let error as DomainError where error.code == .invalidArgument {
                note(device) { $0.lastError = error.message }
                return
            } catch let error as ReplicationError where Self.isRefusal(error) {
                note(device) { $0.lastError = "\(error)" }
                return
            } catch {
                // The cluster away, an election, the stream rewritten after a forget: read again
                // from what the store holds.
                note(device) { $0.lastError = "\(error)" }
                reader = nil
                try? await Task.sleep(for: options.replication.retryDelay)
            }
        }
    }

    private static func isRefusal(_ error: ReplicationError) -> Bool {
        switch error {
        case .chainMismatch, .conflict, .malformedMessage: true
        default: false
        }
    }

    /// A reader of `device`'s stream after what the store's copy holds.
    private func openReader(_ device: DeviceID) async throws -> DeviceStreamReader? {
        let copy = try StoreSync.devices(of: store.folder).copies.first { $0.id == device }
        var identity: LogIdentity? = nil
        if let copy { identity = try LogReader(directory: copy.logPath, payloadCodec: EventCodec.blockCodec).identity() }
        let path = copy?.logPath
        let reader = try await DeviceStreamReader.open(
            jetStream: jetStream, device: device, after: copy?.head, identity: identity,
            heldHead: { sequence in
                guard let path else { return nil }
                return try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).head(at: sequence)
            })
        if let reader { note(device) { $0.streamEvents = max($0.streamEvents, reader.streamEvents) } }
        return reader
    }

    /// Fetches the photos a batch names that the store lacks, then has the store take it.
    private func apply(_ batch: DeviceStreamReader.Batch, from reader: DeviceStreamReader) async throws {
        var leases: [BlobLease] = []
        defer { for lease in leases { lease.release() } }
        var received = 0, missing = 0
        for name in DeviceStreamReader.photos(in: batch.events) {
            guard let digest = BlobDigest(hex: name), try !store.isPhotoStored(digest) else { continue }
            if let bytes = try await reader.photo(digest) {
                leases.append(try store.storePhoto(bytes))
                received += 1
            } else {
                missing += 1
            }
        }
        let file = shared.withLock { $0.files[reader.device] } ?? DeviceFile(map: this.map, device: reader.device, name: nil)
        let report = try await store.take(batch.events, from: file, identity: batch.identity, head: batch.head)
        note(reader.device) {
            $0.eventsHeld = report.copied.head.sequence
            $0.streamEvents = max($0.streamEvents, batch.head.sequence)
            $0.photosReceived += received
            $0.photosMissing += missing
            $0.lastError = nil
        }
        shared.withLock {
            $0.lastContact = Date()
            $0.lastError = nil
        }
    }

    func heldEvents(of device: DeviceID) -> UInt64 { shared.withLock { $0.peers[device]?.eventsHeld ?? 0 } }

    func name(of device: DeviceID) -> String {
        shared.withLock { $0.files[device]?.name }.map { "\(device.short) (\($0))" } ?? device.short
    }

    /// Runs `body`, retrying the cluster's transient failures until ``SyncOptions/patience`` ends.
    func patiently<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + options.patience
        while true {
            do { return try await body() } catch let error where DeviceStreamReader.isTransient(error) && ContinuousClock.now < deadline {
                shared.withLock { $0.lastError = "cannot \(what): \(error)" }
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }
}
