import EventLog
import FieldColumns

/// The log's key function for this app (docs/FORMAT.md, "Key summaries"): the pin an event is
/// about. Compaction records, block by block, the pins its events name, so that a pin's history
/// reads only the blocks that hold its events (``StoreReader/history(of:from:)``).
extension EventCodec {
    /// The name every summary written for it carries.
    public static let pinKeys = BlockKeys(name: "pin") { pinKey(of: $0) }
    /// The codec of the app's compacted blocks, which every reader of its logs is given: its
    /// payloads are protobuf messages, which the field columns take apart (FORMAT.md, "Codec 2").
    public static let blockCodec: any BlockPayloadCodec = FieldColumnsCodec()

    /// The pin an encoded event is about: the same as ``DomainEvent/pin`` of the decoded event,
    /// without decoding it (compaction calls this on every event). nil for an event about no pin
    /// (RegionChanged) or one that does not parse.
    ///
    /// In `Envelope` (schemas/virtual_tourist/v1/events.proto) the event is the oneof's one
    /// message; every case from `pin_dropped` (11) on but `device_seen` (22) carries the pin as
    /// its field 1, a `fixed64`, left out when 0. A case added later without a pin counts as pin
    /// 0: a summary may name more than an event holds, never less.
    static func pinKey(of payload: ArraySlice<UInt8>) -> UInt64? {
        switch scannedPinKey(of: payload) {
        case .key(let key):
            return key
        case .unusual:
            // Protobuf merges an envelope holding two events, or an event naming its pin twice,
            // and skips groups, in ways a scan should not imitate. The app never writes such a
            // payload, nor one that does not parse; if a log holds one anyway, the decoder says
            // which pin it is about, if any.
            let event = LogEvent(sequence: 1, timestamp: LogTimestamp(microsecondsSinceEpoch: 0), payload: payload)
            return (try? decode(event))?.event.pin?.rawValue
        }
    }

    private enum ScannedKey {
        case key(UInt64?)
        /// Not what the app writes: one event, its pin at most once, fields the scan can step
        /// over.
        case unusual
    }

    private static func scannedPinKey(of payload: ArraySlice<UInt8>) -> ScannedKey {
        payload.withUnsafeBytes { bytes -> ScannedKey in
            var cursor = RawWire(bytes)
            var event: (field: UInt64, body: UnsafeRawBufferPointer)?
            while let (field, wireType) = cursor.tag() {
                if wireType == 2 {
                    guard let body = cursor.lengthDelimited() else { return .unusual }
                    if field >= Self.firstEventField {
                        if event != nil { return .unusual }
                        event = (field, body)
                    }
                } else if field >= Self.firstEventField || !cursor.skip(wireType) {
                    return .unusual
                }
            }
            guard cursor.isAtEnd else { return .unusual }
            guard let event, event.field >= Self.firstPinEventField, event.field != Self.deviceSeenField else { return .key(nil) }
            return Self.pinField(of: event.body)
        }
    }

    /// `Envelope`'s field number of `RegionChanged`, the oneof's first case.
    static let firstEventField: UInt64 = 10
    /// `Envelope`'s field number of `PinDropped`, the first event about a pin.
    static let firstPinEventField: UInt64 = 11
    /// `Envelope`'s field number of `DeviceSeen`, which is about no pin.
    static let deviceSeenField: UInt64 = 22

    /// Field 1 (`fixed64`) of an event's message, 0 when it is left out.
    private static func pinField(of message: UnsafeRawBufferPointer) -> ScannedKey {
        var cursor = RawWire(message)
        var pin: UInt64?
        while let (field, wireType) = cursor.tag() {
            if field == 1 {
                guard wireType == 1, pin == nil, let value = cursor.fixed64() else { return .unusual }
                pin = value
            } else if wireType == 2 {
                guard cursor.lengthDelimited() != nil else { return .unusual }
            } else if !cursor.skip(wireType) {
                return .unusual
            }
        }
        return cursor.isAtEnd ? .key(pin ?? 0) : .unusual
    }
}

extension LogConfiguration {
    /// The settings of the app's logs: the defaults, with pin key summaries and the field-columns
    /// codec (``EventCodec/blockCodec``).
    public static var touristStore: LogConfiguration {
        var configuration = LogConfiguration()
        configuration.blockKeys = EventCodec.pinKeys
        configuration.payloadCodec = EventCodec.blockCodec
        return configuration
    }

    /// This configuration with the app's key function, unless it names one already: every log
    /// the app writes keeps pin summaries.
    public var withPinKeys: LogConfiguration {
        var configuration = self
        if configuration.blockKeys == nil { configuration.blockKeys = EventCodec.pinKeys }
        return configuration
    }
}
