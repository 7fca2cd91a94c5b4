"""Time against the number of entity types: every per-type table is counted in one pass, so
10x the types should cost about 10x, not 100x (300,000 types took 185 s per Space request
when each type was a pass over all tokens).  seqeval's per-type report is the peer, measured
in the same run on the same input.

    python bench/bench_types.py
"""
from __future__ import annotations

from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, tmr
from tough_ner.demo import load_demo

from common import Goal, best, peak_mb, print_table, print_verdicts, quick

SIZES = (200, 2_000) if quick() else (2_000, 20_000)
GOAL = 15  # at most this factor for 10x the types: near-linear (sorting and dict work add a little)


def many_types(n):
    """n sentences, each with an entity of its own type; every third prediction takes the next type."""
    tokens = [[f"w{i}", "x", f"y{i % 7}"] for i in range(n)]
    gold = [[f"B-T{i}", f"I-T{i}", "O"] for i in range(n)]
    pred = [[f"B-T{(i + 1) % n if i % 3 == 0 else i}", "O" if i % 2 else f"I-T{i}", "O"] for i in range(n)]
    return tokens, gold, pred


def training() -> TrainStats:
    """The demo training data plus one sentence of type T0: the input checks want the gold types
    to share at least one type with training; training data with thousands of types is not what
    this measures."""
    train = load_demo()[0]
    return TrainStats.from_lists(train.tokens + [["w0", "x"]], train.tags + [["B-T0", "I-T0"]])


def main():
    rows, times = [], {}
    for n in SIZES:
        tokens, gold, pred = many_types(n)
        stats = training()
        measures = {
            "hardeval detailed (per type)": lambda: hardeval(stats, Batch(tokens, gold, pred), detailed=True),
            "tmr detailed (per type)": lambda: tmr(stats, Batch(tokens, gold, pred), detailed=True),
            "bucket_f1 detailed": lambda: bucket_f1(stats, Batch(tokens, gold, pred), detailed=True, bootstrap=0),
            "seqeval classification_report (peer)": lambda: classification_report(gold, pred, zero_division=0),
        }
        for name, work in measures.items():
            seconds, _ = best(work, 2)
            times[name, n] = seconds
            rows.append((f"{name}, {n:,} types", seconds, ""))
        rows.append((f"  peak RSS of this process (MB), bucket_f1 detailed, {n:,} types", peak_mb(measures["bucket_f1 detailed"]), ""))
    # The bootstrap intervals (tough_ner.uncertainty) keep dense per-sentence counts per bucket:
    # sentences x buckets, shown here at the smaller size only (the Spaces allow 1,000 types).
    tokens, gold, pred = many_types(small := SIZES[0])
    stats = training()
    seconds, _ = best(lambda: bucket_f1(stats, Batch(tokens, gold, pred), detailed=True, bootstrap=200), 1)
    rows.append((f"bucket_f1 detailed + 200 bootstrap, {small:,} types", seconds, "(dense: sentences x buckets)"))
    large = SIZES[1]
    for name in ("hardeval detailed (per type)", "tmr detailed (per type)", "bucket_f1 detailed",
                 "seqeval classification_report (peer)"):
        factor = times[name, large] / times[name, small]
        goal = "" if "peer" in name else Goal(f"<= {GOAL}x", GOAL)
        rows.append((f"{name}: cost of {large // small}x the types (factor)", factor, goal))
    print_table(rows, 66)
    print_verdicts()


if __name__ == "__main__":
    main()
