import Testing
@testable import ToneShaperCore

/// The pool's policy on its own, no engine and no sound: which voice a note takes, and what
/// taking, releasing, stealing and handing over leave in the voices.
@Suite("The voice pool: retrigger, idle, steal (oldest released, then oldest held) or drop")
struct VoicePoolTests {
    /// A pool of `count` voices with a 96-sample steal fade.
    static func pool(_ count: Int) -> VoicePool { VoicePool(count: count, stealFadeSamples: 96) }

    /// Claims a voice for the note and starts it there, as the engine does (a steal queues it).
    @discardableResult
    static func play(_ pool: VoicePool, part: Int, note: UInt8, velocity: UInt8 = 100) -> VoicePool.Claim {
        let claim = pool.claim(part: part, note: note)
        switch claim {
        case .retrigger(let i), .idle(let i):
            _ = pool.occupy(i, part: part, note: note)
            pool.voices[i].ramp(to: 1, samples: 32)
        case .steal(let i): pool.steal(i, for: .init(part: part, note: note, velocity: velocity))
        case .drop: break
        }
        return claim
    }

    @Test("free voices are taken in pool order; a voice freed again is the first taken")
    func idleInOrder() {
        let pool = Self.pool(3)
        #expect(Self.play(pool, part: 0, note: 60) == .idle(0))
        #expect(Self.play(pool, part: 0, note: 62) == .idle(1))
        #expect(Self.play(pool, part: 0, note: 64) == .idle(2))
        pool.release(0, samples: 100)
        #expect(pool.handOver(0) == nil)
        pool.free(0)
        #expect(pool.voices[0].stage == .idle)
        #expect(Self.play(pool, part: 1, note: 70) == .idle(0))
        #expect(pool.voices[0].part == 1 && pool.voices[0].note == 70 && pool.voices[0].keyDown)
        #expect(pool.stolen == 0)
    }

    @Test("the same key on the same part retriggers its voice, held or releasing; on another part it is another note")
    func retrigger() {
        let pool = Self.pool(4)
        Self.play(pool, part: 0, note: 60)
        Self.play(pool, part: 0, note: 64)
        #expect(pool.claim(part: 0, note: 64) == .retrigger(1))
        #expect(pool.claim(part: 3, note: 64) == .idle(2))
        pool.release(1, samples: 100)
        #expect(pool.claim(part: 0, note: 64) == .retrigger(1))
        #expect(Self.play(pool, part: 0, note: 64) == .retrigger(1))
        #expect(pool.voices[1].stage == .playing && pool.voices[1].keyDown)
    }

    @Test("a full pool steals the voice released first, whatever the order the notes started in")
    func stealsOldestReleased() {
        let pool = Self.pool(4)
        for note: UInt8 in [60, 64, 67, 71] { Self.play(pool, part: 0, note: note) }
        pool.release(3, samples: 48_000)  // 71, the newest note, released first
        pool.release(0, samples: 48_000)  // then 60, the oldest
        #expect(Self.play(pool, part: 0, note: 74) == .steal(3))
        #expect(pool.stolen == 1)
        // The next steal takes the other released voice, not the one already handing over.
        #expect(Self.play(pool, part: 0, note: 76) == .steal(0))
        #expect(pool.handOver(3) == .init(part: 0, note: 74, velocity: 100))
        #expect(pool.handOver(0) == .init(part: 0, note: 76, velocity: 100))
        #expect(pool.stolen == 2)
    }

    @Test("with every voice held, a full pool steals the note started first: the voice's start, not its place in the pool")
    func stealsOldestHeld() {
        let pool = Self.pool(3)
        for note: UInt8 in [60, 64, 67] { Self.play(pool, part: 0, note: note) }
        pool.release(0, samples: 100)
        pool.free(0)
        Self.play(pool, part: 2, note: 72)  // voice 0 again, now the newest note
        #expect(Self.play(pool, part: 5, note: 74, velocity: 33) == .steal(1))
        let stolen = pool.voices[1]
        #expect(stolen.stage == .releasing && !stolen.keyDown && !stolen.sustained)
        #expect(stolen.gainTarget == 0 && stolen.rampLeft == 96, "the steal fades over the pool's steal fade")
        #expect(pool.handOver(1) == .init(part: 5, note: 74, velocity: 33))
        // The stolen voice, releasing with a note queued, is not taken again: the oldest held other one is.
        #expect(pool.claim(part: 0, note: 80) == .steal(2))
    }

    @Test("a voice stolen while releasing faster than the steal fade keeps its shorter release")
    func fasterReleaseKept() {
        let pool = Self.pool(1)
        Self.play(pool, part: 0, note: 60)
        pool.release(0, samples: 40)
        Self.play(pool, part: 0, note: 62)
        #expect(pool.voices[0].rampLeft == 40)
        let slow = Self.pool(1)
        Self.play(slow, part: 0, note: 60)
        slow.release(0, samples: 4_800)
        Self.play(slow, part: 0, note: 62)
        #expect(slow.voices[0].rampLeft == 96)
    }

    @Test("when every voice already has a note queued, a note is dropped and nothing changes")
    func drops() {
        let pool = Self.pool(2)
        Self.play(pool, part: 0, note: 60)
        Self.play(pool, part: 0, note: 62)
        Self.play(pool, part: 0, note: 64)
        Self.play(pool, part: 0, note: 65)
        #expect(pool.stolen == 2)
        #expect(Self.play(pool, part: 0, note: 67) == .drop)
        #expect(pool.stolen == 2)
        #expect(pool.handOver(0)?.note == 64 && pool.handOver(1)?.note == 65)
    }

    @Test("the note that stole a voice starts on it once its fade ends: it is then held, and ordered as the newest note")
    func handsOver() throws {
        let pool = Self.pool(2)
        Self.play(pool, part: 0, note: 60)
        Self.play(pool, part: 0, note: 62)
        Self.play(pool, part: 1, note: 70)  // steals voice 0 (60, the oldest held)
        let next = try #require(pool.handOver(0))
        _ = pool.occupy(0, part: next.part, note: next.note)
        #expect(pool.voices[0].stage == .playing && pool.voices[0].part == 1 && pool.voices[0].note == 70)
        #expect(pool.handOver(0) == nil, "nothing queued any more")
        // Voice 1 (62) is now the oldest held note.
        #expect(pool.claim(part: 0, note: 72) == .steal(1))
    }
}
