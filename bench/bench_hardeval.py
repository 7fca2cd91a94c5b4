"""HardEval benchmark on CoNLL-2003 train -> test, with seqeval measured in the same run.

    python bench/bench_hardeval.py [path/to/conll2003] [--quick]

Prints times (best of N) and peak memory, each goal judged MET / MISSED on this run.  The
reference HardEval script is a repository script, not an installable package: its time is
quoted, not run.
"""
from __future__ import annotations

from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, hardeval, read_conll
from tough_ner.baselines import memorization
from tough_ner.metrics.hardeval import Hardeval

from common import DATA, DoNothing, Goal, Quoted, best, peak_mb, print_table, print_verdicts


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

    n_tokens = sum(map(len, train.tokens))
    print(f"{DATA}: train {n_tokens} tokens, test {sum(map(len, test.tokens))} tokens; seconds unless stated")
    print_table([
        ("TrainStats from CoNLL train file (read + build)", t_read_build, Goal("<= 0.3 s", 0.3)),
        ("TrainStats from lists (build only)", t_build, ""),
        ("hardeval core on CoNLL test", t_core, Goal("<= 0.05 s", 0.05)),
        ("  reference HardEval script, same task", 0.4, Quoted("~0.4 s")),
        ("evaluate Hardeval.compute (keep_in_memory)", t_metric, ""),
        ("evaluate do-nothing metric, same inputs", t_nothing, "evaluate's own overhead"),
        ("seqeval classification_report (peer, run)", t_seqeval, ""),
        ("ratio evaluate Hardeval / seqeval", t_metric / t_seqeval, Goal("<= 0.35", 0.35)),
        ("ratio do-nothing / seqeval", t_nothing / t_seqeval, ""),
        ("ratio seqeval / hardeval core (x)", t_seqeval / t_core, ""),
        (f"TrainStats of 10x train ({10 * n_tokens / 1e6:.1f}M tokens)", t_big, Goal("<= 3 s", 3.0)),
        (f"TrainStats of 5x train ({5 * n_tokens / 1e6:.1f}M tokens)", t_half, ""),
        ("scaling 10x / 5x (linear: ~2)", t_big / t_half, Goal("<= 2.5", 2.5)),
        ("peak memory, stats of 10x train (MB)", peak_big, Goal("<= 300 MB", 300)),
        ("peak memory, Hardeval.compute on test (MB)", peak_test, ""),
    ], 50)
    print_verdicts()


if __name__ == "__main__":
    main()
