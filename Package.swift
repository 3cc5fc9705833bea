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
        .library(name: "BlobStore", targets: ["BlobStore"]),
        .library(name: "LogWorkload", targets: ["LogWorkload"]),
        .library(name: "VirtualTourist", targets: ["VirtualTourist"]),
        .executable(name: "vt", targets: ["vt"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
    ],
    targets: [
        // The system's zstd (libzstd), found through pkg-config; no copy of zstd lives here.
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // The small file-system interface every durable write goes through.
        .target(name: "FileIO"),
        // Content-addressed blobs (photos): durable writes, leases, garbage collection.
        .target(
            name: "BlobStore",
            dependencies: ["FileIO", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The generic, zstd-compressed, hash-chained append-only log.
        .target(
            name: "EventLog",
            dependencies: [
                "CZstd",
                "FileIO",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The app's domain: event schemas (generated from schemas/), projections, rules,
        // snapshots, time travel, and the store facade an app opens by folder path.
        .target(
            name: "VirtualTourist",
            dependencies: [
                "EventLog",
                "FileIO",
                "BlobStore",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // Deterministic synthetic events for the demo, the benchmarks and the tests.
        .target(name: "LogWorkload", dependencies: ["EventLog"]),
        .executableTarget(
            name: "vt",
            dependencies: [
                "EventLog",
                "LogWorkload",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A helper process for the tests that need a second writer or a writer to kill.
        .executableTarget(
            name: "EventLogHelper",
            dependencies: ["EventLog", "LogWorkload"],
            path: "Tests/EventLogHelper"
        ),
        .testTarget(
            name: "VirtualTouristTests",
            dependencies: ["VirtualTourist", "EventLog", "FileIO", "LogWorkload", "StorageTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        // Test doubles shared by the test targets: a file system that counts and fails calls.
        .target(name: "StorageTestSupport", dependencies: ["FileIO"], path: "Tests/StorageTestSupport"),
        .testTarget(
            name: "BlobStoreTests",
            dependencies: ["BlobStore", "FileIO", "LogWorkload", "StorageTestSupport"]
        ),
        .testTarget(
            name: "VTTests",
            dependencies: ["vt"]
        ),
        .testTarget(
            name: "EventLogTests",
            dependencies: [
                "EventLog", "FileIO", "LogWorkload", "EventLogHelper", "StorageTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ]
)
