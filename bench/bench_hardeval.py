"""HardEval benchmark on CoNLL-2003 train -> test, with its peers measured in the same run.

    python bench/bench_hardeval.py [path/to/conll2003] [--quick] [--reference PATH] [--runs N] [--pred FILE]

Three comparisons, each like for like:

* whole job vs whole job: ``tough-ner hardeval --train train.txt --test PRED`` (run as
  ``python -m tough_ner.cli``, i.e. without any shell shim in front of the console script)
  against the authors' script ``python PATH train.txt PRED`` (``--reference PATH``, a copy of
  gbcolborne/ner_eval ``eval/hardeval.py``; a repository script, not a package, so it is run
  only when given; the repository's history holds two versions, named by the git blob printed:
  a single file that imports numpy and six, and a pure-Python one split into ``hardeval.py`` and
  ``utils_hardeval.py`` that also checks BIO-2 validity).  Paired runs: one untimed run of each
  first (both find the files cached and their bytecode written), then N rounds alternating which
  side goes first; each run's CPU time (user + sys), wall time and peak RSS come from
  ``os.wait4`` of that child.  Both run in the same interpreter, started as a regular install in
  a venv starts (``common.clean_python``: none of this environment's start-up hooks).  PRED is
  token, gold, prediction per line (``--pred``; by default the memorisation baseline's
  predictions on test.txt, written to a temporary file).  Both
  outputs are compared: the subset sizes and token error rates must be the reference's.
* core vs core: ``hardeval`` on prebuilt statistics and a prebuilt ``Batch``, against seqeval
  ``f1_score`` (the fastest peer) and ``classification_report`` on the same in-memory tag lists:
  scoring only, no file reading on either side.
* reading: statistics from the CoNLL training file (read + build), best CPU time of N runs in
  this process (the file cached by the OS); built statistics count their mentions when first
  read, so a second figure adds that counting.

Times are best of N wall seconds unless stated; every goal is judged MET / MISSED on this run.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

parser = argparse.ArgumentParser(add_help=False)
parser.add_argument("--reference", help="path of the authors' eval/hardeval.py (run when given)")
parser.add_argument("--runs", type=int, default=5, help="paired whole-process rounds (default 5)")
parser.add_argument("--pred", help="prediction file: token gold prediction (default: memorisation on test.txt)")
OPTIONS, rest = parser.parse_known_args()
sys.argv = sys.argv[:1] + rest  # common.py reads the data folder and --quick from what is left

from seqeval.metrics import classification_report, f1_score  # noqa: E402

from tough_ner import Batch, TrainStats, hardeval, read_conll  # noqa: E402
from tough_ner.baselines import memorization  # noqa: E402
from tough_ner.corpus import write_conll  # noqa: E402
from tough_ner.metrics.hardeval import Hardeval  # noqa: E402

from common import DATA, DoNothing, Goal, best, clean_python, cpu_best, peak_mb, print_table, print_verdicts, \
    quick  # noqa: E402

# The reference's table rows and the matching keys of ours.
ROWS = {"all": "all", "unseen-I": "unseen_I", "unseen-O": "unseen_O", "unseen-all": "unseen", "diff-I": "diff_I",
        "diff-O": "diff_O", "diff-etype": "diff_E", "diff-all": "diff"}


# Runs a module or script as ``python -m`` / ``python script`` would, then reports the peak
# resident memory of this process image: the rusage ru_maxrss of a child also counts the
# forked benchmark before exec, /proc/self/status VmHWM only the program itself.
LAUNCHER = """
import atexit, runpy, sys


@atexit.register  # as the process ends (tough-ner ends it itself, after the exit handlers)
def peak():
    try:
        with open("/proc/self/status") as status:
            sys.stderr.write("\\nVmHWM " + next(l for l in status if l.startswith("VmHWM")).split()[1] + "\\n")
    except (OSError, StopIteration):
        pass


kind, target = sys.argv[1:3]
sys.argv = [target] + sys.argv[3:]
if kind == "module":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:  # as "python script" does: the script's folder first on the path (its own imports)
    import os
    sys.path[0] = os.path.dirname(os.path.abspath(target))
    runpy.run_path(target, run_name="__main__")
"""


def run(command, env):
    """(CPU seconds user + sys, wall seconds, peak RSS in MB, stdout) of one child process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen([clean_python(), "-c", LAUNCHER] + command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        error = err.read().decode(errors="replace")
        if child.returncode:
            raise RuntimeError(f"{' '.join(command)} failed ({child.returncode}): {error[-2000:]}")
        peak = re.findall(r"VmHWM (\d+)", error)
        out.seek(0)
        return (usage.ru_utime + usage.ru_stime, wall, int(peak[-1]) / 1024 if peak else float("nan"),
                out.read().decode())


def reference_rows(output: str) -> dict:
    """{row: (n tokens, TER)} and the average from the reference script's printed table."""
    rows = {}
    for line in output.splitlines():
        fields = line.split()
        if len(fields) == 5 and fields[0] in ROWS:
            rows[fields[0]] = (int(fields[1]), fields[4])
    score = re.search(r"Avg TER on unseen and diff: ([0-9.]+)", output)
    return {"rows": rows, "hardeval": score.group(1) if score else None}


def same_numbers(ours: dict, reference: dict) -> bool:
    if set(reference["rows"]) != set(ROWS):
        return False
    for row, key in ROWS.items():
        n, ter = reference["rows"][row]
        if ours[f"n_{key}"] != n or f"{ours[f'ter_{key}']:.4f}" != ter:
            return False
    return f"{ours['hardeval']:.4f}" == reference["hardeval"]


def git_blob(path) -> str:
    """The file's git object id, as ``git hash-object`` prints it."""
    with open(path, "rb") as handle:
        data = handle.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def whole_process(train_path, pred_path, rounds):
    """Paired whole-process runs of ours and (when given) the reference; rows for the table."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached after the first run
    ours_command = ["module", "tough_ner.cli", "hardeval", "--train", str(train_path), "--test", str(pred_path),
                    "--json"]
    commands = {"ours": ours_command}
    if OPTIONS.reference:
        commands["reference"] = ["script", OPTIONS.reference, str(train_path), str(pred_path)]
        print(f"reference script: {OPTIONS.reference} (git blob {git_blob(OPTIONS.reference)[:12]}: the repository's "
              f"history holds more than one version of it; the blob names the one measured)")
    outputs = {side: run(command, env)[3] for side, command in commands.items()}  # untimed, both sides
    figures = {side: [] for side in commands}
    for r in range(rounds):
        order = list(commands) if r % 2 == 0 else list(commands)[::-1]
        for side in order:
            figures[side].append(run(commands[side], env)[:3])
    rows = []
    median = {side: [statistics.median(f[k] for f in figures[side]) for k in range(3)] for side in commands}
    for side in commands:
        label = "tough-ner hardeval CLI" if side == "ours" else "reference eval/hardeval.py"
        cpu, wall, rss = median[side]
        rows += [(f"{label}: CPU s, median of {rounds} (whole process)", cpu, ""),
                 (f"{label}: wall s, median", wall, ""),
                 (f"{label}: peak RSS MB, median", rss, "")]
    if OPTIONS.reference:
        ratio = statistics.median(o[0] / p[0] for o, p in zip(figures["ours"], figures["reference"]))
        rows.append(("ratio CPU ours / reference (median of paired rounds)", ratio, Goal("<= 0.5", 0.5)))
        same = same_numbers(json.loads(outputs["ours"]), reference_rows(outputs["reference"]))
        print(f"results identical to the reference (8 subsets: sizes and TER to 4 decimals, and the score): "
              f"{'yes' if same else 'NO'}")
        if not same:
            print(outputs["reference"])
    else:
        print("reference script: not run (pass --reference PATH)")
    return rows


def main():
    train_path, test_path = DATA / "train.txt", DATA / "test.txt"
    train = read_conll(train_path)
    test = read_conll(test_path)
    t_read_build, stats = cpu_best(lambda: TrainStats.from_conll(train_path), 7)
    # the mentions are counted when first read (HardEval never does; TMR and bucket F1 do)
    t_with_mentions, _ = cpu_best(lambda: TrainStats.from_conll(train_path).mentions, 7)
    t_build, _ = best(lambda: TrainStats.from_corpus(train))
    predictions = memorization(stats, test.tokens)
    t_batch, batch = best(lambda: Batch(test.tokens, test.tags, predictions), 10)
    t_core, _ = best(lambda: hardeval(stats, Batch(test.tokens, test.tags, predictions)), 10)
    t_f1, _ = best(lambda: f1_score(test.tags, predictions), 10)
    t_report, _ = best(lambda: classification_report(test.tags, predictions, digits=4), 5)
    metric = Hardeval(train=stats, keep_in_memory=True)
    inputs = dict(predictions=predictions, references=test.tags, tokens=test.tokens)
    t_metric, _ = best(lambda: metric.compute(**inputs), 10)
    nothing = DoNothing(keep_in_memory=True)
    t_nothing, _ = best(lambda: nothing.compute(**inputs), 10)

    # 10x the training data (about 2M tokens), each copy's tokens renamed so the vocabulary grows.
    copies = [[[f"{token}~{k}" if k else token for token in sentence] for sentence in train.tokens] for k in range(10)]
    big_tokens, big_tags = [s for copy in copies for s in copy], train.tags * 10
    t_big, _ = best(lambda: TrainStats.from_lists(big_tokens, big_tags), 3)
    half = len(big_tokens) // 2
    t_half, _ = best(lambda: TrainStats.from_lists(big_tokens[:half], big_tags[:half]), 3)
    peak_big = peak_mb(lambda: TrainStats.from_lists(big_tokens, big_tags))

    with tempfile.TemporaryDirectory() as folder:
        pred_path = OPTIONS.pred
        if not pred_path:
            pred_path = os.path.join(folder, "pred.txt")
            write_conll(pred_path, test.tokens, test.tags, predictions)
        whole = whole_process(train_path, pred_path, 1 if quick() else OPTIONS.runs)

    n_tokens = sum(map(len, train.tokens))
    print(f"{DATA}: train {n_tokens} tokens, test {sum(map(len, test.tokens))} tokens; seconds unless stated")
    print_table(whole + [
        ("TrainStats from CoNLL train file (read + build), CPU s", t_read_build, Goal("<= 0.12 s", 0.12)),
        ("  the same, its mentions then counted (TMR, bucket F1 read them)", t_with_mentions, Goal("<= 0.12 s", 0.12)),
        ("TrainStats from lists (build only)", t_build, ""),
        ("core: Batch of the test set (decode gold + predictions)", t_batch, ""),
        ("core: hardeval on prebuilt stats, Batch included", t_core, Goal("<= 0.05 s", 0.05)),
        ("core peer: seqeval f1_score, same lists", t_f1, "fastest peer, scoring only"),
        ("core peer: seqeval classification_report, same lists", t_report, ""),
        ("ratio hardeval core / seqeval f1_score", t_core / t_f1, Goal("<= 1", 1.0)),
        ("evaluate Hardeval.compute (keep_in_memory)", t_metric, ""),
        ("evaluate do-nothing metric, same inputs", t_nothing, "evaluate's own overhead"),
        ("ratio evaluate Hardeval / seqeval classification_report", t_metric / t_report, Goal("<= 0.35", 0.35)),
        ("ratio evaluate Hardeval / seqeval f1_score", t_metric / t_f1, "yardstick: the fastest peer"),
        (f"TrainStats of 10x train, renamed copies ({10 * n_tokens / 1e6:.1f}M tokens)", t_big, Goal("<= 3 s", 3.0)),
        (f"TrainStats of 5x train ({5 * n_tokens / 1e6:.1f}M tokens)", t_half, ""),
        ("scaling 10x / 5x (linear: ~2)", t_big / t_half, Goal("<= 2.5", 2.5)),
        ("peak RSS of the process building stats of 10x train (MB; its 10x lists included)", peak_big,
         "bounded-memory builds: bench_scale.py"),
    ], 62)
    print_verdicts()


if __name__ == "__main__":
    main()
