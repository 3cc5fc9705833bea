/// Finding pins and photos by what people type: a whole id or a unique prefix of it, as git
/// takes abbreviated commit names. A prefix is at least ``minimumPrefix`` characters, so a
/// typo of one or two characters does not quietly pick something.
extension TouristState {
    public static let minimumPrefix = 4

    /// The pin whose id is `text` or starts with it (case-insensitive).
    ///
    /// - Throws: ``DomainError`` `.unknownPin` when none matches, `.invalidArgument` when the
    ///   text is not hexadecimal, is too short, or matches several (they are listed).
    public func pin(matching text: String) throws -> Pin {
        let id = try Self.resolve(text, among: pins.keys.map(\.description), what: "pin")
        return pins[PinID(parsing: id)!]!
    }

    /// Resolves `text` among `ids` (whole or unique prefix of at least ``minimumPrefix``).
    public static func resolve(_ text: String, among ids: some Collection<String>, what: String) throws -> String {
        let wanted = text.lowercased()
        guard !wanted.isEmpty, wanted.allSatisfy(\.isHexDigit) else {
            throw DomainError(.invalidArgument, "\"\(text.prefix(40))\" is not a \(what) id (\(what) ids are hexadecimal, like 3fa29c0100000001)")
        }
        if ids.contains(wanted) { return wanted }
        guard wanted.count >= minimumPrefix else {
            throw DomainError(.invalidArgument, "\"\(text)\" is too short: give at least \(minimumPrefix) characters of the \(what) id")
        }
        let matches = ids.filter { $0.hasPrefix(wanted) }.sorted()
        switch matches.count {
        case 0: throw DomainError(.unknownPin, "no \(what) id starts with \(wanted)")
        case 1: return matches[0]
        default:
            throw DomainError(
                .invalidArgument,
                "\(wanted) is ambiguous: \(matches.count) \(what)s match (\(matches.prefix(5).joined(separator: ", "))\(matches.count > 5 ? ", …" : "")); give more characters")
        }
    }
}

extension Album {
    /// The photo whose service id is `text` or starts with it, or whose digest starts with it.
    ///
    /// - Throws: ``DomainError`` `.unknownPhoto` when none matches, `.invalidArgument` when the
    ///   text is too short or matches several.
    public func photo(matching text: String) throws -> PhotoSlot {
        let wanted = text.lowercased()
        guard wanted.count >= TouristState.minimumPrefix || slots.contains(where: { $0.photo.remoteID == text }) else {
            throw DomainError(.invalidArgument, "\"\(text)\" is too short: give at least \(TouristState.minimumPrefix) characters of the photo id")
        }
        if let exact = slots.first(where: { $0.photo.remoteID == text }) { return exact }
        let matches = slots.filter {
            $0.photo.remoteID.lowercased().hasPrefix(wanted) || ($0.digest?.description.hasPrefix(wanted) ?? false)
        }
        switch matches.count {
        case 0:
            throw DomainError(.unknownPhoto, "no photo of this album (collection \(collection)) has an id or digest starting with \(text)")
        case 1: return matches[0]
        default:
            let names = matches.prefix(5).map(\.photo.remoteID).joined(separator: ", ")
            throw DomainError(.invalidArgument, "\(text) is ambiguous: \(matches.count) photos match (\(names)\(matches.count > 5 ? ", …" : "")); give more characters")
        }
    }
}
