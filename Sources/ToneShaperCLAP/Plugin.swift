import CCLAP
import Glibc
import Synchronization
import ToneShaperCore
import ToneShaperInstrument

/// One instance of the CLAP instrument: the front door (`Instrument`) behind CLAP's C ABI.
///
/// Threads, as CLAP has them: the host's main thread creates, activates, saves and loads; its audio
/// thread processes. The audio thread plays `current`; a new instrument (made on the main thread by
/// `activate` or a state load) reaches it through `handoff`, and the one it replaces goes back
/// through `retired` to be freed on the main thread: `process` never allocates or frees.
final class CLAPInstrument {
    let plugin: UnsafeMutablePointer<clap_plugin_t>
    let host: UnsafePointer<clap_host_t>
    let library: PresetLibrary

    // Main thread.
    var sampleRate = 0.0
    var active = false
    /// The most frames a block may have (activate's max_frames_count): a larger count is held to it.
    var maxFrames = 0
    /// The instrument last made: what a save describes (state() may run beside process).
    var latest: Instrument?
    /// A state loaded before `activate` (no sample rate yet): the instrument is made from it then.
    var pendingState: [UInt8]?

    // Audio thread (main thread while inactive).
    var current: Unmanaged<Instrument>?
    /// Retained instruments from the main thread to the audio thread (0: none waiting).
    let handoff = Atomic<UInt>(0)
    /// Replaced instruments, from the audio thread back to the main thread to be freed.
    static let retiredSlots = 4
    let retired: UnsafeMutablePointer<Atomic<UInt>>

    /// The controls as the host set them (table ids 0..<n, then the shape), as Double bit patterns,
    /// and which were ever set: an unset control leaves each shape's own setting, as in the LV2 plugin.
    let values: UnsafeMutablePointer<Atomic<UInt64>>
    let moved = Atomic<UInt64>(0)
    /// The global modulation on each control (audio thread), in its unit.
    let modulation: UnsafeMutablePointer<Double>
    static let controlCount = InstrumentParameter.table.count + 1
    static let shapeParameterID: UInt32 = 100

    let events: UnsafeMutablePointer<InstrumentEvent>
    static let eventCapacity = 2048
    /// Output for a host that gives no usable buffers (the engine still advances).
    let scratchLeft: UnsafeMutablePointer<Float>
    let scratchRight: UnsafeMutablePointer<Float>
    static let scratchFrames = 1024

    /// The notes a host started (id, channel, key), to tell it when each has ended (NOTE_END) and
    /// to find a note's key and channel from its id.
    struct Note { var id: Int32; var channel: Int16; var key: Int16 }
    let notes: UnsafeMutablePointer<Note>
    var noteCount = 0
    static let noteCapacity = 256

    init(host: UnsafePointer<clap_host_t>, library: PresetLibrary) {
        self.host = host
        self.library = library
        plugin = .allocate(capacity: 1)
        retired = .allocate(capacity: Self.retiredSlots)
        for i in 0..<Self.retiredSlots { (retired + i).initialize(to: Atomic(0)) }
        values = .allocate(capacity: Self.controlCount)
        for row in InstrumentParameter.table { (values + row.id).initialize(to: Atomic(row.defaultValue.bitPattern)) }
        (values + Self.controlCount - 1).initialize(to: Atomic(0.0.bitPattern))
        modulation = .allocate(capacity: Self.controlCount)
        modulation.initialize(repeating: 0, count: Self.controlCount)
        events = .allocate(capacity: Self.eventCapacity)
        scratchLeft = .allocate(capacity: Self.scratchFrames)
        scratchRight = .allocate(capacity: Self.scratchFrames)
        notes = .allocate(capacity: Self.noteCapacity)
    }

    deinit {
        current?.release()
        collectRetired()
        let waiting = handoff.exchange(0, ordering: .acquiring)
        if waiting != 0 { Unmanaged<Instrument>.fromOpaque(UnsafeRawPointer(bitPattern: waiting)!).release() }
        retired.deinitialize(count: Self.retiredSlots); retired.deallocate()
        values.deinitialize(count: Self.controlCount); values.deallocate()
        modulation.deallocate(); events.deallocate(); scratchLeft.deallocate(); scratchRight.deallocate(); notes.deallocate()
        plugin.deallocate()
    }

    /// A new instance for `host`, its `clap_plugin_t` filled in (nil: the shipped shapes are unreadable).
    static func create(host: UnsafePointer<clap_host_t>) -> UnsafeMutablePointer<clap_plugin_t>? {
        guard case .success(let library) = bundledLibrary else { return nil }
        let me = CLAPInstrument(host: host, library: library)
        me.plugin.initialize(to: clap_plugin_t(
            desc: withUnsafePointer(to: &descriptor) { $0 },
            plugin_data: Unmanaged.passRetained(me).toOpaque(),
            init: { p in instance(p) != nil },
            destroy: { p in
                guard let p, let data = p.pointee.plugin_data else { return }
                Unmanaged<CLAPInstrument>.fromOpaque(data).release()
            },
            activate: { p, rate, _, most in instance(p)?.activate(sampleRate: rate, maxFrames: Int(most)) ?? false },
            deactivate: { p in instance(p)?.deactivate() },
            start_processing: { p in instance(p)?.active ?? false },
            stop_processing: { _ in },
            reset: { p in instance(p)?.reset() },
            process: { p, process in
                guard let me = instance(p), let process else { return clap_process_status(CLAP_PROCESS_ERROR) }
                return me.process(process)
            },
            get_extension: { p, id in instance(p) != nil ? extensionData(id) : nil },
            on_main_thread: { p in instance(p)?.collectRetired() }))
        return me.plugin
    }

    // MARK: - Lifecycle (main thread)

    /// Makes the instrument at the host's rate: from a state loaded before, else on the shipped
    /// shapes, with the controls the host set.
    func activate(sampleRate rate: Double, maxFrames most: Int) -> Bool {
        guard !active else { return false }
        maxFrames = most
        guard rate >= 8000, rate <= 768_000 else {
            say("the host asked for a sample rate of \(rate); 8000...768000 plays")
            return false
        }
        // The same rate again: the instrument plays on as it was. Another: a new one from the
        // state loaded (or the one playing until now), with the controls the host set.
        if current == nil || rate != sampleRate || pendingState != nil {
            let bytes = pendingState ?? (try? latest?.state())
            let instrument: Instrument
            if let bytes {
                guard let restored = try? Instrument(state: bytes, library: library, sampleRate: rate) else { return false }
                instrument = restored
            } else {
                instrument = Instrument(library: library, sampleRate: rate)
            }
            applyControls(to: instrument)
            current?.release()
            current = Unmanaged.passRetained(instrument)
            latest = instrument
            pendingState = nil
        }
        sampleRate = rate
        noteCount = 0
        active = true
        return true
    }

    func deactivate() {
        guard active else { return }
        active = false
        // Nothing processes now: an instrument still waiting is taken here.
        let waiting = handoff.exchange(0, ordering: .acquiring)
        if waiting != 0 {
            current?.release()
            current = Unmanaged<Instrument>.fromOpaque(UnsafeRawPointer(bitPattern: waiting)!)
        }
        collectRetired()
    }

    /// Frees the instruments the audio thread has put aside.
    func collectRetired() {
        for i in 0..<Self.retiredSlots {
            let old = retired[i].exchange(0, ordering: .acquiring)
            if old != 0 { Unmanaged<Instrument>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).release() }
        }
    }

    /// Plays `instrument` from now on: at once while inactive, else from the audio thread's next block.
    func install(_ instrument: Instrument) {
        latest = instrument
        guard active else {
            current?.release()
            current = Unmanaged.passRetained(instrument)
            return
        }
        collectRetired()
        let previous = handoff.exchange(UInt(bitPattern: Unmanaged.passRetained(instrument).toOpaque()), ordering: .acquiringAndReleasing)
        if previous != 0 { Unmanaged<Instrument>.fromOpaque(UnsafeRawPointer(bitPattern: previous)!).release() }  // never played
    }

    /// The controls the host has set, applied to a new instrument before it plays (main thread:
    /// nothing else holds it yet).
    func applyControls(to instrument: Instrument) {
        var count = 0
        let set = moved.load(ordering: .acquiring)
        for c in 0..<Self.controlCount where set & (1 << UInt64(c)) != 0 {
            let value = Double(bitPattern: values[c].load(ordering: .relaxed))
            events[count] = InstrumentEvent(frame: 0, c == Self.controlCount - 1 ? .shape(Int(value.rounded()))
                                                                               : .parameter(id: c, value: value))
            count += 1
        }
        instrument.process(frames: 0, events: UnsafeBufferPointer(start: events, count: count), left: scratchLeft, right: scratchRight)
    }

    // MARK: - Audio thread

    /// The instrument to play this block: one waiting in `handoff` replaces the current one, which
    /// goes to `retired` (left waiting if every retired slot is still full).
    @inline(__always) func adoptHandoff() {
        guard handoff.load(ordering: .relaxed) != 0 else { return }
        guard let slot = (0..<Self.retiredSlots).first(where: { retired[$0].load(ordering: .relaxed) == 0 }) else { return }
        let next = handoff.exchange(0, ordering: .acquiring)
        guard next != 0 else { return }
        if let old = current { retired[slot].store(UInt(bitPattern: old.toOpaque()), ordering: .releasing) }
        current = Unmanaged<Instrument>.fromOpaque(UnsafeRawPointer(bitPattern: next)!)
        noteCount = 0  // the notes of the old instrument end with it
        host.pointee.request_callback?(host)  // so on_main_thread frees the old one
    }

    /// All sound off and controllers reset on every channel (the host's reset: a transport jump).
    func reset() {
        adoptHandoff()
        guard let instrument = current?.takeUnretainedValue() else { return }
        var count = 0
        for channel in 0..<16 {
            events[count] = InstrumentEvent(frame: 0, .midi(0xB0 | UInt8(channel), 120, 0))
            events[count + 1] = InstrumentEvent(frame: 0, .midi(0xB0 | UInt8(channel), 121, 0))
            count += 2
        }
        instrument.process(frames: 0, events: UnsafeBufferPointer(start: events, count: count), left: scratchLeft, right: scratchRight)
        noteCount = 0
    }
}

/// The instance behind a `clap_plugin_t` a host passes (nil for a null or foreign pointer).
@inline(__always) func instance(_ p: UnsafePointer<clap_plugin_t>?) -> CLAPInstrument? {
    guard let data = p?.pointee.plugin_data else { return nil }
    return Unmanaged<CLAPInstrument>.fromOpaque(data).takeUnretainedValue()
}

/// The extensions the plugin implements.
func extensionData(_ id: UnsafePointer<CChar>?) -> UnsafeRawPointer? {
    guard let id else { return nil }
    if strcmp(id, "clap.params") == 0 { return withUnsafePointer(to: &paramsExtension) { UnsafeRawPointer($0) } }
    if strcmp(id, "clap.state") == 0 { return withUnsafePointer(to: &stateExtension) { UnsafeRawPointer($0) } }
    if strcmp(id, "clap.note-ports") == 0 { return withUnsafePointer(to: &notePortsExtension) { UnsafeRawPointer($0) } }
    if strcmp(id, "clap.audio-ports") == 0 { return withUnsafePointer(to: &audioPortsExtension) { UnsafeRawPointer($0) } }
    return nil
}
