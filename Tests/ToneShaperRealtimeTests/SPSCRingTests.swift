import Foundation
import Testing
import ToneShaperRealtime

@Suite("SPSCRing")
struct SPSCRingTests {
    @Test("capacity is rounded up to a power of two and reported")
    func capacityRounding() {
        #expect(SPSCRing<Int>(capacity: 1).capacity == 1)
        #expect(SPSCRing<Int>(capacity: 5).capacity == 8)
        #expect(SPSCRing<Int>(capacity: 8).capacity == 8)
        #expect(SPSCRing<Float>(capacity: 1000).capacity == 1024)
    }

    @Test("single elements come out in the order they went in")
    func fifoOrder() {
        let ring = SPSCRing<Int>(capacity: 16)
        for value in [3, 1, 4, 1, 5, 9, 2, 6] { #expect(ring.push(value)) }
        var out: [Int] = []
        while let value = ring.pop() { out.append(value) }
        #expect(out == [3, 1, 4, 1, 5, 9, 2, 6])
        #expect(ring.pop() == nil)
    }

    @Test("push refuses when full and pop frees exactly one slot")
    func fullRing() {
        let ring = SPSCRing<UInt8>(capacity: 4)
        for value: UInt8 in 1...4 { #expect(ring.push(value)) }
        #expect(ring.availableToWrite == 0)
        #expect(ring.availableToRead == 4)
        #expect(!ring.push(5))
        #expect(ring.pop() == 1)
        #expect(ring.push(5))
        #expect(!ring.push(6))
        var out: [UInt8] = []
        while let value = ring.pop() { out.append(value) }
        #expect(out == [2, 3, 4, 5])
    }

    @Test("bulk write stores only what fits and returns that count")
    func partialWrite() {
        let ring = SPSCRing<Float>(capacity: 8)
        let input: [Float] = (0..<12).map(Float.init)
        let accepted = input.withUnsafeBufferPointer { ring.write($0) }
        #expect(accepted == 8)
        #expect(ring.availableToWrite == 0)
        var out = [Float](repeating: -1, count: 12)
        let got = out.withUnsafeMutableBufferPointer { ring.read(into: $0) }
        #expect(got == 8)
        #expect(Array(out[0..<8]) == Array(input[0..<8]))
        #expect(out[8] == -1, "read must not touch the destination beyond what it returns")
        #expect(ring.availableToRead == 0)
    }

    @Test("bulk reads and writes that straddle the end of storage keep order")
    func wraparound() {
        // Capacity 8, chunks of 5: every index 0...7 is crossed by some chunk boundary.
        let ring = SPSCRing<Int>(capacity: 8)
        var next = 0
        var expected = 0
        var chunk = [Int](repeating: 0, count: 5)
        for _ in 0..<200 {
            let source = (next..<next + 5).map { $0 }
            let written = source.withUnsafeBufferPointer { ring.write($0) }
            #expect(written == 5)
            next += written
            let read = chunk.withUnsafeMutableBufferPointer { ring.read(into: $0) }
            #expect(read == 5)
            #expect(chunk == Array(expected..<expected + 5))
            expected += read
        }
        // Mixed single and bulk on the far side of many wraps.
        #expect(ring.push(-1))
        #expect(ring.pop() == -1)
        #expect(ring.availableToRead == 0)
        #expect(ring.availableToWrite == 8)
    }

    @Test("empty reads and writes are no-ops")
    func emptyOperations() {
        let ring = SPSCRing<Int>(capacity: 4)
        #expect(ring.write(UnsafeBufferPointer(start: nil, count: 0)) == 0)
        #expect(ring.read(into: UnsafeMutableBufferPointer(start: nil, count: 0)) == 0)
        var out = [Int](repeating: 7, count: 3)
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 0)
        #expect(out == [7, 7, 7])
    }

    @Test("two threads: 2 million values arrive complete and in strict sequence")
    func twoThreadStress() {
        let count = 2_000_000
        // Small ring so producer and consumer constantly meet at both ends.
        let ring = SPSCRing<Int>(capacity: 256)
        let producerDone = DispatchSemaphore(value: 0)

        let producer = Thread {
            var value = 1
            var chunk = [Int](repeating: 0, count: 37)
            while value <= count {
                // Alternate single pushes and bulk writes so both producer paths are exercised.
                if value % 2 == 0 {
                    if ring.push(value) { value += 1 } else { sched_yield() }
                } else {
                    let n = min(chunk.count, count - value + 1)
                    for i in 0..<n { chunk[i] = value + i }
                    let written = chunk.withUnsafeBufferPointer {
                        ring.write(UnsafeBufferPointer(rebasing: $0[0..<n]))
                    }
                    if written == 0 { sched_yield() }
                    value += written
                }
            }
            producerDone.signal()
        }
        producer.start()

        var expected = 1
        var outOfOrder = 0
        var producerFinished = false
        var buffer = [Int](repeating: 0, count: 53)
        while expected <= count {
            var progressed = false
            if expected % 3 == 0 {
                if let value = ring.pop() {
                    if value != expected { outOfOrder += 1 }
                    expected += 1
                    progressed = true
                }
            } else {
                let n = buffer.withUnsafeMutableBufferPointer { ring.read(into: $0) }
                for i in 0..<n where buffer[i] != expected + i { outOfOrder += 1 }
                expected += n
                progressed = n > 0
            }
            if !progressed {
                // A lost value would leave us waiting forever: once the producer has finished
                // and the ring is still empty, stop and let the expectations below report it.
                if producerFinished { break }
                if producerDone.wait(timeout: .now()) == .success {
                    producerFinished = true
                } else {
                    sched_yield()
                }
            }
        }
        if !producerFinished { producerDone.wait() }

        #expect(outOfOrder == 0)
        #expect(expected == count + 1)
        #expect(ring.pop() == nil, "nothing beyond the last value may appear")
    }
}
