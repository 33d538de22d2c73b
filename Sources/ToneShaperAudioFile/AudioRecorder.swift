import Synchronization
import ToneShaperRealtime

/// Records what the audio thread renders to a file, without ever making the audio thread wait.
///
/// The audio thread calls `capture(_:)`, which only copies into a lock-free ring; a disk thread
/// drains the ring into an `AudioFileWriter`. If the disk falls behind by more than the ring
/// holds, the frames that do not fit are dropped and counted — a glitch in the recording is
/// better than one in the live sound, and the count makes it visible.
public final class AudioRecorder: @unchecked Sendable {
    public let path: String
    public let format: AudioFileFormat
    public let sampleRate: Int
    public let channels: Int

    private let ring: SPSCRing<Float>
    private let writer: AudioFileWriter
    private let drain: DiskDrain
    private let dropped = Atomic<Int>(0)
    /// Guards only `finish()`, which is never called from the audio thread.
    private let outcome = Mutex<Result<RecordingReport, any Error>?>(nil)

    /// Opens the file (errors surface here, before any audio runs) and starts the disk thread.
    /// `bufferSeconds` is how long the disk may stall before frames are dropped.
    public init(path: String, format: AudioFileFormat, sampleRate: Int, channels: Int,
                bufferSeconds: Double = 4) throws {
        guard bufferSeconds > 0, bufferSeconds.isFinite, bufferSeconds * Double(sampleRate) < 1e9 else {
            throw AudioFileError.invalidArgument(path: path, reason: "recorder buffer of \(bufferSeconds) s is not usable")
        }
        writer = try AudioFileWriter(path: path, format: format, sampleRate: sampleRate, channels: channels)
        self.path = path
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        let frames = max(1, Int((bufferSeconds * Double(sampleRate)).rounded(.up)))
        ring = SPSCRing(capacity: frames * channels)
        drain = DiskDrain(ring: ring, writer: writer)
        drain.start(name: "toneshaper-disk")
    }

    deinit {
        _ = try? finish()
    }

    // MARK: Audio thread

    /// Queues one buffer of interleaved frames. Real-time safe: no locks, no allocation, no
    /// system calls. Frames beyond the free space are dropped and counted (whole frames only).
    public func capture(_ interleaved: UnsafeBufferPointer<Float>) {
        precondition(interleaved.count % channels == 0, "capture needs whole \(channels)-channel frames")
        let frames = interleaved.count / channels
        guard frames > 0 else { return }
        let fitting = min(frames, ring.availableToWrite / channels)
        if fitting > 0 {
            let written = ring.write(UnsafeBufferPointer(rebasing: interleaved[0..<(fitting * channels)]))
            // Only this thread writes, so the space measured above cannot shrink.
            assert(written == fitting * channels)
        }
        if fitting < frames {
            dropped.wrappingAdd(frames - fitting, ordering: .relaxed)
        }
    }

    /// Frames `capture` can take right now without dropping (a fill gauge for the UI).
    public var writableFrames: Int { ring.availableToWrite / channels }

    /// Frames dropped so far.
    public var framesDropped: Int { dropped.load(ordering: .relaxed) }

    // MARK: Control thread

    /// Writes everything still queued, stops the disk thread and closes the file. Call after
    /// the audio thread has stopped capturing. Later calls return the same report (or error).
    /// Throws the first libsndfile error the disk thread met, or the one from closing.
    public func finish() throws -> RecordingReport {
        let result = outcome.withLock { state -> Result<RecordingReport, any Error> in
            if let state { return state }
            let diskError = drain.stopAndJoin()
            let result: Result<RecordingReport, any Error>
            do {
                try writer.close()
                if let diskError { throw diskError }
                result = .success(RecordingReport(
                    path: path, framesWritten: writer.framesWritten, framesDropped: framesDropped))
            } catch {
                result = .failure(diskError ?? error)
            }
            state = result
            return result
        }
        return try result.get()
    }
}
