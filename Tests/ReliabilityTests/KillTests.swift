import FileIO
import Foundation
import ReliabilitySupport
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// kill -9 at random moments of a real process running the mixed workload on a real store
/// (real files, fsync, locks). After each kill the store is reopened and checked by
/// ``violations(ofStoreAt:fileSystem:acknowledged:written:checkpoint:)``, from the last
/// round's checkpoint (so a round reads only what the rounds before did not); the next round
/// resumes on it. After the last kill, the whole store is checked again from its first event.
///
/// `VT_KILLS` sets the number of kills (30 by default; RELIABILITY.md runs 1,000).
@Suite(.serialized, .heavy) struct KillTests {
    static let kills = Int(ProcessInfo.processInfo.environment["VT_KILLS"] ?? "") ?? 30

    @Test func acknowledgedWorkSurvivesKill9AtRandomMoments() async throws {
        let folder = TemporaryFolder("kill")
        let store = folder.path + "/store"
        var random = UInt64(ProcessInfo.processInfo.environment["VT_KILL_SEED"] ?? "") ?? 2026
        func next(_ bound: UInt64) -> UInt64 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (random >> 33) % bound
        }
        var acknowledged: [UInt64: String] = [:]
        var survived = 0
        var recoveredTails = 0
        var checkpoint: StoreCheckpoint?
        for round in 1...Self.kills {
            let helper = try HelperProcess("StoreCrashHelper", [store, String(next(1 << 40))])
            var line = helper.readLine()
            if line?.hasPrefix("recovered") == true {
                recoveredTails += 1
                line = helper.readLine()
            }
            guard let ready = line, ready.hasPrefix("ready ") else {
                Issue.record("round \(round): the helper said \(line ?? "nothing")")
                helper.kill()
                break
            }
            // Let it work for a random while (a random number of acknowledgements, then a
            // random pause), reading acknowledgements as they come; then SIGKILL.
            let wanted = Int(next(120))
            var read = 0
            while read < wanted, let ack = helper.readLine() {
                guard record(ack, into: &acknowledged) else {
                    Issue.record("round \(round): \(ack)")
                    break
                }
                read += 1
            }
            try await Task.sleep(for: .microseconds(Int(next(20_000))))
            helper.kill()
            // Acknowledgements printed before the kill still count.
            while let ack = helper.readLine() { _ = record(ack, into: &acknowledged) }

            let found = await violations(
                ofStoreAt: store, fileSystem: PosixFileSystem(), acknowledged: acknowledged, written: nil,
                checkpoint: &checkpoint)
            #expect(found.isEmpty, "after kill \(round): \(found)")
            if !found.isEmpty { break }
            survived += 1
            if survived % 100 == 0 { print("kill -9: \(survived) kills survived so far") }
            // The check appended one event; what it wrote is acknowledged too.
            let reader = try StoreReader.open(at: store)
            try reader.forEachEvent(from: reader.lastSequence) { acknowledged[$0.sequence] = fingerprint($0) }
        }
        let whole = await violations(ofStoreAt: store, fileSystem: PosixFileSystem(), acknowledged: acknowledged, written: nil)
        #expect(whole.isEmpty, "the whole store, after the last kill: \(whole)")
        let reader = try StoreReader.open(at: store)
        #expect(reader.lastSequence > UInt64(Self.kills) * 3, "the helpers appended \(reader.lastSequence) events")
        print("kill -9: \(survived) of \(Self.kills) kills survived; \(reader.lastSequence) events, \(acknowledged.count) acknowledged, \(recoveredTails) torn tails cut")
    }

    private func record(_ line: String, into acknowledged: inout [UInt64: String]) -> Bool {
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "ack", let sequence = UInt64(parts[1]) else { return false }
        acknowledged[sequence] = String(parts[2])
        return true
    }
}
