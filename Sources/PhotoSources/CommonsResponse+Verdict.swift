import Foundation
import PhotoAnswers

/// Whether an answer of Commons' Action API is one to read, to wait and ask again after, or a
/// failure: from the HTTP status and, with HTTP 200, an `error` object (the answer's readers
/// are in PhotoAnswers, which knows no HTTP).
extension CommonsResponse {
    /// What to do with an answer.
    enum Verdict {
        case ok
        /// Wait this many seconds and try again (HTTP 429, or a maxlag error).
        case wait(seconds: Int, because: String)
        case failed(PhotoSourceError)
    }

    /// Waited when a 429 or maxlag comes without a usable `Retry-After`.
    static let defaultWait = 5

    static func verdict(_ answer: HTTPFetch.Answer, endpoint: String) -> Verdict {
        let retryAfter = answer.retryAfter.flatMap { Int($0.trimmingWhitespace) }.map { max(0, $0) } ?? defaultWait
        switch answer.status {
        case 200:
            break
        case 429:
            return .wait(seconds: retryAfter, because: "HTTP 429, too many requests")
        case 403:
            return .failed(PhotoSourceError(
                .refused,
                "Wikimedia Commons at \(endpoint) refused the request (HTTP 403); it requires a User-Agent with a contact"
                    + " (set \(CommonsClient.contactVariable))"))
        case 500...599:
            return .failed(PhotoSourceError(
                .serviceUnavailable, "Wikimedia Commons at \(endpoint) answered HTTP \(answer.status); try again later"))
        default:
            return .failed(PhotoSourceError(.httpStatus, "Wikimedia Commons at \(endpoint) answered HTTP \(answer.status)"))
        }
        // Only an error object is looked for here; the body's shape is checked by its reader.
        guard let root = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
            let error = root["error"] as? [String: Any]
        else { return .ok }
        let code = (error["code"] as? String) ?? "?"
        let info = (error["info"] as? String).map { String($0.prefix(300)) } ?? "no explanation"
        switch code {
        case "maxlag":
            return .wait(seconds: retryAfter, because: "its databases are lagging: \(info)")
        case "ratelimited":
            return .wait(seconds: retryAfter, because: "rate limited: \(info)")
        case "readonly", "internal_api_error_DBQueryError", "internal_api_error_DBConnectionError":
            return .failed(PhotoSourceError(.serviceUnavailable, "Wikimedia Commons cannot answer now (\(code): \(info)); try again later"))
        default:
            return .failed(PhotoSourceError(.refused, "Wikimedia Commons refused the request (\(code): \(info))"))
        }
    }
}
