/// The rules: whether an event can happen to a state. Actions are refused with this error
/// before anything is appended; the fold skips events that break them. One function serves
/// both, so the rules and the state can never disagree.
extension TouristState {
    /// The most photos one listing may hold (Flickr serves at most 500 a page).
    public static let maxPhotosPerListing = 500
    /// The media types a downloaded photo may have.
    public static let photoMediaTypes: Set<String> = ["image/jpeg", "image/png", "image/gif", "image/webp"]

    /// Why `event` cannot happen now, or nil when it can.
    public func problem(with event: DomainEvent) -> DomainError? {
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

        case .albumRequested(let request):
            guard let pin = pins[request.pin] else { return unknown(request.pin) }
            if let stale = staleness(pin, request.collection) { return stale }
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
            if let stale = staleness(pin, listing.collection) { return stale }
            guard pin.album.phase == .listing else { return notExpecting("a listing", pin) }
            if listing.photos.count > Self.maxPhotosPerListing {
                return DomainError(
                    .invalidArgument, "a listing holds at most \(Self.maxPhotosPerListing) photos, not \(listing.photos.count)")
            }
            if let blank = listing.photos.firstIndex(where: { $0.remoteID.isEmpty || $0.url.isEmpty }) {
                return DomainError(.invalidArgument, "listed photo \(blank) has no id or no URL")
            }
            // Credit links are shown as links: only the web's own schemes.
            if let bad = listing.photos.firstIndex(where: { !Self.isCreditLink($0.pageURL) || !Self.isCreditLink($0.licenceURL) }) {
                return DomainError(.invalidArgument, "listed photo \(bad)'s page or licence link is not an http(s) URL")
            }
            return nil

        case .photoDownloaded(let photo):
            guard let pin = pins[photo.pin] else { return unknown(photo.pin) }
            if let stale = staleness(pin, photo.collection) { return stale }
            guard pin.album.phase == .listed else { return notExpecting("a photo", pin) }
            guard let slot = pin.album.slot(photo.slot) else { return unknownPhoto(photo.slot, pin) }
            if case .downloaded = slot.state {
                return DomainError(.wrongAlbumState, "photo \(photo.slot) of pin \(pin.id) was downloaded already")
            }
            if photo.byteCount == 0 { return DomainError(.invalidArgument, "a downloaded photo cannot be empty") }
            if !Self.photoMediaTypes.contains(photo.mediaType) {
                return DomainError(.invalidArgument, "\(photo.mediaType) is not a photo type (JPEG, PNG, GIF or WebP)")
            }
            return nil

        case .photoDownloadFailed(let pinID, let collection, let number, let reason):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if let stale = staleness(pin, collection) { return stale }
            guard pin.album.phase == .listed else { return notExpecting("a download failure", pin) }
            guard let slot = pin.album.slot(number) else { return unknownPhoto(number, pin) }
            if case .downloaded = slot.state {
                return DomainError(.wrongAlbumState, "photo \(number) of pin \(pin.id) was downloaded already")
            }
            return reason.isEmpty ? DomainError(.invalidArgument, "a failure needs a reason") : nil

        case .albumRequestFailed(let pinID, let collection, let reason):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if let stale = staleness(pin, collection) { return stale }
            guard pin.album.phase == .listing else { return notExpecting("a failed request", pin) }
            return reason.isEmpty ? DomainError(.invalidArgument, "a failure needs a reason") : nil

        case .photoRemoved(let pinID, let collection, let number):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if let stale = staleness(pin, collection) { return stale }
            return pin.album.slot(number) == nil ? unknownPhoto(number, pin) : nil

        case .collectionReplaced(let pinID, let old, let new):
            guard let pin = pins[pinID] else { return unknown(pinID) }
            if let stale = staleness(pin, old) { return stale }
            if let last = lastCollection(pin) { return last }
            if new != old &+ 1 {
                return DomainError(.invalidArgument, "collection \(old) is followed by \(old &+ 1), not \(new)")
            }
            switch pin.album.status {
            case .listing, .downloading:
                return DomainError(
                    .albumBusy,
                    "New Collection is disabled while pin \(pin.id)'s album is \(pin.album.status); wait until it is done")
            default:
                return nil
            }
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

    private func unknownPhoto(_ number: UInt32, _ pin: Pin) -> DomainError {
        DomainError(.unknownPhoto, "pin \(pin.id)'s album (collection \(pin.album.collection)) has no photo \(number)")
    }

    private func staleness(_ pin: Pin, _ collection: UInt32) -> DomainError? {
        guard collection != pin.album.collection else { return nil }
        return DomainError(
            .staleCollection,
            "pin \(pin.id)'s album is on collection \(pin.album.collection); this is for collection \(collection), which"
                + (collection < pin.album.collection ? " was replaced" : " does not exist yet"))
    }

    private func notExpecting(_ what: String, _ pin: Pin) -> DomainError {
        DomainError(.wrongAlbumState, "pin \(pin.id)'s album is \(pin.album.status): it is not waiting for \(what)")
    }

    /// Empty, or an http(s) URL: what a credit may link to.
    static func isCreditLink(_ text: String) -> Bool {
        let lowered = text.prefix(8).lowercased()
        return text.isEmpty || lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
    }
}
