import Places
import Testing
@testable import VirtualTourist

@Suite("A pin's place in words, remembered")
struct PlaceJSONTests {
    @Test("a place is the geocoder's, the same when asked again, and the memory of places stays bounded")
    func placesAreRememberedWithinBounds() throws {
        let arrecife = Coordinate(latitude: 28.963, longitude: -13.548)
        let first = try #require(PlaceJSON(arrecife))
        let direct = try ReverseGeocoder.bundled().describe(latitude: 28.963, longitude: -13.548)
        #expect(first.text == direct.text && first.name == direct.name && first.country == direct.country)
        #expect(PlaceJSON(arrecife) == first)
        // Off the Earth: none, the first time and from memory.
        for _ in 0..<2 { #expect(PlaceJSON(Coordinate(latitude: 91, longitude: 0)) == nil) }
        #expect(PlaceJSON(Coordinate(latitude: .nan, longitude: 0)) == nil)

        // More places than it keeps: it keeps no more, and every answer is still the geocoder's.
        var described: [(Coordinate, PlaceJSON?)] = []
        for index in 0..<(PlaceJSON.remembered + 50) {
            let place = Coordinate(latitude: -60 + Double(index) * 0.007, longitude: Double(index % 360) - 179.5)
            described.append((place, PlaceJSON(place)))
            #expect(PlaceJSON.rememberedCount <= PlaceJSON.remembered)
        }
        #expect(PlaceJSON.rememberedCount == PlaceJSON.remembered, "it fills up to its bound")
        for (place, answer) in described.suffix(100) + described.prefix(100) {
            let direct = try? ReverseGeocoder.bundled().describe(latitude: place.latitude, longitude: place.longitude)
            #expect(answer?.text == direct?.text, "\(place)")
            #expect(PlaceJSON(place) == answer, "\(place)")
        }
        #expect(PlaceJSON(arrecife) == first)
    }
}
