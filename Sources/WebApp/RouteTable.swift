import HTTPTypes
import Hummingbird
import Synchronization

/// The paths of the routes and the methods each answers.
final class RouteTable: Sendable {
    private let routes = Mutex<[(path: RouterPath, methods: Set<HTTPRequest.Method>)]>([])

    func note(_ path: RouterPath, _ method: HTTPRequest.Method) {
        routes.withLock { routes in
            if let index = routes.firstIndex(where: { $0.path == path }) {
                routes[index].methods.insert(method)
            } else {
                routes.append((path, [method]))
            }
        }
    }

    /// The methods answered at `path` (HEAD wherever GET is), or nil when no route matches it.
    func methods(at path: String) -> Set<HTTPRequest.Method>? {
        let segments = path.split(separator: "/")
        let found = routes.withLock { routes in
            routes.filter { Self.matches($0.path, segments) }.reduce(into: Set<HTTPRequest.Method>()) { $0.formUnion($1.methods) }
        }
        guard !found.isEmpty else { return nil }
        return found.contains(.get) ? found.union([.head]) : found
    }

    private static func matches(_ pattern: RouterPath, _ segments: [Substring]) -> Bool {
        var index = 0
        for element in pattern.components {
            if element.description == "**" { return index < segments.count }
            guard index < segments.count, element ~= segments[index] else { return false }
            index += 1
        }
        return index == segments.count
    }
}
