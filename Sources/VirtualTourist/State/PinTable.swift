/// The pins of a state by id: a `[PinID: Pin]` cut into ``shardCount`` dictionaries, each
/// copy-on-write.
///
/// ```swift
/// var pins: PinTable = [:]
/// pins[id] = Pin(...)                 // pins.count == 1
/// pins[id]!.coordinate = place        // changed where it lies
/// pins.modify(id) { $0.album = Album() }
/// for (id, pin) in pins { ... }       // no particular order
/// ```
///
/// Why not a dictionary: the store publishes its state while the writer changes the next one,
/// so every commit's first change to the pins meets storage that the published state shares,
/// and a dictionary copies then every pin, with the retains of each album's slots (44 % of
/// the process in the commit case of docs/SYNC.md, growing with the map). Here a change copies
/// the list of shards and the one shard it lands in: a new pin on a map of 1,000 took 0.15–0.17
/// ms instead of 0.25–0.27 (docs/BENCHMARKS.md, "A commit on a large store").
/// A fold that owns its state (replay, a snapshot's load) changes every shard in place.
///
/// Complexity: as a dictionary's (lookups, inserts and removals O(1) on average); the first
/// change to a copy costs O(``shardCount`` + count / ``shardCount``).
public struct PinTable: Sendable {
    /// Empty until the first pin, then exactly ``shardCount`` long.
    private var shards: [[PinID: Pin]] = []

    /// How many dictionaries the pins are spread over: a map of thousands of pins copies tens
    /// of them per change instead of thousands.
    static let shardCount = 1 << shardBits
    private static let shardBits = 6

    /// Ids come from the system's generator, or in order from the tests' (1, 2, 3, …): the
    /// multiply spreads either over the top bits, which choose the shard.
    @inline(__always)
    private static func shard(of id: PinID) -> Int {
        Int(truncatingIfNeeded: (id.rawValue &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - shardBits))
    }

    public init() {}

    /// How many pins there are.
    public private(set) var count = 0

    public var isEmpty: Bool { count == 0 }

    /// The ids, in no particular order.
    public var keys: [PinID] { map(\.key) }

    /// The pins, in no particular order.
    public var values: [Pin] { map(\.value) }

    /// The pin `id`, or nil. Changing it through the subscript changes it where it lies
    /// (`pins[id]!.album.slots[3] = …` copies no slot); setting nil removes it.
    public subscript(id: PinID) -> Pin? {
        get { shards.isEmpty ? nil : shards[Self.shard(of: id)][id] }
        _modify {
            makeShards()
            let index = Self.shard(of: id)
            let before = shards[index].count
            defer { count += shards[index].count - before }
            yield &shards[index][id]
        }
    }

    /// Whether pin `id` is here.
    public func contains(_ id: PinID) -> Bool { !shards.isEmpty && shards[Self.shard(of: id)].index(forKey: id) != nil }

    /// What `read` makes of pin `id` read where it lies (no copy of its album), or nil when
    /// there is no such pin.
    public func read<Result>(_ id: PinID, _ read: (Pin) throws -> Result) rethrows -> Result? {
        guard !shards.isEmpty else { return nil }
        let shard = Self.shard(of: id)
        guard let index = shards[shard].index(forKey: id) else { return nil }
        return try read(shards[shard].values[index])
    }

    /// Changes pin `id` where it lies; nil, and nothing changed, when there is no such pin.
    @discardableResult
    public mutating func modify<Result>(_ id: PinID, _ change: (inout Pin) throws -> Result) rethrows -> Result? {
        guard !shards.isEmpty else { return nil }
        let shard = Self.shard(of: id)
        guard let index = shards[shard].index(forKey: id) else { return nil }
        return try change(&shards[shard].values[index])
    }

    /// Changes every pin where it lies.
    public mutating func modifyAll(_ change: (inout Pin) throws -> Void) rethrows {
        for shard in shards.indices {
            var index = shards[shard].values.startIndex
            while index != shards[shard].values.endIndex {
                try change(&shards[shard].values[index])
                shards[shard].values.formIndex(after: &index)
            }
        }
    }

    /// Sets pin `id` and returns the one it replaced, if any.
    @discardableResult
    public mutating func updateValue(_ pin: Pin, forKey id: PinID) -> Pin? {
        makeShards()
        let index = Self.shard(of: id)
        let old = shards[index].updateValue(pin, forKey: id)
        if old == nil { count += 1 }
        return old
    }

    /// Removes pin `id` and returns it, if it was here.
    @discardableResult
    public mutating func removeValue(forKey id: PinID) -> Pin? {
        guard !shards.isEmpty, let old = shards[Self.shard(of: id)].removeValue(forKey: id) else { return nil }
        count -= 1
        return old
    }

    /// Makes room for `capacity` pins in all, each shard for its share and a quarter more.
    public mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > 0 else { return }
        makeShards()
        let each = capacity / Self.shardCount * 5 / 4 + 1
        for index in shards.indices { shards[index].reserveCapacity(each) }
    }

    /// Each pin's `transform`, by id.
    public func mapValues<T>(_ transform: (Pin) throws -> T) rethrows -> [PinID: T] {
        var mapped: [PinID: T] = [:]
        mapped.reserveCapacity(count)
        for shard in shards {
            for (id, pin) in shard { mapped[id] = try transform(pin) }
        }
        return mapped
    }

    private mutating func makeShards() {
        if shards.isEmpty { shards = Array(repeating: [:], count: Self.shardCount) }
    }
}

extension PinTable: Sequence {
    public typealias Iterator = FlattenSequence<[[PinID: Pin]]>.Iterator

    /// Each id and its pin, shard by shard (no particular order).
    public func makeIterator() -> Iterator { shards.joined().makeIterator() }

    public var underestimatedCount: Int { count }
}

extension PinTable: Hashable {
    /// The same pins. A pin's shard is fixed by its id, so equal tables have equal shards.
    public static func == (a: PinTable, b: PinTable) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        return a.shards == b.shards
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for shard in shards where !shard.isEmpty { hasher.combine(shard) }
    }
}

extension PinTable: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (PinID, Pin)...) {
        self.init()
        for (id, pin) in elements {
            let replaced = updateValue(pin, forKey: id)
            precondition(replaced == nil, "pin \(id) is named twice in the literal")
        }
    }
}
