import Foundation
import GRDB
import VirtualTourist

/// The other peer: what a Core Data app keeps, a mutable schema of pins and photos updated in
/// place (no history), in SQLite through GRDB, WAL mode. Each domain event becomes the row
/// changes Core Data would make for it.
public final class SQLiteMutableSchema {
    public let path: String
    private let pool: DatabasePool

    public init(path: String, synchronous: SQLiteEventTable.Synchronous) throws {
        self.path = path
        pool = try DatabasePool(path: path)
        try setSynchronous(synchronous, on: pool)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS region (id INTEGER PRIMARY KEY CHECK (id = 1), latitude REAL, longitude REAL,
                    latitude_span REAL, longitude_span REAL);
                CREATE TABLE IF NOT EXISTS pin (id INTEGER PRIMARY KEY, latitude REAL NOT NULL, longitude REAL NOT NULL,
                    collection INTEGER NOT NULL, phase TEXT NOT NULL, page INTEGER, pages INTEGER, total INTEGER, failure TEXT);
                CREATE TABLE IF NOT EXISTS photo (pin INTEGER NOT NULL, slot INTEGER NOT NULL, remote_id TEXT NOT NULL,
                    url TEXT NOT NULL, title TEXT NOT NULL, width INTEGER, height INTEGER, state TEXT NOT NULL,
                    digest BLOB, byte_count INTEGER, media_type TEXT, failure TEXT, PRIMARY KEY (pin, slot)) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS photo_digest ON photo (digest);
                """)
        }
    }

    /// Applies the events in one transaction.
    public func apply(_ events: some Collection<DomainEvent>) throws {
        try pool.write { db in
            for event in events { try Self.apply(event, in: db) }
        }
    }

    private static func apply(_ event: DomainEvent, in db: Database) throws {
        func run(_ sql: String, _ arguments: StatementArguments) throws {
            try db.cachedStatement(sql: sql).execute(arguments: arguments)
        }
        switch event {
        case .regionChanged(let region):
            try run("INSERT OR REPLACE INTO region VALUES (1, ?, ?, ?, ?)",
                    [region.center.latitude, region.center.longitude, region.latitudeSpan, region.longitudeSpan])
        case .pinDropped(let pin, let place):
            try run("INSERT INTO pin (id, latitude, longitude, collection, phase) VALUES (?, ?, ?, 1, 'notRequested')",
                    [key(pin), place.latitude, place.longitude])
        case .pinDragged(let pin, let place):
            try run("DELETE FROM photo WHERE pin = ?", [key(pin)])
            try run("""
                UPDATE pin SET latitude = ?, longitude = ?, phase = 'notRequested',
                    collection = CASE phase WHEN 'notRequested' THEN collection ELSE collection + 1 END WHERE id = ?
                """, [place.latitude, place.longitude, key(pin)])
        case .pinRemoved(let pin), .placeForgotten(let pin, _):
            try run("DELETE FROM photo WHERE pin = ?", [key(pin)])
            try run("DELETE FROM pin WHERE id = ?", [key(pin)])
        case .forgotten, .deviceSeen:
            break  // what erasure leaves, what a device had seen: nothing on the map (the workload has neither)
        case .albumRequested(let request):
            try run("UPDATE pin SET phase = 'listing', page = ? WHERE id = ?", [request.page, key(request.pin)])
        case .photosListed(let listing):
            try run("UPDATE pin SET phase = 'listed', pages = ?, total = ? WHERE id = ?",
                    [listing.pages, Int64(listing.total), key(listing.pin)])
            let insert = try db.cachedStatement(sql: """
                INSERT INTO photo (pin, slot, remote_id, url, title, width, height, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'placeholder')
                """)
            for (slot, photo) in listing.photos.enumerated() {
                try insert.execute(arguments: [key(listing.pin), slot, photo.remoteID, photo.url, photo.title, photo.width, photo.height])
            }
        case .photoDownloaded(let photo):
            try run("UPDATE photo SET state = 'downloaded', digest = ?, byte_count = ?, media_type = ? WHERE pin = ? AND slot = ?",
                    [Data(photo.digest.bytes), Int64(photo.byteCount), photo.mediaType, key(photo.pin), photo.slot])
        case .photoDownloadFailed(let pin, _, let slot, let reason):
            try run("UPDATE photo SET state = 'failed', failure = ? WHERE pin = ? AND slot = ?", [reason, key(pin), slot])
        case .albumRequestFailed(let pin, _, let reason):
            try run("UPDATE pin SET phase = 'failed', failure = ? WHERE id = ?", [reason, key(pin)])
        case .photoRemoved(let pin, _, let slot, _):
            try run("DELETE FROM photo WHERE pin = ? AND slot = ?", [key(pin), slot])
        case .collectionReplaced(let pin, _, let new):
            try run("DELETE FROM photo WHERE pin = ?", [key(pin)])
            try run("UPDATE pin SET collection = ?, phase = 'notRequested' WHERE id = ?", [new, key(pin)])
        }
    }

    private static func key(_ pin: PinID) -> Int64 { Int64(bitPattern: pin.rawValue) }

    /// What an app does when it starts: fetch every pin and photo into objects. Returns the
    /// numbers of pins and photos loaded.
    public func loadEverything() throws -> (pins: Int, photos: Int) {
        struct LoadedPin { var id: Int64; var latitude, longitude: Double; var collection: Int; var phase: String }
        struct LoadedPhoto { var pin: Int64; var slot: Int; var url, title, state: String; var digest: Data? }
        return try pool.read { db in
            var pins: [Int64: LoadedPin] = [:]
            let pinRows = try Row.fetchCursor(db, sql: "SELECT id, latitude, longitude, collection, phase FROM pin")
            while let row = try pinRows.next() {
                pins[row[0]] = LoadedPin(id: row[0], latitude: row[1], longitude: row[2], collection: row[3], phase: row[4])
            }
            var photos: [LoadedPhoto] = []
            let photoRows = try Row.fetchCursor(db, sql: "SELECT pin, slot, url, title, state, digest FROM photo")
            while let row = try photoRows.next() {
                photos.append(LoadedPhoto(pin: row[0], slot: row[1], url: row[2], title: row[3], state: row[4], digest: row[5]))
            }
            return (pins.count, photos.count)
        }
    }

    /// Bytes on disk once the write-ahead log is checkpointed.
    public func bytesOnDisk() throws -> Int64 { try checkpointedBytes(pool, path) }

    public func close() throws { try pool.close() }
}
