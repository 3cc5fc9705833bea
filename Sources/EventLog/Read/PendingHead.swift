import Dispatch
import FileIO

/// A head being looked up (``LogReader/headInBackground(at:)``).
public struct PendingHead {
    private let wait: () throws -> (head: LogHead, position: TailPosition?)?
    /// False for a lookup that cannot give a position: ``tailPosition()`` then gives nil without
    /// waiting (a lookup made on the calling thread would be made again).
    private let givesPositions: Bool

    init(givesPositions: Bool, _ wait: @escaping () throws -> (head: LogHead, position: TailPosition?)?) {
        self.givesPositions = givesPositions
        self.wait = wait
    }

    /// A head known already (the writer's own), for code that takes a pending one.
    public static func known(_ head: LogHead?) -> PendingHead { PendingHead(givesPositions: false) { head.map { ($0, nil) } } }

    /// The head, once the lookup is done; what it threw, if it failed.
    public func value() throws -> LogHead? { try wait()?.head }

    /// Where the lookup's scan stopped, once it is done, when the head lies in a hot-tail
    /// segment and ends a record there: a replay from the head on, or a check of the segment,
    /// can start there (``LogReader/events(from:through:startingAt:)``,
    /// ``EventLog/startTailCheck(from:)``).
    func tailPosition() -> TailPosition? { givesPositions ? (try? wait())??.position : nil }

    /// The lookup's result, written by its thread before `group` is left and read after a wait.
    final class Box: @unchecked Sendable {
        let group = DispatchGroup()
        var result: Result<(head: LogHead, position: TailPosition?)?, any Error>?
    }
}
