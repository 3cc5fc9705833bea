import Foundation
@testable import NATSClient
import Testing

@Suite struct EncodingTests {
    @Test func writesWhatFoundationsFormatterWrites() {
        let foundation = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        // Whole seconds: Foundation rounds a fraction to the nearest second, RFC3339 cuts it off
        // (the second the instant lies in).
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400), Date(timeIntervalSince1970: 4_102_444_799)]
        for _ in 0..<2_000 { dates.append(Date(timeIntervalSince1970: Double(Int.random(in: 0..<4_102_444_800, using: &generator)))) }
        for date in dates { #expect(RFC3339.string(from: date) == foundation.string(from: date), "\(date.timeIntervalSince1970)") }
    }

    @Test func aLeapDayAndTheLastSecondOfAYear() {
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1_798_761_599.5)) == "2026-12-31T23:59:59Z")
    }

    /// Object names in the bucket's subjects, as Go's base64.URLEncoding writes them: '-' and '_'
    /// for '+' and '/', padding kept.
    @Test func objectNamesUseTheURLAlphabet() {
        #expect(ObjectStore.base64URL([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(ObjectStore.base64URL(Array("a".utf8)) == "YQ==")
        for length in 0..<40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let standard = Data(bytes).base64EncodedString()
            let url = ObjectStore.base64URL(bytes)
            #expect(url == String(standard.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }))
        }
    }

    @Test func subjectsWithEmptyTokensAreRefused() {
        for subject in [".a", "a.", "a..b", "..", "."] {
            #expect(throws: NATSError.self) { try validateToken(subject, what: "subject", allowWildcards: false) }
        }
        for subject in ["a", "a.b", "a.b.c", "$O.bucket.M.YQ=="] {
            #expect(throws: Never.self) { try validateToken(subject, what: "subject", allowWildcards: false) }
        }
    }
}
