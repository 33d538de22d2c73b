"""`toneshaper play --jack` against a real jackd (dummy driver), headless.

How the frames are known: `play` prints the JACK frame time of its first cycle ("first cycle at
JACK frame N"), which is frame 0 of its --record file and its --record-midi file. The test's own
JACK client (FramePlayer) sees every cycle too, so it knows which session frame each of its cycles
starts at, and writes each event at the offset within the cycle that puts it at a chosen session
frame. `toneshaper render` of a file holding the same events at the same frames must then equal
the recording sample for sample; the same render with one note moved by one frame must not.
"""

import signal
import time

import numpy as np
import pytest
import soundfile

from conftest import FIRST_CYCLE, RATE, demo_events, read_frames_midi, run_once, write_frames_midi


def normalised(data):
    """A note-on at velocity 0 is a note-off (ToneShaper applies and records it as one, velocity 64)."""
    if len(data) == 3 and data[0] & 0xF0 == 0x90 and data[2] == 0:
        return bytes([0x80 | (data[0] & 0x0F), data[1], 64])
    return bytes(data)


def render(binary, tmp_path, name, events, env, tail=1.0):
    """`toneshaper render` of `events` [(frame, bytes)] at exactly those frames: the samples."""
    midi = tmp_path / f"{name}.mid"
    wav = tmp_path / f"{name}.wav"
    write_frames_midi(midi, events)
    code, out, err = run_once(binary, ["render", str(midi), "-o", str(wav), "--format", "wav32f", "--tail", str(tail),
                                       "--gain", "-6"], env, timeout=120)
    assert code == 0, err
    samples, rate = soundfile.read(str(wav), dtype="float32", always_2d=True)
    assert rate == RATE
    return samples


def shifted(events, by=1):
    """The same events with the first note-on one frame later (the comparison must see it)."""
    moved = list(events)
    i = next(i for i, (_, d) in enumerate(moved) if d[0] & 0xF0 == 0x90 and d[2] > 0)
    moved[i] = (moved[i][0] + by, moved[i][1])
    return moved


def play_and_compare(jack_server, frame_player, run_toneshaper, toneshaper_bin, tmp_path, events, during=None):
    """Plays `events` into `play --jack` from the test's client, stops it, and checks the recording and
    the MIDI take against `render` of the same events at the same frames. `during(player)` runs while
    it plays (after the first events have gone)."""
    player = frame_player()
    record, take = tmp_path / "take.wav", tmp_path / "take.mid"
    program = run_toneshaper(["play", "--jack", "--connect", "player:out", "--record", str(record), "--format", "wav32f",
                              "--record-midi", str(take), "--gain", "-6"], jack_server.env)
    first = int(program.wait_for(FIRST_CYCLE).group(1))
    player.first_cycle = first
    start = player.schedule(events)
    if during:
        during(player)
    deadline = time.monotonic() + events[-1][0] / RATE + 30
    while not player.done():
        assert time.monotonic() < deadline, "the player did not get through its events"
        time.sleep(0.05)
    # Past the last event by a second, so its release is in the recording too.
    end = player.now() + RATE
    while player.now() < end:
        time.sleep(0.05)
    code, out, err = program.stop(signal.SIGINT)
    assert code == 0, err

    expected = [(start + f, d) for f, d in events]
    assert player.sent == expected  # each written at its frame (none late)

    # The MIDI take: every event at the session frame it was sent for.
    assert read_frames_midi(take) == [(f, normalised(d)) for f, d in expected]

    recorded, rate = soundfile.read(str(record), dtype="float32", always_2d=True)
    assert rate == RATE
    assert len(recorded) >= expected[-1][0] + RATE // 2
    rendered = render(toneshaper_bin, tmp_path, "expected", expected, jack_server.env,
                      tail=(len(recorded) - expected[-1][0]) / RATE + 0.1)
    n = len(recorded)
    assert len(rendered) >= n
    assert np.abs(recorded).max() > 0.05  # it played
    assert not np.any(recorded[:start])    # and nothing before the first event
    differing = np.flatnonzero(np.any(recorded != rendered[:n], axis=1))
    assert differing.size == 0, f"{differing.size} frames differ from render, first at {differing[0]}"

    # The comparison can fail: one note a frame late is seen.
    late = render(toneshaper_bin, tmp_path, "shifted", shifted(expected), jack_server.env,
                  tail=(n - expected[-1][0]) / RATE + 0.1)
    assert np.any(recorded != late[:n])
    return out


def test_the_demo_played_into_the_midi_port_records_what_render_makes_sample_for_sample(
        jack_server, frame_player, run_toneshaper, toneshaper_bin, tmp_path):
    # The demo's first 14 s: every kind of event in it (programs, controllers, pedal, notes, the bend at 13 s).
    out = play_and_compare(jack_server, frame_player, run_toneshaper, toneshaper_bin, tmp_path, demo_events(seconds=14))
    assert "JACK client 'ToneShaper'" in out and "256 frames" in out


def test_buffer_size_changed_mid_play_keeps_playing_and_still_equals_render(
        jack_server, frame_player, run_toneshaper, toneshaper_bin, tmp_path):
    events = demo_events(seconds=6)

    def change_sizes(player):
        time.sleep(1.0)
        player.client.blocksize = 128
        time.sleep(1.0)
        player.client.blocksize = 1024

    out = play_and_compare(jack_server, frame_player, run_toneshaper, toneshaper_bin, tmp_path, events, during=change_sizes)
    assert "JACK buffer size now 128 frames" in out
    assert "JACK buffer size now 1024 frames" in out


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
def test_server_gone_mid_play_is_one_line_and_both_files_hold_what_was_played(
        jack_server, frame_player, run_toneshaper, tmp_path, how):
    player = frame_player()
    record, take = tmp_path / "take.wav", tmp_path / "take.mid"
    program = run_toneshaper(["play", "--jack", "--connect", "player:out", "--record", str(record),
                              "--record-midi", str(take)], jack_server.env)
    player.first_cycle = int(program.wait_for(FIRST_CYCLE).group(1))
    notes = [(0, b"\x90\x3c\x64"), (4_800, b"\x90\x40\x64"), (9_600, b"\x80\x3c\x40")]
    start = player.schedule(notes, lead=2_400)
    while not player.done():
        time.sleep(0.02)
    time.sleep(0.3)
    jack_server.kill(how)
    began = time.monotonic()
    code, out, err = program.stop(sig=None, timeout=20)
    assert time.monotonic() - began < 10
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "JACK server" in lines[0] and "went away" in lines[0]
    # Both files finalised and readable, holding what was played.
    recorded, rate = soundfile.read(str(record), dtype="float32", always_2d=True)
    assert rate == RATE and len(recorded) >= start + 9_600
    assert np.abs(recorded[start:start + 9_600]).max() > 0.05
    assert read_frames_midi(take) == [(start + f, d) for f, d in notes]


def test_no_server_is_one_line(toneshaper_bin, tmp_path):
    env = dict(__import__("os").environ, JACK_DEFAULT_SERVER="ts-nobody-here")
    code, out, err = run_once(toneshaper_bin, ["play", "--jack", "--record", str(tmp_path / "x.wav")], env)
    assert code != 0
    assert err.strip().splitlines() == ["toneshaper: no JACK server 'ts-nobody-here' is running "
                                        "(start jackd or qjackctl, or run under PipeWire: pw-jack toneshaper play --jack)"]
    assert not (tmp_path / "x.wav").exists()


def test_connect_matching_nothing_names_the_pattern_and_what_there_is(jack_server, frame_player, toneshaper_bin, tmp_path):
    frame_player("keys")
    code, out, err = run_once(toneshaper_bin, ["play", "--jack", "--connect", "keys:out", "--connect", "synth.*:midi",
                                               "--record", str(tmp_path / "x.wav")], jack_server.env)
    assert code != 0
    assert err.strip().splitlines() == ["toneshaper: --connect 'synth.*:midi': no JACK MIDI output port matches "
                                        "(there are: keys:out)"]
    assert not (tmp_path / "x.wav").exists()
    code, out, err = run_once(toneshaper_bin, ["play", "--jack", "--output", "nowhere"], jack_server.env)
    assert code != 0
    assert err.strip().splitlines() == ["toneshaper: --output 'nowhere': no JACK audio input port matches "
                                        "(there are: system:playback_1, system:playback_2)"]


def test_a_name_in_use_is_one_line(jack_server, toneshaper_bin):
    holder = jack_server.client("ToneShaper")
    try:
        code, out, err = run_once(toneshaper_bin, ["play", "--jack"], jack_server.env)
        assert code != 0
        assert err.strip().splitlines() == [f"toneshaper: JACK client name 'ToneShaper' is already taken on server "
                                            f"'{jack_server.name}'; choose another with --jack-name"]
    finally:
        holder.close()


def test_another_name_and_a_regex_connect_the_ports_asked_for(jack_server, frame_player, run_toneshaper):
    keys = frame_player("Keys 1")
    program = run_toneshaper(["play", "--jack", "--jack-name", "Second", "--connect", "^Keys [0-9]:o",
                              "--output", "system:playback_2"], jack_server.env)
    program.wait_for(FIRST_CYCLE)
    ours = keys.client
    assert [p.name for p in ours.get_all_connections("Keys 1:out")] == ["Second:midi_in"]
    assert [p.name for p in ours.get_all_connections("Second:out_left")] == ["system:playback_2"]
    assert [p.name for p in ours.get_all_connections("Second:out_right")] == ["system:playback_2"]
    code, out, err = program.stop(signal.SIGTERM)
    assert code == 0, err
    assert "connected from Keys 1:out" in out


def test_alsa_options_are_refused_with_jack(toneshaper_bin):
    code, out, err = run_once(toneshaper_bin, ["play", "--jack", "--period", "64"], None)
    assert code != 0 and "--period/--periods are ALSA's" in err


def test_a_keyboard_disconnected_has_its_held_notes_and_pedal_released(jack_server, frame_player, run_toneshaper, tmp_path):
    player = frame_player()
    take = tmp_path / "take.mid"
    program = run_toneshaper(["play", "--jack", "--connect", "player:out", "--record-midi", str(take)], jack_server.env)
    player.first_cycle = int(program.wait_for(FIRST_CYCLE).group(1))
    held = [(0, b"\xb0\x40\x7f"), (0, b"\x90\x3c\x64"), (480, b"\x90\x43\x64"), (960, b"\x80\x43\x40")]
    start = player.schedule(held, lead=2_400)
    while not player.done():
        time.sleep(0.02)
    time.sleep(0.2)
    player.client.disconnect("player:out", "ToneShaper:midi_in")
    time.sleep(0.3)
    code, out, err = program.stop(signal.SIGTERM)
    assert code == 0, err
    played = read_frames_midi(take)
    assert played[:4] == [(start + f, d) for f, d in held]
    # After the last note, at the cycle the port lost its connection: pedal up, then note 60 off.
    released = played[4:]
    assert [d for _, d in released] == [b"\xb0\x40\x00", b"\x80\x3c\x40"]
    assert all(f == released[0][0] > start + 960 for f, _ in released)
