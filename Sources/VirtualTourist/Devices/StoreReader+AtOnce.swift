import DeviceLogs
import EventLog

/// Which devices a store holds, and where two of them acted at once (docs/DEVICES.md, "Time
/// travel and audit"): an event made on a device that had not yet seen an earlier event, in the
/// merged order, of another device. Neither had seen the other's (times follow what a device
/// has seen, so the later one could not have been seen by the earlier), so the person acted on
/// two devices without either knowing of the other: where the rules by intent decide.
extension StoreReader {
    /// The devices of this store, this one first and the others by id, each with its name and
    /// how many of its events the store holds; empty for a store of one device.
    ///
    /// - Throws: ``DomainError`` `.storage` when the devices cannot be read.
    public func devices() throws -> [KnownDevice] { try mapAndDevices()?.devices ?? [] }

    /// The map's id and ``devices()``; nil for a store of one device.
    func mapAndDevices() throws -> (map: DeviceID, devices: [KnownDevice])? {
        guard let merged else { return nil }
        let devices: StoreDevices
        do { devices = try StoreDevices.read(store: folder, payloadCodec: EventCodec.blockCodec, fileSystem: fileSystem) } catch {
            throw DomainError(.storage, "the devices of \(folder) cannot be read", cause: error)
        }
        var names = Dictionary(uniqueKeysWithValues: ([devices.this] + devices.copies.compactMap(\.file)).map { ($0.device, $0.name) })
        for other in devices.others where names[other] == nil {
            // A device known by its device.json alone (it had written nothing yet).
            names[other] = (try? DeviceFile.load(from: StoreDevices.folder(store: folder, device: other), fileSystem: fileSystem))??.name
        }
        let counted = Dictionary(uniqueKeysWithValues: merged.logs.map { ($0.device, $0.last) })
        let others = Set(merged.logs.map(\.device) + devices.others).subtracting([merged.local]).sorted()
        let known = ([merged.local] + others).map {
            KnownDevice(id: $0, name: names[$0] ?? nil, events: counted[$0] ?? 0, isThis: $0 == merged.local)
        }
        return (devices.this.map, known)
    }

    /// For each of `events` (events of this history, in its order, such as a page of it), the
    /// other devices with an earlier one among `events` that its device had not seen when it
    /// wrote it, by position; events with none are left out. Empty for a store of one device.
    ///
    /// Cost: the state before the first (a snapshot and a short replay), then the events from
    /// the first to the last read once, for the `DeviceSeen` events among them.
    public func actedAtOnce(_ events: [RecordedEvent]) throws -> [UInt64: [DeviceID]] {
        guard let merged, let first = events.first, let last = events.last else { return [:] }
        var seen = try state(at: first.sequence - 1).devicesSeen
        let wanted = Set(events.map(\.sequence))
        var earlier: [EventOrigin] = []
        var found: [UInt64: [DeviceID]] = [:]
        do {
            try merged.forEach(from: first.sequence, through: last.sequence) { recorded in
                guard let origin = recorded.origin else { return }
                if case .deviceSeen(let said) = recorded.event, said.device != origin.device {
                    seen[origin.device, default: [:]][said.device] = max(seen[origin.device]?[said.device] ?? 0, said.through)
                }
                guard wanted.contains(recorded.sequence) else { return }
                let had = seen[origin.device] ?? [:]
                let unseen = Set(earlier.lazy.filter { $0.device != origin.device && $0.sequence > had[$0.device] ?? 0 }.map(\.device))
                if !unseen.isEmpty { found[recorded.sequence] = unseen.sorted() }
                earlier.append(origin)
            }
        } catch {
            throw TouristStore.storageError(error, "the events \(first.sequence)…\(last.sequence) cannot be read")
        }
        return found
    }
}
