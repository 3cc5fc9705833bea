import DeviceLogs

/// A device of a store of several devices as the pages and the export name it: its id, its
/// name (nil when it has none), how many events of its log the store holds, and whether it is
/// the store's own.
public struct KnownDevice: Sendable, Hashable {
    public var id: DeviceID
    public var name: String?
    public var events: UInt64
    public var isThis: Bool

    /// The name, or the id's first digits for a device without one.
    public var label: String { name ?? id.short }
}
