import EventLog

/// Several devices' logs read as one sequence, by (time, device id, sequence): the merged order
/// every device computes the same way (docs/DEVICES.md, "One merged order"). A k-way merge that
/// holds the next event of each log; a log's own events come out in its order.
///
/// ```swift
/// var merged = try MergedOrder([(phone, phoneReader.events()), (laptop, laptopReader.events())])
/// while let (index, event) = try merged.next() { … }   // index: which of the logs
/// ```
///
/// Cost: O(logs) per event (a person's devices are a handful; a heap pays from dozens).
public struct MergedOrder {
    public let devices: [DeviceID]
    private let cursors: [LogCursor]
    private var heads: [LogEvent?]

    /// - Throws: ``DeviceError`` `.invalidArgument` when a device is listed twice; a cursor's
    ///   own errors (damage) as they are met.
    public init(_ sources: [(device: DeviceID, cursor: LogCursor)]) throws {
        devices = sources.map(\.device)
        guard Set(devices).count == devices.count else {
            throw DeviceError(.invalidArgument, "a device's log can be merged only once")
        }
        cursors = sources.map(\.cursor)
        heads = try cursors.map { try $0.next() }
    }

    /// The next event of the merged order and the index of the log it is in; nil at the end.
    public mutating func next() throws -> (log: Int, event: LogEvent)? {
        var best: Int? = nil
        for index in heads.indices {
            guard let candidate = heads[index] else { continue }
            if let current = best, !Self.precedes(candidate, devices[index], heads[current]!, devices[current]) { continue }
            best = index
        }
        guard let best else { return nil }
        let event = heads[best]!
        heads[best] = try cursors[best].next()
        return (best, event)
    }

    /// Whether `a` of device `aDevice` comes before `b` of `bDevice` in the merged order.
    public static func precedes(_ a: LogEvent, _ aDevice: DeviceID, _ b: LogEvent, _ bDevice: DeviceID) -> Bool {
        if a.timestamp != b.timestamp { return a.timestamp < b.timestamp }
        if aDevice != bDevice { return aDevice < bDevice }
        return a.sequence < b.sequence
    }
}
