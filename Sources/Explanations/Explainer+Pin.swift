import VirtualTourist

/// The answers about one pin: its place, its album, New Collection, one photo.
extension Explainer {
    func explainPlace(_ pin: PinID, _ walk: PinWalk, into answer: inout WhyAnswer) {
        let setters = walk.setters[.place] ?? []
        if let place = walk.facts.place {
            answer.fact = "pin \(pin) is at \(place)"
        } else if let later = walk.later, setters.isEmpty {
            answer.fact = "pin \(pin) is not on the map yet at event \(answer.at): it is dropped at event \(later.sequence)"
            return
        } else {
            answer.fact = "pin \(pin) is not on the map"
            // A forgotten place's earlier events are erased: the forget is what says why.
            if let forgotten = walk.events.last(where: { if case .placeForgotten = $0.event { true } else { false } }) {
                answer.because.append(reason(forgotten, Self.describe(forgotten.event)))
                return
            }
        }
        // The event that set it, then what it replaced (the latest first, a few).
        for (index, event) in setters.reversed().prefix(4).enumerated() {
            answer.because.append(reason(event, Self.describe(event.event, replaced: index > 0, severalDevices: event.origin != nil)))
        }
    }

    func explainAlbum(_ pin: PinID, _ walk: PinWalk, into answer: inout WhyAnswer) {
        guard let status = walk.facts.status, let collection = walk.facts.collection else {
            explainPlace(pin, walk, into: &answer)
            answer.fact = "pin \(pin) has no album: it is not on the map"
            return
        }
        answer.fact = "the album of pin \(pin) shows collection \(collection): \(status)"
            + (walk.facts.otherPhotos ? "" : "; the photo service has no other photos of this place")
        addAlbumReasons(walk, into: &answer)
    }

    /// The event that set the album's state, then its request and listing when they are others.
    private func addAlbumReasons(_ walk: PinWalk, into answer: inout WhyAnswer) {
        var events: [RecordedEvent] = []
        if let set = walk.lastSetter(.album) { events.append(set) }
        let album = walk.state.pins[answer.question.pin!]?.album
        for sequence in [album?.listedAt, album?.requestedAt] {
            if let event = walk.event(at: sequence), !events.contains(event) { events.append(event) }
        }
        // A collection with no request yet rests on what started it (a drop, a move, a New Collection).
        if album?.requestedAt == nil, let started = walk.setters[.album]?.last(where: { Self.startsACollection($0.event) }), !events.contains(started) {
            events.append(started)
        }
        answer.because += events.map { reason($0, Self.describe($0.event)) }
    }

    func explainNewCollection(_ pin: PinID, _ walk: PinWalk, into answer: inout WhyAnswer) {
        guard let status = walk.facts.status else {
            explainPlace(pin, walk, into: &answer)
            answer.fact = "New Collection is not shown: pin \(pin) is not on the map"
            return
        }
        if walk.facts.newCollection {
            answer.fact = "New Collection is enabled for pin \(pin): the album is \(status)"
        } else if status == .complete, !walk.facts.otherPhotos {
            answer.fact = "New Collection is disabled for pin \(pin): the photo service has no other photos of this place (its listing held them all)"
            if let listed = walk.lastSetter(.otherPhotos) { answer.because.append(reason(listed, Self.describe(listed.event))) }
        } else if status == .notRequested {
            answer.fact = "New Collection is disabled for pin \(pin): its album was not asked for yet (opening the album asks for photos)"
        } else {
            answer.fact = "New Collection is disabled for pin \(pin): the album is \(status), and New Collection waits until nothing is being listed or downloaded"
        }
        if let set = walk.lastSetter(.newCollection), !answer.because.contains(where: { $0.event == set }) {
            answer.because.insert(reason(set, Self.describe(set.event)), at: 0)
        }
        var album = answer
        album.because = []
        addAlbumReasons(walk, into: &album)
        for extra in album.because where !answer.because.contains(where: { $0.event == extra.event }) { answer.because.append(extra) }
    }

    func explainPhoto(_ pin: PinID, slot: UInt32, _ walk: PinWalk, into answer: inout WhyAnswer) {
        let setters = walk.setters[.slot(slot)] ?? []
        let collection = walk.facts.collection.map { "collection \($0)" } ?? "the album"
        switch walk.facts.slots[slot] {
        case .downloaded(let digest, _, _)?: answer.fact = "photo \(slot) of \(collection) of pin \(pin) is downloaded (photo \(digest))"
        case .placeholder?: answer.fact = "photo \(slot) of \(collection) of pin \(pin) is listed and not downloaded yet"
        case .failed(let why)?: answer.fact = "photo \(slot) of \(collection) of pin \(pin) could not be downloaded: \(why)"
        case nil: answer.fact = "\(collection) of pin \(pin) has no photo \(slot)"
        }
        if let set = setters.last {
            answer.because.append(reason(set, Self.describe(set.event)))
            // A download rests on the listing that placed it.
            if walk.facts.slots[slot] != nil, let listed = setters.dropLast().last(where: { if case .photosListed = $0.event { true } else { false } }) {
                answer.because.append(reason(listed, Self.describe(listed.event)))
            }
        } else if let set = walk.lastSetter(.album) {
            answer.because.append(reason(set, Self.describe(set.event)))
        }
    }

    static func startsACollection(_ event: DomainEvent) -> Bool {
        switch event {
        case .pinDropped, .pinDragged, .collectionReplaced: true
        default: false
        }
    }

    /// What an event did, in the person's words, with the rule that gives it its effect.
    static func describe(_ event: DomainEvent, replaced: Bool = false, severalDevices: Bool = false) -> String {
        switch event {
        case .pinDropped(_, let place): return "dropped the pin at \(place)"
        case .pinDragged(_, let place):
            return "moved the pin to \(place)" + (replaced ? ", which a later event replaced" : severalDevices ? " (of moves on two devices, the later in the merged order wins)" : "")
                + "; a move starts a new collection"
        case .pinRemoved: return "removed the pin and its album" + (severalDevices ? " (a removal wins over a concurrent move or album on another device)" : "")
        case .placeForgotten(_, let erased): return "forgot the place: \(erased) event(s) about it were erased, and forgetting wins over everything"
        case .albumRequested(let request): return "asked the photo service for collection \(request.collection) (page \(request.page))"
        case .photosListed(let listing):
            return "the photo service listed \(listing.photos.count) photo(s) for collection \(listing.collection), of \(listing.total) it has"
        case .photoDownloaded(let photo): return "downloaded photo \(photo.slot) of collection \(photo.collection)"
        case .photoDownloadFailed(_, let collection, let slot, let why): return "could not download photo \(slot) of collection \(collection): \(why)"
        case .albumRequestFailed(_, let collection, let why): return "the photo service could not list collection \(collection): \(why)"
        case .photoRemoved(_, let collection, let slot, _):
            return "removed photo \(slot) of collection \(collection); a removed photo never comes back, not even through a New Collection on another device"
        case .collectionReplaced(_, let old, let new):
            return "New Collection: collection \(new) replaced collection \(old)" + (severalDevices ? " (of two at once, the first in the merged order wins)" : "")
        case .regionChanged(let region): return "moved the map to \(region)"
        case .deviceSeen: return "noted how far this device had seen the others"
        case .forgotten(let erased): return "an event erased by a forget (\(erased.typeName ?? "of a kind this program does not know"))"
        }
    }
}
