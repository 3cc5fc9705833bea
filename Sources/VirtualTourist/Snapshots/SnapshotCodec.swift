import DeviceLogs
import Foundation
import SwiftProtobuf

/// Maps a ``TouristState`` to the `StateSnapshot` message of `schemas/…/snapshot.proto` and
/// back. Decoding rebuilds exactly the state the fold would have built (tests prove it).
enum SnapshotCodec {
    static func message(for state: TouristState) -> VirtualTourist_V1_StateSnapshot {
        .with { snapshot in
            snapshot.schemaVersion = EventCodec.schemaVersion
            snapshot.sequence = state.sequence
            snapshot.ignoredEvents = state.ignoredEvents
            snapshot.forgottenPins = state.forgottenPins.map(\.rawValue).sorted()
            snapshot.devicesSeen = state.devicesSeenInOrder.map { seen in
                .with { $0.by = Data(seen.by.bytes); $0.device = Data(seen.device.bytes); $0.through = seen.through }
            }
            if let region = state.region {
                snapshot.region = .with {
                    $0.centerLatitude = region.center.latitude
                    $0.centerLongitude = region.center.longitude
                    $0.spanLatitude = region.latitudeSpan
                    $0.spanLongitude = region.longitudeSpan
                }
            }
            snapshot.pins = state.pinsInDropOrder.map { pin in
                .with {
                    $0.pin = pin.id.rawValue
                    $0.latitude = pin.coordinate.latitude
                    $0.longitude = pin.coordinate.longitude
                    $0.droppedAt = pin.droppedAt
                    $0.album = message(for: pin.album)
                    $0.removedPhotos = pin.removedPhotos.sorted()
                }
            }
        }
    }

    private static func message(for album: Album) -> VirtualTourist_V1_AlbumState {
        .with {
            $0.collection = album.collection
            switch album.phase {
            case .notRequested: $0.phase = .notRequested
            case .listing: $0.phase = .listing
            case .listed: $0.phase = .listed
            case .failed(let reason):
                $0.phase = .failed
                $0.failure = reason
            }
            if let request = album.request {
                $0.page = request.page
                $0.perPage = request.perPage
                $0.latitude = request.place.latitude
                $0.longitude = request.place.longitude
            }
            $0.requestedAt = album.requestedAt ?? 0
            if let device = album.requestedBy { $0.requestedBy = Data(device.bytes) }
            $0.listedAt = album.listedAt ?? 0
            $0.pages = album.pages
            $0.total = album.total
            $0.listedPhotoCount = UInt32(album.listedPhotoCount)
            $0.slots = album.slots.map { slot in
                .with {
                    $0.slot = slot.number
                    $0.photoTexts = Data(slot.photo.utf8)
                    $0.photoTextEnds = slot.photo.textEnds
                    $0.photoWidth = slot.photo.width
                    $0.photoHeight = slot.photo.height
                    $0.resolvedAt = slot.resolvedAt ?? 0
                    switch slot.state {
                    case .placeholder:
                        $0.kind = .placeholder
                    case .downloaded(let digest, let byteCount, let mediaType):
                        $0.kind = .downloaded
                        $0.sha256 = Data(digest.bytes)
                        $0.byteCount = byteCount
                        $0.mediaType = mediaType
                    case .failed(let reason):
                        $0.kind = .failed
                        $0.failure = reason
                    }
                }
            }
        }
    }

    /// Rebuilds the state, or says why the message cannot be one.
    static func state(from snapshot: VirtualTourist_V1_StateSnapshot) throws(SnapshotProblem) -> TouristState {
        guard snapshot.schemaVersion >= 1, snapshot.schemaVersion <= EventCodec.schemaVersion else {
            throw SnapshotProblem("it was written with schema version \(snapshot.schemaVersion)")
        }
        var state = TouristState()
        state.sequence = snapshot.sequence
        state.ignoredEvents = snapshot.ignoredEvents
        state.forgottenPins = Set(snapshot.forgottenPins.map(PinID.init))
        for seen in snapshot.devicesSeen {
            guard let by = try? DeviceID(logID: Array(seen.by)), let device = try? DeviceID(logID: Array(seen.device)), seen.through > 0 else {
                throw SnapshotProblem("it names what a device had seen with ids of \(seen.by.count) and \(seen.device.count) bytes, through \(seen.through)")
            }
            state.devicesSeen[by, default: [:]][device] = seen.through
        }
        if snapshot.hasRegion {
            let r = snapshot.region
            state.region = MapRegion(
                center: Coordinate(latitude: r.centerLatitude, longitude: r.centerLongitude),
                latitudeSpan: r.spanLatitude, longitudeSpan: r.spanLongitude)
        }
        for message in snapshot.pins {
            let id = PinID(message.pin)
            guard state.pins[id] == nil else { throw SnapshotProblem("pin \(id) appears twice") }
            let album = try album(from: message.album, pin: id)
            for slot in album.slots {
                if let digest = slot.digest { state.photoReferences.add(digest) }
            }
            state.pins[id] = Pin(
                id: id, coordinate: Coordinate(latitude: message.latitude, longitude: message.longitude),
                droppedAt: message.droppedAt, album: album, removedPhotos: Set(message.removedPhotos))
        }
        return state
    }

    private static func album(from message: VirtualTourist_V1_AlbumState, pin: PinID) throws(SnapshotProblem) -> Album {
        var album = Album(collection: message.collection)
        switch message.phase {
        case .notRequested: album.phase = .notRequested
        case .listing: album.phase = .listing
        case .listed: album.phase = .listed
        case .failed: album.phase = .failed(reason: message.failure)
        case .UNRECOGNIZED(let value): throw SnapshotProblem("pin \(pin) has an album phase \(value)")
        }
        if message.requestedAt != 0 {
            album.requestedAt = message.requestedAt
            album.request = AlbumRequest(
                pin: pin, collection: message.collection, page: message.page, perPage: message.perPage,
                place: Coordinate(latitude: message.latitude, longitude: message.longitude))
        }
        if !message.requestedBy.isEmpty {
            guard let device = try? DeviceID(logID: Array(message.requestedBy)) else {
                throw SnapshotProblem("pin \(pin)'s album names a requesting device of \(message.requestedBy.count) bytes")
            }
            album.requestedBy = device
        }
        album.listedAt = message.listedAt == 0 ? nil : message.listedAt
        album.pages = message.pages
        album.total = message.total
        album.listedPhotoCount = Int(message.listedPhotoCount)
        var previous: UInt32? = nil
        for slot in message.slots {
            if let previous, slot.slot <= previous { throw SnapshotProblem("pin \(pin)'s slots are out of order") }
            previous = slot.slot
            let state: PhotoSlot.State
            switch slot.kind {
            case .placeholder: state = .placeholder
            case .failed: state = .failed(reason: slot.failure)
            case .downloaded:
                guard let digest = PhotoDigest(bytes: slot.sha256) else {
                    throw SnapshotProblem("pin \(pin)'s photo \(slot.slot) has a \(slot.sha256.count)-byte digest")
                }
                state = .downloaded(digest: digest, byteCount: slot.byteCount, mediaType: slot.mediaType)
            case .UNRECOGNIZED(let value): throw SnapshotProblem("pin \(pin)'s photo \(slot.slot) has a kind \(value)")
            }
            album.slots.append(PhotoSlot(
                number: slot.slot, photo: try photo(of: slot, pin: pin), state: state,
                resolvedAt: slot.resolvedAt == 0 ? nil : slot.resolvedAt))
        }
        return album
    }
}

extension SnapshotCodec {
    /// A slot's photo from either form (docs/FORMAT.md, "Snapshot file"): the `ListedPhoto`
    /// message of format version 1, or the packed texts of version 2.
    fileprivate static func photo(of slot: VirtualTourist_V1_SlotState, pin: PinID) throws(SnapshotProblem) -> ListedPhoto {
        let isPacked = !slot.photoTexts.isEmpty || !slot.photoTextEnds.isEmpty || slot.photoWidth != 0 || slot.photoHeight != 0
        guard isPacked else { return EventCodec.photo(from: slot.photo) }
        guard !slot.hasPhoto else { throw SnapshotProblem("pin \(pin)'s photo \(slot.slot) is stored in both forms") }
        let texts = [UInt8](slot.photoTexts)
        let ends = ListedPhoto.PackedEnds(slot.photoTextEnds)
        guard texts.withUnsafeBytes({ ListedPhoto.packedTextsAreValid($0, ends: ends) }) else {
            throw SnapshotProblem("pin \(pin)'s photo \(slot.slot) has texts that are not eight UTF-8 strings back to back")
        }
        return ListedPhoto(width: slot.photoWidth, height: slot.photoHeight, packedTexts: texts[...], ends: ends)
    }
}

/// Why a snapshot cannot be used.
struct SnapshotProblem: Error, CustomStringConvertible {
    let description: String
    /// The snapshot is in a format older than this version reads: not damage, just of no use.
    let isOutdated: Bool
    init(_ description: String, isOutdated: Bool = false) {
        self.description = description
        self.isOutdated = isOutdated
    }
}
