import Synchronization
import ToneShaperCore

/// Where each sounding note is in its pass, published by the audio thread for an editor's
/// playhead, read by any other thread.
///
/// The audio thread must not lock or allocate, and the reader must never see half of one period's
/// places and half of the next: a sequence lock over atomic words (as `DeviceClock` publishes its
/// line). The writer makes the sequence odd, stores the places, makes it even again; a reader
/// copies, and keeps the copy only when the sequence was even and unchanged across it.
public final class PlayheadBoard: @unchecked Sendable {
    /// Most places held: the engine's voice count.
    public let capacity: Int
    private let sequence = Atomic<UInt64>(0)
    private let count = Atomic<Int>(0)
    /// The session frame at which the places were taken (the end of the period just rendered).
    private let frame = Atomic<Int64>(0)
    /// Two words per place: voice | channel << 32 | note << 40 | released << 48, then the pass's bits.
    private let words: UnsafeMutablePointer<Atomic<UInt64>>

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        words = .allocate(capacity: 2 * self.capacity)
        for i in 0..<(2 * self.capacity) { (words + i).initialize(to: Atomic(0)) }
    }

    deinit {
        words.deinitialize(count: 2 * capacity)
        words.deallocate()
    }

    /// Audio thread: publishes `n` places taken at session frame `at`. No lock, no allocation.
    public func publish(_ places: UnsafePointer<VoicePlace>, count n: Int, at frameNow: Int64) {
        let n = min(max(0, n), capacity)
        let next = sequence.load(ordering: .relaxed) &+ 1
        sequence.store(next, ordering: .relaxed)  // odd: readers wait
        atomicMemoryFence(ordering: .releasing)
        for i in 0..<n {
            let p = places[i]
            let head = UInt64(UInt32(truncatingIfNeeded: p.voice)) | UInt64(UInt8(truncatingIfNeeded: p.channel)) << 32
                | UInt64(p.note) << 40 | (p.released ? 1 << 48 : 0)
            words[2 * i].store(head, ordering: .relaxed)
            words[2 * i + 1].store(p.pass.bitPattern, ordering: .relaxed)
        }
        count.store(n, ordering: .relaxed)
        frame.store(frameNow, ordering: .relaxed)
        sequence.store(next &+ 1, ordering: .releasing)
    }

    /// Any other thread: the places last published and the frame they were taken at (allocates
    /// the array). Nothing published yet: no places, frame 0.
    public func read() -> (places: [VoicePlace], frame: Int64) {
        var places: [VoicePlace] = []
        places.reserveCapacity(capacity)
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }  // being written: a few hundred nanoseconds
            places.removeAll(keepingCapacity: true)
            let n = min(count.load(ordering: .relaxed), capacity)
            for i in 0..<n {
                let head = words[2 * i].load(ordering: .relaxed)
                let pass = Double(bitPattern: words[2 * i + 1].load(ordering: .relaxed))
                places.append(VoicePlace(voice: Int(UInt32(truncatingIfNeeded: head)), channel: Int(UInt8(truncatingIfNeeded: head >> 32)),
                                         note: UInt8(truncatingIfNeeded: head >> 40), released: head >> 48 & 1 == 1, pass: pass))
            }
            let at = frame.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return (places, at) }
        }
    }
}
