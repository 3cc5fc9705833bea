import BlobStore
import DeviceLogs
import EventLog
import FileIO

/// What a forget erases and deletes, kept in `forget.pending` from before the first change
/// until the last (docs/EVENTS.md, "Forgetting a place"): after a crash the log may already
/// have lost what would say which events and photos were the place's, so the plan keeps it —
/// sequence numbers and digests, nothing about where the place was.
///
/// ```
/// forget 3fa29c0100000001
/// erase 12 11
/// copy 9c0e…41
/// erase 3 11
/// photo 5f7c…e1
/// ```
///
/// In a store of several devices, the `erase` lines after `copy DEVICE` are that device's copy's
/// (docs/DEVICES.md, "Forgetting a place on several devices").
struct ForgetPlan: Equatable {
    var pin: PinID
    /// Events to erase: sequence → what each keeps (its type).
    var targets: [UInt64: [UInt8]] = [:]
    /// Events to erase in the copies of other devices' logs, by device.
    var copyTargets: [DeviceID: [UInt64: [UInt8]]] = [:]
    /// The photos the place's albums downloaded.
    var photos: Set<PhotoDigest> = []

    func encoded() -> [UInt8] {
        var lines = ["forget \(pin)"]
        func erasing(_ targets: [UInt64: [UInt8]]) {
            for sequence in targets.keys.sorted() {
                lines.append((["erase", String(sequence)] + targets[sequence]!.map { String($0) }).joined(separator: " "))
            }
        }
        erasing(targets)
        for device in copyTargets.keys.sorted() {
            lines.append("copy \(device)")
            erasing(copyTargets[device]!)
        }
        for digest in photos.map(\.description).sorted() { lines.append("photo \(digest)") }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// Reads a plan; nil when the bytes are not one (a marker from elsewhere is refused by the caller).
    init?(_ bytes: [UInt8]) {
        var pin: PinID?
        var copy: DeviceID?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            switch (words.first, words.count) {
            case ("forget", 2):
                guard pin == nil, let id = PinID(parsing: words[1]) else { return nil }
                pin = id
            case ("erase", 2...):
                // The sequence, then each kept byte as a decimal number.
                let kept = words.dropFirst(2).compactMap { UInt8($0) }
                guard let sequence = UInt64(words[1]), sequence > 0, kept.count == words.count - 2,
                    kept.count <= LogFormat.maxErasedKept
                else { return nil }
                if let copy { copyTargets[copy, default: [:]][sequence] = kept } else { targets[sequence] = kept }
            case ("copy", 2):
                guard let device = DeviceID(parsing: words[1]), copyTargets[device] == nil else { return nil }
                copy = device
                copyTargets[device] = [:]
            case ("photo", 2):
                guard let digest = BlobDigest(hex: words[1]) else { return nil }
                photos.insert(digest)
            default:
                return nil
            }
        }
        guard let pin else { return nil }
        self.pin = pin
    }

    init(pin: PinID) { self.pin = pin }

    /// Every event the plan erases, in this store's own log and in the copies.
    var count: Int { targets.count + copyTargets.values.reduce(0) { $0 + $1.count } }

    /// Adds `other`'s events and photos; where both name an event, this plan's kept bytes stay.
    mutating func merge(_ other: ForgetPlan) {
        targets.merge(other.targets) { planned, _ in planned }
        for (device, events) in other.copyTargets {
            copyTargets[device, default: [:]].merge(events) { planned, _ in planned }
        }
        photos.formUnion(other.photos)
    }
}
