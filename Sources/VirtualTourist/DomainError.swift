/// Why the store refused an action or could not do it. A refused action appends nothing.
///
/// ```swift
/// do { try await store.removePhoto(slot: 7, of: pin) }
/// catch let error as DomainError where error.code == .unknownPhoto { … }
/// ```
public struct DomainError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A coordinate or region that cannot be on the map (out of range, not a number).
        public static let invalidPlace = Code("invalid-place")
        /// No pin has this id (or it was removed).
        public static let unknownPin = Code("unknown-pin")
        /// A pin with this id exists already.
        public static let duplicatePin = Code("duplicate-pin")
        /// The album has no such photo (never listed, or removed).
        public static let unknownPhoto = Code("unknown-photo")
        /// The album is being listed or downloaded: New Collection must wait.
        public static let albumBusy = Code("album-busy")
        /// New Collection where the photo service has no photos but those already listed: a
        /// new collection could only show the same ones again.
        public static let noOtherPhotos = Code("no-other-photos")
        /// The album is not in the state this result or request needs.
        public static let wrongAlbumState = Code("wrong-album-state")
        /// A result for a collection that has since been replaced: it never lands.
        public static let staleCollection = Code("stale-collection")
        /// A value out of its range (an empty reason, a page of 0, a bad digest).
        public static let invalidArgument = Code("invalid-argument")
        /// The log or a snapshot could not be read or written; ``DomainError/cause`` says why.
        public static let storage = Code("storage")
        /// An event in the log that this code cannot decode (damaged, or from a newer version).
        public static let undecodableEvent = Code("undecodable-event")
        /// The store was closed.
        public static let closed = Code("closed")
        /// The store is a read-only replica of another: changes are made on the original.
        public static let readOnly = Code("read-only")
        /// The folder holds something other than a Virtual Tourist store.
        public static let notAStore = Code("not-a-store")
        /// The store's log is in format 1, which this version reads but no longer writes:
        /// ``TouristStore/upgrade(at:options:fileSystem:progress:)`` (`vt upgrade`) converts it.
        public static let needsUpgrade = Code("needs-upgrade")
    }

    public var code: Code
    public var message: String
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause)"
    }
}
