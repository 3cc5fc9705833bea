import Dispatch
import EventLog
import Foundation

/// One pin's story: which pin a text names, and every event about it.
extension StoreReader {
    /// Every event about `pin`, oldest first, from `start` on (empty for a pin that never
    /// existed). Pass the pin's `droppedAt` when known, to skip the log before it.
    ///
    /// Every event about a pin carries its id as a `fixed64` (schemas/…/events.proto), so an
    /// event whose payload lacks those eight bytes is not decoded at all: the scan costs the
    /// log's read and a byte search, not a decode of every event. A long range is read as two
    /// halves on two cores (docs/BENCHMARKS.md).
    public func history(of pin: PinID, from start: UInt64 = 1) throws -> [RecordedEvent] {
        try history(of: pin, from: start, halvingAt: Self.halvingThreshold)
    }

    /// The same, read in halves from `threshold` events on (tests split short ranges too).
    func history(of pin: PinID, from start: UInt64, halvingAt threshold: UInt64) throws -> [RecordedEvent] {
        // A pin numbered 0 has no bytes on the wire (proto3 leaves zero out): decode them all.
        let idBytes = pin.rawValue == 0 ? nil : withUnsafeBytes(of: pin.rawValue.littleEndian) { [UInt8]($0) }
        let wanted = idBytes.map { id in { (event: LogEvent) in Self.payload(event.payload, contains: id) } }
        let from = max(1, start)
        guard lastSequence >= from else { return [] }
        do {
            return try Self.inHalves(self, from: from, through: lastSequence, threshold: threshold) { log, first, last in
                var events: [RecordedEvent] = []
                try Self.scan(log, from: first, through: last, decodingOnly: wanted) {
                    if $0.event.pin == pin { events.append($0) }
                }
                return events
            }
        } catch {
            throw TouristStore.storageError(error, "the history of pin \(pin) cannot be read")
        }
    }

    /// Ranges shorter than this are read on the calling thread: a second reader's seek walks the
    /// block headers before its start (milliseconds at 10 M events), more than half of a short
    /// read saves.
    static let halvingThreshold: UInt64 = 1 << 16

    /// `collect` of `from…through`, in order: at or above `threshold` events, the second
    /// half is read by a reader of its own on another core while this one reads the first
    /// (readers are for one thread each). Either half's error is thrown, the first half's first.
    static func inHalves(
        _ store: StoreReader, from: UInt64, through: UInt64, threshold: UInt64,
        _ collect: @escaping (LogReader, UInt64, UInt64) throws -> [RecordedEvent]
    ) throws -> [RecordedEvent] {
        guard through > from, through - from + 1 >= threshold else { return try collect(store.log, from, through) }
        let middle = from + (through - from) / 2
        let second = try LogReader(directory: store.log.directory, fileSystem: store.fileSystem)
        let halves = Halves(readers: [store.log, second], ranges: [(from, middle), (middle + 1, through)], collect: collect)
        DispatchQueue.concurrentPerform(iterations: 2) { halves.run($0) }
        return try halves.results[0].get() + halves.results[1].get()
    }

    /// Two halves' readers and results. Each iteration touches only its own reader and result,
    /// and `concurrentPerform` returns after both, so nothing needs a lock.
    private final class Halves: @unchecked Sendable {
        let readers: [LogReader]
        let ranges: [(UInt64, UInt64)]
        let collect: (LogReader, UInt64, UInt64) throws -> [RecordedEvent]
        var results: [Result<[RecordedEvent], any Error>] = [.success([]), .success([])]

        init(readers: [LogReader], ranges: [(UInt64, UInt64)], collect: @escaping (LogReader, UInt64, UInt64) throws -> [RecordedEvent]) {
            self.readers = readers
            self.ranges = ranges
            self.collect = collect
        }

        func run(_ half: Int) {
            results[half] = Result { try collect(readers[half], ranges[half].0, ranges[half].1) }
        }
    }

    /// Whether the eight bytes of `id` occur in `payload`: `memchr` for the first byte (a
    /// random byte, so rarely more than one candidate an event), then the other seven compared.
    static func payload(_ payload: ArraySlice<UInt8>, contains id: [UInt8]) -> Bool {
        precondition(id.count == 8)
        let wanted = id.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        return payload.withUnsafeBytes { bytes in
            guard bytes.count >= 8, let base = bytes.baseAddress else { return false }
            var from = 0
            let last = bytes.count - 8
            while from <= last {
                guard let found = memchr(base + from, Int32(id[0]), last - from + 1) else { return false }
                let at = base.distance(to: UnsafeRawPointer(found))
                if bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self) == wanted { return true }
                from = at + 1
            }
            return false
        }
    }

    /// The pin `text` names among the pins on the map now or, failing that, every pin the log
    /// ever dropped (so removed pins can be asked about).
    public func pin(matching text: String) throws -> PinID {
        try pinAndDrop(matching: text).pin
    }

    /// The same, with the sequence number of its drop when the pin is on the map now (where its
    /// history starts); nil for a removed pin.
    public func pinAndDrop(matching text: String) throws -> (pin: PinID, droppedAt: UInt64?) {
        let onMap = try pinsOnMap()
        do {
            let pin = PinID(parsing: try TouristState.resolve(text, among: onMap.keys.map(\.description), what: "pin"))!
            return (pin, onMap[pin])
        } catch let error as DomainError where error.code == .unknownPin {
            let all = try droppedPins().map(\.description)
            return (PinID(parsing: try TouristState.resolve(text, among: all, what: "pin"))!, nil)
        }
    }

    /// The pins on the map at ``lastSequence``, each with the sequence number of its drop:
    /// the newest snapshot's pins without their albums, then the fold of the events since.
    /// Whether a pin exists never depends on its album (the rules of PinDropped, PinRemoved
    /// and PlaceForgotten look at the pins alone), so this is the current state's answer
    /// without decoding 130,000 photos; the state it folds is never handed out.
    func pinsOnMap() throws -> [PinID: UInt64] {
        do {
            let skeleton = try snapshots.newest(atOrBefore: lastSequence, reader: log, pinsOnly: true).0 ?? TouristState()
            return try TouristStore.replay(log, from: skeleton, through: lastSequence).0.pins.mapValues(\.droppedAt)
        } catch {
            throw TouristStore.storageError(error, "the pins on the map cannot be read")
        }
    }
}
