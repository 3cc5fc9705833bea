import EventLog
import Foundation
import SeededRandom
import StorageTestSupport
import SwiftProtobuf
import Testing
import TouristWorkload
@testable import VirtualTourist

/// The direct decoders (events and snapshots) must give exactly what the general path through
/// swift-protobuf gives, or step aside: on every written shape, and on damaged bytes.
@Suite(.heavy) struct WireDecoderTests {
    static let time = LogTimestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)

    static func logEvent(_ payload: [UInt8], _ sequence: UInt64 = 9) -> LogEvent {
        LogEvent(sequence: sequence, timestamp: time, payload: payload[...])
    }

    /// Both paths' answers: the same event, or both an error.
    static func agree(_ event: LogEvent) -> Bool {
        let fast = Result { try EventCodec.decode(event) }
        let general = Result { try EventCodec.decodeGenerally(event) }
        switch (fast, general) {
        case (.success(let a), .success(let b)): return a == b
        case (.failure, .failure): return true
        default: return false
        }
    }

    /// Events the story generator does not make: edge values and text beyond ASCII.
    static let unusualButValid: [(DomainEvent, UInt64?)] = [
        (.pinDropped(PinID(.max), Coordinate(latitude: -90, longitude: 180)), nil),
        (.regionChanged(MapRegion(center: Coordinate(latitude: 0, longitude: -0.0), latitudeSpan: 180, longitudeSpan: 360)), 1),
        (.albumRequested(AlbumRequest(pin: PinID(1), collection: .max, page: .max, perPage: .max,
                                      place: Coordinate(latitude: 1e-300, longitude: -1e-300))), .max),
        (.photosListed(PhotoListing(pin: PinID(2), collection: 3, page: 4, pages: 5, total: .max, photos: [
            ListedPhoto(remoteID: "", url: "https://example.com/ü/😀.jpg", title: "Café «au» lait — 東京", width: .max, height: 0),
            ListedPhoto(remoteID: "53", url: "", title: String(repeating: "long title ", count: 40)),
            ListedPhoto(
                remoteID: "54", url: "https://upload.example/330px-a.jpg", title: "credited", width: 330, height: 220,
                creator: "Ann & Bø «photos»", licenceName: "CC BY-SA 4.0", licenceURL: "https://creativecommons.org/licenses/by-sa/4.0",
                pageURL: "https://commons.example/wiki/File:A.jpg", dateTaken: "2019-05-01 12:00:00"),
            ListedPhoto(remoteID: "55", url: "https://u.example/b.jpg", title: "", creator: "only a creator"),
        ])), 12),
        (.photoDownloaded(DownloadedPhoto(pin: PinID(7), collection: 0, slot: .max, digest: PhotoDigest.of([1, 2, 3]),
                                          byteCount: .max, mediaType: "image/webp")), nil),
        (.photoDownloadFailed(pin: PinID(7), collection: 2, slot: 0, reason: "HTTP 503 — «busy»"), nil),
        (.albumRequestFailed(pin: PinID(8), collection: 1, reason: ""), 3),
        (.photoRemoved(pin: PinID(8), collection: 1, slot: 4_000_000_000), nil),
        (.collectionReplaced(pin: PinID(8), oldCollection: 1, newCollection: 2), nil),
        (.pinDragged(PinID(9), Coordinate(latitude: 12.5, longitude: -7.25)), nil),
        (.pinRemoved(PinID(9)), nil),
    ]

    @Test func theFastPathDecodesEveryWrittenEventAsTheGeneralPathDoes() throws {
        var story = StoryGenerator(seed: 11)
        story.generate(2_000)
        var checked = 0
        for (event, cause) in story.events.map({ ($0.event, $0.cause) }) + Self.unusualButValid {
            let payload = EventCodec.encode(event, cause: cause)
            let fast = try #require(EventWireDecoder.decode(payload[...]), "the fast path stepped aside for \(event)")
            let general = try EventCodec.decodeGenerally(Self.logEvent(payload))
            #expect(fast.event == general.event && fast.cause == general.cause)
            #expect(fast.event == event && fast.cause == cause)
            checked += 1
        }
        #expect(Set(story.events.map(\.event.typeName)).count == DomainEvent.schemaTypeNames.count)
        #expect(checked == 2_000 + Self.unusualButValid.count)
    }

    /// A listing's photos come out of the fast path with their texts in one array they all
    /// slice (one allocation a listing): each still reads, compares and hashes as a photo of its
    /// own, and changing one leaves the others as they were.
    @Test func aListingsPhotosShareOneTextBufferAndStayApart() throws {
        guard case .photosListed(let written) = Self.unusualButValid[3].0 else {
            Issue.record("the fixture moved")
            return
        }
        let payload = EventCodec.encode(.photosListed(written), cause: nil)
        guard case .photosListed(let decoded)? = EventWireDecoder.decode(payload[...])?.event else {
            Issue.record("the fast path stepped aside")
            return
        }
        #expect(decoded.photos == written.photos)
        #expect(decoded.photos.map(\.hashValue) == written.photos.map(\.hashValue))
        let starts = decoded.photos.map { photo in photo.utf8.withUnsafeBufferPointer { $0.baseAddress } }
        for index in 1..<decoded.photos.count {
            let previous = decoded.photos[index - 1]
            // Back to back in one buffer: each photo starts where the one before it ends.
            #expect(starts[index] == starts[index - 1].map { $0 + previous.utf8.count }, "photo \(index)")
        }
        var photos = decoded.photos
        photos[1].title = "changed"
        #expect(photos[1].title == "changed" && photos[1].remoteID == "53")
        #expect(Array(photos[0...0] + photos[2...]) == Array(written.photos[0...0] + written.photos[2...]))
        #expect(decoded.photos == written.photos, "the decoded listing itself is untouched")
    }

    @Test func damagedPayloadsGetTheSameAnswerFromBothPaths() {
        var story = StoryGenerator(seed: 5)
        story.generate(400)
        var random = SplitMix(seed: 99)
        var fastAccepted = 0, steppedAside = 0
        for recorded in story.events {
            let payload = EventCodec.encode(recorded.event, cause: recorded.cause)
            for _ in 0..<12 {
                var damaged = payload
                let position = Int.random(in: 0..<damaged.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: damaged[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                case 1: damaged.removeSubrange(position...)
                case 2: damaged.insert(UInt8.random(in: 0...255, using: &random), at: position)
                default: damaged[position] = UInt8.random(in: 0...255, using: &random)
                }
                #expect(Self.agree(Self.logEvent(damaged)), "payload \(damaged) of event \(recorded.sequence)")
                if EventWireDecoder.decode(damaged[...]) == nil { steppedAside += 1 } else { fastAccepted += 1 }
            }
        }
        // Both branches were exercised: some damage still decodes (a changed number), most does not.
        #expect(fastAccepted > 100 && steppedAside > 100, "\(fastAccepted) accepted, \(steppedAside) stepped aside")
    }

    @Test func unknownFieldsAreSkippedAndOddShapesGoTheGeneralWay() throws {
        let removed = EventCodec.encode(.pinRemoved(PinID(5)), cause: nil)
        // A newer writer's field 99 (varint 7) at the end of the envelope: skipped by both paths.
        let withUnknown = removed + [0x98, 0x06, 0x07]
        #expect(EventWireDecoder.decode(withUnknown[...])?.event == .pinRemoved(PinID(5)))
        #expect(Self.agree(Self.logEvent(withUnknown)))

        // The same event field twice (protobuf merges them): left to the general path.
        let twice = removed + Array(removed.dropFirst(2))
        #expect(EventWireDecoder.decode(twice[...]) == nil)
        #expect(Self.agree(Self.logEvent(twice)))

        // Invalid UTF-8 in a reason: the fast path steps aside, the general path refuses it.
        var failed = EventCodec.encode(.photoDownloadFailed(pin: PinID(1), collection: 1, slot: 0, reason: "abc"), cause: nil)
        failed[failed.count - 1] = 0xFF
        #expect(EventWireDecoder.decode(failed[...]) == nil)
        #expect(throws: DomainError.self) { try EventCodec.decode(Self.logEvent(failed)) }

        // A digest of 31 bytes: named by the general path.
        var envelope = VirtualTourist_V1_Envelope()
        envelope.schemaVersion = 1
        envelope.event = .photoDownloaded(.with { $0.pin = 1; $0.sha256 = Data(repeating: 1, count: 31) })
        let short: [UInt8] = try envelope.serializedBytes()
        #expect(EventWireDecoder.decode(short[...]) == nil)
        let error = try #require(throws: DomainError.self) { try EventCodec.decode(Self.logEvent(short)) }
        #expect(error.message.contains("31 bytes"))

        // A uint32 field holding more than 32 bits: left to the general path.
        let wide: [UInt8] = [0x08, 0x01, 0x9A, 0x01, 0x0E, 0x09] + Array(repeating: 0, count: 8) + [0x10, 0x80, 0x80, 0x80, 0x80, 0x20]
        #expect(EventWireDecoder.decode(wide[...]) == nil)
        #expect(Self.agree(Self.logEvent(wide)))
    }

    @Test(arguments: [21, 22, 23] as [UInt64])
    func theFastSnapshotPathRebuildsWhatTheGeneralPathDoes(_ seed: UInt64) throws {
        var story = StoryGenerator(seed: seed)
        story.generate(3_000)
        let state = fold(story.events)
        let raw: [UInt8] = try SnapshotCodec.message(for: state).serializedBytes()
        let fast = try #require(SnapshotWireDecoder.state(raw))
        let general = try SnapshotCodec.state(from: VirtualTourist_V1_StateSnapshot(serializedBytes: raw))
        #expect(fast == state)
        #expect(general == state)
        #expect(fast.photoReferences == state.photoReferences && !state.photoReferences.isEmpty)
    }

    /// A state of over a megabyte is decoded in pieces on every core (the benchmark workload's
    /// albums): the pieces join to the folded state, pins and references alike, and a piece
    /// that meets damage sends the whole payload the general way, which gives its answer.
    @Test func aLargeSnapshotDecodedInPiecesIsTheFoldedState() throws {
        var workload = Workload(seed: 2026, livePins: 120)
        workload.produce(atLeast: 40_000) { _ in }
        let state = workload.state
        let raw: [UInt8] = try SnapshotCodec.message(for: state).serializedBytes()
        try #require(raw.count >= SnapshotWireDecoder.bytesWorthPieces, "big enough to be cut")
        let fast = try #require(SnapshotWireDecoder.state(raw))
        #expect(fast == state)
        #expect(fast.pins.count == state.pins.count && fast.pins.count > 100)
        #expect(fast.photoReferences == state.photoReferences && fast.photoReferences.count > 1_000)

        // Damage late in the payload falls in the last piece; damage early, in the first.
        var random = SplitMix(seed: 8)
        var refused = 0
        for position in [raw.count / 50, raw.count - raw.count / 50] {
            for _ in 0..<6 {
                var damaged = raw
                damaged[position + Int.random(in: 0..<400, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                let general = try? SnapshotCodec.state(from: VirtualTourist_V1_StateSnapshot(serializedBytes: damaged))
                if let decoded = SnapshotWireDecoder.state(damaged) {
                    #expect(decoded == general, "damage near \(position)")
                } else {
                    refused += 1
                }
            }
        }
        #expect(refused > 0)
    }

    /// The cut gives consecutive ranges covering every message, at most as many as asked,
    /// of about equal bytes.
    @Test func piecesCoverEveryPinInOrder() {
        let cases: [([Int], Int)] = [
            ([10, 10, 10, 10], 2), ([100, 1, 1], 2), ([1, 1, 100], 2), ([5], 16), ([0, 0, 0, 7, 0, 0], 3),
            (Array(repeating: 3, count: 1_000), 16), ((0..<500).map { $0 % 17 * 1_000 }, 16),
        ]
        for (sizes, count) in cases {
            let ranges = SnapshotWireDecoder.cut(sizes, into: count)
            #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == sizes.count, "\(sizes.prefix(6))")
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
            #expect(ranges.allSatisfy { !$0.isEmpty } && ranges.count <= count)
        }
        let even = SnapshotWireDecoder.cut(Array(repeating: 3, count: 1_000), into: 16)
        #expect(even.count == 16 && even.allSatisfy { (62...63).contains($0.count) })
    }

    /// A pins-only load keeps each pin's id, place and drop and leaves its album empty, by
    /// either path; whatever pins it accepts from a damaged message are the general path's.
    @Test func aPinsOnlyLoadIsTheStateWithItsAlbumsEmptied() throws {
        var story = StoryGenerator(seed: 24)
        story.generate(3_000)
        let state = fold(story.events)
        var emptied = state
        emptied.emptyAlbums()
        #expect(emptied.pins.count == state.pins.count && emptied.photoReferences.isEmpty)
        #expect(emptied.pins.values.allSatisfy { $0.album == Album() })
        let raw: [UInt8] = try SnapshotCodec.message(for: state).serializedBytes()
        #expect(SnapshotWireDecoder.state(raw[...], pinsOnly: true) == emptied)
        let head = LogHead(sequence: state.sequence, hash: ChainHash(validating: Array(repeating: 9, count: 32))!)
        let file = try SnapshotFile.encode(state, head: head, compressor: nil)
        #expect(try SnapshotFile.decode(file, decompressor: ZstdDecompressor(), pinsOnly: true).1 == emptied)

        var random = SplitMix(seed: 5)
        var compared = 0
        for _ in 0..<800 {
            var damaged = raw
            damaged[Int.random(in: 0..<damaged.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            guard let pins = SnapshotWireDecoder.state(damaged[...], pinsOnly: true),
                let general = try? SnapshotCodec.state(from: VirtualTourist_V1_StateSnapshot(serializedBytes: damaged))
            else { continue }
            compared += 1
            #expect(pins.pins.mapValues(\.droppedAt) == general.pins.mapValues(\.droppedAt))
            #expect(pins.pins.mapValues(\.coordinate) == general.pins.mapValues(\.coordinate))
        }
        #expect(compared > 50)
    }

    @Test func damagedSnapshotMessagesNeverDecodeDifferently() throws {
        var story = StoryGenerator(seed: 31)
        story.generate(600)
        let raw: [UInt8] = try SnapshotCodec.message(for: fold(story.events)).serializedBytes()
        var random = SplitMix(seed: 4)
        var fastAccepted = 0
        for _ in 0..<1_500 {
            var damaged = raw
            let position = Int.random(in: 0..<damaged.count, using: &random)
            if Bool.random(using: &random) {
                damaged[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            } else {
                damaged.removeSubrange(position...)
            }
            let general = Result { try SnapshotCodec.state(from: VirtualTourist_V1_StateSnapshot(serializedBytes: damaged)) }
            guard let fast = SnapshotWireDecoder.state(damaged) else { continue }
            fastAccepted += 1
            // Whatever the fast path accepts, the general path accepts too, as the same state.
            #expect((try? general.get()) == fast, "damage at \(position)")
        }
        #expect(fastAccepted > 50)
    }

    /// Version-2 snapshots hold each slot's photo packed (docs/FORMAT.md, "Snapshot file"):
    /// texts with characters of every UTF-8 length come back as they were, a photo loaded by the
    /// fast path shares one array with the rest of its album, and packing that breaks the rules is
    /// refused by both paths, the general one naming it.
    @Test func packedPhotosKeepTheirTextsAndBrokenPackingIsRefused() throws {
        var state = TouristState()
        let pin = PinID(77)
        let texts = ["id-1", "https://example.org/a.jpg", "Café 東京 🌋", "Zoë", "CC BY 4.0", "https://l.example/by", "", "2024-05-01"]
        let photo = ListedPhoto(
            remoteID: texts[0], url: texts[1], title: texts[2], width: 640, height: 480, creator: texts[3],
            licenceName: texts[4], licenceURL: texts[5], pageURL: texts[6], dateTaken: texts[7])
        let events: [DomainEvent] = [
            .pinDropped(pin, Coordinate(latitude: 1, longitude: 2)),
            .albumRequested(AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 2, place: Coordinate(latitude: 1, longitude: 2))),
            .photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 2, photos: [photo, listedPhotos(1)[0]])),
        ]
        for event in events {
            state.apply(RecordedEvent(sequence: state.sequence + 1, timestamp: LogTimestamp(microsecondsSinceEpoch: 0), cause: nil, event: event))
        }
        let message = SnapshotCodec.message(for: state)
        #expect(!message.pins[0].album.slots[0].hasPhoto, "written packed")
        let raw: [UInt8] = try message.serializedBytes()
        let fast = try #require(SnapshotWireDecoder.state(raw))
        #expect(fast == state)
        let loaded = try #require(fast.pins[pin]?.album.slots.first?.photo)
        #expect([loaded.remoteID, loaded.url, loaded.title, loaded.creator, loaded.licenceName, loaded.licenceURL, loaded.pageURL, loaded.dateTaken] == texts)
        #expect(loaded.width == 640 && loaded.height == 480)
        let second = try #require(fast.pins[pin]?.album.slots.last?.photo)
        #expect(second.utf8.startIndex == loaded.utf8.endIndex, "the album's photos share one array, back to back")

        let title = texts[0].utf8.count + texts[1].utf8.count
        let breakages: [(String, (inout VirtualTourist_V1_SlotState) -> Void)] = [
            ("seven ends", { $0.photoTextEnds.removeLast() }),
            ("nine ends", { $0.photoTextEnds.append($0.photoTextEnds.last!) }),
            ("an end before the one before it", { $0.photoTextEnds[1] = 1; $0.photoTextEnds[2] = 0 }),
            ("the last end short of the bytes", { $0.photoTextEnds[7] -= 1 }),
            ("an end inside a character", { $0.photoTextEnds[2] = UInt32(title + 4) }),  // "Café": inside é
            ("bytes that are not UTF-8", { $0.photoTexts[$0.photoTexts.startIndex + title] = 0xFF }),
            ("both forms", { $0.photo = EventCodec.message(for: photo) }),
        ]
        for (what, breakage) in breakages {
            var broken = message
            breakage(&broken.pins[0].album.slots[0])
            let bytes: [UInt8] = try broken.serializedBytes()
            #expect(SnapshotWireDecoder.state(bytes) == nil, "the fast path took \(what)")
            #expect(throws: SnapshotProblem.self, "the general path took \(what)") {
                try SnapshotCodec.state(from: VirtualTourist_V1_StateSnapshot(serializedBytes: bytes))
            }
        }
    }
}
