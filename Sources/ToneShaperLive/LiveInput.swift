import Synchronization
import ToneShaperALSA
import ToneShaperCore
import ToneShaperMIDI

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The producer side of a session: filters MIDI, stamps it with a frame and queues it for the audio thread.
///
/// Exactly one thread may use an input (the ring is single-producer): the sequencer's reader thread
/// for a keyboard, or the feeder thread for a file or script. It runs on that thread, not the audio
/// thread, so it may wait a little when the ring is full; the audio thread never waits for it.
public final class LiveInput: @unchecked Sendable {
    public let session: LiveSession
    /// Only messages on this 0-based channel pass (release-all always passes); nil passes all.
    public let channelFilter: UInt8?
    /// Drops program changes, for `--preset` (one preset on every channel, as `render --preset` does).
    public let ignoresProgramChanges: Bool

    private let dropped = Atomic<Int>(0)

    public init(session: LiveSession, channelFilter: UInt8? = nil, ignoresProgramChanges: Bool = false) {
        precondition(channelFilter.map { $0 < 16 } ?? true, "channel filter is 0-based, 0...15")
        self.session = session
        self.channelFilter = channelFilter
        self.ignoresProgramChanges = ignoresProgramChanges
    }

    /// Events lost because the ring stayed full (the audio thread stopped consuming).
    public var droppedEvents: Int { dropped.load(ordering: .relaxed) }

    /// Whether a message reaches the engine at all.
    public func accepts(_ message: MIDIMessage) -> Bool {
        if let channelFilter, message.channel != channelFilter { return false }
        if ignoresProgramChanges, case .programChange = message { return false }
        return true
    }

    /// A live event from the sequencer: stamped with the audio thread's current frame count, so it
    /// lands at the start of the next period to be rendered. A source that went away becomes
    /// release-all, so no note is left sounding with nobody to release it.
    public func receive(_ event: SequencerEvent) {
        let frame = session.framesRendered
        switch event {
        case .message(let message):
            guard accepts(message) else { return }
            enqueue(TimedEngineEvent(frame: frame, .midi(message)))
        case .sourceGone:
            enqueue(TimedEngineEvent(frame: frame, .releaseAll))
        }
    }

    /// Queues one event, waiting up to `patience` seconds (in 1 ms naps) for room; false if it was dropped.
    ///
    /// A full ring means the audio thread is far behind or stopped. Waiting a moment keeps a burst
    /// (a controller sweep, a file's chord) intact; giving up eventually keeps a dead audio thread
    /// from hanging the MIDI thread.
    @discardableResult
    public func enqueue(_ event: TimedEngineEvent, patience: Double = 1) -> Bool {
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
    func tryEnqueue(_ event: TimedEngineEvent) -> Bool {
        session.events.push(event)
    }
}
