"""`toneshaper play --jack` as a New Session Manager client, against a fake session manager.

The fake is a liblo OSC server of the test's own (Debian's python3-liblo) whose URL is given to
`play` as NSM_URL, as nsmd, RaySession or Agordejo would: it checks the announce, opens a session
(a folder under the test's tmp_path and a client id), asks for a save and stops the client with
SIGTERM, as a session manager does. Then it opens the same session again: the instrument must come
back as it was left, which the recordings show sample for sample (the JACK frames of both runs are
known, as in test_jack_play.py).
"""

import json
import signal
import subprocess
import time

import liblo
import numpy as np
import soundfile

from conftest import FIRST_CYCLE, RATE
from test_jack_play import render


class FakeSessionManager:
    """Receives what a client sends, and sends to it from its own port (the client answers only that)."""

    def __init__(self):
        self.server = liblo.Server()
        self.received = []
        self.client = None
        self.server.add_method(None, None, self._take)

    def _take(self, path, args, types, source):
        self.received.append((path, args))
        if path == "/nsm/server/announce":
            self.client = source

    @property
    def url(self):
        return f"osc.udp://127.0.0.1:{self.server.port}/"

    def wait(self, path, timeout=15):
        """The arguments of the first message to `path` not yet taken."""
        deadline = time.monotonic() + timeout
        while True:
            for i, (p, args) in enumerate(self.received):
                if p == path:
                    del self.received[i]
                    return args
            assert time.monotonic() < deadline, f"no {path} from the client; it sent {self.received}"
            self.server.recv(20)

    def quiet(self, seconds):
        """What arrives within `seconds` (paths)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.server.recv(20)
        return [p for p, _ in self.received]

    def send(self, path, *args):
        self.server.send(self.client, path, *args)


CLIENT_ID = "ToneShaper.nTEST"


def stop_within(program, sig=signal.SIGTERM, seconds=20):
    """Sends `sig` (a session manager stops its clients with SIGTERM) and expects an exit within
    `seconds`: (exit code, stdout, stderr)."""
    if sig is not None:
        program.process.send_signal(sig)
    try:
        program.process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        program.process.kill()
        raise AssertionError(f"still running {seconds} s after {sig}")
    return program.stop(sig=None)


def cc(controller, value, channel=0):
    return bytes([0xB0 | channel, controller, value])


# A player's settings, in an order whose every ramp has arrived before the note (volume before the
# program change that sets the part's gain at once; duration and fidelity after it, taken whole when
# the note wakes the part): volume, pan, the siren preset, duration, fidelity, a bend range of 7
# semitones by RPN 0 and a bend up; then one note, 0.2 s later, held half a second.
SETTINGS = [(0, cc(7, 70)), (1, cc(10, 30)), (2, bytes([0xC0, 1])), (3, cc(71, 40)), (4, cc(74, 15)),
            (5, cc(101, 0)), (6, cc(100, 0)), (7, cc(6, 7)), (8, bytes([0xE0, 0, 96]))]
NOTE = [(9_600, bytes([0x90, 60, 100])), (9_600 + 24_000, bytes([0x80, 60, 64]))]
HEARD = 24_000 + RATE  # the note and a second after it


def open_session(nsm, program, session):
    """Checks the announce (nothing open before the session is), then opens `session`; the reply."""
    announce = nsm.wait("/nsm/server/announce")
    assert announce == ["ToneShaper", ":dirty:", "toneshaper", 1, 2, program.process.pid]
    nsm.send("/reply", "/nsm/server/announce", "hello", "fake-nsm", ":server-control:")
    return announce


def play(nsm, jack_server, frame_player, run_toneshaper, tmp_path, session, player_name, record, events):
    """Runs `play --jack` under the fake session manager: open `session`, play `events` from a
    client of the test's own, then save and SIGTERM. Returns (where the note starts in `record`,
    the open reply, the state saved, what else the client sent)."""
    player = frame_player(player_name)
    env = dict(jack_server.env, NSM_URL=nsm.url, XDG_DATA_HOME=str(tmp_path / "data"))
    program = run_toneshaper(["play", "--jack", "--connect", f"{player_name}:out", "--record", str(record),
                              "--format", "wav32f", "--gain", "-6"], env)
    open_session(nsm, program, session)
    # No JACK client before the session is open: its ports are named after the client id.
    time.sleep(0.5)
    assert not [p.name for p in player.client.get_ports("ToneShaper")]
    nsm.send("/nsm/client/open", str(session), "ToneShaper", CLIENT_ID)
    opened = nsm.wait("/reply")
    assert opened[0] == "/nsm/client/open"
    player.first_cycle = int(program.wait_for(FIRST_CYCLE).group(1))
    ports = sorted(p.name for p in player.client.get_ports(f"{CLIENT_ID}:"))
    assert ports == [f"{CLIENT_ID}:midi_in", f"{CLIENT_ID}:out_left", f"{CLIENT_ID}:out_right"]
    assert [p.name for p in player.client.get_all_connections(f"{player_name}:out")] == [f"{CLIENT_ID}:midi_in"]

    start = player.schedule(events)
    deadline = time.monotonic() + 30
    while not player.done() or player.now() < start + events[-1][0] + RATE + 4_800:
        assert time.monotonic() < deadline, "the player did not get through its events"
        time.sleep(0.05)
    assert player.sent == [(start + f, d) for f, d in events]

    nsm.send("/nsm/client/save")
    assert nsm.wait("/reply") == ["/nsm/client/save", f"saved {session}/state.json"]
    saved = json.loads((session / "state.json").read_text())
    code, out, err = stop_within(program)
    assert code == 0, err
    assert "stopped after" in out
    note = start + NOTE[0][0]
    return note, opened, saved, nsm.quiet(0.2)


def test_a_session_saved_and_opened_again_plays_the_same(jack_server, frame_player, run_toneshaper, toneshaper_bin, tmp_path):
    session = tmp_path / "session" / CLIENT_ID
    nsm = FakeSessionManager()
    first = tmp_path / "first.wav"
    note1, opened, saved, told = play(nsm, jack_server, frame_player, run_toneshaper, tmp_path, session, "player",
                                      first, SETTINGS + NOTE)
    assert opened == ["/nsm/client/open", f"new session in {session}"]
    assert "/nsm/client/is_dirty" in told  # the knobs moved after the (empty) start
    # The state: versioned, the siren by content, the knobs as last set.
    assert saved["format"] == "toneshaper-state" and saved["version"] == 1
    assert "siren" in [shape["name"] for shape in saved["shapes"]]
    assert saved["programs"]["1"] == [shape["name"] for shape in saved["shapes"]].index("siren")
    assert saved["controls"] == [
        {"channel": 1, "cc": 7, "value": 70}, {"channel": 1, "cc": 10, "value": 30}, {"channel": 1, "program": 1},
        {"channel": 1, "cc": 71, "value": 40}, {"channel": 1, "cc": 74, "value": 15},
        {"channel": 1, "cc": 101, "value": 0}, {"channel": 1, "cc": 100, "value": 0}, {"channel": 1, "cc": 6, "value": 7},
        {"channel": 1, "bend": 4096}]

    # Opened again (a new process, as a session manager restarts its clients): only the note is
    # played, and it sounds as it did with every setting made before it.
    nsm2 = FakeSessionManager()
    second = tmp_path / "second.wav"
    note2, opened, saved2, told = play(nsm2, jack_server, frame_player, run_toneshaper, tmp_path, session, "player2",
                                       second, NOTE)
    assert opened == ["/nsm/client/open", f"restored {session}/state.json"]
    assert "/nsm/client/is_dirty" not in told  # nothing moved since it was restored
    assert saved2 == saved

    heard1, rate = soundfile.read(str(first), dtype="float32", always_2d=True)
    heard2, _ = soundfile.read(str(second), dtype="float32", always_2d=True)
    assert rate == RATE
    before, after = heard1[note1:note1 + HEARD], heard2[note2:note2 + HEARD]
    assert len(before) == HEARD and len(after) == HEARD
    assert np.abs(before).max() > 0.05
    assert not np.any(heard2[:note2])  # silent until the note: restoring made no sound
    differing = np.flatnonzero(np.any(before != after, axis=1))
    assert differing.size == 0, f"{differing.size} frames differ, first at {differing[0]}"

    # The comparison can fail: the same note on the instrument as the command line starts it sounds otherwise.
    plain = render(toneshaper_bin, tmp_path, "plain", [(f - NOTE[0][0], d) for f, d in NOTE], jack_server.env, tail=1.2)
    assert np.any(plain[:HEARD] != before)


def test_a_state_that_cannot_be_read_is_an_error_to_the_session_and_left_as_it_is(jack_server, run_toneshaper, tmp_path):
    session = tmp_path / "session" / CLIENT_ID
    session.mkdir(parents=True)
    broken = b'{"format": "toneshaper-state", "version": 1, "shapes": [], "channels": ['
    (session / "state.json").write_bytes(broken)
    nsm = FakeSessionManager()
    program = run_toneshaper(["play", "--jack"], dict(jack_server.env, NSM_URL=nsm.url))
    open_session(nsm, program, session)
    nsm.send("/nsm/client/open", str(session), "ToneShaper", CLIENT_ID)
    error = nsm.wait("/error")
    assert error[:2] == ["/nsm/client/open", -9]
    assert error[2].startswith(f"{session}/state.json: ")
    code, out, err = stop_within(program, sig=None)
    assert code != 0
    assert err.strip().splitlines()[-1] == f"toneshaper: {error[2]}"
    assert (session / "state.json").read_bytes() == broken
    probe = jack_server.client("probe")
    assert not [p.name for p in probe.get_ports("ToneShaper")]
    probe.close()


def test_a_refused_announce_or_sigterm_before_open_ends_it_cleanly(jack_server, run_toneshaper, tmp_path):
    nsm = FakeSessionManager()
    program = run_toneshaper(["play", "--jack"], dict(jack_server.env, NSM_URL=nsm.url))
    nsm.wait("/nsm/server/announce")
    nsm.send("/error", "/nsm/server/announce", -2, "incompatible API")
    code, out, err = stop_within(program, sig=None)
    assert code != 0
    assert err.strip().splitlines()[-1] == f"toneshaper: the session manager at {nsm.url} refused us (-2): incompatible API"

    waiting = run_toneshaper(["play", "--jack", "--record", str(tmp_path / "x.wav")], dict(jack_server.env, NSM_URL=nsm.url))
    nsm.wait("/nsm/server/announce")
    code, out, err = stop_within(waiting)
    assert code == 0, err
    assert not (tmp_path / "x.wav").exists()


def test_started_by_name_alone_as_nsmd_does_it_plays_on_jack(jack_server, run_toneshaper, tmp_path):
    session = tmp_path / "session" / CLIENT_ID
    nsm = FakeSessionManager()
    program = run_toneshaper([], dict(jack_server.env, NSM_URL=nsm.url))
    open_session(nsm, program, session)
    nsm.send("/nsm/client/open", str(session), "ToneShaper", CLIENT_ID)
    assert nsm.wait("/reply") == ["/nsm/client/open", f"new session in {session}"]
    program.wait_for(FIRST_CYCLE)
    probe = jack_server.client("probe")
    assert sorted(p.name for p in probe.get_ports(f"{CLIENT_ID}:")) == [
        f"{CLIENT_ID}:midi_in", f"{CLIENT_ID}:out_left", f"{CLIENT_ID}:out_right"]
    probe.close()
    code, out, err = stop_within(program)
    assert code == 0, err
