/// A Standard MIDI File, decoded: what its header says and every event of every track.
///
/// Kept close to the file (ticks, not seconds) so nothing is lost; `timedMessages(sampleRate:)`
/// turns it into what the engine plays.
public struct MIDIFile: Equatable, Sendable {
    /// How the tracks relate in time.
    public enum Format: Int, Sendable {
        /// Format 0: one track holding every channel.
        case singleTrack = 0
        /// Format 1: tracks play together and share one tempo map.
        case simultaneousTracks = 1
        /// Format 2: independent patterns; played here one after another, each with its own tempo.
        case sequentialTracks = 2
    }

    /// What a tick means.
    public enum Division: Equatable, Sendable {
        /// Musical time: ticks per quarter note (1...32767), scaled by the tempo map.
        case ticksPerQuarterNote(Int)
        /// Absolute time: `framesPerSecond` is 24, 25, 29 (29.97 drop-frame) or 30;
        /// a tick lasts 1 / (frame rate × ticksPerFrame) seconds and tempo events do not apply.
        case smpte(framesPerSecond: Int, ticksPerFrame: Int)
    }

    /// One event at an absolute tick (the sum of the delta times before it in its track).
    public struct Event: Equatable, Sendable {
        public enum Kind: Equatable, Sendable {
            /// A channel-voice message (note-on with velocity 0 already reads as note-off).
            case channel(MIDIMessage)
            /// Set Tempo meta event (FF 51): microseconds per quarter note.
            case tempo(microsecondsPerQuarter: Int)
            /// End of Track meta event (FF 2F).
            case endOfTrack
            /// Any other meta event, kept raw.
            case meta(type: UInt8, data: [UInt8])
            /// An F0 system-exclusive event; `data` is what follows the length (usually ends with F7).
            case sysex(data: [UInt8])
            /// An F7 escape event: raw bytes to be sent as they are (sysex continuation packets).
            case sysexEscape(data: [UInt8])
        }

        public var tick: Int
        public var kind: Kind

        public init(tick: Int, kind: Kind) {
            self.tick = tick
            self.kind = kind
        }
    }

    /// The events of one MTrk chunk, in file order (so ticks never decrease).
    public struct Track: Equatable, Sendable {
        public var events: [Event]

        public init(events: [Event]) {
            self.events = events
        }

        /// Tick of the last event, end-of-track included; 0 for an empty track.
        public var lastTick: Int { events.last?.tick ?? 0 }
    }

    public var format: Format
    public var division: Division
    public var tracks: [Track]

    public init(format: Format, division: Division, tracks: [Track]) {
        self.format = format
        self.division = division
        self.tracks = tracks
    }
}
