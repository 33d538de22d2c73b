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
        nextPart.store(0, ordering: .relaxed)
    }

    /// Thread `t`'s part of a block (t = 0 is the engine's own thread): claims parts from the list
    /// until none is left. With one thread, that is every part, in order, with no atomic claim (a
    /// locked instruction per part stalls the pipeline for nothing).
    func renderShare(_ t: Int) {
        if crew == nil {
            for k in 0..<partOrderCount { renderPart(partOrder[k], thread: t) }
            return
        }
        while true {
            let k = nextPart.wrappingAdd(1, ordering: .relaxed).oldValue
            if k >= partOrderCount { break }
            renderPart(partOrder[k], thread: t)
            if t > 0 { helperParts.wrappingAdd(1, ordering: .relaxed) }
        }
    }

    /// One part's voices into its bus, in pool order, then its gain and echo.
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
    }
}
