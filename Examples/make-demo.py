#!/usr/bin/env python3
"""Writes Examples/demo.mid: a 24-second demonstration performance for ToneShaper.

Plain Python 3, no dependencies, no randomness: running it again writes the same bytes.
Format 1, 480 ticks per quarter note, 120 bpm, 12 bars of 4/4 (2 s per bar):

  track 0  conductor: name, tempo, time signature, one marker per section
  track 1  channel 0, program 0: the lead (transposed phrase, fidelity sweep, pitch bend)
  track 2  channel 1, program 2: chords (3 to 6 notes, shape-duration sweep, sustain pedal)
  track 3  channel 2, program 8: bass (amplitude sweep)

Knobs follow the default controller mapping: CC 70 amplitude, CC 71 shape duration,
CC 74 fidelity, CC 7 volume, CC 64 sustain pedal. See Examples/README.md for the bar-by-bar plan.
"""

import math
import os
import struct

TPQ = 480                  # ticks per quarter note
QUARTER = TPQ
EIGHTH = TPQ // 2
SIXTEENTH = TPQ // 4
THIRTY_SECOND = TPQ // 8   # the step of every controller sweep
SIXTY_FOURTH = TPQ // 16   # the step of the pitch bend
BAR = 4 * QUARTER
TEMPO = 500_000            # microseconds per quarter note: 120 bpm
END = 12 * BAR             # 24 s; the renderer adds its own release tail

# The phrase that is transposed: semitones above its root, one per note.
PHRASE = [0, 4, 7, 11, 12, 7, 4, 2]

# At one tick, note-offs go first (a re-struck key is released before it sounds again),
# then controllers/programs/bends, then note-ons.
OFF, CONTROL, ON = 0, 1, 2


def bar(n, beat=0):
    """Tick of 1-based bar `n`, plus `beat` quarter notes."""
    return (n - 1) * BAR + int(beat * QUARTER)


def vlq(value):
    """MIDI variable-length quantity: 7 bits per byte, most significant first."""
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.insert(0, (value & 0x7F) | 0x80)
        value >>= 7
    return bytes(out)


class Track:
    """Events of one track as (tick, priority, sequence, bytes); rendered with delta times."""

    def __init__(self, name, channel=None):
        self.channel = channel
        self.events = []
        self.meta(0, 0x03, name.encode("ascii"))

    def _add(self, tick, priority, data):
        self.events.append((tick, priority, len(self.events), bytes(data)))

    def meta(self, tick, kind, data):
        self._add(tick, CONTROL, [0xFF, kind] + list(vlq(len(data))) + list(data))

    def note(self, tick, key, length, velocity):
        self._add(tick, ON, [0x90 | self.channel, key, velocity])
        self._add(tick + length, OFF, [0x80 | self.channel, key, 64])

    def chord(self, tick, keys, length, velocity):
        for key in keys:
            self.note(tick, key, length, velocity)

    def cc(self, tick, controller, value):
        self._add(tick, CONTROL, [0xB0 | self.channel, controller, value])

    def program(self, tick, number):
        self._add(tick, CONTROL, [0xC0 | self.channel, number])

    def bend(self, tick, value):
        """value in -8192..8191, 0 is centre."""
        raw = value + 8192
        self._add(tick, CONTROL, [0xE0 | self.channel, raw & 0x7F, raw >> 7])

    def sweep(self, controller, start_tick, end_tick, start_value, end_value, step=THIRTY_SECOND):
        """A straight controller ramp, one CC every `step` ticks, both ends included."""
        steps = (end_tick - start_tick) // step
        for i in range(steps + 1):
            value = start_value + (end_value - start_value) * i / steps
            self.cc(start_tick + i * step, controller, int(round(value)))

    def phrase(self, tick, root, note_length, velocity, gap=20):
        """PHRASE on `root`, one note every `note_length` ticks, the first one accented."""
        for i, interval in enumerate(PHRASE):
            accent = 16 if i % 4 == 0 else 0
            self.note(tick + i * note_length, root + interval, note_length - gap, min(127, velocity + accent))

    def chunk(self):
        """The MTrk chunk, with running status for consecutive channel events of one status."""
        body = bytearray()
        previous_tick, running = 0, None
        for tick, _, _, data in sorted(self.events):
            body += vlq(tick - previous_tick)
            previous_tick = tick
            status = data[0]
            if status < 0xF0 and status == running:
                body += data[1:]
            else:
                body += data
            running = status if status < 0xF0 else None  # meta and sysex cancel running status
        body += vlq(END - previous_tick) + bytes([0xFF, 0x2F, 0x00])
        return b"MTrk" + struct.pack(">I", len(body)) + bytes(body)


def conductor():
    track = Track("ToneShaper demo")
    track.meta(0, 0x51, TEMPO.to_bytes(3, "big"))
    track.meta(0, 0x58, bytes([4, 2, 24, 8]))  # 4/4
    for n, text in [(1, "A: one phrase, four transpositions"), (3, "A': fidelity sweep"),
                    (5, "B: chords of 3 to 6 notes, shape duration sweep"),
                    (7, "C: pitch bend, amplitude swell"), (9, "D: sustain pedal"),
                    (11, "E: volume crescendo and fade")]:
        track.meta(bar(n), 0x06, text.encode("ascii"))
    return track


def lead():
    """Channel 0, program 0."""
    t = Track("Lead", channel=0)
    t.program(0, 0)
    t.cc(0, 7, 100)
    t.cc(0, 74, 127)
    # Bars 1-4: the phrase in eighths on C4, F4, C3 and C5: two keys, three octaves.
    for n, root in [(1, 60), (2, 65), (3, 48), (4, 72)]:
        t.phrase(bar(n), root, EIGHTH, 88)
    # Bars 3-4: fidelity dives to a coarse shape and climbs back.
    t.sweep(74, bar(3), bar(4) - THIRTY_SECOND, 127, 8)
    t.sweep(74, bar(4), bar(5) - THIRTY_SECOND, 8, 127)
    # Bars 5-6: a slow counter-melody over the chords.
    for i, key in enumerate([76, 74, 72, 71, 69, 72, 74, 71]):
        t.note(bar(5, i), key, QUARTER - 30, 80)
    # Bars 7-8: one held E5 bent to the top of the bend range and back, in 1/64-note steps.
    t.note(bar(7), 76, 2 * BAR - 60, 90)
    steps = (2 * QUARTER) // SIXTY_FOURTH
    for i in range(steps + 1):  # up over beats 3-4 of bar 7
        t.bend(bar(7, 2) + i * SIXTY_FOURTH, int(round(8191 * (1 - cos_half(i / steps)))))
    for i in range(steps + 1):  # back down over beats 3-4 of bar 8
        t.bend(bar(8, 2) + i * SIXTY_FOURTH, int(round(8191 * cos_half(i / steps))))
    # Bars 9-10: the phrase in sixteenths, half a bar each, on C4, D4, E4, G4.
    for half, root in enumerate([60, 62, 64, 67]):
        t.phrase(bar(9, 2 * half), root, SIXTEENTH, 84, gap=10)
    # Bar 11: the phrase on C5 again; bar 12: a final C major triad on top, held.
    t.phrase(bar(11), 72, EIGHTH, 92)
    t.chord(bar(12), [72, 76, 79], BAR, 96)
    volume_arc(t, 100)
    return t


def chords():
    """Channel 1, program 2."""
    t = Track("Chords", channel=1)
    t.program(0, 2)
    t.cc(0, 7, 90)
    t.cc(0, 71, 64)
    t.cc(0, 64, 0)
    # Bars 5-6: half-note chords growing from 3 to 6 notes: C, Am7, Fmaj9, G13.
    for beat, keys in enumerate([[48, 52, 55], [45, 48, 52, 55], [41, 45, 48, 52, 55], [43, 50, 53, 57, 60, 64]]):
        t.chord(bar(5, 2 * beat), keys, 2 * QUARTER - 40, 76)
    # ...while the shape duration knob sweeps up and back down.
    t.sweep(71, bar(5), bar(6) - THIRTY_SECOND, 64, 127)
    t.sweep(71, bar(6), bar(7) - THIRTY_SECOND, 127, 64)
    # Bars 7-8: Am and Fmaj7 under the bend.
    t.chord(bar(7), [45, 48, 52, 57], BAR - 40, 70)
    t.chord(bar(8), [41, 45, 48, 52], BAR - 40, 70)
    # Bars 9-10: pedal down, a rising arpeggio whose short notes ring on (up to 8 at once);
    # the pedal is lifted and pressed again between the bars to clear the harmony.
    t.cc(bar(9), 64, 127)
    for i, key in enumerate([48, 55, 60, 64, 67, 72, 76, 79]):
        t.note(bar(9, i / 2), key, EIGHTH - 20, 72 + 4 * i)
    t.cc(bar(10), 64, 0)
    t.cc(bar(10) + THIRTY_SECOND, 64, 127)
    for i, key in enumerate([43, 50, 55, 59, 62, 67, 71, 74]):
        t.note(bar(10, i / 2), key, EIGHTH - 20, 72 + 4 * i)
    t.cc(bar(11), 64, 0)
    # Bars 11-12: Fmaj9, G, then C add 9 over six notes, held to the end.
    t.chord(bar(11), [41, 48, 52, 55, 57], 2 * QUARTER - 40, 84)
    t.chord(bar(11, 2), [43, 50, 55, 59, 62], 2 * QUARTER - 40, 88)
    t.chord(bar(12), [48, 55, 60, 62, 64, 67], BAR, 92)
    volume_arc(t, 90)
    return t


def bass():
    """Channel 2, program 8."""
    t = Track("Bass", channel=2)
    t.program(0, 8)
    t.cc(0, 7, 100)
    t.cc(0, 70, 100)
    # Bars 3-4: whole notes under the low and high phrases.
    t.note(bar(3), 36, BAR - 60, 96)
    t.note(bar(4), 43, BAR - 60, 96)
    # Bars 5-6: chord roots in half notes.
    for beat, key in enumerate([36, 33, 29, 31]):
        t.note(bar(5, 2 * beat), key, 2 * QUARTER - 40, 96)
    # Bars 7-8: repeated eighths while the amplitude knob dips, swells to full and settles back.
    for i in range(16):
        t.note(bar(7, i / 2), 33 if i < 8 else 29, EIGHTH - 30, 100)
    t.sweep(70, bar(7), bar(7, 2) - THIRTY_SECOND, 100, 20)
    t.sweep(70, bar(7, 2), bar(8, 2) - THIRTY_SECOND, 20, 127)
    t.sweep(70, bar(8, 2), bar(9) - THIRTY_SECOND, 127, 100)
    # Bars 9-12: octaves, whole and half notes, to the end.
    t.chord(bar(9), [36, 48], BAR - 60, 96)
    t.chord(bar(10), [31, 43], BAR - 60, 96)
    t.chord(bar(11), [29, 41], 2 * QUARTER - 40, 100)
    t.chord(bar(11, 2), [31, 43], 2 * QUARTER - 40, 100)
    t.chord(bar(12), [24, 36], BAR, 104)
    volume_arc(t, 100)
    return t


def volume_arc(track, start):
    """Bars 11-12: every channel swells to full volume over bar 11 and fades to 30 over bar 12."""
    track.sweep(7, bar(11), bar(12) - THIRTY_SECOND, start, 127)
    track.sweep(7, bar(12), END - THIRTY_SECOND, 127, 30)


def cos_half(x):
    """(1 + cos(pi x)) / 2: 1 at x = 0, 0 at x = 1, flat at both ends, for a bend that eases in and out."""
    return (1 + math.cos(math.pi * x)) / 2


def main():
    tracks = [conductor(), lead(), chords(), bass()]
    header = b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks), TPQ)
    data = header + b"".join(track.chunk() for track in tracks)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo.mid")
    with open(path, "wb") as file:
        file.write(data)
    print(f"wrote {path}: {len(data)} bytes, {END / TPQ * TEMPO / 1e6:.1f} s")


if __name__ == "__main__":
    main()
