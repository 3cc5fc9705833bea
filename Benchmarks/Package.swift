// swift-tools-version: 6.1
// The benchmark harness, in its own package so benchmark-only dependencies (ordo-one's
// Benchmark, GRDB for the SQLite peer) stay out of the main build. It uses the main package by
// path. docs/BENCHMARKS.md has the commands and the figures.
import PackageDescription

let package = Package(
    name: "VirtualTouristBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "VirtualTourist", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The main package's test-only workload and seeded randomness, which it does not ship
        // as products: these folders are symbolic links to its Tests/ folders.
        .target(name: "SeededRandom"),
        .target(
            name: "TouristWorkload",
            dependencies: [
                "SeededRandom",
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "VirtualTourist", package: "VirtualTourist"),
            ]
        ),
        // The seeded workload, the SQLite peer, the measurements and the targets, shared by
        // the report and the Benchmark suite.
        .target(
            name: "BenchKit",
            dependencies: [
                .product(name: "EventLog", package: "VirtualTourist"),
                .product(name: "BlobStore", package: "VirtualTourist"),
                .product(name: "FileIO", package: "VirtualTourist"),
                "SeededRandom",
                "TouristWorkload",
                .product(name: "VirtualTourist", package: "VirtualTourist"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/BenchKit"
        ),
        // `vt-bench`: every case on one workload, the engine beside its SQLite peer, as a
        // table with ratios and the targets met or missed.
        .executableTarget(
            name: "vt-bench",
            dependencies: [
                "BenchKit", "SeededRandom", "TouristWorkload",
                // The replication mode: a Replicator and a restore against a real cluster.
                .product(name: "Replication", package: "VirtualTourist"),
                .product(name: "ClusterSync", package: "VirtualTourist"),
                .product(name: "NATSClient", package: "VirtualTourist"),
                .product(name: "Proofs", package: "VirtualTourist"),
                .product(name: "HistoryProofs", package: "VirtualTourist"),
                .product(name: "Explanations", package: "VirtualTourist"),
            ],
            path: "Sources/Report"
        ),
        // The same engine and peer operations under ordo-one's Benchmark (`swift package
        // benchmark`): percentiles, allocations and peak memory per operation.
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                "BenchKit",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
