import EventLog
import Testing
@testable import VirtualTourist

@Suite struct CodecTests {
    @Test func everyEventTypeRoundTripsThroughTheEnvelope() throws {
        var story = StoryGenerator(seed: 42)
        story.generate(800)
        for recorded in story.events {
            let payload = EventCodec.encode(recorded.event, cause: recorded.cause)
            let logEvent = LogEvent(sequence: recorded.sequence, timestamp: recorded.timestamp, payload: ArraySlice(payload))
            #expect(try EventCodec.decode(logEvent) == recorded)
        }
    }

    /// Found by fuzzing (Fuzz/Regressions/FuzzImport/time-us-int64-min.jsonl): an imported
    /// line may hold any 64-bit time, and writing the earliest one as text overflowed.
    @Test func anImportedLineAtTheEarliestTimeRoundTrips() throws {
        let line = #"{"pin":"00000000000000a1","seq":1,"time":"x","time_us":-9223372036854775808,"type":"PinRemoved"}"#
        let recorded = try EventJSON.decode(line).recorded()
        #expect(recorded.timestamp.microsecondsSinceEpoch == .min)
        let written = try EventJSON(recorded).encodedLine()
        #expect(try EventJSON.decode(written).recorded() == recorded)
        #expect(written.contains(".224192Z"))
    }

    /// Credits survive the JSON form both ways; a line written before credits (no fields)
    /// reads as photos without one, and empty credit fields are left out of what is written.
    @Test func creditsRoundTripThroughJSONAndOldLinesStillRead() throws {
        let credited = ListedPhoto(
            remoteID: "7", url: "https://u.example/a.jpg", title: "A", width: 330, height: 247, creator: "Ann & Bo",
            licenceName: "CC BY-SA 4.0", licenceURL: "https://creativecommons.org/licenses/by-sa/4.0",
            pageURL: "https://commons.example/wiki/File:A.jpg", dateTaken: "2019-05-01")
        let plain = ListedPhoto(remoteID: "8", url: "https://u.example/b.jpg", title: "B", creator: "Only Ann")
        let recorded = RecordedEvent(
            sequence: 3, timestamp: LogTimestamp(microsecondsSinceEpoch: 1_000), cause: 2,
            event: .photosListed(PhotoListing(pin: PinID(1), collection: 1, page: 1, pages: 1, total: 2, photos: [credited, plain])))
        let line = try EventJSON(recorded).encodedLine()
        #expect(try EventJSON.decode(line).recorded() == recorded)
        #expect(line.contains(#""page_url":"https:\/\/commons.example"#) || line.contains(#""page_url":"https://commons.example"#))
        #expect(!line.contains(#""licence":"""#))
        let old = #"{"collection":1,"page":1,"pages":1,"photos":[{"height":0,"id":"9","title":"t","url":"https://u.example/c.jpg","width":0}],"pin":"0000000000000001","seq":3,"time":"x","time_us":0,"total":1,"type":"PhotosListed"}"#
        guard case .photosListed(let listing) = try EventJSON.decode(old).recorded().event else { Issue.record("not a listing"); return }
        #expect(listing.photos.map(\.hasCredit) == [false])
    }

    @Test func payloadsThatAreNotEventsAreNamedBySequence() {
        let t = LogTimestamp(microsecondsSinceEpoch: 0)
        let cases: [([UInt8], String)] = [
            ([0xFF, 0xFF, 0xFF], "not a Virtual Tourist event envelope"),
            ([], "no schema version"),
            ([0x08, 0x01], "holds no event this program knows"),
            ([0x08, 0x09, 0x5A, 0x00], "schema version 9"),
        ]
        for (bytes, message) in cases {
            do {
                _ = try EventCodec.decode(LogEvent(sequence: 77, timestamp: t, payload: ArraySlice(bytes)))
                Issue.record("\(bytes) decoded")
            } catch let error as DomainError {
                #expect(error.code == .undecodableEvent)
                #expect(error.message.contains("event 77"))
                #expect(error.message.contains(message), "\(error.message)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test(arguments: [7, 8, 9] as [UInt64])
    func aSnapshotRebuildsExactlyTheFoldedState(_ seed: UInt64) throws {
        var story = StoryGenerator(seed: seed)
        story.generate(1_500)
        let state = fold(story.events)
        let head = LogHead(sequence: state.sequence, hash: ChainHash(validating: Array(repeating: 7, count: 32))!)
        let bytes = try SnapshotFile.encode(state, head: head, compressor: ZstdCompressor(level: 3))
        let (header, decoded) = try SnapshotFile.decode(bytes, decompressor: ZstdDecompressor())
        #expect(decoded == state)
        #expect(header.sequence == state.sequence)
        #expect(header.batchHash == head.hash.bytes)
        #expect(header.codec == 1)
    }

    /// Stores wrote compressed snapshots (codec 1) until issue 19's open work; they write them
    /// raw (codec 0) now. Both load to the same state.
    @Test(arguments: [4, 5] as [UInt64])
    func compressedSnapshotsOfOlderStoresAndRawOnesLoadAlike(_ seed: UInt64) throws {
        var story = StoryGenerator(seed: seed)
        story.generate(1_500)
        let state = fold(story.events)
        let head = LogHead(sequence: state.sequence, hash: ChainHash(validating: Array(repeating: 3, count: 32))!)
        let compressed = try SnapshotFile.encode(state, head: head, compressor: ZstdCompressor(level: 3))
        let raw = try SnapshotFile.encode(state, head: head, compressor: nil)
        let (oldHeader, oldState) = try SnapshotFile.decode(compressed, decompressor: ZstdDecompressor())
        let (newHeader, newState) = try SnapshotFile.decode(raw, decompressor: ZstdDecompressor())
        #expect(oldHeader.codec == 1 && newHeader.codec == 0)
        #expect(newHeader.storedLength == newHeader.rawLength && oldHeader.rawLength == newHeader.rawLength)
        #expect(oldState == state && newState == state)
        #expect(compressed.count < raw.count)
    }

    @Test func damagedSnapshotBytesAreRefusedNeverMisread() throws {
        var story = StoryGenerator(seed: 3)
        story.generate(300)
        let state = fold(story.events)
        let bytes = try SnapshotFile.encode(
            state, head: LogHead(sequence: state.sequence, hash: ChainHash(validating: Array(repeating: 1, count: 32))!),
            compressor: ZstdCompressor(level: 3))
        for position in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 400)) {
            var damaged = bytes
            damaged[position] ^= 0x20
            #expect(throws: SnapshotProblem.self, "flip at \(position)") {
                try SnapshotFile.decode(damaged, decompressor: ZstdDecompressor())
            }
        }
        #expect(throws: SnapshotProblem.self) { try SnapshotFile.decode(Array(bytes.dropLast()), decompressor: ZstdDecompressor()) }
    }

    @Test func idsAndDigestsParseOnlyWhatTheyPrint() {
        let pin = PinID(0x3fa2_9c01_0000_0001)
        #expect(pin.description == "3fa29c0100000001")
        #expect(PinID(parsing: pin.description) == pin)
        for bad in ["", "3fa2", "3fa29c01000000011", "zzzzzzzzzzzzzzzz", "../../etc/passwd"] {
            #expect(PinID(parsing: bad) == nil, "\(bad)")
        }
        let d = digest(5)
        #expect(PhotoDigest(hex: d.description) == d)
        #expect(PhotoDigest(hex: d.description.uppercased()) == d)
        for bad in ["", String(repeating: "a", count: 63), String(repeating: "g", count: 64), "../" + String(repeating: "a", count: 61)] {
            #expect(PhotoDigest(hex: bad) == nil, "\(bad)")
        }
        #expect(PhotoDigest(bytes: [1, 2]) == nil)
    }
}
