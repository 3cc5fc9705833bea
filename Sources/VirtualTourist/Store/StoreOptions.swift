import BlobStore
import EventLog

/// How a ``TouristStore`` is opened.
public struct StoreOptions: Sendable {
    /// The log's settings: durability (`.always` by default), the clock, sizes, and the codec
    /// of its blocks (the field columns by default; nil keeps blocks in zstd alone).
    public var log = LogConfiguration.touristStore
    /// Where new pin ids come from.
    public var pinIDs: any PinIDGenerator = RandomPinIDs()
    /// A snapshot is written when the log passes each multiple of this many events, and on
    /// close. Opening replays at most about this many events after the newest snapshot.
    public var snapshotInterval: UInt64 = 10_000
    /// Create the folder and a new store when there is none.
    public var createIfMissing = true
    /// The photo blobs: size limit, accepted types, grace period (docs/BLOBS.md).
    public var blobs = BlobStoreOptions()
    /// How far back history keeps its images: a photo removed (or replaced, or of a removed
    /// pin) keeps its blob this long, so recent time travel shows it and an undo could bring
    /// it back. Older states show the photo's details and say its image was collected.
    public var retention: Duration = .seconds(24 * 3600)
    /// How often the store collects unused photo blobs while open; nil: only when asked.
    public var collectionInterval: Duration? = .seconds(600)
    /// Set for a read-only replica (docs/REPLICATION.md, "Follow"): what it follows, named in the
    /// message that refuses every action. Events then come only through
    /// ``TouristStore/appendReplicated(_:)``.
    public var replicaOf: String? = nil
    /// For a replica of a map of several devices (`vt follow` of such a map: docs/SYNC.md,
    /// "Following a map"): its own log stays empty, and every device's events come through
    /// ``TouristStore/take(_:from:identity:head:)``, which a replica otherwise refuses.
    public var replicaTakesOtherDevices = false

    public init() {}
}

/// What opening a store found and did.
public struct OpenReport: Sendable {
    /// The log's own recovery (a torn tail cut, indexes rebuilt).
    public var logRecovery: RecoveryReport
    /// The sequence of the snapshot the state started from (nil: replayed from the start).
    public var snapshot: UInt64?
    /// Snapshots found but not used, and why.
    public var skippedSnapshots: [SkippedSnapshot]
    /// How many events were replayed on top of the snapshot.
    public var replayedEvents: UInt64
    /// How long opening took.
    public var duration: Duration
}

/// One group of events the store accepted, with the state after them; or, with no events,
/// the photos whose bytes a sync stored after the events that name them were shown
/// (``TouristStore/photosArrived(_:)``).
public struct StoreChange: Sendable {
    public var events: [RecordedEvent]
    public var state: TouristState
    public var photosArrived: Set<PhotoDigest> = []
    /// When events taken from another device sorted before events folded earlier: the first
    /// position of the merged order that changed (the history up to any later point is not what
    /// it was). nil when the events come after every earlier one.
    public var historyChangedFrom: UInt64?
}

/// An event an action proposes; its cause may point at an earlier event of the same action.
struct ProposedEvent {
    enum Cause {
        case none
        case sequence(UInt64)
        /// The event at this position in the same action.
        case earlierInAction(Int)
    }

    var event: DomainEvent
    var cause: Cause = .none
}
