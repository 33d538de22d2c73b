/// Editing while playing: an edited shape replaces a preset inside the running engine.
///
/// The editor builds a `ShapeData` off the audio thread and hands its pointer over through the
/// lock-free path; `replaceShape` runs on the audio thread between two render calls and only
/// copies settings and rebuilds the preallocated curves in place: no allocation, no lock.
extension Engine {
    /// Most points a shape swapped in may have: the slots' curves were allocated for this many.
    public var pointCapacity: Int { slots[0].curve.pointCapacity }

    /// Installs `data` as preset `index`. Every part and every sounding note on that preset moves
    /// to the new shape at its current place in the shape, with its phase running on, so the
    /// change is heard at once and does not click. Returns the data it replaced (nil when that was
    /// the library's own) for the caller to free off the audio thread.
    public func replaceShape(_ index: Int, with data: ShapeData) -> ShapeData? {
        precondition(index >= 0 && index < presets.count, "no preset \(index)")
        precondition(data.pointCount >= 1 && data.pointCount <= pointCapacity, "shape larger than the slots")
        let previous = installed[index]
        installed[index] = data
        presets.info[index] = data.info.pointee
        for s in 0..<slotCount where slots[s].preset == index {
            slots[s].load(index, from: presets, sampleRate: sampleRate)
        }
        for p in 0..<16 where slots[parts[p].currentSlot].preset == index {
            adoptSettings(of: index, part: p)
        }
        let info = presets.info[index]
        for i in 0..<voiceCount where voices[i].stage != .idle && slots[voices[i].slot].preset == index {
            let v = voices + i
            v.pointee.wave = parts[v.pointee.part].wave
            v.pointee.terms = info.terms
            v.pointee.envelopeKind = info.envelopeKind
            v.pointee.envelopeDecay = _exp(-info.envelopeRate / sampleRate)
            v.pointee.noteRatio = noteRatio(v.pointee.note, root: info.rootNote)
            // A key the new shape cannot sound on (its root moved it out of range) fades out.
            if !PlayableRange.sounds(ratio: v.pointee.noteRatio, lowest: info.lowest, highest: info.highest,
                                     audible: PlayableRange.audibleLimit(wave: v.pointee.wave, sampleRate: sampleRate))
                && v.pointee.stage == .playing {
                release(v)
                v.pointee.ramp(to: 0, samples: stealFadeSamples)
            }
        }
        return previous
    }
}
