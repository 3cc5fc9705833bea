import DeviceLogs
import EventLog

/// How far a merged snapshot goes in each device's log, and where the local device's events lie
/// in the merged order up to there (docs/FORMAT.md, "Merged snapshot file"). The state a merged
/// snapshot holds is the fold of exactly these events; ``MergedHistory`` decides whether it is
/// still a prefix of the merged order the store has now.
struct MergedFrontier: Equatable, Sendable {
    /// One log's part: its events 1 through `last`, the last one at `lastTime`, with `head` there.
    struct Log: Equatable, Sendable {
        var device: DeviceID
        var last: UInt64
        var lastTime: LogTimestamp
        var head: [UInt8]

        /// The merge key of its last event (nil when it has none).
        var lastKey: MergeKey? { last == 0 ? nil : MergeKey(time: lastTime, device: device, sequence: last) }
    }

    /// Consecutive local events at consecutive merged positions.
    struct Run: Equatable, Sendable {
        var position: UInt64
        var first: UInt64
        var count: UInt64
    }

    /// The device whose store wrote it.
    var local: DeviceID
    /// Ascending by device.
    var logs: [Log]
    var runs: [Run]

    static let magic = Array("VTMERGED".utf8)
    /// 2 since a New Collection may take over an album that awaits another device's request
    /// (docs/DEVICES.md, "Rules by intent"): a version-1 snapshot may hold the verdict of the
    /// rules before, so it is passed over and the store folds again.
    static let version: UInt16 = 2
    static let maxLogs = 4_096

    /// The merged position of the last event folded: every log's events counted.
    var position: UInt64 { logs.reduce(0) { $0 + $1.last } }

    /// The greatest merge key among the events folded (nil for none).
    var greatestKey: MergeKey? { logs.compactMap(\.lastKey).max() }

    /// The section's bytes, `magic` through `frontier_crc`.
    func encoded() -> [UInt8] {
        var body = local.bytes
        append(UInt32(logs.count), to: &body)
        append(UInt32(runs.count), to: &body)
        for log in logs {
            body += log.device.bytes
            append(log.last, to: &body)
            append(log.lastTime.microsecondsSinceEpoch, to: &body)
            body += log.head
        }
        for run in runs {
            append(run.position, to: &body)
            append(run.first, to: &body)
            append(run.count, to: &body)
        }
        var bytes = Self.magic
        append(Self.version, to: &bytes)
        append(UInt16(0), to: &bytes)
        append(UInt32(body.count + 4), to: &bytes)
        bytes += body
        append(CRC32C.checksum(bytes), to: &bytes)
        return bytes
    }

    /// Reads and checks a section at the start of `bytes`; returns it and its length.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(SnapshotProblem) -> (MergedFrontier, Int) {
        guard bytes.count >= 16, Array(bytes[0..<8]) == magic else { throw SnapshotProblem("it does not start with VTMERGED") }
        let version = integer(bytes, 8, as: UInt16.self)
        if version < Self.version {
            throw SnapshotProblem("it was folded by the rules of version \(version), before a New Collection could take over another device's request")
        }
        guard version == Self.version, integer(bytes, 10, as: UInt16.self) == 0 else {
            throw SnapshotProblem("its frontier has version \(version) or reserved bytes set")
        }
        let length = Int(integer(bytes, 12, as: UInt32.self))
        guard length >= 28, 16 + length <= bytes.count else { throw SnapshotProblem("its frontier's length is impossible") }
        let end = 16 + length
        guard integer(bytes, end - 4, as: UInt32.self) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(end - 4)])) else {
            throw SnapshotProblem("its frontier fails its checksum")
        }
        let local = device(bytes, 16)
        let logCount = Int(integer(bytes, 32, as: UInt32.self)), runCount = Int(integer(bytes, 36, as: UInt32.self))
        guard (1...maxLogs).contains(logCount), length == 24 + 4 + 64 * logCount + 24 * runCount else {
            throw SnapshotProblem("its frontier's counts do not match its length")
        }
        var logs: [Log] = []
        var offset = 40
        for _ in 0..<logCount {
            logs.append(Log(
                device: device(bytes, offset), last: integer(bytes, offset + 16, as: UInt64.self),
                lastTime: LogTimestamp(microsecondsSinceEpoch: integer(bytes, offset + 24, as: Int64.self)),
                head: Array(bytes[(offset + 32)..<(offset + 64)])))
            offset += 64
        }
        var runs: [Run] = []
        for _ in 0..<runCount {
            runs.append(Run(
                position: integer(bytes, offset, as: UInt64.self), first: integer(bytes, offset + 8, as: UInt64.self),
                count: integer(bytes, offset + 16, as: UInt64.self)))
            offset += 24
        }
        let frontier = MergedFrontier(local: local, logs: logs, runs: runs)
        if let problem = frontier.problem { throw SnapshotProblem("its frontier \(problem)") }
        return (frontier, end)
    }

    /// What breaks the section's rules, if anything.
    var problem: String? {
        for (earlier, later) in zip(logs, logs.dropFirst()) where earlier.device >= later.device {
            return "lists its logs out of order or twice"
        }
        guard let own = logs.first(where: { $0.device == local }) else { return "does not list the local device's log" }
        for log in logs where log.last == 0 && (log.lastTime.microsecondsSinceEpoch != 0 || log.head.contains { $0 != 0 }) {
            return "gives a time or head to a log with no events"
        }
        let total = logs.reduce(UInt64(0)) { sum, log in sum.addingReportingOverflow(log.last).overflow ? .max : sum + log.last }
        guard total < UInt64.max / 2 else { return "counts impossibly many events" }
        var nextFirst: UInt64 = 1, nextPosition: UInt64 = 1
        for run in runs {
            guard run.count >= 1, run.first == nextFirst, run.position >= nextPosition, run.count <= total,
                run.position <= total - run.count + 1
            else { return "places the local device's events impossibly" }
            nextFirst = run.first + run.count
            nextPosition = run.position + run.count
        }
        guard nextFirst - 1 == own.last else { return "places \(nextFirst - 1) local events, not \(own.last)" }
        return nil
    }

    private static func device(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> DeviceID {
        // 16 bytes are always a device id.
        try! DeviceID(logID: Array(bytes[offset..<(offset + DeviceID.size)]))
    }

    private static func integer<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, _ offset: Int, as: T.Type) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    private func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}

/// An event's place in the merged order (docs/DEVICES.md, "One merged order").
struct MergeKey: Comparable, Sendable {
    var time: LogTimestamp
    var device: DeviceID
    var sequence: UInt64

    static func < (a: MergeKey, b: MergeKey) -> Bool {
        (a.time, a.device, a.sequence) < (b.time, b.device, b.sequence)
    }
}
