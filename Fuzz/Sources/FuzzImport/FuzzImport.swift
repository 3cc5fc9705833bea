// Fuzzes what `vt import` reads (docs/EXPORT.md): JSON lines. Each line goes through
// EventJSON, the rules and the fold in memory, and every event that decodes must survive a
// round trip through the JSON form and through the log's protobuf form. Then the whole input
// goes to the real StoreImporter in a scratch folder, as `vt import` would feed it.
//
// Input: the text of an export (or any bytes), lines split at "\n".

import EventLog
import Foundation
import FuzzSupport
import VirtualTourist

/// Enough lines to reach every rule; the importer itself takes any number.
let lineLimit = 256

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(lineLimit)
    var state = TouristState()
    for line in lines {
        guard let recorded = try? EventJSON.decode(line).recorded() else { continue }
        _ = state.problem(with: recorded.event)
        state.apply(recorded)
        checkRoundTrips(recorded)
    }
    // The importer refuses anything without the export's header at once; only an input that
    // has one is worth building a store for.
    if let first = lines.first(where: { !$0.allSatisfy(\.isWhitespace) }),
        let header = try? JSONDecoder().decode(ExportLine.Header.self, from: Data(first.utf8)),
        header.format == ExportLine.format
    {
        importWithStoreImporter(lines)
    }
    return 0
}

/// JSON → event → JSON and event → protobuf → event give the event back unchanged.
func checkRoundTrips(_ recorded: RecordedEvent) {
    // The log cannot tell "cause 0" from "no cause" (and import refuses a cause of 0).
    var expected = recorded
    if expected.cause == 0 { expected.cause = nil }
    let payload = EventCodec.encode(recorded.event, cause: recorded.cause)
    do {
        let back = try EventCodec.decode(
            LogEvent(sequence: recorded.sequence, timestamp: recorded.timestamp, payload: payload[...]))
        require(back == expected, "the event changed through protobuf: \(recorded) became \(back)")
    } catch {
        fatalError("an imported event does not decode from its own encoding: \(error)")
    }
    // JSON cannot write an infinite number (a literal such as 1e999 may read as one); the
    // rules refuse every such event anyway.
    guard let line = try? EventJSON(recorded).encodedLine() else { return }
    do {
        let again = try EventJSON.decode(line).recorded()
        require(again == recorded, "the event changed through JSON: \(recorded) became \(again)\n\(line)")
    } catch {
        fatalError("a line EventJSON wrote does not read back: \(error)\n\(line)")
    }
}

// MARK: - The real importer

/// Where the importer builds its stores: `FUZZ_SCRATCH` (scripts/fuzz points it at a tmpfs
/// folder it removes afterwards), else the system's temporary folder.
let scratch = makeScratchFolder()

func makeScratchFolder() -> String {
    let base = ProcessInfo.processInfo.environment["FUZZ_SCRATCH"] ?? NSTemporaryDirectory()
    let folder = (base as NSString).appendingPathComponent("vt-fuzz-import-\(getpid())")
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    // libFuzzer ends with exit(): the folder goes then (a crash leaves it, with its store).
    atexit { try? FileManager.default.removeItem(atPath: scratch) }
    return folder
}
nonisolated(unsafe) var runs = 0

/// `vt import`: every line in order, then `finish()` when all were taken. A refused line is
/// the expected outcome; only a finish that reports its own inconsistency is a bug.
func importWithStoreImporter(_ lines: ArraySlice<Substring>) {
    runs += 1
    let folder = (scratch as NSString).appendingPathComponent(String(runs))
    guard let importer = try? StoreImporter(folder: folder) else { return }
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for (number, line) in lines.enumerated() {
        do { try importer.consume(line, lineNumber: number + 1) } catch {
            importer.abandon()
            return
        }
    }
    let box = ImporterBox(importer)
    let done = DispatchSemaphore(value: 0)
    Task {
        do { _ = try await box.importer.finish() } catch { box.error = error }
        done.signal()
    }
    done.wait()
    if let error = box.error {
        importer.abandon()
        if let error = error as? DomainError {
            // finish() compares the reopened store with the imported state and names a
            // difference as a bug: that is what fuzzing looks for here.
            require(!error.message.contains("please report it"), "import: \(error)")
        }
    }
}

/// Carries the importer into the task that finishes it; the caller waits for that task.
final class ImporterBox: @unchecked Sendable {
    let importer: StoreImporter
    var error: (any Error)?
    init(_ importer: StoreImporter) { self.importer = importer }
}
