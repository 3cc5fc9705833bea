// domain-replay: how fast the app's state is rebuilt from its log (read, check, decompress,
// decode, fold), on a seeded workload that looks like real use.
//
//   swift run -c release domain-replay [EVENTS]      default 1,000,000 events
//   swift run -c release domain-replay --smoke       20,000 events, for CI
import EventLog
import Foundation
import LogWorkload
import VirtualTourist

let arguments = CommandLine.arguments.dropFirst()
let target = arguments.contains("--smoke") ? 20_000 : Int(arguments.first { $0 != "--smoke" } ?? "") ?? 1_000_000

/// Sessions of real use: the map moves, pins are dropped, albums of 20 to 250 photos are listed
/// and downloaded (a few failing), photos removed, collections replaced, pins dragged and
/// removed. Every event passes the rules.
struct Workload {
    var random = SplitMix(seed: 2026)
    var state = TouristState()
    var pending: [DomainEvent] = []
    var nextPin: UInt64 = 1

    mutating func place() -> Coordinate {
        Coordinate(latitude: Double.random(in: -60...70, using: &random), longitude: Double.random(in: -170...170, using: &random))
    }

    mutating func add(_ event: DomainEvent) {
        precondition(state.problem(with: event) == nil, "\(event)")
        state.apply(RecordedEvent(sequence: state.sequence + 1, timestamp: LogTimestamp(microsecondsSinceEpoch: 0), cause: nil, event: event))
        pending.append(event)
    }

    mutating func album(_ pin: PinID) {
        let album = state.pins[pin]!.album
        add(.albumRequested(AlbumRequest(pin: pin, collection: album.collection, page: UInt32.random(in: 1...16, using: &random), perPage: 250, place: state.pins[pin]!.coordinate)))
        let count = Int.random(in: 20...250, using: &random)
        let photos = (0..<count).map { index in
            let id = String(50_000_000_000 + UInt64.random(in: 0..<9_000_000_000, using: &random))
            return ListedPhoto(
                remoteID: id, url: "https://live.staticflickr.com/65535/\(id)_\(String(UInt32.random(in: 0...UInt32.max, using: &random), radix: 16))_q.jpg",
                title: "photo \(index) near pin", width: 150, height: 150)
        }
        add(.photosListed(PhotoListing(pin: pin, collection: album.collection, page: 1, pages: 16, total: 4_000, photos: photos)))
        for slot in 0..<UInt32(count) {
            if Int.random(in: 0..<40, using: &random) == 0 {
                add(.photoDownloadFailed(pin: pin, collection: album.collection, slot: slot, reason: "HTTP 404"))
            } else {
                let digest = PhotoDigest(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })!
                add(.photoDownloaded(DownloadedPhoto(pin: pin, collection: album.collection, slot: slot, digest: digest, byteCount: UInt64.random(in: 3_000...40_000, using: &random), mediaType: "image/jpeg")))
            }
        }
    }

    mutating func session() {
        let span = Double.random(in: 0.5...40, using: &random)
        add(.regionChanged(MapRegion(center: place(), latitudeSpan: span, longitudeSpan: span * 1.5)))
        let pin = PinID(nextPin)
        nextPin += 1
        add(.pinDropped(pin, place()))
        album(pin)
        for slot in state.pins[pin]!.album.slots.prefix(Int.random(in: 0...5, using: &random)).map(\.number) {
            add(.photoRemoved(pin: pin, collection: state.pins[pin]!.album.collection, slot: slot))
        }
        if Bool.random(using: &random) {
            let old = state.pins[pin]!.album.collection
            add(.collectionReplaced(pin: pin, oldCollection: old, newCollection: old + 1))
            album(pin)
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            add(.pinDragged(pin, place()))
            album(pin)
        }
        if state.pins.count > 40, let old = state.pins.keys.min() { add(.pinRemoved(old)) }
    }
}

func seconds(_ start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

let path = NSTemporaryDirectory() + "vt-domain-replay-\(UUID().uuidString.prefix(8))"
defer { try? FileManager.default.removeItem(atPath: path) }
do {
    var configuration = LogConfiguration()
    configuration.durability = .none
    let log = try EventLog.open(at: path, configuration: configuration)
    var workload = Workload()
    var written = 0
    while written < target {
        workload.session()
        try log.append(contentsOf: workload.pending.map { EventCodec.encode($0, cause: nil) })
        written += workload.pending.count
        workload.pending.removeAll(keepingCapacity: true)
    }
    try log.close()
    let expected = workload.state
    let report = try LogVerifier.verify(directory: path)

    // Cold in the sense of a fresh process state; the files are in the page cache.
    var best = (read: Double.infinity, decode: Double.infinity, fold: Double.infinity)
    for _ in 0..<3 {
        var start = ContinuousClock.now
        var cursor = try LogReader(directory: path).events()
        var count = 0
        while try cursor.next() != nil { count += 1 }
        best.read = min(best.read, seconds(start))

        start = ContinuousClock.now
        cursor = try LogReader(directory: path).events()
        while let event = try cursor.next() { _ = try EventCodec.decode(event) }
        best.decode = min(best.decode, seconds(start))

        start = ContinuousClock.now
        cursor = try LogReader(directory: path).events()
        var state = TouristState()
        while let event = try cursor.next() { state.apply(try EventCodec.decode(event)) }
        best.fold = min(best.fold, seconds(start))
        precondition(state == expected && state.ignoredEvents == 0, "the replayed state differs")
    }
    let events = Double(report.events)
    print("events: \(report.events) in \(report.batches) batches; \(expected.pins.count) pins and \(expected.photoReferences.count) photos live at the end")
    print("bytes on disk per event: \(String(format: "%.1f", Double(report.storedBytes) / events)) (raw \(String(format: "%.1f", Double(report.rawBytes) / events)), zstd level 3)")
    print("read + check + decompress:        \(Int(events / best.read)) events/s")
    print("  + protobuf decode:              \(Int(events / best.decode)) events/s")
    print("  + fold (cold replay, the target): \(Int(events / best.fold)) events/s")
} catch {
    FileHandle.standardError.write("domain-replay: \(error)\n".data(using: .utf8)!)
    exit(1)
}
