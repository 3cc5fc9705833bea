// What a sync reads from another device (docs/DEVICES.md, "Copies of another device's log",
// "What is refused from another device"): the other device's log, with one of its block files
// changed, copied by the real LogCopier on the tests' in-memory disk, as a new copy and onto a
// copy that already holds the whole genuine log. Whatever the bytes, a copy is refused and left
// as it was (a new one not made at all), or it holds exactly the events the other log reads
// back, with the heads that log states, and verifies.

import DeviceLogs
import EventLog
import FileIO
import FuzzSupport
import StorageTestSupport

/// The genuine log of DerivedFixture and a whole copy of it, built once.
struct CopiedFixture {
    static let copy = "/copy"
    let copyFiles: [String: [UInt8]]
    let blockName: String

    static let shared = CopiedFixture()

    private init() {
        let fixture = DerivedFixture.shared
        guard let block = fixture.files.keys.sorted().first(where: { $0.hasSuffix(".blk") }) else {
            fatalError("the fixture log has no block file: \(fixture.files.keys.sorted())")
        }
        blockName = block
        let disk = fixture.disk(replacing: block, with: fixture.files[block]!)
        do {
            _ = try LogCopier.update(
                copy: Self.copy, from: DerivedFixture.directory, refusing: nil, configuration: Self.configuration, fileSystem: disk)
        } catch {
            fatalError("the fixture log could not be copied: \(error)")
        }
        copyFiles = disk.files(under: Self.copy)
    }

    /// How copies are written: the fixture's configuration, without its key function (a copy
    /// is read for its events, not asked about keys).
    static var configuration: LogConfiguration {
        var configuration = DerivedFixture.configuration
        configuration.blockKeys = nil
        return configuration
    }
}

/// `bytes` XORed onto the fixture's first block file, then copied as a new copy and onto the
/// whole copy.
func fuzzCopiedLog(_ bytes: [UInt8]) {
    let fixture = DerivedFixture.shared
    let copied = CopiedFixture.shared
    var block = fixture.files[copied.blockName]!
    for (index, byte) in bytes.prefix(block.count).enumerated() { block[index] ^= byte }

    // A new copy.
    let disk = fixture.disk(replacing: copied.blockName, with: block)
    do {
        let report = try LogCopier.update(
            copy: CopiedFixture.copy, from: DerivedFixture.directory, refusing: nil, configuration: CopiedFixture.configuration,
            fileSystem: disk)
        if let report { requireSameEvents(on: disk, through: report.head) }
    } catch let error as DeviceError {
        require(disk.files(under: CopiedFixture.copy).isEmpty, "a refused new copy left files: \(error)")
        require(error.code == .refused || error.code == .storage, "a copy failed with \(error.code): \(error)")
    } catch {
        require(false, "the copier threw something else than its own error: \(error)")
    }

    // The whole genuine copy already there: nothing is taken, or the source is refused.
    let held = fixture.disk(replacing: copied.blockName, with: block)
    do { try held.createDirectoryDurably(CopiedFixture.copy) } catch { require(false, "the copy's folder cannot be made: \(error)") }
    for (name, content) in copied.copyFiles {
        require(!name.contains("/"), "the fixture's copy has a folder inside: \(name)")
        held.overwrite(Path.join(CopiedFixture.copy, name), with: content)
    }
    do {
        let report = try LogCopier.update(
            copy: CopiedFixture.copy, from: DerivedFixture.directory, refusing: nil, configuration: CopiedFixture.configuration,
            isDevicesOwnLog: false, fileSystem: held)
        require(report.map { $0.copied == 0 } ?? true, "a copy of the whole log took more events")
    } catch let error as DeviceError {
        require(error.code == .refused || error.code == .storage, "updating a copy failed with \(error.code): \(error)")
    } catch {
        require(false, "the copier threw something else than its own error: \(error)")
    }
    require(held.files(under: CopiedFixture.copy) == copied.copyFiles, "a copy of the whole log was changed")
}

/// The copy on `disk` reads back the other log's events, with the other log's heads, through
/// `head`, and verifies.
private func requireSameEvents(on disk: SimulatedDisk, through head: LogHead) {
    do {
        let source = try LogReader(directory: DerivedFixture.directory, fileSystem: disk, payloadCodec: CopiedFixture.configuration.payloadCodec)
        let copy = try LogReader(directory: CopiedFixture.copy, fileSystem: disk, payloadCodec: CopiedFixture.configuration.payloadCodec)
        require(try copy.lastSequence() == head.sequence, "the copy does not end where its report says")
        let theirs = try source.events(from: 1, through: head.sequence)
        let ours = try copy.events(from: 1)
        while let event = try ours.next() {
            require(try theirs.next() == event, "the copy's event \(event.sequence) is not the other log's")
            require(try copy.head(at: event.sequence) == source.head(at: event.sequence), "the heads differ at \(event.sequence)")
        }
        let verification = try LogVerifier.verify(directory: CopiedFixture.copy, fileSystem: disk, payloadCodec: CopiedFixture.configuration.payloadCodec)
        require(verification.problems.isEmpty, "an accepted copy does not verify: \(verification.problems.prefix(2))")
    } catch {
        require(false, "an accepted copy cannot be read back: \(error)")
    }
}
