import FileIO

/// How far forgetting has gone in a store, for a process reading its log beside it — a
/// replicator — that must not pass on what a forget erases (docs/EVENTS.md, "Forgetting a place";
/// docs/REPLICATION.md, "Forgetting before shipping"). A reader that has a log file open keeps
/// reading the bytes it had, erased or not; one that saw neither a forget under way nor a new one
/// begun between reading some events and sending them on sent what the log holds now.
public struct ForgetProgress: Hashable, Sendable {
    /// How many forgets have begun in the store (`forget.count`; 0 when there is none).
    public var begun: UInt64
    /// Whether a forget is under way (`forget.pending` is there, or a crash left it).
    public var underWay: Bool

    static let countName = "forget.count"

    /// Reads both from the store folder. A count that is not a number is an error: a reader
    /// cannot tell whether a forget began.
    public static func read(store folder: String, fileSystem: any FileSystem = PosixFileSystem()) throws -> ForgetProgress {
        let fileSystem = fileSystem.confined(to: folder)
        let underWay = try fileSystem.exists(Path.join(folder, TouristStore.forgetMarkerName))
        return ForgetProgress(begun: try count(in: folder, fileSystem: fileSystem), underWay: underWay)
    }

    static func count(in folder: String, fileSystem: any FileSystem) throws -> UInt64 {
        let path = Path.join(folder, countName)
        guard try fileSystem.exists(path) else { return 0 }
        let file = try fileSystem.openFile(path, .readOnly)
        defer { try? file.close() }
        let text = String(decoding: try file.readAll(), as: UTF8.self)
        guard let count = UInt64(text.filter { !$0.isWhitespace }) else {
            throw DomainError(.storage, "\(path) is not a count of forgets; it holds \"\(text.prefix(40))\"")
        }
        return count
    }

    /// Counts one more forget begun; called before its plan is written, so that the count has
    /// moved whenever the plan is there.
    static func countOneMore(in folder: String, fileSystem: any FileSystem) throws {
        let next = try count(in: folder, fileSystem: fileSystem) + 1
        try fileSystem.writeAtomically(Array("\(next)\n".utf8), to: Path.join(folder, countName))
    }
}
