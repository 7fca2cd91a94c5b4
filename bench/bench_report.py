"""Report benchmark: CoNLL-2003 train -> test with two systems, plots included.

    python bench/bench_report.py [CONLL_DIR] [--quick]

Systems: the memorization baseline, and the gold tags with seeded errors (a tenth of the
entities dropped, another tenth retyped).

The HTML page's size is judged too (at most 0.6 MB: the page shows the error table's first
rows, the command writes the full table beside it).

Whole job: the ``tough-ner report`` command from the files in a fresh process (interpreter,
imports, statistics from the training file, every method with 1,000 bootstrap resamples, JSON,
HTML with plots, error table, LaTeX, Markdown): wall, CPU and peak RSS; the goal is judged on it.
In-process: the same work from the training file (statistics included), its first run timed
on its own (it pays the plotting imports, as a one-off report does) beside the best of three;
then its parts.  Without the ``plots`` extra (matplotlib) the page has tables only, and the
output says so.  There is no peer producing such a report.
"""
from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time

from tough_ner import Batch, TrainStats, read_conll
from tough_ner.baselines import memorization
from tough_ner.present.formatting import to_json as _json
from tough_ner.corpus import write_conll
from tough_ner.errors import error_rows, to_text
from tough_ner.export import latex, markdown
from tough_ner.html import render
from tough_ner.report import format_text, run
from tough_ner.schemes import decode, spans_to_tags

from common import DATA, Goal, best, peak_mb, print_table, print_verdicts, quick, run_process


def noisy_gold(tags, seed=0, drop=0.1, retype=0.1):
    """The gold tags with seeded errors: a share ``drop`` of the entities dropped, another
    ``retype`` given another type."""
    rng = random.Random(seed)
    types = ["PER", "LOC", "ORG", "MISC"]
    result = []
    for s, sentence in enumerate(tags):
        spans = []
        for start, end, entity_type in decode(sentence, s):
            draw = rng.random()
            if draw < drop:
                continue
            if draw < drop + retype:
                entity_type = rng.choice([t for t in types if t != entity_type])
            spans.append((start, end, entity_type))
        result.append(spans_to_tags(spans, len(sentence), "bio"))
    return result


def main():
    stats = TrainStats.from_conll(DATA / "train.txt")
    test = read_conll(DATA / "test.txt")
    test.predictions = [memorization(stats, test.tokens), noisy_gold(test.tags)]
    systems = ["memorizer", "noisy-gold"]
    resamples = 20 if quick() else 1000

    def errors():
        return [row for name, predictions in zip(systems, test.predictions)
                for row in error_rows(stats, Batch(test.tokens, test.tags, predictions), name)]

    def whole():
        stats = TrainStats.from_conll(DATA / "train.txt")
        results = run(stats, test, systems, bootstrap=resamples)
        report = {"tough_ner_version": "bench", "inputs": {}, "options": {}, "results": results}
        rows = [row for name, predictions in zip(systems, test.predictions)
                for row in error_rows(stats, Batch(test.tokens, test.tags, predictions), name)]
        return (format_text(results), _json(report), to_text(rows, "csv"), latex(results), markdown(results),
                render(report, errors=rows))

    start = time.perf_counter()
    whole()  # the first run pays the plotting imports, as a one-off report does
    t_first = time.perf_counter() - start
    t_whole, (text, json_text, csv_text, _, _, page) = best(whole, 3)
    t_errors, _ = best(errors, 3)
    t_run, results = best(lambda: run(stats, test, systems, bootstrap=resamples), 3)
    report = {"tough_ner_version": "bench", "inputs": {}, "options": {}, "results": results}
    rows = errors()
    t_html, _ = best(lambda: render(report, errors=rows), 3)
    peak = peak_mb(whole)
    assert json.loads(json_text)["results"]["summary"]["systems"] == systems  # the order given
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, predictions in zip(systems, test.predictions):
            paths[name] = os.path.join(folder, f"{name}.conll")
            write_conll(paths[name], test.tokens, predictions)
        command = [sys.executable, "-m", "tough_ner.cli", "report", "--train", str(DATA / "train.txt"), "--test",
                   str(DATA / "test.txt"), *[a for name in systems for a in ("--pred", f"{name}={paths[name]}")],
                   "--json", f"{folder}/r.json", "--html", f"{folder}/r.html", "--errors", f"{folder}/e.csv",
                   "--latex", f"{folder}/t.tex", "--markdown", f"{folder}/t.md", "--quiet",
                   "--bootstrap", str(resamples)]
        command_run = run_process(command, 3)
    plots = "<svg" in page
    what = "HTML with plots" if plots else "HTML WITHOUT plots"
    print(f"{DATA}: test, 2 systems; HTML {len(page) / 1e6:.1f} MB, JSON {len(json_text) / 1e6:.1f} MB, "
          f"error table CSV {len(csv_text) / 1e6:.1f} MB")
    if not plots:
        print("NOTE: matplotlib is not installed: the page was timed WITHOUT plots (tables only); "
              "install the plots extra to time the report as shipped")
    print_table([
        ("whole job: tough-ner report command, fresh process, wall", command_run.wall, Goal("<= 5 s", 5.0)),
        ("  its CPU time (user + system)", command_run.cpu, ""),
        ("  its peak RSS (MB)", command_run.peak_mb, ""),
        ("in process: the same report from the training file, first run", t_first, ""),
        ("  the same, best of 3", t_whole, ""),
        (f"  of which: every method, 2 systems, {resamples} bootstrap", t_run, ""),
        ("  of which: both error tables", t_errors, ""),
        (f"  of which: {what} and its error table", t_html, ""),
        ("peak RSS of this process during the in-process report (MB)", peak, ""),
        ("HTML page (MB; the full error table is beside it, not in it)", len(page.encode()) / 1e6,
         Goal("<= 0.6 MB", 0.6)),
    ], 72)
    print_verdicts()


if __name__ == "__main__":
    main()
