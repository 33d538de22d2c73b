// swift-tools-version: 6.0
import PackageDescription
#if canImport(Glibc)
import Glibc
#endif

/// LLVM's names of x86-64 CPUs with AVX2, FMA, BMI2 and F16C (what TONESHAPER_VECTOR_ROUNDING needs),
/// and of those that also have AVX-512 F, CD, BW, DQ and VL (TONESHAPER_AVX512), for `TONESHAPER_CPU`
/// (above `coreCPUFlags`: a manifest's globals are made in order).
let namedAVX2CPUs: Set<String> = ["x86-64-v3", "core-avx2", "haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake",
                                  "arrowlake", "lunarlake", "gracemont", "znver1", "znver2", "znver3"]
let namedAVX512CPUs: Set<String> = ["x86-64-v4", "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
                                    "icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
                                    "graniterapids", "znver4", "znver5"]

/// The voice kernels compute eight samples at once in SIMD lanes. On an x86-64 machine whose CPU has
/// AVX2 and FMA (Intel Haswell and later, AMD Zen), release builds of the DSP core target it (AVX-512
/// where the CPU has that too): each eight-lane step is one instruction or two instead of two to four.
/// Such a build runs only on such a CPU, as is usual for an instrument built from source where it
/// plays; `TONESHAPER_CPU=baseline` builds for any x86-64, `TONESHAPER_CPU=<llvm cpu name>` for a given one
/// (`native`: this machine's, with the fast paths it allows).
let coreCPUFlags: [String] = {
    #if arch(x86_64) && canImport(Glibc)
    let chosen = getenv("TONESHAPER_CPU").map { String(cString: $0) } ?? ""
    /// Built for `cpu`, with the fast paths its features allow (none, the vector roundings, or those and AVX-512's).
    func cpuFlags(_ cpu: String, avx2: Bool, avx512: Bool) -> [String] {
        ["-target-cpu", cpu] + (avx2 ? ["-D", "TONESHAPER_VECTOR_ROUNDING"] : []) + (avx512 ? ["-D", "TONESHAPER_AVX512"] : [])
    }
    // "native" is this machine's CPU by LLVM's own name: the fast paths as below, from /proc/cpuinfo.
    let native = chosen == "native"
    if !chosen.isEmpty && !native {
        // A named CPU gets the fast paths its features allow, as the automatic choice below gives
        // them (a packager building for x86-64-v3 or znver4, say); one not listed, none of them.
        if chosen == "baseline" { return [] }
        let avx512 = namedAVX512CPUs.contains(chosen)
        return cpuFlags(chosen, avx2: avx512 || namedAVX2CPUs.contains(chosen), avx512: avx512)
    }
    let plain = native ? ["-target-cpu", "native"] : []
    guard let file = fopen("/proc/cpuinfo", "r") else { return plain }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 8192)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard text.hasPrefix("flags") else { continue }
        let flags = Set(text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }))
        // TONESHAPER_VECTOR_ROUNDING: the core may round eight Doubles with `rounded(.toNearestOrEven)`
        // (vroundpd, the same values as the 1.5·2⁵² trick it replaces); on plain x86-64 that is a libm
        // call per lane, so only builds for such a CPU say so.
        guard ["avx2", "fma", "bmi2", "f16c"].allSatisfy({ flags.contains(Substring($0)) }) else { return plain }
        // With AVX-512 (Intel Skylake-SP and later, AMD Zen 4 and later) an eight-Double step is one
        // instruction and there are 32 vector registers: the same output bits, a faster saw and Fourier.
        // TONESHAPER_AVX512: code may hold twice the vector state (the Fourier sums take four groups of eight).
        let avx512 = ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"].allSatisfy { flags.contains(Substring($0)) }
        return cpuFlags(native ? "native" : (avx512 ? "skylake-avx512" : "haswell"), avx2: true, avx512: avx512)
    }
    return plain
    #else
    return []
    #endif
}()

/// Release builds of the program carry the Swift runtime and Foundation inside it, as
/// `--static-swift-stdlib` would (which `swift run` does not take): it starts in 5 ms instead of 9
/// (no twenty shared libraries to load and bind), and the installed instrument runs without the
/// Swift toolchain. The static Foundation needs its C parts named, in this order.
/// `--no-export-dynamic` takes back the `-export-dynamic` the Swift driver passes when it links an
/// executable: 24,000 names in its dynamic symbol table that the dynamic linker and the runtime's
/// start-up (`dladdr`) went through at every start, a millisecond of each render (Benchmarks/README).
let staticRuntime: [LinkerSetting] = [.unsafeFlags(["-static-stdlib", "-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux], configuration: .release))]
    + ["CoreFoundation", "_FoundationICU", "_FoundationCollections", "_FoundationCShims", "stdc++"].map {
        .linkedLibrary($0, .when(platforms: [.linux], configuration: .release))
    }

/// Where Debian 12's dpf-source puts the CLAP headers (CLAP 1.1.1: clap/entry.h, clap/ext/…).
let clapInclude = "/usr/share/dpf/distrho/src"

let package = Package(
    name: "ToneShaper",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "toneshaper", targets: ["toneshaper"]),
        .library(name: "ToneShaperCore", targets: ["ToneShaperCore"]),
        .library(name: "ToneShaperMIDI", targets: ["ToneShaperMIDI"]),
        .library(name: "ToneShaperPlot", targets: ["ToneShaperPlot"]),
        .library(name: "ToneShaperInstrument", targets: ["ToneShaperInstrument"]),
        // The LV2 plugin's shared object (toneshaper.lv2/toneshaper.so; Tests/Plugins/run.sh builds the bundle).
        .library(name: "toneshaper_lv2", type: .dynamic, targets: ["ToneShaperLV2"]),
        // The CLAP plugin, one file (toneshaper.clap: this library, copied; the shapes are inside it).
        .library(name: "toneshaper_clap", type: .dynamic, targets: ["ToneShaperCLAP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.20.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // System libraries, found through pkg-config.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // Ogg Vorbis written directly, so a recording can end its pages once a second (libsndfile cannot).
        .systemLibrary(name: "CVorbis", pkgConfig: "vorbisenc", providers: [.apt(["libvorbis-dev", "libogg-dev"])]),
        .systemLibrary(name: "CJACK", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        // OSC over UDP for the New Session Manager's protocol (Debian's liblo).
        .systemLibrary(name: "CLO", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
        // Small C shim: alsa-lib's variadic error handler cannot be written in Swift.
        .target(name: "CALSAShim", dependencies: ["CALSA"]),
        // Small C shim: jack_client_open is variadic, and libjack's printers are replaced by one that keeps the last error.
        .target(name: "CJACKShim", dependencies: ["CJACK"]),
        // Small C shim: where a new render thread starts (glibc's affinity calls are not importable).
        .target(name: "CThreadPlacement"),
        // One inline function, no library: a cache-line prefetch for the render path (the echo lines' delayed reads, the mix's planes).
        .systemLibrary(name: "CPrefetch"),

        // MIDI messages, Standard MIDI Files (read and write) and event scripts. Pure Swift.
        .target(name: "ToneShaperMIDI"),
        // Pure-Swift instrument: shapes, integrator, voices, engine, presets. No system dependency.
        // Optimised in debug builds too: its eight-lane SIMD code runs about 30 times slower unoptimised,
        // too slow to play live from a debug build (the VM test's `play` counted underruns).
        .target(name: "ToneShaperCore", dependencies: ["ToneShaperMIDI", "ToneShaperRealtime", "CPrefetch"],
                swiftSettings: [.unsafeFlags(coreCPUFlags, .when(configuration: .release)),
                                .unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Lock-free single-producer single-consumer hand-off between threads (MIDI -> audio -> disk),
        // and the one pthread starter (NativeThread): audio, MIDI and render threads, the tables' builder.
        .target(name: "ToneShaperRealtime", dependencies: ["CThreadPlacement"]),
        // libsndfile writer/reader, the Ogg Vorbis writer, the recorder's disk thread, and the one
        // way an offline render reaches a file (render, render-shape, the editor's Export).
        // Built for the core's CPU too: its Float → 16-bit conversion of every sample written is eight
        // lanes, one instruction each on AVX2 rather than two SSE halves.
        .target(name: "ToneShaperAudioFile", dependencies: ["CSndFile", "CVorbis", "ToneShaperRealtime", "ToneShaperCore",
                                                            "ToneShaperMIDI", "ToneShaperInstrument"],
                swiftSettings: [.unsafeFlags(coreCPUFlags, .when(configuration: .release))]),
        // ALSA sequencer input and PCM output: thin Swift over the C API.
        .target(name: "ToneShaperALSA", dependencies: ["CALSA", "CALSAShim", "ToneShaperMIDI", "ToneShaperRealtime"]),
        // Live play with no backend in it: MIDI messages in (with a source and a frame) -> lock-free
        // queue -> audio thread -> the Instrument's process -> periods out (+ recorder, applied MIDI). Imports no ALSA.
        .target(name: "ToneShaperLive", dependencies: ["ToneShaperCore", "ToneShaperMIDI", "ToneShaperRealtime",
                                                       "ToneShaperAudioFile", "ToneShaperInstrument"]),
        // The ALSA front-end over the live core: the sequencer's events routed into LiveInput, the
        // audio thread writing periods to a PCM device, a lost device reopened (`play`, `edit --device`).
        .target(name: "ToneShaperALSALive", dependencies: ["ToneShaperLive", "ToneShaperALSA", "ToneShaperCore", "ToneShaperInstrument",
                                                           "ToneShaperMIDI", "ToneShaperRealtime", "ToneShaperAudioFile"]),
        // JACK client, ports, callbacks, MIDI port reading, connections by name or regex: thin Swift over libjack.
        .target(name: "ToneShaperJACK", dependencies: ["CJACK", "CJACKShim"]),
        // The JACK front-end over the live core (`play --jack`): render in the process callback at the
        // graph's rate and buffer size, each MIDI event at its frame within the cycle.
        .target(name: "ToneShaperJACKLive", dependencies: ["ToneShaperLive", "ToneShaperJACK", "ToneShaperCore", "ToneShaperInstrument",
                                                           "ToneShaperMIDI", "ToneShaperAudioFile"]),
        // A New Session Manager client (announce, open, save), polled by the program's control loop.
        .target(name: "ToneShaperNSM", dependencies: ["CLO"]),
        // Where shapes come from: the built-in Presets/, the user's library ($XDG_DATA_HOME), any FILE.json.
        .target(name: "ToneShaperLibrary", dependencies: ["ToneShaperCore"]),
        // The shape editor: a local HTTP + WebSocket server (Hummingbird) and its page (plain HTML/CSS/JS).
        // The page is not a resource bundle: the program finds Page/ (or its installed copy) from
        // its own path, so nothing can stop it when a bundle is missing (InstallLayout).
        // No backend: an instrument (`edit --device`) is a LiveSession the program attaches.
        .target(name: "ToneShaperEditor", dependencies: [
            "ToneShaperCore", "ToneShaperLibrary", "ToneShaperLive", "ToneShaperAudioFile", "ToneShaperPlot",
            "ToneShaperMIDI", "ToneShaperInstrument",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "Logging", package: "swift-log"),
        ], exclude: ["Page"]),
        // Pictures: the frequency curve and waveform of a shape, spectrograms of rendered files (SVG).
        .target(name: "ToneShaperPlot", dependencies: ["ToneShaperCore", "ToneShaperInstrument"]),
        // The command-line program.
        .executableTarget(name: "toneshaper", dependencies: [
            "ToneShaperMIDI", "ToneShaperCore", "ToneShaperRealtime", "ToneShaperAudioFile", "ToneShaperALSA", "ToneShaperPlot", "ToneShaperLive",
            "ToneShaperALSALive", "ToneShaperJACK", "ToneShaperJACKLive", "ToneShaperLibrary", "ToneShaperEditor", "ToneShaperNSM", "ToneShaperInstrument",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], linkerSettings: staticRuntime),

        // Counts malloc calls on the calling thread, to prove the render path allocates nothing.
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        // What several test targets share: a seeded random generator, so random inputs repeat exactly.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // What the live tests of every front-end share: the shipped presets and an engine on them.
        .target(name: "EngineFixtures", dependencies: ["ToneShaperCore"], path: "Tests/EngineFixtures"),
        .testTarget(name: "ToneShaperCoreTests", dependencies: ["ToneShaperCore", "ToneShaperInstrument", "AllocationCounter", "TestSupport"]),
        .testTarget(name: "ToneShaperMIDITests", dependencies: ["ToneShaperMIDI", "TestSupport"]),
        .testTarget(name: "ToneShaperLibraryTests", dependencies: ["ToneShaperLibrary", "ToneShaperCore"]),
        .testTarget(name: "ToneShaperEditorTests", dependencies: ["ToneShaperEditor", "ToneShaperLibrary", "ToneShaperCore", "ToneShaperInstrument",
                                                                  "ToneShaperAudioFile", "ToneShaperLive", "AllocationCounter", "TestSupport"]),
        .testTarget(name: "ToneShaperNSMTests", dependencies: ["ToneShaperNSM", "CLO"]),
        .testTarget(name: "ToneShaperPlotTests", dependencies: ["ToneShaperPlot", "ToneShaperCore"]),
        .testTarget(name: "ToneShaperRealtimeTests", dependencies: ["ToneShaperRealtime"]),
        .testTarget(name: "ToneShaperAudioFileTests", dependencies: ["ToneShaperAudioFile", "ToneShaperCore", "ToneShaperMIDI", "ToneShaperInstrument",
                                                                     "EngineFixtures"]),
        .testTarget(name: "ToneShaperALSATests", dependencies: ["ToneShaperALSA", "ToneShaperMIDI", "AllocationCounter"]),
        .testTarget(name: "ToneShaperLiveTests", dependencies: ["ToneShaperLive", "ToneShaperCore", "ToneShaperMIDI", "ToneShaperInstrument",
                                                                "ToneShaperAudioFile", "ToneShaperRealtime", "AllocationCounter", "TestSupport",
                                                                "EngineFixtures"]),
        .testTarget(name: "ToneShaperALSALiveTests", dependencies: ["ToneShaperALSALive", "ToneShaperLive", "ToneShaperALSA", "ToneShaperInstrument",
                                                                    "ToneShaperCore", "ToneShaperMIDI", "ToneShaperAudioFile",
                                                                    "ToneShaperRealtime", "AllocationCounter", "TestSupport", "EngineFixtures"]),
        // Against a real jackd (dummy driver) started by the tests.
        .testTarget(name: "ToneShaperJACKLiveTests", dependencies: ["ToneShaperJACKLive", "ToneShaperJACK", "CJACK", "ToneShaperLive", "ToneShaperInstrument",
                                                                   "ToneShaperCore", "ToneShaperMIDI", "ToneShaperAudioFile",
                                                                   "AllocationCounter", "EngineFixtures", "TestSupport"]),
        // The front door every front-end renders through (render's OfflineRenderer, live play, the
        // editor, the plugins): blocks, events at frames, a parameter table, shapes by index, state.
        // Core and MIDI only: no ALSA, no files at process time.
        .target(name: "ToneShaperInstrument", dependencies: ["ToneShaperCore", "ToneShaperMIDI"]),
        // The LV2 instrument. Its shared object exports only lv2_descriptor (so two plugins built
        // with Swift cannot clash in one host), carries the Swift runtime in a release build (hosts
        // have no toneshaper toolchain) and stays mapped after dlclose (-z nodelete: static
        // Foundation's thread-exit hooks would otherwise point into unmapped code).
        .target(name: "CLV2"),
        // Those link flags are for release builds only (as CLAP's), so its tests can link the same code and drive run().
        .target(name: "ToneShaperLV2", dependencies: ["CLV2", "ToneShaperInstrument", "ToneShaperCore", "ToneShaperMIDI"],
                linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/packaging/lv2/exports.map",
                                               "-Xlinker", "-z", "-Xlinker", "nodelete"], .when(configuration: .release))] + staticRuntime),
        .testTarget(name: "ToneShaperLV2Tests", dependencies: ["ToneShaperLV2", "CLV2", "ToneShaperInstrument", "ToneShaperCore",
                                                               "AllocationCounter", "TestSupport"]),
        // The CLAP instrument, over the CLAP 1.1.1 headers Debian 12's dpf-source ships (not on the
        // include path by default). Its shared object exports only clap_entry, carries the Swift
        // runtime and stays mapped after dlclose, as the LV2 one; those link flags are for release
        // builds only, so the tests can link the same code into their own program and drive it.
        .target(name: "CCLAP", cSettings: [.unsafeFlags(["-I" + clapInclude])]),
        .target(name: "ToneShaperCLAP", dependencies: ["CCLAP", "ToneShaperInstrument", "ToneShaperCore"],
                swiftSettings: [.unsafeFlags(["-Xcc", "-I" + clapInclude])],
                linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/packaging/clap/exports.map",
                                               "-Xlinker", "-z", "-Xlinker", "nodelete"], .when(configuration: .release))] + staticRuntime),
        .testTarget(name: "ToneShaperCLAPTests", dependencies: ["ToneShaperCLAP", "CCLAP", "ToneShaperInstrument", "ToneShaperCore",
                                                                "ToneShaperMIDI", "AllocationCounter", "EngineFixtures"],
                    swiftSettings: [.unsafeFlags(["-Xcc", "-I" + clapInclude])]),
        .testTarget(name: "ToneShaperInstrumentTests", dependencies: ["ToneShaperInstrument", "ToneShaperCore", "ToneShaperMIDI",
                                                                      "AllocationCounter", "EngineFixtures"]),
        // End-to-end: runs the built `toneshaper` program and reads back what it wrote.
        .testTarget(name: "toneshaperTests", dependencies: ["toneshaper", "ToneShaperAudioFile", "ToneShaperMIDI", "TestSupport"]),
    ]
)
