/// A Standard MIDI File, decoded: what its header says and every event of every track.
///
/// Kept close to the file (ticks, not seconds) so nothing is lost; `timedMessages(sampleRate:)`
/// turns it into what the engine plays.
public struct MIDIFile: Equatable, Sendable {
    /// How the tracks relate in time.
    public enum Format: Int, Sendable {
        /// Format 0: meant to be one track holding every channel. A format 0 file with several
        /// tracks is read anyway, its tracks played together as in format 1.
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
    ///
    /// A value for looking at a track (`Track.events`); tracks themselves store events packed.
    public struct Event: Equatable, Sendable {
        public enum Kind: Equatable, Sendable {
            /// A channel-voice message (note-on with velocity 0 already reads as note-off).
            case channel(MIDIMessage)
            /// Set Tempo meta event (FF 51): microseconds per quarter note, 0...0xFFFFFF.
            /// A tempo of 0 is kept here as the file has it but never changes the tempo map.
            case tempo(microsecondsPerQuarter: Int)
            /// End of Track meta event (FF 2F).
            case endOfTrack
            /// Any other meta event, kept raw (a Set Tempo shorter than 3 bytes too).
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
    ///
    /// Stored compactly, because files of tens of millions of notes exist ("black MIDI"): each
    /// event is one 8-byte `PackedEvent` (delta time and message bytes, no heap allocation), and
    /// the payloads of meta and sysex events share one byte buffer per track. `events` decodes
    /// them into `Event` values on demand.
    public struct Track: Equatable, Sendable {
        /// Every event, in file order.
        private(set) var packed: [PackedEvent] = []
        /// For the i-th event carrying a payload (meta other than tempo and end of track, sysex,
        /// escape): where its bytes end in `payloadBytes` (they start where the previous one's end).
        private(set) var payloadEnds: [Int] = []
        private(set) var payloadBytes: [UInt8] = []
        /// Tick of the last event, end of track included; 0 for an empty track.
        public private(set) var lastTick = 0
        /// How many of the events are channel messages.
        private(set) var channelMessageCount = 0

        init() {}

        /// - Parameter events: ticks from 0 and never decreasing, each step below 2^32 ticks;
        ///   channel messages are stored as their MIDI bytes (so out-of-range values are clamped
        ///   as `MIDIFileWriter` clamps them, and a note-on of velocity 0 reads back as a note-off);
        ///   tempos in 0...0xFFFFFF.
        public init(events: [Event]) {
            packed.reserveCapacity(events.count)
            for event in events {
                precondition(event.tick >= lastTick, "event ticks must start at 0 and never decrease")
                let step = event.tick - lastTick
                precondition(step <= Int(UInt32.max), "a step between events must be below 2^32 ticks")
                let delta = UInt32(step)
                switch event.kind {
                case .channel(let message):
                    let bytes = message.clampedToWireRange.bytes
                    appendChannel(delta: delta, status: bytes[0], data1: bytes[1], data2: bytes.count > 2 ? bytes[2] : 0)
                case .tempo(let tempo):
                    precondition((0...0xFF_FFFF).contains(tempo), "a tempo has 24 bits")
                    appendTempo(delta: delta, microsecondsPerQuarter: tempo)
                case .endOfTrack: appendEndOfTrack(delta: delta)
                case .meta(let type, let data): appendPayload(delta: delta, tag: PackedEvent.metaTag, type: type, data[...])
                case .sysex(let data): appendPayload(delta: delta, tag: PackedEvent.sysexTag, type: 0, data[...])
                case .sysexEscape(let data): appendPayload(delta: delta, tag: PackedEvent.escapeTag, type: 0, data[...])
                }
            }
        }

        /// Number of events, end of track included; no decoding.
        public var eventCount: Int { packed.count }

        /// The events decoded, in file order. Builds one `Event` per stored event (and an array
        /// per meta or sysex payload): for looking at a file, not for walking a huge one.
        public var events: [Event] {
            get {
                var result: [Event] = []
                result.reserveCapacity(packed.count)
                forEachEvent { result.append($0) }
                return result
            }
            set { self = Track(events: newValue) }
        }

        /// Calls `body` with each event in file order, decoding one at a time.
        public func forEachEvent(_ body: (Event) throws -> Void) rethrows {
            var tick = 0
            var payload = 0
            for event in packed {
                tick = tick.addingSaturating(Int(event.delta))
                let kind: Event.Kind
                switch event.status {
                case PackedEvent.tempoTag: kind = .tempo(microsecondsPerQuarter: event.tempo)
                case PackedEvent.endOfTrackTag: kind = .endOfTrack
                case PackedEvent.metaTag: kind = .meta(type: event.data1, data: payloadData(payload)); payload += 1
                case PackedEvent.sysexTag: kind = .sysex(data: payloadData(payload)); payload += 1
                case PackedEvent.escapeTag: kind = .sysexEscape(data: payloadData(payload)); payload += 1
                default:
                    // Only valid channel bytes are ever stored, so this always decodes.
                    guard let message = event.channelMessage else { continue }
                    kind = .channel(message)
                }
                try body(Event(tick: tick, kind: kind))
            }
        }

        private func payloadData(_ index: Int) -> [UInt8] {
            let start = index == 0 ? 0 : payloadEnds[index - 1]
            return Array(payloadBytes[start..<payloadEnds[index]])
        }

        // MARK: Building (the reader and `init(events:)`)

        private mutating func append(_ event: PackedEvent) {
            packed.append(event)
            lastTick = lastTick.addingSaturating(Int(event.delta))
        }

        /// `status` 0x80...0xEF and data bytes 0...0x7F (unused ones 0), as `MIDIMessage(status:data1:data2:)` takes them.
        mutating func appendChannel(delta: UInt32, status: UInt8, data1: UInt8, data2: UInt8) {
            append(PackedEvent(delta: delta, status: status, data1: data1, data2: data2, data3: 0))
            channelMessageCount += 1
        }

        mutating func appendTempo(delta: UInt32, microsecondsPerQuarter tempo: Int) {
            append(PackedEvent(delta: delta, status: PackedEvent.tempoTag, data1: UInt8(truncatingIfNeeded: tempo >> 16),
                               data2: UInt8(truncatingIfNeeded: tempo >> 8), data3: UInt8(truncatingIfNeeded: tempo)))
        }

        mutating func appendEndOfTrack(delta: UInt32) {
            append(PackedEvent(delta: delta, status: PackedEvent.endOfTrackTag, data1: 0, data2: 0, data3: 0))
        }

        /// A meta (`tag` `metaTag`, its `type`), sysex or escape event and its bytes.
        mutating func appendPayload(delta: UInt32, tag: UInt8, type: UInt8, _ data: ArraySlice<UInt8>) {
            append(PackedEvent(delta: delta, status: tag, data1: type, data2: 0, data3: 0))
            payloadBytes.append(contentsOf: data)
            payloadEnds.append(payloadBytes.count)
        }
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

/// One stored event of a track: 8 bytes, no references.
///
/// `status` is the channel status byte (0x80...0xEF) of a channel message, whose data bytes are
/// `data1` and `data2`, or one of the tags below, which no channel message uses: a tempo keeps its
/// 24 bits in `data1...data3`, a meta event its type in `data1` (its bytes are in the track's payload buffer).
struct PackedEvent: Equatable, Sendable, BitwiseCopyable {
    /// Ticks since the previous event of the track (a file's delta times fit in 28 bits).
    var delta: UInt32
    var status: UInt8
    var data1: UInt8
    var data2: UInt8
    var data3: UInt8

    static let sysexTag: UInt8 = 0xF0
    static let tempoTag: UInt8 = 0xF1
    static let endOfTrackTag: UInt8 = 0xF2
    static let escapeTag: UInt8 = 0xF7
    static let metaTag: UInt8 = 0xFF

    var isChannelMessage: Bool { status < 0xF0 }

    var channelMessage: MIDIMessage? {
        isChannelMessage ? MIDIMessage(status: status, data1: data1, data2: data2) : nil
    }

    var tempo: Int { Int(data1) << 16 | Int(data2) << 8 | Int(data3) }
}

extension Int {
    /// `self + other` for non-negative operands, stopping at `Int.max` instead of trapping.
    func addingSaturating(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? Int.min : Int.max) : sum
    }
}
