/// Once a `PlaceForgotten` is shipped, the stream must lose the place's earlier events too; it
/// refuses deletes, so it is rewritten from the log (``StreamRewrite``, docs/REPLICATION.md,
/// "Forgetting after shipping"). The rewrite runs in the shipping task, before the next batch,
/// and its step is in the record, so a replicator stopped part way goes on from it.
extension Replicator {
    /// Asks for the stream to be rewritten from the log before the next batch leaves (as
    /// `vt replicate --rewrite` does): for places forgotten before this replicator knew to.
    public func requestRewrite() throws {
        shared.withLock { if $0.record.rewrite == nil { $0.record.rewrite = .compare } }
        try saveRecord()
    }

    /// What the last rewrite did, nil when none ran since the replicator started.
    public var lastRewrite: RewriteReport? { shared.withLock { $0.lastRewrite } }

    /// Whether the copy reaches the stream's last event: only then can it rebuild every message.
    private func copyHoldsWholeStream() async throws -> Bool {
        let last = try await Self.clusterCall("read the last message of stream \(stream.name)") {
            try await StreamReading.lastBatch(of: stream, jetStream: jetStream)
        }?.summary.last ?? 0
        let copyLast = try Self.storage { try reader.lastSequence() }
        return last <= copyLast
    }

    func rewriteStream(from step: RewriteStep) async throws {
        let forgets = try forgetProgress()
        guard !forgets.underWay else { throw Self.forgetting(in: storeFolder) }
        if shipped.isCopy, step == .compare, try await !copyHoldsWholeStream() {
            // The stream holds events past this copy: it cannot be written again from the copy.
            // The device itself rewrites it once the forget reaches it (a sync), as it erases them.
            // No report: "left as it was" would say the stream holds nothing erased, unchecked.
            shared.withLock { $0.record.rewrite = nil }
            try saveRecord()
            return
        }
        let rewrite = StreamRewrite(jetStream: jetStream, stream: stream, identity: identity, logDirectory: reader.directory) { step in
            self.shared.withLock { $0.record.rewrite = step }
            try self.saveRecord()
        }
        do {
            let uploaded = shared.withLock { $0.uploaded }
            let (report, kept) = try await rewrite.run(from: step, deletingUnnamed: uploaded, photoBucket: bucket)
            if kept != uploaded { try photoList.replace(with: kept, fileSystem: fileSystem) }
            shared.withLock {
                $0.uploaded = kept
                $0.record.photosUploaded = kept.count
                $0.record.rewrite = nil
                $0.lastRewrite = report
            }
            try saveRecord()
        } catch {
            // Another forget rewrites the log's files under the rewrite's reader: try again once
            // it is done (its own PlaceForgotten asks for another rewrite in any case).
            if let now = try? forgetProgress(), now != forgets { throw Self.forgetting(in: storeFolder) }
            if case ReplicationError.cluster(let text) = error {
                throw ReplicationError.rewriting("the stream \(stream.name) is being rewritten to take a forgotten place out of it: \(text)")
            }
            throw error
        }
    }
}
