"""Partial-match scoring: the four SemEval-2013 / MUC schemes as nervaluate defines them.

Each predicted entity, in sentence order, is matched to at most one gold entity of its
sentence that no earlier prediction took:
  strict   COR: same boundaries and type; else INC: the first overlapping gold entity.
  exact    COR: same boundaries (any type); else INC: the first overlapping gold entity.
  partial  COR: same boundaries (any type); else PAR: the first overlapping gold entity.
  type     COR: the overlapping gold entity of the same type with the closest boundaries
           (smallest |start difference| + |end difference|, the first on ties); else INC: the
           first overlapping gold entity of another type.
A prediction matched to nothing is SPU; a gold entity no prediction took is MIS.  Overlap
means at least one shared token and, with ``min_overlap`` > 0, a shared share of the gold
entity's tokens >= ``min_overlap``.
  possible = COR + INC + PAR + MIS (the gold entities), actual = COR + INC + PAR + SPU
  precision = (COR + 0.5 PAR) / actual, recall = (COR + 0.5 PAR) / possible (PAR only
  occurs in ``partial``), F1 their harmonic mean; NaN for an empty denominator (nervaluate: 0).
Per type (``detailed``): the same over the entities of that type only, gold and predicted
(nervaluate's per-entity results).  Hallucinated mentions (no position) are SPU.

The same matching gives every gold and predicted entity a credit (COR 1, PAR 0.5, else 0):
TMR recall and bucket F1 with ``match=`` read these credits, so their overall numbers equal
the scheme's recall and precision here.
"""
from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .batch import Batch
from .schemes import Span
from .scoring import averages, check_beta, f1, fbeta, ratio, unplaced_types

SCHEMES = ("strict", "exact", "partial", "type")
COR, INC, PAR, MISSED = 0, 1, 2, 3  # outcome codes; MISSED is MIS for gold, SPU for predictions
COUNTS = ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual")


def check_match(match: str) -> None:
    if match not in SCHEMES:
        raise ValueError(f"unknown match {match!r}: use one of {', '.join(SCHEMES)}")


def _check_overlap(min_overlap) -> None:
    if isinstance(min_overlap, bool) or not isinstance(min_overlap, (int, float)) or not 0 <= min_overlap <= 1:
        raise ValueError(f"min_overlap is a share of the gold entity's tokens in [0, 1], got {min_overlap!r}")


def match_sentence(gold: Sequence[Span], pred: Sequence[Span], scheme: str,
                   min_overlap: float = 0.0, nested: bool = False) -> Tuple[List[int], List[int]]:
    """Outcome codes of one sentence's gold and predicted spans, sorted; ``nested``: they may
    overlap or nest (every gold span is then scanned, in order, as nervaluate does)."""
    gold_out = [MISSED] * len(gold)
    pred_out = [MISSED] * len(pred)
    gold_ends = [end for _, end, _ in gold]
    for p, (ps, pe, pt) in enumerate(pred):
        best = other = None
        best_distance = 0
        i = 0 if nested else bisect_right(gold_ends, ps)  # gold spans ending after this one starts (flat: sorted ends)
        while i < len(gold) and gold[i][0] < pe:
            gs, ge, gt = gold[i]
            if gold_out[i] == MISSED:
                same = gs == ps and ge == pe
                shared = min(ge, pe) - max(gs, ps)
                overlaps = shared > 0 and shared / (ge - gs) >= min_overlap
                if scheme == "type":
                    if overlaps and gt == pt:
                        distance = abs(gs - ps) + abs(ge - pe)
                        if best is None or distance < best_distance:
                            best, best_distance = i, distance
                    elif overlaps and other is None:
                        other = i
                elif same and (gt == pt or scheme != "strict"):
                    best = i
                    break
                elif overlaps and other is None:
                    other = i
            i += 1
        if best is not None:
            gold_out[best] = pred_out[p] = COR
        elif other is not None:
            gold_out[other] = pred_out[p] = PAR if scheme == "partial" else INC
    return gold_out, pred_out


def outcomes(batch: Batch, scheme: str, min_overlap: float = 0.0) -> Tuple[np.ndarray, np.ndarray]:
    """Outcome codes of every gold and predicted span, in ``span_arrays`` order."""
    check_match(scheme)
    _check_overlap(min_overlap)
    if batch.pred_spans is None:
        raise ValueError("matching needs predictions")
    gold_codes: List[int] = []
    pred_codes: List[int] = []
    nested = bool(batch.overlapping)
    for gold, pred in zip(batch.gold_spans, batch.pred_spans):
        g, p = _sentence_outcomes(gold, pred, scheme, min_overlap, nested)
        gold_codes += g
        pred_codes += p
    return np.array(gold_codes, dtype=np.int8), np.array(pred_codes, dtype=np.int8)


def _sentence_outcomes(gold, pred, scheme: str, min_overlap: float, nested: bool) -> Tuple[list, list]:
    """The outcome codes of one sentence's gold and predicted spans (every one missed or
    spurious when the other side has none)."""
    if gold and pred:
        return match_sentence(gold, pred, scheme, min_overlap, nested)
    return [MISSED] * len(gold), [MISSED] * len(pred)


def credits(batch: Batch, match: str = "strict", min_overlap: float = 0.0) -> Tuple[np.ndarray, np.ndarray]:
    """Credit of each gold and predicted span under ``match``: 1 for COR, 0.5 for PAR, else 0."""
    value = np.array([1.0, 0.0, 0.5, 0.0])
    gold, pred = outcomes(batch, match, min_overlap)
    return value[gold], value[pred]


def _table(gold_codes: np.ndarray, pred_codes: np.ndarray, n_unplaced: int, beta: float = 1.0) -> Dict[str, float]:
    correct, incorrect, partial = (int(np.sum(gold_codes == code)) for code in (COR, INC, PAR))
    missed = int(np.sum(gold_codes == MISSED))
    spurious = int(np.sum(pred_codes == MISSED)) + n_unplaced
    possible, actual = len(gold_codes), len(pred_codes) + n_unplaced
    score = correct + 0.5 * partial
    precision, recall = ratio(score, actual), ratio(score, possible)
    table = {"correct": correct, "incorrect": incorrect, "partial": partial, "missed": missed, "spurious": spurious,
             "possible": possible, "actual": actual, "precision": precision, "recall": recall,
             "f1": f1(precision, recall, possible, actual)}
    if beta != 1:
        table["f_beta"] = fbeta(precision, recall, beta, possible, actual)
    return table


def match_scores(batch: Batch, min_overlap: float = 0.0, detailed: bool = False, beta: float = 1.0) -> Dict[str, dict]:
    """For each scheme (``strict``, ``exact``, ``partial``, ``type``): COR / INC / PAR / MIS /
    SPU counts (``correct`` ... ``spurious``), ``possible``, ``actual``, ``precision``,
    ``recall`` and ``f1`` (and ``f_beta`` when ``beta`` is not 1), the macro and weighted
    averages over types of the per-type tables (``scoring.averages``: ``macro_precision`` ...
    ``weighted_f1``); with ``detailed``, those ``per_type`` tables."""
    check_beta(beta)
    unplaced = Counter(unplaced_types(batch))
    table = {}
    for scheme in SCHEMES:
        gold, pred = outcomes(batch, scheme, min_overlap)
        table[scheme] = _table(gold, pred, sum(unplaced.values()), beta)
        by_type = _outcomes_by_type(batch, scheme, min_overlap)
        table[scheme]["per_type"] = {name: _table(*by_type[name], unplaced[name], beta) for name in batch.types}
        rows = list(table[scheme]["per_type"].values())
        score = [row["correct"] + 0.5 * row["partial"] for row in rows]
        table[scheme].update(averages(score, [row["actual"] for row in rows], score,
                                      [row["possible"] for row in rows], beta))
        if not detailed:
            del table[scheme]["per_type"]
    return table


def _outcomes_by_type(batch: Batch, scheme: str, min_overlap: float) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """Each type's outcome codes (gold, predicted) when only that type's spans are matched:
    one pass over the sentences, each matched per type it holds (work linear in the spans,
    not types x sentences)."""
    gold_codes: Dict[str, List[int]] = {name: [] for name in batch.types}
    pred_codes: Dict[str, List[int]] = {name: [] for name in batch.types}
    nested = bool(batch.overlapping)
    for gold, pred in zip(batch.gold_spans, batch.pred_spans):
        by_type: Dict[str, Tuple[list, list]] = {}
        for span in gold:
            by_type.setdefault(span[2], ([], []))[0].append(span)
        for span in pred:
            by_type.setdefault(span[2], ([], []))[1].append(span)
        for name, (g, p) in by_type.items():
            g, p = _sentence_outcomes(g, p, scheme, min_overlap, nested)
            gold_codes.setdefault(name, []).extend(g)
            pred_codes.setdefault(name, []).extend(p)
    return {name: (np.array(gold_codes[name], dtype=np.int8), np.array(pred_codes[name], dtype=np.int8))
            for name in gold_codes}


def flat_keys(table: Dict[str, dict]) -> Dict[str, float]:
    """``{scheme}_{precision,recall,f1}`` of a ``match_scores`` table (for flat results)."""
    return {f"{scheme}_{key}": table[scheme][key] for scheme in SCHEMES for key in ("precision", "recall", "f1")}


def report_scores(stats, batch: Batch, detailed: bool = False) -> dict:
    """The report's ``match_scores`` method: flat ``{scheme}_{precision,recall,f1}`` keys and,
    with ``detailed``, the whole table under ``schemes`` (``stats`` is not needed)."""
    table = match_scores(batch, detailed=detailed)
    return {**flat_keys(table), **({"schemes": table} if detailed else {})}


def credit_scores(batch: Batch, gold_credit: np.ndarray, pred_credit: np.ndarray,
                  beta: float = 1.0) -> Dict[str, object]:
    """Micro precision (predicted credits / predictions, hallucinated mentions included) and
    recall (gold credits / gold entities), overall and per type, from per-entity credits, and
    the macro and weighted averages over types (``scoring.averages``); ``f_beta`` beside each F1
    when ``beta`` is not 1.  With strict credits this is ``scoring.span_scores``."""
    check_beta(beta)
    gold_types, pred_types = batch.span_arrays("gold")[3], batch.span_arrays("pred")[3]
    unplaced = Counter(unplaced_types(batch))

    def scores(gold_mask, pred_mask, n_unplaced):
        n_gold, n_pred = int(gold_mask.sum()), int(pred_mask.sum()) + n_unplaced
        precision = ratio(float(pred_credit[pred_mask].sum()), n_pred)
        recall = ratio(float(gold_credit[gold_mask].sum()), n_gold)
        return {"precision": precision, "recall": recall, "f1": f1(precision, recall, n_gold, n_pred),
                **({"f_beta": fbeta(precision, recall, beta, n_gold, n_pred)} if beta != 1 else {})}

    result: Dict[str, object] = scores(np.ones(len(gold_types), bool), np.ones(len(pred_types), bool),
                                       sum(unplaced.values()))
    result["per_type"] = {name: {**scores(gold_types == index, pred_types == index, unplaced[name]),
                                 "n": int(np.sum(gold_types == index))}
                          for index, name in enumerate(batch.types)}
    n = len(batch.types)
    result.update(averages(np.bincount(pred_types, weights=pred_credit, minlength=n),
                           np.bincount(pred_types, minlength=n) + np.array([unplaced[t] for t in batch.types], dtype=int),
                           np.bincount(gold_types, weights=gold_credit, minlength=n),
                           np.bincount(gold_types, minlength=n), beta))
    return result
