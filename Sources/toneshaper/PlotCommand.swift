import ArgumentParser
import Foundation
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperPlot

struct PlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw a shape's frequency curve and waveform (SVG), or a spectrogram of an audio file (SVG or PNG).",
        discussion: """
            Shape mode: toneshaper plot PRESET -o shape.svg [--cycles N] [--note N]
            Two charts on one time axis, as in the article. Above, the frequency curve: the \
            preset's drawn points as dots and, as a line, the quantised userIFCurve at the preset's \
            fidelity that the engine actually plays (transposed when --note differs from the root \
            note). Below, the waveform rendered through the engine (left channel; a min/max band \
            per pixel column when there are more samples than pixels).

            Spectrum mode: toneshaper plot --spectrum FILE.wav -o spec.svg (or spec.png)
            A spectrogram of any audio file libsndfile reads, channels mixed to mono: time in \
            seconds across, frequency up to Nyquist, colour in dBFS. Aliasing shows as partials \
            folding back down from Nyquist, echo as fading copies, transposition as a shifted curve.
            """)

    @Argument(help: "Preset name or program number, or a shape .json file (shape mode).", completion: .shapeNames)
    var preset: String?

    @Option(name: .long, help: ArgumentHelp("Draw a spectrogram of this audio file instead (spectrum mode).", valueName: "file"))
    var spectrum: String?

    @Option(name: .shortAndLong, help: "Output file: .svg, or .png for a spectrogram.")
    var output: String

    @Option(name: .long, parsing: .unconditional, help: "Shape mode: passes through the shape (default 1).")
    var cycles: Int?

    @Option(name: .long, parsing: .unconditional, help: "Shape mode: MIDI note to play (default: the preset's root note).")
    var note: Int?

    @Option(name: .long, parsing: .unconditional, help: "Shape mode: sample rate of the render in Hz (default 48000).")
    var rate: Int?

    @Flag(name: .long, help: "Spectrum mode: logarithmic frequency axis from 20 Hz.")
    var logFrequency = false

    @Option(name: .long, parsing: .unconditional, help: "Spectrum mode: FFT length, a power of two 256...16384 (75% overlap).")
    var fftSize: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Spectrum mode: level shown black, in dBFS (default -120).", valueName: "dB"))
    var floorDb: Double?

    /// The output's extension, lower-case: it decides the format.
    var outputExtension: String { (output as NSString).pathExtension.lowercased() }

    func validate() throws {
        // The format follows the name, so a file never holds another format than its extension says.
        switch outputExtension {
        case "svg": break
        case "png" where spectrum != nil: break
        case "png": throw ValidationError("-o \(output): shape plots are written as SVG; name the file .svg")
        default: throw ValidationError("-o \(output): name the picture .svg (or .png for a spectrogram)")
        }
        switch (preset, spectrum) {
        case (nil, nil): throw ValidationError("give a PRESET to plot, or --spectrum FILE")
        case (_?, _?): throw ValidationError("give either a PRESET or --spectrum FILE, not both")
        case (_?, nil):
            if logFrequency || fftSize != nil || floorDb != nil {
                throw ValidationError("--log-frequency, --fft-size and --floor-db apply to --spectrum only")
            }
        case (nil, _?):
            if cycles != nil || note != nil || rate != nil {
                throw ValidationError("--cycles, --note and --rate apply to shape plots only (the file sets the rate)")
            }
        }
        if let cycles, !(1...1000).contains(cycles) { throw ValidationError("--cycles \(cycles) must be 1...1000") }
        if let note, !(0...127).contains(note) { throw ValidationError("--note \(note) must be a MIDI note 0...127") }
        if let rate, !(8_000...192_000).contains(rate) { throw ValidationError("--rate \(rate) is outside 8000...192000 Hz") }
        if let fftSize, !(256...16_384).contains(fftSize) || fftSize & (fftSize - 1) != 0 {
            throw ValidationError("--fft-size \(fftSize) must be a power of two in 256...16384")
        }
        if let floorDb, !(floorDb < -1 && floorDb >= -200) { throw ValidationError("--floor-db \(floorDb) must be in -200...-1") }
    }

    func run() throws {
        try Self.checkWritable(output)
        let picture: [UInt8]
        let summary: String
        if let spectrum {
            // Streamed: one FFT window of the file in memory, at most `maxFrames` spectra kept
            // (more than any picture's columns), so a file of any length plots in bounded memory.
            let audio = try AudioFileStream(path: spectrum)
            let interleaved = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4096 * audio.channels)
            defer { interleaved.deallocate() }
            let analysis = try Spectrogram(sampleRate: Double(audio.sampleRate), fftSize: fftSize ?? 2048, maxFrames: 4096) { mono in
                let frames = try audio.read(into: UnsafeMutableBufferPointer(rebasing: interleaved[0..<(min(mono.count, 4096) * audio.channels)]))
                SpectrogramPlot.mixToMono(UnsafeBufferPointer(rebasing: interleaved[0..<(frames * audio.channels)]), channels: audio.channels, into: mono)
                return frames
            }
            guard analysis.sampleCount > 0 else { throw CLIError("\(spectrum): holds no audio frames") }
            var options = SpectrogramPlot.Options(title: "spectrogram of \((spectrum as NSString).lastPathComponent)"
                                                  + (audio.channels > 1 ? " (\(audio.channels) channels mixed)" : ""))
            options.logFrequency = logFrequency
            if let floorDb { options.floor = Float(floorDb) }
            picture = outputExtension == "png" ? SpectrogramPlot.png(analysis, options: options) : Array(SpectrogramPlot.svg(analysis, options: options).utf8)
            summary = String(format: "spectrogram, %.2f s, %d Hz", analysis.duration, audio.sampleRate)
        } else if let preset {
            let shape = try Resources.shape(preset)
            let sampleRate = Double(rate ?? 48_000)
            RenderShapeCommand.noteIfSilent(shape, note: note, sampleRate: sampleRate)
            picture = Array(try ShapePlot.svg(shape: shape, note: note, cycles: cycles ?? 1, sampleRate: sampleRate).utf8)
            summary = "\(shape.name), note \(note ?? shape.rootNote), \(cycles ?? 1) cycle(s)"
        } else {
            return  // validate() rules this out
        }
        try Self.write(picture, to: output)
        print("wrote \(URL(fileURLWithPath: output).standardizedFileURL.path) (\(summary))")
    }

    /// Fails before any rendering when the output cannot be created, naming the cause.
    static func checkWritable(_ path: String) throws {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw CLIError("\(path): is a folder, not a file") }
            if !fm.isWritableFile(atPath: path) { throw CLIError("\(path): cannot write: permission denied") }
            return
        }
        let folder = (path as NSString).deletingLastPathComponent
        let dir = folder.isEmpty ? "." : folder
        guard fm.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError("\(path): cannot write: folder \(dir) does not exist")
        }
        guard fm.isWritableFile(atPath: dir) else { throw CLIError("\(path): cannot write: folder \(dir) is not writable") }
    }

    /// Writes with POSIX calls so a failure (disk full, …) reports the system's reason.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw CLIError("\(path): cannot write: \(String(cString: strerror(errno)))") }
        var bytes = bytes
        var done = 0
        let failure: Int32? = bytes.withUnsafeMutableBytes { buffer in
            while done < buffer.count {
                let n = Foundation.write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 { if errno == EINTR { continue }; return errno }
                done += n
            }
            return nil
        }
        let closed = close(fd)
        if let failure { throw CLIError("\(path): cannot write: \(String(cString: strerror(failure)))") }
        if closed != 0 { throw CLIError("\(path): cannot write: \(String(cString: strerror(errno)))") }
    }
}
