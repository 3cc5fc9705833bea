@testable import DemoPhotoServer
import Testing

/// The offline photo service runs for as long as `vt serve` does: what it records of the
/// searches it answered stays bounded, and keeps the newest.
@Suite struct DemoServerControlsTests {
    @Test func theSearchesKeptAreBoundedAndTheNewest() {
        let controls = DemoServerControls()
        let asked = DemoServerControls.keptSearches * 3 + 7
        for page in 1...asked {
            _ = controls.nextSearchFault(
                recording: .init(latitude: 1, longitude: 2, page: page, perPage: 21, extras: ""))
        }
        let kept = controls.searches.map(\.page)
        #expect(kept.count <= DemoServerControls.keptSearches && kept.count >= DemoServerControls.keptSearches / 2)
        #expect(kept.last == asked)
        #expect(kept == Array((asked - kept.count + 1)...asked), "the newest, in order")
    }
}
