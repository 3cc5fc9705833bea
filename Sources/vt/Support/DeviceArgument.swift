import DeviceLogs
import VirtualTourist

/// A `--device` argument: a device of the store's map, named by its id, a unique prefix of its
/// id, or its name (`vt device` lists them).
enum DeviceArgument {
    /// The device `text` names among those the store at `store` knows (itself and its copies).
    static func resolve(_ text: String, store: String) throws -> DeviceID {
        let devices = try StoreSync.devices(of: store)
        let known = [(devices.this.device, devices.this.name)] + devices.copies.map { ($0.id, $0.file?.name) }
        let wanted = text.lowercased()
        let byName = known.filter { $0.1 == text }
        let matches = byName.isEmpty ? known.filter { $0.0.description.hasPrefix(wanted) } : byName
        guard !wanted.isEmpty, matches.count == 1 else {
            let listed = known.map { "\($0.0.short)\($0.1.map { " (\($0))" } ?? "")" }.joined(separator: ", ")
            throw RuntimeError(
                message: matches.isEmpty || wanted.isEmpty
                    ? "--device \(text) names no device of this store; it knows \(listed)"
                    : "--device \(text) names \(matches.count) devices; give more of the id (it knows \(listed))")
        }
        return matches[0].0
    }

    /// "b5f143cd (laptop)": a device's short id, and its name when the store at `store` knows one.
    static func label(_ device: DeviceID, store: String) -> String {
        let devices = try? StoreSync.devices(of: store)
        let name = devices.flatMap { known in ([known.this] + known.copies.compactMap(\.file)).first { $0.device == device }?.name }
        return device.short + (name.map { " (\($0))" } ?? "")
    }
}
