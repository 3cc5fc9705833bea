/// Why bytes that passed their checksum still do not form what they claim (a batch, a block,
/// a record, a codec's form): damage, named for the error that reports it.
public struct DamageReason: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }

    /// Fewer bytes than the header says follow it.
    public static let incomplete = DamageReason("fewer bytes than the header states")
}
