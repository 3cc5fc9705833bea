import FileIO
import Testing

/// `Path`'s split of a path into its folder and its last name, which every store and test disk
/// does for each file it touches.
@Suite struct PathTests {
    @Test(arguments: [
        ("a/b/c", "a/b", "c"), ("c", ".", "c"), ("/c", "/", "c"), ("/", "/", ""), ("/disk/store/log/1.blk", "/disk/store/log", "1.blk"),
        ("/tmp/é/ü.json", "/tmp/é", "ü.json"), ("a/", "a", ""), ("日本/地図", "日本", "地図"),
    ])
    func aPathSplitsAtItsLastSlash(_ path: String, _ directory: String, _ name: String) {
        #expect(Path.directory(of: path) == directory)
        #expect(Path.name(of: path) == name)
        if path.contains("/"), path != "/" { #expect(Path.join(Path.directory(of: path), Path.name(of: path)) == path) }
    }
}
