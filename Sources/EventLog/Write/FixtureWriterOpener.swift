import FileIO

/// Opens a writer of format 1, which this version reads, verifies and upgrades but no longer
/// writes. Only the tests supply one (`Tests/LegacyLogWriter`), to make fixtures of old logs;
/// ``EventLog/open(at:configuration:fileSystem:)`` uses it for a new log or a format-1 one.
protocol FixtureWriterOpener: Sendable {
    func openWriter(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> (any CommitWriter, RecoveryReport)
}
