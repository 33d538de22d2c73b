"""Issue 22, point 3 (the view): zoom and pan on both axes, the playhead, and labels a newcomer reads.

Each test drives the real page in headless Chromium against a real `toneshaper edit` with real
wheel, pointer and key events, and measures what the musician sees: the window of the curve view
(`window.toneshaperEditor.view()`), the points the clicks make, the playhead's place and pixels.
"""

import math
import time

import pytest
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.mouse_button import MouseButton
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from conftest import screenshot_dir

PLAYHEAD = (0x8F, 0xD3, 0xFF)  # the page's own note's playhead (js/playhead.js)


def wheel(editor, x, y, dy, *modifiers):
    """Turns the wheel over canvas pixel (x, y) by dy px (< 0: away from you, zoom in), with keys
    held. Returns where the wheel event was, in canvas pixels (WebDriver rounds the offset)."""
    editor.driver.execute_script("""
        const canvas = document.querySelector("[data-testid='curve-canvas']");
        window.__wheelAt = null;
        canvas.addEventListener("wheel", (e) => {
            const r = canvas.getBoundingClientRect();
            window.__wheelAt = [e.clientX - r.left, e.clientY - r.top];
        }, { capture: true, once: true });""")
    dx_, dy_ = editor.offset(x, y)
    chain = ActionChains(editor.driver)
    for key in modifiers:
        chain.key_down(key)
    chain.scroll_from_origin(ScrollOrigin.from_element(editor.canvas(), dx_, dy_), 0, dy)
    for key in reversed(modifiers):
        chain.key_up(key)
    chain.perform()
    return tuple(editor.js("window.__wheelAt"))


def middle_drag(editor, start, end):
    """Drags with the middle button from canvas pixel `start` to `end`."""
    builder = ActionBuilder(editor.driver, duration=10)
    canvas = editor.canvas()
    builder.pointer_action.move_to(canvas, *editor.offset(*start))
    builder.pointer_action.pointer_down(MouseButton.MIDDLE)
    for k in range(1, 11):
        x = start[0] + (end[0] - start[0]) * k / 10
        y = start[1] + (end[1] - start[1]) * k / 10
        builder.pointer_action.move_to(canvas, *editor.offset(x, y))
    builder.pointer_action.pointer_up(MouseButton.MIDDLE)
    builder.perform()


def window(editor):
    m = editor.mapping()
    return m, (m["start"], m["end"], m["low"], m["high"])


def zoomed_in(editor, x, y, times=4, *modifiers):
    """Zooms in by `times` notches over (x, y); returns where the pointer really was."""
    for _ in range(times):
        at = wheel(editor, x, y, -300, *modifiers)
    return at


def octaves(low, high):
    return math.log2(high / low)


def test_wheel_zooms_time_around_the_pointer_and_fit_shows_the_whole_shape(editor):
    editor.new_shape()
    m0 = editor.mapping()
    assert "start" in m0, "the view says which window of the curve is on screen"
    assert not editor.element("view-zoom").is_displayed(), "no zoom to tell of, nothing to fit, while the whole shape shows"
    x, y = editor.to_pixel(0.25, 440, m0)
    x, y = zoomed_in(editor, x, y)
    m, (start, end, low, high) = window(editor)
    before = editor.to_value(x, y, m0)
    assert end - start < 0.4, f"four notches of the wheel show less than 0.4 s of 1 s: {start}…{end}"
    assert (low, high) == (m0["low"], m0["high"]), "the plain wheel leaves the frequency axis alone"
    after = editor.to_value(x, y, m)
    assert abs(after[0] - before[0]) < 1e-3, f"the time under the pointer stays there: {before[0]} → {after[0]}"
    # The time labels follow: finer steps, all inside the window.
    steps0 = m0["timeTicks"][1] - m0["timeTicks"][0]
    ticks = m["timeTicks"]
    assert ticks[1] - ticks[0] < steps0 and all(start - 1e-9 <= t <= end + 1e-9 for t in ticks), ticks
    assert len(ticks) >= 3
    label = editor.element("zoom-label").text
    assert label.startswith("time ×") and "freq ×1.0" in label, label
    assert float(label.split("×")[1].split()[0]) > 2.5, label

    assert editor.element("view-zoom").is_displayed()
    editor.click("btn-fit")
    m, (start, end, low, high) = window(editor)
    assert (start, end) == (0, 1) and (low, high) == (20, 2000), m
    assert not editor.element("view-zoom").is_displayed()
    assert editor.state("history")["undo"] == 1, "zooming is not an edit"

    # Another shape opened (or New) is shown whole.
    zoomed_in(editor, x, y, 2)
    zoomed_in(editor, x, y, 2, Keys.CONTROL)
    editor.click("btn-undo")
    editor.settle()
    assert editor.mapping()["zoom"]["time"] > 1.5, "undo keeps the view where it is"
    editor.new_shape()
    assert window(editor)[1] == (0, 1, 20, 2000)


def test_ctrl_and_shift_wheel_zoom_frequency_and_the_note_labels_follow(editor):
    editor.new_shape()
    m0 = editor.mapping()
    x, y = editor.to_pixel(0.5, 440, m0)
    x, y = zoomed_in(editor, x, y, 3, Keys.CONTROL)
    m1, (start, end, low, high) = window(editor)
    assert (start, end) == (0, 1), "Ctrl-wheel leaves the time axis alone"
    assert octaves(low, high) < 0.5 * octaves(20, 2000), f"{low}…{high} Hz"
    under = editor.to_value(x, y, m0)[1]
    assert abs(editor.to_value(x, y, m1)[1] / under - 1) < 1e-6, "the frequency under the pointer stays there"
    # More notes are named per octave once they are far enough apart to read.
    assert len(m1["noteTicks"]) / octaves(low, high) > 1.5 * len(m0["noteTicks"]) / octaves(20, 2000), \
        (m0["noteTicks"], m1["noteTicks"])
    assert all(low <= f <= high for f in m1["hertzTicks"]) and len(m1["hertzTicks"]) >= 3, m1["hertzTicks"]

    zoomed_in(editor, x, y, 2, Keys.SHIFT)
    m2, (_, _, low2, high2) = window(editor)
    assert octaves(low2, high2) < 0.75 * octaves(low, high), "Shift-wheel zooms frequency too"
    assert "A4" in m2["noteTicks"]
    editor.click("btn-fit")
    assert window(editor)[1] == (0, 1, 20, 2000)


def test_points_stay_editable_at_any_zoom(editor):
    editor.new_shape()
    x, y = editor.to_pixel(0.5, 440)
    zoomed_in(editor, x, y, 6)
    zoomed_in(editor, x, y, 6, Keys.CONTROL)
    m, (start, end, low, high) = window(editor)
    assert end - start < 0.1 and octaves(low, high) < 1.5, m
    undo = editor.state("history")["undo"]
    t, f = start + 0.3 * (end - start), low * (high / low) ** 0.7
    editor.click_at(t, f)
    editor.settle()
    points = editor.shape["points"]
    assert len(points) == 3
    placed = points[1]
    # A pixel is now a small step: the point lands within a pixel's worth of time and pitch.
    assert abs(placed[0] - t) <= 1.5 * (end - start) / m["plot"]["width"], (placed, t)
    assert abs(math.log2(placed[1] / f)) <= 1.5 * octaves(low, high) / m["plot"]["height"], (placed, f)
    # Drag it further along, still zoomed.
    x0, y0 = editor.to_pixel(*placed)
    x1, y1 = editor.to_pixel(start + 0.6 * (end - start), low * (high / low) ** 0.4)
    editor.drag_pixels([(x0, y0), ((x0 + x1) / 2, (y0 + y1) / 2), (x1, y1)])
    editor.settle()
    moved = editor.shape["points"][1]
    want = editor.to_value(x1, y1)
    assert abs(moved[0] - want[0]) <= 1.5 * (end - start) / m["plot"]["width"], (moved, want)
    assert abs(math.log2(moved[1] / want[1])) <= 0.01, (moved, want)
    assert editor.state("history")["undo"] == undo + 2, "a click and a drag: two undo steps"


def test_middle_drag_and_space_drag_pan_without_editing(editor):
    editor.new_shape()
    x, y = editor.to_pixel(0.5, 440)
    zoomed_in(editor, x, y, 4)
    zoomed_in(editor, x, y, 3, Keys.CONTROL)
    m, (start, end, low, high) = window(editor)
    shape, history = editor.shape, editor.state("history")
    width, height = m["plot"]["width"], m["plot"]["height"]

    # Middle button: the curve follows the hand (dragged left 150 px: later times come into view;
    # dragged down 60 px: higher frequencies).
    middle_drag(editor, (x, y), (x - 150, y + 60))
    m1, (s1, e1, l1, h1) = window(editor)
    assert abs((s1 - start) - 150 / width * (end - start)) < 2e-3, (start, s1)
    assert abs(e1 - s1 - (end - start)) < 1e-9, "a pan keeps the zoom"
    assert abs(octaves(low, l1) - 60 / height * octaves(low, high)) < 0.01, (low, l1)

    # Space held over the curve turns a left-button drag into a pan too.
    ActionChains(editor.driver).move_to_element_with_offset(editor.canvas(), *editor.offset(x, y)).perform()
    ActionChains(editor.driver).key_down(Keys.SPACE).perform()
    try:
        editor.drag_pixels([(x, y), (x + 75, y), (x + 150, y - 60)])
    finally:
        ActionChains(editor.driver).key_up(Keys.SPACE).perform()
    m2, (s2, e2, l2, h2) = window(editor)
    assert abs(s2 - start) < 2e-3 and abs(octaves(low, l2)) < 0.01, ((start, low), (s2, l2))
    assert editor.shape == shape and editor.state("history") == history, "panning never edits the shape"

    # Held at the ends: no pan goes before 0 s.
    for _ in range(4):
        middle_drag(editor, (x - 200, y), (x + 400, y))
    assert window(editor)[1][0] == 0


def test_play_moves_a_playhead_across_the_curve_at_the_shapes_duration(editor):
    editor.new_shape()
    editor.set_field("field-duration", "2")
    editor.settle()
    assert editor.shape["duration"] == 2
    editor.click("btn-play")
    editor.wait(lambda: len(editor.js("window.toneshaperEditor.playheads()")["at"]) == 1, 10, "a playhead")
    first = editor.js("window.toneshaperEditor.playheads()")
    time.sleep(0.7)
    second = editor.js("window.toneshaperEditor.playheads()")
    head1, head2 = first["at"][0], second["at"][0]
    assert head1["source"] == "page" and head1["note"] == 69 and not head1["released"]
    elapsed = (second["now"] - first["now"]) / 1000
    moved = (head2["time"] - head1["time"]) % 2
    assert abs(moved - elapsed) < 0.1, f"the playhead moved {moved:.3f} s of the 2 s pass in {elapsed:.3f} s"

    # It is drawn: a vertical line in the playhead's colour where the view puts that time.
    drawn = editor.js("""(() => {
        const h = window.toneshaperEditor.playheads().drawn[0];
        const canvas = document.querySelector("[data-testid='curve-canvas']");
        const m = window.toneshaperEditor.view();
        const ratio = canvas.width / canvas.getBoundingClientRect().width;
        const ctx = canvas.getContext("2d");
        const column = [];
        for (const v of [0.15, 0.35, 0.85]) {
            const y = m.plot.top + v * m.plot.height;
            column.push(Array.from(ctx.getImageData(Math.round(Math.round(h.x) * ratio), Math.round(y * ratio), 1, 1).data));
        }
        return { h, column, m };
    })()""")
    h, m = drawn["h"], drawn["m"]
    expected_x = m["plot"]["left"] + m["plot"]["width"] * h["time"] / 2
    assert abs(h["x"] - expected_x) < 0.5
    for rgba in drawn["column"]:
        assert all(abs(a - b) <= 40 for a, b in zip(rgba[:3], PLAYHEAD)), f"{rgba} is not the playhead's colour"
    # The dot where the line meets the curve: at the curve's frequency (flat A4).
    assert abs(h["y"] - editor.to_pixel(h["time"], 440)[1]) < 0.5

    # Stop: the note's release passes and the playhead leaves.
    editor.click("btn-play")
    editor.wait(lambda: not editor.js("window.toneshaperEditor.playheads()")["at"], 5, "the playhead to leave")


def test_undo_counter_and_waveform_zoom_are_labelled_in_words(editor):
    editor.new_shape()
    editor.click_at(0.3, 330)
    editor.click_at(0.6, 550)
    editor.settle()
    steps = editor.state("history")
    count = editor.element("history-count")
    assert count.text == f"Undo {steps['undo']} · Redo 0", count.text
    editor.click("btn-undo")
    editor.settle()
    assert count.text == f"Undo {steps['undo'] - 1} · Redo 1", count.text
    assert "to undo" in count.get_attribute("title") and "Ctrl+Z" in count.get_attribute("title")

    # The waveform of a quiet pass is magnified: the view says so, and by how much, in words.
    canvas = editor.element("waveform-canvas")
    for amplitude in ("0.02", "1"):
        editor.set_field("field-amplitude", amplitude)
        editor.settle()
        peak = max(abs(v) for v in editor.state("waveform")["samples"])
        k = min(64, 2 ** math.floor(math.log2(1 / peak)))
        words = canvas.get_attribute("aria-label")
        assert canvas.get_attribute("title") == words
        if k > 1:
            assert f"magnified ×{k} so a quiet pass can be read" in words and "true sample values" in words, words
        else:
            assert "at its true level (not magnified)" in words, words
        assert f"Peak {20 * math.log10(peak):.1f} dBFS" in words, (peak, words)
    assert k == 2, "at full amplitude the engine's headroom leaves a sine's pass at about −9 dBFS: shown ×2"


@pytest.mark.parametrize("editor", ["article-curve"], indirect=True)
def test_the_readme_picture_shows_zoom_a_selection_and_a_playhead(editor):
    """The README's picture of the editor (docs/editor.png) is this test's screenshot,
    .build/browser-screenshots/readme-editor.png: the article's curve played at N = 5, zoomed in a
    little on both axes, a point selected, and the note playing with its playhead on the curve."""
    assert editor.shape["name"] == "article-curve"
    editor.set_field("field-fidelity", "5")
    editor.settle()
    points = editor.shape["points"]
    x, y = editor.to_pixel(0.75, 100)
    zoomed_in(editor, x, y, 1)
    zoomed_in(editor, x, y, 1, Keys.CONTROL)
    m = editor.mapping()
    assert m["zoom"]["time"] > 1.2 and m["zoom"]["pitch"] > 1.2, m["zoom"]
    # Select a point in view (a press on it picks it up; released in place it stays put).
    inside = [i for i, (t, f) in enumerate(points) if m["start"] < t < m["end"] and m["low"] < f < m["high"]]
    assert inside, (points, m)
    index = inside[-1]
    editor.click_pixel(*editor.to_pixel(*points[index]))
    assert editor.state("selected") == index
    assert editor.shape["points"] == points, "selecting a point does not move it"
    editor.click("btn-play")
    editor.wait(lambda: editor.js("window.toneshaperEditor.playheads()")["drawn"], 10, "a playhead in view")
    # The playhead in the middle of the view, then the picture.
    editor.wait(lambda: any(0.45 < h["time"] < 0.6 for h in editor.js("window.toneshaperEditor.playheads()")["drawn"]),
                10, "the playhead in mid-view")
    editor.driver.save_screenshot(str(screenshot_dir() / "readme-editor.png"))
