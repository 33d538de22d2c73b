// swift-tools-version: 6.0
// The ToneShaper benchmark harness: its own package, so the main build and `swift test` never
// compile it. Build (release, from the repository root):
//   swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build-bench
import PackageDescription

// A path dependency is identified by its folder's name (the checkout may be called anything).
let rootIdentity = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "main"

let package = Package(
    name: "ToneShaperBenchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "toneshaper-bench", targets: ["ToneShaperBench"]),
    ],
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // Plain C reference of the voice kernel (libm sin, double phase), built at -O3.
        .target(name: "CReference", cSettings: [.unsafeFlags(["-O3"])]),
        // Counts malloc/calloc/realloc calls made by the timing thread while counting is on.
        .target(name: "CAllocCount", cSettings: [.unsafeFlags(["-O2"])]),
        // The core-to-core round trip: two threads pinned to two CPUs hand a cache line back and forth.
        .target(name: "CCrossCore", cSettings: [.unsafeFlags(["-O2"])]),
        .executableTarget(
            name: "ToneShaperBench",
            dependencies: [
                .product(name: "ToneShaperCore", package: rootIdentity),
                .product(name: "ToneShaperInstrument", package: rootIdentity),
                .product(name: "ToneShaperMIDI", package: rootIdentity),
                .product(name: "ToneShaperPlot", package: rootIdentity),
                "CReference", "CAllocCount", "CCrossCore",
            ]),
    ]
)
