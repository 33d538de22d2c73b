import Synchronization
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI
import ToneShaperRealtime

/// The hand-off between the MIDI side and the audio thread, and the audio thread's work per period.
///
/// Three threads touch a session, each through its own door:
/// - one **producer** (a front-end's MIDI reader, or the file feeder, through `LiveInput`) pushes
///   `TimedInstrumentEvent`s into `events`, stamped with absolute frames;
/// - the **audio thread** calls `renderPeriod(into:frames:)`: it pops every event due before the
///   end of the period, turns each frame into an offset (late ones at offset 0), renders them
///   through the instrument's front door (`Instrument.process`, as `render` and the plugins do),
///   hands the block to the recorder, reports what it applied through `played`, and publishes the
///   new frame count in `clock`;
/// - the **control thread** reads the counters and collects the applied events with
///   `collectPlayedMIDI(into:)` (for `--record-midi`).
///
/// Real-time rules for `renderPeriod`: no allocation, no lock, no logging, no I/O, no existential,
/// no Array (so no copy-on-write). Everything it uses is allocated in `init`: the event scratch is a
/// raw pointer, the rings are preallocated, counters are atomics, and the one popped-but-not-yet-due
/// event is kept in a stored optional rather than pushed back. `LiveAllocationTests` runs this step
/// (with the PCM write and the recorder capture) under an allocation counter and expects zero.
public final class LiveSession: @unchecked Sendable {
    /// What the audio thread renders through. Only `offer` replaces it (a JACK graph's new rate), at
    /// the start of a period; other threads read it only where none is ever offered (ALSA, editor).
    public private(set) var instrument: Instrument
    /// The instrument's engine (the same caveat: read it off the audio thread only where no
    /// instrument is ever offered).
    public var engine: Engine { instrument.engine }
    /// The controller map of every engine this session renders with (a rebuilt one keeps it): the
    /// producer thread reads it here, never through `engine`, which the audio thread may swap.
    public let controllerMap: ControllerMap
    /// Interleaved channels of every period (the engine renders stereo).
    public let channels = 2
    /// MIDI side → audio thread.
    public let events: SPSCRing<TimedInstrumentEvent>
    /// Audio thread → control thread: what was applied, at the frame it was applied (for --record-midi).
    let played: SPSCRing<TimedMIDIMessage>?
    /// Gets every rendered frame (and only rendered frames: not the silence after the end).
    public let recorder: AudioRecorder?
    /// Frames to render before going silent; nil for an open-ended (live keyboard) session.
    public let endFrame: Int64?

    /// Editor → audio thread: edited shapes to install, applied at the start of the next period.
    let shapeSwaps: SPSCRing<ShapeSwap>
    /// Audio thread → editor: the shape data each swap replaced, freed by `reclaimShapes()`.
    let retiredShapes: SPSCRing<ShapeData>

    /// The device's clock, fed by the audio thread (`observeDevice`), read by the MIDI thread.
    public let deviceClock: DeviceClock
    /// Frames from the one the device plays when an event arrives to the one the event sounds at:
    /// the device buffer plus one period, the smallest delay at which every event still finds its
    /// frame not yet rendered (set before the threads start; 0 = next period start, untimed).
    public var eventLatency: Int = 0

    /// Most events applied in one period; more wait for the next period (applied late, at offset 0).
    public let eventCapacity: Int
    private let scratch: UnsafeMutablePointer<InstrumentEvent>

    /// Control thread ⇄ audio thread: a rebuilt instrument in, the one it replaced back out.
    private let handOff = InstrumentHandOff()
    /// The rate the recorder was opened at: the engine's at init. A file cannot change rate.
    private let recordingRate: Double

    /// Audio thread → editor: where each sounding note is in its pass, after every period (the
    /// editor's playhead). Lock-free; `placeScratch` is where the audio thread gathers them.
    public let playheads: PlayheadBoard
    private let placeScratch: UnsafeMutablePointer<VoicePlace>
    private var playheadsEmpty = true

    // Audio thread only.
    private var position: Int64 = 0
    private var pending: TimedInstrumentEvent?
    /// False from the period an engine at another rate than the recording's took over.
    private var recording = true

    // Published by the audio thread.
    private let clock = Atomic<Int64>(0)
    private let notes = Atomic<Int>(0)
    private let late = Atomic<Int>(0)
    private let playedDropped = Atomic<Int>(0)

    /// - Parameters:
    ///   - eventCapacity: ring slots between the MIDI side and the audio thread (rounded up to a power of two).
    ///   - recordMIDI: keep what is applied so the control thread can write it to a MIDI file.
    ///   - endFrame: render this many frames, then only silence (a file or script performance).
    public init(instrument: Instrument, eventCapacity: Int = 4096, eventsPerPeriod: Int = 4096,
                recorder: AudioRecorder? = nil, recordMIDI: Bool = false, endFrame: Int64? = nil) {
        precondition(eventsPerPeriod >= 1)
        self.instrument = instrument
        let engine = instrument.engine
        controllerMap = engine.controllerMap
        recordingRate = engine.sampleRate
        self.events = SPSCRing(capacity: max(1, eventCapacity))
        // Each applied event yields one message.
        self.played = recordMIDI ? SPSCRing(capacity: max(65_536, 2 * events.capacity)) : nil
        self.recorder = recorder
        self.endFrame = endFrame
        self.eventCapacity = eventsPerPeriod
        deviceClock = DeviceClock(nominalRate: engine.sampleRate)
        scratch = .allocate(capacity: eventsPerPeriod)
        scratch.initialize(repeating: InstrumentEvent(frame: 0, .message(.noteOff(channel: 0, note: 0, velocity: 0))), count: eventsPerPeriod)
        shapeSwaps = SPSCRing(capacity: 64)
        retiredShapes = SPSCRing(capacity: 64)
        playheads = PlayheadBoard(capacity: engine.voiceCapacity)
        placeScratch = .allocate(capacity: engine.voiceCapacity)
        placeScratch.initialize(repeating: VoicePlace(voice: 0, channel: 0, note: 0, released: false, pass: 0), count: engine.voiceCapacity)
    }

    /// A session on an engine behind its own front door (`Instrument(engine:)`).
    public convenience init(engine: Engine, eventCapacity: Int = 4096, eventsPerPeriod: Int = 4096,
                            recorder: AudioRecorder? = nil, recordMIDI: Bool = false, endFrame: Int64? = nil) {
        self.init(instrument: Instrument(engine: engine), eventCapacity: eventCapacity, eventsPerPeriod: eventsPerPeriod,
                  recorder: recorder, recordMIDI: recordMIDI, endFrame: endFrame)
    }

    deinit {
        scratch.deallocate()
        placeScratch.deallocate()
        while let swap = shapeSwaps.pop() { swap.data.deallocate() }
        reclaimShapes()
    }

    // MARK: - Any thread

    /// Frames the audio thread has rendered (or padded with silence) so far: the frame at which the
    /// next period starts. A live event stamped with this value lands at the start of that period.
    public var framesRendered: Int64 { clock.load(ordering: .acquiring) }

    /// The frame a live event that arrived at monotonic `arrival` nanoseconds is played at: the
    /// frame the device was playing then, plus `eventLatency` — constant latency, no period jitter.
    /// Without an arrival time, a latency or a device clock yet, the next period start (as before timing).
    /// A stamp more than two latencies ahead (a clock gone wrong) is held to that.
    public func frame(arrivedAt arrival: Int64?) -> Int64 {
        let next = framesRendered
        guard eventLatency > 0, let arrival, let playing = deviceClock.frame(at: arrival) else { return next }
        let target = (playing + Double(eventLatency)).rounded()
        guard target.isFinite else { return next }
        return min(Int64(max(min(target, 9e18), -9e18)), next + 2 * Int64(eventLatency))
    }

    /// True once a performance with an end has rendered its last frame.
    public var isFinished: Bool {
        guard let endFrame else { return false }
        return framesRendered >= endFrame
    }

    /// Note-ons (velocity > 0) applied so far.
    public var notesPlayed: Int { notes.load(ordering: .relaxed) }
    /// Events applied after their frame (the producer was behind, or the period's scratch was full).
    public var lateEvents: Int { late.load(ordering: .relaxed) }
    /// Applied MIDI messages the control thread did not collect in time (missing from --record-midi).
    public var unrecordedEvents: Int { playedDropped.load(ordering: .relaxed) }

    // MARK: - Audio thread

    /// Tells the device clock that, at monotonic `nanoseconds`, the device still had `delay` frames
    /// to play before the next period this session renders. Call it just before `renderPeriod`.
    @inline(__always)
    public func observeDevice(delay: Int, at nanoseconds: Int64) {
        deviceClock.observe(frame: position, delay: delay, at: nanoseconds)
    }

    /// Renders one period into `output` (`frames` interleaved stereo frames). Call it from one thread only.
    ///
    /// Events due in this period are applied at frame − periodStart; events whose frame has passed
    /// at offset 0. After `endFrame`, the rest of the period and every later one is silence and is
    /// not recorded, so the recording holds exactly the performance.
    public func renderPeriod(into output: UnsafeMutablePointer<Float>, frames: Int) {
        installInstrument()
        installShapes()
        let start = position
        var count = frames
        if let endFrame { count = Int(max(0, min(Int64(frames), endFrame - start))) }
        let periodEnd = start + Int64(count)

        // The period that reaches the end also takes the events stamped exactly at the end (the
        // last note-off of a file played with no tail): applied after its last frame, so the
        // engine and --record-midi see them and no note is left on.
        let limit = endFrame == periodEnd ? periodEnd + 1 : periodEnd
        var n = 0
        var lastOffset = 0
        while count > 0 && n < eventCapacity {
            if pending == nil { pending = events.pop() }
            guard let event = pending, event.frame < limit else { break }
            pending = nil
            var offset = 0
            if event.frame >= start { offset = Int(event.frame - start) } else { late.wrappingAdd(1, ordering: .relaxed) }
            // The engine wants offsets in order; a producer's out-of-order stamp is applied late, not early.
            if offset < lastOffset { offset = lastOffset }
            lastOffset = offset
            scratch[n] = InstrumentEvent(frame: offset, event.kind)
            n += 1
            note(event.kind, at: start + Int64(offset))
        }

        if count > 0 {
            instrument.process(frames: count, events: UnsafeBufferPointer(start: scratch, count: n), into: output)
            if recording { recorder?.capture(UnsafeBufferPointer(start: output, count: count * channels)) }
        }
        if count < frames {
            (output + count * channels).update(repeating: 0, count: (frames - count) * channels)
        }
        position = start + Int64(frames)
        publishPlayheads()
        clock.store(position, ordering: .releasing)
    }

    /// Takes over an offered instrument once the last replaced one has been reclaimed: a pointer
    /// swap, the old one handed back still retained, so nothing is allocated or freed here.
    @inline(__always)
    private func installInstrument() {
        guard let next = handOff.take(replacing: instrument, at: position) else { return }
        if next.engine.sampleRate != recordingRate { recording = false }
        instrument = next
    }

    /// Tells the editor where the sounding notes are (nothing to say twice while none sounds).
    @inline(__always)
    private func publishPlayheads() {
        let n = engine.places(into: placeScratch, capacity: playheads.capacity)
        guard n > 0 || !playheadsEmpty else { return }
        playheads.publish(placeScratch, count: n, at: position)
        playheadsEmpty = n == 0
    }

    /// Swaps in the shapes the editor sent, while there is room to hand back what they replace.
    @inline(__always)
    private func installShapes() {
        while retiredShapes.availableToWrite > 0, let swap = shapeSwaps.pop() {
            if let previous = instrument.replaceShape(swap.preset, with: swap.data) { _ = retiredShapes.push(previous) }
        }
    }

    /// Counts a note and tells the control thread what was applied, at the frame it was applied.
    @inline(__always)
    private func note(_ kind: InstrumentEvent.Kind, at frame: Int64) {
        switch kind {
        case .message(let message):
            if case .noteOn(_, _, let velocity) = message, velocity > 0 { notes.wrappingAdd(1, ordering: .relaxed) }
            record(TimedMIDIMessage(frame: frame, message: message))
        default:
            break  // a host's kinds (raw bytes, the parameter table, the shape menu): nothing produces them live
        }
    }

    @inline(__always)
    private func record(_ message: TimedMIDIMessage) {
        guard let played else { return }
        if !played.push(message) { playedDropped.wrappingAdd(1, ordering: .relaxed) }
    }

    // MARK: - Control thread

    /// Sends an edited shape to the audio thread as preset `preset`, heard from the next period on.
    /// Builds its data here (the allocation stays on this thread); false when the shape has more
    /// points than the engine's slots hold or the hand-off is full (the audio thread is stalled).
    /// Call from one thread only (the ring's producer side).
    @discardableResult
    public func offerShape(_ shape: Shape, preset: Int) -> Bool {
        reclaimShapes()
        guard shape.points.count <= engine.pointCapacity, (0..<engine.library.shapes.count).contains(preset) else { return false }
        let data = ShapeData(shape)
        if shapeSwaps.push(ShapeSwap(preset: preset, data: data)) { return true }
        data.deallocate()
        return false
    }

    /// Hands the audio thread an instrument to render with from its next period on (built off the
    /// audio thread: for a JACK graph's new rate, from the instrument's setup, so with the same
    /// controller map). Its voices start silent: notes sounding on the old one end there. From the
    /// first period at a rate other than the recorder's, the recorder gets nothing more (finish it
    /// then: a file cannot change rate). One offered before the last was taken over replaces it
    /// (released here, never installed). Any thread; `reclaimEngine()` says when it took over.
    public func offer(_ newInstrument: Instrument) {
        handOff.offer(newInstrument)
    }

    /// Frees the instrument the audio thread replaced, if it has replaced one since the last call,
    /// and says from which session frame and at what rate the new one renders. Call from one
    /// thread only (not the audio thread: the old instrument's memory is freed here).
    public func reclaimEngine() -> (frame: Int64, sampleRate: Double)? {
        handOff.reclaim()
    }

    /// Frees the shape data the audio thread has handed back (called by `offerShape` too).
    public func reclaimShapes() {
        while let old = retiredShapes.pop() { old.deallocate() }
    }

    /// Moves the applied messages queued so far to `messages`; returns how many. Call it often
    /// enough that the ring does not fill (every few milliseconds while playing, once after stopping).
    @discardableResult
    public func collectPlayedMIDI(into messages: inout [TimedMIDIMessage]) -> Int {
        guard let played else { return 0 }
        var moved = 0
        while let message = played.pop() {
            messages.append(message)
            moved += 1
        }
        return moved
    }
}

/// An edited shape on its way to the audio thread: which preset it replaces, and its data.
struct ShapeSwap: BitwiseCopyable {
    var preset: Int
    var data: ShapeData
}
