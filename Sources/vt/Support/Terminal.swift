import Foundation

/// What the terminal can show: colour only on a terminal (and never with `NO_COLOR` or a dumb
/// `TERM`), progress only when standard error is a terminal.
enum Terminal {
    static let environment = ProcessInfo.processInfo.environment
    static let outputIsTerminal = isatty(STDOUT_FILENO) == 1
    static let errorIsTerminal = isatty(STDERR_FILENO) == 1
    static let colour = outputIsTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"

    enum Style: String {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36"
    }

    /// `text` in a style when colour is on.
    static func styled(_ text: String, _ style: Style) -> String {
        colour ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// Writes to standard error (messages and progress never mix with data on standard output).
    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// A progress bar on standard error, redrawn at most ten times a second, only on a terminal.
///
/// ```swift
/// let bar = ProgressBar()
/// bar.update("replaying", done: 5_000, total: 80_000)
/// bar.finish()
/// ```
final class ProgressBar: @unchecked Sendable {
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var drawn = false
    private let enabled: Bool

    init(enabled: Bool = Terminal.errorIsTerminal) { self.enabled = enabled }

    func update(_ phase: String, done: Int64, total: Int64) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - lastDraw >= .milliseconds(100) || (done >= total && total > 0) else { return }
        lastDraw = now
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let line = "\(phase) \(bar) \(Int(fraction * 100))% (\(done)/\(total))"
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drawn = true
    }

    /// Clears the bar.
    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
