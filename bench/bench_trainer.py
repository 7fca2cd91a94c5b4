"""Trainer integration benchmark: the per-evaluation cost of ``robust_compute_metrics`` on
CoNLL-2003 test size, beside the usual ``compute_metrics`` of the Hugging Face token
classification example, measured in the same run.

    python bench/bench_trainer.py [CONLL_DIR] [--quick]

The model's forward passes are not timed: the logits are made up (their argmax is the
memorization baseline's tags) over realistic sub-token layouts (long words split in two,
[CLS]/[SEP] around, padding to the longest sentence).

Compared, whole evaluation vs whole evaluation, from the same ``EvalPrediction``: argmax,
alignment to words and scoring.  ``robust_compute_metrics`` scores a Batch directly (it does
not go through evaluate's Arrow cache), so the peers do not either: the example's
``compute_metrics`` (argmax, labels -100 dropped, tag names) followed by the Hub ``seqeval``
module's computation (seqeval's ``classification_report`` + accuracy) called directly, and the
same with seqeval's ``f1_score`` alone (the yardstick).  Shown for information: the Hub
computation through evaluate's Arrow cache, as ``evaluate.load("seqeval")`` runs it.
"""
from __future__ import annotations

import datasets
import evaluate
import numpy as np
from seqeval.metrics import accuracy_score, classification_report, f1_score
from transformers import EvalPrediction

from tough_ner import TrainStats, read_conll
from tough_ner.baselines import memorization
from tough_ner.trainer import robust_compute_metrics

from common import DATA, Goal, Quoted, best, paired, peak_mb, print_table, print_verdicts


class HubSeqeval(evaluate.Metric):
    """The Hub seqeval module's computation (default mode), as a local evaluate module."""

    def _info(self):
        strings = datasets.List(datasets.Value("string"))
        return evaluate.MetricInfo(description="", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": strings, "references": strings}))

    def _compute(self, predictions, references):
        return hub_seqeval(predictions, references)


def hub_seqeval(predictions, references):
    """What the Hub seqeval module computes by default."""
    report = classification_report(y_true=references, y_pred=predictions, output_dict=True, zero_division="warn")
    report.pop("macro avg")
    report.pop("weighted avg")
    overall = report.pop("micro avg")
    scores = {name: {"precision": s["precision"], "recall": s["recall"], "f1": s["f1-score"],
                     "number": s["support"]} for name, s in report.items()}
    scores.update({"overall_precision": overall["precision"], "overall_recall": overall["recall"],
                   "overall_f1": overall["f1-score"], "overall_accuracy": accuracy_score(references, predictions)})
    return scores


def example_compute_metrics(label_list, score):
    """The token classification example's ``compute_metrics``: argmax, drop the -100 labels,
    tag names, then ``score(predictions, references)``."""
    def compute(prediction):
        predicted = np.argmax(prediction.predictions, axis=2)
        tags, gold = [], []
        for row, labels in zip(predicted, prediction.label_ids):
            keep = labels != -100
            tags.append([label_list[i] for i in row[keep]])
            gold.append([label_list[i] for i in labels[keep]])
        return score(tags, gold)
    return compute


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
    only_f1 = robust_compute_metrics(label_list, dataset, metrics=[])
    example = example_compute_metrics(label_list, hub_seqeval)
    example_f1 = example_compute_metrics(label_list, lambda p, r: {"f1": f1_score(r, p)})
    times = paired({"all": lambda: compute(prediction), "f1": lambda: only_f1(prediction),
                    "example": lambda: example(prediction), "example f1": lambda: example_f1(prediction)}, 5)
    result = compute(prediction)
    hub = HubSeqeval(keep_in_memory=True)
    t_hub, hub_result = best(lambda: hub.compute(predictions=predicted, references=test.tags), 3)
    assert abs(hub_result["overall_f1"] - result["f1"]) < 1e-12
    assert abs(example(prediction)["overall_f1"] - result["f1"]) < 1e-12
    peak = peak_mb(lambda: compute(prediction))
    print(f"{DATA}: test {len(test)} sentences, logits {prediction.predictions.shape}; "
          f"F1 {result['f1']:.4f} (= seqeval), {len(result)} keys; CPU seconds of paired runs")
    print_table([
        ("robust_compute_metrics, all metrics, per evaluation", times["all"], Goal("<= 0.3 s", 0.3)),
        ("robust_compute_metrics, span P/R/F1 only", times["f1"], ""),
        ("example compute_metrics + Hub seqeval computation (peer, run)", times["example"], ""),
        ("example compute_metrics + seqeval f1_score (peer, run; yardstick)", times["example f1"], ""),
        ("ratio all metrics / example + Hub seqeval", times["all"] / times["example"],
         Goal("< 1 (cheaper than seqeval)", 1.0)),
        ("ratio all metrics / example + f1_score", times["all"] / times["example f1"], ""),
        ("ratio span P/R/F1 only / example + f1_score", times["f1"] / times["example f1"], ""),
        ("Hub seqeval computation through evaluate's Arrow cache (wall)", t_hub, "as evaluate.load('seqeval')"),
        ("  evaluate.load('seqeval').compute on the Hub", 0.7, Quoted("~0.7 s (DESIGN.md)")),
        ("building the callable once (modules, words, word_ids; wall)", t_build, ""),
        ("peak RSS of this process, one evaluation with all metrics (MB)", peak, ""),
    ], 66)
    print_verdicts()


if __name__ == "__main__":
    main()
