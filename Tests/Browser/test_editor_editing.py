"""Issue 22, point 3 (editing): the curve edited as in an MSEG editor — a selection of several
points moved, deleted, copied and pasted; a point's time and frequency typed exactly; the arrow
keys nudging; a time grid to snap to.

Each test drives the real page in headless Chromium with real pointer and key events and measures
the shape the page sends and saves (the saved file read back), the readout, or the canvas pixels.
"""

import json
import math

import pytest
from selenium.webdriver.common.keys import Keys

from test_editor import tolerances
from test_editor_defects import leave_page, open_with, save_named

CENT = 2 ** (1 / 1200)


def shape_with(points, name="edit-me", duration=1.0, low=20, high=2000):
    return {"name": name, "duration": duration, "minFrequency": low, "maxFrequency": high,
            "points": [list(p) for p in points], "wave": "sine", "fidelity": 1000}


@pytest.fixture
def page(start_server, driver, tmp_path, request):
    """A page opened on a shape of six points (the test's own when it is parametrized)."""
    points = getattr(request, "param", None) or [(0, 440), (0.2, 300), (0.4, 500), (0.6, 700), (0.8, 400), (1, 440)]
    editor = open_with(start_server, driver, tmp_path, shape_with(points))
    yield editor
    driver.save_screenshot(str(tmp_path / "page.png"))
    from conftest import screenshot_dir
    driver.save_screenshot(str(screenshot_dir() / f"{request.node.name}.png"))
    leave_page(driver)


def click_point(editor, point, shift=False):
    """A click on the point's circle, with Shift held when asked (as a person holds the key)."""
    dx, dy = editor.offset(*editor.to_pixel(point[0], point[1]))
    chain = editor.actions()
    if shift:
        chain.key_down(Keys.SHIFT)
    chain.move_to_element_with_offset(editor.canvas(), dx, dy).click()
    if shift:
        chain.key_up(Keys.SHIFT)
    chain.perform()


def drag(editor, start, end, steps=10, shift=False):
    """Press at `start` (t, f), move in steps, release at `end`."""
    x0, y0 = editor.to_pixel(*start)
    x1, y1 = editor.to_pixel(*end)
    chain = editor.actions()
    if shift:
        chain.key_down(Keys.SHIFT)
    dx, dy = editor.offset(x0, y0)
    chain.move_to_element_with_offset(editor.canvas(), dx, dy).click_and_hold()
    for i in range(1, steps + 1):
        dx, dy = editor.offset(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
        chain.move_to_element_with_offset(editor.canvas(), dx, dy)
    chain.release()
    if shift:
        chain.key_up(Keys.SHIFT)
    chain.perform()


def key(editor, name, *modifiers):
    editor.press(name, *modifiers)


def undo_steps(editor):
    return editor.state("history")["undo"]


def saved_points(editor, name):
    """Saves the shape as `name` and reads the file the server wrote."""
    answer = save_named(editor, name)
    assert answer and answer.get("name") == name, answer
    return json.loads((editor.server.presets / f"{name}.json").read_text())["points"]


def close(a, b, tolerance):
    return abs(a - b) <= tolerance


# ---- multi-select: Shift-click, box, move, delete -----------------------------------------------


def test_a_selection_of_points_moves_and_is_deleted_as_one(page):
    editor = page
    start = editor.shape["points"]
    p = start

    # Click selects one; Shift-click adds and removes.
    click_point(editor, p[1])
    assert editor.state("selection") == [1]
    click_point(editor, p[3], shift=True)
    click_point(editor, p[2], shift=True)
    assert editor.state("selection") == [1, 2, 3]
    click_point(editor, p[2], shift=True)
    assert editor.state("selection") == [1, 3], "Shift-click on a selected point takes it out"
    assert editor.shape["points"] == start, "selecting moves nothing"

    # Dragging one of them moves both: same time shift, same interval (log axis: a ratio), the
    # grabbed point under the pointer within the 2 px the pointer's integer offsets allow.
    seconds, (_, octaves) = tolerances(editor, 2.0)
    before = undo_steps(editor)
    drag(editor, p[1], (0.25, 600))
    editor.settle()
    moved = editor.shape["points"]
    dt, ratio = moved[1][0] - 0.2, moved[1][1] / 300
    assert close(dt, 0.05, seconds) and abs(math.log2(ratio) - 1) <= octaves, moved
    assert close(moved[3][0], 0.6 + dt, 1e-6) and close(moved[3][1], 700 * ratio, 0.01), moved
    assert [moved[i] for i in (0, 2, 4, 5)] == [start[i] for i in (0, 2, 4, 5)], "unselected points stay"
    assert undo_steps(editor) == before + 1, "a group drag is one undo step"

    # A group stops at an unselected neighbour: dragged far left, point 1 halts after point 0.
    drag(editor, moved[1], (0.0, moved[1][1]), steps=6)
    editor.settle()
    held = editor.shape["points"]
    assert 0 < held[1][0] < 0.002 and held[1][0] > held[0][0], held
    assert close(held[3][0] - held[1][0], moved[3][0] - moved[1][0], 2e-6), "the group keeps its spacing"
    times = [q[0] for q in held]
    assert times == sorted(times) and len(set(times)) == len(times)

    # Undo takes the whole group move back in one step.
    key(editor, "z", Keys.CONTROL)
    editor.settle()
    assert editor.shape["points"] == moved

    # A box dragged on empty space selects exactly the points inside it.
    editor.press(Keys.ESCAPE)
    assert editor.state("selection") == []
    drag(editor, (0.33, 1900), (0.85, 25))
    assert editor.state("selection") == [2, 3, 4], editor.state("selection")
    assert editor.shape["points"] == moved, "a box places no point"
    # Shift-box adds to it.
    drag(editor, (0.2, 1900), (0.3, 25), shift=True)
    assert editor.state("selection") == [1, 2, 3, 4]

    # Delete removes the whole selection in one undo step; Undo brings back exactly the shape.
    before = undo_steps(editor)
    editor.press(Keys.DELETE)
    editor.settle()
    assert editor.shape["points"] == [moved[0], moved[5]]
    assert undo_steps(editor) == before + 1
    key(editor, "z", Keys.CONTROL)
    editor.settle()
    assert editor.shape["points"] == moved

    # Never fewer than two points: Delete of everything is refused, nothing changes.
    key(editor, "a", Keys.CONTROL)
    assert editor.state("selection") == list(range(len(moved)))
    editor.press(Keys.DELETE)
    editor.settle()
    assert editor.shape["points"] == moved

    assert saved_points(editor, "grouped") == moved


# ---- copy, cut, paste ---------------------------------------------------------------------------


@pytest.mark.parametrize("page", [[(0, 440), (0.1, 200), (0.2, 400), (1, 440)]], indirect=True)
def test_copy_cut_and_paste_a_group_keep_the_shape_valid(page):
    editor = page
    start = editor.shape["points"]
    drag(editor, (0.05, 1900), (0.25, 25))
    assert editor.state("selection") == [1, 2]

    # Ctrl-C, Ctrl-V: a copy just after the selection, times shifted, frequencies kept.
    key(editor, "c", Keys.CONTROL)
    before = undo_steps(editor)
    key(editor, "v", Keys.CONTROL)
    editor.settle()
    points = editor.shape["points"]
    assert points[:3] == start[:3] and points[-1] == start[-1]
    assert [q[1] for q in points[3:5]] == [200, 400]
    assert close(points[3][0], 0.201, 1e-9) and close(points[4][0], 0.301, 1e-9), points
    assert undo_steps(editor) == before + 1, "a paste is one undo step"
    assert editor.state("selection") == [3, 4], "the pasted points are selected"

    # Pasting again repeats the pattern after the pasted copy; the tail that would pass the end
    # of the shape is left out and the points there are replaced: the times keep increasing.
    for _ in range(8):
        key(editor, "v", Keys.CONTROL)
    editor.settle()
    points = editor.shape["points"]
    times = [q[0] for q in points]
    assert times == sorted(times) and len(set(times)) == len(times), points
    assert times[-1] <= 1.0 and all(q[1] in (200, 400, 440) for q in points)
    status, body, _ = editor.server.api("POST", "/api/analyse", editor.shape)
    assert status == 200, body

    # Cut takes the selection out (one step) and pastes where asked: after the new selection.
    key(editor, "z", Keys.CONTROL)
    editor.settle()
    n = len(editor.shape["points"])
    click_point(editor, editor.shape["points"][1])
    key(editor, "x", Keys.CONTROL)
    editor.settle()
    assert len(editor.shape["points"]) == n - 1 and editor.shape["points"][1] == start[2]
    click_point(editor, editor.shape["points"][1])
    key(editor, "v", Keys.CONTROL)
    editor.settle()
    # Pasted just after (0.2, 400): it takes the place of the point already at 0.201 s.
    assert editor.shape["points"][2] == [0.201, 200] and len(editor.shape["points"]) == n - 1, editor.shape["points"]

    saved = saved_points(editor, "pasted")
    assert saved == editor.shape["points"]


# ---- a point typed exactly ----------------------------------------------------------------------


def test_a_point_is_typed_exactly_in_seconds_hertz_or_note_and_cents(page):
    editor = page
    click_point(editor, editor.shape["points"][2])
    assert editor.element("point-time").get_attribute("value") == "0.4"
    assert editor.element("point-frequency").get_attribute("value") == "500"

    before = undo_steps(editor)
    editor.set_field("point-time", "0.4375")
    editor.settle()
    assert editor.shape["points"][2] == [0.4375, 500]
    assert undo_steps(editor) == before + 1
    editor.set_field("point-frequency", "A4 +12")
    editor.settle()
    want = 440 * 2 ** (12 / 1200)
    assert close(editor.shape["points"][2][1], want, 1e-6), editor.shape["points"][2]
    assert editor.element("point-pitch").text == "A4 +12¢"
    click_point(editor, editor.shape["points"][4])
    editor.set_field("point-frequency", "C#3 -5")
    editor.settle()
    assert close(editor.shape["points"][4][1], 440 * 2 ** ((49 - 69 - 0.05) / 12), 1e-6)
    editor.set_field("point-frequency", "261.6256")
    editor.settle()
    assert editor.shape["points"][4] == [0.8, 261.6256]

    # Invalid entries are said under the box while typing, before Enter; nothing moves.
    shape = editor.shape

    def typed(testid, text):
        box = editor.element(testid)
        box.click()
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(text)
        error = editor.element(f"error-{testid}")
        assert error.is_displayed(), f"{text!r} in {testid}: no error shown while typing"
        return error.text

    assert "between" in typed("point-time", "0.5") and "0.6" in editor.element("error-point-time").text
    assert "past the end" in typed("point-time", "1.5")
    assert "not a time" in typed("point-time", "soon")
    editor.element("point-time").send_keys(Keys.ENTER)
    assert "above Max" in typed("point-frequency", "A9")
    assert "not a frequency" in typed("point-frequency", "H2")
    assert "below Min" in typed("point-frequency", "10")
    editor.element("point-frequency").send_keys(Keys.TAB)
    editor.settle()
    assert editor.shape == shape, "an invalid entry moves nothing"

    saved = saved_points(editor, "typed")
    assert saved[2][0] == 0.4375 and close(saved[2][1], want, 1e-6)
    assert saved[4] == [0.8, 261.6256]


# ---- arrow keys ---------------------------------------------------------------------------------


def test_arrow_keys_nudge_the_selection_one_undo_step_a_press(page):
    editor = page
    start = editor.shape["points"]
    click_point(editor, start[2])
    click_point(editor, start[3], shift=True)
    editor.blur()
    before = undo_steps(editor)

    key(editor, Keys.ARROW_RIGHT)   # 1 % of the duration, no grid
    key(editor, Keys.ARROW_UP)      # one cent
    editor.settle()
    p = editor.shape["points"]
    assert close(p[2][0], 0.41, 1e-9) and close(p[3][0], 0.61, 1e-9), p
    assert close(p[2][1], 500 * CENT, 0.0006) and close(p[3][1], 700 * CENT, 0.0006), p
    assert undo_steps(editor) == before + 2, "one undo step per key press"

    key(editor, Keys.ARROW_DOWN, Keys.SHIFT)   # a semitone down
    key(editor, Keys.ARROW_LEFT, Keys.SHIFT)   # 10 % of the duration back
    editor.settle()
    p = editor.shape["points"]
    assert close(p[2][0], 0.31, 1e-9) and close(p[3][0], 0.51, 1e-9), p
    assert close(p[2][1], 500 * CENT / 2 ** (1 / 12), 0.002), p
    assert [p[i] for i in (0, 1, 4, 5)] == [start[i] for i in (0, 1, 4, 5)]

    # Never past a neighbour: Shift-Left again would put point 2 before point 1 (0.2 s).
    key(editor, Keys.ARROW_LEFT, Keys.SHIFT)
    key(editor, Keys.ARROW_LEFT, Keys.SHIFT)
    editor.settle()
    p = editor.shape["points"]
    assert p[1] == start[1] and p[2][0] > p[1][0] and p[2][0] - p[1][0] < 0.002, p
    times = [q[0] for q in p]
    assert times == sorted(times) and len(set(times)) == len(times)

    # With a time grid, Left/Right step by one grid division (1/8 of the duration).
    editor.element("time-grid").find_element("css selector", "option[value='8']").click()
    click_point(editor, p[4])
    editor.blur()
    key(editor, Keys.ARROW_RIGHT)
    editor.settle()
    assert close(editor.shape["points"][4][0], 0.8 + 0.125, 1e-9)

    # Undo steps back press by press.
    key(editor, "z", Keys.CONTROL)
    editor.settle()
    assert editor.shape["points"][4] == start[4]


# ---- the time grid ------------------------------------------------------------------------------


def grid_column_colour(editor, t):
    """The mean colour of the canvas column at time t, over the plot's lower third (no curve there)."""
    m = editor.mapping()
    x, _ = editor.to_pixel(t, 440, m)
    p = m["plot"]
    return editor.driver.execute_script("""
        const [x, top, bottom] = arguments;
        const canvas = document.querySelector("[data-testid='curve-canvas']");
        const scale = canvas.width / canvas.getBoundingClientRect().width;
        const data = canvas.getContext("2d").getImageData(Math.floor(x * scale), Math.round(top * scale), 1,
                                                           Math.round((bottom - top) * scale)).data;
        const sum = [0, 0, 0];
        for (let i = 0; i < data.length; i += 4) for (let c = 0; c < 3; c++) sum[c] += data[i + c];
        return sum.map((s) => s / (data.length / 4));""", x, p["top"] + p["height"] * 0.7, p["top"] + p["height"] * 0.95)


@pytest.mark.parametrize("page", [[(0, 440), (1, 440)]], indirect=True)
def test_time_grid_is_drawn_and_points_snap_to_it(page):
    editor = page
    plain = grid_column_colour(editor, 0.375)

    editor.element("time-grid").find_element("css selector", "option[value='8']").click()
    editor.wait(lambda: grid_column_colour(editor, 0.375) != plain, 5, "the grid line at 3/8 to be drawn")
    line = grid_column_colour(editor, 0.375)
    assert line[2] > plain[2] + 10, f"a grid line is drawn at 3/8 of the duration: {plain} -> {line}"
    assert grid_column_colour(editor, 0.3125) == plain, "no line between divisions"

    # A click lands on the nearest division; a drag too.
    editor.click_at(0.36, 600)
    editor.settle()
    points = editor.shape["points"]
    assert points[1][0] == 0.375, points
    drag(editor, points[1], (0.61, 800))
    editor.settle()
    assert editor.shape["points"][1][0] == 0.625, editor.shape["points"]

    # Off again: a click lands where it is.
    editor.element("time-grid").find_element("css selector", "option[value='0']").click()
    editor.click_at(0.2, 300)
    editor.settle()
    t = editor.shape["points"][1][0]
    assert t != 0.25 and close(t, 0.2, 0.004), editor.shape["points"]
    assert saved_points(editor, "gridded")[2][0] == 0.625


# ---- segment kinds ------------------------------------------------------------------------------


def hover(editor, t, f):
    """Rests the pointer over (t, f) and returns the readout's text."""
    dx, dy = editor.offset(*editor.to_pixel(t, f))
    editor.actions().move_to_element_with_offset(editor.canvas(), dx, dy).perform()
    return editor.element("curve-readout").get_attribute("textContent")


def readout_curve(text):
    """The readout's 'curve F Hz' value (the curve's sounding frequency under the pointer)."""
    import re
    match = re.search(r"curve ([0-9.]+) (k?Hz)", text)
    assert match, f"no curve value in the readout {text!r}"
    return float(match.group(1)) * (1000 if match.group(2) == "kHz" else 1)


def drawn_y(editor, t):
    """The drawn curve's row (CSS px) in the column of time t: the middle of its pixels there."""
    from test_editor_defects import drawn_rows
    rows = drawn_rows(editor, t)
    assert rows, f"no drawn curve at t={t}"
    return (min(rows) + max(rows)) / 2


def played_at(played, t):
    """The played curve's frequency at t: a hold's step is a pair of samples at one time, the
    later one counting from that time on."""
    for (t0, f0), (t1, f1) in zip(played, played[1:]):
        if t0 <= t < t1:
            return f0 + (f1 - f0) * (t - t0) / (t1 - t0)
    return played[-1][1]


def set_log_axis(editor, on):
    editor.set_checkbox("log-scale", on)
    editor.wait(lambda: editor.mapping()["log"] == on, 5, "the axis to change")


@pytest.mark.parametrize("page", [[(0, 110), (1, 880)]], indirect=True)
def test_segment_kinds_are_drawn_as_they_sound_and_switched_from_the_page(page):
    """A 110→880 Hz one-second glide: linear passes 495 Hz at 0.5 s, exponential 311 Hz (constant
    semitones per second), hold stays at 110 Hz until the next point. The drawn curve (on both
    axes), the readout and the server's played curve say the same; K and the menu switch kinds."""
    editor = page
    sounding = {"linear": lambda t: 110 + 770 * t, "exponential": lambda t: 110 * 8 ** t, "hold": lambda t: 110.0}

    def check(kind):
        editor.settle()
        want = sounding[kind](0.5)
        # The server's played curve (fidelity N samples of the curve as the engine builds it).
        # Its samples are joined linearly in hertz, as the integrator joins them.
        played = editor.state("played")
        at_half = played_at(played, 0.5)
        assert abs(at_half - want) / want < 0.01, f"{kind}: played {at_half:.1f} Hz at 0.5 s (want {want:.1f} Hz): {played[:8]}…"
        # The readout names the time under the pointer (to 1 ms) and the curve's frequency there.
        text = hover(editor, 0.5, 1500)
        t = float(text.split(" s")[0])
        assert abs(t - 0.5) < 0.003 and abs(readout_curve(text) - sounding[kind](t)) <= 0.5, f"{kind}: readout {text!r}"
        for log in (True, False):
            set_log_axis(editor, log)
            _, y = editor.to_pixel(0.5, want)
            assert abs(drawn_y(editor, 0.5) - y) <= 2.5, f"{kind}, log axis {log}: drawn curve off the sound"
        set_log_axis(editor, True)

    check("linear")
    click_point(editor, (0, 110))
    editor.blur()
    before = undo_steps(editor)
    key(editor, "k")
    editor.settle()
    assert editor.shape["points"] == [[0, 110, "exponential"], [1, 880]]
    assert undo_steps(editor) == before + 1, "a kind switch is one undo step"
    assert editor.element("point-kind").get_attribute("value") == "exponential"
    check("exponential")

    # A point placed inside an exponential segment begins an exponential segment too: the sound
    # of the glide does not change.
    editor.click_at(0.25, 1500)
    editor.settle()
    points = editor.shape["points"]
    assert len(points) == 3 and points[1][2:] == ["exponential"], points
    key(editor, "z", Keys.CONTROL)
    editor.settle()

    # The menu beside the typed point: hold.
    click_point(editor, (0, 110))
    editor.element("point-kind").find_element("css selector", "option[value='hold']").click()
    editor.settle()
    assert editor.shape["points"] == [[0, 110, "hold"], [1, 880]]
    check("hold")
    assert saved_points(editor, "held") == [[0, 110, "hold"], [1, 880]]

    # K cycles on: hold → linear, written without a kind.
    click_point(editor, (0, 110))
    editor.blur()
    key(editor, "k")
    editor.settle()
    assert editor.shape["points"] == [[0, 110], [1, 880]]
    check("linear")


def test_the_page_and_the_server_accept_the_same_points(page):
    """Points with kinds: the page's own check (js/shape-model.js) and the server agree."""
    editor = page
    base = editor.shape
    cases = {"exponential": [[0, 440, "exponential"], [1, 440]], "hold": [[0, 440, "hold"], [1, 440]],
             "explicit linear": [[0, 440, "linear"], [1, 440]], "last has a kind": [[0, 440], [1, 440, "hold"]],
             "unknown kind": [[0, 440, "expo"], [1, 440]], "kind a number": [[0, 440, 3], [1, 440]],
             "kind null": [[0, 440, None], [1, 440]], "four elements": [[0, 440, "hold", 1], [1, 440]],
             "one element": [[0], [1, 440]], "frequency text": [[0, "440"], [1, 440]]}
    verdicts = editor.verdicts({label: dict(base, points=points) for label, points in cases.items()})
    differ = {k: v for k, v in verdicts.items() if v[0] != v[1]}
    assert not differ, f"page and server disagree (page ok, server ok, server's line): {differ}"
    assert [label for label, v in verdicts.items() if v[1]] == ["exponential", "hold", "explicit linear", "last has a kind"]
