import CCLAP
import Glibc
import ToneShaperCore
import ToneShaperInstrument

/// `process`: the host's events at their frames through the instrument, into the stereo output.
/// Nothing here allocates, locks or reads a file; whatever a host sends (unknown events, events
/// out of order or past the block, ids and keys out of range, no buffers) is skipped or held to
/// the block, never trusted.
extension CLAPInstrument {
    func process(_ p: UnsafePointer<clap_process_t>) -> clap_process_status {
        adoptHandoff()
        guard let instrument = current?.takeUnretainedValue() else { return clap_process_status(CLAP_PROCESS_ERROR) }
        let frames = min(Int(p.pointee.frames_count), maxFrames)  // CLAP: never more than activate said
        // The host's buffers when it gave two usable channels (one: the right one is scratch).
        var left: UnsafeMutablePointer<Float>?, right: UnsafeMutablePointer<Float>?
        if p.pointee.audio_outputs_count >= 1, let outputs = p.pointee.audio_outputs,
           let data = outputs.pointee.data32, outputs.pointee.channel_count >= 1 {
            left = data[0]
            right = outputs.pointee.channel_count >= 2 ? data[1] : nil
            outputs.pointee.constant_mask = 0
        }
        var block = Block(instrument: instrument, frames: frames, left: left, right: right)
        var last = 0
        if let list = p.pointee.in_events, let size = list.pointee.size, let get = list.pointee.get {
            let count = size(list)
            var i: UInt32 = 0
            while i < count {
                defer { i += 1 }
                guard let header = get(list, i), header.pointee.space_id == CLAP_CORE_EVENT_SPACE_ID else { continue }
                // Out of order or past the block: applied at the latest frame seen, never before it.
                let frame = min(max(Int(header.pointee.time), last), frames)
                last = frame
                translate(header, frame: frame, into: &block)
            }
        }
        block.finish(self)
        endNotes(instrument, frames: frames, out: p.pointee.out_events)
        return clap_process_status(CLAP_PROCESS_CONTINUE)
    }

    /// The part of a block still to render, with the events gathered for it.
    struct Block {
        /// nil before `activate`: the controls' values are kept, nothing plays.
        let instrument: Instrument?
        let frames: Int
        let left: UnsafeMutablePointer<Float>?
        let right: UnsafeMutablePointer<Float>?
        /// Frames rendered so far; the gathered events count their frames from here.
        var done = 0
        var count = 0

        /// Renders up to `end` with the gathered events: into the host's buffers, or scratch
        /// buffers a piece at a time.
        mutating func render(to end: Int, _ me: CLAPInstrument) {
            let direct = left != nil && right != nil
            var e = 0
            repeat {
                let stop = direct ? end : min(end, done + CLAPInstrument.scratchFrames)
                // This piece's events: those before its end (all that are left, in the last piece).
                var n = 0
                while e + n < count && (me.events[e + n].frame < stop || stop >= end) {
                    me.events[e + n].frame -= done
                    n += 1
                }
                instrument?.process(frames: stop - done, events: UnsafeBufferPointer(start: me.events + e, count: n),
                                   left: left.map { $0 + done } ?? me.scratchLeft, right: right.map { $0 + done } ?? me.scratchRight)
                e += n
                done = stop
            } while done < end
            count = 0
        }

        mutating func add(_ kind: InstrumentEvent.Kind, at frame: Int, _ me: CLAPInstrument) {
            if count == CLAPInstrument.eventCapacity { render(to: frame, me) }
            me.events[count] = InstrumentEvent(frame: frame, kind)
            count += 1
        }

        mutating func finish(_ me: CLAPInstrument) { render(to: frames, me) }
    }

    /// One host event as the instrument's events (none for what it does not play).
    func translate(_ header: UnsafePointer<clap_event_header_t>, frame: Int, into block: inout Block) {
        let size = Int(header.pointee.size)
        let raw = UnsafeRawPointer(header)
        switch Int(header.pointee.type) {
        case Int(CLAP_EVENT_NOTE_ON), Int(CLAP_EVENT_NOTE_OFF), Int(CLAP_EVENT_NOTE_CHOKE):
            guard size >= MemoryLayout<clap_event_note_t>.size else { return }
            let note = raw.loadUnaligned(as: clap_event_note_t.self)
            guard note.port_index <= 0 else { return }
            var channel = Int(note.channel), key = Int(note.key)
            if header.pointee.type == UInt16(CLAP_EVENT_NOTE_ON) {
                guard let on = InstrumentEvent.Kind.noteOn(channel: channel, key: key, velocity: note.velocity) else { return }
                block.add(on, at: frame, self)
                track(id: note.note_id, channel: channel, key: key)
                return
            }
            if note.note_id >= 0 {
                guard let found = lookup(note.note_id) else { return }
                (channel, key) = found
            }
            block.add(header.pointee.type == UInt16(CLAP_EVENT_NOTE_OFF) ? .noteOff(channel: channel, key: key)
                                                                         : .choke(channel: channel, key: key), at: frame, self)
        case Int(CLAP_EVENT_MIDI):
            guard size >= MemoryLayout<clap_event_midi_t>.size else { return }
            let midi = raw.loadUnaligned(as: clap_event_midi_t.self)
            guard midi.port_index == 0 else { return }
            block.add(.midi(midi.data.0, midi.data.1, midi.data.2), at: frame, self)
        case Int(CLAP_EVENT_NOTE_EXPRESSION):
            guard size >= MemoryLayout<clap_event_note_expression_t>.size else { return }
            let expression = raw.loadUnaligned(as: clap_event_note_expression_t.self)
            guard expression.port_index <= 0, expression.value.isFinite else { return }
            var channel = Int(expression.channel), key = Int(expression.key)
            if expression.note_id >= 0 {
                guard let found = lookup(expression.note_id) else { return }
                (channel, key) = found
            }
            switch Int(expression.expression_id) {
            case Int(CLAP_NOTE_EXPRESSION_TUNING): block.add(.tuning(expression.value, channel: channel, key: key), at: frame, self)
            case Int(CLAP_NOTE_EXPRESSION_VOLUME): block.add(.volume(expression.value, channel: channel, key: key), at: frame, self)
            case Int(CLAP_NOTE_EXPRESSION_PRESSURE): block.add(.pressure(expression.value, channel: channel, key: key), at: frame, self)
            case Int(CLAP_NOTE_EXPRESSION_BRIGHTNESS): block.add(.brightness(expression.value, channel: channel, key: key), at: frame, self)
            default: return
            }
        case Int(CLAP_EVENT_PARAM_VALUE):
            guard size >= MemoryLayout<clap_event_param_value_t>.size else { return }
            let event = raw.loadUnaligned(as: clap_event_param_value_t.self)
            // The controls are the whole instrument's: a value aimed at one note is not one of them.
            guard event.note_id < 0, event.key < 0, event.channel < 0, let c = controlIndex(event.param_id),
                  event.value.isFinite else { return }
            let value = held(c, event.value)
            values[c].store(value.bitPattern, ordering: .relaxed)
            moved.bitwiseOr(1 << UInt64(c), ordering: .relaxed)
            if let kind = applied(c) { block.add(kind, at: frame, self) }
        case Int(CLAP_EVENT_PARAM_MOD):
            guard size >= MemoryLayout<clap_event_param_mod_t>.size else { return }
            let event = raw.loadUnaligned(as: clap_event_param_mod_t.self)
            guard let c = controlIndex(event.param_id), c < Self.controlCount - 1, event.amount.isFinite else { return }
            if event.note_id < 0 && event.key < 0 && event.channel < 0 {
                modulation[c] = event.amount
                if let kind = applied(c) { block.add(kind, at: frame, self) }
                return
            }
            // Per note: a voice's own level or fidelity, on top of the control's modulated value.
            var channel = Int(event.channel), key = Int(event.key)
            if event.note_id >= 0 {
                guard let found = lookup(event.note_id) else { return }
                (channel, key) = found
            }
            let row = InstrumentParameter.table[c]
            let base = row.clamp(controlValue(c) + modulation[c])
            if row.parameter == .amplitude {
                let gain = base > 0 ? row.clamp(base + event.amount) / base : 1
                block.add(.note(NoteControl(.gain, channel: channel, key: key, value: gain)), at: frame, self)
            } else if row.parameter == .fidelity {
                block.add(.note(NoteControl(.fidelity, channel: channel, key: key, value: row.clamp(base + event.amount))), at: frame, self)
            }
        default:
            return  // transport, gestures, sysex, MIDI 2, other spaces: nothing to play
        }
    }

    /// The control (0..<controlCount) a CLAP parameter id names.
    @inline(__always) func controlIndex(_ id: clap_id) -> Int? {
        if id == Self.shapeParameterID { return Self.controlCount - 1 }
        return id < UInt32(Self.controlCount - 1) ? Int(id) : nil
    }

    @inline(__always) func controlValue(_ c: Int) -> Double { Double(bitPattern: values[c].load(ordering: .relaxed)) }

    /// A value held to the control's range (the shape: a listed shape's index).
    @inline(__always) func held(_ c: Int, _ value: Double) -> Double {
        if c == Self.controlCount - 1 { return min(max(value.rounded(), 0), Double(max(library.listedCount - 1, 0))) }
        return InstrumentParameter.table[c].clamp(value)
    }

    /// The event that sets control `c` to its value plus its modulation.
    @inline(__always) func applied(_ c: Int) -> InstrumentEvent.Kind? {
        if c == Self.controlCount - 1 { return .shape(Int(controlValue(c))) }
        return .parameter(id: c, value: InstrumentParameter.table[c].clamp(controlValue(c) + modulation[c]))
    }

    // MARK: - Notes the host started

    /// A key played again while it sounds is one voice for both notes: each ends when it does.
    func track(id: Int32, channel: Int, key: Int) {
        guard noteCount < Self.noteCapacity else { return }
        notes[noteCount] = Note(id: id, channel: Int16(channel), key: Int16(key))
        noteCount += 1
    }

    /// The newest note with this id (a plain loop: nothing generic on the audio thread).
    func lookup(_ id: Int32) -> (channel: Int, key: Int)? {
        var i = noteCount - 1
        while i >= 0 {
            if notes[i].id == id { return (Int(notes[i].channel), Int(notes[i].key)) }
            i -= 1
        }
        return nil
    }

    /// CLAP_EVENT_NOTE_END for each note the host started whose voice has fallen silent (or that
    /// never sounded: a key the shape cannot play), at the block's last frame.
    func endNotes(_ instrument: Instrument, frames: Int, out: UnsafePointer<clap_output_events_t>?) {
        var i = 0
        while i < noteCount {
            let note = notes[i]
            if instrument.isSounding(channel: Int(note.channel), key: Int(note.key)) { i += 1; continue }
            if let out, let push = out.pointee.try_push {
                var end = clap_event_note_t(
                    header: clap_event_header_t(size: UInt32(MemoryLayout<clap_event_note_t>.size), time: UInt32(max(frames - 1, 0)),
                                                space_id: CLAP_CORE_EVENT_SPACE_ID, type: UInt16(CLAP_EVENT_NOTE_END), flags: 0),
                    note_id: note.id, port_index: 0, channel: note.channel, key: note.key, velocity: 0)
                _ = withUnsafePointer(to: &end.header) { push(out, $0) }
            }
            noteCount -= 1
            notes[i] = notes[noteCount]
        }
    }
}
