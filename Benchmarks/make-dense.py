#!/usr/bin/env python3
"""Writes a dense Standard MIDI File for speed comparisons: 64 notes sounding at all times.

8 channels each hold an 8-note chord that changes every 2 s, for SECONDS seconds (default 30),
with echo/reverb send (CC 91) up and a slow pitch bend on every channel. Deterministic.
Usage: make-dense.py OUT.mid [SECONDS]
"""
import struct
import sys

TPQ = 480            # ticks per quarter; 120 bpm → 960 ticks per second


def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.insert(0, 0x80 | (n & 0x7F))
        n >>= 7
    return bytes(out)


def main():
    path = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    per_second = 2 * TPQ
    events = []  # (tick, order, bytes)
    channels = [0, 1, 2, 3, 4, 5, 6, 7]
    for c in channels:
        events.append((0, 0, bytes([0xC0 | c, 0])))
        events.append((0, 0, bytes([0xB0 | c, 91, 70])))
        events.append((0, 0, bytes([0xB0 | c, 7, 90])))
    for chord in range(seconds // 2):
        start = chord * 2 * per_second
        stop = start + 2 * per_second - 10
        for k, c in enumerate(channels):
            root = 36 + 5 * k + (chord % 4) * 2
            for j, interval in enumerate([0, 4, 7, 11, 12, 16, 19, 23]):
                note = min(120, root + interval)
                events.append((start, 2, bytes([0x90 | c, note, 70 + j])))
                events.append((stop, 1, bytes([0x80 | c, note, 64])))
        # a bend up and back on every channel, 32 steps each way
        for c in channels:
            for s in range(64):
                value = 8192 + int(2000 * (s if s < 32 else 63 - s) / 31)
                t = start + s * (2 * per_second // 64)
                events.append((t, 0, bytes([0xE0 | c, value & 0x7F, value >> 7])))
    events.sort(key=lambda e: (e[0], e[1]))
    track = bytearray(b"\x00\xFF\x51\x03\x07\xA1\x20")  # tempo 500000 µs per quarter
    last = 0
    for tick, _, data in events:
        track += vlq(tick - last) + data
        last = tick
    track += vlq(per_second) + b"\xFF\x2F\x00"
    with open(path, "wb") as f:
        f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, TPQ))
        f.write(b"MTrk" + struct.pack(">I", len(track)) + track)


if __name__ == "__main__":
    main()
