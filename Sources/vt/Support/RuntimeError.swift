import ArgumentParser

/// A failure already explained in words: printed as is, exit code 1.
struct RuntimeError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The exit codes `vt` documents (docs/CLI.md).
enum Exit {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    /// `vt verify` found problems.
    static let problemsFound: Int32 = 3
}
