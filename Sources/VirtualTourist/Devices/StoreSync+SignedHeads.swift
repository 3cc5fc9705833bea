import DeviceLogs
import EventLog
import FileIO
import Foundation
import HistoryProofs

/// The signed heads a sync signs, carries and checks (docs/PROOFS.md, "Signed heads at sync").
extension StoreSync {
    /// Signs the head of `store`'s own log with its key (made on first use) into its
    /// `signed.head`, unless the head there is already the whole log's. Nil when the log has no
    /// leaves to sign (no events yet, or format 1).
    static func signOwnHead(of store: String, map: DeviceID, _ fileSystem: any FileSystem) throws -> SignedHead? {
        let path = Path.join(store, SignedHead.fileName)
        do {
            let reader = try LogReader(directory: Path.join(store, "log"), fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
            guard let identity = try reader.identity() else { return nil }
            let size = try reader.lastSequence()
            guard size > 0 else { return nil }
            let root = try LogTree(reader: reader, rootsFile: rootsFile(in: store, of: identity.logID)).root(size: size)
            // Signed again only when the log moved (a log cut by vt repair and grown again to
            // the same size has another root).
            if let signed = try SignedHead.read(at: path, fileSystem: fileSystem), signed.treeSize == size, signed.root == root, signed.logID == identity.logID {
                return signed
            }
            let key = try SigningKey.loadOrCreate(store: store)
            let time = Int64(Date().timeIntervalSince1970 * 1_000_000)
            let head = try SignedHead.sign(map: map.bytes, logID: identity.logID, size: size, root: root, time: time, key: key)
            try head.write(to: path, fileSystem: fileSystem)
            return head
        } catch let error as ProofError {
            throw DomainError(.storage, "cannot sign this device's head in \(store): \(error.message)")
        } catch let error as LogError {
            throw DomainError(.storage, "cannot sign this device's head in \(store): \(error.message)", cause: error)
        }
    }

    /// Checks the log at `source` against the signed head offered with it (`offeredPath`) and
    /// the one `store` keeps in the copy's `folder`, before anything of it is taken. Returns the
    /// head to keep once it is taken.
    ///
    /// - Throws: ``DeviceError`` `.refused` naming what does not hold.
    static func checkSignedHeads(
        of file: DeviceFile, log source: String, offered offeredPath: String, copyFolder folder: String, store: String,
        _ configuration: LogConfiguration, _ fileSystem: any FileSystem
    ) throws -> SignedHead? {
        let who = file.device.description + (file.name.map { " (\($0))" } ?? "")
        do {
            let offered = try SignedHead.read(at: offeredPath, fileSystem: fileSystem)
            let held = try SignedHead.read(at: Path.join(folder, SignedHead.fileName), fileSystem: fileSystem)
            guard offered != nil || held != nil else { return nil }
            let roots = rootsFile(in: store, of: file.device.bytes)
            let copy = Path.join(folder, "log")
            if try fileSystem.exists(copy) {
                // The copy is this store's, checked event by event when it was taken: its chunks'
                // roots are kept so that the offered log is read from where the copy ends.
                let held = try LogReader(directory: copy, fileSystem: fileSystem, payloadCodec: configuration.payloadCodec)
                let size = try held.lastSequence()
                if size >= TreeRoots.chunk { _ = try LogTree(reader: held, rootsFile: roots).root(size: size / TreeRoots.chunk * TreeRoots.chunk) }
            }
            let reader = try LogReader(directory: source, fileSystem: fileSystem, payloadCodec: configuration.payloadCodec)
            guard try reader.lastSequence() > 0 else { return held }  // an empty log: the copy's own check refuses it
            let tree = try LogTree(reader: reader, rootsFile: roots, growsRoots: false)
            return try SignedHeadCheck.check(tree, map: file.map.bytes, offered: offered, held: held, device: who)
        } catch let error as ProofError {
            throw DeviceError(.refused, error.message)
        } catch let error as LogError {
            throw DeviceError(error.code == .corrupt ? .refused : .storage, "could not check device \(who)'s signed heads: \(error.message)", cause: error)
        }
    }

    /// Keeps `head` as the newest signed head of the copy in `folder`, when it is newer.
    static func keep(_ head: SignedHead?, inCopy folder: String, _ fileSystem: any FileSystem) throws {
        guard let head else { return }
        let path = Path.join(folder, SignedHead.fileName)
        do {
            if let kept = try SignedHead.read(at: path, fileSystem: fileSystem), kept == head { return }
            try head.write(to: path, fileSystem: fileSystem)
        } catch let error as ProofError {
            throw DeviceError(.storage, error.message)
        }
    }

    /// Where a store keeps the chunks' roots of one of its logs (docs/PROOFS.md, "The roots file").
    public static func rootsFile(in store: String, of logID: [UInt8]) -> String {
        Path.join(Path.join(store, "proofs"), hexadecimal(logID) + ".roots")
    }
}
