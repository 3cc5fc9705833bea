extension StateDiffJSON {
    /// The diff as one line of JSON: the bytes `EventJSON.encodeLine(StateDiffJSON(diff))`
    /// writes (sorted keys, slashes as they are), with every photo, in the two lists and in
    /// the albums of the pins added and removed, written straight from the diff instead of
    /// through a value each. A diff of two far points holds 530,000 photos that way, and
    /// `JSONEncoder` took 2.8–3.0 s and 1.2 GB for them (docs/BENCHMARKS-JOURNAL.md, "vt diff --json of
    /// far points"). The rest, a few thousand pins at most, still goes through the encoder,
    /// with its photo lists left empty; they are filled in here.
    public static func line(_ diff: StateDiff) throws -> [UInt8] {
        var skeleton = diff
        (skeleton.photosAdded, skeleton.photosRemoved) = ([], [])
        // Keys are sorted: the two lists come first, then the pins added, moved and removed,
        // each with one album and one photo list.
        var line = JSONLineFiller(try EventJSON.encodeLine(StateDiffJSON(skeleton, albumPhotos: false)),
                                  extra: (diff.photosAdded.count + diff.photosRemoved.count) * 300)
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
    /// docs/BENCHMARKS-JOURNAL.md, "vt diff --json of far points").
    public static func line(_ state: TouristState) throws -> [UInt8] {
        let pins = state.pinsInDropOrder
        // Keys are sorted: the pins come first, in drop order, each with one photo list.
        var line = JSONLineFiller(
            try EventJSON.encodeLine(StateJSON(state, albumPhotos: false)), extra: pins.reduce(0) { $0 + $1.album.slots.count } * 300)
        for pin in pins {
            line.fill(after: "\"photos\":[]") { $0.slots(pin.album.slots) }
        }
        return line.finished()
    }
}

/// What the lines above write beside ``JSONLineBytes``' own: photos and their credits.
extension JSONLineBytes {
    mutating func string(_ field: ListedPhoto.Field, of photo: ListedPhoto) {
        photo.withUTF8(field) { string(utf8: $0) }
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
