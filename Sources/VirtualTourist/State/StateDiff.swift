/// What changed between two states: pins added, moved and removed; photos added and removed;
/// the map region.
public struct StateDiff: Hashable, Sendable {
    public struct Move: Hashable, Sendable {
        public var pin: PinID
        public var from: Coordinate
        public var to: Coordinate
    }

    /// A downloaded photo of an album, named by pin, collection and slot.
    ///
    /// It keeps the album's slots and a position in them, not a copy of the slot: a diff of two
    /// far points lists 265,000 photos, and a slot takes 170 bytes where this takes 24
    /// (docs/BENCHMARKS-JOURNAL.md, "vt diff of far points: lines as bytes").
    public struct Photo: Hashable, Sendable {
        public var pin: PinID
        public var collection: UInt32
        private var position: UInt32
        private var slots: [PhotoSlot]

        public var slot: PhotoSlot {
            get { slots[Int(position)] }
            set { (slots, position) = ([newValue], 0) }
        }

        /// The slot's number and the photo service's id, read in place (``slot`` makes a copy;
        /// so did `slots[position].photo`, a retain and a release of its texts each time,
        /// which the buffer's element read in place does not).
        public var slotNumber: UInt32 { slots.withUnsafeBufferPointer { $0[Int(position)].number } }

        /// Not generic, so that callers in other modules reach code made for it rather than the
        /// generic version, which copied the photo to read it.
        public func withRemoteIDUTF8(_ body: (UnsafeRawBufferPointer) -> Void) {
            slots.withUnsafeBufferPointer { $0[Int(position)].photo.withRemoteIDUTF8(body) }
        }

        public init(pin: PinID, collection: UInt32, slot: PhotoSlot) {
            self.init(pin: pin, collection: collection, slots: [slot], position: 0)
        }

        init(pin: PinID, collection: UInt32, slots: [PhotoSlot], position: Int) {
            (self.pin, self.collection, self.slots, self.position) = (pin, collection, slots, UInt32(position))
        }

        public static func == (a: Photo, b: Photo) -> Bool {
            a.pin == b.pin && a.collection == b.collection && a.slot == b.slot
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(pin)
            hasher.combine(collection)
            hasher.combine(slot)
        }
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
        difference(to: other, twoCoresFrom: 20_000)
    }

    /// The same, the two photo lists made on two cores when the states hold at least
    /// `twoCoresFrom` photos between them (below that, handing a list to the second core costs
    /// more than it saves).
    func difference(to other: TouristState, twoCoresFrom: Int) -> StateDiff {
        var diff = StateDiff(from: sequence, to: other.sequence)
        if region != other.region { diff.region = .init(before: region, after: other.region) }
        diff.pinsAdded = other.pinsInDropOrder.filter { pins[$0.id] == nil }
        diff.pinsRemoved = pinsInDropOrder.filter { other.pins[$0.id] == nil }
        diff.pinsMoved = pinsInDropOrder.compactMap { pin in
            guard let after = other.pins[pin.id], after.coordinate != pin.coordinate else { return nil }
            return .init(pin: pin.id, from: pin.coordinate, to: after.coordinate)
        }
        if photoReferences.count + other.photoReferences.count < twoCoresFrom {
            diff.photosAdded = other.photos(missingFrom: self)
            diff.photosRemoved = photos(missingFrom: other)
        } else {
            (diff.photosAdded, diff.photosRemoved) = onTwoCores({ other.photos(missingFrom: self) }, { photos(missingFrom: other) })
        }
        return diff
    }

    /// This state's downloaded photos that `other` does not hold: not the same pin,
    /// collection, slot and digest. Pin by pin, walking both albums' slots in number order (they
    /// are sorted), so a diff of two whole states costs a pass over their photos, with no table
    /// of every photo in between (`vt diff` at 1 M events, docs/BENCHMARKS.md).
    ///
    /// The list is given room for every slot at once: growing it a doubling at a time copied
    /// hundreds of thousands of photos into fresh pages. The room never written is never
    /// touched, so it costs no memory.
    private func photos(missingFrom other: TouristState) -> [StateDiff.Photo] {
        var missing: [StateDiff.Photo] = []
        missing.reserveCapacity(pins.values.reduce(0) { $0 + $1.album.slots.count })
        for pin in pinsInDropOrder {
            let album = pin.album
            let theirs = other.pins[pin.id].flatMap { $0.album.collection == album.collection ? $0.album.slots : nil } ?? []
            var position = 0
            // Read where they lie: taking each slot out of its array copied it, a retain and a
            // release of its photo's texts, most of the comparison's time.
            album.slots.withUnsafeBufferPointer { mine in
                theirs.withUnsafeBufferPointer { theirs in
                    for index in mine.indices {
                        guard let digest = mine[index].digest else { continue }
                        let number = mine[index].number
                        while position < theirs.count, theirs[position].number < number { position += 1 }
                        if position < theirs.count, theirs[position].number == number, theirs[position].digest == digest { continue }
                        missing.append(StateDiff.Photo(pin: pin.id, collection: album.collection, slots: album.slots, position: index))
                    }
                }
            }
        }
        return missing
    }
}
