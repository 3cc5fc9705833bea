import ArgumentParser
import DeviceLogs
import EventLog
import Foundation
import HistoryProofs
import Proofs
import VirtualTourist

/// Which log of the store a proof is about: this device's own, or with `--device` a copy's.
struct ProvedLog: ParsableArguments {
    @Option(help: "Another device's log (its id), in a store of several devices; this device's by default.") var device: String?

    func tree(in store: String) throws -> LogTree {
        var path = store + "/log"
        if let device {
            guard let id = DeviceID(parsing: device) else { throw ValidationError("--device takes a device id: 32 hexadecimal digits") }
            let copy = StoreDevices.logPath(store: store, device: id)
            if FileManager.default.fileExists(atPath: copy) {
                path = copy
            } else {
                let own = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).identity()
                guard own?.logID == id.bytes else { throw RuntimeError(message: "the store at \(store) holds no log of device \(id)") }
            }
        }
        guard FileManager.default.fileExists(atPath: path) else { throw RuntimeError(message: "there is no store at \(store)") }
        do {
            let reader = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec)
            // The chunks' roots, kept per log in the store's proofs/ folder (docs/PROOFS.md).
            let roots = try reader.identity().map { StoreSync.rootsFile(in: store, of: $0.logID) }
            return try LogTree(reader: reader, rootsFile: roots)
        } catch let error as ProofError {
            throw RuntimeError(message: error.message)
        } catch let error as LogError {
            throw RuntimeError(message: "the log at \(path) cannot be read: \(error.message)")
        }
    }
}

/// `vt prove SEQ [--size N]` · `vt prove --consistency M [--size N]`.
struct ProveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prove", abstract: "Prove that an event is in the log's history, or that the history only grew (docs/PROOFS.md).",
        discussion: "Prints the proof (--json: as JSON); --out FILE writes its binary form. Anyone checks it with vt check-proof.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var log: ProvedLog
    @Argument(help: "The event (its number in the log).") var sequence: UInt64?
    @Option(help: "The tree's size: the history of the first N events (default: all).") var size: UInt64?
    @Option(help: "Prove that the history of --size events extends the history of M events.") var consistency: UInt64?
    @Option(help: "Write the proof's binary form into this file (a new file).") var out: String?

    func validate() throws {
        if (sequence == nil) == (consistency == nil) { throw ValidationError("name an event (vt prove SEQ) or --consistency M, one of them") }
        if sequence == 0 || consistency == 0 || size == 0 { throw ValidationError("events are numbered from 1, and a tree has at least 1") }
    }

    func run() throws {
        let tree = try log.tree(in: global.storePath)
        let bar = ProgressBar()
        let proof: ProofFile
        do {
            let progress: (UInt64, UInt64) -> Void = { bar.update("hashing", done: Int64($0), total: Int64($1)) }
            proof = try sequence.map { try tree.inclusion(of: $0, size: size, progress: progress) }
                ?? tree.consistency(from: consistency!, to: size, progress: progress)
        } catch let error as ProofError {
            throw RuntimeError(message: error.message)
        }
        bar.finish()
        if let out {
            guard !FileManager.default.fileExists(atPath: out) else { throw RuntimeError(message: "\(out) exists; a proof is written into a new file") }
            guard FileManager.default.createFile(atPath: out, contents: Data(proof.binary)) else { throw RuntimeError(message: "cannot write \(out)") }
            Terminal.note("wrote \(proof.binary.count) bytes into \(out)")
        }
        if global.json { return Output.lines([proof.json]) }
        Output.lines(ProofVerdict.of(proof).lines + ["path: \(proof.path.count) hashes (\(32 * proof.path.count) bytes)"] + proof.path.map { "  \($0)" })
    }
}

/// `vt check-proof FILE [--root HEX]`.
struct CheckProofCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-proof", abstract: "Check a proof (vt prove), a signed head (vt head --sign) or an erasure receipt (vt forget); needs no store.",
        discussion: "Exit 0 when it holds, 3 when it does not. --root compares the root it leads to with one you trust.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The proof's file.") var file: String
    @Option(help: "The root (64 hexadecimal digits) the proof must lead to: a head you saw or were given.") var root: String?
    @Option(help: "A signed head (vt head --sign --out) whose root and size the proof must lead to; its signature is checked too.")
    var head: String?
    @Option(help: "The public key (64 hexadecimal digits) a signed head must be signed with.") var publicKey: String?

    func validate() throws {
        if let root, TreeHash(hex: root) == nil { throw ValidationError("--root takes 64 hexadecimal digits") }
        if let publicKey, TreeHash(hex: publicKey) == nil { throw ValidationError("--public-key takes 64 hexadecimal digits") }
        if root != nil, head != nil { throw ValidationError("--root and --head both name the root; give one") }
    }

    private static func read(_ file: String, largest: Int = 64 << 10) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: file) else { throw RuntimeError(message: "cannot read \(file)") }
        guard data.count <= largest else {
            throw RuntimeError(message: "\(file) has \(data.count) bytes; a proof has a few hundred, a receipt at most \(ReceiptCheck.largest)")
        }
        return Array(data)
    }

    /// A signed head and what its check found: its signature holds, and it is by `--public-key`
    /// when one was given.
    private func checkedHead(_ bytes: [UInt8], place: String) throws -> (SignedHead, ProofVerdict) {
        let signed: SignedHead
        do { signed = try SignedHead.decode(bytes, place: place) } catch let error as ProofError { throw RuntimeError(message: error.message) }
        var verdict = ProofVerdict.of(signed)
        if !signed.verify() {
            verdict.problems.append("the signature is not the public key's over this head")
        } else if let publicKey, publicKey.lowercased() != verdict.publicKey {
            verdict.problems.append("for the key you gave: it was signed with another")
        }
        return (signed, verdict)
    }

    func run() throws {
        let bytes = try Self.read(file, largest: ReceiptCheck.largest)
        if ErasureReceipt.isReceipt(bytes) {
            if root != nil || head != nil { throw ValidationError("a receipt names its own heads: --root and --head are for a proof") }
            return try ReceiptCheck.verdict(bytes, place: file, publicKey: publicKey).show(json: global.json)
        }
        guard bytes.count <= 64 << 10 else { throw RuntimeError(message: "\(file) has \(bytes.count) bytes; a proof has a few hundred") }
        if SignedHead.isSignedHead(bytes) {
            var (_, verdict) = try checkedHead(bytes, place: file)
            verdict.note = "the signature holds" + (publicKey == nil ? " (compare the public key with the device's)" : ", by the key you gave")
            return try verdict.show(json: global.json)
        }
        let proof: ProofFile
        do { proof = try ProofFile.decode(bytes, place: file) } catch let error as ProofError {
            throw RuntimeError(message: error.message)
        }
        var verdict = ProofVerdict.of(proof)
        var trusted = root.flatMap(TreeHash.init(hex:))
        if let head {
            let (signed, headVerdict) = try checkedHead(try Self.read(head), place: head)
            guard headVerdict.holds else { return try headVerdict.show(json: global.json) }
            guard signed.logID == proof.logID, signed.treeSize == proof.size else {
                verdict.problems.append("for the signed head \(head): it is of \(signed.treeSize) events of another log or size")
                return try verdict.show(json: global.json)
            }
            trusted = signed.root
        }
        if !proof.verify() {
            verdict.problems.append("the path does not lead from the claim to the root")
        } else if let trusted, trusted != proof.root {
            verdict.problems.append("for the root \(head == nil ? "you gave" : "the signed head names") (\(trusted)): the proof leads to another")
        }
        verdict.note = "holds" + (trusted == nil ? " (compare the root with one you trust, or pass it with --root or --head)" : head == nil ? ", and leads to the root you gave" : ", and leads to the signed head's root")
        try verdict.show(json: global.json)
    }

    static func describe(_ signed: SignedHead) -> [String] { ProofVerdict.of(signed).lines }
}

/// `vt head [--size N]`: the tree's root, to hand to whoever will check proofs.
struct HeadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "head", abstract: "Print the log's size and the root of its history's tree (docs/PROOFS.md).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var log: ProvedLog
    @Option(help: "The history of the first N events (default: all).") var size: UInt64?
    @Flag(help: "Sign the head with this device's key (made on first use, in the store's signing.key).") var sign = false
    @Option(help: "With --sign: write the signed head's binary form into this file (a new file).") var out: String?

    func validate() throws {
        if out != nil, !sign { throw ValidationError("--out writes a signed head: add --sign") }
    }

    struct Head: Encodable {
        var log: String
        var size: UInt64
        var root: String
    }

    func run() throws {
        let tree = try log.tree(in: global.storePath)
        let bar = ProgressBar()
        let root: TreeHash
        do { root = try tree.root(size: size) { bar.update("hashing", done: Int64($0), total: Int64($1)) } } catch let error as ProofError {
            throw RuntimeError(message: error.message)
        }
        bar.finish()
        let head = Head(log: tree.logID.hexadecimal, size: size ?? tree.size, root: root.description)
        if sign { return try signAndShow(head: head, root: root, tree: tree) }
        if global.json { return try Output.json(head) }
        Output.lines(["log \(head.log)", "size: \(head.size)", "root: \(head.root)"])
    }

    private func signAndShow(head: Head, root: TreeHash, tree: LogTree) throws {
        let store = global.storePath
        let this = try StoreSync.devices(of: store).this
        if let device = log.device, device.lowercased() != this.device.description {
            throw RuntimeError(message: "a device signs only its own log's heads; \(device) is another device's")
        }
        if let out, FileManager.default.fileExists(atPath: out) { throw RuntimeError(message: "\(out) exists; a signed head is written into a new file") }
        let map = this.map
        let signed: SignedHead
        do {
            let key = try SigningKey.loadOrCreate(store: store) { Terminal.note("made this device's signing key in \($0) (keep it; it never leaves the store)") }
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            signed = try SignedHead.sign(map: map.bytes, logID: tree.logID, size: head.size, root: root, time: now, key: key)
        } catch let error as ProofError {
            throw RuntimeError(message: error.message)
        }
        if let out {
            guard FileManager.default.createFile(atPath: out, contents: Data(signed.binary)) else { throw RuntimeError(message: "cannot write \(out)") }
            Terminal.note("wrote \(signed.binary.count) bytes into \(out)")
        }
        if global.json { return Output.lines([signed.json]) }
        Output.lines(CheckProofCommand.describe(signed) + ["signature: \(signed.signature.hexadecimal)"])
    }
}

extension [UInt8] {
    fileprivate var hexadecimal: String { HistoryProofs.hexadecimal(self) }
}
