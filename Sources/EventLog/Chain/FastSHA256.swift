import CSHA256
import Crypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The SHA extensions' SHA-256 (Sources/CSHA256), checked against swift-crypto in the tests.
enum FastSHA256 {
    /// Set once per process. `VT_SHA256=portable` turns it off, to measure or test the other path.
    static let isAvailable = vt_sha256_available() == 1 && getenv("VT_SHA256").map { String(cString: $0) } != "portable"
}
