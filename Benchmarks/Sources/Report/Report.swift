import BenchKit
import Foundation

/// One line of the report: our figure, the SQLite peer's on the same workload, their ratio
/// (oriented so that above 1 means we are better), and the target from ../shared/DESIGN.md.
struct Row {
    enum Verdict: String {
        case met, missed
        /// The target's condition could not be set up here (a rate the machine does not reach).
        case notReached = "not reached"
    }

    var what: String
    var ours: String
    var peer = ""
    var ratio = ""
    var target = ""
    var verdict: Verdict?
}

/// Collects rows, says each as it is measured (on standard error: progress for long runs), and
/// prints the whole table at the end.
final class Report {
    private(set) var rows: [Row] = []
    private(set) var notes: [String] = []

    func add(_ row: Row) {
        rows.append(row)
        let verdict = row.verdict.map { " [\($0.rawValue)]" } ?? ""
        let ratio = row.ratio.isEmpty ? "" : " (ratio \(row.ratio))"
        let peer = row.peer.isEmpty ? "" : "; peer \(row.peer)\(ratio)"
        FileHandle.standardError.write(Data("  \(row.what): \(row.ours)\(peer)\(verdict)\n".utf8))
    }

    func note(_ text: String) {
        notes.append(text)
        FileHandle.standardError.write(Data("  note: \(text)\n".utf8))
    }

    func section(_ name: String) {
        FileHandle.standardError.write(Data("\(name)…\n".utf8))
    }

    /// The rows as a Markdown table, then the notes; `peer` and `ratio` head those columns.
    func markdown(peer: String = "SQLite peer", ratio: String = "ours vs peer") -> String {
        var lines = ["| case | ours | \(peer) | \(ratio) | target | |", "| --- | ---: | ---: | ---: | --- | --- |"]
        for row in rows {
            let cells = [row.what, row.ours, row.peer, row.ratio, row.target, row.verdict?.rawValue ?? ""]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if !notes.isEmpty {
            lines.append("")
            lines += notes.map { "- " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}

extension Report {
    /// The rows and notes as one JSON object, for tools: `{"workload": …, "events": …,
    /// "seed": …, "seconds": …, "rows": [{"case", "ours", "peer", "ratio", "target",
    /// "verdict"}], "notes": […]}`. Figures stay the strings of the table (units included).
    func json(workload: String, events: Int, seed: UInt64, seconds: Double) throws -> String {
        let object: [String: Any] = [
            "workload": workload, "events": events, "seed": seed, "seconds": (seconds * 10).rounded() / 10,
            "rows": rows.map { row in
                ["case": row.what, "ours": row.ours, "peer": row.peer, "ratio": row.ratio, "target": row.target,
                 "verdict": row.verdict?.rawValue ?? ""]
            },
            "notes": notes,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

/// How a figure compares with its target.
enum Target {
    /// At least `minimum` (and, when given, at least `ratio` times the peer's figure).
    static func atLeast(_ value: Double, _ minimum: Double, peer: Double? = nil, ratio: Double? = nil) -> Row.Verdict {
        var met = value >= minimum
        if let peer, let ratio { met = met && value >= ratio * peer }
        return met ? .met : .missed
    }

    static func atMost(_ value: Double, _ maximum: Double) -> Row.Verdict { value <= maximum ? .met : .missed }
}

/// `ours / peer` for rates (higher is better), `peer / ours` for costs (lower is better).
func rateRatio(_ ours: Double, _ peer: Double) -> String { peer > 0 ? Figure.ratio(ours / peer) : "" }
func costRatio(_ ours: Double, _ peer: Double) -> String { ours > 0 ? Figure.ratio(peer / ours) : "" }
func perSecond(_ value: Double) -> String { Figure.grouped(value) + "/s" }
