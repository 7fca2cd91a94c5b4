"""Scores shared by the methods: NaN-safe ratios, exact-match span P/R/F1, F-beta, and the
macro and support-weighted averages over types."""
from __future__ import annotations

import math
from collections import Counter
from typing import Dict, List

import numpy as np

from .batch import Batch


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when the denominator is 0 (an empty subset)."""
    return numerator / denominator if denominator else math.nan


def f1(precision: float, recall: float, n_gold: int, n_pred: int) -> float:
    """Harmonic mean as seqeval computes it; 0 when nothing is right, NaN when there is
    neither a gold nor a predicted mention."""
    if n_gold == 0 and n_pred == 0:
        return math.nan
    if not precision or not recall or math.isnan(precision) or math.isnan(recall):
        return 0.0
    return 2 * precision * recall / (precision + recall)


def fbeta(precision: float, recall: float, beta: float, n_gold: int, n_pred: int) -> float:
    """F-beta, (1 + beta^2) P R / (beta^2 P + R): recall weighs beta times as much as precision;
    0 when nothing is right, NaN when there is neither a gold nor a predicted mention (``f1``
    at beta = 1)."""
    if n_gold == 0 and n_pred == 0:
        return math.nan
    if not precision or not recall or math.isnan(precision) or math.isnan(recall):
        return 0.0
    return (1 + beta * beta) * precision * recall / (beta * beta * precision + recall)


def check_beta(beta) -> None:
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0 < beta < math.inf:
        raise ValueError(f"beta weighs recall against precision: a number > 0, got {beta!r}")


def prf(n_correct: int, n_gold: int, n_pred: int, beta: float = 1.0) -> Dict[str, float]:
    """Precision, recall and F1 (and ``f_beta`` when ``beta`` is not 1)."""
    precision, recall = ratio(n_correct, n_pred), ratio(n_correct, n_gold)
    out = {"precision": precision, "recall": recall, "f1": f1(precision, recall, n_gold, n_pred)}
    if beta != 1:
        out["f_beta"] = fbeta(precision, recall, beta, n_gold, n_pred)
    return out


AVERAGES = ("macro", "weighted")


def averages(found_pred, n_pred, found_gold, n_gold, beta: float = 1.0) -> Dict[str, float]:
    """Macro and support-weighted averages over types of precision, recall and F1 (and
    ``f_beta``), as seqeval's ``classification_report`` gives them: over the types with a gold
    or a predicted mention; a type's precision is 0 without predictions and its recall 0
    without gold mentions (seqeval's default ``zero_division``), its F 0 when both are 0.
    Macro: their mean; weighted: their mean weighted by each type's gold mentions (0 when
    there are none).  Per type: precision = ``found_pred`` / ``n_pred``, recall =
    ``found_gold`` / ``n_gold`` (the two found counts differ only for partial credits).
    NaN when no type has a mention.  Keys ``macro_precision`` ... ``weighted_f1``."""
    found_pred, n_pred, found_gold, n_gold = (np.asarray(a, dtype=float) for a in (found_pred, n_pred, found_gold,
                                                                                    n_gold))
    present = (n_gold + n_pred) > 0
    names = ["precision", "recall", "f1"] + (["f_beta"] if beta != 1 else [])
    if not present.any():
        return {f"{average}_{name}": math.nan for average in AVERAGES for name in names}
    found_pred, n_pred, found_gold, n_gold = (a[present] for a in (found_pred, n_pred, found_gold, n_gold))
    precision = found_pred / np.where(n_pred > 0, n_pred, 1)
    recall = found_gold / np.where(n_gold > 0, n_gold, 1)
    scores = {"precision": precision, "recall": recall}
    for name, b in (("f1", 1.0), ("f_beta", beta)):
        if name in names:
            denominator = b * b * precision + recall
            scores[name] = np.where(denominator > 0, (1 + b * b) * precision * recall
                                    / np.where(denominator > 0, denominator, 1), 0.0)
    support = n_gold.sum()
    out = {}
    for name in names:
        out[f"macro_{name}"] = float(scores[name].mean())
        out[f"weighted_{name}"] = float((scores[name] * n_gold).sum() / support) if support else 0.0
    return out


def unplaced_types(batch: Batch) -> List[str]:
    """The types of the predictions without a position (hallucinated mentions): false
    positives for every precision."""
    return [item["type"] for items in (batch.hallucinated or ()) for item in items]


def unplaced_per_sentence(batch: Batch) -> np.ndarray:
    """How many predictions without a position (hallucinated mentions) each sentence has."""
    if batch.hallucinated is None:
        return np.zeros(len(batch))
    return np.array([len(items) for items in batch.hallucinated], dtype=float)


def mention_statuses(batch: Batch) -> Dict[str, int]:
    """How many predicted mentions were placed by each rule (``exact``, ``normalised``,
    ``fuzzy``) and placed nowhere (``ungrounded``: the hallucinated ones)."""
    counts = Counter(status.get((a, b)) for status, spans in zip(batch.mention_status, batch.pred_spans)
                     for a, b, _ in spans)
    return {"exact": counts["exact"], "normalised": counts["normalised"], "fuzzy": counts["fuzzy"],
            "ungrounded": len(unplaced_types(batch))}


def input_counts(batch: Batch, detailed: bool = False) -> Dict[str, object]:
    """What the input conversion noticed, for every method's result: the transitions invalid
    in the declared scheme on each side (``n_invalid_transitions_gold``, ``_pred``), ``n_hallucinated``
    when predictions were mention lists (with ``n_exact``, ``n_normalised``, ``n_fuzzy``: the
    mentions placed by each rule, and ``n_unparseable``: the sentences whose prediction was no
    mention list), ``n_snapped`` when character spans were given; with ``detailed``, the lists
    ``hallucinated`` (sentence, text, type), ``unparseable`` (sentence, problem) and ``snapped``."""
    counts: Dict[str, object] = batch.invalid_counts()
    if batch.hallucinated is not None:
        counts["n_hallucinated"] = len(unplaced_types(batch))
    if batch.mention_status is not None:
        statuses = mention_statuses(batch)
        counts.update({f"n_{status}": statuses[status] for status in ("exact", "normalised", "fuzzy")})
        counts["n_unparseable"] = len(batch.unparseable)
    if batch.snapped or "chars" in (batch.formats or {}).values():
        counts["n_snapped"] = len(batch.snapped)
    if detailed and batch.hallucinated is not None:
        counts["hallucinated"] = [{"sentence": s, **item} for s, items in enumerate(batch.hallucinated)
                                  for item in items]
    if detailed and batch.mention_status is not None:
        counts["unparseable"] = list(batch.unparseable)
    if detailed and "n_snapped" in counts:
        counts["snapped"] = list(batch.snapped)
    return counts


def matched(batch: Batch, which: str = "gold") -> np.ndarray:
    """For each gold span (or predicted, ``which="pred"``; in ``span_arrays`` order),
    whether a span of the other side has the same sentence, boundaries and type."""
    return batch.memo(("matched", which), None, lambda: _read_only(_matched(batch, which)))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False  # shared by every caller: a change in place would reach the others
    return array


def _matched(batch: Batch, which: str) -> np.ndarray:
    other = "pred" if which == "gold" else "gold"
    # One integer per span (start and end are flat token positions, so they fix the sentence),
    # looked up in the other side's sorted keys: no Python object per span, which made large
    # test sets slow.
    n_positions, n_types = int(batch.offsets[-1]) + 1, len(batch.types) + 1
    if n_positions * n_positions * n_types < 2 ** 62:
        def keys(side):
            _, starts, ends, types = batch.span_arrays(side)
            return (starts * n_positions + ends) * n_types + types
        wanted, present = keys(which), np.sort(keys(other))
        place = np.minimum(np.searchsorted(present, wanted), max(len(present) - 1, 0))
        return present[place] == wanted if len(present) else np.zeros(len(wanted), dtype=bool)
    return matched_by_tuples(batch, which)


def matched_by_tuples(batch: Batch, which: str = "gold") -> np.ndarray:
    """``matched`` through a set of (start, end, type) tuples: for corpora too large for one
    int64 key per span."""
    other = set(zip(*(a.tolist() for a in batch.span_arrays("pred" if which == "gold" else "gold")[1:])))
    return np.fromiter((key in other for key in zip(*(a.tolist() for a in batch.span_arrays(which)[1:]))),
                       dtype=bool, count=len(batch.span_arrays(which)[0]))


def span_scores(batch: Batch, beta: float = 1.0) -> Dict[str, object]:
    """Micro precision/recall/F1 over exact spans (conlleval's and seqeval's default on
    valid BIO), and the same per type: ``{"precision", "recall", "f1", "per_type": {...}}``,
    with the macro and weighted averages over types (``averages``) and, when ``beta`` is not
    1, ``f_beta`` beside each F1.  Hallucinated mentions count as wrong predictions."""
    check_beta(beta)
    gold_types = batch.span_arrays("gold")[3]
    pred_types = batch.span_arrays("pred")[3]
    unplaced = Counter(unplaced_types(batch))
    hit = matched(batch)
    result: Dict[str, object] = prf(int(hit.sum()), len(gold_types), len(pred_types) + sum(unplaced.values()), beta)
    n = len(batch.types)  # one counting pass: time linear in spans + types
    n_gold, n_pred = np.bincount(gold_types, minlength=n), np.bincount(pred_types, minlength=n)
    n_pred = n_pred + np.array([unplaced[name] for name in batch.types], dtype=np.int64)
    n_correct = np.bincount(gold_types[hit], minlength=n)
    result.update(averages(n_correct, n_pred, n_correct, n_gold, beta))
    result["per_type"] = {name: {**prf(int(c), int(g), int(p), beta), "n": int(g)}
                          for name, c, g, p in zip(batch.types, n_correct, n_gold, n_pred)}
    return result
