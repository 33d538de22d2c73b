#!/usr/bin/env python3
"""Prints a Standard MIDI File's channel messages as 'FRAME STATUS DATA1 DATA2' lines, at the
frames `toneshaper render` places them (read by Tests/Shared/toneshaper_smf.py, the tests' one
reader: render's tempo map, tracks merged by tick then track order, halves away from zero; a
message with one data byte gets DATA2 0), so a plugin test host can send the same events at the
same frames.
Usage: midi_events.py FILE.mid RATE"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Shared"))
import toneshaper_smf  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: midi_events.py FILE.mid RATE")
    try:
        events = toneshaper_smf.frames(sys.argv[1], float(sys.argv[2]))
    except toneshaper_smf.MIDIFileError as error:
        sys.exit(f"midi_events.py: {error}")
    for frame, data in events:
        print(frame, *(list(data) + [0] * (3 - len(data))))


main()
