"""Issue 22, point 1: the seven rough edges a new user met in the editor, and the three oddities.

Each test drives the real page in headless Chromium against a real `toneshaper edit`, and measures
what a musician would see or hear: the reopened shape, the drawn pixels, the saved files, the
exported samples against `toneshaper render-shape`'s.
"""

import json
import math
import subprocess
import urllib.parse

import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from conftest import EditorPage
from test_editor import read_wav

DRAWN = (0xF5, 0xA5, 0x24)  # --accent: the drawn curve's colour (js/canvas.js)


def open_with(start_server, driver, tmp_path, shape):
    """A page on a server started on `shape` (written to a file), as `toneshaper edit FILE.json`."""
    path = tmp_path / f"{shape['name']}.json"
    path.write_text(json.dumps(shape))
    page = EditorPage(driver, start_server(str(path)))
    page.open()
    return page


def glide(name="glide", points=((0, 100), (1, 1600)), low=20, high=2000):
    return {"name": name, "duration": 1, "minFrequency": low, "maxFrequency": high,
            "points": [list(p) for p in points], "wave": "sine", "fidelity": 1000}


def leave_page(driver):
    """Leaves the page even when it asks to keep unsaved work (the next test opens its own)."""
    driver.execute_script("window.onbeforeunload = null")
    driver.get("about:blank")
    try:
        driver.switch_to.alert.accept()
    except Exception:
        pass


def alert(editor):
    """The browser's question (confirm, leave page), once it is up."""
    return WebDriverWait(editor.driver, 10).until(expected_conditions.alert_is_present())


def choose(editor, name):
    """Picks a shape from the menu as a person does."""
    for option in editor.element("shape-select").find_elements(By.TAG_NAME, "option"):
        if option.get_attribute("value") == name:
            option.click()
            return
    raise AssertionError(f"no menu entry {name!r}")


def save_named(editor, name):
    editor.set_field("field-name", name)
    editor.settle()
    editor.click("btn-save")
    editor.wait(lambda: editor.state("lastSave") is not None, 15, f"Save of {name!r} to answer")
    return editor.state("lastSave")


def drawn_rows(editor, t):
    """The canvas rows (CSS px) where the drawn curve's colour lies in the column of time t."""
    x, _ = editor.to_pixel(t, 440)
    # A few columns either side: the played curve's dashes may cover the drawn one in one column.
    return editor.driver.execute_script("""
        const [x, want] = arguments;
        const canvas = document.querySelector("[data-testid='curve-canvas']");
        const scale = canvas.width / canvas.getBoundingClientRect().width;
        const rows = [];
        for (let dx = -4; dx <= 4; dx++) {
          const column = canvas.getContext("2d").getImageData(Math.round((x + dx) * scale), 0, 1, canvas.height).data;
          for (let y = 0; y < canvas.height; y++) {
            const [r, g, b] = column.slice(4 * y, 4 * y + 3);
            if (Math.abs(r - want[0]) + Math.abs(g - want[1]) + Math.abs(b - want[2]) < 30) rows.push(y / scale);
          }
        }
        return rows;""", x, list(DRAWN))


# ---- (1) names a musician types reopen ----------------------------------------------------------


@pytest.mark.parametrize("name", ["my shape with spaces", "Ümlaut-é", "#+._-"])
def test_a_saved_shape_reopens_whatever_its_name(editor, name):
    editor.new_shape()
    editor.click_at(0.5, 700)
    editor.settle()
    saved = editor.shape
    assert save_named(editor, name)["name"] == name
    choose(editor, "siren")
    editor.wait(lambda: editor.shape["name"] == "siren", 10, "siren to open")
    choose(editor, name)
    editor.wait(lambda: editor.shape["name"] == name, 10, f"{name!r} to reopen")
    editor.settle()
    assert editor.shape["points"] == saved["points"]
    assert editor.element("shape-select").get_attribute("value") == name
    assert not editor.element("error-request").is_displayed(), editor.element("error-request").text
    status, body, _ = editor.server.api("GET", "/api/shapes/" + urllib.parse.quote(name, safe=""))
    assert status == 200 and body["shape"]["name"] == name, body


def test_a_shape_that_cannot_be_opened_leaves_the_menu_on_the_shape_shown(editor):
    editor.driver.execute_script("""
        const select = document.querySelector("[data-testid='shape-select']");
        select.append(new Option("gone", "gone"));""")
    choose(editor, "gone")
    editor.wait(lambda: editor.element("error-request").is_displayed(), 10, "the refusal")
    assert "gone" in editor.element("error-request").text
    assert editor.element("shape-select").get_attribute("value") == editor.shape["name"]


# ---- (2) the log axis draws and reads what the engine plays --------------------------------------


def test_log_axis_draws_a_linear_glide_as_it_sounds(start_server, driver, tmp_path):
    editor = open_with(start_server, driver, tmp_path, glide())
    try:
        assert editor.mapping()["log"], "the log axis is on by default"
        played = editor.state("played")  # the engine's frequency at fidelity N
        times = np.array([p[0] for p in played])
        freqs = np.array([p[1] for p in played])
        for t, want in ((0.25, 475), (0.5, 850), (0.75, 1225)):
            engine = float(np.interp(t, times, freqs))
            assert abs(engine - want) < 0.01 * want, (t, engine)
            # The drawn curve passes where the engine is: pixels of its colour in that column.
            rows = drawn_rows(editor, t)
            assert rows, f"no drawn curve at {t} s"
            _, y = editor.to_pixel(t, engine)
            assert min(abs(r - y) for r in rows) <= 2.5, f"at {t} s the curve is drawn at {rows}, the engine at y={y:.1f}"
            # The readout under the pointer names the engine's frequency at that time.
            x, y_pointer = editor.to_pixel(t, 200)
            dx, dy = editor.offset(x, y_pointer)
            editor.actions().move_to_element_with_offset(editor.canvas(), dx, dy).perform()
            editor.wait(lambda: "curve" in editor.element("curve-readout").get_attribute("textContent"), 5, "the readout")
            text = editor.element("curve-readout").get_attribute("textContent")
            shown = text.split("curve ")[1]
            value = float(shown.split()[0]) * (1000 if "kHz" in shown else 1)
            assert abs(math.log2(value / engine)) < 0.01, f"readout {text!r} at {t} s, engine {engine:.1f} Hz"
    finally:
        leave_page(driver)


# ---- (3) a long name keeps the transport on screen ---------------------------------------------


def test_a_long_name_keeps_play_and_save_on_screen(editor):
    editor.set_field("field-name", "x" * 70)
    editor.settle()
    editor.click("btn-save")  # refused (a saved name has at most 64 characters), the line naming it in full
    editor.wait(lambda: "Not saved" in editor.element("status").get_attribute("textContent"), 10, "Save to be refused")
    width = editor.js("document.documentElement.clientWidth")
    for testid in ("btn-play", "btn-save"):
        rect = editor.js(f"document.querySelector(\"[data-testid='{testid}']\").getBoundingClientRect().toJSON()")
        assert rect["left"] >= 0 and rect["right"] <= width, f"{testid} at {rect}, page {width} px wide"
        assert editor.element(testid).is_displayed()
    assert editor.js("document.documentElement.scrollWidth") <= width


# ---- (4) saving over a shape asks first ----------------------------------------------------------


def test_saving_over_a_built_in_or_your_own_shape_asks_first(editor):
    editor.new_shape()
    editor.set_field("field-name", "siren")
    editor.settle()
    editor.click("btn-save")
    question = alert(editor)
    assert "siren" in question.text and "built in" in question.text, question.text
    question.dismiss()
    editor.wait(lambda: "Not saved" in editor.element("status").text, 10, "Save to be given up")
    assert not (editor.server.presets / "siren.json").exists()

    editor.click("btn-save")
    alert(editor).accept()
    editor.wait(lambda: editor.state("lastSave") is not None, 10, "Save to answer")
    first = (editor.server.presets / "siren.json").read_text()

    # Your own shape: a second Save of a changed shape asks too; declined, the file is as it was.
    editor.set_field("field-amplitude", "0.25")
    editor.settle()
    editor.click("btn-save")
    question = alert(editor)
    assert "already in your library" in question.text, question.text
    question.dismiss()
    editor.wait(lambda: "Not saved" in editor.element("status").text, 10, "Save to be given up")
    assert (editor.server.presets / "siren.json").read_text() == first

    status, body, _ = editor.server.api("POST", "/api/save", editor.shape)
    assert status == 409 and body["field"] == "name", body
    status, body, _ = editor.server.api("POST", "/api/save?overwrite=1", editor.shape)
    assert status == 200, body
    assert json.loads((editor.server.presets / "siren.json").read_text())["amplitude"] == 0.25


# ---- (5) unsaved work is marked, and a reload asks -----------------------------------------------


def test_unsaved_work_is_marked_and_a_reload_asks_first(editor):
    def leaving_is_questioned():
        """What the browser asks the page before a reload: a cancelled beforeunload is its question."""
        return editor.js("(() => { const e = new Event('beforeunload', {cancelable: true});"
                         " window.dispatchEvent(e); return e.defaultPrevented; })()")

    editor.new_shape()
    assert not editor.element("modified").is_displayed() and not editor.state("modified")
    assert not leaving_is_questioned()
    editor.click_at(0.5, 700)
    editor.settle()
    assert editor.element("modified").is_displayed() and editor.driver.title.startswith("●")
    assert leaving_is_questioned()
    assert editor.state("modified") and len(editor.shape["points"]) == 3

    save_named(editor, "kept")
    editor.wait(lambda: not editor.element("modified").is_displayed(), 10, "the mark to go after Save")
    assert not leaving_is_questioned() and not editor.driver.title.startswith("●")
    editor.click("btn-undo")  # back to before the name: modified again
    editor.wait(lambda: editor.state("modified"), 10, "undo to mark the shape modified")
    leave_page(editor.driver)


# ---- (6) Export writes what render-shape writes --------------------------------------------------


def test_export_is_what_render_shape_writes(editor, tmp_path, toneshaper_bin):
    status, body, _ = editor.server.api("GET", "/api/shapes/siren")
    assert status == 200
    shape = body["shape"]
    path = tmp_path / "siren-copy.json"
    path.write_text(json.dumps(shape))
    status, exported, headers = editor.server.api("POST", "/api/export?format=wav&cycles=2&note=62", shape)
    assert status == 200 and headers["Content-Type"] == "audio/wav"
    (tmp_path / "export.wav").write_bytes(exported)
    subprocess.run([toneshaper_bin, "render-shape", str(path), "--note", "62", "--cycles", "2",
                    "-o", str(tmp_path / "render.wav")], check=True, capture_output=True)
    a, rate_a = read_wav(tmp_path / "export.wav")
    b, rate_b = read_wav(tmp_path / "render.wav")
    assert rate_a == rate_b and len(a) == len(b) and np.abs(b).max() > 0.1
    assert np.array_equal(a, b), f"{np.count_nonzero(a != b)} of {len(a)} samples differ"


# ---- (7) a name typed as a file name -------------------------------------------------------------


def test_a_name_ending_in_json_is_saved_as_that_file(editor):
    editor.new_shape()
    answer = save_named(editor, "ok.json")
    assert answer["name"] == "ok" and answer["saved"].endswith("/ok.json"), answer
    assert sorted(p.name for p in editor.server.presets.iterdir()) == ["ok.json"]
    assert editor.element("field-name").get_attribute("value") == "ok"
    assert editor.element("shape-select").get_attribute("value") == "ok"


# ---- the oddities --------------------------------------------------------------------------------


def test_min_above_max_is_said_under_the_control_changed_at_once(editor):
    editor.new_shape()
    editor.set_field("field-minFrequency", "3000")
    assert editor.element("error-minFrequency").is_displayed(), "the error under Min, before any answer"
    assert "minFrequency" in editor.element("error-minFrequency").text
    editor.settle()
    assert editor.element("error-minFrequency").is_displayed()
    assert not editor.element("error-maxFrequency").is_displayed()

    editor.set_field("field-minFrequency", "20")
    editor.settle()
    editor.set_field("field-maxFrequency", "10")
    editor.settle()
    assert editor.element("error-maxFrequency").is_displayed()
    assert not editor.element("error-minFrequency").is_displayed()


def test_an_emptied_box_is_refused_at_once_by_page_and_server_alike(editor):
    editor.new_shape()
    box = editor.element("field-attack")
    box.click()
    box.clear()
    editor.wait(lambda: editor.element("error-attack").is_displayed(), 2, "the error under Attack while typing")
    assert editor.shape["attack"] is None
    editor.settle()
    assert editor.element("error-attack").is_displayed()
    # The server refuses what the page refuses: a field written as null.
    status, body, _ = editor.server.api("POST", "/api/analyse", editor.shape)
    assert status == 422 and body["field"] == "attack" and "null" in body["error"], body
    shape = dict(editor.shape, attack=0.005)
    for field in ("release", "amplitude", "fidelity", "minFrequency"):
        status, body, _ = editor.server.api("POST", "/api/analyse", dict(shape, **{field: None}))
        assert status == 422 and body["field"] == field, (field, body)
    status, body, _ = editor.server.api("POST", "/api/analyse", dict(shape, echo={"delay": None, "volume": 0}))
    assert status == 422 and body["field"] == "echo.delay", body


def test_lowering_max_frequency_offers_to_rescale_the_points(start_server, driver, tmp_path):
    editor = open_with(start_server, driver, tmp_path, glide(points=((0, 100), (0.5, 1600), (1, 400))))
    try:
        editor.set_field("field-maxFrequency", "800")
        editor.settle()
        for t in (0.25, 0.75):
            assert drawn_rows(editor, t), f"the curve stays on screen at {t} s"
        editor.wait(lambda: editor.element("rescale-offer").is_displayed(), 5, "the offer to rescale")
        assert "1 point lies outside 20–800 Hz" in editor.element("rescale-text").text
        editor.click("rescale-yes")
        editor.settle()
        points = editor.shape["points"]
        fs = [f for _, f in points]
        assert all(20 <= f <= 800 for f in fs), fs
        assert fs[0] < fs[2] < fs[1], f"the curve keeps its shape: {fs}"
        # In pitch: each point keeps its place between the ends, in octaves.
        u = [math.log(f / 20) / math.log(800 / 20) for f in fs]
        want = [math.log(f / 20) / math.log(2000 / 20) for f in (100, 1600, 400)]
        assert np.allclose(u, want, atol=1e-4), (u, want)
        assert editor.state("analysis")["ok"] and not editor.element("rescale-offer").is_displayed()
        editor.click("btn-undo")
        editor.settle()
        assert [f for _, f in editor.shape["points"]] == [100, 1600, 400]
    finally:
        leave_page(driver)


def test_the_page_and_the_server_accept_the_same_shapes(editor):
    """The page's own check (js/shape-model.js, which decides whether Save is sent) and the
    server's loader give the same verdict on valid shapes and on each kind of fault."""
    base = editor.shape
    cases = {"valid": {}, "attack null": {"attack": None}, "attack 11": {"attack": 11}, "release 31": {"release": 31},
             "duration 0": {"duration": 0}, "duration 700": {"duration": 700}, "min 0": {"minFrequency": 0},
             "max 200 kHz": {"maxFrequency": 200000}, "min > max": {"minFrequency": 3000},
             "fidelity 0": {"fidelity": 0}, "fidelity 2.5": {"fidelity": 2.5}, "fourier 513": {"fourierTerms": 513},
             "amplitude 1.5": {"amplitude": 1.5}, "root 128": {"rootNote": 128}, "program 128": {"program": 128},
             "echo volume 1": {"echo": {"delay": 0.25, "volume": 1}}, "echo delay 3": {"echo": {"delay": 3, "volume": 0}},
             "wave nope": {"wave": "nope"}, "one point": {"points": [[0, 440]]},
             "times back": {"points": [[0, 440], [0.6, 440], [0.5, 440]]},
             "point above max": {"points": [[0, 440], [1, 2400]]},
             "rate -1": {"envelope": {"kind": "exponential-decay", "rate": -1}},
             "rate 3": {"envelope": {"kind": "exponential-decay", "rate": 3}}}
    verdicts = editor.verdicts({label: dict(base, **change) for label, change in cases.items()})
    differ = {k: v for k, v in verdicts.items() if v[0] != v[1]}
    assert not differ, f"page and server disagree (page ok, server ok, server's line): {differ}"
    assert verdicts["valid"][:2] == (True, True) and verdicts["rate 3"][:2] == (True, True)
