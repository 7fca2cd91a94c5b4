"""Intervals and paired tests on CoNLL-2003 test with two systems, 1000 resamples: every key
of every method (counts + one resampling), beside seqeval measured in the same run; five
systems with every headline and subset test (all 10 pairs, the verdicts of each family); and
the whole `tough-ner report` with intervals, two systems and HTML plots, as a command.

Large test sets (``large_test_sets``): ``tmr(..., ci=True)`` on CoNLL-2003 test x 50 (172k
sentences, the memorization baseline's predictions) and on 1M one-token sentences (CoNLL-2003
test's tokens in turn, gold I- tags as B-, the baseline's predictions), each test file read
with ``read_batch`` as the command reads it, each run in a fresh process: the engine of this
tree beside the engine before bounded intervals (the package at commit ``BEFORE``, taken from
git), in the same run.

    python bench/bench_uncertainty.py [path/to/conll2003] [--quick]

--quick: a smoke run on the demo corpus (checks nothing about time).
"""
from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path



def _vm(field: str) -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith(field + ":"))


def interval_child(spec: dict) -> None:
    """One ``tmr`` on a large test set in this fresh process (``PYTHONPATH`` picks the package):
    prints, as JSON, the peak RSS during the call without and with intervals (the high-water
    mark reset just before each), the RSS before each, the CPU time and the result."""
    from tough_ner import TrainStats, tmr
    from tough_ner.corpus import read_batch

    stats = TrainStats.from_conll(spec["train"])
    batch = read_batch(spec["test"])
    out = {"package": os.path.dirname(__import__("tough_ner").__file__)}
    for ci in (False, True):
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # VmHWM starts again from the current size
        before, cpu = _vm("VmRSS"), time.process_time()
        result = tmr(stats, batch, ci=ci)
        out[f"ci={ci}"] = {"before": before, "peak": _vm("VmHWM"), "cpu": time.process_time() - cpu}
    out["result"] = {key: value for key, value in result.items() if isinstance(value, float)}
    print(json.dumps(out))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    interval_child(json.loads(sys.argv[2]))
    sys.exit(0)

from seqeval.metrics import classification_report, f1_score  # noqa: E402  (children import only what they measure)

from tough_ner import Batch, TrainStats, read_conll  # noqa: E402
from tough_ner.attacks import entity_attack  # noqa: E402
from tough_ner.baselines import memorization  # noqa: E402
from tough_ner.comparison import COUNTS, rows  # noqa: E402
from tough_ner.corpus import write_conll  # noqa: E402
from tough_ner.uncertainty import analyse  # noqa: E402

from common import DATA, Goal, best, peak_mb, print_table, print_verdicts, quick  # noqa: E402


def noisy(tags, rate, seed):
    """A second system: the first one's tags with a share of entity tokens dropped to O."""
    rng = random.Random(seed)
    return [[("O" if t != "O" and rng.random() < rate else t) for t in s] for s in tags]


def main():
    QUICK = quick()  # noqa: N806
    train_path, test_path = DATA / "train.txt", DATA / "test.txt"  # --quick: the demo corpus
    stats = TrainStats.from_conll(train_path, keep_text=True)
    test = read_conll(test_path)
    a = memorization(stats, test.tokens)
    b = noisy(test.tags, 0.15, 0)
    systems = {"memorization": Batch(test.tokens, test.tags, a), "noisy gold": Batch(test.tokens, test.tags, b)}
    attacked = entity_attack(test, ratio=1.0, seed=0, train=stats).to_dict()
    att = {"memorization": memorization(stats, attacked["tokens"]), "noisy gold": noisy(attacked["ner_tags"], 0.15, 1)}
    pairs = {name: (batch, Batch(attacked["tokens"], attacked["ner_tags"], att[name])) for name, batch in systems.items()}
    resamples = 20 if QUICK else 1000

    def every_method(fresh: bool):
        """Counts and analysis of every method; ``fresh``: on new batches (decoding and
        classification included), else on the batches the methods already scored, as in a report."""
        tables = {}
        for method in ("hardeval", "tmr", "bucket_f1"):
            counts = {name: COUNTS[method](stats, Batch(test.tokens, test.tags, batch.predictions) if fresh else batch)
                      for name, batch in systems.items()}
            tables[method] = analyse(counts, None, resamples)
        tables["rockner"] = analyse({name: COUNTS["rockner"](stats, pair) for name, pair in pairs.items()}, None,
                                    resamples)
        return tables

    from tough_ner import bucket_f1, hardeval, tmr
    five = {**systems, **{f"noisy {rate}": Batch(test.tokens, test.tags, noisy(test.tags, rate, k))
                          for k, rate in enumerate((0.05, 0.3, 0.6), start=2)}}
    for batch in five.values():  # scored once, as the report does before its intervals
        hardeval(stats, batch), tmr(stats, batch), bucket_f1(stats, batch, bootstrap=0)

    def five_systems():
        """Every key of the three test-set methods for five systems, all 10 pairs tested, and the
        verdicts of each method's table as one family (the report's subset tables and headline
        read the same tests)."""
        verdicts = 0
        for method in ("hardeval", "tmr", "bucket_f1"):
            table = rows(analyse({name: COUNTS[method](stats, batch) for name, batch in five.items()}, None,
                                 resamples), method)
            verdicts += sum(len(row["tests"]) for row in table)
        return verdicts
    repeat = 1 if QUICK else 3
    t_all, tables = best(lambda: every_method(False), repeat)
    t_fresh, _ = best(lambda: every_method(True), repeat)
    t_five, n_five = best(five_systems, repeat)
    n_keys = sum(len(table) for table in tables.values())
    t_report_seqeval, _ = best(lambda: classification_report(test.tags, a, digits=4), repeat)
    t_f1_seqeval, _ = best(lambda: f1_score(test.tags, a), repeat)
    peak = peak_mb(lambda: every_method(False))

    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, tags in (("a", a), ("b", b)):
            paths.append(os.path.join(folder, f"{name}.conll"))
            write_conll(paths[-1], test.tokens, tags)
        gold = os.path.join(folder, "gold.conll")
        write_conll(gold, test.tokens, test.tags)
        command = [sys.executable, "-m", "tough_ner.cli", "report", "--train", str(train_path), "--test", gold,
                   "--pred", paths[0], "--pred", paths[1], "--html", os.path.join(folder, "r.html"),
                   "--json", os.path.join(folder, "r.json"), "--quiet", "--bootstrap", str(resamples)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        t_report = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_report = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with_plots = "<svg" in Path(folder, "r.html").read_text()

    print(f"data: {'demo corpus (quick smoke run)' if QUICK else 'CoNLL-2003 train -> test'}; two systems; "
          f"{resamples} resamples")
    if not with_plots:
        print("NOTE: matplotlib is not installed: the report's page was timed WITHOUT plots (tables only)")
    print_table([
        (f"intervals + paired tests, {n_keys} keys of 4 methods, on scored batches", t_all, Goal("<= 1 s", 1.0)),
        ("the same from new batches (decoding and classification included)", t_fresh, ""),
        (f"5 systems, {n_five} paired tests (10 pairs) and their verdicts, intervals", t_five, Goal("<= 2 s", 2.0)),
        ("seqeval classification_report, one system (peer, run)", t_report_seqeval, ""),
        ("seqeval f1_score, one system (peer, run)", t_f1_seqeval, ""),
        (f"tough-ner report, whole command, 2 systems, HTML {'with' if with_plots else 'WITHOUT'} plots",
         t_report, Goal("<= 5 s", 5.0)),
        ("  its CPU time (user + system; the wall time includes waiting on a busy machine)", cpu_report, ""),
        ("peak RSS of this process, intervals and tests (MB)", peak, ""),
    ], 78)
    large_test_sets()
    print_verdicts()


# ---- large test sets ----------------------------------------------------------------------
BEFORE = "9b3533a"  # the last commit whose engine held a resamples x units matrix of weights
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def large_test_sets():
    """``tmr(..., ci=True)`` on CoNLL-2003 test x 50 and on 1M one-token sentences (``--quick``:
    the demo test set x 2 and 20,000 sentences), this tree's engine beside the one at ``BEFORE``,
    each in a fresh process; the goals on the whole process's peak RSS during the call; shown
    beside, what the intervals add (that peak less the RSS before the call)."""
    import shutil

    QUICK = quick()  # noqa: N806
    folder = tempfile.mkdtemp(prefix="tough-ner-bench-intervals-")
    try:
        before = os.path.join(folder, "before")
        os.mkdir(before)
        archive = subprocess.run(["git", "archive", BEFORE, "tough_ner"], capture_output=True, cwd=ROOT)
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", before], input=archive.stdout, check=True)
        else:  # not a git checkout: this tree's engine alone
            print(f"NOTE: commit {BEFORE} not found: the engine before is not measured")
            before = None
        stats = TrainStats.from_conll(DATA / "train.txt")
        test = read_conll(DATA / "test.txt")
        predicted = memorization(stats, test.tokens)
        copies, n_one = (2, 20_000) if QUICK else (50, 1_000_000)
        files = {f"{'demo' if QUICK else 'CoNLL-2003'} test x {copies} ({copies * len(test):,} sentences)":
                 test.tokens * copies,
                 f"{n_one:,} one-token sentences": None}
        paths = {}
        for name, tokens in files.items():
            paths[name] = os.path.join(folder, f"{len(paths)}.conll")
            if tokens is not None:
                write_conll(paths[name], tokens, test.tags * copies, predicted * copies)
            else:  # one token a sentence: the test set's tokens in turn, with their gold and predicted tags
                flat = [(t, g.replace("I-", "B-"), p.replace("I-", "B-")) for s, gs, ps in zip(test.tokens, test.tags,
                        predicted) for t, g, p in zip(s, gs, ps)]
                chosen = [flat[i % len(flat)] for i in range(n_one)]
                write_conll(paths[name], *([[column] for column in columns] for columns in zip(*chosen)))
        env = dict(os.environ)
        measured = {}
        for name, path in paths.items():
            for engine, package in (("before", before), ("now", ROOT)):
                if package is None:
                    continue
                spec = {"train": str(DATA / "train.txt"), "test": path}
                child_env = {**env, "PYTHONPATH": package + os.pathsep + os.path.dirname(os.path.abspath(__file__))}
                done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                                      capture_output=True, text=True, env=child_env, timeout=3600)
                if done.returncode != 0:
                    print(f"  {engine} on {name} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
                    continue
                measured[name, engine] = json.loads(done.stdout.strip().splitlines()[-1])
                if not measured[name, engine]["package"].startswith(package):
                    raise RuntimeError(f"the child imported {measured[name, engine]['package']}, not {package}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(f"\ntmr(stats, batch, ci=True), 1000 resamples, a fresh process each; before: the engine at {BEFORE}")
    print(f"{'test set':<42} {'engine':<7} {'RSS before MB':>13} {'peak, no ci':>11} {'peak, ci':>9} "
          f"{'ci adds':>8} {'cpu s, ci':>9}")
    goals = {0: 300, 1: 600}  # MB, the whole process's peak during the call (issue #38)
    table = []
    for k, name in enumerate(paths):
        for engine in ("before", "now"):
            if (name, engine) not in measured:
                continue
            m = measured[name, engine]
            plain, ci = m["ci=False"], m["ci=True"]
            added = ci["peak"] - ci["before"]
            print(f"{name:<42} {engine:<7} {ci['before']:>13.0f} {plain['peak']:>11.0f} {ci['peak']:>9.0f} "
                  f"{added:>8.0f} {ci['cpu']:>9.2f}")
            if engine == "now":
                table.append((f"{name}: peak RSS during tmr(ci=True), MB", ci["peak"],
                              Goal(f"<= {goals[k]} MB", goals[k])))
        if (name, "before") in measured and (name, "now") in measured:
            a, b = measured[name, "before"]["result"], measured[name, "now"]["result"]
            differing = sum(not (a[key] == b.get(key) or (a[key] != a[key] and b.get(key) != b.get(key)))
                            for key in a)  # NaN == NaN here: both undefined; a key before's lacks is new
            table.append((f"{name}: keys of before's whose value or interval differs", float(differing),
                          Goal("0 (the same intervals)", 0.0)))
            if b.keys() - a.keys():
                print(f"keys new since before ({name}): {', '.join(sorted(b.keys() - a.keys()))}")
    print_table(table, 78)


if __name__ == "__main__":
    main()
