import SeededRandom
import Testing
@testable import PhotoAnswers
@testable import PhotoSources

@Suite struct PageChoiceTests {
    @Test func theLastServedPageRespectsTheFourThousandResultLimit() {
        #expect(PageChoice.lastServedPage(pages: 500, perPage: 21) == 190)
        #expect(PageChoice.lastServedPage(pages: 500, perPage: 250) == 16)
        #expect(PageChoice.lastServedPage(pages: 7, perPage: 21) == 7)
        #expect(PageChoice.lastServedPage(pages: 0, perPage: 21) == 1)
        #expect(PageChoice.lastServedPage(pages: 5, perPage: 0) == 1)
    }

    @Test(arguments: [1, 21, 100, 250])
    func overManySeedsThePageStaysInRangeAndDiffersFromTheCurrentOne(perPage: Int) {
        var seen = Set<Int>()
        for seed in 0..<2_000 as Range<UInt64> {
            var random = SplitMix(seed: seed)
            let pages = Int(seed % 7 == 0 ? 1 : seed % 5 == 0 ? 0 : (seed * 37) % 12_000)
            let last = PageChoice.lastServedPage(pages: pages, perPage: perPage)
            let current = Int(seed % 4 == 0 ? 0 : 1 + (seed * 13) % UInt64(last + 2))
            let page = PageChoice.newCollectionPage(pages: pages, perPage: perPage, current: current, using: &random)
            #expect(page >= 1 && page <= last, "page \(page) outside 1…\(last) (pages \(pages), per page \(perPage))")
            if last > 1 { #expect(page != current, "the same page \(current) again") }
            if last == 1 { #expect(page == 1) }
            if pages > 4000 / perPage { seen.insert(page) }
        }
        // Every served page is reachable: the choice is not stuck on a few values.
        if perPage >= 100 { #expect(seen.count == 4000 / perPage) }
    }

    @Test func twoPagesAlternate() {
        var random = SplitMix(seed: 9)
        for _ in 0..<50 {
            #expect(PageChoice.newCollectionPage(pages: 2, perPage: 21, current: 1, using: &random) == 2)
            #expect(PageChoice.newCollectionPage(pages: 2, perPage: 21, current: 2, using: &random) == 1)
        }
    }
}
