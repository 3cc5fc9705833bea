/// One photo of a listing: what the photo service said about it.
///
/// A state holds one per album slot (130,000 in a store of 1,000 albums), and a replay makes
/// one per listed photo, so its eight texts live as UTF-8 back to back in one run of bytes and
/// become `String`s only when read: one allocation a photo instead of one for each long text,
/// one reference to copy instead of eight (docs/BENCHMARKS-JOURNAL.md, "Replay at memory speed"). The
/// photos of an album loaded from a snapshot share one array, each keeping a slice of it
/// (docs/FORMAT.md, "Snapshot file"), and so do the photos of a listing the wire decoder reads
/// (docs/BENCHMARKS-JOURNAL.md, "Cold replay at 2.5 M events/s").
/// Equality and hashing compare the texts' bytes.
public struct ListedPhoto: Hashable, Sendable, CustomReflectable {
    public var width: UInt32
    public var height: UInt32
    /// The texts' UTF-8 back to back, in ``Field`` order; `ends[i]` is where field i stops,
    /// counted from `utf8.startIndex`.
    private(set) var utf8: ArraySlice<UInt8>
    private var ends: TextEnds

    /// Where each of the eight texts ends in `utf8`: inline, so a photo is one allocation. (A
    /// tuple, not `SIMD8<UInt32>`: with that 32-byte-aligned type inside, the tests' heap was
    /// corrupted under concurrency on this toolchain — seen, not explained.)
    fileprivate struct TextEnds: Hashable {
        private var ends: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0)

        subscript(index: Int) -> UInt32 {
            get {
                precondition((0..<8).contains(index))
                return withUnsafeBytes(of: ends) { $0.load(fromByteOffset: index * 4, as: UInt32.self) }
            }
            set {
                precondition((0..<8).contains(index))
                withUnsafeMutableBytes(of: &ends) { $0.storeBytes(of: newValue, toByteOffset: index * 4, as: UInt32.self) }
            }
        }

        static func == (a: TextEnds, b: TextEnds) -> Bool {
            (0..<8).allSatisfy { a[$0] == b[$0] }
        }

        func hash(into hasher: inout Hasher) {
            withUnsafeBytes(of: ends) { hasher.combine(bytes: $0) }
        }
    }

    /// The texts, in the order they are stored.
    enum Field: Int, CaseIterable {
        case remoteID, url, title, creator, licenceName, licenceURL, pageURL, dateTaken
    }

    public init(
        remoteID: String, url: String, title: String, width: UInt32 = 0, height: UInt32 = 0, creator: String = "",
        licenceName: String = "", licenceURL: String = "", pageURL: String = "", dateTaken: String = ""
    ) {
        self.init(width: width, height: height, texts: [remoteID, url, title, creator, licenceName, licenceURL, pageURL, dateTaken])
    }

    private init(width: UInt32, height: UInt32, texts: [String]) {
        self.width = width
        self.height = height
        var utf8: [UInt8] = []
        utf8.reserveCapacity(texts.reduce(0) { $0 + $1.utf8.count })
        var ends = TextEnds()
        for (index, text) in texts.enumerated() {
            utf8.append(contentsOf: text.utf8)
            ends[index] = UInt32(utf8.count)
        }
        self.utf8 = utf8[...]
        self.ends = ends
    }

    /// A photo as a wire decoder finds it: its texts are views into the payload being read.
    struct WireParts {
        var width: UInt32 = 0
        var height: UInt32 = 0
        var texts = TextFields()
    }

    /// The photos of one listing, their texts copied into one array that they all keep a
    /// slice of: one allocation for the listing instead of one a photo. Each photo compares,
    /// hashes and reads exactly as if it had its own.
    static func sharingOneBuffer(_ photos: [WireParts]) -> [ListedPhoto] {
        let total = photos.reduce(0) { $0 + $1.texts.byteCount }
        let shared = [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            var offset = 0
            for photo in photos {
                for index in 0..<8 {
                    let text = photo.texts[index]
                    if let source = text.baseAddress, !text.isEmpty {
                        UnsafeMutableRawPointer(buffer.baseAddress! + offset).copyMemory(from: source, byteCount: text.count)
                    }
                    offset += text.count
                }
            }
            count = total
        }
        var start = 0
        return photos.map { photo in
            var ends = TextEnds()
            var length = 0
            for index in 0..<8 {
                length += photo.texts[index].count
                ends[index] = UInt32(length)
            }
            defer { start += length }
            return ListedPhoto(width: photo.width, height: photo.height, utf8: shared[start..<start + length], ends: ends)
        }
    }

    private init(width: UInt32, height: UInt32, utf8: ArraySlice<UInt8>, ends: TextEnds) {
        self.width = width
        self.height = height
        self.utf8 = utf8
        self.ends = ends
    }

    /// Texts already back to back and checked (a snapshot's packed form): `ends` are where
    /// each of the eight stops, from the start of `texts`. Keeps `texts`, no copy.
    init(width: UInt32, height: UInt32, packedTexts texts: ArraySlice<UInt8>, ends: PackedEnds) {
        precondition(ends.count == 8 && Int(ends[7]) == texts.count)
        self.width = width
        self.height = height
        self.utf8 = texts
        self.ends = ends.values
    }

    /// A packed photo's ends as they are read, kept inline (no array a photo).
    struct PackedEnds {
        private(set) var count = 0
        fileprivate var values = TextEnds()

        init() {}

        init(_ ends: [UInt32]) {
            for end in ends { append(end) }
        }

        /// False once there are eight (and the ends are then never valid).
        @discardableResult mutating func append(_ end: UInt32) -> Bool {
            guard count < 8 else {
                count = 9
                return false
            }
            values[count] = end
            count += 1
            return true
        }

        subscript(index: Int) -> UInt32 { values[index] }
    }

    /// Whether `texts` and `ends` make a packed photo: eight ends, none before the one before
    /// it, the last at the bytes' end, the bytes UTF-8 and each end where a character starts
    /// (so that each text alone is UTF-8 too).
    static func packedTextsAreValid(_ texts: UnsafeRawBufferPointer, ends: PackedEnds) -> Bool {
        guard ends.count == 8, Int(ends[7]) == texts.count else { return false }
        for index in 1..<8 where ends[index] < ends[index - 1] { return false }
        if WireReader.isASCII(texts) { return true }
        guard String(validating: texts, as: UTF8.self) != nil else { return false }
        return (0..<8).allSatisfy { Int(ends[$0]) == texts.count || texts[Int(ends[$0])] & 0xC0 != 0x80 }
    }

    /// The eight ends, from the start of ``utf8``.
    var textEnds: [UInt32] { (0..<8).map { ends[$0] } }

    /// One of them, without an array.
    func textEnd(_ index: Int) -> UInt32 { ends[index] }

    /// The eight texts of a photo as the wire decoders find them: views into the payload.
    struct TextFields {
        private var fields = (
            UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0),
            UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0),
            UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0),
            UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0))

        /// The eight texts' bytes in all.
        var byteCount: Int { (0..<8).reduce(0) { $0 + self[$1].count } }

        subscript(index: Int) -> UnsafeRawBufferPointer {
            get {
                switch index {
                case 0: fields.0
                case 1: fields.1
                case 2: fields.2
                case 3: fields.3
                case 4: fields.4
                case 5: fields.5
                case 6: fields.6
                default: fields.7
                }
            }
            set {
                switch index {
                case 0: fields.0 = newValue
                case 1: fields.1 = newValue
                case 2: fields.2 = newValue
                case 3: fields.3 = newValue
                case 4: fields.4 = newValue
                case 5: fields.5 = newValue
                case 6: fields.6 = newValue
                default: fields.7 = newValue
                }
            }
        }
    }

    /// Where a text lies, counted from `utf8.startIndex`.
    private func range(_ field: Field) -> Range<Int> {
        let index = field.rawValue
        return (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index])
    }

    func text(_ field: Field) -> String {
        let range = range(field)
        if range.isEmpty { return "" }
        return utf8.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// The photo service's id as UTF-8, where it lies: a listing of many photos need not make a
    /// `String` of each (`vt diff`).
    @inline(__always) public func withRemoteIDUTF8<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withUTF8(.remoteID, body)
    }

    /// A text as UTF-8, where it lies.
    @inline(__always) func withUTF8<Result>(_ field: Field, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let range = range(field)
        return utf8.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Whether a text is empty, without making a `String` (the rules ask it of every photo).
    func isEmpty(_ field: Field) -> Bool { range(field).isEmpty }

    /// Reads a text's first bytes, at most `count` of them, where they lie (the rules' scheme
    /// check, twice a listed photo: a slice would count a reference each time).
    func withPrefix<Result>(_ field: Field, _ count: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withUTF8(field) { body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    private mutating func set(_ field: Field, _ value: String) {
        var texts = Field.allCases.map(text)
        texts[field.rawValue] = value
        self = ListedPhoto(width: width, height: height, texts: texts)
    }

    public var remoteID: String {
        get { text(.remoteID) }
        set { set(.remoteID, newValue) }
    }
    public var url: String {
        get { text(.url) }
        set { set(.url, newValue) }
    }
    public var title: String {
        get { text(.title) }
        set { set(.title, newValue) }
    }
    /// The credit the photo's licence asks for: its creator, the licence's short name and URL,
    /// the photo's own page, when it was taken. Plain text and http(s) URLs; empty where the
    /// service said nothing (and in listings recorded before credits were kept).
    public var creator: String {
        get { text(.creator) }
        set { set(.creator, newValue) }
    }
    public var licenceName: String {
        get { text(.licenceName) }
        set { set(.licenceName, newValue) }
    }
    public var licenceURL: String {
        get { text(.licenceURL) }
        set { set(.licenceURL, newValue) }
    }
    public var pageURL: String {
        get { text(.pageURL) }
        set { set(.pageURL, newValue) }
    }
    public var dateTaken: String {
        get { text(.dateTaken) }
        set { set(.dateTaken, newValue) }
    }

    /// Whether any credit was recorded.
    public var hasCredit: Bool {
        Int(ends[7]) > Int(ends[2])
    }

    /// Printed and dumped as its ten fields, as before its texts were packed: a private
    /// storage type's name carries a per-process address, and what prints must not.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "remoteID": remoteID, "url": url, "title": title, "width": width, "height": height, "creator": creator,
            "licenceName": licenceName, "licenceURL": licenceURL, "pageURL": pageURL, "dateTaken": dateTaken,
        ], displayStyle: .struct)
    }

    public static func == (a: ListedPhoto, b: ListedPhoto) -> Bool {
        a.width == b.width && a.height == b.height && a.ends == b.ends && a.utf8 == b.utf8
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(width)
        hasher.combine(height)
        hasher.combine(ends)
        utf8.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
