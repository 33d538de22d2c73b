"""Fixtures for `play --jack` against a real JACK server, headless.

Each test gets its own `jackd -n NAME -r -S -d dummy -r 48000 -p 256` (a name no other test uses;
clients find it through JACK_DEFAULT_SERVER; -S, synchronous: the server waits for every client each
cycle, so on a busy machine a late client makes a late cycle, not one that some clients skip — the
test's player must see exactly the cycles ToneShaper renders to know its frames), the `toneshaper` binary (TONESHAPER_BIN, default the
debug build `swift test` made), a way to run it and wait for its lines, and a JACK client of the
test's own (python3-jack-client) that plays MIDI events at known frames of ToneShaper's session.
Run with Debian's /usr/bin/python3 (Tests/JACK/run.sh): that is where the `jack` module is.
"""

import os
import queue
import re
import signal
import struct
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import jack
import mido
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "Shared"))
import toneshaper_smf  # noqa: E402
RATE = 48_000
# `play` prints this once the first cycle ran: the JACK frame time of its recording's frame 0.
FIRST_CYCLE = re.compile(r"first cycle at JACK frame (\d+)")


# ---- the server ------------------------------------------------------------------------------


# JACK 2 keeps its servers in a registry of eight slots in shared memory (shm.h: a 24-byte header,
# then per slot a pid and "jack-UID:NAME:"). A jackd that dies without stopping (SIGKILL, as a test
# below does) keeps its slot until a server of the same name starts again; with a fresh name per
# test, eight such deaths leave "Too many servers already active". So a slot whose process is gone
# is given back the way JACK does it: start a server of that name (it takes the slot over) and stop it.
REGISTRY = "/dev/shm/jack-shm-registry"
SLOTS, SLOT_BYTES, HEADER_BYTES = 8, 264, 24


def dead_servers():
    """Names of this user's servers whose slot is held by a process that no longer exists."""
    try:
        data = open(REGISTRY, "rb").read()
    except OSError:
        return []
    if data[:4] != b"KCAJ":
        return []
    names = []
    for slot in range(SLOTS):
        base = HEADER_BYTES + slot * SLOT_BYTES
        if len(data) < base + SLOT_BYTES:
            break
        pid = struct.unpack_from("<i", data, base)[0]
        entry = data[base + 4:base + 4 + 257].split(b"\0")[0].decode(errors="replace").split(":")
        if pid <= 0 or len(entry) < 2 or entry[0] != f"jack-{os.getuid()}":
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            names.append(entry[1])
        except PermissionError:
            pass
    return names


def start_jackd(name, period, env):
    """`jackd -n NAME -r -S -d dummy -r 48000 -p PERIOD`, once a client can reach it."""
    process = subprocess.Popen(
        ["jackd", "-n", name, "-r", "-S", "-d", "dummy", "-r", str(RATE), "-p", str(period)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 10
    while True:
        try:
            probe = jack.Client("probe", servername=name, no_start_server=True)
            probe.close()
            return process
        except jack.JackError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise RuntimeError(f"jackd -n {name} did not start")
            time.sleep(0.05)


def give_back_slot(name):
    """Frees a dead server's registry slot: a server of its name takes it over, then stops cleanly."""
    try:
        process = start_jackd(name, 256, dict(os.environ, JACK_DEFAULT_SERVER=name))
    except RuntimeError:
        return
    process.terminate()
    process.wait(timeout=10)


class JackServer:
    """A jackd on the dummy driver: no sound card, no real-time rights needed."""

    def __init__(self, period=256):
        for name in dead_servers():
            give_back_slot(name)
        self.name = f"ts-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.env = dict(os.environ, JACK_DEFAULT_SERVER=self.name)
        self.killed = False
        self.process = start_jackd(self.name, period, self.env)

    def client(self, name):
        return jack.Client(name, servername=self.name, no_start_server=True)

    def kill(self, sig=signal.SIGKILL):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=10)
            self.killed = self.killed or sig == signal.SIGKILL

    def stop(self):
        self.kill(signal.SIGTERM)
        if self.killed:
            give_back_slot(self.name)


@pytest.fixture
def jack_server():
    server = JackServer()
    yield server
    server.stop()


# ---- the program -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def toneshaper_bin():
    path = os.environ.get("TONESHAPER_BIN") or str(REPO / ".build" / "debug" / "toneshaper")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built: run `swift build` (or set TONESHAPER_BIN)")
    return path


class ToneShaper:
    """`toneshaper ARGS` running, its stdout lines collected as they come."""

    def __init__(self, binary, args, env):
        self.process = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env, cwd=REPO)
        self.lines = queue.Queue()
        self.stdout = []
        self.stderr = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.error_reader = threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True)
        self.error_reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, pattern, timeout=15):
        """The first stdout line matching `pattern` (a compiled regex), as its match."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(0.01, left))
            except queue.Empty:
                line = ""
            if line is None or left <= 0:
                self.process.kill()
                self.process.wait()
                self.error_reader.join(timeout=5)
                raise AssertionError(f"no line matching {pattern.pattern!r}; stdout {''.join(self.stdout)!r}, "
                                     f"stderr {''.join(self.stderr)!r}")
            found = pattern.search(line)
            if found:
                return found

    def stop(self, sig=signal.SIGINT, timeout=30):
        """Stops it (or waits for it when `sig` is None); returns (exit code, stdout, stderr)."""
        if sig is not None and self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"toneshaper did not exit within {timeout} s; stdout {''.join(self.stdout)!r}")
        self.reader.join(timeout=5)
        self.error_reader.join(timeout=5)
        return code, "".join(self.stdout), "".join(self.stderr)


@pytest.fixture
def run_toneshaper(toneshaper_bin):
    started = []

    def start(args, env):
        program = ToneShaper(toneshaper_bin, args, env)
        started.append(program)
        return program

    yield start
    for program in started:
        if program.process.poll() is None:
            program.process.kill()
            program.process.wait()


def run_once(binary, args, env, timeout=30):
    """`toneshaper ARGS` to its end: (exit code, stdout, stderr)."""
    done = subprocess.run([binary, *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


# ---- a MIDI player at known frames -----------------------------------------------------------


class FramePlayer:
    """A JACK client with one MIDI output port that plays (frame, bytes) events at exact frames of
    ToneShaper's session: frame 0 is the cycle whose JACK frame time `play` printed.

    It counts the frames of every cycle it sees from that one on, so it knows the session frame
    of each cycle even if JACK's frame time jumped (a buffer-size change): both clients run every
    cycle of the graph. Events are scheduled from `start_at(frame)`: event frame f sounds at
    session frame start + f.
    """

    def __init__(self, server, name="player"):
        self.client = server.client(name)
        self.port = self.client.midi_outports.register("out")
        self.history = []          # (last_frame_time, frames) of every cycle, until frame 0 is known
        self.first_cycle = None    # JACK frame time of session frame 0, set by the test
        self.position = None       # session frame at the start of the current cycle
        self.events = []           # [(session frame, bytes)], sorted
        self.next = 0
        self.sent = []             # [(session frame, bytes)] actually written
        self.cycles = 0
        self.sizes = set()
        self.client.set_process_callback(self._process)
        self.client.activate()

    def _process(self, frames):
        self.port.clear_buffer()
        self.cycles += 1
        self.sizes.add(frames)
        now = self.client.last_frame_time
        if self.position is None:
            self.history.append((now, frames))
            if self.first_cycle is None:
                return
            start = [i for i, (t, _) in enumerate(self.history) if t == self.first_cycle]
            if not start:
                return
            self.position = sum(f for _, f in self.history[start[0]:-1])
        end = self.position + frames
        while self.next < len(self.events) and self.events[self.next][0] < end:
            frame, data = self.events[self.next]
            offset = max(0, frame - self.position)
            self.port.write_midi_event(offset, data)
            self.sent.append((self.position + offset, data))
            self.next += 1
        self.position = end

    def now(self):
        """The session frame of the current cycle (None until frame 0 is found)."""
        return self.position

    def schedule(self, events, lead=9_600):
        """Plays `events` [(frame, bytes)] from `lead` frames after the current cycle; returns that start frame."""
        deadline = time.monotonic() + 10
        while self.position is None:
            assert time.monotonic() < deadline, "the player never saw ToneShaper's first cycle"
            time.sleep(0.005)
        start = self.position + lead
        self.next = 0
        self.events = [(start + f, bytes(d)) for f, d in events]
        return start

    def done(self):
        return self.next >= len(self.events)

    def close(self):
        self.client.deactivate()
        self.client.close()


@pytest.fixture
def frame_player(jack_server):
    players = []

    def make(name="player"):
        player = FramePlayer(jack_server, name)
        players.append(player)
        return player

    yield make
    for player in players:
        try:
            player.close()
        except jack.JackError:
            pass


# ---- MIDI files ------------------------------------------------------------------------------


def demo_events(path=REPO / "Examples" / "demo.mid", seconds=None):
    """Examples/demo.mid's channel messages as [(frame at 48 kHz, bytes)], in order (tempo map applied).
    Cut after `seconds`, the notes still held end a tenth of a second later (a file that ends with
    notes held has them released at its end by `render`, while a live instrument holds them)."""
    events, held = [], {}
    for event in toneshaper_smf.read(path):
        if seconds is not None and event.seconds > seconds:
            end = events[-1][0] + RATE // 10
            events += [(end, bytes([0xB0 | channel, 64, 0])) for channel in sorted({c for c, _ in held})]
            events += [(end, bytes([0x80 | channel, note, 64])) for channel, note in sorted(held)]
            break
        data = event.data
        events.append((toneshaper_smf.frame_at(event.seconds, RATE), data))
        if data[0] & 0xF0 == 0x90 and data[2] > 0:
            held[(data[0] & 0x0F, data[1])] = True
        elif data[0] & 0xF0 in (0x80, 0x90):
            held.pop((data[0] & 0x0F, data[1]), None)
    return events


def write_frames_midi(path, events):
    """A format 0 file whose tick is one frame at 48 kHz (24,000 ticks per quarter at 120 bpm), so
    `toneshaper render` puts every event at exactly its frame."""
    track = mido.MidiTrack()
    track.append(mido.MetaMessage("set_tempo", tempo=500_000, time=0))
    last = 0
    for frame, data in sorted(events, key=lambda e: e[0]):
        message = mido.Message.from_bytes(list(data))
        message.time = frame - last
        last = frame
        track.append(message)
    midi = mido.MidiFile(type=0, ticks_per_beat=24_000)
    midi.tracks.append(track)
    midi.save(str(path))


def read_frames_midi(path):
    """A file `--record-midi` wrote (24,000 ticks per quarter at 120 bpm: one tick a frame) as [(frame, bytes)]."""
    midi = mido.MidiFile(str(path))
    assert midi.ticks_per_beat == 24_000, midi.ticks_per_beat
    tempos = {message.tempo for track in midi.tracks for message in track if message.type == "set_tempo"}
    assert tempos <= {500_000}, tempos
    return [(event.tick, event.data) for event in toneshaper_smf.read(path)]
