/// A failure already explained in words: printed as is, exit code 1.
struct RuntimeError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
