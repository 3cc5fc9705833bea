// swift-tools-version: 6.1
// The Virtual Tourist package: the generic storage modules, the app's domain, and the `vt` tool.
// Benchmarks live in their own package under Benchmarks/ so their dependencies stay out of here.
import PackageDescription

let package = Package(
    name: "VirtualTourist",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FileIO", targets: ["FileIO"]),
        .library(name: "EventLog", targets: ["EventLog"]),
        .library(name: "FieldColumns", targets: ["FieldColumns"]),
        .library(name: "BlobStore", targets: ["BlobStore"]),
        .library(name: "VirtualTourist", targets: ["VirtualTourist"]),
        .library(name: "PhotoSources", targets: ["PhotoSources"]),
        .library(name: "PhotoAnswers", targets: ["PhotoAnswers"]),
        .library(name: "Places", targets: ["Places"]),
        .library(name: "DemoPhotoServer", targets: ["DemoPhotoServer"]),
        .library(name: "AlbumPipeline", targets: ["AlbumPipeline"]),
        .library(name: "WebApp", targets: ["WebApp"]),
        .library(name: "RequestReading", targets: ["RequestReading"]),
        .executable(name: "vt", targets: ["vt"]),
        // The NATS client, a product so that the fuzz targets (Fuzz/) reach its wire parser.
        .library(name: "NATSClient", targets: ["NATSClient"]),
        .library(name: "Replication", targets: ["Replication"]),
        .library(name: "ClusterSync", targets: ["ClusterSync"]),
        .library(name: "DeviceLogs", targets: ["DeviceLogs"]),
        .library(name: "Proofs", targets: ["Proofs"]),
        .library(name: "HistoryProofs", targets: ["HistoryProofs"]),
        .library(name: "Explanations", targets: ["Explanations"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Exact: scripts/generate-schemas builds protoc-gen-swift from this same checkout, and the
        // generated code in Sources/VirtualTourist/Generated is checked against it in CI.
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // The system's zstd (libzstd), found through pkg-config; no copy of zstd lives here.
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // SHA-256 on the x86 SHA extensions, for the event chain's many short inputs.
        .target(name: "CSHA256"),
        // CRC32C on the SSE4.2 instruction, for the checksums every read checks.
        .target(name: "CCRC32C"),
        // The system's zlib, to read the gzip-compressed data files that Places ships.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // Place names offline (GeoNames' places, Natural Earth's countries, named seas) and the
        // land the offline map draws. Knows coordinates, not pins.
        .target(name: "Places", dependencies: ["CZlib"], resources: [.copy("Resources")]),
        // The small file-system interface every durable write goes through.
        .target(name: "FileIO", dependencies: ["COpenBeneath"]),
        // openat2(2), which glibc does not wrap: a confined path resolved in one call.
        .target(name: "COpenBeneath"),
        // Content-addressed blobs (photos): durable writes, leases, garbage collection.
        .target(
            name: "BlobStore",
            dependencies: ["FileIO", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The generic, zstd-compressed, hash-chained append-only log.
        .target(
            name: "EventLog",
            dependencies: [
                "CCRC32C",
                "CSHA256",
                "CZstd",
                "FileIO",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Codec 2 of the log's blocks: payloads read as protobuf's wire format (no schema) and
        // taken apart into field columns before zstd (FORMAT.md, "Codec 2"). The log is handed
        // it; it knows the log's codec protocol, not the app.
        .target(name: "FieldColumns", dependencies: ["EventLog"]),
        // The app's domain: event schemas (generated from schemas/), projections, rules,
        // snapshots, time travel, and the store facade an app opens by folder path.
        .target(
            name: "VirtualTourist",
            dependencies: [
                "DeviceLogs",
                "HistoryProofs",
                "Proofs",
                "EventLog",
                "FieldColumns",
                "FileIO",
                "BlobStore",
                "Places",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // What the photo services answer, read: Flickr's and Commons' JSON, the API key, the
        // photos found and their credits. No HTTP, so that the fuzzers of the answers build
        // without the HTTP client (docs/DEVELOPING.md).
        .target(name: "PhotoAnswers", dependencies: ["FileIO"]),
        // Photo services: the Flickr and Commons clients, image downloads, page choice. It
        // knows HTTP; the answers' readers are PhotoAnswers, which it re-exports.
        .target(
            name: "PhotoSources",
            dependencies: [
                "FileIO",
                "PhotoAnswers",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Starting a Hummingbird server and returning once it listens (the demo photo service
        // and the web app share it).
        .target(
            name: "HTTPListening",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The offline, Flickr-compatible photo service on loopback: deterministic listings
        // and generated PNG images, for `vt`'s offline demo (and the tests).
        .target(
            name: "DemoPhotoServer",
            dependencies: [
                "HTTPListening",
                "PhotoSources",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Turns pins into albums: pre-fetch, listing, bounded parallel downloads, New
        // Collection, cancellation of stale work, resuming what the log says is pending.
        .target(name: "AlbumPipeline", dependencies: ["VirtualTourist", "BlobStore", "PhotoSources"]),
        // What the web app reads from requests (bodies, the path after a token link), apart
        // from the server so that the fuzz targets read it without HTTP.
        .target(name: "RequestReading", dependencies: ["VirtualTourist"]),
        // The web app: pages, JSON routes, live updates and photos over HTTP (Hummingbird), on
        // top of the store and the album pipeline. It knows HTTP, not how the log is laid out.
        .target(
            name: "WebApp",
            dependencies: [
                "VirtualTourist",
                "AlbumPipeline",
                "BlobStore",
                "HTTPListening",
                "Places",
                "RequestReading",
                "Explanations",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Assets")]
        ),
        // A NATS client on swift-nio: the text protocol, request/reply, reconnect across a
        // cluster, TLS and credentials, JetStream streams, pull consumers and the Object Store
        // (docs/NATS.md). It knows nothing of the log or the app: replication sits on top of it.
        .target(
            name: "NATSClient",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Replication of a store into a JetStream stream and bucket, restore from them, and
        // read-only followers (docs/REPLICATION.md). Sits on the NATS client and the store;
        // neither knows of it.
        .target(
            name: "Replication",
            dependencies: ["NATSClient", "VirtualTourist", "DeviceLogs", "EventLog", "BlobStore", "FileIO"]
        ),
        // Sync of a device's open store through the cluster: its logs shipped by the
        // replication, the other devices' streams taken into the store live (docs/SYNC.md).
        // Sits on the replication and the store; neither knows of it.
        .target(
            name: "ClusterSync",
            dependencies: ["Replication", "NATSClient", "VirtualTourist", "DeviceLogs", "EventLog", "BlobStore", "FileIO"]
        ),
        // RFC 6962's Merkle tree over the event chain's leaves, and its inclusion and
        // consistency proofs (docs/PROOFS.md). Knows hashes, not logs.
        .target(name: "Proofs", dependencies: ["CSHA256", .product(name: "Crypto", package: "swift-crypto")]),
        // Proofs about a log's events: the tree read from the log, the proof files (docs/PROOFS.md).
        // `vt why`: the events behind a fact of the state at any point (docs/WHY.md). It reads
        // a store through StoreReader, and nothing reads it but the command line and the web app.
        .target(name: "Explanations", dependencies: ["VirtualTourist", "DeviceLogs", "EventLog"]),
        .target(name: "HistoryProofs", dependencies: ["Proofs", "EventLog", "FileIO", .product(name: "Crypto", package: "swift-crypto")]),
        // Several devices of one map (docs/DEVICES.md): each device's identity and `device.json`,
        // the copies of the other devices' logs and what they refuse, the merged order, the
        // hybrid clock, clones. It knows logs and blobs, not the app's events.
        .target(name: "DeviceLogs", dependencies: ["EventLog", "BlobStore", "FileIO"]),
        // `vt log-demo`: synthetic events through a bare event log (the tests reuse its events).
        .target(name: "DemoLog", dependencies: ["EventLog"]),
        .executableTarget(
            name: "vt",
            dependencies: [
                "EventLog",
                "DemoLog",
                "VirtualTourist",
                "PhotoSources",
                "DemoPhotoServer",
                "AlbumPipeline",
                "WebApp",
                "BlobStore",
                "Replication",
                "ClusterSync",
                "NATSClient",
                "DeviceLogs",
                "HistoryProofs",
                "Explanations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A helper process for the tests that need a second writer or a writer to kill.
        .executableTarget(
            name: "EventLogHelper",
            dependencies: ["EventLog", "DemoLog"],
            path: "Tests/EventLogHelper"
        ),
        .testTarget(
            name: "VirtualTouristTests",
            dependencies: [
                "VirtualTourist", "EventLog", "FileIO", "SeededRandom", "TouristWorkload", "StorageTestSupport", "CZstd",
                "LegacyLogWriter", "Explanations",
            ],
            resources: [.copy("Fixtures")]
        ),
        // Test-only targets below, none a product (Benchmarks/ and Fuzz/ reach the ones they
        // share through symbolic links to these folders).
        // SplitMix: seeded randomness, so generated workloads and randomised tests repeat.
        .target(name: "SeededRandom", path: "Tests/SeededRandom"),
        // The app's events as real use makes them (pins, albums, downloads, New Collection):
        // the benchmarks' workload, and the tests' long replays.
        .target(name: "TouristWorkload", dependencies: ["EventLog", "SeededRandom", "VirtualTourist"], path: "Tests/TouristWorkload"),
        // A Wikimedia Commons double on loopback (the Action API's geosearch, search, imageinfo
        // and thumbnails) with faults to order, for the Commons client's tests.
        .target(
            name: "PhotoServiceDoubles",
            dependencies: [
                "DemoPhotoServer", "HTTPListening",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PhotoServiceDoubles"
        ),
        // Test doubles shared by the test targets: a file system that counts and fails calls,
        // one in memory that can lose power, the test clock and the temporary folder.
        .target(name: "StorageTestSupport", dependencies: ["FileIO", "EventLog"], path: "Tests/StorageTestSupport"),
        // Format 1's writer, which the product no longer has: fixtures of the logs earlier
        // versions wrote, for the tests of reading, verifying, repairing and upgrading them.
        .target(name: "LegacyLogWriter", dependencies: ["FileIO", "EventLog"], path: "Tests/LegacyLogWriter"),
        // The crash, power-loss, corruption and full-disk tests of the whole store (RELIABILITY.md),
        // with the mixed workload they share with the process they kill.
        .target(name: "ReliabilitySupport", dependencies: ["VirtualTourist", "BlobStore", "EventLog"], path: "Tests/ReliabilitySupport"),
        .executableTarget(
            name: "StoreCrashHelper",
            dependencies: ["ReliabilitySupport", "VirtualTourist", "EventLog"],
            path: "Tests/StoreCrashHelper"
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "ReliabilitySupport", "StoreCrashHelper", "VirtualTourist", "EventLog", "BlobStore", "FileIO",
                "StorageTestSupport", "LegacyLogWriter", "DeviceLogs",
            ]
        ),
        .testTarget(
            name: "BlobStoreTests",
            dependencies: ["BlobStore", "FileIO", "SeededRandom", "StorageTestSupport"]
        ),
        .testTarget(
            name: "PhotoSourcesTests",
            dependencies: [
                "PhotoSources", "PhotoAnswers", "DemoPhotoServer", "PhotoServiceDoubles", "SeededRandom", "HTTPListening",
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "AlbumPipelineTests",
            dependencies: ["AlbumPipeline", "VirtualTourist", "PhotoSources", "DemoPhotoServer", "PhotoServiceDoubles", "StorageTestSupport", "EventLog", "SeededRandom"]
        ),
        .testTarget(
            name: "VTTests",
            dependencies: [
                "vt", "DemoPhotoServer", "PhotoServiceDoubles", "VirtualTourist", "EventLog", "BlobStore", "StorageTestSupport", "NATSTestSupport",
                "TouristWorkload", "LegacyLogWriter", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "WebAppTests",
            dependencies: [
                "WebApp", "RequestReading", "VirtualTourist", "AlbumPipeline", "PhotoSources", "DemoPhotoServer", "StorageTestSupport",
                "TouristWorkload", "SeededRandom",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "PlacesTests", dependencies: ["Places"]),
        .testTarget(
            name: "DeviceLogsTests",
            dependencies: ["DeviceLogs", "EventLog", "BlobStore", "FileIO", "StorageTestSupport", "SeededRandom", "DemoLog"]
        ),
        .testTarget(name: "ProofsTests", dependencies: ["Proofs", "HistoryProofs", "EventLog", "StorageTestSupport", "SeededRandom"]),
        // The NATS client against real nats-server processes (scripts/nats-cluster).
        .testTarget(
            name: "NATSClientTests",
            dependencies: [
                "NATSClient", "NATSTestSupport", .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // DeafNATSServer, a listener on loopback that answers PINGs and nothing else.
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Replication, restore and follow against a real three-server cluster (scripts/nats-cluster).
        .testTarget(
            name: "ReplicationTests",
            dependencies: [
                "Replication", "ClusterSync", "NATSClient", "NATSTestSupport", "VirtualTourist", "EventLog", "BlobStore", "StorageTestSupport",
                "DeviceLogs",
            ]
        ),
        // Real nats-server processes for a test, through scripts/nats-cluster.
        .target(name: "NATSTestSupport", dependencies: ["NATSClient"], path: "Tests/NATSTestSupport"),
        .testTarget(
            name: "EventLogTests",
            dependencies: [
                "EventLog", "FileIO", "SeededRandom", "DemoLog", "EventLogHelper", "StorageTestSupport", "LegacyLogWriter",
                // Codec 2, for its own tests and the independent reader's codec-2 stores; the
                // log's other tests run without a payload codec, or with a plain one.
                "FieldColumns",
                // zstd for the independent readers of FORMAT.md, which share no code with EventLog.
                "CZstd",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ]
)

// The storage modules, the domain and the test doubles that the long simulations run through
// are optimised in debug builds too: at -Onone the power-cut, fault and convergence tests spent
// most of their time in the runtime's unspecialised generics (docs/DEVELOPING.md, "Optimised
// modules in the debug build"). Everything else, the tests among it, stays at -Onone.
let optimizedInDebug: Set<String> = [
    "FileIO", "EventLog", "FieldColumns", "BlobStore", "DeviceLogs", "Proofs", "HistoryProofs", "VirtualTourist",
    "StorageTestSupport", "ReliabilitySupport", "TouristWorkload", "SeededRandom", "LegacyLogWriter",
]
for target in package.targets where optimizedInDebug.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-O"], .when(configuration: .debug))]
}
