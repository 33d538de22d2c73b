import ToneShaperMIDI

extension Engine {
    /// A saved state's settings (`InstrumentState.controls`), applied before anything plays, with
    /// every ramp and glide they start arrived at once: a restored instrument sounds as it was
    /// left, not gliding from its presets' values to the saved ones under its first notes. Parts
    /// with no note are left silent, as in a fresh engine (a silent part's ramps otherwise stop
    /// where they are, which no state keeps). `restore([])` only settles.
    ///
    /// Not for the audio thread's time: call it before the engine renders, or between renders on
    /// the thread that renders.
    public func restore(_ controls: [MIDIMessage]) {
        for message in controls { handle(message) }
        for p in 0..<16 where parts[p].activeVoices == 0 {
            let part = parts + p
            part.pointee.amplitude = part.pointee.amplitudeTarget
            part.pointee.echo.volume = part.pointee.echo.volumeTarget
            part.pointee.echo.delaySamples = part.pointee.echo.delayTarget
            part.pointee.vibratoPhase = 0
            part.pointee.audible = false
            part.pointee.quietFrames = 0
            refreshRatio(part: p)
            part.pointee.aimPan()
            part.pointee.panFromLeft = part.pointee.panLeft
            part.pointee.panFromRight = part.pointee.panRight
        }
        for s in 0..<slotCount where slots[s].duration != slots[s].durationTarget || slots[s].fidelity != slots[s].fidelityTarget {
            slots[s].duration = slots[s].durationTarget
            slots[s].fidelity = slots[s].fidelityTarget
            slots[s].requantize(table: presets)
            slots[s].updateStep(sampleRate: sampleRate)
        }
    }
}
