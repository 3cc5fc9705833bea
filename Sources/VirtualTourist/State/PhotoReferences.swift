import BlobStore

/// How many album slots hold each photo digest: the roots for photo garbage collection.
///
/// ```swift
/// var references: PhotoReferences = [:]
/// references.add(digest)          // references[digest] == 1
/// references.add(digest)          // 2
/// references.release(digest)      // 1
/// references.release(digest)      // nil: no slot holds it
/// ```
///
/// Reads like the `[PhotoDigest: Int]` it replaces (subscripts, `count`, `keys`, a dictionary
/// literal), but is built for the two places that touch it per photo: loading a snapshot adds
/// every downloaded photo of the state (130,000 of them in the benchmark store), and the fold
/// adds one per download. With a `Dictionary` each of those cost a SipHash of 32 bytes and a
/// probe, a fifth of the snapshot's load (docs/BENCHMARKS.md). Here a digest is placed by its
/// own bits (``BlobStore/BlobDigest/foldedWord`` times a constant, the top bits kept: a SHA-256
/// needs no further hashing), in one flat array probed linearly, and removal shifts the run
/// back instead of leaving tombstones, so a long fold of adds and releases never slows it.
///
/// Complexity: `add`, `release` and lookups are O(1) on average (the table is at most three
/// quarters full); growing rehashes in O(count). Equality and hashing are O(count).
public struct PhotoReferences: Sendable {
    /// A slot of the table; `count == 0` marks it free.
    struct Entry: Sendable {
        var digest: PhotoDigest
        var count: Int
    }

    /// A power of two long (or empty before the first add).
    private var entries: [Entry] = []
    /// 64 minus the number of bits that index `entries`.
    private var shift: UInt64 = 64
    /// How many digests are referenced.
    public private(set) var count = 0

    public init() {}

    /// An empty table that holds `capacity` digests without growing.
    public init(minimumCapacity capacity: Int) {
        reserveCapacity(capacity)
    }

    public var isEmpty: Bool { count == 0 }

    /// The digests referenced, in no particular order.
    public var keys: [PhotoDigest] { map(\.digest) }

    /// Makes room for `capacity` digests in all without growing again.
    public mutating func reserveCapacity(_ capacity: Int) {
        var size = 8
        while size * 3 < capacity * 4 { size *= 2 }
        if size > entries.count { rehash(size) }
    }

    /// How many slots hold `digest`; nil when none does. Setting nil (or a count of 0) forgets it.
    public subscript(digest: PhotoDigest) -> Int? {
        get {
            guard let (index, found) = find(digest), found else { return nil }
            return entries[index].count
        }
        set {
            guard let newValue, newValue != 0 else {
                if let (index, found) = find(digest), found { remove(at: index) }
                return
            }
            precondition(newValue > 0, "a reference count cannot be negative")
            let index = slot(for: digest)
            if entries[index].count == 0 { count += 1 }
            entries[index] = Entry(digest: digest, count: newValue)
        }
    }

    /// The count, or `defaultValue` where there is none (as with a dictionary).
    public subscript(digest: PhotoDigest, default defaultValue: @autoclosure () -> Int) -> Int {
        get { self[digest] ?? defaultValue() }
        set { self[digest] = newValue }
    }

    /// One more slot holds `digest`.
    public mutating func add(_ digest: PhotoDigest) {
        let index = slot(for: digest)
        if entries[index].count == 0 {
            entries[index] = Entry(digest: digest, count: 1)
            count += 1
        } else {
            entries[index].count += 1
        }
    }

    /// One slot fewer holds `digest`; at none it leaves the table. Nothing for an unknown digest.
    public mutating func release(_ digest: PhotoDigest) {
        guard let (index, found) = find(digest), found else { return }
        if entries[index].count > 1 {
            entries[index].count -= 1
        } else {
            remove(at: index)
        }
    }

    // MARK: - The table

    private func home(_ digest: PhotoDigest) -> Int {
        // Fibonacci hashing: the multiply spreads digests that differ in few bits (the tests'
        // made-up ones) over the top bits, which index the table.
        Int(truncatingIfNeeded: (digest.foldedWord &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// Where `digest` is, or the free slot where it would go; nil while the table is empty.
    private func find(_ digest: PhotoDigest) -> (index: Int, found: Bool)? {
        guard !entries.isEmpty else { return nil }
        return entries.withUnsafeBufferPointer { buffer in
            let mask = buffer.count - 1
            var index = home(digest)
            // Ends: the table is never full.
            while true {
                if buffer[index].count == 0 { return (index, false) }
                if buffer[index].digest == digest { return (index, true) }
                index = (index + 1) & mask
            }
        }
    }

    /// Where `digest` is or will go, growing the table first when one more would fill it past
    /// three quarters.
    private mutating func slot(for digest: PhotoDigest) -> Int {
        if (count + 1) * 4 > entries.count * 3 { rehash(Swift.max(8, entries.count * 2)) }
        return find(digest)!.index
    }

    private mutating func rehash(_ size: Int) {
        let old = entries
        entries = Array(repeating: Entry(digest: Self.vacant, count: 0), count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        for entry in old where entry.count != 0 {
            entries[find(entry.digest)!.index] = entry
        }
    }

    /// Empties slot `hole` and moves later entries of its run back into it, so that every entry
    /// stays reachable from its home without tombstones: an entry moves when the hole lies
    /// between its home and where it sits (counted around the end of the array).
    private mutating func remove(at hole: Int) {
        let mask = entries.count - 1
        var hole = hole
        var index = hole
        while true {
            index = (index + 1) & mask
            if entries[index].count == 0 { break }
            let start = home(entries[index].digest)
            if (index - start) & mask >= (index - hole) & mask {
                entries[hole] = entries[index]
                hole = index
            }
        }
        entries[hole] = Entry(digest: Self.vacant, count: 0)
        count -= 1
    }

    /// What a free slot holds; never compared, since `count == 0` marks the slot free.
    private static let vacant = PhotoDigest(bytes: repeatElement(0, count: 32))!
}

extension PhotoReferences: Sequence {
    /// Each digest referenced and its count, in table order (no particular order).
    public struct Iterator: IteratorProtocol {
        fileprivate var base: IndexingIterator<[Entry]>

        public mutating func next() -> (digest: PhotoDigest, count: Int)? {
            while let entry = base.next() {
                if entry.count != 0 { return (entry.digest, entry.count) }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(base: entries.makeIterator()) }

    public var underestimatedCount: Int { count }
}

extension PhotoReferences: Hashable {
    /// The same digests with the same counts, wherever they sit in either table.
    public static func == (a: PhotoReferences, b: PhotoReferences) -> Bool {
        guard a.count == b.count else { return false }
        return a.allSatisfy { b[$0.digest] == $0.count }
    }

    public func hash(into hasher: inout Hasher) {
        // Independent of order: equal tables may place their entries differently.
        var sum: UInt64 = 0
        for (digest, count) in self {
            var entry = Hasher()
            entry.combine(digest)
            entry.combine(count)
            sum &+= UInt64(UInt(bitPattern: entry.finalize()))
        }
        hasher.combine(count)
        hasher.combine(sum)
    }
}

extension PhotoReferences: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (PhotoDigest, Int)...) {
        self.init(minimumCapacity: elements.count)
        for (digest, count) in elements { self[digest] = count }
    }
}

extension PhotoReferences: CustomStringConvertible {
    public var description: String {
        "[" + map { "\($0.digest): \($0.count)" }.sorted().joined(separator: ", ") + "]"
    }
}
