import FileIO
import StorageTestSupport
import Testing

@Suite struct MappedFileTests {
    let fileSystem = PosixFileSystem()

    @Test func aMappedFileHoldsTheFilesBytesEvenAfterItIsRemoved() throws {
        let folder = TemporaryFolder("mapped")
        try fileSystem.createDirectory(folder.path)
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        let file = folder.sub("a.snap")
        try fileSystem.writeAtomically(bytes, to: file)
        let mapped = try #require(try fileSystem.mapForReading(file))
        #expect(Array(mapped.bytes) == bytes)
        // Snapshots are pruned while a load may still be reading one.
        try fileSystem.removeFile(file)
        #expect(Array(mapped.bytes) == bytes)

        try fileSystem.writeAtomically([], to: folder.sub("empty"))
        #expect(try fileSystem.mapForReading(folder.sub("empty"))?.bytes.count == 0)
    }

    @Test func whatCannotBeMappedIsNamed() throws {
        let folder = TemporaryFolder("mapped-errors")
        try fileSystem.createDirectory(folder.path)
        #expect(throws: IOError.self) { try fileSystem.mapForReading(folder.sub("missing")) }
        #expect(throws: IOError.self) { try fileSystem.mapForReading(folder.path) }
        let error = try #require(throws: IOError.self) { try fileSystem.mapForReading(folder.sub("missing")) }
        #expect(String(describing: error).contains("missing"))
    }
}
