"""Shared by the benchmarks: timing (best-of-N wall time, tracemalloc peak), the data folder,
the ``--quick`` smoke mode, and goals judged MET / MISSED on the same run's figures.

    python bench/bench_X.py [CONLL_DIR] [--quick]

``--quick`` runs every step once on the small embedded demo corpus (written as CoNLL files to
a temporary folder), without memory tracing: it checks that the benchmark runs, never its
speed, so no goal is judged (tests/test_bench_smoke.py runs it for every benchmark).
"""
from __future__ import annotations

import atexit
import gc
import math
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import NamedTuple, Optional

import evaluate

from tough_ner.metrics.base import input_features


def quick() -> bool:
    return "--quick" in sys.argv[1:]


def _data() -> Path:
    if quick():
        from tough_ner.corpus import write_conll
        from tough_ner.demo import load_demo

        folder = Path(tempfile.mkdtemp(prefix="tough-ner-bench-"))
        atexit.register(shutil.rmtree, folder, True)
        train, test = load_demo()
        write_conll(folder / "train.txt", train.tokens, train.tags)
        write_conll(folder / "test.txt", test.tokens, test.tags)
        return folder
    folders = [a for a in sys.argv[1:] if not a.startswith("--")]
    return Path(folders[0]) if folders else Path(__file__).resolve().parents[2] / "shared/data/conll2003"


DATA = _data()


def best(function, repeat=5):
    """Best wall time of ``repeat`` runs (one run with --quick) and the last result."""
    times = []
    for _ in range(1 if quick() else repeat):
        gc.collect()
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def peak_mb(function):
    """Peak traced memory of one run, in MB (NaN with --quick: tracing is slow, and the
    function runs in the timings anyway)."""
    if quick():
        return math.nan
    gc.collect()
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


class Goal(NamedTuple):
    """A goal for one measure: met when the measure is at most ``limit`` (seconds, MB, a ratio)."""
    text: str
    limit: float


class Quoted(NamedTuple):
    """A peer's figure from its paper or documentation: shown, never run here."""
    text: str


_verdicts = []


def verdict(value: float, goal: Goal) -> str:
    if quick():
        return "not judged (--quick)"
    met = value <= goal.limit
    _verdicts.append(met)
    return "MET" if met else "MISSED"


def print_table(rows, width=58):
    """Rows of (measure, value, goal): the goal a ``Goal`` (judged on this run's value), a
    ``Quoted`` peer figure (quoted, not run), a note string, or empty."""
    print(f"{'measure':<{width}} {'value':>9}  goal")
    for name, value, goal in rows:
        if isinstance(goal, Goal):
            note = f"{goal.text}: {verdict(value, goal)}"
        elif isinstance(goal, Quoted):
            note = f"{goal.text} (quoted, not run)"
        else:
            note = goal or ""
        print(f"{name:<{width}} {value:>9.4f}  {note}".rstrip())


def print_verdicts(title: Optional[str] = None) -> None:
    """One closing line: how many goals this run met."""
    if quick():
        print("quick smoke run (demo corpus, one repetition): goals not judged")
        return
    missed = _verdicts.count(False)
    print(f"{title or 'goals'}: {_verdicts.count(True)} MET, {missed} MISSED")


class DoNothing(evaluate.Metric):
    """evaluate's own overhead on the same three string features."""

    def _info(self):
        return evaluate.MetricInfo(description="", citation="", inputs_description="", features=input_features())

    def _compute(self, predictions, references, tokens):
        return {}
