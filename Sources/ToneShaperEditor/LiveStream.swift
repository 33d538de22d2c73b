import Foundation
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI

/// The browser route of continuous play: one engine per page, rendered chunk by chunk on the
/// server and sent as PCM, so it works on a machine with no sound card.
///
/// It drives the same `LiveSession` as `play`: notes go through its event ring, edited shapes
/// through its shape hand-off (`offerShape`), and a chunk is one `renderPeriod` (so one
/// `Instrument.process`, the door every front-end renders through). A chunk is sent
/// only when real time reaches it, minus a small lead, so an edit is heard within
/// `lead + the page's jitter buffer` (≈ 32 + 40 ms), well inside the 100 ms the editor promises.
final class LiveStream: @unchecked Sendable {
    static let framesPerChunk = 512
    /// Chunks rendered ahead of real time: enough to ride out scheduling hiccups, short enough
    /// that an edit is heard at once.
    static let leadChunks = 3

    let sampleRate: Double
    let session: LiveSession
    let input: LiveInput
    private var note: UInt8
    private var playing = false
    private let stereo: UnsafeMutablePointer<Float>

    init(shape: Shape, note: Int, sampleRate: Double) throws {
        self.sampleRate = sampleRate
        let engine = try ShapeExport.engine(for: shape, sampleRate: sampleRate, voices: 8, pointCapacity: Shape.maximumPoints)
        session = LiveSession(instrument: Instrument(engine: engine), eventCapacity: 256, eventsPerPeriod: 64)
        input = LiveInput(session: session)
        self.note = UInt8(clamping: note)
        stereo = .allocate(capacity: 2 * Self.framesPerChunk)
    }

    deinit { stereo.deallocate() }

    // MARK: Control side (the socket's reader)

    /// Swaps the edited shape in; heard from the next chunk on, phase continuous.
    func apply(_ shape: Shape) -> Bool { session.offerShape(shape, preset: 0) }

    func play(_ on: Bool) {
        guard on != playing else { return }
        playing = on
        send(on ? .noteOn(channel: 0, note: note, velocity: 110) : .noteOff(channel: 0, note: note, velocity: 64))
    }

    func setNote(_ newNote: Int) {
        let next = UInt8(clamping: min(max(newNote, 0), 127))
        guard next != note else { return }
        if playing {
            send(.noteOff(channel: 0, note: note, velocity: 64))
            send(.noteOn(channel: 0, note: next, velocity: 110))
        }
        note = next
    }

    private func send(_ message: MIDIMessage) {
        _ = input.enqueue(TimedInstrumentEvent(frame: session.framesRendered, .message(message)))
    }

    // MARK: Render side (one task)

    /// Renders the next chunk as mono Float32 little-endian bytes (L and R are equal: one part, centred).
    func renderChunk() -> [UInt8] {
        let frames = Self.framesPerChunk
        session.renderPeriod(into: stereo, frames: frames)
        var bytes = [UInt8](repeating: 0, count: 4 * frames)
        bytes.withUnsafeMutableBytes { raw in
            for i in 0..<frames {
                let mono = 0.5 * (stereo[2 * i] + stereo[2 * i + 1])
                raw.storeBytes(of: mono.bitPattern.littleEndian, toByteOffset: 4 * i, as: UInt32.self)
            }
        }
        return bytes
    }

    /// Sends chunks paced to real time until cancelled. Silence is not sent (the page just runs
    /// dry); while silent the engine still runs, one chunk per chunk of real time.
    func run(send: @Sendable ([UInt8]) async throws -> Void) async throws {
        let clock = ContinuousClock()
        let chunk = Duration.seconds(Double(Self.framesPerChunk) / sampleRate)
        var due = clock.now
        while !Task.isCancelled {
            let bytes = renderChunk()
            if session.engine.activeVoiceCount > 0 || bytes.contains(where: { $0 != 0 }) {
                try await send(bytes)
                // Stay at most `leadChunks` ahead of real time.
                due = due.advanced(by: chunk)
                try await Task.sleep(until: due.advanced(by: chunk * -Self.leadChunks), clock: clock)
            } else {
                try await Task.sleep(for: chunk)
                due = clock.now
            }
        }
    }
}
