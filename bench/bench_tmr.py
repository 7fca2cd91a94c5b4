"""TMR benchmark on CoNLL-2003 train -> test, with seqeval, nervaluate and EvalNER measured in the same run.

    python bench/bench_tmr.py [path/to/conll2003] [--quick] [--pred FILE] [--runs N]
                              [--reference PATH [--reference-python PYTHON]]

Compared, core vs core (lists in memory; training statistics built before): ``tmr`` from tag
lists (validation, decoding, subsets, scores) against seqeval's ``f1_score`` (the fastest span
F1 there is, the yardstick) and ``classification_report``, and nervaluate (the ``test`` extra)
where installed.  Whole job vs whole job: the ``tough-ner tmr`` command from the CoNLL files
(interpreter start, imports, statistics from the training file, scoring) in a fresh process,
against EvalNER, the TMR authors' scripts (Tu & Lignos, github.com/jxtu/EvalNER), run as its
``nereval/demo.sh`` runs them when ``--reference PATH`` names a checkout of it (``nereval/`` and
``nerpy/``; a repository, not a package, so it is run only when given; ``--reference-python``:
an interpreter with its requirements, ``attrs immutabledict numpy regex quickvec``, default this
one).  EvalNER's job for the same numbers is 14 processes, each started in ``nereval/`` (its
scripts put ``../`` on ``sys.path``): ``ingest_conll.py`` for train and test (pickles),
``extract_oov.py any|tokens|type``, ``extract_tcm.py``, then ``score_oov.py`` for the overall
scores and the seen / unseen-any / unseen-tokens / unseen-type recalls and ``score_tcm.py`` for
TCM-all / TCM-seen / TCM-unseen, each re-reading test and predictions.  Its time is the sum over
the 14; ours is one ``tough-ner tmr --json``.  Paired rounds (``--runs``, default 3): one untimed
run of each side first (bytecode written, files cached; its outputs are compared: every recall
with its n, and the overall precision, must be what EvalNER prints), then rounds alternating
which side goes first; CPU time (user + system) of each process from ``common.run_process``;
ours starts as a regular install in a venv does (``common.clean_python``), EvalNER from its own.
Predictions (``--pred``): token, gold, prediction per line (default: the memorisation
baseline's on test.txt); both sides get test.txt's documents (its ``-DOCSTART-`` lines), as
EvalNER's scorer compares mentions document by document.
"""
from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from decimal import ROUND_HALF_UP, Context
from pathlib import Path

from seqeval.metrics import classification_report, f1_score

from tough_ner import Batch, TrainStats, read_conll
from tough_ner.baselines import memorization
from tough_ner.corpus import write_conll
from tough_ner.metrics.tmr import Tmr
from tough_ner.tmr import tmr

from common import DATA, Goal, NotRun, Run, best, clean_python, option, peak_mb, print_table, print_verdicts, \
    quick, run_process

REFERENCE = option("--reference")  # an EvalNER checkout
REFERENCE_PYTHON = option("--reference-python") or sys.executable
ROUNDS = 1 if quick() else int(option("--runs") or 3)
GOAL = Goal("<= 0.1x EvalNER", 0.1)

# Our keys, the n beside each, and the EvalNER run giving them: (script, -e pickle, -s strategy,
# --schema) as demo.sh spells them; the first row is the overall score (no subset).
SUBSETS = [("recall", "n_mentions", ("score_oov.py", None, None, None)),
           ("recall_seen", "n_seen", ("score_oov.py", "unseen-any.pkl", "seen", "any")),
           ("recall_unseen_any", "n_unseen_any", ("score_oov.py", "unseen-any.pkl", "unseen", "any")),
           ("recall_unseen_tokens", "n_unseen_tokens", ("score_oov.py", "unseen-tokens.pkl", "unseen", "tokens")),
           ("recall_unseen_type", "n_unseen_type", ("score_oov.py", "unseen-type.pkl", "unseen", "type")),
           ("recall_tcm_all", "n_tcm_all", ("score_tcm.py", "TCM.pkl", "ambi", None)),
           ("recall_tcm_seen", "n_tcm_seen", ("score_tcm.py", "TCM.pkl", "seen_ambi", None)),
           ("recall_tcm_unseen", "n_tcm_unseen", ("score_tcm.py", "TCM.pkl", "unseen_ambi", None))]


def nervaluate_peer(gold, predicted):
    """nervaluate's span scores on the same tags, or None where it is not installed."""
    try:
        from nervaluate import Evaluator
    except ImportError:
        return None
    types = sorted({tag[2:] for sentence in gold for tag in sentence if tag != "O"})
    return lambda: Evaluator(gold, predicted, tags=types, loader="list").evaluate()


def job_files(folder: Path, pred_path) -> tuple:
    """(gold, predictions) for EvalNER -- test.txt, and test.txt with its NER column replaced by
    the predictions -- and ours (token gold prediction), all with test.txt's -DOCSTART- lines:
    EvalNER compares mentions within a document by list scans, so one document of the whole
    test set would slow it down for nothing.  The prediction file must have test.txt's token
    lines, in order (token and gold tag checked; its own -DOCSTART- and blank lines are ignored)."""
    predicted = [fields for fields in map(str.split, Path(pred_path).read_text(encoding="utf8").splitlines())
                 if fields and fields[0] != "-DOCSTART-"]
    gold_lines = (DATA / "test.txt").read_text(encoding="utf8").splitlines()
    evalner, ours, k = [], [], 0
    for number, line in enumerate(gold_lines, 1):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            evalner.append(line)
            ours.append("-DOCSTART- O O" if fields else "")
            continue
        if k == len(predicted) or predicted[k][0] != fields[0] or predicted[k][1] != fields[-1]:
            raise ValueError(f"{pred_path}: token line {k + 1} does not hold {DATA / 'test.txt'} line {number}'s "
                             f"token and gold tag {fields[0]!r} {fields[-1]!r}")
        evalner.append(" ".join(fields[:-1] + [predicted[k][-1]]))
        ours.append(" ".join([fields[0], fields[-1], predicted[k][-1]]))
        k += 1
    if k != len(predicted):
        raise ValueError(f"{pred_path} has {len(predicted) - k} token lines more than {DATA / 'test.txt'}")
    paths = folder / "evalner-pred.txt", folder / "ours.txt"
    for path, lines in zip(paths, (evalner, ours)):
        path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return DATA / "test.txt", paths[0], paths[1]


def evalner_commands(folder: Path, gold: Path, pred: Path) -> list:
    """EvalNER's job as demo.sh runs it: 6 preparation processes, then one per score."""
    python, pickle = REFERENCE_PYTHON, lambda name: str(folder / name)
    commands = [[python, "ingest_conll.py", str(DATA / "train.txt"), "BIO", pickle("train.pkl")],
                [python, "ingest_conll.py", str(gold), "BIO", pickle("test.pkl")]]
    commands += [[python, "extract_oov.py", kind, pickle("train.pkl"), pickle("test.pkl"), pickle(f"unseen-{kind}.pkl")]
                 for kind in ("any", "tokens", "type")]
    commands.append([python, "extract_tcm.py", pickle("test.pkl"), pickle("unseen-tokens.pkl"), pickle("TCM.pkl")])
    for _, _, (script, subsets, strategy, schema) in SUBSETS:
        command = [python, script, str(gold), str(pred), "BIO"]
        command += ["-e", pickle(subsets), "-s", strategy] if subsets else []
        command += ["--schema", schema] if schema else []
        commands.append(command)
    return commands


def as_evalner_prints(rate: float) -> str:
    """A rate as EvalNER prints it: a percentage rounded half up to 4 significant digits, shown
    with 2 decimals (its ``_as_decimal``); an empty subset's rate, NaN here, is 0 there."""
    if math.isnan(rate):
        return "0.00"
    return f"{Context(rounding=ROUND_HALF_UP, prec=4).create_decimal_from_float(rate * 100):.2f}"


def compare(ours: dict, outputs: list) -> bool:
    """Print ours beside EvalNER's printed figures; True when every one is the same."""
    same_all = True
    print(f"{'tough-ner tmr vs EvalNER (rates in %)':<40} {'ours':>7} {'n':>6} {'EvalNER':>8} {'n':>6}  same")
    rows = [("precision", None, outputs[0])] + [(key, n_key, out) for (key, n_key, _), out in zip(SUBSETS, outputs)]
    for key, n_key, output in rows:
        found = re.search(r"Total Precision: (\S+)" if key == "precision" else r"Total Recall:\s+(\S+)", output)
        count = re.search(r"Total Count: (\d+)", output)
        theirs, their_n = (found.group(1) if found else "?"), (int(count.group(1)) if count else -1)
        mine, my_n = as_evalner_prints(ours[key]), ours[n_key] if n_key else None
        same = mine == theirs and (n_key is None or my_n == their_n)
        same_all &= same
        print(f"{key:<40} {mine:>7} {'' if my_n is None else my_n:>6} {theirs:>8} "
              f"{'' if n_key is None else their_n:>6}  {'yes' if same else 'NO'}")
    print(f"numbers identical to EvalNER's (8 recalls with their n, and precision, to the 2 decimals it prints): "
          f"{'yes' if same_all else 'NO'}")
    return same_all


def whole_jobs(pred_path) -> list:
    """Paired whole-process rounds of ``tough-ner tmr`` and (with --reference) EvalNER: rows."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached after the first run
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        gold, evalner_pred, ours_file = job_files(folder, pred_path)
        ours_command = [clean_python(), "-m", "tough_ner.cli", "tmr", "--train", str(DATA / "train.txt"),
                        "--test", str(ours_file), "--json"]
        sides = {"ours": lambda: run_process(ours_command, 1, env=env)}
        ours = json.loads(subprocess.run(ours_command, capture_output=True, text=True, check=True, env=env).stdout)
        if REFERENCE:
            nereval = Path(REFERENCE) / "nereval"
            commands = evalner_commands(folder, gold, evalner_pred)
            outputs = [subprocess.run(c, capture_output=True, text=True, check=True, cwd=nereval, env=env).stdout
                       for c in commands]  # untimed; the pickles stay for the timed rounds to rewrite
            compare(ours, outputs[6:])  # the scores: after the 6 preparation steps

            def evalner() -> Run:
                runs = [run_process(c, 1, cwd=nereval, env=env) for c in commands]
                preparation.append(sum(r.cpu for r in runs[:6]))
                return Run(sum(r.wall for r in runs), sum(r.cpu for r in runs), max(r.peak_mb for r in runs))
            sides["evalner"], preparation = evalner, []
        figures = {side: [] for side in sides}
        for r in range(ROUNDS):
            for side in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                figures[side].append(sides[side]())
    median = {side: Run(*(statistics.median(run[k] for run in runs) for k in range(3))) for side, runs in figures.items()}
    rows = [(f"whole job: tough-ner tmr command, CPU s (median of {ROUNDS} rounds)", median["ours"].cpu, ""),
            ("  its wall s", median["ours"].wall, ""),
            ("  its peak RSS (MB)", median["ours"].peak_mb, "")]
    if not REFERENCE:
        print("EvalNER: not run (pass --reference PATH, a checkout of jxtu/EvalNER; see the top of this file)")
        return rows + [("whole job: EvalNER, same numbers", None,
                        NotRun("a repository, not a package: pass --reference PATH", GOAL))]
    ratio = statistics.median(o.cpu / e.cpu for o, e in zip(figures["ours"], figures["evalner"]))
    return rows + [
        ("whole job: EvalNER (14 processes, as demo.sh), CPU s, median", median["evalner"].cpu, ""),
        ("  its wall s", median["evalner"].wall, ""),
        ("  its peak RSS (MB, largest process)", median["evalner"].peak_mb, ""),
        ("  of its CPU s: preparation (pickles, subsets; 6 processes)", statistics.median(preparation), ""),
        ("ratio CPU tough-ner tmr / EvalNER (median of paired rounds)", ratio, GOAL),
    ]


def main():
    stats = TrainStats.from_conll(DATA / "train.txt")
    test = read_conll(DATA / "test.txt")
    predictions = memorization(stats, test.tokens)
    t_core, _ = best(lambda: tmr(stats, Batch(test.tokens, test.tags, predictions)), 10)
    batch = Batch(test.tokens, test.tags, predictions)
    t_scoring, _ = best(lambda: tmr(stats, batch), 10)
    metric = Tmr(train=stats, keep_in_memory=True)
    inputs = dict(predictions=predictions, references=test.tags, tokens=test.tokens)
    t_metric, _ = best(lambda: metric.compute(**inputs), 10)
    t_seqeval, _ = best(lambda: classification_report(test.tags, predictions, digits=4), 5)
    t_f1, _ = best(lambda: f1_score(test.tags, predictions), 5)
    peak = peak_mb(lambda: tmr(stats, Batch(test.tokens, test.tags, predictions)))
    peer = nervaluate_peer(test.tags, predictions)
    with tempfile.TemporaryDirectory() as folder:
        pred_path = option("--pred")
        if not pred_path:
            pred_path = Path(folder) / "pred.txt"
            write_conll(pred_path, test.tokens, test.tags, predictions)
        print(f"whole jobs score {pred_path}")
        whole = whole_jobs(pred_path)
    rows = [
        ("core: tmr from tag lists (decode + subsets + scores)", t_core, Goal("<= 0.05 s", 0.05)),
        ("core: tmr on an already decoded batch", t_scoring, ""),
        ("core: seqeval f1_score (peer, run; the yardstick)", t_f1, ""),
        ("core: seqeval classification_report (peer, run)", t_seqeval, ""),
    ]
    if peer is not None:
        rows.append(("core: nervaluate Evaluator.evaluate (peer, run)", best(peer, 3)[0], ""))
    else:
        rows.append(("core: nervaluate Evaluator.evaluate (peer)", None, NotRun("nervaluate is not installed")))
    rows += [("ratio tmr / seqeval f1_score (x)", t_core / t_f1, Goal("<= 1 (cheaper than a span F1)", 1.0)),
             ("ratio tmr / seqeval classification_report (x)", t_core / t_seqeval, ""),
             ("evaluate Tmr.compute (keep_in_memory; bench_evaluate.py compares)", t_metric, ""),
             *whole,
             ("peak RSS of this process while tmr runs (MB)", peak, "")]
    print(f"{DATA}: test {sum(map(len, test.tokens))} tokens; seconds unless stated")
    print_table(rows, 66)
    print_verdicts()


if __name__ == "__main__":
    main()
