import Crypto
import EventLog
import Foundation
import StorageTestSupport
import Testing
import VirtualTourist

/// `vt head`, `vt prove` and `vt check-proof` (docs/PROOFS.md) on the seeded store's 12 events,
/// checked by a verifier written here from PROOFS.md alone (its byte layout, the leaf, MTH and
/// the by-hand steps): the roots, the files, and that a forget and a compaction leave every
/// root and every proof given before them as they were.
@Suite(.heavy) struct ProofCommandTests {
    let vt = CLI()

    // MARK: A verifier from docs/PROOFS.md alone

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
    static func node(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] { sha256([0x01] + left + right) }
    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    /// leaf(i) = SHA-256(0x00 ‖ u64 sequence ‖ i64 time ‖ SHA-256(payload)).
    static func leaves(ofLogIn store: String) throws -> [[UInt8]] {
        let cursor = try LogReader(directory: store + "/log", payloadCodec: EventCodec.blockCodec).events(from: 1)
        var leaves: [[UInt8]] = []
        while let event = try cursor.next() {
            let digest = event.erasedDigest.map(Array.init) ?? sha256(Array(event.payload))
            leaves.append(sha256([0x00] + littleEndian(event.sequence) + littleEndian(event.timestamp.microsecondsSinceEpoch) + digest))
        }
        return leaves
    }

    /// MTH, recursively.
    static func mth(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
        if leaves.isEmpty { return sha256([]) }
        if leaves.count == 1 { return leaves.first! }
        var k = 1
        while k * 2 < leaves.count { k *= 2 }
        return node(mth(leaves.prefix(k)), mth(leaves.dropFirst(k)))
    }

    /// CRC32C (Castagnoli, reflected 0x82F63B78), bit by bit.
    static func crc32c(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    struct Parsed {
        var kind: UInt8, log: [UInt8], first: UInt64, size: UInt64, start: [UInt8], root: [UInt8], path: [[UInt8]]
    }

    /// The binary form, field by field; nil when its length or its CRC32C is wrong.
    static func parse(_ bytes: [UInt8]) -> Parsed? {
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) } }
        guard bytes.count >= 106, Array(bytes[0..<4]) == Array("VTPF".utf8) else { return nil }
        let count = Int(bytes[101])
        guard bytes.count == 102 + 32 * count + 4 else { return nil }
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[bytes.count - 4 + $1]) << (8 * $1) }
        guard crc32c(Array(bytes.dropLast(4))) == stored else { return nil }
        return Parsed(
            kind: bytes[4], log: Array(bytes[5..<21]), first: u64(21), size: u64(29), start: Array(bytes[37..<69]),
            root: Array(bytes[69..<101]), path: (0..<count).map { Array(bytes[(102 + 32 * $0)..<(134 + 32 * $0)]) })
    }

    /// RFC 9162, 2.1.3.2, as PROOFS.md writes the steps.
    static func inclusionHolds(index: UInt64, size: UInt64, leaf: [UInt8], path: [[UInt8]], root: [UInt8]) -> Bool {
        guard index < size else { return false }
        var fn = index, sn = size - 1, r = leaf
        for p in path {
            if sn == 0 { return false }
            if fn % 2 == 1 || fn == sn {
                r = node(p, r)
                while fn % 2 == 0 && fn != 0 { fn /= 2; sn /= 2 }
            } else {
                r = node(r, p)
            }
            fn /= 2; sn /= 2
        }
        return sn == 0 && r == root
    }

    /// RFC 9162, 2.1.4.2, as PROOFS.md writes the steps.
    static func consistencyHolds(m: UInt64, n: UInt64, first: [UInt8], second: [UInt8], path: [[UInt8]]) -> Bool {
        if m == n { return path.isEmpty && first == second }
        guard !path.isEmpty, m > 0, m < n else { return false }
        var path = path
        if m & (m - 1) == 0 { path.insert(first, at: 0) }
        var fn = m - 1, sn = n - 1
        while fn % 2 == 1 { fn /= 2; sn /= 2 }
        var fr = path[0], sr = path[0]
        for c in path.dropFirst() {
            if sn == 0 { return false }
            if fn % 2 == 1 || fn == sn {
                fr = node(c, fr); sr = node(c, sr)
                while fn % 2 == 0 && fn != 0 { fn /= 2; sn /= 2 }
            } else {
                sr = node(sr, c)
            }
            fn /= 2; sn /= 2
        }
        return fr == first && sr == second && sn == 0
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    // MARK: The commands

    @Test func proofsHoldByPROOFSmdAloneAndOutliveAForgetAndACompaction() async throws {
        let seeded = try await SeededStore.make(label: "proofs")
        defer { seeded.remove() }
        let store = seeded.folder
        let work = TemporaryFolder.uniquePath("proofs-files")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let leaves = try Self.leaves(ofLogIn: store)
        #expect(leaves.count == 12)

        // The head's root is MTH of the leaves, at every size.
        let head = try CLI.object(try vt("head", "--json", "--store", store).output)
        #expect(head["size"] as? Int == 12 && head["root"] as? String == Self.hex(Self.mth(leaves[...])))
        for size in [1, 5, 8, 11] {
            let root = try CLI.object(try vt("head", "--size", "\(size)", "--json", "--store", store).output)["root"] as? String
            #expect(root == Self.hex(Self.mth(leaves.prefix(size))), "size \(size)")
        }

        // Every inclusion proof of the whole log, and of a smaller tree, holds by the steps.
        var files: [String: [UInt8]] = [:]
        for (sequence, size) in [(1, 12), (5, 12), (12, 12), (3, 7), (8, 8)] {
            let path = "\(work)/inclusion-\(sequence)-\(size).bin"
            let made = try vt("prove", "\(sequence)", "--size", "\(size)", "--out", path, "--store", store)
            #expect(made.status == 0, "\(made.errors)")
            let bytes = try #require(FileManager.default.contents(atPath: path).map(Array.init))
            let proof = try #require(Self.parse(bytes), "event \(sequence) of \(size)")
            #expect(proof.kind == 1 && proof.first == UInt64(sequence) && proof.size == UInt64(size))
            #expect(proof.start == leaves[sequence - 1] && proof.root == Self.mth(leaves.prefix(size)))
            #expect(Self.inclusionHolds(index: UInt64(sequence - 1), size: UInt64(size), leaf: proof.start, path: proof.path, root: proof.root))
            #expect(bytes.count == 106 + 32 * proof.path.count && proof.path.count <= 4, "32 × ⌈log₂ 12⌉ bytes at most")
            files[path] = bytes
        }
        // A consistency proof, in the binary form and as JSON.
        for (old, new) in [(1, 12), (4, 12), (5, 12), (7, 9), (12, 12)] {
            let path = "\(work)/consistency-\(old)-\(new).bin"
            #expect(try vt("prove", "--consistency", "\(old)", "--size", "\(new)", "--out", path, "--store", store).status == 0)
            let bytes = try #require(FileManager.default.contents(atPath: path).map(Array.init))
            let proof = try #require(Self.parse(bytes))
            #expect(proof.kind == 2 && proof.start == Self.mth(leaves.prefix(old)) && proof.root == Self.mth(leaves.prefix(new)))
            #expect(Self.consistencyHolds(m: UInt64(old), n: UInt64(new), first: proof.start, second: proof.root, path: proof.path))
            files[path] = bytes
        }
        let json = try vt("prove", "--consistency", "4", "--json", "--store", store)
        let object = try CLI.object(json.output)
        #expect(object["kind"] as? String == "consistency" && object["old_size"] as? Int == 4 && object["size"] as? Int == 12)
        let jsonPath = "\(work)/consistency.json"
        try Data(json.output.utf8).write(to: URL(fileURLWithPath: jsonPath))
        #expect(try vt("check-proof", jsonPath).status == 0)

        // vt check-proof: holds; not for another root; not for a flipped byte (exit 3 or refused).
        let five = "\(work)/inclusion-5-12.bin"
        let checked = try vt("check-proof", five, "--root", head["root"] as! String)
        #expect(checked.status == 0 && checked.output.contains("event 5") && checked.output.contains("leads to the root you gave"))
        #expect(try vt("check-proof", five, "--root", String(repeating: "0", count: 64)).status == 3)
        // The same verdicts as JSON: what it claims, whether it holds, and why not.
        let holds = try CLI.object(try vt("check-proof", five, "--root", head["root"] as! String, "--json").output)
        #expect(holds["kind"] as? String == "inclusion" && holds["holds"] as? Bool == true && holds["sequence"] as? Int == 5)
        #expect(holds["size"] as? Int == 12 && holds["root"] as? String == head["root"] as? String && (holds["problems"] as? [Any])?.isEmpty == true)
        #expect((holds["note"] as? String)?.contains("leads to the root you gave") == true)
        let another = try vt("check-proof", five, "--root", String(repeating: "0", count: 64), "--json")
        let refusedJSON = try CLI.object(another.output)
        #expect(another.status == 3 && refusedJSON["holds"] as? Bool == false)
        #expect((refusedJSON["problems"] as? [String])?.first?.contains("the proof leads to another") == true, "\(another.output)")
        let extends = try CLI.object(try vt("check-proof", jsonPath, "--json").output)
        #expect(extends["kind"] as? String == "consistency" && extends["old_size"] as? Int == 4 && extends["holds"] as? Bool == true)
        for offset in [30, 40, 80, 110] {
            var damaged = files[five]!
            damaged[offset] ^= 0x10
            let path = "\(work)/damaged-\(offset).bin"
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            let run = try vt("check-proof", path)
            #expect(run.status != 0 && run.errors.contains("CRC32C"), "byte \(offset): \(run.errors)")
        }

        // A forget erases pin A's events (2, 5–10); a compaction rewrites every file. No leaf
        // changes: the same roots, and the same proofs, byte for byte.
        #expect(try vt("forget", "1111000000000001", "--yes", "--store", store).status == 0)
        #expect(try vt("compact", "--store", store).status == 0)
        let after = try Self.leaves(ofLogIn: store)
        #expect(Array(after.prefix(12)) == leaves)
        #expect(try CLI.object(try vt("head", "--size", "12", "--json", "--store", store).output)["root"] as? String == head["root"] as? String)
        for (path, bytes) in files {
            let name = URL(fileURLWithPath: path).lastPathComponent.dropLast(4).split(separator: "-")
            let again = "\(path).again"
            let arguments = name[0] == "inclusion" ? [String(name[1])] : ["--consistency", String(name[1])]
            #expect(try vt.run(["prove"] + arguments + ["--size", String(name[2]), "--out", again, "--store", store]).status == 0)
            #expect(FileManager.default.contents(atPath: again).map(Array.init) == bytes, "\(path)")
            #expect(try vt("check-proof", path).status == 0)
        }
        #expect(try vt("check-proof", five, "--root", head["root"] as! String).status == 0)
    }

    @Test func aSignedHeadIsTheDevicesAndAProofIsCheckedAgainstIt() async throws {
        let seeded = try await SeededStore.make(label: "proofs-signed")
        defer { seeded.remove() }
        let store = seeded.folder
        let work = TemporaryFolder.uniquePath("proofs-signed-files")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let root = try CLI.object(try vt("head", "--json", "--store", store).output)["root"] as? String

        let first = try vt("head", "--sign", "--json", "--store", store)
        #expect(first.status == 0 && first.errors.contains("made this device's signing key"), "\(first.errors)")
        let signed = try CLI.object(first.output)
        #expect(signed["kind"] as? String == "signed_head" && signed["size"] as? Int == 12 && signed["root"] as? String == root)
        let key = store + "/signing.key"
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o600, "readable by its owner only")
        let again = try CLI.object(try vt("head", "--sign", "--json", "--store", store).output)
        #expect(again["public_key"] as? String == signed["public_key"] as? String, "the same key the second time")
        #expect(try vt("pins", "--store", store).status == 0, "the store opens with its key beside it")

        // The binary form checks; so does the JSON form, and a root changed in it does not.
        let headFile = "\(work)/head.bin"
        #expect(try vt("head", "--sign", "--out", headFile, "--store", store).status == 0)
        #expect(FileManager.default.contents(atPath: headFile)?.count == 184)
        let publicKey = signed["public_key"] as! String
        #expect(try vt("check-proof", headFile, "--public-key", publicKey).status == 0)
        #expect(try vt("check-proof", headFile, "--public-key", String(repeating: "1", count: 64)).status == 3)
        let headJSON = try CLI.object(try vt("check-proof", headFile, "--json").output)
        #expect(headJSON["kind"] as? String == "signed_head" && headJSON["holds"] as? Bool == true && headJSON["public_key"] as? String == publicKey)
        let otherKey = try vt("check-proof", headFile, "--public-key", String(repeating: "1", count: 64), "--json")
        let otherKeyProblems = try CLI.object(otherKey.output)["problems"] as? [String]
        #expect(otherKey.status == 3 && otherKeyProblems == ["for the key you gave: it was signed with another"])
        let jsonFile = "\(work)/head.json"
        try Data(first.output.utf8).write(to: URL(fileURLWithPath: jsonFile))
        #expect(try vt("check-proof", jsonFile).status == 0)
        let forged = first.output.replacingOccurrences(of: root!, with: String(repeating: "0", count: 64))
        try Data(forged.utf8).write(to: URL(fileURLWithPath: "\(work)/forged.json"))
        let refused = try vt("check-proof", "\(work)/forged.json")
        #expect(refused.status == 3 && refused.output.contains("signature is not"))

        // A proof checked against the signed head: its root and size must be the head's.
        let proof = "\(work)/proof.bin"
        #expect(try vt("prove", "7", "--out", proof, "--store", store).status == 0)
        let checked = try vt("check-proof", proof, "--head", headFile)
        #expect(checked.status == 0 && checked.output.contains("signed head's root"), "\(checked.output)")
        let smaller = "\(work)/proof-9.bin"
        #expect(try vt("prove", "7", "--size", "9", "--out", smaller, "--store", store).status == 0)
        #expect(try vt("check-proof", smaller, "--head", headFile).status == 3)

        // A clone is another device, with a key of its own: the key never leaves the store.
        let laptop = TemporaryFolder.uniquePath("proofs-signed-laptop")
        defer { try? FileManager.default.removeItem(atPath: laptop) }
        #expect(try vt("clone", "--from", store, "--to", laptop).status == 0)
        #expect(!FileManager.default.fileExists(atPath: laptop + "/signing.key"))
        let laptopHead = try CLI.object(try vt("head", "--sign", "--json", "--store", laptop).output)
        #expect(laptopHead["public_key"] as? String != publicKey && laptopHead["map"] as? String == signed["map"] as? String)
        // A new device has written nothing: its head is the empty tree's, SHA-256 of nothing.
        #expect(laptopHead["size"] as? Int == 0 && laptopHead["root"] as? String == Self.hex(Self.sha256([])))
        let other = try vt("head", "--sign", "--device", signed["log"] as! String, "--store", laptop)
        #expect(other.status != 0 && other.errors.contains("only its own log"))
    }

    @Test func badArgumentsAndFilesAreRefusedClearly() async throws {
        let seeded = try await SeededStore.make(label: "proofs-bad")
        defer { seeded.remove() }
        let store = seeded.folder
        let cases: [([String], String)] = [
            (["prove", "0"], "numbered from 1"),
            (["prove", "13"], "not in the tree of 12"),
            (["prove", "3", "--size", "13"], "holds 12 events, not 13"),
            (["prove", "--consistency", "5", "--size", "4"], "not 5"),
            (["prove"], "one of them"),
            (["prove", "2", "--consistency", "1"], "one of them"),
            (["prove", "2", "--device", "xyz"], "32 hexadecimal digits"),
            (["prove", "2", "--device", String(repeating: "a", count: 32)], "no log of device"),
            (["head", "--size", "13"], "holds 12 events, not 13"),
            (["check-proof", "/nonexistent/proof.bin"], "cannot read"),
            (["check-proof", store + "/log/../device.json", "--root", "12"], "64 hexadecimal digits"),
        ]
        for (arguments, message) in cases {
            let run = try vt.run(arguments + (arguments[0] == "check-proof" ? [] : ["--store", store]))
            #expect(run.status != 0 && run.errors.contains(message), "\(arguments): \(run.errors)")
        }
        let work = TemporaryFolder.uniquePath("proofs-bad-files")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let files: [(String, String)] = [
            ("not a proof", "neither VTPF"),
            ("VTPF", "cut short"),
            ("{\"kind\": \"inclusion\"}", "lacks the key"),
            ("{\"kind\": \"inclusion\", \"log\": \"00\", \"sequence\": 1, \"size\": 1, \"leaf\": \"\", \"root\": \"\", \"path\": [], \"extra\": 1}", "unknown key \"extra\""),
            ("{\"kind\": \"other\"}", "\"kind\" must be"),
            ("[1, 2]", "neither VTPF"),
        ]
        for (index, (text, message)) in files.enumerated() {
            let path = "\(work)/\(index)"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let run = try vt("check-proof", path)
            #expect(run.status != 0 && run.errors.contains(message), "\(text): \(run.errors)")
        }
        // A proof written over an existing file is refused, and the file left as it was.
        let existing = "\(work)/0"
        let run = try vt("prove", "2", "--out", existing, "--store", store)
        #expect(run.status != 0 && run.errors.contains("exists"))
        #expect(FileManager.default.contents(atPath: existing) == Data("not a proof".utf8))
    }
}
