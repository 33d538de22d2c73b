import Synchronization

/// How a span's voices are shared between threads (what a span is: `Engine+Span`): parts (MIDI
/// channels) are independent until the mix, so each audible part — its control ticks, its voices
/// summed into its bus in pool order, its gain, echo and pan ramp — is one piece of work.
///
/// Each thread has a list of its own: a run of neighbouring channels, the same from span to span
/// as far as the loads allow (so their voices, buses and echo lines stay in its core's cache). It
/// claims from the front of its list; once done, it takes what is left at the back of another's,
/// where the runs meet, so the runs stay runs and a thread held up (by the serial work between
/// spans, or by the system) simply does fewer. Each list's claims are counted on a cache line of
/// their own: while every thread works through its own list, no line crosses between cores (one
/// shared counter crossed at every claim: 200–400 ns each between this VM's two vCPUs).
///
/// The mix adds the parts' planes in channel order, and a sum in order can be cut anywhere: the
/// first thread adds its run's planes where they were rendered (`prefixItem`, its first item in
/// the next span), and the last thread carries that sum on through the other planes and the
/// master (`finishItem`). A stereo sum crosses between cores instead of the first run's planes.
/// Who renders or mixes what never changes a bit.
extension Engine {
    /// Builds the span's work lists: each part's sounding voices in pool order (a row of
    /// `voiceCount` slots per part, one pass over the pool), then each thread's run of parts.
    ///
    /// What the other threads read here is written only where it changed: from one span to the
    /// next it mostly has not, and a line left as it was stays in the cache of the core that read it.
    func listParts() {
        let counts = shareScratch, rows = partVoices, stride = voiceCount
        counts.update(repeating: 0, count: 16)
        for i in 0..<voiceCount where voices[i].stage != .idle {
            let p = voices[i].part
            let slot = rows + p * stride + counts[p]
            if slot.pointee != i { slot.pointee = i }
            counts[p] += 1
        }
        // A part's weight: its voices, plus one for its gain, echo and plane; 0 when silent.
        let weights = shareScratch
        var count = 0
        for p in 0..<16 {
            if partVoiceCount[p] != counts[p] { partVoiceCount[p] = counts[p] }
            if parts[p].audible {
                weights[p] = counts[p] + 1
                count += 1
            } else {
                weights[p] = 0
                if spanAudible[16 * p + planeSet] != 0 { spanAudible[16 * p + planeSet] = 0 }  // (a listed part sets its own)
            }
        }
        partOrderCount = count
        // Thread t has the channels from runStarts[t] up to runStarts[t + 1]. A run's end moves a
        // part to its neighbour while that lowers the larger of the two loads, until none does.
        let threads = threadCount, starts = runStarts
        func load(_ t: Int) -> Int {
            var sum = 0
            for p in starts[t]..<starts[t + 1] { sum += weights[p] }
            return sum
        }
        var moved = true, rounds = 0
        while moved && rounds < 64 {
            moved = false
            rounds += 1
            for t in 0..<(threads - 1) {
                let here = load(t), next = load(t + 1)
                if here > next {
                    var p = starts[t + 1] - 1
                    while p >= starts[t] && weights[p] == 0 { p -= 1 }
                    if p >= starts[t] && weights[p] < here - next { starts[t + 1] = p; moved = true }
                } else if next > here {
                    var p = starts[t + 1]
                    while p < starts[t + 2] && weights[p] == 0 { p += 1 }
                    if p < starts[t + 2] && weights[p] < next - here { starts[t + 1] = p + 1; moved = true }
                }
            }
        }
        // The first thread's run from its lowest channel up, the others' from their highest down:
        // a list's back is where its run meets the one before.
        let lengths = shareScratch + 16
        lengths.update(repeating: 0, count: threads)
        prefixListed = crew != nil && pendingMaster.map { $0.split > 0 } == true
        if prefixListed { appendShare(Engine.prefixItem, to: 0, lengths) }
        for p in starts[0]..<starts[1] where weights[p] > 0 { appendShare(p, to: 0, lengths) }
        for t in 1..<max(1, threads) {
            for p in (starts[t]..<starts[t + 1]).reversed() where weights[p] > 0 { appendShare(p, to: t, lengths) }
        }
        // The rest of the mix and the master (and `onMastered`) end the last thread's list: the
        // first thing a thread that runs out of work takes from it, and it leaves no voices or
        // echo line in a cache, so an uneven span is evened out without moving a part.
        if crew != nil && pendingMaster != nil { appendShare(Engine.finishItem, to: threads - 1, lengths) }
        for t in 0..<threads where shareLists[t * Engine.shareListStride] != lengths[t] {
            shareLists[t * Engine.shareListStride] = lengths[t]
        }
        shareCounters.reset()
    }

    /// The thread whose run holds channel `p`.
    func runOwner(of p: Int) -> Int {
        var t = 0
        while p >= runStarts[t + 1] { t += 1 }
        return t
    }

    @inline(__always) private func appendShare(_ item: Int, to t: Int, _ lengths: UnsafeMutablePointer<Int>) {
        lengths[t] += 1
        let entry = shareLists + t * Engine.shareListStride + lengths[t]
        if entry.pointee != item { entry.pointee = item }
    }

    /// Work-list entries that are not parts (0...15): the first run's share of the last span's
    /// mix; the rest of that mix and the master.
    static let prefixItem = 16, finishItem = 17
    /// Per thread: its list's length, then its items (16 parts and two jobs at most), on lines of its own.
    static let shareListStride = 32

    /// Thread `t`'s part of a span (t = 0 is the engine's own thread): its own list from the
    /// front, then whatever the others have left, from their backs. With one thread, every part
    /// in order, with no atomic claim (a locked instruction per part stalls the pipeline for nothing).
    func renderShare(_ t: Int) {
        if crew == nil {
            let list = shareLists
            for k in 0..<list[0] { _ = renderPart(list[1 + k], thread: t) }
            if let master = pendingMaster { mixAndMaster(master, prefixed: false) }
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
            } else if item == Engine.prefixItem {
                if let master = pendingMaster {
                    mixPrefix(master)
                    shareCounters.prefixDone.store(master.sequence, ordering: .releasing)
                }
            } else {
                if let master = pendingMaster {
                    // The prefix is the first thread's first item: long done, as a rule (and if
                    // that thread was held up, this one spins, then yields, as the crew does).
                    if prefixListed {
                        let counters = shareCounters, sequence = master.sequence
                        RenderCrew.spin { counters.prefixDone.load(ordering: .acquiring) == sequence }
                    }
                    mixAndMaster(master, prefixed: prefixListed)
                }
            }
        }
    }

    /// One part through the span, period by period: its own control tick where a period starts
    /// (when the span says so), then its voices into its bus in pool order (for up to
    /// `voicePeriods` periods at once: `voiceRun`), its gain and echo, and its pan across
    /// the period for the mix.
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
        var voiced = 0  // frames from `start` on that the voices have already rendered
        while start < count {
            let m = min(count - start, maxBlock - into)
            if partsTick && into == 0 { tickPart(p) }
            if !parts[p].audible { break }
            sounded |= UInt32(1) << UInt32(segment)
            let segmentBus = bus + start
            if voiced == 0 {
                // The voices run on through the next periods at once when their ticks will change
                // nothing the voices read: a voice's set-up is then paid once for them all.
                voiced = partsTick ? voiceRun(p, first: m, left: count - start) : m
                if voiced > m { parts[p].echo.prefetchReads(voiced) }
                segmentBus.update(repeating: 0, count: voiced)
                let ratio = parts[p].ratio
                for j in 0..<partVoiceCount[p] {
                    let v = voices + row[j]
                    if v.pointee.stage == .idle { continue }  // freed at a tick earlier in the span
                    let slot = slots + v.pointee.slot
                    // Bends and vibrato take no voice past its shape's ceiling (see `PlayableRange`).
                    let played = PlayableRange.bounded(v.pointee.noteRatio * v.pointee.tuning * ratio, cap: slot.pointee.ratioCap)
                    v.pointee.render(count: voiced, intoPeriod: into, slot: slot, ratio: played,
                                     halfStep: halfStep, scratch: scratch, tables: tables,
                                     nyquistReciprocal: nyquistReciprocal, into: segmentBus)
                }
            }
            voiced -= m
            processPart(p, bus: segmentBus, count: m)
            ramps[segment] = panRamp(p)
            start += m; into = 0; segment += 1
        }
        spanAudible[16 * p + planeSet] = sounded
        return sounded.nonzeroBitCount
    }
}

extension Engine {
    /// Control periods a part's voices may render in one call (their scratch holds that many).
    static let voicePeriods = 4

    /// How many frames from a period's start (`first` of them in this period, `left` to the span's
    /// end) the part's voices may render at once: on through the next periods when their ticks
    /// will do what they would a period at a time. The ticks' own work (pan, the part's
    /// audibility) reads nothing the voices change; a tick reaches the voices by gliding a shape's
    /// duration or fidelity (both must be at their targets), by moving the pitch ratio (vibrato
    /// must be off, and the ratio already that of the bend: an event that stops vibrato or bends
    /// mid-period leaves it to the next tick), and by freeing a voice whose release has ended —
    /// which it decides from the voice's state after the run: so the run stops short of the period
    /// in which a release ends (one ending in this period is freed at the next tick either way).
    /// A voice handing over to the note that stole it takes the whole tick, period by period.
    @inline(__always) func voiceRun(_ p: Int, first m: Int, left: Int) -> Int {
        let part = parts + p
        guard part.pointee.vibratoDepth == 0, currentSemitones(part: p) == part.pointee.ratioSemitones,
              part.pointee.privateSlots == 0, part.pointee.currentSlot >= 0 else { return m }
        let slot = slots + part.pointee.currentSlot
        guard slot.pointee.duration == slot.pointee.durationTarget, slot.pointee.fidelity == slot.pointee.fidelityTarget else { return m }
        var run = min(left, m + (Engine.voicePeriods - 1) * maxBlock)
        let row = partVoices + p * voiceCount
        for j in 0..<partVoiceCount[p] where run > m {
            let v = voices + row[j]
            // A release ending after this period must end after the run: else the run ends at the
            // last period start before the release's end.
            let ends = v.pointee.rampLeft
            if v.pointee.stage == .releasing && ends > m && ends <= run { run = m + (ends - m - 1) / maxBlock * maxBlock }
        }
        return run
    }
}

/// The counters threads write while they share a span, each on cache lines of its own (128 bytes:
/// a line and the neighbour the prefetcher pairs with it). Beside the engine's fields that every
/// part reads (the span's length, the tables, the lists), an atomic add would take that line from
/// the other core at every claim.
final class ShareCounters: @unchecked Sendable {
    private let before = LinePairPadding()
    /// Part-periods rendered by the helper threads so far.
    let helperParts = Atomic<Int>(0)
    private let between = LinePairPadding()
    /// The span (`MasterJob.sequence`) whose mix prefix is done.
    let prefixDone = Atomic<Int>(-1)
    private let after = LinePairPadding()
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
