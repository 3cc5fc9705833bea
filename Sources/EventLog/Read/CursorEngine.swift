/// What ``LogCursor`` asks of a format's reader: the events in order, each checked, nil at the
/// current end of the log (and again later, for appends made since), and where a torn or
/// in-progress tail stopped them.
protocol CursorEngine: AnyObject {
    func next() throws -> LogEvent?
    var incompleteTail: (file: String, offset: Int64, reason: String)? { get }
    /// Lets go of open files; the engine is not used after.
    func close()
}
