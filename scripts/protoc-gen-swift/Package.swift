// swift-tools-version: 6.1
// Builds swift-protobuf's code generator, protoc-gen-swift, at exactly the version the main
// package's runtime uses, for scripts/generate-schemas. Nothing here ships.
import PackageDescription

let package = Package(
    name: "ProtocGenSwift",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0")
    ],
    targets: []
)
