/// What changed between two states: pins added, moved and removed; photos added and removed;
/// the map region.
public struct StateDiff: Hashable, Sendable {
    public struct Move: Hashable, Sendable {
        public var pin: PinID
        public var from: Coordinate
        public var to: Coordinate
    }

    /// A downloaded photo of an album, named by pin, collection and slot.
    public struct Photo: Hashable, Sendable {
        public var pin: PinID
        public var collection: UInt32
        public var slot: PhotoSlot
    }

    public struct RegionChange: Hashable, Sendable {
        public var before: MapRegion?
        public var after: MapRegion?
    }

    public var from: UInt64
    public var to: UInt64
    public var region: RegionChange?
    public var pinsAdded: [Pin] = []
    public var pinsRemoved: [Pin] = []
    public var pinsMoved: [Move] = []
    public var photosAdded: [Photo] = []
    public var photosRemoved: [Photo] = []

    public var isEmpty: Bool {
        region == nil && pinsAdded.isEmpty && pinsRemoved.isEmpty && pinsMoved.isEmpty && photosAdded.isEmpty
            && photosRemoved.isEmpty
    }
}

extension TouristState {
    /// The difference from this state to `other`. Lists are in drop order, then slot order.
    public func difference(to other: TouristState) -> StateDiff {
        var diff = StateDiff(from: sequence, to: other.sequence)
        if region != other.region { diff.region = .init(before: region, after: other.region) }
        diff.pinsAdded = other.pinsInDropOrder.filter { pins[$0.id] == nil }
        diff.pinsRemoved = pinsInDropOrder.filter { other.pins[$0.id] == nil }
        diff.pinsMoved = pinsInDropOrder.compactMap { pin in
            guard let after = other.pins[pin.id], after.coordinate != pin.coordinate else { return nil }
            return .init(pin: pin.id, from: pin.coordinate, to: after.coordinate)
        }
        let before = downloadedPhotos
        let after = other.downloadedPhotos
        diff.photosAdded = other.photoList.filter { before[$0.key] == nil }.map(\.photo)
        diff.photosRemoved = photoList.filter { after[$0.key] == nil }.map(\.photo)
        return diff
    }

    private struct PhotoKey: Hashable {
        var pin: PinID
        var collection: UInt32
        var slot: UInt32
        var digest: PhotoDigest
    }

    private var photoList: [(key: PhotoKey, photo: StateDiff.Photo)] {
        pinsInDropOrder.flatMap { pin in
            pin.album.slots.compactMap { slot in
                guard let digest = slot.digest else { return nil }
                return (PhotoKey(pin: pin.id, collection: pin.album.collection, slot: slot.number, digest: digest),
                        StateDiff.Photo(pin: pin.id, collection: pin.album.collection, slot: slot))
            }
        }
    }

    private var downloadedPhotos: [PhotoKey: StateDiff.Photo] {
        Dictionary(photoList.map { ($0.key, $0.photo) }, uniquingKeysWith: { first, _ in first })
    }
}
