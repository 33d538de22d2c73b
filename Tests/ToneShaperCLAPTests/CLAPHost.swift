import CCLAP
import Foundation
import ToneShaperCore

/// A CLAP host in the test's own process: the plugin reached through `clap_entry` and its factory,
/// exactly as a DAW reaches toneshaper.clap after dlopen (the same code, linked in).
enum CLAPHost {
    nonisolated(unsafe) static let factory: UnsafePointer<clap_plugin_factory_t> = {
        precondition(clap_entry.`init`("/nowhere/toneshaper.clap"), "clap_entry.init failed")
        return clap_entry.get_factory("clap.plugin-factory")!.assumingMemoryBound(to: clap_plugin_factory_t.self)
    }()

    /// The host's own structure (no extensions; the plugin's requests are ignored).
    nonisolated(unsafe) static let host: UnsafeMutablePointer<clap_host_t> = {
        let h = UnsafeMutablePointer<clap_host_t>.allocate(capacity: 1)
        h.initialize(to: clap_host_t(clap_version: clap_version_t(major: 1, minor: 1, revision: 1), host_data: nil,
                                     name: ("tests" as StaticString).cString, vendor: nil, url: nil, version: ("1" as StaticString).cString,
                                     get_extension: { _, _ in nil }, request_restart: { _ in }, request_process: { _ in },
                                     request_callback: { _ in }))
        return h
    }()
}

extension StaticString {
    var cString: UnsafePointer<CChar> { UnsafeRawPointer(utf8Start).assumingMemoryBound(to: CChar.self) }
}

/// Events for one `process` call, in the plugin's reach as a clap_input_events_t.
final class EventList {
    let storage = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
    let offsets = UnsafeMutablePointer<Int>.allocate(capacity: 16_384)
    var count = 0
    var used = 0
    var list = clap_input_events_t()

    init() {
        list.ctx = Unmanaged.passUnretained(self).toOpaque()
        list.size = { l in Unmanaged<EventList>.fromOpaque(l!.pointee.ctx!).takeUnretainedValue().count.asUInt32 }
        list.get = { l, i in
            let me = Unmanaged<EventList>.fromOpaque(l!.pointee.ctx!).takeUnretainedValue()
            guard Int(i) < me.count else { return nil }
            return UnsafePointer((me.storage + me.offsets[Int(i)]).assumingMemoryBound(to: clap_event_header_t.self))
        }
    }

    deinit { storage.deallocate(); offsets.deallocate() }

    func clear() { count = 0; used = 0 }

    func add<T>(_ event: T) {
        var e = event
        let size = MemoryLayout<T>.size
        withUnsafeBytes(of: &e) { (storage + used).copyMemory(from: $0.baseAddress!, byteCount: size) }
        offsets[count] = used
        count += 1
        used += (size + 15) & ~15
    }

    static func header<T>(_ type: Int32, _ time: Int, _: T.Type) -> clap_event_header_t {
        clap_event_header_t(size: UInt32(MemoryLayout<T>.size), time: UInt32(time), space_id: CLAP_CORE_EVENT_SPACE_ID,
                            type: UInt16(type), flags: 0)
    }

    func midi(_ time: Int, _ bytes: [UInt8]) {
        add(clap_event_midi_t(header: Self.header(Int32(CLAP_EVENT_MIDI), time, clap_event_midi_t.self), port_index: 0,
                              data: (bytes[0], bytes.count > 1 ? bytes[1] : 0, bytes.count > 2 ? bytes[2] : 0)))
    }

    func note(_ type: Int32, _ time: Int, id: Int32 = -1, channel: Int = 0, key: Int, velocity: Double = 1) {
        add(clap_event_note_t(header: Self.header(type, time, clap_event_note_t.self), note_id: id, port_index: 0,
                              channel: Int16(channel), key: Int16(key), velocity: velocity))
    }

    func expression(_ id: Int32, _ time: Int, note: Int32 = -1, channel: Int = -1, key: Int = -1, _ value: Double) {
        add(clap_event_note_expression_t(header: Self.header(Int32(CLAP_EVENT_NOTE_EXPRESSION), time, clap_event_note_expression_t.self),
                                         expression_id: id, note_id: note, port_index: 0, channel: Int16(channel), key: Int16(key),
                                         value: value))
    }

    func parameter(_ id: UInt32, _ time: Int, _ value: Double, note: Int32 = -1, channel: Int = -1, key: Int = -1) {
        add(clap_event_param_value_t(header: Self.header(Int32(CLAP_EVENT_PARAM_VALUE), time, clap_event_param_value_t.self),
                                     param_id: id, cookie: nil, note_id: note, port_index: -1, channel: Int16(channel),
                                     key: Int16(key), value: value))
    }

    func modulation(_ id: UInt32, _ time: Int, _ amount: Double, note: Int32 = -1, channel: Int = -1, key: Int = -1) {
        add(clap_event_param_mod_t(header: Self.header(Int32(CLAP_EVENT_PARAM_MOD), time, clap_event_param_mod_t.self),
                                   param_id: id, cookie: nil, note_id: note, port_index: -1, channel: Int16(channel),
                                   key: Int16(key), amount: amount))
    }
}

extension Int { var asUInt32: UInt32 { UInt32(self) } }

/// What the plugin sent back: the NOTE_END events' note ids, kept without allocating.
final class OutputList {
    let ends = UnsafeMutablePointer<Int32>.allocate(capacity: 4096)
    var count = 0
    var list = clap_output_events_t()
    init() {
        list.ctx = Unmanaged.passUnretained(self).toOpaque()
        list.try_push = { l, e in
            let me = Unmanaged<OutputList>.fromOpaque(l!.pointee.ctx!).takeUnretainedValue()
            guard let e, e.pointee.type == UInt16(CLAP_EVENT_NOTE_END), me.count < 4096 else { return true }
            me.ends[me.count] = UnsafeRawPointer(e).loadUnaligned(as: clap_event_note_t.self).note_id
            me.count += 1
            return true
        }
    }
    deinit { ends.deallocate() }
    var noteEnds: [Int32] { Array(UnsafeBufferPointer(start: ends, count: count)) }
}

/// One instance of the plugin, activated, with buffers for blocks of up to `maxFrames`.
final class CLAPPlugin {
    let plugin: UnsafePointer<clap_plugin_t>
    let maxFrames: Int
    let left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    let channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    let buffer: UnsafeMutablePointer<clap_audio_buffer_t>
    let output = OutputList()
    var steady: Int64 = 0
    var activated = false

    /// A new instance; `state` is loaded before activation (as a host reopening a song does).
    init?(rate: Double = 48_000, maxFrames: Int = 4096, state: [UInt8]? = nil, activate: Bool = true) {
        let f = CLAPHost.factory
        guard let p = f.pointee.create_plugin(f, CLAPHost.host, "org.toneshaper.instrument") else { return nil }
        plugin = p
        self.maxFrames = maxFrames
        left = .allocate(capacity: maxFrames); right = .allocate(capacity: maxFrames)
        channels = .allocate(capacity: 2)
        channels[0] = left; channels[1] = right
        buffer = .allocate(capacity: 1)
        buffer.initialize(to: clap_audio_buffer_t(data32: channels, data64: nil, channel_count: 2, latency: 0, constant_mask: 0))
        guard p.pointee.`init`(p) else { return nil }
        if let state, !load(state) { return nil }
        if activate {
            guard p.pointee.activate(p, rate, 1, UInt32(maxFrames)), p.pointee.start_processing(p) else { return nil }
            activated = true
        }
    }

    deinit {
        if activated { plugin.pointee.stop_processing(plugin); plugin.pointee.deactivate(plugin) }
        plugin.pointee.destroy(plugin)
        left.deallocate(); right.deallocate(); channels.deallocate(); buffer.deallocate()
    }

    func ext<T>(_ id: StaticString, _: T.Type) -> UnsafePointer<T> {
        plugin.pointee.get_extension(plugin, id.cString)!.assumingMemoryBound(to: T.self)
    }

    /// One block: the events, `frames` frames into `left`/`right`.
    @discardableResult
    func process(_ frames: Int, _ events: EventList) -> clap_process_status {
        withUnsafeMutablePointer(to: &events.list) { input in
            withUnsafeMutablePointer(to: &output.list) { out in
                var p = clap_process_t(steady_time: steady, frames_count: UInt32(frames), transport: nil, audio_inputs: nil,
                                       audio_outputs: buffer, audio_inputs_count: 0, audio_outputs_count: 1,
                                       in_events: input, out_events: out)
                steady += Int64(frames)
                return plugin.pointee.process(plugin, &p)
            }
        }
    }

    /// Plays `frames` frames in blocks of `block`, `events(start, count, list)` filling each block's
    /// events; returns L, R interleaved.
    func play(frames: Int, block: Int, _ events: (Int, Int, EventList) -> Void = { _, _, _ in }) -> [Float] {
        let list = EventList()
        var out: [Float] = []
        out.reserveCapacity(2 * frames)
        var start = 0
        while start < frames {
            let n = min(block, frames - start)
            list.clear()
            events(start, n, list)
            process(n, list)
            for i in 0..<n { out.append(left[i]); out.append(right[i]) }
            start += n
        }
        return out
    }

    func save() -> [UInt8]? {
        final class Sink { var bytes: [UInt8] = [] }
        let sink = Sink()
        var stream = clap_ostream_t(ctx: Unmanaged.passUnretained(sink).toOpaque(), write: { s, buffer, size in
            let sink = Unmanaged<Sink>.fromOpaque(s!.pointee.ctx!).takeUnretainedValue()
            let n = min(Int(size), 1000)  // a host may take a little at a time
            sink.bytes += UnsafeRawBufferPointer(start: buffer, count: n)
            return Int64(n)
        })
        let state = ext("clap.state", clap_plugin_state_t.self)
        return state.pointee.save(plugin, &stream) ? sink.bytes : nil
    }

    func load(_ bytes: [UInt8]) -> Bool {
        final class Source { var bytes: [UInt8]; var at = 0; init(_ b: [UInt8]) { bytes = b } }
        let source = Source(bytes)
        var stream = clap_istream_t(ctx: Unmanaged.passUnretained(source).toOpaque(), read: { s, buffer, size in
            let source = Unmanaged<Source>.fromOpaque(s!.pointee.ctx!).takeUnretainedValue()
            let n = min(Int(size), source.bytes.count - source.at, 777)  // and give a little at a time
            source.bytes.withUnsafeBytes { buffer!.copyMemory(from: $0.baseAddress! + source.at, byteCount: n) }
            source.at += n
            return Int64(n)
        })
        let state = ext("clap.state", clap_plugin_state_t.self)
        return state.pointee.load(plugin, &stream)
    }
}

/// Measurements on rendered samples.
enum Measure {
    /// The left channel of interleaved samples.
    static func left(_ samples: [Float], _ range: Range<Int>) -> [Double] { range.map { Double(samples[2 * $0]) } }

    /// The magnitude of `x`'s component at `frequency` (Hann window).
    static func magnitude(_ x: [Double], at frequency: Double, rate: Double = 48_000) -> Double {
        var re = 0.0, im = 0.0
        let n = Double(x.count)
        for (i, v) in x.enumerated() {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / n)
            let phase = 2 * Double.pi * frequency * Double(i) / rate
            re += w * v * cos(phase); im -= w * v * sin(phase)
        }
        return (re * re + im * im).squareRoot() / n
    }

    /// The frequency within `range` (Hz) where `x` is strongest, to `step` Hz.
    static func peak(_ x: [Double], in range: ClosedRange<Double>, step: Double = 0.05) -> Double {
        var best = range.lowerBound, strongest = -1.0
        var coarse = range.lowerBound
        while coarse <= range.upperBound {
            let m = magnitude(x, at: coarse)
            if m > strongest { strongest = m; best = coarse }
            coarse += 1
        }
        var f = best - 1
        while f <= best + 1 {
            let m = magnitude(x, at: f)
            if m > strongest { strongest = m; best = f }
            f += step
        }
        return best
    }
}
