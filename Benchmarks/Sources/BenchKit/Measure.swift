import Foundation

/// Timing, memory and size readings for the harness.
public enum Measure {
    /// Seconds spent in `body`.
    public static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return seconds(since: start)
    }

    public static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Seconds summed over several timed parts of one piece of work, leaving out what runs
    /// between them (generating the next part of a workload, say).
    public struct Stopwatch {
        public private(set) var seconds = 0.0
        public init() {}

        public mutating func time<T>(_ body: () throws -> T) rethrows -> T {
            let start = ContinuousClock.now
            defer { seconds += Measure.seconds(since: start) }
            return try body()
        }
    }

    /// CPU seconds the process has used so far, user and system, every thread.
    public static func processorSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The fastest of `runs` runs of `body` (each returns its own seconds).
    public static func best(of runs: Int, _ body: () throws -> Double) rethrows -> Double {
        var fastest = Double.infinity
        for _ in 0..<max(1, runs) { fastest = min(fastest, try body()) }
        return fastest
    }

    /// The median of `values` (0 for none).
    public static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Resident memory now and its peak, in bytes (Linux: /proc/self/status; nil elsewhere).
    public static func residentMemory() -> (current: Int, peak: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        func kibibytes(_ key: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return nil }
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        guard let current = kibibytes("VmRSS"), let peak = kibibytes("VmHWM") else { return nil }
        return (current, peak)
    }

    /// Resets the peak resident memory to the current one (Linux ≥ 4.0: "5" to clear_refs), so
    /// a later ``residentMemory()`` peak covers only what ran after. False when not possible.
    @discardableResult
    public static func resetPeakMemory() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// Bytes of every regular file under `path`.
    public static func folderBytes(_ path: String) -> Int64 {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        while let name = walker.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            if attributes?[.type] as? FileAttributeType == .typeRegular {
                total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            }
        }
        return total
    }

    /// A fresh folder under the system's temporary folder (or `$VT_BENCH_DIR`).
    public static func temporaryFolder(_ name: String) -> String {
        let base = ProcessInfo.processInfo.environment["VT_BENCH_DIR"] ?? NSTemporaryDirectory()
        let path = (base as NSString).appendingPathComponent("vt-bench-\(name)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Number formatting for the tables.
public enum Figure {
    /// 1234567 → "1,234,567".
    public static func grouped(_ value: Double) -> String {
        let whole = Int(value.rounded())
        let digits = String(abs(whole))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return (whole < 0 ? "-" : "") + out
    }

    public static func fixed(_ value: Double, _ decimals: Int = 1) -> String {
        String(format: "%.\(decimals)f", value)
    }

    public static func milliseconds(_ seconds: Double) -> String {
        seconds < 0.01 ? String(format: "%.2f ms", seconds * 1000) : String(format: "%.1f ms", seconds * 1000)
    }

    public static func mebibytes(_ bytes: Double) -> String { String(format: "%.1f MiB", bytes / 1_048_576) }

    public static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }
}
