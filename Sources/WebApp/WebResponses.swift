import Foundation
import Hummingbird
import NIOCore
import RequestReading
import VirtualTourist

/// A request the web app refuses, answered as `{"error": {"code": …, "message": …}}` with its
/// HTTP status. Nothing was changed when one is thrown.
struct WebError: HTTPResponseError {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = WebResponses.json(ErrorBody(error: .init(code: code, message: message)))
        response.status = status
        // A body refused unread would otherwise be drained before the next request: the
        // connection closes instead (ConnectionLimits closes it once this is written).
        if status == .contentTooLarge { response.headers[.connection] = "close" }
        return response
    }

    /// The store refused an action: its rule names the status.
    init(_ error: DomainError) {
        let status: HTTPResponse.Status
        switch error.code {
        case .unknownPin, .unknownPhoto: status = .notFound
        case .albumBusy, .wrongAlbumState, .staleCollection, .duplicatePin, .noOtherPhotos: status = .conflict
        case .invalidPlace, .invalidArgument: status = .badRequest
        case .closed: status = .serviceUnavailable
        case .readOnly: status = .forbidden
        default: status = .internalServerError
        }
        self.init(status, error.code.name, error.message)
    }

    static func badRequest(_ message: String) -> WebError { WebError(.badRequest, "invalid-argument", message) }
    static func notFound(_ message: String) -> WebError { WebError(.notFound, "not-found", message) }
}

struct ErrorBody: Encodable {
    struct Detail: Encodable {
        var code: String
        var message: String
    }
    var error: Detail
}

enum WebResponses {
    /// Sorted keys and no escaped slashes, the same JSON as `vt --json`.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let text = (try? EventJSON.encodeLine(value)) ?? notEncoded
        return bytes(Array(text.utf8), type: "application/json; charset=utf-8", status: status)
    }

    /// A line of JSON written as bytes already (``MapJSON/line(_:last:)``); the same answer as
    /// ``json(_:status:)`` when it cannot be written.
    static func jsonLine(_ line: () throws -> [UInt8]) -> Response {
        let bytes = (try? line()) ?? Array(notEncoded.utf8)
        return Self.bytes(bytes, type: "application/json; charset=utf-8")
    }

    private static let notEncoded = "{\"error\":{\"code\":\"internal\",\"message\":\"could not encode the answer\"}}"

    static func bytes(_ bytes: [UInt8], type: String, status: HTTPResponse.Status = .ok, cache: String = "no-store") -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = cache
        headers[.contentLength] = String(bytes.count)
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Runs a store action, turning the store's refusals into answers with their status.
    static func refusing<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as DomainError { throw WebError(error) }
    }
}

/// Reading what a request carries: its JSON body (bounded), its path and query values.
enum RequestValues {
    static func body<T: Decodable>(_ type: T.Type, of request: Request, limit: Int) async throws -> T {
        let contentType = request.headers[.contentType] ?? ""
        guard contentType.lowercased().hasPrefix("application/json") else {
            throw WebError(.unsupportedMediaType, "unsupported-media-type", "send the body as application/json (got \(contentType.isEmpty ? "no Content-Type" : contentType))")
        }
        // A body announced larger than the limit is refused before a byte of it is read.
        if let announced = request.headers[.contentLength].flatMap({ Int($0) }), announced > limit {
            throw WebError(.contentTooLarge, "too-large", "the request body is larger than \(limit) bytes")
        }
        var request = request
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: limit) } catch {
            throw WebError(.contentTooLarge, "too-large", "the request body is larger than \(limit) bytes")
        }
        do { return try BodyDecoder.decode(T.self, from: buffer.readableBytesView) } catch {
            throw WebError.badRequest(error.message)
        }
    }

    static func pin(_ context: some RequestContext) throws -> PinID {
        let text = context.parameters.get("pin") ?? ""
        guard let pin = PinID(parsing: text.lowercased()) else {
            throw WebError.badRequest("a pin id is 16 hexadecimal digits (got \(quoted(text)))")
        }
        return pin
    }

    /// An optional unsigned number from the query.
    static func number(_ name: String, in request: Request, max: UInt64 = .max) throws -> UInt64? {
        guard let text = request.uri.queryParameters[Substring(name)] else { return nil }
        guard let value = UInt64(String(text)), value <= max else {
            throw WebError.badRequest("\(name) must be a whole number from 0 to \(max) (got \(quoted(String(text))))")
        }
        return value
    }

    static func quoted(_ text: String) -> String {
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return "\"" + shown + "\""
    }
}
