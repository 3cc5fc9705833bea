import NIOCore
import NIOPosix
import Synchronization

/// A connection to a NATS server or cluster: publish, subscribe, request/reply and flush, with
/// reconnection to any server of the cluster when the one in use goes away.
///
/// ```swift
/// let nats = try await NATSConnection.connect("nats://127.0.0.1:4500,nats://127.0.0.1:4501")
/// let subscription = try nats.subscribe("photos.>")
/// try nats.publish("photos.new", payload: Array("hello".utf8))
/// let message = try await subscription.next(timeout: .seconds(1))
/// let reply = try await nats.request("service.echo", payload: [1, 2, 3])
/// await nats.close()
/// ```
///
/// All state sits behind one lock, and no channel operation runs while it is held: writes are
/// queued on the channel's event loop in the order the lock was taken (so a reconnect's SUBs and
/// buffered publishes go out before anything published after it), and continuations are
/// resumed after the lock is released (a resumed task may call straight back in).
public final class NATSConnection: Sendable {
    public let options: NATSOptions
    let group: any EventLoopGroup
    let state: SleepingLock<State>

    enum Status: Sendable { case connecting, connected, reconnecting, closed }

    struct State: Sendable {
        var status = Status.connecting
        var channel: (any Channel)?
        var server: NATSServerURL?
        var info: NATSServerInfo?
        /// The URLs given, then the ones the servers announced (`connect_urls`).
        var servers: [NATSServerURL]
        var subscriptions: [UInt64: SubscriptionEntry] = [:]
        var nextID: UInt64 = 1
        /// Publishes (and PINGs of flushes) made while reconnecting.
        var pending = ByteBuffer()
        /// One entry per PING in flight, answered in order by PONGs.
        var pongs = CircularBuffer<PongWaiter>()
        var requests: [String: RequestEntry] = [:]
        var inbox: (prefix: String, sid: UInt64)?
        var pingsOutstanding = 0
        var pinger: RepeatedTask?
        /// A probe under way on the current channel (``probeLiveness()``), and whether a PONG
        /// came since it was sent.
        var probing = false
        var probeAnswered = false
        var probes = (passed: 0, failed: 0)
        /// When the oldest request that timed out on the current channel, with no reply to any
        /// request since, was sent (``NATSOptions/requestSilenceLimit``); nil after a reply.
        var unansweredSince: ContinuousClock.Instant?
        /// When the current channel was installed: a request sent before it, while reconnecting,
        /// counts from here.
        var channelSince = ContinuousClock.now
        /// Moves to another server because requests went unanswered on one that answered PINGs.
        var silenceMoves = 0
        var reconnects = 0
        var closeReason: NATSError?

        mutating func takeID() -> UInt64 {
            defer { nextID += 1 }
            return nextID
        }
    }

    enum PongWaiter: Sendable {
        /// A liveness ping, or a flush that timed out (its PONG still arrives and is skipped).
        case none
        case flush(id: UInt64, CheckedContinuation<Void, Error>)
    }

    struct RequestEntry: Sendable {
        var subject: String
        var sent: ContinuousClock.Instant
        var continuation: CheckedContinuation<NATSMessage, Error>
        var timeout: Scheduled<Void>?
    }

    init(servers: [NATSServerURL], options: NATSOptions, group: any EventLoopGroup) {
        self.options = options
        self.group = group
        self.state = SleepingLock(State(servers: servers))
    }

    deinit {
        let channel = state.withLock { $0.channel }
        channel?.close(promise: nil)
    }

    /// Connects to the first server of `urls` (comma-separated, see ``NATSServerURL``) that
    /// accepts, trying them in turn until ``NATSOptions/connectTimeout``.
    public static func connect(_ urls: String, options: NATSOptions = NATSOptions()) async throws -> NATSConnection {
        try await connect(NATSServerURL.parseList(urls), options: options)
    }

    public static func connect(_ servers: [NATSServerURL], options: NATSOptions = NATSOptions()) async throws -> NATSConnection {
        guard !servers.isEmpty else { throw NATSError.invalidURL("", reason: "no URL given") }
        let connection = NATSConnection(servers: servers, options: options, group: MultiThreadedEventLoopGroup.singleton)
        let deadline = ContinuousClock.now + options.connectTimeout
        let (channel, info, server) = try await connection.establish(until: deadline, after: nil)
        try connection.install(channel: channel, info: info, server: server, resubscribe: false)
        return connection
    }

    /// The INFO of the server in use (or the last one).
    public var serverInfo: NATSServerInfo? { state.withLock { $0.info } }
    /// The server in use, nil while reconnecting.
    public var connectedServer: NATSServerURL? { state.withLock { $0.status == .connected ? $0.server : nil } }
    public var isConnected: Bool { state.withLock { $0.status == .connected } }
    public var isClosed: Bool { state.withLock { $0.status == .closed } }
    /// How many times the connection was reestablished.
    public var reconnectCount: Int { state.withLock { $0.reconnects } }
    /// Liveness probes after a request timed out: answered in time (the connection kept), or not
    /// (the connection taken for dead and remade).
    public var probeCounts: (passed: Int, failed: Int) { state.withLock { $0.probes } }
    /// Times the connection moved to another server because its requests went unanswered for
    /// ``NATSOptions/requestSilenceLimit`` on a server that answered PINGs.
    public var silenceMoveCount: Int { state.withLock { $0.silenceMoves } }
    /// Why the connection closed for good, when it was not `close()`.
    public var closeReason: NATSError? { state.withLock { $0.closeReason } }

    /// A subject no one else uses, for replies.
    public func newInbox() -> String { "_INBOX." + NUID.next() }

    // MARK: Publishing

    public func publish(_ subject: String, payload: [UInt8] = [], replyTo: String? = nil, headers: NATSHeaders? = nil) throws {
        try validateToken(subject, what: "subject", allowWildcards: false)
        if let replyTo { try validateToken(replyTo, what: "reply subject", allowWildcards: false) }
        let headerBytes = headers?.encoded()
        let size = (headerBytes?.count ?? 0) + payload.count
        var frame = ByteBuffer()
        frame.reserveCapacity(size + subject.utf8.count + 64)
        let reply = replyTo.map { " \($0)" } ?? ""
        if let headerBytes {
            frame.writeString("HPUB \(subject)\(reply) \(headerBytes.count) \(size)\r\n")
            frame.writeBytes(headerBytes)
        } else {
            frame.writeString("PUB \(subject)\(reply) \(size)\r\n")
        }
        frame.writeBytes(payload)
        frame.writeString("\r\n")
        try state.withLock { state throws(NATSError) in
            if let limit = state.info?.maxPayload, limit > 0, size > limit { throw .payloadTooLarge(size: size, limit: limit) }
            try send(frame, &state)
        }
    }

    /// Queues bytes for the server: on the event loop when connected, in the reconnect buffer
    /// while reconnecting.
    func send(_ bytes: ByteBuffer, _ state: inout State) throws(NATSError) {
        switch state.status {
        case .connected:
            let channel = state.channel!
            channel.eventLoop.execute { channel.writeAndFlush(bytes, promise: nil) }
        case .connecting, .reconnecting:
            guard state.pending.readableBytes + bytes.readableBytes <= options.reconnectBufferLimit else {
                throw .reconnectBufferFull(limit: options.reconnectBufferLimit)
            }
            var bytes = bytes
            state.pending.writeBuffer(&bytes)
        case .closed:
            throw state.closeReason ?? .connectionClosed
        }
    }

    // MARK: Subscribing

    public func subscribe(_ subject: String, queue: String? = nil) throws -> NATSSubscription {
        try validateToken(subject, what: "subject")
        if let queue { try validateToken(queue, what: "queue group", allowWildcards: false) }
        let sid = try state.withLock { state throws(NATSError) -> UInt64 in
            let sid = state.takeID()
            let entry = SubscriptionEntry(subject: subject, queue: queue)
            try send(ByteBuffer(string: entry.subscribeLines(sid: sid)), &state)
            state.subscriptions[sid] = entry
            return sid
        }
        return NATSSubscription(subject: subject, queue: queue, sid: sid, connection: self)
    }

    func unsubscribe(sid: UInt64, after max: Int?) throws {
        if let max, max < 1 { throw NATSError.invalidArgument("unsubscribe after \(max) messages: the count must be positive") }
        let waiter = try state.withLock { state throws(NATSError) -> SubscriptionEntry.Waiter? in
            guard var entry = state.subscriptions[sid], !entry.ended else { return nil }
            if let max, entry.delivered < max {
                entry.limit = max
                state.subscriptions[sid] = entry
                if state.status != .closed { try send(ByteBuffer(string: "UNSUB \(sid) \(max)\r\n"), &state) }
                return nil
            }
            if state.status != .closed { try send(ByteBuffer(string: "UNSUB \(sid)\r\n"), &state) }
            return Self.end(sid, &state)
        }
        waiter?.timeout?.cancel()
        waiter?.continuation.resume(returning: nil)
    }

    /// Marks a subscription ended; drops it when nothing is left to read, and hands back the
    /// reader waiting on an empty one (to be told "no more").
    static func end(_ sid: UInt64, _ state: inout State) -> SubscriptionEntry.Waiter? {
        guard var entry = state.subscriptions[sid] else { return nil }
        entry.ended = true
        let waiter = entry.messages.isEmpty ? entry.waiter : nil
        if entry.messages.isEmpty { state.subscriptions[sid] = nil } else { state.subscriptions[sid] = entry }
        return waiter
    }

    func nextMessage(sid: UInt64, subject: String, timeout: Duration?) async throws -> NATSMessage? {
        let waiterID = state.withLock { $0.takeID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Outcome { case ready(Result<NATSMessage?, Error>), waiting }
                let outcome = state.withLock { state -> Outcome in
                    guard var entry = state.subscriptions[sid] else {
                        return .ready(state.status == .closed && state.closeReason != nil ? .failure(state.closeReason!) : .success(nil))
                    }
                    if let message = entry.messages.popFirst() {
                        if entry.ended && entry.messages.isEmpty { state.subscriptions[sid] = nil } else { state.subscriptions[sid] = entry }
                        return .ready(.success(message))
                    }
                    if let failure = entry.failure {
                        state.subscriptions[sid] = nil
                        return .ready(.failure(failure))
                    }
                    guard entry.waiter == nil else {
                        return .ready(.failure(NATSError.invalidArgument("two readers wait on the subscription to '\(subject)' at once")))
                    }
                    let scheduled = timeout.map { timeout in
                        group.next().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [weak self] () -> Void in
                            self?.expireWaiter(sid: sid, id: waiterID, error: .timeout(subject: subject, seconds: timeout.seconds))
                        }
                    }
                    entry.waiter = .init(id: waiterID, continuation: continuation, timeout: scheduled)
                    state.subscriptions[sid] = entry
                    return .waiting
                }
                if case .ready(let result) = outcome { continuation.resume(with: result) }
            }
        } onCancel: {
            expireWaiter(sid: sid, id: waiterID, error: nil)
        }
    }

    /// Ends one wait: with `error`, or with CancellationError when the task was cancelled.
    private func expireWaiter(sid: UInt64, id: UInt64, error: NATSError?) {
        let waiter = state.withLock { state -> SubscriptionEntry.Waiter? in
            guard let waiter = state.subscriptions[sid]?.waiter, waiter.id == id else { return nil }
            state.subscriptions[sid]!.waiter = nil
            return waiter
        }
        waiter?.timeout?.cancel()
        waiter?.continuation.resume(throwing: error ?? CancellationError())
    }

    // MARK: Flush

    /// Returns once the server has processed everything sent before (a PING answered by PONG).
    public func flush(timeout: Duration? = nil) async throws {
        let timeout = timeout ?? options.requestTimeout
        let id = state.withLock { $0.takeID() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let failure = state.withLock { state -> NATSError? in
                do {
                    try send(ByteBuffer(string: "PING\r\n"), &state)
                } catch let error as NATSError {
                    return error
                } catch {
                    return .connectionLost("\(error)")
                }
                state.pongs.append(.flush(id: id, continuation))
                return nil
            }
            if let failure { return continuation.resume(throwing: failure) }
            group.next().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [weak self] () -> Void in
                self?.expireFlush(id: id, seconds: timeout.seconds)
                self?.probeLiveness()
            }
        }
    }

    private func expireFlush(id: UInt64, seconds: Double) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Error>? in
            guard let index = state.pongs.firstIndex(where: { if case .flush(id, _) = $0 { true } else { false } }),
                case .flush(_, let continuation) = state.pongs[index]
            else { return nil }
            state.pongs[index] = .none
            return continuation
        }
        continuation?.resume(throwing: NATSError.timeout(subject: "PING", seconds: seconds))
    }

    // MARK: Closing

    /// Sends what is queued (waiting up to two seconds for the server), then closes. Readers
    /// of subscriptions see their end; requests in flight fail with `connectionClosed`.
    public func close() async {
        if isConnected { try? await flush(timeout: .seconds(2)) }
        let channel = shutDown(reason: nil)
        try? await channel?.close().get()
    }

    /// Moves to `closed` and tells everyone waiting; returns the channel to close.
    @discardableResult
    func shutDown(reason: NATSError?) -> (any Channel)? {
        let (channel, waiters, requests, pongs, pinger) = state.withLock { state in
            if state.status == .closed { return (nil, [], [], [], nil) as ((any Channel)?, [SubscriptionEntry.Waiter], [RequestEntry], [PongWaiter], RepeatedTask?) }
            state.status = .closed
            state.closeReason = reason
            var waiters: [SubscriptionEntry.Waiter] = []
            for (sid, var entry) in state.subscriptions {
                entry.ended = true
                entry.failure = reason
                if let waiter = entry.waiter { waiters.append(waiter) }
                entry.waiter = nil
                state.subscriptions[sid] = entry.messages.isEmpty && reason == nil ? nil : entry
            }
            let requests = Array(state.requests.values)
            state.requests = [:]
            let pongs = Array(state.pongs)
            state.pongs = []
            defer { state.channel = nil; state.pinger = nil }
            return (state.channel, waiters, requests, pongs, state.pinger)
        }
        pinger?.cancel()
        let error = reason ?? .connectionClosed
        for waiter in waiters {
            waiter.timeout?.cancel()
            if let reason { waiter.continuation.resume(throwing: reason) } else { waiter.continuation.resume(returning: nil) }
        }
        for request in requests {
            request.timeout?.cancel()
            request.continuation.resume(throwing: error)
        }
        for case .flush(_, let continuation) in pongs { continuation.resume(throwing: error) }
        return channel
    }
}
