import DeviceLogs
import EventLog
import FileIO

/// The places forgotten in a store of several devices, as a sync that writes into the store
/// needs them (docs/DEVICES.md, "Forgetting a place on several devices"): every pin a
/// `PlaceForgotten` in one of its logs names, and every pin in `forget.arrived`. Its
/// ``arrival(_:)`` is the copier's ``LogCopier/Arrivals``: the events another device sends about
/// such a pin are copied erased, and a `PlaceForgotten` new to the store is written into
/// `forget.arrived`, durably, before the event itself is.
///
/// ```swift
/// let forgotten = ForgottenPlaces(store: folder, fileSystem: fileSystem)
/// try LogCopier.update(copy: …, from: …, refusing: own, configuration: …, arrivals: forgotten.arrival)
/// forgotten.arrived   // the forgets this sync brought: the store finishes them when it opens
/// ```
///
/// Cost: the first event that arrives makes it load the store's newest snapshot that its logs
/// still begin with (its pins, not its albums: the pins forgotten are in it) and read every log
/// after it (only the envelopes' top-level fields, but for forgets); while no place is
/// forgotten, each arriving event costs a look at those fields, and a full decoding otherwise.
final class ForgottenPlaces {
    /// The field number of `PlaceForgotten` in the envelope (docs/EVENTS.md).
    static let placeForgottenField = 21

    /// The store's list of forgets that arrived and are not finished yet (`forget PIN` lines).
    static let arrivedName = "forget.arrived"

    let store: String
    let fileSystem: any FileSystem
    /// The pins forgotten in the store: read when first needed.
    private var known: Set<PinID>?
    /// The forgets that arrived through this value (in the order they arrived).
    private(set) var arrived: [PinID] = []
    /// Where forgotten pins were, from the events erased on arrival: a map region arriving after
    /// them that is zoomed in on one of these is erased too. Held in memory only.
    private var places: [Coordinate] = []

    /// The places forgotten in the store in `folder`, read from its logs as they are then and
    /// its `forget.arrived` when the first event arrives.
    init(store folder: String, fileSystem: any FileSystem) {
        store = folder
        self.fileSystem = fileSystem
    }

    /// The same, for an open store whose state already folded every log: its forgotten pins
    /// with those in `forget.arrived` are the set, and no log is read.
    init(store folder: String, fileSystem: any FileSystem, folded state: TouristState) throws {
        store = folder
        self.fileSystem = fileSystem
        known = state.forgottenPins.union(try Self.arrived(in: folder, fileSystem: fileSystem))
    }

    /// The pins forgotten in the store.
    func pins() throws -> Set<PinID> {
        if let known { return known }
        let read = try Self.inLogs(of: store, fileSystem: fileSystem).union(try Self.arrived(in: store, fileSystem: fileSystem))
        known = read
        return read
    }

    /// The pins a `PlaceForgotten` in one of the store's logs names: those of the newest
    /// snapshot the logs still begin with, and those of the events after it.
    static func inLogs(of folder: String, fileSystem: any FileSystem) throws -> Set<PinID> {
        let history: MergedHistory
        do { history = try MergedHistory.everyLog(of: folder, fileSystem: fileSystem) } catch let error as DeviceError {
            throw StoreSync.domainError(error)
        }
        var (start, _) = try history.start(atOrBefore: history.count, pinsOnly: true)
        var pins = start.takeState()!.forgottenPins
        for (log, folded) in zip(history.logs, start.folded) where log.last > folded {
            let cursor = try history.reader(log).events(from: folded + 1, through: log.last)
            while let event = try cursor.next() {
                guard !event.isErased, EventCodec.eventField(of: event.payload) ?? placeForgottenField == placeForgottenField,
                    case .placeForgotten(let pin, _) = try EventCodec.decode(event).event
                else { continue }
                pins.insert(pin)
            }
        }
        return pins
    }

    /// What a copy keeps of `event` when it must take it erased (nil: it takes it whole). An
    /// event this program cannot decode is taken whole: the store's own reading names it.
    func arrival(_ event: LogEvent) throws -> [UInt8]? {
        var forgotten = try pins()
        // With no place forgotten, only a forget matters: most events are not decoded.
        if forgotten.isEmpty, let field = EventCodec.eventField(of: event.payload), field != Self.placeForgottenField { return nil }
        guard let recorded = try? EventCodec.decode(event) else { return nil }
        switch recorded.event {
        case .placeForgotten(let pin, _):
            if !forgotten.contains(pin) {
                // Durable before the event is: a crash after it leaves the store knowing it
                // has a forget to finish.
                try Self.record([pin], adding: true, in: store, fileSystem: fileSystem)
                forgotten.insert(pin)
                known = forgotten
                arrived.append(pin)
            }
            return nil
        case .regionChanged(let region) where region.latitudeSpan <= TouristStore.forgottenRegionSpan:
            return places.contains(where: region.shows) ? EventCodec.keptOnErase(recorded.event) : nil
        case .forgotten:
            return nil
        default:
            guard let pin = recorded.event.pin, forgotten.contains(pin) else { return nil }
            switch recorded.event {
            case .pinDropped(_, let place), .pinDragged(_, let place): places.append(place)
            default: break
            }
            return EventCodec.keptOnErase(recorded.event)
        }
    }

    /// The pins in the store's `forget.arrived`, in order (none when there is no such file).
    static func arrived(in folder: String, fileSystem: any FileSystem) throws -> [PinID] {
        let path = Path.join(folder, arrivedName)
        if try fileSystem.exists(path + ".tmp") {
            // Cut off while written: the forget it was to add was not copied yet.
            try fileSystem.removeFile(path + ".tmp")
        }
        guard try fileSystem.exists(path) else { return [] }
        let file = try fileSystem.openFile(path, .readOnly)
        defer { try? file.close() }
        var pins: [PinID] = []
        for line in String(decoding: try file.readAll(), as: UTF8.self).split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 2, words[0] == "forget", let pin = PinID(parsing: String(words[1])) else {
                throw DomainError(.storage, "\(path) is not a list of forgets that arrived: \"\(line.prefix(60))\"")
            }
            if !pins.contains(pin) { pins.append(pin) }
        }
        return pins
    }

    /// Adds `pins` to the store's `forget.arrived` (or, with `adding` false, makes it hold
    /// only `pins`, removing it when there are none), atomically and durably.
    static func record(_ pins: [PinID], adding: Bool, in folder: String, fileSystem: any FileSystem) throws {
        let path = Path.join(folder, arrivedName)
        var all = adding ? try arrived(in: folder, fileSystem: fileSystem) : []
        for pin in pins where !all.contains(pin) { all.append(pin) }
        if all.isEmpty {
            guard try fileSystem.exists(path) else { return }
            try fileSystem.removeFile(path)
        } else {
            try fileSystem.writeAtomically(Array(all.map { "forget \($0)\n" }.joined().utf8), to: path)
        }
        try fileSystem.syncDirectory(folder)
    }

    /// Takes `pin` off the store's `forget.arrived`: its forget is finished.
    static func finished(_ pin: PinID, in folder: String, fileSystem: any FileSystem) throws {
        let all = try arrived(in: folder, fileSystem: fileSystem)
        guard all.contains(pin) else { return }
        try record(all.filter { $0 != pin }, adding: false, in: folder, fileSystem: fileSystem)
    }
}
