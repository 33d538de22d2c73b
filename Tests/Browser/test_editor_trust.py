"""Only the editor's own page can use the editor (docs/editor-api.md, "Who may use the editor").

A page served by a second local HTTP server (another port of 127.0.0.1: the same site, so the
browser sends it the editor's cookie) tries everything a hostile page can: the live WebSocket, a
`no-cors` text/plain POST, a form POST, `<img>` and `<script>` loads of every API path. The browser
that runs it has opened the editor first, so it holds the cookie: the worst case. What the server
answered is read from the browser's own network log, and the user library must be unchanged.
"""

import functools
import http.server
import json
import re
import threading

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from conftest import EditorPage

API_PATHS = ["/api/info", "/api/shapes", "/api/shapes/siren", "/api/analyse", "/api/save",
             "/api/export?format=wav", "/api/live", "/", "/page/js/main.js"]

# A shape as text/plain: the form's one field `NAME=VALUE` closes the JSON in `description`.
FORM_NAME = '{"name": "browser-form", "duration": 1, "points": [[0, 220], [1, 220]], "description": "'
FORM_VALUE = '"}'

HOSTILE_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>a hostile neighbour</title></head><body>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" action="TARGET/api/save" enctype="text/plain" target="sink">
  <input type="hidden" id="field">
</form>
<script>
const target = "TARGET", targets = [target, "LOCALHOST"];
const shape = {name: "browser-csrf", duration: 1, points: [[0, 220], [1, 440]]};
const results = {sockets: [], fetches: [], tags: [], form: null};
const within = (ms, promise) => Promise.race([promise, new Promise(r => setTimeout(r, ms))]);

function socket(url) {
  const r = {url, events: []};
  results.sockets.push(r);
  return within(8000, new Promise(resolve => {
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => { r.events.push("open"); ws.send(JSON.stringify({type: "play", on: true})); };
    ws.onmessage = () => { if (!r.events.includes("message")) r.events.push("message"); };
    ws.onerror = () => r.events.push("error");
    ws.onclose = e => { r.events.push("close " + e.code); resolve(); };
  }));
}

async function send(method, url, mode, body) {
  const r = {method, url, mode};
  results.fetches.push(r);
  try {
    const response = await fetch(url, {method, mode, credentials: "include", body,
                                       headers: body ? {"Content-Type": "text/plain"} : {}});
    r.type = response.type;
    r.status = response.status;
    try { r.text = (await response.text()).slice(0, 200); } catch (e) { r.text = null; }
  } catch (e) {
    r.error = String(e);
  }
}

function load(kind, url) {
  const r = {kind, url};
  results.tags.push(r);
  return within(8000, new Promise(resolve => {
    const element = document.createElement(kind);
    element.onload = () => { r.outcome = "load"; resolve(); };
    element.onerror = () => { r.outcome = "error"; resolve(); };
    element.src = url;
    document.body.appendChild(element);
  }));
}

(async () => {
  for (const base of targets) await socket(base.replace("http:", "ws:") + "/api/live");
  const body = JSON.stringify(shape);
  for (const base of targets) {
    for (const path of ["/api/save", "/api/analyse", "/api/export?format=wav"]) {
      await send("POST", base + path, "no-cors", body);
      await send("POST", base + path, "cors", body);
    }
    for (const path of PATHS) await send("GET", base + path, "cors");
  }
  for (const path of PATHS) {
    await load("img", target + path);
    await load("script", target + path);
  }
  await within(8000, new Promise(resolve => {
    const sink = document.getElementById("sink");
    sink.onload = () => { results.form = "submitted"; resolve(); };
    const field = document.getElementById("field");
    field.name = FORM_NAME;
    field.value = FORM_VALUE;
    document.getElementById("form").submit();
  }));
  window.results = results;
})();
</script></body></html>
"""


@pytest.fixture
def hostile_site(tmp_path):
    """Factory: hostile_site(editor_port) -> the URL of the hostile page, served by a second
    local HTTP server (Python's http.server on a free port of 127.0.0.1)."""
    servers = []

    def start(editor_port):
        folder = tmp_path / "hostile"
        folder.mkdir()
        page = (HOSTILE_PAGE.replace("TARGET", f"http://127.0.0.1:{editor_port}")
                .replace("LOCALHOST", f"http://localhost:{editor_port}")
                .replace("PATHS", json.dumps(API_PATHS))
                .replace("FORM_NAME", json.dumps(FORM_NAME)).replace("FORM_VALUE", json.dumps(FORM_VALUE)))
        (folder / "index.html").write_text(page)
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
        handler.log_message = lambda *args: None
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/index.html"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def network_answers(driver, port):
    """(method, URL, status) of every answer the browser got from the editor's port, from its
    DevTools log. The raw answer's status (responseReceivedExtraInfo) is there even when the
    browser then withheld the answer from the page (CORS, opaque-response blocking)."""
    hosts = (f"//127.0.0.1:{port}/", f"//localhost:{port}/")
    requests, statuses = {}, {}
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            request = params["request"]
            if any(host in request["url"] for host in hosts):
                requests[params["requestId"]] = (request["method"], request["url"])
        elif method == "Network.webSocketCreated":
            if any(host in params["url"].replace("ws:", "http:") for host in hosts):
                requests[params["requestId"]] = ("WS", params["url"])
        elif method == "Network.responseReceivedExtraInfo":
            statuses[params["requestId"]] = params["statusCode"]
        elif method == "Network.responseReceived":
            statuses.setdefault(params["requestId"], params["response"]["status"])
        elif method == "Network.webSocketHandshakeResponseReceived":
            statuses[params["requestId"]] = params["response"]["status"]
        elif method == "Network.webSocketFrameError":
            # A refused handshake: "Error during WebSocket handshake: Unexpected response code: 400".
            code = re.search(r"response code: (\d+)", params.get("errorMessage", ""))
            if code:
                statuses.setdefault(params["requestId"], int(code.group(1)))
    return [(m, url, statuses.get(rid)) for rid, (m, url) in requests.items()]


def test_a_page_from_another_local_origin_cannot_use_the_editor(start_server, network_driver, hostile_site):
    server = start_server()
    # The user opens the editor: this browser now holds the editor's cookie.
    page = EditorPage(network_driver, server)
    page.open()
    network_driver.get_log("performance")  # the page's own traffic is not the question
    assert not server.presets.exists()

    network_driver.get(hostile_site(server.port))
    results = WebDriverWait(network_driver, 120, poll_frequency=0.2).until(lambda d: d.execute_script("return window.results"))

    for socket in results["sockets"]:
        assert "open" not in socket["events"] and "message" not in socket["events"], f"the live stream opened for a foreign page: {socket}"
        assert "error" in socket["events"], socket
    for attempt in results["fetches"]:
        # no-cors answers are opaque; cors ones are refused by the browser (no CORS header) -
        # either way the page learns nothing. What the server did is checked below.
        assert attempt.get("type") in (None, "opaque") and not attempt.get("text"), f"a foreign page read an answer: {attempt}"
    assert results["form"] == "submitted"

    # Every request the page made reached the editor and was refused: 403, or for the WebSocket
    # the 400 hummingbird-websocket gives every upgrade it does not make (never 101).
    answers = network_answers(network_driver, server.port)
    wrong = [a for a in answers if a[2] != (400 if a[0] == "WS" else 403)]
    assert not wrong, f"the editor answered a foreign page with something other than a refusal: {wrong}"
    refused_paths = {url.split(f":{server.port}", 1)[1] for _, url, _ in answers}
    missing = [p for p in API_PATHS if p not in refused_paths]
    assert not missing, f"no refusal seen in the browser's log for {missing} (answers: {answers})"
    assert sum(m == "WS" for m, _, _ in answers) == 2 and sum(m == "POST" and u.endswith("/api/save") for m, u, _ in answers) >= 5, answers

    # Nothing was written: the user library was never made.
    assert not server.presets.exists(), list(server.presets.iterdir())


def test_only_the_printed_address_opens_the_editor(editor, driver):
    server = editor.server
    # The token has left the address bar (open() waited for it); the cookie is out of the page's reach.
    assert driver.current_url == server.base + "/"
    assert server.secret not in driver.execute_script("return document.cookie")
    cookie = driver.get_cookie(f"toneshaper-edit-{server.port}")
    assert cookie and cookie["value"] == server.secret and cookie["httpOnly"] and cookie["sameSite"] == "Strict", cookie

    # Without the cookie, the bare address shows what to open, not the editor.
    driver.delete_all_cookies()
    driver.get(server.base + "/")
    text = driver.find_element("tag name", "body").text
    assert "toneshaper edit" in text and "token" in text, text
    assert driver.execute_script("return window.toneshaperEditor === undefined")
    status, body, _ = server.api("GET", "/api/info", headers={})
    assert status == 403 and "secret" in body["error"], body
    status, body, _ = server.api("GET", "/api/info")
    assert status == 200 and body["sampleRate"] == 48000

    # The printed address again: the editor works, a save included (its POST carries the page's Origin).
    editor.open()
    editor.set_field("field-name", "trusted-save")
    editor.settle()
    editor.click("btn-save")
    editor.wait(lambda: editor.state("lastSave"), 15, "the save to be answered")
    assert (server.presets / "trusted-save.json").exists()
