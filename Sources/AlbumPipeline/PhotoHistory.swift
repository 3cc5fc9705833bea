import PhotoSources
import VirtualTourist

/// What a pin has shown before, so that a New Collection is new: the photos the user removed
/// from any of the pin's collections (never shown again) and those of the collection being
/// replaced (shown again only when the page has nothing else).
///
/// ```swift
/// let history = PhotoHistory(events: try store.history(of: pin), before: 3)
/// history.choose(from: page.photos)   // the page less removed photos, less the last set's
/// ```
///
/// Built from the log (PhotosListed and PhotoRemoved), so it holds after a restart. O(events
/// about the pin) to build; O(photos) to choose.
struct PhotoHistory: Sendable {
    /// Service ids of photos removed from the pin's albums.
    private(set) var removed: Set<String> = []
    /// Service ids listed in the newest collection before the one being searched for.
    private(set) var previous: Set<String> = []

    init() {}

    /// From the pin's events, oldest first, for a search of `collection`.
    init(events: [RecordedEvent], before collection: UInt32) {
        var listings: [UInt32: [ListedPhoto]] = [:]
        var newest: UInt32 = 0
        for recorded in events {
            switch recorded.event {
            case .photosListed(let listing) where listing.collection < collection:
                listings[listing.collection] = listing.photos
                newest = max(newest, listing.collection)
            case .photoRemoved(_, let removedFrom, let slot, let photo):
                if let photo {
                    removed.insert(photo.remoteID)
                } else if let photos = listings[removedFrom], Int(slot) < photos.count {
                    removed.insert(photos[Int(slot)].remoteID)
                }
            default:
                break
            }
        }
        previous = Set((listings[newest] ?? []).map(\.remoteID))
    }

    /// The photos of `page` to list: never a removed one; none of the previous set when the
    /// page has others, else (a place with no others) the previous ones that were not removed.
    func choose(from photos: [FoundPhoto]) -> [FoundPhoto] {
        let allowed = photos.filter { !removed.contains($0.id) }
        let fresh = allowed.filter { !previous.contains($0.id) }
        return fresh.isEmpty ? allowed : fresh
    }
}
