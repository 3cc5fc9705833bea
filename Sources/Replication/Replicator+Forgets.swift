import EventLog
import VirtualTourist

/// A forget erases a place's events in the log's files, but a reader that has a file open keeps
/// reading the bytes it had: a replicator whose cursor stood in the hot tail when the place was
/// forgotten would read the events whole, and ship them. So a batch leaves only when no forget
/// is under way and none began since its events were read (``ForgetProgress``); otherwise it is
/// dropped, and read again from freshly opened files once the forget is done
/// (docs/REPLICATION.md, "Forgetting before shipping").
extension Replicator {
    /// Opens the cursor again (at the event after the last one batched) when a forget began since
    /// it was opened. Throws ``ReplicationError/forgetting(_:)`` while one is under way.
    func reopenAfterForgets() throws {
        let progress = try forgetProgress()
        guard !progress.underWay else { throw Self.forgetting(in: storeFolder) }
        guard progress.begun != forgetsRead else { return }
        cursor = try Self.storage { try reader.events(from: chain.sequence + 1) }
        carried = nil
        forgetsRead = progress.begun
    }

    /// Whether the batch in hand may leave: no forget under way, none begun since it was read.
    /// When not, the batch is dropped and the chain put back to before it, for a fresh read.
    func batchStillHolds() throws -> Bool {
        let progress = try forgetProgress()
        guard progress.underWay || progress.begun != forgetsRead else { return true }
        pending = nil
        carried = nil
        chain = chainBeforePending
        forgetsRead = nil
        return false
    }

    /// In a store of several devices a forget erases events of every log the store holds, the
    /// copies' too, whose streams may hold them whole (shipped by this store, or by the device
    /// itself): each forget begun since the stream was last known clean asks for its rewrite,
    /// whichever log the `PlaceForgotten` is in. The compare finds what changed; a stream the
    /// forget did not touch stays as it is.
    func noteForgets() throws {
        let progress = try forgetProgress()
        guard !progress.underWay else { throw Self.forgetting(in: storeFolder) }
        let changed = shared.withLock { shared -> Bool in
            guard let seen = shared.record.forgetsSeen else {
                // A record from before this count was kept, or a stream this store never shipped:
                // earlier forgets were handled by their PlaceForgotten (or are the device's to
                // handle, for a copy's stream); count from here.
                shared.record.forgetsSeen = progress.begun
                return true
            }
            guard seen != progress.begun else { return false }
            if shared.record.acknowledgedEvent > 0, shared.record.rewrite == nil { shared.record.rewrite = .compare }
            shared.record.forgetsSeen = progress.begun
            return true
        }
        if changed { try saveRecord() }
    }

    func forgetProgress() throws -> ForgetProgress {
        do { return try ForgetProgress.read(store: storeFolder, fileSystem: fileSystem) } catch {
            throw ReplicationError.storage("cannot tell whether a place is being forgotten in \(storeFolder): \(error)")
        }
    }

    static func forgetting(in store: String) -> ReplicationError {
        .forgetting("a place is being forgotten in \(store); its events are shipped once they are erased")
    }
}
