/// Where a sounding note is in its pass through the shape: what an editor's playhead draws.
public struct VoicePlace: Equatable, Sendable, BitwiseCopyable {
    /// The voice's index in the pool (a playhead follows one voice from frame to frame).
    public var voice: Int
    /// The MIDI channel (0...15) the note plays on.
    public var channel: Int
    public var note: UInt8
    /// The key is up (or the voice is fading out for another note): the release tail is sounding.
    public var released: Bool
    /// How far through the current pass, in [0, 1): frames since the pass began over the pass's
    /// frames (⌊duration · rate⌋). Times the shape's duration, the time on the curve.
    public var pass: Double

    public init(voice: Int, channel: Int, note: UInt8, released: Bool, pass: Double) {
        self.voice = voice
        self.channel = channel
        self.note = note
        self.released = released
        self.pass = pass
    }
}

extension Engine {
    /// How many voices the pool has: the most places `places(into:capacity:)` can report.
    public var voiceCapacity: Int { voiceCount }

    /// Writes where every sounding voice is in its pass into `buffer` (at most `capacity`, in pool
    /// order) and returns how many. Safe on the audio thread between two `render` calls: it reads
    /// the voices and allocates nothing.
    public func places(into buffer: UnsafeMutablePointer<VoicePlace>, capacity: Int) -> Int {
        var n = 0
        for i in 0..<voiceCount where n < capacity {
            let v = voices[i]
            guard v.stage != .idle else { continue }
            // A pass is `curveLastX + step` curve units long (see ShapeSlot.updateStep): the
            // voice's own extent and step, so a shape swapped in mid-note does not skew it.
            let length = v.curveLastX + v.step
            var pass = length > 0 ? v.position / length : 0
            if !(pass >= 0) { pass = 0 }
            if pass >= 1 { pass = pass - Double(Int(pass)) }
            buffer[n] = VoicePlace(voice: i, channel: v.part, note: v.note,
                                   released: v.stage == .releasing || v.pendingPart >= 0, pass: pass)
            n += 1
        }
        return n
    }
}
