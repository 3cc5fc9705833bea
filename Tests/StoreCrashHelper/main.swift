// A store to kill: it runs the mixed workload (durable appends, photo blobs, collection,
// snapshots) on the store in FOLDER until it is killed, and reports on stdout each event the
// store acknowledged, so the test can check that every one survives.
//
//   StoreCrashHelper FOLDER SEED
//   → "ready LAST" once open (LAST: the last sequence recovered)
//   → "ack SEQUENCE FINGERPRINT" for each acknowledged event, in order
import ReliabilitySupport
import VirtualTourist

#if canImport(Glibc)
import Glibc
#endif

func say(_ line: String) {
    print(line)
    fflush(nil)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let seed = UInt64(arguments[2]) else {
    say("usage: StoreCrashHelper FOLDER SEED")
    exit(2)
}
do {
    let store = try await TouristStore.open(at: arguments[1], options: crashTestOptions())
    if let cut = store.report.logRecovery.cutTail { say("recovered \(cut)") }
    say("ready \(store.lastSequence)")
    var workload = MixedWorkload(seed: seed)
    while true {
        do {
            _ = try await workload.step(store)
        } catch {
            for event in workload.acknowledged { say("ack \(event.sequence) \(fingerprint(event))") }
            throw error
        }
        for event in workload.acknowledged { say("ack \(event.sequence) \(fingerprint(event))") }
        workload.acknowledged.removeAll(keepingCapacity: true)
    }
} catch {
    say("error \(error)")
    exit(1)
}
