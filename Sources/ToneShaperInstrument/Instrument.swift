#if canImport(Glibc)
import Glibc
#endif
import ToneShaperCore
import ToneShaperMIDI

/// Something a host hands the instrument inside a block, at a frame of it.
public struct InstrumentEvent: Sendable, BitwiseCopyable {
    public enum Kind: Sendable, BitwiseCopyable {
        /// A MIDI channel message as its bytes (status, data 1, data 2; 0 where the message has
        /// fewer). System messages and malformed bytes are ignored.
        case midi(UInt8, UInt8, UInt8)
        /// A control of `InstrumentParameter.table` (by id) set to a value in its unit, on every channel.
        case parameter(id: Int, value: Double)
        /// A listed shape (library index) chosen on every channel, as a program change chooses it.
        case shape(Int)
        /// A control of single notes (per-note tuning, gain, fidelity, release, choke): see Instrument+Notes.
        case note(NoteControl)
        /// A MIDI channel message already decoded: what `render` reads from a file and the live
        /// front-ends from a keyboard.
        case message(MIDIMessage)
    }
    /// Frame within the block (0 = its first); events must come in frame order.
    public var frame: Int
    public var kind: Kind
    public init(frame: Int, _ kind: Kind) { self.frame = frame; self.kind = kind }
}

/// The instrument's front door: N frames at a time, with the block's events at their frames, the
/// controls of a table, shapes by index.
///
/// Every front-end turns events into samples through `process` and nothing else: `render`
/// (`OfflineRenderer`'s blocks), `play` over ALSA and JACK and the editor's instrument
/// (`LiveSession`'s periods, interleaved), the plugins (two channel buffers). So a performance
/// through any of them is the offline render sample for sample by construction, in blocks of any
/// size (the engine's control-rate grid is absolute). `process` allocates nothing, takes no lock
/// and touches no file: everything it needs is made in `init`.
public final class Instrument {
    public let engine: Engine
    public let library: PresetLibrary
    /// The master gain a render with `toneshaper render`'s default `--gain` uses (−6 dB): the
    /// plugin plays at it, so its output equals that render.
    public static let gainDecibels = ShapeExport.defaultGainDecibels
    public static var masterGain: Double { pow(10, gainDecibels / 20) }
    /// Frames rendered in one engine call (a longer `process` is split): the scratch's size.
    let chunkFrames: Int
    let interleaved: UnsafeMutablePointer<Float>
    let engineEvents: UnsafeMutablePointer<EngineEvent>
    static let eventCapacity = 512
    /// Per listed shape, the program change that selects it (−1: none does).
    let shapePrograms: UnsafeMutablePointer<Int>
    let parameters: UnsafeMutablePointer<Parameter>
    let parameterRanges: UnsafeMutablePointer<ClosedRange<Double>>
    public let shapeCount: Int
    let parameterCount: Int

    /// An instrument on `library`'s shapes (every channel starts on the first, as `render` does
    /// without --preset or --presets), one render thread, `voices` voices.
    public convenience init(library: PresetLibrary, sampleRate: Double, voices: Int = 32, chunkFrames: Int = 1024) {
        var config = EngineConfiguration(sampleRate: sampleRate, voices: voices)
        config.masterGain = Self.masterGain
        config.threads = 1
        self.init(engine: Engine(library: library, configuration: config), listing: library, chunkFrames: chunkFrames)
    }

    /// An instrument restored from `state` (InstrumentState's bytes): the shapes it names, by
    /// content, placed after `library`'s (whose listed shapes the shape menu still offers), its map,
    /// tuning, gain and voices, its controls as they were. A fault is one line naming the field.
    public convenience init(state bytes: [UInt8], library: PresetLibrary, sampleRate: Double,
                            chunkFrames: Int = 1024) throws(StateError) {
        let state = try InstrumentState(bytes: bytes)
        let placement = state.placed(onto: library)
        let engine = Engine(library: placement.library, configuration: state.configuration(placement, sampleRate: sampleRate),
                            controllerMap: state.controllerMap)
        engine.restore(state.controls)
        self.init(engine: engine, listing: placement.library, chunkFrames: chunkFrames)
        restored = state
    }

    /// An instrument around an engine a front-end configured itself (render's and play's options,
    /// the editor's one shape): the shape menu lists its library's listed shapes.
    public convenience init(engine: Engine, chunkFrames: Int = 1024) {
        self.init(engine: engine, listing: engine.library, chunkFrames: chunkFrames)
    }

    /// An instrument on an engine built from `configuration` (what `render` and `play` make of their options).
    public convenience init(library: PresetLibrary, configuration: EngineConfiguration, controllerMap: ControllerMap = .standard) {
        self.init(engine: Engine(library: library, configuration: configuration, controllerMap: controllerMap))
    }

    /// `engine` behind the front door; the shape menu lists `listing`'s listed shapes.
    init(engine: Engine, listing library: PresetLibrary, chunkFrames: Int) {
        self.library = library
        self.engine = engine
        self.chunkFrames = max(8, chunkFrames)
        interleaved = .allocate(capacity: 2 * self.chunkFrames)
        interleaved.initialize(repeating: 0, count: 2 * self.chunkFrames)
        engineEvents = .allocate(capacity: Self.eventCapacity)
        shapeCount = library.listedCount
        shapePrograms = .allocate(capacity: max(1, shapeCount))
        for i in 0..<shapeCount {
            let program = library.shapes[i].program
            shapePrograms[i] = (0...127).contains(program) && library.index(program: program) == i ? program : -1
        }
        let table = InstrumentParameter.table
        parameterCount = table.count
        parameters = .allocate(capacity: table.count)
        parameterRanges = .allocate(capacity: table.count)
        for row in table {
            (parameters + row.id).initialize(to: row.parameter)
            (parameterRanges + row.id).initialize(to: row.range)
        }
    }

    /// The state this instrument was restored from (its tuning's text, map text and gain are kept).
    var restored: InstrumentState?
    /// The shape last chosen with a `.shape` event (−1: none), for the state: written on the audio
    /// thread, read by `state()` on another (a word, written whole).
    let chosenShape: UnsafeMutablePointer<Int> = {
        let p = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        p.initialize(to: -1)
        return p
    }()

    /// The instrument as InstrumentState's bytes: the shapes its channels start on now by content
    /// (the one last chosen, else those it started on), the map, the tuning, gain and voices. Not
    /// for the audio thread (it allocates); it reads nothing `process` writes but one word.
    public func state() throws(StateError) -> [UInt8] {
        let config = engine.configuration
        let chosen = chosenShape.pointee
        var shapes: [Shape] = []
        var placed: [Int: Int] = [:]
        func place(_ index: Int) -> Int {
            if let i = placed[index] { return i }
            shapes.append(library.shapes[index])
            placed[index] = shapes.count - 1
            return shapes.count - 1
        }
        let channels = (0..<16).map { p in
            place(chosen >= 0 ? chosen : min(max(p < config.channelPresets.count ? config.channelPresets[p] : 0, 0), library.shapes.count - 1))
        }
        var programs: [Int: Int] = [:]
        for (program, index) in config.programPresets where (0..<128).contains(program) && library.shapes.indices.contains(index) {
            programs[program] = place(index)
        }
        let state = try InstrumentState(shapes: shapes, channelPresets: channels, programPresets: programs,
                                        mapText: ControllerMapFile.text(engine.controllerMap),
                                        scale: restored?.scale, keymap: restored?.keymap, mpe: config.mpe,
                                        gain: restored?.gain ?? Self.gainDecibels, voices: config.voices,
                                        controls: restored?.controls ?? [])
        return try state.encoded()
    }

    deinit {
        chosenShape.deallocate()
        interleaved.deallocate(); engineEvents.deallocate(); shapePrograms.deallocate()
        parameters.deallocate(); parameterRanges.deallocate()
    }

    /// The listed shapes' names, by index: what a host's shape menu shows.
    public var shapeNames: [String] { library.shapes[..<shapeCount].map(\.name) }

    /// Renders `frames` interleaved stereo frames (L, R) into `output`, applying each event at its
    /// frame (an event past the block applies after its last frame). `holdingLastMaster`: the last
    /// span's mix and master may wait for the next call or `finishMaster()` (see `Engine.render`),
    /// as an offline render does to write one span while the next renders.
    public func process(frames: Int, events: UnsafeBufferPointer<InstrumentEvent>, into output: UnsafeMutablePointer<Float>,
                        holdingLastMaster: Bool = false) {
        var e = 0
        render(events, next: &e, from: 0, to: frames, last: true, into: output, holdingLastMaster: holdingLastMaster)
    }

    /// Renders `frames` frames into `left` and `right` (a plugin host's buffers), as `process(frames:events:into:)`
    /// does, a chunk at a time through the interleaved scratch.
    public func process(frames: Int, events: UnsafeBufferPointer<InstrumentEvent>,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        var done = 0
        var e = 0
        repeat {
            let end = min(frames, done + chunkFrames)
            render(events, next: &e, from: done, to: end, last: end == frames, into: interleaved, holdingLastMaster: false)
            for i in 0..<(end - done) {
                left[done + i] = interleaved[2 * i]
                right[done + i] = interleaved[2 * i + 1]
            }
            done = end
        } while done < frames
    }

    /// Completes a span `process(…, holdingLastMaster: true)` left to do.
    public func finishMaster() { engine.finishMaster() }

    /// Installs an edited shape's data as library shape `index` (the editor's hand-off; see
    /// `Engine.replaceShape`): audio thread, between two `process` calls. Returns the data it
    /// replaced, for the caller to free off the audio thread.
    public func replaceShape(_ index: Int, with data: ShapeData) -> ShapeData? {
        engine.replaceShape(index, with: data)
    }

    /// Frames `start..<end` of a block (whose events' frames count from its start) into `output`
    /// (at frame `start`): the events from `e` on that fall before `end`, and with `last` every one
    /// left. The engine is called again wherever its event scratch fills.
    private func render(_ events: UnsafeBufferPointer<InstrumentEvent>, next e: inout Int, from start: Int, to end: Int,
                        last: Bool, into output: UnsafeMutablePointer<Float>, holdingLastMaster: Bool) {
        var done = start
        repeat {
            var count = 0
            var stop = end
            while e < events.count {
                if !last && events[e].frame >= end { break }
                let at = min(max(events[e].frame, done), end)
                let needed: Int
                switch events[e].kind { case .midi, .note, .message: needed = 1; default: needed = 16 }
                if count + needed > Self.eventCapacity { stop = at; break }
                count += translate(events[e].kind, offset: at - done, into: engineEvents + count)
                e += 1
            }
            engine.render(frames: stop - done, events: UnsafeBufferPointer(start: engineEvents, count: count),
                          into: output + 2 * (done - start), holdingLastMaster: holdingLastMaster)
            done = stop
        } while done < end || (last && e < events.count)
    }

    /// Writes the engine events for one instrument event; returns how many.
    private func translate(_ kind: InstrumentEvent.Kind, offset: Int, into out: UnsafeMutablePointer<EngineEvent>) -> Int {
        switch kind {
        case .midi(let status, let data1, let data2):
            let short = status & 0xF0 == 0xC0 || status & 0xF0 == 0xD0
            guard let message = MIDIMessage(status: status, data1: data1, data2: short ? 0 : data2) else { return 0 }
            out.initialize(to: EngineEvent(offset: offset, message))
            return 1
        case .message(let message):
            out.initialize(to: EngineEvent(offset: offset, message))
            return 1
        case .parameter(let id, let value):
            guard id >= 0 && id < parameterCount, !value.isNaN else { return 0 }
            let range = parameterRanges[id]
            let held = min(max(value, range.lowerBound), range.upperBound)
            for channel in 0..<16 {
                (out + channel).initialize(to: EngineEvent(offset: offset, .parameter(channel: UInt8(channel), parameters[id], held)))
            }
            return 16
        case .shape(let index):
            guard index >= 0 && index < shapeCount, shapePrograms[index] >= 0 else { return 0 }
            chosenShape.pointee = index
            for channel in 0..<16 {
                (out + channel).initialize(to: EngineEvent(offset: offset, .programChange(channel: UInt8(channel),
                                                                                          program: UInt8(shapePrograms[index]))))
            }
            return 16
        case .note(let control):
            out.initialize(to: EngineEvent(offset: offset, .note(control)))
            return 1
        }
    }
}
