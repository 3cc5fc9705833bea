import NIOCore

extension NATSConnection {
    /// Publishes `payload` to `subject` and waits for the first reply.
    ///
    /// Replies come back on one wildcard subscription, `_INBOX.<id>.*`, made at the first
    /// request: one SUB for the connection's lifetime instead of one SUB/UNSUB pair per request.
    /// Throws `noResponders` when the server reports that nobody listens on `subject` (status
    /// 503) and `timeout` when no reply comes within `timeout` (default
    /// ``NATSOptions/requestTimeout``).
    public func request(
        _ subject: String, payload: [UInt8] = [], headers: NATSHeaders? = nil, timeout: Duration? = nil
    ) async throws -> NATSMessage {
        let timeout = timeout ?? options.requestTimeout
        let (prefix, token) = try state.withLock { state throws(NATSError) -> (String, String) in
            if state.inbox == nil {
                let prefix = newInbox()
                let sid = state.takeID()
                try send(ByteBuffer(string: "SUB \(prefix).* \(sid)\r\n"), &state)
                state.inbox = (prefix, sid)
            }
            return (state.inbox!.prefix, String(state.takeID(), radix: 36))
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock { state in
                    let scheduled = group.next().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [weak self] () -> Void in
                        self?.timedOut(token, after: timeout)
                    }
                    state.requests[token] = RequestEntry(subject: subject, sent: .now, continuation: continuation, timeout: scheduled)
                }
                do {
                    try publish(subject, payload: payload, replyTo: "\(prefix).\(token)", headers: headers)
                } catch {
                    finishRequest(token, with: .failure(error))
                }
            }
        } onCancel: {
            finishRequest(token, with: .failure(CancellationError()))
        }
    }

    /// No reply within the request's timeout: the request fails, the silence on this channel is
    /// noted, and the server is asked for a PONG (``probeLiveness()``), whose answer decides
    /// whether the connection stays.
    private func timedOut(_ token: String, after timeout: Duration) {
        guard let entry = state.withLock({ state -> RequestEntry? in
            guard let entry = state.requests.removeValue(forKey: token) else { return nil }
            if state.status == .connected, state.unansweredSince == nil {
                state.unansweredSince = max(entry.sent, state.channelSince)
            }
            return entry
        }) else { return }
        entry.continuation.resume(throwing: NATSError.timeout(subject: entry.subject, seconds: timeout.seconds))
        probeLiveness()
    }

    func finishRequest(_ token: String, with result: Result<NATSMessage, Error>) {
        guard let entry = state.withLock({ state -> RequestEntry? in
            guard let entry = state.requests.removeValue(forKey: token) else { return nil }
            // Any reply, "no responders" too, shows the server passes requests on.
            if case .success = result { state.unansweredSince = nil }
            return entry
        }) else { return }
        entry.timeout?.cancel()
        if case .success(let message) = result, message.status == 503 {
            entry.continuation.resume(throwing: NATSError.noResponders(subject: entry.subject))
        } else {
            entry.continuation.resume(with: result)
        }
    }

    /// Routes an operation of the established channel `channel`; operations of a channel that is
    /// no longer the current one (a late read after a reconnect) are dropped.
    func received(_ operation: NATSServerOperation, on channel: any Channel) {
        switch operation {
        case .message(let message):
            deliver(message, on: channel)
        case .pong:
            let waiter = state.withLock { state -> NATSConnection.PongWaiter? in
                guard state.channel === channel else { return nil }
                state.pingsOutstanding = 0
                state.probeAnswered = true
                return state.pongs.popFirst()
            }
            if case .flush(_, let continuation) = waiter { continuation.resume() }
        case .info(let json):
            guard let info = try? NATSServerInfo.decode(json) else { return }
            state.withLock { state in
                guard state.channel === channel else { return }
                state.info = info
                Self.learn(info, &state)
            }
        case .error, .ok, .ping:
            // -ERR after the handshake is followed by the server closing the connection when it
            // matters (the handler records it as the reason); the others need nothing.
            break
        }
    }

    private func deliver(_ message: NATSMessage, on channel: any Channel) {
        enum Target { case none, request(String), waiter(SubscriptionEntry.Waiter) }
        let target = state.withLock { state -> Target in
            guard state.channel === channel else { return .none }
            if let inbox = state.inbox, message.sid == inbox.sid {
                return .request(String(message.subject.dropFirst(inbox.prefix.count + 1)))
            }
            guard var entry = state.subscriptions[message.sid], !entry.ended else { return .none }
            entry.delivered += 1
            var target = Target.none
            if let waiter = entry.waiter {
                entry.waiter = nil
                target = .waiter(waiter)
            } else {
                entry.messages.append(message)
            }
            state.subscriptions[message.sid] = entry
            if let limit = entry.limit, entry.delivered >= limit { _ = Self.end(message.sid, &state) }
            return target
        }
        switch target {
        case .none: break
        case .request(let token): finishRequest(token, with: .success(message))
        case .waiter(let waiter):
            waiter.timeout?.cancel()
            waiter.continuation.resume(returning: message)
        }
    }

    /// Adds the servers an INFO announces to the ones reconnects try, with the credentials of
    /// the first URL given (a cluster shares its accounts).
    static func learn(_ info: NATSServerInfo, _ state: inout State) {
        guard let first = state.servers.first else { return }
        for announced in info.connectURLs ?? [] {
            guard var url = try? NATSServerURL.parse(announced) else { continue }
            url.credentials = first.credentials
            url.tlsRequired = first.tlsRequired
            if !state.servers.contains(where: { $0.host == url.host && $0.port == url.port }) {
                state.servers.append(url)
            }
        }
    }
}
