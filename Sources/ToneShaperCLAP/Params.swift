import CCLAP
import Glibc
import ToneShaperCore
import ToneShaperInstrument

/// The parameters a host shows, automates and modulates: `InstrumentParameter.table`'s controls
/// (their ids the table's, values in the table's units and ranges), and the shape menu (id 100,
/// stepped over the shipped shapes). Amplitude and fidelity can also be modulated per note.
extension CLAPInstrument {
    func parameterInfo(_ index: Int, _ info: UnsafeMutablePointer<clap_param_info_t>) -> Bool {
        let table = InstrumentParameter.table
        var flags = UInt32(CLAP_PARAM_IS_AUTOMATABLE)
        let name: String, low: Double, high: Double, value: Double, id: UInt32
        if index < table.count {
            let row = table[index]
            flags |= UInt32(CLAP_PARAM_IS_MODULATABLE)
            if row.isInteger { flags |= UInt32(CLAP_PARAM_IS_STEPPED) }
            if row.isModulatedPerNote {
                flags |= UInt32(CLAP_PARAM_IS_MODULATABLE_PER_NOTE_ID) | UInt32(CLAP_PARAM_IS_MODULATABLE_PER_KEY)
            }
            (id, name, low, high, value) = (UInt32(row.id), row.name, row.range.lowerBound, row.range.upperBound, row.defaultValue)
        } else if index == table.count {
            flags |= UInt32(CLAP_PARAM_IS_STEPPED)
            (id, name, low, high, value) = (Self.shapeParameterID, "Shape", 0, Double(max(library.listedCount - 1, 0)), 0)
        } else {
            return false
        }
        info.pointee.id = id
        info.pointee.flags = flags
        info.pointee.cookie = nil
        info.pointee.min_value = low
        info.pointee.max_value = high
        info.pointee.default_value = value
        copy(name, into: &info.pointee.name)
        copy("", into: &info.pointee.module)
        return true
    }

    /// The value a host shows for a control: as set, else its default.
    func parameterValue(_ id: clap_id) -> Double? {
        controlIndex(id).map(controlValue)
    }

    /// "0.25 s", "12 semitones", "100", "square", "glide-bass".
    func text(_ id: clap_id, _ value: Double) -> String? {
        guard let c = controlIndex(id), value.isFinite else { return nil }
        if c == Self.controlCount - 1 {
            let index = Int(held(c, value))
            return library.shapes.indices.contains(index) ? library.shapes[index].name : nil
        }
        let row = InstrumentParameter.table[c]
        let v = row.clamp(value)
        if !row.choices.isEmpty { return row.choices[min(max(Int(v.rounded()), 0), row.choices.count - 1)] }
        let number = row.isInteger ? String(Int(v.rounded())) : Self.decimal(v)
        switch row.unit {
        case .none: return number
        case .seconds: return number + " s"
        case .semitones: return number + " semitones"
        }
    }

    /// What `text` writes (the unit may be left out), or a shape's or wave's name.
    func value(_ id: clap_id, _ text: String) -> Double? {
        guard let c = controlIndex(id) else { return nil }
        let trimmed = text.split(separator: " ").first.map(String.init) ?? ""
        if c == Self.controlCount - 1 {
            if let index = library.shapes[..<library.listedCount].firstIndex(where: { $0.name == text }) { return Double(index) }
            return Double(trimmed).flatMap { $0.isFinite ? held(c, $0) : nil }
        }
        let row = InstrumentParameter.table[c]
        if let index = row.choices.firstIndex(of: text) { return Double(index) }
        guard let number = Double(trimmed), number.isFinite else { return nil }
        return row.clamp(number)
    }

    /// Up to three decimals, no trailing zeros: what a knob's label needs.
    static func decimal(_ v: Double) -> String {
        let rounded = (v * 1000).rounded() / 1000
        var s = String(rounded)
        if s.hasSuffix(".0") { s.removeLast(2) }
        return s
    }

    /// Parameter events outside `process` (the host's flush): values and modulation are kept, and
    /// applied to the instrument at once when there is one (nothing is playing: no frames pass).
    func flush(_ list: UnsafePointer<clap_input_events_t>?) {
        guard let list, let size = list.pointee.size, let get = list.pointee.get else { return }
        if active { adoptHandoff() }
        var block = Block(instrument: current?.takeUnretainedValue(), frames: 0, left: scratchLeft, right: scratchRight)
        for i in 0..<size(list) {
            guard let header = get(list, i), header.pointee.space_id == CLAP_CORE_EVENT_SPACE_ID else { continue }
            let type = Int(header.pointee.type)
            guard type == Int(CLAP_EVENT_PARAM_VALUE) || type == Int(CLAP_EVENT_PARAM_MOD) else { continue }
            translate(header, frame: 0, into: &block)
        }
        block.finish(self)  // with no instrument yet, the values wait for activate
    }
}

/// A C char array (a fixed-size tuple) filled with `text`, cut to fit, NUL-terminated.
func copy<T>(_ text: String, into array: inout T) {
    withUnsafeMutableBytes(of: &array) { buffer in
        let bytes = Array(text.utf8.prefix(buffer.count - 1))
        for (i, b) in bytes.enumerated() { buffer[i] = b }
        buffer[bytes.count] = 0
    }
}

/// Writes `text` into a host's buffer of `size` bytes, cut to fit, NUL-terminated.
func copy(_ text: String, into display: UnsafeMutablePointer<CChar>?, size: UInt32) -> Bool {
    guard let display, size > 0 else { return false }
    let bytes = Array(text.utf8.prefix(Int(size) - 1))
    for (i, b) in bytes.enumerated() { display[i] = CChar(bitPattern: b) }
    display[bytes.count] = 0
    return true
}

nonisolated(unsafe) var paramsExtension = clap_plugin_params_t(
    count: { p in instance(p) == nil ? 0 : UInt32(CLAPInstrument.controlCount) },
    get_info: { p, index, info in
        guard let me = instance(p), let info else { return false }
        return me.parameterInfo(Int(index), info)
    },
    get_value: { p, id, value in
        guard let me = instance(p), let value, let v = me.parameterValue(id) else { return false }
        value.pointee = v
        return true
    },
    value_to_text: { p, id, value, display, size in
        guard let me = instance(p), let text = me.text(id, value) else { return false }
        return copy(text, into: display, size: size)
    },
    text_to_value: { p, id, display, value in
        guard let me = instance(p), let display, let value, let v = me.value(id, String(cString: display)) else { return false }
        value.pointee = v
        return true
    },
    flush: { p, list, _ in instance(p)?.flush(list) })
