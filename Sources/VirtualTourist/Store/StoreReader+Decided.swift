/// Which other event decided what became of an event (docs/DEVICES.md, "Time travel and
/// audit"): in a store of several devices an action made on one device can meet another
/// device's, and `vt show` names the one that won.
extension StoreReader {
    /// The event that decided `recorded`'s fate, and how, when another event did: for an event
    /// the rules passed over, the removal of its pin or the request its album answers; for a
    /// drag that was folded, a later drag of the same pin from another device, which replaced
    /// its place. Nil when nothing else decided it.
    public func decidingEvent(for recorded: RecordedEvent, verdict: Verdict) throws -> (event: RecordedEvent, how: String)? {
        guard let pin = recorded.event.pin else { return nil }
        switch verdict {
        case .anotherDevicesView:
            return nil
        case .passedOver:
            let before = try state(at: recorded.sequence - 1)
            guard let current = before.pins[pin] else {
                let removal = try history(of: pin).last { event in
                    guard event.sequence < recorded.sequence else { return false }
                    switch event.event {
                    case .pinRemoved, .placeForgotten: return true
                    default: return false
                    }
                }
                return removal.map { ($0, "this event had removed its pin") }
            }
            switch recorded.event {
            case .photosListed, .photoDownloaded, .photoDownloadFailed, .albumRequestFailed:
                guard let requestedAt = current.album.requestedAt else { return nil }
                let request = try causes(of: requestedAt)[0]
                let another = request.origin?.device != recorded.origin?.device
                return (request, another ? "the album's collection answers this request, made on another device" : "the album's collection answers this later request")
            default:
                return nil
            }
        case .folded:
            guard case .pinDragged = recorded.event, let device = recorded.origin?.device else { return nil }
            let replacing = try history(of: pin, from: recorded.sequence + 1).first { event in
                if case .pinDragged = event.event { return true }
                return false
            }
            guard let replacing, replacing.origin?.device != device else { return nil }
            return (replacing, "this later drag from another device replaced its place")
        }
    }
}
