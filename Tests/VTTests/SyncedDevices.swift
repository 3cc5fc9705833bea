import AsyncHTTPClient
import Foundation
import NATSTestSupport

/// What the cluster tests ask of devices served with `vt serve --sync`.
extension Served {
    /// The ids of the pins it shows, sorted.
    func pins() async throws -> [String] {
        (try await send(.GET, "api/state").json()["pins"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }.sorted()
    }

    /// Nil once every device is connected with nothing to send or receive and shows exactly
    /// `expected`; else what the last look saw.
    static func converged(_ devices: [Served], on expected: [String]) async -> String? {
        var last = ""
        let settled = await eventually(timeout: .seconds(180)) {
            do {
                for device in devices {
                    let sync = try await device.send(.GET, "api/replication").json()
                    let shown = try await device.pins()
                    last = "\(device.url): \(shown) \(sync)"
                    guard sync["connected"] as? Bool == true, sync["lag_events"] as? Int == 0, sync["receive_events"] as? Int == 0,
                        shown == expected.sorted()
                    else { return false }
                }
                return true
            } catch {
                last = "\(error)"
                return false
            }
        }
        return settled ? nil : "not converged on \(expected.sorted()): \(last)"
    }
}
