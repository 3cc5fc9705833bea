import BlobStore
import BenchKit
import Foundation
import VirtualTourist

/// `vt-bench --commit-on DIR [ACTIONS]`: what one durable action costs on the store in DIR, by
/// what it changes. The action cases (ActionCases) commit on a new, empty store; a person's
/// store holds a map of pins and every photo of their albums, and an action that changes them
/// must not pay for their number. Each kind runs ACTIONS times, one after another, and prints
/// the median and p99 of the action's wall time and its CPU:
///
/// - a map move (changes no pin),
/// - a new pin (changes the pins),
/// - a photo downloaded into a new pin's album (changes the pins and adds a photo reference:
///   nearly every event of a real log is one),
/// - a pin removed with its album (changes the pins and releases its photos' references).
///
/// It changes the store: run it on a copy (`cp -r`), or on a store written for it.
enum CommitTool {
    /// ACTIONS as given: a whole number from 1 to 1,000,000 (2,000 when left out).
    static func actions(_ text: String?) throws -> Int {
        guard let text else { return 2_000 }
        guard let actions = Int(text), (1...1_000_000).contains(actions) else {
            throw BenchFailure("--commit-on takes a number of actions from 1 to 1000000, not '\(text)'")
        }
        return actions
    }

    static func run(_ folder: String, actions: Int) async throws {
        // Opening a folder that holds no store would make a new, empty one: not what is asked.
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder + "/log", isDirectory: &isFolder), isFolder.boolValue else {
            throw BenchFailure("\(folder) holds no store (no log folder): write one with --write-store DIR EVENTS, and copy it")
        }
        var options = StoreOptions()
        options.collectionInterval = nil
        options.log.durability = .always
        let store = try await TouristStore.open(at: folder, options: options)
        let state = store.state
        print("store of \(state.sequence) events: \(state.pins.count) pins, \(state.photoReferences.count) photos referenced")
        var index = 0
        try await measure("map move", actions) {
            index += 1
            let latitude = Double(index % 160) - 80
            _ = try await store.changeRegion(to: MapRegion(center: Coordinate(latitude: latitude, longitude: 10), latitudeSpan: 1, longitudeSpan: 1))
        }
        var dropped: [PinID] = []
        try await measure("new pin", actions) {
            index += 1
            dropped.append(try await store.dropPin(at: Coordinate(latitude: Double(index % 170) - 85, longitude: Double(index % 350) - 175)))
        }
        // Albums of 21 photos listed on the new pins (not measured), then their downloads.
        let perAlbum = 21
        // The images are stored first, as the app stores them before it records their download.
        var downloads: [(lease: BlobLease, pin: PinID, slot: UInt32)] = []
        for pin in dropped.prefix((actions + perAlbum - 1) / perAlbum) {
            try await store.requestAlbum(for: pin, perPage: UInt32(perAlbum))
            let photos = (0..<perAlbum).map { ListedPhoto(remoteID: "\(pin)-\($0)", url: "https://example.org/\(pin)/\($0).jpg", title: "photo \($0)") }
            try await store.recordListing(
                PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: UInt64(perAlbum), photos: photos), cause: nil)
            for slot in 0..<perAlbum {
                // An image no other photo of the store has: its reference is a new entry.
                let seed = PhotoDigest.of(Array("commit-on \(pin) \(slot)".utf8))
                downloads.append((try store.storePhoto(BenchPhotos.image(for: seed)), pin, UInt32(slot)))
            }
        }
        var nextDownload = downloads.prefix(actions)[...]
        try await measure("photo downloaded", nextDownload.count) {
            let (lease, pin, slot) = nextDownload.removeFirst()
            try await store.recordDownload(lease, pin: pin, collection: 1, slot: slot, cause: nil)
        }
        for unused in nextDownload { unused.lease.release() }
        // The pins with the most photos first: the removal releases every one of them.
        let withPhotos = store.state.pins.values
            .filter { pin in pin.album.slots.contains { $0.digest != nil } }
            .sorted { $0.album.slots.count > $1.album.slots.count }
            .map(\.id)
        let listed = Set(withPhotos)
        var removable = (withPhotos + dropped.filter { !listed.contains($0) })[...]
        try await measure("pin removed with its album", min(actions, removable.count)) {
            _ = try await store.removePin(removable.removeFirst())
        }
        try await store.close()
    }

    private static func measure(_ what: String, _ count: Int, _ action: () async throws -> Void) async throws {
        var walls: [Double] = []
        let cpuBefore = Measure.processorSeconds()
        for _ in 0..<count {
            let start = ContinuousClock.now
            try await action()
            walls.append(Measure.seconds(since: start))
        }
        let cpu = (Measure.processorSeconds() - cpuBefore) / Double(max(count, 1))
        let spread = Spread(walls)
        print(
            "\(what), \(count) actions: median \(Figure.fixed(spread.median * 1e3, 3)) ms, "
                + "p99 \(Figure.fixed(spread.p99 * 1e3, 3)) ms, CPU \(Figure.fixed(cpu * 1e3, 3)) ms an action")
    }
}
