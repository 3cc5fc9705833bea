#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one client may hold of a server: how long a connection may go without a whole
/// request part arriving, and how many connections may be open at once.
///
/// - `idleTimeout` bounds, each on its own: the time to send a request's head (a head sent a
///   byte at a time is not a part until it is whole), the time between two parts of a body, a
///   body announced and never sent, and a kept-alive connection with no request. A response
///   being written is never cut (a live stream stays open), and the clock restarts when it ends.
/// - `maxConnections`: a connection past it is closed as soon as it is accepted, so that slow
///   or idle clients cannot take every descriptor the process has.
/// - A response that says `Connection: close` (a refused body's) closes its connection once
///   written, rather than leaving it to read the rest of a body nobody wants.
public struct ConnectionLimits: Sendable, Hashable {
    public var idleTimeout: Duration
    public var maxConnections: Int

    public init(idleTimeout: Duration = .seconds(15), maxConnections: Int = 4_096) {
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
    }

    /// Raises the process's soft limit on open files, within its hard limit, so that
    /// `maxConnections` connections and the store's own files fit (the usual soft limit of
    /// 1,024 would stop a server at about a thousand connections, whatever the limit says).
    func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Self.openFiles, &limit) == 0 else { return }
        let wanted = rlim_t(maxConnections + 1_024)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(wanted, limit.rlim_max)
        _ = setrlimit(Self.openFiles, &limit)
    }

    #if canImport(Glibc)
    private static let openFiles = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let openFiles = RLIMIT_NOFILE
    #endif

    /// What is wrong with these limits, or nil.
    public var problem: String? {
        if idleTimeout <= .zero { return "the idle timeout must be more than 0 seconds" }
        if !(1...1_000_000).contains(maxConnections) { return "the connection limit must be from 1 to 1000000 (got \(maxConnections))" }
        return nil
    }
}
