import DeviceLogs
import EventLog
import FileIO
import HistoryProofs

extension StoreAudit {
    /// Each roots file in `proofs/` checked against the log it names (docs/PROOFS.md, "The
    /// roots file"): a chunk whose kept root is not the log's would make proofs that do not lead
    /// to the log's root, so it is a problem; a file of a log the store no longer holds, or one
    /// longer than its log, is a note (proofs never read those roots).
    static func verifyProofs(folder: String, fileSystem: any FileSystem, into result: inout StoreVerification) {
        let proofs = Path.join(folder, "proofs")
        let names: [String]
        do {
            guard try fileSystem.exists(proofs) else { return }
            names = try fileSystem.listDirectory(proofs).filter { $0.hasSuffix(".roots") }.sorted()
        } catch {
            result.problems.append("proofs/ cannot be read: \(error)")
            return
        }
        for name in names {
            let file = "proofs/" + name
            guard let device = DeviceID(parsing: String(name.dropLast(".roots".count))) else {
                result.notes.append("\(file) is not named after a log; proofs never read it")
                continue
            }
            do {
                let own = Path.join(folder, "log")
                let ownID = try LogReader(directory: own, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec).identity()?.logID
                let log = ownID == device.bytes ? own : StoreDevices.logPath(store: folder, device: device)
                guard try fileSystem.exists(log) else {
                    result.notes.append("\(file) is of a log this store does not hold; proofs never read it")
                    continue
                }
                let roots = TreeRoots(path: Path.join(folder, file), logID: device.bytes)
                let check = try roots.check(against: try LogReader(directory: log, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec))
                result.proofChunksChecked += check.checked
                for index in check.wrong {
                    let first = UInt64(index) * TreeRoots.chunk + 1
                    result.problems.append(
                        "\(file): the root kept for events \(first)…\(first + TreeRoots.chunk - 1) is not the log's, so proofs through it would be wrong; remove the file (vt head makes it again)"
                    )
                }
                if check.pastTheLog > 0 {
                    result.notes.append("\(file) holds \(check.pastTheLog) chunk root(s) past the log's end; proofs never read them")
                }
            } catch {
                result.problems.append("\(file) cannot be checked against its log: \(error)")
            }
        }
    }
}
