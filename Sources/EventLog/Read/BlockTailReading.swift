import Dispatch
import FileIO

/// Format 2's reading (``FormatReading``): block files, then hot-tail segments, each lookup
/// reading only the files it needs (``LogDirectory``, ``ChainHeads``, ``BlockTailCursor``).
final class BlockTailReading: FormatReading {
    let directory: String
    let fileSystem: any FileSystem
    let payloadCodec: (any BlockPayloadCodec)?
    /// The block headers this reader's seeks have read.
    let blockHeaders = BlockHeaderCache()

    init(directory: String, fileSystem: any FileSystem, payloadCodec: (any BlockPayloadCodec)?) {
        self.directory = directory
        self.fileSystem = fileSystem
        self.payloadCodec = payloadCodec
    }

    /// Every lookup lists the files it reads itself.
    func refresh() throws {}

    func identity() throws -> LogIdentity? {
        var files = LogDirectory(directory: directory, fileSystem: fileSystem, headers: blockHeaders)
        try files.refresh()
        guard let logID = files.logID else { return nil }
        return LogIdentity(logID: logID, origin: files.origin)
    }

    func cursor(start: LogCursor.Start, lastSequence: UInt64?, lastTime: LogTimestamp?, tailPosition: TailPosition?) -> any CursorEngine {
        BlockTailCursor(
            directory: directory, fileSystem: fileSystem, start: start, lastSequence: lastSequence, lastTime: lastTime,
            payloadCodec: payloadCodec, headers: blockHeaders, tailPosition: tailPosition)
    }

    func head(at sequence: UInt64) throws -> LogHead? {
        try ChainHeads.head(at: sequence, directory: directory, fileSystem: fileSystem, payloadCodec: payloadCodec, headers: blockHeaders)
    }

    /// On another core, unless the file system wants its calls in one order
    /// (``FileIO/FileSystem/allowsReadAhead``): its heads are read from the files alone.
    func headInBackground(at sequence: UInt64) -> PendingHead {
        guard fileSystem.allowsReadAhead else {
            return PendingHead(givesPositions: false) { try self.head(at: sequence).map { ($0, nil) } }
        }
        let (directory, fileSystem, headers, codec) = (directory, fileSystem, blockHeaders, payloadCodec)
        let pending = PendingHead.Box()
        DispatchQueue.global(qos: .userInitiated).async(group: pending.group) {
            pending.result = Result {
                try ChainHeads.headAndPosition(
                    at: sequence, directory: directory, fileSystem: fileSystem, payloadCodec: codec, headers: headers)
            }
        }
        return PendingHead(givesPositions: true) {
            pending.group.wait()
            return try pending.result!.get()
        }
    }

    func lastSequence() throws -> UInt64 {
        try ChainHeads.lastSequence(directory: directory, fileSystem: fileSystem, headers: blockHeaders)
    }

    func verify(keys: BlockKeys?, report: inout VerificationReport, progress: ((Int64, Int64) -> Void)?) throws {
        try BlockTailVerifier.walk(
            directory: directory, fileSystem: fileSystem, keys: keys, payloadCodec: payloadCodec, report: &report, progress: progress)
    }

    func planRepair(keys: BlockKeys?) throws -> RepairPlan {
        try LogRepair.planBlockTail(directory: directory, fileSystem: fileSystem, keys: keys, payloadCodec: payloadCodec)
    }

    /// Blocks whose summary names no such key are left out; a block file without a usable
    /// summary, and the hot tail, are given whole. Reading the summaries costs a small file a
    /// block file, checked as FORMAT.md asks.
    func ranges(mayHoldKeysIn keys: ClosedRange<UInt64>, function: String, from: UInt64, through: UInt64) throws -> [ClosedRange<UInt64>] {
        var listing = LogDirectory(directory: directory, fileSystem: fileSystem, headers: blockHeaders)
        try listing.refresh()
        var ranges: [ClosedRange<UInt64>] = []
        let files = listing.files
        for (index, file) in files.enumerated() {
            let fileLast = index + 1 < files.count ? files[index + 1].firstSequence - 1 : UInt64.max
            guard file.firstSequence <= through, fileLast >= from else { continue }
            let wanted = max(from, file.firstSequence)...min(through, fileLast)
            guard case .blocks(let header) = file.kind,
                let summary = KeySummary.read(beside: header, in: directory, function: function, fileSystem: fileSystem)
            else {
                ranges.appendJoining(wanted)
                continue
            }
            for range in summary.ranges(holding: keys, lastSequence: header.lastSequence) where range.overlaps(wanted) {
                ranges.appendJoining(range.clamped(to: wanted))
            }
        }
        return ranges
    }
}
