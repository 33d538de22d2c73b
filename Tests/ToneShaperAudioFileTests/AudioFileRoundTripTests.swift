import CSndFile
import Foundation
import Testing
@testable import ToneShaperAudioFile

@Suite("Writing and reading back audio files")
struct AudioFileRoundTripTests {
    @Test("every format reads back with its sample rate, channel count and length", arguments: AudioFileFormat.allCases)
    func shape(format: AudioFileFormat) throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/shape.\(format.fileExtension)"
            let frames = 22_050
            let writer = try AudioFileWriter(path: path, format: format, sampleRate: 44_100, channels: 2)
            // Several writes of odd sizes, as the recorder's disk thread does.
            let signal = sine(frequency: 440, sampleRate: 44_100, frames: frames, channels: 2)
            var offset = 0
            for chunkFrames in [1, 127, 4096, 10_000, frames - 14_224] {
                try writer.write(interleaved: Array(signal[offset..<(offset + chunkFrames * 2)]))
                offset += chunkFrames * 2
            }
            #expect(writer.framesWritten == frames)
            try writer.close()

            let contents = try AudioFileReader.read(path: path)
            #expect(contents.sampleRate == 44_100)
            #expect(contents.channels == 2)
            #expect(contents.format == format)
            #expect(contents.samples.count == contents.frames * 2)
            if format.isLossless {
                #expect(contents.frames == frames)
            } else {
                #expect(abs(contents.frames - frames) <= 2048, "Vorbis length \(contents.frames) vs \(frames)")
            }
            let container = format.fileExtension.uppercased()
            #expect(contents.formatDescription.uppercased().contains(container), "\(contents.formatDescription)")
        }
    }

    @Test("writing over a file replaces it whole; through a symbolic link, the link stays and its target is written")
    func writingOver() throws {
        try withTemporaryDirectory { dir in
            func write(_ path: String, frames: Int) throws {
                let writer = try AudioFileWriter(path: path, format: .wav16, sampleRate: 48_000, channels: 2)
                try writer.write(interleaved: sine(frequency: 440, sampleRate: 48_000, frames: frames, channels: 2))
                try writer.close()
            }
            let path = "\(dir)/take.wav", link = "\(dir)/latest.wav"
            try write(path, frames: 48_000)
            try write(path, frames: 1000)  // shorter: nothing of the first take may remain
            #expect(try AudioFileReader.read(path: path).frames == 1000)
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 44 + 4 * 1000)

            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
            try write(link, frames: 500)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == path)
            #expect(try AudioFileReader.read(path: path).frames == 500)
        }
    }

    @Test("a file not yet closed reads back up to its last header update, 16-bit samples gathered for writing included")
    func headerUpdate() throws {
        try withTemporaryDirectory { dir in
            for format in [AudioFileFormat.wav16, .wav24, .wav32Float] {
                let path = "\(dir)/open.\(format.fileExtension)"
                let writer = try AudioFileWriter(path: path, format: format, sampleRate: 48_000, channels: 2)
                let signal = sine(frequency: 440, sampleRate: 48_000, frames: 1500, channels: 2)
                try writer.write(interleaved: signal)  // less than the 16-bit writer gathers before writing
                writer.updateHeader()
                let contents = try AudioFileReader.read(path: path)  // as a crash would leave it
                #expect(contents.frames == 1500, "\(format): \(contents.frames) frames")
                #expect(maxAbsoluteDifference(contents.samples, signal) <= 1.5 / 32768, "\(format)")
                try writer.close()
            }
        }
    }

    @Test("16-bit WAV holds the very bytes libsndfile's own float conversion writes: rounding, tiny values, clipping, NaN")
    func sixteenBitLikeLibsndfile() throws {
        // Values either side of every kind of edge: steps of 1/32768 and half steps, the region
        // below 2⁻⁸ where x·2³¹ is not an integer, ±1 and beyond, NaN; then a loud noise.
        var samples: [Float] = []
        for k in -40...40 {
            let step = Float(k) / 32768
            samples += [step, step + 0.5 / 32768, step - 0.5 / 32768, step.nextUp, step.nextDown]
        }
        for e in 9...30 { let tiny = Float(1) / Float(1 << e); samples += [tiny, -tiny, tiny * 1.37, -tiny * 1.37] }
        samples += [1, -1, Float(1).nextDown, Float(-1).nextUp, 1.5, -1.5, 1e30, -1e30, .infinity, -.infinity, .nan, -.nan]
        var seed: UInt32 = 12_345
        for _ in 0..<20_000 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            samples.append((Float(seed >> 8) / Float(1 << 24)) * 2.4 - 1.2)
        }
        if samples.count % 2 == 1 { samples.append(0.25) }
        try withTemporaryDirectory { dir in
            let ours = "\(dir)/ours.wav", theirs = "\(dir)/theirs.wav"
            try writeFile(ours, .wav16, sampleRate: 48_000, channels: 2, samples: samples)
            // libsndfile converting the floats itself, clipping on (as the writer used to ask it to).
            var info = SF_INFO()
            info.samplerate = 48_000
            info.channels = 2
            info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
            let handle = try #require(sf_open(theirs, Int32(SFM_WRITE), &info))
            #expect(sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE)) == SF_TRUE)
            #expect(sf_writef_float(handle, samples, sf_count_t(samples.count / 2)) == sf_count_t(samples.count / 2))
            #expect(sf_close(handle) == 0)
            let a = try Data(contentsOf: URL(fileURLWithPath: ours)), b = try Data(contentsOf: URL(fileURLWithPath: theirs))
            #expect(a.count == 44 + 2 * samples.count)
            let differing = zip(a, b).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            #expect(a.count == b.count && differing.isEmpty,
                    "\(differing.count) bytes differ, first at \(differing.first ?? -1): sample \(samples[max(0, ((differing.first ?? 44) - 44) / 2)])")
            // Both eight-lane forms, whichever this build writes with (vector-rounding CPUs take the first).
            let theirShorts = (0..<samples.count).map { Int16(bitPattern: UInt16(b[44 + 2 * $0]) | UInt16(b[45 + 2 * $0]) << 8) }
            for lanes in [AudioFileWriter.ShortLanes.rounding, .adding] {
                var shorts = [Int16](repeating: 0, count: samples.count)
                samples.withUnsafeBufferPointer { source in
                    shorts.withUnsafeMutableBufferPointer {
                        AudioFileWriter.convertToShorts(source.baseAddress!, count: source.count, into: $0.baseAddress!, lanes: lanes)
                    }
                }
                let wrong = zip(shorts, theirShorts).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
                #expect(wrong.isEmpty, "\(lanes): \(wrong.count) samples differ, first \(wrong.first.map { samples[$0] } ?? 0)")
            }
        }
    }

    @Test("a 1 kHz sine survives within the quantisation step of each lossless format", arguments: [
        (AudioFileFormat.wav16, Float(1.5 / 32768)),
        (.flac16, Float(1.5 / 32768)),
        (.wav24, Float(1.5 / 8_388_608)),
        (.flac24, Float(1.5 / 8_388_608)),
        (.wav32Float, Float(0)),
    ])
    func sineAccuracy(format: AudioFileFormat, tolerance: Float) throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/sine.\(format.fileExtension)"
            let signal = sine(frequency: 1000, sampleRate: 48_000, frames: 48_000, channels: 2)
            try writeFile(path, format, sampleRate: 48_000, channels: 2, samples: signal)

            let contents = try AudioFileReader.read(path: path)
            try #require(contents.samples.count == signal.count)
            let error = maxAbsoluteDifference(contents.samples, signal)
            #expect(error <= tolerance, "max error \(error) exceeds \(tolerance) for \(format)")
            // The two channels differ (amplitude and phase); a swap would be far outside tolerance.
            #expect(maxAbsoluteDifference(contents.channel(0), contents.channel(1)) > 0.1)
        }
    }

    @Test("Ogg Vorbis keeps the length and the pitch of a 1 kHz sine")
    func vorbisPitch() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/sine.ogg"
            let rate = 48_000
            let frames = 2 * rate
            let signal = sine(frequency: 1000, sampleRate: rate, frames: frames, channels: 1, amplitude: 0.5)
            try writeFile(path, .oggVorbis, sampleRate: rate, channels: 1, samples: signal)

            let contents = try AudioFileReader.read(path: path)
            #expect(contents.format == .oggVorbis)
            #expect(contents.sampleRate == rate)
            #expect(abs(contents.frames - frames) <= 2048, "length \(contents.frames) vs \(frames)")
            // Skip the codec's start-up and tail; measure the steady middle.
            let middle = contents.samples[(rate / 10)..<(contents.frames - rate / 10)]
            let frequency = zeroCrossingFrequency(middle, sampleRate: rate)
            #expect(abs(frequency - 1000) < 10, "measured \(frequency) Hz")
            let rms = rootMeanSquare(middle)
            #expect(abs(rms - 0.5 / 2.0.squareRoot()) < 0.05, "rms \(rms): the tone must keep its level")
        }
    }

    @Test("integer formats clip values beyond ±1 instead of wrapping them",
          arguments: [AudioFileFormat.wav16, .wav24, .flac16, .flac24])
    func clipping(format: AudioFileFormat) throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/clip.\(format.fileExtension)"
            let input: [Float] = [1.5, -1.5, 4, -4, 1.0001, -1.0001, 0.25, -0.25]
            try writeFile(path, format, sampleRate: 8000, channels: 1, samples: input)

            let output = try AudioFileReader.read(path: path).samples
            try #require(output.count == input.count)
            for (index, value) in input.enumerated() where abs(value) > 1 {
                // Wrapping would turn 1.5 (49150 as 16-bit) into about -0.5.
                #expect(output[index] * value.sign.multiplier >= 0.999,
                        "input \(value) read back as \(output[index])")
            }
            #expect(abs(output[6] - 0.25) < 0.001)
            #expect(abs(output[7] + 0.25) < 0.001)
        }
    }

    @Test("32-bit float keeps values beyond ±1 unchanged (headroom, not clipping)")
    func floatHeadroom() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/over.wav"
            let input: [Float] = [1.5, -2, 0.25, 100]
            try writeFile(path, .wav32Float, sampleRate: 8000, channels: 1, samples: input)
            #expect(try AudioFileReader.read(path: path).samples == input)
        }
    }
}

private extension FloatingPointSign {
    var multiplier: Float { self == .minus ? -1 : 1 }
}
