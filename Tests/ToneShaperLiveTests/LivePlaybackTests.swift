import Foundation
import Testing
import ToneShaperALSA
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperLive
import ToneShaperMIDI

@Suite("Live play of a file through a real PCM equals the offline render")
struct LivePlaybackTests {
    @Test("a MIDI file played through the capture PCM is bit-exact with OfflineRenderer, and so is the recording")
    func liveEqualsOffline() throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        let (messages, seconds) = try Fixtures.performanceFile()
        let pcm = try PCMOutput(device: "capture", sampleRate: 48_000, periodFrames: 256, periods: 3, configText: folder.configText)
        #expect(pcm.format == .float32LE)
        let endFrame = Int64((seconds + 0.5) * 48_000)
        let recorder = try AudioRecorder(path: folder.path("take.wav"), format: .wav32Float, sampleRate: pcm.sampleRate, channels: 2)
        let player = LivePlayer(engine: Fixtures.engine(), pcm: pcm, source: .performance(messages, endFrame: endFrame),
                                recorder: recorder, recordMIDI: true, realtime: false)
        try player.start()
        while !player.isFinished {
            usleep(2_000)
            player.poll()
        }
        let summary = player.stop()
        #expect(summary.audioFailure == nil)

        let offline = OfflineRenderer(engine: Fixtures.engine(), blockFrames: pcm.periodFrames)
            .renderAll(messages, totalFrames: Int(endFrame))
        let captured = try folder.capturedFloats()
        // Whole periods were written, and periods after the end are silence.
        #expect(captured.count % (2 * pcm.periodFrames) == 0)
        try #require(captured.count >= offline.count)
        #expect(Array(captured[0..<offline.count]) == offline)
        #expect(captured[offline.count...].allSatisfy { $0 == 0 })
        #expect(Fixtures.peak(offline, 0..<offline.count) > 0.05)

        let recording = try #require(summary.recording)
        #expect(recording.framesWritten == Int(endFrame))
        #expect(recording.framesDropped == 0)
        let file = try AudioFileReader.read(path: folder.path("take.wav"))
        #expect(file.sampleRate == 48_000 && file.channels == 2)
        #expect(file.samples == offline)

        // Every event applied at its own frame, none late, all noted for --record-midi.
        #expect(summary.lateEvents == 0 && summary.droppedEvents == 0 && summary.unrecordedEvents == 0)
        #expect(summary.playedMIDI == messages)
        let noteOns = messages.filter { if case .noteOn = $0.message { return true } else { return false } }.count
        #expect(summary.notesPlayed == noteOns)
    }

    @Test("the recorded MIDI file reads back with every message at the frame it was played")
    func recordedMIDIRoundTrip() throws {
        let (messages, _) = try Fixtures.performanceFile()
        for rate in [44_100.0, 48_000.0] {
            let reread = try MIDIFile.parse(MIDIRecording.fileBytes(messages, sampleRate: rate)).timedMessages(sampleRate: rate)
            #expect(reread == messages)
        }
    }

    @Test("an event script plays like the same events in a MIDI file")
    func scriptMatchesFile() throws {
        let script = try EventScript.parse("""
            0.5 on 60 100
            1.0 off 60
            1.2 cc 74 30
            1.5 bend 4096
            2.0 program 3 ch=2
            """)
        let folder = try CaptureFolder()
        defer { folder.remove() }
        let pcm = try PCMOutput(device: "capture", periodFrames: 128, configText: folder.configText)
        let messages = script.timedMessages(sampleRate: 48_000)
        let endFrame = Int64((script.durationSeconds + 0.2) * 48_000)
        let player = LivePlayer(engine: Fixtures.engine(), pcm: pcm, source: .performance(messages, endFrame: endFrame), realtime: false)
        try player.start()
        while !player.isFinished { usleep(2_000) }
        _ = player.stop()
        let offline = OfflineRenderer(engine: Fixtures.engine(), blockFrames: 128).renderAll(messages, totalFrames: Int(endFrame))
        let captured = try folder.capturedFloats()
        try #require(captured.count >= offline.count)
        #expect(Array(captured[0..<offline.count]) == offline)
        #expect(messages.first == TimedMIDIMessage(frame: 24_000, message: .noteOn(channel: 0, note: 60, velocity: 100)))
    }
}
