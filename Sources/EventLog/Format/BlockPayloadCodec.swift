/// A codec that knows the events' payloads, for a sealed block's codec 2 (FORMAT.md, "Block":
/// `codec`). The log owns everything around it: framing, checksums, the zstd frame, the chain,
/// compaction and erasure; the codec only turns a block's payloads into a form that compresses
/// better, and back. The app's store hands in the field-columns codec (module `FieldColumns`,
/// FORMAT.md's "Codec 2: field columns"); a log given none writes codecs 0 and 1 only, and a
/// reader given none cannot read a codec-2 block.
///
/// ```swift
/// var configuration = LogConfiguration()
/// configuration.payloadCodec = FieldColumnsCodec()
/// let reader = try LogReader(directory: path, payloadCodec: FieldColumnsCodec())
/// ```
public protocol BlockPayloadCodec: Sendable {
    /// An encoder for one writer, which keeps it from block to block (its buffers are a block's
    /// size).
    func makeEncoder() -> any BlockPayloadEncoder

    /// The block's raw payload (FORMAT.md, "Block payload") rebuilt from `form`, the content of
    /// a codec-2 block's zstd frame: exactly `rawLength` bytes holding `count` events. A form
    /// that breaks the codec's rules is damage, named by the reason.
    func rebuild(_ form: UnsafeRawBufferPointer, count: Int, rawLength: Int) -> Result<[UInt8], DamageReason>
}

/// One block's payloads into a codec's form: ``reset()``, ``add(_:)`` for each payload in
/// order, then ``finish(head:into:columns:)``.
public protocol BlockPayloadEncoder {
    /// Starts the next block, keeping the buffers the last one grew.
    mutating func reset()
    /// The next payload of the block.
    mutating func add(_ payload: ArraySlice<UInt8>)
    /// Writes the form into `form`: `head` (the raw payload before its lengths: the erasures
    /// and the times) and the payloads added, with `scratch` as working room (both emptied
    /// first, their capacity kept). False when these payloads have no form (the block is then
    /// stored with codec 1 or 0).
    func finish(head: [UInt8], into form: inout [UInt8], scratch: inout [UInt8]) -> Bool
}
