import NIOCore
import NIOPosix

extension NATSConnection {
    /// Tries the servers in turn, starting after `previous` (the one that just failed is tried
    /// last), in rounds separated by ``NATSOptions/reconnectWait``, until one completes the
    /// handshake or `deadline` passes (with no deadline, until the connection is closed). Wrong
    /// credentials end the search at once: every server of a cluster shares the accounts, so
    /// another one would refuse them too.
    func establish(until deadline: ContinuousClock.Instant?, after previous: NATSServerURL?)
        async throws -> (any Channel, NATSServerInfo, NATSServerURL)
    {
        var lastError = "no server tried"
        var tried = false
        while true {
            let servers = state.withLock { $0.servers }
            var order = servers
            if let previous, let index = servers.firstIndex(of: previous) {
                order = Array(servers[(index + 1)...] + servers[...index])
            }
            for server in order {
                if state.withLock({ $0.status == .closed }) { throw NATSError.connectionClosed }
                let remaining = deadline.map { $0 - .now } ?? options.attemptTimeout
                guard remaining > .zero else { break }
                // An attempt cut short by the deadline says less than a full one before it (a
                // refused certificate, a refused connection), so it does not replace its error.
                let cutShort = remaining < options.attemptTimeout && tried
                tried = true
                do {
                    return try await attempt(server, within: min(remaining, options.attemptTimeout))
                } catch let error as NATSError {
                    if case .authorizationViolation = error { throw error }
                    if !cutShort { lastError = "\(server): \(error)" }
                } catch {
                    if !cutShort { lastError = "\(server): \(error)" }
                }
            }
            if let deadline, ContinuousClock.now + options.reconnectWait >= deadline {
                throw NATSError.unreachable(urls: order.map(\.description), lastError: lastError)
            }
            try await Task.sleep(for: options.reconnectWait)
        }
    }

    /// One TCP connection and handshake, within `limit`.
    private func attempt(_ server: NATSServerURL, within limit: Duration) async throws -> (any Channel, NATSServerInfo, NATSServerURL) {
        let eventLoop = group.next()
        let handshake = eventLoop.makePromise(of: NATSServerInfo.self)
        let options = options
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(limit.nanoseconds))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { [weak self] channel in
                // The handler reports to the connection weakly: a connection nobody holds any
                // more must be able to go away (its deinit closes the channel).
                channel.eventLoop.makeCompletedFuture {
                    let handler = NATSProtocolHandler(
                        url: server, options: options, handshake: handshake,
                        onOperation: { [weak self] operation in self?.received(operation, on: channel) },
                        onClosed: { [weak self] error in self?.lost(channel, error: error) }
                    )
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let started = ContinuousClock.now
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: server.host, port: server.port).get()
        } catch {
            handshake.fail(error)
            throw error
        }
        let timeout = eventLoop.scheduleTask(in: .nanoseconds(limit.nanoseconds)) { channel.close(promise: nil) }
        do {
            let info = try await handshake.futureResult.get()
            timeout.cancel()
            return (channel, info, server)
        } catch {
            timeout.cancel()
            channel.close(promise: nil)
            if case NATSError.connectionLost = error, ContinuousClock.now - started >= limit {
                throw NATSError.connectionLost("no handshake from \(server) within \(limit.seconds) s, or it closed the connection")
            }
            throw error
        }
    }

    /// Makes a handshaken channel the connection's, re-creating the subscriptions (after a
    /// reconnect) and sending what was buffered meanwhile, then starts the liveness pings.
    func install(channel: any Channel, info: NATSServerInfo, server: NATSServerURL, resubscribe: Bool) throws {
        let closed = state.withLock { state -> Bool in
            guard state.status != .closed else { return true }
            var bytes = ByteBuffer()
            if resubscribe {
                if let inbox = state.inbox { bytes.writeString("SUB \(inbox.prefix).* \(inbox.sid)\r\n") }
                for (sid, entry) in state.subscriptions.sorted(by: { $0.key < $1.key }) where !entry.ended {
                    bytes.writeString(entry.subscribeLines(sid: sid))
                }
                state.reconnects += 1
            }
            bytes.writeBuffer(&state.pending)
            state.pending = ByteBuffer()
            state.status = .connected
            state.channel = channel
            state.info = info
            state.server = server
            state.pingsOutstanding = 0
            state.probing = false
            state.unansweredSince = nil
            state.channelSince = .now
            Self.learn(info, &state)
            if bytes.readableBytes > 0 {
                let toSend = bytes
                channel.eventLoop.execute { channel.writeAndFlush(toSend, promise: nil) }
            }
            let interval = TimeAmount.nanoseconds(options.pingInterval.nanoseconds)
            state.pinger = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
                self?.checkLiveness(channel)
            }
            return false
        }
        if closed {
            channel.close(promise: nil)
            throw NATSError.connectionClosed
        }
        // The channel may have died between the handshake and this point; its close was then
        // ignored as belonging to no connection, so it is handled here.
        if !channel.isActive { lost(channel, error: .connectionLost("the server at \(server) closed the connection")) }
    }

    /// A PING every ``NATSOptions/pingInterval``; too many unanswered ones close the channel,
    /// which starts a reconnect.
    private func checkLiveness(_ channel: any Channel) {
        let dead = state.withLock { state -> Bool in
            guard state.channel === channel, state.status == .connected else { return false }
            if state.pingsOutstanding >= options.maxPingsOutstanding { return true }
            state.pingsOutstanding += 1
            state.pongs.append(.none)
            channel.eventLoop.execute { channel.writeAndFlush(ByteBuffer(string: "PING\r\n"), promise: nil) }
            return false
        }
        if dead { channel.close(promise: nil) }
    }

    /// The current channel closed without `close()`: fail what waited on that server, then
    /// reconnect in the background (or close for good when reconnecting is off).
    func lost(_ channel: any Channel, error: NATSError) {
        let outcome = state.withLock { state -> (pongWaiters: [PongWaiter], previous: NATSServerURL?)? in
            guard state.channel === channel, state.status == .connected else { return nil }
            state.channel = nil
            state.pinger?.cancel()
            state.pinger = nil
            state.status = .reconnecting
            let pongs = Array(state.pongs)
            state.pongs = []
            return (pongs, state.server)
        }
        guard let outcome else { return }
        for case .flush(_, let continuation) in outcome.pongWaiters {
            continuation.resume(throwing: NATSError.connectionLost("\(error)"))
        }
        guard options.reconnect, !isFatal(error) else {
            shutDown(reason: error)
            return
        }
        Task { [self] in
            do {
                let deadline = options.maxReconnectTime.map { ContinuousClock.now + $0 }
                let (channel, info, server) = try await establish(until: deadline, after: outcome.previous)
                try install(channel: channel, info: info, server: server, resubscribe: true)
            } catch {
                shutDown(reason: error as? NATSError ?? .connectionLost("\(error)"))
            }
        }
    }

    private func isFatal(_ error: NATSError) -> Bool {
        if case .authorizationViolation = error { return true }
        return false
    }
}
