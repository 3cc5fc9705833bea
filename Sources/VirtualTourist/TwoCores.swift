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
