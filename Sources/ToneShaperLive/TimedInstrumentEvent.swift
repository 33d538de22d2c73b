import ToneShaperInstrument

/// An instrument event stamped with the absolute sample frame at which it should take effect.
///
/// This is what crosses from the MIDI side to the audio thread, in the front door's own terms
/// (`InstrumentEvent.Kind`), so the audio thread hands it to `Instrument.process` as it is. It is a
/// plain bit-copyable value (no references, no strings), so the lock-free ring can move it with a
/// memory copy and the audio thread never retains, releases or allocates anything to receive it.
/// The frame is absolute (counted from the first rendered frame), not an offset: only the audio
/// thread knows which period is being rendered, so only it can turn a frame into an offset.
public struct TimedInstrumentEvent: Sendable, BitwiseCopyable {
    public var frame: Int64
    public var kind: InstrumentEvent.Kind

    public init(frame: Int64, _ kind: InstrumentEvent.Kind) {
        self.frame = frame
        self.kind = kind
    }
}
