"""HardEval benchmark on CoNLL-2003 train -> test, with seqeval measured in the same run.

    python bench/bench_hardeval.py [path/to/conll2003]

Prints times (best of N) and peak memory; goals from the issue are shown beside them.
"""
from __future__ import annotations

from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, hardeval, read_conll
from tough_ner.baselines import memorization
from tough_ner.metrics.hardeval import Hardeval

from common import DATA, DoNothing, best, peak_mb


def main():
    train_path, test_path = DATA / "train.txt", DATA / "test.txt"
    train = read_conll(train_path)
    test = read_conll(test_path)
    t_read_build, stats = best(lambda: TrainStats.from_conll(train_path))
    t_build, _ = best(lambda: TrainStats.from_corpus(train))
    predictions = memorization(stats, test.tokens)
    t_core, _ = best(lambda: hardeval(stats, Batch(test.tokens, test.tags, predictions)), 10)
    metric = Hardeval(train=stats, keep_in_memory=True)
    inputs = dict(predictions=predictions, references=test.tags, tokens=test.tokens)
    t_metric, _ = best(lambda: metric.compute(**inputs), 10)
    nothing = DoNothing(keep_in_memory=True)
    t_nothing, _ = best(lambda: nothing.compute(**inputs), 10)
    t_seqeval, _ = best(lambda: classification_report(test.tags, predictions, digits=4), 5)

    # 10x the training data (about 2M tokens): stats time and peak memory; linearity check at 5x.
    big_tokens, big_tags = train.tokens * 10, train.tags * 10
    t_big, _ = best(lambda: TrainStats.from_lists(big_tokens, big_tags), 3)
    t_half, _ = best(lambda: TrainStats.from_lists(big_tokens[: len(big_tokens) // 2], big_tags[: len(big_tags) // 2]), 3)
    peak_big = peak_mb(lambda: TrainStats.from_lists(big_tokens, big_tags))
    peak_test = peak_mb(lambda: metric.compute(**inputs))

    rows = [
        ("TrainStats from CoNLL train file (read + build)", t_read_build, "<= 0.3 s"),
        ("TrainStats from lists (build only)", t_build, ""),
        ("hardeval core on CoNLL test", t_core, "<= 0.05 s (reference script ~0.4 s)"),
        ("evaluate Hardeval.compute (keep_in_memory)", t_metric, f"<= 0.35x seqeval = {0.35 * t_seqeval:.3f} s"),
        ("evaluate do-nothing metric, same inputs", t_nothing, "evaluate's own overhead"),
        ("seqeval classification_report (peer)", t_seqeval, ""),
        ("TrainStats of 10x train (2.0M tokens)", t_big, "<= 3 s"),
        ("TrainStats of 5x train (1.0M tokens)", t_half, "linear: 10x/5x ~ 2"),
    ]
    print(f"{'measure':<50} {'seconds':>9}  goal")
    for name, seconds, goal in rows:
        print(f"{name:<50} {seconds:>9.4f}  {goal}")
    print(f"{'ratio evaluate Hardeval / seqeval':<50} {t_metric / t_seqeval:>9.3f}  <= 0.35")
    print(f"{'ratio do-nothing / seqeval':<50} {t_nothing / t_seqeval:>9.3f}  ~0.15")
    print(f"{'ratio seqeval / hardeval core':<50} {t_seqeval / t_core:>9.1f}x")
    print(f"{'scaling 10x / 5x':<50} {t_big / t_half:>9.2f}")
    print(f"{'peak memory, stats of 10x train (MB)':<50} {peak_big:>9.1f}  <= 300 MB")
    print(f"{'peak memory, Hardeval.compute on test (MB)':<50} {peak_test:>9.1f}")


if __name__ == "__main__":
    main()
