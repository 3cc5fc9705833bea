import DeviceLogs

/// The fold: the only way state is computed. Pure (no I/O, no clock), so replaying the same
/// events always gives the same state. Cost: O(1) per event, except PhotosListed (O(photos))
/// and the events that empty an album (O(its photos)).
extension TouristState {
    /// Folds one event in. Events that break the rules (``problem(with:)``) change nothing but
    /// ``ignoredEvents`` and ``sequence``.
    public mutating func apply(_ recorded: RecordedEvent) {
        defer { sequence = recorded.sequence }
        // Download results are nearly every event of a real log: the pin is looked up once,
        // then checked by the rules and changed where it lies (docs/BENCHMARKS.md).
        switch recorded.event {
        case .photoDownloaded(let photo):
            guard pins.modify(photo.pin, { Self.fold(photo, by: recorded.origin?.device, at: recorded.sequence, into: &$0) }) ?? false else {
                ignoredEvents += 1
                return
            }
            photoReferences.add(photo.digest)
            return
        case .photoDownloadFailed(let pin, let collection, let number, let reason):
            let folded = pins.modify(pin) { pin in
                Self.foldFailure(
                    collection: collection, slot: number, reason: reason, by: recorded.origin?.device, at: recorded.sequence, into: &pin)
            }
            guard folded ?? false else {
                ignoredEvents += 1
                return
            }
            return
        case .photoRemoved(let pin, let collection, let number, let photo):
            // A removal holds in every later collection too, so a stale one still counts. The
            // slot's photo is released after the pin is changed: the references are another
            // part of the state, which the pin's change in place holds while it runs.
            var removed: PhotoSlot?
            let folded = pins.modify(pin) { pin in
                Self.foldRemoval(collection: collection, slot: number, photo: photo, into: &pin, removing: &removed)
            }
            guard folded ?? false else {
                ignoredEvents += 1
                return
            }
            if let removed { release([removed]) }
            return
        case .regionChanged where recorded.origin.map({ $0.device != localDevice }) ?? false:
            return  // another device's view of the map: kept in its log, never merged
        default:
            break
        }
        guard problem(with: recorded.event, by: recorded.origin?.device) == nil else {
            ignoredEvents += 1
            return
        }
        let at = recorded.sequence
        switch recorded.event {
        case .regionChanged(let region):
            self.region = region

        case .pinDropped(let id, let place):
            pins[id] = Pin(id: id, coordinate: place, droppedAt: at, album: Album())

        case .pinDragged(let id, let place):
            pins[id]!.coordinate = place
            // The album moves with the pin: the old place's photos leave it, and results
            // still on their way for the old collection become stale.
            if pins[id]!.album.phase != .notRequested { startNewCollection(of: id, number: pins[id]!.album.collection + 1) }

        case .pinRemoved(let id):
            release(pins[id]!.album.slots)
            pins[id] = nil

        case .albumRequested(let request):
            pins[request.pin]!.album.phase = .listing
            pins[request.pin]!.album.request = request
            pins[request.pin]!.album.requestedAt = at
            pins[request.pin]!.album.requestedBy = recorded.origin?.device

        case .photosListed(let listing):
            modifyPin(listing.pin) { pin in
                pin.album.phase = .listed
                pin.album.listedAt = at
                pin.album.pages = listing.pages
                pin.album.total = listing.total
                pin.album.listedPhotoCount = listing.photos.count
                pin.album.slots = Self.placeholders(for: listing.photos, leavingOut: pin.removedPhotos)
            }

        case .photoDownloaded, .photoDownloadFailed:
            break  // folded above

        case .albumRequestFailed(let pin, _, let reason):
            pins[pin]!.album.phase = .failed(reason: reason)

        case .photoRemoved:
            break  // folded above

        case .collectionReplaced(let pin, _, let new):
            startNewCollection(of: pin, number: new)

        case .placeForgotten(let id, _):
            // Live, the pin may still be here; replayed, its events are erased and it never was.
            if let pin = pins[id] { release(pin.album.slots) }
            pins[id] = nil
            forgottenPins.insert(id)

        case .forgotten:
            break

        case .deviceSeen(let seen):
            // A store of one device has none; an imported one has no device to credit it to.
            guard let by = recorded.origin?.device else { break }
            devicesSeen[by, default: [:]][seen.device] = max(devicesSeen[by]?[seen.device] ?? 0, seen.through)
        }
    }

    /// Folds events in order.
    public mutating func apply<S: Sequence>(contentsOf events: S) where S.Element == RecordedEvent {
        for event in events { apply(event) }
    }

    private mutating func modifyPin(_ pin: PinID, _ change: (inout Pin) -> Void) {
        let found = pins.modify(pin, change)
        precondition(found != nil, "the rules let through a change to pin \(pin), which is not on the map")
    }

    private mutating func startNewCollection(of pin: PinID, number: UInt32) {
        release(pins[pin]!.album.slots)
        pins[pin]!.album = Album(collection: number)
    }

    private mutating func release(_ slots: [PhotoSlot]) {
        Self.release(slots, from: &photoReferences)
    }

    private static func release(_ slots: [PhotoSlot], from photoReferences: inout PhotoReferences) {
        // Through the buffer, a slot's state is read where it lies; `for slot in slots` copies
        // every slot (its photo's reference counted) only to look at its digest.
        slots.withUnsafeBufferPointer { slots in
            for index in slots.indices {
                if case .downloaded(let digest, _, _) = slots[index].state { photoReferences.release(digest) }
            }
        }
    }

    /// A downloaded photo into its slot, if the rules let it (in a store of several devices, from
    /// the device whose request the album answers): false when they do not. The pin is changed
    /// where it lies: reading its album through the table's getter would copy it whole.
    private static func fold(_ photo: DownloadedPhoto, by device: DeviceID?, at sequence: UInt64, into pin: inout Pin) -> Bool {
        guard pin.album.requestedBy == device, case .success(let position) = downloadPosition(photo, in: pin) else { return false }
        pin.album.slots[position].state = .downloaded(digest: photo.digest, byteCount: photo.byteCount, mediaType: photo.mediaType)
        pin.album.slots[position].resolvedAt = sequence
        return true
    }

    /// A failed download into its slot, if the rules let it.
    private static func foldFailure(
        collection: UInt32, slot number: UInt32, reason: String, by device: DeviceID?, at sequence: UInt64, into pin: inout Pin
    ) -> Bool {
        guard pin.album.requestedBy == device, case .success(let position) = failurePosition(collection: collection, slot: number, reason: reason, in: pin) else {
            return false
        }
        pin.album.slots[position].state = .failed(reason: reason)
        pin.album.slots[position].resolvedAt = sequence
        return true
    }

    /// A listing's photos as an album's slots, numbered from 0 (a loop, not `enumerated().map`,
    /// which the compiler left generic: a value-witness copy a photo; docs/BENCHMARKS.md,
    /// "Cold replay at 2.5 M events/s"). Photos removed from the pin before keep their numbers
    /// but get no slot: a removed photo never comes back.
    private static func placeholders(for photos: [ListedPhoto], leavingOut removed: Set<UInt64>) -> [PhotoSlot] {
        var slots: [PhotoSlot] = []
        slots.reserveCapacity(photos.count)
        for position in photos.indices where removed.isEmpty || !removed.contains(photos[position].identityKey) {
            slots.append(PhotoSlot(number: UInt32(position), photo: photos[position], state: .placeholder, resolvedAt: nil))
        }
        return slots
    }

    /// A removal, if it names a photo: the photo is kept out of the pin's later collections, and
    /// leaves the album if it is there. Found by its slot in its own collection; a removal that
    /// names its photo (from another device's listing, or a collection replaced since) is found
    /// by the photo. False for a removal that names no photo (an old event for a collection
    /// replaced since, or a slot that is not there). The slot that left the album, if one did,
    /// is in `removed`, for its photo's reference to be released.
    static func foldRemoval(
        collection: UInt32, slot number: UInt32, photo: PhotoIdentity?, into pin: inout Pin, removing removed: inout PhotoSlot?
    ) -> Bool {
        var position: Int? = nil
        let named = photo?.key
        if collection == pin.album.collection, let found = pin.album.position(of: number),
            named == nil || pin.album.slots[found].photo.identityKey == named
        {
            position = found
        } else if let named {
            position = pin.album.slots.firstIndex { $0.photo.identityKey == named }
        }
        guard let key = named ?? position.map({ pin.album.slots[$0].photo.identityKey }) else { return false }
        pin.removedPhotos.insert(key)
        if let position { removed = pin.album.slots.remove(at: position) }
        return true
    }
}
