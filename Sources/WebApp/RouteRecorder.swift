import HTTPTypes
import Hummingbird

/// Adds routes to the router and remembers which methods each path answers, so that a request
/// with a method its path does not answer gets 405 with `Allow` (RFC 9110, 15.5.6) instead of
/// 404 (``AllowedMethods``). The route files add their routes through it, so the list cannot
/// drift from the routes.
final class RouteRecorder: RouterMethods {
    typealias Context = BasicRequestContext
    let router: Router<BasicRequestContext>
    /// What was recorded, for ``AllowedMethods``.
    let table = RouteTable()

    init(_ router: Router<BasicRequestContext>) { self.router = router }

    @discardableResult
    func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == BasicRequestContext {
        router.on(path, method: method, responder: responder)
        table.note(path, method)
        return self
    }

    @discardableResult
    func add(middleware: any MiddlewareProtocol<Request, Response, BasicRequestContext>) -> Self {
        router.add(middleware: middleware)
        return self
    }
}
