import CALSA
import ToneShaperRealtime

/// When the kernel delivered each event to our port, on CLOCK_MONOTONIC.
///
/// Why not just read the clock when the reader thread takes the event: on a loaded machine (or a
/// single core, where the audio thread's render bursts run first) the reader wakes up to a
/// millisecond late, and every event it takes would carry that lateness as timing jitter. The
/// sequencer can stamp events itself as they arrive, in a queue's real time (our port is created
/// with timestamping on a queue of our own, running, so its time is nanosecond-exact from the
/// kernel's clock). This maps that queue time onto CLOCK_MONOTONIC: the offset between the two is
/// measured by reading the queue's time between two monotonic readings (the tightest of a few
/// tries), and measured again every few seconds by the reader thread, which owns the handle.
final class SequencerClock {
    let queue: Int32
    private let seq: OpaquePointer
    private let status: OpaquePointer
    /// monotonic = queue real time + offset (nanoseconds).
    private(set) var offset: Int64 = 0
    private var measuredAt: Int64 = 0
    /// How often the offset is measured again.
    static let remeasureNanoseconds: Int64 = 5_000_000_000

    /// Allocates and starts a queue on `seq` (opened for output too: starting a queue is an event).
    init(seq: OpaquePointer, name: String) throws {
        self.seq = seq
        let queue = snd_seq_alloc_named_queue(seq, name)
        guard queue >= 0 else { throw ALSAError("cannot allocate a sequencer queue for timestamps", code: queue) }
        var statusOptional: OpaquePointer?
        let allocated = snd_seq_queue_status_malloc(&statusOptional)
        guard allocated >= 0, let status = statusOptional else {
            snd_seq_free_queue(seq, queue)
            throw ALSAError("cannot allocate a sequencer queue status", code: allocated)
        }
        self.queue = queue
        self.status = status
        let started = snd_seq_control_queue(seq, queue, Int32(SND_SEQ_EVENT_START.rawValue), 0, nil)
        let drained = started >= 0 ? snd_seq_drain_output(seq) : started
        guard drained >= 0 else {
            snd_seq_queue_status_free(status)
            snd_seq_free_queue(seq, queue)
            throw ALSAError("cannot start the sequencer queue for timestamps", code: drained)
        }
        measure()
    }

    deinit { snd_seq_queue_status_free(status) }

    /// The queue's real time now, bracketed by two monotonic readings; keeps the tightest of five.
    func measure() {
        var best: (width: Int64, offset: Int64)?
        for _ in 0..<5 {
            let before = MonotonicClock.nanoseconds()
            guard snd_seq_get_queue_status(seq, queue, status) >= 0, let real = snd_seq_queue_status_get_real_time(status) else { continue }
            let after = MonotonicClock.nanoseconds()
            let queueTime = Int64(real.pointee.tv_sec) * 1_000_000_000 + Int64(real.pointee.tv_nsec)
            let width = after - before
            if best == nil || width < best!.width { best = (width, before + width / 2 - queueTime) }
        }
        if let best { offset = best.offset }
        measuredAt = MonotonicClock.nanoseconds()
    }

    /// The event's arrival on the monotonic clock: its real-time stamp from our queue, or — for an
    /// event without one, or a stamp that makes no sense — the moment we read it.
    func arrival(of event: UnsafePointer<snd_seq_event_t>, readAt now: Int64) -> Int64 {
        if now - measuredAt > Self.remeasureNanoseconds { measure() }
        let stamped = event.pointee.flags & UInt8(SND_SEQ_TIME_STAMP_MASK) == UInt8(SND_SEQ_TIME_STAMP_REAL)
        guard stamped, Int32(event.pointee.queue) == queue else { return now }
        let time = event.pointee.time.time
        let arrival = Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) + offset
        // Never in the future, and not from long ago (a queue that stopped or jumped): then, now.
        return arrival <= now && now - arrival < 100_000_000 ? arrival : now
    }
}
