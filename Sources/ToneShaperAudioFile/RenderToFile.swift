import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

extension OfflineRenderer {
    /// Renders `messages` over `totalFrames` into a new audio file at `path` (stereo, at the
    /// engine's rate) and returns the output's peak magnitude. The file is closed, and so
    /// finalised and readable, whether the render ends or a write fails (the error is then thrown).
    ///
    /// The one way a render reaches a file: `render`, `render-shape` and the editor's Export all
    /// write through it, so they write the same file from the same performance.
    public func render(_ messages: [TimedMIDIMessage], totalFrames: Int, to path: String, format: AudioFileFormat,
                       progress: ((Double) -> Void)? = nil) throws -> Float {
        let writer = try AudioFileWriter(path: path, format: format, sampleRate: Int(engine.sampleRate), channels: 2)
        var peak: Float = 0
        do {
            try render(messages, totalFrames: totalFrames, progress: progress) { block in
                if let samples = block.baseAddress { peak = max(peak, Engine.peak(samples, count: block.count)) }
                try writer.write(interleaved: block)
            }
            try writer.close()
        } catch {
            try? writer.close()
            throw error
        }
        return peak
    }
}
