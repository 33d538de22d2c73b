import AllocationCounter
import Testing
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive

@Suite("Editing while playing: the shape swap allocates nothing on the audio thread")
struct ShapeSwapAllocationTests {
    /// Edits as the editor sends them: other points, waves, envelopes, fidelity, up to the most points a shape may have.
    static func edit(_ k: Int) -> Shape {
        let count = k % 9 == 0 ? Shape.maximumPoints : 2 + k % 12
        let waves = WaveType.allCases
        var points: [Shape.Point] = []
        for i in 0..<count {
            let frequency = 150 + Double((i * 37 + k * 11) % 500)
            points.append(Shape.Point(time: Double(i) / Double(count - 1), frequency: frequency))
        }
        let envelope: AmplitudeEnvelope = k % 3 == 0 ? .linearDecay : (k % 3 == 1 ? .exponentialDecay(rate: 3) : .constant)
        var s = Shape(name: "edit-\(k)", points: points, duration: 0.2 + Double(k % 5) * 0.1, minFrequency: 100, maxFrequency: 700, wave: waves[k % waves.count],
            amplitude: 0.3, envelope: envelope,
            fidelity: 10 + (k * 97) % 5000, fourierTerms: 1 + k % 40, rootNote: 60 + k % 12)
        s.echo = Shape.Echo(delay: 0.05 + 0.01 * Double(k % 7), volume: k % 2 == 0 ? 0.3 : 0)
        return s
    }

    @Test("offer edits from the control side, render periods on the audio side: zero allocations while rendering, every edit heard")
    func swapWithoutAllocation() throws {
        var config = EngineConfiguration(sampleRate: 48_000, voices: 8)
        config.pointCapacity = Shape.maximumPoints
        config.channelPresets = Array(repeating: 0, count: 16)
        let engine = Engine(library: try PresetLibrary(shapes: [Self.edit(1)]), configuration: config)
        let session = LiveSession(engine: engine, eventCapacity: 1024)
        let input = LiveInput(session: session)
        let frames = 128
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        defer { buffer.deallocate() }
        for note in [57, 60, 64, 69] as [UInt8] {
            #expect(input.enqueue(TimedInstrumentEvent(frame: 0, .message(.noteOn(channel: 0, note: note, velocity: 100))), patience: 0))
        }
        // Warm-up: one round of every wave × envelope combination, so the debug build's lazily made
        // type metadata exists before counting (as the other allocation tests warm up).
        for k in 0..<66 {
            #expect(session.offerShape(Self.edit(k), preset: 0))
            session.renderPeriod(into: buffer, frames: frames)
        }
        var allocations: Int64 = 0
        var heard = 0
        let edits = 120
        for k in 66..<(66 + edits) {
            #expect(session.offerShape(Self.edit(k), preset: 0))  // control side: builds the data (allocates)
            allocation_counter_start()
            session.renderPeriod(into: buffer, frames: frames)      // audio side: swaps it in
            session.renderPeriod(into: buffer, frames: frames)
            allocations += allocation_counter_stop()
            var peak: Float = 0
            for i in 0..<(2 * frames) { peak = max(peak, abs(buffer[i])) }
            if peak > 0 { heard += 1 }
        }
        #expect(allocations == 0)
        #expect(heard == edits)
        session.reclaimShapes()
    }
}
