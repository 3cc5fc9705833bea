import Foundation

/// Every file under a folder with its bytes, except the log's LOCK (its holder line changes
/// each time a writer takes it).
public func snapshotFiles(_ path: String) throws -> [String: [UInt8]] {
    var files: [String: [UInt8]] = [:]
    guard let walker = FileManager.default.enumerator(atPath: path) else { return files }
    while let name = walker.nextObject() as? String {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory)
        if !isDirectory.boolValue, !name.hasSuffix("LOCK") {
            files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: path + "/" + name)))
        }
    }
    return files
}
