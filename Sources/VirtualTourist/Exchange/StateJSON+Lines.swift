extension StateDiffJSON {
    /// The diff as one line of JSON: the bytes `EventJSON.encodeLine(StateDiffJSON(diff))`
    /// writes (sorted keys, slashes as they are), with every photo, in the two lists and in
    /// the albums of the pins added and removed, written straight from the diff instead of
    /// through a value each. A diff of two far points holds 530,000 photos that way, and
    /// `JSONEncoder` took 2.8–3.0 s and 1.2 GB for them (docs/BENCHMARKS.md, "vt diff --json of
    /// far points"). The rest, a few thousand pins at most, still goes through the encoder,
    /// with its photo lists left empty; they are filled in here.
    public static func line(_ diff: StateDiff) throws -> [UInt8] {
        var skeleton = diff
        (skeleton.photosAdded, skeleton.photosRemoved) = ([], [])
        // Keys are sorted: the two lists come first, then the pins added, moved and removed,
        // each with one album and one photo list.
        var line = PhotoListFiller(try EventJSON.encodeLine(StateDiffJSON(skeleton, albumPhotos: false)),
                                   photos: diff.photosAdded.count + diff.photosRemoved.count)
        line.fill(after: "\"photos_added\":[]") { $0.photos(diff.photosAdded) }
        line.fill(after: "\"photos_removed\":[]") { $0.photos(diff.photosRemoved) }
        for pin in diff.pinsAdded + diff.pinsRemoved {
            line.fill(after: "\"photos\":[]") { $0.slots(pin.album.slots) }
        }
        return line.finished()
    }
}

extension StateJSON {
    /// The state as one line of JSON: the bytes `EventJSON.encodeLine(StateJSON(state))` writes,
    /// the albums' photos written straight from the state (as ``StateDiffJSON/line(_:)`` does;
    /// docs/BENCHMARKS.md, "vt diff --json of far points").
    public static func line(_ state: TouristState) throws -> [UInt8] {
        let pins = state.pinsInDropOrder
        // Keys are sorted: the pins come first, in drop order, each with one photo list.
        var line = PhotoListFiller(
            try EventJSON.encodeLine(StateJSON(state, albumPhotos: false)), photos: pins.reduce(0) { $0 + $1.album.slots.count })
        for pin in pins {
            line.fill(after: "\"photos\":[]") { $0.slots(pin.album.slots) }
        }
        return line.finished()
    }
}

/// A line of JSON from the encoder with empty photo lists, and the lists written into it. Each
/// empty list is found by its key, after the one before: inside a string every quote is
/// escaped, so a key can only match as a key, and sorted keys put the lists in a known order.
private struct PhotoListFiller {
    private let encoded: [UInt8]
    private var json = JSONBytes()
    private var copied = 0

    init(_ encoded: String, photos: Int) {
        self.encoded = Array(encoded.utf8)
        json.bytes.reserveCapacity(self.encoded.count + photos * 300)
    }

    /// Copies the line up to the empty list after the next `pattern` and writes its items.
    mutating func fill(after pattern: String, _ write: (inout JSONBytes) -> Void) {
        guard let end = firstEnd(of: Array(pattern.utf8), from: copied) else {
            preconditionFailure("the line has no \(pattern) where its keys put one")
        }
        json.bytes.append(contentsOf: encoded[copied..<end - 1])
        copied = end - 1
        write(&json)
    }

    mutating func finished() -> [UInt8] {
        json.bytes.append(contentsOf: encoded[copied...])
        copied = encoded.count
        return json.bytes
    }

    /// Where the first `pattern` at or after `start` ends.
    private func firstEnd(of pattern: [UInt8], from start: Int) -> Int? {
        guard encoded.count >= pattern.count, start <= encoded.count - pattern.count else { return nil }
        for index in start...(encoded.count - pattern.count) where encoded[index] == pattern[0] {
            if encoded[index..<index + pattern.count].elementsEqual(pattern) { return index + pattern.count }
        }
        return nil
    }
}

/// JSON written as `JSONEncoder` writes it with sorted keys and slashes left alone: `"` and
/// `\` escaped, `\b \t \n \f \r` short, other control characters as `\u00xx`, the rest as is.
private struct JSONBytes {
    var bytes: [UInt8] = []

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func number(_ value: some UnsignedInteger & FixedWidthInteger) {
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    mutating func string(_ field: ListedPhoto.Field, of photo: ListedPhoto) {
        photo.withUTF8(field) { string(utf8: $0) }
    }

    /// Runs of bytes that need no escape are copied whole.
    mutating func string(utf8 text: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        var run = 0
        for index in 0..<text.count {
            let byte = text[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[run..<index]))
            run = index + 1
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x08: raw("\\b")
            case 0x09: raw("\\t")
            case 0x0A: raw("\\n")
            case 0x0C: raw("\\f")
            case 0x0D: raw("\\r")
            default:
                raw("\\u00")
                let digits: StaticString = "0123456789abcdef"
                digits.withUTF8Buffer { bytes.append(contentsOf: [$0[Int(byte >> 4)], $0[Int(byte & 0xF)]]) }
            }
        }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[run...]))
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func photos(_ photos: [StateDiff.Photo]) {
        for (index, photo) in photos.enumerated() {
            if index > 0 { raw(",") }
            self.photo(photo)
        }
    }

    mutating func slots(_ slots: [PhotoSlot]) {
        for (index, slot) in slots.enumerated() {
            if index > 0 { raw(",") }
            photo(slot)
        }
    }

    /// `{"collection":…,"photo":{…},"pin":"…"}`, as `StateDiffJSON.Photo` encodes.
    mutating func photo(_ photo: StateDiff.Photo) {
        raw("{\"collection\":")
        number(photo.collection)
        raw(",\"photo\":")
        self.photo(photo.slot)
        raw(",\"pin\":")
        string(photo.pin.description)
        raw("}")
    }

    /// As `PhotoJSON` encodes: its keys sorted, absent ones left out.
    mutating func photo(_ slot: PhotoSlot) {
        let photo = slot.photo
        raw("{")
        switch slot.state {
        case .downloaded(let digest, let byteCount, _):
            raw("\"bytes\":")
            number(byteCount)
            if photo.hasCredit { credit(photo) }
            raw(",\"digest\":")
            string(digest.description)
            raw(",")
        default:
            if photo.hasCredit {
                credit(photo, first: true)
                raw(",")
            }
        }
        raw("\"id\":")
        string(.remoteID, of: photo)
        switch slot.state {
        case .downloaded(_, _, let mediaType):
            raw(",\"media_type\":")
            string(mediaType)
        case .failed(let reason):
            raw(",\"reason\":")
            string(reason)
        case .placeholder:
            break
        }
        raw(",\"slot\":")
        number(slot.number)
        raw(",\"state\":")
        switch slot.state {
        case .placeholder: raw("\"placeholder\"")
        case .downloaded: raw("\"downloaded\"")
        case .failed: raw("\"failed\"")
        }
        raw(",\"title\":")
        string(.title, of: photo)
        raw(",\"url\":")
        string(.url, of: photo)
        raw("}")
    }

    /// `"credit":{…}` as `CreditJSON` encodes, after a comma unless `first`.
    private mutating func credit(_ photo: ListedPhoto, first: Bool = false) {
        raw(first ? "\"credit\":{" : ",\"credit\":{")
        var written = false
        for (key, value) in [
            ("creator", photo.creator), ("date_taken", photo.dateTaken), ("licence", photo.licenceName),
            ("licence_url", photo.licenceURL), ("page_url", photo.pageURL),
        ] where !value.isEmpty {
            if written { raw(",") }
            bytes.append(contentsOf: "\"\(key)\":".utf8)
            string(value)
            written = true
        }
        raw("}")
    }
}
