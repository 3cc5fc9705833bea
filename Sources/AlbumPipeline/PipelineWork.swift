import BlobStore
import PhotoSources
import VirtualTourist

/// The two kinds of work: a search that becomes PhotosListed (or AlbumRequestFailed), and a
/// download that becomes PhotoDownloaded (or PhotoDownloadFailed). Each records its result
/// as soon as it has it; a cancelled one records nothing.
struct PipelineWork: Sendable {
    let store: TouristStore
    let source: any PhotoSource
    let limiter: RequestLimiter

    /// Reasons are kept short in the log.
    static let maxReason = 400

    func search(_ request: AlbumRequest, cause: UInt64?, pipeline: PipelineCore) async {
        let page: PhotoSearchPage
        do {
            page = try await source.search(
                latitude: request.place.latitude, longitude: request.place.longitude, page: Int(request.page),
                perPage: Int(request.perPage))
        } catch {
            guard error.code != .cancelled, !Task.isCancelled else { return }
            await record(pipeline, "recording pin \(request.pin)'s failed search") {
                try await store.recordRequestFailure(
                    pin: request.pin, collection: request.collection, reason: Self.reason(error.message), cause: cause)
            }
            return
        }
        guard !Task.isCancelled else { return }
        let history = await photoHistory(for: request, pipeline: pipeline)
        // One slot a photo: a service that lists a photo twice gives it once (docs/DEVICES.md).
        var seen = Set<PhotoIdentity>()
        let photos = history.choose(from: page.photos).map(Self.listed).filter { seen.insert($0.identity).inserted }
            .prefix(Int(request.perPage))
        let listing = PhotoListing(
            pin: request.pin, collection: request.collection, page: request.page,
            pages: UInt32(clamping: max(0, page.pages)), total: UInt64(max(0, page.total)), photos: Array(photos))
        await record(pipeline, "recording pin \(request.pin)'s listing") {
            try await store.recordListing(listing, cause: cause)
        }
    }

    /// What the pin showed before a New Collection (nothing to avoid for its first album).
    /// Reading the pin's events is file I/O, so it runs off Swift's cooperative pool.
    private func photoHistory(for request: AlbumRequest, pipeline: PipelineCore) async -> PhotoHistory {
        guard request.collection > 1 else { return PhotoHistory() }
        let store = store
        do {
            let events = try await onBlockingThread { try store.history(of: request.pin) }
            return PhotoHistory(events: events, before: request.collection)
        } catch {
            // The listing still goes on; only the avoiding of earlier photos is lost.
            await pipeline.note(error, doing: "reading pin \(request.pin)'s earlier photos")
            return PhotoHistory()
        }
    }

    func download(_ url: String, pin: PinID, collection: UInt32, slot: UInt32, cause: UInt64?, pipeline: PipelineCore) async {
        do { try await limiter.acquire() } catch { return }
        defer { limiter.release() }
        guard !Task.isCancelled else { return }
        let failure: String
        do {
            let bytes = try await source.image(at: url)
            guard !Task.isCancelled else { return }
            let lease = try await onBlockingThread { [store] in try store.storePhoto(bytes) }
            await record(pipeline, "recording photo \(slot) of pin \(pin)") {
                try await store.recordDownload(lease, pin: pin, collection: collection, slot: slot, cause: cause)
            }
            return
        } catch let error as PhotoSourceError {
            guard error.code != .cancelled, !Task.isCancelled else { return }
            failure = error.message
        } catch let error as DomainError where error.code == .invalidArgument {
            failure = "the download from \(url) is not a photo: \(error.message)"
        } catch {
            failure = "the photo from \(url) could not be stored: \(error)"
            await pipeline.note(error, doing: "storing photo \(slot) of pin \(pin)")
        }
        guard !Task.isCancelled else { return }
        await record(pipeline, "recording photo \(slot) of pin \(pin)'s failure") {
            try await store.recordDownloadFailure(
                pin: pin, collection: collection, slot: slot, reason: Self.reason(failure), cause: cause)
        }
    }

    private func record(_ pipeline: PipelineCore, _ what: String, _ append: () async throws -> Void) async {
        do { try await append() } catch { await pipeline.note(error, doing: what) }
    }

    /// What the log keeps of a found photo: bounded texts, and credit links only when they are
    /// http(s) (the store refuses others; a source that sent one loses the link, not the album).
    static func listed(_ found: FoundPhoto) -> ListedPhoto {
        func link(_ url: String) -> String {
            let lowered = url.prefix(8).lowercased()
            return url.count <= 2048 && (lowered.hasPrefix("https://") || lowered.hasPrefix("http://")) ? url : ""
        }
        let credit = found.credit
        return ListedPhoto(
            remoteID: String(found.id.prefix(100)), url: found.url, title: String(found.title.prefix(300)),
            width: UInt32(clamping: found.width), height: UInt32(clamping: found.height),
            creator: String(credit.creator.prefix(300)), licenceName: String(credit.licenceName.prefix(100)),
            licenceURL: link(credit.licenceURL), pageURL: link(credit.pageURL), dateTaken: String(credit.dateTaken.prefix(40)))
    }

    static func reason(_ text: String) -> String {
        let trimmed = text.isEmpty ? "unknown failure" : text
        return trimmed.count > maxReason ? String(trimmed.prefix(maxReason - 1)) + "…" : trimmed
    }
}
