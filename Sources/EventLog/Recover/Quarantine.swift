import FileIO

/// `quarantine/`: where bytes cut from the log are kept for a person to inspect; and the two
/// steps every recovery shares, whatever the format (FORMAT.md, "Recovery and damage").
enum Quarantine {
    /// Writes `bytes` durably under a name not yet taken and returns the path.
    static func keep(_ bytes: [UInt8], named name: String, in directory: String, fileSystem: any FileSystem) throws -> String {
        let folder = Path.join(directory, LogFiles.quarantineDirectoryName)
        try io("create \(folder)") { try fileSystem.createDirectoryDurably(folder) }
        var path = Path.join(folder, name)
        var attempt = 1
        while try io("look at \(path)", { try fileSystem.exists(path) }) {
            attempt += 1
            path = Path.join(folder, "\(name).\(attempt)")
        }
        try io("keep a copy in \(path)") { try fileSystem.writeAtomically(bytes, to: path) }
        return path
    }

    /// Copies the bytes of a segment from `offset` to its end into `quarantine/`, then truncates
    /// the segment there, durably. Returns how many bytes were cut and where their copy is. The
    /// window over the file is invalidated: it may hold the bytes that are gone.
    static func cutTornTail(
        of window: ReadWindow, path: String, at offset: Int64, directory: String, fileSystem: any FileSystem
    ) throws -> (bytes: Int64, copy: String) {
        let file = window.file
        let size = try io("read the size of \(path)") { try file.size() }
        let bytes = try io("read the torn tail of \(path)") { try file.read(count: Int(size - offset), at: offset) }
        let copy = try keep(bytes, named: "\(Path.name(of: path))-\(offset).torn", in: directory, fileSystem: fileSystem)
        try io("cut the torn tail of \(path)") {
            try file.truncate(to: offset)
            try file.sync()
        }
        window.invalidate()
        return (size - offset, copy)
    }

    /// Removes the temporary files an interrupted atomic write left (they never held data a
    /// reader saw) and names each in the report.
    static func removeTemporaries(
        _ names: [String], directory: String, fileSystem: any FileSystem, report: inout RecoveryReport
    ) throws {
        for name in names {
            try io("remove the unfinished write \(name)") { try fileSystem.removeFile(Path.join(directory, name)) }
            report.removedTemporaryFiles.append(name)
        }
    }
}
