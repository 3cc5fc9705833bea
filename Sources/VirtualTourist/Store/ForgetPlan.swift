import BlobStore
import FileIO

/// What a forget erases and deletes, kept in `forget.pending` from before the first change
/// until the last (docs/EVENTS.md, "Forgetting a place"): after a crash the log may already
/// have lost what would say which events and photos were the place's, so the plan keeps it —
/// sequence numbers and digests, nothing about where the place was.
///
/// ```
/// forget 3fa29c0100000001
/// erase 12 0b
/// photo 5f7c…e1
/// ```
struct ForgetPlan: Equatable {
    var pin: PinID
    /// Events to erase: sequence → what each keeps (its type).
    var targets: [UInt64: [UInt8]] = [:]
    /// The photos the place's albums downloaded.
    var photos: Set<PhotoDigest> = []

    func encoded() -> [UInt8] {
        var lines = ["forget \(pin)"]
        for sequence in targets.keys.sorted() {
            lines.append("erase \(sequence) \(targets[sequence]!.map { hex($0) }.joined())")
        }
        for digest in photos.map(\.description).sorted() { lines.append("photo \(digest)") }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// Reads a plan; nil when the bytes are not one (a marker from elsewhere is refused by the caller).
    init?(_ bytes: [UInt8]) {
        var pin: PinID?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            switch (words.first, words.count) {
            case ("forget", 2):
                guard pin == nil, let id = PinID(parsing: words[1]) else { return nil }
                pin = id
            case ("erase", 2), ("erase", 3):
                guard let sequence = UInt64(words[1]), sequence > 0, let kept = Self.bytes(hex: words.count == 3 ? words[2] : "")
                else { return nil }
                targets[sequence] = kept
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

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    private static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, digits.count <= 32 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
