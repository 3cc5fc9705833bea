import NIOCore
import NIOHTTPTypes
import Synchronization

/// Counts a server's open connections and closes each one accepted past the limit; installs
/// each connection's ``RequestHeadCheck``.
final class ConnectionCount: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Connections open now, the refused ones not counted.
    var current: Int { open.load(ordering: .relaxed) }

    /// The handler each new connection gets.
    func handler() -> any RemovableChannelHandler { Gate(count: self) }

    /// Takes a place for one connection; false when none is left (and nothing is taken).
    fileprivate func enter() -> Bool {
        if open.wrappingAdd(1, ordering: .relaxed).newValue <= limit { return true }
        open.wrappingSubtract(1, ordering: .relaxed)
        return false
    }

    fileprivate func leave() { open.wrappingSubtract(1, ordering: .relaxed) }

    private final class Gate: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart
        let count: ConnectionCount
        private var entered = false
        private var refused = false
        private var closesAfterResponse = false

        init(count: ConnectionCount) { self.count = count }

        func handlerAdded(context: ChannelHandlerContext) {
            RequestHeadCheck.install(in: context)
        }

        func channelActive(context: ChannelHandlerContext) {
            admit(context)
            context.fireChannelActive()
        }

        private func admit(_ context: ChannelHandlerContext) {
            guard !entered, !refused else { return }
            entered = count.enter()
            refused = !entered
            if refused { context.close(promise: nil) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            leave()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { leave() }

        private func leave() {
            if entered { count.leave() }
            entered = false
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head(let head):
                if head.headerFields[.connection]?.lowercased() == "close" { closesAfterResponse = true }
                context.write(data, promise: promise)
            case .body:
                context.write(data, promise: promise)
            case .end:
                guard closesAfterResponse else { return context.write(data, promise: promise) }
                context.writeAndFlush(data, promise: promise)
                context.close(promise: nil)
            }
        }
    }
}
