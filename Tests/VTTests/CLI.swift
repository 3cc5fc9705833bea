import Foundation
import StorageTestSupport

/// Runs the built `vt` with an environment that names no store, no key and no config, so a
/// test sees only what it passes.
/// Its home folder is removed when the last reference goes (runs used to leave one behind each).
final class CLI: Sendable {
    let home: String

    init() {
        home = TemporaryFolder.uniquePath("cli-home")
        try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: home) }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in [
            "FLICKR_API_KEY", "VT_FLICKR_ENDPOINT", "VT_STORE", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "NO_COLOR", "VT_PHOTOS",
            "VT_CONTACT",
        ] {
            environment[name] = nil
        }
        // No test reaches the real Commons: `auto` probes a port where nothing listens, is
        // refused at once, and uses the offline service.
        environment["VT_COMMONS_ENDPOINT"] = CLI.unreachableCommons
        environment["HOME"] = home
        return environment
    }

    static let unreachableCommons = "http://127.0.0.1:9/w/api.php"

    func callAsFunction(_ arguments: String...) throws -> DemoCommandTests.Run {
        try DemoCommandTests().vt(arguments, environment: environment)
    }

    func callAsFunction(_ arguments: [String]) throws -> DemoCommandTests.Run {
        try DemoCommandTests().vt(arguments, environment: environment)
    }

    func run(_ arguments: [String]) throws -> DemoCommandTests.Run {
        try DemoCommandTests().vt(arguments, environment: environment)
    }

    /// The JSON object `vt` printed on one line.
    static func object(_ line: some StringProtocol) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
    }

    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    /// The built `vt`, beside the test bundle.
    static var binary: String {
        #if os(Linux)
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("vt").path
        #else
        let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") } ?? Bundle.main
        return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("vt").path
        #endif
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: home) }
}
