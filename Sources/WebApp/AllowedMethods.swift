import HTTPTypes
import Hummingbird

/// Turns the router's 404 for a path that exists into 405 with the methods it answers.
struct AllowedMethods: RouterMiddleware {
    typealias Context = BasicRequestContext
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = routes.methods(at: request.uri.path), !allowed.contains(request.method) else { throw error }
            let names = allowed.map(\.rawValue).sorted()
            var response = try WebError(
                .methodNotAllowed, "method-not-allowed",
                "\(request.uri.path) answers \(names.joined(separator: ", ")), not \(request.method.rawValue)"
            ).response(from: request, context: context)
            response.headers[.allow] = names.joined(separator: ", ")
            return response
        }
    }
}
