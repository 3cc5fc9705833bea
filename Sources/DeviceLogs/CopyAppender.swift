import EventLog
import FileIO

/// Grows a copy of another device's log from events that did not come from a log folder: a
/// device's stream in the cluster (docs/SYNC.md). The caller has checked the events against the
/// heads their device shipped with them; the copy takes them verbatim (or erased, as
/// ``LogCopier/Arrivals`` says), so it must end at the same head, which is checked again here.
///
/// ```swift
/// let report = try CopyAppender.append(events, toCopy: "store/devices/<id>/log", identity: identity,
///                                      expecting: shippedHead, configuration: configuration)
/// ```
///
/// A first copy is built beside its place and renamed into it once whole, as ``LogCopier``
/// builds one; later events go into the copy's hot tail, or, for a run holding an erased event
/// (which a hot-tail record cannot hold), into a block file of their own.
public enum CopyAppender {
    /// Appends `events` (consecutive, the first following the copy's last event; events the
    /// copy has already are passed over) to the copy at `copy`, creating it when missing.
    ///
    /// - Parameters:
    ///   - identity: the device's log identity; a copy of another log in that place is refused.
    ///   - head: the head the device's log has after the last event.
    /// - Throws: ``DeviceError`` `.refused` for a copy of another log, events that do not follow
    ///   the copy or do not end at `head`; `.storage` when the disk fails.
    public static func append(
        _ events: [LogEvent], toCopy copy: String, identity: LogIdentity, expecting head: LogHead, configuration: LogConfiguration,
        arrivals: LogCopier.Arrivals? = nil, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> LogCopier.Report {
        try appending(events, toCopy: copy, identity: identity, expecting: head, configuration: configuration, arrivals: arrivals, fileSystem: fileSystem).report
    }

    /// The same, returning also the events as the copy took them (erased where `arrivals` said).
    public static func appending(
        _ events: [LogEvent], toCopy copy: String, identity: LogIdentity, expecting head: LogHead, configuration: LogConfiguration,
        arrivals: LogCopier.Arrivals? = nil, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> (report: LogCopier.Report, written: [LogEvent]) {
        let device = try DeviceID(logID: identity.logID)
        let exists = try LogCopier.storage("look at \(copy)") { try fileSystem.exists(copy) }
        var before: UInt64 = 0
        var held: LogReader?
        if exists {
            let reader = try LogCopier.storage("read the copy at \(copy)") {
                try LogReader(directory: copy, fileSystem: fileSystem, payloadCodec: configuration.payloadCodec)
            }
            let heldIdentity = try LogCopier.storage("read the copy at \(copy)") { try reader.identity() }
            guard heldIdentity == identity else {
                throw DeviceError(.refused, "the copy at \(copy) holds another log than device \(device)'s; it was not touched")
            }
            before = try LogCopier.storage("read the copy at \(copy)") { try reader.lastSequence() }
            held = reader
        }
        var run = events.filter { $0.sequence > before }
        guard let first = run.first else {
            // Nothing new: the head given must still be the copy's there (a device that
            // rewrote its history is caught here too).
            let there = try held.flatMap { reader in try LogCopier.storage("read the copy at \(copy)") { try reader.head(at: head.sequence) } }
            guard head.sequence == 0 || there == head else {
                throw DeviceError(
                    .refused, "device \(device)'s head at event \(head.sequence) differs from the copy's there: it rewrote its history; nothing was taken")
            }
            return (LogCopier.Report(device: device, before: before, head: head), [])
        }
        let after = try held.map { held in try LogCopier.storage("read the copy at \(copy)") { try reader(held, head: before, copy) } }
        let erased = try check(&run, of: device, after: after ?? LogHead(sequence: 0, hash: identity.anchor), reaching: head, arrivals)
        let reached = exists
            ? try grow(copy, with: run, device: device, configuration, fileSystem)
            : try build(copy, with: run, identity: identity, device: device, configuration, fileSystem)
        // Erasing keeps each event's leaf, so the head is the one shipped either way.
        guard reached == head else {
            throw DeviceError(
                .refused,
                "device \(device)'s events \(first.sequence)…\(head.sequence) written into \(copy) end at another head than the one shipped with them")
        }
        return (LogCopier.Report(device: device, before: before, head: reached, erasedOnArrival: erased), run)
    }

    /// Checks, before anything is written, that `run` follows `held` and hashes to `head`; then
    /// erases the events `arrivals` says the copy takes erased, and returns how many.
    private static func check(
        _ run: inout [LogEvent], of device: DeviceID, after held: LogHead, reaching head: LogHead, _ arrivals: LogCopier.Arrivals?
    ) throws -> UInt64 {
        guard let first = run.first, first.sequence == held.sequence + 1, head.sequence == run.last!.sequence else {
            throw DeviceError(
                .refused,
                "device \(device)'s events \(run.first?.sequence ?? 0)…\(run.last?.sequence ?? 0) do not follow the copy's last event, \(held.sequence), up to the head given")
        }
        var chain = EventChain(head: held.hash, after: held.sequence)
        for event in run { chain.append(event) }
        guard LogHead(sequence: chain.sequence, hash: chain.head) == head else {
            throw DeviceError(
                .refused,
                "device \(device)'s events \(first.sequence)…\(head.sequence) do not hash to the head given with them; nothing was taken")
        }
        var erased: UInt64 = 0
        guard let arrivals else { return 0 }
        for index in run.indices where !run[index].isErased {
            guard let kept = try arrivals(run[index]) else { continue }
            run[index] = try LogCopier.storage("erase device \(device)'s event \(run[index].sequence) on arrival") {
                try run[index].erased(keeping: kept)
            }
            erased += 1
        }
        return erased
    }

    private static func reader(_ reader: LogReader, head sequence: UInt64, _ copy: String) throws -> LogHead {
        guard let head = try reader.head(at: sequence) else {
            throw DeviceError(.storage, "the copy at \(copy) has no head at its last event \(sequence)")
        }
        return head
    }

    /// Appends `events` to a copy whose log is open here (`log`, the copy of the log with
    /// `identity`): what a store that takes a device's events again and again keeps open, so that
    /// no take reopens the copy (and recovers its hot tail). Checked as ``append(_:toCopy:identity:expecting:configuration:arrivals:fileSystem:)``.
    public static func appending(
        _ events: [LogEvent], to log: EventLog, identity: LogIdentity, expecting head: LogHead, arrivals: LogCopier.Arrivals? = nil
    ) throws -> (report: LogCopier.Report, written: [LogEvent]) {
        let device = try DeviceID(logID: identity.logID)
        let held = log.head
        var run = events.filter { $0.sequence > held.sequence }
        guard !run.isEmpty else {
            guard head.sequence == 0 || head.sequence > held.sequence || head == held || (try? log.reader().head(at: head.sequence)) == head else {
                throw DeviceError(
                    .refused, "device \(device)'s head at event \(head.sequence) differs from the copy's there: it rewrote its history; nothing was taken")
            }
            return (LogCopier.Report(device: device, before: held.sequence, head: held), [])
        }
        let erased = try check(&run, of: device, after: held, reaching: head, arrivals)
        try LogCopier.storage("append device \(device)'s events to \(log.directory)") {
            if run.contains(where: \.isErased) {
                _ = try log.appendAsBlock(run)
            } else {
                _ = try log.append(contentsOf: run.map { Array($0.payload) }, timestamps: run.map(\.timestamp))
            }
        }
        guard log.head == head else {
            throw DeviceError(.refused, "device \(device)'s events written into \(log.directory) end at another head than the one shipped with them")
        }
        return (LogCopier.Report(device: device, before: held.sequence, head: head, erasedOnArrival: erased), run)
    }

    private static func grow(
        _ copy: String, with run: [LogEvent], device: DeviceID, _ configuration: LogConfiguration, _ fileSystem: any FileSystem
    ) throws -> LogHead {
        let log = try LogCopier.storage("open the copy at \(copy) to write") {
            try EventLog.open(at: copy, configuration: configuration, fileSystem: fileSystem)
        }
        defer { try? log.close() }
        try LogCopier.storage("append device \(device)'s events to \(copy)") {
            if run.contains(where: \.isErased) {
                _ = try log.appendAsBlock(run)
            } else {
                _ = try log.append(contentsOf: run.map { Array($0.payload) }, timestamps: run.map(\.timestamp))
            }
        }
        let head = log.head
        try LogCopier.storage("close the copy at \(copy)") { try log.close() }
        return head
    }

    private static func build(
        _ copy: String, with run: [LogEvent], identity: LogIdentity, device: DeviceID, _ configuration: LogConfiguration,
        _ fileSystem: any FileSystem
    ) throws -> LogHead {
        let partial = copy + ".partial"
        if try LogCopier.storage("look at \(partial)", { try fileSystem.exists(partial) }) {
            try LogCopier.storage("remove \(partial)") { try fileSystem.removeTree(partial) }
        }
        var builder = try LogCopier.storage("create \(partial)") {
            try LogBuilder(directory: partial, identity: identity, configuration: configuration, fileSystem: fileSystem)
        }
        do {
            for event in run { try builder.add(event) }
            let head = try builder.finish()
            try fileSystem.rename(partial, to: copy)
            try fileSystem.syncDirectory(Path.directory(of: copy))
            return head
        } catch {
            builder.abandon()
            if let error = error as? DeviceError { throw error }
            throw DeviceError(.storage, "could not write device \(device)'s events into \(copy): \(error)", cause: error)
        }
    }
}
