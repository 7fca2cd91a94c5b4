"""A report that fits a terminal and can be repeated (#35): the default summary's width, the
provenance block, ``report --rerun`` (of ``report`` and of ``evaluate``), the paired columns of
the exports and their CSV, and the per-type precision and recall intervals."""
import csv
import io
import json
import math
import os
import random
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tough_ner
from tough_ner import TrainStats
from tough_ner.cli import main
from tough_ner.corpus import Corpus, write_conll
from tough_ner.demo import SYSTEMS, TRAIN, load_demo
from tough_ner.export import (CSV_FIELDS, LABELS, Cell, Table, csv_files, csv_table, markdown, markdown_escape,
                               tables)
from tough_ner.formatting import FORMULA_STARTS, format_p
from tough_ner.present.provenance import KEY, NOT_INSTALLED, without_provenance
from tough_ner.report import WIDTH, format_text, per_type_rows, run
from tough_ner.uncertainty import resample_weights, sentence_keys


def perturbed(tags, share, rng):
    """Tags with about ``share`` of the entity tokens' types changed or dropped: another system."""
    out = []
    for sentence in tags:
        changed = list(sentence)
        for i, tag in enumerate(changed):
            if tag != "O" and rng.random() < share:
                changed[i] = "O" if rng.random() < 0.5 else tag[:2] + rng.choice(["PER", "LOC", "ORG", "MISC"])
        out.append(changed)
    return out


@pytest.fixture(scope="module")
def five_systems():
    """A 5-system report over the demo test set, the systems made by perturbing the gold tags
    (long names, as files named by their folders would give)."""
    train, test = load_demo()
    rng = random.Random(3)
    names = [f"system-with-a-rather-long-name-{k}" for k in range(5)]
    predictions = [perturbed(test.tags, share, rng) for share in (0.05, 0.1, 0.2, 0.3, 0.5)]
    return run(TrainStats.from_corpus(train), Corpus(test.tokens, test.tags, predictions), names, bootstrap=200)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    assert main(["report", "--out-dir", str(folder), "--quiet"]) == 0
    return folder, json.loads((folder / "report.json").read_text(encoding="utf-8"))


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_the_default_summary_fits_100_columns_and_wide_does_not(demo, five_systems, capsys):
    _, report = demo
    for results in (report["results"], five_systems):
        for full in (False, True):
            text = format_text(results, full=full)
            assert widest(text) <= WIDTH, [line for line in text.splitlines() if len(line) > WIDTH][:3]
        assert widest(format_text(results, wide=True)) > WIDTH  # the long form is still there
    # 5 systems: every system's F1 cell is printed (in blocks), each name once in the legend
    text = format_text(five_systems)
    row = next(r for r in five_systems["summary"]["rows"] if r["key"] == "f1")
    for k, name in enumerate(five_systems["summary"]["systems"]):
        assert f"{row['values'][name]:.4f}" in text and f"S{k + 1} = {name}" in text
    # the command prints the same text
    assert main(["report", "--quiet", "--resamples", "50", "--out-dir", str(demo[0] / "again")]) == 0
    assert widest(capsys.readouterr().out) <= WIDTH


def test_the_provenance_block_records_how_the_report_was_made(demo):
    folder, report = demo
    block = report[KEY]
    assert block["command"] == ["tough-ner", "report", "--out-dir", str(folder), "--quiet"]
    assert block["versions"]["tough-ner"] == tough_ner.__version__ == report["tough_ner_version"]
    assert set(block["versions"]) == {"tough-ner", "python", "numpy", "evaluate", "datasets"}
    assert all(v and v != NOT_INSTALLED for k, v in block["versions"].items() if k in ("python", "numpy"))
    assert block["time"].endswith("+00:00") and block["platform"]
    assert report["options"]["seed"] == 0 and all(len(report["inputs"][k]["sha256"]) == 64 for k in ("train", "test"))
    page = (folder / "report.html").read_text(encoding="utf-8")
    footer = page[page.index("<footer id='provenance'>"):]
    assert "tough-ner report --out-dir" in footer and report["inputs"]["test"]["sha256"] in footer
    assert block["time"] in footer and "numpy " + block["versions"]["numpy"] in footer
    # what a comparison of two runs leaves out: the block, the footer; nothing else
    assert KEY not in without_provenance(report) and set(report) - set(without_provenance(report)) == {KEY}
    assert "<footer id='provenance'>" not in without_provenance(page)
    assert len(page) - len(without_provenance(page)) == len(footer[:footer.index("</footer>") + 9])


def test_rerun_of_the_demo_finds_the_same_results(demo, capsys):
    folder, _ = demo
    assert main(["report", "--rerun", str(folder / "report.json")]) == 0
    assert capsys.readouterr().out.startswith(f"rerun of {folder / 'report.json'}: the results are identical")


def test_rerun_names_a_changed_or_missing_input_and_a_different_result(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the recorded paths are relative, as typed
    _, test = load_demo()
    gold = [["O"] * len(s) for s in test.tags]
    write_conll("test.conll", test.tokens, test.tags)
    for name, predictions in zip(SYSTEMS, test.predictions):
        write_conll(f"{name}.conll", test.tokens, test.tags, predictions)
    assert main(["report", "--quiet", "--resamples", "20", "--train", str(TRAIN), "--test", "test.conll",
                 "--pred", f"{SYSTEMS[0]}.conll", "--pred", f"{SYSTEMS[1]}.conll", "--json", "r.json"]) == 0
    capsys.readouterr()
    assert main(["report", "--rerun", "r.json"]) == 0
    assert "identical" in capsys.readouterr().out
    # a stored result that is not what the inputs give: exit status 1, the place named
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    report["results"]["systems"][SYSTEMS[0]]["tmr"]["f1"] = 0.5
    (tmp_path / "tampered.json").write_text(json.dumps(report), encoding="utf-8")
    assert main(["report", "--rerun", "tampered.json"]) == 1
    out = capsys.readouterr().out
    assert "the results differ" in out and f"results.systems.{SYSTEMS[0]}.tmr.f1: 0.5 in the report" in out
    # a prediction file changed since: an error naming it, before any work
    write_conll(f"{SYSTEMS[1]}.conll", test.tokens, test.tags, gold)
    assert main(["report", "--rerun", "r.json"]) == 2
    assert f"the input {SYSTEMS[1]}.conll is not the file the report read" in capsys.readouterr().err
    (tmp_path / f"{SYSTEMS[1]}.conll").unlink()
    assert main(["report", "--rerun", "r.json"]) == 2
    assert f"the input {SYSTEMS[1]}.conll is missing" in capsys.readouterr().err
    # run from another folder: the paths are the report's folder's (its provenance.cwd)
    write_conll(f"{SYSTEMS[1]}.conll", test.tokens, test.tags, test.predictions[1])
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["report", "--rerun", str(tmp_path / "r.json")]) == 0
    assert "identical" in capsys.readouterr().out
    assert os.getcwd() == str(tmp_path / "elsewhere")  # the rerun's folder is not left as the process's
    monkeypatch.chdir(tmp_path)
    # a report whose command is itself a rerun (which would take its own --run-code): refused
    nested = {**report, KEY: {**report[KEY], "command": ["tough-ner", "report", "--rerun", "r.json", "--run-code"]}}
    (tmp_path / "nested.json").write_text(json.dumps(nested), encoding="utf-8")
    assert main(["report", "--rerun", "nested.json"]) == 2
    assert "its command line is itself a rerun" in capsys.readouterr().err
    # a report that records no input (not one tough-ner wrote): nothing to check a rerun against
    (tmp_path / "bare.json").write_text(json.dumps({**report, "inputs": {}}), encoding="utf-8")
    assert main(["report", "--rerun", "bare.json"]) == 2
    assert "records no input file with its SHA-256" in capsys.readouterr().err
    # a JSON without the block
    del report[KEY]
    (tmp_path / "old.json").write_text(json.dumps(report), encoding="utf-8")
    assert main(["report", "--rerun", "old.json"]) == 2
    assert "no command line" in capsys.readouterr().err


def test_exports_carry_each_pairs_stored_difference_interval_and_p(demo, five_systems):
    _, report = demo
    results = report["results"]
    for made in (results, five_systems):
        pairs = [tuple(p) for p in made["statistics"]["pairs"]]
        headline = tables(made)[0]
        order = made["summary"]["systems"]
        assert headline.columns[2 + len(order):] == [c for a, b in pairs for c in (
            f"{a} - {b} [CI]", "Holm p" + (f" {a} - {b}" if len(pairs) > 1 else ""))]
        for cells, row in zip(headline.rows, made["summary"]["rows"]):
            for k, (a, b) in enumerate(pairs):
                difference, p = cells[2 + len(order) + 2 * k:4 + len(order) + 2 * k]
                test = next(t for t in row["tests"] if {t["a"], t["b"]} == {a, b})
                sign = 1 if (test["a"], test["b"]) == (a, b) else -1
                assert difference.value == pytest.approx(sign * test["difference"], nan_ok=True)
                assert sorted(difference.ci) == pytest.approx(sorted(sign * v for v in test["ci"]))
                assert difference.bold == test["significant"]
                assert p.value == test["p_adjusted"] and p.text == format_p(test["p_adjusted"])[2:]
            # the small-n mark of the HTML: † on a value whose n is under 30
            for s, cell in zip(order, cells[2:2 + len(order)]):
                assert cell.small == row["small"][s]
    text = markdown(results)
    row = next(r for r in results["summary"]["rows"] if r["key"] == "recall_unseen_type")
    assert row["small"] and text.count("†") >= 2
    test = row["tests"][0]
    a, b = results["statistics"]["pairs"][0]
    sign = 1 if (test["a"], test["b"]) == (a, b) else -1
    line = next(line for line in text.splitlines() if line.startswith("| TMR recall unseen type"))
    assert f"| {sign * test['difference']:+.4f} [" in line and line.endswith(f"| {format_p(test['p_adjusted'])[2:]} |")
    # the subset tables: each key's stored test, read
    hardeval_table = next(t for t in tables(results) if t.label == "hardeval")
    stored = results["tests"]["hardeval"]["ter_unseen"]["tests"][0]
    unseen = next(cells for cells in hardeval_table.rows if cells[0].value == "unseen")
    assert abs(unseen[-2].value) == pytest.approx(abs(stored["difference"]))
    assert unseen[-1].text == format_p(stored["p_adjusted"])[2:]


# ---- per-type precision and recall intervals ---------------------------------------------------
def spans(tags):
    """(start, end, type) of each entity of a valid BIO sentence, by hand."""
    found = []
    for i, tag in enumerate(tags):
        if tag.startswith("B-"):
            found.append([i, i + 1, tag[2:]])
        elif tag.startswith("I-"):
            found[-1][1] = i + 1
    return [tuple(span) for span in found]


def as_tags(length, entities):
    tags = ["O"] * length
    for start, end, entity_type in entities:
        tags[start:end] = ["B-" + entity_type] + ["I-" + entity_type] * (end - start - 1)
    return tags


def tiny_corpus(seed=11, n=30):
    """Distinct sentences with one or two PER / LOC entities, and two systems that drop an
    entity, change its type or add a one-token one, each at its own rate."""
    rng = random.Random(seed)
    tokens, gold, systems = [], [], ([], [])
    for s in range(n):
        words = [f"w{rng.randrange(40)}" for _ in range(rng.randint(4, 7))] + [f"s{s}"]
        entities = [(0, rng.randint(1, 2), rng.choice(("PER", "LOC")))]
        if rng.random() < 0.5:
            entities.append((len(words) - 2, len(words) - 1, rng.choice(("PER", "LOC"))))
        tokens.append(words)
        gold.append(as_tags(len(words), entities))
        for predicted, rate in zip(systems, (0.15, 0.4)):
            kept = [(a, b, t if rng.random() > rate else {"PER": "LOC", "LOC": "PER"}[t]) for a, b, t in entities
                    if rng.random() > rate / 2]
            if rng.random() < rate:
                kept.append((3, 4, rng.choice(("PER", "LOC"))))
            predicted.append(as_tags(len(words), kept))
    return tokens, gold, systems


def reference_interval(tokens, gold, predicted, entity_type, measure, n_resamples, seed, confidence=0.95):
    """A slow percentile bootstrap of one type's precision or recall: per sentence, the
    entities counted by hand; the resamples drawn as the engine draws them (its weights over
    the sentences in their canonical order, by content hash), each ratio summed in Python."""
    counts = []
    for words, g, p in zip(tokens, gold, predicted):
        gold_spans = {span for span in spans(g) if span[2] == entity_type}
        pred_spans = [span for span in spans(p) if span[2] == entity_type]
        correct = sum(span in gold_spans for span in pred_spans)
        counts.append((correct, len(pred_spans) if measure == "precision" else len(gold_spans)))
    order = np.argsort(sentence_keys(tokens, gold))
    weights = resample_weights(np.zeros(len(tokens), dtype=np.int64), n_resamples, seed)
    values = []
    for row in weights:
        numerator = sum(row[i] * counts[s][0] for i, s in enumerate(order))
        denominator = sum(row[i] * counts[s][1] for i, s in enumerate(order))
        values.append(numerator / denominator if denominator else math.nan)
    tail = (1 - confidence) / 2 * 100
    return list(np.nanpercentile(values, [tail, 100 - tail]))


@pytest.fixture(scope="module")
def tiny_reports():
    tokens, gold, systems = tiny_corpus()
    corpus = Corpus(tokens, gold, list(systems))
    stats = TrainStats.from_lists(tokens[:10], gold[:10])
    return (tokens, gold, systems), [run(stats, corpus, ["a", "b"], bootstrap=200, seed=seed) for seed in (5, 5, 6)]


def test_per_type_precision_and_recall_intervals_equal_a_slow_reference_bootstrap(tiny_reports):
    (tokens, gold, systems), (results, again, other_seed) = tiny_reports
    checked = 0
    for name, predicted in zip(("a", "b"), systems):
        for row in results["details"][name]["bucket_f1"]["buckets"]["tag"]:
            for measure in ("precision", "recall"):
                low, high = row[f"{measure}_ci"]
                assert low <= row[measure] <= high  # the interval holds its value
                assert [low, high] == pytest.approx(
                    reference_interval(tokens, gold, predicted, row["interval"], measure, 200, 5), abs=1e-12)
                checked += 1
    assert checked == 8  # 2 systems x PER, LOC x precision, recall
    # deterministic with the seed; another seed draws other resamples
    tag = {name: r["details"][name]["bucket_f1"]["buckets"]["tag"] for r in (results,) for name in ("a", "b")}
    assert tag == {name: again["details"][name]["bucket_f1"]["buckets"]["tag"] for name in ("a", "b")}
    assert tag != {name: other_seed["details"][name]["bucket_f1"]["buckets"]["tag"] for name in ("a", "b")}


def test_every_view_of_the_per_type_table_shows_the_stored_intervals(tiny_reports, capsys):
    _, (results, _, _) = tiny_reports
    rows = per_type_rows(results)
    assert [row["label"] for row in rows] == [f"{t} {m}" for t in ("LOC", "PER") for m in ("precision", "recall", "F1")] \
        or [row["label"] for row in rows] == [f"{t} {m}" for t in ("PER", "LOC") for m in ("precision", "recall", "F1")]
    for row in rows:
        for name in ("a", "b"):
            bucket = next(r for r in results["details"][name]["bucket_f1"]["buckets"]["tag"] if r["interval"] == row["type"])
            stored = results["tests"]["bucket_f1"][f"tag_{row['type']}_f1"]["ci"][name] if row["measure"] == "f1" \
                else bucket[f"{row['measure']}_ci"]
            assert row["ci"][name] == stored and row["values"][name] == bucket[row["measure"]]
            assert row["n"][name] == bucket["n_pred" if row["measure"] == "precision" else "n_gold"]
            assert row["small"][name] == (row["n"][name] < 30)
        assert row["best"] == (results["tests"]["bucket_f1"][row["key"]]["best"] if row["measure"] == "f1" else [])
    # the terminal (--full; --wide: a line a row), the Markdown export
    full, wide = format_text(results, full=True), format_text(results, full=True, wide=True)
    for row in rows:
        low, high = row["ci"]["a"]
        assert f"{row['values']['a']:.4f} [{low:.4f}, {high:.4f}]" in full
        line = next(line for line in wide.splitlines() if line.startswith(row["label"] + " "))
        assert all(f"{row['values'][s]:.4f} [{row['ci'][s][0]:.4f}, {row['ci'][s][1]:.4f}]" in line for s in "ab")
    assert "per type" not in format_text(results)  # the default summary stays short
    table = next(t for t in tables(results) if t.label == "per-type")
    for cells, (precision, recall, f1) in zip(table.rows, zip(rows[0::3], rows[1::3], rows[2::3])):
        assert cells[0].value == f1["type"] and cells[1].value == f1["n"]["a"]
        for k, name in enumerate(("a", "b")):
            n_predicted, *shown = cells[2 + 4 * k:6 + 4 * k]
            assert n_predicted.value == precision["n"][name]
            assert [(c.value, c.ci, c.bold, c.small) for c in shown] == [
                (r["values"][name], r["ci"][name], name in r["best"], r["small"][name]) for r in (precision, recall, f1)]


# ---- CSV exports -----------------------------------------------------------------------------------
def markdown_rows(text):
    """Each table of a Markdown export as (header, rows of cell texts), escapes kept."""
    out = []
    for block in text.strip().split("\n\n### "):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        split = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
        out.append((split[0], split[2:]))
    return out


def as_markdown(fields, names, kind, signed, p_value=False):
    """A CSV column group (value, then the fields ``names``) as the Markdown export writes the cell."""
    value, extra = fields[0], dict(zip(names, fields[1:]))
    if p_value:
        return format_p(float(value) if value else math.nan)[2:]

    def number(text, sign=False):
        if text == "":
            return "nan"
        if re.fullmatch(r"-?\d+", text):
            return text
        return f"{round(float(text), 4) + 0.0:{'+' if sign else ''}.4f}"
    if kind == "plain" or value == "" and not extra.get("low"):
        text = number(value, signed) if value == "" or re.fullmatch(r"[-+\d.e]+", value) else \
            markdown_escape(value.removeprefix("'"))
    else:
        text = number(value, signed)
    if extra.get("std"):
        text += f" ± {number(extra['std'])}"
    if extra.get("low"):
        text += f" [{number(extra['low'])}, {number(extra['high'])}]"
    if extra.get("small") == "True":
        text += "†"
    return f"**{text}**" if "True" in (extra.get("best"), extra.get("significant")) else text


@pytest.fixture(scope="module")
def hostile_names():
    """The demo's two systems named as a spreadsheet would evaluate them."""
    train, test = load_demo()
    return run(TrainStats.from_corpus(train), test, ["=HYPERLINK(1)", "-2+3"], bootstrap=50)


def test_csv_tables_hold_the_markdowns_rows_and_the_stored_verdicts(demo, five_systems, hostile_names):
    for results in (demo[1]["results"], five_systems, hostile_names):
        made, files = tables(results), csv_files(results)
        assert list(files) == [f"{t.label}.csv" for t in made]
        for table, (header, md_rows) in zip(made, markdown_rows(markdown(results))):
            got = list(csv.reader(io.StringIO(files[f"{table.label}.csv"])))
            kinds = table.kinds or ["plain"] * len(table.columns)
            names = [[f for f in CSV_FIELDS[k] if f != "std" or any(r[j].std is not None for r in table.rows)]
                     for j, k in enumerate(kinds)]  # a std column only with runs
            starts = np.cumsum([0] + [1 + len(n) for n in names])
            assert len(got[0]) == starts[-1] and len(got) == len(md_rows) + 1
            for csv_row, md_row, cells in zip(got[1:], md_rows, table.rows):
                rebuilt = [as_markdown(csv_row[starts[j]:starts[j + 1]], names[j], kind, cells[j].signed,
                                       table.columns[j].startswith("Holm p")) for j, kind in enumerate(kinds)]
                assert rebuilt == md_row, table.label
    # the stored verdicts, read: each system's best mark, each pair's difference, interval, mark and p
    results = demo[1]["results"]
    order, (a, b) = results["summary"]["systems"], results["statistics"]["pairs"][0]
    headline = list(csv.DictReader(io.StringIO(files_of(results)["headline.csv"])))
    for line, row in zip(headline, results["summary"]["rows"]):
        test = next(t for t in row["tests"] if {t["a"], t["b"]} == {a, b})
        sign = 1 if (test["a"], test["b"]) == (a, b) else -1
        assert [line[f"{s} best"] == "True" for s in order] == [s in row["best"] for s in order]
        assert float(line[f"{a} - {b}"]) == sign * test["difference"]
        assert sorted([float(line[f"{a} - {b} low"]), float(line[f"{a} - {b} high"])]) == sorted(
            sign * v for v in test["ci"])
        assert line[f"{a} - {b} significant"] == str(test["significant"])
        assert float(line["Holm p"]) == test["p_adjusted"]
        assert [line[f"{s} small"] == "True" for s in order] == [row["small"][s] for s in order]
    # names a spreadsheet would evaluate are text; numbers (a negative difference) stay numbers
    header = next(csv.reader(io.StringIO(csv_files(hostile_names)["headline.csv"])))
    assert "'=HYPERLINK(1)" in header and "'-2+3 best" in header and "=HYPERLINK(1)" not in header
    assert any(cell.startswith("-0.") for line in csv.reader(io.StringIO(csv_files(hostile_names)["headline.csv"]))
               for cell in line)


def files_of(results):
    return csv_files(results)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(allow_nan=True, allow_infinity=False), st.integers(-99, 99),
                                    st.text(max_size=6)),
                          st.one_of(st.none(), st.tuples(st.floats(-1, 1), st.floats(-1, 1))),
                          st.booleans(), st.booleans()), min_size=1, max_size=6))
def test_a_csv_table_keeps_numbers_as_numbers_and_neutralises_formulas(cells):
    table = Table("t", ["text", "x"], [[Cell(str(i)), Cell(value, ci, bold, small=small)]
                                       for i, (value, ci, bold, small) in enumerate(cells)], "t", ["plain", "tested"])
    header, *rows = list(csv.reader(io.StringIO(csv_table(table))))
    assert header == ["text", "x", "x low", "x high", "x small", "x best"]
    for row, (value, ci, bold, small) in zip(rows, cells):
        shown = row[1]
        if isinstance(value, str):
            assert shown == ("'" + value if value.startswith(FORMULA_STARTS) else value)
        elif isinstance(value, float) and math.isnan(value):
            assert shown == ""
        else:
            assert float(shown) == value  # a number, its minus a sign: never prefixed
        assert row[2:4] == (["", ""] if ci is None else [repr(float(v)) for v in ci])
        assert row[4:] == [str(small), str(bold)]


def test_report_command_writes_the_csv_tables(tmp_path, capsys):
    out = tmp_path / "tables"
    assert main(["report", "--quiet", "--resamples", "30", "--out-dir", str(tmp_path), "--csv", str(out),
                 "--markdown", str(tmp_path / "t.md")]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{t}.csv" for t in LABELS)  # the demo has them all
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert {p.name: p.read_bytes().decode("utf-8") for p in out.iterdir()} == csv_files(report["results"])
    assert str(out) in capsys.readouterr().out  # said among the files written
    # a file the folder would get is never an input: refused before any work
    _, test = load_demo()
    write_conll(out / "tmr.csv", test.tokens, test.tags, test.predictions[0])
    before = (out / "tmr.csv").read_bytes()
    assert main(["report", "--quiet", "--train", str(TRAIN), "--test", str(out / "tmr.csv"), "--pred",
                 str(out / "tmr.csv"), "--csv", str(out)]) == 2
    assert "is the input --test" in capsys.readouterr().err and (out / "tmr.csv").read_bytes() == before


# ---- --rerun of a model's report (tough-ner evaluate) ----------------------------------------------
TAGGER = """def tag(sentences):
    return [["B-LOC" if word[:1].isupper() else "O" for word in words] for words in sentences]
"""


def test_rerun_of_an_evaluate_report_runs_the_model_again_or_names_what_changed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the module beside the files, as a user's would be
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "r35_tagger.py").write_text(TAGGER, encoding="utf-8")
    _, test = load_demo()
    write_conll("test.conll", test.tokens, test.tags)
    common = ["evaluate", "--train", str(TRAIN), "--test", "test.conll", "--attacks", "case", "--resamples", "20",
              "--quiet"]
    assert main(common + ["--model", "caps=r35_tagger:tag", "--cache-dir", "cache", "--json", "r.json"]) == 0
    capsys.readouterr()
    monkeypatch.delitem(sys.modules, "r35_tagger")
    # a report names code to import: never without --run-code (a report may come from elsewhere)
    (tmp_path / "r35_tagger.py").write_text(TAGGER + "open('imported', 'w').close()\n", encoding="utf-8")
    assert main(["report", "--rerun", "r.json"]) == 2
    assert "its command runs Python code (r35_tagger:tag" in capsys.readouterr().err
    assert not (tmp_path / "imported").exists() and "r35_tagger" not in sys.modules
    (tmp_path / "r35_tagger.py").write_text(TAGGER, encoding="utf-8")
    assert main(["report", "--rerun", "r.json", "--run-code"]) == 0  # the predictions read from the cache
    assert "the results are identical" in capsys.readouterr().out
    for entry in (tmp_path / "cache").rglob("*"):  # without the cache: the model predicts again
        if entry.is_file():
            entry.unlink()
    assert main(["report", "--rerun", "r.json", "--run-code"]) == 0
    assert "the results are identical" in capsys.readouterr().out
    # the function's module changed: named before any prediction (it would miss the cache anyway)
    (tmp_path / "r35_tagger.py").write_text(TAGGER.replace("isupper", "islower"), encoding="utf-8")
    assert main(["report", "--rerun", "r.json", "--run-code"]) == 2
    assert "the model caps (r35_tagger:tag) is not the one the report ran (it differs in: source" \
        in capsys.readouterr().err
    monkeypatch.delitem(sys.modules, "r35_tagger")
    # predictions made elsewhere (jsonl:FOLDER): each file it read is an input, checked by its SHA-256
    assert main(common + ["--write-inputs", "in"]) == 0
    (tmp_path / "llm").mkdir()
    for name in ("test", "case-lower"):
        lines = (tmp_path / "in" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        (tmp_path / "llm" / f"{name}.jsonl").write_text("".join(json.dumps(
            [{"text": w, "type": "LOC"} for w in json.loads(line) if w[:1].isupper()]) + "\n" for line in lines),
            encoding="utf-8")
    assert main(common + ["--model", "llm=jsonl:llm", "--json", "j.json"]) == 0
    capsys.readouterr()
    files = json.loads((tmp_path / "j.json").read_text(encoding="utf-8"))["inputs"]["models"][0]["files"]
    assert [(f["split"], f["path"]) for f in files] == [("test", str(tmp_path / "llm" / "test.jsonl")),
                                                        ("case lower", str(tmp_path / "llm" / "case-lower.jsonl"))]
    assert main(["report", "--rerun", "j.json"]) == 0
    assert "the results are identical" in capsys.readouterr().out
    (tmp_path / "llm" / "test.jsonl").write_text("[]\n" * len(test.tokens), encoding="utf-8")
    assert main(["report", "--rerun", "j.json"]) == 2
    assert f"the input {tmp_path / 'llm' / 'test.jsonl'} is not the file the report read" in capsys.readouterr().err


def test_a_run_on_standard_input_gets_an_id_of_its_own():
    """The run id digests the inputs' contents; standard input's is not kept, so two runs that
    read it never share an id (two files of one content always do)."""
    from tough_ner.cli.report import run_id

    read = {"train": {"path": "-", "sha256": None}, "test": {"path": "t.conll", "sha256": "ab" * 32}}
    assert run_id("1", read, {}) != run_id("1", read, {})
    files = {"train": {"path": "a.conll", "sha256": "cd" * 32}, "test": read["test"]}
    assert run_id("1", files, {}) == run_id("1", files, {})
