/// The raw events of a hot-tail record or a sealed block (FORMAT.md, "Hot-tail record" and
/// "Block"): checked whole once by ``parse(_:layout:count:timeBefore:hasErasures:)``, then
/// iterated without further checks.
///
/// ```swift
/// let run = try EventRun.parse(raw, layout: .columns, count: 4096, timeBefore: t0, hasErasures: false).get()
/// var events = run.makeIterator(firstSequence: 1)
/// while let event = events.next() { … }
/// ```
///
/// A run is read whole or refused whole: a record or block is never half-applied. Parsing is
/// O(raw bytes) and allocates only for an erasure list.
struct EventRun: Sendable {
    let raw: [UInt8]
    let layout: LogFormat.Layout
    let count: Int
    let timeBefore: Int64
    let lastTime: Int64
    /// Where the events (rows) or the time-delta column (columns) start: after any erasure list.
    let eventsStart: Int
    /// Columns only: where the lengths and the payloads start.
    let lengthsStart: Int
    let payloadsStart: Int
    /// Positions (from 0) of erased events, ascending.
    let erased: [Int]

    /// Checks `raw`. `count` is the number of events the header states (nil for a hot-tail
    /// record, whose events run to the end of its body; rows only).
    static func parse(
        _ raw: [UInt8], layout: LogFormat.Layout, count expected: Int?, timeBefore: Int64, hasErasures: Bool
    ) -> Result<EventRun, DamageReason> {
        raw.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            var erased: [Int] = []
            if hasErasures {
                guard let total = cursor.readVarint(), total >= 1, total <= UInt64(expected ?? 0) else {
                    return .failure(DamageReason("an erasure list whose count is missing, 0 or more than the events"))
                }
                var position: UInt64 = 0
                for index in 0..<Int(total) {
                    guard let gap = cursor.readVarint(), index == 0 || gap >= 1 else {
                        return .failure(DamageReason("erasure \(index) has a malformed or zero gap"))
                    }
                    let (next, overflow) = position.addingReportingOverflow(gap)
                    guard !overflow, next < UInt64(expected!) else {
                        return .failure(DamageReason("erasure \(index) points past the block's events"))
                    }
                    position = next
                    erased.append(Int(position))
                }
            }
            let eventsStart = cursor.position
            switch layout {
            case .rows:
                var time = timeBefore
                var index = 0
                var nextErased = 0
                while expected.map({ index < $0 }) ?? (cursor.remaining > 0) {
                    guard let delta = cursor.readVarint(), let length = cursor.readVarint() else {
                        return .failure(DamageReason("event \(index) has a malformed varint"))
                    }
                    guard let later = advance(time, by: delta) else {
                        return .failure(DamageReason("event \(index)'s time passes 2^63 − 1"))
                    }
                    time = later
                    guard length <= UInt64(cursor.remaining) else {
                        return .failure(DamageReason("event \(index) claims \(length) bytes but \(cursor.remaining) remain"))
                    }
                    if nextErased < erased.count, erased[nextErased] == index {
                        guard LogFormat.erasedLengths.contains(length) else {
                            return .failure(DamageReason("erased event \(index) holds \(length) bytes, not a 32-byte digest and at most 16 kept"))
                        }
                        nextErased += 1
                    }
                    cursor.position += Int(length)
                    index += 1
                }
                guard index >= 1 else { return .failure(DamageReason("no events")) }
                guard cursor.remaining == 0 else {
                    return .failure(DamageReason("\(cursor.remaining) bytes follow the last event"))
                }
                return .success(EventRun(
                    raw: raw, layout: layout, count: index, timeBefore: timeBefore, lastTime: time,
                    eventsStart: eventsStart, lengthsStart: 0, payloadsStart: 0, erased: erased))
            case .columns:
                guard let count = expected, count >= 1 else {
                    return .failure(DamageReason("a columns layout without an event count"))
                }
                var time = timeBefore
                for index in 0..<count {
                    guard let delta = cursor.readVarint() else {
                        return .failure(DamageReason("time delta \(index) is a malformed varint"))
                    }
                    guard let later = advance(time, by: delta) else {
                        return .failure(DamageReason("event \(index)'s time passes 2^63 − 1"))
                    }
                    time = later
                }
                let lengthsStart = cursor.position
                var total: UInt64 = 0
                var nextErased = 0
                for index in 0..<count {
                    guard let length = cursor.readVarint() else {
                        return .failure(DamageReason("length \(index) is a malformed varint"))
                    }
                    if nextErased < erased.count, erased[nextErased] == index {
                        guard LogFormat.erasedLengths.contains(length) else {
                            return .failure(DamageReason("erased event \(index) holds \(length) bytes, not a 32-byte digest and at most 16 kept"))
                        }
                        nextErased += 1
                    }
                    guard length <= UInt64(bytes.count) - total else {
                        return .failure(DamageReason("the lengths add up to more than the block holds"))
                    }
                    total += length
                }
                guard total == UInt64(cursor.remaining) else {
                    return .failure(DamageReason(
                        "the payloads take \(cursor.remaining) bytes but the lengths add up to \(total)"))
                }
                return .success(EventRun(
                    raw: raw, layout: layout, count: count, timeBefore: timeBefore, lastTime: time,
                    eventsStart: eventsStart, lengthsStart: lengthsStart, payloadsStart: cursor.position, erased: erased))
            }
        }
    }

    /// `time + delta` (delta read as an unsigned difference), or nil when it passes 2^63 − 1.
    @inline(__always)
    static func advance(_ time: Int64, by delta: UInt64) -> Int64? {
        // Int64.max − time is at most 2^64 − 1: exact when read back as unsigned.
        guard delta <= UInt64(bitPattern: Int64.max &- time) else { return nil }
        return time &+ Int64(bitPattern: delta)
    }

    func makeIterator(firstSequence: UInt64) -> Iterator { Iterator(run: self, sequence: firstSequence) }

    /// The events in order. `isErased` tells whether the last one returned was erased (its
    /// payload is then its 32-byte digest and what was kept).
    struct Iterator: IteratorProtocol {
        let run: EventRun
        private(set) var sequence: UInt64
        private(set) var isErased = false
        private var index = 0
        private var time: Int64
        private var position: Int
        private var lengthPosition: Int
        private var payloadPosition: Int
        private var nextErased = 0

        init(run: EventRun, sequence: UInt64) {
            self.run = run
            self.sequence = sequence
            self.time = run.timeBefore
            self.position = run.eventsStart
            self.lengthPosition = run.lengthsStart
            self.payloadPosition = run.payloadsStart
        }

        mutating func next() -> LogEvent? {
            guard index < run.count else { return nil }
            // The run was checked whole in `parse`, so these reads cannot fail.
            let start: Int
            let length: Int
            switch run.layout {
            case .rows:
                (time, length, start) = run.raw.withUnsafeBytes { bytes in
                    var cursor = ByteCursor(bytes, position: position)
                    let delta = cursor.readVarint()!
                    let length = Int(cursor.readVarint()!)
                    return (time &+ Int64(bitPattern: delta), length, cursor.position)
                }
                position = start + length
            case .columns:
                (time, length, position, lengthPosition) = run.raw.withUnsafeBytes { bytes in
                    var deltas = ByteCursor(bytes, position: position)
                    var lengths = ByteCursor(bytes, position: lengthPosition)
                    let delta = deltas.readVarint()!
                    let length = Int(lengths.readVarint()!)
                    return (time &+ Int64(bitPattern: delta), length, deltas.position, lengths.position)
                }
                start = payloadPosition
                payloadPosition += length
            }
            isErased = nextErased < run.erased.count && run.erased[nextErased] == index
            if isErased { nextErased += 1 }
            defer {
                index += 1
                sequence += 1
            }
            return LogEvent(
                sequence: sequence, timestamp: LogTimestamp(microsecondsSinceEpoch: time),
                payload: run.raw[start..<start + length], isErased: isErased)
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends the raw events in `layout` (FORMAT.md, "Block": rows or columns). `times` and
    /// `payloads` have one entry per event; times must not decrease from `timeBefore`.
    mutating func appendEvents(
        times: [Int64], payloads: [ArraySlice<UInt8>], layout: LogFormat.Layout, timeBefore: Int64
    ) {
        precondition(times.count == payloads.count)
        var previous = timeBefore
        switch layout {
        case .rows:
            for (time, payload) in zip(times, payloads) {
                appendVarint(UInt64(bitPattern: time &- previous))
                appendVarint(UInt64(payload.count))
                append(contentsOf: payload)
                previous = time
            }
        case .columns:
            appendTimeDeltas(times, timeBefore: timeBefore)
            appendLengthsAndPayloads(payloads)
        }
    }

    /// The columns layout's first column: each time as a delta from the one before.
    mutating func appendTimeDeltas(_ times: [Int64], timeBefore: Int64) {
        var previous = timeBefore
        for time in times {
            appendVarint(UInt64(bitPattern: time &- previous))
            previous = time
        }
    }

    /// The columns layout's lengths column, then the payloads back to back.
    mutating func appendLengthsAndPayloads(_ payloads: [ArraySlice<UInt8>]) {
        for payload in payloads { appendVarint(UInt64(payload.count)) }
        for payload in payloads { append(contentsOf: payload) }
    }
}
