import Dispatch
import FileIO
import Synchronization

/// The check of a tail checkpoint an opening writer started from: the segment's events up to
/// its end of data decompressed, parsed and rehashed on another thread, as an open without a
/// checkpoint does, and compared with what the checkpoint says. Started when the log's owner
/// has finished reading at open (``EventLog/startTailCheck()``), so that it does not compete
/// with that, or at the latest by the first append or the close, which wait for it.
final class TailCheck: @unchecked Sendable {
    private let group = DispatchGroup()
    private let started = Mutex(false)
    private let path: String
    private let checkpoint: TailCheckpoint
    private let fileSystem: any FileSystem
    /// Written once on the checking thread before `group` is left; read after waiting on it.
    private var problem: String?

    init(segment path: String, checkpoint: TailCheckpoint, fileSystem: any FileSystem) {
        self.path = path
        self.checkpoint = checkpoint
        self.fileSystem = fileSystem
    }

    /// Starts the check on another thread, unless it was started already; from `position` (a
    /// scan of the segment's start made by the opener: ``TailPosition``) when it lies at or
    /// before the checkpoint's end of data.
    func start(from position: TailPosition? = nil) {
        let first = started.withLock { wasStarted in
            defer { wasStarted = true }
            return !wasStarted
        }
        guard first else { return }
        DispatchQueue.global(qos: .utility).async(group: group) { [self] in
            problem = Self.problem(segment: path, checkpoint: checkpoint, fileSystem: fileSystem, from: position)
        }
    }

    /// Runs the check on the calling thread, now (it must not have been started): whether the
    /// segment's events give the checkpoint's values.
    func holdsWhenCheckedHere() -> Bool {
        started.withLock { $0 = true }
        problem = Self.problem(segment: path, checkpoint: checkpoint, fileSystem: fileSystem)
        return problem == nil
    }

    /// Waits for the check, starting it if needed: nil when the segment's events give the
    /// checkpoint's values, else what differs.
    func wait() -> String? {
        start()
        group.wait()
        return problem
    }

    static func problem(segment path: String, checkpoint: TailCheckpoint, fileSystem: any FileSystem, from position: TailPosition? = nil) -> String? {
        do {
            let scanner = try TailScanner.open(path: path, fileSystem: fileSystem, decompressor: ZstdDecompressor())
            defer { scanner.close() }
            var chain = EventChain(head: scanner.header.chainBefore, after: scanner.header.firstSequence - 1)
            // A position past the start would leave the start unchecked: the open may have
            // handed its head on (``EventLog/tailStart``).
            let limit = checkpoint.start?.dataEnd ?? checkpoint.dataEnd
            if let position, position.offset <= limit, scanner.resume(at: position) {
                chain = EventChain(head: position.chain, after: position.sequence)
            }
            // The start first (when there is one), then the end of data: each a point the
            // segment's events must reach with the values the checkpoint gives.
            let points = [checkpoint.start.map { ("its start", $0) }, ("its end of data", checkpoint.end)].compactMap { $0 }
            for (name, point) in points {
                if let damage = try scanner.rehash(into: &chain, upTo: point.dataEnd) {
                    return "\(path) holds \(damage.reason) at offset \(damage.offset), before the tail checkpoint's \(name) \(point.dataEnd)"
                }
                let found = TailCheckpoint.Point(dataEnd: scanner.position, nextSequence: scanner.nextSequence, lastTime: scanner.time, chain: chain.head)
                guard found == point else {
                    return "the events of \(path) reach offset \(found.dataEnd) at sequence \(found.nextSequence - 1), time \(found.lastTime),"
                        + " head \(found.chain); the tail checkpoint says, at \(name), offset \(point.dataEnd), sequence"
                        + " \(point.nextSequence - 1), time \(point.lastTime), head \(point.chain)"
                }
            }
            return nil
        } catch {
            return "\(path) could not be read to check its tail checkpoint: \(error)"
        }
    }
}
