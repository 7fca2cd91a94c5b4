"""RockNER scoring: how much a system loses on an attacked test set, and how it errs.

F1 on the original and on the attacked set, the absolute and relative drop, and RockNER's
error analysis over gold entities.  Each gold entity falls in one category:
  exact_right_type / exact_wrong_type   a predicted span has exactly its boundaries;
  overlap_{right,wrong}_type_d{1,2,3plus}  else, the overlapping prediction that differs
        from it in the fewest token positions (d = tokens in one span but not the other;
        ties: the right type, then the leftmost), whose type is right or wrong;
  missed                                no predicted span shares a token with it.
The confusion matrix counts gold type x the type of that prediction (``O`` for a miss; a
row ``O`` counts predicted spans that overlap no gold entity).
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Tuple

from .batch import Batch
from .scoring import ratio, span_scores

CATEGORIES = ("exact_right_type", "exact_wrong_type",
              "overlap_right_type_d1", "overlap_right_type_d2", "overlap_right_type_d3plus",
              "overlap_wrong_type_d1", "overlap_wrong_type_d2", "overlap_wrong_type_d3plus",
              "missed")
VERSIONS = ("original", "attacked")


def error_analysis(batch: Batch) -> Tuple[Dict[str, int], Dict[str, Dict[str, int]]]:
    """(count per category over gold entities, confusion ``{gold type: {predicted type: n}}``)."""
    counts = Counter({category: 0 for category in CATEGORIES})
    confusion: Dict[str, Counter] = {}
    for gold, predicted in zip(batch.gold_spans, batch.pred_spans):
        touched = [False] * len(predicted)
        for start, end, gold_type in gold:
            best = None  # (d, wrong type, start, index)
            for k, (p_start, p_end, p_type) in enumerate(predicted):
                if p_start < end and start < p_end:
                    touched[k] = True
                    common = min(end, p_end) - max(start, p_start)
                    key = ((end - start) + (p_end - p_start) - 2 * common, p_type != gold_type, p_start, k)
                    best = key if best is None or key < best else best
            if best is None:
                category, found = "missed", "O"
            else:
                d, wrong, _, k = best
                found = predicted[k][2]
                kind = "wrong" if wrong else "right"
                category = f"exact_{kind}_type" if d == 0 else f"overlap_{kind}_type_d{d if d < 3 else '3plus'}"
            counts[category] += 1
            confusion.setdefault(gold_type, Counter())[found] += 1
        for k, hit in enumerate(touched):
            if not hit:
                confusion.setdefault("O", Counter())[predicted[k][2]] += 1
    return dict(counts), {row: dict(sorted(cells.items())) for row, cells in sorted(confusion.items())}


def confusion_difference(attacked: Dict[str, Dict[str, int]], original: Dict[str, Dict[str, int]]
                         ) -> Dict[str, Dict[str, int]]:
    """Attacked minus original, cell by cell, over the union of rows and columns."""
    rows = sorted(set(attacked) | set(original))
    columns = sorted({c for table in (attacked, original) for cells in table.values() for c in cells})
    return {row: {c: attacked.get(row, {}).get(c, 0) - original.get(row, {}).get(c, 0) for c in columns}
            for row in rows}


def rockner(original: Batch, attacked: Batch, detailed: bool = False) -> dict:
    """Scores of one system on the original and the attacked test set.

    Flat keys: ``{precision,recall,f1}_{original,attacked}``, ``f1_drop`` (original -
    attacked), ``f1_drop_relative`` (drop / original F1), ``n_original`` / ``n_attacked``
    (gold entities) and, per error category, ``{original,attacked}_{category}``: its share of
    the gold entities.  ``detailed`` adds ``errors`` (counts) and ``confusion``
    (``original``, ``attacked`` and ``difference`` = attacked - original).
    """
    result: Dict[str, object] = {}
    analyses = {}
    for name, batch in zip(VERSIONS, (original, attacked)):
        scores = span_scores(batch)
        for key in ("precision", "recall", "f1"):
            result[f"{key}_{name}"] = scores[key]
        analyses[name] = error_analysis(batch)
    result["f1_drop"] = result["f1_original"] - result["f1_attacked"]
    result["f1_drop_relative"] = ratio(result["f1_drop"], result["f1_original"])
    for name in VERSIONS:
        counts = analyses[name][0]
        total = sum(counts.values())
        result[f"n_{name}"] = total
        for category in CATEGORIES:
            result[f"{name}_{category}"] = ratio(counts[category], total)
    if detailed:
        result["errors"] = {name: analyses[name][0] for name in VERSIONS}
        tables = {name: analyses[name][1] for name in VERSIONS}
        result["confusion"] = {**tables, "difference": confusion_difference(tables["attacked"], tables["original"])}
    return result


def split_versions(tokens: List, references: List, predictions: List, versions: List[str]) -> Tuple[Batch, Batch]:
    """Original and attacked batches from sentences labelled ``original`` / ``attacked``."""
    wrong = sorted(set(versions) - set(VERSIONS))
    if wrong:
        raise ValueError(f"version must be 'original' or 'attacked' for each sentence, got {wrong[0]!r}")
    batches = []
    for name in VERSIONS:
        rows = [i for i, version in enumerate(versions) if version == name]
        if not rows and versions:  # no sentences at all: two empty sets, NaN scores
            raise ValueError(f"no {name} sentences: rockner compares predictions on the original and the "
                             f"attacked test set (give version='original' and version='attacked' batches)")
        batches.append(Batch([tokens[i] for i in rows], [references[i] for i in rows],
                             [predictions[i] for i in rows]))
    return batches[0], batches[1]
