import BlobStore
import EventLog
import StorageTestSupport
import Testing
import TouristWorkload
@testable import VirtualTourist

/// The fold was rewritten for speed (one lookup of a download's pin, slots changed where they
/// lie, docs/BENCHMARKS-JOURNAL.md "Replay at memory speed"); its rules must not have moved. The fold
/// as it stood before (`ReferenceFold`) and the fold of today replay the benchmark workload,
/// with events that break the rules mixed in, and their states are compared every 1,000 events.
@Suite(.heavy) struct FoldEquivalenceTests {
    @Test func theFastFoldGivesTheReferenceFoldsStatesAlongTheWorkload() {
        var workload = Workload(seed: 2026, livePins: 40)
        var fast = TouristState()
        var reference = TouristState()
        var sequence: UInt64 = 0
        var broken = 0
        var compared = 0
        func fold(_ event: DomainEvent) {
            sequence += 1
            let recorded = RecordedEvent(sequence: sequence, timestamp: LogTimestamp(microsecondsSinceEpoch: 0), cause: nil, event: event)
            fast.apply(recorded)
            ReferenceFold.apply(recorded, to: &reference)
            if sequence % 1_000 == 0 {
                #expect(fast == reference, "after event \(sequence)")
                compared += 1
            }
        }
        while workload.events < 60_000 {
            for commit in workload.nextSession() {
                for event in commit {
                    fold(event)
                    // Every 7th event is followed by events that break the rules in its wake.
                    if sequence % 7 == 0 {
                        for wrong in Self.rulebreakers(after: event) {
                            fold(wrong)
                            broken += 1
                        }
                    }
                }
            }
        }
        #expect(fast == reference)
        #expect(fast.ignoredEvents == reference.ignoredEvents)
        #expect(fast.ignoredEvents >= UInt64(broken / 2), "most of the mixed-in events broke a rule")
        #expect(compared >= 60)
        #expect(fast.photoReferences.count > 1_000, "the workload downloaded photos")
    }

    /// Events that the rules refuse after `event` (or, for a few, that they accept: a second
    /// failure of a slot that already failed is refused only when the slot was downloaded).
    static func rulebreakers(after event: DomainEvent) -> [DomainEvent] {
        switch event {
        case .photoDownloaded(let photo):
            var again = photo
            again.digest = BlobDigest(bytes: [UInt8](repeating: 7, count: 32))!
            var stale = photo
            stale.collection += 1
            var missing = photo
            missing.slot = 9_999
            var empty = photo
            empty.slot = 0
            empty.byteCount = 0
            var html = photo
            html.slot = 1
            html.mediaType = "text/html"
            var unknown = photo
            unknown.pin = PinID(1)
            return [
                .photoDownloaded(again), .photoDownloaded(stale), .photoDownloaded(missing), .photoDownloaded(empty),
                .photoDownloaded(html), .photoDownloaded(unknown),
                .photoDownloadFailed(pin: photo.pin, collection: photo.collection, slot: photo.slot, reason: "late"),
                .photoDownloadFailed(pin: photo.pin, collection: photo.collection, slot: photo.slot + 1, reason: ""),
            ]
        case .photoDownloadFailed(let pin, let collection, let slot, _):
            return [
                .photoDownloadFailed(pin: pin, collection: collection &- 1, slot: slot, reason: "stale"),
                .photoDownloadFailed(pin: PinID(1), collection: collection, slot: slot, reason: "no pin"),
                .photoDownloadFailed(pin: pin, collection: collection, slot: 9_999, reason: "no slot"),
            ]
        case .photosListed(let listing):
            return [.photosListed(listing)]
        default:
            return []
        }
    }
}

/// The fold and the download rules as they were before the rewrite (engine at bf68a19), kept
/// as the reference the fast fold is compared with. Every other event's rules are unchanged
/// code and are asked of the state itself.
enum ReferenceFold {
    static func apply(_ recorded: RecordedEvent, to state: inout TouristState) {
        defer { state.sequence = recorded.sequence }
        guard isAllowed(recorded.event, in: state) else {
            state.ignoredEvents += 1
            return
        }
        let at = recorded.sequence
        switch recorded.event {
        case .regionChanged(let region):
            state.region = region
        case .pinDropped(let id, let place):
            state.pins[id] = Pin(id: id, coordinate: place, droppedAt: at, album: Album())
        case .pinDragged(let id, let place):
            state.pins[id]!.coordinate = place
            if state.pins[id]!.album.phase != .notRequested {
                newCollection(of: id, number: state.pins[id]!.album.collection + 1, in: &state)
            }
        case .pinRemoved(let id):
            release(state.pins[id]!.album.slots, in: &state)
            state.pins[id] = nil
        case .albumRequested(let request):
            state.pins[request.pin]!.album.phase = .listing
            state.pins[request.pin]!.album.request = request
            state.pins[request.pin]!.album.requestedAt = at
        case .photosListed(let listing):
            state.pins[listing.pin]!.album.phase = .listed
            state.pins[listing.pin]!.album.listedAt = at
            state.pins[listing.pin]!.album.pages = listing.pages
            state.pins[listing.pin]!.album.total = listing.total
            state.pins[listing.pin]!.album.listedPhotoCount = listing.photos.count
            // A photo removed from the pin before gets no slot (docs/DEVICES.md).
            let removed = state.pins[listing.pin]!.removedPhotos
            state.pins[listing.pin]!.album.slots = listing.photos.enumerated().filter { !removed.contains($0.element.identity.key) }.map {
                position, photo in PhotoSlot(number: UInt32(position), photo: photo, state: .placeholder, resolvedAt: nil)
            }
        case .photoDownloaded(let photo):
            let position = slotPosition(photo.slot, in: state.pins[photo.pin]!.album)!
            state.pins[photo.pin]!.album.slots[position].state = .downloaded(
                digest: photo.digest, byteCount: photo.byteCount, mediaType: photo.mediaType)
            state.pins[photo.pin]!.album.slots[position].resolvedAt = at
            state.photoReferences[photo.digest, default: 0] += 1
        case .photoDownloadFailed(let pin, _, let number, let reason):
            let position = slotPosition(number, in: state.pins[pin]!.album)!
            state.pins[pin]!.album.slots[position].state = .failed(reason: reason)
            state.pins[pin]!.album.slots[position].resolvedAt = at
        case .albumRequestFailed(let pin, _, let reason):
            state.pins[pin]!.album.phase = .failed(reason: reason)
        case .photoRemoved(let pin, _, let number, _):
            let position = slotPosition(number, in: state.pins[pin]!.album)!
            let removed = state.pins[pin]!.album.slots.remove(at: position)
            state.pins[pin]!.removedPhotos.insert(removed.photo.identity.key)
            release([removed], in: &state)
        case .collectionReplaced(let pin, _, let new):
            newCollection(of: pin, number: new, in: &state)
        case .placeForgotten(let id, _):
            if let pin = state.pins[id] { release(pin.album.slots, in: &state) }
            state.pins[id] = nil
        case .forgotten, .deviceSeen:
            break  // a log of one device: no device to credit a DeviceSeen to
        }
    }

    /// The rules for download results as they were; the state's own for everything else.
    private static func isAllowed(_ event: DomainEvent, in state: TouristState) -> Bool {
        func resultAllowed(_ pinID: PinID, _ collection: UInt32, _ number: UInt32) -> Bool {
            guard let pin = state.pins[pinID], pin.album.collection == collection, pin.album.phase == .listed,
                let position = slotPosition(number, in: pin.album)
            else { return false }
            if case .downloaded = pin.album.slots[position].state { return false }
            return true
        }
        switch event {
        case .photoDownloaded(let photo):
            return resultAllowed(photo.pin, photo.collection, photo.slot) && photo.byteCount > 0
                && TouristState.photoMediaTypes.contains(photo.mediaType)
        case .photoDownloadFailed(let pin, let collection, let number, let reason):
            return resultAllowed(pin, collection, number) && !reason.isEmpty
        default:
            return state.problem(with: event) == nil
        }
    }

    /// A linear search: the reference needs to be plainly right, not fast.
    private static func slotPosition(_ number: UInt32, in album: Album) -> Int? {
        album.slots.firstIndex { $0.number == number }
    }

    private static func newCollection(of pin: PinID, number: UInt32, in state: inout TouristState) {
        release(state.pins[pin]!.album.slots, in: &state)
        state.pins[pin]!.album = Album(collection: number)
    }

    private static func release(_ slots: [PhotoSlot], in state: inout TouristState) {
        for slot in slots {
            guard let digest = slot.digest else { continue }
            let remaining = state.photoReferences[digest, default: 1] - 1
            state.photoReferences[digest] = remaining > 0 ? remaining : nil
        }
    }
}

/// A listed photo keeps its texts packed as bytes; what it shows of itself must not change.
@Suite struct ListedPhotoTests {
    let photo = ListedPhoto(
        remoteID: "r12", url: "https://photos.example/5-0.jpg", title: "Tour Eiffel, été", width: 150, height: 100,
        creator: "Ana", licenceName: "CC BY 4.0", licenceURL: "https://creativecommons.org/licenses/by/4.0/",
        pageURL: "https://photos.example/p/5", dateTaken: "2024-05-01 12:00:00")

    @Test func everyTextReadsBackAndSettingOneKeepsTheOthers() {
        #expect(photo.remoteID == "r12")
        #expect(photo.title == "Tour Eiffel, été")
        #expect(photo.licenceURL == "https://creativecommons.org/licenses/by/4.0/")
        #expect(photo.dateTaken == "2024-05-01 12:00:00")
        var changed = photo
        changed.title = "Eiffel"
        changed.creator = ""
        #expect(changed.title == "Eiffel" && changed.creator == "")
        #expect(changed.url == photo.url && changed.pageURL == photo.pageURL && changed.width == 150)
        #expect(changed != photo)
        changed.title = photo.title
        changed.creator = photo.creator
        #expect(changed == photo && changed.hashValue == photo.hashValue)
        #expect(photo.hasCredit)
        #expect(!ListedPhoto(remoteID: "a", url: "https://x", title: "t").hasCredit)
    }

    /// Printed as its fields (the kill tests compare events across processes by their text).
    @Test func itPrintsAsItsFields() {
        let text = "\(photo)"
        #expect(text.hasPrefix(#"ListedPhoto(remoteID: "r12", url: "https://photos.example/5-0.jpg", title: "Tour Eiffel, été", width: 150, height: 100, creator: "Ana""#))
        #expect(!text.contains("0x") && !text.contains("$"))
    }

    /// The rules' scheme check on bytes answers as the check on text does.
    @Test(arguments: [
        "", "https://a", "HTTP://a", "HtTpS://x/y", "http:/", "ftp://x", "javascript:alert(1)", "https:/\u{0338}/x",
        "http://e\u{301}", "https://\u{0338}", "hTTp://", "ｈttps://x", "https", " https://x",
    ])
    func creditLinksAreJudgedTheSameOnBytes(_ link: String) {
        let photo = ListedPhoto(remoteID: "r", url: "u", title: "", pageURL: link)
        #expect(TouristState.isCreditLink(photo, .pageURL) == TouristState.isCreditLink(link), "\(link.debugDescription)")
    }

    @Test func theMediaTypeCheckAgreesWithTheSet() {
        for type in TouristState.photoMediaTypes { #expect(TouristState.isPhotoMediaType(type)) }
        for type in ["image/JPEG", "image/jpg", "text/html", "", "image/svg+xml", "image/jpeg "] {
            #expect(!TouristState.isPhotoMediaType(type) && !TouristState.photoMediaTypes.contains(type))
        }
    }
}
