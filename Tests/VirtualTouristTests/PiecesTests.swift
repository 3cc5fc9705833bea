import Synchronization
import Testing
import VirtualTourist

@Suite struct PiecesTests {
    /// Every piece runs once, and the results come back in the pieces' order whichever
    /// thread ran which piece.
    @Test(arguments: [0, 1, 2, 3, 16, 257])
    func everyPieceRunsOnceAndTheResultsKeepTheirOrder(_ count: Int) {
        let runs = Mutex<[Int: Int]>([:])
        let results = inPieces(count) { index in
            runs.withLock { $0[index, default: 0] += 1 }
            // Uneven work, so pieces finish out of order.
            var total = 0
            for step in 0..<((count - index) * 200) { total &+= step }
            return "\(index):\(total)"
        }
        #expect(results.count == count)
        #expect(results.enumerated().allSatisfy { $1.hasPrefix("\($0):") })
        #expect(runs.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, 1) }))
    }
}
