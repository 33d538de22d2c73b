import Synchronization
import ToneShaperInstrument

/// A whole instrument passed to the audio thread (a JACK graph's new rate), and the one it
/// replaced passed back, so building and freeing both happen off the audio thread.
///
/// Two atomic pointer slots: the control side offers into one, the audio thread takes from it at
/// the start of a period and leaves the instrument it replaced, still retained, in the other,
/// which the control side empties (`reclaim`). The audio thread takes nothing while that is full,
/// so it never frees anything itself.
final class InstrumentHandOff: @unchecked Sendable {
    /// Control side → audio thread: the instrument to render with from the next period on (retained).
    private let offered = Atomic<Unmanaged<Instrument>?>(nil)
    /// Audio thread → control side: the one it replaced (retained) until `reclaim()`.
    private let retired = Atomic<Unmanaged<Instrument>?>(nil)
    /// Where and at what rate the last installed instrument took over (written before `retired`).
    private let swapFrame = Atomic<Int64>(0)
    private let swapRate = Atomic<UInt64>(0)

    deinit {
        offered.exchange(nil, ordering: .acquiring)?.release()
        retired.exchange(nil, ordering: .acquiring)?.release()
    }

    /// Any thread: `instrument` is taken at the next period start; an earlier offer not yet taken is dropped.
    func offer(_ instrument: Instrument) {
        offered.exchange(Unmanaged.passRetained(instrument), ordering: .acquiringAndReleasing)?.release()
    }

    /// Audio thread: the offered instrument, once the last replaced one has been reclaimed;
    /// `current` is kept retained for `reclaim()`. Allocates and frees nothing.
    @inline(__always)
    func take(replacing current: Instrument, at frame: Int64) -> Instrument? {
        guard retired.load(ordering: .acquiring) == nil,
              let next = offered.exchange(nil, ordering: .acquiringAndReleasing) else { return nil }
        let instrument = next.takeRetainedValue()
        swapFrame.store(frame, ordering: .relaxed)
        swapRate.store(instrument.engine.sampleRate.bitPattern, ordering: .relaxed)
        retired.store(Unmanaged.passRetained(current), ordering: .releasing)
        return instrument
    }

    /// One control thread: frees the replaced instrument, if there is one, and says from which
    /// session frame and at what rate its successor renders.
    func reclaim() -> (frame: Int64, sampleRate: Double)? {
        guard let old = retired.load(ordering: .acquiring) else { return nil }
        let frame = swapFrame.load(ordering: .relaxed)
        let rate = Double(bitPattern: swapRate.load(ordering: .relaxed))
        retired.store(nil, ordering: .releasing)
        old.release()
        return (frame, rate)
    }
}
