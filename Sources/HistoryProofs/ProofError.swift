/// A proof that cannot be made (no such event, sizes out of order, a log that cannot be read) or
/// a proof file that cannot be read; the message names what and where.
public struct ProofError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
