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
            let state = try history.state(at: history.count)
            result.notes.append(
                "merged \(history.count) events of \(history.logs.count) devices; \(state.ignoredEvents) of them gave way to the rules by intent"
                    + " (docs/DEVICES.md)")
            return state
        } catch {
            result.problems.append("the devices' merged history could not be replayed: \(error)")
            return nil
        }
    }
}
