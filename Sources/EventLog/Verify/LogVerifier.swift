import FileIO

/// Checks a whole log from its first byte: every header, checksum, sequence number, time, chain
/// link and index entry, decompressing every batch (FORMAT.md, "The hash chain").
///
/// ```swift
/// let report = try LogVerifier.verify(directory: path)
/// print(report.isClean, report.events, report.headHash!)
/// ```
///
/// It reads and changes nothing else: it takes no lock and may run beside a writer. Cost: one
/// pass over the data — O(bytes) with a read window and one decoded batch in memory.
public enum LogVerifier {
    /// - Parameters:
    ///   - keys: the key function whose summaries (format 2) are compared with the keys their
    ///     blocks' events carry; nil checks none (FORMAT.md, "Key summaries").
    ///   - progress: called now and then with (bytes checked, bytes in all segments).
    public static func verify(
        directory: String, fileSystem: any FileSystem = PosixFileSystem(), keys: BlockKeys? = nil,
        payloadCodec: (any BlockPayloadCodec)? = nil, progress: ((Int64, Int64) -> Void)? = nil
    ) throws -> VerificationReport {
        let fileSystem = fileSystem.confined(to: directory)
        var report = VerificationReport()
        let reader: LogReader
        do {
            reader = try LogReader(directory: directory, fileSystem: fileSystem, payloadCodec: payloadCodec)
        } catch let error as LogError where error.code == .corrupt {
            report.problems.append(.init(kind: .corruption, file: directory, sequence: 1, message: error.message))
            return report
        }
        try reader.reading?.verify(keys: keys, report: &report, progress: progress)
        return report
    }
}
