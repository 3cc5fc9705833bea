import Foundation

/// A task executor of a few threads of its own, for the suite's long file and CPU work.
///
/// On the cooperative pool (two threads on CI's two cores) a test that runs long between
/// suspensions holds a thread the whole time; two of them stop every other test, and the
/// photo-service, NATS and browser tests beside them time out waiting for a thread
/// (docs/DEVELOPING.md). Here the heavy tests take turns on threads of their own: the
/// operating system shares the cores between them and the pool's threads, so a network test
/// is slowed, never stopped.
public final class WorkerThreads: TaskExecutor, @unchecked Sendable {
    /// One per core: the heavy tests together keep the machine busy and no busier.
    public static let shared = WorkerThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount), name: "heavy tests")

    /// For the tests that wait, blocked, for other processes (`.waitsForProcesses`): two, as many
    /// of those processes at once as the pool let run before, when the waits held its threads.
    public static let processWaits = WorkerThreads(count: 2, name: "process waits")

    private static let marker = "WorkerThreads"

    /// Whether the calling code runs on one of the threads of a `WorkerThreads`.
    public static var isCurrent: Bool { currentName != nil }

    /// The name of the `WorkerThreads` the calling code runs on, if any.
    public static var currentName: String? { Thread.current.threadDictionary[marker] as? String }

    private let condition = NSCondition()
    // Guarded by `condition`: jobs waiting, oldest from `next` on.
    private var waiting: [UnownedJob] = []
    private var next = 0

    public init(count: Int, name: String) {
        for index in 0..<count {
            let thread = Thread { [unowned self] in
                Thread.current.name = "\(name) \(index)"
                Thread.current.threadDictionary[Self.marker] = name
                self.run()
            }
            // As large as a cooperative thread's: the folds and checks recurse through codecs.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        waiting.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while next == waiting.count { condition.wait() }
            let job = waiting[next]
            next += 1
            if next == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
