import EventLog
import Foundation

// The two kinds of value column of codec 2 (FORMAT.md, "Codec 2: field columns"): numeric
// columns, stored as byte planes of values or of zigzagged deltas, and bytes columns, a
// numeric column of lengths followed by the bytes.

/// Values gathered for one column while a block is encoded.
struct FieldColumnBuilder {
    var numbers: [UInt64] = []
    /// Bytes columns only: the values back to back (`numbers` holds their lengths).
    var bytes: [UInt8] = []

    mutating func appendBytes<C: Collection>(_ value: C) where C.Element == UInt8 {
        numbers.append(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends the column as FORMAT.md lays it out.
    func encode(isBytes: Bool, into output: inout [UInt8]) {
        Self.encodeNumbers(numbers, into: &output)
        if isBytes { output.append(contentsOf: bytes) }
    }

    /// `count`, `mode`, `width`, then the planes, in whichever mode has the lower byte entropy.
    static func encodeNumbers(_ values: [UInt64], into output: inout [UInt8]) {
        var deltas = [UInt64](repeating: 0, count: values.count)
        var previous: UInt64 = 0
        for (index, value) in values.enumerated() {
            let delta = Int64(bitPattern: value &- previous)
            deltas[index] = UInt64(bitPattern: (delta << 1) ^ (delta >> 63))
            previous = value
        }
        let (plainWidth, plainBits) = planeCost(values)
        let (deltaWidth, deltaBits) = planeCost(deltas)
        let useDeltas = deltaBits < plainBits
        let stored = useDeltas ? deltas : values
        let width = useDeltas ? deltaWidth : plainWidth
        output.appendVarint(UInt64(values.count))
        output.append(useDeltas ? 1 : 0)
        output.append(UInt8(width))
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: width * stored.count))
        output.withUnsafeMutableBufferPointer { buffer in
            for plane in 0..<width {
                let base = start + plane * stored.count
                let shift = UInt64(plane * 8)
                for (index, value) in stored.enumerated() { buffer[base + index] = UInt8(truncatingIfNeeded: value >> shift) }
            }
        }
    }

    /// The bytes a number needs at most, and the order-0 entropy of its planes in bits: about
    /// what zstd's Huffman stage will make of them.
    private static func planeCost(_ values: [UInt64]) -> (width: Int, bits: Double) {
        let all = values.reduce(0, |)
        let width = (64 - all.leadingZeroBitCount + 7) / 8
        guard !values.isEmpty else { return (width, 0) }
        var bits = 0.0
        var counts = [Int](repeating: 0, count: 256)
        // An even sample of about 1,024 values tells the modes apart as well as all of them.
        let step = max(1, values.count / 1_024)
        let total = Double((values.count + step - 1) / step)
        for plane in 0..<width {
            for index in counts.indices { counts[index] = 0 }
            let shift = UInt64(plane * 8)
            for index in stride(from: 0, to: values.count, by: step) {
                counts[Int(truncatingIfNeeded: (values[index] >> shift) & 0xFF)] += 1
            }
            for count in counts where count > 0 {
                let share = Double(count) / total
                bits -= Double(count) * log2(share)
            }
        }
        return (width, bits)
    }
}

/// A column of the field form being read. Values are taken from the planes as they are asked
/// for, not decoded into an array first: the planes are a quarter of the size, and a block's
/// decoded columns would not stay in the cache between being written and being read.
struct FieldColumnReader {
    private var form: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    private var planes = 0
    private var width = 0
    private var count = 0
    private var isDelta = false
    private var next = 0
    private var previous: UInt64 = 0
    /// Bytes columns: the next byte to hand out, and the column's end, in the field form.
    private var byteNext = 0
    private var byteEnd = 0

    /// A column not read yet.
    init() {}

    /// Reads a column occupying `range` of `form`. `isBytes` columns must end where their
    /// lengths add up to, numeric ones right after their planes. Each value rebuilds at least
    /// one byte of the raw payload, so a column holds at most `limit` (its raw length) values.
    init(_ form: UnsafeRawBufferPointer, range: Range<Int>, isBytes: Bool, limit: Int) throws(DamageReason) {
        var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: form[..<range.upperBound]), position: range.lowerBound)
        guard let count = cursor.readVarint(), cursor.remaining >= 2 else {
            throw DamageReason("a column without its count, mode and width")
        }
        let mode = form[cursor.position]
        let width = Int(form[cursor.position + 1])
        cursor.position += 2
        guard mode <= 1 else { throw DamageReason("a numeric column of unknown mode \(mode)") }
        guard width <= 8 else { throw DamageReason("a numeric column \(width) bytes wide") }
        guard count <= UInt64(limit), width == 0 || count <= UInt64(cursor.remaining / width) else {
            throw DamageReason("a numeric column of \(count) values in \(range.count) bytes")
        }
        self.form = form
        self.planes = cursor.position
        self.width = width
        self.count = Int(count)
        self.isDelta = mode == 1
        let end = planes + width * self.count
        if isBytes {
            // The lengths are checked against the bytes as they are read, and the column must
            // be used up to its end (``isUsedUp``): one pass, not one here and one in use.
            byteNext = end
            byteEnd = range.upperBound
        } else {
            guard end == range.upperBound else {
                throw DamageReason("a numeric column with \(range.upperBound - end) bytes after its planes")
            }
        }
    }

    /// Every value read, and for a bytes column every byte up to its end.
    var isUsedUp: Bool { next == count && byteNext == byteEnd }

    @inline(__always)
    private mutating func nextNumber() -> UInt64 {
        var value: UInt64 = 0
        var at = planes + next
        for plane in 0..<width {
            value |= UInt64(form[at]) << UInt64(plane * 8)
            at += count
        }
        next += 1
        guard isDelta else { return value }
        previous = previous &+ UInt64(bitPattern: Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1))
        return previous
    }

    @inline(__always)
    mutating func number() throws(DamageReason) -> UInt64 {
        guard next < count else { throw DamageReason("a column read past its end") }
        return nextNumber()
    }

    /// The next value of a bytes column, as a range of the field form.
    @inline(__always)
    mutating func bytes() throws(DamageReason) -> Range<Int> {
        let length = try number()
        guard length <= UInt64(byteEnd - byteNext) else { throw DamageReason("a bytes column whose lengths pass its end") }
        defer { byteNext += Int(length) }
        return byteNext..<byteNext + Int(length)
    }
}
