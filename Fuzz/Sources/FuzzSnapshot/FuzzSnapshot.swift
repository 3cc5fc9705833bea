// Fuzzes snapshot files (`.snap`, docs/FORMAT.md "Snapshot file"): the header, its checksums
// and lengths, zstd, and the StateSnapshot message through both of its decoders (the direct
// wire decoder and swift-protobuf's). A state that comes out is then used as a store uses one
// after opening: every event kind is folded onto it, and it is diffed and printed as JSON.
//
// Input: byte 0 holds the options below; the rest is the file.

import EventLog
import Foundation
import FuzzSupport
import VirtualTourist

struct Options: OptionSet {
    let rawValue: UInt8
    /// Recompute both CRC32Cs: otherwise nearly every mutation stops at a checksum.
    static let fixChecksums = Options(rawValue: 0x01)
    /// Make `stored_length` (and `raw_length` for a raw payload) match the bytes present.
    static let fixLengths = Options(rawValue: 0x02)
    /// The payload is a plain StateSnapshot message: compress it with zstd and set the codec
    /// and both lengths, so that mutations reach the message behind a valid frame.
    static let compress = Options(rawValue: 0x04)
}

let headerSize = 96

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let options = Options(rawValue: data[0])
    var file = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if file.count >= headerSize { prepare(&file, options) }
    guard let (state, sequence, _) = try? TouristState.decodeSnapshotFile(file) else { return 0 }
    // The decoders check this; a snapshot for another sequence must never come out.
    require(state.sequence == sequence, "the snapshot's state is at \(state.sequence), its header at \(sequence)")
    use(state)
    return 0
}

func prepare(_ file: inout [UInt8], _ options: Options) {
    if options.contains(.compress), let compressor = try? ZstdCompressor(level: 1) {
        let raw = Array(file[headerSize...])
        var stored: [UInt8] = []
        if raw.withUnsafeBytes({ compressor.compress($0, appendingTo: &stored) }) != nil {
            file.replaceSubrange(headerSize..., with: stored)
            file[10] = 1
            write(UInt64(raw.count), to: &file, at: 56)
        }
    }
    if options.contains(.fixLengths) || options.contains(.compress) {
        let stored = UInt64(file.count - headerSize)
        write(stored, to: &file, at: 64)
        if file[10] == 0 { write(stored, to: &file, at: 56) }
    }
    if options.contains(.fixChecksums) || options.contains(.compress) {
        write(CRC32C.checksum(file[headerSize...]), to: &file, at: 88)
        write(CRC32C.checksum(file[0..<92]), to: &file, at: 92)
    }
}

/// What a store does with a loaded state: reads it, prints it, diffs it, and folds the next
/// events onto it. Each event kind is tried on each pin (a few), from the snapshot's state.
func use(_ state: TouristState) {
    let pins = state.pinsInDropOrder
    _ = state.referencedDigests
    _ = try? EventJSON.encodeLine(StateJSON(state))
    _ = state.difference(to: TouristState())
    _ = TouristState().difference(to: state)
    for pin in pins.prefix(4) {
        _ = pin.album.status.description
        _ = pin.album.isNewCollectionEnabled
        _ = try? state.pin(matching: String(pin.id.description.prefix(6)))
        for event in probes(for: pin) {
            var next = state
            _ = next.problem(with: event)
            let time = LogTimestamp(microsecondsSinceEpoch: 0)
            next.apply(RecordedEvent(sequence: state.sequence &+ 1, timestamp: time, cause: nil, event: event))
            _ = state.difference(to: next)
        }
    }
}

/// One event of each kind that could follow the snapshot for this pin: what the app, the
/// album pipeline and the photo service would append next.
func probes(for pin: Pin) -> [DomainEvent] {
    let album = pin.album
    let collection = album.collection
    let first = album.slots.first?.number ?? 0
    let photo = ListedPhoto(remoteID: "1", url: "https://example.com/1.jpg", title: "t", width: 1, height: 1)
    let digest = PhotoDigest(bytes: [UInt8](repeating: 7, count: 32))!
    return [
        .regionChanged(MapRegion(center: pin.coordinate, latitudeSpan: 1, longitudeSpan: 1)),
        .pinDropped(pin.id, pin.coordinate),
        .pinDragged(pin.id, Coordinate(latitude: 1, longitude: 1)),
        .albumRequested(AlbumRequest(pin: pin.id, collection: collection, page: 1, perPage: 21, place: pin.coordinate)),
        .photosListed(PhotoListing(pin: pin.id, collection: collection, page: 1, pages: 1, total: 1, photos: [photo])),
        .photoDownloaded(DownloadedPhoto(
            pin: pin.id, collection: collection, slot: first, digest: digest, byteCount: 1, mediaType: "image/png")),
        .photoDownloadFailed(pin: pin.id, collection: collection, slot: first, reason: "r"),
        .albumRequestFailed(pin: pin.id, collection: collection, reason: "r"),
        .photoRemoved(pin: pin.id, collection: collection, slot: first),
        .collectionReplaced(pin: pin.id, oldCollection: collection, newCollection: collection &+ 1),
        .pinRemoved(pin.id),
    ]
}
