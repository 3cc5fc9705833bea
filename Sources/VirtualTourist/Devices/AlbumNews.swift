import DeviceLogs
import EventLog

/// What a merge changed in a pin's album as this device's person last saw it (docs/DEVICES.md,
/// "Time travel and audit"; the album page shows it once): the other devices' events about the
/// pin that this device had not seen when it last acted on the pin, each with whether the fold
/// took it, and this device's own events about the pin that the fold passed over because of
/// them (a New Collection that lost to the laptop's).
public struct AlbumNews: Sendable, Hashable {
    public struct Change: Sendable, Hashable {
        public var event: RecordedEvent
        /// Whether the merged fold took it (a drag of a pin this device removed is passed over).
        public var folded: Bool
    }

    /// Other devices' events about the pin, in the merged order.
    public var theirs: [Change] = []
    /// This device's events about the pin, at or after the first of ``theirs``, that the fold
    /// passed over.
    public var oursPassedOver: [RecordedEvent] = []

    public var isEmpty: Bool { theirs.isEmpty }
}

extension StoreReader {
    /// ``AlbumNews`` for `pin`; empty for a store of one device and when this device had seen
    /// everything the others did to the pin.
    ///
    /// Cost: the pin's history (read by its key summaries), the state where this device last
    /// acted on the pin, and, when there is news, a replay from the first of it to the end.
    public func albumNews(for pin: PinID) throws -> AlbumNews {
        guard let merged else { return AlbumNews() }
        let story = try history(of: pin)
        let local = merged.local
        let ownLast = story.last { $0.origin?.device == local }
        let seen = try ownLast.map { try state(at: $0.sequence).devicesSeen[local] ?? [:] } ?? [:]
        let theirs = story.filter { recorded in
            guard let origin = recorded.origin, origin.device != local else { return false }
            return origin.sequence > seen[origin.device] ?? 0
        }
        guard let first = theirs.first else { return AlbumNews() }
        var news = AlbumNews()
        let theirPositions = Set(theirs.map(\.sequence))
        let wanted = Set(story.lazy.filter { $0.sequence >= first.sequence }.map(\.sequence))
        var fold = try state(at: first.sequence - 1)
        do {
            try merged.forEach(from: first.sequence) { recorded in
                let ignored = fold.ignoredEvents
                fold.apply(recorded)
                guard wanted.contains(recorded.sequence), let origin = recorded.origin else { return }
                let folded = fold.ignoredEvents == ignored
                if origin.device != local {
                    if theirPositions.contains(recorded.sequence) { news.theirs.append(AlbumNews.Change(event: recorded, folded: folded)) }
                } else if !folded {
                    news.oursPassedOver.append(recorded)
                }
            }
        } catch {
            throw TouristStore.storageError(error, "the news of pin \(pin)'s album cannot be read")
        }
        return news
    }
}
