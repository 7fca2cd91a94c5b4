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

from tough_ner import Batch, TrainStats, tmr
from tough_ner.attacks import entity_attack
from tough_ner.demo import SYSTEMS, load_demo

from conftest import ROOT, expected, fmt, listening_addresses, need, not_blank, open_page, results_table, shown_table

SPACES = ["hardeval", "tmr", "bucket_f1", "nrb", "rockner"]


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


def test_space_folders_are_what_export_writes():
    """spaces/<folder>/ hold the files `tough-ner space NAME --export` writes (less the package
    copy): regenerate them with `PYTHONPATH=. python tools/update_spaces.py`."""
    need("gradio")
    from tough_ner.spaces import SPACES, space_files

    assert sorted(folder for folder, *_ in SPACES.values()) == sorted(p.name for p in (ROOT / "spaces").iterdir())
    for name, (folder, *_) in SPACES.items():
        files = space_files(name)
        for file, text in files.items():
            assert (ROOT / "spaces" / folder / file).read_text(encoding="utf-8") == text, (folder, file)
        header = files["README.md"].split("---")[1]
        for key in ("title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "app_file", "tags"):
            assert re.search(rf"^{key}:", header, re.M), (name, key)
        assert "sdk: gradio" in header and "app_file: app.py" in header
        assert f'build("{name}", stats=' in files["app.py"]


def test_export_writes_a_space_folder(tmp_path):
    gradio = need("gradio")
    from tough_ner.cli import main
    from tough_ner.spaces import requirements

    stats_path = tmp_path / "demo.npz"
    train, _ = load_demo()
    TrainStats.from_corpus(train).save(stats_path)
    folder = tmp_path / "space"
    (folder / "tough_ner").mkdir(parents=True)
    (folder / "tough_ner" / "stale.py").write_text("")  # an earlier export's leftovers go
    assert main(["space", "tmr", "--export", str(folder), "--stats", str(stats_path)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "app.py", "requirements.txt", "tough_ner",
                                                        "train_stats.npz"]
    source = ROOT / "tough_ner"
    package = sorted(str(p.relative_to(source)) for p in source.rglob("*") if p.is_file()
                     and "__pycache__" not in p.parts)
    assert sorted(str(p.relative_to(folder / "tough_ner")) for p in (folder / "tough_ner").rglob("*")
                  if p.is_file()) == package
    assert all((folder / "tough_ner" / p).read_bytes() == (source / p).read_bytes() for p in package)
    assert TrainStats.load(folder / "train_stats.npz") == TrainStats.load(stats_path)
    assert "STATS = 'train_stats.npz'" in (folder / "app.py").read_text()
    card = (folder / "README.md").read_text()
    assert f"\nsdk_version: {gradio.__version__}\n" in card and "shareable" in card
    wanted = (folder / "requirements.txt").read_text().split()
    assert wanted == requirements() and f"gradio=={gradio.__version__}" in wanted
    assert not any("tough" in line or "/" in line or line.startswith(("-", ".")) for line in wanted)
    assert {"evaluate", "datasets", "numpy", "seqeval", "matplotlib", "pandas"} <= {
        re.split(r"[<>=!~;\[ ]", line)[0] for line in wanted}


def test_export_refuses_a_bad_statistics_file(tmp_path, capsys):
    need("gradio")
    from tough_ner.cli import main

    bad = tmp_path / "stats.npz"
    bad.write_text("not statistics")
    assert main(["space", "hardeval", "--export", str(tmp_path / "out"), "--stats", str(bad)]) == 2
    assert "stats.npz" in capsys.readouterr().err and not (tmp_path / "out").exists()

