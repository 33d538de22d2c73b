import Foundation
import Synchronization
import ToneShaperRealtime

/// The recorder's consumer side: moves samples from the ring to the file on its own thread.
///
/// Kept apart from `AudioRecorder` so the thread holds only what it needs, and a recorder that
/// is released without `finish()` can still be deinitialised (and stop the thread).
final class DiskDrain: @unchecked Sendable {
    /// How long the thread sleeps when the ring is empty: short next to the ring's seconds of
    /// headroom, long enough that an idle recorder costs nothing.
    static let idleSleep: TimeInterval = 0.005

    private let ring: SPSCRing<Float>
    private let writer: AudioFileWriter
    private let chunk: UnsafeMutableBufferPointer<Float>
    private let stopRequested = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    /// Set on the disk thread only; read by `join()`'s caller after the thread has exited.
    private var failure: (any Error)?
    /// Frames the file's header last accounted for (disk thread only).
    private var headerFrames = 0

    init(ring: SPSCRing<Float>, writer: AudioFileWriter, chunkFrames: Int = 4096) {
        self.ring = ring
        self.writer = writer
        // A whole number of frames, so every read from the ring ends on a frame boundary
        // (the producer only ever publishes whole frames).
        chunk = .allocate(capacity: chunkFrames * writer.channels)
    }

    deinit {
        chunk.deallocate()
    }

    func start(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Asks the thread to write what is still queued and exit, waits until it has, and returns
    /// the first write error it met. Call once.
    func stopAndJoin() -> (any Error)? {
        stopRequested.store(true, ordering: .releasing)
        exited.wait()
        return failure
    }

    private func run() {
        defer { exited.signal() }
        while true {
            // Read the flag before the ring: whatever the producer queued before `finish()`
            // is then guaranteed to be seen by the read below.
            let stopping = stopRequested.load(ordering: .acquiring)
            let count = ring.read(into: chunk)
            if count > 0 {
                do {
                    try writer.write(interleaved: UnsafeBufferPointer(rebasing: chunk[0..<count]))
                    // Once a second of audio, what is on disk is made readable as it stands (WAV's
                    // header, FLAC's length, Ogg's page: see updateHeader): a take cut off by SIGKILL
                    // or a crash still reads back, less at most a second.
                    if writer.framesWritten - headerFrames >= writer.sampleRate {
                        headerFrames = writer.framesWritten
                        writer.updateHeader()
                    }
                } catch {
                    // Stop writing: the file is broken. The ring then fills and the audio side
                    // counts drops; `finish()` reports this error.
                    failure = error
                    return
                }
            } else if stopping {
                return
            } else {
                Thread.sleep(forTimeInterval: Self.idleSleep)
            }
        }
    }
}
