import Dispatch
import Foundation
import Testing
@testable import ToneShaperALSA

/// The render side of the test: a counter ramp, one sample value per sample, so the captured
/// file shows whether periods arrived whole and in order.
private final class RampRenderer: @unchecked Sendable {
    var next: Float = 0
    var periods = 0
    let wanted: Int
    let reached = DispatchSemaphore(value: 0)
    /// The scheduling policy and priority the first render ran under.
    var firstPolicy: Int32 = -1
    var firstPriority: Int32 = -1

    init(wanted: Int) { self.wanted = wanted }

    func render(_ buffer: UnsafeMutablePointer<Float>, _ frames: Int, channels: Int) {
        if periods == 0 {
            var param = sched_param()
            pthread_getschedparam(pthread_self(), &firstPolicy, &param)
            firstPriority = param.sched_priority
        }
        for i in 0..<(frames * channels) {
            buffer[i] = next
            next += 1
        }
        periods += 1
        if periods == wanted { reached.signal() }
        // The null PCM never blocks; keep this test from spinning a core while it is being stopped.
        if periods >= wanted { usleep(1000) }
    }
}

/// What the render callback was told about the device, period by period.
private final class DeviceLog: @unchecked Sendable {
    private let lock = NSLock()
    private var silent = 0
    private var playing = 0
    private var lastSilent = true

    func note(_ time: AudioThread.DeviceTime) {
        lock.lock(); defer { lock.unlock() }
        if time.hasDevice { if lastSilent { playing = 0 }; playing += 1 } else { silent += 1 }
        lastSilent = !time.hasDevice
    }

    /// Waits (up to a minute) until `count` periods were rendered without a device.
    func waitFor(silent count: Int) -> Bool { wait { $0.silent >= count } }
    /// Waits until `count` periods in a row were rendered with a device after an outage.
    func waitFor(playing count: Int) -> Bool { wait { !$0.lastSilent && $0.playing >= count } }

    private func wait(_ done: (DeviceLog) -> Bool) -> Bool {
        for _ in 0..<60_000 {
            lock.lock(); let ok = done(self); lock.unlock()
            if ok { return true }
            usleep(1000)
        }
        return false
    }
}

@Suite("Audio thread against a capture PCM")
struct AudioThreadTests {
    @Test("renders and writes whole periods, in order, until stopped")
    func wholePeriodsInOrder() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "capture", periodFrames: 64, configText: capture.configText)
        let renderer = RampRenderer(wanted: 40)
        let channels = pcm.channels
        let thread = AudioThread(pcm: pcm) { buffer, frames, _ in renderer.render(buffer, frames, channels: channels) }
        try thread.start()
        #expect(thread.isRunning)
        #expect(renderer.reached.wait(timeout: .now() + 60) == .success)
        if let warning = thread.realtimeWarning {
            #expect(warning.hasPrefix("toneshaper: running without real-time priority (SCHED_FIFO refused: "))
            #expect(renderer.firstPolicy == SCHED_OTHER)
        } else {
            // Granted: the very first period was already rendered under SCHED_FIFO.
            #expect(renderer.firstPolicy == SCHED_FIFO)
            #expect(renderer.firstPriority == min(AudioThread.defaultPriority, sched_get_priority_max(SCHED_FIFO)))
        }
        thread.stop()
        thread.stop()
        #expect(!thread.isRunning)
        #expect(thread.failure == nil)
        try pcm.drain()
        pcm.close()

        let stored = try capture.captured().floats()
        let periodSamples = pcm.periodFrames * channels
        #expect(renderer.periods >= 40)
        #expect(stored.count == renderer.periods * periodSamples)
        #expect(stored.count % periodSamples == 0)
        #expect(stored == (0..<stored.count).map(Float.init))
    }

    @Test("a device lost mid-play: the failure is kept, the loop plays on paced by the clock, and a device offered later gets the periods")
    func playsOnThroughALostDevice() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "capture", configText: capture.configText)
        pcm.close()   // every write now fails, as on an unplugged interface
        let log = DeviceLog()
        let thread = AudioThread(pcm: pcm, realtime: false) { buffer, frames, time in
            buffer.update(repeating: 0.25, count: frames * 2)
            log.note(time)
        }
        try thread.start()
        // Periods go on being rendered without a device (for the recording), marked as such.
        #expect(log.waitFor(silent: 20))
        #expect(thread.isRunning)
        #expect(thread.lostDevices == 1)
        #expect(thread.failure?.description == "cannot write to PCM device 'capture': it is closed")

        // A device that works, offered by the control side, is played to from the next period on.
        let second = try CaptureDevice()
        defer { second.remove() }
        let back = try PCMOutput(device: "capture", configText: second.configText)
        #expect(thread.offer(back))
        #expect(log.waitFor(playing: 20))
        #expect(thread.failure == nil)
        #expect(thread.lostDevices == 1)
        thread.stop()
        try back.drain()
        back.close()
        let stored = try second.captured().floats()
        #expect(stored.count >= 20 * 128 * 2)
        #expect(stored.allSatisfy { $0 == 0.25 })
    }

    @Test("without real-time priority asked, the thread runs at normal priority and warns nothing")
    func normalPriority() throws {
        let capture = try CaptureDevice()
        defer { capture.remove() }
        let pcm = try PCMOutput(device: "capture", configText: capture.configText)
        let renderer = RampRenderer(wanted: 3)
        let thread = AudioThread(pcm: pcm, realtime: false) { buffer, frames, _ in renderer.render(buffer, frames, channels: 2) }
        try thread.start()
        #expect(renderer.reached.wait(timeout: .now() + 60) == .success)
        thread.stop()
        #expect(thread.realtimeWarning == nil)
        #expect(renderer.firstPolicy == SCHED_OTHER)
    }

    @Test("the refusal message is one line naming the reason")
    func refusalText() {
        #expect(AudioThread.realtimeRefusal("Operation not permitted")
                == "toneshaper: running without real-time priority (SCHED_FIFO refused: Operation not permitted); expect glitches under load — see README")
    }
}
