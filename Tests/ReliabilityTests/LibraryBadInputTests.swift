import FileIO
import Foundation
import ReliabilitySupport
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// The library entries that the rule, command-line and HTTP tables do not reach (RELIABILITY.md
/// lists those): each invalid value gets a clear error, and the store's files stay byte for
/// byte as they were.
@Suite struct LibraryBadInputTests {
    @Test func invalidValuesAtEveryOtherEntryAreRefusedAndChangeNoByte() async throws {
        let folder = TemporaryFolder("bad-input")
        let path = folder.path + "/store"
        let store = try await TouristStore.open(at: path, options: crashTestOptions())
        var workload = MixedWorkload(seed: 3)
        for _ in 0..<30 { _ = try await workload.step(store) }
        _ = try await store.writeSnapshot()
        let before = try snapshotFiles(path)
        let last = store.lastSequence

        typealias Case = (String, DomainError.Code, String, () async throws -> Void)
        let cases: [Case] = [
            ("an HTML page as a photo", .invalidArgument, "not one of", { _ = try store.storePhoto(Array("<html>oops</html>".utf8)) }),
            ("no bytes as a photo", .invalidArgument, "not one of", { _ = try store.storePhoto([]) }),
            ("a photo over the size limit", .invalidArgument, "limit", {
                _ = try store.storePhoto([0xFF, 0xD8, 0xFF] + [UInt8](repeating: 1, count: store.blobs.options.maxBlobSize))
            }),
            ("the state after the last event", .invalidArgument, "\(last)", { _ = try store.state(at: last + 1) }),
            ("the difference to a future event", .invalidArgument, "\(last)", { _ = try store.difference(from: 1, to: last + 1) }),
            ("the causes of event 0", .invalidArgument, "0", { _ = try store.causes(of: 0) }),
            ("a region of NaN", .invalidPlace, "not a number", {
                _ = try await store.changeRegion(to: MapRegion(center: Coordinate(latitude: .nan, longitude: 0), latitudeSpan: 1, longitudeSpan: 1))
            }),
            ("a second writer", .storage, "already open for writing", {
                _ = try await TouristStore.open(at: path, options: crashTestOptions())
            }),
            ("a reader of a folder with no store", .notAStore, "not a Virtual Tourist store", {
                _ = try StoreReader.open(at: folder.path + "/elsewhere")
            }),
        ]
        for (what, code, says, body) in cases {
            do {
                try await body()
                Issue.record("\(what) was accepted")
            } catch let error as DomainError {
                #expect(error.code == code, "\(what): \(error)")
                #expect(error.description.contains(says), "\(what): \(error)")
            }
        }
        #expect(store.lastSequence == last)
        #expect(try snapshotFiles(path) == before, "a refused input changed the store's files")
        try await store.close()
    }
}
