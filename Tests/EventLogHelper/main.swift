// A second process for the event log's tests: a rival writer, a lock holder, and a writer to
// kill at random moments. It speaks in lines on stdout so the test can follow it.
import DemoLog
import EventLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func say(_ line: String) {
    print(line)
    fflush(nil)  // flushes every output stream; `stdout` itself is not concurrency-safe to name
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    say("usage: EventLogHelper hold|try-open|append-forever DIRECTORY [SEED]")
    exit(2)
}
let directory = arguments[2]

do {
    switch arguments[1] {
    case "hold":
        // Holds the writer's lock until stdin closes.
        let log = try EventLog.open(at: directory)
        say("ready pid=\(getpid())")
        while readLine() != nil {}
        try log.close()
    case "try-open":
        let log = try EventLog.open(at: directory)
        say("opened")
        try log.close()
    case "append-forever":
        // Appends synthetic events under `.always` and acknowledges each append once it has
        // returned: "ack FIRST LAST". The test kills it with SIGKILL at a random moment.
        let seed = arguments.count > 3 ? UInt64(arguments[3]) ?? 1 : 1
        var configuration = LogConfiguration()
        configuration.segmentSize = 64 << 10  // roll often, so kills land around rolls too
        configuration.tailCheckpointInterval = 4 << 10  // and a kill finds a running tail checkpoint
        let log = try EventLog.open(at: directory, configuration: configuration)
        if let cut = log.recovery.cutTail { say("recovered \(cut)") }
        var random = seed | 1
        var next = log.lastSequence + 1
        say("ready \(next - 1)")
        while true {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            let count = Int(random % 6) + 1
            let range = try log.append(contentsOf: (next..<next + UInt64(count)).map { SyntheticEvents.payload(for: $0) })
            guard range == next..<next + UInt64(count) else {
                say("error: the log gave \(range), expected \(next)..<\(next + UInt64(count))")
                exit(3)
            }
            say("ack \(range.lowerBound) \(range.upperBound - 1)")
            next = range.upperBound
        }
    default:
        say("unknown mode \(arguments[1])")
        exit(2)
    }
} catch let error as LogError {
    say("error \(error.code): \(error)")
    exit(1)
}
