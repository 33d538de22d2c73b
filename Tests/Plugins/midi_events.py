#!/usr/bin/env python3
"""Prints a Standard MIDI File's channel messages as 'FRAME STATUS DATA1 DATA2' lines, at the
frames `toneshaper render` places them (ToneShaperMIDI's MIDIFile.timedMessages: one tempo map
for format 0/1, tracks merged by tick then track order, seconds to the nearest frame, halves away
from zero), so the plugin test host can send the same events at the same frames.
Usage: midi_events.py FILE.mid RATE"""
import math
import sys


def vlq(data, i):
    value = 0
    while True:
        byte = data[i]
        i += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, i


def tracks_of(data):
    if data[:4] != b"MThd":
        sys.exit("midi_events.py: not a Standard MIDI File")
    length = int.from_bytes(data[4:8], "big")
    fmt, count, division = (int.from_bytes(data[8 + 2 * k:10 + 2 * k], "big") for k in range(3))
    if fmt == 2 or division & 0x8000:
        sys.exit("midi_events.py: format 2 and SMPTE time are not needed by the test")
    i = 8 + length
    tracks = []
    for _ in range(count):
        assert data[i:i + 4] == b"MTrk"
        size = int.from_bytes(data[i + 4:i + 8], "big")
        body, i = data[i + 8:i + 8 + size], i + 8 + size
        events, tick, j, status = [], 0, 0, 0
        while j < len(body):
            delta, j = vlq(body, j)
            tick += delta
            if body[j] & 0x80:
                status = body[j]
                j += 1
            if status == 0xFF:
                kind = body[j]
                size, j = vlq(body, j + 1)
                if kind == 0x51:
                    events.append((tick, "tempo", int.from_bytes(body[j:j + size], "big")))
                j += size
                if kind == 0x2F:
                    break
            elif status in (0xF0, 0xF7):
                size, j = vlq(body, j)
                j += size
            else:
                n = 1 if status & 0xF0 in (0xC0, 0xD0) else 2
                data_bytes = list(body[j:j + n]) + [0] * (2 - n)
                j += n
                events.append((tick, "msg", [status] + data_bytes))
        tracks.append(events)
    return division, tracks


def main():
    data = open(sys.argv[1], "rb").read()
    rate = float(sys.argv[2])
    division, tracks = tracks_of(data)
    denominator = float(division) * 1_000_000
    tempos = sorted(((t, k, v) for tr in tracks for k, (t, kind, v) in enumerate(tr) if kind == "tempo"),
                    key=lambda e: e[0])
    segments = [(0, 0.0, 500_000.0)]
    for tick, _, tempo in tempos:
        if tempo <= 0:
            continue
        last = segments[-1]
        start = (tick, last[1] + float(tick - last[0]) * last[2] / denominator, float(tempo))
        if last[0] == tick:
            segments[-1] = start
        else:
            segments.append(start)

    def frame(tick):
        seg = [s for s in segments if s[0] <= tick][-1]
        x = (seg[1] + float(tick - seg[0]) * seg[2] / denominator) * rate
        r = math.floor(x)
        return r + 1 if x - r >= 0.5 else r

    merged = sorted(((t, n, k, v) for n, tr in enumerate(tracks) for k, (t, kind, v) in enumerate(tr) if kind == "msg"),
                    key=lambda e: (e[0], e[1], e[2]))
    for tick, _, _, message in merged:
        print(frame(tick), *message)


main()
