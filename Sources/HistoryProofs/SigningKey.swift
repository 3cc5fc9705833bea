import Crypto
import EventLog
import FileIO
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A device's Ed25519 signing key (docs/PROOFS.md, "Signed heads"): `<store>/signing.key`,
/// readable by its owner only. It is not part of the history: an export, a replication, a
/// restore and a clone leave it behind (a clone is another device, with a key of its own).
///
/// The file: `VTSK`, the 32-byte private key, CRC32C of both (little-endian); 40 bytes.
public struct SigningKey: Sendable {
    public static let fileName = "signing.key"
    static let magic = Array("VTSK".utf8)

    let key: Curve25519.Signing.PrivateKey

    /// The public key's 32 bytes, which a signed head carries.
    public var publicKey: [UInt8] { Array(key.publicKey.rawRepresentation) }

    func sign(_ message: [UInt8]) throws -> [UInt8] { Array(try key.signature(for: message)) }

    /// The store's key; made (and said so through `made`) when it has none.
    public static func loadOrCreate(store: String, made: (String) -> Void = { _ in }) throws -> SigningKey {
        let path = Path.join(store, fileName)
        if let key = try load(path) { return key }
        let key = SigningKey(key: Curve25519.Signing.PrivateKey())
        try write(key, to: path)
        made(path)
        return key
    }

    /// The key in `path`, nil when there is none.
    static func load(_ path: String) throws -> SigningKey? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw ProofError("cannot read the signing key \(path)") }
        let bytes = Array(data)
        var crc = CRC32C()
        crc.update(Array(bytes.prefix(36)))
        guard bytes.count == 40, bytes.starts(with: magic), crc.value == bytes.readLittleEndian(UInt32.self, at: 36),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes[4..<36])
        else {
            throw ProofError("the signing key \(path) is damaged; move it away and a new key is made (heads signed with the old one stay checkable by its public key)")
        }
        return SigningKey(key: key)
    }

    /// Writes the key through a temporary file made readable by its owner only, synced and
    /// renamed into place: a crash leaves no key or the whole key, never one others could read.
    static func write(_ key: SigningKey, to path: String) throws {
        var bytes = magic + Array(key.key.rawRepresentation)
        var crc = CRC32C()
        crc.update(bytes)
        bytes.appendLittleEndian(crc.value)
        let temporary = path + ".tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ProofError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == bytes.count, synced == 0 else {
            unlink(temporary)
            throw ProofError("cannot write the signing key \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw ProofError("cannot put the signing key in place at \(path): \(String(cString: strerror(errno)))")
        }
        try? PosixFileSystem().syncDirectory(Path.directory(of: path))
    }
}
