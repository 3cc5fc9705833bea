// swift-tools-version: 6.1
// Coverage-guided fuzz targets (libFuzzer) for the parsers that read bytes from outside: the
// event log's segments and batches, snapshot files, JSON-lines imports, Flickr's and Commons' answers,
// the NATS client's wire protocol, replication messages, and what the web app reads from requests.
// In its own package, like Benchmarks/, so that the sanitizer build (every module compiled with
// coverage and AddressSanitizer) stays out of the main build; it uses the main package by path.
// Build and run with scripts/fuzz; Fuzz/README.md has the details.
import PackageDescription

let package = Package(
    name: "VirtualTouristFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "VirtualTourist", path: ".."),
    ],
    targets: [
        // The main package's test doubles and seeded randomness, which it does not ship as
        // products: these folders are symbolic links to its Tests/ folders.
        .target(name: "SeededRandom"),
        .target(
            name: "StorageTestSupport",
            dependencies: [
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "FileIO", package: "VirtualTourist"),
            ]
        ),
        // The oracle and the header-field writes every target shares.
        .target(name: "FuzzSupport"),
        // Segment files (batches, the hash chain, sparse indexes) read through the public
        // LogReader, LogVerifier, recovery and repair on the tests' in-memory disk
        // (SimulatedDisk), and every event payload through EventCodec and the fold.
        .executableTarget(
            name: "FuzzBatch",
            dependencies: [
                "FuzzSupport",
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "FileIO", package: "VirtualTourist"),
                .product(name: "BlobStore", package: "VirtualTourist"),
                .product(name: "VirtualTourist", package: "VirtualTourist"),
                "StorageTestSupport",
            ]
        ),
        // `.snap` files: header, checksums, zstd and the StateSnapshot message, then the fold
        // and the state's readers on whatever state came out.
        .executableTarget(
            name: "FuzzSnapshot",
            dependencies: [
                "FuzzSupport",
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "VirtualTourist", package: "VirtualTourist"),
            ]
        ),
        // `vt import` input: EventJSON per line, the rules and the fold, round trips through
        // JSON and protobuf, and the real StoreImporter.
        .executableTarget(
            name: "FuzzImport",
            dependencies: [
                "FuzzSupport",
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "VirtualTourist", package: "VirtualTourist"),
            ]
        ),
        // Format 2's hot-tail records and sealed blocks, with round trips through their encoders;
        // the key summaries and tail checkpoints beside a log, on the tests' in-memory disk; and
        // another device's log as a sync copies it.
        .executableTarget(
            name: "FuzzFormat2",
            dependencies: [
                "FuzzSupport",
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "FieldColumns", package: "VirtualTourist"),
                .product(name: "FileIO", package: "VirtualTourist"),
                .product(name: "DeviceLogs", package: "VirtualTourist"),
                "StorageTestSupport",
            ]
        ),
        // Answers of Wikimedia Commons' Action API: geosearch, the wider search past it, image
        // information.
        .executableTarget(
            name: "FuzzCommons",
            dependencies: ["FuzzSupport", .product(name: "PhotoAnswers", package: "VirtualTourist")]
        ),
        // Answers of flickr.photos.search, with a key that must never reach a message.
        .executableTarget(
            name: "FuzzFlickr",
            dependencies: [
                "FuzzSupport",
                .product(name: "PhotoAnswers", package: "VirtualTourist"),
                "SeededRandom",
            ]
        ),
        // What a replication stream's reader takes from the cluster: a message's headers and
        // body through ShippedChainCheck, and what it accepts into a replica's log (LogBuilder,
        // EventLog.append and appendAsBlock) on the tests' in-memory disk.
        .executableTarget(
            name: "FuzzReplication",
            dependencies: [
                "FuzzSupport",
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "FileIO", package: "VirtualTourist"),
                .product(name: "NATSClient", package: "VirtualTourist"),
                .product(name: "Replication", package: "VirtualTourist"),
                "StorageTestSupport",
                .product(name: "VirtualTourist", package: "VirtualTourist"),
            ]
        ),
        // What the web app reads from a request itself: JSON bodies, duplicate keys, the path
        // a token link goes on to, pin ids.
        .executableTarget(
            name: "FuzzRequests",
            dependencies: [
                "FuzzSupport",
                .product(name: "RequestReading", package: "VirtualTourist"),
                .product(name: "VirtualTourist", package: "VirtualTourist"),
            ]
        ),
        // What a NATS server sends: NATSWireParser in random splits, headers, URL lists.
        .executableTarget(
            name: "FuzzNATS",
            dependencies: ["FuzzSupport", .product(name: "NATSClient", package: "VirtualTourist")]
        ),
    ]
)
