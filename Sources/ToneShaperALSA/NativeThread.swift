#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A joinable pthread running one closure.
///
/// A pthread rather than Foundation's Thread, because we need to create it already under
/// SCHED_FIFO (so no sample is rendered at normal priority) and to join it when stopping.
struct NativeThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    let handle: pthread_t

    private init(handle: pthread_t) { self.handle = handle }

    /// Starts `body` on a new thread, under SCHED_FIFO at `realtimePriority` (clamped to the
    /// system's range) when one is given. Returns the thread, or the errno pthread_create gave
    /// (EPERM when real-time scheduling is not allowed).
    static func spawn(realtimePriority: Int32? = nil, _ body: @escaping () -> Void) -> Result<NativeThread, Errno> {
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
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
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

    func join() {
        pthread_join(handle, nil)
    }

    /// A pthread error number, with its strerror text.
    struct Errno: Error {
        let code: Int32
        init(_ code: Int32) { self.code = code }
        var text: String { String(cString: strerror(code)) }
    }
}
