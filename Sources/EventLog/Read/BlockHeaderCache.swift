import FileIO
import Synchronization

/// The block headers a reader has walked past, file by file, so that its next seek into the same
/// block file jumps to the block it wants instead of reading every header before it again.
///
/// At 10 M events one block file holds 1,500 blocks, and a seek walked their headers with a small
/// read each: about 3 ms, twice for every state at a point (the snapshot's head, then the replay
/// from it; docs/BENCHMARKS.md). The headers kept were checked when they were read (checksums,
/// sequences, the chain links between them), and block files are never changed in place (a
/// compaction or an erasure writes a new file and renames it), so they stay true for as long as
/// the file is the same one: the same size, modification time and file header.
final class BlockHeaderCache: Sendable {
    struct Known {
        /// The block file's size and modification time, and its header, when the blocks were read.
        var identity: Identity
        /// The first blocks of the file, in order: where each starts and its header.
        var blocks: [(offset: Int64, header: BlockHeader)]
    }

    struct Identity: Equatable {
        var size: Int64
        var modificationTime: Duration
        var header: BlockFileHeader
    }

    private let files = Mutex<[String: Known]>([:])
    /// The block files' own headers, with each file's status (size, modification time, inode)
    /// when it was read: a listing of the directory (``LogDirectory``) looks at each file, one
    /// `fstatat`, instead of opening and reading it again. At 10 M events a log has some 240
    /// block files, and reading their headers was a third of what a proof's lookups cost
    /// (docs/BENCHMARKS-JOURNAL.md, "A listing that reads no header twice").
    private let fileHeaders = Mutex<[String: (status: FileStatus, header: BlockFileHeader)]>([:])
    /// One block decoded by a head's lookup, kept for the read that follows it (below).
    private let handedOver = Mutex<HandedOver?>(nil)

    private struct HandedOver {
        var path: String
        var identity: Identity
        var offset: Int64
        var block: SealedBlock
    }
    /// More block files than a log has at once (compaction keeps a handful).
    static let filesKept = 64

    /// The header read from `path` when the file had this status, if one was. Only a status
    /// that names the file's inode is trusted: without one (the tests' simulated disks), a file
    /// renamed over another of the same size and time could not be told from it. Nor is a file
    /// modified after `settledBefore` (a second before the listing): file times come from a
    /// coarse clock, and a file written in the same tick as the one it replaced (its inode
    /// number reused) would look the same; a file that old when seen again was not replaced
    /// since (as Git treats its index).
    func fileHeader(of path: String, status: FileStatus, settledBefore: Duration) -> BlockFileHeader? {
        guard status.inode != nil, status.modificationTime < settledBefore else { return nil }
        return fileHeaders.withLock { known in known[path].flatMap { $0.status == status ? $0.header : nil } }
    }

    /// Keeps the headers a listing saw, forgetting the files it no longer lists.
    func keepFileHeaders(_ seen: [String: (status: FileStatus, header: BlockFileHeader)]) {
        fileHeaders.withLock { $0 = seen }
    }

    /// The blocks known of `path`, if it is still the file they were read from.
    func blocks(of path: String, identity: Identity) -> [(offset: Int64, header: BlockHeader)] {
        files.withLock { files in
            guard let known = files[path] else { return [] }
            guard known.identity == identity else {
                files[path] = nil
                return []
            }
            return known.blocks
        }
    }

    /// Keeps a block that a head's lookup decoded, for a cursor of the same reader to take
    /// instead of decoding it again. A state at a point looks up the head at its snapshot's
    /// sequence, then replays from the next event, most often in that same block: a whole
    /// block's rebuild, about 2.5 ms of a 30 ms time travel (docs/BENCHMARKS.md). One block is
    /// kept, the last one handed over, until a cursor takes it.
    func handOver(_ block: SealedBlock, at offset: Int64, of path: String, identity: Identity) {
        handedOver.withLock { $0 = HandedOver(path: path, identity: identity, offset: offset, block: block) }
    }

    /// The block handed over at `offset` of `path`, if it is still the same file; taken, so
    /// that it is used once and its memory let go.
    func takeHandedOver(at offset: Int64, of path: String, identity: Identity) -> SealedBlock? {
        handedOver.withLock { kept in
            guard let found = kept, found.path == path, found.offset == offset, found.identity == identity else { return nil }
            kept = nil
            return found.block
        }
    }

    /// Notes the header of block number `index` of `path` (ignored unless it extends the blocks
    /// known without a gap).
    func note(_ header: BlockHeader, at offset: Int64, index: Int, of path: String, identity: Identity) {
        files.withLock { files in
            if files[path]?.identity != identity {
                // Compactions replace block files by new ones: a long-lived reader forgets the
                // files it knew rather than keep the headers of every file that ever was.
                if files[path] == nil, files.count >= Self.filesKept { files.removeAll() }
                files[path] = Known(identity: identity, blocks: [])
            }
            // Appended where it lies: a copy taken out and put back would copy every header
            // known at each step.
            guard files[path]!.blocks.count == index else { return }
            files[path]!.blocks.append((offset, header))
        }
    }
}
