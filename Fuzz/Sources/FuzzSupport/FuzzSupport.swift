// What every fuzz target needs beside its parser: an oracle that stops the run with a message,
// and the little-endian field writes that repair a fuzzed header's lengths and checksums.

/// Stops the run with `message` when `condition` fails: libFuzzer then keeps the input. (In
/// -O builds `precondition` drops its message, which would leave only the place.)
public func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// Writes `value` little-endian over `bytes[offset...]`, as the file formats store numbers.
public func write<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8], at offset: Int) {
    withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<offset + $0.count, with: $0) }
}

/// The little-endian number at `bytes[offset...]`.
public func read<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], _ offset: Int) -> T {
    bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
}
