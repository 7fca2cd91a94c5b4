"""TMR benchmark on CoNLL-2003 train -> test, with seqeval and nervaluate measured in the same run.

    python bench/bench_tmr.py [path/to/conll2003] [--quick]

Compared, core vs core (lists in memory; training statistics built before): ``tmr`` from tag
lists (validation, decoding, subsets, scores) against seqeval's ``f1_score`` (the fastest span
F1 there is, the yardstick) and ``classification_report``, and nervaluate (the ``test`` extra)
where installed.  Whole job vs whole job: the ``tough-ner tmr`` command from the CoNLL files
(interpreter start, imports, statistics from the training file, scoring) in a fresh process.
EvalNER, the TMR authors' scripts (Tu & Lignos), is a repository, not an installable package:
it is not run, and the goal against it is not judged.
"""
from __future__ import annotations

import sys

from seqeval.metrics import classification_report, f1_score

from tough_ner import Batch, TrainStats, read_conll
from tough_ner.baselines import memorization
from tough_ner.metrics.tmr import Tmr
from tough_ner.tmr import tmr

from common import DATA, Goal, NotRun, Quoted, best, peak_mb, print_table, print_verdicts, run_process

EVALNER = NotRun("EvalNER (Tu & Lignos's TMR scripts) is a repository, not an installable package: not run",
                 Goal("<= 0.1x EvalNER", 0.1))


def nervaluate_peer(gold, predicted):
    """nervaluate's span scores on the same tags, or None where it is not installed."""
    try:
        from nervaluate import Evaluator
    except ImportError:
        return None
    types = sorted({tag[2:] for sentence in gold for tag in sentence if tag != "O"})
    return lambda: Evaluator(gold, predicted, tags=types, loader="list").evaluate()


def whole_job(test, predictions):
    """The ``tough-ner tmr`` command on the training file and a prediction file (token gold pred)."""
    import tempfile
    from pathlib import Path

    from tough_ner.corpus import write_conll

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pred.txt"
        write_conll(path, test.tokens, test.tags, predictions)
        return run_process([sys.executable, "-m", "tough_ner.cli", "tmr", "--train", str(DATA / "train.txt"),
                            "--test", str(path)])


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
    whole = whole_job(test, predictions)
    rows = [
        ("core: tmr from tag lists (decode + subsets + scores)", t_core, Goal("<= 0.05 s", 0.05)),
        ("  EvalNER, same task", None, EVALNER),
        ("  the authors' scripts, as published", 3.0, Quoted("3-6 s")),
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
             ("whole job: tough-ner tmr command from the files, wall", whole.wall, ""),
             ("  its CPU time (user + system)", whole.cpu, ""),
             ("  its peak RSS (MB)", whole.peak_mb, ""),
             ("peak RSS of this process while tmr runs (MB)", peak, "")]
    print(f"{DATA}: test {sum(map(len, test.tokens))} tokens; seconds unless stated")
    print_table(rows, 66)
    print_verdicts()


if __name__ == "__main__":
    main()
