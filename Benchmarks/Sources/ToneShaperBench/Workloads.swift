import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI
import CAllocCount

/// Shapes used by the benchmark: a gently moving curve (so interpolation and the segment cursor
/// do real work), one second per pass, echo off in the preset, constant envelope.
enum BenchShapes {
    static let points: [(Double, Double)] = [(0, 440), (0.25, 446), (0.5, 440), (0.75, 434), (1.0, 440)]

    static func shape(_ name: String, program: Int, wave: WaveType) -> Shape {
        Shape(name: name, description: "benchmark", program: program,
              points: points.map { Shape.Point(time: $0.0, frequency: $0.1) },
              duration: 1, minFrequency: 20, maxFrequency: 2000, wave: wave, amplitude: 0.5,
              envelope: .constant, echo: .off, fidelity: 1000, fourierTerms: 10, rootNote: 69,
              attack: 0.005, release: 0.05)
    }

    static let library: PresetLibrary = {
        try! PresetLibrary(shapes: [
            shape("bench-sine", program: 0, wave: .sine),
            shape("bench-saw", program: 1, wave: .bandLimitedSawtooth),
            shape("bench-square", program: 2, wave: .bandLimitedSquare),
            shape("bench-fourier-saw", program: 3, wave: .sawtoothFourier),
            shape("bench-fourier-square", program: 4, wave: .squareFourier),
            shape("bench-fourier-triangle", program: 5, wave: .triangleFourier),
        ])
    }()
}

/// (channel, note) for held voice i: 16 channels, notes spread over several octaves (MIDI 30…95,
/// about 46 Hz to 2 kHz), unique per channel so no note retriggers another. Past 512 voices that
/// pattern repeats itself, so the 1024-voice run spreads each channel's 64 notes over MIDI 24…119.
func heldNote(_ i: Int, of voices: Int = 0) -> (channel: UInt8, note: UInt8) {
    let c = i % 16, k = i / 16
    if voices > 512 { return (UInt8(c), UInt8(24 + (k * 3 / 2 + c * 5) % 96)) }
    return (UInt8(c), UInt8(30 + (k * 4 + c * 3) % 66))
}

struct HeldResult {
    var voices: Int
    var frames: Int
    var median: Double
    var all: [Double]
    var allocations: Int64
    var active: Int
    var nsPerVoiceSample: Double { median * 1e9 / Double(voices * frames) }
    var voicesPerCore: Double { 1e9 / (nsPerVoiceSample * 48_000) }
}

/// `voices` held notes of one wave rendered through Engine.render(frames:events:into:) in
/// 256-frame calls; each timed run renders more of the same held chord.
///
/// Beyond 1024 voices the notes are spread over engines of 1024 voices each (16 channels hold at
/// most 2048 distinct keys, and a key held twice on a channel retriggers its voice), rendered one
/// after another each block, their warm-ups staggered so no two read the tables in step: every
/// voice's state and every table read is the engines' own, as one larger pool's would be.
final class HeldChord {
    let voices: Int, frames: Int, block: Int
    let engines: [Engine]
    let out: UnsafeMutablePointer<Float>
    var allocations: Int64 = 0
    var checksum: Float = 0
    var times: [Double] = []

    /// A run renders `seconds` of audio, and at fewer than 1024 voices proportionally more (64
    /// voices: 16 × `seconds`), so every count is timed over the same work and the same stretch of
    /// time: the machine's speed drifts over seconds (host neighbours; seen as 15 vs 20 ms runs
    /// inside one process), and a short run caught in a slow stretch made 64 voices look 45 % dearer.
    init(wave program: Int, voices: Int, seconds: Double, block: Int = 256) {
        let rate = 48_000.0
        self.voices = voices
        self.block = block
        let engineCount = (voices + 1023) / 1024
        precondition(voices % engineCount == 0, "\(voices) voices do not split evenly into engines of 1024")
        let perEngine = voices / engineCount
        var config = EngineConfiguration(sampleRate: rate, voices: perEngine)
        config.maxBlock = block
        config.masterGain = 0.02  // 256 voices summed would clip; clipping is counted either way
        config.channelPresets = Array(repeating: program, count: 16)
        let engines = (0..<engineCount).map { _ in Engine(library: BenchShapes.library, configuration: config) }
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        self.engines = engines
        self.out = out
        var events: [EngineEvent] = (0..<perEngine).map {
            let (c, n) = heldNote($0, of: perEngine)
            return EngineEvent(offset: 0, .noteOn(channel: c, note: n, velocity: 100))
        }
        let none = UnsafeBufferPointer<EngineEvent>(start: nil, count: 0)
        for (e, engine) in engines.enumerated() {
            // Warm-up (untimed): start the notes and get past their 5 ms attack; each engine 37 whole
            // blocks after the last, so their phases and curve positions differ. Whole blocks only: a
            // stagger of a few frames (13 once) left engines 1–3 off their control grid, so each
            // 256-frame call rendered every voice in two pieces (243 + 13 frames, say), with partial
            // groups of eight at the cuts: the whole of 4096's 15–20 % over 1024, which renders on the grid.
            events.withUnsafeBufferPointer { engine.render(frames: block, events: $0, into: out) }
            for _ in 0..<(37 * e) { engine.render(frames: block, events: none, into: out) }
            for _ in 0..<Int(0.1 * rate) / block { engine.render(frames: block, events: none, into: out) }
            let active = engine.activeVoiceCount
            precondition(active == perEngine, "expected \(perEngine) sounding voices, got \(active)")
        }
        events.removeAll()
        self.frames = Int(seconds * rate * Double(max(1, 1024 / voices))) / block * block
    }

    deinit { out.deallocate() }

    /// One timed run (its time kept in `times`).
    func run() {
        let none = UnsafeBufferPointer<EngineEvent>(start: nil, count: 0)
        let blocks = frames / block
        let time = timed {
            bench_alloc_start()
            for _ in 0..<blocks {
                for engine in engines {
                    engine.render(frames: block, events: none, into: out)
                    checksum += out[0]
                }
            }
            allocations = max(allocations, bench_alloc_stop())
        }
        times.append(time)
    }

    var result: HeldResult {
        blackHole(checksum)
        let sorted = times.sorted()
        return HeldResult(voices: voices, frames: frames, median: sorted[sorted.count / 2], all: times,
                          allocations: allocations, active: engines.reduce(0) { $0 + $1.activeVoiceCount })
    }
}

/// Held chords of one wave at each count in `voiceCounts`, timed in interleaved rounds (every
/// count once per round, `runs` rounds): a slow stretch of the machine hits all counts alike, so
/// the comparison between counts (is the cost flat?) holds even when the absolute figure drifts.
func benchHeld(wave program: Int, voiceCounts: [Int], seconds: Double, runs: Int, block: Int = 256) -> [HeldResult] {
    let chords = voiceCounts.map { HeldChord(wave: program, voices: $0, seconds: seconds, block: block) }
    for _ in 0..<max(1, runs) { for chord in chords { chord.run() } }
    return chords.map(\.result)
}

struct DenseResult {
    var seconds: Double
    var median: Double
    var all: [Double]
    var voiceSamples: Double   // Σ over blocks of sounding voices × block frames
    var allocations: Int64
    var stolen: Int
    var realTime: Double { seconds / median }
    var nsPerVoiceSample: Double { median * 1e9 / voiceSamples }
    var averageVoices: Double { voiceSamples / (seconds * 48_000) }
}

/// A dense performance: 16 channels × 4-note chords (64 held voices), each channel changing chord
/// every second (channels staggered by 1/16 s, so a release tail always overlaps), pitch bends,
/// echo on everywhere via CC 91; band-limited sawtooth; through OfflineRenderer, 256-frame blocks.
func densePerformance(seconds: Double, rate: Double) -> [TimedMIDIMessage] {
    var m: [TimedMIDIMessage] = []
    for c in 0..<16 {
        m.append(TimedMIDIMessage(frame: 0, message: .controlChange(channel: UInt8(c), controller: 91, value: 64)))
        m.append(TimedMIDIMessage(frame: 0, message: .controlChange(channel: UInt8(c), controller: 10, value: UInt8(c * 8))))
    }
    let chords: [[Int]] = [[0, 4, 7, 11], [2, 5, 9, 12], [-1, 2, 7, 14], [0, 3, 7, 10]]
    let bars = Int(seconds)
    for c in 0..<16 {
        let base = 36 + (c % 8) * 6
        let stagger = Int64(Double(c) / 16 * rate)
        var previous: [Int] = []
        for bar in 0..<bars {
            let f = Int64(Double(bar) * rate) + stagger
            for n in previous { m.append(TimedMIDIMessage(frame: f, message: .noteOff(channel: UInt8(c), note: UInt8(n), velocity: 64))) }
            let chord = chords[(bar + c) % chords.count].map { base + $0 }
            for n in chord { m.append(TimedMIDIMessage(frame: f, message: .noteOn(channel: UInt8(c), note: UInt8(n), velocity: 90))) }
            // A slow bend in the middle of each bar.
            m.append(TimedMIDIMessage(frame: f + Int64(rate / 2), message: .pitchBend(channel: UInt8(c), value: Int16((bar % 3) * 700))))
            previous = chord
        }
        for n in previous {
            m.append(TimedMIDIMessage(frame: Int64(Double(bars) * rate), message: .noteOff(channel: UInt8(c), note: UInt8(n), velocity: 64)))
        }
    }
    return m
}

func benchDense(seconds: Double, runs: Int, program: Int = 1, threads: Int = 1) -> DenseResult {
    let rate = 48_000.0
    let messages = densePerformance(seconds: seconds, rate: rate)
    let frames = Int(seconds * rate)
    var voiceSamples = 0.0, allocations: Int64 = 0, stolen = 0
    var checksum: Float = 0
    // Each run builds a fresh engine (untimed; the last one is let go first, so no idle helper
    // thread of an earlier run wakes beside this one) and renders the whole performance (timed).
    var engine: Engine?
    let timing = medianOf(runs, prepare: {
        engine = nil
        var config = EngineConfiguration(sampleRate: rate, voices: 128)
        config.maxBlock = 256
        config.threads = threads
        config.channelPresets = Array(repeating: program, count: 16)
        config.masterGain = 0.1
        engine = Engine(library: BenchShapes.library, configuration: config)
    }) {
        let engine = engine!
        let renderer = OfflineRenderer(engine: engine, blockFrames: 256)
        var samples = 0.0
        bench_alloc_start()
        renderer.render(messages, totalFrames: frames) { block in
            checksum += block[0]
            samples += Double(engine.activeVoiceCount * (block.count / 2))
        }
        allocations = bench_alloc_stop()
        voiceSamples = samples
        stolen = engine.stolenVoices
    }
    engine = nil
    blackHole(checksum)
    return DenseResult(seconds: seconds, median: timing.median, all: timing.all, voiceSamples: voiceSamples,
                       allocations: allocations, stolen: stolen)
}
