"""What each of the command's process settings (``tough_ner/cli/_process.py``) saves of the HardEval
whole job: ``tough-ner hardeval --train train.txt --test PRED`` on CoNLL-2003, PRED the
memorisation baseline's predictions on test.txt.

    python bench/bench_process.py [path/to/conll2003] [--quick] [--rounds N]

Each variant turns one setting off (all of them, for the last) and runs the same whole job in a
fresh process of the benchmark's clean venv (``common.clean_python``), in paired rounds (every
variant once per round, the order turning each round); the CPU time (user + system) of each
process comes from ``os.wait4``.  A setting stays only where it saves at least 5% of the job's
CPU time with every setting on (the median over rounds of the paired differences).
"""
from __future__ import annotations

import os
import statistics
import tempfile

from tough_ner import TrainStats, read_conll
from tough_ner.attacks.baselines import memorization
from tough_ner.core.corpus import write_conll

from common import DATA, clean_python, closed, option, print_table, print_verdicts, quick, run_process

# Code run before the command, as ``python -c``: turns one setting off, then runs the command as
# ``python -m tough_ner.cli`` would (the same module run as __main__, so it applies its settings).
WRAPPER = """import runpy, sys
import tough_ner.cli._process as process
off = sys.argv[1]
if off in ("openblas", "all"):
    process.at_start = lambda: None
if off in ("freed memory kept", "all"):
    process.keep_freed_memory = lambda: None
if off in ("no interpreter teardown", "all"):
    process.exit_now = lambda code: None
sys.argv = ["tough_ner.cli"] + sys.argv[2:]
runpy.run_module("tough_ner.cli", run_name="__main__", alter_sys=True)
"""
SETTINGS = ("openblas", "freed memory kept", "no interpreter teardown")


def main():
    rounds = 1 if quick() else int(option("--rounds") or 15)
    stats_path, test_path = DATA / "train.txt", DATA / "test.txt"
    test = read_conll(test_path)
    with tempfile.TemporaryDirectory() as folder:
        pred = os.path.join(folder, "pred.txt")
        write_conll(pred, test.tokens, test.tags, memorization(TrainStats.from_conll(stats_path), test.tokens))
        python = clean_python()
        variants = ("",) + SETTINGS + ("all",)
        job = ["hardeval", "--train", str(stats_path), "--test", pred]
        for variant in variants:  # untimed: files cached, bytecode written
            run_process([python, "-c", WRAPPER, variant, *job], 1)
        times = {variant: [] for variant in variants}
        for r in range(rounds):
            turn = variants[r % len(variants):] + variants[:r % len(variants)]
            for variant in turn:
                times[variant].append(run_process([python, "-c", WRAPPER, variant, *job], 1).cpu)
    base = statistics.median(times[""])
    rows = [("every setting on: CPU s (median of the rounds)", base, "")]
    for variant in SETTINGS + ("all",):
        saved = statistics.median(t - b for t, b in zip(times[variant], times[""]))
        label = f"without '{variant}'" if variant != "all" else "without any setting"
        rows.append((f"{label}: CPU s", statistics.median(times[variant]), ""))
        share = 100 * saved / base
        judged = "" if variant == "all" else ("not judged (--quick)" if quick() else
                                              "stays (>= 5 %)" if share >= 5 else "goes (< 5 %)")
        rows.append(("  saved, share of the job's CPU time (%)", share, judged))
    print(f"data: {'demo corpus (quick smoke run)' if quick() else 'CoNLL-2003 train -> test'}; "
          f"tough-ner hardeval whole job, {rounds} paired rounds")
    print_table(rows, 64)
    if quick():
        print_verdicts()  # the smoke run's closing line
    else:
        stays = sum(note.startswith("stays") for _, _, note in rows)
        print(f"settings: {stays} stay, {len(SETTINGS) - stays} go")
        closed()


if __name__ == "__main__":
    main()
