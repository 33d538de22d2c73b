/// A control of single notes rather than of their channel: what a plugin host's note expressions
/// and per-note modulation carry (CLAP's tuning, volume, pressure and brightness of one note).
///
/// MPE gives a note these through a channel of its own (its bend, pressure and CC 74 are its
/// part's); a host that plays several notes on one channel names the note instead, and the engine
/// applies the same change to the voices playing it: the pitch ratio at once (as a bend does), the
/// gain ramped (as key pressure does), the fidelity glided (as CC 74 on a member channel does).
public struct NoteControl: Sendable, Equatable, BitwiseCopyable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// The note's pitch offset in semitones (±120), on top of its channel's bend.
        case tuning
        /// The note's own gain, 0...4 (1: as its velocity says), ramped like key pressure.
        case gain
        /// The note's volume, 0...4 (linear), a factor beside `gain`: a host's per-note volume,
        /// which the note's pressure does not overwrite.
        case volume
        /// The note's own fidelity N (1...100 000), glided like a fidelity knob; the note keeps it
        /// while its channel's fidelity moves on.
        case fidelity
        /// Key up for the notes named (as note-offs: the sustain pedal still holds them).
        case release
        /// The notes named stop now (a 2 ms fade, as All Sound Off).
        case choke
    }
    public var kind: Kind
    /// 0...15, or −1 for every channel.
    public var channel: Int8
    /// 0...127, or −1 for every key.
    public var key: Int8
    public var value: Double

    public init(_ kind: Kind, channel: Int, key: Int, value: Double = 0) {
        self.kind = kind
        self.channel = Int8(clamping: channel < 0 || channel > 15 ? -1 : channel)
        self.key = Int8(clamping: key < 0 || key > 127 ? -1 : key)
        self.value = value
    }

    /// Whether a voice of `part` playing `note` is one of those named.
    @inline(__always) func names(part: Int, note: UInt8) -> Bool {
        (channel < 0 || Int(channel) == part) && (key < 0 || Int(key) == Int(note))
    }
}

extension Engine {
    /// Applies a note control to every sounding voice it names (nothing when none does).
    public func apply(_ control: NoteControl) {
        guard !control.value.isNaN else { return }
        switch control.kind {
        case .release:
            for i in 0..<voiceCount where voices[i].stage == .playing && voices[i].keyDown
                && control.names(part: voices[i].part, note: voices[i].note) {
                noteOff(part: voices[i].part, note: voices[i].note)
            }
            // A note still waiting for the voice it stole is forgotten, as a note-off forgets it.
            for i in 0..<voiceCount where voices[i].pendingPart >= 0
                && control.names(part: voices[i].pendingPart, note: voices[i].pendingNote) {
                voices[i].pendingPart = -1
            }
            return
        case .choke:
            for i in 0..<voiceCount where voices[i].stage != .idle {
                let v = voices + i
                if v.pointee.pendingPart >= 0 && control.names(part: v.pointee.pendingPart, note: v.pointee.pendingNote) {
                    v.pointee.pendingPart = -1
                }
                guard control.names(part: v.pointee.part, note: v.pointee.note) else { continue }
                v.pointee.stage = .releasing
                v.pointee.keyDown = false
                v.pointee.sustained = false
                v.pointee.ramp(to: 0, samples: stealFadeSamples)
            }
            return
        default:
            break
        }
        for i in 0..<voiceCount where voices[i].stage != .idle && control.names(part: voices[i].part, note: voices[i].note) {
            let v = voices + i
            switch control.kind {
            case .tuning:
                // Heard from the next sample on: the voice re-anchors its phase where it is (as a bend does).
                v.pointee.tuning = _exp2(min(max(control.value, -120), 120) / 12)
            case .gain:
                setExpression(min(max(control.value, 0), 4), voice: v)
            case .volume:
                setVolume(min(max(control.value, 0), 4), voice: v)
            case .fidelity:
                noteFidelity(min(max(control.value, Parameter.fidelity.limits.lowerBound), Parameter.fidelity.limits.upperBound).rounded(),
                             voice: v)
            case .release, .choke:
                break
            }
        }
    }

    /// Whether any voice still sounds `note` on `part` (playing, releasing, or about to start on a
    /// voice it stole): a host is told a note ended when this turns false.
    public func isSounding(part: Int, note: UInt8) -> Bool {
        for i in 0..<voiceCount where voices[i].stage != .idle {
            if voices[i].part == part && voices[i].note == note { return true }
            if voices[i].pendingPart == part && voices[i].pendingNote == note { return true }
        }
        return false
    }

    /// A voice's own fidelity: it moves onto a slot of its own (a copy of the one it plays, at the
    /// same place in the shape; from then on its channel's fidelity no longer reaches it) whose
    /// fidelity glides to `n`. Nothing is allocated: the pool has a slot per voice beyond the
    /// channels' current ones.
    func noteFidelity(_ n: Double, voice v: UnsafeMutablePointer<Voice>) {
        if !v.pointee.ownsSlot {
            let from = v.pointee.slot
            // A slot no other voice or channel plays is this voice's already.
            if slotUsers[from] != 1 || (0..<16).contains(where: { parts[$0].currentSlot == from }) {
                // This voice's slot is shared or current, so at most 16 + voices − 1 slots are taken.
                guard let free = (0..<slotCount).first(where: { s in
                    slotUsers[s] == 0 && !(0..<16).contains(where: { parts[$0].currentSlot == s })
                }) else { return }
                let source = slots[from]
                slots[free].load(source.preset, from: presets, sampleRate: sampleRate)
                slots[free].duration = source.duration
                slots[free].durationTarget = source.durationTarget
                slots[free].fidelity = source.fidelity
                slots[free].fidelityTarget = source.fidelityTarget
                slots[free].requantize(table: presets)
                slots[free].updateStep(sampleRate: sampleRate)
                slotUsers[from] -= 1
                slotUsers[free] += 1
                v.pointee.slot = free
                // The copy's curve counts its own generations: make the voice re-read its place and
                // frequency from it (the phase runs on).
                v.pointee.curveGeneration = slots[free].generation &- 1
            }
            v.pointee.ownsSlot = true
            parts[v.pointee.part].privateSlots += 1
        }
        slots[v.pointee.slot].fidelityTarget = n
    }

    /// The voice gives up its own slot (its note ended or it starts another); the slot's user count
    /// is the caller's to change.
    @inline(__always) func disownSlot(_ v: UnsafeMutablePointer<Voice>) {
        guard v.pointee.ownsSlot else { return }
        v.pointee.ownsSlot = false
        parts[v.pointee.part].privateSlots -= 1
    }

    /// Runs `body` on the slot of each voice of part `p` that plays one of its own.
    @inline(__always) func forEachPrivateSlot(part p: Int, _ body: (UnsafeMutablePointer<ShapeSlot>) -> Void) {
        for i in 0..<voiceCount where voices[i].ownsSlot && voices[i].part == p && voices[i].stage != .idle {
            body(slots + voices[i].slot)
        }
    }
}
