import ToneShaperMIDI

/// Something that happens to the engine at a frame inside the block being rendered.
public struct EngineEvent: Sendable, Equatable, BitwiseCopyable {
    public enum Kind: Sendable, Equatable, BitwiseCopyable {
        case midi(MIDIMessage)
        /// A parameter set directly (already in its unit), bypassing the controller map.
        case parameter(channel: UInt8, Parameter, Double)
        /// A control of the notes it names, not of their channel (a plugin host's note expressions).
        case note(NoteControl)
    }
    /// Frame offset from the start of the render call.
    public var offset: Int
    public var kind: Kind
    public init(offset: Int, _ kind: Kind) { self.offset = offset; self.kind = kind }
    public init(offset: Int, _ message: MIDIMessage) { self.offset = offset; self.kind = .midi(message) }
}

/// Settings fixed when the engine is built (everything is allocated from these up front).
public struct EngineConfiguration: Sendable {
    public var sampleRate: Double = 48_000
    /// Voices in the pool; a note beyond this steals one.
    public var voices: Int = 32
    /// Largest block rendered in one pass; events split blocks for sample accuracy.
    public var maxBlock: Int = 128
    /// Gain on the final mix before the hard clip at ±1: −6 dB leaves room for chords, so a
    /// single preset note peaks well below full scale and a dozen voices rarely clip.
    public var masterGain: Double = 0.5
    /// Preset (library index) each channel starts with, before any program change.
    public var channelPresets: [Int] = Array(repeating: 0, count: 16)
    /// Preset (library index) a program change to a given program selects, where it should not be
    /// the preset whose own `program` number it is (e.g. a General MIDI file's bass program played
    /// by a bass shape).
    public var programPresets: [Int: Int] = [:]
    /// How long a stolen voice takes to fade before its new note starts (no click).
    public var stealFadeSeconds: Double = 0.002
    /// Which pitch each key plays (equal temperament unless a Scala scale is given); a key the
    /// tuning leaves unmapped does not sound.
    public var tuning: Tuning = .equal
    /// Points a shape swapped in while playing may have (`Engine.replaceShape`; the editor asks for
    /// `Shape.maximumPoints`): the slots' curves are allocated for the larger of this and the
    /// library's largest shape.
    public var pointCapacity: Int = 0
    /// MIDI Polyphonic Expression zones the engine starts with (off: ordinary MIDI channels); an
    /// MPE Configuration Message (RPN 6) changes them while playing.
    public var mpe: MPEZones = .off
    /// Ramp time for amplitude, and glide time for duration/fidelity changes.
    public var parameterRampSeconds: Double = 0.02
    /// Threads that render voices (the caller's own included): parts are claimed by whichever is
    /// free each block and mixed in channel order, so the output is identical whatever the number.
    /// A light block may be done before a napping helper wakes; then the caller's thread renders it all.
    public var threads: Int = 1
    /// Make every block wait until each helper has joined it before parts are claimed, so the
    /// helpers take a share of every block however light (tests that prove the shared path).
    public var helpersJoinEveryBlock = false
    /// Whether `init` builds the band-limited tables of all three waves (live play, plugins, the
    /// editor: a program change or a mapped controller may pick any wave later, and the audio thread
    /// never builds one), or only those of the presets the channels start on. An offline render
    /// knows its performance: `OfflineRenderer` builds the waves it can reach before rendering
    /// (`Engine.prepareTables(for:)`), so a render of sines builds none.
    public var buildsEveryTable = true
    /// SCHED_FIFO priority for the helper threads (live play: the audio thread's own); nil, or
    /// refused by the system, runs them at normal priority.
    public var helperPriority: Int32? = nil

    public init(sampleRate: Double = 48_000, voices: Int = 32) {
        self.sampleRate = sampleRate
        self.voices = voices
    }
}
