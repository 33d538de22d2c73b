import Synchronization

/// How a span's voices are shared between threads (what a span is: `Engine+Span`): parts (MIDI
/// channels) are independent until the mix, so each audible part — its control ticks, its voices
/// summed into its bus in pool order, its gain, echo and pan ramp — is one piece of work. Threads claim
/// parts from a list until none is left: whichever thread is free takes the next part, so a thread
/// held up by the serial work between spans (events, the mix, the master) simply takes fewer. Who
/// renders a part never changes its plane, and the planes are mixed in channel order, so the output is
/// the same bit for bit.
extension Engine {
    /// Builds the span's work list in one pass over the pool: each part's sounding voices in pool
    /// order (a row of `voiceCount` slots per part), then the audible parts by voice count, so that
    /// each thread takes the heaviest first (a long part started last would finish last).
    func listParts() {
        let counts = partVoiceCount, rows = partVoices, stride = voiceCount
        counts.update(repeating: 0, count: 16)
        for i in 0..<voiceCount where voices[i].stage != .idle {
            let p = voices[i].part
            rows[p * stride + counts[p]] = i
            counts[p] += 1
        }
        // By voice count, most first (insertion, stable: channel order among equals), after the
        // list's own room...
        let sorted = partOrder + 20
        var count = 0
        for p in 0..<16 {
            guard parts[p].audible else { spanAudible[16 * p + planeSet] = 0; continue }  // (a listed part sets its own)
            let weight = counts[p]
            var k = count
            while k > 0 && counts[sorted[k - 1]] < weight {
                sorted[k] = sorted[k - 1]
                k -= 1
            }
            sorted[k] = p
            count += 1
        }
        // ...then the last span's mix and master, lighter than a part: dealt last, it lands where
        // the two ends meet, and whichever thread runs out of parts first fills the gap with it...
        var items = count
        if crew != nil && pendingMaster != nil && sideJob == nil { sorted[items] = Engine.masterItem; items += 1 }
        // ...then dealt to both ends in turn: the engine's thread, taking from the front, and the
        // helpers, from the back, each start with the heaviest and meet at the lightest.
        for k in 0..<items { partOrder[k & 1 == 0 ? k >> 1 : items - 1 - (k >> 1)] = sorted[k] }
        // The caller's job (an offline render's file writing, longer than a part) is the helpers'
        // first claim, at the very back; it reads what the last call rendered, so it comes with
        // that call's last master, if held over (`holdingLastMaster`), done first on the same thread.
        if crew != nil && sideJob != nil { partOrder[items] = Engine.sideJobItem; items += 1 }
        partOrderCount = count
        workCount = items
        shareCounters.claims.store(0, ordering: .relaxed)
    }

    /// Work-list entries that are not parts (0...15).
    static let masterItem = 16, sideJobItem = 17

    /// Thread `t`'s part of a span (t = 0 is the engine's own thread): claims parts from the list
    /// until none is left. The engine's thread takes them from the front, helpers from the back,
    /// so from span to span each thread mostly keeps the same parts and their
    /// voices, buses and echo lines stay in its core's cache. One atomic word holds both ends' counts
    /// (front in the low half, back in the high half): a claim is good while the two have not met.
    /// With one thread, every part in order, with no atomic claim (a locked instruction per part
    /// stalls the pipeline for nothing).
    func renderShare(_ t: Int) {
        let count = partOrderCount
        if crew == nil {
            for k in 0..<count { _ = renderPart(partOrder[k], thread: t) }
            if let master = pendingMaster { mixAndMaster(master) }
            if let job = sideJob { job() }
            return
        }
        let total = workCount
        let step = t == 0 ? 1 : 1 << 32
        var rendered = 0  // part-periods, counted once at the end: an atomic add per period costs a locked instruction each
        defer { if t > 0 && rendered > 0 { shareCounters.helperParts.wrappingAdd(rendered, ordering: .relaxed) } }
        while true {
            let claims = shareCounters.claims.wrappingAdd(step, ordering: .relaxed).oldValue
            let front = claims & 0xFFFF_FFFF, back = claims >> 32
            if front + back >= total { break }
            let item = partOrder[t == 0 ? front : total - 1 - back]
            if item < 16 {
                rendered += renderPart(item, thread: t)
            } else if item == Engine.masterItem {
                if let master = pendingMaster { mixAndMaster(master) }
            } else {
                if let master = pendingMaster { mixAndMaster(master) }
                sideJob?()
            }
        }
    }

    /// One part through the span, period by period: its own control tick where a period starts
    /// (when the span says so), then its voices into its bus in pool order, its gain and echo, and
    /// its pan across the period for the mix.
    /// A part that falls silent stays silent to the end of the span (only a note, an event, wakes
    /// it), and `spanAudible` says which periods it sounded in. Returns the periods it rendered.
    @inline(__always) func renderPart(_ p: Int, thread t: Int) -> Int {
        let count = jobCount, partsTick = jobPartsTick
        let bus = buses + (planeSet * 16 + p) * maxSpan
        let ramps = panRamps + (planeSet * 16 + p) * 32
        let scratch = scratches[t]
        let row = partVoices + p * voiceCount
        var sounded: UInt32 = 0
        var start = 0, into = jobIntoPeriod, segment = 0
        while start < count {
            let m = min(count - start, maxBlock - into)
            if partsTick && into == 0 { tickPart(p) }
            if !parts[p].audible { break }
            sounded |= UInt32(1) << UInt32(segment)
            let segmentBus = bus + start
            segmentBus.update(repeating: 0, count: m)
            let ratio = parts[p].ratio
            for j in 0..<partVoiceCount[p] {
                let v = voices + row[j]
                if v.pointee.stage == .idle { continue }  // freed at a tick earlier in the span
                v.pointee.render(count: m, intoPeriod: into, slot: slots + v.pointee.slot, ratio: v.pointee.noteRatio * ratio,
                                 halfStep: halfStep, scratch: scratch, tables: tables,
                                 nyquistReciprocal: nyquistReciprocal, into: segmentBus)
            }
            processPart(p, bus: segmentBus, count: m)
            ramps[segment] = panRamp(p)
            start += m; into = 0; segment += 1
        }
        spanAudible[16 * p + planeSet] = sounded
        return sounded.nonzeroBitCount
    }
}

/// The counters threads write while they share a span, each on a cache line of its own. Beside
/// the engine's fields that every part reads (the span's length, the tables, the work list), an
/// atomic add would take that line from the other core at every claim.
final class ShareCounters: @unchecked Sendable {
    private let before: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Claims on `partOrder` so far: from the front in the low 32 bits, from the back in the high 32.
    let claims = Atomic<Int>(0)
    private let between: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Part-periods rendered by the helper threads so far.
    let helperParts = Atomic<Int>(0)
    private let after: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
}
