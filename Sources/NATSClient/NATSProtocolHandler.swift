import NIOCore
import NIOSSL

/// The channel's end of one TCP (or TLS) connection to one server. It runs the handshake itself
/// (INFO, the TLS upgrade, CONNECT, then PING until PONG proves the server accepted the
/// credentials), answers the server's PINGs at once so a busy client never looks dead, and
/// hands every other operation to the connection once the handshake is done.
final class NATSProtocolHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase { case awaitingInfo, awaitingPong, established, finished }

    private var phase = Phase.awaitingInfo
    private var parser = NATSWireParser()
    private var failure: NATSError?
    private let url: NATSServerURL
    private let options: NATSOptions
    private let handshake: EventLoopPromise<NATSServerInfo>
    private let onOperation: @Sendable (NATSServerOperation) -> Void
    private let onClosed: @Sendable (NATSError) -> Void

    init(
        url: NATSServerURL, options: NATSOptions, handshake: EventLoopPromise<NATSServerInfo>,
        onOperation: @escaping @Sendable (NATSServerOperation) -> Void,
        onClosed: @escaping @Sendable (NATSError) -> Void
    ) {
        self.url = url
        self.options = options
        self.handshake = handshake
        self.onOperation = onOperation
        self.onClosed = onClosed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        parser.append(unwrapInboundIn(data))
        do {
            while phase != .finished, let operation = try parser.next() {
                try handle(operation, context: context)
            }
        } catch {
            fail(error as? NATSError ?? .protocolViolation("\(error)"), context: context)
        }
    }

    private func handle(_ operation: NATSServerOperation, context: ChannelHandlerContext) throws {
        if case .ping = operation {
            write("PONG\r\n", context: context)
            return
        }
        switch phase {
        case .awaitingInfo:
            guard case .info(let json) = operation else {
                throw NATSError.protocolViolation("the server did not start with INFO")
            }
            let info = try NATSServerInfo.decode(json)
            adopt(info)
            let useTLS = url.tlsRequired || info.tlsRequired == true
            if useTLS { try startTLS(context: context) }
            var handshakeBytes = NATSConnectMessage(url: url, tls: useTLS, options: options).line()
            handshakeBytes += Array("PING\r\n".utf8)
            write(handshakeBytes, context: context)
            phase = .awaitingPong
        case .awaitingPong:
            switch operation {
            case .pong:
                phase = .established
                handshake.succeed(currentInfo!)
            case .error(let text):
                throw Self.error(forServerError: text, url: url)
            case .info(let json):
                adopt(try NATSServerInfo.decode(json))
            default:
                break
            }
        case .established:
            if case .info(let json) = operation { adopt(try NATSServerInfo.decode(json)) }
            onOperation(operation)
        case .finished:
            break
        }
    }

    private var currentInfo: NATSServerInfo?

    /// The largest delivery is the largest publish plus the headers JetStream adds to it.
    private func adopt(_ info: NATSServerInfo) {
        currentInfo = info
        if let maxPayload = info.maxPayload, maxPayload > 0 { parser.maxPayload = maxPayload + 64 << 10 }
    }

    /// nats-server 2.9 sends INFO in clear text and then expects the TLS handshake, so the TLS
    /// handler goes in front of this one mid-read.
    private func startTLS(context: ChannelHandlerContext) throws {
        let isAddress = url.host.contains(":") || url.host.allSatisfy { $0.isNumber || $0 == "." }
        do {
            let sslContext = try NIOSSLContext(configuration: options.tls)
            let handler = try NIOSSLClientHandler(context: sslContext, serverHostname: isAddress ? nil : url.host)
            try context.pipeline.syncOperations.addHandler(handler, position: .first)
        } catch {
            throw NATSError.tls("cannot start TLS with \(url): \(error)")
        }
    }

    static func error(forServerError text: String, url: NATSServerURL) -> NATSError {
        let lowered = text.lowercased()
        if lowered.contains("authorization violation") || lowered.contains("authentication") {
            return .authorizationViolation(server: url.description)
        }
        if lowered.contains("secure connection") && lowered.contains("tls required") {
            return .tls("the server at \(url) requires TLS: \(text)")
        }
        return .serverError(text)
    }

    private func write(_ text: String, context: ChannelHandlerContext) {
        write(Array(text.utf8), context: context)
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func fail(_ error: NATSError, context: ChannelHandlerContext) {
        if failure == nil { failure = error }
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        let described: NATSError =
            if let error = error as? NATSError { error } else if error is NIOSSLError || error is BoringSSLError {
                .tls("\(error) (server \(url))")
            } else { .connectionLost("\(error)") }
        fail(described, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let previous = phase
        phase = .finished
        switch previous {
        case .awaitingInfo, .awaitingPong:
            handshake.fail(failure ?? .connectionLost("the server at \(url) closed the connection during the handshake"))
        case .established:
            onClosed(failure ?? .connectionLost("the server at \(url) closed the connection"))
        case .finished:
            break
        }
        context.fireChannelInactive()
    }
}
