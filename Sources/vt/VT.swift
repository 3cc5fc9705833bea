import ArgumentParser
import Foundation

/// `vt`: the Virtual Tourist command line. The shared options (`--store`, `--json`) live in
/// ``GlobalOptions``; each subcommand lives in its own file under `Commands/` and its logic in
/// the library. Exit codes (docs/CLI.md): 0 ok, 1 error, 2 usage, 3 verification found problems.
@main
struct VT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vt",
        abstract: "Virtual Tourist: pins, photo albums, and the event log that remembers them.",
        discussion: """
            Exit codes: 0 ok, 1 error, 2 usage (a bad argument), 3 verification found problems. \
            The store is --store, else $VT_STORE, else $XDG_DATA_HOME/virtual-tourist, else \
            ~/.local/share/virtual-tourist. Pin and photo ids \
            accept unique prefixes of at least 4 characters.
            """,
        subcommands: [
            Demo.self, ServeCommand.self, PinCommand.self, PinsCommand.self, AlbumCommand.self, PhotoCommand.self, RegionCommand.self,
            LogCommand.self, ShowCommand.self, HistoryCommand.self, WhyCommand.self, StatsCommand.self,
            StateCommand.self, DiffCommand.self, ReplayCommand.self, BisectCommand.self,
            VerifyCommand.self, RepairCommand.self, CompactCommand.self, UpgradeCommand.self, ForgetCommand.self, GCCommand.self, SnapshotCommand.self, ExportCommand.self, ImportCommand.self,
            ReplicateCommand.self, RestoreCommand.self, FollowCommand.self,
            DeviceCommand.self, CloneCommand.self, SyncCommand.self,
            HeadCommand.self, ProveCommand.self, CheckProofCommand.self,
            LogDemoCommand.self,
            PlaceCommand.self,
        ],
        defaultSubcommand: Demo.self
    )

    /// Parses and runs, mapping ArgumentParser's usage failures (64) to 2 and printing errors
    /// as `vt: …` on standard error.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(Exit.ok)
            }
            let message = ErrorHints.message(for: error).map { "Error: \($0)" } ?? fullMessage(for: error)
            if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            Foundation.exit(code == .validationFailure ? Exit.usage : code.rawValue)
        }
    }
}
