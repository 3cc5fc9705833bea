import Testing

@testable import EventLog

/// The test for the zeros after a segment's end (``ReadWindow/firstNonZero(in:)``), which looks
/// at 32 bytes at a time: a stray byte is found wherever it lies against those strides.
@Suite("the zero scan after a segment's end")
struct ZeroScanTests {
    @Test func aStrayByteIsFoundAtEveryPositionAndEveryLength() {
        for length in 0...97 {
            var bytes = [UInt8](repeating: 0, count: length)
            bytes.withUnsafeBytes { #expect(ReadWindow.firstNonZero(in: $0) == nil, "all \(length) zeros") }
            for position in 0..<length {
                for value: UInt8 in [1, 0x80, 0xFF] {
                    bytes[position] = value
                    // A second stray byte later must not hide the first.
                    if position + 9 < length { bytes[position + 9] = 7 }
                    bytes.withUnsafeBytes {
                        #expect(ReadWindow.firstNonZero(in: $0) == position, "byte \(value) at \(position) of \(length)")
                    }
                    bytes = [UInt8](repeating: 0, count: length)
                }
            }
        }
    }

    @Test func aSliceIsScannedFromItsOwnStart() {
        var bytes = [UInt8](repeating: 0, count: 200)
        bytes[3] = 1
        bytes[150] = 2
        bytes.withUnsafeBytes { all in
            #expect(ReadWindow.firstNonZero(in: UnsafeRawBufferPointer(rebasing: all[5...])) == 145)
            #expect(ReadWindow.firstNonZero(in: UnsafeRawBufferPointer(rebasing: all[151...])) == nil)
        }
    }
}
