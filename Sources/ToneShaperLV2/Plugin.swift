import CLV2
import Glibc
import ToneShaperCore
import ToneShaperInstrument

/// The LV2 instrument `toneshaper.lv2`: the front door (`Instrument`) behind LV2's C ABI.
///
/// Ports, in the order toneshaper.ttl gives them (generated from the same table, `LV2Turtle`):
/// 0 MIDI in (atom:Sequence of midi:MidiEvent), 1–2 audio out, 3 the shape, 4… the controls of
/// `InstrumentParameter.table`. A control is applied when its value changes, at the block's first
/// frame, as a knob's controller would be: an unmoved control leaves each preset's own setting.
final class Plugin {
    /// Replaced only by a state restore, which LV2 never runs beside `run`.
    var instrument: Instrument
    /// The bundle's shapes, which a restored state's shapes are placed after.
    let library: PresetLibrary
    let sampleRate: Double
    let midiEventType: LV2_URID
    let urids: StateURIDs
    var midiIn: UnsafePointer<LV2_Atom_Sequence>?
    var left: UnsafeMutablePointer<Float>?
    var right: UnsafeMutablePointer<Float>?
    /// The shape port, then one per parameter.
    let controlCount: Int
    let controls: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Each control's value when last applied (its default until moved).
    let applied: UnsafeMutablePointer<Float>
    let events: UnsafeMutablePointer<InstrumentEvent>
    static let eventCapacity = 2048

    init(library: PresetLibrary, sampleRate: Double, midiEventType: LV2_URID, urids: StateURIDs) {
        self.instrument = Instrument(library: library, sampleRate: sampleRate)
        self.library = library
        self.sampleRate = sampleRate
        self.midiEventType = midiEventType
        self.urids = urids
        let table = InstrumentParameter.table
        controlCount = 1 + table.count
        controls = .allocate(capacity: controlCount)
        controls.initialize(repeating: nil, count: controlCount)
        applied = .allocate(capacity: controlCount)
        applied[0] = 0
        for row in table { applied[1 + row.id] = Float(row.defaultValue) }
        events = .allocate(capacity: Self.eventCapacity)
    }

    deinit { controls.deallocate(); applied.deallocate(); events.deallocate() }

    func connect(_ port: UInt32, _ data: UnsafeMutableRawPointer?) {
        switch port {
        case 0: midiIn = data.map { UnsafePointer($0.assumingMemoryBound(to: LV2_Atom_Sequence.self)) }
        case 1: left = data?.assumingMemoryBound(to: Float.self)
        case 2: right = data?.assumingMemoryBound(to: Float.self)
        default:
            let c = Int(port) - 3
            if c < controlCount { controls[c] = data.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) } }
        }
    }

    /// One block: moved controls at frame 0, then the MIDI events at their frames. Nothing here
    /// allocates, locks or reads a file.
    func run(_ frames: Int) {
        guard let left, let right else { return }
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
                offset += MemoryLayout<LV2_Atom_Event>.size + ((size + 7) & ~7)
                guard event.pointee.body.type == midiEventType, (1...3).contains(size) else { continue }
                let frame = min(max(Int(event.pointee.time.frames), start), frames)
                if count == Self.eventCapacity {
                    instrument.process(frames: frame - start, events: UnsafeBufferPointer(start: events, count: count),
                                       left: left + start, right: right + start)
                    start = frame
                    count = 0
                }
                events[count] = InstrumentEvent(frame: frame - start, .midi(body[0], size > 1 ? body[1] : 0, size > 2 ? body[2] : 0))
                count += 1
            }
        }
        instrument.process(frames: frames - start, events: UnsafeBufferPointer(start: events, count: count),
                           left: left + start, right: right + start)
    }
}

/// LV2Turtle.pluginURI (a C string here: the descriptor points at it for the library's lifetime).
let pluginURI: StaticString = "urn:toneshaper:lv2:instrument"
let midiEventURI = "http://lv2plug.in/ns/ext/midi#MidiEvent"
let uridMapURI = "http://lv2plug.in/ns/ext/urid#map"

/// One line on the host's stderr (instantiate only), through the file descriptor: no shared FILE.
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
    var f = features
    while let feature = f?.pointee {
        if strcmp(feature.pointee.URI, uridMapURI) == 0 { map = feature.pointee.data?.assumingMemoryBound(to: LV2_URID_Map.self) }
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
                                            string: urid(atomStringURI), int: urid(atomIntURI)))
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
        guard let uri, strcmp(uri, stateInterfaceURI) == 0 else { return nil }
        return withUnsafePointer(to: &stateInterface) { UnsafeRawPointer($0) }
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
}

extension Plugin {
    /// The whole instrument (InstrumentState's JSON, as an atom:String: readable in a session
    /// file) and the shape menu's value it was saved with. The host keeps the ports' values itself.
    func save(_ store: LV2_State_Store_Function, _ handle: LV2_State_Handle?) -> LV2_State_Status {
        let bytes: [UInt8]
        do { bytes = try instrument.state() } catch {
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
        do {
            instrument = try Instrument(state: bytes, library: library, sampleRate: sampleRate)
        } catch {
            say("the saved state cannot be restored: \(error)")
            return LV2_STATE_ERR_UNKNOWN
        }
        for row in InstrumentParameter.table { applied[1 + row.id] = Float(row.defaultValue) }
        applied[0] = 0
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
