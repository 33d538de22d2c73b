import EngineFixtures
import Foundation
import Testing
import ToneShaperALSA
import ToneShaperALSALive
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI

@Suite("Live play of a file through a real PCM equals the offline render")
struct LivePlaybackTests {
    @Test("a MIDI file played through the capture PCM is bit-exact with OfflineRenderer, and so is the recording; with voices spread over a second real-time thread too",
          arguments: [1, 2])
    func liveEqualsOffline(threads: Int) throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        let (messages, seconds) = try Fixtures.performanceFile()
        let pcm = try PCMOutput(device: "capture", sampleRate: 48_000, periodFrames: 256, periods: 3, configText: folder.configText)
        #expect(pcm.format == .float32LE)
        let endFrame = Int64((seconds + 0.5) * 48_000)
        let recorder = try AudioRecorder(path: folder.path("take.wav"), format: .wav32Float, sampleRate: pcm.sampleRate, channels: 2)
        let player = ALSAPlayer(instrument: Instrument(engine: Fixtures.engine(threads: threads)), pcm: pcm, source: .performance(messages, endFrame: endFrame),
                                recorder: recorder, recordMIDI: true, realtime: false)
        try player.start()
        while !player.isFinished {
            usleep(2_000)
            player.poll()
        }
        let summary = player.stop()
        #expect(summary.audioFailure == nil)
        #expect(player.session.engine.threadCount == threads)
        #expect((player.session.engine.helperShares > 0) == (threads > 1))

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

    @Test("a device lost while playing: the performance and its recording go on, and the device is opened again and plays the rest")
    func survivesItsDevice() throws {
        let lost = try CaptureFolder(), back = try CaptureFolder()
        defer { lost.remove(); back.remove() }
        let (messages, seconds) = try Fixtures.performanceFile()
        let pcm = try PCMOutput(device: "capture", periodFrames: 256, periods: 3, configText: lost.configText)
        pcm.close()  // its first write fails, as an unplugged interface's does
        let endFrame = Int64((seconds + 0.5) * 48_000)
        let recorder = try AudioRecorder(path: back.path("take.wav"), format: .wav32Float, sampleRate: 48_000, channels: 2)
        var attempts = 0
        let player = ALSAPlayer(instrument: Instrument(engine: Fixtures.engine()), pcm: pcm, source: .performance(messages, endFrame: endFrame),
                                recorder: recorder, realtime: false) { request in
            attempts += 1
            // The first attempt finds nothing (still unplugged), the second finds it back.
            if attempts == 1 { throw ALSAError("cannot open PCM device", subject: request.device, code: -19) }
            return try PCMOutput(device: request.device, periodFrames: request.periodFrames, periods: request.periods,
                                 configText: back.configText)
        }
        player.reopenInterval = 0.1
        try player.start()
        var notices: [ALSAPlayer.Notice] = []
        while !player.isFinished {
            usleep(2_000)
            notices += player.poll()
        }
        let summary = player.stop()
        #expect(attempts == 2)
        try #require(notices.count == 2, "\(notices)")
        guard case .deviceLost(let error, let at) = notices[0] else { Issue.record("\(notices[0])"); return }
        #expect(error.description == "cannot write to PCM device 'capture': it is closed")
        #expect(at < 0.1)
        guard case .deviceBack(let silent, let outages, _, _) = notices[1] else { Issue.record("\(notices[1])"); return }
        #expect(silent >= 0.2 && outages == 1)
        #expect(summary.audioFailure == nil)
        #expect(summary.deviceOutages == 1 && summary.secondsWithoutDevice == silent)

        // Nothing of the performance is missing from the recording; the device that came back played the rest.
        let offline = OfflineRenderer(engine: Fixtures.engine(), blockFrames: 256).renderAll(messages, totalFrames: Int(endFrame))
        let recording = try #require(summary.recording)
        #expect(recording.framesWritten == Int(endFrame))
        #expect(try AudioFileReader.read(path: back.path("take.wav")).samples == offline)
        // The device that came back got whole periods from some frame on: the rest of the performance, then silence.
        let captured = try back.capturedFloats()
        let period = 2 * 256
        let resumedAt = stride(from: 0, to: offline.count, by: period).filter { start in
            let rest = offline.count - start
            return captured.count >= rest && captured[0..<rest].elementsEqual(offline[start...])
        }
        #expect(resumedAt.count == 1 && (resumedAt.first ?? 0) > 0, "the capture matches the render's tail from \(resumedAt.count) places")
        if let start = resumedAt.first { #expect(captured[(offline.count - start)...].allSatisfy { $0 == 0 }) }
    }

    @Test("a device that never comes back: the take is still whole, and the failure is reported at the end")
    func deviceNeverBack() throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        let pcm = try PCMOutput(device: "capture", periodFrames: 256, periods: 3, configText: folder.configText)
        pcm.close()
        let recorder = try AudioRecorder(path: folder.path("take.wav"), format: .wav32Float, sampleRate: 48_000, channels: 2)
        let messages = [TimedMIDIMessage(frame: 100, message: .noteOn(channel: 0, note: 69, velocity: 100))]
        let player = ALSAPlayer(instrument: Instrument(engine: Fixtures.engine()), pcm: pcm, source: .performance(messages, endFrame: 24_000),
                                recorder: recorder, realtime: false) { request in
            throw ALSAError("cannot open PCM device", subject: request.device, code: -19)
        }
        player.reopenInterval = 0.05
        try player.start()
        while !player.isFinished { usleep(2_000); player.poll() }
        let summary = player.stop()
        #expect(summary.audioFailure.map { "\($0)" } == "cannot write to PCM device 'capture': it is closed")
        #expect(summary.deviceOutages == 1)
        #expect(summary.recording?.framesWritten == 24_000)
        let offline = OfflineRenderer(engine: Fixtures.engine(), blockFrames: 256).renderAll(messages, totalFrames: 24_000)
        #expect(try AudioFileReader.read(path: folder.path("take.wav")).samples == offline)
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
        let player = ALSAPlayer(instrument: Instrument(engine: Fixtures.engine()), pcm: pcm, source: .performance(messages, endFrame: endFrame), realtime: false)
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
