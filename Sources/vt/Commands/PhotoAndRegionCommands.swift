import ArgumentParser
import VirtualTourist

/// `vt photo remove PIN PHOTO`.
struct PhotoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photo", abstract: "Remove a photo from an album.", subcommands: [Remove.self])

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove one photo from a pin's album; the album closes up, the other photos keep their ids.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The pin's id, or a unique prefix of it.") var pin: String
        @Argument(help: "The photo's id as `vt album` shows it (or a unique prefix of it, or of its digest).") var photo: String

        func run() async throws {
            let (event, removed) = try await global.withStore { store in
                let pin = try store.state.pin(matching: pin)
                let slot = try pin.album.photo(matching: photo)
                return (try await store.removePhoto(slot.number, from: pin.id, collection: pin.album.collection), slot)
            }
            if global.json { return try Output.json(EventJSON(event)) }
            print("removed photo \(removed.photo.remoteID) (slot \(removed.number)) (event \(event.sequence))")
        }
    }
}

/// `vt region`, `vt region set LAT LON SPAN_LAT SPAN_LON`.
struct RegionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "region", abstract: "Show or set the map region in view.", subcommands: [Show.self, Set.self],
        defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the map region the app opens on.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let region = try global.reader().currentState().region
            if global.json { return try Output.json(RegionView(region: region.map(RegionJSON.init))) }
            print(region.map { "map region: " + Describe.region($0) } ?? "the map region was never set; the app opens on the whole world")
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the map region: its centre and the degrees of latitude and longitude in view.")
        @OptionGroup var global: GlobalOptions
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Centre and spans, in degrees.", valueName: "LAT LON SPAN_LAT SPAN_LON"))
        var values: [String] = []

        func region() throws -> MapRegion {
            let numbers = try ArgumentValues.numbers(values, names: ["LAT", "LON", "SPAN_LAT", "SPAN_LON"])
            let region = MapRegion(
                center: Coordinate(latitude: numbers[0], longitude: numbers[1]), latitudeSpan: numbers[2], longitudeSpan: numbers[3])
            if let problem = region.problem { throw ValidationError(problem) }
            return region
        }

        func validate() throws { _ = try region() }

        func run() async throws {
            let region = try region()
            let event = try await global.withStore(create: true) { try await $0.changeRegion(to: region) }
            if global.json { return try Output.json(EventJSON(event)) }
            print("map region set: \(Describe.region(region)) (event \(event.sequence))")
        }
    }
}

struct RegionView: Encodable {
    var region: RegionJSON?
}
