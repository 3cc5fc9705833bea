// swift-tools-version: 6.1
// The benchmark harness, in its own package so benchmark-only dependencies stay out of the
// main build. It uses the main package by path.
import PackageDescription

let package = Package(
    name: "VirtualTouristBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "VirtualTourist", path: "..")
    ],
    targets: [
        // Append and replay throughput of the event log under each durability policy.
        .executableTarget(
            name: "log-throughput",
            dependencies: [
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "LogWorkload", package: "VirtualTourist"),
            ],
            path: "Sources/LogThroughput"
        ),
        // Cold replay of the app's events: read, decompress, decode, fold.
        .executableTarget(
            name: "domain-replay",
            dependencies: [
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "LogWorkload", package: "VirtualTourist"),
                .product(name: "VirtualTourist", package: "VirtualTourist"),
            ],
            path: "Sources/DomainReplay"
        ),
        // Blob put and get throughput, and the time to collect many blobs.
        .executableTarget(
            name: "blob-bench",
            dependencies: [
                .product(name: "BlobStore", package: "VirtualTourist"),
                .product(name: "LogWorkload", package: "VirtualTourist"),
            ],
            path: "Sources/BlobBench"
        ),
    ]
)
