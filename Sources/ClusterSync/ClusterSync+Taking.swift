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
    /// then what the buckets of the seeds' streams (this device's own; a follower's, the devices
    /// it follows) and of each device found say, followed
    /// until no new device comes (a device's own `device.json` from its bucket is kept for its
    /// name). A bucket of another map is passed over.
    func discover() async throws -> [DeviceID] {
        var found = Set(try StoreSync.devices(of: store.folder).others)
        var asked: Set<DeviceID> = []
        var waiting = seeds + found.sorted()
        while let device = waiting.popLast() {
            guard asked.insert(device).inserted else { continue }
            let said = try await patiently("read the map's devices in the bucket of VT_\(device)") {
                try await DeviceStreamReader.mapDevices(jetStream: jetStream, device: device)
            }
            guard let said, said.file.device == device, said.file.map == this.map else { continue }
            if device != this.device {
                found.insert(device)
                shared.withLock { $0.files[device] = said.file }
            }
            for next in said.devices where next != this.device && found.insert(next).inserted { waiting.append(next) }
        }
        return found.sorted()
    }

    /// Takes every event `device`'s stream holds now (its end when this starts); nil when the
    /// cluster has no stream of it yet. Returns the downloads those events name, with the reader
    /// of the bucket their photos are in: a one-off sync takes every device's events before it
    /// fetches a photo (``fetch(_:from:)`` decides which).
    func takeAvailable(from device: DeviceID, progress: (@Sendable (String) -> Void)?) async throws -> (DeviceStreamReader, [Download])? {
        let deadline = ContinuousClock.now + options.patience
        var reader: DeviceStreamReader? = nil
        var end: UInt64? = nil
        var photos: [Download] = []
        while true {
            do {
                if reader == nil {
                    reader = try await openReader(device)
                    guard let opened = reader else { return nil }
                    if end == nil { end = try await opened.lookAtEnd() }
                }
                let held = heldEvents(of: device)
                guard held < end! else { return (reader!, photos) }
                progress?("taking device \(name(of: device))'s events \(held + 1)…\(end!)")
                photos += try await take(try await reader!.next(batch: 256, expires: .seconds(2)), from: reader!)
            } catch let error where DeviceStreamReader.isTransient(error) && ContinuousClock.now < deadline {
                shared.withLock { $0.lastError = "\(error)" }
                reader = nil
                try await Task.sleep(for: .milliseconds(250))
            } catch let error as DomainError where error.code == .invalidArgument {
                // A history that does not check: this device is named, the others are taken.
                note(device) { $0.lastError = error.message }
                return reader.map { ($0, photos) }
            } catch let error as ReplicationError {
                switch error {
                case .chainMismatch, .conflict, .malformedMessage:
                    note(device) { $0.lastError = "\(error)" }
                    return reader.map { ($0, photos) }
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
        var wait = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                if reader == nil {
                    reader = try await openReader(device)
                    if reader == nil {
                        // No stream yet: asked again soon, then less and less often.
                        try await Task.sleep(for: wait)
                        wait = min(wait * 2, options.discoveryInterval)
                        continue
                    }
                }
                try await apply(try await reader!.next(batch: 256, expires: options.pollExpiry), from: reader!)
                let seen = reader!.streamEvents
                // The cluster answered: an error noted before is over.
                note(device) {
                    $0.streamEvents = max($0.streamEvents, seen)
                    $0.lastError = nil
                }
                shared.withLock { $0.lastError = nil }
            } catch is CancellationError {
                return
            } catch let error as DomainError where error.code == .invalidArgument {
                note(device) { $0.lastError = error.message }
                return
            } catch let error as ReplicationError where Self.isRefusal(error) {
                note(device) { $0.lastError = "\(error)" }
                return
            } catch {
                // The cluster away, an election, the stream rewritten after a forget, the disk
                // failing a take: read again from what the store holds, and finish a forget a
                // failed take left (it arrived in the copy; no later message brings it again).
                note(device) { $0.lastError = "\(error)" }
                reader = nil
                try? await store.finishArrivedForgets()
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

    /// Has the store take the batches' events in one go (one fold for all the messages that
    /// came together: a backlog costs a fold for each 256 messages, not each message), then
    /// fetches the photos they name that the store lacks and its state still shows: the events
    /// are shown at once, a photo as soon as it lands (a photo of an album the other device
    /// changed since is not fetched at all).
    private func apply(_ batches: [DeviceStreamReader.Batch], from reader: DeviceStreamReader) async throws {
        try await fetch(try await take(batches, from: reader), from: reader)
    }

    /// Has the store take the batches' events; returns the photos their downloads name, with
    /// the downloads' times (which of them to fetch is decided by ``fetch(_:from:)``).
    private func take(_ batches: [DeviceStreamReader.Batch], from reader: DeviceStreamReader) async throws -> [Download] {
        guard let last = batches.last else { return [] }
        let batch = DeviceStreamReader.Batch(events: batches.flatMap(\.events), head: last.head, identity: last.identity)
        let file = shared.withLock { $0.files[reader.device] } ?? DeviceFile(map: this.map, device: reader.device, name: nil)
        let report = try await store.take(batch.events, from: file, identity: batch.identity, head: batch.head)
        note(reader.device) {
            $0.eventsHeld = report.copied.head.sequence
            $0.streamEvents = max($0.streamEvents, batch.head.sequence)
            $0.lastError = nil
        }
        return Self.downloads(in: batch.events)
    }

    /// Fetches into the store the photos of `named` that it keeps and lacks, from `reader`'s
    /// device's bucket. Kept: shown now, or downloaded within the retention window; of older
    /// downloads (a device back after weeks), those time travel still shows.
    func fetch(_ named: [Download], from reader: DeviceStreamReader) async throws {
        guard !named.isEmpty else { return }
        let shown = store.state.referencedDigests
        var kept = Set(named.filter { shown.contains($0.digest) || store.isWithinRetention($0.time) }.map(\.digest))
        let all = Set(named.map(\.digest))
        if kept.count < all.count { kept.formUnion(try store.keptPhotos().intersection(all)) }
        // One listing of the blob folder costs less than a look for each of many photos.
        let stored = kept.count > 256 ? Set(try store.blobs.storedBlobs().map(\.digest)) : nil
        let wanted = try kept.filter { digest in try !(stored?.contains(digest) ?? store.isPhotoStored(digest)) }
            .sorted { $0.description < $1.description }
        guard !wanted.isEmpty else { return }
        var arrived: Set<PhotoDigest> = []
        let missing = try await reader.photos(wanted) { digest, bytes in
            // Taken while the fetch ran: another batch named it too.
            if try !store.isPhotoStored(digest) { try store.storePhoto(bytes).release() }
            arrived.insert(digest)
        }
        // An open album that showed these photos' slots before their bytes came loads them now.
        store.photosArrived(arrived)
        note(reader.device) {
            $0.photosReceived += wanted.count - missing
            $0.photosMissing += missing
        }
        shared.withLock {
            $0.lastContact = Date()
            $0.lastError = nil
        }
    }

    /// The photos downloads among `events` name, with the downloads' times (an erased event
    /// names none).
    typealias Download = (digest: PhotoDigest, time: LogTimestamp)

    static func downloads(in events: [LogEvent]) -> [Download] {
        events.compactMap { event in
            guard !event.isErased, let recorded = try? EventCodec.decode(event), case .photoDownloaded(let photo) = recorded.event else { return nil }
            return (photo.digest, event.timestamp)
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
