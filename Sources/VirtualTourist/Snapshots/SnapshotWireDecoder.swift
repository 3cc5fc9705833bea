import DeviceLogs
/// Decodes a `StateSnapshot` (schemas/…/snapshot.proto) straight into a ``TouristState``,
/// without swift-protobuf's message values in between: opening a store and time travel load a
/// snapshot each time, and building the messages first cost more than the rest of the load
/// (docs/BENCHMARKS.md has the profile).
///
/// Nil for anything but a plain, well-formed snapshot that ``SnapshotCodec`` would accept;
/// ``SnapshotFile`` then takes the general path, which gives the same state or names the
/// problem. Tests hold the two paths to the same answers.
enum SnapshotWireDecoder {
    typealias Unusual = WireReader.Unusual

    static func state(_ raw: [UInt8]) -> TouristState? { state(raw[...]) }

    /// With `pinsOnly`, every album is stepped over and left empty (see
    /// ``SnapshotFile/decode(_:decompressor:pinsOnly:)``).
    static func state(_ raw: ArraySlice<UInt8>, pinsOnly: Bool = false) -> TouristState? {
        raw.withUnsafeBytes { state($0, pinsOnly: pinsOnly) }
    }

    /// One `DeviceSeenState`: both ids 16 bytes, a sequence number past 0.
    private static func seen(_ message: WireReader) throws(Unusual) -> TouristState.SeenDevice {
        var reader = message
        var ids: [UInt64: DeviceID] = [:]
        var through: UInt64 = 0
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1, 2: ids[number] = try reader.deviceID(type)
            case 3: through = try reader.uint64(type)
            default: try reader.skip(type)
            }
        }
        guard let by = ids[1], let device = ids[2], through > 0 else { throw Unusual() }
        return TouristState.SeenDevice(by: by, device: device, through: through)
    }

    static func state(_ raw: UnsafeRawBufferPointer, pinsOnly: Bool = false) -> TouristState? {
        try? snapshot(WireReader(raw), pinsOnly: pinsOnly)
    }

    private static func snapshot(_ reader: WireReader, pinsOnly: Bool) throws(Unusual) -> TouristState {
        var reader = reader
        var version: UInt32 = 0
        var state = TouristState()
        var hasRegion = false
        var pinMessages: [WireReader] = []
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: version = try reader.uint32(type)
            case 2: state.sequence = try reader.uint64(type)
            case 3:
                guard !hasRegion else { throw Unusual() }
                hasRegion = true
                state.region = try EventWireDecoder.region(try reader.message(type))
            case 4: pinMessages.append(try reader.message(type))
            case 5: state.ignoredEvents = try reader.uint64(type)
            case 6:
                // Packed (as written) or one at a time (as a parser must also accept).
                if type == .fixed64 {
                    state.forgottenPins.insert(PinID(try reader.fixed64(type)))
                } else {
                    var packed = try reader.message(type)
                    guard packed.remaining % 8 == 0 else { throw Unusual() }
                    while packed.remaining > 0 { state.forgottenPins.insert(PinID(try packed.fixed64())) }
                }
            case 7:
                let seen = try Self.seen(try reader.message(type))
                state.devicesSeen[seen.by, default: [:]][seen.device] = seen.through
            default: try reader.skip(type)
            }
        }
        guard version >= 1, version <= EventCodec.schemaVersion else { throw Unusual() }
        let pieces = pinsOnly ? [try self.pins(pinMessages[...], albums: false)] : try self.pins(pinMessages)
        // The tables are sized once: growing them step by step cost a seventh of the load.
        state.pins.reserveCapacity(pieces.reduce(0) { $0 + $1.pins.count })
        state.photoReferences.reserveCapacity(pieces.reduce(0) { $0 + $1.digests.count })
        for piece in pieces {
            for pin in piece.pins {
                guard state.pins.updateValue(pin, forKey: pin.id) == nil else { throw Unusual() }
            }
            // From the flat lists the decoders made on the way: walking the slots again here
            // copied each one (a retain and a release a photo) on one thread after the others.
            for digest in piece.digests { state.photoReferences.add(digest) }
        }
        return state
    }

    /// Some pins decoded, in order, and the digest of every downloaded photo in their albums,
    /// for the reference table.
    private typealias Piece = (pins: [Pin], digests: [PhotoDigest])

    /// Below this many bytes of pins, one thread decodes them all (tests, young stores).
    static let bytesWorthPieces = 1 << 20
    /// How many pieces a large state is cut into: enough that a core the scheduler lends to
    /// other work holds back a sixteenth of the load, not a half.
    static let pieceCount = 16

    /// The pins decoded, in pieces of about equal bytes decoded on every core (``inPieces(_:_:)``):
    /// pins are independent of each other, and decoding their albums' photos is most of a
    /// snapshot's load (docs/BENCHMARKS.md).
    private static func pins(_ messages: [WireReader]) throws(Unusual) -> [Piece] {
        let total = messages.reduce(0) { $0 + $1.remaining }
        guard messages.count > 1, total >= bytesWorthPieces else { return [try pins(messages[...])] }
        let ranges = cut(messages.map(\.remaining), into: pieceCount)
        let results = inPieces(ranges.count) { index in
            Result { () throws(Unusual) in try pins(messages[ranges[index]]) }
        }
        return try results.map { result throws(Unusual) in try result.get() }
    }

    /// `sizes` cut into at most `count` consecutive, non-empty ranges of about equal sums.
    static func cut(_ sizes: [Int], into count: Int) -> [Range<Int>] {
        let total = sizes.reduce(0, +)
        var ranges: [Range<Int>] = []
        var start = 0, sum = 0
        for (index, size) in sizes.enumerated() {
            sum += size
            // A range ends once the sizes so far reach its share of the whole.
            if ranges.count + 1 < count, sum * count >= total * (ranges.count + 1), index + 1 < sizes.count {
                ranges.append(start..<index + 1)
                start = index + 1
            }
        }
        if start < sizes.count { ranges.append(start..<sizes.count) }
        return ranges
    }

    private static func pins(_ messages: ArraySlice<WireReader>, albums: Bool = true) throws(Unusual) -> Piece {
        var pins: [Pin] = []
        var digests: [PhotoDigest] = []
        var mediaTypes = RepeatedText()
        pins.reserveCapacity(messages.count)
        for message in messages { pins.append(try pin(message, album: albums, digests: &digests, mediaTypes: &mediaTypes)) }
        return (pins, digests)
    }

    private static func pin(
        _ reader: WireReader, album decodesAlbum: Bool, digests: inout [PhotoDigest], mediaTypes: inout RepeatedText
    ) throws(Unusual) -> Pin {
        var reader = reader
        var id: UInt64 = 0
        var latitude = 0.0, longitude = 0.0
        var droppedAt: UInt64 = 0
        var albumMessage: WireReader?
        var removed: Set<UInt64> = []
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: id = try reader.fixed64(type)
            case 2: latitude = try reader.double(type)
            case 3: longitude = try reader.double(type)
            case 4: droppedAt = try reader.uint64(type)
            case 5:
                guard albumMessage == nil else { throw Unusual() }
                albumMessage = try reader.message(type)
            case 6:
                // Packed (as written) or one at a time (as a parser must also accept).
                if type == .fixed64 {
                    removed.insert(try reader.fixed64(type))
                } else {
                    var packed = try reader.message(type)
                    guard packed.remaining % 8 == 0 else { throw Unusual() }
                    while packed.remaining > 0 { removed.insert(try packed.fixed64()) }
                }
            default: try reader.skip(type)
            }
        }
        let pin = PinID(id)
        let album = decodesAlbum ? try self.album(albumMessage ?? WireReader.empty, pin: pin, digests: &digests, mediaTypes: &mediaTypes) : Album()
        return Pin(
            id: pin, coordinate: Coordinate(latitude: latitude, longitude: longitude), droppedAt: droppedAt, album: album,
            removedPhotos: removed)
    }

    private static func album(
        _ reader: WireReader, pin: PinID, digests: inout [PhotoDigest], mediaTypes: inout RepeatedText
    ) throws(Unusual) -> Album {
        var reader = reader
        var collection: UInt32 = 0, page: UInt32 = 0, perPage: UInt32 = 0, pages: UInt32 = 0, listedCount: UInt32 = 0
        var phase: UInt64 = 0
        var failure = ""
        var total: UInt64 = 0, requestedAt: UInt64 = 0, listedAt: UInt64 = 0
        var latitude = 0.0, longitude = 0.0
        var slots: [DecodedSlot] = []
        var packedBytes = 0
        var requestedBy: DeviceID? = nil
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: collection = try reader.uint32(type)
            case 2: phase = try reader.uint64(type)
            case 3: failure = try reader.string(type)
            case 4: page = try reader.uint32(type)
            case 5: perPage = try reader.uint32(type)
            case 6: pages = try reader.uint32(type)
            case 7: total = try reader.uint64(type)
            case 8: latitude = try reader.double(type)
            case 9: longitude = try reader.double(type)
            case 10: requestedAt = try reader.uint64(type)
            case 11: listedAt = try reader.uint64(type)
            case 12:
                let slot = try self.slot(try reader.message(type), mediaTypes: &mediaTypes)
                // Slots must come in increasing order; the general path names the problem.
                if let last = slots.last, slot.number <= last.number { throw Unusual() }
                slots.append(slot)
                packedBytes += slot.packedTexts.count
                if case .downloaded(let digest, _, _) = slot.state { digests.append(digest) }
            case 13: listedCount = try reader.uint32(type)
            case 14: requestedBy = try reader.deviceID(type)
            default: try reader.skip(type)
            }
        }
        var album = Album(collection: collection)
        switch phase {
        case 0: album.phase = .notRequested
        case 1: album.phase = .listing
        case 2: album.phase = .listed
        case 3: album.phase = .failed(reason: failure)
        default: throw Unusual()
        }
        if requestedAt != 0 {
            album.requestedAt = requestedAt
            album.request = AlbumRequest(
                pin: pin, collection: collection, page: page, perPage: perPage,
                place: Coordinate(latitude: latitude, longitude: longitude))
        }
        album.requestedBy = requestedBy
        album.listedAt = listedAt == 0 ? nil : listedAt
        album.pages = pages
        album.total = total
        album.listedPhotoCount = Int(listedCount)
        album.slots = photoSlots(slots, packedBytes: packedBytes)
        return album
    }

    /// The last text of a kind read, as bytes and as a string: nearly every photo of a state has
    /// one of two media types, and making a new string for each cost 4 % of a load.
    struct RepeatedText {
        private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        private var text = ""

        /// `utf8` (checked UTF-8) as a string, the last one's when the bytes are the same.
        mutating func string(_ utf8: UnsafeRawBufferPointer) -> String {
            if utf8.count == bytes.count, utf8.elementsEqual(bytes) { return text }
            bytes = utf8
            text = String(decoding: utf8, as: UTF8.self)
            return text
        }
    }

    /// A slot as read, its packed texts still pointing into the payload.
    private struct DecodedSlot {
        var number: UInt32
        var state: PhotoSlot.State
        var resolvedAt: UInt64?
        /// Version 1's form, decoded; nil for the packed form.
        var photo: ListedPhoto?
        var packedTexts = UnsafeRawBufferPointer(start: nil, count: 0)
        var ends = ListedPhoto.PackedEnds()
        var width: UInt32 = 0
        var height: UInt32 = 0
    }

    /// The album's slots, their packed texts copied into one array for the whole album that
    /// each photo keeps a slice of: one allocation an album instead of one a photo. (Slices of
    /// the payload itself would copy nothing, but every photo would then count references on
    /// one shared buffer from both decoding threads: a third of the load went to that.)
    private static func photoSlots(_ decoded: [DecodedSlot], packedBytes: Int) -> [PhotoSlot] {
        let arena = [UInt8](unsafeUninitializedCapacity: packedBytes) { buffer, count in
            var offset = 0
            for slot in decoded where !slot.packedTexts.isEmpty {
                UnsafeMutableRawPointer(buffer.baseAddress! + offset).copyMemory(from: slot.packedTexts.baseAddress!, byteCount: slot.packedTexts.count)
                offset += slot.packedTexts.count
            }
            count = offset
        }
        var offset = 0
        var slots: [PhotoSlot] = []
        slots.reserveCapacity(decoded.count)
        for slot in decoded {
            let photo: ListedPhoto
            if let decodedPhoto = slot.photo {
                photo = decodedPhoto
            } else {
                let count = slot.packedTexts.count
                photo = ListedPhoto(width: slot.width, height: slot.height, packedTexts: arena[offset..<offset + count], ends: slot.ends)
                offset += count
            }
            slots.append(PhotoSlot(number: slot.number, photo: photo, state: slot.state, resolvedAt: slot.resolvedAt))
        }
        return slots
    }

    private static func slot(_ reader: WireReader, mediaTypes: inout RepeatedText) throws(Unusual) -> DecodedSlot {
        var reader = reader
        var number: UInt32 = 0
        var photo: WireReader?
        var kind: UInt64 = 0
        var digestBytes: UnsafeRawBufferPointer?
        var byteCount: UInt64 = 0, resolvedAt: UInt64 = 0
        var mediaType = "", failure = ""
        var packedTexts: UnsafeRawBufferPointer?
        var packedEnds = ListedPhoto.PackedEnds()
        var width: UInt32 = 0, height: UInt32 = 0
        while let (field, type) = try reader.nextField() {
            switch field {
            case 1: number = try reader.uint32(type)
            case 2:
                guard photo == nil else { throw Unusual() }
                photo = try reader.message(type)
            case 3: kind = try reader.uint64(type)
            case 4:
                guard type == .lengthDelimited else { throw Unusual() }
                digestBytes = try reader.lengthDelimited()
            case 5: byteCount = try reader.uint64(type)
            case 6: mediaType = mediaTypes.string(try reader.utf8(type))
            case 7: failure = try reader.string(type)
            case 8: resolvedAt = try reader.uint64(type)
            case 9:
                guard type == .lengthDelimited, packedTexts == nil else { throw Unusual() }
                packedTexts = try reader.lengthDelimited()
            case 10:
                // Packed, as the writer writes it; the general path takes any other shape.
                guard type == .lengthDelimited, packedEnds.count == 0 else { throw Unusual() }
                var ends = try reader.message(type)
                while ends.remaining > 0 {
                    guard packedEnds.append(try ends.uint32(.varint)) else { throw Unusual() }
                }
            case 11: width = try reader.uint32(type)
            case 12: height = try reader.uint32(type)
            default: try reader.skip(type)
            }
        }
        let state: PhotoSlot.State
        switch kind {
        case 0: state = .placeholder
        case 1:
            guard let digestBytes, let digest = PhotoDigest(bytes: digestBytes) else { throw Unusual() }
            state = .downloaded(digest: digest, byteCount: byteCount, mediaType: mediaType)
        case 2: state = .failed(reason: failure)
        default: throw Unusual()
        }
        let resolved = resolvedAt == 0 ? nil : resolvedAt
        if packedTexts != nil || packedEnds.count > 0 || width != 0 || height != 0 {
            let texts = packedTexts ?? UnsafeRawBufferPointer(start: nil, count: 0)
            guard photo == nil, ListedPhoto.packedTextsAreValid(texts, ends: packedEnds) else { throw Unusual() }
            return DecodedSlot(
                number: number, state: state, resolvedAt: resolved, photo: nil, packedTexts: texts, ends: packedEnds,
                width: width, height: height)
        }
        let listed = try EventWireDecoder.listedPhoto(photo ?? WireReader.empty)
        return DecodedSlot(number: number, state: state, resolvedAt: resolved, photo: listed)
    }
}
