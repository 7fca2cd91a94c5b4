"""TMR benchmark on CoNLL-2003 train -> test, with seqeval measured in the same run.

    python bench/bench_tmr.py [path/to/conll2003]
"""
from __future__ import annotations

from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, read_conll
from tough_ner.baselines import memorization
from tough_ner.metrics.tmr import Tmr
from tough_ner.tmr import tmr

from common import DATA, best, peak_mb, print_table


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
    print_table([
        ("tmr compute on CoNLL test (decode + subsets + scores)", t_core, "<= 0.05 s (reference 3-6 s)"),
        ("tmr on an already decoded batch", t_scoring, ""),
        ("evaluate Tmr.compute (keep_in_memory)", t_metric, ""),
        ("seqeval classification_report (peer)", t_seqeval, ""),
    ], 50)
    print(f"{'ratio seqeval / tmr':<50} {t_seqeval / t_core:>9.1f}x")
    print(f"{'peak memory, tmr on test (MB)':<50} {peak:>9.1f}")


if __name__ == "__main__":
    main()
