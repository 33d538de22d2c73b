import Foundation

/// A temporary folder holding an alsa-lib configuration that defines `capture`: a `file` PCM over
/// `null`, which stores exactly the frames written through the real snd_pcm_* calls.
struct CaptureDevice {
    let folder: URL
    var rawFile: URL { folder.appendingPathComponent("out.raw") }

    /// `capture` plus two helpers: `ulaw` accepts only MU_LAW (no format we write), and
    /// `lin16` accepts integers only, converting them to S16 into the capture file.
    var configText: String {
        """
        pcm.capture { type file; slave.pcm "null"; file "\(rawFile.path)"; format "raw" }
        pcm.ulaw { type mulaw; slave { pcm "null"; format S16_LE } }
        pcm.lin16 { type linear; slave { pcm "capture"; format S16_LE } }
        """
    }

    init() throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("toneshaper-alsa-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    func captured() throws -> Data { try Data(contentsOf: rawFile) }
}

extension Data {
    /// The bytes reinterpreted as little-endian values of T (the host order here).
    func values<T: FixedWidthInteger>(_: T.Type) -> [T] {
        withUnsafeBytes { raw in
            (0..<(count / MemoryLayout<T>.size)).map { raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<T>.size, as: T.self) }
        }
    }

    func floats() -> [Float] {
        values(UInt32.self).map(Float.init(bitPattern:))
    }
}

/// A stereo test signal: a sine on the left, a ramp from -1.25 to 1.25 on the right (so integer
/// formats must clip), with a NaN, exact ±1 and a few rounding ties sprinkled in.
func testSignal(frames: Int) -> [Float] {
    var samples = [Float](repeating: 0, count: frames * 2)
    for frame in 0..<frames {
        samples[2 * frame] = Float(sin(2 * Double.pi * 440 * Double(frame) / 48000)) * 0.9
        samples[2 * frame + 1] = -1.25 + 2.5 * Float(frame) / Float(frames - 1)
    }
    samples[10] = .nan
    samples[12] = 1
    samples[14] = -1
    samples[16] = 0.5 / 32767        // exactly half a 16-bit step: rounds away from zero
    samples[18] = -1.5 / 32767
    return samples
}
