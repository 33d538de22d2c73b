import CCLAP
import Glibc
import ToneShaperCore
import ToneShaperInstrument

/// The state a host keeps with the song: the instrument's InstrumentState bytes, exactly what the
/// LV2 plugin saves (shapes by content, so the song plays the same without the user's library),
/// then — after a NUL, which JSON never holds — the controls the host set, which an LV2 host keeps
/// itself as port values but a CLAP host leaves to the plugin:
///
///     toneshaper-clap-controls 1
///     4 250          (control id, value in its unit: one line each, only those set)
///
/// Reading is for hostile bytes: at most InstrumentState.maximumBytes plus the controls, every
/// line checked; anything wrong leaves the instance as it was and answers false.
extension CLAPInstrument {
    static let controlsHeader = "toneshaper-clap-controls 1"

    func save(_ stream: UnsafePointer<clap_ostream_t>) -> Bool {
        guard let write = stream.pointee.write else { return false }
        var bytes: [UInt8]
        do {
            if let latest { bytes = try latest.state() }
            else if let pendingState { bytes = pendingState }
            else { bytes = try Instrument(library: library, sampleRate: 48_000).state() }
        } catch {
            say("the state cannot be saved: \(error)")
            return false
        }
        bytes.append(0)
        var controls = Self.controlsHeader + "\n"
        let set = moved.load(ordering: .acquiring)
        for c in 0..<Self.controlCount where set & (1 << UInt64(c)) != 0 {
            let id = c == Self.controlCount - 1 ? Int(Self.shapeParameterID) : c
            controls += "\(id) \(controlValue(c))\n"
        }
        bytes += Array(controls.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(stream, $0.baseAddress! + written, UInt64($0.count - written)) }
            guard n > 0 else { return false }
            written += Int(n)
        }
        return true
    }

    func load(_ stream: UnsafePointer<clap_istream_t>) -> Bool {
        guard let read = stream.pointee.read else { return false }
        let limit = InstrumentState.maximumBytes + 4096
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(stream, $0.baseAddress!, UInt64($0.count)) }
            if n == 0 { break }
            guard n > 0, n <= Int64(chunk.count), bytes.count + Int(n) <= limit else {
                say(n < 0 ? "the host could not read the saved state" : "the saved state is larger than any state (\(limit) bytes); not read")
                return false
            }
            bytes += chunk[..<Int(n)]
        }
        let split = bytes.firstIndex(of: 0) ?? bytes.count
        let stateBytes = Array(bytes[..<split])
        guard let controls = Self.controls(bytes[min(split + 1, bytes.count)...]) else {
            say("the saved state's controls are not toneshaper-clap-controls 1 lines of a control id and a value")
            return false
        }
        let instrument: Instrument?
        do {
            if sampleRate > 0 {
                instrument = try Instrument(state: stateBytes, library: library, sampleRate: sampleRate)
            } else {
                _ = try InstrumentState(bytes: stateBytes)  // checked now; made at activate
                instrument = nil
            }
        } catch {
            say("the saved state cannot be restored: \(error)")
            return false
        }
        var mask: UInt64 = 0
        for row in InstrumentParameter.table { values[row.id].store(row.defaultValue.bitPattern, ordering: .relaxed) }
        values[Self.controlCount - 1].store(0.0.bitPattern, ordering: .relaxed)
        for (c, value) in controls {
            values[c].store(held(c, value).bitPattern, ordering: .relaxed)
            // The Shape is shown as saved but not chosen again: the state already carries the
            // shapes the channels play by content, and choosing the bundled one would undo an edit.
            if c != Self.controlCount - 1 { mask |= 1 << UInt64(c) }
        }
        moved.store(mask, ordering: .releasing)
        if let instrument {
            applyControls(to: instrument)
            pendingState = nil
            install(instrument)
        } else {
            pendingState = stateBytes
        }
        if let ext = host.pointee.get_extension?(host, "clap.params") {
            let params = ext.assumingMemoryBound(to: clap_host_params_t.self)
            params.pointee.rescan?(host, UInt32(CLAP_PARAM_RESCAN_VALUES))
        }
        return true
    }

    /// The controls after the state's NUL (none when there is no NUL), or nil when they are not
    /// the format's lines.
    static func controls(_ bytes: ArraySlice<UInt8>) -> [(Int, Double)]? {
        guard !bytes.isEmpty else { return [] }
        guard bytes.count <= 4096, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(controlsHeader), lines.last == "" else { return nil }
        lines.removeFirst(); lines.removeLast()
        guard lines.count <= controlCount else { return nil }
        var result: [(Int, Double)] = []
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, let id = UInt32(fields[0]), let value = Double(fields[1]), value.isFinite else { return nil }
            let c: Int
            if id == shapeParameterID { c = controlCount - 1 } else if id < UInt32(controlCount - 1) { c = Int(id) } else { return nil }
            guard !result.contains(where: { $0.0 == c }) else { return nil }
            result.append((c, value))
        }
        return result
    }
}

nonisolated(unsafe) var stateExtension = clap_plugin_state_t(
    save: { p, stream in
        guard let me = instance(p), let stream else { return false }
        return me.save(stream)
    },
    load: { p, stream in
        guard let me = instance(p), let stream else { return false }
        return me.load(stream)
    })

nonisolated(unsafe) var notePortsExtension = clap_plugin_note_ports_t(
    count: { p, isInput in instance(p) != nil && isInput ? 1 : 0 },
    get: { p, index, isInput, info in
        guard instance(p) != nil, isInput, index == 0, let info else { return false }
        info.pointee.id = 0
        info.pointee.supported_dialects = UInt32(CLAP_NOTE_DIALECT_CLAP.rawValue | CLAP_NOTE_DIALECT_MIDI.rawValue
                                                 | CLAP_NOTE_DIALECT_MIDI_MPE.rawValue)
        info.pointee.preferred_dialect = UInt32(CLAP_NOTE_DIALECT_CLAP.rawValue)
        copy("Notes and MIDI", into: &info.pointee.name)
        return true
    })

let stereoPortType: StaticString = "stereo"

nonisolated(unsafe) var audioPortsExtension = clap_plugin_audio_ports_t(
    count: { p, isInput in instance(p) != nil && !isInput ? 1 : 0 },
    get: { p, index, isInput, info in
        guard instance(p) != nil, !isInput, index == 0, let info else { return false }
        info.pointee.id = 0
        copy("Output", into: &info.pointee.name)
        info.pointee.flags = UInt32(CLAP_AUDIO_PORT_IS_MAIN)
        info.pointee.channel_count = 2
        info.pointee.port_type = cString(stereoPortType)
        info.pointee.in_place_pair = UInt32.max  // CLAP_INVALID_ID: no input to share a buffer with
        return true
    })
