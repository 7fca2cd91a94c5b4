import contextlib
import hashlib
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import tough_ner
from tough_ner import Batch, TrainStats, hardeval, tmr
from tough_ner.buckets import ATTRIBUTES, bucket_f1
from tough_ner.cli import main
from tough_ner.corpus import Corpus, write_conll
from tough_ner.demo import NRB, SYSTEMS, TEST, TRAIN, WTS, load_demo, load_demo_nrb
from tough_ner.formatting import format_value, json_pieces, to_json
from tough_ner.html import render
from tough_ner.nrb import score_sets
from tough_ner.report import SUMMARY_ROWS, format_text, run

from conftest import FLAGS, chromium, need



def null_nan(value):
    """As the JSON report writes numbers: NaN becomes null, infinities strings."""
    return json.loads(json.dumps(value).replace("NaN", "null").replace("-Infinity", '"-inf"')
                      .replace("Infinity", '"inf"'))


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    assert main(["report", "--out-dir", str(folder), "--quiet"]) == 0
    return folder, json.loads((folder / "report.json").read_text())


def test_the_report_json_is_the_standard_encoders_text(demo_report):
    """The JSON is written as it is made (no copy of the results, no text held whole); its
    text is what the standard library's indented encoder writes for the same values."""
    folder, report = demo_report
    assert (folder / "report.json").read_text(encoding="utf-8") == \
        json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                    st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                    max_leaves=30))
def test_json_pieces_join_to_the_standard_encoders_text(value):
    """A differential test against ``json.dumps``: the pieces joined are its indented text of
    the value with NaN as null and infinities as "inf" / "-inf", at any depth, in tuples too."""
    def ready(item):
        if isinstance(item, float) and (math.isnan(item) or math.isinf(item)):
            return None if math.isnan(item) else "inf" if item > 0 else "-inf"
        if isinstance(item, dict):
            return {k: ready(v) for k, v in item.items()}
        return [ready(v) for v in item] if isinstance(item, (list, tuple)) else item

    expected = json.dumps(ready(value), indent=2, ensure_ascii=False, allow_nan=False)
    assert to_json(value) == "".join(json_pieces(value)) == expected


def test_demo_json_has_every_section_and_the_python_api_numbers(demo_report):
    folder, report = demo_report
    assert report["tough_ner_version"] == tough_ner.__version__
    for name, path in (("train", TRAIN), ("test", TEST), ("nrb", NRB), ("wts", WTS)):
        assert report["inputs"][name] == {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    assert report["options"] == {"bootstrap": 1000, "seed": 0, "type_map": "conll", "n_buckets": 4,
                                 "systems": list(SYSTEMS), "train_is_reference": False, "confidence": 0.95,
                                 "unit": "sentence", "alpha": 0.05, "baseline": None, "scheme": "auto",
                                 "mode": "lenient", "repair": "conlleval", "beta": 1.0}
    results = report["results"]
    assert set(results) == {"describe", "systems", "details", "summary", "comparisons", "attack_curve", "statistics",
                            "contrasts", "findings", "hardest", "warnings", "tests", "families", "decoding",
                            "averages"}
    assert results["decoding"] == {"scheme": "auto", "mode": "lenient", "repair": "conlleval"}
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    nrb_set, wts_set = load_demo_nrb()
    for i, name in enumerate(SYSTEMS):
        batch = Batch(test.tokens, test.tags, test.predictions[i])
        scores = results["systems"][name]
        assert set(scores) == {"hardeval", "tmr", "bucket_f1", "match_scores", "nrb", "rockner"}  # both attacked
        table = tough_ner.match_scores(batch, detailed=True)
        assert results["details"][name]["match_scores"]["schemes"] == null_nan(table)
        assert scores["match_scores"]["partial_f1"] == table["partial"]["f1"]
        detailed_hardeval = hardeval(stats, batch, detailed=True)
        assert scores["hardeval"] == null_nan({k: v for k, v in detailed_hardeval.items() if not isinstance(v, dict)})
        assert results["details"][name]["hardeval"]["hard_tokens"] == null_nan(detailed_hardeval["hard_tokens"])
        assert scores["tmr"] == null_nan(tmr(stats, batch))
        buckets = bucket_f1(stats, batch, detailed=True, bootstrap=1000, seed=0)
        assert scores["bucket_f1"] == null_nan(bucket_f1(stats, batch))
        assert results["details"][name]["bucket_f1"]["diagnostics"] == null_nan(buckets["diagnostics"])
        nrb = score_sets({"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[i]),
                          "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[i])}, "conll", stats, True)
        assert scores["nrb"] == null_nan({k: v for k, v in nrb.items() if not isinstance(v, dict)})
    assert [p["set"] for p in results["attack_curve"]["memorizer"]] == ["typo 1", "case lower", "cross_type 1",
                                                                         "entity 0.2", "entity 0.4", "entity 0.6",
                                                                         "entity 0.8", "entity 1"]
    rows = {row["label"] for row in results["summary"]["rows"]}
    assert {label for label, *_ in SUMMARY_ROWS} | {"NRB accuracy", "F1 drop"} | \
        {f"worst {a} bucket" for a in ATTRIBUTES} <= rows
    assert (folder / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_two_systems_keep_their_given_order_and_only_significant_winners_are_marked():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    # the weaker system first: it stays first (the ranking is in the marks, not in the order)
    results = run(stats, test, ["weak", "strong"], bootstrap=1000)
    assert results["summary"]["systems"] == ["weak", "strong"]
    rows = {row["label"]: row for row in results["summary"]["rows"]}
    assert rows["F1"]["best"] == ["strong"] and rows["F1"]["values"]["strong"] > rows["F1"]["values"]["weak"]
    assert rows["TER unseen"]["best"] == ["strong"]  # lower is better
    for row in results["summary"]["rows"]:
        assert set(row["ci"]) == set(row["n"]) == {"strong", "weak"}
        for system, (low, high) in row["ci"].items():
            value = row["values"][system]
            assert math.isnan(value) or low - 1e-12 <= value <= high + 1e-12
            assert row["small"][system] == (row["n"][system] < 30)
        [test_] = row["tests"]
        assert (test_["a"], test_["b"]) == ("weak", "strong")  # oriented in display order
        assert test_["difference"] == pytest.approx(row["values"]["weak"] - row["values"]["strong"], nan_ok=True)
        assert test_["p_adjusted"] >= test_["p_value"] or math.isnan(test_["p_value"])
        # A winner only where the adjusted test is significant, in the row's direction.
        if row["best"]:
            assert test_["significant"] and test_["p_adjusted"] < 0.05 and row["best"] == [test_["better"]]
            higher = test_["difference"] > 0
            assert test_["better"] == ("weak" if higher == (row["better"] == "high") else "strong")
        else:
            assert test_["better"] is None
    # The demo's 4 unseen-type mentions: a difference of 1.0 that n = 4 cannot make significant.
    assert rows["TMR recall unseen type"]["small"] == {"strong": True, "weak": True}
    assert rows["TMR recall unseen type"]["best"] == []
    text = format_text(results, wide=True)  # each row's test beside it
    header, f1_line = next((lines[i - 3], line) for lines in [text.splitlines()]
                           for i, line in enumerate(lines) if line.startswith("F1 "))
    assert header.split()[:2] == ["weak", "strong"]
    cells = f1_line.split("↑")[1]
    assert cells.split("]")[2].startswith("*") and cells.count("*") == 1 and "strong better" in f1_line
    unseen_type = next(line for line in text.splitlines() if line.startswith("TMR recall unseen type"))
    assert "†" in unseen_type and "*" not in unseen_type and "not significant" in unseen_type


def test_a_system_against_itself_wins_no_row():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    same = run(stats, Corpus(test.tokens, test.tags, [test.predictions[0], test.predictions[0]]), ["a", "b"],
               bootstrap=200)
    for row in same["summary"]["rows"]:
        assert row["best"] == []
        assert all(t["p_value"] == 1.0 and t["difference"] == 0 for t in row["tests"] if not math.isnan(t["p_value"]))
    assert [c["systems"] for c in same["comparisons"]] == [["a", "b"]]
    assert not any(any(entry["significant"]) for entry in same["comparisons"][0]["bucket_f1"].values())


def test_without_resamples_nothing_is_marked():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    results = run(stats, test, list(SYSTEMS), bootstrap=0)
    assert all(row["best"] == [] and row["tests"] == [] and row["ci"] == {} for row in results["summary"]["rows"])


def test_fewer_resampling_units_than_an_interval_needs_are_said_once_and_give_no_interval():
    """19 sentences (MIN_UNITS is 20): the run says so in its statistics and warnings, and no
    row has an interval; the demo's sentences (more than 20) give intervals and no warning."""
    from tough_ner.uncertainty import MIN_UNITS

    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    n = MIN_UNITS - 1
    few = run(stats, Corpus(test.tokens[:n], test.tags[:n], [p[:n] for p in test.predictions]), list(SYSTEMS),
              bootstrap=100)
    assert few["statistics"].get("too_few_units") is True
    assert sum("too few units for an interval" in warning for warning in few["warnings"]) == 1
    assert all(math.isnan(bound) for row in few["summary"]["rows"] for ci in row["ci"].values() for bound in ci)
    enough = run(stats, test, list(SYSTEMS), bootstrap=100)
    assert len(test.tokens) >= MIN_UNITS and "too_few_units" not in enough["statistics"]
    assert not any("too few units" in warning for warning in enough["warnings"])


def test_report_from_files_with_nrb_and_attacked_sets(tmp_path, capsys):
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    write_conll(tmp_path / "gold.conll", test.tokens, test.tags)
    for i, name in enumerate(SYSTEMS):
        write_conll(tmp_path / f"{name}.conll", test.tokens, test.predictions[i])
    nrb_set, wts_set = load_demo_nrb()
    write_conll(tmp_path / "nrb.conll", nrb_set.tokens, nrb_set.tags, *nrb_set.predictions)
    write_conll(tmp_path / "wts.conll", wts_set.tokens, wts_set.tags, *wts_set.predictions)
    from tough_ner.demo import demo_attacks
    attacked = demo_attacks(stats, test)["memorizer"][-1][1]
    write_conll(tmp_path / "att.conll", attacked.tokens, attacked.tags, attacked.predictions[0],
                attacked.predictions[0])
    out = tmp_path / "out"
    assert main(["report", "--train", str(TRAIN), "--test", str(tmp_path / "gold.conll"),
                 "--pred", str(tmp_path / "memorizer.conll"), "--pred", str(tmp_path / "contextual.conll"),
                 "--nrb", str(tmp_path / "nrb.conll"), "--wts", str(tmp_path / "wts.conll"),
                 "--attacked", str(tmp_path / "att.conll"), "--json", str(out / "r.json"), "--html",
                 str(out / "r.html"), "--bootstrap", "0", "--quiet"]) == 0
    report = json.loads((out / "r.json").read_text())
    systems = list(SYSTEMS)  # named by their file stems
    assert [entry["path"] for entry in report["inputs"]["pred"]] == [str(tmp_path / f"{n}.conll") for n in SYSTEMS]
    assert [entry["name"] for entry in report["inputs"]["pred"]] == systems
    # the memorizer on the attacked set: its own F1 there (the entities the attack kept, it still knows)
    from tough_ner.scoring import span_scores
    expected = span_scores(Batch(attacked.tokens, attacked.tags, attacked.predictions[0]))["f1"]
    assert report["results"]["systems"][systems[0]]["rockner"]["f1_attacked"] == pytest.approx(expected)
    assert expected < report["results"]["systems"][systems[0]]["rockner"]["f1_original"]
    # no --type-map: detected from the systems' CoNLL labels, and said
    assert [report["results"]["systems"][s]["nrb"]["type_map"] for s in systems] == ["conll", "conll"]
    assert report["options"]["type_map"] == "auto"
    assert f"NRB type map: {systems[0]} conll, {systems[1]} conll" in capsys.readouterr().out
    assert report["results"]["systems"][systems[1]]["nrb"]["nrb_accuracy"] == \
        score_sets({"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[1]),
                    "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[1])}, "conll")["nrb_accuracy"]
    need("matplotlib")  # the plots extra draws the SVG plots
    assert "<svg" in (out / "r.html").read_text()
    assert main(["report", "--train", str(TRAIN), "--test", str(tmp_path / "gold.conll"), "--pred",
                 str(tmp_path / "memorizer.conll"), "--nrb", str(tmp_path / "nrb.conll")]) == 2


def test_html_without_matplotlib_says_plots_need_the_extra(demo_report, monkeypatch):
    import tough_ner.html as page

    folder, _ = demo_report
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    report = {"tough_ner_version": "x", "inputs": {}, "options": {}, "results": run(stats, test, list(SYSTEMS),
                                                                                     bootstrap=0)}
    monkeypatch.setattr(page, "_plotting", lambda: None)
    text = render(report)
    assert "pip install 'tough-ner[plots]'" in text and "<svg" not in text and "<table>" in text


def test_progress_bar_only_on_a_terminal(tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    for quiet, expected in ((False, True), (True, False)):
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal has a width
        process = subprocess.Popen([sys.executable, "-m", "tough_ner.cli", "report", "--out-dir", str(tmp_path),
                                    "--bootstrap", "0"] + (["--quiet"] if quiet else []),
                                   stdout=subprocess.DEVNULL, stderr=follower)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait(60) == 0
        os.close(leader)
        assert (b"step" in seen and b"scoring memorizer" in seen) == expected, seen[-300:]


# What a page shows, measured by the browser: the boxes of every plot's texts (matplotlib writes
# each text as a group text_N), of the heatmap's labels, each heatmap cell's colours, the height.
MEASURE = """() => {
  const boxes = (elements) => elements.map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
  const crossing = (rects) => {
    const found = [];
    rects.forEach((a, i) => rects.slice(i + 1).forEach(b => {
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
        found.push([[a.left, a.top, a.right, a.bottom], [b.left, b.top, b.right, b.bottom]]);
    }));
    return found;
  };
  return {
    plots: [...document.querySelectorAll('svg')].map(
      svg => crossing(boxes([...svg.querySelectorAll('g[id^="text_"]')]))),
    plot_texts: [...document.querySelectorAll('svg g[id^="text_"]')].length,
    heatmaps: [...document.querySelectorAll('table.heatmap')].map(
      t => crossing(boxes([...t.querySelectorAll('.cell span, th')]))),
    cells: [...document.querySelectorAll('.cells .cell')].map(c => [
      getComputedStyle(c).backgroundColor, getComputedStyle(c).color,
      c.classList.contains('significant'), c.innerText]),
    height: document.documentElement.scrollHeight,
  };
}"""


def wcag_contrast(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two CSS colours ``rgb(r, g, b)``, from the standard's definition."""
    def luminance(css):
        channels = [int(v) / 255 for v in re.findall(r"\d+", css)[:3]]
        r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def check_measured(measured, max_height):
    """No two texts of a plot or of a heatmap overlap; every heatmap cell's text has WCAG AA
    contrast on its background; the page is no taller than ``max_height`` px."""
    assert measured["plot_texts"] > 50  # the plots' texts were found
    assert all(not found for found in measured["plots"]), [f[:3] for f in measured["plots"] if f]
    assert measured["heatmaps"] and all(not found for found in measured["heatmaps"]), measured["heatmaps"]
    assert measured["cells"]
    for background, colour, _, text in measured["cells"]:
        assert wcag_contrast(background, colour) >= 4.5, (text, background, colour)
    assert measured["height"] <= max_height


@pytest.fixture(scope="module")
def report_browser():
    playwright = need("playwright.sync_api")
    browser_path = chromium()
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=browser_path, args=FLAGS)  # a fresh profile each launch
        yield launched
        launched.close()


def test_html_opens_offline_in_headless_chromium_and_renders(demo_report, report_browser, tmp_path):
    need("matplotlib")  # the page's plots, counted below
    need("PIL")  # Pillow, a matplotlib dependency
    from PIL import Image, ImageStat

    folder, report = demo_report
    page_file = folder / "report.html"
    results = report["results"]
    requests = []
    from tough_ner.errors import error_rows
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    errors = [row for name, predictions in zip(SYSTEMS, test.predictions)
              for row in error_rows(stats, Batch(test.tokens, test.tags, predictions), name)]
    browser = report_browser
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.on("request", lambda request: requests.append(request.url))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    assert page.title() == "tough-ner report"
    assert page.locator("svg").count() >= 6  # TER, TMR x2, buckets, NRB, attacks
    # the findings open the page, above the headline table; an attack finding names its set
    assert page.locator("#findings li").count() >= 3
    findings = page.inner_text("#findings")
    assert "significantly better than" in findings
    assert f"On the attacked set “{results['attack_curve']['memorizer'][-1]['set']}”, memorizer's F1" in findings
    headline = page.locator("table").first.inner_text()
    f1 = next(row for row in results["summary"]["rows"] if row["label"] == "F1")
    assert f"{f1['values']['contextual']:.4f}" in headline
    # every glossary link of a table lands on a glossary entry
    targets = page.eval_on_selector_all("a.term", "links => links.map(a => a.getAttribute('href').slice(1))")
    assert targets and all(page.locator(f"#{t}").count() == 1 for t in set(targets))
    assert "type-confusable" in page.inner_text("#glossary + p + dl")
    # The headline table as the browser shows it, cell by cell, against the JSON's summary.
    shown = [row.split("\t") for row in page.locator("table").first.locator("tr").all_inner_texts()]
    summary = results["summary"]
    systems = summary["systems"]
    assert systems == list(SYSTEMS)  # the order given, everywhere
    assert [cell.strip() for cell in shown[0]] == ["measure"] + systems + ["n", "paired tests"]
    assert len(shown) == len(summary["rows"]) + 1
    for cells, row in zip(shown[1:], summary["rows"]):
        assert cells[0].strip().startswith(row["label"])
        assert ("(entity 1)" in cells[0]) == (row["method"] == "rockner")  # the attacked set the row is of
        for cell, system in zip(cells[1:], systems):  # the value, then its interval
            value = row["values"][system]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                assert cell.strip() in ("-", "nan"), (row, cell)
            else:
                assert cell.strip().startswith(format_value(value)), (row, cell)
    # every section says what it shows before showing it
    for section in page.locator("h2").all():
        assert section.evaluate("h => h.nextElementSibling.tagName") in ("P", "UL"), section.inner_text()
    # per type: precision, recall and F1, each with its interval (F1's: the stored verdict's), † when
    # n < 30 (predicted entities for precision, gold ones else), the systems in their order
    per_type = [row.split("\t") for row in page.locator("#per-type ~ table").first.locator("tr").all_inner_texts()]
    assert [h.split(" ")[0] for h in per_type[0][2::4]] == systems
    for cells in per_type[1:]:
        for k, system in enumerate(systems):
            bucket = next(r for r in results["details"][system]["bucket_f1"]["buckets"]["tag"]
                          if r["interval"] == cells[0].strip())
            f1_ci = results["tests"]["bucket_f1"][f"tag_{cells[0].strip()}_f1"]["ci"][system]

            def shown(value, ci, n):
                return f"{format_value(value)} [{ci[0]:.4f}, {ci[1]:.4f}]" + ("†" if n < 30 else "")
            assert [c.strip() for c in cells[2 + 4 * k:6 + 4 * k]] == [
                shown(bucket["precision"], bucket["precision_ci"], bucket["n_pred"]), str(bucket["n_pred"]),
                shown(bucket["recall"], bucket["recall_ci"], bucket["n_gold"]),
                shown(bucket["f1"], f1_ci, bucket["n_gold"])]
    # the heatmap: every bucket named in words (types for tag), none empty; significance as stored
    [comparison] = results["comparisons"]
    cells = page.locator("table.heatmap .cell").all_inner_texts()
    assert "PER" in " ".join(cells) and "bucket 0" not in page.content() and "empty (" not in page.content()
    stored = [significant for attribute, entry in comparison["bucket_f1"].items()
              for interval, significant in zip(entry["intervals"], entry["significant"])
              if not (attribute == "sLen" and interval[0] == interval[1])]  # the demo's empty sLen bucket
    measured = page.evaluate(MEASURE)
    assert [significant for *_, significant, _ in measured["cells"]] == stored
    assert [("★" in text) for *_, text in measured["cells"]] == stored
    check_measured(measured, max_height=16_000)  # with the averages over types, the subset tables' intervals and notes
    # the error table: counts, the first rows per system and outcome, links to the full table beside
    links = page.eval_on_selector_all("#errors ~ p a", "links => links.map(a => a.getAttribute('href'))")
    assert {"report-errors.csv", "report-errors.jsonl"} <= set(links)
    assert all((folder / name).is_file() for name in ("report-errors.csv", "report-errors.jsonl"))
    page.select_option("#filter-system", "contextual")
    page.select_option("#filter-outcome", "missed")
    shown = page.eval_on_selector_all("table.error-table tbody tr", "rows => rows.filter(r => !r.hidden)"
                                      ".map(r => [r.dataset.system, r.dataset.outcome])")
    missed = sum(1 for row in errors if row["system"] == "contextual" and row["outcome"] == "missed")
    assert shown == [["contextual", "missed"]] * missed and 0 < missed
    assert page.inner_text("#filter-count") == f"{missed} of the rows on this page shown"
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    # scripts off: no filter bar; per system and outcome the first rows open, the next behind a click
    plain = browser.new_page(java_script_enabled=False)
    plain.goto(page_file.as_uri())
    assert not plain.locator("#error-filters").is_visible()
    wrong = Counter((row["system"], row["outcome"]) for row in errors if row["outcome"] != "correct")
    assert plain.locator("table.error-table tbody tr:visible").count() == sum(min(n, 10) for n in wrong.values())
    assert plain.locator("table.error-table tbody tr").count() == sum(min(n, 50) for n in wrong.values())
    plain.locator("details.more summary").first.click()  # paging without scripts
    assert plain.locator("table.error-table tbody tr:visible").count() > sum(min(n, 10) for n in wrong.values())
    plain.close()
    page.close()
    print(f"screenshot: {shot}")
    assert requests == [page_file.as_uri()]  # nothing else was fetched: the page is self-contained
    image = Image.open(shot).convert("L")
    assert image.size[1] > 3000 and ImageStat.Stat(image).stddev[0] > 20  # a long page, not blank


def test_conll_two_system_page_is_small_readable_and_has_no_overlapping_text(conll_train_path, conll_test,
                                                                               conll_stats, report_browser, tmp_path):
    """The CoNLL-2003 test set with bench_report's two systems (the memorization baseline and the
    gold with seeded errors): at most 600 KB of HTML (1.3 MB before the error table was cut to
    its first rows), no overlapping text, every heatmap cell readable."""
    need("matplotlib")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from bench_report import noisy_gold
    from tough_ner.baselines import memorization

    gold = tmp_path / "test.txt"
    write_conll(gold, conll_test.tokens, conll_test.tags)
    for name, predicted in (("memorizer", memorization(conll_stats, conll_test.tokens)),
                            ("noisy-gold", noisy_gold(conll_test.tags))):
        write_conll(tmp_path / f"{name}.conll", conll_test.tokens, predicted)
    page_file = tmp_path / "out" / "report.html"
    assert main(["report", "--train", str(conll_train_path), "--test", str(gold), "--pred",
                 str(tmp_path / "noisy-gold.conll"), "--pred", str(tmp_path / "memorizer.conll"),
                 "--html", str(page_file), "--bootstrap", "200", "--quiet"]) == 0
    size = page_file.stat().st_size
    assert size <= 600_000, size
    rows = (tmp_path / "out" / "report-errors.csv").read_bytes().count(b"\r\n") - 1
    assert rows > 10_000  # the full table is beside the page
    page = report_browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(page_file.as_uri())
    assert page.locator("table").first.locator("th").all_inner_texts()[1:3] == ["noisy-gold", "memorizer"]
    measured = page.evaluate(MEASURE)
    check_measured(measured, max_height=15_000)
    page.screenshot(path=str(tmp_path / "conll.png"), full_page=True)
    page.close()
    print(f"screenshot: {tmp_path / 'conll.png'}; {size / 1000:.0f} KB, {measured['height']} px")


def synthetic_comparison(n, types):
    """A bucket comparison with n buckets per attribute (tag: these types), differences from
    -1 to 1, every third significant."""
    def entry(intervals):
        k = len(intervals)
        differences = [-1 + 2 * i / max(k - 1, 1) for i in range(k)]
        return {"intervals": intervals, "difference": differences, "n": [3 + 40 * i for i in range(k)],
                "significant": [i % 3 == 0 for i in range(k)], "ci": [[d - 0.1, d + 0.1] for d in differences]}
    shares = ("eDen", "oDen", "eCon", "tCon")
    return {a: entry(list(types) if a == "tag" else
                     [[i / n, (i + 1) / n] if a in shares else [10.0 * i, 10.0 * i + 10] for i in range(n)])
            for a in ATTRIBUTES}


def test_heatmap_labels_never_overlap_and_every_cell_is_readable(report_browser):
    """2, 10 and 30 buckets; WNUT-16's 10 tag buckets named by type."""
    from tough_ner.html import STYLE, heatmap

    wnut = ["corporation", "creative-work", "group", "location", "person", "product", "company", "facility",
            "geo-loc", "sportsteam"]
    maps = {n: heatmap(synthetic_comparison(n, wnut[:n] if n <= 10 else wnut * 3), {"mentions": 9, "tokens": 99})
            for n in (2, 10, 30)}
    page = report_browser.new_page(viewport={"width": 1200, "height": 900})
    page.set_content(f"<html><head><style>{STYLE}</style></head><body>{''.join(maps.values())}</body></html>")
    measured = page.evaluate(MEASURE)
    assert len(measured["heatmaps"]) == 3 and not any(measured["heatmaps"]), measured["heatmaps"]
    assert len(measured["cells"]) == sum(8 * n + min(n, 10) + 20 * (n > 10) for n in (2, 10, 30))
    for background, colour, significant, text in measured["cells"]:
        assert wcag_contrast(background, colour) >= 4.5, (text, background, colour)
        assert ("★" in text) == significant
    tag_row = page.locator("table.heatmap").nth(1).locator("tr").last
    assert [t.split("\n")[0] for t in tag_row.locator(".cell").all_inner_texts()] == wnut
    page.close()


def test_findings_state_only_significant_differences_with_their_numbers():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    results = run(stats, test, list(SYSTEMS), bootstrap=500)
    texts = [item["text"] for item in results["findings"]]
    weights = [item["weight"] for item in results["findings"]]
    assert weights == sorted(weights, reverse=True)  # most important first
    rows = results["summary"]["rows"]
    won = [r for r in rows if r["best"]]
    [comparison] = [t for t in texts if "significantly better than" in t]
    assert comparison.startswith(f"contextual is significantly better than memorizer on {len(won)} of the ")
    not_significant = [r["label"] + (f" ({r['bucket']})" if r.get("bucket") else "") for r in rows
                       if r["better"] and r["tests"] and not r["best"]]
    [quiet] = [t for t in texts if t.startswith("No significant difference")]
    assert all(label in quiet for label in not_significant)
    # The within-system contrast of TMR, with its n and interval.
    contextual = results["systems"]["contextual"]["tmr"]
    unseen = next(t for t in texts if t.startswith("contextual misses"))
    assert f"{100 * (1 - contextual['recall_unseen_tokens']):.0f}%" in unseen
    assert f"n = {contextual['n_unseen_tokens']}" in unseen and "95% CI [" in unseen
    # Every finding carries a number and, where it is a rate, its n.
    assert all(any(ch.isdigit() for ch in t) for t in texts)
    text = format_text(results)
    assert text.index("Findings") < text.index("summary:")
    page = render({"tough_ner_version": "x", "inputs": {}, "options": {}, "results": results})
    assert page.index("id='findings'") < page.index("<h2 id='headline'>Headline</h2>")


def test_findings_of_a_system_against_itself_claim_no_difference():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    same = run(stats, Corpus(test.tokens, test.tags, [test.predictions[1], test.predictions[1]]), ["a", "b"],
               bootstrap=200)
    texts = [item["text"] for item in same["findings"]]
    assert not any("significantly better" in t for t in texts)
    assert any(t.startswith(f"No significant difference ({same['families']['headline']['description']}) on: "
                            "precision, recall, F1") for t in texts)


def test_report_decodes_as_declared_records_it_and_adds_f_beta(tmp_path, capsys, monkeypatch):
    """--scheme/--mode reach every batch of the report (differential: seqeval's strict mode),
    the header states them, the JSON records them (options, results.decoding) and --rerun
    repeats them; --beta adds an F-beta row with its interval, equal to tmr(beta=)."""
    from seqeval.metrics import f1_score
    from seqeval.scheme import IOB2

    monkeypatch.chdir(tmp_path)
    _, test = load_demo()
    # IOB1-style predictions: every span's B- written I- (valid leniently, not in strict IOB2)
    iob1 = [[("I" + tag[1:]) if tag.startswith("B-") and k % 2 else tag for tag in sentence]
            for k, sentence in enumerate(test.predictions[1])]
    write_conll("test.conll", test.tokens, test.tags)
    write_conll("iob1.conll", test.tokens, test.tags, iob1)
    common = ["report", "--quiet", "--resamples", "30", "--train", str(TRAIN), "--test", "test.conll",
              "--pred", "iob1.conll"]
    assert main(common + ["--json", "lenient.json"]) == 0
    assert main(common + ["--scheme", "IOB2", "--mode", "strict", "--beta", "2", "--json", "strict.json",
                          "--html", "strict.html"]) == 0
    out = capsys.readouterr().out
    assert "Tags decoded by scheme IOB2, strict mode; F-beta with beta = 2" in out
    lenient, strict = (json.loads(Path(name).read_text(encoding="utf-8")) for name in ("lenient.json", "strict.json"))
    assert lenient["results"]["decoding"] == {"scheme": "auto", "mode": "lenient", "repair": "conlleval"}
    assert strict["results"]["decoding"] == {"scheme": "IOB2", "mode": "strict", "repair": "conlleval"}
    assert {k: strict["options"][k] for k in ("scheme", "mode", "repair", "beta")} == {
        "scheme": "IOB2", "mode": "strict", "repair": "conlleval", "beta": 2.0}
    scores = {name: report["results"]["systems"]["iob1"]["tmr"] for name, report in (("lenient", lenient),
                                                                                     ("strict", strict))}
    assert scores["strict"]["f1"] == pytest.approx(f1_score(test.tags, iob1, mode="strict", scheme=IOB2))
    assert scores["lenient"]["f1"] == pytest.approx(f1_score(test.tags, iob1))  # seqeval's default: conlleval's
    assert scores["strict"]["f1"] < scores["lenient"]["f1"]
    stats = TrainStats.from_conll(TRAIN, scheme="IOB2", mode="strict")
    batch = Batch(test.tokens, test.tags, iob1, scheme="IOB2", mode="strict")
    expected = tmr(stats, batch, beta=2.0)
    assert scores["strict"]["f_beta"] == pytest.approx(expected["f_beta"])
    assert scores["strict"]["n_invalid_transitions_pred"] == batch.invalid_transitions("pred") > 0
    [row] = [row for row in strict["results"]["summary"]["rows"] if row["key"] == "f_beta"]
    low, high = row["ci"]["iob1"]
    assert row["label"] == "F-beta (beta 2)" and low <= row["values"]["iob1"] <= high
    assert "f_beta" not in {row["key"] for row in lenient["results"]["summary"]["rows"]}
    averages = strict["results"]["averages"]["iob1"]
    assert averages["weighted_f_beta"]["value"] == pytest.approx(expected["weighted_f_beta"])
    # the terminal shows every average with its interval, read from the stored table
    for label, key in (("macro precision", "macro_precision"), ("weighted F1", "weighted_f1"),
                       ("weighted F-beta (beta 2)", "weighted_f_beta")):
        low, high = averages[key]["ci"]
        line = [line for line in out.splitlines() if line.startswith(label + " ")][-1]  # the strict run's
        assert f"{format_value(averages[key]['value'])} [{low:.4f}, {high:.4f}]" in line, line
    planted = json.loads(json.dumps(strict["results"]))
    planted["averages"]["iob1"]["weighted_recall"].update(value=0.123456, ci=[0.1, 0.2])
    assert re.search(r"^weighted recall .*0\.1235 \[0\.1000, 0\.2000\]", format_text(planted), re.M)
    assert "F-beta" not in format_text(lenient["results"]).split("averages over types")[1]
    assert averages["macro_recall"]["ci"][0] <= averages["macro_recall"]["value"] <= averages["macro_recall"]["ci"][1]
    page = Path("strict.html").read_text(encoding="utf-8")
    assert "<p class='note' id='decoding'>Tags decoded by scheme IOB2, strict mode; F-beta with beta = 2." in page
    table = page[page.index("id='averages'"):]
    table = table[:table.index("</table>")]
    low, high = averages["weighted_f1"]["ci"]
    assert f"{format_value(averages['weighted_f1']['value'])} [{low:.4f}, {high:.4f}]" in table
    assert main(["report", "--rerun", "strict.json"]) == 0
    assert "identical" in capsys.readouterr().out


def test_nrb_sets_decode_the_systems_tags_as_the_report_declares():
    """#37: the report's NRB/WTS scores decode the systems' tags as declared (here strict IOB2,
    where an I- that begins a span is dropped); the targets stay the sets' own."""
    train, test = load_demo()
    stats, strict_stats = TrainStats.from_corpus(train), TrainStats.from_corpus(train, scheme="IOB2", mode="strict")
    sets = load_demo_nrb()
    loose = [Corpus(c.tokens, c.tags, [[[("I" + t[1:]) if t.startswith("B-") else t for t in sentence]
                                        for sentence in predictions] for predictions in c.predictions]) for c in sets]
    strict = run(strict_stats, test, list(SYSTEMS), nrb_sets=tuple(loose), type_map="conll", bootstrap=0,
                 scheme="IOB2", mode="strict")
    lenient = run(stats, test, list(SYSTEMS), nrb_sets=tuple(loose), type_map="conll", bootstrap=0)
    for i, system in enumerate(SYSTEMS):
        scored = {name: (c.tokens, c.tags, c.predictions[i]) for name, c in zip(("nrb", "wts"), loose)}
        shown = strict["systems"][system]["nrb"]
        assert shown["nrb_accuracy"] == score_sets(scored, "conll", strict_stats, decoding={
            "scheme": "IOB2", "mode": "strict", "declared": ("pred",)})["nrb_accuracy"]
        assert shown["wts_accuracy"] == 0.0 < lenient["systems"][system]["nrb"]["wts_accuracy"]  # every span dropped
        assert shown["n_invalid_transitions_gold"] == 0 and shown["n_invalid_transitions_pred"] > 0


def test_a_batch_decoded_otherwise_than_the_report_is_refused():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    given = Corpus(test.tokens, test.tags, [Batch(test.tokens, test.tags, test.predictions[0])])
    with pytest.raises(ValueError, match="decodes the gold tags with scheme=auto, mode=lenient, repair=conlleval "
                                         "but the report with scheme=IOB2, mode=lenient, repair=conlleval"):
        run(stats, given, ["a"], bootstrap=0, scheme="IOB2")
    with pytest.raises(ValueError, match="beta"):
        run(stats, given, ["a"], bootstrap=0, beta=0)


def _a_and_b_predicting_foo():
    """The demo's train and test sets, their statistics, and two systems' tags: b predicts
    one span of FOO, a type neither the gold data nor a holds."""
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    a = [list(tags) for tags in test.predictions[0]]
    b = [list(tags) for tags in test.predictions[1]]
    s, i = next((s, i) for s, tags in enumerate(b) for i, tag in enumerate(tags) if tag.startswith("B-"))
    b[s][i] = "B-FOO"
    return train, test, stats, a, b


def test_a_system_predicting_a_type_no_other_side_holds_is_compared_with_the_others():
    """System b predicts FOO, which neither the gold data nor system a holds: every system
    numbers the same entity types (with_shared_types), so the report compares them; each system's
    values are those of its report alone, a's with a FOO column of nothing (no value, n = 0)."""
    train, test, stats, a, b = _a_and_b_predicting_foo()
    from tough_ner.checks import InputWarning

    with pytest.warns(InputWarning, match="predicted entity types absent from the gold or training data: FOO"):
        both = run(stats, Corpus(test.tokens, test.tags, [a, b]), names=["a", "b"], bootstrap=100, seed=0)
    for name, predictions in (("a", a), ("b", b)):
        with pytest.warns(InputWarning) if name == "b" else contextlib.nullcontext():
            alone = run(stats, Corpus(test.tokens, test.tags, [predictions]), names=[name], bootstrap=100, seed=0)
        values = json.loads(to_json(both["systems"][name]))
        if name == "a":
            assert values["bucket_f1"].pop("tag_FOO_f1") is None
            assert json.loads(to_json(both["details"]["a"]["tmr"]["per_type"]))["FOO"]["n"] == 0
        assert values == json.loads(to_json(alone["systems"][name]))
    f1 = next(row for row in both["summary"]["rows"] if row["key"] == "f1")
    assert f1["tests"] and f1["tests"][0]["p_value"] >= 0  # the pair is tested


def test_with_types_renumbers_a_copy_and_refuses_what_would_lose_a_type():
    batch = Batch([["x", "y"]], [["B-PER", "O"]], [["B-ORG", "O"]])
    assert batch.types == ["ORG", "PER"] and batch.span_arrays("gold")[3].tolist() == [1]
    shared = batch.with_types(["FOO", "ORG", "PER"])
    assert shared.span_arrays("gold")[3].tolist() == [2] and shared.span_arrays("pred")[3].tolist() == [1]
    assert shared.span_type_counts("gold") == {"PER": 1} and shared.tokens is batch.tokens
    assert batch.types == ["ORG", "PER"] and batch.span_arrays("gold")[3].tolist() == [1]  # the batch given: as it was
    assert batch.with_types(["ORG", "PER"]) is batch
    for wrong in (["ORG", "PER", "FOO"], ["FOO", "PER"]):
        with pytest.raises(ValueError, match="with_types needs the sorted types"):
            batch.with_types(wrong)


def test_compare_and_the_space_pages_compare_systems_of_different_types():
    """compare (and so --versus) and the Space's TMR and bucket F1 pages: a system predicting a
    type no other side holds is compared with the others, each one's values as alone."""
    from tough_ner import spaces
    from tough_ner.checks import InputWarning
    from tough_ner.comparison import compare
    from tough_ner.corpus import conll_text

    train, test, stats, a, b = _a_and_b_predicting_foo()
    with pytest.warns(InputWarning):
        for method in ("tmr", "bucket_f1"):
            table = compare({"a": Batch(test.tokens, test.tags, a), "b": Batch(test.tokens, test.tags, b)}, method,
                            train=stats, n_resamples=50)
            f1 = next(row for row in table["rows"] if row["key"] == "f1")
            alone = (tmr if method == "tmr" else bucket_f1)(stats, Batch(test.tokens, test.tags, b))
            assert f1["values"]["b"] == pytest.approx(alone["f1"], abs=1e-12) and f1["tests"]
        train_text = conll_text(train.tokens, train.tags)
        test_text = conll_text(test.tokens, test.tags, a, b)
        for page in (spaces.score_tmr(train_text, test_text), spaces.score_bucket_f1(train_text, test_text, 4, 20)):
            assert "paired test" in page[0] and "different columns" not in page[0]


def test_out_dir_holds_the_page_and_the_json_of_a_report_on_your_files(tmp_path, capsys):
    """``--out-dir`` is not the demo's alone: a report on one's own files writes report.html and
    report.json there (an --html given elsewhere is kept); without it, nothing is written."""
    _, test = load_demo()
    write_conll(tmp_path / "gold.conll", test.tokens, test.tags)
    paths = []
    for name, predictions in zip(SYSTEMS, test.predictions):
        write_conll(tmp_path / f"{name}.conll", test.tokens, test.tags, predictions)
        paths += ["--pred", f"{name}={tmp_path / f'{name}.conll'}"]
    common = ["report", "--train", str(TRAIN), "--test", str(tmp_path / "gold.conll"), *paths, "--quiet",
              "--resamples", "20"]
    assert main(common + ["--out-dir", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report-errors.csv", "report-errors.jsonl",
                                                                     "report.html", "report.json"]
    assert json.loads((tmp_path / "out" / "report.json").read_text())["results"]["systems"].keys() == set(SYSTEMS)
    assert main(common + ["--out-dir", str(tmp_path / "two"), "--html", str(tmp_path / "page.html")]) == 0
    assert (tmp_path / "page.html").exists() and [p.name for p in (tmp_path / "two").iterdir()] == ["report.json"]
    before = sorted(tmp_path.iterdir())
    assert main(common) == 0 and sorted(tmp_path.iterdir()) == before


def test_the_averages_over_types_say_each_ones_n():
    """A macro or weighted precision is over the system's predictions, the rest over the gold
    mentions: the table and the terminal say which."""
    stats_, test = TrainStats.from_corpus(load_demo()[0]), load_demo()[1]
    results = run(stats_, test, names=list(SYSTEMS), bootstrap=20)
    for name in SYSTEMS:
        tmr_keys = results["systems"][name]["tmr"]
        assert tmr_keys["n_predicted"] != tmr_keys["n_mentions"]
        for key, cell in results["averages"][name].items():
            assert cell["n"] == tmr_keys["n_predicted" if key.endswith("_precision") else "n_mentions"], key
    assert "n: a precision's predictions, else the gold mentions" in " ".join(format_text(results).split())
