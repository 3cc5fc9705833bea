import DeviceLogs
import EventLog

/// Numbers of one device's log, for the commands that take `--device` (docs/CLI.md): a
/// device's event `n` is found at its position in the merged order, where every other
/// question about the store is asked.
extension StoreReader {
    /// The position of `device`'s event `sequence` (its number in that device's log). In a store
    /// of one device, that device's numbers are the positions. 0 stays 0 (before anything).
    ///
    /// - Throws: ``DomainError`` `.invalidArgument` when the device's log has no such event, or
    ///   the store of one device is another device's.
    public func position(ofEvent sequence: UInt64, device: DeviceID, this: DeviceID) throws -> UInt64 {
        guard sequence > 0 else { return 0 }
        guard let merged else {
            guard device == this else {
                throw DomainError(.invalidArgument, "this store holds only device \(this.short)'s log, not device \(device.short)'s")
            }
            guard sequence <= lastSequence else {
                throw DomainError(.invalidArgument, "device \(device.short)'s log holds events 1…\(lastSequence); it has no event \(sequence)")
            }
            return sequence
        }
        guard let log = merged.logs.first(where: { $0.device == device }) else {
            throw DomainError(.invalidArgument, "this store holds no log of device \(device.short)")
        }
        guard sequence <= log.last else {
            throw DomainError(
                .invalidArgument,
                "device \(device.short)'s log holds \(log.last == 0 ? "no events" : "events 1…\(log.last)"); it has no event \(sequence)")
        }
        guard let found = try merged.position(of: EventOrigin(device: device, sequence: sequence)) else {
            throw DomainError(.storage, "device \(device.short)'s event \(sequence) is not in the merged history of \(folder)")
        }
        return found.sequence
    }
}
