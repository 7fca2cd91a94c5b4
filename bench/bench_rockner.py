"""RockNER benchmark on CoNLL-2003 test: the entity-level attack and the ``rockner`` scores.

    python bench/bench_rockner.py [CONLL_DIR] [--quick]

RockNER's own generator needs Wikidata, BLINK and a GPU model and has no offline entry point,
so the peers are the standard tools for the same outputs, run here: building the attacked set
with ``datasets.Dataset.from_dict`` and scoring both sets with seqeval.
"""
from __future__ import annotations

import datasets
from seqeval.metrics import classification_report

from tough_ner import Batch, TrainStats, read_conll
from tough_ner.attacks import entity_attack
from tough_ner.baselines import memorization
from tough_ner.rockner import rockner

from common import DATA, Goal, best, peak_mb, print_table, print_verdicts


def main():
    stats = TrainStats.from_conll(DATA / "train.txt")
    test = read_conll(DATA / "test.txt")
    stats.mention_text_counts  # noqa: B018 -- built once with the stats, not per attack
    t_attack, attacked = best(lambda: entity_attack(test, ratio=1.0, seed=0, train=stats), 5)
    n_replaced = sum(map(len, attacked["replacements"]))
    attacked_dataset, attacked = attacked, attacked.to_dict()  # plain lists: a Column re-reads Arrow per row
    t_attack_02, _ = best(lambda: entity_attack(test, ratio=0.2, seed=0, train=stats), 5)
    rows = {"tokens": attacked["tokens"], "ner_tags": attacked["ner_tags"], "replacements": attacked["replacements"]}
    t_from_dict, _ = best(lambda: datasets.Dataset.from_dict(rows, features=attacked_dataset.features), 3)
    original = Batch(test.tokens, test.tags, memorization(stats, test.tokens))
    attacked_pred = memorization(stats, attacked["tokens"])
    t_score, result = best(lambda: rockner(Batch(test.tokens, test.tags, original.predictions),
                                           Batch(attacked["tokens"], attacked["ner_tags"], attacked_pred)), 5)
    t_detailed, _ = best(lambda: rockner(Batch(test.tokens, test.tags, original.predictions),
                                         Batch(attacked["tokens"], attacked["ner_tags"], attacked_pred), True), 5)
    t_seqeval, _ = best(lambda: (classification_report(test.tags, original.predictions),
                                 classification_report(attacked["ner_tags"], attacked_pred)), 3)
    peak = peak_mb(lambda: entity_attack(test, ratio=1.0, seed=0, train=stats))
    print(f"{DATA}: test {len(test)} sentences, {n_replaced} entities replaced at ratio 1.0; "
          f"memorization baseline F1 {result['f1_original']:.4f} -> {result['f1_attacked']:.4f}")
    print_table([
        ("entity attack, ratio 1.0 (-> Dataset with records)", t_attack, Goal("<= 0.5 s", 0.5)),
        ("entity attack, ratio 0.2", t_attack_02, ""),
        ("datasets.Dataset.from_dict of the same output (peer, run)", t_from_dict, ""),
        ("rockner: both F1s + error analysis, from tag lists", t_score, Goal("<= 0.1 s", 0.1)),
        ("rockner detailed (+ confusion tables)", t_detailed, ""),
        ("seqeval classification_report on both sets (peer, run)", t_seqeval, ""),
        ("peak memory, entity attack (MB)", peak, ""),
    ])
    print_verdicts()


if __name__ == "__main__":
    main()
