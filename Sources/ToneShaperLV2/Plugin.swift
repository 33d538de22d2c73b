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
    let instrument: Instrument
    let midiEventType: LV2_URID
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

    init(instrument: Instrument, midiEventType: LV2_URID) {
        self.instrument = instrument
        self.midiEventType = midiEventType
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
    let midi = map.pointee.map(map.pointee.handle, midiEventURI)
    let instance = Plugin(instrument: Instrument(library: library, sampleRate: rate), midiEventType: midi)
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
    extension_data: { _ in nil })

/// The library's one exported symbol (the version script hides everything else).
@_cdecl("lv2_descriptor") public func lv2Descriptor(_ index: UInt32) -> UnsafePointer<LV2_Descriptor>? {
    index == 0 ? withUnsafePointer(to: &descriptor) { $0 } : nil
}
