import ArgumentParser
import Foundation
import VirtualTourist

/// `vt export [--output FILE] [--without-photos]`: the store as JSON lines (docs/EXPORT.md).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write the store's events (and photos) as JSON lines (docs/EXPORT.md).",
        discussion: "Reads only; safe beside a running app. Restore with: vt import FILE --store NEW_FOLDER")
    @OptionGroup var global: GlobalOptions
    @Option(name: [.short, .long], help: "Write to this file (it must not exist) instead of standard output.") var output: String?
    @Flag(help: "Leave the photos' bytes out (the events still name them).") var withoutPhotos = false

    func validate() throws {
        if let output, FileManager.default.fileExists(atPath: output) {
            throw ValidationError("--output \(output) exists already; name a new file")
        }
    }

    func run() async throws {
        let reader = try global.reader()
        let sink: LineSink
        if let output {
            guard FileManager.default.createFile(atPath: output + ".partial", contents: nil),
                let handle = FileHandle(forWritingAtPath: output + ".partial")
            else { throw RuntimeError(message: "cannot create \(output).partial") }
            sink = LineSink(handle)
        } else {
            sink = LineSink(FileHandle.standardOutput)
        }
        let bar = ProgressBar()
        let summary: ExportSummary
        do {
            summary = try reader.export(includePhotos: !withoutPhotos, progress: { bar.update("exporting", done: Int64($0), total: Int64($1)) }) {
                try sink.write($0)
            }
            try sink.flush()
        } catch {
            bar.finish()
            if let output { try? FileManager.default.removeItem(atPath: output + ".partial") }
            throw error
        }
        bar.finish()
        if let output {
            try sink.handle.synchronize()
            try sink.handle.close()
            try FileManager.default.moveItem(atPath: output + ".partial", toPath: output)
        }
        Terminal.note("exported \(summary.events) events and \(summary.photos) photos (\(summary.photoBytes) bytes)"
            + (summary.photosNotStored > 0 ? "; \(summary.photosNotStored) photos no album uses any more were already collected" : "")
            + (output.map { " to \($0)" } ?? ""))
    }
}

/// `vt import FILE --store NEW`.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Build a new store from an export (every event checked against the rules).",
        discussion: "The store named by --store (or VT_STORE) must not exist or be an empty folder: import never merges. On any problem nothing is left behind.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The export file, or - for standard input.") var file: String

    func run() async throws {
        let input: FileHandle
        var size: Int64 = 0
        if file == "-" {
            input = FileHandle.standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw RuntimeError(message: "cannot read \(file): no such file, or not readable")
            }
            input = handle
            size = ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.int64Value ?? 0
        }
        let importer = try StoreImporter(folder: global.storePath)
        let bar = ProgressBar(enabled: Terminal.errorIsTerminal && size > 0)
        let summary: ImportSummary
        do {
            var number = 0
            var read: Int64 = 0
            try LineSource(input).forEachLine { line in
                number += 1
                read += Int64(line.count + 1)
                try importer.consume(String(decoding: line, as: UTF8.self), lineNumber: number)
                if number % 1024 == 0 { bar.update("importing", done: read, total: size) }
            }
            summary = try await importer.finish()
        } catch {
            bar.finish()
            importer.abandon()
            throw RuntimeError(message: "import failed, nothing was kept: \(error)")
        }
        bar.finish()
        if global.json {
            return try Output.json([
                "events": Int(summary.events), "photos": summary.photos, "missing_photos": summary.missingPhotos, "devices": summary.devices.count,
            ])
        }
        let devices = summary.devices.count < 2 ? "" : ", \(summary.devices.count) devices (\(summary.devices.joined(separator: ", ")); a new map, each device under a new id)"
        print("imported \(summary.events) events and \(summary.photos) photos into \(global.storePath): \(summary.state.pins.count) pins" + devices)
        if summary.missingPhotos > 0 {
            print("\(summary.missingPhotos) photos shown in albums were not in the export (exported --without-photos?); `vt verify` lists them")
        }
    }
}

/// Lines out, in large writes.
final class LineSink {
    let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 20 { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Lines in, read in large chunks; a line may be any length.
struct LineSource {
    let handle: FileHandle

    init(_ handle: FileHandle) { self.handle = handle }

    func forEachLine(_ body: ([UInt8]) throws -> Void) throws {
        var pending: [UInt8] = []
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            var start = chunk.startIndex
            while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
                pending.append(contentsOf: chunk[start..<newline])
                try body(pending)
                pending.removeAll(keepingCapacity: true)
                start = newline + 1
            }
            pending.append(contentsOf: chunk[start...])
        }
        if !pending.isEmpty { try body(pending) }
    }
}
