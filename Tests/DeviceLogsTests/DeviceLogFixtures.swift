import DeviceLogs
import EventLog
import Foundation
import SeededRandom
import StorageTestSupport

/// Logs for the device tests: real logs in real folders, written with an injected clock.
enum DeviceLogFixtures {
    /// A log configuration with a fixed id and a test clock (no background compaction, so the
    /// tests decide when blocks are made).
    static func configuration(id: DeviceID? = nil, clock: any LogClock = TestClock(stepPerReading: 1)) -> LogConfiguration {
        var configuration = LogConfiguration()
        configuration.newLogID = id?.bytes
        configuration.clock = clock
        configuration.compactsInBackground = false
        return configuration
    }

    /// Appends `count` payloads "prefix-1", "prefix-2", …, one append each.
    static func append(_ count: Int, to log: EventLog, prefix: String, from first: Int = 1) throws {
        for index in first..<first + count { _ = try log.append(Array("\(prefix)-\(index)".utf8)) }
    }

    /// Every event of the log in `path`.
    static func events(_ path: String) throws -> [LogEvent] {
        let reader = try LogReader(directory: path)
        let cursor = try reader.events()
        var events: [LogEvent] = []
        while let event = try cursor.next() { events.append(event) }
        return events
    }

    /// The head of the log in `path` after its last event.
    static func head(_ path: String) throws -> LogHead {
        let reader = try LogReader(directory: path)
        return try reader.head(at: try reader.lastSequence())!
    }

    /// The bytes of every file under `path`, by relative path: to show that a refusal changed nothing.
    static func contents(_ path: String) -> [String: Data] {
        var contents: [String: Data] = [:]
        guard let names = FileManager.default.enumerator(atPath: path) else { return [:] }
        for case let name as String in names {
            if let data = FileManager.default.contents(atPath: path + "/" + name) { contents[name] = data }
        }
        return contents
    }
}
