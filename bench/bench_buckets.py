"""bucket_f1 benchmark on CoNLL-2003 train -> test, with seqeval measured in the same run.

    python bench/bench_buckets.py [path/to/conll2003] [--quick]

The last section times bucket_f1 with 1x and 50x training statistics (vocabulary grown by
renaming tokens per copy) and compares shareable with full statistics files.

Quoted peers (quoted, not run: neither is an installable package): the authors' tool needs
about 470 s for its training statistics and about 4 s per system; its successor about 0.3 s
per system.  seqeval runs in the same run.
"""
from __future__ import annotations

from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, bucket_f1, read_conll
from tough_ner.baselines import memorization
from tough_ner.metrics.bucket_f1 import BucketF1

from common import DATA, Goal, Quoted, best, peak_mb, print_table, print_verdicts, quick


def fresh_stats(train):
    """Stats with every cache bucket_f1 uses filled (what eCon, eFre, tFre need)."""
    stats = TrainStats.from_corpus(train)
    stats.token_totals, stats.mention_text_counts  # noqa: B018 -- fill the caches
    return stats


def main():
    train = read_conll(DATA / "train.txt")
    test = read_conll(DATA / "test.txt")
    t_read_stats, stats = best(lambda: fresh_stats(read_conll(DATA / "train.txt")), 5)
    t_stats, stats = best(lambda: fresh_stats(train), 5)
    predictions = memorization(stats, test.tokens)
    batch = lambda: Batch(test.tokens, test.tags, predictions)  # noqa: E731 -- decoding is part of the cost
    t_flat, _ = best(lambda: bucket_f1(stats, batch()), 10)
    t_detailed, _ = best(lambda: bucket_f1(stats, batch(), detailed=True, bootstrap=0), 10)
    t_bootstrap, _ = best(lambda: bucket_f1(stats, batch(), detailed=True, bootstrap=1000), 5)
    spans = [s[a:b] for s, sentence_spans in zip(test.tokens, Batch(test.tokens, test.tags).gold_spans)
             for a, b, _ in sentence_spans]
    t_occurrences, _ = best(lambda: stats.occurrences(spans), 10)
    metric = BucketF1(train=stats, keep_in_memory=True)
    inputs = dict(predictions=predictions, references=test.tags, tokens=test.tokens)
    t_metric, _ = best(lambda: metric.compute(**inputs), 5)
    t_seqeval, _ = best(lambda: classification_report(test.tags, predictions, digits=4), 5)
    peak = peak_mb(lambda: bucket_f1(stats, batch(), detailed=True, bootstrap=1000))
    print(f"{DATA}: test {sum(map(len, test.tokens))} tokens; seconds unless stated")
    print_table([
        ("stats from the CoNLL train file (read + build + caches)", t_read_stats, Goal("<= 1 s", 1.0)),
        ("  the authors' tool, its training statistics", 470.0, Quoted("~470 s")),
        ("stats from lists (build + caches)", t_stats, ""),
        ("bucket_f1, all 9 attributes, flat keys", t_flat, Goal("<= 0.2 s", 0.2)),
        ("  the authors' tool, per system", 4.0, Quoted("~4 s")),
        ("  its successor, per system", 0.3, Quoted("~0.3 s")),
        ("bucket_f1, detailed tables and diagnostics, no bootstrap", t_detailed, ""),
        ("bucket_f1, detailed + 1000 bootstrap resamples", t_bootstrap, Goal("well under 1 s (<= 1 s)", 1.0)),
        ("  of which: occurrence counts of the gold test spans", t_occurrences, ""),
        ("evaluate BucketF1.compute (keep_in_memory)", t_metric, ""),
        ("seqeval classification_report (peer, run)", t_seqeval, ""),
        ("ratio seqeval / bucket_f1 flat (x)", t_seqeval / t_flat, ""),
        ("peak memory, detailed + bootstrap (MB)", peak, ""),
    ])
    training_size_and_shareable(train, test, predictions)
    print_verdicts()


# ---- training-size independence and shareable statistics (issues 21 and 19) -----------------
def training_size_and_shareable(train, test, predictions, copies: int = 50):
    """bucket_f1 with 1x and ``copies``x training statistics, the vocabulary grown by renaming
    every token per copy (so nothing is shared between copies); times paired (1x, then Kx,
    alternately) after each statistics' one-off caches; then shareable vs full stats files."""
    import io
    import resource

    copies = 3 if quick() else copies
    tokens = train.tokens + [[f"{t}@{k}" for t in s] for k in range(1, copies) for s in train.tokens]
    small, large = TrainStats.from_corpus(train), TrainStats.from_lists(tokens, train.tags * copies)
    del tokens
    t_table_small, _ = best(lambda: TrainStats.from_bytes(small.to_bytes())._mention_occurrences, 1)
    t_table_large, _ = best(lambda: large._mention_occurrences, 1)
    times = {id(small): [], id(large): []}
    for _ in range(1 if quick() else 7):
        for stats in (small, large):
            times[id(stats)].append(best(lambda: bucket_f1(stats, Batch(test.tokens, test.tags, predictions)), 1)[0])
    t_small, t_large = min(times[id(small)]), min(times[id(large)])
    t_batch, batch = best(lambda: Batch(test.tokens, test.tags, predictions), 10)
    t_core = min(best(lambda: bucket_f1(small, Batch(test.tokens, test.tags, predictions)), 1)[0] - t_batch
                 for _ in range(1 if quick() else 7))
    full, shared = small.to_bytes(), small.to_bytes(shareable=True)
    t_load_full, _ = best(lambda: TrainStats.from_bytes(full), 5)
    t_load_shared, _ = best(lambda: TrainStats.from_bytes(shared), 5)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\ntraining statistics: 1x = {small.n_tokens} tokens, {len(small.vocab)} types; {copies}x (renamed "
          f"copies) = {large.n_tokens} tokens, {len(large.vocab)} types; whole-process peak RSS {peak:.0f} MB")
    print_table([
        ("eCon occurrence table, built once per stats, 1x", t_table_small, ""),
        (f"eCon occurrence table, built once per stats, {copies}x", t_table_large, ""),
        ("bucket_f1 flat keys (incl. Batch), 1x training stats", t_small, ""),
        (f"bucket_f1 flat keys (incl. Batch), {copies}x training stats", t_large, ""),
        (f"ratio {copies}x / 1x training (x)", t_large / t_small, Goal("<= 1.5x", 1.5)),
        ("Batch construction (test set)", t_batch, ""),
        ("ratio bucket_f1 core / its Batch (x)", t_core / t_batch, Goal("<= 3x", 3.0)),
        ("stats file size, full (MB)", len(full) / 2**20, ""),
        ("stats file size, shareable (MB)", len(shared) / 2**20, ""),
        ("load, full stats file", t_load_full, ""),
        ("load, shareable stats file", t_load_shared, ""),
    ])


if __name__ == "__main__":
    main()
