import ArgumentParser
import DeviceLogs
import Foundation
import VirtualTourist

/// `vt device [--name NAME]`: this store's device, its map, and the devices it has copies of.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Show this store's device, the map it belongs to, and the other devices it knows.",
        discussion: "A store is one device of a map (docs/DEVICES.md). --name names this device. Reads only, unless --name is given.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Name this device (1 to 64 characters).") var name: String?

    struct View: Encodable {
        struct Other: Encodable {
            var device: String
            var name: String?
            var events: UInt64
            var head: String
        }
        var map: String
        var device: String
        var name: String?
        var others: [Other]
    }

    func run() async throws {
        if let name { _ = try StoreSync.rename(store: global.storePath, to: name) }
        let devices = try StoreSync.devices(of: global.storePath)
        let view = View(
            map: devices.this.map.description, device: devices.this.device.description, name: devices.this.name,
            others: devices.copies.map { .init(device: $0.id.description, name: $0.file?.name, events: $0.head.sequence, head: $0.head.hash.description) })
        if global.json { return try Output.json(view) }
        print("device: \(view.device)" + (view.name.map { " (\($0))" } ?? ""))
        print("map:    \(view.map)")
        if view.others.isEmpty {
            print("the only device of its map (vt clone makes another)")
        }
        for other in view.others {
            print("other:  \(other.device)" + (other.name.map { " (\($0))" } ?? "") + ": \(other.events) events, head \(other.head.prefix(16))…")
        }
    }
}

/// `vt clone --from STORE --to DIR [--name NAME]`: a new device of the same map.
struct CloneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clone", abstract: "Make a new device of a store's map in a new folder.",
        discussion: """
            The new store gets its own device id and log, a copy of every log the source holds, and the source's photos. The \
            source is read as a reader reads: it may be open in another program. Nothing is left at the destination if the \
            clone is interrupted. With --from nats://… and --stream VT_<device>, the new device is made from the cluster \
            alone: every device's log comes from its stream and the photos from the buckets (an interrupted one is finished \
            by vt sync --with nats://…).
            """)
    @Option(help: ArgumentHelp("The store to clone, or the cluster's URLs (nats://host:port,…) with --stream.", valueName: "path|urls"))
    var from: String
    @Option(help: ArgumentHelp("A new or empty folder for the new device's store.", valueName: "path")) var to: String
    @Option(help: "The new device's name (1 to 64 characters).") var name: String?
    @Option(help: "With --from nats://…: a stream of the map, VT_ and a device's id.") var stream: String?
    @Flag(help: "Print the result as JSON.") var json = false

    func validate() throws {
        if ClusterSyncCommand.namesCluster(from) {
            guard stream != nil else { throw ValidationError("--from nats://… needs --stream VT_<device>: the cluster may hold several maps") }
        } else if stream != nil {
            throw ValidationError("--stream goes with --from nats://…; a clone of a folder takes every log the folder holds")
        }
    }

    struct View: Encodable {
        var map: String
        var device: String
        var name: String?
        var logs: [String: UInt64]
        var photos: Int
    }

    func run() async throws {
        if let stream { return try await ClusterSyncCommand.join(from: from, stream: stream, to: to, name: name, json: json) }
        let bar = ProgressBar()
        let report = try StoreSync.clone(from: from, to: to, name: name) { step in
            if case .photos(let done, let total) = step { bar.update("copying photos", done: Int64(done), total: Int64(total)) }
        }
        bar.finish()
        let view = View(
            map: report.map.description, device: report.device.description, name: report.name,
            logs: Dictionary(uniqueKeysWithValues: report.logs.map { ($0.device.description, $0.head.sequence) }), photos: report.photos)
        if json { return try Output.json(view) }
        print("cloned \(from) into \(to): device \(view.device)" + (view.name.map { " (\($0))" } ?? "") + " of map \(view.map)")
        for copied in report.logs { print("  copied device \(copied.device)'s log: \(copied.head.sequence) events") }
        print("  photos: \(report.photos)")
    }
}

/// `vt sync --with DIR`: both ways between two devices' store folders.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Take what this device lacks from another device's store folder, and give it what it lacks.",
        discussion: "The other folder is read as a reader reads (it may be open elsewhere); it is written only when no other program holds it. Logs that do not verify, that rewrite events this store has, or that claim this device's id are refused and named; the others sync. Safe to interrupt and to repeat.")
    @OptionGroup var global: GlobalOptions
    @Option(
        name: .customLong("with"),
        help: ArgumentHelp("The other device's store folder, or the cluster's URLs (nats://host:port,…) to sync through it.", valueName: "path|urls"))
    var other: String
    @Flag(help: "Through a cluster: send and take what there is now, then stop (default: live until interrupted).") var once = false

    func validate() throws {
        if once, !ClusterSyncCommand.namesCluster(other) {
            throw ValidationError("--once is for a sync through a cluster (--with nats://…); a sync with a folder always runs once")
        }
    }

    struct View: Encodable {
        var events_taken: UInt64
        var events_given: UInt64
        var photos_taken: Int
        var photos_given: Int
        var not_given: String?
        var refused: [String]
        var places_forgotten_here: [String]
        var places_forgotten_there: [String]
        var erased_on_arrival: UInt64
        /// Why a forget that arrived in the other store is not finished yet (it finishes when
        /// that store next opens).
        var forgets_pending_there: String?
        /// The size and root of the head this device signed for the others, or why it did not.
        var signed_head_size: UInt64?
        var signed_head_root: String?
        var not_signed: String?
    }

    func run() async throws {
        if ClusterSyncCommand.namesCluster(other) { return try await ClusterSyncCommand.run(global: global, urls: other, once: once) }
        let store = global.storePath
        // Forgets that a sync cut short left in either store are finished first: a sync refuses
        // to copy a place whose events are not erased yet.
        _ = try await StoreSync.finishForgets(in: store)
        do { _ = try await StoreSync.finishForgets(in: other) } catch {}  // held by its program, which finished them
        let report = try StoreSync.sync(store: store, with: other)
        if !report.forgetsTaken.isEmpty {
            if !global.json { Terminal.note("erasing \(report.forgetsTaken.count) forgotten place(s) here") }
            _ = try await StoreSync.finishForgets(in: store)
        }
        var pendingThere: String?
        if !report.forgetsGiven.isEmpty {
            if !global.json { Terminal.note("erasing \(report.forgetsGiven.count) forgotten place(s) in \(other)") }
            do { _ = try await StoreSync.finishForgets(in: other) } catch { pendingThere = "\(error)" }
        }
        let view = View(
            events_taken: report.eventsTaken, events_given: report.eventsGiven, photos_taken: report.photosTaken,
            photos_given: report.photosGiven, not_given: report.notGiven, refused: report.refused,
            places_forgotten_here: report.forgetsTaken.map(\.description), places_forgotten_there: report.forgetsGiven.map(\.description),
            erased_on_arrival: report.erasedOnArrival, forgets_pending_there: pendingThere,
            signed_head_size: report.signedHead?.treeSize, signed_head_root: report.signedHead?.root.description, not_signed: report.notSigned)
        if global.json {
            try Output.json(view)
        } else {
            print("took \(view.events_taken) event(s) and \(view.photos_taken) photo(s) from \(other)")
            if let why = view.not_given {
                print("gave nothing: \(why)")
            } else {
                print("gave \(view.events_given) event(s) and \(view.photos_given) photo(s) to \(other)")
            }
            for pin in view.places_forgotten_here { print("place \(pin) was forgotten on another device: erased here") }
            if let why = view.forgets_pending_there {
                print("the other store erases \(view.places_forgotten_there.count) forgotten place(s) when it next opens: \(why)")
            } else {
                for pin in view.places_forgotten_there { print("place \(pin) was forgotten on a device of this map: erased in \(other)") }
            }
            if view.erased_on_arrival > 0 { print("\(view.erased_on_arrival) event(s) about forgotten places arrived and were erased") }
            if let size = view.signed_head_size, let root = view.signed_head_root {
                print("signed this device's head for the others: \(size) event(s), root \(root)")
            }
            if let why = view.not_signed { print(Terminal.styled("not signed: ", .red) + why) }
            for refusal in view.refused { print(Terminal.styled("refused: ", .red) + refusal) }
        }
        if !report.refused.isEmpty { throw ExitCode(Exit.problemsFound) }
    }
}
