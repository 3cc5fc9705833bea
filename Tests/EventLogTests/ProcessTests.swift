import DemoLog
import EventLog
import Foundation
import SeededRandom
import StorageTestSupport
import Testing

/// Guarantees that need a second process: one writer per log, and durability across kill -9.
@Suite(.serialized, .heavy) struct ProcessTests {
    @Test func aSecondWriterIsRefusedAndToldWhoHoldsTheLog() throws {
        let directory = TemporaryFolder.made("lock")
        let holder = try HelperProcess(["hold", directory.path])
        defer { holder.closeInput(); _ = holder.wait() }
        let ready = try #require(holder.readLine())
        #expect(ready == "ready pid=\(holder.pid)")

        // This process, as a second writer.
        let error = expectLogError(.locked) { try EventLog.open(at: directory.path, configuration: configuration()) }
        #expect(error?.message.contains("pid=\(holder.pid)") == true)

        // Another process, as a second writer.
        let rival = try HelperProcess(["try-open", directory.path])
        let answer = rival.readLine() ?? ""
        #expect(rival.wait() == 1)
        #expect(answer.hasPrefix("error locked"))
        #expect(answer.contains("pid=\(holder.pid)"))

        // Readers take no lock.
        #expect(try readAll(directory.path).isEmpty)

        // Once the holder is gone (even killed), the log can be opened again.
        holder.kill()
        let log = try EventLog.open(at: directory.path, configuration: configuration())
        try log.close()
    }

    @Test func twoWritersInOneProcessAreRefusedToo() throws {
        let directory = TemporaryFolder.made("lock-local")
        let first = try EventLog.open(at: directory.path, configuration: configuration())
        let error = expectLogError(.locked) { try EventLog.open(at: directory.path, configuration: configuration()) }
        #expect(error?.message.contains("pid=\(getpid())") == true)
        try first.close()
        let second = try EventLog.open(at: directory.path, configuration: configuration())
        try second.close()
    }

    /// A writer appends under `.always` and reports each acknowledged append; it is killed at
    /// a random moment. After each kill, every acknowledged event is there, the log is exactly
    /// a prefix of what was written (no gaps, no reordering, right bytes), the chain verifies,
    /// and the next round appends after it.
    @Test func acknowledgedAppendsSurviveKill9() async throws {
        let directory = TemporaryFolder.made("kill")
        var generator = SplitMix(seed: 2026)
        var previousLast: UInt64 = 0
        for round in 1...8 {
            let writer = try HelperProcess(["append-forever", directory.path, String(round)])
            var line = writer.readLine()
            if line?.hasPrefix("recovered") == true { line = writer.readLine() }  // a torn tail was cut
            let ready = try #require(line, "round \(round): the writer said nothing")
            #expect(ready == "ready \(previousLast)", "round \(round): the writer resumes after the last event")
            // Let it run for a random while, reading acknowledgements as they come.
            let acknowledgements = Int.random(in: 20...400, using: &generator)
            var acknowledged: UInt64 = previousLast
            for _ in 0..<acknowledgements {
                guard let ack = writer.readLine(), ack.hasPrefix("ack ") else { break }
                acknowledged = UInt64(ack.split(separator: " ")[2])!
            }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...3_000, using: &generator)))
            writer.kill()
            while let ack = writer.readLine(), ack.hasPrefix("ack ") {
                acknowledged = UInt64(ack.split(separator: " ")[2])!
            }

            let events = try readAll(directory.path)
            let last = events.last?.sequence ?? 0
            #expect(last >= acknowledged, "round \(round): acknowledged \(acknowledged) but only \(last) survived")
            #expect(events.map(\.sequence) == Array(1...max(last, 1)).prefix(events.count).map { $0 })
            #expect(events.allSatisfy { SyntheticEvents.isPayload($0.payload, of: $0.sequence) })
            let report = try LogVerifier.verify(directory: directory.path)
            #expect(report.events == last)
            #expect(!report.problems.contains { $0.kind == .corruption }, "round \(round): \(report.problems)")
            previousLast = last
        }
        #expect(previousLast > 200, "the writers appended \(previousLast) events in all")
    }
}
