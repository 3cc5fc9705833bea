import ArgumentParser
import Foundation
import VirtualTourist

/// The options every store command shares (the root's configuration, included in each
/// subcommand with `@OptionGroup`).
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The store's folder.",
        discussion: "Default: $VT_STORE, else $XDG_DATA_HOME/virtual-tourist, else ~/.local/share/virtual-tourist.",
        valueName: "path"))
    var store: String?

    @Flag(help: "Print data as JSON (JSON lines for streams of events).")
    var json = false

    /// Where the store is: `--store`, `$VT_STORE`, or the platform's data folder.
    var storePath: String {
        let environment = ProcessInfo.processInfo.environment
        if let store, !store.isEmpty { return store }
        if let variable = environment["VT_STORE"], !variable.isEmpty { return variable }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/virtual-tourist" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/virtual-tourist"
    }

    /// Opens the store for reading, without its lock (so it works beside a running writer).
    func reader() throws -> StoreReader {
        do { return try StoreReader.open(at: storePath) } catch let error as DomainError where error.code == .notAStore {
            throw RuntimeError(message: "\(error.message). Drop a pin (vt pin drop LAT LON) or import an export (vt import FILE) to create one, or point --store / VT_STORE at one.")
        }
    }

    /// Opens the store for changing it (taking its lock). `create`: make a new store when there
    /// is none.
    func openStore(create: Bool, retention: Duration? = nil) async throws -> TouristStore {
        var options = StoreOptions()
        if let retention { options.retention = retention }
        options.createIfMissing = create
        options.collectionInterval = nil  // a command is too short-lived for timed collection
        do {
            let store = try await TouristStore.open(at: storePath, options: options)
            if let cut = store.report.logRecovery.cutTail {
                // Opening for writing recovers a torn last batch; say so, it may be lost work.
                Terminal.note("warning: the log's last batch was incomplete and was cut off on opening: \(cut)")
            }
            return store
        } catch let error as DomainError
            where error.code == .notAStore
        {
            throw RuntimeError(message: "\(error.message). Use --store or VT_STORE to name a store folder.")
        }
    }

    /// Runs `body` on an open store and closes it whatever happens.
    func withStore<T>(create: Bool = false, retention: Duration? = nil, _ body: (TouristStore) async throws -> T) async throws -> T {
        let store = try await openStore(create: create, retention: retention)
        let result: T
        do { result = try await body(store) } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        return result
    }
}

/// Printing data: one JSON line, or text lines.
enum Output {
    static func json(_ value: some Encodable) throws {
        print(try EventJSON.encodeLine(value))
    }

    static func lines(_ lines: [String]) {
        for line in lines { print(line) }
    }

    /// Ends the process once a command has written all it has to say, without taking apart
    /// what it built: a diff of two far points holds two states of 130,000 photos each, and
    /// releasing them one allocation at a time took about 6 ms of a 100 ms `vt diff`, which the
    /// kernel's dropping the whole memory at exit does not need (docs/BENCHMARKS-JOURNAL.md, "vt diff of
    /// far points under 100 ms"). Standard output is flushed on the way out.
    static func finish() -> Never {
        exit(Exit.ok)
    }

    /// A line of JSON written already (`StateJSON.line`, `StateDiffJSON.line`).
    static func jsonLine(_ bytes: [UInt8]) {
        let out = LineWriter(colour: false)
        bytes.withUnsafeBytes { out.append(utf8: $0) }
        out.endLine()
        out.flush()
    }
}
