@testable import EventLog
import FileIO
import Foundation
import LegacyLogWriter
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Whoever can write into a store folder (a shared disk, a synced folder, an unpacked backup)
/// must not be able to turn the store's writes into writes elsewhere (docs/SECURITY.md). Every
/// path a store holds, file or folder, gets a symbolic link planted at it, pointing at a
/// folder outside; then the store is opened and used as every command uses it. Nothing outside
/// may change, whatever the store answers.
@Suite struct PlantedLinkTests {
    /// What every command does to a store: open it (recovering), write events and photos, a
    /// snapshot, compaction, a forget, garbage collection, close, and the audit of `vt verify`;
    /// from `upgrade`, the store starts in format 1 and is upgraded (`vt upgrade`) and its log
    /// planned for repair (`vt repair`) first. Returns the failures, in order; the first ends
    /// the work.
    static func work(on folder: String, upgrade: Bool = false) async -> [String] {
        // One set of options throughout: its pin ids go on counting across the opens.
        let options = storeOptions(snapshotInterval: 4)
        do {
            if upgrade {
                var formatOne = options
                formatOne.log.writesFormatOne = true
                let old = try await TouristStore.open(at: folder, options: formatOne)
                _ = try await old.dropPin(at: Coordinate(latitude: 10, longitude: 20))
                try await old.close()
                _ = try await TouristStore.upgrade(at: folder, options: options)
                _ = try LogRepair.plan(directory: Path.join(folder, "log"), payloadCodec: EventCodec.blockCodec)
            }
            let store = try await TouristStore.open(at: folder, options: options)
            do {
                let kept = try await store.dropPin(at: Coordinate(latitude: 48.85, longitude: 2.29))
                let gone = try await store.dropPin(at: Coordinate(latitude: 35.01, longitude: 135.76))
                for pin in [kept, gone] {
                    let request = try await store.requestAlbum(for: pin, perPage: 2)
                    let photos = (1...2).map {
                        ListedPhoto(remoteID: "\(pin.rawValue)-\($0)", url: "http://127.0.0.1:9/\($0).jpg", title: "", width: 8, height: 8)
                    }
                    let listing = try await store.recordListing(
                        PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 2, photos: photos), cause: request.sequence)
                    for slot in 0..<2 {
                        let lease = try store.storePhoto(fakePhoto(pin.rawValue * 10 + UInt64(slot)))
                        _ = try await store.recordDownload(lease, pin: pin, collection: 1, slot: UInt32(slot), cause: listing.sequence)
                        lease.release()
                    }
                }
                _ = try await store.writeSnapshot()
                _ = try store.compactLog()
                _ = try await store.forget(gone)
                _ = try store.collectGarbage(grace: .zero)
                try await store.close()
            } catch {
                try? await store.close()
                throw error
            }
            _ = try StoreAudit.verify(folder: folder, checkPhotoContents: true)
            return []
        } catch {
            return ["\(error)"]
        }
    }

    /// Every path below `folder`, folders before what they hold.
    static func paths(below folder: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String { found.append(path) }
        return found.sorted()
    }

    /// Names and bytes of everything below `folder`: what "changed nothing" compares.
    static func contents(of folder: String) -> [String: Data] {
        var contents: [String: Data] = [:]
        for path in paths(below: folder) {
            contents[path] = FileManager.default.contents(atPath: folder + "/" + path) ?? Data("(folder)".utf8)
        }
        return contents
    }

    @Test(arguments: [false, true])
    func aLinkPlantedAtAnyPathOfAStoreLeadsNoWriteOutOfIt(upgrade: Bool) async throws {
        // Every path a store holds after the work (with an upgrade: the format-1 log kept
        // beside the new one too).
        let reference = TemporaryFolder("links-reference")
        let failures = await Self.work(on: reference.path, upgrade: upgrade)
        #expect(failures.isEmpty, "the work itself fails: \(failures)")
        let planted = Self.paths(below: reference.path)
        #expect(planted.contains("log/LOCK") && planted.contains { $0.hasPrefix("blobs/") && $0.count > 40 })

        for path in planted {
            let outside = TemporaryFolder("links-outside")
            let bait = outside.sub("bait")
            try FileManager.default.createDirectory(atPath: bait, withIntermediateDirectories: true)
            try Data("someone else's file\n".utf8).write(to: URL(fileURLWithPath: bait + "/" + Path.name(of: path)))
            try Data("someone else's other file\n".utf8).write(to: URL(fileURLWithPath: bait + "/LOCK"))
            let before = Self.contents(of: outside.path)

            let store = TemporaryFolder("links-store")
            let planted = store.sub(path)
            try FileManager.default.createDirectory(atPath: Path.directory(of: planted), withIntermediateDirectories: true)
            // A folder's link leads to the bait folder; a file's to the bait file of its name.
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: reference.sub(path), isDirectory: &isFolder)
            let target = isFolder.boolValue ? bait : bait + "/" + Path.name(of: path)
            try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: target)

            let failures = await Self.work(on: store.path, upgrade: upgrade)
            #expect(Self.contents(of: outside.path) == before, "a link at \(path) led a write out of the store: \(failures)")
            for failure in failures {
                // It says it met a link, or a name that is taken, or names the file it refuses
                // (a format-1 log refuses a folder holding a format-2 file, link or not).
                #expect(
                    failure.contains("symbolic link") || failure.contains("exists") || failure.contains(Path.name(of: path)),
                    "a link at \(path): the store should name it, not: \(failure)")
            }
        }
    }

    @Test func theLockIsNotOpenedThroughALinkNorCreatedAtItsFarEnd() async throws {
        let outside = TemporaryFolder("lock-outside")
        let precious = outside.sub("precious")
        try FileManager.default.createDirectory(atPath: outside.path, withIntermediateDirectories: true)
        try Data("someone else's file\n".utf8).write(to: URL(fileURLWithPath: precious))
        let store = TemporaryFolder("lock-store")
        try FileManager.default.createDirectory(atPath: store.sub("log"), withIntermediateDirectories: true)

        for target in [precious, outside.sub("not-there-yet")] {
            try? FileManager.default.removeItem(atPath: store.sub("log/LOCK"))
            try FileManager.default.createSymbolicLink(atPath: store.sub("log/LOCK"), withDestinationPath: target)
            let failures = await Self.work(on: store.path)
            #expect(failures.count == 1 && failures[0].contains("symbolic link") && failures[0].contains("log/LOCK"), "\(failures)")
        }
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "someone else's file\n")
        #expect(!FileManager.default.fileExists(atPath: outside.sub("not-there-yet")))
    }
}
