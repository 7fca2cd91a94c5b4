"""Trainer integration benchmark: the per-evaluation cost of ``robust_compute_metrics`` on
CoNLL-2003 test size, beside an evaluate module computing what the Hub ``seqeval`` does.

    python bench/bench_trainer.py [CONLL_DIR] [--quick]

The model's forward passes are not timed: the logits are made up (their argmax is the
memorization baseline's tags) over realistic sub-token layouts (long words split in two,
[CLS]/[SEP] around, padding to the longest sentence).  evaluate.load("seqeval") needs the Hub,
so the peer is an evaluate module running the Hub script's computation (seqeval's
classification_report + accuracy) through evaluate's Arrow cache, as the Hub module does.
"""
from __future__ import annotations

import datasets
import evaluate
import numpy as np
from seqeval.metrics import accuracy_score, classification_report
from transformers import EvalPrediction

from tough_ner import TrainStats, read_conll
from tough_ner.baselines import memorization
from tough_ner.trainer import robust_compute_metrics

from common import DATA, Goal, Quoted, best, peak_mb, print_table, print_verdicts


class HubSeqeval(evaluate.Metric):
    """The Hub seqeval module's computation (default mode), as a local evaluate module."""

    def _info(self):
        strings = datasets.List(datasets.Value("string"))
        return evaluate.MetricInfo(description="", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": strings, "references": strings}))

    def _compute(self, predictions, references):
        report = classification_report(y_true=references, y_pred=predictions, output_dict=True, zero_division="warn")
        report.pop("macro avg")
        report.pop("weighted avg")
        overall = report.pop("micro avg")
        scores = {name: {"precision": s["precision"], "recall": s["recall"], "f1": s["f1-score"],
                         "number": s["support"]} for name, s in report.items()}
        scores.update({"overall_precision": overall["precision"], "overall_recall": overall["recall"],
                       "overall_f1": overall["f1-score"], "overall_accuracy": accuracy_score(references, predictions)})
        return scores


def layout(stats, test, label_list):
    """A tokenized-like eval dataset (tokens, word_ids) and padded logits / labels."""
    label_ids = {name: i for i, name in enumerate(label_list)}
    predicted = memorization(stats, test.tokens)
    word_ids = [[None] + [w for w, word in enumerate(words) for _ in range(1 + (len(word) > 6))] + [None]
                for words in test.tokens]
    width = max(map(len, word_ids))
    logits = np.full((len(test), width, len(label_list)), -100.0, dtype=np.float32)
    labels = np.full((len(test), width), -100, dtype=np.int64)
    for row, ids in enumerate(word_ids):
        logits[row, :len(ids)] = 0.0
        for position, w in enumerate(ids):
            if w is not None and ids[position - 1] != w:
                labels[row, position] = label_ids[test.tags[row][w]]
            logits[row, position, label_ids[predicted[row][w]] if w is not None else 0] = 1.0
    dataset = datasets.Dataset.from_dict({"tokens": test.tokens, "word_ids": word_ids})
    return dataset, EvalPrediction(predictions=logits, label_ids=labels), predicted


def main():
    stats = TrainStats.from_conll(DATA / "train.txt")
    test = read_conll(DATA / "test.txt")
    label_list = ["O"] + [f"{p}-{t}" for t in stats.labels[1:] for p in ("B", "I")]
    dataset, prediction, predicted = layout(stats, test, label_list)
    t_build, compute = best(lambda: robust_compute_metrics(
        label_list, dataset, train=stats, metrics=["seqeval", "hardeval", "tmr", "bucket_f1"]), 3)
    t_all, result = best(lambda: compute(prediction), 5)
    only_f1 = robust_compute_metrics(label_list, dataset, metrics=[])
    t_f1, _ = best(lambda: only_f1(prediction), 5)
    hub = HubSeqeval(keep_in_memory=True)
    t_hub, hub_result = best(lambda: hub.compute(predictions=predicted, references=test.tags), 3)
    assert abs(hub_result["overall_f1"] - result["f1"]) < 1e-12
    peak = peak_mb(lambda: compute(prediction))
    print(f"{DATA}: test {len(test)} sentences, logits {prediction.predictions.shape}; "
          f"F1 {result['f1']:.4f} (= seqeval), {len(result)} keys")
    print_table([
        ("robust_compute_metrics, all metrics, per evaluation", t_all, Goal("<= 0.3 s", 0.3)),
        ("robust_compute_metrics, span P/R/F1 only", t_f1, ""),
        ("evaluate module with the Hub seqeval computation (peer, run)", t_hub, ""),
        ("  evaluate.load('seqeval').compute on the Hub", 0.7, Quoted("~0.7 s (DESIGN.md)")),
        ("ratio all metrics / Hub seqeval computation", t_all / t_hub, Goal("< 1 (cheaper than seqeval)", 1.0)),
        ("building the callable once (modules, words, word_ids)", t_build, ""),
        ("peak memory, one evaluation with all metrics (MB)", peak, ""),
    ])
    print_verdicts()


if __name__ == "__main__":
    main()
