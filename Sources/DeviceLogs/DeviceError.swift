/// Why a device operation failed. The message names the device, the file or the event; a
/// refusal changes nothing.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// A bad argument: a name, an id, a destination that exists.
        case invalidArgument
        /// A folder that is not a store, or a `device.json` that cannot be read.
        case notAStore
        /// Another device's log refused: it does not verify, rewrote events this store has, claims
        /// this device's id, or belongs to another map. Nothing of it was taken.
        case refused
        /// Reading or writing failed (the cause says how).
        case storage
    }

    public let code: Code
    public let message: String
    public let cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { message }
}
