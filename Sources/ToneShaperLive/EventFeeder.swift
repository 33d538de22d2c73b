import Foundation
import Synchronization
import ToneShaperCore
import ToneShaperMIDI

/// Feeds a known performance (a MIDI file, a text script) into a session with each event's exact frame.
///
/// The events are stamped with the frames the file gives them, not with the time they are queued,
/// so the audio thread applies each at the very offset the offline renderer uses, and the live
/// render equals the offline one sample for sample — as long as every event is queued before the
/// audio thread reaches its period.
///
/// That is why the feeder keeps the ring as full as it can rather than a fixed time ahead:
/// `prime()` queues what fits before the audio thread starts, and the feeder thread tops the ring
/// up as the audio thread drains it (napping `nap` seconds when the ring is full). A real device
/// paces the audio thread, so a ring of a few thousand events is seconds ahead; a device that does
/// not pace it (ALSA's `null`/`file` plugins, used by the tests) could outrun any time window, but
/// not a file that fits in the ring — and `ringCapacity(for:)` sizes the ring so ordinary files do.
/// The audio thread never waits for the feeder: an event that is still late is applied at offset 0.
public final class EventFeeder: @unchecked Sendable {
    /// Largest ring a file gets: 65,536 events (a few MB), beyond which the file streams through it.
    public static let maximumRingCapacity = 1 << 16

    /// A ring that holds the whole performance when it is not huge (never below the live default).
    public static func ringCapacity(for eventCount: Int) -> Int {
        min(maximumRingCapacity, max(4096, eventCount + 1))
    }

    public let input: LiveInput
    private let events: [TimedInstrumentEvent]
    private let nap: Double
    // Touched by `prime()` (before the thread starts) and then only by the feeder thread.
    private var next = 0
    private let stopRequested = Atomic<Bool>(false)
    private let complete = Atomic<Bool>(false)
    private var exited: DispatchSemaphore?

    /// - Parameter messages: in any order; played sorted by frame, equal frames keeping their order.
    ///   Messages the input does not accept (other channels, program changes under --preset) are left out.
    public init(messages: [TimedMIDIMessage], input: LiveInput, nap: Double = 0.002) {
        self.input = input
        self.nap = nap
        events = messages.inFrameOrder()
            .filter { input.accepts($0.message) }
            .map { TimedInstrumentEvent(frame: max(0, $0.frame), .message($0.message)) }
        if events.isEmpty { complete.store(true, ordering: .releasing) }
    }

    /// Events that will be queued in total.
    public var eventCount: Int { events.count }

    /// True once every event is in the ring.
    public var isComplete: Bool { complete.load(ordering: .acquiring) }

    /// Queues as many events as fit now; call before the audio thread starts. Returns how many are queued.
    @discardableResult
    public func prime() -> Int {
        fill()
        return next
    }

    /// Starts the thread that queues the rest.
    public func start() {
        precondition(exited == nil, "EventFeeder.start() called twice")
        let done = DispatchSemaphore(value: 0)
        exited = done
        let thread = Thread { [self] in
            defer { done.signal() }
            while !stopRequested.load(ordering: .acquiring) && !isComplete {
                if fill() == 0 { Thread.sleep(forTimeInterval: nap) }
            }
        }
        thread.name = "toneshaper-midi-feed"
        thread.start()
    }

    /// Stops the thread and waits for it. Safe to call more than once, or without `start()`.
    public func stop() {
        guard let done = exited else { return }
        stopRequested.store(true, ordering: .releasing)
        done.wait()
        exited = nil
    }

    /// Queues events until the ring is full or all are in; returns how many it queued.
    @discardableResult
    private func fill() -> Int {
        let first = next
        while next < events.count && input.tryEnqueue(events[next]) { next += 1 }
        if next == events.count { complete.store(true, ordering: .releasing) }
        return next - first
    }
}
