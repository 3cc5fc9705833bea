import Synchronization
import VirtualTourist

/// Pushes what changed to every open page, as server-sent events (`text/event-stream`).
///
/// Frames name what changed, not the data: `event: change` with
/// `{"first": 41, "seq": 43, "pins": ["3fa2…"], "region": false}`, and pages fetch what they
/// show; `event: photos` names photos whose bytes a sync stored after their album was shown. A page that sees `first` jump past the last `seq` it saw (a frame dropped for a slow
/// page, or a reconnect) fetches everything again. `event: hello` opens each stream with the
/// current sequence number; a comment line every ``WebOptions/heartbeat`` keeps idle streams
/// honest about dead connections.
final class LiveUpdates: Sendable {
    private struct Subscribers {
        var next = 0
        var streams: [Int: AsyncStream<String>.Continuation] = [:]
        var stopped = false
    }

    private let subscribers = Mutex(Subscribers())
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let store: TouristStore
    /// Frames kept for a page that reads slowly; past this the oldest go (and the page resyncs).
    static let backlog = 1_000

    init(store: TouristStore, heartbeat: Duration) {
        self.store = store
        let changes = store.changes()
        let forward = Task { [weak self] in
            for await change in changes {
                guard let self else { return }
                self.broadcast(Self.frame(for: change))
            }
            self?.stop()
        }
        let beat = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                guard let self, !Task.isCancelled else { return }
                self.broadcast(": keep-alive\n\n")
            }
        }
        tasks.withLock { $0 = [forward, beat] }
    }

    /// A new stream of frames, starting with `hello`. It ends when the server stops.
    func subscribe() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(Self.backlog))
        let seq = store.lastSequence
        continuation.yield("retry: 1000\nevent: hello\ndata: {\"seq\":\(seq)}\n\n")
        let key: Int? = subscribers.withLock { subscribers in
            if subscribers.stopped { return nil }
            defer { subscribers.next += 1 }
            subscribers.streams[subscribers.next] = continuation
            return subscribers.next
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.streams.removeValue(forKey: key) }
        }
        return stream
    }

    var subscriberCount: Int { subscribers.withLock { $0.streams.count } }

    /// Ends every stream (pages reconnect to whatever serves next).
    func stop() {
        let streams = subscribers.withLock { subscribers in
            subscribers.stopped = true
            defer { subscribers.streams = [:] }
            return Array(subscribers.streams.values)
        }
        for stream in streams { stream.finish() }
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    private func broadcast(_ frame: String) {
        let streams = subscribers.withLock { Array($0.streams.values) }
        for stream in streams { stream.yield(frame) }
    }

    static func frame(for change: StoreChange) -> String {
        if !change.photosArrived.isEmpty { return photosFrame(change) }
        var pins: [String] = []
        var seen = Set<PinID>()
        var region = false
        for recorded in change.events {
            if let pin = recorded.event.pin, seen.insert(pin).inserted { pins.append(pin.description) }
            if case .regionChanged = recorded.event { region = true }
        }
        // Events that sorted before others changed the history from where the first of them
        // lies: a page showing a point after it draws it again.
        let first = change.historyChangedFrom ?? change.events.first?.sequence ?? change.state.sequence
        let list = pins.map { "\"\($0)\"" }.joined(separator: ",")
        return "id: \(change.state.sequence)\nevent: change\ndata: {\"first\":\(first),\"seq\":\(change.state.sequence),\"pins\":[\(list)],\"region\":\(region)}\n\n"
    }

    /// `event: photos` with `{"pins": ["3fa2…"], "photos": ["9c1e…"]}`: the bytes of these photos
    /// are stored now, and these pins' albums show them. No sequence number moved, so no `id`.
    static func photosFrame(_ change: StoreChange) -> String {
        let pins = change.state.pins.values.filter { pin in pin.album.slots.contains { $0.digest.map(change.photosArrived.contains) ?? false } }
            .map(\.id.description).sorted()
        let photos = change.photosArrived.map(\.description).sorted()
        let list = { (items: [String]) in items.map { "\"\($0)\"" }.joined(separator: ",") }
        return "event: photos\ndata: {\"pins\":[\(list(pins))],\"photos\":[\(list(photos))]}\n\n"
    }
}
