import CZstd
@testable import EventLog
import FileIO
import Foundation
import LegacyLogWriter
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Forgetting a place (docs/EVENTS.md, "Forgetting a place"): the place is gone from every byte
/// of the store, in every form the store writes it, while the chain verifies and every reader
/// shows the erased events as forgotten.
@Suite struct ForgetTests {
    let secretPlace = Coordinate(latitude: 12.3456789, longitude: -65.4321987)
    let secretMove = Coordinate(latitude: 12.3498765, longitude: -65.4398761)
    let elsewhere = Coordinate(latitude: 48.8584, longitude: 2.2945)
    static let secretURL = "https://forget-me.example/7f3a-secret/"
    static let secretTitle = "Secret garden 7f3a"

    static func secretPhoto(_ number: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0] + Array("SECRET-PHOTO-BYTES-7f3a-\(number)-".utf8) + [UInt8](repeating: UInt8(number), count: 64)
    }

    /// Drops a pin and fills its album with photos whose URLs, titles and bytes are `make`'s.
    func album(
        _ store: TouristStore, at place: Coordinate, count: Int, url: String, title: String, bytes: (Int) -> [UInt8]
    ) async throws -> PinID {
        let pin = try await store.dropPin(at: place)
        let requested = try await store.requestAlbum(for: pin, perPage: 30, cause: nil)
        let photos = (0..<count).map {
            ListedPhoto(remoteID: "r\($0)", url: "\(url)\($0).jpg", title: "\(title) \($0)", width: 640, height: 480)
        }
        let listed = try await store.recordListing(
            PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: UInt64(count), photos: photos), cause: requested.sequence)
        for slot in 0..<count {
            let lease = try store.storePhoto(bytes(slot))
            try await store.recordDownload(lease, pin: pin, collection: 1, slot: UInt32(slot), cause: listed.sequence)
        }
        return pin
    }

    /// Every needle in its plain and protobuf-encoded forms (strings are the same bytes in
    /// both; a double is its 8 little-endian IEEE bytes).
    func needles() -> [(String, [UInt8])] {
        var needles: [(String, [UInt8])] = [
            ("url", Array(Self.secretURL.utf8)), ("title", Array(Self.secretTitle.utf8)),
        ]
        for place in [secretPlace, secretMove] {
            for value in [place.latitude, place.longitude] {
                needles.append(("\(value) as text", Array("\(value)".utf8)))
                needles.append(("\(value) as a double", withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init)))
            }
        }
        for number in 0..<3 { needles.append(("photo \(number)", Self.secretPhoto(number))) }
        return needles
    }

    /// Each file's bytes, and the content of every zstd frame found anywhere in them.
    static func searchableForms(of bytes: [UInt8]) -> [[UInt8]] {
        var forms = [bytes]
        let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + 4 <= raw.count {
                defer { offset += 1 }
                guard raw[offset] == magic[0], raw[offset + 1] == magic[1], raw[offset + 2] == magic[2], raw[offset + 3] == magic[3]
                else { continue }
                let start = raw.baseAddress! + offset, remaining = raw.count - offset
                let size = ZSTD_findFrameCompressedSize(start, remaining)
                let content = ZSTD_getFrameContentSize(start, remaining)
                guard ZSTD_isError(size) == 0, content < 1 << 30 else { continue }
                var output = [UInt8](repeating: 0, count: Int(content))
                let written = output.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, $0.count, start, size) }
                if ZSTD_isError(written) == 0 { forms.append(Array(output.prefix(written))) }
            }
        }
        return forms
    }

    static func files(under folder: String) throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)!
        return enumerator.compactMap { $0 as? String }.map { folder + "/" + $0 }.filter {
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &directory) && !directory.boolValue
        }
    }

    @Test func aForgottenPlaceIsGoneFromEveryByteWhileTheChainVerifies() async throws {
        let folder = TemporaryFolder("forget")
        var options = storeOptions(snapshotInterval: 4)
        options.log.compactsInBackground = false
        let store = try await TouristStore.open(at: folder.path, options: options)
        try await store.changeRegion(to: MapRegion(center: elsewhere, latitudeSpan: 30, longitudeSpan: 40))
        let kept = try await album(
            store, at: elsewhere, count: 2, url: "https://keep.example/", title: "Eiffel", bytes: { fakePhoto(UInt64(900 + $0)) })
        let secret = try await album(
            store, at: secretPlace, count: 3, url: Self.secretURL, title: Self.secretTitle, bytes: Self.secretPhoto)
        try await store.changeRegion(to: MapRegion(center: secretPlace, latitudeSpan: 0.05, longitudeSpan: 0.05))
        // At least two snapshots hold the place, whatever the background snapshots had time for.
        _ = try await store.writeSnapshot()
        try store.compactLog()  // some of the place in sealed blocks, some in the hot tail
        try await store.removePhoto(1, from: secret)
        _ = try await store.dragPin(secret, to: secretMove)
        try await store.changeRegion(to: MapRegion(center: elsewhere, latitudeSpan: 30, longitudeSpan: 40))
        _ = try await store.writeSnapshot()
        let last = store.lastSequence
        let reader = try LogReader(directory: folder.path + "/log", payloadCodec: EventCodec.blockCodec)
        let headsBefore = try (1...last).map { try reader.head(at: $0) }
        let stateBefore = try store.state(at: last)

        let report = try await store.forget(secret)
        #expect(report.sequence == last + 1)
        #expect(report.photosDeleted == 3)
        #expect(report.snapshotsRewritten >= 2)
        #expect(store.state.pins[secret] == nil)
        #expect(store.state.pins[kept] == stateBefore.pins[kept])
        #expect(store.state.region == stateBefore.region)
        #expect(try store.photoBytes(PhotoDigest.of(fakePhoto(900))) == fakePhoto(900))

        // The chain: unchanged at every event before the forget, and it verifies.
        let after = try LogReader(directory: folder.path + "/log", payloadCodec: EventCodec.blockCodec)
        for sequence in 1...last { #expect(try after.head(at: sequence) == headsBefore[Int(sequence) - 1], "head at \(sequence)") }
        let verification = try LogVerifier.verify(directory: folder.path + "/log", payloadCodec: EventCodec.blockCodec)
        #expect(verification.problems.isEmpty)
        #expect(UInt64(verification.erasedEvents) == report.erasedEvents)

        // Readers: forgotten events keep their types; no state ever shows the place.
        let events = try store.events()
        let forgotten = events.compactMap { event -> String? in
            if case .forgotten(let f) = event.event { return f.typeName }
            return nil
        }
        #expect(UInt64(forgotten.count) == report.erasedEvents)
        #expect(forgotten.contains("PinDropped") && forgotten.contains("PhotosListed") && forgotten.contains("RegionChanged"))
        #expect(events.last?.event == .placeForgotten(pin: secret, erasedEvents: report.erasedEvents))
        for sequence in 0...store.lastSequence {
            let state = try store.state(at: sequence)
            #expect(state.pins[secret] == nil)
            #expect(state.region?.center != secretPlace)
        }
        _ = try store.difference(from: 1, to: store.lastSequence)
        #expect(try store.history(of: secret).map(\.event) == [.placeForgotten(pin: secret, erasedEvents: report.erasedEvents)])

        // An export made afterwards shows forgotten events and none of the place.
        var export = ""
        _ = try store.reader().export { export += $0 + "\n" }
        try await store.close()

        var haystacks: [(String, [UInt8])] = [("the export", Array(export.utf8))]
        for file in try Self.files(under: folder.path) {
            for form in Self.searchableForms(of: try Array(Data(contentsOf: URL(fileURLWithPath: file)))) {
                haystacks.append((file, form))
            }
        }
        let base64 = (0..<3).map { ("photo \($0) in base64", Array(Data(Self.secretPhoto($0)).base64EncodedString().utf8)) }
        for (name, needle) in needles() + base64 {
            for (place, haystack) in haystacks where haystack.contains(subsequence: needle) {
                Issue.record("\(name) is still in \(place)")
            }
        }
        #expect(export.contains("\"type\":\"Forgotten\""))

        // Reopened, the store is as the forget left it.
        let reopened = try await TouristStore.open(at: folder.path, options: options)
        #expect(reopened.state.pins.keys.sorted() == [kept])
        try await reopened.close()
    }

    @Test func anInterruptedForgetIsFinishedWhenTheStoreOpens() async throws {
        let folder = TemporaryFolder("forget-resume")
        let options = storeOptions()
        let store = try await TouristStore.open(at: folder.path, options: options)
        let secret = try await album(
            store, at: secretPlace, count: 2, url: Self.secretURL, title: Self.secretTitle, bytes: Self.secretPhoto)
        let last = store.lastSequence
        try await store.close()
        // A crash right after the forget recorded its intent.
        try Data("forget \(secret)\n".utf8).write(to: URL(fileURLWithPath: folder.path + "/forget.pending"))

        let reopened = try await TouristStore.open(at: folder.path, options: options)
        #expect(reopened.state.pins[secret] == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/forget.pending"))
        let events = try reopened.events()
        #expect(events.count == Int(last) + 1)
        #expect(events.dropLast().allSatisfy { if case .forgotten = $0.event { true } else { false } })
        #expect(try !reopened.isPhotoStored(PhotoDigest.of(Self.secretPhoto(0))))
        // Running it again finds the place forgotten and changes no event.
        let again = try await reopened.forget(secret)
        #expect(again.sequence == last + 1 && reopened.lastSequence == last + 1)
        try await reopened.close()
    }

    /// After `vt upgrade`, `log.format1/` holds every payload in format 1: a forget removes it,
    /// and none of the forgotten pin's event payloads is anywhere in the store afterwards (the
    /// fixture's places are shared by other pins, so the payloads are the needles).
    @Test func anUpgradedStoreLosesItsFormat1CopyWhenAPlaceIsForgotten() async throws {
        let folder = TemporaryFolder("forget-upgraded")
        try FileManager.default.copyItem(atPath: StoreFixtureTests.fixture, toPath: folder.path)
        _ = try await TouristStore.upgrade(at: folder.path, options: storeOptions())
        #expect(FileManager.default.fileExists(atPath: folder.sub("log.format1")))
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        let events = try store.events()
        guard case .pinDropped(let pin, _) = events[1].event else { throw DomainError(.invalidArgument, "the fixture changed") }
        var payloads: [[UInt8]] = []
        let cursor = try LogReader(directory: folder.sub("log"), payloadCodec: EventCodec.blockCodec).events()
        while let event = try cursor.next() {
            if events[Int(event.sequence) - 1].event.pin == pin { payloads.append(Array(event.payload)) }
        }
        #expect(payloads.count > 10)
        let report = try await store.forget(pin)
        #expect(report.formerLogRemoved && report.erasedEvents == UInt64(payloads.count))
        #expect(!FileManager.default.fileExists(atPath: folder.sub("log.format1")))
        try await store.close()
        for file in try Self.files(under: folder.path) {
            for form in Self.searchableForms(of: try Array(Data(contentsOf: URL(fileURLWithPath: file)))) {
                for payload in payloads where form.contains(subsequence: payload) {
                    Issue.record("a payload of the forgotten pin is still in \(file)")
                }
            }
        }
    }

    @Test func badRequestsAreRefusedAndChangeNothing() async throws {
        let folder = TemporaryFolder("forget-refusals")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        _ = try await store.dropPin(at: elsewhere)
        let before = store.lastSequence
        await expectDomainError(.unknownPin) { try await store.forget(PinID(0xDEAD_BEEF)) }
        #expect(store.lastSequence == before)
        try await store.close()

        let old = TemporaryFolder("forget-format1")
        var options = storeOptions()
        options.log.writesFormatOne = true
        let format1 = try await TouristStore.open(at: old.path, options: options)
        let pin = try await format1.dropPin(at: elsewhere)
        let error = await expectDomainError(.invalidArgument) { try await format1.forget(pin) }
        #expect(error?.message.contains("vt upgrade") == true)
        #expect(format1.lastSequence == 1)
        try await format1.close()
    }
}

@Suite struct ForgetPlanTests {
    @Test func aPlanReadsBackAsWrittenAndAnythingElseIsRefused() throws {
        var plan = ForgetPlan(pin: PinID(0x1234))
        plan.targets = [3: [11], 9: [], 12: [0x0b, 0xff]]
        plan.photos = [PhotoDigest.of([1, 2, 3])]
        #expect(ForgetPlan(plan.encoded()) == plan)
        for bad in ["", "forget nothing\n", "erase 3 0b\n", "forget 0000000000001234\nerase 0 0b\n",
                    "forget 0000000000001234\nerase 3 0g\n", "forget 0000000000001234\nphoto 12\n",
                    "forget 0000000000001234\nforget 0000000000001234\n", "forget 0000000000001234\nlat 12.3\n"] {
            #expect(ForgetPlan(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func aDamagedPlanStopsTheOpenWithItsFileNamed() async throws {
        let folder = TemporaryFolder("forget-plan")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        _ = try await store.dropPin(at: Coordinate(latitude: 1, longitude: 1))
        try await store.close()
        try Data("not a plan\n".utf8).write(to: URL(fileURLWithPath: folder.path + "/forget.pending"))
        let error = await expectDomainError(.storage) { try await TouristStore.open(at: folder.path, options: storeOptions()) }
        #expect(error?.message.contains("forget.pending") == true)
    }
}
