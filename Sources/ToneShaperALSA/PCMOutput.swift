import CALSA
import Synchronization
import ToneShaperRealtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if !_endian(little)
#error("ToneShaperALSA writes little-endian sample formats and assumes a little-endian host")
#endif

/// The sample formats PCMOutput can write; all little-endian, like the host.
public enum SampleFormat: String, CaseIterable, Sendable {
    /// 32-bit float: the engine's own format, written untouched.
    case float32LE = "FLOAT_LE"
    /// 32-bit signed integer, full scale 2147483647.
    case s32LE = "S32_LE"
    /// 16-bit signed integer, full scale 32767.
    case s16LE = "S16_LE"

    /// Best first: float keeps the engine's samples exactly; S32 then S16 are what most cards take.
    public static let preferenceOrder: [SampleFormat] = [.float32LE, .s32LE, .s16LE]

    public var bytesPerSample: Int {
        switch self {
        case .float32LE, .s32LE: return 4
        case .s16LE: return 2
        }
    }

    var alsaFormat: snd_pcm_format_t {
        switch self {
        case .float32LE: return SND_PCM_FORMAT_FLOAT_LE
        case .s32LE: return SND_PCM_FORMAT_S32_LE
        case .s16LE: return SND_PCM_FORMAT_S16_LE
        }
    }

    /// The integer sample for a float sample, as PCMOutput writes it: clip to [-1, 1]
    /// (NaN becomes 0), scale by 32767, round to nearest with ties away from zero.
    @inline(__always)
    public static func s16Sample(_ x: Float) -> Int16 {
        Int16((clip(x) * 32767).rounded())
    }

    /// The integer sample for a float sample, as PCMOutput writes it: clip to [-1, 1]
    /// (NaN becomes 0), scale by 2147483647 in Double (Float cannot hold it), round to nearest,
    /// ties away from zero.
    @inline(__always)
    public static func s32Sample(_ x: Float) -> Int32 {
        Int32((Double(clip(x)) * 2147483647.0).rounded())
    }

    @inline(__always)
    static func clip(_ x: Float) -> Float {
        if x > 1 { return 1 }
        if x >= -1 { return x }
        return x.isNaN ? 0 : -1
    }
}

/// Interleaved playback to an ALSA PCM device, in the best sample format the device accepts.
///
/// Opened in blocking mode: `write` returns when ALSA has taken every frame, which is what paces
/// the audio thread. Not thread-safe: after setup, only the audio thread calls `write`.
public final class PCMOutput {
    /// Everything the device was opened with, so it can be opened again the same way after it was lost.
    public struct Request: Sendable {
        public var device: String
        public var sampleRate: Int
        public var channels: Int
        public var periodFrames: Int
        public var periods: Int
        /// True when the user left buffering to us: `periodFrames × periods` is only where to start;
        /// the device gets at least 3 periods and 8 ms of buffer, in sizes it accepts.
        public var negotiate: Bool
        public var configText: String?
        public var formats: [SampleFormat]

        public init(device: String = "default", sampleRate: Int = 48000, channels: Int = 2, periodFrames: Int = 128,
                    periods: Int = 3, negotiate: Bool = false, configText: String? = nil,
                    formats: [SampleFormat] = SampleFormat.preferenceOrder) {
            self.device = device; self.sampleRate = sampleRate; self.channels = channels
            self.periodFrames = periodFrames; self.periods = periods; self.negotiate = negotiate
            self.configText = configText; self.formats = formats
        }
    }

    /// The smallest buffer a negotiated setup accepts: shorter ones are where drivers time out.
    public static let minimumNegotiatedBufferSeconds = 0.008
    public static let minimumNegotiatedPeriods = 3

    public let request: Request
    public let device: String
    public let channels: Int
    /// The rate the device agreed to (may differ from the one asked for).
    public let sampleRate: Int
    /// Frames per period, as negotiated.
    public let periodFrames: Int
    /// Frames in the whole ring buffer, as negotiated.
    public let bufferFrames: Int
    public let format: SampleFormat

    /// Underruns (and suspends) recovered from since opening; safe to read from any thread.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }

    private var handle: OpaquePointer?
    /// The private configuration tree the PCM was opened from; kept until close.
    private var config: OpaquePointer?
    /// Conversion target for integer formats, `scratchFrames` frames, allocated once.
    private let scratch: UnsafeMutableRawPointer
    private let scratchFrames: Int
    private let frameBytes: Int
    private let xruns = Atomic<Int>(0)
    /// How long a write waits for room before the device counts as stalled: eight buffers, at least 200 ms.
    private let stallMilliseconds: Int32

    /// Opens `device` for playback and negotiates format, rate and buffering.
    ///
    /// - Parameter configText: alsa-lib configuration text merged over the global configuration
    ///   for this PCM only (e.g. a `file` PCM over `null`), so tests need no environment variables.
    /// - Parameter formats: the sample formats allowed, best first.
    public convenience init(device: String = "default", sampleRate: Int = 48000, channels: Int = 2,
                            periodFrames: Int = 128, periods: Int = 3, negotiate: Bool = false, configText: String? = nil,
                            formats: [SampleFormat] = SampleFormat.preferenceOrder) throws {
        try self.init(Request(device: device, sampleRate: sampleRate, channels: channels, periodFrames: periodFrames,
                              periods: periods, negotiate: negotiate, configText: configText, formats: formats))
    }

    /// Opens the device as `request` says.
    public init(_ request: Request) throws {
        let device = request.device, sampleRate = request.sampleRate, channels = request.channels
        let periodFrames = request.periodFrames, periods = request.periods, configText = request.configText
        precondition(sampleRate > 0 && channels > 0 && periodFrames > 0 && periods > 0,
                     "PCMOutput needs positive rate, channels, period size and period count")
        self.request = request
        self.device = device
        self.channels = channels
        ALSAError.prepareLibrary()

        var config: OpaquePointer?
        if let configText {
            config = try Self.makeConfig(configText, device: device)
        }
        var pcm: OpaquePointer?
        let openResult: Int32
        if let config {
            openResult = snd_pcm_open_lconf(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0, config)
        } else {
            openResult = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0)
        }
        guard openResult == 0, let pcm else {
            if let config { snd_config_delete(config) }
            throw Self.openFailure(device: device, code: openResult, detail: ALSAError.lastLibraryMessage())
        }

        do {
            let setup = try Self.configure(pcm, device: device, sampleRate: sampleRate, channels: channels,
                                           periodFrames: periodFrames, periods: periods, negotiate: request.negotiate,
                                           formats: request.formats)
            self.sampleRate = setup.rate
            self.periodFrames = setup.period
            self.bufferFrames = setup.buffer
            self.format = setup.format
        } catch {
            snd_pcm_close(pcm)
            if let config { snd_config_delete(config) }
            throw error
        }
        self.handle = pcm
        self.config = config
        self.frameBytes = channels * format.bytesPerSample
        self.stallMilliseconds = Int32(max(200, 8 * bufferFrames * 1000 / max(1, sampleRate)))
        self.scratchFrames = max(bufferFrames, periodFrames)
        self.scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchFrames * channels * 4, alignment: 16)
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// Frames still to be played before the next frame written, and the monotonic time at which
    /// that was so (snd_pcm_htimestamp: the driver's last pointer update and its timestamp, read
    /// without a system call on most drivers). Real-time safe; nil when the device cannot say.
    public func playbackPosition() -> (delay: Int, nanoseconds: Int64)? {
        guard let pcm = handle else { return nil }
        var available: snd_pcm_uframes_t = 0
        var stamp = snd_htimestamp_t()
        guard snd_pcm_htimestamp(pcm, &available, &stamp) >= 0 else { return nil }
        let now = MonotonicClock.nanoseconds()
        var nanoseconds = Int64(stamp.tv_sec) &* 1_000_000_000 &+ Int64(stamp.tv_nsec)
        // A plugin that keeps no timestamps (or another clock) reports 0 or a time far off: the
        // moment we asked is then the best we know.
        if nanoseconds <= 0 || abs(now - nanoseconds) > 1_000_000_000 { nanoseconds = now }
        let delay = bufferFrames - min(Int(clamping: available), bufferFrames)
        return (delay, nanoseconds)
    }

    /// Writes `frames` interleaved frames (`frames * channels` floats), blocking until ALSA took them.
    ///
    /// Real-time safe: converts into the preallocated buffer, recovers underruns in place
    /// (counted in `xrunCount`) and allocates nothing unless it throws.
    public func write(_ interleaved: UnsafePointer<Float>, frames: Int) throws(ALSAError) {
        guard let pcm = handle else { throw ALSAError("cannot write to PCM device", subject: device, reason: "it is closed") }
        var done = 0
        while done < frames {
            let chunk = min(frames - done, scratchFrames)
            let source = interleaved + done * channels
            let samples = chunk * channels
            let data: UnsafeRawPointer
            switch format {
            case .float32LE:
                data = UnsafeRawPointer(source)
            case .s32LE:
                let out = scratch.assumingMemoryBound(to: Int32.self)
                for i in 0..<samples { out[i] = SampleFormat.s32Sample(source[i]) }
                data = UnsafeRawPointer(scratch)
            case .s16LE:
                let out = scratch.assumingMemoryBound(to: Int16.self)
                for i in 0..<samples { out[i] = SampleFormat.s16Sample(source[i]) }
                data = UnsafeRawPointer(scratch)
            }
            try writeAll(pcm, data, frames: chunk)
            done += chunk
        }
    }

    /// snd_pcm_writei until every frame is taken: short writes continue, underruns/suspends/signals
    /// are recovered silently, anything else is a real failure.
    @inline(__always)
    private func writeAll(_ pcm: OpaquePointer, _ data: UnsafeRawPointer, frames: Int) throws(ALSAError) {
        var offset = 0
        while offset < frames {
            // A running device that stops taking samples would hold a blocking write until the
            // kernel's own timeout (a second or more); waiting here first notices it in
            // `stallMilliseconds`. Only while running and short of room: a stream not started yet
            // (filling toward its start threshold) never signals room, and must not be waited on.
            let wanted = frames - offset
            if snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING && snd_pcm_avail_update(pcm) < wanted
                && snd_pcm_wait(pcm, stallMilliseconds) == 0 {
                throw ALSAError("cannot write to PCM device", subject: device, code: -EIO,
                                reason: "it took no samples for \(stallMilliseconds) ms (Input/output error)")
            }
            let result = snd_pcm_writei(pcm, data + offset * frameBytes, snd_pcm_uframes_t(frames - offset))
            if result >= 0 {
                offset += result
                continue
            }
            let code = Int32(truncatingIfNeeded: result)
            guard code == -EPIPE || code == -ESTRPIPE || code == -EINTR else {
                throw ALSAError("cannot write to PCM device", subject: device, code: code)
            }
            if code != -EINTR { xruns.add(1, ordering: .relaxed) }
            let recovered = snd_pcm_recover(pcm, code, 1)
            if recovered < 0 {
                throw ALSAError("cannot recover PCM device", subject: device, code: recovered)
            }
        }
    }

    /// Plays what is still buffered, then stops the stream (blocking).
    public func drain() throws {
        guard let pcm = handle else { return }
        let result = snd_pcm_drain(pcm)
        if result < 0 {
            throw ALSAError("cannot drain PCM device", subject: device, code: result)
        }
    }

    /// Closes the device (dropping anything not yet played). Safe to call more than once.
    public func close() {
        if let pcm = handle {
            snd_pcm_close(pcm)
            handle = nil
        }
        if let config {
            snd_config_delete(config)
            self.config = nil
        }
    }

    // MARK: - Setup

    /// The error for a failed open; "busy" is common enough (PulseAudio, another synth) to say plainly.
    static func openFailure(device: String, code: Int32, detail: String?) -> ALSAError {
        ALSAError("cannot open PCM device", subject: device, code: code,
                  reason: code == -EBUSY ? "device is busy (used by another program?)" : nil, detail: detail)
    }

    /// The global configuration with `text` loaded over it: snd_pcm_open_lconf looks names up in
    /// this tree only, so `default`, `null` and friends must be in it too.
    private static func makeConfig(_ text: String, device: String) throws -> OpaquePointer {
        var global: OpaquePointer?
        let updated = snd_config_update_ref(&global)
        guard updated >= 0, let global else {
            throw ALSAError("cannot read the global ALSA configuration", code: updated, detail: ALSAError.lastLibraryMessage())
        }
        var tree: OpaquePointer?
        let copied = snd_config_copy(&tree, global)
        snd_config_unref(global)
        guard copied >= 0, let tree else {
            throw ALSAError("cannot copy the global ALSA configuration", code: copied)
        }
        var input: OpaquePointer?
        let loaded: Int32 = text.withCString { cText in
            let opened = snd_input_buffer_open(&input, cText, strlen(cText))
            guard opened >= 0, let input else { return opened }
            defer { snd_input_close(input) }
            return snd_config_load(tree, input)
        }
        guard loaded >= 0 else {
            snd_config_delete(tree)
            throw ALSAError("cannot parse the ALSA configuration given for PCM device", subject: device,
                            code: loaded, detail: ALSAError.lastLibraryMessage())
        }
        return tree
    }

    private struct Setup {
        var format: SampleFormat
        var rate: Int
        var period: Int
        var buffer: Int
    }

    private static func configure(_ pcm: OpaquePointer, device: String, sampleRate: Int, channels: Int,
                                  periodFrames: Int, periods: Int, negotiate: Bool, formats: [SampleFormat]) throws -> Setup {
        func check(_ result: Int32, _ attempt: String) throws {
            if result < 0 {
                throw ALSAError(attempt, subject: device, code: result, detail: ALSAError.lastLibraryMessage())
            }
        }

        var hwOptional: OpaquePointer?
        try check(snd_pcm_hw_params_malloc(&hwOptional), "cannot allocate hardware parameters for PCM device")
        guard let hw = hwOptional else { throw ALSAError("cannot allocate hardware parameters for PCM device", subject: device) }
        defer { snd_pcm_hw_params_free(hw) }

        try check(snd_pcm_hw_params_any(pcm, hw), "cannot read the hardware configurations of PCM device")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED),
                  "interleaved access is not supported by PCM device")

        guard let format = formats.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0.alsaFormat) == 0 }) else {
            throw ALSAError("unsupported sample format on PCM device", subject: device,
                            reason: "it accepts none of " + formats.map(\.rawValue).joined(separator: ", "))
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, format.alsaFormat), "cannot set sample format \(format.rawValue) on PCM device")
        try check(snd_pcm_hw_params_set_channels(pcm, hw, UInt32(channels)), "cannot use \(channels) channels on PCM device")

        var rate = UInt32(sampleRate)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir), "cannot set a sample rate near \(sampleRate) Hz on PCM device")

        if negotiate {
            // Floors, not wishes: at least 3 periods and 8 ms, so a driver whose clock ticks in
            // milliseconds (snd-aloop, some USB) gets a buffer it can keep full. Refusals are fine:
            // the device's own limits then stand.
            var minimumPeriods = UInt32(Self.minimumNegotiatedPeriods)
            dir = 0
            _ = snd_pcm_hw_params_set_periods_min(pcm, hw, &minimumPeriods, &dir)
            var minimumBuffer = UInt32(Self.minimumNegotiatedBufferSeconds * 1_000_000)
            dir = 0
            _ = snd_pcm_hw_params_set_buffer_time_min(pcm, hw, &minimumBuffer, &dir)
        }
        var period = snd_pcm_uframes_t(periodFrames)
        dir = 0
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir),
                  "cannot set a period size near \(periodFrames) frames on PCM device")

        var count = UInt32(periods)
        dir = 0
        if snd_pcm_hw_params_set_periods_near(pcm, hw, &count, &dir) < 0 {
            // Some devices only constrain the buffer size; ask for the same total instead.
            var buffer = snd_pcm_uframes_t(Int(period) * periods)
            try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer),
                      "cannot set \(periods) periods or a buffer near \(Int(period) * periods) frames on PCM device")
        }
        try check(snd_pcm_hw_params(pcm, hw), "cannot apply hardware parameters to PCM device")

        var actualPeriod: snd_pcm_uframes_t = 0
        var actualBuffer: snd_pcm_uframes_t = 0
        var actualRate: UInt32 = 0
        dir = 0
        try check(snd_pcm_hw_params_get_period_size(hw, &actualPeriod, &dir), "cannot read the period size of PCM device")
        try check(snd_pcm_hw_params_get_buffer_size(hw, &actualBuffer), "cannot read the buffer size of PCM device")
        dir = 0
        try check(snd_pcm_hw_params_get_rate(hw, &actualRate, &dir), "cannot read the sample rate of PCM device")

        var swOptional: OpaquePointer?
        try check(snd_pcm_sw_params_malloc(&swOptional), "cannot allocate software parameters for PCM device")
        guard let sw = swOptional else { throw ALSAError("cannot allocate software parameters for PCM device", subject: device) }
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), "cannot read the software parameters of PCM device")
        // Start once the buffer is full (fewest early underruns); wake the writer a period at a time.
        try check(snd_pcm_sw_params_set_start_threshold(pcm, sw, actualBuffer), "cannot set the start threshold of PCM device")
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, actualPeriod), "cannot set the wake-up size of PCM device")
        // Timestamps on the monotonic clock, which the MIDI thread stamps arrivals with (see DeviceClock).
        try check(snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE), "cannot turn on timestamps of PCM device")
        try check(snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC),
                  "cannot use the monotonic clock for timestamps of PCM device")
        try check(snd_pcm_sw_params(pcm, sw), "cannot apply software parameters to PCM device")

        return Setup(format: format, rate: Int(actualRate), period: Int(actualPeriod), buffer: Int(actualBuffer))
    }
}
