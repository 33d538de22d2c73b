#!/usr/bin/env python3
"""Writes the Standard MIDI Files the VM test plays (Tests/VM/README.md), into the folder given.

Plain Python, no randomness. Every file is format 0 at 1000 ticks per quarter note and 500000 µs
per quarter note, so one tick is exactly 0.5 ms and every time below is an exact number of ticks.

  song.mid    12 notes on two channels (1: chiptune-arp, 2: fourier-brass at the test's --presets),
              onsets at irregular times (so they fall at every phase of a period), each note
              released before the next starts, so each onset follows silence.

Every note time is a whole millisecond: aplaymidi's queue runs on the sequencer's default 1 kHz
timer, which dispatches an event at the first millisecond tick at or after its time, so a time
between ticks (e.g. 0.5 ms) would arrive up to 0.5 ms late — the sender's jitter, not the
instrument's.
  jitter.mid  100 short notes (4 ms) of the probe tone at exact 10 ms intervals.
  jitter2.mid the same as two identical tracks (format 1), for two ports at once.

Also writes NAME.onsets and NAME.offsets: the note-on and note-off times in seconds, one a line,
in the same (time) order, for the checker.
"""
import os
import sys

DIVISION = 1000
TEMPO = 500_000
TICK = TEMPO / DIVISION / 1e6      # 0.0005 s


def vlq(value):
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.insert(0, (value & 0x7F) | 0x80)
        value >>= 7
    return bytes(out)


def track(events, port=None):
    """events: (seconds, kind, bytes); sorted by time, note-offs (kind 0) first at equal times.
    `port`: a "MIDI Port" meta event (FF 21), which aplaymidi -p A,B uses to pick A or B."""
    body = bytearray()
    if port is not None:
        body += b"\x00\xff\x21\x01" + bytes([port])
    body += b"\x00\xff\x51\x03" + TEMPO.to_bytes(3, "big")
    last = 0
    for seconds, kind, data in sorted(events, key=lambda e: (e[0], e[1])):
        tick = round(seconds / TICK)
        assert abs(tick * TICK - seconds) < 1e-9, f"{seconds} s is not a whole tick"
        body += vlq(tick - last) + bytes(data)
        last = tick
    body += b"\x00\xff\x2f\x00"
    return b"MTrk" + len(body).to_bytes(4, "big") + bytes(body)


def smf(events, copies=1):
    """A format 0 file, or with copies > 1 a format 1 file of identical tracks on MIDI ports 0, 1, …:
    `aplaymidi -p A,B` sends track 1 to A and track 2 to B, so two clients get the same events."""
    fmt = 0 if copies == 1 else 1
    header = b"MThd" + (6).to_bytes(4, "big") + fmt.to_bytes(2, "big") + copies.to_bytes(2, "big") + DIVISION.to_bytes(2, "big")
    if copies == 1:
        return header + track(events)
    return header + b"".join(track(events, port=i) for i in range(copies))


def note(events, start, length, key, velocity=100, channel=0):
    events.append((start, 1, [0x90 | channel, key, velocity]))
    events.append((start + length, 0, [0x80 | channel, key, 0]))


def song():
    events = []
    t = 0.3
    keys = [60, 64, 67, 72, 55, 62, 69, 65, 57, 71, 59, 76]
    # Gaps of 0.371 s + k·0.013 s: onsets drift through every phase of any period of a few ms.
    for i, key in enumerate(keys):
        note(events, round(t, 3), 0.12, key, velocity=70 + 4 * i, channel=i % 2)
        t += 0.371 + 0.013 * (i % 5)
    return events


def jitter():
    events = []
    for i in range(100):
        note(events, round(0.2 + 0.01 * i, 4), 0.004, 81, velocity=100)
    return events


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "jitter2.mid"), "wb") as f:
        f.write(smf(jitter(), copies=2))
    for name, events in (("song", song()), ("jitter", jitter())):
        with open(os.path.join(folder, name + ".mid"), "wb") as f:
            f.write(smf(events))
        for suffix, wanted in ((".onsets", 1), (".offsets", 0)):
            with open(os.path.join(folder, name + suffix), "w") as f:
                for seconds, kind, data in sorted(events):
                    if kind == wanted:
                        f.write(f"{seconds:.4f}\n")


if __name__ == "__main__":
    main()
