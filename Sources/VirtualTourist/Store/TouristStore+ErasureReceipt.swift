import DeviceLogs
import EventLog
import FileIO
import HistoryProofs
import Proofs

/// What a receipt takes before a forget appends anything (docs/PROOFS.md, "Erasure receipts"):
/// this device's head signed then, and the root of each copy the forget erases in.
struct ReceiptStart {
    var key: SigningKey
    var map: DeviceID
    var before: SignedHead
    var copies: [DeviceID: TreeHash]
}

extension TouristStore {
    /// The folder of the receipts in a store.
    public static let receiptsFolderName = "receipts"

    /// Signs this device's head before the forget; nil, with why, when it cannot (the forget
    /// goes on: it matters more than its receipt).
    func startReceipt(erasingIn copies: some Collection<DeviceID> = [DeviceID](), progress: (@Sendable (String) -> Void)?) -> Result<ReceiptStart, DomainError> {
        progress?("signing the head of the history before the forget")
        do {
            let tree = try ownTree(rootsKept: true)
            let map = try StoreSync.devices(of: folder, fileSystem).this.map
            let key = try SigningKey.loadOrCreate(store: folder)
            let before = try SignedHead.sign(
                map: map.bytes, logID: tree.logID, size: tree.size, root: try tree.root(), time: options.log.clock.now().microsecondsSinceEpoch, key: key)
            var roots: [DeviceID: TreeHash] = [:]
            for device in copies { roots[device] = try copyTree(device, rootsKept: true).root() }
            return .success(ReceiptStart(key: key, map: map, before: before, copies: roots))
        } catch {
            return .failure(Self.receiptError(error))
        }
    }

    /// Makes, signs and writes the receipt of a forget whose erasure and removals are done;
    /// returns its path.
    ///
    /// The history before the forget is read again from the erased logs, every leaf, not from the
    /// roots kept beside them: its root must be the root signed before. Then the proofs may take
    /// kept roots, which that equality shows are still the logs'.
    func finishReceipt(
        _ start: ReceiptStart, pin: PinID, own targets: [UInt64], copies copyTargets: [DeviceID: [UInt64]], report: ForgetReport,
        progress: (@Sendable (String) -> Void)?
    ) throws -> String {
        progress?("proving what the forget erased")
        do {
            let size = start.before.treeSize
            let read = try ownTree(rootsKept: false)
            let roots = try read.roots(of: [size, read.size])
            guard roots[size] == start.before.root else {
                throw DomainError(.storage, "the history before the forget no longer has the root signed before it (\(start.before.root)): an erasure changed a leaf")
            }
            let after = try SignedHead.sign(
                map: start.map.bytes, logID: read.logID, size: read.size, root: roots[read.size]!, time: options.log.clock.now().microsecondsSinceEpoch, key: start.key)
            let tree = try ownTree(rootsKept: true)
            var erased = try targets.sorted().map { try tree.inclusion(of: $0, size: size) }
            for (device, sequences) in copyTargets.sorted(by: { $0.key < $1.key }) where !sequences.isEmpty {
                guard try copyTree(device, rootsKept: false).root() == start.copies[device] else {
                    throw DomainError(.storage, "the copy of device \(device) no longer has the root it had before the forget: an erasure changed a leaf")
                }
                let copy = try copyTree(device, rootsKept: true)
                erased += try sequences.sorted().map { try copy.inclusion(of: $0) }
            }
            var removed = ErasureReceipt.Removed()
            removed.events = report.erasedEvents
            removed.photos = report.photosDeleted
            removed.snapshotsRewritten = report.snapshotsRewritten
            removed.snapshotsRemoved = report.snapshotsRemoved
            removed.quarantinedFiles = report.quarantinedFilesRemoved
            removed.formerLog = report.formerLogRemoved
            var receipt = ErasureReceipt(
                map: start.map.bytes, pin: pin.description, before: start.before, after: after,
                consistency: try tree.consistency(from: size, to: read.size), erased: erased, removed: removed)
            try receipt.sign(with: start.key)
            let receipts = Path.join(folder, Self.receiptsFolderName)
            if try !fileSystem.exists(receipts) { try fileSystem.createDirectoryDurably(receipts) }
            let path = Path.join(receipts, "forget-\(read.size)-\(pin).receipt")
            try fileSystem.writeAtomically(Array(receipt.text.utf8), to: path)
            return path
        } catch {
            throw Self.receiptError(error)
        }
    }

    private func ownTree(rootsKept: Bool) throws -> LogTree {
        try tree(of: log.directory, rootsKept: rootsKept)
    }

    private func copyTree(_ device: DeviceID, rootsKept: Bool) throws -> LogTree {
        try tree(of: StoreDevices.logPath(store: folder, device: device), rootsKept: rootsKept)
    }

    private func tree(of directory: String, rootsKept: Bool) throws -> LogTree {
        let reader = try LogReader(directory: directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
        let roots = try reader.identity().map { StoreSync.rootsFile(in: folder, of: $0.logID) }
        return try LogTree(reader: reader, rootsFile: rootsKept ? roots : nil)
    }

    private static func receiptError(_ error: any Error) -> DomainError {
        if let error = error as? DomainError { return DomainError(.storage, "no erasure receipt: \(error.message)", cause: error) }
        if let error = error as? ProofError { return DomainError(.storage, "no erasure receipt: \(error.message)") }
        if let error = error as? LogError { return DomainError(.storage, "no erasure receipt: \(error.message)", cause: error) }
        return DomainError(.storage, "no erasure receipt: \(error)", cause: error)
    }
}
