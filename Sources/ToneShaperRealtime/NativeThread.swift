import CThreadPlacement

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pthread running one closure: how the audio and MIDI threads, the render crew's helpers and
/// the band-limited tables' builder are started.
///
/// A pthread rather than Foundation's Thread, because a real-time thread must be created already
/// under SCHED_FIFO (so no sample is rendered at normal priority), and Thread takes a millisecond
/// or more to start.
public struct NativeThread: Sendable {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// The thread, for `join` or `detach` (exactly one of them, once).
    public let handle: pthread_t

    private init(handle: pthread_t) { self.handle = handle }

    /// Starts `body` on a new thread, under SCHED_FIFO at `realtimePriority` (clamped to the
    /// system's range) when one is given. Returns the thread, or the errno pthread_create gave
    /// (EPERM when real-time scheduling is not allowed).
    ///
    /// `onAnotherCPU`: start on a CPU other than the caller's, then let the thread run on any. Left
    /// to the kernel, a new thread shares its creator's CPU until the load balancer moves it (up to
    /// 40 ms seen on a small VM), so work handed to it at once waits for the creator to yield.
    public static func spawn(realtimePriority: Int32? = nil, onAnotherCPU: Bool = false,
                             _ body: @escaping () -> Void) -> Result<NativeThread, Errno> {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let realtimePriority {
            var param = sched_param()
            param.sched_priority = min(max(realtimePriority, sched_get_priority_min(SCHED_FIFO)),
                                       sched_get_priority_max(SCHED_FIFO))
            let results = [
                pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED)),
                pthread_attr_setschedpolicy(&attributes, SCHED_FIFO),
                pthread_attr_setschedparam(&attributes, &param),
            ]
            if let failed = results.first(where: { $0 != 0 }) { return .failure(Errno(failed)) }
        }
        // Where it starts is a hint: when there is no other CPU, it starts wherever the kernel puts it.
        let elsewhere = onAnotherCPU && toneshaper_start_elsewhere(&attributes) == 1
        let context = Unmanaged.passRetained(Body(elsewhere ? { toneshaper_run_anywhere(); body() } : body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return .failure(Errno(result))
        }
        return .success(NativeThread(handle: thread))
    }

    /// Waits for the thread to end.
    public func join() {
        pthread_join(handle, nil)
    }

    /// Lets the thread end on its own, its resources freed then, for a thread nobody waits for.
    public func detach() {
        pthread_detach(handle)
    }

    /// A pthread error number, with its strerror text.
    public struct Errno: Error, Sendable {
        public let code: Int32
        public init(_ code: Int32) { self.code = code }
        public var text: String { String(cString: strerror(code)) }
    }
}
