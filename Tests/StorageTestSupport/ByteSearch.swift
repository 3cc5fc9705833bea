extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the bytes (the byte searches of the erase and forget tests).
    public func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        var index = 0
        while let start = self[index...].firstIndex(of: needle[0]), start + needle.count <= count {
            if self[start..<start + needle.count].elementsEqual(needle) { return true }
            index = start + 1
        }
        return false
    }
}
