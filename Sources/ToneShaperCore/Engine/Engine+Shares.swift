import Synchronization

/// How a span's voices are shared between threads (what a span is: `Engine+Span`): parts (MIDI
/// channels) are independent until the mix, so each audible part — its control ticks, its voices
/// summed into its bus in pool order, its gain, echo and pan ramp — is one piece of work.
///
/// Each thread has a list of its own: the parts it rendered before, as far as the loads allow (so
/// their voices, buses and echo lines stay in its core's cache), heaviest first. It claims from the
/// front of its list; once done, it takes what is left at the back of another's, so a thread held
/// up (by the serial work between spans, or by the system) simply does fewer. Each list's claims
/// are counted on a cache line of their own: while every thread works through its own list, no
/// line crosses between cores (one shared counter crossed at every claim: 200–400 ns each between
/// this VM's two vCPUs). Who renders a part never changes its plane, and the planes are mixed in
/// channel order, so the output is the same bit for bit.
extension Engine {
    /// Builds the span's work lists: each part's sounding voices in pool order (a row of
    /// `voiceCount` slots per part, one pass over the pool), then each thread's parts.
    func listParts() {
        let counts = partVoiceCount, rows = partVoices, stride = voiceCount
        counts.update(repeating: 0, count: 16)
        for i in 0..<voiceCount where voices[i].stage != .idle {
            let p = voices[i].part
            rows[p * stride + counts[p]] = i
            counts[p] += 1
        }
        // The audible parts by voice count, most first (insertion, stable: channel order among equals).
        let sorted = shareScratch
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
        partOrderCount = count
        // Each part stays with the thread that had it (its weight: its voices, plus one for its
        // gain, echo and plane)...
        let threads = threadCount, owner = partOwner, loads = shareScratch + 16
        loads.update(repeating: 0, count: threads)
        for k in 0..<count { loads[owner[sorted[k]]] += counts[sorted[k]] + 1 }
        // ...unless moving one from the most loaded thread to the least lowers the most: the
        // heaviest that does moves, until none does.
        for _ in 0..<16 where threads > 1 {
            var most = 0, least = 0
            for t in 1..<threads {
                if loads[t] > loads[most] { most = t }
                if loads[t] < loads[least] { least = t }
            }
            let gap = loads[most] - loads[least]
            var moved = -1
            for k in 0..<count where owner[sorted[k]] == most && counts[sorted[k]] + 1 < gap { moved = sorted[k]; break }
            guard moved >= 0 else { break }
            owner[moved] = least
            loads[most] -= counts[moved] + 1
            loads[least] += counts[moved] + 1
        }
        for t in 0..<threads { shareLists[t * Engine.shareListStride] = 0 }
        for k in 0..<count { appendShare(sorted[k], to: owner[sorted[k]]) }
        // A job that is not a part ends the least loaded list: it is the first thing a thread that
        // runs out of work takes from another, and it leaves no voices or echo line in a cache, so
        // an uneven span is evened out without moving a part. The caller's job (an offline
        // render's file writing) reads what the last call rendered, so it comes with that call's
        // last master, if held over (`holdingLastMaster`), done first on the same thread; else the
        // job is the last span's mix and master.
        if crew != nil && (sideJob != nil || pendingMaster != nil) {
            var least = threads - 1
            for t in (0..<threads).reversed() where loads[t] < loads[least] { least = t }
            appendShare(sideJob != nil ? Engine.sideJobItem : Engine.masterItem, to: least)
        }
        shareCounters.reset()
    }

    @inline(__always) private func appendShare(_ item: Int, to t: Int) {
        let list = shareLists + t * Engine.shareListStride
        list[0] += 1
        list[list[0]] = item
    }

    /// Work-list entries that are not parts (0...15).
    static let masterItem = 16, sideJobItem = 17
    /// Per thread: its list's length, then its items (16 parts and two jobs at most), on lines of its own.
    static let shareListStride = 32

    /// Thread `t`'s part of a span (t = 0 is the engine's own thread): its own list from the
    /// front, then whatever the others have left, from their backs. With one thread, every part
    /// in order, with no atomic claim (a locked instruction per part stalls the pipeline for nothing).
    func renderShare(_ t: Int) {
        if crew == nil {
            let list = shareLists
            for k in 0..<list[0] { _ = renderPart(list[1 + k], thread: t) }
            if let master = pendingMaster { mixAndMaster(master) }
            if let job = sideJob { job() }
            return
        }
        var rendered = 0  // part-periods, counted once at the end: an atomic add per period costs a locked instruction each
        defer { if t > 0 && rendered > 0 { shareCounters.helperParts.wrappingAdd(rendered, ordering: .relaxed) } }
        var from = t
        while true {
            // A list's claim word holds claims from its front (its owner) in the low 32 bits and
            // from its back (the others) in the high 32: a claim is good while the two have not met.
            let list = shareLists + from * Engine.shareListStride
            let total = list[0]
            let claims = shareCounters.claim(from, step: from == t ? 1 : 1 << 32)
            let front = claims & 0xFFFF_FFFF, back = claims >> 32
            if front + back >= total {
                from = from + 1 == threadCount ? 0 : from + 1
                if from == t { break }
                continue
            }
            let item = list[1 + (from == t ? front : total - 1 - back)]
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

/// The counters threads write while they share a span, each on cache lines of its own (128 bytes:
/// a line and the neighbour the prefetcher pairs with it). Beside the engine's fields that every
/// part reads (the span's length, the tables, the lists), an atomic add would take that line from
/// the other core at every claim.
final class ShareCounters: @unchecked Sendable {
    private let before: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Part-periods rendered by the helper threads so far.
    let helperParts = Atomic<Int>(0)
    private let after: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// One claim word per thread's list.
    private let words: UnsafeMutableRawPointer
    private let lists: Int

    init(lists: Int) {
        self.lists = lists
        words = .allocate(byteCount: 128 * lists, alignment: 128)
        for t in 0..<lists { (words + 128 * t).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0)) }
    }

    deinit {
        for t in 0..<lists { (words + 128 * t).assumingMemoryBound(to: Atomic<Int>.self).deinitialize(count: 1) }
        words.deallocate()
    }

    /// Adds `step` to list `t`'s claims; returns the claims before.
    @inline(__always) func claim(_ t: Int, step: Int) -> Int {
        (words + 128 * t).assumingMemoryBound(to: Atomic<Int>.self).pointee.wrappingAdd(step, ordering: .relaxed).oldValue
    }

    /// No claims on any list (before a span: the crew's start publishes it).
    @inline(__always) func reset() {
        for t in 0..<lists { (words + 128 * t).assumingMemoryBound(to: Atomic<Int>.self).pointee.store(0, ordering: .relaxed) }
    }
}
