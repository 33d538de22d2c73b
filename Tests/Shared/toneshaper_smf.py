"""The tests' one Standard MIDI File reader: a file's channel messages at the times and sample
frames `toneshaper render` plays them at (ToneShaperMIDI's MIDIFile.timedMessages and TickClock).

mido reads the file; the timing is render's own, not mido's, so a test can expect an event at
the exact frame render puts it:
  - formats 0 and 1: one tempo map merged from all tracks (tempo events by tick, then track and
    file order; at equal ticks the last wins; a tempo of 0 is ignored), 120 bpm until the first;
  - seconds at tick t = start of t's tempo segment + (t - segment tick) × tempo / (division × 10⁶),
    in that order of operations (Doubles, as render computes them);
  - messages merged by tick, equal ticks in track order, then file order; a track ends at its
    first End of Track, as render stops reading there; chunks other than MThd and MTrk are skipped;
  - frame = seconds × rate rounded to the nearest, halves away from zero.
Format 2 and SMPTE time are refused: no test needs them (render plays them; its own tests check it).

Used by Tests/Plugins/midi_events.py, Tests/VM/check.py and Tests/JACK/conftest.py.
"""
import io
import math
from typing import NamedTuple

import mido

DEFAULT_TEMPO = 500_000


class Event(NamedTuple):
    tick: int
    seconds: float
    track: int
    data: bytes  # status byte and data bytes, as in the file


class MIDIFileError(Exception):
    pass


def frame_at(seconds, rate):
    """The sample frame nearest to `seconds` at `rate`, halves away from zero (Swift's rounded())."""
    x = seconds * rate
    magnitude = math.floor(abs(x))
    if abs(x) - magnitude >= 0.5:
        magnitude += 1
    return magnitude if x >= 0 else -magnitude


def _tracks(midi):
    """Each track as [(tick, message)] up to its first End of Track (mido reads on past it)."""
    tracks = []
    for track in midi.tracks:
        tick, events = 0, []
        for message in track:
            tick += message.time
            if message.type == "end_of_track":
                break
            events.append((tick, message))
        tracks.append(events)
    return tracks


def _clock(division, tracks):
    """seconds(tick) through the merged tempo map, as TickClock builds it."""
    denominator = float(division) * 1_000_000
    changes = sorted(((tick, n, k, message.tempo) for n, track in enumerate(tracks)
                      for k, (tick, message) in enumerate(track) if message.type == "set_tempo"),
                     key=lambda change: change[:3])
    segments = [(0, 0.0, float(DEFAULT_TEMPO))]

    def at(segment, tick):
        return segment[1] + float(tick - segment[0]) * segment[2] / denominator

    for tick, _, _, tempo in changes:
        if tempo <= 0:
            continue
        last = segments[-1]
        start = (tick, at(last, tick), float(tempo))
        if last[0] == tick:
            segments[-1] = start
        else:
            segments.append(start)
    starts = [segment[0] for segment in segments]

    def seconds(tick):
        # The last segment that starts at or before the tick.
        low, high = 0, len(starts) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if starts[mid] <= tick:
                low = mid
            else:
                high = mid - 1
        return at(segments[low], tick)

    return seconds


def _standard_chunks(data):
    """The header and the declared tracks, without the chunks of other types that render skips
    (SMF 1.0: a reader ignores chunks it does not know; mido refuses them) or anything after."""
    kept, pos, tracks, declared = bytearray(), 0, 0, None
    while pos + 8 <= len(data) and (declared is None or tracks < declared):
        name, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "big")
        if name == b"MThd" and declared is None:
            declared = int.from_bytes(data[pos + 10:pos + 12], "big")
        if name in (b"MThd", b"MTrk"):
            kept += data[pos:pos + 8 + size]
            tracks += name == b"MTrk"
        pos += 8 + size
    return bytes(kept)


def read(path):
    """The channel messages of the file at `path`, in render's playing order, as Events."""
    try:
        with open(path, "rb") as file:
            data = _standard_chunks(file.read())
        # clip: a sysex payload may hold any byte (render keeps it, mido refuses it); sysex is
        # dropped here, and a channel message's data byte above 127 is a status byte to mido.
        midi = mido.MidiFile(file=io.BytesIO(data), clip=True)
    except (OSError, EOFError, ValueError, KeyError, IndexError) as error:
        raise MIDIFileError(f"{path}: not a Standard MIDI File mido can read ({error})") from None
    if midi.type == 2 or midi.ticks_per_beat & 0x8000:
        raise MIDIFileError(f"{path}: format 2 and SMPTE time are not needed by the tests")
    tracks = _tracks(midi)
    seconds = _clock(midi.ticks_per_beat, tracks)
    merged = sorted(((tick, n, k, message) for n, track in enumerate(tracks)
                     for k, (tick, message) in enumerate(track)
                     if not message.is_meta and message.type != "sysex"),
                    key=lambda entry: entry[:3])
    events = []
    for tick, n, _, message in merged:
        data = bytes(message.bytes())
        if data[0] < 0xF0:  # channel messages only, as render plays
            events.append(Event(tick, seconds(tick), n, data))
    return events


def frames(path, rate):
    """[(frame, data)] of the file's channel messages: where render plays each at `rate`."""
    return [(frame_at(event.seconds, rate), event.data) for event in read(path)]
