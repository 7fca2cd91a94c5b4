"""Hostile input (issue 33): each case that broke, as a test with its expected message; for the
resource cases a memory ceiling measured in a subprocess.  One section per part of the
package, each with its own fixtures and helpers."""


# --- Spaces ---
# The Space apps under attack: oversized bodies and pastes, Markdown and HTML in names and tags,
# a file named by URL, download folders left behind.  Memory is the peak RSS of a subprocess
# (VmHWM, reset through /proc/PID/clear_refs before the request), so nothing else in the suite
# counts; the browser checks record every request that leaves the page.
import fcntl
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from html import unescape
from pathlib import Path

import pytest

from conftest import FLAGS, chromium, command_peak, command_usage, need

SPACE_MB = 2**20
# The issue's leaks: a Markdown image in a system name and in a predicted tag (quoted by a warning).
LEAK_NAME = "![x](http://203.0.113.9/leak1.png)"
LEAK_TAG = "B-![x](http://203.0.113.9/leak3.png)"
LEAK_TOKEN = "<img/src=http://203.0.113.9/leak2.png>"  # one token: an image to an HTML parser

# A server in its own process: DNS lookups other than the machine's own names are recorded (and
# refused), the Space's folders go under GRADIO_TEMP_DIR, and the port is printed once listening.
SERVER = r"""
import os, socket, sys
record = os.environ["TOUGH_NER_TEST_LOOKUPS"]
local = {None, "", "localhost", "127.0.0.1", "0.0.0.0", "::1", socket.gethostname()}
real_getaddrinfo, real_gethostbyname = socket.getaddrinfo, socket.gethostbyname

def noted(host):
    host = host.decode() if isinstance(host, bytes) else host
    if host not in local:
        with open(record, "a") as handle:
            handle.write(f"{host}\n")
        raise socket.gaierror(socket.EAI_NONAME, "no DNS in this test")

def getaddrinfo(host, *args, **kwargs):
    noted(host)
    return real_getaddrinfo(host, *args, **kwargs)

def gethostbyname(host):
    noted(host)
    return real_gethostbyname(host)

socket.getaddrinfo, socket.gethostbyname = getaddrinfo, gethostbyname
from tough_ner.spaces import launch
app = launch("all", block=False)
print(f"PORT {app.server_port}", flush=True)
sys.stdin.read()  # serve until the test closes stdin
"""


def _vm(pid: int, field: str) -> int:
    """A memory figure of a process from /proc/PID/status, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def _reset_peak(pid: int) -> int:
    """Reset the process's peak RSS to its current RSS (Linux: clear_refs 5); returns it."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pytest.skip("the peak RSS of a process cannot be reset here")
    return _vm(pid, "VmRSS")


@pytest.fixture(scope="module")
def space_server(tmp_path_factory):
    """The Space with every metric served by a subprocess (see ``SERVER``), started after a
    dead process's download folder and a live one were put where it keeps its own."""
    need("gradio")
    base = tmp_path_factory.mktemp("space-server")
    cache = base / "gradio"
    stale = cache / "tough-ner-space-dead"  # its process died: no lock held
    (stale / "session").mkdir(parents=True)
    (stale / "session" / "errors.csv").write_text("x" * 1000)
    live = cache / "tough-ner-space-live"  # held by this test process, as a running server holds its own
    live.mkdir()
    held = os.open(live, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    lookups = base / "lookups.txt"
    lookups.write_text("")
    env = {**os.environ, "GRADIO_TEMP_DIR": str(cache), "TOUGH_NER_TEST_LOOKUPS": str(lookups),
           "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1"}
    for variable in ("TOUGH_NER_MAX_REQUEST_MB", "TOUGH_NER_MAX_INPUT_MB", "TOUGH_NER_MAX_LINES"):
        env.pop(variable, None)  # the documented defaults
    process = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    threading.Thread(target=lambda: [lines.append(line) for line in process.stdout], daemon=True).start()
    try:
        for _ in range(2400):  # gradio starts in about 10 s of CPU; at load 15, three minutes went by
            port = next((int(line.split()[1]) for line in list(lines) if line.startswith("PORT ")), None)
            if port or process.poll() is not None:
                break
            time.sleep(0.25)
        assert port, "".join(lines)
        yield {"port": port, "pid": process.pid, "cache": cache, "stale": stale, "live": live, "lookups": lookups}
    finally:
        process.stdin.close()
        process.terminate()
        process.wait(30)
        os.close(held)


def _post(port: int, path: str, headers: dict, chunks, timeout: float = 30.0):
    """Send a POST of ``chunks`` (bytes), chunked when ``headers`` give no Content-Length,
    stopping as soon as the server answers or closes; returns (status, body, bytes sent) of an
    answer that closes the connection."""
    chunked = "Content-Length" not in headers
    fields = {**headers, **({"Transfer-Encoding": "chunked"} if chunked else {})}
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
                           + "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode() + b"\r\n")
        for chunk in chunks:
            if select.select([connection], [], [], 0)[0]:
                break  # the server answered (or closed): stop sending
            try:
                connection.sendall((f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n") if chunked else chunk)
            except OSError:  # the server closed the connection
                break
            sent += len(chunk)
        answer = b""
        while True:  # the refusal closes the connection
            try:
                part = connection.recv(65536)
            except OSError:
                break
            if not part:
                break
            answer += part
    header, _, body = answer.partition(b"\r\n\r\n")
    return (int(header.split()[1]) if header else None), body, sent


def test_space_refuses_a_512_mb_paste_from_its_length_header(space_server):
    """A 512 MB paste was read whole before the size check: peak 2.5 GB, 1.86 GB kept after."""
    pid, port = space_server["pid"], space_server["port"]
    before = _reset_peak(pid)
    started = time.monotonic()
    megabyte = b'{"data": ["' + b"x" * (SPACE_MB - 11)
    status, body, sent = _post(port, "/gradio_api/queue/join", {"Content-Type": "application/json",
                                                                "Content-Length": str(512 * SPACE_MB)},
                               (megabyte for _ in range(512)))
    seconds, growth = time.monotonic() - started, _vm(pid, "VmHWM") - before
    print(f"512 MB paste refused after {sent / SPACE_MB:.0f} MB sent, in {seconds:.2f} s, server peak "
          f"+{growth / SPACE_MB:.1f} MB")
    assert status == 413
    assert json.loads(body)["detail"] == ("the request is 512 MB; the limit is 16 MB "
                                          "(TOUGH_NER_MAX_REQUEST_MB sets it)")
    assert growth <= 200 * SPACE_MB and seconds < 5


def test_space_refuses_a_streamed_body_once_it_passes_the_limit(space_server):
    """Without a Content-Length (chunked), the body is counted as it arrives and never held."""
    pid, port = space_server["pid"], space_server["port"]
    before = _reset_peak(pid)
    megabyte = b"x" * SPACE_MB
    status, body, sent = _post(port, "/gradio_api/queue/join", {"Content-Type": "application/json"},
                               (megabyte for _ in range(512)))
    growth = _vm(pid, "VmHWM") - before
    print(f"streamed body refused after {sent / SPACE_MB:.0f} MB sent, server peak +{growth / SPACE_MB:.1f} MB")
    assert status == 413 and "the limit is 16 MB (TOUGH_NER_MAX_REQUEST_MB sets it)" in json.loads(body)["detail"]
    assert sent <= 26 * SPACE_MB and growth <= 200 * SPACE_MB


def _event_body(session: str, dependency: int, data: list) -> bytes:
    """An event's request body as a browser sends it: JSON in UTF-8, other characters as they are."""
    return json.dumps({"data": data, "fn_index": dependency, "session_hash": session, "event_data": None,
                       "trigger_id": None}, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("four_byte", [False, True])
def test_space_parses_the_largest_body_it_accepts_within_200_mb(space_server, four_byte):
    """gradio parses an accepted body whole (its bytes twice, the body decoded as one text and
    the strings in it): under the former default limit, a 40 MB body took +251 MB in 4-byte
    characters.  The default accounts for it: a body just under the limit, ASCII or with an
    emoji in each text (Python then keeps the whole text at 4 bytes a character, the worst
    case), costs at most 200 MB more while parsed; the texts are then refused by their lines."""
    from tough_ner import spaces

    pid, port = space_server["pid"], space_server["port"]
    dependency, _ = _dependency(port, "tmr-run")
    limit = int(spaces.max_request_mb() * SPACE_MB)
    line = "a O O\n"
    text = line * ((limit - 2048) // 2 // len(json.dumps(line)[1:-1]))
    if four_byte:
        text = "\U0001F600" + text[1:]
    body = _event_body(f"largest-{four_byte}", dependency, [text, None, text, None, ""])
    assert limit - 4096 < len(body) <= limit
    del text
    before = _reset_peak(pid)
    message = _event(port, f"largest-{four_byte}", dependency, [], timeout=120, body=body)
    growth = _vm(pid, "VmHWM") - before
    print(f"largest accepted body ({len(body) / SPACE_MB:.1f} MB, 4-byte characters: {four_byte}): server peak "
          f"+{growth / SPACE_MB:.0f} MB")
    assert "TOUGH_NER_MAX_LINES sets it" in unescape(message["output"]["data"][0])  # parsed, then refused
    assert growth <= 200 * SPACE_MB


def _event(port: int, session: str, dependency: int, data: list, timeout: float = 60.0, body: bytes = b"") -> dict:
    """Run an event of the app as the page would (join the queue, read the event stream) and
    return its last message (``body``: the request's body as sent, else made of ``data``)."""
    import urllib.request

    body = body or _event_body(session, dependency, data)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/gradio_api/queue/join", body,
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        assert response.status == 200
    last = {}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/gradio_api/queue/data?session_hash={session}",
                                timeout=timeout) as stream:
        for line in stream:
            if line.startswith(b"data: "):
                last = json.loads(line[6:])
                if last.get("msg") == "process_completed":
                    break
    return last


def _dependency(port: int, elem_id: str) -> tuple:
    """(fn_index, input component ids) of the click event of the button ``elem_id``."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=30) as response:
        config = json.loads(response.read())
    button = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id)
    for index, dependency in enumerate(config["dependencies"]):
        if any(target[0] == button for target in dependency["targets"]):
            return dependency.get("id", index), dependency["inputs"]
    raise AssertionError(f"no event on {elem_id}")


def test_space_refuses_a_file_named_by_url_without_a_dns_lookup(space_server):
    """A crafted FileData naming http://example.com made the Space look the host up (gradio
    downloads such a file before any handler runs)."""
    port = space_server["port"]
    dependency, inputs = _dependency(port, "tmr-run")
    url = "http://example.com/train.txt"
    crafted = {"path": url, "url": url, "orig_name": "train.txt", "meta": {"_type": "gradio.FileData"}}
    data = ["", crafted, "Paris B-LOC B-LOC\n", None, ""]
    assert len(data) == len(inputs)
    message = _event(port, "hostile-url", dependency, data)
    assert message["success"] is False
    assert "an upload must be a file sent from this page, not a URL" in json.dumps(message)
    assert space_server["lookups"].read_text() == ""  # no DNS attempt, so no request either


def test_space_start_up_removes_the_download_folders_of_dead_processes(space_server):
    """Download folders (tough-ner-space-* in the temporary directory) were never deleted: 40
    folders, 381 MB after one round of tests.  Start-up removes those no live process holds."""
    assert not space_server["stale"].exists()
    assert space_server["live"].is_dir()  # a running server's folder stays
    own = [p for p in space_server["cache"].iterdir() if p.name.startswith("tough-ner-space-")
           and p.name not in ("tough-ner-space-live",)]
    assert len(own) == 1  # the server's own, made at start-up


def test_download_folders_of_a_killed_process_go_at_the_next_start_up(tmp_path):
    """The lock is the process itself: killed with SIGKILL (no clean-up ran), its folder is
    stale at once, while a live process's folder is never taken."""
    need("gradio")
    from tough_ner import spaces

    env = {**os.environ, "GRADIO_TEMP_DIR": str(tmp_path)}
    owner = subprocess.Popen([sys.executable, "-c", "import sys, time; from tough_ner import spaces; "
                              "print(spaces.download_root(), flush=True); time.sleep(120)"],
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        folder = Path(owner.stdout.readline().strip())
        assert folder.parent == tmp_path and folder.name.startswith(spaces.FOLDER_PREFIX) and folder.is_dir()
        (folder / "errors.csv").write_text("kept while its process lives")
        assert spaces.remove_stale_folders(str(tmp_path)) == [] and folder.is_dir()
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
    assert spaces.remove_stale_folders(str(tmp_path)) == [str(folder)] and not folder.exists()
    unrelated = tmp_path / "gradio-upload"
    unrelated.mkdir()
    assert spaces.remove_stale_folders(str(tmp_path)) == [] and unrelated.is_dir()


class _Request:  # what a handler reads of gradio's request
    def __init__(self, session_hash):
        self.session_hash = session_hash


def test_download_files_live_in_the_session_and_go_with_it(tmp_path):
    """Each evaluation's files replace the same app's earlier ones in the session's folder; the
    session's end removes them all; a session hash cannot name another path."""
    need("gradio")
    from tough_ner import spaces
    from tough_ner.demo import TEST, TRAIN

    train, test = Path(TRAIN).read_text(), Path(TEST).read_text()
    evaluate = spaces._in_session(spaces._safe(spaces._reader(spaces.score_tmr, 2), 7), "tmr")
    first = evaluate(_Request("session-a"), train, None, test, None, "")[-3]["value"]
    second = evaluate(_Request("session-a"), train, None, test, None, "")[-3]["value"]
    other = evaluate(_Request("../../session-b"), train, None, test, None, "")[-3]["value"]
    assert not Path(first).exists() and Path(second).is_file() and Path(other).is_file()
    root = Path(spaces.download_root())
    assert Path(second).parent.parent.parent == Path(spaces.session_folder("session-a"))
    assert Path(other).resolve().is_relative_to(root)  # the crafted hash is only a name
    spaces.end_session("session-a")
    assert not Path(second).exists() and Path(other).is_file()
    spaces.end_session("../../session-b")
    assert not Path(other).exists() and root.is_dir()
    assert spaces.folder_base() == __import__("gradio").utils.get_upload_folder()  # served where written


def _measured(script: str, timeout: float = 120.0) -> dict:
    """Run ``script`` in a fresh interpreter and return the JSON line it prints last, where it
    reports its own peak RSS growth since its imports (``grown_mb``)."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


MEASURE = r"""
import json, resource, time
from tough_ner import spaces
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
"""


def test_space_refuses_a_paste_of_too_many_lines_before_parsing_it():
    """An 18 MB paste with 1,000 resamples took 4.3 GB and 100 s: a text's lines are counted
    (nothing allocated) and refused over the limit before it is parsed."""
    found = _measured(MEASURE + r"""
line = "Germany B-LOC B-LOC\n"
test = line * (18 * 2**20 // len(line))  # 18 MB
train = "Germany B-LOC\n"
run = spaces._reader(spaces.score_bucket_f1, 2)
before, started = peak(), time.monotonic()
try:
    run(train, None, test, None, 4, 1000, "")
except ValueError as error:
    message = spaces.error_message(error)  # as the page shows it
print(json.dumps({"message": message, "seconds": time.monotonic() - started, "grown_mb": (peak() - before) / 2**20}))
""")
    print(f"18 MB paste refused in {found['seconds']:.2f} s, peak +{found['grown_mb']:.1f} MB")
    lines = 18 * SPACE_MB // len("Germany B-LOC B-LOC\n")
    assert unescape(found["message"]) == (f"**Error:** the pasted text has {lines:,} lines; the limit is 300,000 "
                                          "lines (TOUGH_NER_MAX_LINES sets it)")
    assert found["seconds"] < 2 and found["grown_mb"] <= 50


def _types_paste(sentences: int, types: int) -> str:
    """The issue's bucket-F1 test paste: one-token mentions of ``types`` types, a wrong type on
    the next token of each sentence."""
    test = ["Germany B-LOC B-LOC", ""]
    for i in range(sentences):
        t = i % types
        test += [f"w{i} B-T{t} B-T{t}", f"x O B-T{(t + 1) % types}", ""]
    return "\n".join(test) + "\n"


def test_space_bucket_f1_paste_of_999_types_is_bounded(space_server):
    """In the bucket_f1 Space a 1.86 MB paste with 999 types took 4.8 GB and 61 s (the type cap
    did not bound types x sentences)."""
    pid, port = space_server["pid"], space_server["port"]
    test = _types_paste(60_000, 998)  # and LOC: 999 types
    assert 1.84 * SPACE_MB < len(test) < 1.88 * SPACE_MB
    train = "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n"  # the case is the test paste's types
    dependency, _ = _dependency(port, "bucket_f1-run")
    before = _reset_peak(pid)
    started = time.monotonic()
    message = _event(port, "hostile-types", dependency, [train, None, test, None, 4, 200, ""], timeout=120)
    seconds, growth = time.monotonic() - started, _vm(pid, "VmHWM") - before
    print(f"999 types, 1.86 MB: {seconds:.1f} s, server peak +{growth / SPACE_MB:.0f} MB")
    assert message["success"], message
    error, summary, table = message["output"]["data"][:3]
    assert "Error" not in error and "Systems:" in summary
    assert len(table["value"]["data"]) >= 999  # the results table keeps every type
    assert growth <= 500 * SPACE_MB and seconds < 60


def test_bucket_chart_draws_the_most_frequent_types_and_says_so():
    """The chart's type panel drew one bar per type: with 999 types placing their labels took
    14 s.  It shows the 20 types with the most mentions, and its title says so."""
    need("matplotlib")
    from tough_ner import Batch, TrainStats, spaces
    from tough_ner.buckets import bucket_f1

    tokens = [[f"w{i}", "x"] for i in range(300)]
    gold = [[f"B-T{i % 30}", "O"] for i in range(300)]
    gold[0] = ["B-T0", "B-T0"]  # T0: the most mentions
    batch = Batch(tokens, gold, gold)
    detailed = {"system": bucket_f1(TrainStats.from_lists(tokens, gold), batch, detailed=True, bootstrap=0)}
    chart = spaces._bucket_chart(detailed, {"mentions": 301, "tokens": 600})
    (panel,) = [ax for ax in chart.axes if ax.get_title().startswith("tag")]
    assert panel.get_title() == "tag: the 20 most frequent of 30 types"
    labels = [label.get_text().split("\n")[0] for label in panel.get_xticklabels()]  # the type, then its n
    assert len(labels) == 20 and "T0" in labels


# The browser checks: the app served in this process, every request leaving it recorded.
@pytest.fixture(scope="module")
def hostile_page_app():
    need("gradio")
    from tough_ner.spaces import launch

    app = launch("tmr", block=False)
    yield f"http://127.0.0.1:{app.server_port}"
    app.close()


@pytest.fixture(scope="module")
def hostile_browser():
    need("gradio")
    playwright = need("playwright.sync_api")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium(), args=FLAGS)
        yield launched
        launched.close()


def _guarded_page(browser, origin: str):
    """A page that lets through only requests to ``origin`` (and data:/blob: URLs), recording
    any other: an image of 127.0.0.1:9999 leaves the page as much as one of the internet."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    outside = []

    def guard(route):
        url = route.request.url
        if url.startswith((origin + "/", origin.replace("http", "ws") + "/", "data:", "blob:")) or url == origin:
            route.continue_()
        else:
            outside.append(url)
            route.abort()
    page.route("**/*", guard)
    page.goto(origin + "/")
    return page, outside


def test_space_shows_markdown_images_in_names_and_tags_as_text(hostile_browser, hostile_page_app):
    """A system name ![x](http://...) was rendered as an image and fetched; a predicted tag
    B-![x](http://...) did the same through the warning that quotes it."""
    train = "EU B-ORG\nrejects O\nGerman B-MISC\ncall O\n\nPeter B-PER\nsaid O\n"
    test = ("EU B-ORG B-ORG\nrejects O O\nGerman B-MISC " + LEAK_TAG + "\ncall O O\n\n"
            + LEAK_TOKEN + " B-PER O\nsaid O O\n")
    page, outside = _guarded_page(hostile_browser, hostile_page_app)
    page.fill("#tmr-train textarea", train)
    page.fill("#tmr-test textarea", test)
    page.fill("#tmr-names textarea", LEAK_NAME)
    page.click("#tmr-run")
    page.wait_for_selector("#tmr-headline table", timeout=60_000)
    page.wait_for_selector("#tmr-details table", timeout=60_000)
    page.wait_for_timeout(1000)  # any image the page would load has been requested by now
    text = page.inner_text("body")
    assert f"Systems: {LEAK_NAME}." in text  # the name, as typed
    assert LEAK_TAG[2:] in page.inner_text("#tmr-error")  # the warning quotes the tag as typed
    assert LEAK_TOKEN in page.inner_text("#tmr-details")  # the token, as typed
    assert LEAK_NAME in page.inner_text("#tmr-table")  # the results table's column
    images = page.eval_on_selector_all("img", "nodes => nodes.map(n => n.src)")
    assert not [src for src in images if "203.0.113.9" in src]
    page.close()
    assert outside == []


def test_space_says_which_limit_refused_a_request(hostile_browser, hostile_page_app, monkeypatch):
    """A body over the request limit is refused before it is read, and the page says why."""
    monkeypatch.setenv("TOUGH_NER_MAX_REQUEST_MB", "1")
    page, outside = _guarded_page(hostile_browser, hostile_page_app)
    # 1.2 MB, set at once (playwright's fill of a long text outlasts its timeout)
    page.wait_for_selector("#tmr-test textarea")
    page.evaluate("text => { const box = document.querySelector('#tmr-test textarea'); box.value = text; "
                  "box.dispatchEvent(new Event('input', {bubbles: true})); }", "Paris B-LOC B-LOC\n" * 70_000)
    page.click("#tmr-run")
    page.wait_for_function("document.body.innerText.includes('TOUGH_NER_MAX_REQUEST_MB')", timeout=30_000)
    assert "the limit is 1 MB (TOUGH_NER_MAX_REQUEST_MB sets it)" in page.inner_text("body")
    page.close()
    assert outside == []


def test_space_download_folder_goes_when_the_session_ends(hostile_browser, hostile_page_app):
    """The session's folder holds its download files while the page is open and is removed
    when the page closes (gradio's unload event)."""
    from tough_ner import spaces

    root = Path(spaces.download_root())
    before = set(root.iterdir())
    page, outside = _guarded_page(hostile_browser, hostile_page_app)
    page.click("#tmr-demo")
    page.wait_for_selector("#tmr-download-csv", state="visible", timeout=60_000)
    (session,) = set(root.iterdir()) - before
    assert sorted(p.name for p in session.rglob("*") if p.is_file()) == ["errors.csv", "results.json", "table.tex"]
    page.close()
    for _ in range(120):
        if not session.exists():
            break
        time.sleep(0.25)
    assert not session.exists()
    assert outside == []


# --- Exports and bucket F1 memory ---
# Bucket F1 with a bucket per entity type (its counts are kept as entries, so memory follows
# the input, never sentences x types), and the files the command and the Spaces write: the CSV
# error table a spreadsheet opens, the Markdown and LaTeX tables.  A command's memory is the
# peak RSS of its own process (os.wait4), run under an address-space bound so that a
# regression fails instead of taking the machine.
import csv  # noqa: E402 -- each section imports what it uses
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from html import unescape  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

from conftest import input_warnings, need, write  # noqa: E402

FORMULA_CELLS = ["=cmd|'/Ccalc'!A0", '=HYPERLINK("http://203.0.113.9/x","y")', "@SUM(1)", "+1+2", "-1+2"]
IMAGE_TYPE = "<img/src=http://203.0.113.9/leak.png>"  # a predicted entity type


def _issue_types_file(path: Path, types: int = 20_000) -> Path:
    """The issue's file: a LOC sentence, then per type a one-token mention of it and a token
    predicted as the next type (20,000 types in 20,001 sentences)."""
    lines = ["Germany B-LOC B-LOC", ""]
    for i in range(types):
        lines += [f"w{i} B-T{i} B-T{i}", f"x O B-T{(i + 1) % types}", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_tough_ner_buckets_on_20000_types_stays_under_300_mb(tmp_path):
    """Detailed bucket F1 kept a dense column per bucket and sentence: the issue's 20,000-type
    file made ``tough-ner buckets`` reach 24 GB (4,000 types: 1.4 GB).  Now it runs with the
    default 1,000 resamples within 300 MB, and every type's bucket has its F1 and interval."""
    test = _issue_types_file(tmp_path / "types.txt")
    train = write(tmp_path / "train.txt", "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n")
    started = time.monotonic()
    code, out, err, peak = command_peak(["buckets", "--train", train, "--test", test, "--json"], tmp_path)
    seconds = time.monotonic() - started
    print(f"tough-ner buckets, 20,000 types: {seconds:.1f} s, peak RSS {peak:.0f} MB")
    assert code == 0, err[-3000:]
    (result,) = json.loads(out)["systems"].values()
    assert result["f1"] == pytest.approx(2 * 20_001 / (20_001 + 40_001))  # every gold mention found once
    tags = result["buckets"]["tag"]
    assert len(tags) == 20_001 and {row["interval"]: row["f1"] for row in tags}["T7"] == pytest.approx(2 / 3)
    intervals = result["diagnostics"]["bootstrap"]["tag"]
    assert len(intervals) == 20_001 and all(low <= high for low, high in intervals)
    assert peak <= 300


def test_the_20000_type_file_as_training_data_stays_under_300_mb(tmp_path):
    """The same file as training data: its statistics held a dense vocabulary x labels table
    (20,003 tokens x 20,002 labels: 3.2 GB); the counts are now sparse, so ``stats`` and
    ``hardeval`` on it stay within 300 MB.  The test file's tokens carry their training counts."""
    train = _issue_types_file(tmp_path / "types.txt")
    test = write(tmp_path / "test.txt", "Germany B-LOC B-LOC\nw7 B-T8 B-T7\nx O B-T1\n\nzz O O\n")
    code, out, err, peak = command_peak(["stats", "--train", train, "--out", tmp_path / "s.npz"], tmp_path)
    print(f"tough-ner stats, 20,000 types in training: peak RSS {peak:.0f} MB")
    assert code == 0, err[-3000:]
    assert "20001 sentences, 40001 tokens, 20002 types of token" in out and peak <= 300
    assert "'T10003', 'T10004', … 19990 more]" in out and len(out) < 400  # the labels, not 20,002 of them
    for train_data in (train, tmp_path / "s.npz"):
        code, out, err, peak = command_peak(["hardeval", "--train", train_data, "--test", test, "--json",
                                             "--detailed"], tmp_path)
        print(f"tough-ner hardeval, 20,000 types in training ({train_data.name}): peak RSS {peak:.0f} MB")
        assert code == 0, err[-3000:]
        result = json.loads(out)
        assert peak <= 300 and result["n_diff_E"] == 1  # w7 is gold T8, trained as T7 only
        (row,) = result["hard_tokens"]["diff_E"]
        assert row["token"] == "w7" and row["train"] == {"T7": 1}


def test_many_short_mentions_and_one_long_one_stay_under_300_mb(tmp_path):
    """20,000 one-token mentions and one of 20,000 tokens (a 390 KB file): the build grouped a
    piece's new mentions in one table as wide as the longest (new mentions x longest: 3 GB, a
    MemoryError); they are grouped a length at a time, in memory linear in their tokens."""
    n = 20_000
    train = write(tmp_path / "train.txt", "".join(f"t{i} B-X\n\n" for i in range(n)) +
                  "".join(f"long{j} {'I' if j else 'B'}-X\n" for j in range(n)))
    code, out, err, peak = command_peak(["stats", "--train", train, "--out", tmp_path / "s.npz"], tmp_path)
    print(f"tough-ner stats, {n:,} short mentions and one long one: peak RSS {peak:.0f} MB")
    assert code == 0, err[-3000:]
    assert f"{n + 1} sentences, {2 * n} tokens" in out and peak <= 300


def test_two_systems_on_20000_types_compared_under_300_mb(tmp_path):
    """Two systems on the issue's file, side by side with their paired comparison (a test per
    bucket, Holm over the family), peaked at 500 MB: the tests' count differences were gathered
    4,096 keys at a time however many entries those keys read (the first keys' buckets span
    every sentence), the comparison resampled precision and recall it never shows, and the JSON
    text was held whole.  Now within 300 MB, every type's difference tested."""
    first = _issue_types_file(tmp_path / "a.txt")
    second = write(tmp_path / "b.txt", re.sub(r"^x O B-T\d+$", "x O O", first.read_text(encoding="utf-8"),
                                              flags=re.M))  # no false positive: each type's F1 is 1
    train = write(tmp_path / "train.txt", "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n")
    code, out, err, peak = command_peak(["buckets", "--train", train, "--test", first, "--test", second, "--json"],
                                        tmp_path, timeout=900)  # 17 s of CPU: a loaded machine stretches it
    print(f"tough-ner buckets, two systems on 20,000 types: peak RSS {peak:.0f} MB")
    assert code == 0, err[-3000:]
    table = json.loads(out)
    assert [system["f1"] for system in table["systems"].values()] == pytest.approx([2 * 20_001 / 60_002, 1.0])
    tags = table["comparison"]["tag"]
    assert len(tags["intervals"]) == len(tags["tests"]) == 20_001
    t7 = tags["intervals"].index("T7")  # 1 right, 2 predicted against 1 right of 1: one sentence differs
    assert tags["difference"][t7] == pytest.approx(2 / 3 - 1) and tags["p_value"][t7] == 1.0
    assert tags["tests"][t7]["units_differ"] == 1 and not any(tags["significant"])
    assert peak <= 300


def test_averages_over_20000_types_of_two_systems_compared_under_300_mb(tmp_path):
    """The paired test of the macro and weighted averages (four count columns a type) read the
    differing units' counts as one dense table, units x columns: on the issue's file against a
    second system, ``tough-ner tmr --versus`` ran out of a 4 GB address space (``report`` with
    two systems at 2,000 types peaked at 2.3 GB).  The differences are now kept as their
    nonzero entries and an average's resampled totals taken a few resamples at a time."""
    first = _issue_types_file(tmp_path / "a.txt")
    second = write(tmp_path / "b.txt", re.sub(r"^x O B-T\d+$", "x O O", first.read_text(encoding="utf-8"),
                                              flags=re.M))
    train = write(tmp_path / "train.txt", "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n")
    code, out, err, peak = command_peak(["tmr", "--train", train, "--test", first, "--versus", second, "--json",
                                         "--resamples", "20"], tmp_path, timeout=900)
    print(f"tough-ner tmr --versus, two systems on 20,000 types: peak RSS {peak:.0f} MB")
    assert code == 0, err[-3000:]
    rows = {row["key"]: row for row in json.loads(out)["rows"]}
    for key, a_value in (("macro_precision", (20_000 * 0.5 + 1) / 20_001), ("macro_f1", (20_000 * 2 / 3 + 1) / 20_001),
                         ("weighted_f1", (20_000 * 2 / 3 + 1) / 20_001)):  # a type: 1 right of 2 predicted
        (test,) = rows[key]["tests"]
        assert list(rows[key]["values"].values()) == pytest.approx([a_value, 1.0]), key
        assert test["difference"] == pytest.approx(a_value - 1) and test["units_differ"] == 20_000, key
        assert test["test"].endswith("normal approximation") and test["significant"], key
    assert peak <= 300


def test_a_report_page_plots_the_30_most_frequent_types_and_lists_them_all(tmp_path):
    """A bar and a tick label a type: the page of the issue's 20,000 types (two systems) ran
    for more than ten minutes past 2 GB, measuring every pair of 20,001 tick labels for overlap.
    Its per-type plots now show the 30 types with the most gold mentions, and say so; the
    tables keep every type."""
    need("matplotlib")
    from tough_ner.cli import main
    from tough_ner.present.html import FIGURE_TYPES, plotted_types

    counts = {f"T{i}": i % 7 for i in range(45)}
    kept = plotted_types(list(counts), counts.get)
    assert len(kept) == FIGURE_TYPES == 30 and kept == sorted(kept, key=list(counts).index)  # in their order
    assert min(counts[t] for t in kept) >= max(counts[t] for t in counts if t not in kept)
    assert [t for t in kept if counts[t] == 2] == ["T2", "T9", "T16", "T23", "T30", "T37"]  # not T44: the last of 7
    assert plotted_types(kept[:5], counts.get) == kept[:5]  # few types: every one
    test = _issue_types_file(tmp_path / "a.txt", types=40)
    gold = write(tmp_path / "gold.txt", re.sub(r"^(\S+ \S+) \S+$", r"\1", test.read_text(encoding="utf-8"),
                                               flags=re.M))
    train = write(tmp_path / "train.txt", "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n")
    page = tmp_path / "r.html"
    assert main(["report", "--train", str(train), "--test", str(gold), "--pred", f"A={test}", "--html", str(page),
                 "--resamples", "20", "--quiet"]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.count("The plot shows the 30 types with the most gold mentions of the 41; the tables list every "
                      "type.") == 2  # TMR's recall per type and the tag buckets' F1
    per_type = text[text.index("id='per-type'"):]
    assert all(f"<tr><td>T{i}</td>" in per_type for i in range(40))  # the per-type table: every type


def test_a_report_of_two_systems_on_2000_types_stays_under_160_mb(tmp_path):
    """``tough-ner report`` (JSON, page and its error tables) of two systems on the issue's file
    cut to 2,000 types, 200 resamples: within 160 MB (measured 128; 165-168 when every per-type
    table was dicts of floats), every type in the JSON and on the page.  The tables of a row per
    type are columns (``core.rows``) and each method's counts are made when it is analysed; the
    JSON is written as it is made, the plots show 30 types.  The issue's 20,000 types (JSON
    only): the next test."""
    need("matplotlib")
    predicted = _issue_types_file(tmp_path / "a.txt", types=2_000)
    text = predicted.read_text(encoding="utf-8")
    gold = write(tmp_path / "gold.txt", re.sub(r"^(\S+ \S+) \S+$", r"\1", text, flags=re.M))
    second = write(tmp_path / "b.txt", re.sub(r"^x O B-T\d+$", "x O O", text, flags=re.M))
    train = write(tmp_path / "train.txt", "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n")
    code, out, err, peak, cpu = command_usage(["report", "--train", train, "--test", gold, "--pred", f"A={predicted}",
                                               "--pred", f"B={second}", "--json", tmp_path / "r.json", "--html",
                                               tmp_path / "r.html", "--resamples", "200", "--quiet"], tmp_path,
                                              timeout=600)
    print(f"tough-ner report, two systems on 2,000 types: {cpu:.1f} s CPU, peak RSS {peak:.0f} MB")
    assert code == 0, err[-3000:]
    results = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]
    for name, f1 in (("A", 2 / 3), ("B", 1.0)):  # T7: one right of two predicted (A), of one (B)
        tags = {row["interval"]: row for row in results["details"][name]["bucket_f1"]["buckets"]["tag"]}
        assert len(tags) == 2_001 and tags["T7"]["f1"] == pytest.approx(f1)
    assert len(results["comparisons"][0]["bucket_f1"]["tag"]["tests"]) == 2_001
    assert "The plot shows the 30 types with the most gold mentions of the 2,001" in \
        (tmp_path / "r.html").read_text(encoding="utf-8")
    assert peak <= 160


def test_a_report_of_two_systems_on_20000_types_stays_under_300_mb(tmp_path):
    """The issue's case: ``tough-ner report --json`` of two systems on its 20,000-type file, with
    the default 1,000 resamples, peaked at 561-575 MB when every per-type table was dicts, then
    at 295-306 MiB with them as columns (each method's counts made when analysed); the subset
    tests' rows are now made one at a time, the systems' counts share one table of formulas and
    a block of resampled keys holds half the totals: 259-262 MiB measured, within 300 MB, every
    type in the JSON.  About 50 s of CPU."""
    predicted = _issue_types_file(tmp_path / "a.txt")
    text = predicted.read_text(encoding="utf-8")
    gold = write(tmp_path / "gold.txt", re.sub(r"^(\S+ \S+) \S+$", r"\1", text, flags=re.M))
    second = write(tmp_path / "b.txt", re.sub(r"^x O B-T\d+$", "x O O", text, flags=re.M))
    train = write(tmp_path / "train.txt", "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n")
    code, out, err, peak, cpu = command_usage(["report", "--train", train, "--test", gold, "--pred", f"A={predicted}",
                                               "--pred", f"B={second}", "--json", tmp_path / "r.json", "--quiet"],
                                              tmp_path, timeout=900)  # a loaded machine stretches the wall time
    print(f"tough-ner report, two systems on 20,000 types: {cpu:.1f} s CPU, peak RSS {peak:.0f} MB")
    assert code == 0, err[-3000:]
    results = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]
    types = {"LOC"} | {f"T{i}" for i in range(20_000)}
    for name, precision in (("A", 0.5), ("B", 1.0)):  # T7: one right of two predicted (A), of one (B)
        details = results["details"][name]
        tags = {row["interval"]: row for row in details["bucket_f1"]["buckets"]["tag"]}
        assert set(tags) == set(details["tmr"]["per_type"]) == types
        assert tags["T7"]["precision"] == precision and tags["T7"]["recall"] == 1.0
        assert len(details["bucket_f1"]["diagnostics"]["bootstrap"]["tag"]) == 20_001
    comparison = results["comparisons"][0]["bucket_f1"]["tag"]
    assert set(comparison["intervals"]) == types and len(comparison["tests"]) == 20_001
    assert sum(key.startswith("tag_") for key in results["tests"]["bucket_f1"]) == 20_001
    assert peak <= 300


def _two_systems_counts(uncertainty_module):
    from tough_ner import Batch, TrainStats, bucket_f1
    from tough_ner.demo import load_demo
    from tough_ner.methods import tmr
    from tough_ner.methods.buckets import counts

    train, test = load_demo()
    stats = TrainStats.from_lists(train.tokens, train.tags)
    batches = [Batch(test.tokens, test.tags, predicted) for predicted in test.predictions]
    out = {"detailed": bucket_f1(stats, batches[0], detailed=True, bootstrap=200),
           "partial": bucket_f1(stats, batches[1], detailed=True, bootstrap=200, match="partial")}
    systems = {f"s{i}": counts(stats, batch) for i, batch in enumerate(batches)}
    out["analyse"] = uncertainty_module.analyse(systems, None, 200, 0.95, 1)  # both tests: exact and normal
    flat = [bucket_f1(stats, batch) for batch in batches]
    out["runs"] = uncertainty_module.compare_runs(flat, [flat[1]], list(systems.values()), [systems["s1"]],
                                                  n_resamples=200)  # A's counts pooled over its two runs
    for match in ("strict", "partial"):  # the averages over types (four columns a type), partial credits too
        out[f"tmr {match}"] = uncertainty_module.analyse(
            {f"s{i}": tmr.counts(stats, batch, match, beta=2.0) for i, batch in enumerate(batches)}, None, 200, 0.95, 3)
    return out


def _same(dense, entries, path=""):
    """Every number equal (NaN to NaN); p-values to 1e-9 (their variance summed over fewer zeros)."""
    if isinstance(dense, dict):
        assert list(dense) == list(entries), path
        for key in dense:
            _same(dense[key], entries[key], f"{path}/{key}")
    elif isinstance(dense, (list, tuple)):
        assert len(dense) == len(entries), path
        for i, (a, b) in enumerate(zip(dense, entries)):
            _same(a, b, f"{path}/{i}")
    elif isinstance(dense, float) and math.isnan(dense):
        assert math.isnan(entries), path
    elif path.endswith("p_value"):
        assert entries == pytest.approx(dense, rel=1e-9), path
    else:
        assert dense == entries, path


def test_bucket_counts_as_entries_give_the_dense_tables_numbers(monkeypatch):
    """The entries' engine (used once dense tables would pass DENSE_CELLS) on the demo's two
    systems: intervals, values, pooled runs and partial credits to the last digit; p-values to
    rounding.  The dense engine still does every usual test set (CoNLL-2003: unchanged)."""
    from tough_ner.core import uncertainty

    dense = _two_systems_counts(uncertainty)
    monkeypatch.setattr(uncertainty, "DENSE_CELLS", 0)
    monkeypatch.setattr(uncertainty, "_BLOCK_CELLS", 64)  # an average's totals a resample or two at a time
    used = []
    as_entries = uncertainty.units_as_entries
    monkeypatch.setattr(uncertainty, "units_as_entries", lambda *a: used.append(1) or as_entries(*a))
    monkeypatch.setattr(uncertainty.Counts, "matrix", lambda self: pytest.fail("a dense table was built"))
    entries = _two_systems_counts(uncertainty)
    assert used
    _same(dense, entries)


def _swapped_share(uncertainty, a, b, key):
    """The exact test's p-value the slow way: every swap of the units whose counts differ, each
    valued from the whole tables."""
    ta, tb = a.matrix(), b.matrix()
    differ = np.flatnonzero((ta != tb).any(axis=1))
    value = lambda table: float(uncertainty.evaluate(a.keys, a.names, table.sum(axis=0), [key])[key])
    observed = abs(value(ta) - value(tb))
    extreme = 0
    for swap in range(2 ** len(differ)):
        chosen = differ[[(swap >> i) & 1 == 1 for i in range(len(differ))]]
        sa, sb = ta.copy(), tb.copy()
        sa[chosen], sb[chosen] = tb[chosen], ta[chosen]
        extreme += abs(value(sa) - value(sb)) >= observed - 1e-12 * max(1.0, observed)
    return extreme / 2 ** len(differ)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 9), st.sampled_from([1.0, 2.0]), st.booleans())
def test_exact_test_of_averages_reads_the_moved_types_only(seed, moved, beta, entries):
    """The exact test of an average over types values only the types a swap moves (the others'
    part summed once, the swaps a block at a time): an average over 20,000 types swapped 2^15
    ways was a 2^15 x 80,000 table.  Its p-values are those of valuing every swap from the whole
    tables, with either engine; hypothesis draws the counts and which units differ."""
    from tough_ner.core import uncertainty

    rng = np.random.default_rng(seed)
    n, groups = 24, 12
    types, sentences = rng.integers(0, groups, 30), rng.integers(0, n, 30)  # gold mentions
    predicted = (np.concatenate([types[:20], rng.integers(0, groups, 8)]),  # 20 of them and 8 others
                 np.concatenate([sentences[:20], rng.integers(0, n, 8)]), None)
    hit_a = (rng.random(30) < 0.6) & (np.arange(30) < 20)
    hit_b = np.where(sentences < moved, (rng.random(30) < 0.6) & (np.arange(30) < 20), hit_a)  # differ in the first units

    def system(hit):
        counts = uncertainty.Counts(np.arange(n, dtype=np.uint64))
        counts.averages(groups, (types[hit], sentences[hit], None), (types, sentences, None), predicted, beta=beta)
        return counts

    a, b = system(hit_a), system(hit_b)
    keys = [key for key in a.keys if key.startswith(("macro", "weighted"))]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(uncertainty, "_SWAPPED", 7)  # a few swaps a block
        if entries:
            patch.setattr(uncertainty, "DENSE_CELLS", 0)
        table = uncertainty.analyse({"A": a, "B": b}, keys, 20, 0.95, 0)
    for key in keys:
        (test,) = table[key]["tests"]
        if test["units_differ"] and not math.isnan(test["difference"]):
            assert test["test"].endswith("exact")
            assert test["p_value"] == pytest.approx(_swapped_share(uncertainty, a, b, key), abs=1e-12), key


def _block_weights(strata, n_resamples, seed):
    """The weights as drawn before: each stratum's whole (resamples x members) block at once."""
    rng = np.random.default_rng([seed, 0])
    weights = np.zeros((n_resamples, len(strata)))
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        draws = rng.integers(0, len(members), size=(n_resamples, len(members)))
        weights[:, members] = [np.bincount(row, minlength=len(members)) for row in draws]
    return weights


@pytest.mark.parametrize("strata", [[0] * 7, [0] * 20_001, [0] * 5 + [1] * 8 + [2] * 3, [1, 0, 1, 0, 0]])
def test_resample_weights_drawn_a_row_at_a_time_are_the_same_numbers(strata):
    """The weights are drawn a resample at a time (a whole block of draws beside the weights
    was 320 MB more at 20,000 sentences), compactly for the entries' engine: the same numbers."""
    from tough_ner.core import uncertainty

    strata = np.array(strata)
    expected = _block_weights(strata, 37, 3)
    assert np.array_equal(uncertainty.resample_weights(strata, 37, 3), expected)
    (compact,) = uncertainty._weight_chunks(strata, 37, 3, compact=True)
    assert compact.dtype == np.uint8 and np.array_equal(compact.T, expected)  # (units, resamples)


def _hostile_system(folder: Path):
    """(gold file, prediction file) whose tokens are spreadsheet formulas and one of whose
    predicted types is an HTML image (scored against the demo's training data)."""
    rows = [(FORMULA_CELLS[0], "B-ORG", "B-ORG"), ("visits", "O", "O"), (FORMULA_CELLS[2], "B-LOC", "O"), None,
            (FORMULA_CELLS[3], "B-PER", "B-" + IMAGE_TYPE), ("said", "O", "O"),
            (FORMULA_CELLS[4], "O", "B-MISC"), (FORMULA_CELLS[1], "B-ORG", "B-ORG"), None]
    text = "".join(" ".join(row) + "\n" if row else "\n" for row in rows)
    return write(folder / "gold.conll", "".join(" ".join(r[:2]) + "\n" if r else "\n" for r in rows)), \
        write(folder / "pred.conll", text)


def _formula_cells(rows):
    """The cells a spreadsheet would evaluate: text starting with = + - @ tab or CR that is not a number."""
    def number(cell):
        try:
            float(cell)
            return True
        except ValueError:
            return False
    return [cell for row in rows for cell in row.values() if cell.startswith(("=", "+", "-", "@", "\t", "\r"))
            and not number(cell)]


def test_error_csv_puts_a_quote_before_cells_a_spreadsheet_would_evaluate():
    """--errors e.csv wrote =cmd|'/Ccalc'!A0, =HYPERLINK(..), @SUM(1) verbatim.  Text starting
    with = + - @ tab or CR now starts with ' (OWASP); numbers stay numbers, negative ones too."""
    from tough_ner import Batch, TrainStats
    from tough_ner.demo import load_demo
    from tough_ner.present import errors

    train = load_demo()[0]
    stats = TrainStats.from_lists(train.tokens, train.tags)
    tokens = [FORMULA_CELLS + ["\t=1+1", "\r=2+2"]]
    gold = [["B-ORG", "B-ORG", "B-LOC", "B-PER", "O", "B-MISC", "O"]]
    predicted = [["B-ORG", "O", "B-LOC", "B-LOC", "B-PER", "B-MISC", "B-ORG"]]
    rows = errors.error_rows(stats, Batch(tokens, gold, predicted), system="=2+5")
    read = list(csv.DictReader(io.StringIO(errors.to_text(rows, "csv"))))
    assert _formula_cells(read) == []
    texts = [row["text"] for row in read]
    assert texts == ["'=cmd|'/Ccalc'!A0", "'=HYPERLINK(\"http://203.0.113.9/x\",\"y\")", "'@SUM(1)", "'+1+2",
                     "'-1+2", "'\t=1+1", "'\r=2+2"]
    assert {row["system"] for row in read} == {"'=2+5"} and read[0]["context"].startswith("[=cmd")
    assert [row["start"] for row in read] == ["0", "1", "2", "3", "4", "5", "6"]  # numeric columns as numbers
    # A number is never prefixed (its minus is a sign): a numeric column stays numeric.
    negative = dict(rows[0], overlap=-0.5, sentence=-3)
    (cells,) = csv.DictReader(io.StringIO(errors.to_text([negative], "csv")))
    assert cells["overlap"] == "-0.5" and cells["sentence"] == "-3"
    assert json.loads(errors.to_text(rows, "jsonl").splitlines()[0])["text"] == FORMULA_CELLS[0]  # JSON: as it is


def test_report_exports_neutralise_formulas_html_and_table_breaks(tmp_path):
    """The command's --errors CSV, --markdown and --latex on systems named a|b|c and
    <script>document.write(1)</script> (the Markdown passed HTML through: rendered, the script
    ran; a|b|c split the table) and a predicted type that is an HTML image."""
    from markdown_it import MarkdownIt
    from tough_ner.demo import TRAIN

    gold, predicted = _hostile_system(tmp_path)
    other = write(tmp_path / "other.conll", predicted.read_text().replace("visits O O", "visits O B-ORG"))
    script = "<script>document.write(1)</script>"
    code, out, err, _ = command_peak(["report", "--train", TRAIN, "--test", gold, "--pred", f"a|b|c={predicted}",
                                       "--pred", f"{script}={other}", "--errors", tmp_path / "e.csv", "--markdown",
                                       tmp_path / "t.md", "--latex", tmp_path / "t.tex", "--quiet"], tmp_path)
    assert code == 0, err[-3000:]
    with open(tmp_path / "e.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert _formula_cells(rows) == [] and "'=cmd|'/Ccalc'!A0" in {row["text"] for row in rows}
    markdown = (tmp_path / "t.md").read_text(encoding="utf-8")
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;document.write(1)&lt;/script&gt;" in html and "a|b|c" in html
    for table in re.findall(r"<table>(.*?)</table>", html, re.S):  # every row as wide as its header
        widths = {row.count("<th") + row.count("<td") for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)}
        assert len(widths) == 1
    assert IMAGE_TYPE.replace("<", "&lt;").replace(">", "&gt;") in html  # the type, as typed
    latex = (tmp_path / "t.tex").read_text(encoding="utf-8")
    assert (r"a\textbar{}b\textbar{}c & \textless{}script\textgreater{}document.write(1)"
            r"\textless{}/script\textgreater{}") in latex
    assert "<" not in latex and "|" not in latex


def test_markdown_and_latex_tables_escape_every_name():
    """Titles, columns and text cells: HTML, links and images, code, cell breaks and line
    breaks shown as typed; numbers and intervals (ours) as they were."""
    from markdown_it import MarkdownIt
    from tough_ner.present.export import Cell, Table, latex_tables, markdown_tables

    hostile = "![x](http://203.0.113.9/leak.png) <b>bold</b> `code` \\| end\nnext [1cm]"
    table = Table(f"t {hostile}", ["measure", hostile, "b"],
                  [[Cell(hostile), Cell(0.5, ci=[0.25, 0.75], bold=True), Cell(-1.0)],
                   [Cell("[1cm]"), Cell("&amp;"), Cell(3)]], "x")
    markdown = markdown_tables([table])
    assert "| **0.5000 [0.2500, 0.7500]** | -1.0000 |" in markdown
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<img" not in html and "<b>" not in html and "<code>" not in html and "<a " not in html
    text = unescape(re.sub(r"<[^>]+>", "", html))  # what the page shows
    assert hostile.replace("\n", " ") in text and "&amp;" in text
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    assert [row.count("<th") + row.count("<td") for row in rows] == [3, 3, 3]
    latex = latex_tables([table])
    assert r"\textbackslash{}\textbar{} end next [1cm]" in latex and "\n{}[1cm] & \\&amp; & 3 \\\\" in latex


def test_space_csv_download_is_neutralised_too(tmp_path):
    """The Spaces' error table download goes through the same writer."""
    need("gradio")
    from tough_ner import spaces
    from tough_ner.demo import TRAIN

    gold, predicted = _hostile_system(tmp_path)
    with input_warnings([IMAGE_TYPE]):
        outputs = spaces.score_tmr(Path(TRAIN).read_text(encoding="utf-8"), predicted.read_text(encoding="utf-8"),
                                   "=2+5")
    csv_file = next(o for o in outputs if isinstance(o, str) and o.endswith("errors.csv"))
    with open(csv_file, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert _formula_cells(rows) == [] and {row["system"] for row in rows} == {"'=2+5"}
    assert "'@SUM(1)" in {row["text"] for row in rows}


def test_error_table_is_written_a_piece_at_a_time(tmp_path, monkeypatch):
    """An accepted 10 MB paste cost about 90 times its size in the TMR Space, 180 MB of it the
    error table's CSV held as one text (and its bytes) while written.  The table is now written
    in pieces of rows (the rows a system at a time): the same text as ``to_text``."""
    from tough_ner import Batch, TrainStats
    from tough_ner.demo import load_demo
    from tough_ner.present import errors, formatting

    train, test = load_demo()
    stats = TrainStats.from_lists(train.tokens, train.tags)
    rows = [row for i, predicted in enumerate(test.predictions)
            for row in errors.error_rows(stats, Batch(test.tokens, test.tags, predicted), f"s{i}")]
    written = []
    monkeypatch.setattr(errors, "write_atomic", lambda path, data: written.append(data))
    for extension, fmt in ((".csv", "csv"), (".jsonl", "jsonl")):
        errors.write(iter(rows), tmp_path / f"e{extension}")
        assert not isinstance(written[-1], str) and "".join(written[-1]) == errors.to_text(rows, fmt)
    columns, cells = list(rows[0]), [list(row.values()) for row in rows]
    pieces = list(formatting.csv_pieces(columns, cells, rows_at_once=7))
    assert len(pieces) == len(rows) // 7 + 1 and "".join(pieces) == formatting.csv_text(columns, cells)


def test_a_space_page_shows_its_own_input_warnings():
    """A page's input warnings are shown above its results (as text), the ones its own input
    gave: pages computed at the same time in two threads do not see each other's, whether two
    visitors' or two runs of one visitor's (where a Space lets them run together: neither
    removes the download folder the other is writing)."""
    need("gradio")
    import threading

    from tough_ner import spaces
    from tough_ner.corpus import conll_text
    from tough_ner.demo import TRAIN, load_demo

    _, test = load_demo()
    foo = [list(tags) for tags in test.predictions[0]]
    s, i = next((s, i) for s, tags in enumerate(foo) for i, tag in enumerate(tags) if tag.startswith("B-"))
    foo[s][i] = "B-FOO"
    texts = {"foo": conll_text(test.tokens, test.tags, foo),
             "plain": conll_text(test.tokens, test.tags, test.predictions[0])}
    page = spaces._in_session(spaces._safe(spaces._reader(spaces.score_tmr, 2), 7), "tmr")
    train, shown = Path(TRAIN).read_text(encoding="utf-8"), {}

    def open_page(name, visitor):
        shown[name] = page(_Request(visitor or f"visitor-{name}"), train, None, texts[name], None, "")[0]

    for visitor in (None, None, None, "one-visitor", "one-visitor", "one-visitor"):
        threads = [threading.Thread(target=open_page, args=(name, visitor)) for name in texts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert "**Error:**" not in shown["foo"] + shown["plain"]
        assert __import__("html").unescape(shown["foo"]).count(
            "**Warning:** predicted entity types absent from the gold or training data: FOO (1 span)") == 1
        assert "**Warning:**" not in shown["plain"]
    for session in ("visitor-foo", "visitor-plain", "one-visitor"):
        spaces.end_session(session)
