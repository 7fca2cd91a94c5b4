"""TMR benchmark on CoNLL-2003 train -> test, with seqeval measured in the same run.

    python bench/bench_tmr.py [path/to/conll2003] [--quick]

The TMR authors' scripts are not an installable package: their time is quoted, not run.
nervaluate (span P/R/F1, the ``test`` extra) runs as a peer where it is installed.
"""
from __future__ import annotations

from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, read_conll
from tough_ner.baselines import memorization
from tough_ner.metrics.tmr import Tmr
from tough_ner.tmr import tmr

from common import DATA, Goal, Quoted, best, peak_mb, print_table, print_verdicts


def nervaluate_peer(gold, predicted):
    """nervaluate's span scores on the same tags, or None where it is not installed."""
    try:
        from nervaluate import Evaluator
    except ImportError:
        return None
    types = sorted({tag[2:] for sentence in gold for tag in sentence if tag != "O"})
    return lambda: Evaluator(gold, predicted, tags=types, loader="list").evaluate()


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
    peak = peak_mb(lambda: tmr(stats, Batch(test.tokens, test.tags, predictions)))
    peer = nervaluate_peer(test.tags, predictions)
    rows = [
        ("tmr compute on CoNLL test (decode + subsets + scores)", t_core, Goal("<= 0.05 s", 0.05)),
        ("  the authors' scripts, same task", 3.0, Quoted("3-6 s")),
        ("tmr on an already decoded batch", t_scoring, ""),
        ("evaluate Tmr.compute (keep_in_memory)", t_metric, ""),
        ("seqeval classification_report (peer, run)", t_seqeval, ""),
    ]
    if peer is not None:
        rows.append(("nervaluate Evaluator.evaluate (peer, run)", best(peer, 3)[0], ""))
    else:
        print("nervaluate not installed: that peer was not run")
    rows += [("ratio seqeval / tmr (x)", t_seqeval / t_core, ""),
             ("peak memory, tmr on test (MB)", peak, "")]
    print(f"{DATA}: test {sum(map(len, test.tokens))} tokens; seconds unless stated")
    print_table(rows, 54)
    print_verdicts()


if __name__ == "__main__":
    main()
