"""NRB benchmark: scoring 10,000 sentences and loading a 5,000-sentence .conll file.

    python bench/bench_nrb.py [--quick]

The sentences are synthetic (NRB-like: about 25 tokens, one single-word target); the
benchmark itself is distributed by its authors and is not bundled.  Core vs core: ``nrb`` from
tag lists against seqeval's ``f1_score`` (the yardstick) and ``classification_report`` on the
same tags; NRB's own scripts are not an installable package and are not run.
"""
from __future__ import annotations

import random
import tempfile
from pathlib import Path

from seqeval.metrics import classification_report, f1_score

from tough_ner import Batch
from tough_ner.metrics.nrb import Nrb
from tough_ner.nrb import nrb, read_nrb

from common import Goal, best, peak_mb, print_table, print_verdicts, quick

TYPES = ("PERSON", "LOCATION", "ORGANIZATION")
CONLL_TYPES = ("PER", "LOC", "ORG", "MISC")


def synthetic(n_sentences: int, seed: int = 0):
    rng = random.Random(seed)
    tokens, gold, predicted = [], [], []
    for _ in range(n_sentences):
        length = rng.randint(12, 38)
        words = [f"w{rng.randrange(5000)}" for _ in range(length)]
        where = rng.randrange(length)
        tags = ["O"] * length
        tags[where] = "B-" + rng.choice(TYPES)
        guess = ["O"] * length
        if rng.random() < 0.85:
            guess[where] = "B-" + rng.choice(CONLL_TYPES)
        if rng.random() < 0.3:
            guess[rng.randrange(length)] = "B-ORG"
        tokens.append(words)
        gold.append(tags)
        predicted.append(guess)
    return tokens, gold, predicted


def main():
    half = 100 if quick() else 5_000
    tokens, gold, predicted = synthetic(2 * half)
    portion = ["nrb"] * half + ["wts"] * half
    t_total, _ = best(lambda: nrb(Batch(tokens, gold, predicted), "conll", portion), 10)
    batch = Batch(tokens, gold, predicted)
    t_scoring, _ = best(lambda: nrb(batch, "conll", portion), 10)
    t_batch, _ = best(lambda: Batch(tokens, gold, predicted), 10)
    metric = Nrb(type_map="conll", keep_in_memory=True)
    t_metric, _ = best(lambda: metric.compute(predictions=predicted, references=gold, tokens=tokens), 5)
    t_seqeval, _ = best(lambda: classification_report(gold, predicted), 3)
    t_f1, _ = best(lambda: f1_score(gold, predicted), 3)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "en.nrb.conll"
        with open(path, "w", encoding="utf-8") as out:
            for words, tags in zip(tokens[:half], gold[:half]):
                out.writelines(f"{w} {t}\n" for w, t in zip(words, tags))
                out.write("\n")
        t_load, data = best(lambda: read_nrb(path), 5)
        assert len(data) == half
    peak = peak_mb(lambda: nrb(Batch(tokens, gold, predicted), "conll", portion))
    print(f"{2 * half:,} synthetic sentences of about 25 tokens; seconds unless stated")
    print_table([
        ("nrb, NRB + WTS, from tag lists (validate + decode + score)", t_total, Goal("<= 0.05 s", 0.05)),
        ("  of which: Batch (validate + decode)", t_batch, ""),
        ("  of which: scoring a decoded batch", t_scoring, ""),
        ("evaluate Nrb.compute (keep_in_memory)", t_metric, ""),
        ("seqeval f1_score on the same tags (peer, run; the yardstick)", t_f1, ""),
        ("seqeval classification_report on the same tags (peer, run)", t_seqeval, ""),
        ("ratio nrb from tag lists / seqeval f1_score (x)", t_total / t_f1, ""),
        (f"read_nrb of a {half:,}-sentence .conll into a Dataset", t_load, Goal("<= 0.2 s", 0.2)),
        ("peak RSS of this process, nrb from tag lists (MB)", peak, ""),
    ])
    print_verdicts()


if __name__ == "__main__":
    main()
