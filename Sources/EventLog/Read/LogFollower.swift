import Dispatch
import FileIO

/// An async sequence of the log's events that waits for new ones (see ``LogReader/follow(from:pollInterval:)``).
public struct LogFollower: AsyncSequence {
    public typealias Element = LogEvent
    let cursor: LogCursor
    let pollInterval: Duration

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(cursor: cursor, pollInterval: pollInterval)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let cursor: LogCursor
        let pollInterval: Duration

        /// The next event, waiting for it if need be; nil once the task is cancelled.
        public mutating func next() async throws -> LogEvent? {
            while !Task.isCancelled {
                if let event = try cursor.next() { return event }
                do { try await Task.sleep(for: pollInterval) } catch { return nil }
            }
            return nil
        }
    }
}
