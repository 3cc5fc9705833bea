import NIOCore
import NIOHTTP1

/// Refuses, before the request reaches a route, what HTTP/1.1 says a server must not take
/// (RFC 9112, 3.2 and 3.3), and what this server will not take:
///
/// - an HTTP/1.1 request with no `Host`, or any with more than one (the first one used to win: a check of
///   one and a use of another could disagree);
/// - a target that is not a path (origin-form): an absolute address (`GET http://elsewhere/`)
///   would have been answered as the path it ends with, whatever host it names; `*` and
///   authority-form are for proxies and `OPTIONS *`, which this server does not serve.
///
/// The refusal is a 400 with a JSON error like every other, and the connection closes: the
/// rest of the request is not read.
///
/// It sits between NIO's HTTP/1 decoder and the conversion to HTTP types, where the request
/// line and every `Host` line are still there to see.
final class RequestHeadCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var refusing = false

    /// What is wrong with a request's head, or nil.
    static func problem(_ head: HTTPRequestHead) -> (code: String, message: String)? {
        let hosts = head.headers["Host"]
        // HTTP/1.0 did not require a Host; HTTP/1.1 requires exactly one.
        if hosts.count > 1 || (hosts.isEmpty && (head.version.major, head.version.minor) >= (1, 1)) {
            return ("bad-host", hosts.isEmpty ? "the request names no Host" : "the request names its Host \(hosts.count) times; name it once")
        }
        guard head.uri.hasPrefix("/") else {
            return ("bad-target", "the request's target must be a path starting with / (not \(String(head.uri.prefix(60))))")
        }
        return nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refusing { return }
        guard case .head(let head) = unwrapInboundIn(data), let (code, message) = Self.problem(head) else {
            return context.fireChannelRead(data)
        }
        refusing = true
        let quoted = message.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        let body = context.channel.allocator.buffer(string: #"{"error":{"code":"\#(code)","message":"\#(quoted)"}}"#)
        let headers = HTTPHeaders([
            ("Content-Type", "application/json; charset=utf-8"), ("Content-Length", String(body.readableBytes)),
            ("Connection", "close"), ("Cache-Control", "no-store"),
        ])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.close(promise: nil)
    }

    /// Puts a check right after the HTTP/1 decoder of the connection `context` belongs to.
    static func install(in context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        guard let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        try? pipeline.addHandler(RequestHeadCheck(), position: .after(decoder))
    }
}
