import Foundation

/// `vt-bench --svg FILE`: every row that has a peer drawn as two bars, ours beside SQLite's,
/// so the comparison shows at a glance. Each pair is scaled on its own, longer meaning better
/// (the row's ratio says how much: for rates ours is ratio × the peer, for costs the peer is
/// ratio × ours), and labelled with the figures of the table.
enum Chart {
    static func svg(rows: [Row], title: String) -> String {
        let pairs = rows.compactMap { row -> (Row, Double)? in
            guard !row.peer.isEmpty, let ratio = Double(row.ratio.replacingOccurrences(of: "×", with: "")), ratio > 0 else {
                return nil
            }
            return (row, ratio)
        }
        let width = 960.0
        let labelHeight = 16.0, barHeight = 13.0, gap = 12.0
        let pairHeight = labelHeight + 2 * barHeight + 4 + gap
        let top = 48.0
        let barLeft = 12.0, barSpace = 560.0
        let height = top + Double(pairs.count) * pairHeight + 16
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="12" y="20" font-size="15" font-weight="bold">\(escape(title))</text>
            <rect x="12" y="30" width="10" height="10" fill="#2b6cb0"/><text x="26" y="39">ours</text>
            <rect x="70" y="30" width="10" height="10" fill="#a0aec0"/><text x="84" y="39">SQLite peer</text>
            <text x="200" y="39" fill="#555">each pair scaled on its own; longer is better</text>

            """
        for (index, (row, ratio)) in pairs.enumerated() {
            let y = top + Double(index) * pairHeight
            let longest = max(ratio, 1)
            let ours = barSpace * ratio / longest, peer = barSpace / longest
            let colour = ratio >= 1 ? "#2f855a" : "#c53030"
            svg += """
                <text x="\(barLeft)" y="\(fmt(y + 12))">\(escape(shorten(row.what, 120)))</text>
                <rect x="\(barLeft)" y="\(fmt(y + labelHeight))" width="\(fmt(ours))" height="\(barHeight)" fill="#2b6cb0"/>
                <text x="\(fmt(barLeft + ours + 6))" y="\(fmt(y + labelHeight + 10.5))">\(escape(row.ours))</text>
                <rect x="\(barLeft)" y="\(fmt(y + labelHeight + barHeight + 2))" width="\(fmt(peer))" height="\(barHeight)" fill="#a0aec0"/>
                <text x="\(fmt(barLeft + peer + 6))" y="\(fmt(y + labelHeight + 2 * barHeight + 0.5))">\(escape(row.peer))</text>
                <text x="\(fmt(width - 12))" y="\(fmt(y + labelHeight + barHeight + 4))" text-anchor="end" font-weight="bold" fill="\(colour)">\(escape(row.ratio))</text>

                """
        }
        return svg + "</svg>\n"
    }

    /// `vt-bench --chart TABLE.md --svg FILE [TITLE]`: a recorded run drawn again.
    static func draw(table path: String, to file: String, title: String?) throws {
        let rows = rows(markdown: try String(contentsOfFile: path, encoding: .utf8))
        guard !rows.isEmpty else { throw UsageError("\(path) holds no vt-bench table") }
        try Data(svg(rows: rows, title: title ?? "vt-bench: ours beside SQLite").utf8).write(to: URL(fileURLWithPath: file))
    }

    /// The rows of a table that vt-bench printed (its Markdown).
    static func rows(markdown: String) -> [Row] {
        markdown.split(separator: "\n").compactMap { line -> Row? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            // "| case | ours | peer | ratio | target | verdict |" splits into 8 cells, the outer two empty.
            guard cells.count == 8, cells[1] != "case", !cells[1].hasPrefix("---") else { return nil }
            return Row(what: cells[1], ours: cells[2], peer: cells[3], ratio: cells[4], target: cells[5], verdict: Row.Verdict(rawValue: cells[6]))
        }
    }

    private static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func shorten(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
