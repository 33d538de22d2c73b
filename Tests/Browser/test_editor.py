"""Browser tests of the shape editor page against the real `toneshaper edit` server.

Every pointer action is a real pointer event sequence sent by chromedriver (ActionChains), and every
expected time and frequency is computed here from the curve view's plot rectangle and the axis
mapping documented in Sources/ToneShaperEditor/Page/js/axis.js.
"""

import json
import math
import subprocess
import time

import numpy as np
import pytest
import soundfile
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

PIXEL_SLACK = 2.0  # how far a pointer event may land from the intended pixel (rounding of offsets)


def tolerances(editor, slack=PIXEL_SLACK):
    """(seconds, octaves-or-Hz) that `slack` pixels amount to on the current axes."""
    m = editor.mapping()
    p = m["plot"]
    dt = slack * m["duration"] / p["width"]
    if m["log"]:
        octaves_per_px = math.log2(m["maxFrequency"] / m["minFrequency"]) / p["height"]
        return dt, ("octaves", slack * octaves_per_px)
    return dt, ("hz", slack * (m["maxFrequency"] - m["minFrequency"]) / p["height"])


def assert_frequency_close(actual, expected, tolerance, what=""):
    kind, amount = tolerance
    if kind == "octaves":
        assert abs(math.log2(actual / expected)) <= amount, f"{what}: {actual} Hz, want {expected} Hz ± {amount:.4f} octave"
    else:
        assert abs(actual - expected) <= amount, f"{what}: {actual} Hz, want {expected} ± {amount:.2f} Hz"


def nearest_point(points, t):
    return min(points, key=lambda p: abs(p[0] - t))


def read_wav(path):
    """An audio file's first channel (in [-1, 1]) and its sample rate, read through libsndfile
    (soundfile), as the program's own files are: no second reader of its own to trust."""
    samples, rate = soundfile.read(str(path), dtype="float64", always_2d=True)
    return samples[:, 0], rate


def peak_frequency(samples, rate):
    """The strongest frequency in a stretch of sound: Hann window, zero-padded FFT, and a
    parabola through the peak bin and its neighbours (on log magnitudes)."""
    windowed = (samples - samples.mean()) * np.hanning(len(samples))
    size = 1 << (len(samples) * 8 - 1).bit_length()
    spectrum = np.abs(np.fft.rfft(windowed, size))
    k = int(np.argmax(spectrum[1:-1])) + 1
    a, b, c = np.log(spectrum[k - 1:k + 2] + 1e-30)
    shift = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0.0
    return (k + shift) * rate / size


# ---- (a) points by clicking -------------------------------------------------------------------


def test_click_places_points(editor):
    editor.new_shape()
    start = editor.shape
    assert start["points"] == [[0, 440], [1, 440]]
    undo_before = editor.state("history")["undo"]
    dt, df = tolerances(editor)
    wanted = [(0.5, 1000.0), (0.25, 300.0), (0.75, 150.0)]  # placed out of order on purpose
    for t, f in wanted:
        editor.click_at(t, f)
    editor.settle()

    points = editor.shape["points"]
    assert len(points) == 5, points
    times = [p[0] for p in points]
    assert times == sorted(times) and len(set(times)) == len(times), f"points not strictly increasing: {points}"
    assert points[0] == [0, 440] and points[-1] == [1, 440], "the existing end points must stay"
    for t, f in wanted:
        pt, pf = nearest_point(points, t)
        assert abs(pt - t) <= dt, f"point for t={t}: got t={pt} (± {dt:.4f})"
        assert_frequency_close(pf, f, df, f"point at t={t}")
    assert editor.state("history")["undo"] == undo_before + 3, "each click is one undo step"
    # The played curve drawn over it comes from the server's analysis of exactly this shape.
    status, body, _ = editor.server.api("POST", "/api/analyse", editor.shape)
    assert status == 200
    assert editor.state("played") == body["played"]


# ---- (b) dragging a point ------------------------------------------------------------------------


def test_drag_moves_a_point(editor):
    editor.new_shape()
    editor.click_at(0.5, 600)
    editor.settle()
    points = editor.shape["points"]
    assert len(points) == 3
    undo_before = editor.state("history")["undo"]
    dt, df = tolerances(editor)

    x0, y0 = editor.to_pixel(*points[1])
    x1, y1 = editor.to_pixel(0.3, 250)
    path = [(x0 + (x1 - x0) * i / 12, y0 + (y1 - y0) * i / 12) for i in range(13)]
    editor.drag_pixels(path)
    editor.settle()

    moved = editor.shape["points"]
    assert len(moved) == 3, "a drag moves, it does not add"
    assert moved[0] == [0, 440] and moved[2] == [1, 440]
    assert abs(moved[1][0] - 0.3) <= dt, moved
    assert_frequency_close(moved[1][1], 250, df, "dragged point")
    assert editor.state("history")["undo"] == undo_before + 1, "a whole drag is one undo step"

    # A point cannot be dragged past its neighbour: it stops just after it.
    x2, y2 = editor.to_pixel(*moved[1])
    p = editor.mapping()["plot"]
    editor.drag_pixels([(x2, y2), (x2 - 40, y2), (p["left"] - 20, y2)])
    editor.settle()
    held = editor.shape["points"]
    assert len(held) == 3 and 0 < held[1][0] < 0.01, held
    assert held[1][0] > held[0][0]


# ---- deleting points -------------------------------------------------------------------------------


def test_delete_point_by_right_click_key_and_button(editor):
    editor.new_shape()
    for t, f in [(0.2, 300), (0.4, 500), (0.6, 700)]:
        editor.click_at(t, f)
    editor.settle()
    points = editor.shape["points"]
    assert len(points) == 5

    # Right-click on a point deletes it.
    dx, dy = editor.offset(*editor.to_pixel(*points[2]))
    editor.actions().move_to_element_with_offset(editor.canvas(), dx, dy).context_click().perform()
    editor.settle()
    assert len(editor.shape["points"]) == 4 and points[2] not in editor.shape["points"]

    # Click selects (without adding), Delete removes the selected point.
    points = editor.shape["points"]
    editor.click_pixel(*editor.to_pixel(*points[1]))
    assert editor.state("selected") == 1 and len(editor.shape["points"]) == 4
    editor.press(Keys.DELETE)
    editor.settle()
    assert len(editor.shape["points"]) == 3 and points[1] not in editor.shape["points"]

    # The button deletes the selected point too.
    points = editor.shape["points"]
    editor.click_pixel(*editor.to_pixel(*points[1]))
    editor.click("btn-delete-point")
    editor.settle()
    assert editor.shape["points"] == [[0, 440], [1, 440]]

    # Two points are the minimum: Backspace on one of them is refused.
    editor.click_pixel(*editor.to_pixel(1, 440))
    editor.press(Keys.BACKSPACE)
    assert editor.shape["points"] == [[0, 440], [1, 440]]


# ---- (c) undo and redo ---------------------------------------------------------------------------


def test_undo_redo_buttons_and_keys_restore_exact_shapes(editor):
    editor.new_shape()
    s0 = editor.shape
    editor.click_at(0.3, 700)
    editor.settle()
    s1 = editor.shape
    editor.set_field("field-duration", "2.5")
    editor.settle()
    s2 = editor.shape
    assert s2["duration"] == 2.5
    # A new duration stretches the drawing (the view's width is [0, duration]), the end stays at the end.
    assert len(s2["points"]) == len(s1["points"]) and s2["points"][-1] == [2.5, 440]
    for (t1, f1), (t2, f2) in zip(s1["points"], s2["points"]):
        assert f2 == f1 and abs(t2 - 2.5 * t1) <= 1e-6, (s1["points"], s2["points"])
    editor.element("field-wave").find_element(By.CSS_SELECTOR, "option[value='square']").click()
    editor.click_at(1.8, 200)
    editor.settle()
    s3 = editor.shape
    assert s3["wave"] == "square" and len(s3["points"]) == 4
    s_wave = dict(s2, wave="square")
    editor.blur()

    def expect(shape, how):
        editor.settle()
        assert editor.shape == shape, f"after {how}"

    editor.click("btn-undo")
    expect(s_wave, "the Undo button")
    editor.press("z", Keys.CONTROL)
    expect(s2, "Ctrl-Z")
    assert editor.element("field-wave").get_attribute("value") == "sine", "controls follow undo"
    editor.press("z", Keys.CONTROL)
    expect(s1, "Ctrl-Z")
    assert editor.element("field-duration").get_attribute("value") == "1"
    editor.click("btn-undo")
    expect(s0, "the Undo button")
    editor.press("z", Keys.CONTROL, Keys.SHIFT)
    expect(s1, "Ctrl-Shift-Z")
    editor.click("btn-redo")
    expect(s2, "the Redo button")
    editor.press("y", Keys.CONTROL)
    expect(s_wave, "Ctrl-Y")
    editor.press("z", Keys.CONTROL, Keys.SHIFT)
    expect(s3, "Ctrl-Shift-Z")
    assert editor.state("history")["redo"] == 0
    assert not editor.element("btn-redo").is_enabled()

    # A new edit after undo drops the redo branch.
    editor.press("z", Keys.CONTROL)
    expect(s_wave, "Ctrl-Z")
    editor.set_field("field-amplitude", "0.25")
    editor.settle()
    assert editor.state("history")["redo"] == 0
    assert editor.shape == dict(s_wave, amplitude=0.25)


# ---- (d) draw mode ----------------------------------------------------------------------------------


def test_draw_mode_sketch_becomes_a_few_points(editor):
    editor.new_shape()
    editor.mode("draw")
    tolerance_px = float(editor.element("rdp-tolerance").get_attribute("value"))
    undo_before = editor.state("history")["undo"]

    def sketched(t):  # a rise over two octaves, then a plateau
        return 200 * 4 ** ((t - 0.1) / 0.4) if t < 0.5 else 800.0

    ts = np.linspace(0.1, 0.9, 51)
    path = [editor.to_pixel(float(t), sketched(float(t))) for t in ts]
    editor.drag_pixels(path)
    editor.settle()

    points = editor.shape["points"]
    dt, df = tolerances(editor, PIXEL_SLACK + tolerance_px)
    assert points[0] == [0, 440] and points[-1] == [1, 440], "points outside the sketched span stay"
    inside = points[1:-1]
    assert 2 <= len(inside) <= 6, f"50 moves should become a few points, got {inside}"
    assert abs(inside[0][0] - 0.1) <= dt and abs(inside[-1][0] - 0.9) <= dt, inside
    for t, f in inside:
        assert_frequency_close(f, sketched(t), df, f"sketched point at t={t:.3f}")
    assert any(abs(t - 0.5) <= 0.04 for t, _ in inside), f"the corner of the sketch is kept: {inside}"
    assert editor.state("history")["undo"] == undo_before + 1, "a sketch is one undo step"


# ---- (e) fidelity changes the played curve ------------------------------------------------------------


def test_low_fidelity_changes_the_played_curve(editor):
    editor.new_shape()
    for t, f in [(0.13, 300), (0.37, 900), (0.61, 200), (0.89, 700)]:
        editor.click_at(t, f)
    editor.settle()
    shape = editor.shape
    assert shape["fidelity"] == 1000
    fine = editor.state("played")
    drawn_times = [p[0] for p in shape["points"]]
    fine_times = sorted({round(t, 9) for t, _ in fine})
    assert len(fine_times) == len(drawn_times)
    assert all(abs(a - b) <= 1e-3 for a, b in zip(fine_times, drawn_times)), (fine, drawn_times)

    editor.set_field("field-fidelity", "4")
    editor.settle()
    assert editor.shape["fidelity"] == 4
    coarse = editor.state("played")
    assert coarse != fine
    coarse_times = sorted({round(t, 9) for t, _ in coarse})
    assert len(coarse_times) <= 5, f"at N = 4 the curve has at most 5 distinct times: {coarse}"
    for t in coarse_times:  # first point at 0, last at 1: the grid is k/4
        assert abs(t * 4 - round(t * 4)) <= 1e-6, f"played time {t} is not on the N = 4 grid"
    # The slider shows N on its logarithmic scale (position 1000·log10(N)/6).
    assert editor.element("field-fidelity-slider").get_attribute("value") == str(round(1000 * math.log10(4) / 6))


# ---- (f) invalid input ----------------------------------------------------------------------------------


def wait_error(editor, testid, message):
    slot = editor.element(testid)
    editor.wait(lambda: slot.is_displayed() and slot.text.strip().lstrip("⚠").strip() == message, 10,
                f"{testid} to show {message!r} (shows {slot.text!r})")


def test_invalid_edit_shows_the_server_message_and_save_is_refused(editor):
    editor.new_shape()
    editor.set_field("field-name", "should-not-be-saved")
    editor.settle()
    editor.set_field("field-duration", "0")
    editor.settle()
    assert editor.shape["duration"] == 0, "what was typed is sent as typed, not clamped"
    status, body, _ = editor.server.api("POST", "/api/analyse", editor.shape)
    assert status == 422 and body["field"] == "duration", body
    assert "\n" not in body["error"]
    wait_error(editor, "error-duration", body["error"])
    assert editor.element("field-duration").get_attribute("aria-invalid") == "true"

    editor.click("btn-save")
    editor.wait(lambda: "Not saved" in editor.element("status").text, 10, "Save to be refused")
    assert editor.state("lastSave") is None
    assert not editor.server.presets.exists() or not any(editor.server.presets.iterdir())

    # A point outside a raised frequency range: the message goes to the curve view.
    editor.set_field("field-duration", "1")
    editor.settle()
    editor.wait(lambda: not editor.element("error-duration").is_displayed(), 10, "the duration error to clear")
    editor.set_field("field-minFrequency", "500")
    editor.settle()
    status, body, _ = editor.server.api("POST", "/api/analyse", editor.shape)
    assert status == 422 and body["field"].startswith("points["), body
    wait_error(editor, "error-points", body["error"])
    editor.click("btn-save")
    editor.wait(lambda: "Not saved" in editor.element("status").text, 10, "Save to be refused")
    time.sleep(0.3)
    assert editor.state("lastSave") is None
    assert not editor.server.presets.exists() or not any(editor.server.presets.iterdir())

    # The echo volume error lands next to the echo volume box.
    editor.set_field("field-minFrequency", "20")
    editor.set_field("field-echo.volume", "1")
    editor.settle()
    status, body, _ = editor.server.api("POST", "/api/analyse", editor.shape)
    assert status == 422 and body["field"] == "echo.volume", body
    wait_error(editor, "error-echo.volume", body["error"])


# ---- (g) save, render, measure ----------------------------------------------------------------------


def test_saved_shape_renders_the_drawn_frequencies(editor, tmp_path):
    editor.new_shape()
    editor.set_field("field-name", "browser-steps")
    editor.set_checkbox("snap", True)
    if not editor.mapping()["log"]:
        editor.set_checkbox("log-scale", True)
    m = editor.mapping()
    # 220 Hz from 0 to 0.45 s, a glide, 440 Hz from 0.55 s to the end (the New shape's last point).
    x, y = editor.to_pixel(0, 220, m)
    editor.click_pixel(m["plot"]["left"] - 4, y)  # left of the plot: t = 0, the first point moves there
    editor.click_at(0.45, 220)
    editor.click_at(0.55, 440)
    editor.settle()
    points = editor.shape["points"]
    dt, _ = tolerances(editor)
    assert [p[1] for p in points] == [220, 220, 440, 440], f"snapped to the semitones: {points}"
    assert points[0][0] == 0 and points[-1][0] == 1
    assert abs(points[1][0] - 0.45) <= dt and abs(points[2][0] - 0.55) <= dt

    editor.click("btn-save")
    editor.wait(lambda: editor.state("lastSave") is not None, 15, "Save to answer")
    saved = editor.state("lastSave")
    path = editor.server.presets / "browser-steps.json"
    assert path.is_file(), f"no {path}; the server answered {saved}"
    assert saved["name"] == "browser-steps"
    assert str(path) in saved["saved"] or path.resolve() == __import__("pathlib").Path(saved["saved"]).resolve()
    assert str(saved["saved"]) in editor.element("status").text
    on_disk = json.loads(path.read_text())
    assert on_disk["points"] == points

    out = tmp_path / "out.wav"
    result = subprocess.run([editor.server.binary, "render-shape", str(path), "--cycles", "1", "-o", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    samples, rate = read_wav(out)
    assert len(samples) >= 0.99 * rate, f"{len(samples)} samples at {rate} Hz for a 1 s shape"
    for center, expected in [(0.2, 220.0), (0.8, 440.0)]:
        half = int(0.075 * rate)
        i = int(center * rate)
        measured = peak_frequency(samples[i - half:i + half], rate)
        assert abs(measured / expected - 1) < 0.02, f"at {center} s: {measured:.2f} Hz, drawn {expected} Hz"


# ---- (h) live play --------------------------------------------------------------------------------------


def test_live_play_streams_and_follows_edits(editor):
    editor.new_shape()
    editor.click("btn-play")
    assert editor.element("btn-play").get_attribute("aria-pressed") == "true"
    editor.wait(lambda: (editor.state("stats")["format"] or {}).get("framesPerChunk"), 10, "the format message")
    editor.wait(lambda: editor.state("stats")["chunksReceived"] >= 5, 10, "audio chunks")
    first = editor.state("stats")
    time.sleep(0.5)
    later = editor.state("stats")
    assert later["chunksReceived"] > first["chunksReceived"], "chunks keep coming while playing"
    assert later["chunksScheduled"] > 0, f"chunks are scheduled for playback: {later}"
    chunk_seconds = later["format"]["framesPerChunk"] / later["format"]["sampleRate"]
    # Paced to real time: half a second brings about half a second of chunks (generous bounds).
    arrived = (later["chunksReceived"] - first["chunksReceived"]) * chunk_seconds
    assert 0.1 <= arrived <= 1.5, f"{arrived:.3f} s of audio arrived in 0.5 s"
    # The jitter buffer stays short: nothing is scheduled more than 0.15 s (+ one chunk) ahead.
    assert later["ahead"] <= 0.15 + chunk_seconds + 1e-6, later
    editor.wait(lambda: editor.state("stats")["lastAppliedSeq"] >= 1, 10, "the first shape to be applied")

    # Every edit goes down the socket and is applied, in order.
    seq = editor.state("stats")["lastSentSeq"]
    editor.click_at(0.5, 660)
    editor.wait(lambda: editor.state("stats")["lastSentSeq"] > seq, 5, "the edit to be sent")
    editor.wait(lambda: editor.state("stats")["lastAppliedSeq"] == editor.state("stats")["lastSentSeq"], 10,
                "the edit to be applied")
    seq = editor.state("stats")["lastSentSeq"]
    editor.set_field("field-amplitude", "0.3")
    editor.wait(lambda: editor.state("stats")["lastAppliedSeq"] > seq, 10, "the amplitude edit to be applied")

    # A note change, then a refused shape: the server's line shows next to the control.
    Select = __import__("selenium.webdriver.support.select", fromlist=["Select"]).Select
    Select(editor.element("note-select")).select_by_value("60")
    assert editor.state("note") == 60
    editor.set_field("field-amplitude", "2")
    editor.wait(lambda: (editor.state("stats")["lastError"] or {}).get("field") == "amplitude", 10, "a live error")
    message = editor.state("stats")["lastError"]["error"]
    wait_error(editor, "error-amplitude", message)
    still = editor.state("stats")["chunksReceived"]
    time.sleep(0.3)
    assert editor.state("stats")["chunksReceived"] > still, "a refused shape does not stop the sound"

    editor.click("btn-play")
    assert editor.element("btn-play").get_attribute("aria-pressed") == "false"
    assert editor.state("stats")["playing"] is False

    # Ctrl-C while a note plays: the server stops cleanly and the page says the sound is gone.
    editor.set_field("field-amplitude", "0.4")
    editor.click("btn-play")
    editor.wait(lambda: editor.state("stats")["chunksScheduled"] > later["chunksScheduled"] + 5, 10, "play again")
    assert editor.server.stop() == 0, f"exit code after SIGINT while playing; stderr: {editor.server.stderr()!r}"
    editor.wait(lambda: editor.state("stats")["connected"] is False, 10, "the page to see the socket close")
    assert editor.element("btn-play").get_attribute("aria-pressed") == "false"
    assert editor.element("error-request").is_displayed()


# ---- (i) the saved shape is in the library ------------------------------------------------------------


def test_saved_shape_is_listed_as_user(editor):
    editor.new_shape()
    editor.set_field("field-name", "listed-shape")
    editor.click_at(0.5, 700)
    editor.settle()
    shape = editor.shape
    editor.click("btn-save")
    editor.wait(lambda: editor.state("lastSave") is not None, 15, "Save to answer")

    status, body, _ = editor.server.api("GET", "/api/shapes")
    assert status == 200
    entries = [s for s in body["shapes"] if s["name"] == "listed-shape"]
    assert entries and entries[0]["source"] == "user", body
    status, body, _ = editor.server.api("GET", "/api/shapes/listed-shape")
    assert status == 200 and body["source"] == "user"
    assert body["shape"]["points"] == shape["points"]
    option = editor.driver.find_element(By.CSS_SELECTOR, "[data-testid='shape-select'] option[value='listed-shape']")
    assert option.get_attribute("data-source") == "user"
    assert editor.element("shape-select").get_attribute("value") == "listed-shape"

    # Opening another shape and coming back loads the saved one; opening is one undo step.
    undo_before = editor.state("history")["undo"]
    editor.element("shape-select").find_element(By.CSS_SELECTOR, "option[value='siren']").click()
    editor.wait(lambda: editor.shape["name"] == "siren", 10, "siren to open")
    editor.settle()
    assert editor.state("history")["undo"] == undo_before + 1
    editor.click("btn-undo")
    editor.settle()
    assert editor.shape == shape


# ---- the initial shape, the controls and export ---------------------------------------------------------


@pytest.mark.parametrize("editor", ["siren"], indirect=True)
def test_opens_the_initial_shape_and_exports_it(editor):
    status, body, _ = editor.server.api("GET", "/api/info")
    assert status == 200
    initial = body["initial"]  # the contract's name, or the shape itself beside "initialName"
    assert initial == "siren" or (isinstance(initial, dict) and body.get("initialName") == "siren"), body
    status, preset, _ = editor.server.api("GET", "/api/shapes/siren")
    shape = editor.shape
    assert shape["name"] == "siren" and shape["points"] == preset["shape"]["points"]
    assert editor.element("field-wave").get_attribute("value") == shape["wave"]
    assert float(editor.element("field-duration").get_attribute("value")) == shape["duration"]
    assert editor.element("root-note-name").text == "D5"  # siren's root note 74
    waves = [o.get_attribute("value") for o in editor.element("field-wave").find_elements(By.TAG_NAME, "option")]
    assert waves == body["waves"]
    assert editor.state("history") == {"undo": 0, "redo": 0}

    editor.element("export-format").find_element(By.CSS_SELECTOR, "option[value='wav']").click()
    editor.set_field("export-cycles", "2")
    editor.click("btn-export")
    editor.wait(lambda: editor.state("lastExport") is not None, 30, "the export")
    exported = editor.state("lastExport")
    assert exported["filename"] == "siren.wav" and exported["bytes"] > 2 * 1.2 * 48000, exported
