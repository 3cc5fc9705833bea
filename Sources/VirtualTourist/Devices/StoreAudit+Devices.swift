import DeviceLogs
import EventLog
import FileIO

extension StoreAudit {
    /// In a store of several devices: every copy's chain checked as the store's own log is, and
    /// the merged fold replayed; returns the merged state (the photos it shows must be stored),
    /// or nil in a store of one device.
    static func verifyDevices(folder: String, fileSystem: any FileSystem, into result: inout StoreVerification) -> TouristState? {
        let devices: StoreDevices
        do {
            guard try fileSystem.exists(Path.join(folder, StoreDevices.folderName)) else { return nil }
            devices = try StoreDevices.read(store: folder, payloadCodec: EventCodec.blockCodec, fileSystem: fileSystem)
        } catch {
            result.problems.append("the other devices' copies cannot be read: \(error)")
            return nil
        }
        guard !devices.others.isEmpty else { return nil }
        var damaged = false
        for copy in devices.copies {
            let name = "device \(copy.id)" + (copy.file?.name.map { " (\($0))" } ?? "")
            do {
                let report = try LogVerifier.verify(
                    directory: copy.logPath, fileSystem: fileSystem, keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec)
                result.problems += report.problems.filter { $0.kind != .index }.map { "\(name)'s log: \($0)" }
                damaged = damaged || report.problems.contains(where: \.isDamage)
            } catch {
                result.problems.append("\(name)'s log cannot be checked: \(error)")
                damaged = true
            }
        }
        guard !damaged else { return nil }
        do {
            guard let history = try MergedHistory.open(store: folder, fileSystem: fileSystem) else { return nil }
            // From the first event, not a snapshot: every log is read, and what each device
            // said it had seen is gathered on the way.
            var state = TouristState(localDevice: history.local)
            var claims: [RecordedEvent] = []
            try history.forEach { event in
                if case .deviceSeen = event.event { claims.append(event) }
                state.apply(event)
            }
            checkSeen(claims, in: history, into: &result)
            result.notes.append(
                "merged \(history.count) events of \(history.logs.count) devices; \(state.ignoredEvents) of them gave way to the rules by intent"
                    + " (docs/DEVICES.md)")
            return state
        } catch {
            result.problems.append("the devices' merged history could not be replayed: \(error)")
            return nil
        }
    }

    /// The causal graph (docs/DEVICES.md, "What an event carries for the merge"): each
    /// `DeviceSeen` names another device, and where this store holds that device's log that
    /// far, the head there is the one named and the event there is earlier.
    static func checkSeen(_ claims: [RecordedEvent], in history: MergedHistory, into result: inout StoreVerification) {
        var checked = 0
        var ahead = 0
        var readers: [DeviceID: LogReader] = [:]
        for claim in claims {
            guard case .deviceSeen(let seen) = claim.event, let origin = claim.origin else { continue }
            let place = "device \(origin.device.short)'s event \(origin.sequence) (DeviceSeen of device \(seen.device.short) through \(seen.through))"
            guard seen.device != origin.device else {
                result.problems.append("\(place) names the device that wrote it")
                continue
            }
            guard let log = history.logs.first(where: { $0.device == seen.device }), seen.through <= log.last else {
                ahead += 1  // its writer has more of that device than this store holds yet
                continue
            }
            do {
                if readers[seen.device] == nil { readers[seen.device] = try history.reader(log) }
                let reader = readers[seen.device]!
                guard let head = try reader.head(at: seen.through), let named = try reader.event(at: seen.through) else {
                    result.problems.append("\(place): that device's log has no event \(seen.through)")
                    continue
                }
                if head.hash.bytes != seen.head {
                    result.problems.append("\(place) names another head than that device's log has there: the histories differ")
                } else if claim.timestamp <= named.timestamp {
                    result.problems.append(
                        "\(place) is not later than the event it names (\(claim.timestamp.microsecondsSinceEpoch) µs, not after \(named.timestamp.microsecondsSinceEpoch) µs): the merged order would not be causal")
                }
                checked += 1
            } catch {
                result.problems.append("\(place) cannot be checked: \(error)")
            }
        }
        guard !claims.isEmpty else { return }
        result.notes.append(
            "\(checked) of \(claims.count) DeviceSeen events checked against the logs they name"
                + (ahead == 0 ? "" : "; \(ahead) name events this store does not hold yet"))
    }
}
