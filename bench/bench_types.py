"""Time against the number of entity types: every per-type table is counted in one pass, so
10x the types should cost about 10x, not 100x (300,000 types took 185 s per Space request
when each type was a pass over all tokens).  seqeval's per-type report is the peer, measured
in the same run on the same input.

The last section runs ``tough-ner buckets`` on issue 33's file (a bucket per entity type, 1,000
bootstrap resamples) with the package as it is and as it was at ``--before REV`` (default: the
last commit whose bucket counts were dense, sentences x buckets), both in the same run, each a
fresh process bounded to 4 GB of address space (unbounded, the old one took 24 GB).

    python bench/bench_types.py [--before REV]
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, tmr
from tough_ner.demo import load_demo

from common import Goal, NotRun, best, option, peak_mb, print_table, print_verdicts, quick

SIZES = (200, 2_000) if quick() else (2_000, 20_000)
GOAL = 15  # at most this factor for 10x the types: near-linear (sorting and dict work add a little)


def many_types(n):
    """n sentences, each with an entity of its own type; every third prediction takes the next type."""
    tokens = [[f"w{i}", "x", f"y{i % 7}"] for i in range(n)]
    gold = [[f"B-T{i}", f"I-T{i}", "O"] for i in range(n)]
    pred = [[f"B-T{(i + 1) % n if i % 3 == 0 else i}", "O" if i % 2 else f"I-T{i}", "O"] for i in range(n)]
    return tokens, gold, pred


def training() -> TrainStats:
    """The demo training data plus one sentence of type T0: the input checks want the gold types
    to share at least one type with training; training data with thousands of types is not what
    this measures."""
    train = load_demo()[0]
    return TrainStats.from_lists(train.tokens + [["w0", "x"]], train.tags + [["B-T0", "I-T0"]])


def main():
    rows, times = [], {}
    for n in SIZES:
        tokens, gold, pred = many_types(n)
        stats = training()
        measures = {
            "hardeval detailed (per type)": lambda: hardeval(stats, Batch(tokens, gold, pred), detailed=True),
            "tmr detailed (per type)": lambda: tmr(stats, Batch(tokens, gold, pred), detailed=True),
            "bucket_f1 detailed": lambda: bucket_f1(stats, Batch(tokens, gold, pred), detailed=True, bootstrap=0),
            "seqeval classification_report (peer)": lambda: classification_report(gold, pred, zero_division=0),
        }
        for name, work in measures.items():
            seconds, _ = best(work, 2)
            times[name, n] = seconds
            rows.append((f"{name}, {n:,} types", seconds, ""))
        rows.append((f"  peak RSS of this process (MB), bucket_f1 detailed, {n:,} types", peak_mb(measures["bucket_f1 detailed"]), ""))
    # The bootstrap intervals keep bucket counts as entries (tough_ner.core.sparse) once a dense
    # table of them would be large: sentences x buckets no more, so 10x the types costs ~10x too.
    for n in SIZES:
        tokens, gold, pred = many_types(n)
        stats = training()
        seconds, _ = best(lambda: bucket_f1(stats, Batch(tokens, gold, pred), detailed=True, bootstrap=200), 1)
        times["bucket_f1 detailed + 200 bootstrap", n] = seconds
        rows.append((f"bucket_f1 detailed + 200 bootstrap, {n:,} types", seconds, ""))
    small, large = SIZES
    for name in ("hardeval detailed (per type)", "tmr detailed (per type)", "bucket_f1 detailed",
                 "bucket_f1 detailed + 200 bootstrap", "seqeval classification_report (peer)"):
        factor = times[name, large] / times[name, small]
        goal = "" if "peer" in name else Goal(f"<= {GOAL}x", GOAL)
        rows.append((f"{name}: cost of {large // small}x the types (factor)", factor, goal))
    print_table(rows, 66)
    print()
    print_table(issue_file_rows(), 66)
    print_verdicts()


# ---- issue 33: tough-ner buckets on a bucket per entity type, before and after ----------------
ISSUE_SIZES = (200,) if quick() else (2_000, 20_000)
BOUND = 4 * 2**30  # address space of each run: the old code is stopped here, not at 24 GB
# The last commit whose bucket counts were dense (sentences x buckets); --before REV for another.
BEFORE = "583f6f1"


def issue_file(path: Path, types: int) -> Path:
    """Issue 33's file: a LOC sentence, then per type a one-token mention of it and a token
    predicted as the next type (``types`` + 1 sentences)."""
    lines = ["Germany B-LOC B-LOC", ""]
    for i in range(types):
        lines += [f"w{i} B-T{i} B-T{i}", f"x O B-T{(i + 1) % types}", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# Runs a command bounded to BOUND bytes of address space and writes its exit code and peak RSS
# to a file.  It sits between this benchmark and the command because Linux carries a process's
# peak RSS across fork and exec: started from this large process, the command would report it.
LAUNCHER = r"""import os, resource, subprocess, sys
bound, report, *command = sys.argv[1:]
def bounded():
    resource.setrlimit(resource.RLIMIT_AS, (int(bound), int(bound)))
process = subprocess.Popen(command, stdout=subprocess.DEVNULL, preexec_fn=bounded)
_, status, usage = os.wait4(process.pid, 0)
with open(report, "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss / 1024}")
"""


def command_run(package: Path, arguments, folder: Path) -> tuple:
    """``tough-ner ARGUMENTS`` from the package folder ``package`` (its parent on PYTHONPATH), its
    output discarded, run in ``folder``: (exit code, wall seconds, peak RSS in MB of that process,
    last error line)."""
    env = {**os.environ, "PYTHONPATH": str(package.parent)}
    report = folder / "figures.txt"
    started = time.perf_counter()
    # Run from the scratch folder: ``python -m`` puts its working folder first on sys.path, and
    # from the repository's top that would be this checkout's package whatever PYTHONPATH says.
    done = subprocess.run([sys.executable, "-c", LAUNCHER, str(BOUND), str(report), sys.executable, "-m",
                           "tough_ner.cli", *map(str, arguments)], capture_output=True, text=True, env=env,
                          cwd=folder)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the launcher failed: {done.stderr[-2000:]}")
    code, peak = report.read_text().split()
    return int(code), seconds, float(peak), (done.stderr.strip().splitlines() or [""])[-1]


def package_at(revision: str, folder: Path):
    """The package as it was at ``revision`` (git archive), unpacked in ``folder``; None where
    this clone does not have it (a shallow one)."""
    root = Path(__file__).resolve().parents[1]
    archive = folder / "before.tar"
    done = subprocess.run(["git", "-C", str(root), "archive", "-o", str(archive), revision, "tough_ner"],
                          capture_output=True)
    if done.returncode != 0:
        return None
    with tarfile.open(archive) as unpacked:
        unpacked.extractall(folder / "before", filter="data")
    return folder / "before" / "tough_ner"


def issue_file_rows() -> list:
    """Time and peak RSS of ``tough-ner buckets --json`` (1,000 resamples) on issue 33's file,
    before (``--before``) and after, in this run."""
    import tough_ner

    revision = option("--before") or BEFORE
    after = Path(tough_ner.__file__).resolve().parent
    print(f"tough-ner buckets --json on issue 33's file, 1,000 resamples, each run bounded to {BOUND / 2**30:.0f} GB: "
          f"before = the package at {revision}, after = this one")
    rows = []
    with tempfile.TemporaryDirectory(prefix="tough-ner-bench-types-") as name:
        folder = Path(name)
        before = package_at(revision, folder)
        train = folder / "train.txt"
        train.write_text("Germany B-LOC\nvisits O\n\nw0 B-T0\nx O\n", encoding="utf-8")
        for types in ISSUE_SIZES:
            test = issue_file(folder / f"types{types}.txt", types)
            arguments = ["buckets", "--train", train, "--test", test, "--json"]
            for label, package in (("before", before), ("after", after)):
                what = f"tough-ner buckets, {types:,} types, {label}"
                if package is None:
                    rows.append((what + ": seconds", None, NotRun(f"{revision} is not in this clone")))
                    continue
                code, seconds, peak, said = command_run(package, arguments, folder)
                if code != 0:
                    rows.append((what + ": seconds", None, NotRun(f"failed after {seconds:.1f} s at a peak of "
                                                                  f"{peak:.0f} MB ({said})")))
                    continue
                goal = Goal("<= 300 MB", 300) if label == "after" and types >= 20_000 else ""
                rows += [(what + ": seconds", seconds, ""), (what + ": peak RSS (MB)", peak, goal)]
    return rows


if __name__ == "__main__":
    main()
