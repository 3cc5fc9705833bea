/// A failure the demo server can be told to answer with, so that tests (and people trying the
/// app) can see how the client and the album pipeline behave when the service misbehaves.
public enum DemoFault: Sendable, Hashable {
    /// Answer with this HTTP status and a short text body.
    case httpStatus(Int)
    /// Wait this long before answering normally (longer than the client's timeout: a timeout).
    case delay(Duration)
    /// Wait until the test lets it go (``DemoServerControls/releaseHeldSearches()``) or the
    /// server stops, then answer normally: a search that stays in flight for as long as a test
    /// needs, whatever the machine's speed (searches only).
    case held
    /// Answer `{"stat": "fail", "code": …, "message": …}` (searches only).
    case statFail(code: Int, message: String)
    /// Answer with only the first half of the normal body (a well-formed HTTP answer whose
    /// content is cut short).
    case truncated
    /// Announce the whole body's length, send half of it, and close the connection.
    case cutConnection
    /// Answer 200 with an HTML page, as a captive portal or a proxy's error page does.
    case html
}

/// Decides which image requests fail: given the request's number (from 0, in arrival order)
/// and the photo's id.
public typealias DemoImageFaultRule = @Sendable (_ requestNumber: Int, _ photoID: String) -> DemoFault?
