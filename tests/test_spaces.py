import csv
import io
import json
import os
import re
import socket
import subprocess
from pathlib import Path
import sys
import threading
import time
import urllib.request

import pytest

from tough_ner import Batch, TrainStats, hardeval, tmr
from tough_ner.attacks import entity_attack
from tough_ner.baselines import memorization
from tough_ner.buckets import bucket_f1
from tough_ner.demo import SYSTEMS, load_demo, load_demo_nrb
from tough_ner.nrb import score_sets
from tough_ner.rockner import rockner

from conftest import FLAGS, ROOT, chromium, need

SPACES = ["hardeval", "tmr", "bucket_f1", "nrb", "rockner"]


@pytest.fixture(scope="module")
def browser():
    need("gradio")
    playwright = need("playwright.sync_api")
    path = chromium()
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path, args=FLAGS)  # a fresh profile each launch
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def served():
    """Each app, launched once on a free localhost port that gradio itself finds and binds (it
    tries 7860 onwards and moves on when another server took one first: no probe-then-bind race
    with parallel runs)."""
    from tough_ner.spaces import launch

    apps, urls = [], {}
    for name in SPACES + ["all"]:
        app = launch(name, block=False)
        apps.append(app)
        urls[name] = f"http://127.0.0.1:{app.server_port}/"
    yield urls
    for app in apps:
        app.close()


def open_page(browser, url):
    """A page that refuses, and records, every request leaving 127.0.0.1."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    outside = []

    def guard(route):
        if route.request.url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()
    page.route("**/*", guard)
    page.goto(url)
    return page, outside


def shown_table(page, name):
    """The headline table as {measure: [cell per column]} (systems, n, paired test)."""
    page.wait_for_selector(f"#{name}-headline table", timeout=60_000)
    rows = page.locator(f"#{name}-headline table tr").all_inner_texts()
    return {cells[0]: cells[1:] for cells in (re.split(r"\t", row.strip()) for row in rows[1:])}


def results_table(page, name):
    """The results table as {key: (measure, n, [value per system])}."""
    page.wait_for_selector(f"#{name}-table table", timeout=60_000)
    page.wait_for_function(f"document.querySelector('#{name}-table').innerText.split('\\n').length > 12",
                           timeout=60_000)
    systems = [n.strip() for n in page.input_value(f"#{name}-names textarea").split(",")]
    lines = [line.strip() for line in page.inner_text(f"#{name}-table").split("\n") if line.strip()]
    width = 3 + len(systems)
    assert lines[1:1 + width] == ["measure", "key", "n"] + systems, lines[:10]
    cells = lines[1 + width:]
    assert len(cells) % width == 0, cells[:20]
    rows = [cells[i:i + width] for i in range(0, len(cells), width)]
    return {row[1]: (row[0], row[2], row[3:]) for row in rows}


def fmt(value):
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.4f}"
    return str(value)


def expected(name):
    """The Python API's numbers for the demo input of each app, per system column."""
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    batches = [Batch(test.tokens, test.tags, p) for p in test.predictions]
    if name == "hardeval":
        return [hardeval(stats, b, ci=True) for b in batches]
    if name == "tmr":
        return [tmr(stats, b, ci=True) for b in batches]
    if name == "bucket_f1":
        return [bucket_f1(stats, b, ci=True) for b in batches]
    if name == "nrb":
        nrb_set, wts_set = load_demo_nrb()
        return [score_sets({"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[i]),
                            "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[i])}, "conll", stats, ci=True)
                for i in range(2)]
    attacked = entity_attack(test, ratio=1.0, seed=0, train=stats).to_dict()
    predicted = memorization(stats, attacked["tokens"])
    return [rockner(batches[0], Batch(attacked["tokens"], attacked["ner_tags"], predicted), ci=True)]


def not_blank(shot):
    from PIL import Image, ImageStat

    image = Image.open(shot).convert("L")
    return image.size[1] > 1500 and ImageStat.Stat(image).stddev[0] > 20


@pytest.mark.parametrize("name", SPACES)
def test_demo_button_shows_the_python_api_numbers(browser, served, name, tmp_path):
    from tough_ner.spaces import n_key

    page, outside = open_page(browser, served[name])
    assert not page.locator(f"#{name}-details").is_visible()  # no empty table with placeholder headers
    page.click(f"#{name}-demo")
    table = shown_table(page, name)
    api = expected(name)
    assert len(table) >= 1
    for key, cells in table.items():
        # each system's value with the interval the Python API gives (ci=True), then n, then the test
        shown = [cell.rstrip("†") for cell in cells[:len(api)]]
        assert shown == [f"{fmt(result[key])} [{result[key + '_ci_low']:.4f}, {result[key + '_ci_high']:.4f}]"
                         for result in api], key
        assert cells[len(api)].replace("/", "").isdigit()  # n
        if len(api) == 2:
            assert cells[-1].startswith(" - ".join(SYSTEMS)) and "p " in cells[-1], cells[-1]
    table = results_table(page, name)
    api = [{k: v for k, v in r.items() if not k.endswith(('_ci_low', '_ci_high'))} for r in api]
    counts = {n_key(key, api[0]) for key in api[0]} - {None}
    assert set(table) | counts == set(api[0])  # every key once: as a row, or as the n of rows
    for key, (measure, n, values) in table.items():
        assert values == [fmt(result[key]) for result in api], key
        assert n == (fmt(api[0][n_key(key, api[0])]) if n_key(key, api[0]) else n), key
    assert page.input_value(f"#{name}-names textarea") == ("memorizer" if name == "rockner" else
                                                        "memorizer, contextual")  # the demo's real names
    page.wait_for_selector(f"#{name}-plot img, #{name}-plot svg, #{name}-plot canvas", timeout=30_000)
    assert page.locator(f"#{name}-details").is_visible()
    shot = tmp_path / f"space-{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    page.close()
    assert outside == []
    assert not_blank(shot)


def test_space_has_a_glossary_and_downloads_json_csv_and_latex(browser, served, tmp_path):
    from tough_ner.errors import COLUMNS

    page, outside = open_page(browser, served["tmr"])
    assert not page.locator("#tmr-download-json").is_visible()  # nothing to download yet
    page.click("#tmr-glossary")
    page.wait_for_function("document.querySelector('#tmr-glossary').innerText.includes('type-confusable')",
                           timeout=30_000)
    page.click("#tmr-demo")
    results_table(page, "tmr")
    files = {}
    for kind in ("json", "csv", "latex"):
        page.wait_for_selector(f"#tmr-download-{kind}", state="visible", timeout=30_000)
        with page.expect_download() as info:
            page.click(f"#tmr-download-{kind}")
        files[kind] = Path(info.value.path()).read_text(encoding="utf-8")
    page.close()
    assert outside == []
    results = json.loads(files["json"])["results"]
    api = [tmr_of(0), tmr_of(1)]
    assert results == {"memorizer": null_nan(api[0]), "contextual": null_nan(api[1])}
    rows = list(csv.DictReader(io.StringIO(files["csv"])))
    assert list(rows[0]) == list(COLUMNS) and {r["system"] for r in rows} == {"memorizer", "contextual"}
    assert sum(r["side"] == "gold" for r in rows) == 2 * api[0]["n_mentions"]
    assert "\\toprule" in files["latex"] and "\\bottomrule" in files["latex"] and "memorizer & contextual" in \
        files["latex"]


def load_demo_stats():
    train, test = load_demo()
    return TrainStats.from_corpus(train), test


def tmr_of(index):
    stats, test = load_demo_stats()
    return tmr(stats, Batch(test.tokens, test.tags, test.predictions[index]))


def null_nan(value):
    return json.loads(json.dumps(value).replace("NaN", "null"))


def test_bad_input_shows_a_readable_message(browser, served, tmp_path):
    page, outside = open_page(browser, served["hardeval"])
    page.fill("#hardeval-train textarea", "Ann B-PER\nsaw O\n")
    cases = [("", "test data is empty"),
             ("Ann B-PER B-PER\nsaw O\n", "line 2: 2 columns where earlier lines have 3"),
             ("Ann B-PER X-PER\nsaw O O\n", "line 1, column 3: unknown tag 'X-PER'"),
             # Quoted user input is text: this image was fetched when the message was Markdown.
             ("Ann B-PER ![x](http://203.0.113.9/x.png)\n", "unknown tag '![x](http://203.0.113.9/x.png)'")]
    for text, message in cases:
        page.fill("#hardeval-test textarea", text)
        page.click("#hardeval-run")
        page.wait_for_function(f"document.querySelector('#hardeval-error').innerText.includes({message!r})",
                               timeout=30_000)
        error = page.inner_text("#hardeval-error")  # may still start with gradio's "processing" status
        assert f"Error: {message}" in error or ("Error: " in error and message in error)
        assert "Traceback" not in error
        page.wait_for_selector("[data-testid='toast-body'].warning", timeout=30_000)  # and a pop-up
    assert page.locator("#hardeval-error a, #hardeval-error img").count() == 0  # the URL stayed text
    page.screenshot(path=str(tmp_path / "space-error.png"), full_page=True)
    print(f"screenshot: {tmp_path / 'space-error.png'}")
    page.close()
    assert outside == []


def test_combined_app_has_every_metric_in_tabs(browser, served, tmp_path):
    page, outside = open_page(browser, served["all"])
    from tough_ner.spaces import NAMES, TITLES

    for name in NAMES:  # the app renders after the page loads: wait for each tab
        page.get_by_role("tab", name=TITLES[name]).wait_for(timeout=30_000)
    page.get_by_role("tab", name=TITLES["tmr"]).click()
    page.click("#tmr-demo")
    table = shown_table(page, "tmr")
    assert [cell.split(" [")[0] for cell in table["recall_unseen_tokens"][:2]] == [
        fmt(r["recall_unseen_tokens"]) for r in expected("tmr")]
    page.screenshot(path=str(tmp_path / "space-all.png"), full_page=True)
    print(f"screenshot: {tmp_path / 'space-all.png'}")
    page.close()
    assert outside == []
    assert not_blank(tmp_path / "space-all.png")


def test_rockner_space_attacks_the_original_set(browser, served):
    page, outside = open_page(browser, served["rockner"])
    page.click("#rockner-demo")
    shown_table(page, "rockner")
    page.click("#rockner-attack")
    page.wait_for_function("document.querySelector('#rockner-attacked-out textarea').value.length > 0",
                           timeout=30_000)
    text = page.input_value("#rockner-attacked-out textarea")
    train, test = load_demo()
    attacked = entity_attack(test, ratio=1.0, seed=0, train=TrainStats.from_corpus(train)).to_dict()
    assert text.split("\n\n")[0].split("\n") == [f"{t} {g}" for t, g in zip(attacked["tokens"][0],
                                                                              attacked["ner_tags"][0])]
    page.close()
    assert outside == []


def listening_addresses(port):
    """The addresses listening on a TCP port, from /proc/net/tcp and tcp6 (state 0A = LISTEN)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as handle:
            for line in handle.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.rsplit(":", 1)
                if state == "0A" and int(hex_port, 16) == port:
                    raw = bytes.fromhex(address)
                    found.append(".".join(str(b) for b in raw[::-1]) if len(raw) == 4 else raw.hex())
    return found


def test_space_command_serves_on_localhost_only():
    need("gradio")
    # No --port: gradio binds the first free port from 7860 and prints its address.
    process = subprocess.Popen([sys.executable, "-m", "tough_ner.cli", "space", "tmr"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1"})
    try:
        lines = []
        threading.Thread(target=lambda: [lines.append(line) for line in process.stdout], daemon=True).start()
        for _ in range(240):
            found = [re.search(r"http://127\.0\.0\.1:(\d+)", line) for line in list(lines)]
            if any(found) or process.poll() is not None:
                break
            time.sleep(0.5)
        port = next((int(m.group(1)) for m in found if m), None)
        assert port is not None, "".join(lines)
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    assert response.status == 200 and b"tough-ner" in response.read()
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the space did not start")
        assert listening_addresses(port) == ["127.0.0.1"]
    finally:
        process.terminate()
        process.wait(30)


def test_space_app_listens_where_gradio_server_name_says():
    """A Hub Space must listen on 0.0.0.0, which it says in GRADIO_SERVER_NAME; `tough-ner space`
    (above) stays on 127.0.0.1."""
    need("gradio")
    for _ in range(3):  # a port found free may be taken before the app binds it: then try another
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen([sys.executable, str(ROOT / "spaces" / "tmr" / "app.py")], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, cwd=str(ROOT / "spaces" / "tmr"),
                                   env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False",
                                        "GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": str(port),
                                        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")})
        try:
            for _ in range(120):
                if listening_addresses(port) or process.poll() is not None:
                    break
                time.sleep(0.5)
            if process.poll() is None:
                assert listening_addresses(port) == ["0.0.0.0"]
                return
        finally:
            process.terminate()
            process.wait(30)
    pytest.fail("the Space app never listened")


def test_space_folders_are_shims_with_space_cards():
    for name in SPACES + ["tough_ner"]:
        folder = ROOT / "spaces" / name
        header = (folder / "README.md").read_text().split("---")[1]
        for key in ("title", "emoji", "colorFrom", "colorTo", "sdk", "app_file", "tags"):
            assert re.search(rf"^{key}:", header, re.M), (name, key)
        assert "sdk: gradio" in header and "app_file: app.py" in header
        app = (folder / "app.py").read_text()
        assert f'build("{"all" if name == "tough_ner" else name}")' in app
        assert (folder / "requirements.txt").read_text().startswith("tough-ner[spaces]")
