"""Hostile input (issue 33): each case that broke, as a test with its expected message; for the
resource cases a memory ceiling measured in a subprocess.  One section per part of the
package, each with its own fixtures and helpers."""


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


# Runs a command bounded to a number of bytes of address space and writes its exit code and
# peak RSS to a file: Linux carries a process's peak RSS across fork and exec, so the command
# is started from this small process, not from the test's.
LAUNCHER = r"""import os, resource, subprocess, sys
bound, report, *command = sys.argv[1:]
def bounded():
    resource.setrlimit(resource.RLIMIT_AS, (int(bound), int(bound)))
process = subprocess.Popen(command, preexec_fn=bounded)
_, status, usage = os.wait4(process.pid, 0)
with open(report, "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss / 1024}")
"""


def _command_peak(arguments, folder: Path, timeout: float = 120.0, address_space: int = 3 * 2**30):
    """Run ``tough-ner ARGUMENTS`` in a subprocess bounded to ``address_space`` bytes; returns
    (exit code, stdout, stderr, peak RSS in MB of that process alone)."""
    report = folder / "figures.txt"
    done = subprocess.run([sys.executable, "-c", LAUNCHER, str(address_space), str(report), sys.executable, "-m",
                           "tough_ner.cli", *map(str, arguments)], capture_output=True, text=True, timeout=timeout)
    code, peak = report.read_text().split()
    return int(code), done.stdout, done.stderr, float(peak)


def test_tough_ner_buckets_on_20000_types_stays_under_300_mb(tmp_path):
    """Detailed bucket F1 kept a dense column per bucket and sentence: the issue's 20,000-type
    file made ``tough-ner buckets`` reach 24 GB (4,000 types: 1.4 GB).  Now it runs with the
    default 1,000 resamples within 300 MB, and every type's bucket has its F1 and interval."""
    test = _issue_types_file(tmp_path / "types.txt")
    train = write(tmp_path / "train.txt", "Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n")
    started = time.monotonic()
    code, out, err, peak = _command_peak(["buckets", "--train", train, "--test", test, "--json"], tmp_path)
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


def _two_systems_counts(uncertainty_module):
    from tough_ner import Batch, TrainStats, bucket_f1
    from tough_ner.demo import load_demo
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
    used = []
    as_entries = uncertainty.units_as_entries
    monkeypatch.setattr(uncertainty, "units_as_entries", lambda *a: used.append(1) or as_entries(*a))
    monkeypatch.setattr(uncertainty.Counts, "matrix", lambda self: pytest.fail("a dense table was built"))
    entries = _two_systems_counts(uncertainty)
    assert used
    _same(dense, entries)


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
    assert compact.dtype == np.uint8 and np.array_equal(compact, expected)


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
    code, out, err, _ = _command_peak(["report", "--train", TRAIN, "--test", gold, "--pred", f"a|b|c={predicted}",
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
