import ToneShaperALSA
import ToneShaperLive

extension SequencerAddress {
    /// The live core's name for this sequencer client:port: client × 256 + port, so the ports of a
    /// client that exits can be found again (`LiveInput.receive(_:arrival:)`).
    public var sourceID: MIDISourceID { MIDISourceID(UInt32(client) << 8 | UInt32(port)) }
}

extension LiveInput {
    /// An event from the ALSA sequencer, which arrived at monotonic `arrival` nanoseconds (nil: now,
    /// at the next period start). A message is placed at its own frame, a constant
    /// `session.eventLatency` after the frame the device was playing when it arrived (see
    /// `LiveSession.frame(arrivedAt:)`). A port that went away has its held notes and pedals
    /// released; a client that exited, those of every one of its ports.
    public func receive(_ event: SequencerEvent, arrival: Int64? = nil) {
        let frame = session.frame(arrivedAt: arrival)
        switch event {
        case .message(let message, let source):
            receive(message, from: source.sourceID, at: frame)
        case .clientGone(let client):
            releaseAll(at: frame) { $0.rawValue >> 8 == UInt32(client) }
        case .portGone(let port):
            releaseAll(from: port.sourceID, at: frame)
        }
    }
}
