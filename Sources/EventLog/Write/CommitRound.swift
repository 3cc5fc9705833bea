/// What a writer's commit of one group does whatever its format: number and time each request
/// (one refused alone when its first time is before the log's last event), hand the accepted
/// events to the format's builder, then write once and sync as asked. A failed write fails the
/// requests it held; a failed sync fails every append of the group.
struct CommitRound {
    private(set) var results: [Result<Range<UInt64>, LogError>] = []
    private var written: [Int] = []
    private var wantsSync = false

    /// Numbers `group` from `next` and times it after `last` (the clock is read once, when a
    /// request has no times of its own), giving each accepted event to `add`.
    init(
        _ group: [AppendRequest], next: UInt64, last: LogTimestamp?, clock: any LogClock,
        add: (_ payload: [UInt8], _ time: LogTimestamp) -> Void
    ) {
        results.reserveCapacity(group.count)
        var sequence = next
        var last = last
        let now = group.contains { !$0.payloads.isEmpty && $0.timestamps == nil } ? clock.now() : nil
        for (position, request) in group.enumerated() {
            if request.payloads.isEmpty {
                wantsSync = wantsSync || request.isSync
                results.append(.success(sequence..<sequence))
                continue
            }
            let first = request.timestamps?.first ?? now!
            if let last, first < last {
                results.append(.failure(request.refusal(startingAt: first, before: last)))
                continue
            }
            for (index, payload) in request.payloads.enumerated() {
                add(payload, request.timestamps?[index] ?? now!)
            }
            let count = UInt64(request.payloads.count)
            results.append(.success(sequence..<sequence + count))
            sequence += count
            last = request.timestamps?.last ?? now!
            written.append(position)
        }
    }

    /// Writes what was accepted, if anything, then syncs when a request or the durability asks
    /// and there is something unsynced. Returns false when the write failed (nothing more was
    /// tried).
    mutating func finish(
        durability: LogConfiguration.Durability, write: () throws -> Void, hasUnsyncedWrites: () -> Bool,
        sync: () throws -> Void
    ) -> Bool {
        if !written.isEmpty {
            do {
                try write()
            } catch {
                let failure = error as? LogError ?? LogError(.io, "cannot append", cause: error)
                for position in written { results[position] = .failure(failure) }
                return false
            }
            if durability == .always { wantsSync = true }
        }
        if wantsSync, hasUnsyncedWrites() {
            do {
                try sync()
            } catch {
                let failure = error as? LogError ?? LogError(.writerFailed, "cannot sync")
                for position in results.indices where (try? results[position].get()) != nil {
                    results[position] = .failure(failure)
                }
            }
        }
        return true
    }
}
