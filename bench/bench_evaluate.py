"""Through ``evaluate``: each metric's ``compute()`` beside a do-nothing evaluate module with the
same features, on the same inputs, in the same run (CoNLL-2003 test; NRB: 10,000 synthetic
sentences).

    python bench/bench_evaluate.py [CONLL_DIR] [--quick]

Compared: ``Metric.compute(predictions=, references=, tokens=)`` of a loaded metric (training
statistics built before, as at load time) against ``DoNothing.compute`` on the same lists --
evaluate's own cost of taking the inputs (its Arrow round trip) -- both in memory
(``keep_in_memory=True``) and with evaluate's cache files.  Goal: at most 1.3x the do-nothing
module.  Also shown: the same metric forced through evaluate's Arrow path (what a compute
cost before the direct path), and the method called on its own.  CPU times, paired runs.
"""
from __future__ import annotations

import tempfile

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, read_conll, tmr
from tough_ner.attacks import entity_attack
from tough_ner.baselines import memorization
from tough_ner.metrics.base import ToughMetric
from tough_ner.nrb import nrb
from tough_ner.register import metric_class
from tough_ner.rockner import rockner

from bench_nrb import synthetic
from common import DATA, DoNothing, Goal, paired, print_table, print_verdicts, quick

GOAL = Goal("<= 1.3x do-nothing", 1.3)


def workloads(stats, test):
    """name -> (load options, compute inputs, the method on its own)."""
    predictions = memorization(stats, test.tokens)
    tags = dict(predictions=predictions, references=test.tags, tokens=test.tokens)
    attacked = entity_attack(test, ratio=1.0, seed=0, train=stats).to_dict()
    attacked_pred = memorization(stats, attacked["tokens"])
    both = dict(predictions=predictions + attacked_pred, references=test.tags + attacked["ner_tags"],
                tokens=test.tokens + attacked["tokens"], version=["original"] * len(test) + ["attacked"] * len(attacked_pred))
    half = 100 if quick() else 5_000
    nrb_tokens, nrb_gold, nrb_pred = synthetic(2 * half)
    portions = ["nrb"] * half + ["wts"] * half
    nrb_inputs = dict(predictions=nrb_pred, references=nrb_gold, tokens=nrb_tokens, portion=portions)
    return {
        "hardeval": ({}, tags, lambda: hardeval(stats, Batch(test.tokens, test.tags, predictions))),
        "tmr": ({}, tags, lambda: tmr(stats, Batch(test.tokens, test.tags, predictions))),
        "bucket_f1": ({}, tags, lambda: bucket_f1(stats, Batch(test.tokens, test.tags, predictions))),
        "rockner": ({}, both, lambda: rockner(Batch(test.tokens, test.tags, predictions),
                                              Batch(attacked["tokens"], attacked["ner_tags"], attacked_pred))),
        "nrb": ({"type_map": "conll"}, nrb_inputs, lambda: nrb(Batch(nrb_tokens, nrb_gold, nrb_pred), "conll", portions)),
    }


class ArrowPath:
    """The same metric with the direct path switched off: evaluate's Arrow round trip."""

    def __init__(self, metric):
        self.metric = metric

    def compute(self, **inputs):
        direct = ToughMetric._direct
        ToughMetric._direct = lambda self, columns: False
        try:
            return self.metric.compute(**inputs)
        finally:
            ToughMetric._direct = direct


def main():
    stats = TrainStats.from_conll(DATA / "train.txt", keep_text=True)
    test = read_conll(DATA / "test.txt")
    stats.token_totals, stats.mention_text_counts  # noqa: B018 -- built with the statistics, as at load time
    rows = []
    repeat = 7
    with tempfile.TemporaryDirectory() as cache:
        for name, (options, inputs, alone) in workloads(stats, test).items():
            extra = [key for key in inputs if key not in ("predictions", "references", "tokens")]
            in_memory = metric_class(name)(train=stats, keep_in_memory=True, **options)
            on_disk = metric_class(name)(train=stats, cache_dir=cache, **options)
            nothing_memory = DoNothing(extra, keep_in_memory=True)
            nothing_disk = DoNothing(extra, cache_dir=cache)
            times = paired({
                "metric": lambda: in_memory.compute(**inputs),
                "nothing": lambda: nothing_memory.compute(**inputs),
                "metric disk": lambda: on_disk.compute(**inputs),
                "nothing disk": lambda: nothing_disk.compute(**inputs),
                "arrow": lambda: ArrowPath(in_memory).compute(**inputs),
                "alone": alone,
            }, repeat)
            rows += [
                (f"{name}: Metric.compute, keep_in_memory=True", times["metric"], ""),
                ("  do-nothing evaluate module, same inputs", times["nothing"], "evaluate's own cost"),
                ("  ratio compute / do-nothing (x)", times["metric"] / times["nothing"], GOAL),
                (f"{name}: Metric.compute, evaluate's cache files", times["metric disk"], ""),
                ("  ratio compute / do-nothing with cache files (x)", times["metric disk"] / times["nothing disk"],
                 GOAL),
                (f"  {name} through evaluate's Arrow path (before)", times["arrow"], ""),
                (f"  {name} called on its own (Batch + method)", times["alone"], ""),
            ]
    print(f"{DATA}: test {sum(map(len, test.tokens))} tokens (rockner: test + its entity attack; nrb: "
          f"synthetic sentences); best CPU seconds of {1 if quick() else repeat} paired runs")
    print_table(rows, 62)
    print_verdicts()


if __name__ == "__main__":
    main()
