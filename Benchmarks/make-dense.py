#!/usr/bin/env python3
"""Writes a dense Standard MIDI File for speed comparisons (Python 3 standard library only).

16 channels, each holding a 4-note chord (64 notes sounding at all times) that changes every
second, the channels staggered by 1/16 s so chord changes are spread out; echo send (CC 91) up,
a pan spread (CC 10) and a slow pitch bend on every channel. Deterministic.

Usage: make-dense.py OUT.mid [SECONDS]   (default 30 s)
Note: in General MIDI, channel 10 is percussion, so FluidSynth plays drum sounds there.
"""
import struct
import sys

TPQ = 480                 # ticks per quarter note
TEMPO_US = 500_000        # 120 bpm: 960 ticks per second
TICKS_PER_SECOND = TPQ * 1_000_000 // TEMPO_US


def vlq(n):
    """MIDI variable-length quantity."""
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.insert(0, 0x80 | (n & 0x7F))
        n >>= 7
    return bytes(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    chords = [[0, 4, 7, 11], [2, 5, 9, 12], [-1, 2, 7, 14], [0, 3, 7, 10]]
    events = []  # (tick, priority, bytes): note-offs (0) before controllers (1) before note-ons (2)
    for c in range(16):
        events.append((0, 1, bytes([0xC0 | c, 0])))            # program 0 (GM piano)
        events.append((0, 1, bytes([0xB0 | c, 91, 64])))       # echo / reverb send
        events.append((0, 1, bytes([0xB0 | c, 10, c * 8])))    # pan spread
        base = 36 + (c % 8) * 6
        stagger = c * TICKS_PER_SECOND // 16
        previous = []
        for bar in range(seconds):
            t = bar * TICKS_PER_SECOND + stagger
            for n in previous:
                events.append((t, 0, bytes([0x80 | c, n, 64])))
            chord = [base + i for i in chords[(bar + c) % len(chords)]]
            for j, n in enumerate(chord):
                events.append((t, 2, bytes([0x90 | c, n, 80 + 4 * j])))
            bend = 8192 + (bar % 3) * 700                       # a step of bend mid-bar
            events.append((t + TICKS_PER_SECOND // 2, 1, bytes([0xE0 | c, bend & 0x7F, bend >> 7])))
            previous = chord
        for n in previous:
            events.append((seconds * TICKS_PER_SECOND, 0, bytes([0x80 | c, n, 64])))
    events.sort(key=lambda e: (e[0], e[1]))
    track = bytearray(b"\x00\xFF\x51\x03" + TEMPO_US.to_bytes(3, "big"))
    last = 0
    for tick, _, data in events:
        track += vlq(tick - last) + data
        last = tick
    track += b"\x00\xFF\x2F\x00"
    with open(path, "wb") as f:
        f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, TPQ))
        f.write(b"MTrk" + struct.pack(">I", len(track)) + track)


if __name__ == "__main__":
    main()
