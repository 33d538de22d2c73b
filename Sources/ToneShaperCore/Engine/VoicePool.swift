/// The fixed pool of voices: which voice a note takes, and the bookkeeping of taking, releasing
/// and handing one over. What a voice sounds like is the engine's business (`Engine+VoicePool`).
///
/// A type of its own, as amsynth's voice allocation unit is, so the policy can be read and tested
/// on its own: a key already sounding on the part retriggers its voice, else an idle voice plays,
/// else the oldest released voice is stolen, else the oldest held one; when every voice already
/// has a stealing note queued, the note is dropped. A stolen voice fades (`stealFadeSamples`),
/// then hands over to the note that stole it. The voices are allocated once, here; nothing else
/// allocates.
final class VoicePool {
    let voices: UnsafeMutablePointer<Voice>
    let count: Int
    /// How long a stolen voice fades before it hands over.
    let stealFadeSamples: Int
    /// The last start or release, counted: tells the oldest voices, and seeds a new note's noise.
    private(set) var order: UInt64 = 0
    /// Notes that had to take a voice from another note.
    private(set) var stolen = 0

    /// What a note-on gets from the pool.
    enum Claim: Equatable {
        /// The voice already playing this key on this part: it restarts, its wave carrying on.
        case retrigger(Int)
        /// A free voice.
        case idle(Int)
        /// A voice taken from another note: it fades out first, then plays this one (`steal`).
        case steal(Int)
        /// No voice: every one already has a stealing note queued.
        case drop
    }

    /// A note waiting for a stolen voice to fade out.
    struct Pending: Equatable {
        var part: Int
        var note: UInt8
        var velocity: UInt8
    }

    init(count: Int, stealFadeSamples: Int) {
        self.count = count
        self.stealFadeSamples = stealFadeSamples
        voices = cacheAligned(Voice.self, count: count)
        voices.initialize(repeating: Voice(), count: count)
    }

    deinit {
        voices.deinitialize(count: count)
        UnsafeMutableRawPointer(voices).deallocate()
    }

    /// Which voice a note-on of `note` on part `p` takes (nothing is changed: see `steal`, `occupy`).
    @inline(__always)
    func claim(part p: Int, note: UInt8) -> Claim {
        for i in 0..<count where voices[i].stage != .idle && voices[i].part == p && voices[i].note == note
            && voices[i].pendingPart < 0 {
            return .retrigger(i)
        }
        for i in 0..<count where voices[i].stage == .idle { return .idle(i) }
        var victim = -1
        for i in 0..<count where voices[i].stage == .releasing && voices[i].pendingPart < 0 {
            if victim < 0 || voices[i].releaseOrder < voices[victim].releaseOrder { victim = i }
        }
        if victim < 0 {
            for i in 0..<count where voices[i].pendingPart < 0 {
                if victim < 0 || voices[i].startOrder < voices[victim].startOrder { victim = i }
            }
        }
        return victim < 0 ? .drop : .steal(victim)
    }

    /// Voice `i` starts playing `note` on part `p` (a claimed voice, or a stolen one handing over).
    /// Returns the start's order.
    @inline(__always)
    func occupy(_ i: Int, part p: Int, note: UInt8) -> UInt64 {
        order += 1
        let v = voices + i
        v.pointee.stage = .playing
        v.pointee.part = p
        v.pointee.note = note
        v.pointee.keyDown = true
        v.pointee.sustained = false
        v.pointee.startOrder = order
        v.pointee.pendingPart = -1
        return order
    }

    /// Takes voice `i` for `pending`: it is released (keeping a release already faster than the
    /// steal fade) and plays the new note once silent (`handOver`).
    func steal(_ i: Int, for pending: Pending) {
        let v = voices + i
        stolen += 1
        v.pointee.pendingPart = pending.part
        v.pointee.pendingNote = pending.note
        v.pointee.pendingVelocity = pending.velocity
        if v.pointee.stage == .playing { order += 1; v.pointee.releaseOrder = order }
        v.pointee.stage = .releasing
        v.pointee.keyDown = false
        v.pointee.sustained = false
        let releasingFaster = v.pointee.gainTarget == 0 && v.pointee.rampLeft > 0 && v.pointee.rampLeft < stealFadeSamples
        if !releasingFaster { v.pointee.ramp(to: 0, samples: stealFadeSamples) }
    }

    /// Voice `i` lets go of its key: it fades to silence over `samples`.
    @inline(__always)
    func release(_ i: Int, samples: Int) {
        order += 1
        let v = voices + i
        v.pointee.stage = .releasing
        v.pointee.keyDown = false
        v.pointee.sustained = false
        v.pointee.releaseOrder = order
        v.pointee.ramp(to: 0, samples: samples)
    }

    /// A voice whose release has ended: the note that stole it, to start on it now, or nil when
    /// none did (then `free` it).
    @inline(__always)
    func handOver(_ i: Int) -> Pending? {
        let v = voices + i
        guard v.pointee.pendingPart >= 0 else { return nil }
        return Pending(part: v.pointee.pendingPart, note: v.pointee.pendingNote, velocity: v.pointee.pendingVelocity)
    }

    /// Voice `i` is idle again.
    @inline(__always)
    func free(_ i: Int) {
        voices[i].stage = .idle
    }
}
