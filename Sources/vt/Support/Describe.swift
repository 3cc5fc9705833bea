import VirtualTourist

/// How events, pins, albums and differences read as text. One place, so every command words
/// them the same way.
enum Describe {
    /// The first 8 digits of a pin id: enough to tell pins apart in a listing, and a valid
    /// prefix to type back.
    static func short(_ pin: PinID) -> String { String(pin.description.prefix(8)) }

    static func place(_ place: Coordinate) -> String {
        "\(number(place.latitude)), \(number(place.longitude))"
    }

    /// Degrees with at most 6 decimals (about 10 cm), trailing zeros dropped: what
    /// `String(format: "%.6f")` writes, without its cost (a few microseconds a number, most of
    /// the time of a `vt diff` that adds or removes a few thousand pins).
    static func number(_ value: Double) -> String {
        let scaled = value * 1_000_000
        // printf rounds the exact value. The product is within half a unit of its last place of
        // it (under 2^-16 below 10^11), so the two round alike unless the product lies this
        // close to halfway between two millionths; those few, and the odd number, take printf.
        guard value.isFinite, abs(scaled) < 1e11, abs(abs(scaled - scaled.rounded(.down)) - 0.5) > 1e-4 else {
            return formatted(value)
        }
        let micros = Int64(scaled.rounded())
        if micros == 0 { return "0" }
        var text = micros < 0 ? "-" : ""
        text += String(micros.magnitude / 1_000_000)
        var fraction = micros.magnitude % 1_000_000
        guard fraction != 0 else { return text }
        var digits = 6
        while fraction % 10 == 0 { (fraction, digits) = (fraction / 10, digits - 1) }
        let written = String(fraction)
        return text + "." + String(repeating: "0", count: digits - written.count) + written
    }

    /// ``number(_:)`` through printf.
    static func formatted(_ value: Double) -> String {
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// The place in words ("near Arrecife, Spain"; "in the South Pacific Ocean"), or "" when
    /// the program has no place data.
    static func placeName(_ place: Coordinate) -> String { PlaceJSON(place)?.text ?? "" }

    static func region(_ region: MapRegion) -> String {
        "centre \(place(region.center)), span \(number(region.latitudeSpan))° × \(number(region.longitudeSpan))°"
    }

    /// One line for an event, without its sequence and time.
    static func event(_ event: DomainEvent) -> String {
        switch event {
        case .regionChanged(let region): return "map region: \(Describe.region(region))"
        case .pinDropped(let pin, let at): return "pin \(short(pin)) dropped at \(place(at))"
        case .pinDragged(let pin, let to): return "pin \(short(pin)) dragged to \(place(to))"
        case .pinRemoved(let pin): return "pin \(short(pin)) removed"
        case .albumRequested(let request):
            return "pin \(short(request.pin)) collection \(request.collection): page \(request.page) requested, \(request.perPage) a page"
        case .photosListed(let listing):
            return "pin \(short(listing.pin)) collection \(listing.collection): \(listing.photos.count) photos listed"
                + " (page \(listing.page) of \(listing.pages), \(listing.total) in all)"
        case .photoDownloaded(let photo):
            return "pin \(short(photo.pin)) collection \(photo.collection): photo \(photo.slot) downloaded"
                + " (\(photo.mediaType), \(photo.byteCount) bytes, \(photo.digest.description.prefix(12)))"
        case .photoDownloadFailed(let pin, let collection, let slot, let reason):
            return "pin \(short(pin)) collection \(collection): photo \(slot) failed: \(reason)"
        case .albumRequestFailed(let pin, let collection, let reason):
            return "pin \(short(pin)) collection \(collection): search failed: \(reason)"
        case .photoRemoved(let pin, let collection, let slot, let photo):
            return "pin \(short(pin)) collection \(collection): photo \(slot) removed" + (photo.map { " (\($0))" } ?? "")
        case .collectionReplaced(let pin, let old, let new):
            return "pin \(short(pin)): New Collection (\(old) → \(new))"
        case .placeForgotten(let pin, let erased):
            return "pin \(short(pin)) forgotten: \(erased) event\(erased == 1 ? "" : "s") about it erased"
        case .deviceSeen(let seen):
            return "had seen device \(seen.device.short)'s events through \(seen.through) (head \(seen.headHex.prefix(12))…)"
        case .forgotten(let forgotten):
            let kind = forgotten.typeName ?? "event"
            let article = kind.first.map { "AEIOU".contains($0) } == true ? "an" : "a"
            return "forgotten: \(article) \(kind) whose payload was erased (digest \(forgotten.digest.description.prefix(12))…)"
        }
    }

    /// `  42  2026-11-21T09:30:00.000042Z  PhotoDownloaded      pin … (cause 40)`
    static func line(_ recorded: RecordedEvent) -> String {
        let sequence = String(recorded.sequence)
        let padded = String(repeating: " ", count: max(0, 6 - sequence.count)) + sequence
        let type = recorded.event.typeName.padding(toLength: 19, withPad: " ", startingAt: 0)
        // In a store of several devices: which device wrote it, and its number in that device's log
        // (a cause is a number of the same log).
        let origin = recorded.origin.map { Terminal.styled("\($0.device.short)#\($0.sequence)", .magenta) + "  " } ?? ""
        let cause = recorded.cause.map { Terminal.styled("  (cause \(recorded.origin == nil ? "" : "#")\($0))", .dim) } ?? ""
        return "\(Terminal.styled(padded, .yellow))  \(Terminal.styled(recorded.timestamp.description, .dim))  \(origin)"
            + "\(Terminal.styled(type, .cyan)) \(event(recorded.event))\(cause)"
    }

    /// The album's status in a few words.
    static func status(_ album: Album) -> String {
        switch album.status {
        case .notRequested: return "not requested yet"
        case .listing: return "searching for photos…"
        case .downloading(let done, let total): return "downloading: \(done) of \(total) photos"
        case .complete: return "complete: \(album.slots.count) photos"
        case .noImages: return "No Images (nothing was photographed here)"
        case .failed(let reason): return "the search failed: \(reason)"
        }
    }

    /// `3fa29c0100000001  48.8584, 2.2945         near Paris, France            collection 1, complete: 21 photos`
    static func pinRow(_ pin: Pin) -> String {
        "\(Terminal.styled(pin.id.description, .yellow))  \(place(pin.coordinate).padding(toLength: 24, withPad: " ", startingAt: 0))"
            + padded(placeName(pin.coordinate), to: 30) + "collection \(pin.album.collection), \(status(pin.album))"
    }

    /// `text` and at least two spaces, to `width` characters.
    private static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(2, width - text.count))
    }

    /// A row of squares, one per photo: ■ downloaded, □ placeholder, ✗ failed.
    static func strip(_ album: Album) -> String {
        album.slots.map { slot in
            switch slot.state {
            case .placeholder: "□"
            case .downloaded: "■"
            case .failed: "✗"
            }
        }.joined()
    }

    /// The album, photo by photo.
    static func album(_ pin: Pin) -> [String] {
        let album = pin.album
        let name = placeName(pin.coordinate)
        var lines = ["pin \(pin.id) at \(place(pin.coordinate))\(name.isEmpty ? "" : " (\(name))") — collection \(album.collection)"
            + (album.request.map { ", page \($0.page)" + (album.pages > 0 ? " of \(album.pages)" : "") } ?? "")
            + (album.total > 0 ? " (\(album.total) photos nearby)" : "")]
        let newCollection = !album.isNewCollectionEnabled ? "" : album.hasOtherPhotos ? "; New Collection is available" : "; no other photos here"
        lines.append(status(album) + newCollection)
        for slot in album.slots {
            let state: String
            switch slot.state {
            case .placeholder: state = Terminal.styled("placeholder", .dim)
            case .downloaded(let digest, let bytes, let type):
                state = Terminal.styled("\(type.replacingOccurrences(of: "image/", with: "")) \(bytes) B", .green)
                    + " " + String(digest.description.prefix(12))
            case .failed(let reason): state = Terminal.styled("failed: \(reason)", .red)
            }
            let number = String(slot.number)
            lines.append("  \(String(repeating: " ", count: max(0, 3 - number.count)))\(number)  \(slot.photo.remoteID)  \(state)"
                + (slot.photo.title.isEmpty ? "" : "  “\(slot.photo.title.prefix(60))”"))
            if let credit = credit(slot.photo) { lines.append("       " + Terminal.styled(credit, .dim)) }
        }
        return lines
    }

    /// A photo's credit on one line: `by Ann · CC BY-SA 4.0 (https://…) · taken 2019-05-01 · https://page`;
    /// nil when the listing recorded none.
    static func credit(_ photo: ListedPhoto) -> String? {
        guard photo.hasCredit else { return nil }
        var parts: [String] = []
        if !photo.creator.isEmpty { parts.append("by \(photo.creator)") }
        if !photo.licenceName.isEmpty || !photo.licenceURL.isEmpty {
            let name = photo.licenceName.isEmpty ? "licence" : photo.licenceName
            parts.append(photo.licenceURL.isEmpty ? name : "\(name) (\(photo.licenceURL))")
        }
        if !photo.dateTaken.isEmpty { parts.append("taken \(photo.dateTaken)") }
        if !photo.pageURL.isEmpty { parts.append(photo.pageURL) }
        return parts.joined(separator: " · ")
    }

    static func state(_ state: TouristState) -> [String] {
        var lines = ["state after event \(state.sequence): \(state.pins.count) pin\(state.pins.count == 1 ? "" : "s")"]
        lines.append("map region: " + (state.region.map(region) ?? "not set"))
        lines += state.pinsInDropOrder.map(pinRow)
        return lines
    }

    /// Writes the lines of a difference. The photo lines, most of a diff of two far points, are
    /// put together from bytes (``LineWriter``), on two cores when both lists hold at least
    /// `twoCoresFrom` photos.
    static func diff(_ diff: StateDiff, to out: LineWriter, twoCoresFrom: Int = 10_000) {
        out.append("from event ")
        out.appendDecimal(diff.from)
        out.append(" to event ")
        out.appendDecimal(diff.to)
        out.append(":")
        out.endLine()
        if diff.isEmpty { return out.line("  nothing changed") }
        if let region = diff.region {
            out.line("  map region: \(region.before.map(Describe.region) ?? "not set") → \(region.after.map(Describe.region) ?? "not set")")
        }
        for pin in diff.pinsAdded { out.line("  + pin \(pin.id) at \(place(pin.coordinate))", .green) }
        for pin in diff.pinsRemoved { out.line("  - pin \(pin.id) at \(place(pin.coordinate))", .red) }
        for move in diff.pinsMoved { out.line("  ~ pin \(move.pin) moved \(place(move.from)) → \(place(move.to))") }
        guard min(diff.photosAdded.count, diff.photosRemoved.count) >= twoCoresFrom else {
            photoLines(diff.photosAdded, sign: "+", .green, to: out)
            photoLines(diff.photosRemoved, sign: "-", .red, to: out)
            return
        }
        // Many of both: the removed ones are written on the second core, kept until the added
        // ones are out.
        let removed = LineWriter(colour: out.colour, flushThreshold: nil)
        _ = onTwoCores(
            { photoLines(diff.photosAdded, sign: "+", .green, to: out) },
            { photoLines(diff.photosRemoved, sign: "-", .red, to: removed) })
        out.append(from: removed)
    }

    /// `  + photo 5001 (pin 11110000, collection 1, slot 1)`: the pin as ``short(_:)`` writes it.
    /// The photos are read where they lie: a copy of each would retain and release its texts.
    private static func photoLines(_ photos: [StateDiff.Photo], sign: StaticString, _ style: Terminal.Style, to out: LineWriter) {
        photos.withUnsafeBufferPointer { photos in
            for index in photos.indices {
                out.startStyle(style)
                out.append("  ")
                out.append(sign)
                out.append(" photo ")
                photos[index].withRemoteIDUTF8 { out.append(utf8: $0) }
                out.append(" (pin ")
                out.appendHex(photos[index].pin.rawValue >> 32, digits: 8)
                out.append(", collection ")
                out.appendDecimal(photos[index].collection)
                out.append(", slot ")
                out.appendDecimal(photos[index].slotNumber)
                out.append(")")
                out.endStyle()
                out.endLine()
            }
        }
    }
}
