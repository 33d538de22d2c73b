#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import ToneShaperMIDI

/// The instrument: renders stereo audio from timestamped events, sample-accurately.
///
/// Pure Swift, no I/O: live play, offline rendering and the tests drive this same object, so a
/// performance re-rendered offline is identical sample for sample. Everything it needs — voices,
/// curves, buses, echo lines, scratch — is allocated in `init`; `render` allocates nothing,
/// takes no lock and logs nothing.
public final class Engine: @unchecked Sendable {
    public let configuration: EngineConfiguration
    public let library: PresetLibrary
    public let controllerMap: ControllerMap
    public var sampleRate: Double { configuration.sampleRate }

    let presets: PresetTable
    /// Shapes swapped in by the editor, per preset (nil: the library's own); freed with the engine.
    let installed: UnsafeMutablePointer<ShapeData?>
    /// Each key's pitch in semitones from the tuning (NaN: unmapped), so a note's ratio is one
    /// subtraction and one exp2 on the audio thread; entries 128...255 are the same keys as a
    /// shape's root, where an unmapped key stands where equal temperament would put it.
    let keySemitones: UnsafeMutablePointer<Double>
    /// Library index each program change selects (−1: none), looked up once at init.
    let programPresets: UnsafeMutablePointer<Int>
    /// The voices, and which one a note takes.
    let pool: VoicePool
    /// The pool's voices and their number, read where every voice is visited.
    let voices: UnsafeMutablePointer<Voice>
    let voiceCount: Int
    let parts: UnsafeMutablePointer<Part>
    /// The parts' echo lines, one block (see `init`).
    let echoStorage: UnsafeMutablePointer<Float>
    let slots: UnsafeMutablePointer<ShapeSlot>
    let slotCount: Int
    /// How many voices play each slot.
    let slotUsers: UnsafeMutablePointer<Int>
    /// Two sets (one being mixed while the next span renders into the other) of 16 planes of
    /// maxSpan frames: part p's bus, after its gain and echo, in plane p. The mix pans it: a bus is
    /// often rendered on one core and mixed on the other, and one plane crosses instead of two.
    let buses: UnsafeMutablePointer<Float>
    /// Per plane set, part and span segment (32 each): the part's pan across that period, as
    /// (left gain at the period's start, its step per frame, right gain, its step).
    let panRamps: UnsafeMutablePointer<SIMD4<Float>>
    /// The stereo mix, one plane per side (maxBlock each), so the pan loop vectorises; interleaved
    /// only when written out.
    let mixLeft: UnsafeMutablePointer<Float>
    let mixRight: UnsafeMutablePointer<Float>
    /// Per thread (the engine's own first): the voice render loops' scratch buffers.
    let scratches: UnsafeMutablePointer<VoiceScratch>
    public let threadCount: Int
    /// The current span's work (see `Engine+Shares`): per thread, a list of the audible parts it
    /// is to render, a run of neighbouring channels (with several threads, the last span's mix and
    /// master among them), `shareListStride` entries each; each part's sounding voices in pool
    /// order (`partVoices[p · voiceCount ..< + partVoiceCount[p]]`).
    let shareLists: UnsafeMutablePointer<Int>
    let partVoiceCount: UnsafeMutablePointer<Int>
    let partVoices: UnsafeMutablePointer<Int>
    /// Where each thread's run of channels starts (`threadCount + 1` entries, the last 16), kept
    /// from span to span.
    let runStarts: UnsafeMutablePointer<Int>
    /// The parts' voice counts, then weights (16), then the lists' lengths (`threadCount`): the
    /// engine's thread's own scratch for the lists.
    let shareScratch: UnsafeMutablePointer<Int>
    /// The first run's sum of the last span's planes, per side (maxSpan frames each).
    let prefixLeft: UnsafeMutablePointer<Float>
    let prefixRight: UnsafeMutablePointer<Float>
    /// What the threads change while they share a span (claims, the helpers' count), apart from
    /// the fields above and below, which they only read.
    let shareCounters: ShareCounters
    /// Frames in a span at most: `spanPeriods` control periods.
    let maxSpan: Int
    static let spanPeriods = 16
    /// Per part and plane set (`16 · part + set`: a cache line per part, written by the thread
    /// that renders it), bit s: the part was audible in the span's segment s (its plane holds sound there).
    let spanAudible: UnsafeMutablePointer<UInt32>
    let tables: TableGeometry
    let tablesOwner: BandLimitedTables
    let maxBlock: Int
    let halfStep: Double
    let nyquistReciprocal: Double
    let stealFadeSamples: Int
    let rampSamples: Double
    let glideCoefficient: Double
    let dcPole: Float

    // What changes while the engine renders, by who changes it, on lines of its own (128 bytes
    // apart: a line and the neighbour the prefetcher pairs with it). Everything above is set in
    // `init` and only read after; a field written beside it would take its line from the other
    // core at every span.
    private let paddingBeforeEngineThread = LinePairPadding()
    // The engine's thread: events, spans, the lists.
    /// Audible parts in the current span's lists.
    var partOrderCount = 0
    /// Whether this span's lists hold the mix prefix of the last span (see `Engine+Shares`).
    var prefixListed = false
    /// Spans rendered: tells one span's mix prefix from the next.
    var spanSequence = 0
    /// The helper threads when `configuration.threads` > 1.
    var crew: RenderCrew?
    /// The span being rendered, for the crew's shares: its length, where in the control period it
    /// starts, and whether the parts run their own control ticks (see `Engine+Span`).
    var jobCount = 0
    var jobIntoPeriod = 0
    var jobPartsTick = false
    /// Called with each span's output once it is mastered, in order (see `render`).
    public var onMastered: ((UnsafeBufferPointer<Float>) -> Void)?
    /// The plane set the current span renders into.
    var planeSet = 0
    /// The last span's mix and master, not yet done (see `Engine+Span`).
    var pendingMaster: MasterJob?
    /// Every tick whole on the engine's thread, one period at a time, as during a hand-over: the
    /// tests hold the parts' own ticks in spans against it.
    var wholeTicks = false
    /// Frames rendered since the engine was made: the clock the control-rate grid runs on.
    public private(set) var frame: Int64 = 0

    /// Notes that had to take a voice from another note.
    public var stolenVoices: Int { pool.stolen }
    /// The MPE zones in force: from the configuration, then from MPE Configuration Messages.
    public internal(set) var zones = MPEZones.off
    private let paddingBeforeMaster = LinePairPadding()
    // Whichever thread does a span's master.
    /// Output DC blocker state (x[n−1], y[n−1]) for left and right.
    var dcLeft: (x: Float, y: Float) = (0, 0)
    var dcRight: (x: Float, y: Float) = (0, 0)
    /// Output samples that exceeded ±1 and were clipped (the clipping policy: hard clip, counted).
    public internal(set) var clippedSamples = 0
    private let paddingAfterMaster = LinePairPadding()

    public convenience init(library: PresetLibrary, configuration: EngineConfiguration = EngineConfiguration(),
                            controllerMap: ControllerMap = .standard) {
        self.init(library: library, configuration: configuration, controllerMap: controllerMap, tables: .shared)
    }

    /// An engine reading `tables` (the tests give one of their own, to see which waves it builds).
    init(library: PresetLibrary, configuration: EngineConfiguration, controllerMap: ControllerMap, tables owner: BandLimitedTables) {
        precondition(configuration.voices >= 1 && configuration.maxBlock >= 8 && configuration.maxBlock % 8 == 0,
                     "maxBlock must be a positive multiple of 8 (the band-limited level grid)")
        self.configuration = configuration
        self.library = library
        self.controllerMap = controllerMap
        let table = PresetTable(library.shapes, listedCount: library.listedCount)
        presets = table
        installed = .allocate(capacity: max(1, table.count))
        installed.initialize(repeating: nil, count: max(1, table.count))
        keySemitones = .allocate(capacity: 256)
        for key in 0..<128 {
            keySemitones[key] = configuration.tuning.semitones[key] ?? .nan
            keySemitones[128 + key] = configuration.tuning.semitones[key] ?? Double(key - 60)
        }
        programPresets = .allocate(capacity: 128)
        for program in 0..<128 {
            let mapped = configuration.programPresets[program].flatMap { (0..<table.count).contains($0) ? $0 : nil }
            programPresets[program] = mapped ?? table.index(program: program) ?? -1
        }
        pool = VoicePool(count: configuration.voices,
                         stealFadeSamples: max(1, Int(configuration.stealFadeSeconds * configuration.sampleRate)))
        voiceCount = pool.count
        voices = pool.voices
        maxBlock = configuration.maxBlock
        maxSpan = Engine.spanPeriods * configuration.maxBlock
        spanAudible = cacheAligned(UInt32.self, count: 16 * 16)
        spanAudible.initialize(repeating: 0, count: 16 * 16)
        let rate = configuration.sampleRate
        halfStep = 0.5 / rate
        nyquistReciprocal = 2 / rate
        stealFadeSamples = pool.stealFadeSamples
        rampSamples = max(1, configuration.parameterRampSeconds * rate)
        glideCoefficient = 1 - _exp(-Double(configuration.maxBlock) / (configuration.parameterRampSeconds * rate))
        dcPole = Float(_exp(-2 * Double.pi * 1 / rate))
        threadCount = max(1, configuration.threads)
        scratches = .allocate(capacity: threadCount)
        for t in 0..<threadCount { (scratches + t).initialize(to: VoiceScratch(capacity: Engine.voicePeriods * maxBlock)) }
        shareLists = cacheAligned(Int.self, count: threadCount * Engine.shareListStride)
        shareLists.initialize(repeating: 0, count: threadCount * Engine.shareListStride)
        runStarts = .allocate(capacity: threadCount + 1)
        for t in 0...threadCount { runStarts[t] = min(16, 16 * t / threadCount) }
        shareScratch = .allocate(capacity: 16 + threadCount)
        shareScratch.initialize(repeating: 0, count: 16 + threadCount)
        prefixLeft = cacheAligned(Float.self, count: maxSpan)
        prefixLeft.initialize(repeating: 0, count: maxSpan)
        prefixRight = cacheAligned(Float.self, count: maxSpan)
        prefixRight.initialize(repeating: 0, count: maxSpan)
        shareCounters = ShareCounters(lists: threadCount)
        partVoiceCount = .allocate(capacity: 16)
        partVoiceCount.initialize(repeating: 0, count: 16)
        partVoices = .allocate(capacity: 16 * max(1, configuration.voices))
        partVoices.initialize(repeating: 0, count: 16 * max(1, configuration.voices))
        tablesOwner = owner
        tables = TableGeometry(tablesOwner.storage)
        buses = cacheAligned(Float.self, count: 32 * maxSpan)
        buses.initialize(repeating: 0, count: 32 * maxSpan)
        panRamps = cacheAligned(SIMD4<Float>.self, count: 2 * 16 * 32)
        panRamps.initialize(repeating: .zero, count: 2 * 16 * 32)
        mixLeft = .allocate(capacity: maxBlock)
        mixLeft.initialize(repeating: 0, count: maxBlock)
        mixRight = .allocate(capacity: maxBlock)
        mixRight.initialize(repeating: 0, count: maxBlock)
        // One slot per part plus one per voice: however many program changes happen, every sounding
        // note keeps the slot it started on and a free one is always left for the next change.
        slotCount = 16 + voiceCount
        slots = .allocate(capacity: slotCount)
        // An engine that takes edited shapes (`pointCapacity` given) has room for any shape's pieces;
        // one that plays only its library, for its own shapes' exponential segments.
        let pieceBudget = configuration.pointCapacity > 0 ? Shape.pieceBudget : presets.pieceBudget
        for i in 0..<slotCount {
            (slots + i).initialize(to: ShapeSlot(pointCapacity: max(presets.maxPoints, configuration.pointCapacity),
                                                 pieceBudget: pieceBudget))
        }
        slotUsers = .allocate(capacity: slotCount)
        slotUsers.initialize(repeating: 0, count: slotCount)
        parts = cacheAligned(Part.self, count: 16)
        let echoCapacity = EchoLine.capacity(maxDelaySeconds: Shape.maximumEchoDelay, sampleRate: rate)
        echoStorage = Engine.echoBlock(bytes: 16 * echoCapacity * MemoryLayout<Float>.stride)
        for p in 0..<16 {
            (parts + p).initialize(to: Part(echo: EchoLine(maxDelaySeconds: Shape.maximumEchoDelay, sampleRate: rate,
                                                            storage: echoStorage + p * echoCapacity)))
        }
        for p in 0..<16 {
            let preset = p < configuration.channelPresets.count ? configuration.channelPresets[p] : 0
            selectPreset(min(max(preset, 0), presets.count - 1), part: p)
        }
        // An engine that takes edited shapes may be handed any wave on the audio thread.
        if configuration.buildsEveryTable || configuration.pointCapacity > 0 {
            tablesOwner.buildAll()
        } else {
            tablesOwner.build((0..<16).map { parts[$0].wave })
        }
        setZones(configuration.mpe, configuring: 0...15)
        if threadCount > 1 {
            crew = RenderCrew(helpers: threadCount - 1, priority: configuration.helperPriority,
                              joinEveryRun: configuration.helpersJoinEveryBlock) {
                [unowned(unsafe) self] share in self.renderShare(share)
            }
        }
    }

    /// Part-periods the helper threads have rendered so far (0 with one thread): proof they work.
    public var helperShares: Int { shareCounters.helperParts.load(ordering: .relaxed) }

    deinit {
        crew?.stop()
        for t in 0..<threadCount { scratches[t].deallocate() }
        scratches.deinitialize(count: threadCount); scratches.deallocate(); UnsafeMutableRawPointer(shareLists).deallocate(); runStarts.deallocate(); shareScratch.deallocate(); UnsafeMutableRawPointer(prefixLeft).deallocate(); UnsafeMutableRawPointer(prefixRight).deallocate(); partVoiceCount.deallocate(); partVoices.deallocate()
        for i in 0..<presets.count { installed[i]?.deallocate() }
        installed.deallocate()
        for i in 0..<slotCount { slots[i].deallocate() }
        Engine.freeEchoBlock(echoStorage, bytes: 16 * parts[0].echo.capacity * MemoryLayout<Float>.stride)
        slots.deinitialize(count: slotCount); slots.deallocate(); slotUsers.deallocate()
        parts.deinitialize(count: 16); UnsafeMutableRawPointer(parts).deallocate()
        UnsafeMutableRawPointer(spanAudible).deallocate(); programPresets.deallocate(); keySemitones.deallocate(); UnsafeMutableRawPointer(buses).deallocate(); UnsafeMutableRawPointer(panRamps).deallocate(); mixLeft.deallocate(); mixRight.deallocate(); presets.deallocate()
    }

    // MARK: - Rendering

    /// Renders `frames` stereo frames (interleaved L, R) into `output`, applying each event at its
    /// frame offset. Events must be sorted by offset; offsets ≥ frames apply after the last frame.
    /// `onMastered`, when set, is called with each span's stretch of `output` as soon as it is
    /// mastered, in order, on whichever render thread mastered it, while the next span renders (an
    /// offline render writes its file this way: the samples are still in that core's cache, and
    /// the writing is spread over the spans instead of holding the threads up once a block). It
    /// must not touch the engine.
    /// `holdingLastMaster`: the last span's mix and master may be left to the next call, beside its
    /// first span's parts; the output is then complete only after that call or `finishMaster()`.
    public func render(frames: Int, events: UnsafeBufferPointer<EngineEvent>, into output: UnsafeMutablePointer<Float>,
                       holdingLastMaster: Bool = false) {
        var position = 0
        var e = 0
        let grid = Int64(maxBlock)
        while position < frames {
            while e < events.count && events[e].offset <= position {
                apply(events[e].kind)
                e += 1
            }
            // Control-rate work happens on a fixed grid of absolute frames, so the output does not
            // depend on how a caller groups frames into render calls (live periods vs offline blocks).
            let intoPeriod = Int(frame % grid)
            let next = e < events.count ? min(frames, events[e].offset) : frames
            let end: Int
            if wholeTicks || handingOver() {
                // A stolen voice is fading out to start its new note: that start touches another
                // part, so this period's tick runs here, whole, before the parts render (and
                // after the last span's master, whose DC blocker the tick may set to rest). The
                // tests ask for this path too (`wholeTicks`), to hold the spans against it.
                finishMaster()
                if intoPeriod == 0 { controlTick() }
                end = min(next, position + maxBlock - intoPeriod)
                renderSpan(output + 2 * position, count: end - position, intoPeriod: intoPeriod, partsTick: false)
            } else {
                end = min(next, position + maxSpan - intoPeriod)
                renderSpan(output + 2 * position, count: end - position, intoPeriod: intoPeriod, partsTick: true)
            }
            frame += Int64(end - position)
            position = end
        }
        if !holdingLastMaster { finishMaster() }  // the caller reads the output when this returns
        while e < events.count {
            apply(events[e].kind)
            e += 1
        }
    }

    /// Convenience for tests and tools (allocates the result).
    public func render(frames: Int, events: [EngineEvent] = []) -> [Float] {
        var out = [Float](repeating: 0, count: 2 * frames)
        events.withUnsafeBufferPointer { ev in
            out.withUnsafeMutableBufferPointer { render(frames: frames, events: ev, into: $0.baseAddress!) }
        }
        return out
    }

    /// Voices currently sounding (playing or releasing).
    public var activeVoiceCount: Int {
        var n = 0
        for i in 0..<voiceCount where voices[i].stage != .idle { n += 1 }
        return n
    }
}

extension Engine {
    /// The sixteen echo lines' block: fresh zero pages from the kernel, touched only where an echo
    /// writes (an engine that never echoes clears nothing), 6 MB at 48 kHz. On Linux it is asked
    /// for in 2 MB pages (MADV_HUGEPAGE): as sixteen blocks of 384 KB in 4 KB pages, a render's
    /// first two seconds took ~1500 page faults (about 2 % of a dense sine render's CPU on this VM).
    /// Only whole, aligned 2 MB stretches get them, so the block is rounded up to whole huge pages
    /// and placed on one (unaligned, a third of it had stayed in 4 KB pages: ~550 more faults).
    /// Where the advice is refused (no transparent huge pages), the block simply stays in 4 KB pages.
    static func echoBlock(bytes: Int) -> UnsafeMutablePointer<Float> {
        #if os(Linux)
        let size = echoBlockSize(bytes)
        let reserved = size + hugePage
        let mapped = mmap(nil, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            fatalError("echo lines: mmap of \(reserved) bytes failed (errno \(errno))")
        }
        // The first huge-page boundary in the reservation; the unused head and tail go back.
        let head = (hugePage - Int(bitPattern: mapped) % hugePage) % hugePage
        let block = mapped + head
        if head > 0 { munmap(mapped, head) }
        if reserved - head - size > 0 { munmap(block + size, reserved - head - size) }
        _ = madvise(block, size, MADV_HUGEPAGE)  // advice only: a refusal leaves 4 KB pages, nothing else
        return block.assumingMemoryBound(to: Float.self)
        #else
        return calloc(bytes, 1)!.assumingMemoryBound(to: Float.self)
        #endif
    }

    /// A transparent huge page on x86-64 and arm64 (4 KB base pages).
    static let hugePage = 2 << 20

    /// The echo block's mapped size: `bytes` rounded up to whole huge pages.
    static func echoBlockSize(_ bytes: Int) -> Int { (bytes + hugePage - 1) / hugePage * hugePage }

    static func freeEchoBlock(_ block: UnsafeMutablePointer<Float>, bytes: Int) {
        #if os(Linux)
        munmap(block, echoBlockSize(bytes))
        #else
        free(block)
        #endif
    }
}
