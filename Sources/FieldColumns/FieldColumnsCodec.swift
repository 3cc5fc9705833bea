import EventLog

/// Codec 2 of the log's blocks: the payloads, read as protobuf's wire format (any message,
/// no schema), taken apart into one column per field before zstd (FORMAT.md, "Codec 2: field
/// columns"). A payload that is not canonical protobuf is kept whole in a column of its own.
/// The app's store hands it to its log and to every reader of it.
///
/// ```swift
/// var configuration = LogConfiguration()
/// configuration.payloadCodec = FieldColumnsCodec()
/// ```
public struct FieldColumnsCodec: BlockPayloadCodec {
    public init() {}

    public func makeEncoder() -> any BlockPayloadEncoder { FieldColumnsEncoder() }

    public func rebuild(_ form: UnsafeRawBufferPointer, count: Int, rawLength: Int) -> Result<[UInt8], DamageReason> {
        FieldColumnsDecoder.rebuild(form, count: count, rawLength: rawLength)
    }
}

extension FieldColumnsEncoder: BlockPayloadEncoder {
    func finish(head: [UInt8], into form: inout [UInt8], scratch: inout [UInt8]) -> Bool {
        finish(head: head, into: &form, columns: &scratch)
    }
}
