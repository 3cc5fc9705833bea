import Dispatch

/// Runs two pieces of work at once, one on each core, and returns both results when both are
/// done: the comparison of two states and the writing of a snapshot's pins here, the lines of
/// a diff in `vt`.
///
/// The two must not write anything the other reads or writes; each result is written once, by
/// its own piece, and read only after both are done, so no lock is needed.
///
/// ```swift
/// let (added, removed) = onTwoCores({ later.photos(missingFrom: earlier) }, { earlier.photos(missingFrom: later) })
/// ```
public func onTwoCores<First, Second>(_ first: () -> First, _ second: () -> Second) -> (First, Second) {
    withoutActuallyEscaping(first) { first in
        withoutActuallyEscaping(second) { second in
            let work = TwoPieces(first, second)
            DispatchQueue.concurrentPerform(iterations: 2) { work.run($0) }
            return (work.firstResult!, work.secondResult!)
        }
    }
}

/// The two pieces and their results, shared by the two threads (see ``onTwoCores(_:_:)``).
private final class TwoPieces<First, Second>: @unchecked Sendable {
    let first: () -> First
    let second: () -> Second
    var firstResult: First?
    var secondResult: Second?

    init(_ first: @escaping () -> First, _ second: @escaping () -> Second) {
        (self.first, self.second) = (first, second)
    }

    func run(_ piece: Int) {
        if piece == 0 { firstResult = first() } else { secondResult = second() }
    }
}

/// Runs `count` independent pieces of work on every core, a piece at a time, and returns their
/// results in the pieces' order: a thread that finishes a piece takes the next one nobody has
/// started. Two fixed halves waited for the slower one, and on this machine's two cores the
/// scheduler often left the other core idle while the slower half shared its core with other
/// work (the head lookup beside a snapshot's load: docs/BENCHMARKS.md).
///
/// The pieces must not write anything another reads or writes; each result is written once,
/// to its own place, and read only after all are done.
///
/// ```swift
/// let counts = inPieces(ranges.count) { ranges[$0].count }
/// ```
public func inPieces<Result>(_ count: Int, _ piece: (Int) -> Result) -> [Result] {
    guard count > 1 else { return count == 1 ? [piece(0)] : [] }
    return withoutActuallyEscaping(piece) { piece in
        let work = Pieces(count, piece)
        defer { work.release() }
        DispatchQueue.concurrentPerform(iterations: count) { work.run($0) }
        return work.results()
    }
}

/// The pieces' results, one place each (see ``inPieces(_:_:)``). Places in a buffer rather than
/// an array's elements: two threads writing elements of one array at once are two
/// overlapping accesses to the array.
private final class Pieces<Result>: @unchecked Sendable {
    let piece: (Int) -> Result
    let places: UnsafeMutableBufferPointer<Result?>

    init(_ count: Int, _ piece: @escaping (Int) -> Result) {
        self.piece = piece
        places = .allocate(capacity: count)
        places.initialize(repeating: nil)
    }

    func run(_ index: Int) { places[index] = piece(index) }

    func results() -> [Result] { places.map { $0! } }

    func release() {
        places.deinitialize()
        places.deallocate()
    }
}
