import Testing
import TouristWorkload
@testable import VirtualTourist
@testable import WebApp

@Suite("The map's answer written as bytes")
struct MapLineTests {
    static func encoderBytes(_ state: TouristState, last: UInt64) throws -> [UInt8] {
        Array(try EventJSON.encodeLine(MapJSON(state, last: last)).utf8)
    }

    @Test("is the encoder's answer, byte for byte, along the workload")
    func theLineIsTheEncodersAlongTheWorkload() throws {
        var workload = Workload(seed: 2029, livePins: 40)
        var pins = 0
        for state in workload.states(every: 3_000, until: 15_000) {
            for last in [state.sequence, state.sequence + 7] {
                let same = try MapJSON.line(state, last: last) == Self.encoderBytes(state, last: last)
                #expect(same, "the state at \(state.sequence), the log ending at \(last)")
            }
            pins += state.pins.count
        }
        #expect(pins > 100)
    }

    @Test("is the encoder's answer for numbers at their edges, albums in every status and no region")
    func theLineIsTheEncodersAtTheEdges() throws {
        let coordinates: [(Double, Double)] = [
            (0, -0.0), (90, -180), (-90, 180), (1e-7, -1.5e-5), (45.45887051549815, 98.28178973623386),
            (-0.1, 179.99999999999997), (12, 34), (Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude),
        ]
        var state = TouristState()
        state.sequence = 41
        #expect(try MapJSON.line(state, last: 41) == Self.encoderBytes(state, last: 41), "no pins, no region")
        let phases: [Album.Phase] = [.notRequested, .listing, .listed, .failed(reason: "the \"service\"\n\\ down")]
        for (index, (latitude, longitude)) in coordinates.enumerated() {
            var album = Album(collection: UInt32(index + 1))
            album.phase = phases[index % phases.count]
            if case .listed = album.phase {
                album.listedPhotoCount = index
                let photos = (0..<index).map { ListedPhoto(remoteID: "\($0)", url: "https://e/\($0)", title: "t") }
                album.slots = photos.indices.map { position in
                    let state: PhotoSlot.State = position % 3 == 0
                        ? .downloaded(digest: PhotoDigest(bytes: Array(repeating: UInt8(position), count: 32))!, byteCount: 1, mediaType: "image/png")
                        : position % 3 == 1 ? .failed(reason: "x") : .placeholder
                    return PhotoSlot(number: UInt32(position), photo: photos[position], state: state, resolvedAt: nil)
                }
            }
            let id = PinID(UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
            state.pins[id] = Pin(id: id, coordinate: Coordinate(latitude: latitude, longitude: longitude), droppedAt: UInt64(index + 1), album: album)
        }
        #expect(try MapJSON.line(state, last: 99) == Self.encoderBytes(state, last: 99), "pins, no region")

        // No place (off the Earth: the key is left out, not null) and No Images.
        var noImages = Album()
        noImages.phase = .listed
        let offEarth = PinID(91)
        state.pins[offEarth] = Pin(id: offEarth, coordinate: Coordinate(latitude: 91, longitude: 0), droppedAt: 100, album: noImages)
        #expect(PlaceJSON(Coordinate(latitude: 91, longitude: 0)) == nil)
        let withoutPlace = try MapJSON.line(state, last: 100)
        #expect(withoutPlace == (try Self.encoderBytes(state, last: 100)))
        #expect(String(decoding: withoutPlace, as: UTF8.self).contains(#""photos":0,"status":"no-images"}"#))
        state.region = MapRegion(center: Coordinate(latitude: -0.0, longitude: 1e-7), latitudeSpan: 180, longitudeSpan: 360)
        let line = try MapJSON.line(state, last: 99)
        #expect(line == (try Self.encoderBytes(state, last: 99)), "\(String(decoding: line, as: UTF8.self))")

        // A number JSON has no text for: refused, as the encoder refuses it.
        let nowhere = PinID(92)
        state.pins[nowhere] = Pin(id: nowhere, coordinate: Coordinate(latitude: .nan, longitude: 0), droppedAt: 101, album: Album())
        #expect(throws: (any Error).self) { _ = try Self.encoderBytes(state, last: 101) }
        #expect(throws: (any Error).self) { _ = try MapJSON.line(state, last: 101) }
    }
}
