import ArgumentParser
import VirtualTourist

/// `vt place LAT LON`: what a pin there would be called, offline (no store needed).
struct PlaceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "place", abstract: "Name a place: the nearest town, the country, or the sea.",
        discussion: "Offline, from GeoNames' places of 1,000 people or more and Natural Earth's countries (docs/PLACES.md). Example: vt place 28.963 -13.548")
    @Flag(help: "One JSON object, as pins carry it in vt pins --json.") var json = false
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Latitude (-90…90) and longitude (-180…180) in degrees.", valueName: "LAT LON"))
    var values: [String] = []

    func validate() throws {
        _ = try ArgumentValues.coordinate(values)
    }

    func run() throws {
        let place = try ArgumentValues.coordinate(values)
        guard let name = PlaceJSON(place) else { throw RuntimeError(message: "the place data is missing from this build of vt") }
        if json { try Output.json(name) } else { print(name.text) }
    }
}
