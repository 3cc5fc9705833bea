import EventLog

/// The actions people (and the photo pipeline) take. Each is checked against the rules and
/// either appended whole or refused with a ``DomainError``, appending nothing.
extension TouristStore {
    /// Drops a pin; returns its id.
    @discardableResult
    public func dropPin(at place: Coordinate) async throws -> PinID {
        let id = options.pinIDs.next()
        _ = try await run { _ in [ProposedEvent(event: .pinDropped(id, place))] }
        return id
    }

    /// Moves a pin (the app appends this once, when the finger or pointer lifts). If its album
    /// had been requested, the album moves with it to a new collection.
    @discardableResult
    public func dragPin(_ pin: PinID, to place: Coordinate) async throws -> RecordedEvent {
        try await run { _ in [ProposedEvent(event: .pinDragged(pin, place))] }[0]
    }

    @discardableResult
    public func removePin(_ pin: PinID) async throws -> RecordedEvent {
        try await run { _ in [ProposedEvent(event: .pinRemoved(pin))] }[0]
    }

    @discardableResult
    public func changeRegion(to region: MapRegion) async throws -> RecordedEvent {
        try await run { _ in [ProposedEvent(event: .regionChanged(region))] }[0]
    }

    /// Asks for the pin's current collection, at its current place. `cause` is the event that
    /// led to it (the PinDropped for a pre-fetch), if any. With `collection`, the request is
    /// refused as stale unless that is still the pin's collection (a pre-fetch for a drop
    /// that a drag has overtaken asks for nothing).
    @discardableResult
    public func requestAlbum(
        for pin: PinID, page: UInt32 = 1, perPage: UInt32, collection: UInt32? = nil, cause: UInt64? = nil
    ) async throws -> RecordedEvent {
        try await run { state in
            guard let current = state.pins[pin] else { throw TouristState.unknownPin(pin) }
            let request = AlbumRequest(
                pin: pin, collection: collection ?? current.album.collection, page: page, perPage: perPage,
                place: current.coordinate)
            return [ProposedEvent(event: .albumRequested(request), cause: cause.map { .sequence($0) } ?? .none)]
        }[0]
    }

    /// New Collection: empties the album and requests the next collection, as one atomic pair.
    @discardableResult
    public func replaceCollection(of pin: PinID, page: UInt32, perPage: UInt32) async throws -> [RecordedEvent] {
        try await replaceCollection(of: pin, perPage: perPage) { _ in page }
    }

    /// New Collection, with the page chosen from the album being replaced (its page count and
    /// page), as the store sees it when the action runs — so the choice can never be made from
    /// an album that has changed since. `choose` may refuse (throw), and then nothing is appended.
    @discardableResult
    public func replaceCollection(
        of pin: PinID, perPage: UInt32, choosingPage choose: @escaping @Sendable (Album) throws -> UInt32
    ) async throws -> [RecordedEvent] {
        try await run { state in
            guard let current = state.pins[pin] else { throw TouristState.unknownPin(pin) }
            let old = current.album.collection
            let request = AlbumRequest(
                pin: pin, collection: old &+ 1, page: try choose(current.album), perPage: perPage, place: current.coordinate)
            return [
                ProposedEvent(event: .collectionReplaced(pin: pin, oldCollection: old, newCollection: old &+ 1)),
                ProposedEvent(event: .albumRequested(request), cause: .earlierInAction(0)),
            ]
        }
    }

    /// Removes a photo (by its slot number) from the album's current collection, or from
    /// `collection` when given (refused as stale when that is no longer the current one).
    @discardableResult
    public func removePhoto(_ slot: UInt32, from pin: PinID, collection: UInt32? = nil) async throws -> RecordedEvent {
        try await run { state in
            let current = collection ?? state.pins[pin]?.album.collection ?? 0
            // Named, so that it stays out of the pin's later collections on every device.
            let photo = state.pins[pin].flatMap { $0.album.collection == current ? $0.album.slot(slot)?.photo.identity : nil }
            return [ProposedEvent(event: .photoRemoved(pin: pin, collection: current, slot: slot, photo: photo))]
        }[0]
    }

    // MARK: Results of the photo service (the album pipeline records these)

    @discardableResult
    public func recordListing(_ listing: PhotoListing, cause: UInt64?) async throws -> RecordedEvent {
        try await record(.photosListed(listing), cause: cause)
    }

    @discardableResult
    public func recordDownload(_ photo: DownloadedPhoto, cause: UInt64?) async throws -> RecordedEvent {
        try await record(.photoDownloaded(photo), cause: cause)
    }

    @discardableResult
    public func recordDownloadFailure(
        pin: PinID, collection: UInt32, slot: UInt32, reason: String, cause: UInt64?
    ) async throws -> RecordedEvent {
        try await record(.photoDownloadFailed(pin: pin, collection: collection, slot: slot, reason: reason), cause: cause)
    }

    @discardableResult
    public func recordRequestFailure(pin: PinID, collection: UInt32, reason: String, cause: UInt64?) async throws
        -> RecordedEvent
    {
        try await record(.albumRequestFailed(pin: pin, collection: collection, reason: reason), cause: cause)
    }

    /// Appends one event exactly as given, after the rules accept it (for import, and for tests
    /// that drive the store event by event).
    @discardableResult
    public func record(_ event: DomainEvent, cause: UInt64? = nil) async throws -> RecordedEvent {
        try await run { _ in [ProposedEvent(event: event, cause: cause.map { .sequence($0) } ?? .none)] }[0]
    }

    private func run(_ build: @escaping ActionProcessor.Build) async throws -> [RecordedEvent] {
        try await processor.submit(build)
    }
}
