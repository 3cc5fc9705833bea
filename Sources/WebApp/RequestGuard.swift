import HTTPTypes
import Hummingbird
import NIOCore
import RequestReading
import Synchronization

/// The checks every request passes before a route sees it:
///
/// - **Host**: on loopback without a token, the `Host` header must name this server
///   (127.0.0.1, localhost or [::1] with its port), so a page on another site cannot reach it
///   through DNS rebinding.
/// - **Token**: when one is set, a request carries it as the `vt_token` cookie (set by opening
///   any page once with `?token=…`) or as `Authorization: Bearer …`.
/// - **Origin**: a request that changes something (anything but GET and HEAD) from a page of
///   another origin is refused: its `Origin`, when sent, must be this server's, and a
///   browser's `Sec-Fetch-Site`, when sent, must not say cross-site or same-site; either alone
///   refuses.
struct RequestGuard<Context: RequestContext>: RouterMiddleware {
    let token: String?
    let checksHost: Bool
    /// The port once bound (0 before).
    let port: @Sendable () -> Int

    static var cookieName: String { "vt_token" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let host = request.head.authority ?? ""
        if checksHost && !isOwnHost(host) {
            throw WebError(.misdirectedRequest, "wrong-host", "this server answers to 127.0.0.1:\(port()) or localhost:\(port()), not \(RequestValues.quoted(host))")
        }
        if let token {
            if request.method == .get, let offered = request.uri.queryParameters["token"] {
                guard Self.same(String(offered), token) else {
                    throw WebError(.unauthorized, "bad-token", "the access token in the address is wrong")
                }
                // Keep the token out of the address bar and history: set the cookie, then go
                // to the same page without it.
                var headers = HTTPFields()
                headers[.location] = HomePath.location(request.uri.path)
                headers[.setCookie] = "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
                headers[.cacheControl] = "no-store"
                return Response(status: .seeOther, headers: headers)
            }
            let bearer = request.headers[.authorization].flatMap { value in
                value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
            }
            let presented = bearer ?? request.cookies[Self.cookieName]?.value
            guard let presented, Self.same(presented, token) else {
                throw WebError(.unauthorized, "token-required", "this server needs its access token: open the address it printed (with ?token=…) or send Authorization: Bearer …")
            }
        }
        if request.method != .get && request.method != .head {
            // Each header refuses on its own: a page cannot choose Sec-Fetch-Site, so a
            // cross-site one with this server's Origin is a forged or confused request.
            if let origin = request.headers[.origin], origin != "http://" + host, origin != "https://" + host {
                throw WebError(.forbidden, "cross-origin", "changes are accepted only from this server's own pages (Origin \(RequestValues.quoted(origin)))")
            }
            // Tokens compare without regard to case (RFC 9110): `CROSS-SITE` is cross-site.
            if let site = request.headers[fetchSite], ["cross-site", "same-site"].contains(site.lowercased()) {
                throw WebError(.forbidden, "cross-origin", "changes are accepted only from this server's own pages (Sec-Fetch-Site: \(site))")
            }
        }
        return try await next(request, context)
    }

    private func isOwnHost(_ host: String) -> Bool {
        let port = port()
        return ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"].contains(host.lowercased())
    }

    /// Compares in time independent of where the first difference is.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<min(x.count, y.count) { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

private let fetchSite = HTTPField.Name("Sec-Fetch-Site")!
