import CLV2
import Glibc
import Synchronization
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// What the plugin plays: the instrument, and the file each of its file properties was last set
/// to (the shape, the scale, the keyboard map; empty: none), which it tells the host on patch:Get.
/// Made and freed off the audio thread; `run` reaches it through one pointer word it swaps.
final class Setup {
    let instrument: Instrument
    let paths: [[UInt8]]
    init(instrument: Instrument, paths: [[UInt8]] = Array(repeating: [], count: FileProperty.allCases.count)) {
        self.instrument = instrument
        self.paths = paths
    }
}

/// The LV2 instrument `toneshaper.lv2`: the front door (`Instrument`) behind LV2's C ABI.
///
/// Ports, in the order toneshaper.ttl gives them (generated from the same table, `LV2Turtle`):
/// 0 MIDI and patch messages in (atom:Sequence), 1–2 audio out, 3 the shape, 4… the controls of
/// `InstrumentParameter.table`, then the notify port (patch:Set answers out). A control is applied
/// when its value changes, at the block's first frame, as a knob's controller would be: an unmoved
/// control leaves each preset's own setting. A user's shape, scale or keyboard map arrives as a
/// patch:Set of a file path: read and built into a new instrument by the worker (Worker.swift).
final class Plugin {
    /// The `Setup` playing (retained once, for this word): swapped by `workResponse` and `restore`.
    let current: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// The bundle's shapes, which a restored state's shapes are placed after.
    let library: PresetLibrary
    let sampleRate: Double
    let midiEventType: LV2_URID
    let urids: StateURIDs
    /// The host's worker and log (either may be missing: then no file is loaded, lines go to stderr).
    let schedule: UnsafeMutablePointer<LV2_Worker_Schedule>?
    let log: UnsafeMutablePointer<LV2_Log_Log>?
    let patch: UnsafeMutablePointer<CLV2Patch>
    /// Each file property's URID, in `FileProperty` order.
    let propertyURIDs: [LV2_URID]
    var midiIn: UnsafePointer<LV2_Atom_Sequence>?
    var notify: UnsafeMutablePointer<LV2_Atom_Sequence>?
    var left: UnsafeMutablePointer<Float>?
    var right: UnsafeMutablePointer<Float>?
    /// The shape port, then one per parameter.
    let controlCount: Int
    let controls: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Each control's value when last applied (its default until moved).
    let applied: UnsafeMutablePointer<Float>
    /// Each control's default, copied into `applied` when a new instrument starts (the audio
    /// thread's copy: a loop over the parameter table there allocates in a debug build).
    let defaults: UnsafeMutablePointer<Float>
    let events: UnsafeMutablePointer<InstrumentEvent>
    static let eventCapacity = 2048
    /// Audio-thread words: [0] the file properties (bits) to announce on the notify port, [1] the
    /// restore count (a worker's answer built before the last restore is dropped).
    let words: UnsafeMutablePointer<Int>
    /// Old setups the worker could not be asked to free yet (its queue was full): asked again next block.
    let retiring: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    static let retiringCapacity = 8
    /// A request for the worker, made in `run` without allocating: header and path.
    let request: UnsafeMutableRawPointer
    /// The lasting MIDI settings `run` applied (controllers, programs, bends, pressures: status
    /// and data bytes in a word), in order, for the worker to carry into the instruments it builds:
    /// written by `run` only, read by the worker (and by `restore`, which runs alone).
    let settings: UnsafeMutablePointer<UInt32>
    static let settingsCapacity = 4096
    let settingsWritten = Atomic<Int>(0)
    let settingsRead = Atomic<Int>(0)
    /// Whether a drain of `settings` is asked of the worker and not done yet (`run` asks at half full).
    let drainAsked = Atomic<Bool>(false)
    /// The worker's side: the controls of the instrument playing as last set (its state's, then
    /// what `run` applied since), the controls of the next instrument it builds. Nil: not made yet.
    var mirror: ControlMirror?
    /// The worker's side: the setup it built last (the base of the next file's setup, even before
    /// `run` has swapped it in), and the lock `save` and the worker's freeing take (never `run`).
    var latest: Setup?
    let lock: UnsafeMutablePointer<pthread_mutex_t>
    /// The worker's side (`mirror`, `latest`, the settings' reading end) for `save` too, which may
    /// run beside the worker: taken by each worker request and by `save`, before `lock`, never by `run`.
    let workerLock: UnsafeMutablePointer<pthread_mutex_t>

    init(library: PresetLibrary, sampleRate: Double, midiEventType: LV2_URID, urids: StateURIDs,
         schedule: UnsafeMutablePointer<LV2_Worker_Schedule>?, log: UnsafeMutablePointer<LV2_Log_Log>?,
         map: UnsafeMutablePointer<LV2_URID_Map>) {
        self.library = library
        self.sampleRate = sampleRate
        self.midiEventType = midiEventType
        self.urids = urids
        self.schedule = schedule
        self.log = log
        patch = .allocate(capacity: 1)
        clv2_patch_init(patch, map)
        propertyURIDs = FileProperty.allCases.map { map.pointee.map(map.pointee.handle, $0.uri) }
        current = .allocate(capacity: 1)
        current.initialize(to: Unmanaged.passRetained(Setup(instrument: Instrument(library: library, sampleRate: sampleRate))).toOpaque())
        let table = InstrumentParameter.table
        controlCount = 1 + table.count
        controls = .allocate(capacity: controlCount)
        controls.initialize(repeating: nil, count: controlCount)
        defaults = .allocate(capacity: controlCount)
        defaults[0] = 0
        for row in table { defaults[1 + row.id] = Float(row.defaultValue) }
        applied = .allocate(capacity: controlCount)
        applied.initialize(from: defaults, count: controlCount)
        events = .allocate(capacity: Self.eventCapacity)
        words = .allocate(capacity: 2)
        words.initialize(repeating: 0, count: 2)
        retiring = .allocate(capacity: Self.retiringCapacity)
        retiring.initialize(repeating: nil, count: Self.retiringCapacity)
        request = .allocate(byteCount: WorkRequest.size + WorkRequest.maximumPath, alignment: 8)
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        workerLock = .allocate(capacity: 1)
        pthread_mutex_init(workerLock, nil)
        settings = .allocate(capacity: Self.settingsCapacity)
    }

    deinit {
        // cleanup: nothing else runs now. A setup the host never handed back is lost with it.
        if let setup = current.pointee { Unmanaged<Setup>.fromOpaque(setup).release() }
        for i in 0..<Self.retiringCapacity { if let setup = retiring[i] { Unmanaged<Setup>.fromOpaque(setup).release() } }
        latest = nil
        current.deallocate(); retiring.deallocate(); words.deallocate(); request.deallocate()
        patch.deallocate()
        pthread_mutex_destroy(lock); lock.deallocate()
        pthread_mutex_destroy(workerLock); workerLock.deallocate()
        controls.deallocate(); applied.deallocate(); defaults.deallocate(); events.deallocate(); settings.deallocate()
    }

    /// The setup playing, for the audio thread (the only one that swaps it).
    var playing: Setup { Unmanaged<Setup>.fromOpaque(clv2_load(current)!).takeUnretainedValue() }
    var instrument: Instrument { playing.instrument }

    /// The setup playing, kept alive for a thread other than the audio thread (save, the worker):
    /// taken under the lock the worker frees setups under, so it cannot be freed in between.
    func holdPlaying() -> Unmanaged<Setup> {
        pthread_mutex_lock(lock)
        let setup = Unmanaged<Setup>.fromOpaque(clv2_load(current)!).retain()
        pthread_mutex_unlock(lock)
        return setup
    }

    func connect(_ port: UInt32, _ data: UnsafeMutableRawPointer?) {
        switch port {
        case 0: midiIn = data.map { UnsafePointer($0.assumingMemoryBound(to: LV2_Atom_Sequence.self)) }
        case 1: left = data?.assumingMemoryBound(to: Float.self)
        case 2: right = data?.assumingMemoryBound(to: Float.self)
        default:
            let c = Int(port) - 3
            if c < controlCount { controls[c] = data.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) } }
            else if c == controlCount { notify = data?.assumingMemoryBound(to: LV2_Atom_Sequence.self) }
        }
    }

    /// One block: moved controls at frame 0, then the MIDI events at their frames; a patch:Set of a
    /// file is handed to the worker, a patch:Get answered on the notify port. Nothing here
    /// allocates, locks or reads a file.
    func run(_ frames: Int) {
        for i in 0..<Self.retiringCapacity {
            if let setup = retiring[i], scheduleRetire(setup) { retiring[i] = nil }
        }
        if let notify { clv2_notify_begin(patch, notify) } else { patch.pointee.writing = 0 }
        guard let left, let right else { return }
        let instrument = playing.instrument
        var count = 0
        for c in 0..<controlCount {
            guard let port = controls[c] else { continue }
            let value = port.pointee
            guard value == value, value != applied[c] else { continue }  // NaN or unmoved: nothing
            applied[c] = value
            events[count] = InstrumentEvent(frame: 0, c == 0 ? .shape(Int(value.rounded()))
                                                             : .parameter(id: c - 1, value: Double(value)))
            count += 1
        }
        var start = 0  // where the events in `events` are counted from
        if let midiIn {
            // LV2_ATOM_SEQUENCE_FOREACH by hand: each event is its header and body, padded to 8 bytes.
            let base = UnsafeRawPointer(midiIn)
            let end = MemoryLayout<LV2_Atom>.size + Int(midiIn.pointee.atom.size)
            var offset = MemoryLayout<LV2_Atom_Sequence>.size
            while offset + MemoryLayout<LV2_Atom_Event>.size <= end {
                let event = (base + offset).assumingMemoryBound(to: LV2_Atom_Event.self)
                let size = Int(event.pointee.body.size)
                let body = (base + offset + MemoryLayout<LV2_Atom_Event>.size).assumingMemoryBound(to: UInt8.self)
                guard offset + MemoryLayout<LV2_Atom_Event>.size + size <= end else { break }  // runs past the sequence
                offset += MemoryLayout<LV2_Atom_Event>.size + ((size + 7) & ~7)
                guard event.pointee.body.type == midiEventType else {
                    patchMessage(UnsafeRawPointer(event) + MemoryLayout<LV2_Atom_Event>.size - MemoryLayout<LV2_Atom>.size)
                    continue
                }
                guard (1...3).contains(size) else { continue }
                let frame = min(max(Int(event.pointee.time.frames), start), frames)
                if count == Self.eventCapacity {
                    instrument.process(frames: frame - start, events: UnsafeBufferPointer(start: events, count: count),
                                       left: left + start, right: right + start)
                    start = frame
                    count = 0
                }
                events[count] = InstrumentEvent(frame: frame - start, .midi(body[0], size > 1 ? body[1] : 0, size > 2 ? body[2] : 0))
                count += 1
                if (0xA0..<0xF0).contains(body[0]) { keepSetting(body[0], size > 1 ? body[1] : 0, size > 2 ? body[2] : 0) }
            }
        }
        instrument.process(frames: frames - start, events: UnsafeBufferPointer(start: events, count: count),
                           left: left + start, right: right + start)
        announce()
    }
}

/// LV2Turtle.pluginURI (a C string here: the descriptor points at it for the library's lifetime).
let pluginURI: StaticString = "urn:toneshaper:lv2:instrument"
let midiEventURI = "http://lv2plug.in/ns/ext/midi#MidiEvent"
let uridMapURI = "http://lv2plug.in/ns/ext/urid#map"

/// One line on the host's stderr (instantiate and restore, which have no log), through the file
/// descriptor: no shared FILE.
func say(_ line: String) {
    let text = "toneshaper.lv2: \(line)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

@inline(__always) func plugin(_ handle: LV2_Handle?) -> Plugin { Unmanaged<Plugin>.fromOpaque(handle!).takeUnretainedValue() }

/// The shapes come from the bundle's own Presets folder, read here (never in run), so the plugin
/// plays the same wherever it is installed.
func instantiate(rate: Double, bundle: UnsafePointer<CChar>?,
                 features: UnsafePointer<UnsafePointer<LV2_Feature>?>?) -> LV2_Handle? {
    var map: UnsafeMutablePointer<LV2_URID_Map>?
    var schedule: UnsafeMutablePointer<LV2_Worker_Schedule>?
    var log: UnsafeMutablePointer<LV2_Log_Log>?
    var f = features
    while let feature = f?.pointee {
        if strcmp(feature.pointee.URI, uridMapURI) == 0 { map = feature.pointee.data?.assumingMemoryBound(to: LV2_URID_Map.self) }
        if strcmp(feature.pointee.URI, workerScheduleURI) == 0 { schedule = feature.pointee.data?.assumingMemoryBound(to: LV2_Worker_Schedule.self) }
        if strcmp(feature.pointee.URI, logURI) == 0 { log = feature.pointee.data?.assumingMemoryBound(to: LV2_Log_Log.self) }
        f = f! + 1
    }
    guard let map, let bundle, rate >= 8000, rate <= 768_000 else {
        say("the host gave no urid:map, no bundle path or a sample rate outside 8000...768000")
        return nil
    }
    var folder = String(cString: bundle)
    if !folder.hasSuffix("/") { folder += "/" }
    let library: PresetLibrary
    do {
        library = try PresetLibrary.load(directory: folder + "Presets")
    } catch {
        say("\(error)")
        return nil
    }
    func urid(_ uri: String) -> LV2_URID { map.pointee.map(map.pointee.handle, uri) }
    let instance = Plugin(library: library, sampleRate: rate, midiEventType: urid(midiEventURI),
                          urids: StateURIDs(instrument: urid(stateKeyURI), shape: urid(shapeKeyURI),
                                            string: urid(atomStringURI), int: urid(atomIntURI),
                                            files: FileProperty.allCases.map { urid($0.stateKey) }, error: urid(logErrorURI)),
                          schedule: schedule, log: log, map: map)
    return Unmanaged.passRetained(instance).toOpaque()
}

nonisolated(unsafe) var descriptor = LV2_Descriptor(
    URI: UnsafeRawPointer(pluginURI.utf8Start).assumingMemoryBound(to: CChar.self),
    instantiate: { _, rate, bundle, features in instantiate(rate: rate, bundle: bundle, features: features) },
    connect_port: { handle, port, data in plugin(handle).connect(port, data) },
    activate: nil,
    run: { handle, frames in plugin(handle).run(Int(frames)) },
    deactivate: nil,
    cleanup: { handle in Unmanaged<Plugin>.fromOpaque(handle!).release() },
    extension_data: { uri in
        guard let uri else { return nil }
        if strcmp(uri, stateInterfaceURI) == 0 { return withUnsafePointer(to: &stateInterface) { UnsafeRawPointer($0) } }
        if strcmp(uri, workerInterfaceURI) == 0 { return withUnsafePointer(to: &workerInterface) { UnsafeRawPointer($0) } }
        return nil
    })

/// The library's one exported symbol (the version script hides everything else).
@_cdecl("lv2_descriptor") public func lv2Descriptor(_ index: UInt32) -> UnsafePointer<LV2_Descriptor>? {
    index == 0 ? withUnsafePointer(to: &descriptor) { $0 } : nil
}

// MARK: - State

let stateInterfaceURI = "http://lv2plug.in/ns/ext/state#interface"
let stateKeyURI = "urn:toneshaper:lv2:state#instrument"
let shapeKeyURI = "urn:toneshaper:lv2:state#shape-port"
let atomStringURI = "http://lv2plug.in/ns/ext/atom#String"
let atomIntURI = "http://lv2plug.in/ns/ext/atom#Int"

struct StateURIDs {
    let instrument: LV2_URID, shape: LV2_URID, string: LV2_URID, int: LV2_URID
    /// The state keys of the files last loaded (FileProperty order), and log:Error.
    let files: [LV2_URID], error: LV2_URID
}

extension Plugin {
    /// The whole instrument (InstrumentState's JSON, as an atom:String: readable in a session
    /// file) and the shape menu's value it was saved with. The host keeps the ports' values itself;
    /// the controls the player set over MIDI since the instrument started (a controller, a
    /// program, a bend) are the state's, as a file load carries them, so a session reopens as left.
    func save(_ store: LV2_State_Store_Function, _ handle: LV2_State_Handle?) -> LV2_State_Status {
        pthread_mutex_lock(workerLock)  // save may run beside run() and the worker
        defer { pthread_mutex_unlock(workerLock) }
        let held = holdPlaying()
        defer { held.release() }
        let setup = held.takeUnretainedValue()
        var bytes: [UInt8]
        do {
            bytes = try setup.instrument.state()
            drainSettings()
            if let controls = mirror?.messages {
                var state = try InstrumentState(bytes: bytes)
                state.controls = controls
                bytes = try state.encoded()
            }
        } catch {
            say("the state cannot be saved: \(error)")
            return LV2_STATE_ERR_UNKNOWN
        }
        let flags = UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue)
        var text = bytes
        text.append(0)
        var status = text.withUnsafeBytes { store(handle, urids.instrument, $0.baseAddress, $0.count, urids.string, flags) }
        guard status == LV2_STATE_SUCCESS else { return status }
        var shape = Int32(applied[0].rounded())
        status = store(handle, urids.shape, &shape, MemoryLayout<Int32>.size, urids.int, flags)
        // The files' names, for the host's file choosers only: the state above holds their content.
        for (key, path) in zip(urids.files, setup.paths) where status == LV2_STATE_SUCCESS && !path.isEmpty {
            status = (path + [0]).withUnsafeBytes { store(handle, key, $0.baseAddress, $0.count, urids.string, flags) }
        }
        return status
    }

    /// A new instrument from the saved state (shapes by content: the same sound on a machine whose
    /// bundle has other shapes). The shape menu's saved value counts as applied, so the host's
    /// restoring the port does not choose that menu entry of this machine's bundle over the state's.
    func restore(_ retrieve: LV2_State_Retrieve_Function, _ handle: LV2_State_Handle?) -> LV2_State_Status {
        var size = 0, type: UInt32 = 0, flags: UInt32 = 0
        guard let value = retrieve(handle, urids.instrument, &size, &type, &flags) else { return LV2_STATE_ERR_NO_PROPERTY }
        guard type == urids.string, size >= 1, size <= InstrumentState.maximumBytes + 1 else { return LV2_STATE_ERR_BAD_TYPE }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: value, count: size - 1))
        let restored: Instrument
        do {
            restored = try Instrument(state: bytes, library: library, sampleRate: sampleRate)
        } catch {
            say("the saved state cannot be restored: \(error)")
            return LV2_STATE_ERR_UNKNOWN
        }
        var paths: [[UInt8]] = []
        for key in urids.files {
            var path: [UInt8] = []
            if let text = retrieve(handle, key, &size, &type, &flags), type == urids.string, (2...WorkRequest.maximumPath + 1).contains(size) {
                path = Array(UnsafeRawBufferPointer(start: text, count: size).prefix { $0 != 0 })
            }
            paths.append(path)
        }
        // Nothing else runs beside restore (LV2's Instantiation class): the old setup is freed here,
        // and a worker's answer made before now is dropped when it arrives. The settings played
        // before are the old instrument's: the restored one starts from its state's controls.
        settingsRead.store(settingsWritten.load(ordering: .acquiring), ordering: .releasing)
        mirror = nil
        let old = clv2_exchange(current, Unmanaged.passRetained(Setup(instrument: restored, paths: paths)).toOpaque())
        if let old { Unmanaged<Setup>.fromOpaque(old).release() }
        latest = nil
        words[1] += 1
        words[0] = (1 << FileProperty.allCases.count) - 1
        applied.update(from: defaults, count: controlCount)
        if let shape = retrieve(handle, urids.shape, &size, &type, &flags), type == urids.int, size == MemoryLayout<Int32>.size {
            applied[0] = Float(shape.loadUnaligned(as: Int32.self))
        }
        return LV2_STATE_SUCCESS
    }
}

nonisolated(unsafe) var stateInterface = LV2_State_Interface(
    save: { handle, store, storeHandle, _, _ in
        guard let store else { return LV2_STATE_ERR_UNKNOWN }
        return plugin(handle).save(store, storeHandle)
    },
    restore: { handle, retrieve, retrieveHandle, _, _ in
        guard let retrieve else { return LV2_STATE_ERR_UNKNOWN }
        return plugin(handle).restore(retrieve, retrieveHandle)
    })
