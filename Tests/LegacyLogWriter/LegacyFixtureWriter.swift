@testable import EventLog
import FileIO

/// Makes fixtures of format-1 logs, which the product reads, verifies and upgrades but no longer
/// writes: ``EventLog`` opens a new or format-1 log with ``LegacyWriter`` when a configuration
/// carries this, continuing where ``LegacyRecovery`` leaves the tail.
struct LegacyFixtureWriter: FixtureWriterOpener {
    func openWriter(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> (any CommitWriter, RecoveryReport) {
        let (tail, report) = try LegacyRecovery.recover(directory: directory, configuration: configuration, fileSystem: fileSystem)
        guard let tail else { return (try Self.createLog(directory: directory, configuration: configuration, fileSystem: fileSystem), report) }
        let active = try LegacyActiveSegment.open(
            directory: directory, firstSequence: tail.activeFirstSequence, dataEnd: tail.dataEnd,
            indexEntries: tail.indexEntries, fileSystem: fileSystem)
        let writer = try LegacyWriter(
            directory: directory, fileSystem: fileSystem, configuration: configuration, logID: tail.logID,
            nextSequence: tail.nextSequence, lastTimestamp: tail.lastTimestamp, previousHash: tail.previousHash,
            segment: active)
        return (writer, report)
    }

    /// A new, empty log: segment 1 with a fresh random log id.
    private static func createLog(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> LegacyWriter {
        var generator = SystemRandomNumberGenerator()
        let logID = configuration.newLogID
            ?? (0..<LogFiles.logIDSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let header = SegmentHeader(firstSequence: 1, logID: logID, createdAt: configuration.clock.now())
        try LegacyWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
        let active = try LegacyActiveSegment.open(
            directory: directory, firstSequence: 1, dataEnd: Int64(LegacyFormat.segmentHeaderSize), indexEntries: [],
            fileSystem: fileSystem)
        return try LegacyWriter(
            directory: directory, fileSystem: fileSystem, configuration: configuration, logID: logID,
            nextSequence: 1, lastTimestamp: nil, previousHash: ChainHash.of(header.encoded()), segment: active)
    }
}

extension LogConfiguration {
    /// Tests only: write format 1 (a new log, or an old one opened again), to make fixtures of
    /// the logs that earlier versions wrote.
    public var writesFormatOne: Bool {
        get { fixtureWriter != nil }
        set { fixtureWriter = newValue ? LegacyFixtureWriter() : nil }
    }
}
