import Foundation

/// A fresh folder path under the system's temporary folder (not created), removed with
/// everything in it when the value goes away.
public final class TemporaryFolder {
    public let path: String

    public init(_ label: String) {
        path = Self.uniquePath(label)
    }

    /// A fresh path under the system's temporary folder that nothing owns: for a test that
    /// removes it itself (a `defer` beside it).
    public static func uniquePath(_ label: String) -> String {
        NSTemporaryDirectory() + "vt-test-\(label)-\(UUID().uuidString.prefix(8))"
    }

    /// A fresh folder, made now (for code that expects it to exist).
    public static func made(_ label: String = "log") -> TemporaryFolder {
        let folder = TemporaryFolder(label)
        try! FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        return folder
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func sub(_ name: String) -> String { path + "/" + name }
}
