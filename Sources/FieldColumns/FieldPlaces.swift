import EventLog
/// The places columns belong to in codec 2 (FORMAT.md, "Which column"), numbered the same way
/// by the writer and the reader: a place is created the first time the shape uses it, and a
/// place that holds values gets the next column number.
///
/// Children are kept in small arrays searched in order: a message has a handful of fields,
/// and a short scan beats hashing a key for every field of every event.
struct FieldPlaces {
    enum Role: UInt8 {
        case numeric, bytes, decimal, wordCount, wordIndex, newWord, template, markerDecimal, markerHex, message, opaque

        /// Whether the role's column is a bytes column (lengths, then bytes).
        var holdsBytes: Bool { self == .bytes || self == .newWord || self == .template || self == .opaque }
        var holdsValues: Bool { self != .message }
    }

    struct Key: Equatable {
        var tag: UInt32
        var kind: UInt8
        var role: Role
        var marker: Int
    }

    /// The top of every payload: its fields and the opaque column hang here.
    static let root = 0

    /// Per place: its key, its first child and its next sibling (−1 for none), in flat arrays
    /// so that a lookup walks a short list without touching reference counts.
    private var keys: [Key] = [Key(tag: 0, kind: 0, role: .message, marker: 0)]
    private var firstChild: [Int32] = [-1]
    private var nextSibling: [Int32] = [-1]
    /// Per place: its column number, or −1 for a message or the root.
    private(set) var columns: [Int] = [-1]
    /// Per column (0 is the shape): whether it is a bytes column.
    private(set) var columnHoldsBytes: [Bool] = [false]

    var columnCount: Int { columnHoldsBytes.count }

    /// A direct-mapped cache in front of the lists: the same few places are asked for in the
    /// same order event after event.
    private var cacheParents = [Int32](repeating: -1, count: 256)
    private var cacheKeys = [Key](repeating: Key(tag: 0, kind: 0, role: .message, marker: 0), count: 256)
    private var cachePlaces = [Int32](repeating: 0, count: 256)

    /// The place `key` under `parent`, created (with a column, if it holds values) when new.
    @inline(__always)
    mutating func place(_ key: Key, under parent: Int) -> Int {
        let slot = Int(truncatingIfNeeded: (UInt32(truncatingIfNeeded: parent) &* 0x9E37_79B1 ^ key.tag &* 0x85EB_CA6B
            ^ UInt32(key.role.rawValue) &* 0xC2B2_AE35 ^ UInt32(truncatingIfNeeded: key.marker) &* 0x27D4_EB2F) >> 24)
        if cacheParents[slot] == Int32(truncatingIfNeeded: parent), cacheKeys[slot] == key { return Int(cachePlaces[slot]) }
        let found = lookUp(key, under: parent)
        cacheParents[slot] = Int32(truncatingIfNeeded: parent)
        cacheKeys[slot] = key
        cachePlaces[slot] = Int32(truncatingIfNeeded: found)
        return found
    }

    private mutating func lookUp(_ key: Key, under parent: Int) -> Int {
        var child = firstChild[parent]
        var last: Int32 = -1
        while child >= 0 {
            if keys[Int(child)] == key { return Int(child) }
            last = child
            child = nextSibling[Int(child)]
        }
        let place = keys.count
        keys.append(key)
        firstChild.append(-1)
        nextSibling.append(-1)
        if last >= 0 { nextSibling[Int(last)] = Int32(place) } else { firstChild[parent] = Int32(place) }
        if key.role.holdsValues {
            columns.append(columnHoldsBytes.count)
            columnHoldsBytes.append(key.role.holdsBytes)
        } else {
            columns.append(-1)
        }
        return place
    }

    @inline(__always)
    mutating func column(_ key: Key, under parent: Int) -> Int { columns[place(key, under: parent)] }
}

/// Protobuf wire-format facts the field form relies on.
enum WireFormat {
    static let varint: UInt32 = 0
    static let fixed64: UInt32 = 1
    static let lengthDelimited: UInt32 = 2
    static let fixed32: UInt32 = 5

    /// Codec 2's `kind` byte for a length-delimited field.
    enum Kind: UInt8 {
        case message = 1, bytes = 2, decimal = 3, words = 4, template = 5
    }

    /// Template markers (FORMAT.md, "Codec 2": templates).
    static let decimalMarker: UInt8 = 0x01
    static let repeatMarker: UInt8 = 0x02
    static let hexMarker: UInt8 = 0x03

    /// A field form has at most this many columns, the shape included (FORMAT.md).
    static let maxColumns = 1 << 20

    /// Messages nest at most this deep, the payload's top counting as 1.
    static let maxDepth = 16
}
