import EventLog
import FileIO

/// Makes and grows a copy of another device's log from that log's folder, read as a reader
/// reads (docs/DEVICES.md, "Copies of another device's log"): the copy takes the other log's
/// events verbatim and keeps its identity, so both have the same head after every event.
///
/// ```swift
/// let report = try LogCopier.update(copy: "store/devices/<id>/log", from: "/mnt/phone/log", refusing: thisDevice)
/// report.copied          // events taken now
/// ```
///
/// Refused, with nothing taken: a log with this device's own id, a copy of another log in the
/// copy's place, a log that is shorter than the copy or differs from it (a rewritten history,
/// named by its first differing event), events that do not hash to the other log's own heads.
public enum LogCopier {
    public struct Report: Sendable, Hashable {
        public var device: DeviceID
        /// The copy's last event before and after.
        public var before: UInt64
        public var head: LogHead
        /// Events copied already erased (``Arrivals``).
        public var erasedOnArrival: UInt64 = 0
        public var copied: UInt64 { head.sequence - before }
    }

    /// Says, for each event about to be copied, whether the copy must take it erased, and what
    /// it keeps then (docs/DEVICES.md, "Forgetting a place on several devices": a device that
    /// has not heard of a forget sends the place's events whole). Called in log order, after the
    /// event's run verified and before it is written; an error stops the copy there.
    public typealias Arrivals = (LogEvent) throws -> [UInt8]?

    /// The most raw bytes of events read before they are checked and written as one run.
    static let runBytes = 16 << 20

    /// Brings `copy` up to the log in `source` (as far as it reaches now); creates the copy when
    /// missing, beside it first (`<copy>.partial`) and then renamed into place. Nil when the
    /// source has no events yet (a new device's empty log): there is nothing to copy.
    ///
    /// - Parameters:
    ///   - own: this device's id; a source with it is refused.
    ///   - configuration: how the copy is written (its codec also reads the source's blocks).
    ///   - isDevicesOwnLog: whether `source` is the device's own log (not another store's copy of
    ///     it): a copy elsewhere may lag behind this one, the device's own log may not.
    ///   - arrivals: which events the copy takes erased (none when nil).
    public static func update(
        copy: String, from source: String, refusing own: DeviceID?, configuration: LogConfiguration,
        isDevicesOwnLog: Bool = true, arrivals: Arrivals? = nil, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> Report? {
        let reader = try open(source, configuration, fileSystem, "read the log at \(source)")
        guard let identity = try storage("read the log at \(source)", { try reader.identity() }) else { return nil }
        let device = try DeviceID(logID: identity.logID)
        if device == own {
            throw DeviceError(.refused, "the log at \(source) is this device's own (\(device)); a device takes only other devices' logs")
        }
        let last = try storage("read the log at \(source)") { try reader.lastSequence() }
        let exists = try storage("look at \(copy)") { try fileSystem.exists(copy) }
        // An empty log gives nothing to a new copy; against a copy that has events, it is checked
        // like any other (a device's own log that lost every event is refused).
        guard last > 0 || exists else { return nil }
        let partial = copy + ".partial"
        if try storage("look at \(partial)", { try fileSystem.exists(partial) }) {
            // An interrupted first copy: it was never renamed into place, so nothing refers to it.
            try storage("remove \(partial)") { try fileSystem.removeTree(partial) }
        }
        guard exists else {
            return try build(
                partial, renamedTo: copy, device: device, identity: identity, from: reader, through: last, arrivals, configuration, fileSystem)
        }
        let held = try open(copy, configuration, fileSystem, "read the copy at \(copy)")
        let heldIdentity = try storage("read the copy at \(copy)") { try held.identity() }
        guard heldIdentity == identity else {
            throw DeviceError(
                .refused,
                "the copy at \(copy) holds another log (\(heldIdentity.map { hex($0.logID) } ?? "none")) than device \(device)'s; it was not touched")
        }
        let before = try storage("read the copy at \(copy)") { try held.lastSequence() }
        try checkSameHistory(device: device, copy: held, source: reader, sourceLast: last, through: before, isDevicesOwnLog: isDevicesOwnLog)
        guard last > before else {
            // Nothing new (or a copy elsewhere that lags behind this one).
            return Report(device: device, before: before, head: try head(of: held, at: before, copy))
        }
        let log = try storage("open the copy at \(copy) to write") { try EventLog.open(at: copy, configuration: configuration, fileSystem: fileSystem) }
        defer { try? log.close() }
        var chain = EventChain(head: try head(of: held, at: before, copy).hash, after: before)
        var next = before + 1
        var erased: UInt64 = 0
        while next <= last {
            let run = try readRun(of: device, from: reader, at: next, through: last, chain: &chain, arrivals, erased: &erased)
            _ = try storage("append to the copy at \(copy)") { try log.appendAsBlock(run) }
            guard log.head == LogHead(sequence: chain.sequence, hash: chain.head) else {
                throw DeviceError(.storage, "the copy at \(copy) did not take device \(device)'s events \(next)…\(chain.sequence) as sent")
            }
            next = chain.sequence + 1
        }
        try storage("close the copy at \(copy)") { try log.close() }
        return Report(device: device, before: before, head: LogHead(sequence: chain.sequence, hash: chain.head), erasedOnArrival: erased)
    }

    /// A new copy, built beside its place and renamed into it once whole and synced.
    private static func build(
        _ partial: String, renamedTo copy: String, device: DeviceID, identity: LogIdentity, from reader: LogReader,
        through last: UInt64, _ arrivals: Arrivals?, _ configuration: LogConfiguration, _ fileSystem: any FileSystem
    ) throws -> Report {
        var builder = try storage("create \(partial)") {
            try LogBuilder(directory: partial, identity: identity, configuration: configuration, fileSystem: fileSystem)
        }
        do {
            var chain = EventChain(head: identity.anchor)
            var erased: UInt64 = 0
            try adoptBlockFiles(of: device, from: reader, through: last, into: &builder, chain: &chain, arrivals, fileSystem)
            while chain.sequence < last {
                for event in try readRun(of: device, from: reader, at: chain.sequence + 1, through: last, chain: &chain, arrivals, erased: &erased) {
                    try builder.add(event)
                }
            }
            let head = try builder.finish()
            guard head == LogHead(sequence: chain.sequence, hash: chain.head) else {
                throw DeviceError(.storage, "the copy of device \(device) built at \(partial) does not end at the head its events hash to")
            }
            try fileSystem.rename(partial, to: copy)
            try fileSystem.syncDirectory(Path.directory(of: copy))
            return Report(device: device, before: 0, head: head, erasedOnArrival: erased)
        } catch {
            builder.abandon()
            if let error = error as? DeviceError { throw error }
            throw DeviceError(.storage, "could not copy device \(device)'s log into \(copy): \(error)", cause: error)
        }
    }

    /// Takes the other log's block files whole while each starts where the copy is and ends
    /// within `last` (FORMAT.md, "Taking another copy's block file whole"): checked block by
    /// block, they need no encoding. A file holding an event the copy must take erased, and
    /// whatever follows it, is left to the event-by-event copy.
    private static func adoptBlockFiles(
        of device: DeviceID, from reader: LogReader, through last: UInt64, into builder: inout LogBuilder, chain: inout EventChain,
        _ arrivals: Arrivals?, _ fileSystem: any FileSystem
    ) throws {
        let files = try storage("list device \(device)'s block files in \(reader.directory)") { try reader.blockFiles() }
        for file in files where file.firstSequence == chain.sequence + 1 && file.lastSequence <= last {
            let took = try storage("take device \(device)'s block file \(file.path)") {
                try builder.adopt(blockFileAt: file.path, sourceFileSystem: fileSystem) { events in
                    guard let arrivals else { return true }
                    return try events.allSatisfy { try $0.isErased || arrivals($0) == nil }
                }
            }
            guard took else { return }
            chain = EventChain(head: builder.head.hash, after: builder.head.sequence)
        }
    }

    /// Reads events from `first` on, up to ``runBytes``, hashes them onto `chain` and checks the
    /// result against the source's own head there: a source whose events do not hash to its own
    /// heads is refused before anything of the run is written. Then `arrivals` says which events
    /// the copy takes erased.
    private static func readRun(
        of device: DeviceID, from reader: LogReader, at first: UInt64, through last: UInt64, chain: inout EventChain,
        _ arrivals: Arrivals?, erased: inout UInt64
    ) throws -> [LogEvent] {
        var run: [LogEvent] = []
        var bytes = 0
        try storage("read device \(device)'s events from \(first)") {
            let cursor = try reader.events(from: first, through: last)
            while bytes < runBytes, let event = try cursor.next() {
                run.append(event)
                bytes += event.payload.count + 16
            }
        }
        guard let end = run.last?.sequence, run.first?.sequence == first else {
            throw DeviceError(.refused, "device \(device)'s log at \(reader.directory) stops before event \(first), which it said it has")
        }
        for event in run { chain.append(event) }
        let told = try storage("read device \(device)'s head at \(end)") { try reader.head(at: end) }
        guard told == LogHead(sequence: end, hash: chain.head) else {
            throw DeviceError(
                .refused,
                "device \(device)'s log at \(reader.directory) does not verify: its events \(first)…\(end) do not hash to its own head there; nothing of them was taken")
        }
        guard let arrivals else { return run }
        for index in run.indices where !run[index].isErased {
            guard let kept = try arrivals(run[index]) else { continue }
            run[index] = try storage("erase device \(device)'s event \(run[index].sequence) on arrival") { try run[index].erased(keeping: kept) }
            erased += 1
        }
        return run
    }

    /// Refuses a source whose history differs from the copy, naming the first event that differs
    /// (the heads differ from there on: a binary search finds it), and a device's own log that
    /// is shorter than the copy (it lost events it had written). Another store's copy may be
    /// shorter: it lags behind, and gives nothing.
    private static func checkSameHistory(
        device: DeviceID, copy: LogReader, source: LogReader, sourceLast: UInt64, through held: UInt64, isDevicesOwnLog: Bool
    ) throws {
        guard held > 0, sourceLast > 0 || isDevicesOwnLog else { return }
        if sourceLast < held, isDevicesOwnLog {
            throw DeviceError(
                .refused,
                "device \(device)'s log at \(source.directory) ends at event \(sourceLast), but this store has its events through \(held): it lost or rewrote its history; nothing was taken")
        }
        let shared = min(held, sourceLast)
        func same(_ sequence: UInt64) throws -> Bool {
            try storage("compare device \(device)'s heads at \(sequence)") { try copy.head(at: sequence) == source.head(at: sequence) }
        }
        guard try !same(shared) else { return }
        var low: UInt64 = 1  // the first differing event is in low...high
        var high = shared
        while low < high {
            let middle = low + (high - low) / 2
            if try same(middle) { low = middle + 1 } else { high = middle }
        }
        throw DeviceError(
            .refused,
            "device \(device) rewrote its history at event \(low): its log at \(source.directory) differs there from the copy this store has; nothing was taken")
    }

    private static func head(of reader: LogReader, at sequence: UInt64, _ path: String) throws -> LogHead {
        guard let head = try storage("read the copy at \(path)", { try reader.head(at: sequence) }) else {
            throw DeviceError(.storage, "the copy at \(path) has no head at event \(sequence)")
        }
        return head
    }

    private static func open(_ path: String, _ configuration: LogConfiguration, _ fileSystem: any FileSystem, _ doing: String) throws -> LogReader {
        try storage(doing) { try LogReader(directory: path, fileSystem: fileSystem, payloadCodec: configuration.payloadCodec) }
    }

    /// Runs `body`, turning a log's or the file system's error into a ``DeviceError`` that says
    /// what was being done (damage in another device's log is a refusal of it).
    static func storage<T>(_ doing: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as DeviceError { throw error } catch let error as LogError {
            throw DeviceError(error.code == .corrupt ? .refused : .storage, "could not \(doing): \(error.message)", cause: error)
        } catch {
            throw DeviceError(.storage, "could not \(doing): \(error)", cause: error)
        }
    }
}

/// Bytes as lowercase hex.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
