import Foundation

/// Text for standard output, built as bytes and handed to the stream in large pieces.
///
/// `print` makes a `String` of every line, then locks and writes the stream once a line; for
/// the 267,000 lines of a `vt diff` of two far points that cost more than loading both states
/// (docs/BENCHMARKS-JOURNAL.md, "vt diff of far points: lines as bytes"). Each write out first flushes
/// what `print` left in the `stdout` stream, so lines printed before keep their order.
///
/// ```swift
/// let out = LineWriter()
/// out.append("pin "); out.appendHex(pin.rawValue, digits: 16); out.endLine()
/// out.flush()
/// ```
final class LineWriter {
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0
    /// Written out once this many bytes wait; nil keeps everything (for tests).
    private let flushThreshold: Int?
    let colour: Bool

    init(colour: Bool = Terminal.colour, flushThreshold: Int? = 1 << 20) {
        self.colour = colour
        self.flushThreshold = flushThreshold
        capacity = (flushThreshold ?? 1 << 16) + 4096
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// What waits to be written.
    var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: buffer, count: count)) }

    /// Room for `extra` more bytes.
    private func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let larger = max(capacity * 2, count + extra)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 16)
        moved.copyMemory(from: buffer, byteCount: count)
        buffer.deallocate()
        (buffer, capacity) = (moved, larger)
    }

    func append(_ text: StaticString) {
        append(utf8: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Any text (a literal goes to the `StaticString` overload only when it is named so; a
    /// plain literal would make a `String`).
    func append(text: String) {
        var text = text
        text.withUTF8 { append(utf8: UnsafeRawBufferPointer($0)) }
    }

    func append(utf8: UnsafeRawBufferPointer) {
        guard let start = utf8.baseAddress, !utf8.isEmpty else { return }
        reserve(utf8.count)
        (buffer + count).copyMemory(from: start, byteCount: utf8.count)
        count += utf8.count
    }

    /// Everything `other` holds, which is left empty.
    func append(from other: LineWriter) {
        if let flushThreshold, count + other.count > flushThreshold { flush() }
        if other.count >= (flushThreshold ?? Int.max) {
            other.flush()
        } else {
            append(utf8: UnsafeRawBufferPointer(start: other.buffer, count: other.count))
            other.count = 0
        }
    }

    func appendDecimal(_ value: some FixedWidthInteger & UnsignedInteger) {
        var value = UInt64(value)
        var length = 1
        var rest = value / 10
        while rest != 0 { length += 1; rest /= 10 }
        reserve(length)
        var position = count + length
        repeat {
            position -= 1
            buffer.storeBytes(of: UInt8(truncatingIfNeeded: value % 10) + UInt8(ascii: "0"), toByteOffset: position, as: UInt8.self)
            value /= 10
        } while value != 0
        count += length
    }

    /// The lowest `digits` hexadecimal digits of `value`, with leading zeros.
    func appendHex(_ value: UInt64, digits: Int) {
        precondition((1...16).contains(digits), "a UInt64 has 1 to 16 hexadecimal digits")
        reserve(digits)
        for index in 0..<digits {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64((digits - 1 - index) * 4)) & 0xF
            let digit = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            buffer.storeBytes(of: digit, toByteOffset: count + index, as: UInt8.self)
        }
        count += digits
    }

    /// Starts a style; ``endStyle()`` ends it. Nothing when colour is off.
    func startStyle(_ style: Terminal.Style) {
        guard colour else { return }
        append("\u{1B}[")
        append(text: style.rawValue)
        append("m")
    }

    func endStyle() {
        if colour { append("\u{1B}[0m") }
    }

    /// A whole line, styled when colour is on.
    func line(_ text: String, _ style: Terminal.Style? = nil) {
        if let style { startStyle(style) }
        append(text: text)
        if style != nil { endStyle() }
        endLine()
    }

    func endLine() {
        append("\n")
        if let flushThreshold, count >= flushThreshold { flush() }
    }

    /// Writes out what waits, after whatever `print` left in the `stdout` stream. A failed write
    /// (a closed pipe) drops the rest, as `print` would.
    func flush() {
        fflush(nil)
        var offset = 0
        while offset < count {
            let written = write(STDOUT_FILENO, buffer + offset, count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { break }
            offset += written
        }
        count = 0
    }
}
