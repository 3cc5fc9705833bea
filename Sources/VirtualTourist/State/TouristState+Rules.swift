import DeviceLogs

/// The rules: whether an event can happen to a state. Actions are refused with this error
/// before anything is appended; the fold skips events that break them. One function serves
/// both, so the rules and the state can never disagree.
extension TouristState {
    /// The most photos one listing may hold (Flickr serves at most 500 a page).
    public static let maxPhotosPerListing = 500
    /// The media types a downloaded photo may have.
    public static let photoMediaTypes: Set<String> = ["image/jpeg", "image/png", "image/gif", "image/webp"]

    /// Why `event`, written by `device`, cannot happen now, or nil when it can: the rules of
    /// ``problem(with:)``, and in a store of several devices, that a photo service's result
    /// comes from the device whose request it answers (docs/DEVICES.md, "Rules by intent").
    public func problem(with event: DomainEvent, by device: DeviceID?) -> DomainError? {
        if let problem = problem(with: event, takingOverFrom: device) { return problem }
        let pin: PinID
        switch event {
        case .deviceSeen(let seen) where seen.device == device:
            return DomainError(.invalidArgument, "device \(seen.device.short) says it has seen its own log; a DeviceSeen names another device")
        case .photosListed(let listing): pin = listing.pin
        case .photoDownloaded(let photo): pin = photo.pin
        case .photoDownloadFailed(let id, _, _, _), .albumRequestFailed(let id, _, _): pin = id
        default: return nil
        }
        // Read where it lies: `pins[pin]?` would copy the pin (its album's slots) to read one field.
        guard let (asked, collection) = pins.read(pin, { ($0.album.requestedBy, $0.album.collection) }), let asked, asked != device else {
            return nil
        }
        return DomainError(
            .wrongAlbumState, "pin \(pin)'s album (collection \(collection)) was asked for on device \(asked.short); only its results count")
    }

    /// The region `recorded` opens the map at in the store of `localDevice`, or nil when the
    /// fold leaves the region as it was: not a map move, another device's view of the map (never
    /// merged), or a region that is not valid. The fold's own rule, for whoever looks for the
    /// move behind a state's region without folding (`vt why region`).
    public static func regionSet(by recorded: RecordedEvent, on localDevice: DeviceID?) -> MapRegion? {
        guard case .regionChanged(let region) = recorded.event, !(recorded.origin.map { $0.device != localDevice } ?? false),
            region.problem == nil
        else { return nil }
        return region
    }

    /// Why `event` cannot happen now, or nil when it can.
    public func problem(with event: DomainEvent) -> DomainError? { problem(with: event, takingOverFrom: nil) }

    /// The same, for an event written by `device`: a New Collection there may take over an album
    /// that is busy with another device's request, which that device alone can answer.
    private func problem(with event: DomainEvent, takingOverFrom device: DeviceID?) -> DomainError? {
        switch event {
        case .regionChanged(let region):
            return region.problem.map { DomainError(.invalidPlace, "the map region is not valid: \($0)") }

        case .pinDropped(let id, let place):
            if let problem = place.problem { return DomainError(.invalidPlace, "a pin cannot be dropped there: \(problem)") }
            if pins[id] != nil { return DomainError(.duplicatePin, "pin \(id) exists already") }
            return nil

        case .pinDragged(let id, let place):
            if let problem = place.problem { return DomainError(.invalidPlace, "pin \(id) cannot move there: \(problem)") }
            guard let pin = pins[id] else { return unknown(id) }
            // A requested album moves with the pin into the next collection (see the fold).
            return pin.album.phase == .notRequested ? nil : lastCollection(pin)

        case .pinRemoved(let id):
            return pins[id] == nil ? unknown(id) : nil

        case .placeForgotten, .forgotten:
            // A place can be forgotten after its pin was removed; what erasure left changes nothing.
            return nil

        case .deviceSeen:
            // What a device had seen changes nothing on the map; `vt verify` checks it against
            // the copies (docs/DEVICES.md).
            return nil

        case .albumRequested(let request):
            guard let pin = pins[request.pin] else { return unknown(request.pin) }
            if let stale = Self.staleness(pin, request.collection) { return stale }
            if request.page < 1 { return DomainError(.invalidArgument, "result pages start at 1, not \(request.page)") }
            if !(1...UInt32(Self.maxPhotosPerListing)).contains(request.perPage) {
                return DomainError(.invalidArgument, "a page holds 1 to \(Self.maxPhotosPerListing) photos, not \(request.perPage)")
            }
            if request.place != pin.coordinate {
                return DomainError(
                    .invalidArgument, "the request searches at \(request.place), but pin \(pin.id) is at \(pin.coordinate)")
            }
            switch pin.album.phase {
            case .notRequested, .failed: return nil
            case .listing, .listed:
                return DomainError(
                    .wrongAlbumState,
                    "pin \(pin.id)'s album (collection \(pin.album.collection)) was already requested; use New Collection for other photos")
            }

        case .photosListed(let listing):
            guard let pin = pins[listing.pin] else { return unknown(listing.pin) }
            if let stale = Self.staleness(pin, listing.collection) { return stale }
            guard pin.album.phase == .listing else { return Self.notExpecting("a listing", pin) }
            if listing.photos.count > Self.maxPhotosPerListing {
                return DomainError(
                    .invalidArgument, "a listing holds at most \(Self.maxPhotosPerListing) photos, not \(listing.photos.count)")
            }
            return Self.problem(withPhotos: listing.photos)

        case .photoDownloaded(let photo):
            guard let pin = pins[photo.pin] else { return unknown(photo.pin) }
            if case .failure(let problem) = Self.downloadPosition(photo, in: pin) { return problem }
            return nil

        case .photoDownloadFailed(let pinID, let collection, let number, let reason):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if case .failure(let problem) = Self.failurePosition(collection: collection, slot: number, reason: reason, in: pin) {
                return problem
            }
            return nil

        case .albumRequestFailed(let pinID, let collection, let reason):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if let stale = Self.staleness(pin, collection) { return stale }
            guard pin.album.phase == .listing else { return Self.notExpecting("a failed request", pin) }
            return reason.isEmpty ? DomainError(.invalidArgument, "a failure needs a reason") : nil

        case .photoRemoved(let pinID, let collection, let number, let photo):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if let stale = Self.staleness(pin, collection) { return stale }
            guard let position = pin.album.position(of: number) else { return Self.unknownPhoto(number, pin) }
            if let photo, pin.album.slots[position].photo.identity != photo {
                return DomainError(
                    .invalidArgument, "photo \(number) of pin \(pin.id) is \(pin.album.slots[position].photo.identity), not \(photo)")
            }
            return nil

        case .collectionReplaced(let pinID, let old, let new):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if let stale = Self.staleness(pin, old) { return stale }
            if let last = lastCollection(pin) { return last }
            if new != old &+ 1 {
                return DomainError(.invalidArgument, "collection \(old) is followed by \(old &+ 1), not \(new)")
            }
            switch pin.album.status {
            case .listing, .downloading:
                // Its results come from the device that asked (docs/DEVICES.md, "Rules by
                // intent"); a person on another device need not wait for that one to come online.
                if pin.album.awaitsAnotherDevice(than: device) { return nil }
                return DomainError(
                    .albumBusy,
                    "New Collection is disabled while pin \(pin.id)'s album is \(pin.album.status); wait until it is done")
            default:
                return nil
            }
        }
    }

    /// A listing's photos each need an id and a URL, and credit links the web's own schemes
    /// (they are shown as links). Read through the buffer: `firstIndex(where:)` copied each
    /// photo, its text buffer's reference counted, twice a photo on every replay.
    private static func problem(withPhotos photos: [ListedPhoto]) -> DomainError? {
        photos.withUnsafeBufferPointer { photos in
            for index in photos.indices where photos[index].isEmpty(.remoteID) || photos[index].isEmpty(.url) {
                return DomainError(.invalidArgument, "listed photo \(index) has no id or no URL")
            }
            for index in photos.indices
            where !isCreditLink(photos[index], .pageURL) || !isCreditLink(photos[index], .licenceURL) {
                return DomainError(.invalidArgument, "listed photo \(index)'s page or licence link is not an http(s) URL")
            }
            return nil
        }
    }

    /// The rules for a downloaded photo, given its pin, and the position of the slot it goes
    /// to when it may. The pin is passed in rather than looked up, so that the fold (its
    /// commonest event) checks and changes the pin where it lies, one lookup and no copy.
    static func downloadPosition(_ photo: DownloadedPhoto, in pin: Pin) -> Result<Int, DomainError> {
        resultPosition(pin, photo.collection, photo.slot, "a photo").flatMap { position in
            if photo.byteCount == 0 { return .failure(DomainError(.invalidArgument, "a downloaded photo cannot be empty")) }
            if !isPhotoMediaType(photo.mediaType) {
                return .failure(DomainError(.invalidArgument, "\(photo.mediaType) is not a photo type (JPEG, PNG, GIF or WebP)"))
            }
            return .success(position)
        }
    }

    /// The rules for a failed download, given its pin, and the position of its slot.
    static func failurePosition(collection: UInt32, slot number: UInt32, reason: String, in pin: Pin) -> Result<Int, DomainError> {
        resultPosition(pin, collection, number, "a download failure").flatMap { position in
            reason.isEmpty ? .failure(DomainError(.invalidArgument, "a failure needs a reason")) : .success(position)
        }
    }

    /// What a download's result (a photo or a failure) needs of its pin's album, and the
    /// position of the slot it goes to.
    private static func resultPosition(_ pin: Pin, _ collection: UInt32, _ number: UInt32, _ what: String)
        -> Result<Int, DomainError>
    {
        if let stale = staleness(pin, collection) { return .failure(stale) }
        guard pin.album.phase == .listed else { return .failure(notExpecting(what, pin)) }
        guard let position = pin.album.position(of: number) else { return .failure(unknownPhoto(number, pin)) }
        if case .downloaded = pin.album.slots[position].state {
            return .failure(DomainError(.wrongAlbumState, "photo \(number) of pin \(pin.id) was downloaded already"))
        }
        return .success(position)
    }

    /// ``photoMediaTypes``' membership, compared as text instead of hashed: one per download.
    static func isPhotoMediaType(_ type: String) -> Bool {
        switch type {
        case "image/jpeg", "image/png", "image/gif", "image/webp": true
        default: false
        }
    }

    private func unknown(_ id: PinID) -> DomainError { Self.unknownPin(id) }

    /// Collection numbers are 32 bits and never reused, so that a late result can always be
    /// told from a current one: an album on the last number has no next collection.
    private func lastCollection(_ pin: Pin) -> DomainError? {
        guard pin.album.collection == .max else { return nil }
        return DomainError(
            .wrongAlbumState,
            "pin \(pin.id)'s album is on collection \(UInt32.max), the last number there is; it cannot start another "
                + "(remove the pin and drop a new one)")
    }

    static func unknownPin(_ id: PinID) -> DomainError {
        DomainError(.unknownPin, "there is no pin \(id)")
    }

    private static func unknownPhoto(_ number: UInt32, _ pin: Pin) -> DomainError {
        DomainError(.unknownPhoto, "pin \(pin.id)'s album (collection \(pin.album.collection)) has no photo \(number)")
    }

    private static func staleness(_ pin: Pin, _ collection: UInt32) -> DomainError? {
        guard collection != pin.album.collection else { return nil }
        return DomainError(
            .staleCollection,
            "pin \(pin.id)'s album is on collection \(pin.album.collection); this is for collection \(collection), which"
                + (collection < pin.album.collection ? " was replaced" : " does not exist yet"))
    }

    private static func notExpecting(_ what: String, _ pin: Pin) -> DomainError {
        DomainError(.wrongAlbumState, "pin \(pin.id)'s album is \(pin.album.status): it is not waiting for \(what)")
    }

    /// Empty, or an http(s) URL: what a credit may link to.
    static func isCreditLink(_ text: String) -> Bool {
        let lowered = text.prefix(8).lowercased()
        return text.isEmpty || lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
    }

    /// ``isCreditLink(_:)`` of a photo's text, read from its bytes when they start with ASCII
    /// (every real link): a listing's check then makes no `String`. Nine bytes are looked at,
    /// because a non-ASCII ninth (a combining mark) would join the eighth character.
    static func isCreditLink(_ photo: ListedPhoto, _ field: ListedPhoto.Field) -> Bool {
        let ascii: Bool? = photo.withPrefix(field, 9) { start in
            guard start.allSatisfy({ $0 < 0x80 }) else { return nil }
            let lowered = start.prefix(8).lazy.map { $0 | (UInt8(ascii: "A")...UInt8(ascii: "Z") ~= $0 ? 0x20 : 0) }
            return start.isEmpty || lowered.starts(with: "https://".utf8) || lowered.starts(with: "http://".utf8)
        }
        return ascii ?? isCreditLink(photo.text(field))
    }
}
