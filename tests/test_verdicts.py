"""Verdicts: each test is decided once, in its declared family, and stored with its row; every
view (terminal, JSON, HTML, LaTeX, Markdown, findings, Space tables) reads that verdict.  And
the verdicts have power: a clearly better system is found better among 3, 5 and 10 systems,
while systems of equal quality are rarely called different (family-wise)."""
import json
import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tough_ner import Batch, TrainStats
from tough_ner.buckets import bucket_key
from tough_ner.comparison import COUNTS, best, compare, decided_rows, finish, row, rows
from tough_ner.core.rows import plain
from tough_ner.corpus import Corpus, read_conll
from tough_ner.demo import load_demo
from tough_ner.export import markdown, tables
from tough_ner.formatting import format_p
from tough_ner.report import SUMMARY_ROWS, format_cell, format_text, run
from tough_ner.uncertainty import analyse, holm

from conftest import corrupted

TRAIN, TEST = load_demo()
HARDEVAL_SUBSETS = ["unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E"]  # as the page shows them
TMR_SUBSETS = ["seen", "unseen_any", "unseen_tokens", "unseen_type", "tcm_all", "tcm_seen", "tcm_unseen"]
STATS = TrainStats.from_corpus(TRAIN)


def families(results):
    """Every decided test, grouped by the family it names, once each (the headline's rows, each
    subset table's own rows), with the row it is stored in; ``decided_once`` checks the copies
    every other view shows."""
    grouped = {}
    for row in results["summary"]["rows"]:
        for test in row["tests"]:
            grouped.setdefault(test["family"], []).append((row, test))
    for method, table in results["tests"].items():
        for key, row in table.items():
            for test in row["tests"]:
                if test["family"] != "headline":  # a headline row shown in its table: decided there
                    grouped.setdefault(test["family"], []).append((row, test))
    return grouped


def decided_once(results):
    """Each test has one verdict wherever it is shown (the headline, a subset table, a pair's
    bucket comparison): ``{(method, key, a, b): verdict}``, a second, different one fails."""
    seen = {}

    def shown(method, key, test):
        a, b = sorted((test["a"], test["b"]))
        sign = 1 if test["a"] == a else -1
        verdict = (test["family"], test["m"], test["p_value"], test["p_adjusted"], test["significant"],
                   test["better"], None if test["difference"] is None else round(sign * test["difference"], 12))
        assert seen.setdefault((method, key, a, b), verdict) == verdict, (method, key, a, b)

    for row in results["summary"]["rows"]:
        for test in row["tests"]:
            shown(row["method"], row["key"], test)
    for method, table in results["tests"].items():
        for key, row in table.items():
            for test in row["tests"]:
                shown(method, key, test)
    for entry in results["comparisons"]:
        for attribute, cells in entry["bucket_f1"].items():
            for i, (interval, test) in enumerate(zip(cells["intervals"], cells["tests"])):
                if test["p_value"] is not None and not math.isnan(test["p_value"]):  # null: NaN, written
                    shown("bucket_f1", bucket_key(attribute, i, interval), test)
    return seen


def check_marks(results, alpha, page=None):
    """Every mark of every view equals the stored verdict (``page``: the HTML written for
    these results, else rendered here)."""
    grouped = families(results)
    assert set(grouped) <= set(results["families"])
    decided_once(results)
    number = lambda v: math.nan if v is None else v  # noqa: E731 -- NaN is null in a written report
    for name, members in grouped.items():
        p = [number(test["p_value"]) for _, test in members]
        assert [number(test["p_adjusted"]) for _, test in members] == pytest.approx(holm(p), nan_ok=True)
        assert {test["m"] for _, test in members} == {results["families"][name]["tests"]}
        for _, test in members:
            adjusted = number(test["p_adjusted"])
            assert test["significant"] == (not math.isnan(adjusted) and adjusted < alpha)
            assert test["better"] is None or (test["significant"] and test["better"] in (test["a"], test["b"]))
    summary = results["summary"]
    order = summary["systems"]
    for row in summary["rows"]:
        assert row["best"] == best(row) and row["family"] == "headline"
    # the terminal: a star exactly on the stored best, and each printed adjusted p is the stored one
    text, wide = format_text(results), format_text(results, wide=True)
    # the default (100 columns): a table per compared pair under the summary, one line a row
    blocks = text.split("\nintervals:")[0].split("paired test of each row, ")[1:]
    pairs = list(dict.fromkeys((t["a"], t["b"]) for row in summary["rows"] for t in row["tests"]))
    assert [block.split(" (--wide")[0] for block in blocks] == [f"{a} - {b}" for a, b in pairs]
    shown = {pair: [line for line in block.split("Holm p  better\n", 1)[1].splitlines()
                    if line.startswith("  ") and not line.startswith("    ")] for pair, block in zip(pairs, blocks)}
    for row in summary["rows"]:
        for s in order:
            assert format_cell(row, s).endswith("*") == (s in row["best"])
        for test in row["tests"]:
            if test["p_adjusted"] is not None:
                assert f"(Holm {format_p(test['p_adjusted'])})" in wide
            line = shown[test["a"], test["b"]].pop(0)
            verdict = test["better"] or ("significant, not ranked" if test["significant"] else "not significant")
            assert line.endswith(f"{format_p(test['p_adjusted'])[2:]}  {verdict}")
    assert not any(shown.values())
    assert results["families"]["headline"]["description"] in " ".join(text.split())
    # JSON: the same verdicts after a round trip
    again = json.loads(json.dumps(results, default=plain))
    assert [r["best"] for r in again["summary"]["rows"]] == [r["best"] for r in summary["rows"]]
    # LaTeX / Markdown: bold exactly where best is, in the headline and the subset tables
    made = tables(results)
    # (the values' columns; then each pair's difference, bold when its stored test is significant)
    values = slice(2, 2 + len(order))
    for cells, row in zip(made[0].rows, summary["rows"]):
        assert [cell.bold for cell in cells[values]] == [s in row["best"] for s in order]
        assert sorted(cell.bold for cell in cells[values.stop::2]) == sorted(t["significant"] for t in row["tests"])
    for table, method in zip(made[1:3], ("hardeval", "tmr")):
        for cells in table.rows:
            stored = results["tests"][method][("ter_" if method == "hardeval" else "recall_") + cells[0].value]
            assert [cell.bold for cell in cells[values]] == [s in stored["best"] for s in order]
            assert sorted(c.bold for c in cells[values.stop::2]) == sorted(t["significant"] for t in stored["tests"])
    assert results["families"]["HardEval subsets"]["description"] in markdown(results)
    # HTML: highlighted headline cells exactly where best is
    if page is None:
        from tough_ner.html import render
        page = render({"tough_ner_version": "x", "inputs": {}, "options": {}, "results": results})
    headline = page.split("<h2 id='headline'>")[1].split("</table>")[0]
    body_rows = headline.split("<tbody>")[1].split("</tr>")[:-1]
    for html_row, row in zip(body_rows, summary["rows"]):
        cells = re.findall(r"<td( class=\"best\")?>", html_row)
        assert [bool(c) for c in cells[1:1 + len(order)]] == [s in row["best"] for s in order]
        assert html_row.rsplit("<td>", 1)[1].count("<br>") == max(len(row["tests"]) - 1, 0)  # every pair's test
    # the subset tables: each value's interval, highlighted where its stored best is
    for section, method, keys in (("hardeval", "hardeval", [f"ter_{x}" for x in HARDEVAL_SUBSETS]),
                                  ("tmr", "tmr", [f"recall_{x}" for x in TMR_SUBSETS])):
        table = page.split(f"<h2 id='{section}'>")[1].split("<tbody>")[1].split("</table>")[0]
        for html_row, key in zip(table.split("</tr>")[:-1], keys, strict=True):
            stored = results["tests"][method][key]
            cells = re.findall(r"<td( class=\"best\")?>([^<]*)", html_row)
            assert [bool(c) for c, _ in cells[2:]] == [s in stored["best"] for s in order]
            assert all(text.count("[") == 1 for _, text in cells[2:])  # its interval
    buckets = page.split("<h2 id='buckets'>")[1].split("<tbody>")[1].split("</table>")[0]
    assert buckets.count('class="best"') == sum(len(row["best"]) for row in results["tests"]["bucket_f1"].values())
    # findings: each "X is significantly better than Y on k" counts the stored verdicts
    for item in results["findings"]:
        found = re.match(r"(.+) is significantly better than (.+) on (\d+) of the", item["text"])
        if found:
            winner, loser, k = found.group(1), found.group(2), int(found.group(3))
            assert k == sum(1 for row in summary["rows"] if row["better"] for t in row["tests"]
                            if t["better"] == winner and loser in (t["a"], t["b"]))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_systems=st.integers(2, 5), seed=st.integers(0, 10_000), baseline=st.booleans(),
       alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_every_mark_is_the_stored_verdict(n_systems, seed, baseline, alpha):
    rng = random.Random(seed)
    predictions = [corrupted(TEST.tags, rng.choice([0.0, 0.1, 0.4, 0.8]), rng) for _ in range(n_systems)]
    names = [f"s{i}" for i in range(n_systems)]
    results = run(STATS, Corpus(TEST.tokens, TEST.tags, predictions, TEST.documents), names, bootstrap=50,
                  seed=seed, alpha=alpha, baseline=rng.choice(names) if baseline else None)
    expected_pairs = n_systems - 1 if baseline else n_systems * (n_systems - 1) // 2
    assert len(results["comparisons"]) == expected_pairs
    assert all(len(row["tests"]) == expected_pairs for row in results["summary"]["rows"] if row["tests"])
    check_marks(results, alpha)


def test_rows_made_one_at_a_time_carry_the_whole_tables_verdicts():
    """``decided_rows`` (the report's subset tables: rows made as they are kept) gives each row
    the verdicts ``finish`` gives it over the table held whole: Holm over the same family,
    ``best`` and the family's m; on three demo systems' bucket F1 (some significant)."""
    systems = {f"S{i}": COUNTS["bucket_f1"](STATS, Batch(TEST.tokens, TEST.tags,
                                                         corrupted(TEST.tags, 0.15 * i, random.Random(i))))
               for i in range(3)}
    analysis = analyse(systems, n_resamples=50)
    m, made = decided_rows(analysis, "bucket_f1", alpha=0.05, family="F")
    whole = [row(key, "bucket_f1", key, cell["values"], cell["ci"], cell["n"], cell["tests"])
             for key, cell in analysis.items()]
    finish(whole, 0.05, "F")
    assert json.dumps(list(made)) == json.dumps(whole)
    assert any(test["significant"] for one in whole for test in one["tests"])
    assert m == whole[0]["tests"][0]["m"] == sum(not math.isnan(t["p_value"]) for one in whole for t in one["tests"])


def test_space_table_marks_the_stored_verdict():
    from tough_ner.spaces import headline
    rng = random.Random(3)
    scored = {name: Batch(TEST.tokens, TEST.tags, corrupted(TEST.tags, rate, rng))
              for name, rate in (("good", 0.02), ("bad", 0.6))}
    text = headline("tmr", scored, STATS, ["precision", "recall", "f1", "recall_unseen_tokens"])
    counts = {name: COUNTS["tmr"](STATS, batch) for name, batch in scored.items()}
    table = rows(analyse(counts, ["precision", "recall", "f1", "recall_unseen_tokens"]), "tmr", family="headline")
    lines = [line for line in text.splitlines() if line.startswith("| ") and "measure" not in line]
    for line, row in zip(lines, table):
        cells = line.split(" | ")[1:3]
        assert [c.startswith("**") for c in cells] == [s in row["best"] for s in ("good", "bad")]
    assert "Holm over the 4 rows of this table (4 tests)" in text


def test_tmrs_seen_minus_unseen_contrast_is_tested_but_never_ranked():
    """A larger seen - unseen recall gap is more memorisation, not a better system: the row is
    tested (in the family) but names no better system, however significant."""
    good = Batch(TEST.tokens, TEST.tags, corrupted(TEST.tags, 0.05, random.Random(5)))
    # the memoriser: gold on seen mentions, nothing on the others (every unseen mention missed)
    memoriser = []
    for tokens, tags in zip(TEST.tokens, TEST.tags):
        out = list(tags)
        start = None
        for i, tag in enumerate(tags + ["O"]):
            if start is not None and not tag.startswith("I-"):
                if " ".join(tokens[start:i]) not in STATS.mention_text_counts:
                    out[start:i] = ["O"] * (i - start)
                start = None
            if tag.startswith("B-") or (tag.startswith("I-") and start is None):
                start = i
        memoriser.append(out)
    systems = {"good": good, "memoriser": Batch(TEST.tokens, TEST.tags, memoriser)}
    table = compare(systems, "tmr", train=STATS, n_resamples=200)
    contrast = next(row for row in table["rows"] if row["key"] == "recall_seen_minus_unseen")
    assert contrast["better"] is None and contrast["best"] == []
    assert contrast["tests"][0]["significant"] and contrast["tests"][0]["better"] is None
    assert contrast["values"]["memoriser"] > contrast["values"]["good"]
    assert len(contrast["tests"]) == 1 and table["family"]["tests"] == sum(
        len(row["tests"]) for row in table["rows"] if not math.isnan(row["tests"][0]["p_value"]))


def test_a_system_against_itself_marks_nothing():
    results = run(STATS, Corpus(TEST.tokens, TEST.tags, [TEST.predictions[0]] * 2), ["a", "b"], bootstrap=50)
    for members in families(results).values():
        assert not any(test["significant"] for _, test in members)
    assert all(row["best"] == [] for row in results["summary"]["rows"])
    assert not any("significantly better" in item["text"] for item in results["findings"])


# ---- power and error rate ----------------------------------------------------------------------
def headline_verdicts(stats, tokens, gold, predictions, names, baseline=None, alpha=0.05):
    """The headline family of the report (its SUMMARY_ROWS), from the methods' counts."""
    from tough_ner.comparison import finish, pairs
    from tough_ner.report import _row
    batches = {name: Batch(tokens, gold, p) for name, p in zip(names, predictions)}
    by_method = {}
    for method in ("tmr", "hardeval"):
        counts = {name: COUNTS[method](stats, batch) for name, batch in batches.items()}
        by_method[method] = analyse(counts, None, n_resamples=1, pairs=pairs(names, baseline))
    systems = {name: {"tmr": {}, "hardeval": {}} for name in names}
    table = [_row(label, method, key, systems, by_method, names, {}) for label, method, key in SUMMARY_ROWS]
    finish(table, alpha, "headline")
    return {row["key"]: row for row in table}


@pytest.fixture(scope="module")
def sample(conll_stats, conll_test):
    rng = random.Random(0)
    chosen = sorted(rng.sample(range(len(conll_test.tokens)), 500))
    return conll_stats, [conll_test.tokens[i] for i in chosen], [conll_test.tags[i] for i in chosen]


@pytest.mark.parametrize("n_systems", [3, 5])
def test_a_clearly_better_system_is_found_better_than_each_weaker_one(sample, n_systems):
    """Gold with 5% of entities deleted against gold with 30% deleted, 500 CoNLL-2003 test
    sentences, every pair tested: the better system wins F1, recall and TER unseen against
    each weaker one in at least 95 of 100 trials."""
    stats, tokens, gold = sample
    names = [f"s{i}" for i in range(n_systems)]
    wins = {key: 0 for key in ("f1", "recall", "ter_unseen")}
    for trial in range(100):
        rng = random.Random(trial)
        predictions = [corrupted(gold, 0.05, rng)] + [corrupted(gold, 0.3, rng) for _ in names[1:]]
        table = headline_verdicts(stats, tokens, gold, predictions, names)
        for key in wins:
            beaten = {t["b"] if t["a"] == "s0" else t["a"] for t in table[key]["tests"] if t["better"] == "s0"}
            wins[key] += beaten == set(names[1:])
    assert min(wins.values()) >= 95, wins


@pytest.mark.parametrize("n_systems", [3, 5])
def test_systems_of_equal_quality_are_rarely_called_different(sample, n_systems):
    """Every system with 30% of the entities deleted (independently): a family of the headline
    rows declares some difference in at most alpha of the trials (binomial tolerance)."""
    stats, tokens, gold = sample
    names = [f"s{i}" for i in range(n_systems)]
    declared = 0
    for trial in range(100):
        rng = random.Random(1000 + trial)
        table = headline_verdicts(stats, tokens, gold, [corrupted(gold, 0.3, rng) for _ in names], names)
        declared += any(t["significant"] for row in table.values() for t in row["tests"])
    # alpha = 0.05 of 100 trials, plus three binomial standard deviations
    assert declared <= 5 + 3 * math.sqrt(100 * 0.05 * 0.95), declared


def test_f1_093_against_057_is_significant_among_10_systems(sample):
    """The case of the issue: a 0.93 F1 system and weak ones near 0.57.  Against a baseline
    (9 pairs x 10 rows = 90 tests) and among all 45 pairs (450 tests), F1 stays significant."""
    stats, tokens, gold = sample
    rng = random.Random(7)
    names = [f"s{i}" for i in range(10)]
    predictions = [corrupted(gold, 0.12, rng)] + [corrupted(gold, 0.6, rng) for _ in names[1:]]
    for baseline in ("s1", None):
        table = headline_verdicts(stats, tokens, gold, predictions, names, baseline)
        row = table["f1"]
        strong = [t for t in row["tests"] if "s0" in (t["a"], t["b"])]
        assert all(t["better"] == "s0" and t["p_adjusted"] <= 0.005 for t in strong)
        assert row["values"]["s0"] > 0.9 and max(v for s, v in row["values"].items() if s != "s0") < 0.65


# ---- the direction of every comparison, by name, on every path -----------------------------------
def write_documents(path, *columns):
    """A CoNLL file of the demo test set's sentences, five to a document (-DOCSTART- lines)."""
    blocks, previous = [], None
    for s, document in enumerate(s // 5 for s in range(len(TEST.tokens))):
        if document != previous:
            blocks.append(" ".join(["-DOCSTART-"] + ["O"] * (len(columns) - 1)))
            previous = document
        blocks.append("\n".join(" ".join(cells) for cells in zip(*(column[s] for column in columns))))
    Path(path).write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return str(path)


def conll_files(folder, named_predictions):
    """One prediction CoNLL file (token gold prediction) per system over the demo test set."""
    return {name: write_documents(folder / f"{name}.conll", TEST.tokens, TEST.tags, predictions)
            for name, predictions in named_predictions.items()}


@pytest.fixture(scope="module")
def good_and_bad(tmp_path_factory):
    rng = random.Random(5)
    folder = tmp_path_factory.mktemp("direction")
    predictions = {"good": corrupted(TEST.tags, 0.02, rng), "bad": corrupted(TEST.tags, 0.7, rng)}
    gold = write_documents(folder / "gold.conll", TEST.tokens, TEST.tags)
    return folder, conll_files(folder, predictions), gold


@pytest.mark.parametrize("command,key", [("tmr", "recall"), ("hardeval", "hardeval")])
@pytest.mark.parametrize("good_first", [True, False])
def test_versus_names_the_better_system(good_and_bad, capsys, command, key, good_first):
    from tough_ner.cli import main
    from tough_ner.demo import TRAIN as TRAIN_PATH
    _, paths, _ = good_and_bad
    first, second = ("good", "bad") if good_first else ("bad", "good")
    assert main([command, "--train", str(TRAIN_PATH), "--test", paths[first], "--versus", paths[second],
                 "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["rows"] if r["key"] == key)
    test = row["tests"][0]
    assert (test["a"], test["b"]) == (paths[first], paths[second])
    assert test["better"] == paths["good"] and row["best"] == [paths["good"]]
    # A - B is the first file's value minus the second's
    assert test["difference"] == pytest.approx(row["values"][paths[first]] - row["values"][paths[second]])


def test_tmr_runs_versus_keeps_each_side(good_and_bad, capsys):
    from tough_ner.cli import main
    from tough_ner.demo import TRAIN as TRAIN_PATH
    folder, paths, _ = good_and_bad
    rng = random.Random(9)
    more = conll_files(folder, {"good2": corrupted(TEST.tags, 0.02, rng), "bad2": corrupted(TEST.tags, 0.7, rng)})
    assert main(["tmr", "--train", str(TRAIN_PATH), "--test", paths["bad"], "--test", more["bad2"],
                 "--versus", paths["good"], "--versus", more["good2"], "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    recall = table["comparison"]["recall"]
    assert recall["pooled"]["difference"] < 0  # A (bad runs) - B (good runs)
    assert recall["A"]["mean"] < recall["B"]["mean"] == table["versus"]["recall"]["mean"]


@pytest.mark.parametrize("good_first", [True, False])
def test_rockner_versus_names_the_better_system(good_and_bad, capsys, good_first):
    from tough_ner.cli import main
    folder, paths, _ = good_and_bad
    rng = random.Random(11)
    attacked = conll_files(folder, {"good_attacked": corrupted(TEST.tags, 0.1, rng),
                                    "bad_attacked": corrupted(TEST.tags, 0.9, rng)})
    sides = {"good": [paths["good"], attacked["good_attacked"]], "bad": [paths["bad"], attacked["bad_attacked"]]}
    first, second = ("good", "bad") if good_first else ("bad", "good")
    assert main(["rockner", "--original", sides[first][0], "--attacked", sides[first][1],
                 "--versus", *sides[second], "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["rows"] if r["key"] == "f1_attacked")
    assert row["tests"][0]["better"] == ("A" if good_first else "B")


@pytest.mark.parametrize("baseline", [None, "bad"])
def test_report_names_the_better_system_and_reads_its_options(good_and_bad, capsys, baseline):
    from tough_ner.cli import main
    from tough_ner.demo import TRAIN as TRAIN_PATH
    folder, paths, gold = good_and_bad
    out, page = folder / f"report-{baseline}.json", folder / f"report-{baseline}.html"
    extra = ["--baseline", baseline] if baseline else []
    assert main(["report", "--train", str(TRAIN_PATH), "--test", gold, "--pred", f"bad={paths['bad']}",
                 "--pred", f"good={paths['good']}", "--json", str(out), "--quiet", "--alpha", "0.01",
                 "--unit", "document", "--resamples", "200", "--confidence", "0.9", "--html", str(page), *extra]) == 0
    results = json.loads(out.read_text())["results"]
    assert results["statistics"] | {} == {**results["statistics"], "alpha": 0.01, "unit": "document",
                                          "n_resamples": 200, "confidence": 0.9, "baseline": baseline}
    f1 = next(row for row in results["summary"]["rows"] if row["key"] == "f1")
    assert f1["best"] == ["good"] and f1["tests"][0]["better"] == "good"
    assert results["comparisons"][0]["systems"] == (["good", "bad"] if baseline else ["bad", "good"])
    check_marks(results, 0.01, page.read_text())


def test_report_runs_of_one_system(good_and_bad, capsys):
    """A repeated --pred NAME adds a run: mean ± sample std over runs, tests on pooled counts."""
    from tough_ner.cli import main
    from tough_ner.demo import TRAIN as TRAIN_PATH
    from tough_ner.tmr import tmr
    folder, paths, gold = good_and_bad
    rng = random.Random(13)
    second = {"good_b": corrupted(TEST.tags, 0.02, rng), "bad_b": corrupted(TEST.tags, 0.7, rng)}
    more = conll_files(folder, second)
    out = folder / "runs.json"
    latex = folder / "runs.tex"
    assert main(["report", "--train", str(TRAIN_PATH), "--test", gold, "--pred", f"good={paths['good']}",
                 "--pred", f"good={more['good_b']}", "--pred", f"bad={paths['bad']}", "--pred", f"bad={more['bad_b']}",
                 "--json", str(out), "--latex", str(latex), "--quiet", "--resamples", "100"]) == 0
    text = capsys.readouterr().out
    results = json.loads(out.read_text())["results"]
    assert list(results["systems"]) == ["good", "bad"] and results["runs"]["good"]["runs"] == 2
    good = [tmr(STATS, Batch(TEST.tokens, TEST.tags, p))["f1"] for p in (read_conll(paths["good"], 1).predictions[0],
                                                                          second["good_b"])]
    cell = results["runs"]["good"]["tmr"]["f1"]
    assert cell["mean"] == pytest.approx(np.mean(good)) and cell["std"] == pytest.approx(np.std(good, ddof=1))
    f1 = next(row for row in results["summary"]["rows"] if row["key"] == "f1")
    assert f1["values"]["good"] == pytest.approx(np.mean(good)) and f1["std"]["good"] == pytest.approx(cell["std"])
    assert f1["best"] == ["good"] and f1["tests"][0]["runs_test"]["n_pairs"] == 2
    assert f"{np.mean(good):.4f} ± {cell['std']:.4f}" in text
    assert f"{np.mean(good):.4f} ± {cell['std']:.4f}" in latex.read_text()
    assert "good 2 runs" in text



def test_runs_show_their_means_and_the_tested_differences():
    """With runs, a bucket's F1 is the runs' mean (with its std), and the bucket comparison
    shows the difference its test decided on (counts pooled over runs)."""
    rng = random.Random(21)
    predictions = [corrupted(TEST.tags, rate, rng) for rate in (0.05, 0.3, 0.6)]
    results = run(STATS, Corpus(TEST.tokens, TEST.tags, predictions), ["a", "a", "b"], bootstrap=50)
    rows = results["details"]["a"]["bucket_f1"]["buckets"]["eLen"]
    aggregated = results["runs"]["a"]["bucket_f1"]
    for i, row in enumerate(rows):
        key = f"eLen_{i}_f1"
        if key in aggregated:
            assert row["f1"] == aggregated[key]["mean"] and row["f1_std"] == aggregated[key]["std"]
    for cells in results["comparisons"][0]["bucket_f1"].values():
        for difference, test in zip(cells["difference"], cells["tests"]):
            assert difference == test["difference"] or math.isnan(test["difference"])


def test_runs_attacked_in_part_are_said_and_leave_the_others_tested():
    rng = random.Random(22)
    predictions = [corrupted(TEST.tags, rate, rng) for rate in (0.05, 0.1, 0.5)]
    attacked = {label: [("attacked", Corpus(TEST.tokens, TEST.tags, [corrupted(TEST.tags, 0.5, rng)]))]
                for label in ("a#1", "b")}
    results = run(STATS, Corpus(TEST.tokens, TEST.tags, predictions), ["a", "a", "b"], attacked=attacked,
                  bootstrap=50)
    assert any(w.startswith("a: no intervals or tests for rockner (1 of its 2 runs have them)")
               for w in results["warnings"])
    row = next(r for r in results["summary"]["rows"] if r["key"] == "f1_attacked")
    assert "b" in row["ci"] and "a" not in row["ci"] and row["tests"] == []
    with pytest.raises(ValueError, match="the same label"):
        run(STATS, Corpus(TEST.tokens, TEST.tags, predictions), ["a", "a", "a#2"], bootstrap=0)


def test_a_tables_tests_face_one_way_with_a_baseline():
    """Against a baseline, every test of a subset table is system - baseline, the rows the
    headline decided too (their verdicts, oriented as the table's)."""
    rng = random.Random(2)
    predictions = [corrupted(TEST.tags, rate, rng) for rate in (0.05, 0.3, 0.6)]
    results = run(STATS, Corpus(TEST.tokens, TEST.tags, predictions, TEST.documents), ["A", "B", "C"],
                  bootstrap=50, baseline="A")
    for method, table in results["tests"].items():
        pairs = {tuple((t["a"], t["b"]) for t in row["tests"]) for row in table.values() if row["tests"]}
        assert pairs == {(("B", "A"), ("C", "A"))}, method
    decided_once(results)
