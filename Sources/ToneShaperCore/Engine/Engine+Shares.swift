import Synchronization

/// How a block's voices are shared between threads: parts (MIDI channels) are independent until
/// the mix, so each audible part — its voices summed into its bus in pool order, then its gain and
/// echo — is one piece of work. Threads claim parts from a list, heaviest first, until none is left:
/// whichever thread is free takes the next part, so a thread held up by the serial work between
/// blocks (events, control ticks, the mix) simply takes fewer. Who renders a part never changes
/// its bus, and the buses are mixed in channel order, so the output is the same bit for bit.
extension Engine {
    /// Builds the block's work list in one pass over the pool: each part's sounding voices in pool
    /// order (a row of `voiceCount` slots per part), then the audible parts by voice count, most
    /// first (a long part started last would finish last).
    func listParts() {
        let counts = partVoiceCount, rows = partVoices, stride = voiceCount
        counts.update(repeating: 0, count: 16)
        for i in 0..<voiceCount where voices[i].stage != .idle {
            let p = voices[i].part
            rows[p * stride + counts[p]] = i
            counts[p] += 1
        }
        var count = 0
        for p in 0..<16 where parts[p].audible {
            // Insertion by voice count (stable: channel order among equals).
            let weight = counts[p]
            var k = count
            while k > 0 && counts[partOrder[k - 1]] < weight {
                partOrder[k] = partOrder[k - 1]
                k -= 1
            }
            partOrder[k] = p
            count += 1
        }
        partOrderCount = count
        shareCounters.claims.store(0, ordering: .relaxed)
    }

    /// Thread `t`'s part of a block (t = 0 is the engine's own thread): claims parts from the list
    /// until none is left. The engine's thread takes them from the front (heaviest first), helpers
    /// from the back, so from block to block each thread mostly keeps the same parts and their
    /// voices, buses and echo lines stay in its core's cache. One atomic word holds both ends' counts
    /// (front in the low half, back in the high half): a claim is good while the two have not met.
    /// With one thread, every part in order, with no atomic claim (a locked instruction per part
    /// stalls the pipeline for nothing).
    func renderShare(_ t: Int) {
        let count = partOrderCount
        if crew == nil {
            for k in 0..<count { renderPart(partOrder[k], thread: t) }
            return
        }
        let step = t == 0 ? 1 : 1 << 32
        while true {
            let claims = shareCounters.claims.wrappingAdd(step, ordering: .relaxed).oldValue
            let front = claims & 0xFFFF_FFFF, back = claims >> 32
            if front + back >= count { break }
            renderPart(partOrder[t == 0 ? front : count - 1 - back], thread: t)
            if t > 0 { shareCounters.helperParts.wrappingAdd(1, ordering: .relaxed) }
        }
    }

    /// One part's voices into its bus, in pool order, then its gain, echo and pan.
    @inline(__always) func renderPart(_ p: Int, thread t: Int) {
        let count = jobCount, intoPeriod = jobIntoPeriod
        let bus = buses + p * maxBlock
        bus.update(repeating: 0, count: count)
        let ratio = partRatio[p]
        let scratch = scratches[t]
        let row = partVoices + p * voiceCount
        for j in 0..<partVoiceCount[p] {
            let v = voices + row[j]
            v.pointee.render(count: count, intoPeriod: intoPeriod, slot: slots + v.pointee.slot, ratio: v.pointee.noteRatio * ratio,
                             halfStep: halfStep, scratch: scratch, tables: tables,
                             nyquistReciprocal: nyquistReciprocal, into: bus)
        }
        processPart(p, count: count)
        panPart(p, count: count, intoPeriod: intoPeriod)
    }
}

/// The counters threads write while they share a block, each on a cache line of its own. Beside
/// the engine's fields that every part reads (the block's length, the tables, the work list), an
/// atomic add would take that line from the other core at every claim.
final class ShareCounters: @unchecked Sendable {
    private let before: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Claims on `partOrder` so far: from the front in the low 32 bits, from the back in the high 32.
    let claims = Atomic<Int>(0)
    private let between: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Parts rendered by the helper threads so far.
    let helperParts = Atomic<Int>(0)
    private let after: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
}
