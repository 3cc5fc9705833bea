import ArgumentParser
import VirtualTourist

/// `vt pin drop|drag|remove`: the map's actions.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin", abstract: "Drop, drag or remove a pin.", subcommands: [Drop.self, Drag.self, Remove.self])

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drop a pin on the map (creates the store if there is none).",
            discussion: "Its album is searched for when you open it: vt album PIN. Negative numbers need no quoting: vt pin drop -33.8568 151.2153")
        @OptionGroup var global: GlobalOptions
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Latitude (-90…90) and longitude (-180…180) in degrees.", valueName: "LAT LON"))
        var values: [String] = []

        func validate() throws { _ = try ArgumentValues.coordinate(values) }

        func run() async throws {
            let place = try ArgumentValues.coordinate(values)
            let (pin, sequence) = try await global.withStore(create: true) { store in
                let pin = try await store.dropPin(at: place)
                return (pin, store.lastSequence)
            }
            if global.json {
                try Output.json(PinEventJSON(pin: pin.description, latitude: place.latitude, longitude: place.longitude, seq: sequence))
            } else {
                print("dropped pin \(pin) at \(Describe.place(place)) (event \(sequence))")
            }
        }
    }

    struct Drag: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a pin; its album moves with it (a new collection is fetched for the new place).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The pin's id, or a unique prefix of it (at least 4 characters).") var pin: String
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The new latitude and longitude.", valueName: "LAT LON"))
        var values: [String] = []

        func validate() throws { _ = try ArgumentValues.coordinate(values) }

        func run() async throws {
            let place = try ArgumentValues.coordinate(values)
            let event = try await global.withStore { store in
                try await store.dragPin(try store.state.pin(matching: pin).id, to: place)
            }
            guard case .pinDragged(let id, _) = event.event else { return }
            if global.json {
                try Output.json(PinEventJSON(pin: id.description, latitude: place.latitude, longitude: place.longitude, seq: event.sequence))
            } else {
                print("moved pin \(id) to \(Describe.place(place)) (event \(event.sequence))")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a pin and its album.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The pin's id, or a unique prefix of it.") var pin: String

        func run() async throws {
            let event = try await global.withStore { store in try await store.removePin(try store.state.pin(matching: pin).id) }
            guard case .pinRemoved(let id) = event.event else { return }
            if global.json {
                try Output.json(PinEventJSON(pin: id.description, latitude: nil, longitude: nil, seq: event.sequence))
            } else {
                print("removed pin \(id) (event \(event.sequence)); its photos are collected after the retention window")
            }
        }
    }
}

/// What a pin action did, for `--json`.
struct PinEventJSON: Encodable {
    var pin: String
    var latitude: Double?
    var longitude: Double?
    var seq: UInt64
}

/// `vt pins`: the pins on the map.
struct PinsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pins", abstract: "List the pins on the map, in drop order.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let state = try global.reader().currentState()
        if global.json {
            for pin in state.pinsInDropOrder { try Output.json(PinJSON(pin, localDevice: state.localDevice)) }
        } else if state.pins.isEmpty {
            print("no pins yet; drop one with: vt pin drop LAT LON")
        } else {
            Output.lines(state.pinsInDropOrder.map(Describe.pinRow))
        }
    }
}
