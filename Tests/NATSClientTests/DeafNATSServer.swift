import NIOCore
import NIOPosix

/// A server that speaks just enough of the NATS protocol to look alive and passes nothing on: it
/// sends its INFO, answers every PING with a PONG and drops everything else. It is what a client
/// sees of a nats-server whose JetStream API has stopped answering while the server still
/// answers its clients (nats-io/nats-server#4034): connected, every probe answered, no request
/// ever replied to. A real TCP listener on loopback.
final class DeafNATSServer: Sendable {
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    init() async throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Handler()) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    /// Reads the client's bytes line by line: a line that is `PING` gets a `PONG`. A payload
    /// that is the word PING would too; the tests send none.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var pending: [UInt8] = []

        func channelActive(context: ChannelHandlerContext) {
            let info = #"INFO {"server_id":"deaf","server_name":"deaf","version":"2.9.10","max_payload":1048576,"headers":true,"jetstream":true}"#
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: info + "\r\n")), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            pending += buffer.readBytes(length: buffer.readableBytes) ?? []
            var start = 0
            var pongs = 0
            var index = 0
            while index + 1 < pending.count {
                if pending[index] == 0x0D, pending[index + 1] == 0x0A {
                    if pending[start..<index].elementsEqual("PING".utf8) { pongs += 1 }
                    index += 2
                    start = index
                } else {
                    index += 1
                }
            }
            pending.removeFirst(start)
            guard pongs > 0 else { return }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: String(repeating: "PONG\r\n", count: pongs))), promise: nil)
        }
    }
}
