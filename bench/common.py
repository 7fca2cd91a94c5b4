"""Timing helpers shared by the benchmarks (best-of-N wall time, tracemalloc peak)."""
from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from pathlib import Path

import evaluate

from tough_ner.metrics.base import input_features

DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared/data/conll2003"


def best(function, repeat=5):
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def peak_mb(function):
    gc.collect()
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def print_table(rows, width=58):
    """Rows of (measure, seconds, goal) under a header."""
    print(f"{'measure':<{width}} {'seconds':>9}  goal")
    for name, seconds, goal in rows:
        print(f"{name:<{width}} {seconds:>9.4f}  {goal}")


class DoNothing(evaluate.Metric):
    """evaluate's own overhead on the same three string features."""

    def _info(self):
        return evaluate.MetricInfo(description="", citation="", inputs_description="", features=input_features())

    def _compute(self, predictions, references, tokens):
        return {}
