import ArgumentParser

/// `vt`: the Virtual Tourist command line. The root holds what every subcommand shares; each
/// subcommand lives in its own file and its logic in the library.
@main
struct VT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vt",
        abstract: "Virtual Tourist: pins, photo albums, and the event log that remembers them.",
        subcommands: [Demo.self, LogDemoCommand.self],
        defaultSubcommand: Demo.self
    )
}
