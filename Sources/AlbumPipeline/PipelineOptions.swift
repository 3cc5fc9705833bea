import Synchronization

/// How an ``AlbumPipeline`` works.
public struct PipelineOptions: Sendable {
    /// Photos per album (one result page): 1 to 250, Flickr's limit for a geo search.
    public var perPage = 21
    /// Images downloaded at once, across all albums.
    public var concurrentDownloads = 6
    /// Request a pin's album as soon as it settles (dropped, or released after a drag),
    /// before anyone opens it.
    public var prefetch = true
    /// The random numbers New Collection pages are chosen with (nil: the system's). Tests pass
    /// a seeded generator to get the same pages every run.
    public var pageNumbers: (any RandomNumberGenerator & Sendable)?

    public init() {}

    /// Why these options cannot be used, or nil.
    public var problem: String? {
        if !(1...250).contains(perPage) { return "an album holds 1 to 250 photos, not \(perPage)" }
        if !(1...64).contains(concurrentDownloads) {
            return "downloads at once must be 1 to 64, not \(concurrentDownloads)"
        }
        return nil
    }
}

/// Random numbers for page choice: the options' generator, or the system's.
struct PageRandom: RandomNumberGenerator {
    var given: (any RandomNumberGenerator & Sendable)?

    mutating func next() -> UInt64 {
        guard var generator = given else {
            var system = SystemRandomNumberGenerator()
            return system.next()
        }
        defer { given = generator }
        return generator.next()
    }
}

/// One generator shared by the actions that choose pages.
final class SharedRandom: Sendable {
    let generator: Mutex<PageRandom>
    init(_ generator: PageRandom) { self.generator = Mutex(generator) }
}

/// How much work a pipeline has in flight.
public struct PipelineActivity: Hashable, Sendable {
    /// Pre-fetch requests being appended.
    public var requests = 0
    /// Searches waiting for the photo service.
    public var searches = 0
    /// Photos being downloaded or waiting for their turn.
    public var downloads = 0
    /// Of `downloads`, those waiting for their turn (without a task until it comes).
    public var downloadsWaiting = 0

    public init() {}

    public var isIdle: Bool { requests == 0 && searches == 0 && downloads == 0 }
}
