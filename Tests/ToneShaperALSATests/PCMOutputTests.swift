import Foundation
import Testing
@testable import ToneShaperALSA

@Suite("PCM output through a file PCM over null")
struct PCMOutputTests {
    /// Writes `samples` in uneven pieces (so chunking and short writes are exercised), drains, closes.
    func play(_ samples: [Float], through pcm: PCMOutput) throws {
        let frames = samples.count / pcm.channels
        var done = 0
        var piece = 1
        try samples.withUnsafeBufferPointer { buffer in
            while done < frames {
                let count = min(piece, frames - done)
                try pcm.write(buffer.baseAddress! + done * pcm.channels, frames: count)
                done += count
                piece = piece * 3 + 7   // 1, 10, 37, 118, 361, 1090, ... crosses the buffer size
            }
        }
        try pcm.drain()
        pcm.close()
    }

    @Test("prefers FLOAT_LE and stores the written floats bit for bit")
    func floatIsBitExact() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "capture", configText: capture.configText)
        #expect(pcm.format == .float32LE)
        #expect(pcm.sampleRate == 48000)
        #expect(pcm.periodFrames == 128)
        #expect(pcm.bufferFrames == 384)
        #expect(pcm.channels == 2)

        let signal = testSignal(frames: 5000)
        try play(signal, through: pcm)
        let stored = try capture.captured().values(UInt32.self)
        #expect(stored == signal.map(\.bitPattern))
        #expect(pcm.xrunCount == 0)
    }

    @Test("S32_LE: clips to [-1, 1], scales by 2147483647, rounds to nearest")
    func s32Conversion() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "capture", configText: capture.configText, formats: [.s32LE])
        #expect(pcm.format == .s32LE)
        let signal = testSignal(frames: 3000)
        try play(signal, through: pcm)
        let stored = try capture.captured().values(Int32.self)
        #expect(stored == signal.map(SampleFormat.s32Sample))
        #expect(stored[10] == 0)                       // NaN
        #expect(stored[12] == Int32.max)               // +1
        #expect(stored[14] == -Int32.max)              // -1
        #expect(stored[1] == -Int32.max)               // -1.25 clipped
        #expect(stored[stored.count - 1] == Int32.max) // +1.25 clipped
    }

    @Test("S16_LE: clips to [-1, 1], scales by 32767, rounds to nearest with ties away from zero")
    func s16Conversion() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "capture", configText: capture.configText, formats: [.s16LE])
        #expect(pcm.format == .s16LE)
        let signal = testSignal(frames: 3000)
        try play(signal, through: pcm)
        let stored = try capture.captured().values(Int16.self)
        #expect(stored == signal.map(SampleFormat.s16Sample))
        #expect(stored[10] == 0)
        #expect(stored[12] == 32767)
        #expect(stored[14] == -32767)
        #expect(stored[16] == 1)
        #expect(stored[18] == -2)
        #expect(stored[1] == -32767)
        #expect(stored[stored.count - 1] == 32767)
    }

    @Test("falls back to S32_LE when the device takes no float")
    func fallsBackToS32() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "lin16", configText: capture.configText)
        #expect(pcm.format == .s32LE)
        let signal = testSignal(frames: 1000)
        try play(signal, through: pcm)
        // The linear plugin keeps the high 16 bits of each of our S32 samples.
        let stored = try capture.captured().values(Int16.self)
        #expect(stored == signal.map { Int16(truncatingIfNeeded: SampleFormat.s32Sample($0) >> 16) })
    }

    @Test("a device taking none of FLOAT_LE, S32_LE, S16_LE is refused by name")
    func unsupportedFormat() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let error = try #require(throws: ALSAError.self) {
            try PCMOutput(device: "ulaw", configText: capture.configText)
        }
        #expect(error.description == "unsupported sample format on PCM device 'ulaw': it accepts none of FLOAT_LE, S32_LE, S16_LE")
    }

    @Test("an unknown device name is named in the error")
    func unknownDevice() throws {
        let error = try #require(throws: ALSAError.self) {
            try PCMOutput(device: "toneshaper_no_such_pcm")
        }
        #expect(error.description.hasPrefix("cannot open PCM device 'toneshaper_no_such_pcm': No such file or directory"))
        #expect(error.code == -ENOENT)
    }

    @Test("a missing card is named in the error", .enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd/pcmC9D0p")))
    func missingCard() throws {
        let error = try #require(throws: ALSAError.self) {
            try PCMOutput(device: "hw:9")
        }
        #expect(error.description.hasPrefix("cannot open PCM device 'hw:9': "))
        #expect(error.code < 0)
    }

    @Test("configuration text that does not parse is reported, not printed")
    func badConfigText() throws {
        let error = try #require(throws: ALSAError.self) {
            try PCMOutput(device: "capture", configText: "pcm.capture { type file; slave.pcm ")
        }
        #expect(error.description.hasPrefix("cannot parse the ALSA configuration given for PCM device 'capture'"))
    }

    @Test("close is idempotent and writing after close throws")
    func closeTwice() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "capture", configText: capture.configText)
        pcm.close()
        pcm.close()
        let silence = [Float](repeating: 0, count: 256)
        let error = try #require(throws: ALSAError.self) {
            try silence.withUnsafeBufferPointer { try pcm.write($0.baseAddress!, frames: 128) }
        }
        #expect(error.description == "cannot write to PCM device 'capture': it is closed")
    }

    @Test("error text: attempt, subject, then snd_strerror or the better reason")
    func errorText() {
        #expect(ALSAError("cannot open PCM device", subject: "hw:9", code: -ENOENT).description
                == "cannot open PCM device 'hw:9': No such file or directory")
        #expect(PCMOutput.openFailure(device: "hw:0", code: -EBUSY, detail: nil).description
                == "cannot open PCM device 'hw:0': device is busy (used by another program?)")
        #expect(PCMOutput.openFailure(device: "x", code: -ENOENT, detail: "Unknown PCM x").description
                == "cannot open PCM device 'x': No such file or directory (alsa-lib: Unknown PCM x)")
    }
}
