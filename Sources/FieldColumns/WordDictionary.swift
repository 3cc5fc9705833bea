import EventLog
import Foundation

/// The words a words field has named in a block: an open-addressing table of their FNV-1a
/// hashes (a Swift dictionary would hash each key again with SipHash), every hit checked byte
/// for byte.
struct WordDictionary {
    /// Per slot: a word's index + 1, or 0 for none. Never more than half full.
    private var slots = [UInt32](repeating: 0, count: 64)
    private var hashes: [UInt64] = []
    private var starts: [Int] = [0]
    private var text: [UInt8] = []

    /// The word's index, and whether it was new (then it has the next index).
    mutating func index(of word: UnsafeRawBufferPointer) -> (UInt64, Bool) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in word { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        var slot = self.slot(hash)
        while slots[slot] != 0 {
            let index = Int(slots[slot] - 1)
            if hashes[index] == hash, isWord(index, word) { return (UInt64(index), false) }
            slot = (slot + 1) & (slots.count - 1)
        }
        let index = hashes.count
        hashes.append(hash)
        text.append(contentsOf: word)
        starts.append(text.count)
        slots[slot] = UInt32(index + 1)
        if hashes.count * 2 > slots.count { grow() }
        return (UInt64(index), true)
    }

    @inline(__always)
    private func slot(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash ^ hash >> 32) & (slots.count - 1) }

    private func isWord(_ index: Int, _ word: UnsafeRawBufferPointer) -> Bool {
        let start = starts[index], count = starts[index + 1] - start
        guard count == word.count else { return false }
        return count == 0 || text.withUnsafeBytes { memcmp($0.baseAddress! + start, word.baseAddress!, count) == 0 }
    }

    private mutating func grow() {
        slots = [UInt32](repeating: 0, count: slots.count * 2)
        for (index, hash) in hashes.enumerated() {
            var slot = self.slot(hash)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = UInt32(index + 1)
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `range` of `bytes`: the typed buffer takes the standard library's plain copy,
    /// where a raw buffer's slice goes through the general sequence path.
    @inline(__always)
    mutating func appendBytes(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
        append(contentsOf: UnsafeBufferPointer(start: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count))
    }
}

// MARK: Parsing
