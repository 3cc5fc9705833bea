import DeviceLogs

/// Encodes a ``TouristState`` as a `StateSnapshot` (schemas/…/snapshot.proto) straight into
/// bytes, without swift-protobuf's message values in between: the same bytes as
/// `SnapshotCodec.message(for:).serializedBytes()`, field for field (tests compare the two),
/// at a fraction of the cost. Building the messages and sizing them took about 200 ms of CPU
/// for 130,000 photos, and a store writes a snapshot at every close that follows a change, so
/// every `vt` command that changes a large store paid it (docs/BENCHMARKS-JOURNAL.md, "Snapshots
/// written without message values").
///
/// Two passes: the sizes of every nested message first (protobuf writes a message's length
/// before it), then the bytes, into one buffer of exactly that size. A large state's pins are
/// written in two halves on two cores (``onTwoCores(_:_:)``), each to the place the sizes give
/// it.
enum SnapshotWireEncoder {
    /// The snapshot's bytes after `prefix` bytes left for the caller (a file header), which
    /// `fillPrefix` writes once the payload is in place.
    static func encode(
        _ state: TouristState, prefix: Int = 0, fillPrefix: (_ payload: UnsafeRawBufferPointer, _ prefix: UnsafeMutableRawBufferPointer) -> Void = { _, _ in }
    ) -> [UInt8] {
        let pins = state.pinsInDropOrder
        let sizes = pins.map { pin in
            let album = albumSize(pin.album)
            return PinSize(pin: pinSize(pin, album: album), album: album)
        }
        let pinsSize = sizes.reduce(0) { $0 + Sizes.nested($1.pin) }
        var size = Sizes.uint(EventCodec.schemaVersion) + Sizes.uint(state.sequence) + Sizes.uint(state.ignoredEvents) + pinsSize
        if let region = state.region { size += Sizes.nested(regionSize(region)) }
        if !state.forgottenPins.isEmpty { size += Sizes.nested(8 * state.forgottenPins.count) }
        let devicesSeen = state.devicesSeenInOrder
        size += devicesSeen.reduce(0) { $0 + Sizes.nested(seenSize($1)) }
        return [UInt8](unsafeUninitializedCapacity: prefix + size) { buffer, count in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            var out = Writer(base + prefix)
            out.uint(1, UInt64(EventCodec.schemaVersion))
            out.uint(2, state.sequence)
            if let region = state.region {
                out.header(3, length: regionSize(region))
                write(region, &out)
            }
            writePins(pins, sizes: sizes, bytes: pinsSize, at: out.position)
            out.position += pinsSize
            out.uint(5, state.ignoredEvents)
            if !state.forgottenPins.isEmpty {
                // Packed, as swift-protobuf writes a repeated fixed64.
                out.header(6, length: 8 * state.forgottenPins.count)
                for pin in state.forgottenPins.map(\.rawValue).sorted() { out.fixed64(pin) }
            }
            for seen in devicesSeen {
                out.header(7, length: seenSize(seen))
                for (field, device) in [(1, seen.by), (2, seen.device)] as [(UInt64, DeviceID)] {
                    out.header(field, length: DeviceID.size)
                    device.bytes.withUnsafeBytes { out.bytes($0) }
                }
                out.uint(3, seen.through)
            }
            precondition(out.position - base == prefix + size, "the snapshot's sizes and bytes disagree")
            fillPrefix(UnsafeRawBufferPointer(start: base + prefix, count: size), UnsafeMutableRawBufferPointer(start: base, count: prefix))
            count = prefix + size
        }
    }

    private static func seenSize(_ seen: TouristState.SeenDevice) -> Int {
        2 * Sizes.nested(DeviceID.size) + Sizes.uint(seen.through)
    }

    /// A pin message's size and its album's, sized once and written from.
    private struct PinSize {
        let pin: Int
        let album: Int
    }

    /// Below this many bytes of pins, one core writes them all.
    static let bytesWorthTwoCores = 1 << 20

    private static func writePins(_ pins: [Pin], sizes: [PinSize], bytes: Int, at start: UnsafeMutableRawPointer) {
        guard pins.count > 1, bytes >= bytesWorthTwoCores else {
            return write(pins[...], sizes: sizes[...], at: start)
        }
        var middle = 0, firstHalf = 0
        while middle < pins.count - 1, firstHalf < bytes / 2 {
            firstHalf += Sizes.nested(sizes[middle].pin)
            middle += 1
        }
        _ = onTwoCores(
            { write(pins[..<middle], sizes: sizes[..<middle], at: start) },
            { write(pins[middle...], sizes: sizes[middle...], at: start + firstHalf) })
    }

    private static func write(_ pins: ArraySlice<Pin>, sizes: ArraySlice<PinSize>, at start: UnsafeMutableRawPointer) {
        var out = Writer(start)
        for (pin, size) in zip(pins, sizes) {
            out.header(4, length: size.pin)
            write(pin, albumSize: size.album, &out)
        }
    }

    // MARK: - Sizes and bytes, message by message (the field order and the rule for leaving a
    // field out are swift-protobuf's: proto3 leaves out zeros and empties, and a double only
    // when all its bits are zero).

    private static func regionSize(_ region: MapRegion) -> Int {
        Sizes.double(region.center.latitude) + Sizes.double(region.center.longitude)
            + Sizes.double(region.latitudeSpan) + Sizes.double(region.longitudeSpan)
    }

    private static func write(_ region: MapRegion, _ out: inout Writer) {
        out.double(1, region.center.latitude)
        out.double(2, region.center.longitude)
        out.double(3, region.latitudeSpan)
        out.double(4, region.longitudeSpan)
    }

    private static func pinSize(_ pin: Pin, album: Int) -> Int {
        (pin.id.rawValue != 0 ? 9 : 0) + Sizes.double(pin.coordinate.latitude) + Sizes.double(pin.coordinate.longitude)
            + Sizes.uint(pin.droppedAt) + Sizes.nested(album)
            + (pin.removedPhotos.isEmpty ? 0 : Sizes.nested(8 * pin.removedPhotos.count))
    }

    private static func write(_ pin: Pin, albumSize: Int, _ out: inout Writer) {
        if pin.id.rawValue != 0 {
            out.tag(1, .fixed64)
            out.fixed64(pin.id.rawValue)
        }
        out.double(2, pin.coordinate.latitude)
        out.double(3, pin.coordinate.longitude)
        out.uint(4, pin.droppedAt)
        out.header(5, length: albumSize)
        write(pin.album, &out)
        if !pin.removedPhotos.isEmpty {
            // Packed, as proto3 writes a repeated fixed64; sorted, as SnapshotCodec writes them.
            out.header(6, length: 8 * pin.removedPhotos.count)
            for key in pin.removedPhotos.sorted() { out.fixed64(key) }
        }
    }

    /// The album's fields as `SnapshotCodec.message(for:)` sets them.
    private struct AlbumFields {
        var phase: UInt64 = 0
        var failure = ""
        var page: UInt32 = 0, perPage: UInt32 = 0
        var latitude = 0.0, longitude = 0.0

        init(_ album: Album) {
            switch album.phase {
            case .notRequested: phase = 0
            case .listing: phase = 1
            case .listed: phase = 2
            case .failed(let reason): (phase, failure) = (3, reason)
            }
            if let request = album.request {
                (page, perPage) = (request.page, request.perPage)
                (latitude, longitude) = (request.place.latitude, request.place.longitude)
            }
        }
    }

    private static func albumSize(_ album: Album) -> Int {
        let fields = AlbumFields(album)
        var size = Sizes.uint(album.collection) + Sizes.uint(fields.phase) + Sizes.text(fields.failure)
            + Sizes.uint(fields.page) + Sizes.uint(fields.perPage) + Sizes.uint(album.pages) + Sizes.uint(album.total)
            + Sizes.double(fields.latitude) + Sizes.double(fields.longitude) + Sizes.uint(album.requestedAt ?? 0)
            + Sizes.uint(album.listedAt ?? 0) + Sizes.uint(UInt32(album.listedPhotoCount))
            + (album.requestedBy.map { Sizes.nested($0.bytes.count) } ?? 0)
        album.slots.withUnsafeBufferPointer { slots in
            for index in slots.indices { size += Sizes.nested(slotSize(slots[index])) }
        }
        return size
    }

    private static func write(_ album: Album, _ out: inout Writer) {
        let fields = AlbumFields(album)
        out.uint(1, UInt64(album.collection))
        out.uint(2, fields.phase)
        out.text(3, fields.failure)
        out.uint(4, UInt64(fields.page))
        out.uint(5, UInt64(fields.perPage))
        out.uint(6, UInt64(album.pages))
        out.uint(7, album.total)
        out.double(8, fields.latitude)
        out.double(9, fields.longitude)
        out.uint(10, album.requestedAt ?? 0)
        out.uint(11, album.listedAt ?? 0)
        album.slots.withUnsafeBufferPointer { slots in
            for index in slots.indices {
                out.header(12, length: slotSize(slots[index]))
                write(slots[index], &out)
            }
        }
        out.uint(13, UInt64(UInt32(album.listedPhotoCount)))
        if let device = album.requestedBy {
            out.header(14, length: device.bytes.count)
            device.bytes.withUnsafeBytes { out.bytes($0) }
        }
    }

    private static func slotSize(_ slot: PhotoSlot) -> Int {
        var size = Sizes.uint(slot.number) + Sizes.uint(slot.resolvedAt ?? 0)
            + Sizes.uint(slot.photo.width) + Sizes.uint(slot.photo.height)
        switch slot.state {
        case .placeholder: break
        case .downloaded(_, let byteCount, let mediaType):
            size += 2 + Sizes.nested(32) + Sizes.uint(byteCount) + Sizes.text(mediaType)
        case .failed(let reason):
            size += 2 + Sizes.text(reason)
        }
        let texts = slot.photo.utf8.count
        if texts > 0 { size += Sizes.nested(texts) }
        return size + Sizes.nested(endsSize(slot.photo))
    }

    private static func endsSize(_ photo: ListedPhoto) -> Int {
        (0..<8).reduce(0) { $0 + Sizes.varint(UInt64(photo.textEnd($1))) }
    }

    private static func write(_ slot: PhotoSlot, _ out: inout Writer) {
        out.uint(1, UInt64(slot.number))
        switch slot.state {
        case .placeholder:
            break
        case .downloaded(let digest, let byteCount, let mediaType):
            out.uint(3, 1)
            out.header(4, length: 32)
            digest.withUnsafeBytes { out.bytes($0) }
            out.uint(5, byteCount)
            out.text(6, mediaType)
        case .failed(let reason):
            out.uint(3, 2)
            out.text(7, reason)
        }
        out.uint(8, slot.resolvedAt ?? 0)
        let photo = slot.photo
        if !photo.utf8.isEmpty {
            out.header(9, length: photo.utf8.count)
            photo.utf8.withUnsafeBytes { out.bytes($0) }
        }
        out.header(10, length: endsSize(photo))
        for index in 0..<8 { out.varint(UInt64(photo.textEnd(index))) }
        out.uint(11, UInt64(photo.width))
        out.uint(12, UInt64(photo.height))
    }

    /// The sizes of fields, tag included (every field number here is under 16: a one-byte tag).
    private enum Sizes {
        static func varint(_ value: UInt64) -> Int { (64 - value.leadingZeroBitCount + 6) / 7 + (value == 0 ? 1 : 0) }
        static func uint(_ value: some UnsignedInteger & FixedWidthInteger) -> Int { value == 0 ? 0 : 1 + varint(UInt64(value)) }
        static func double(_ value: Double) -> Int { value.bitPattern == 0 ? 0 : 9 }
        static func nested(_ length: Int) -> Int { 1 + varint(UInt64(length)) + length }
        static func text(_ text: String) -> Int { text.isEmpty ? 0 : nested(text.utf8.count) }
    }

    private enum WireType: UInt64 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2
    }

    /// Writes into memory sized beforehand; nothing here checks room.
    private struct Writer {
        var position: UnsafeMutableRawPointer

        init(_ start: UnsafeMutableRawPointer) { position = start }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                position.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, as: UInt8.self)
                position += 1
                value >>= 7
            }
            position.storeBytes(of: UInt8(value), as: UInt8.self)
            position += 1
        }

        mutating func tag(_ field: UInt64, _ type: WireType) { varint(field << 3 | type.rawValue) }

        mutating func fixed64(_ value: UInt64) {
            position.storeBytes(of: value.littleEndian, as: UInt64.self)
            position += 8
        }

        mutating func uint(_ field: UInt64, _ value: UInt64) {
            guard value != 0 else { return }
            tag(field, .varint)
            varint(value)
        }

        mutating func double(_ field: UInt64, _ value: Double) {
            guard value.bitPattern != 0 else { return }
            tag(field, .fixed64)
            fixed64(value.bitPattern)
        }

        mutating func header(_ field: UInt64, length: Int) {
            tag(field, .lengthDelimited)
            varint(UInt64(length))
        }

        mutating func bytes(_ bytes: UnsafeRawBufferPointer) {
            guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
            position.copyMemory(from: start, byteCount: bytes.count)
            position += bytes.count
        }

        mutating func text(_ field: UInt64, _ text: String) {
            guard !text.isEmpty else { return }
            var text = text
            text.withUTF8 { utf8 in
                header(field, length: utf8.count)
                bytes(UnsafeRawBufferPointer(utf8))
            }
        }
    }
}
