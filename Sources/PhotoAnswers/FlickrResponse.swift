import Foundation

/// Reads the JSON of `flickr.photos.search` leniently, as the real service writes it: `total`,
/// `pages`, `id` and `server` may be strings or numbers, image sizes too, a photo without a
/// wanted image URL is skipped. `"stat": "fail"` becomes a ``PhotoSourceError`` with Flickr's
/// code and message.
///
/// ```swift
/// let page = try FlickrResponse.parse(body, wantedSizes: ["url_m", "url_q"])
/// ```
public enum FlickrResponse {
    /// Where a photo's own page is, unless the client is told otherwise.
    public static let defaultPhotoPages = "https://www.flickr.com"

    /// Flickr's error codes that have their own meaning here.
    static let invalidKeyCodes: Set<Int> = [100]
    static let unavailableCodes: Set<Int> = [105, 106]

    /// Parses one answer. `redact` is applied to every piece of the answer that reaches a
    /// message (a service that echoes the request must not leak the key).
    ///
    /// `licences` names the licence ids (from ``FlickrClient/licences()``); `photoPages` is the
    /// site whose `/photos/{owner}/{id}` is a photo's own page.
    public static func parse(
        _ body: [UInt8], wantedSizes: [String], redact: (String) -> String = { $0 },
        licences: [String: FlickrLicence] = [:], photoPages: String = FlickrResponse.defaultPhotoPages
    ) throws(PhotoSourceError) -> PhotoSearchPage {
        let root: [String: Any]
        do {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw PhotoSourceError(.badResponse, "the photo service's answer is JSON but not an object")
            }
            root = object
        } catch let error as PhotoSourceError {
            throw error
        } catch {
            throw PhotoSourceError(
                .badResponse, "the photo service's answer is not JSON (\(body.count) bytes: \(preview(body, redact: redact)))")
        }
        switch root["stat"] as? String {
        case "ok":
            break
        case "fail":
            let code = integer(root["code"])
            // Redacted before it is cut: a key cut in two is no longer recognised.
            let message = (root["message"] as? String).map { String(redact($0).prefix(300)) } ?? "no message"
            let said = "the photo service refused the search (code \(code.map(String.init) ?? "?"): \(message))"
            if let code, invalidKeyCodes.contains(code) {
                throw PhotoSourceError(.invalidKey, said + "; check FLICKR_API_KEY")
            }
            if let code, unavailableCodes.contains(code) { throw PhotoSourceError(.serviceUnavailable, said) }
            throw PhotoSourceError(.refused, said)
        default:
            throw PhotoSourceError(.badResponse, "the photo service's answer has no \"stat\": \"ok\" or \"fail\"")
        }
        guard let photos = root["photos"] as? [String: Any] else {
            throw PhotoSourceError(.badResponse, "the photo service's answer has no \"photos\" object")
        }
        guard let list = (photos["photo"] ?? []) as? [Any] else {
            throw PhotoSourceError(.badResponse, "the photo service's \"photo\" is not a list")
        }
        let found = list.compactMap {
            photo(from: $0, wantedSizes: wantedSizes, licences: licences, photoPages: photoPages)
        }
        let page = integer(photos["page"]) ?? 1
        let perPage = integer(photos["perpage"]) ?? integer(photos["per_page"]) ?? list.count
        let total = integer(photos["total"]) ?? found.count
        // Rounded up without `total + perPage - 1`, which overflows for a total given as a
        // string of 19 digits.
        let pages = integer(photos["pages"])
            ?? (total > 0 && perPage > 0 ? total / perPage + (total % perPage > 0 ? 1 : 0) : 0)
        guard page >= 0, pages >= 0, perPage >= 0, total >= 0 else {
            throw PhotoSourceError(.badResponse, "the photo service's answer has a negative page, page count or total")
        }
        return PhotoSearchPage(page: page, pages: pages, perPage: perPage, total: total, photos: found)
    }

    /// One photo, or nil when it has no id or no usable URL of a wanted size.
    static func photo(
        from value: Any, wantedSizes: [String], licences: [String: FlickrLicence] = [:],
        photoPages: String = FlickrResponse.defaultPhotoPages
    ) -> FoundPhoto? {
        guard let fields = value as? [String: Any], let id = text(fields["id"]), !id.isEmpty else { return nil }
        for size in wantedSizes {
            guard let url = fields[size] as? String, isWebURL(url) else { continue }
            let suffix = size.hasPrefix("url_") ? String(size.dropFirst(4)) : size
            return FoundPhoto(
                id: id, title: (fields["title"] as? String) ?? "", url: url,
                width: max(0, integer(fields["width_" + suffix]) ?? 0),
                height: max(0, integer(fields["height_" + suffix]) ?? 0),
                credit: credit(fields, id: id, licences: licences, photoPages: photoPages))
        }
        return nil
    }

    /// The credit Flickr's `owner_name`, `license` and `date_taken` extras give.
    static func credit(_ fields: [String: Any], id: String, licences: [String: FlickrLicence], photoPages: String) -> PhotoCredit {
        let owner = text(fields["owner"]) ?? ""
        // An owner id in a URL path: Flickr's are like 12345678@N00.
        let ownerIsSafe = !owner.isEmpty && owner.count <= 100
            && owner.unicodeScalars.allSatisfy { ($0.properties.isAlphabetic && $0.isASCII) || ("0"..."9").contains($0) || "@_-.".unicodeScalars.contains($0) }
        let idIsSafe = id.count <= 30 && id.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
        var credit = PhotoCredit(
            creator: HTMLText.plain((fields["ownername"] as? String) ?? ""),
            pageURL: ownerIsSafe && idIsSafe ? "\(photoPages)/photos/\(owner)/\(id)" : "",
            dateTaken: (fields["datetaken"] as? String).map { String($0.prefix(40)) } ?? "")
        if let licenceID = text(fields["license"]) {
            if let licence = licences[licenceID] {
                credit.licenceName = licence.name
                credit.licenceURL = licence.url
            } else {
                credit.licenceName = "Flickr licence \(licenceID.prefix(10))"
            }
        }
        return credit
    }

    /// The answer of `flickr.photos.licenses.getInfo`: licence id → name and URL.
    public static func licences(_ body: [UInt8], redact: (String) -> String = { $0 }) throws(PhotoSourceError) -> [String: FlickrLicence] {
        let root: [String: Any]
        do {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw PhotoSourceError(.badResponse, "the photo service's licence list is JSON but not an object")
            }
            root = object
        } catch let error as PhotoSourceError {
            throw error
        } catch {
            throw PhotoSourceError(.badResponse, "the photo service's licence list is not JSON (\(preview(body, redact: redact)))")
        }
        guard root["stat"] as? String == "ok", let wrapper = root["licenses"] as? [String: Any],
            let list = wrapper["license"] as? [Any]
        else {
            let message = (root["message"] as? String).map { redact($0).prefix(200) } ?? "no list"
            throw PhotoSourceError(.refused, "the photo service gave no licence list (\(message))")
        }
        var licences: [String: FlickrLicence] = [:]
        for case let fields as [String: Any] in list {
            guard let id = text(fields["id"]), let name = fields["name"] as? String else { continue }
            let url = (fields["url"] as? String).flatMap { isWebURL($0) ? $0 : nil } ?? ""
            licences[id] = FlickrLicence(name: String(name.prefix(100)), url: url)
        }
        return licences
    }

    /// A whole number given as a number or as a string of digits.
    static func integer(_ value: Any?) -> Int? {
        switch value {
        case let number as NSNumber:
            let double = number.doubleValue
            guard double.isFinite, double == double.rounded(), abs(double) < 9e15 else { return nil }
            return Int(double)
        case let string as String:
            return Int(string.trimmingWhitespace)
        default:
            return nil
        }
    }

    /// A string, or a number written as one (ids arrive either way).
    static func text(_ value: Any?) -> String? {
        switch value {
        case let string as String: string
        case let number as NSNumber: integer(number).map(String.init)
        default: nil
        }
    }

    package static func isWebURL(_ text: String) -> Bool {
        guard text.count <= 2048, let url = URL(string: text), let scheme = url.scheme?.lowercased() else { return false }
        return (scheme == "https" || scheme == "http") && url.host != nil
    }

    /// The start of a body, redacted and printable, for an error message. The whole text is
    /// redacted before it is cut, so that a key across the cut cannot leave half of itself.
    static func preview(_ body: [UInt8], redact: (String) -> String) -> String {
        let text = redact(String(decoding: body, as: UTF8.self))
        let head = text.prefix(60)
        let printable = String(head.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
        return body.isEmpty ? "empty" : "\"" + printable + (head.endIndex < text.endIndex ? "…" : "") + "\""
    }
}
