"""Fixtures for the editor's browser tests: the real `toneshaper edit` server and headless Chromium.

TONESHAPER_BIN must name the built `toneshaper` binary. Each test gets its own server, started as
`TONESHAPER_BIN edit --no-open --port 0 [SHAPE]` with XDG_DATA_HOME set to a fresh temporary folder
(so saved shapes land in $XDG_DATA_HOME/toneshaper/presets/), and every server must stop cleanly
on SIGINT (exit code 0) when the test ends. See README.md.
"""

import json
import math
import os
import queue
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parents[2]
# The address `edit` prints: its page, with this run's secret to exchange for a cookie.
URL_PATTERN = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32,})")
CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")


# ---- the server ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def toneshaper_bin():
    path = os.environ.get("TONESHAPER_BIN")
    if not path:
        pytest.fail("TONESHAPER_BIN is not set: point it at the built toneshaper binary, "
                    "e.g. TONESHAPER_BIN=.build/debug/toneshaper (see Tests/Browser/README.md)", pytrace=False)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"TONESHAPER_BIN={path!r} is not an executable file", pytrace=False)
    return os.path.abspath(path)


class EditorServer:
    """One running `toneshaper edit` with its own user library."""

    def __init__(self, binary, data_home, shape=None):
        self.binary = binary
        self.data_home = Path(data_home)
        self.presets = self.data_home / "toneshaper" / "presets"
        env = dict(os.environ, XDG_DATA_HOME=str(self.data_home))
        args = [binary, "edit", "--no-open", "--port", "0"] + ([shape] if shape else [])
        self.stderr_path = self.data_home / "server-stderr.txt"
        self._stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr, env=env, text=True)
        self.output = []
        lines = queue.Queue()

        def pump():
            for line in self.process.stdout:
                self.output.append(line)
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        self.url = None  # the printed address, secret included
        self.base = None  # http://127.0.0.1:PORT (the page's origin)
        self.secret = None
        deadline = time.monotonic() + 30
        while self.url is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                pytest.fail(f"`{' '.join(args)}` printed no URL within 30 s; stdout: {''.join(self.output)!r}; "
                            f"stderr: {self.stderr()!r}", pytrace=False)
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                self.process.wait(timeout=5)
                pytest.fail(f"`{' '.join(args)}` exited with {self.process.returncode} before printing its URL; "
                            f"stdout: {''.join(self.output)!r}; stderr: {self.stderr()!r}", pytrace=False)
            match = URL_PATTERN.search(line)
            if match:
                self.url = match.group(0)
                self.port = int(match.group(1))
                self.base = f"http://127.0.0.1:{self.port}"
                self.secret = match.group(2)

    def stderr(self):
        try:
            return self.stderr_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def api(self, method, path, body=None, headers=None):
        """Calls the API directly as a script holding the secret does (docs/editor-api.md:
        Authorization: token SECRET, and the page's Origin): (status, decoded JSON or raw bytes, headers).
        `headers` replaces those two."""
        data = None if body is None else json.dumps(body).encode()
        sent = {"Authorization": f"token {self.secret}", "Origin": self.base} if headers is None else dict(headers)
        if data:
            sent["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw, headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, raw, headers = error.code, error.read(), error.headers
        try:
            return status, json.loads(raw), headers
        except ValueError:
            return status, raw, headers

    def stop(self):
        """Ctrl-C: returns the exit code (None when it did not stop within 5 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                return None
        return self.process.returncode

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self._stderr.close()


@pytest.fixture
def start_server(toneshaper_bin, tmp_path):
    """Factory: start_server(shape=None) -> EditorServer. Each is stopped with SIGINT at the end,
    and the test fails unless it exits with code 0 within 5 s."""
    servers = []

    def start(shape=None):
        data_home = tmp_path / f"xdg-data-{len(servers)}"
        data_home.mkdir()
        server = EditorServer(toneshaper_bin, data_home, shape)
        servers.append(server)
        return server

    yield start
    problems = []
    for server in servers:
        code = server.stop()
        if code != 0:
            problems.append(f"{server.url}: exit code {code!r} after SIGINT (want 0 within 5 s); stderr: {server.stderr()!r}")
        server.kill()
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)


# ---- the browser -----------------------------------------------------------------------------


def start_chromium(network_log=False):
    """Headless Debian Chromium; with `network_log`, its DevTools Network events are kept in the
    "performance" log, so a test can read the status of every request a page made."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--autoplay-policy=no-user-gesture-required",
                     "--window-size=1280,900", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    logs = {"browser": "ALL"}
    if network_log:
        logs["performance"] = "ALL"
        options.add_experimental_option("perfLoggingPrefs", {"enableNetwork": True, "enablePage": False})
    options.set_capability("goog:loggingPrefs", logs)
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_script_timeout(30)
    return browser


@pytest.fixture(scope="session")
def driver():
    browser = start_chromium()
    yield browser
    browser.quit()


@pytest.fixture
def network_driver():
    """A browser of its own whose network traffic the test reads (not the shared one: the live
    stream's frames would fill its log in the other tests)."""
    browser = start_chromium(network_log=True)
    yield browser
    browser.quit()


def screenshot_dir():
    folder = Path(os.environ.get("TONESHAPER_SCREENSHOTS") or REPO / ".build" / "browser-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def editor(start_server, driver, request):
    """A page on a fresh server (an initial shape name may be given with
    @pytest.mark.parametrize('editor', ['siren'], indirect=True)). A screenshot named after the test
    is written when the test ends, pass or fail."""
    shape = getattr(request, "param", None)
    server = start_server(shape)
    page = EditorPage(driver, server)
    page.open()
    yield page
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    driver.save_screenshot(str(screenshot_dir() / f"{name}.png"))
    # The next test opens another page: stop this one's live socket and sounds first.
    driver.get("about:blank")


class EditorPage:
    """The editor page in the browser, driven with real pointer and key events."""

    def __init__(self, driver, server):
        self.driver = driver
        self.server = server

    # -- state --

    def js(self, expression):
        return self.driver.execute_script(f"return {expression};")

    def state(self, name):
        return self.js(f"window.toneshaperEditor.{name}")

    def verdicts(self, shapes):
        """For each labelled shape: (the page's own check accepts it, the server's analyse accepts it,
        the server's one-line error) — so a test can hold the two to the same rules."""
        found = {}
        for label, shape in shapes.items():
            page_ok = self.driver.execute_async_script("""
                const [shape, done] = [arguments[0], arguments[arguments.length - 1]];
                import("/page/js/shape-model.js").then((m) => {
                  const info = window.toneshaperEditor.info;
                  done(m.firstInvalidField(shape, info.waves, info.limits) === null);
                });""", shape)
            status, body, _ = self.server.api("POST", "/api/analyse", shape)
            found[label] = (page_ok, status == 200, body.get("error") if isinstance(body, dict) else None)
        return found

    @property
    def shape(self):
        return self.state("shape")

    def wait(self, condition, timeout=15, message="condition"):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda _: condition())
        except Exception as error:
            logs = []
            try:
                logs = [entry["message"] for entry in self.driver.get_log("browser")][-10:]
            except Exception:
                pass
            raise AssertionError(f"timed out waiting for {message}; browser log: {logs}") from error

    def open(self):
        """Opens the address the server printed, as a user does: the secret becomes a cookie and
        the browser is sent on to the page's address without it."""
        self.driver.get(self.server.url)
        self.wait(lambda: self.driver.current_url == self.server.base + "/", 10, "the redirect to the page without the token")
        self.wait(lambda: self.js("!!(window.toneshaperEditor && window.toneshaperEditor.ready)"), 30, "the page to be ready")
        self.settle()

    def settle(self, timeout=15):
        """Waits until the shape on screen has been analysed by the server."""
        self.wait(lambda: self.state("settled"), timeout, "the analysis to catch up with the shape")

    def element(self, testid):
        return self.driver.find_element(By.CSS_SELECTOR, f"[data-testid='{testid}']")

    def click(self, testid):
        self.element(testid).click()

    # -- controls --

    def set_field(self, testid, text):
        """Types into a box as a person does: select all, type, Tab (the edit ends on change)."""
        box = self.element(testid)
        box.click()
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(str(text))
        box.send_keys(Keys.TAB)

    def new_shape(self):
        self.click("btn-new")
        self.settle()

    def press(self, key, *modifiers):
        chain = ActionChains(self.driver)
        for m in modifiers:
            chain.key_down(m)
        chain.send_keys(key)
        for m in reversed(modifiers):
            chain.key_up(m)
        chain.perform()

    def blur(self):
        self.driver.execute_script("document.activeElement && document.activeElement.blur()")

    # -- the curve view: the axis mapping, computed here from the plot rectangle --

    def mapping(self):
        return self.js("window.toneshaperEditor.view()")

    def canvas(self):
        return self.element("curve-canvas")

    def canvas_size(self):
        return self.js("(() => { const r = document.querySelector(\"[data-testid='curve-canvas']\")"
                       ".getBoundingClientRect(); return [r.width, r.height]; })()")

    @staticmethod
    def window(m):
        """The part of the view on screen (js/viewport.js): start…end s, low…high Hz; all of it
        when the page does not say (not zoomed)."""
        return (m.get("start", 0.0), m.get("end", m["duration"]),
                m.get("low", m["minFrequency"]), m.get("high", m["maxFrequency"]))

    def to_pixel(self, t, f, m=None):
        """(t s, f Hz) -> canvas-local CSS px, by the mapping documented in js/axis.js."""
        m = m or self.mapping()
        p = m["plot"]
        start, end, low, high = self.window(m)
        x = p["left"] + p["width"] * (t - start) / (end - start)
        if m["log"]:
            u = math.log(f / low) / math.log(high / low)
        else:
            u = (f - low) / (high - low)
        return x, p["top"] + p["height"] * (1 - u)

    def to_value(self, x, y, m=None):
        m = m or self.mapping()
        p = m["plot"]
        start, end, low, high = self.window(m)
        t = min(m["duration"], max(0.0, start + (x - p["left"]) / p["width"] * (end - start)))
        u = 1 - (y - p["top"]) / p["height"]
        if m["log"]:
            f = low * (high / low) ** u
        else:
            f = low + u * (high - low)
        return t, min(m["maxFrequency"], max(m["minFrequency"], f))

    def offset(self, x, y):
        """Canvas-local px -> the integer offset from the canvas centre that Selenium 4 expects."""
        width, height = self.canvas_size()
        return round(x - width / 2), round(y - height / 2)

    def actions(self):
        # Short pointer moves: a sketch of 50 moves must not take 50 × 250 ms.
        return ActionChains(self.driver, duration=10)

    def click_at(self, t, f):
        x, y = self.to_pixel(t, f)
        self.click_pixel(x, y)
        return x, y

    def click_pixel(self, x, y):
        dx, dy = self.offset(x, y)
        self.actions().move_to_element_with_offset(self.canvas(), dx, dy).click().perform()

    def drag_pixels(self, path):
        """Press at path[0], move through the others, release at the last one."""
        canvas = self.canvas()
        chain = self.actions()
        dx, dy = self.offset(*path[0])
        chain.move_to_element_with_offset(canvas, dx, dy).click_and_hold()
        for x, y in path[1:]:
            dx, dy = self.offset(x, y)
            chain.move_to_element_with_offset(canvas, dx, dy)
        chain.release().perform()

    def mode(self, name):
        self.driver.find_element(By.CSS_SELECTOR, f"[data-testid='mode-{name}']").find_element(By.XPATH, "..").click()
        assert self.driver.find_element(By.CSS_SELECTOR, f"[data-testid='mode-{name}']").is_selected()

    def set_checkbox(self, testid, on):
        box = self.element(testid)
        if box.is_selected() != on:
            box.click()
        assert box.is_selected() == on
