import Testing
import ToneShaperAudioFile

@Suite("AudioFileFormat chooser")
struct AudioFileFormatTests {
    @Test("an explicit name wins over the extension", arguments: [
        ("take.wav", "wav16", AudioFileFormat.wav16),
        ("take.wav", "WAV24", .wav24),
        ("take.flac", "wav32f", .wav32Float),
        ("take", "float", .wav32Float),
        ("take.wav", "flac", .flac16),
        ("take.wav", "flac16", .flac16),
        ("take.wav", "flac24", .flac24),
        ("take.wav", "ogg", .oggVorbis),
        ("take.raw", "vorbis", .oggVorbis),
        ("take.ogg", "wav", .wav16),
    ])
    func explicitName(path: String, name: String, expected: AudioFileFormat) throws {
        #expect(try AudioFileFormat(path: path, explicit: name) == expected)
    }

    @Test("without a name the extension decides, case-insensitively", arguments: [
        ("out.wav", AudioFileFormat.wav16),
        ("/tmp/dir.with.dots/Out.WAV", .wav16),
        ("out.flac", .flac16),
        ("out.ogg", .oggVorbis),
        ("out.oga", .oggVorbis),
    ])
    func byExtension(path: String, expected: AudioFileFormat) throws {
        #expect(try AudioFileFormat(path: path, explicit: nil) == expected)
    }

    @Test("an unknown name is an error naming it and listing the accepted names")
    func unknownName() {
        let error = #expect(throws: AudioFileError.self) { try AudioFileFormat(path: "x.wav", explicit: "mp3") }
        let text = error?.text ?? ""
        #expect(text.contains("'mp3'"))
        for name in ["wav16", "wav24", "wav32f", "float", "flac16", "flac24", "ogg", "vorbis"] {
            #expect(text.contains(name), "accepted list should mention \(name): \(text)")
        }
    }

    @Test("an unknown or missing extension is an error naming the path", arguments: ["take.aiff", "take", "/tmp/a.b/take", "take."])
    func unknownExtension(path: String) {
        let error = #expect(throws: AudioFileError.self) { try AudioFileFormat(path: path, explicit: nil) }
        let text = error?.text ?? ""
        #expect(text.contains(path))
        #expect(text.contains(".flac") && text.contains(".wav"))
    }
}
