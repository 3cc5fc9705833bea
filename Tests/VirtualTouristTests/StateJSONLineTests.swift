import BlobStore
import EventLog
import Foundation
import StorageTestSupport
import Testing
import TouristWorkload
@testable import VirtualTourist

/// `StateDiffJSON.line(_:)` and `StateJSON.line(_:)` write the photos straight from the diff or
/// the state. Their bytes must be the encoder's (`EventJSON.encodeLine` of `StateDiffJSON` or
/// `StateJSON`), for states and diffs along the workload (far and near, both ways) and for
/// photos in every state with texts that need escaping.
@Suite(.heavy) struct StateJSONLineTests {
    static func encoderBytes(_ diff: StateDiff) throws -> [UInt8] {
        Array(try EventJSON.encodeLine(StateDiffJSON(diff)).utf8)
    }

    @Test func theLinesAreTheEncodersAlongTheWorkload() throws {
        var workload = Workload(seed: 2028, livePins: 25)
        let states = workload.states(every: 4_000, until: 16_000)
        var photos = 0
        for state in states {
            let same = try StateJSON.line(state) == Array(EventJSON.encodeLine(StateJSON(state)).utf8)
            #expect(same, "the state at \(state.sequence)")
        }
        for (a, b) in [(0, states.count - 1), (1, 3), (states.count - 1, 1), (2, 2)] {
            let diff = states[a].difference(to: states[b])
            let same = try StateDiffJSON.line(diff) == Self.encoderBytes(diff)
            #expect(same, "from \(diff.from) to \(diff.to)")
            photos += diff.photosAdded.count + diff.photosRemoved.count
        }
        #expect(photos > 1_000)
    }

    @Test func photosInEveryStateWithTextsThatNeedEscaping() throws {
        var awkward = ""
        for byte in 0..<0x80 as Range<UInt8> { awkward.unicodeScalars.append(Unicode.Scalar(byte)) }
        awkward += "é€\u{2028}\u{2029}\u{FEFF}😀 \"quoted\" back\\slash /slash/"
        let digest = BlobDigest(bytes: (0..<32).map { UInt8($0 * 5) })!
        let photos = [
            ListedPhoto(remoteID: awkward, url: "https://x/\(awkward)", title: awkward),
            ListedPhoto(remoteID: "2", url: "", title: "", creator: "Ann \"A\" Lee"),
            ListedPhoto(remoteID: "3", url: "u", title: "t", licenceName: "CC BY-SA 4.0", licenceURL: "https://creativecommons.org/licenses/by-sa/4.0/", pageURL: "https://p/\u{1}", dateTaken: "2019-05-01"),
            ListedPhoto(remoteID: "", url: "u", title: "t", creator: awkward, dateTaken: "d"),
        ]
        let states: [PhotoSlot.State] = [
            .placeholder, .downloaded(digest: digest, byteCount: 0, mediaType: ""),
            .downloaded(digest: digest, byteCount: UInt64.max, mediaType: "image/jpeg"), .failed(reason: awkward), .failed(reason: ""),
        ]
        var diff = StateDiff(from: 0, to: UInt64.max)
        var number: UInt32 = 0
        for photo in photos {
            for state in states {
                let slot = PhotoSlot(number: number, photo: photo, state: state, resolvedAt: nil)
                diff.photosAdded.append(StateDiff.Photo(pin: PinID(UInt64(number) << 40), collection: number % 3 == 0 ? UInt32.max : number, slot: slot))
                diff.photosRemoved.insert(StateDiff.Photo(pin: PinID(0xABC), collection: 1, slot: slot), at: 0)
                number += 1
            }
        }
        diff.region = .init(before: nil, after: MapRegion(center: Coordinate(latitude: -0.5, longitude: 1e-7), latitudeSpan: 1, longitudeSpan: 2))
        let line = try StateDiffJSON.line(diff)
        let same = line == (try Self.encoderBytes(diff))
        #expect(same, "\(String(decoding: line, as: UTF8.self).prefix(400))")
        var onlyRemoved = diff
        onlyRemoved.photosAdded = []
        let sameRemoved = try StateDiffJSON.line(onlyRemoved) == Self.encoderBytes(onlyRemoved)
        #expect(sameRemoved)
    }
}
