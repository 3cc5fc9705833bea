import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing

@Suite struct LogCopierTests {
    let phone = DeviceID(parsing: "11111111111111111111111111111111")!
    let laptop = DeviceID(parsing: "22222222222222222222222222222222")!

    @Test func aNewCopyHasTheSameEventsAndHeadsAndGrowsWithTheLog() throws {
        let folder = TemporaryFolder.made("copier")
        let source = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(40, to: source, prefix: "phone")
        _ = try source.compact()  // some events in sealed blocks, the rest in the hot tail
        try DeviceLogFixtures.append(10, to: source, prefix: "phone", from: 41)

        let copy = folder.sub("copy")
        let first = try #require(
            try LogCopier.update(copy: copy, from: source.directory, refusing: laptop, configuration: LogConfiguration()))
        #expect(first.device == phone && first.before == 0 && first.copied == 50)
        #expect(first.head == source.head)
        #expect(try DeviceLogFixtures.events(copy) == DeviceLogFixtures.events(source.directory))
        #expect(try LogReader(directory: copy).identity() == LogReader(directory: source.directory).identity())
        #expect(!FileManager.default.fileExists(atPath: copy + ".partial"))

        // Taken again with nothing new: nothing is copied. Then the source grows while open.
        #expect(try LogCopier.update(copy: copy, from: source.directory, refusing: laptop, configuration: LogConfiguration())?.copied == 0)
        try DeviceLogFixtures.append(7, to: source, prefix: "phone", from: 51)
        let second = try #require(try LogCopier.update(copy: copy, from: source.directory, refusing: laptop, configuration: LogConfiguration()))
        #expect(second.before == 50 && second.copied == 7 && second.head == source.head)
        #expect(try LogVerifier.verify(directory: copy).isClean)
        #expect(try DeviceLogFixtures.events(copy) == DeviceLogFixtures.events(source.directory))
        try source.close()
    }

    @Test func aNewCopyTakesTheOtherLogsBlockFilesByteForByteUnlessAnEventMustArriveErased() throws {
        let folder = TemporaryFolder.made("copier-adopt")
        let source = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(30, to: source, prefix: "phone")
        _ = try source.compact()
        try DeviceLogFixtures.append(30, to: source, prefix: "phone", from: 31)
        _ = try source.compact()  // block files from 1 and from 31
        try DeviceLogFixtures.append(5, to: source, prefix: "phone", from: 61)  // and a hot tail
        var keyed = LogConfiguration()
        keyed.blockKeys = BlockKeys(name: "length") { UInt64($0.count) }

        let copy = folder.sub("copy")
        let report = try #require(try LogCopier.update(copy: copy, from: source.directory, refusing: laptop, configuration: keyed))
        #expect(report.copied == 65 && report.head == source.head)
        for first in ["00000000000000000001", "00000000000000000031"] {
            let mine = FileManager.default.contents(atPath: "\(copy)/\(first).blk")
            #expect(mine != nil && mine == FileManager.default.contents(atPath: "\(source.directory)/\(first).blk"), "\(first).blk taken whole")
            #expect(FileManager.default.fileExists(atPath: "\(copy)/\(first).keys"), "its key summary built from its blocks")
        }
        #expect(try LogVerifier.verify(directory: copy).isClean)
        #expect(try DeviceLogFixtures.events(copy) == DeviceLogFixtures.events(source.directory))

        // An event of the second file must arrive erased: the first file is still taken whole,
        // the second goes through the encoder with that event erased, and the heads agree.
        let erasing = folder.sub("erasing")
        let erased = try #require(
            try LogCopier.update(
                copy: erasing, from: source.directory, refusing: laptop, configuration: keyed,
                arrivals: { $0.sequence == 40 ? [] : nil }))
        #expect(erased.erasedOnArrival == 1 && erased.head == source.head)
        #expect(FileManager.default.contents(atPath: "\(erasing)/00000000000000000001.blk") == FileManager.default.contents(atPath: "\(source.directory)/00000000000000000001.blk"))
        #expect(FileManager.default.contents(atPath: "\(erasing)/00000000000000000031.blk") != FileManager.default.contents(atPath: "\(source.directory)/00000000000000000031.blk"))
        #expect(try DeviceLogFixtures.events(erasing).filter(\.isErased).map(\.sequence) == [40])
        #expect(try LogVerifier.verify(directory: erasing).isClean)
        try source.close()
    }

    @Test func erasedEventsAreCopiedErasedAndTheHeadsStillAgree() throws {
        let folder = TemporaryFolder.made("copier-erased")
        let source = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(12, to: source, prefix: "phone")
        _ = try source.compact()
        _ = try source.erase([3: [], 7: [1, 2]])
        let copy = folder.sub("copy")
        let report = try #require(try LogCopier.update(copy: copy, from: source.directory, refusing: nil, configuration: LogConfiguration()))
        #expect(report.head == source.head)
        let events = try DeviceLogFixtures.events(copy)
        #expect(events.filter(\.isErased).map(\.sequence) == [3, 7])
        #expect(events.first { $0.sequence == 7 }?.keptBytes.map(Array.init) == [1, 2])
        try source.close()
    }

    @Test func refusesThisDevicesOwnLog() throws {
        let folder = TemporaryFolder.made("copier-own")
        let source = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(3, to: source, prefix: "phone")
        #expect {
            try LogCopier.update(copy: folder.sub("copy"), from: source.directory, refusing: phone, configuration: LogConfiguration())
        } throws: { ($0 as! DeviceError).code == .refused && "\($0)".contains("this device's own (\(phone))") }
        #expect(!FileManager.default.fileExists(atPath: folder.sub("copy")))
        try source.close()
    }

    @Test func refusesARewrittenHistoryNamingItsFirstDifferentEvent() throws {
        let folder = TemporaryFolder.made("copier-rewrite")
        let original = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(30, to: original, prefix: "phone")
        let copy = folder.sub("copy")
        _ = try LogCopier.update(copy: copy, from: original.directory, refusing: laptop, configuration: LogConfiguration())
        try original.close()
        // The same device id, the same first 17 events, then others: a history rewritten.
        let rewritten = try EventLog.open(at: folder.sub("rewritten"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(17, to: rewritten, prefix: "phone")
        try DeviceLogFixtures.append(20, to: rewritten, prefix: "forged", from: 18)
        let before = DeviceLogFixtures.contents(copy)
        #expect {
            try LogCopier.update(copy: copy, from: rewritten.directory, refusing: laptop, configuration: LogConfiguration())
        } throws: { ($0 as! DeviceError).code == .refused && "\($0)".contains("device \(phone) rewrote its history at event 18") }
        #expect(DeviceLogFixtures.contents(copy) == before)
        try rewritten.close()
    }

    @Test func refusesALogShorterThanTheCopyAndAnotherLogInTheCopysPlace() throws {
        let folder = TemporaryFolder.made("copier-short")
        let original = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(10, to: original, prefix: "phone")
        let copy = folder.sub("copy")
        _ = try LogCopier.update(copy: copy, from: original.directory, refusing: nil, configuration: LogConfiguration())
        let older = try EventLog.open(at: folder.sub("older"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(6, to: older, prefix: "phone")
        #expect {
            try LogCopier.update(copy: copy, from: older.directory, refusing: nil, configuration: LogConfiguration())
        } throws: { "\($0)".contains("ends at event 6, but this store has its events through 10") }
        let other = try EventLog.open(at: folder.sub("laptop"), configuration: DeviceLogFixtures.configuration(id: laptop))
        try DeviceLogFixtures.append(12, to: other, prefix: "laptop")
        #expect {
            try LogCopier.update(copy: copy, from: other.directory, refusing: nil, configuration: LogConfiguration())
        } throws: { ($0 as! DeviceError).code == .refused && "\($0)".contains("holds another log") }
        #expect(try DeviceLogFixtures.events(copy).count == 10)
        for log in [original, older, other] { try log.close() }
    }

    @Test func refusesADamagedLogAndTakesNothingOfIt() throws {
        let folder = TemporaryFolder.made("copier-damage")
        let source = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(20, to: source, prefix: "phone")
        _ = try source.compact()
        try source.close()
        // Flip one byte in the middle of the sealed block file.
        let block = try #require(try FileManager.default.contentsOfDirectory(atPath: source.directory).first { $0.hasSuffix(".blk") })
        let path = source.directory + "/" + block
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        let copy = folder.sub("copy")
        #expect {
            try LogCopier.update(copy: copy, from: source.directory, refusing: nil, configuration: LogConfiguration())
        } throws: { ($0 as! DeviceError).code == .refused && "\($0)".contains(source.directory) }
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(!FileManager.default.fileExists(atPath: copy + ".partial"))
    }

    @Test func anInterruptedFirstCopyIsRemovedAndMadeAgain() throws {
        let folder = TemporaryFolder.made("copier-partial")
        let source = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        try DeviceLogFixtures.append(5, to: source, prefix: "phone")
        let copy = folder.sub("copy")
        try FileManager.default.createDirectory(atPath: copy + ".partial", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: copy + ".partial/leftover", contents: Data([1, 2, 3]))
        let report = try #require(try LogCopier.update(copy: copy, from: source.directory, refusing: nil, configuration: LogConfiguration()))
        #expect(report.head == source.head)
        #expect(!FileManager.default.fileExists(atPath: copy + ".partial"))
        try source.close()
    }

    @Test func anEmptyLogGivesNothingToCopy() throws {
        let folder = TemporaryFolder.made("copier-empty")
        let source = try EventLog.open(at: folder.sub("phone"), configuration: DeviceLogFixtures.configuration(id: phone))
        #expect(try LogCopier.update(copy: folder.sub("copy"), from: source.directory, refusing: nil, configuration: LogConfiguration()) == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.sub("copy")))
        try source.close()
    }
}
