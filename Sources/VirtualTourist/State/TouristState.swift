import DeviceLogs
import EventLog

/// Everything the app shows, as the fold of the log's events 1 through ``sequence``.
///
/// ```swift
/// var state = TouristState()
/// for event in events { state.apply(event) }
/// state.pins[pin]?.album.status          // .downloading(done: 3, of: 21)
/// state.referencedDigests                // the roots for photo garbage collection
/// ```
///
/// A value: copies are cheap until changed (the collections inside are copy-on-write), so a
/// reader can keep the state of a moment while the store moves on.
public struct TouristState: Hashable, Sendable {
    /// The last event folded in (0 for the empty state).
    public internal(set) var sequence: UInt64 = 0
    /// Where the map was left; nil until it was first moved.
    public internal(set) var region: MapRegion?
    public internal(set) var pins: PinTable = [:]
    /// How many album slots hold each photo digest. Its keys are the blobs in use.
    public internal(set) var photoReferences = PhotoReferences()
    /// Events that did not apply when folded (always 0 for a log written through the store's
    /// rules; counted, not fatal, so that an imported or foreign log still opens).
    public internal(set) var ignoredEvents: UInt64 = 0
    /// The device whose state this is, in a store of several devices (nil in a store of one):
    /// the map region is its own (docs/DEVICES.md, "Rules by intent").
    public internal(set) var localDevice: DeviceID?
    /// The pins a `PlaceForgotten` named among the events folded (whether or not this store
    /// knew the pin): what a sync takes erased when another device sends it (docs/DEVICES.md,
    /// "Forgetting a place on several devices").
    public internal(set) var forgottenPins: Set<PinID> = []
    /// In a store of several devices: for each device that wrote a `DeviceSeen`, the greatest
    /// sequence number it named of each other device (docs/DEVICES.md): what a device's next
    /// record need not say again.
    public internal(set) var devicesSeen: [DeviceID: [DeviceID: UInt64]] = [:]

    public init() {}

    /// An empty state of `device`, for a merged fold.
    public init(localDevice: DeviceID?) { self.localDevice = localDevice }

    /// One entry of ``devicesSeen``.
    public struct SeenDevice: Hashable, Sendable {
        public var by: DeviceID
        public var device: DeviceID
        public var through: UInt64
    }

    /// ``devicesSeen`` in the order a snapshot keeps it: by `by`, then `device`.
    public var devicesSeenInOrder: [SeenDevice] {
        devicesSeen.sorted { $0.key < $1.key }.flatMap { by, seen in
            seen.sorted { $0.key < $1.key }.map { SeenDevice(by: by, device: $0.key, through: $0.value) }
        }
    }

    /// The pins, oldest first.
    public var pinsInDropOrder: [Pin] { pins.values.sorted { $0.droppedAt < $1.droppedAt } }

    /// The digests of every photo in an album: the roots for garbage collection.
    public var referencedDigests: Set<PhotoDigest> { Set(photoReferences.keys) }
}

/// A pin on the map and its album.
public struct Pin: Hashable, Sendable {
    public let id: PinID
    public internal(set) var coordinate: Coordinate
    /// The sequence number of its PinDropped.
    public let droppedAt: UInt64
    public internal(set) var album: Album
    /// The photos removed from any of its collections, by ``PhotoIdentity/key``: none of them
    /// is placed in a later collection (docs/DEVICES.md, "Rules by intent").
    public internal(set) var removedPhotos: Set<UInt64> = []
}

/// A pin's photo album: one collection at a time.
public struct Album: Hashable, Sendable {
    /// Where the current collection is in its life.
    public enum Phase: Hashable, Sendable {
        /// Nothing asked for yet (a new pin, or just after New Collection or a move).
        case notRequested
        /// Asked for; the photo service has not answered yet.
        case listing
        /// The service listed the photos; each slot is a placeholder until downloaded or failed.
        case listed
        /// The service could not answer.
        case failed(reason: String)
    }

    /// The collection (generation) shown: 1 for a pin's first album, one more after each New
    /// Collection or move. Results for any other collection are stale.
    public internal(set) var collection: UInt32 = 1
    public internal(set) var phase: Phase = .notRequested
    /// The current collection's request, once made.
    public internal(set) var request: AlbumRequest?
    /// The device whose AlbumRequested the current collection answers, in a store of several
    /// devices: only that device's results are folded (nil in a store of one).
    public internal(set) var requestedBy: DeviceID?
    /// The sequence numbers of its AlbumRequested and PhotosListed.
    public internal(set) var requestedAt: UInt64?
    public internal(set) var listedAt: UInt64?
    /// From the listing: how many result pages and photos the search has in all.
    public internal(set) var pages: UInt32 = 0
    public internal(set) var total: UInt64 = 0
    /// The photos, in album order; removed ones are gone and the rest moved up.
    public internal(set) var slots: [PhotoSlot] = []

    public init(collection: UInt32 = 1) { self.collection = collection }

    /// What to show.
    public var status: AlbumStatus {
        if case .listed = phase { return status(slotCounts) }
        return status((resolved: 0, downloaded: 0))
    }

    /// What to show, from the album's ``slotCounts`` taken already (one pass over the slots
    /// for both, where both are wanted).
    public func status(_ counts: (resolved: Int, downloaded: Int)) -> AlbumStatus {
        switch phase {
        case .notRequested: return .notRequested
        case .listing: return .listing
        case .failed(let reason): return .failed(reason: reason)
        case .listed:
            if listedPhotoCount == 0 { return .noImages }
            guard counts.resolved == slots.count else { return .downloading(done: counts.resolved, of: slots.count) }
            // Every photo failed: the album has nothing to show and says so, with Try again,
            // rather than "complete" with none of them.
            if counts.downloaded == 0, !slots.isEmpty { return .failed(reason: Self.noneDownloaded(slots.count)) }
            return .complete
        }
    }

    /// The reason an album none of whose photos could be downloaded gives.
    static func noneDownloaded(_ count: Int) -> String {
        count == 1 ? "its photo could not be downloaded" : "none of its \(count) photos could be downloaded"
    }

    /// How many slots are resolved (downloaded or failed) and how many downloaded, in one pass
    /// that reads each slot where it lies: counting through the array's iterator copied every
    /// slot, retaining and releasing its texts (docs/BENCHMARKS-JOURNAL.md, "The map's answer").
    public var slotCounts: (resolved: Int, downloaded: Int) {
        slots.withUnsafeBufferPointer { buffer in
            var resolved = 0
            var downloaded = 0
            for index in buffer.indices {
                switch buffer[index].state {
                case .placeholder: break
                case .downloaded: resolved += 1; downloaded += 1
                case .failed: resolved += 1
                }
            }
            return (resolved, downloaded)
        }
    }

    /// How many photos the listing had (before any were removed).
    public internal(set) var listedPhotoCount = 0

    /// New Collection is enabled once nothing is being listed or downloaded.
    public var isNewCollectionEnabled: Bool { status.allowsNewCollection }

    /// Whether the album is being listed or downloaded for a request another device than
    /// `device` made: only that device answers it (docs/DEVICES.md, "Rules by intent"), so on
    /// `device` it waits until that device has the photos and a sync brings them. False in a
    /// store of one device (`device` nil).
    public func awaitsAnotherDevice(than device: DeviceID?) -> Bool {
        guard let device, let asked = requestedBy, asked != device else { return false }
        switch status {
        case .listing, .downloading: return true
        default: return false
        }
    }

    /// New Collection on `device`: once nothing is being listed or downloaded, or while what is
    /// awaits another device (a New Collection here then asks for photos on this device).
    public func allowsNewCollection(on device: DeviceID?) -> Bool {
        isNewCollectionEnabled || awaitsAnotherDevice(than: device)
    }

    /// Whether the photo service has photos beyond this listing, so that New Collection can
    /// show others: false once a listing holds all the service has for the place (one page of
    /// 15, say). True before the listing and for "No Images", where asking again may find some.
    public var hasOtherPhotos: Bool {
        guard case .listed = phase, listedPhotoCount > 0 else { return true }
        return total > UInt64(listedPhotoCount)
    }

    /// The slot with this number (its position in the listing), if still in the album.
    public func slot(_ number: UInt32) -> PhotoSlot? {
        position(of: number).map { slots[$0] }
    }

    /// Slots stay sorted by number (removal keeps order), so this is a binary search. Numbers
    /// start at 0 and never repeat, so a slot sits at or before its number: where no photo
    /// was removed, exactly there, found with one look (most downloads).
    func position(of number: UInt32) -> Int? {
        if Int(number) < slots.count, slots[Int(number)].number == number { return Int(number) }
        var low = 0
        var high = min(slots.count, Int(number))
        while low < high {
            let middle = (low + high) / 2
            if slots[middle].number < number { low = middle + 1 } else { high = middle }
        }
        return low < slots.count && slots[low].number == number ? low : nil
    }
}

/// What an album shows, in the words of the spec.
public enum AlbumStatus: Hashable, Sendable, CustomStringConvertible {
    case notRequested
    case listing
    case downloading(done: Int, of: Int)
    case complete
    /// The search found no photos: the album says "No Images".
    case noImages
    case failed(reason: String)

    /// Whether New Collection may be asked for: once nothing is being listed or downloaded.
    public var allowsNewCollection: Bool {
        switch self {
        case .complete, .noImages, .failed: true
        case .notRequested, .listing, .downloading: false
        }
    }

    public var description: String {
        switch self {
        case .notRequested: "not requested"
        case .listing: "listing"
        case .downloading(let done, let total): "downloading \(done) of \(total)"
        case .complete: "complete"
        case .noImages: "no images"
        case .failed(let reason): "failed: \(reason)"
        }
    }
}

/// One photo of an album.
public struct PhotoSlot: Hashable, Sendable {
    public enum State: Hashable, Sendable {
        case placeholder
        case downloaded(digest: PhotoDigest, byteCount: UInt64, mediaType: String)
        case failed(reason: String)
    }

    /// Its position in the listing (from 0): the photo's id within its collection.
    public let number: UInt32
    public let photo: ListedPhoto
    public internal(set) var state: State
    /// The sequence number of its PhotoDownloaded or PhotoDownloadFailed.
    public internal(set) var resolvedAt: UInt64?

    public var isResolved: Bool {
        if case .placeholder = state { return false }
        return true
    }

    public var digest: PhotoDigest? {
        if case .downloaded(let digest, _, _) = state { return digest }
        return nil
    }
}

extension TouristState {
    /// Empties every album and, with them, the photo references: the state a snapshot's pins
    /// alone describe (``SnapshotFile``'s pins-only load).
    mutating func emptyAlbums() {
        pins.modifyAll { $0.album = Album() }
        photoReferences = PhotoReferences()
    }
}
