"""Intervals and paired tests on CoNLL-2003 test with two systems, 1000 resamples: every key
of every method (counts + one resampling), beside seqeval measured in the same run; five
systems with every headline and subset test (all 10 pairs, the verdicts of each family); and
the whole `tough-ner report` with intervals, two systems and HTML plots, as a command.

    python bench/bench_uncertainty.py [path/to/conll2003] [--quick]

--quick: a smoke run on the demo corpus (checks nothing about time).
"""
from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from seqeval.metrics import classification_report, f1_score

from tough_ner import Batch, TrainStats, read_conll
from tough_ner.attacks import entity_attack
from tough_ner.baselines import memorization
from tough_ner.comparison import COUNTS, rows
from tough_ner.corpus import write_conll
from tough_ner.uncertainty import analyse

from common import DATA, Goal, best, peak_mb, print_table, print_verdicts, quick


def noisy(tags, rate, seed):
    """A second system: the first one's tags with a share of entity tokens dropped to O."""
    rng = random.Random(seed)
    return [[("O" if t != "O" and rng.random() < rate else t) for t in s] for s in tags]


def main():
    QUICK = quick()  # noqa: N806
    train_path, test_path = DATA / "train.txt", DATA / "test.txt"  # --quick: the demo corpus
    stats = TrainStats.from_conll(train_path)
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
    print_verdicts()


if __name__ == "__main__":
    main()
