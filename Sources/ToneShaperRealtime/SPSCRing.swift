import Synchronization

/// A lock-free ring buffer for exactly one producer thread and one consumer thread.
///
/// It carries MIDI events into the audio thread and audio samples out of it, so neither side may
/// ever block or allocate: storage is allocated once at init, and every call either does its work
/// at once or reports that it could not (a short count, `false` or `nil`).
///
/// The indices count elements ever written/read and only grow (an `Int` does not overflow in the
/// lifetime of a program); the slot is `index & mask`. The producer publishes `writeIndex` with a
/// release store after copying, the consumer observes it with an acquire load before copying, and
/// symmetrically for `readIndex`, so a slot is never read before it is written nor overwritten
/// before it is read.
///
/// Calling producer methods from two threads at once (or consumer methods from two threads) is
/// a programming error that this type does not detect.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    /// Number of slots, a power of two.
    public let capacity: Int

    @usableFromInline let mask: Int
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    /// Total elements written; stored only by the producer.
    @usableFromInline let writeIndex = Atomic<Int>(0)
    /// Total elements read; stored only by the consumer.
    @usableFromInline let readIndex = Atomic<Int>(0)

    /// Creates a ring holding at least `capacity` elements, rounded up to a power of two so the
    /// slot of an index is a mask rather than a division. Read `capacity` back for the real size.
    public init(capacity requested: Int) {
        precondition(requested > 0, "SPSCRing capacity must be positive, got \(requested)")
        precondition(requested <= 1 << 40, "SPSCRing capacity \(requested) is unreasonably large")
        var size = 1
        while size < requested { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = UnsafeMutablePointer<Element>.allocate(capacity: size)
    }

    deinit {
        storage.deallocate()
    }

    // MARK: Either side (exact for the side that asks, a snapshot for the other)

    /// Elements the consumer can read now. Exact when called by the consumer.
    @inlinable public var availableToRead: Int {
        let read = readIndex.load(ordering: .acquiring)
        let written = writeIndex.load(ordering: .acquiring)
        return min(max(written - read, 0), capacity)
    }

    /// Free slots the producer can fill now. Exact when called by the producer.
    @inlinable public var availableToWrite: Int {
        capacity - availableToRead
    }

    // MARK: Producer

    /// Copies as many elements of `src` as fit, in order, and returns how many that was.
    @inlinable public func write(_ src: UnsafeBufferPointer<Element>) -> Int {
        guard let source = src.baseAddress, !src.isEmpty else { return 0 }
        let written = writeIndex.load(ordering: .relaxed)
        // Acquire: the consumer has finished reading every slot below `read`, so they may be reused.
        let read = readIndex.load(ordering: .acquiring)
        let count = min(src.count, capacity - (written - read))
        guard count > 0 else { return 0 }
        let start = written & mask
        let first = min(count, capacity - start)
        (storage + start).initialize(from: source, count: first)
        if first < count {
            storage.initialize(from: source + first, count: count - first)
        }
        // Release: the copies above become visible before the consumer can see the new index.
        writeIndex.store(written + count, ordering: .releasing)
        return count
    }

    /// Appends one element; returns `false` (and drops nothing already queued) when full.
    @inlinable public func push(_ element: Element) -> Bool {
        let written = writeIndex.load(ordering: .relaxed)
        let read = readIndex.load(ordering: .acquiring)
        guard written - read < capacity else { return false }
        (storage + (written & mask)).initialize(to: element)
        writeIndex.store(written + 1, ordering: .releasing)
        return true
    }

    // MARK: Consumer

    /// Moves up to `dst.count` elements, oldest first, into `dst`; returns how many.
    @inlinable public func read(into dst: UnsafeMutableBufferPointer<Element>) -> Int {
        guard let destination = dst.baseAddress, !dst.isEmpty else { return 0 }
        let read = readIndex.load(ordering: .relaxed)
        // Acquire: pairs with the producer's release, so the slots below `written` hold their data.
        let written = writeIndex.load(ordering: .acquiring)
        let count = min(dst.count, written - read)
        guard count > 0 else { return 0 }
        let start = read & mask
        let first = min(count, capacity - start)
        destination.initialize(from: storage + start, count: first)
        if first < count {
            (destination + first).initialize(from: storage, count: count - first)
        }
        // Release: our copies are complete before the producer may overwrite these slots.
        readIndex.store(read + count, ordering: .releasing)
        return count
    }

    /// Removes and returns the oldest element, or `nil` when empty.
    @inlinable public func pop() -> Element? {
        let read = readIndex.load(ordering: .relaxed)
        let written = writeIndex.load(ordering: .acquiring)
        guard written > read else { return nil }
        let element = storage[read & mask]
        readIndex.store(read + 1, ordering: .releasing)
        return element
    }
}
