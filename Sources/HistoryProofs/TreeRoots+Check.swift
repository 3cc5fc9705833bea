import EventLog
import Proofs

extension TreeRoots {
    /// What `vt verify` finds in a roots file (docs/PROOFS.md, "The roots file").
    public struct Check: Sendable {
        /// Chunks whose root was compared with the log's.
        public var checked = 0
        /// Chunks whose root is not the log's: a proof taking it would not lead to the log's root.
        public var wrong: [Int] = []
        /// Chunks the file holds past the log's last whole chunk (a log cut short since).
        public var pastTheLog = 0
    }

    /// Compares every root the file holds with the root of that chunk's leaves in the log
    /// `reader` reads, chunk by chunk from the first; reads each leaf of those chunks once.
    public func check(against reader: LogReader) throws -> Check {
        var result = Check()
        do {
            let whole = Int(try reader.lastSequence() / Self.chunk)
            let compared = min(roots.count, whole)
            result.pastTheLog = roots.count - compared
            guard compared > 0 else { return result }
            let cursor = try reader.events(from: 1, through: UInt64(compared) * Self.chunk)
            for index in 0..<compared {
                var hasher = SubtreeHasher()
                for _ in 0..<Self.chunk {
                    guard let event = try cursor.next() else { throw ProofError("the log at \(reader.directory) ends inside chunk \(index)") }
                    hasher.add(LogTree.leaf(of: event))
                }
                if hasher.root != roots[index] { result.wrong.append(index) }
                result.checked += 1
            }
        } catch let error as LogError {
            throw ProofError("the log at \(reader.directory) cannot be read: \(error.message)")
        }
        return result
    }
}
