import FileIO

/// The file a store keeps a signed head in (docs/PROOFS.md, "Signed heads at sync"):
/// `signed.head` in the store's root for the device's own log, and in each `devices/<id>/`
/// for the newest head of that device this store checked. The binary form, 184 bytes.
extension SignedHead {
    public static let fileName = "signed.head"

    /// The head in `path`; nil when there is none.
    ///
    /// - Throws: ``ProofError`` when the file is not a signed head's binary form or is damaged.
    public static func read(at path: String, fileSystem: any FileSystem = PosixFileSystem()) throws -> SignedHead? {
        let bytes: [UInt8]
        do {
            guard try fileSystem.exists(path) else { return nil }
            let file = try fileSystem.openFile(path, .readOnly)
            defer { try? file.close() }
            guard try file.size() <= Int64(size) else { throw ProofError("\(path) has more bytes than a signed head (\(size))") }
            bytes = try file.readAll()
        } catch let error as IOError {
            throw ProofError("cannot read \(path): \(error)")
        }
        guard bytes.starts(with: magic) else { throw ProofError("\(path) is not a signed head (it does not start with VTSH)") }
        return try decode(bytes, place: path)
    }

    /// Writes the head into `path` through a temporary file, synced and renamed into place.
    public func write(to path: String, fileSystem: any FileSystem = PosixFileSystem()) throws {
        do { try fileSystem.writeAtomically(binary, to: path) } catch {
            throw ProofError("cannot write \(path): \(error)")
        }
    }
}
