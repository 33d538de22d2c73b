/// A MIDI channel's state: its preset slots, controllers and its bus (gain, echo, pan).
/// Whole cache lines (256 bytes, aligned to 64; a test holds it there): threads render
/// neighbouring parts, and a line two of them wrote would bounce between their cores.
struct Part {
    // The first cache line: settings that change only at events, and `audible`, which the engine's
    // thread reads of every part at every span and the part's own thread writes only when it
    // changes. Nothing the render loop writes every period shares it.
    /// Index of the slot new notes start on (in the engine's slot pool).
    var currentSlot = -1
    var program = 0
    var attack: Double = 0.005
    var release: Double = 0.05
    var bendRange: Double = 2
    /// In MPE, a member channel's zone manager (a part index): the manager's bend moves every note
    /// of the zone, so it adds to this channel's own. −1 outside MPE and for managers.
    var manager = -1
    var terms = 10
    var wave: WaveType = .sine
    var sustain = false
    // RPN selection for data entry (RPN 0 = pitch-bend sensitivity).
    var rpnMSB: UInt8 = 127
    var rpnLSB: UInt8 = 127
    /// True while the bus may still be sounding (voices or an echo tail).
    var audible = false

    // Bus parameters. Amplitude ramps linearly per sample; pan per block.
    /// The gain actually applied (ramps toward shapeAmplitude × volume).
    var amplitude: Double = 0.5
    var amplitudeTarget: Double = 0.5
    var shapeAmplitude: Double = 0.5
    var volume: Double = 1
    var panLeft: Float = 0.70710678
    var panRight: Float = 0.70710678
    var panFromLeft: Float = 0.70710678
    var panFromRight: Float = 0.70710678
    var pan: Double = 0

    // Pitch: bend in semitones = bendValue/8192 · bendRange; vibrato from the mod wheel.
    var bendValue: Double = 0
    var vibratoDepth: Double = 0
    var vibratoPhase: Double = 0
    /// The pitch ratio its notes play at this control period (bend, vibrato, zone manager's bend).
    var ratio: Double = 1

    var activeVoices = 0
    /// Frames since the bus last carried sound (above −120 dBFS); 0 while notes sound. The part
    /// stays audible until that is longer than its echo delay: the echo line may still hold a repeat.
    var quietFrames = 0
    var echo: EchoLine

    /// The pan position `panLeft`/`panRight` were computed for (NaN: none yet).
    var aimedPan = Double.nan
    /// Voices of this part playing a slot of their own (per-note fidelity): their slots glide at its ticks.
    var privateSlots = 0
    /// The semitones `ratio` was last computed from at a tick (NaN: none yet): a tick whose bend and
    /// vibrato give the same semitones keeps the ratio instead of calling exp2 again (same bits).
    /// It takes the place of the padding that kept a part at whole cache lines (256 bytes).
    var ratioSemitones = Double.nan

    /// Equal-power gains for the current pan position: the end of the next pan ramp. Computed only
    /// when the position moved (this runs every control period for every sounding part).
    mutating func aimPan() {
        guard pan != aimedPan else { return }
        aimedPan = pan
        let angle = (pan + 1) * Double.pi / 4
        panLeft = Float(_cos(angle))
        panRight = Float(_sin(angle))
    }
}
