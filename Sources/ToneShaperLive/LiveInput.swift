import Synchronization
import ToneShaperCore
import ToneShaperMIDI

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which MIDI source sent a message, in the front-end's own numbering (the ALSA front-end uses
/// client × 256 + port; a JACK one, its input port), so a source that leaves can have exactly its
/// notes released (`LiveInput.releaseAll(from:at:)`).
public struct MIDISourceID: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public var description: String { "source \(rawValue)" }
}

/// The producer side of a session: filters MIDI, takes each message at its frame and queues it for the audio thread.
///
/// It knows no backend: a front-end (the ALSA sequencer's, a file feeder, the editor) hands it
/// `MIDIMessage`s with the source that sent them and the frame they should sound at, and says when
/// a source leaves. Exactly one thread may use an input (the ring is single-producer): the
/// front-end's MIDI thread for a keyboard, or the feeder thread for a file or script. It runs on
/// that thread, not the audio thread, so it may wait a little when the ring is full; the audio
/// thread never waits for it.
///
/// It also remembers which source holds each note and each sustain pedal, so when a source leaves
/// (unplugged, its program died) exactly its notes are released — with ordinary note-offs and
/// pedal-ups, which `--record-midi` keeps, so the take re-renders the same.
public final class LiveInput: @unchecked Sendable {
    public let session: LiveSession
    /// Only messages on this 0-based channel pass; nil passes all.
    public let channelFilter: UInt8?
    /// Drops program changes, for `--preset` (one preset on every channel, as `render --preset` does).
    public let ignoresProgramChanges: Bool

    private let dropped = Atomic<Int>(0)
    /// Who holds each channel × key: 0 nobody, else the source's raw value + 1. Producer thread only.
    private let noteHolders: UnsafeMutablePointer<UInt64>
    /// Who holds each channel's sustain pedal down, and with which controller.
    private let pedalHolders: UnsafeMutablePointer<UInt64>
    private let pedalControllers: UnsafeMutablePointer<UInt8>

    public init(session: LiveSession, channelFilter: UInt8? = nil, ignoresProgramChanges: Bool = false) {
        precondition(channelFilter.map { $0 < 16 } ?? true, "channel filter is 0-based, 0...15")
        self.session = session
        self.channelFilter = channelFilter
        self.ignoresProgramChanges = ignoresProgramChanges
        noteHolders = .allocate(capacity: 16 * 128)
        noteHolders.initialize(repeating: 0, count: 16 * 128)
        pedalHolders = .allocate(capacity: 16)
        pedalHolders.initialize(repeating: 0, count: 16)
        pedalControllers = .allocate(capacity: 16)
        pedalControllers.initialize(repeating: 64, count: 16)
    }

    deinit {
        noteHolders.deallocate()
        pedalHolders.deallocate()
        pedalControllers.deallocate()
    }

    /// Events lost because the ring stayed full (the audio thread stopped consuming).
    public var droppedEvents: Int { dropped.load(ordering: .relaxed) }

    /// Whether a message reaches the engine at all.
    public func accepts(_ message: MIDIMessage) -> Bool {
        if let channelFilter, message.channel != channelFilter { return false }
        if ignoresProgramChanges, case .programChange = message { return false }
        return true
    }

    /// A live message from `source`, to sound at `frame` (a front-end with a clock gives the
    /// arrival frame plus its constant latency, see `LiveSession.frame(arrivedAt:)`; one without,
    /// `session.framesRendered`: the next period start). Refused messages are left out.
    /// `patience`: how long to wait for room in a full ring (see `enqueue`); a front-end that
    /// receives on the audio thread itself (JACK's process callback, just before `renderPeriod`)
    /// passes 0: it never waits, and an event that finds no room is counted as dropped.
    public func receive(_ message: MIDIMessage, from source: MIDISourceID, at frame: Int64, patience: Double = 1) {
        guard accepts(message) else { return }
        track(message, from: source)
        enqueue(TimedInstrumentEvent(frame: frame, .message(message)), patience: patience)
    }

    /// `source` went away: its held notes and pedals are released at `frame` (`patience` as for `receive`).
    public func releaseAll(from source: MIDISourceID, at frame: Int64, patience: Double = 1) {
        release(at: frame, patience: patience) { $0 == source }
    }

    /// Every source that matches went away at once (an ALSA client with several ports): their held
    /// notes and pedals are released at `frame`.
    public func releaseAll(at frame: Int64, where matches: (MIDISourceID) -> Bool) {
        release(at: frame, where: matches)
    }

    @inline(__always)
    private static func tag(_ source: MIDISourceID) -> UInt64 { UInt64(source.rawValue) + 1 }

    @inline(__always)
    private static func source(of tag: UInt64) -> MIDISourceID { MIDISourceID(UInt32(tag - 1)) }

    /// Keeps the holder tables current. A note-off from any source ends the note (a keyboard
    /// split across two programs still stops what it started); the latest note-on owns a key.
    private func track(_ message: MIDIMessage, from source: MIDISourceID) {
        switch message {
        case .noteOn(let channel, let note, let velocity):
            noteHolders[Int(channel & 15) * 128 + Int(note & 127)] = velocity > 0 ? Self.tag(source) : 0
        case .noteOff(let channel, let note, _):
            noteHolders[Int(channel & 15) * 128 + Int(note & 127)] = 0
        case .controlChange(let channel, let controller, let value):
            let c = Int(channel & 15)
            if controller == 120 || controller >= 123 {
                (noteHolders + c * 128).update(repeating: 0, count: 128)
            } else if controller == 121 {
                pedalHolders[c] = 0
            } else if let pedal = session.controllerMap.assignment(channel: channel, controller: controller),
                      pedal.parameter == .sustain {
                // The mapping decides what a pedal is; down from the engine's own threshold (0.5).
                pedalHolders[c] = pedal.value(for: value) >= 0.5 ? Self.tag(source) : 0
                pedalControllers[c] = controller
            }
        default:
            break
        }
    }

    /// Note-offs for every key, and pedal-ups for every pedal, held by a source that matches.
    private func release(at frame: Int64, patience: Double = 1, where matches: (MIDISourceID) -> Bool) {
        for channel in 0..<16 {
            let pedal = pedalHolders[channel]
            if pedal != 0 && matches(Self.source(of: pedal)) {
                pedalHolders[channel] = 0
                enqueue(TimedInstrumentEvent(frame: frame, .message(.controlChange(channel: UInt8(channel), controller: pedalControllers[channel], value: 0))), patience: patience)
            }
            for note in 0..<128 {
                let holder = noteHolders[channel * 128 + note]
                if holder != 0 && matches(Self.source(of: holder)) {
                    noteHolders[channel * 128 + note] = 0
                    enqueue(TimedInstrumentEvent(frame: frame, .message(.noteOff(channel: UInt8(channel), note: UInt8(note), velocity: 64))), patience: patience)
                }
            }
        }
    }

    /// Queues one event, waiting up to `patience` seconds (in 1 ms naps) for room; false if it was dropped.
    ///
    /// A full ring means the audio thread is far behind or stopped. Waiting a moment keeps a burst
    /// (a controller sweep, a file's chord) intact; giving up eventually keeps a dead audio thread
    /// from hanging the MIDI thread.
    @discardableResult
    public func enqueue(_ event: TimedInstrumentEvent, patience: Double = 1) -> Bool {
        if session.events.push(event) { return true }
        var naps = Int(patience * 1000)
        while naps > 0 {
            usleep(1000)
            if session.events.push(event) { return true }
            naps -= 1
        }
        dropped.wrappingAdd(1, ordering: .relaxed)
        return false
    }

    /// Queues without waiting: for the file feeder, which retries later itself.
    func tryEnqueue(_ event: TimedInstrumentEvent) -> Bool {
        session.events.push(event)
    }
}
