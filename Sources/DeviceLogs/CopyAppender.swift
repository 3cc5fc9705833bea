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
            return LogCopier.Report(device: device, before: before, head: head)
        }
        guard first.sequence == before + 1, head.sequence == run.last!.sequence else {
            throw DeviceError(
                .refused,
                "device \(device)'s events \(first.sequence)…\(run.last!.sequence) do not follow the copy's last event, \(before), up to the head given")
        }
        // Checked before anything is written: the events must hash to the head given.
        var chain: EventChain
        if let held {
            let there = try LogCopier.storage("read the copy at \(copy)") { try reader(held, head: before, copy) }
            chain = EventChain(head: there.hash, after: before)
        } else {
            chain = EventChain(head: identity.anchor)
        }
        for event in run { chain.append(event) }
        guard LogHead(sequence: chain.sequence, hash: chain.head) == head else {
            throw DeviceError(
                .refused,
                "device \(device)'s events \(first.sequence)…\(head.sequence) do not hash to the head given with them; nothing was taken")
        }
        var erased: UInt64 = 0
        if let arrivals {
            for index in run.indices where !run[index].isErased {
                guard let kept = try arrivals(run[index]) else { continue }
                run[index] = try LogCopier.storage("erase device \(device)'s event \(run[index].sequence) on arrival") {
                    try run[index].erased(keeping: kept)
                }
                erased += 1
            }
        }
        let reached = exists
            ? try grow(copy, with: run, device: device, configuration, fileSystem)
            : try build(copy, with: run, identity: identity, device: device, configuration, fileSystem)
        // Erasing keeps each event's leaf, so the head is the one shipped either way.
        guard reached == head else {
            throw DeviceError(
                .refused,
                "device \(device)'s events \(first.sequence)…\(head.sequence) written into \(copy) end at another head than the one shipped with them")
        }
        return LogCopier.Report(device: device, before: before, head: reached, erasedOnArrival: erased)
    }

    private static func reader(_ reader: LogReader, head sequence: UInt64, _ copy: String) throws -> LogHead {
        guard let head = try reader.head(at: sequence) else {
            throw DeviceError(.storage, "the copy at \(copy) has no head at its last event \(sequence)")
        }
        return head
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
