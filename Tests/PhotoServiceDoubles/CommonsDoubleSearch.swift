import DemoPhotoServer
import Foundation
import Hummingbird

/// The double's `list=search`, as CirrusSearch answers it on Commons: `srsearch` understands
/// the keywords `nearcoord:[RADIUS,]LAT,LON` (RADIUS a whole number of `m` or `km`, 5 km when
/// left out) and `filetype:` (`bitmap`, `drawing`, `office`, `video`); any other word matches
/// nothing, since its files have no text. Results come in upload order (a fixed shuffle of the
/// place's files, so the geosearch's nearest files are spread through them), `srlimit` at a
/// time from `sroffset`, with `searchinfo.totalhits` and `continue.sroffset` while more remain.
///
/// As the real service: a limit over 500 is lowered to 500 with a warning; an unreadable or
/// negative number, or a missing `srsearch`, is an error with HTTP 200; results end 10,000
/// deep (a page reaching past it is cut short, yet a continuation at 10,000 is still offered,
/// and asking for it is the error `cirrussearch-offset-too-large`); a `nearcoord:` it cannot
/// read is a warning and is left out. (Commons then searches the whole wiki; the double, which
/// has files only at places, finds nothing.)
extension CommonsDoubleHandlers {
    static let searchLimit = 500
    static let searchDepth = 10_000

    func search(_ query: [String: String]) -> Response {
        guard let text = query["srsearch"], !text.allSatisfy(\.isWhitespace) else {
            return Self.error("missingparam", "The \"srsearch\" parameter must be set.")
        }
        var warnings: [String] = []
        var limit = 10
        if let raw = query["srlimit"] {
            guard let value = raw == "max" ? Self.searchLimit : Int(raw), value >= 1 else {
                return Self.error("badinteger", "Invalid value \"\(raw)\" for integer limit parameter \"srlimit\".")
            }
            if value > Self.searchLimit { warnings.append("srlimit may not be over \(Self.searchLimit) (set to \(Self.searchLimit)) for users.") }
            limit = min(value, Self.searchLimit)
        }
        let offset = query["sroffset"].map { Int($0) } ?? 0
        guard let offset, offset >= 0 else {
            return Self.error("badinteger", "Invalid value \"\(query["sroffset"] ?? "")\" for integer parameter \"sroffset\".")
        }
        guard offset < Self.searchDepth else {
            return Self.error(
                "cirrussearch-offset-too-large",
                "Could not retrieve results. Up to \(Self.searchDepth) search results are supported, but results starting at \(offset) were requested.")
        }
        let namespaces = (query["srnamespace"] ?? "0").split(separator: "|")
        let (matches, warning) = matchingFiles(text, inFiles: namespaces.contains("6") || namespaces.contains("*"))
        if let warning { warnings.append(warning) }
        let served = Array(matches.dropFirst(offset).prefix(min(limit, Self.searchDepth - offset)))
        controls.remember(served)
        let brief = query["srprop"] != nil
        let entries = served.map { file in
            "{\"ns\":6,\"title\":\(JSONText.quoted("File:" + file.name)),\"pageid\":\(file.pageID)"
                + (brief ? "" : ",\"size\":\(20_000 + file.index),\"wordcount\":0,\"snippet\":\"\",\"timestamp\":\"2019-05-01T12:00:00Z\"")
                + "}"
        }
        var parts = ["\"batchcomplete\":\"\""]
        // Offered whenever results remain, even at the depth the next request cannot reach.
        if offset + limit < matches.count { parts.append("\"continue\":{\"sroffset\":\(offset + limit),\"continue\":\"-||\"}") }
        if !warnings.isEmpty {
            parts.append("\"warnings\":{\"search\":{\"*\":\(JSONText.quoted(warnings.joined(separator: "\n")))}}")
        }
        let info = (query["srinfo"] ?? "totalhits").split(separator: "|").contains("totalhits")
            ? "\"searchinfo\":{\"totalhits\":\(matches.count)}," : ""
        parts.append("\"query\":{" + info + "\"search\":[" + entries.joined(separator: ",") + "]}")
        return Self.json("{" + parts.joined(separator: ",") + "}")
    }

    /// The files `srsearch` matches, in upload order, and a warning for a keyword it could not read.
    func matchingFiles(_ text: String, inFiles: Bool) -> ([File], String?) {
        var place: (latitude: Double, longitude: Double)?
        var type: String?
        var warning: String?
        var words = false
        for token in text.split(whereSeparator: \.isWhitespace) {
            if token.hasPrefix("nearcoord:") {
                place = Self.nearcoord(token.dropFirst("nearcoord:".count))
                if place == nil { warning = "Could not understand the coordinates of nearcoord:\(token.dropFirst(10))." }
            } else if token.hasPrefix("filetype:") {
                type = String(token.dropFirst("filetype:".count)).lowercased()
            } else {
                words = true
            }
        }
        guard inFiles, !words, let place else { return ([], warning) }
        let found = files(latitude: place.latitude, longitude: place.longitude).filter { type == nil || Self.mediaType($0.mime) == type }
        return (found.sorted { DemoCatalogue.mix(UInt64($0.pageID)) < DemoCatalogue.mix(UInt64($1.pageID)) }, warning)
    }

    /// `[RADIUS,]LAT,LON`, as GeoData reads it; nil when it cannot be read. The radius is
    /// checked but not applied: the double's places are single cells.
    static func nearcoord(_ value: Substring) -> (latitude: Double, longitude: Double)? {
        let pieces = value.split(separator: ",", omittingEmptySubsequences: false)
        guard pieces.count == 2 || pieces.count == 3 else { return nil }
        if pieces.count == 3 {
            let radius = pieces[0]
            let unit = radius.drop { $0.isASCII && $0.isNumber }
            guard unit.count < radius.count, unit == "m" || unit == "km" else { return nil }
        }
        guard let latitude = Double(pieces[pieces.count - 2]), let longitude = Double(pieces[pieces.count - 1]),
            (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { return nil }
        return (latitude, longitude)
    }

    /// The `filetype:` a file has, from its MIME type, as MediaWiki groups them.
    static func mediaType(_ mime: String) -> String {
        switch mime {
        case "image/jpeg", "image/png", "image/gif", "image/webp", "image/tiff": "bitmap"
        case "image/svg+xml": "drawing"
        case "application/pdf": "office"
        default: mime.hasPrefix("video/") ? "video" : "unknown"
        }
    }
}
