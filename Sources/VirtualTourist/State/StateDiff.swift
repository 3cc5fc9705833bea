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
        diff.photosAdded = other.photos(missingFrom: self)
        diff.photosRemoved = photos(missingFrom: other)
        return diff
    }

    /// This state's downloaded photos that `other` does not hold: not the same pin,
    /// collection, slot and digest. Pin by pin, walking both albums' slots in number order (they
    /// are sorted), so a diff of two whole states costs a pass over their photos, with no table
    /// of every photo in between (`vt diff` at 1 M events, docs/BENCHMARKS.md).
    private func photos(missingFrom other: TouristState) -> [StateDiff.Photo] {
        var missing: [StateDiff.Photo] = []
        for pin in pinsInDropOrder {
            let album = pin.album
            let theirs = other.pins[pin.id].flatMap { $0.album.collection == album.collection ? $0.album.slots : nil } ?? []
            var position = 0
            for slot in album.slots {
                guard let digest = slot.digest else { continue }
                while position < theirs.count, theirs[position].number < slot.number { position += 1 }
                if position < theirs.count, theirs[position].number == slot.number, theirs[position].digest == digest { continue }
                missing.append(StateDiff.Photo(pin: pin.id, collection: album.collection, slot: slot))
            }
        }
        return missing
    }
}
