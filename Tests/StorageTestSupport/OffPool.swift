import Foundation

/// Runs `work` on a thread of its own: the syncs and checks are long file work, which on the
/// cooperative pool would starve the suite's network tests of threads (docs/DEVELOPING.md).
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
