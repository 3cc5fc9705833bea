import Foundation
import NIOCore

extension NATSConnection {
    /// After a request or a flush timed out: a PING the server must answer within
    /// ``NATSOptions/probeTimeout``, or the channel is closed, which starts a reconnect.
    ///
    /// A connection whose packets go nowhere (a cable pulled out, a server frozen) fails no write
    /// and refuses nothing: TCP retransmits for minutes, and the periodic pings find it only
    /// after ``NATSOptions/maxPingsOutstanding`` intervals. A timed-out request is the first sign,
    /// but not proof (a JetStream that is electing a leader does not reply either, while its
    /// server answers at once), so the server's own PONG decides. One probe at a time; any PONG
    /// that arrives after it was sent answers it, since a PONG proves the channel carries bytes.
    func probeLiveness() {
        let channel = state.withLock { state -> (any Channel)? in
            guard state.status == .connected, let channel = state.channel, !state.probing else { return nil }
            state.probing = true
            state.probeAnswered = false
            state.pongs.append(.none)
            return channel
        }
        guard let channel else { return }
        channel.eventLoop.execute { channel.writeAndFlush(ByteBuffer(string: "PING\r\n"), promise: nil) }
        channel.eventLoop.scheduleTask(in: .nanoseconds(options.probeTimeout.nanoseconds)) { [weak self] () -> Void in
            self?.judgeProbe(on: channel)
        }
    }

    /// The probe's verdict, `probeTimeout` after its PING. A PONG keeps the connection, unless
    /// requests have gone unanswered for ``NATSOptions/requestSilenceLimit`` and another server
    /// is known: the server is alive but passes requests to nobody who answers.
    private func judgeProbe(on channel: any Channel) {
        let name = { (server: NATSServerURL?) in server.map { "\($0)" } ?? "the server" }
        let reason = state.withLock { state -> String? in
            guard state.channel === channel, state.status == .connected, state.probing else { return nil }
            state.probing = false
            guard state.probeAnswered else {
                state.probes.failed += 1
                return "\(name(state.server)) answered no PING within \(options.probeTimeout.seconds) s after a request timed out"
            }
            state.probes.passed += 1
            guard let limit = options.requestSilenceLimit, let since = state.unansweredSince, ContinuousClock.now - since >= limit,
                state.servers.contains(where: { $0 != state.server })
            else { return nil }
            state.silenceMoves += 1
            return "\(name(state.server)) answered PINGs but no request for \((ContinuousClock.now - since).seconds.formatted(.number.precision(.fractionLength(1)))) s"
        }
        guard let reason else { return }
        // Named before the close, which would otherwise read as the server's doing.
        lost(channel, error: .connectionLost(reason))
        channel.close(promise: nil)
    }
}
