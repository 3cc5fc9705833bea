import EventLog

/// The log's key function for this app (docs/FORMAT.md, "Key summaries"): the pin an event is
/// about. Compaction records, block by block, the pins its events name, so that a pin's history
/// reads only the blocks that hold its events (``StoreReader/history(of:from:)``).
extension EventCodec {
    /// The name every summary written for it carries.
    public static let pinKeys = BlockKeys(name: "pin") { pinKey(of: $0) }

    /// The pin an encoded event is about: the same as ``DomainEvent/pin`` of the decoded event,
    /// without decoding it (compaction calls this on every event). nil for an event about no pin
    /// (RegionChanged) or one that does not parse.
    ///
    /// In `Envelope` (schemas/virtual_tourist/v1/events.proto) the event is the oneof's one
    /// message; every case from `pin_dropped` (11) on carries the pin as its field 1, a
    /// `fixed64`, left out when 0. A case added later without a pin counts as pin 0: a summary
    /// may name more than an event holds, never less.
    static func pinKey(of payload: ArraySlice<UInt8>) -> UInt64? {
        payload.withUnsafeBytes { bytes -> UInt64? in
            var cursor = RawWire(bytes)
            while let (field, wireType) = cursor.tag() {
                if wireType == 2 {
                    guard let body = cursor.lengthDelimited() else { return nil }
                    if field >= Self.firstPinEventField { return Self.pinField(of: body) }
                } else if !cursor.skip(wireType) {
                    return nil
                }
            }
            return nil
        }
    }

    /// `Envelope`'s field number of `PinDropped`, the first event about a pin.
    static let firstPinEventField: UInt64 = 11

    /// Field 1 (`fixed64`) of an event's message, 0 when it is left out; nil when the message
    /// does not parse.
    private static func pinField(of message: UnsafeRawBufferPointer) -> UInt64? {
        var cursor = RawWire(message)
        var pin: UInt64 = 0
        while let (field, wireType) = cursor.tag() {
            if field == 1, wireType == 1 {
                guard let value = cursor.fixed64() else { return nil }
                pin = value
            } else if wireType == 2 {
                guard cursor.lengthDelimited() != nil else { return nil }
            } else if !cursor.skip(wireType) {
                return nil
            }
        }
        return cursor.isAtEnd ? pin : nil
    }
}

/// The protobuf wire format over raw bytes, just enough to find one field: tags, varints,
/// fixed numbers and length-delimited bodies. Every read checks the bounds; a failed read
/// leaves the cursor short of its end, which its callers treat as a payload that does not parse.
private struct RawWire {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    private var failed = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { !failed && position == bytes.count }

    /// The next field's number and wire type; nil at the end or on a bad tag.
    mutating func tag() -> (UInt64, UInt64)? {
        guard position < bytes.count, let tag = varint(), tag >> 3 != 0 else { return nil }
        return (tag >> 3, tag & 7)
    }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        failed = true
        return nil
    }

    mutating func fixed64() -> UInt64? {
        guard bytes.count - position >= 8 else {
            failed = true
            return nil
        }
        defer { position += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    mutating func lengthDelimited() -> UnsafeRawBufferPointer? {
        guard let length = varint(), length <= UInt64(bytes.count - position) else {
            failed = true
            return nil
        }
        defer { position += Int(length) }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + Int(length)])
    }

    /// Steps over a field of wire type 0, 1 or 5; false for any other or a short read.
    mutating func skip(_ wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1, 5:
            let size = wireType == 1 ? 8 : 4
            guard bytes.count - position >= size else {
                failed = true
                return false
            }
            position += size
            return true
        default:
            failed = true
            return false
        }
    }
}

extension LogConfiguration {
    /// This configuration with the app's key function, unless it names one already: every log
    /// the app writes keeps pin summaries.
    public var withPinKeys: LogConfiguration {
        var configuration = self
        if configuration.blockKeys == nil { configuration.blockKeys = EventCodec.pinKeys }
        return configuration
    }
}
