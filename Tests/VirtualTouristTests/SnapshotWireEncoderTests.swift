import BlobStore
import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import SwiftProtobuf
import Testing
import TouristWorkload
@testable import VirtualTourist

/// ``SnapshotWireEncoder`` writes snapshots without swift-protobuf's message values. Its bytes
/// must be swift-protobuf's, field for field: the same payload as
/// `SnapshotCodec.message(for:).serializedBytes()` for folded states of every kind, for a state
/// large enough to be written on two cores, and for values at the edges of each field's rules
/// (zeros left out, a negative zero kept, ten-byte varints, texts in any script).
@Suite(.heavy) struct SnapshotWireEncoderTests {
    static func protobufBytes(_ state: TouristState) throws -> [UInt8] {
        try SnapshotCodec.message(for: state).serializedBytes()
    }

    @Test(arguments: [31, 32, 33] as [UInt64])
    func theEncoderWritesSwiftProtobufsBytesAlongAStory(_ seed: UInt64) throws {
        var story = StoryGenerator(seed: seed)
        story.generate(3_000)
        var state = TouristState()
        var compared = 0
        for (index, event) in story.events.enumerated() {
            state.apply(event)
            guard index % 250 == 0 || index == story.events.count - 1 else { continue }
            let same = SnapshotWireEncoder.encode(state) == (try Self.protobufBytes(state))
            #expect(same, "seed \(seed), after event \(state.sequence)")
            compared += 1
        }
        #expect(compared >= 12)
        #expect(state.pins.values.contains { !$0.album.slots.isEmpty }, "the story downloads photos")
    }

    @Test func aStateWrittenOnTwoCoresIsTheSameBytes() throws {
        var workload = Workload(seed: 2026, livePins: 120)
        workload.produce(atLeast: 40_000) { _ in }
        let state = workload.state
        let expected = try Self.protobufBytes(state)
        try #require(expected.count >= SnapshotWireEncoder.bytesWorthTwoCores, "big enough to be split")
        let written = SnapshotWireEncoder.encode(state)
        #expect(written.count == expected.count)
        let same = written == expected
        #expect(same)
    }

    @Test func valuesAtTheEdgesOfTheRules() throws {
        var story = StoryGenerator(seed: 34)
        story.generate(600)
        var state = fold(story.events)
        let ids = state.pinsInDropOrder.map(\.id)
        try #require(ids.count >= 2)
        state.region = MapRegion(center: Coordinate(latitude: -0.0, longitude: 0), latitudeSpan: -0.0, longitudeSpan: 1e-300)
        state.ignoredEvents = UInt64.max
        var odd = try #require(state.pins[ids[0]])
        odd.coordinate = Coordinate(latitude: -0.0, longitude: -180)
        odd.album.total = UInt64.max
        odd.album.pages = UInt32.max
        odd.album.phase = .failed(reason: "Zürich: 検索に失敗 ✗")
        odd.album.requestedAt = 1 << 63
        odd.album.listedAt = nil
        odd.album.listedPhotoCount = Int(UInt32.max)
        odd.album.request = AlbumRequest(pin: odd.id, collection: odd.album.collection, page: 0, perPage: 1 << 31, place: Coordinate(latitude: -0.0, longitude: 0))
        let digest = BlobDigest(bytes: (0..<32).map { UInt8($0 * 7) })!
        odd.album.slots = [
            PhotoSlot(number: 0, photo: ListedPhoto(remoteID: "", url: "", title: ""), state: .placeholder, resolvedAt: nil),
            PhotoSlot(
                number: 1, photo: ListedPhoto(remoteID: "é", url: "https://x/é", title: "日本", width: UInt32.max, height: 1),
                state: .failed(reason: ""), resolvedAt: UInt64.max),
            PhotoSlot(
                number: 2, photo: ListedPhoto(remoteID: "2", url: String(repeating: "u", count: 300), title: "t", creator: "Ann"),
                state: .failed(reason: "HTTP 404 — nicht gefunden"), resolvedAt: 7),
            PhotoSlot(
                number: 5_000_000, photo: ListedPhoto(remoteID: "4", url: "https://z", title: "", dateTaken: "2019-05-01"),
                state: .downloaded(digest: digest, byteCount: UInt64.max, mediaType: "image/jpeg"), resolvedAt: 1 << 35),
            PhotoSlot(
                number: UInt32.max, photo: ListedPhoto(remoteID: "3", url: "https://y", title: ""),
                state: .downloaded(digest: digest, byteCount: 0, mediaType: ""), resolvedAt: 0),
        ]
        state.pins[ids[0]] = odd
        var empty = try #require(state.pins[ids[1]])
        empty.album = Album()
        state.pins[ids[1]] = empty
        state.pins[PinID(0)] = Pin(id: PinID(0), coordinate: Coordinate(latitude: 0, longitude: 0), droppedAt: 0, album: Album())
        let same = SnapshotWireEncoder.encode(state) == (try Self.protobufBytes(state))
        #expect(same)
        state.region = nil
        let withoutRegion = SnapshotWireEncoder.encode(state) == (try Self.protobufBytes(state))
        #expect(withoutRegion)
        // Pins forgotten (version 4): swift-protobuf's packed bytes, and read back by both paths.
        state.forgottenPins = [PinID(0), PinID(UInt64.max), PinID(0x3fa2_9c01_0000_0001)]
        let bytes = SnapshotWireEncoder.encode(state)
        #expect(bytes == (try Self.protobufBytes(state)))
        #expect(SnapshotWireDecoder.state(bytes)?.forgottenPins == state.forgottenPins)
        #expect(SnapshotWireDecoder.state(bytes[...], pinsOnly: true)?.forgottenPins == state.forgottenPins)
        let general = try SnapshotCodec.state(from: VirtualTourist_V1_StateSnapshot(serializedBytes: bytes))
        #expect(general.forgottenPins == state.forgottenPins)
        // What each device said it had seen (version 5): in order, and read back by both paths.
        let phone = DeviceID.random(), laptop = DeviceID.random(), tablet = DeviceID.random()
        state.devicesSeen = [laptop: [phone: 1_204, tablet: 1], phone: [laptop: UInt64.max]]
        let seen = SnapshotWireEncoder.encode(state)
        #expect(seen == (try Self.protobufBytes(state)))
        #expect(SnapshotWireDecoder.state(seen)?.devicesSeen == state.devicesSeen)
        #expect(SnapshotWireDecoder.state(seen[...], pinsOnly: true)?.devicesSeen == state.devicesSeen)
        let read = try SnapshotCodec.state(from: VirtualTourist_V1_StateSnapshot(serializedBytes: seen))
        #expect(read.devicesSeen == state.devicesSeen)
    }

    @Test func theFileHeaderNamesThePayloadWrittenAfterIt() throws {
        var story = StoryGenerator(seed: 35)
        story.generate(1_500)
        let state = fold(story.events)
        let head = LogHead(sequence: state.sequence, hash: ChainHash(validating: (0..<32).map { UInt8($0) })!)
        let file = try SnapshotFile.encode(state, head: head, compressor: nil)
        let header = try SnapshotFile.decodeHeader(file)
        #expect(header.codec == 0 && header.sequence == state.sequence && header.batchHash == head.hash.bytes)
        #expect(Array(file[SnapshotFile.headerSize...]) == (try Self.protobufBytes(state)))
        #expect(try SnapshotFile.decode(file, decompressor: ZstdDecompressor()).1 == state)
    }
}
