import BlobStore
import EventLog
import Testing
import TouristWorkload
import VirtualTourist
@testable import vt

/// `vt diff` writes its lines as bytes (``LineWriter``) instead of a `String` a line. The text
/// must not have moved: the way it was written before (`referenceLines`, kept here) and today's
/// are compared on diffs along the benchmark workload, with colour on and off.
@Suite struct DiffTextTests {
    @Test func theByteWriterWritesTheLinesThePrintedStringsDid() {
        var workload = Workload(seed: 2027, livePins: 30)
        let states = workload.states(every: 4_000, until: 20_000)
        var linesCompared = 0, diffsWithBoth = 0
        for (a, b) in [(0, states.count - 1), (1, 3), (states.count - 1, 2), (2, 2), (1, 4)] {
            let diff = states[a].difference(to: states[b])
            if !diff.photosAdded.isEmpty, !diff.photosRemoved.isEmpty { diffsWithBoth += 1 }
            for colour in [false, true] {
                let reference = Self.referenceLines(diff, colour: colour).joined(separator: "\n") + "\n"
                // On one core, and with the removed photos written on a second whatever their number.
                for twoCoresFrom in [Int.max, 0] {
                    let same = Self.text(diff, colour: colour, twoCoresFrom: twoCoresFrom) == reference
                    #expect(same, "from \(diff.from) to \(diff.to), colour \(colour), two cores from \(twoCoresFrom)")
                }
                linesCompared += diff.photosAdded.count + diff.photosRemoved.count
            }
        }
        #expect(linesCompared > 2_000, "the diffs list many photos")
        #expect(diffsWithBoth > 0, "some diffs list photos both added and removed")
    }

    @Test func aPhotoLineKeepsLeadingZerosAndAnyRemoteID() {
        let pin = PinID(0x0000_0ABC_FFFF_FFFF)
        let place = Coordinate(latitude: -33.5, longitude: 151.25)
        let photo = ListedPhoto(remoteID: "Fichier:Zürich_€.jpg", url: "https://example.org/a.jpg", title: "")
        var state = TouristState()
        let events: [DomainEvent] = [
            .pinDropped(pin, place),
            .albumRequested(AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 1, place: place)),
            .photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 1, photos: [photo])),
            .photoDownloaded(DownloadedPhoto(
                pin: pin, collection: 1, slot: 0, digest: BlobDigest(bytes: [UInt8](repeating: 9, count: 32))!,
                byteCount: 1, mediaType: "image/jpeg")),
        ]
        for (index, event) in events.enumerated() {
            state.apply(RecordedEvent(sequence: UInt64(index + 1), timestamp: LogTimestamp(microsecondsSinceEpoch: 0), cause: nil, event: event))
        }
        let diff = TouristState().difference(to: state)
        #expect(diff.photosAdded.count == 1)
        #expect(Self.text(diff, colour: false).split(separator: "\n").last
                == "  + photo Fichier:Zürich_€.jpg (pin 00000abc, collection 1, slot 0)")
    }

    @Test func numbersAtTheirLimits() {
        let out = LineWriter(colour: false, flushThreshold: nil)
        out.appendDecimal(UInt64.max); out.append(" ")
        out.appendDecimal(UInt64(0)); out.append(" ")
        out.appendDecimal(UInt32(10)); out.append(" ")
        out.appendHex(0, digits: 8); out.append(" ")
        out.appendHex(UInt64.max, digits: 16); out.append(" ")
        out.appendHex(0x1234_5678_9ABC_DEF0, digits: 4)
        out.endLine()
        #expect(String(decoding: out.bytes, as: UTF8.self) == "18446744073709551615 0 10 00000000 ffffffffffffffff def0\n")
    }

    static func text(_ diff: StateDiff, colour: Bool, twoCoresFrom: Int = 10_000) -> String {
        let out = LineWriter(colour: colour, flushThreshold: nil)
        Describe.diff(diff, to: out, twoCoresFrom: twoCoresFrom)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// The lines as `vt diff` made them before, a `String` each.
    static func referenceLines(_ diff: StateDiff, colour: Bool) -> [String] {
        func styled(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        var lines = ["from event \(diff.from) to event \(diff.to):"]
        if diff.isEmpty { return lines + ["  nothing changed"] }
        if let region = diff.region {
            lines.append("  map region: \(region.before.map(Describe.region) ?? "not set") → \(region.after.map(Describe.region) ?? "not set")")
        }
        lines += diff.pinsAdded.map { styled("  + pin \($0.id) at \(Describe.place($0.coordinate))", "32") }
        lines += diff.pinsRemoved.map { styled("  - pin \($0.id) at \(Describe.place($0.coordinate))", "31") }
        lines += diff.pinsMoved.map { "  ~ pin \($0.pin) moved \(Describe.place($0.from)) → \(Describe.place($0.to))" }
        lines += diff.photosAdded.map {
            styled("  + photo \($0.slot.photo.remoteID) (pin \(Describe.short($0.pin)), collection \($0.collection), slot \($0.slot.number))", "32")
        }
        lines += diff.photosRemoved.map {
            styled("  - photo \($0.slot.photo.remoteID) (pin \(Describe.short($0.pin)), collection \($0.collection), slot \($0.slot.number))", "31")
        }
        return lines
    }
}

/// ``Describe/number(_:)`` writes what printf's `%.6f` wrote (``Describe/formatted(_:)``), for
/// coordinates, spans, halfway cases and numbers printf alone can write.
@Suite struct NumberTextTests {
    @Test func numbersReadAsPrintfWroteThem() {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [
            0, -0.0, 1, -1, 180, -180, 90, -90, 360, 0.000001, -0.000001, 0.0000004, -0.0000004, 0.0000005, -0.0000005,
            0.0000015, 2.5e-7, 12.3456785, -12.3456785, 0.1, 0.7, 1e-300, 123_456.7, 1e10, 1e12, -4.9e11,
            .infinity, -.infinity, .nan, .greatestFiniteMagnitude, Double.ulpOfOne,
        ]
        for _ in 0..<50_000 { values.append(Double.random(in: -400...400, using: &generator)) }
        for _ in 0..<5_000 { values.append(Double.random(in: -1...1, using: &generator) * 1e-5) }
        // Halfway between two millionths, and a unit of the last place either side.
        for _ in 0..<5_000 {
            let half = (Double(Int.random(in: -180_000_000...180_000_000, using: &generator)) + 0.5) / 1_000_000
            values += [half, half.nextUp, half.nextDown]
        }
        var differing: [Double] = []
        for value in values where Describe.number(value) != Describe.formatted(value) { differing.append(value) }
        #expect(differing.isEmpty, "\(differing.prefix(5).map { "\($0): \(Describe.number($0)) ≠ \(Describe.formatted($0))" })")
        #expect(Describe.number(-12.3456785) == Describe.formatted(-12.3456785))
        #expect(Describe.number(151.25) == "151.25")
        #expect(Describe.number(-0.0000004) == "0")
    }
}
