import DeviceLogs

/// Which other event decided what became of an event (docs/DEVICES.md, "Time travel and
/// audit"): in a store of several devices an action made on one device can meet another
/// device's, and `vt show` names the one that won, and for the one that won, what gave way.
extension StoreReader {
    /// The event that decided `recorded`'s fate, and how, when another event did: for an event
    /// the rules passed over, the removal of its pin, the New Collection or request that came
    /// first from the same collection, or the request its album answers; for a drag that was
    /// folded, a later drag of the same pin from another device, which replaced its place; for a
    /// removal, an earlier removal of the same photo. Nil when nothing else decided it.
    public func decidingEvent(for recorded: RecordedEvent, verdict: Verdict) throws -> (event: RecordedEvent, how: String)? {
        guard let pin = recorded.event.pin else { return nil }
        switch verdict {
        case .anotherDevicesView:
            return nil
        case .passedOver:
            let before = try state(at: recorded.sequence - 1)
            let earlier = try history(of: pin).filter { $0.sequence < recorded.sequence }
            guard let current = before.pins[pin] else {
                let removal = earlier.last { event in
                    switch event.event {
                    case .pinRemoved, .placeForgotten: return true
                    default: return false
                    }
                }
                return removal.map { ($0, "this event had removed its pin") }
            }
            switch recorded.event {
            case .photosListed, .photoDownloaded, .photoDownloadFailed, .albumRequestFailed:
                guard let requestedAt = current.album.requestedAt else { return nil }
                let request = try causes(of: requestedAt)[0]
                let another = request.origin?.device != recorded.origin?.device
                return (request, another ? "the album's collection answers this request, made on another device" : "the album's collection answers this later request")
            case .collectionReplaced(_, let old, _):
                guard let first = earlier.first(where: { Self.replaces(old, $0.event) }) else { return nil }
                return (
                    first,
                    "this New Collection\(try on(first)) came first from collection \(old) in the merged order: one collection results, and this one gave way; \(Self.removals(in: earlier))")
            case .albumRequested(let request):
                guard let first = earlier.first(where: { Self.requests(request.collection, $0.event) }) else { return nil }
                return (first, "this request\(try on(first)) came first for collection \(request.collection): its results fill the album, and this one's are not folded")
            default:
                return nil
            }
        case .folded:
            if case .photoRemoved(_, _, _, let photo?) = recorded.event {
                // A removal is kept by the photo's identity, so a second one is folded and changes nothing.
                let first = try history(of: pin).first { event in
                    guard event.sequence < recorded.sequence, case .photoRemoved(_, _, _, let removed?) = event.event else { return false }
                    return removed == photo
                }
                return try first.map { ($0, "this removal\(try on($0)) had already removed the same photo (\(photo)): this one changed nothing") }
            }
            guard case .pinDragged = recorded.event, let device = recorded.origin?.device else { return nil }
            let replacing = try history(of: pin, from: recorded.sequence + 1).first { event in
                if case .pinDragged = event.event { return true }
                return false
            }
            guard let replacing, replacing.origin?.device != device else { return nil }
            return (replacing, "this later drag from another device replaced its place")
        }
    }

    /// What gave way to `recorded` when it won: a New Collection or an album request made at
    /// once on another device from the same collection, which the rules then passed over. Nil
    /// when nothing did, and for an event the rules passed over.
    public func overriddenEvent(for recorded: RecordedEvent, verdict: Verdict) throws -> (event: RecordedEvent, how: String)? {
        guard case .folded = verdict, let pin = recorded.event.pin, let device = recorded.origin?.device else { return nil }
        switch recorded.event {
        case .collectionReplaced(_, let old, _):
            let story = try history(of: pin)
            guard let loser = story.first(where: { $0.sequence > recorded.sequence && $0.origin?.device != device && Self.replaces(old, $0.event) })
            else { return nil }
            let upToIt = story.filter { $0.sequence <= loser.sequence }
            return (
                loser,
                "this New Collection came first from collection \(old) in the merged order, so this one\(try on(loser)) gave way; \(Self.removals(in: upToIt))")
        case .albumRequested(let request):
            let later = try history(of: pin, from: recorded.sequence + 1)
            guard let loser = later.first(where: { $0.origin?.device != device && Self.requests(request.collection, $0.event) }) else { return nil }
            return (loser, "this request came first for collection \(request.collection), so this one\(try on(loser)) gave way: its results are not folded")
        default:
            return nil
        }
    }

    private static func replaces(_ old: UInt32, _ event: DomainEvent) -> Bool {
        if case .collectionReplaced(_, let from, _) = event { return from == old }
        return false
    }

    private static func requests(_ collection: UInt32, _ event: DomainEvent) -> Bool {
        if case .albumRequested(let request) = event { return request.collection == collection }
        return false
    }

    /// "the 3 photos removed from this pin on any device stay removed" (tombstones: a removal
    /// holds in every collection).
    private static func removals(in events: [RecordedEvent]) -> String {
        var removed = Set<PhotoIdentity>()
        for event in events { if case .photoRemoved(_, _, _, let photo?) = event.event { removed.insert(photo) } }
        switch removed.count {
        case 0: return "no photo had been removed from this pin"
        case 1: return "the photo removed from this pin on any device stays removed"
        default: return "the \(removed.count) photos removed from this pin on any device stay removed"
        }
    }

    /// " from laptop" (its name, or its id's first digits), empty in a store of one device.
    private func on(_ event: RecordedEvent) throws -> String {
        guard let device = event.origin?.device else { return "" }
        return " from " + (try devices().first { $0.id == device }?.label ?? device.short)
    }
}
