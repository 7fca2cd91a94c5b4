"""Tough Mentions Recall: recall on gold test mentions that are unseen or type-confusable.

A mention's text is its tokens joined by single spaces, matched exactly.  Against the
training mentions only:
  SEEN           (text, type) is a training mention.    UNSEEN_ANY: it is not.
  UNSEEN_TOKENS  text is never a training mention of any type (unannotated occurrences do not count).
  UNSEEN_TYPE    text is a training mention, but never of this type.
Among the gold test mentions:
  TCM_ALL        the text occurs with 2+ types.  TCM_UNSEEN = TCM_ALL & UNSEEN_TOKENS;
                 TCM_SEEN = the rest of TCM_ALL.
Recall of a subset = its mentions exactly matched (span and type) by a prediction / its size.
Spurious predictions belong to no subset, so subsets have recall only.  With ``match=``
(``"exact"``, ``"partial"``, ``"type"``; ``tough_ner.matching``) a mention counts by its credit
under that scheme (1 matched, 0.5 partly matched under ``partial``) and the overall precision,
recall and F1 are that scheme's.
"""
from __future__ import annotations

from itertools import repeat
from typing import Dict, List, Sequence

import numpy as np

from ..core.batch import Batch
from .._util import no_gc
from ..core.checks import check_inputs
from ..core.corpus import factorize
from ..core.matching import check_match, credit_scores, credits
from ..core.scoring import check_beta, input_counts, matched, ratio, span_scores, unplaced_per_sentence
from ..core.stats import TrainStats
from ..core.uncertainty import AVERAGE_KEYS, aggregate_runs, per_sentence, with_intervals

SUBSETS = ("seen", "unseen_any", "unseen_tokens", "unseen_type", "tcm_all", "tcm_seen", "tcm_unseen")


@no_gc()  # a string and a tuple per mention: the collector's scans grew with the test size
def classify(stats: TrainStats, batch: Batch) -> Dict[str, np.ndarray]:
    """Boolean masks of the TMR subsets over gold mentions."""
    texts = batch.span_texts("gold")
    type_ids = batch.span_arrays("gold")[3]
    types = [batch.types[t] for t in type_ids.tolist()]
    training_texts = stats.mention_text_counts  # built once per statistics
    seen = np.fromiter(map(stats.mentions.__contains__, zip(texts, types)), dtype=bool, count=len(texts))
    unseen_tokens = ~np.fromiter(map(training_texts.__contains__, texts), dtype=bool, count=len(texts))
    if not stats.spaced_tokens:  # texts compare token sequences only when no training token holds a space
        starts, ends = batch.span_arrays("gold")[1:3]
        spaces = np.fromiter(map(str.count, texts, repeat(" ")), dtype=np.int64, count=len(texts))
        spaced = spaces != ends - starts - 1
        seen &= ~spaced
        unseen_tokens |= spaced
    # Type-confusable: the text has more than one gold type in the test set.
    _, text_ids, _ = factorize(texts)
    pairs = np.unique(text_ids * (len(batch.types) + 1) + type_ids)
    tcm = np.bincount(pairs // (len(batch.types) + 1), minlength=len(texts))[text_ids] > 1
    return {"seen": seen, "unseen_any": ~seen, "unseen_tokens": unseen_tokens,
            "unseen_type": ~seen & ~unseen_tokens, "tcm_all": tcm, "tcm_seen": tcm & ~unseen_tokens,
            "tcm_unseen": tcm & unseen_tokens}


def _subset_keys(masks: Dict[str, np.ndarray], hit: np.ndarray, group: np.ndarray, n: int) -> List[Dict[str, float]]:
    """Recall and size of each subset in each of ``n`` mention groups (``group``: each gold
    mention's group; ``hit``: each mention's credit), counted in one pass: time linear in
    mentions + groups."""
    sizes = {name: np.bincount(group[masks[name]], minlength=n) for name in SUBSETS}
    found = {name: np.bincount(group[masks[name]], weights=hit[masks[name]].astype(float), minlength=n)
             for name in SUBSETS}
    return [{**{f"recall_{name}": ratio(found[name][k].item(), int(sizes[name][k])) for name in SUBSETS},
             **{f"n_{name}": int(sizes[name][k]) for name in SUBSETS}} for k in range(n)]


def _hits(batch: Batch, match: str):
    """(credit of each gold mention, of each prediction) under ``match``; strict: booleans."""
    if match == "strict":
        return matched(batch), None
    return credits(batch, match)


def _checked(stats: TrainStats, batch: Batch, match: str):
    """The inputs checked, then (subset masks, gold hits or credits, predicted credits or None)."""
    if not batch.has_predictions:
        raise ValueError("TMR needs predictions")
    check_match(match)
    check_inputs(stats, batch)
    masks = batch.memo(("tmr",), stats, lambda: classify(stats, batch))
    return (masks, *_hits(batch, match))


def counts(stats: TrainStats, batch: Batch, match: str = "strict", beta: float = 1.0):
    """Per-sentence counts of precision / recall / f1 (and ``f_beta`` when ``beta`` is not 1), the
    averages over types and every subset recall (``uncertainty.Counts``)."""
    masks, hit, pred_credit = _checked(stats, batch, match)
    gold_sentences, pred_sentences = batch.span_arrays("gold")[0], batch.span_arrays("pred")[0]
    n = len(batch)
    found = lambda weights: np.bincount(gold_sentences, weights=weights, minlength=n).astype(float)
    predicted = per_sentence(pred_sentences, n) + unplaced_per_sentence(batch)
    table = batch.counts()
    if pred_credit is None:
        table.prf(per_sentence(gold_sentences, n, hit), per_sentence(gold_sentences, n), predicted, beta=beta)
    else:  # credits: precision from the predictions', recall from the gold mentions'
        table.prf(np.bincount(pred_sentences, weights=pred_credit, minlength=n).astype(float),
                  per_sentence(gold_sentences, n), predicted, found=found(hit), beta=beta)
    for name in SUBSETS:
        table.ratio(f"recall_{name}", found(masks[name] * hit), per_sentence(gold_sentences, n, masks[name]))
    # The macro and weighted averages over types (per type counts kept as entries: a type is a group).
    gold_types, pred_types = batch.span_arrays("gold")[3], batch.span_arrays("pred")[3]
    unplaced = [(s, batch.type_index[item["type"]]) for s, items in enumerate(batch.hallucinated or ())
                for item in items if item["type"] in batch.type_index]
    predicted_items = (np.concatenate([pred_types, np.array([t for _, t in unplaced], dtype=np.int64)]),
                       np.concatenate([pred_sentences, np.array([s for s, _ in unplaced], dtype=np.int64)]), None)
    gold_items = (gold_types, gold_sentences, None)
    if pred_credit is None:
        table.averages(len(batch.types), (gold_types[hit], gold_sentences[hit], None), gold_items, predicted_items,
                       beta=beta)
    else:
        table.averages(len(batch.types), (pred_types, pred_sentences, pred_credit), gold_items, predicted_items,
                       found=(gold_types, gold_sentences, np.asarray(hit, dtype=float)), beta=beta)
    # The paper's contrast within one system: recall on seen minus recall on unseen-token mentions.
    table.derive("recall_seen_minus_unseen", "diff", "recall_seen", "recall_unseen_tokens",
                 size=per_sentence(gold_sentences, n, masks["seen"] | masks["unseen_tokens"]))
    return table


def tmr(stats: TrainStats, batch: Batch, detailed: bool = False, ci: bool = False, n_resamples: int = 1000,
        confidence: float = 0.95, seed: int = 0, unit: str = "sentence", match: str = "strict",
        beta: float = 1.0) -> dict:
    """Tough Mentions Recall of predictions against gold, with training statistics ``stats``.
    ``ci``: add ``<key>_ci_low`` / ``<key>_ci_high`` to every rate (``tough_ner.uncertainty``).
    ``match`` picks the matching scheme (default ``strict``: exact span and type).  ``beta``
    other than 1 adds the span F-beta beside the F1 (``f_beta``, ``macro_f_beta``,
    ``weighted_f_beta``, and per type): the subset recalls are recalls, whatever beta."""
    check_beta(beta)
    masks, hit, pred_credit = _checked(stats, batch, match)
    spans = span_scores(batch, beta) if pred_credit is None else credit_scores(batch, hit, pred_credit, beta)
    f_beta = ("f_beta", "macro_f_beta", "weighted_f_beta") if beta != 1 else ()
    result = {key: spans[key] for key in ("precision", "recall", "f1") + f_beta + AVERAGE_KEYS}
    subset_keys = _subset_keys(masks, hit, np.zeros(len(hit), dtype=np.int64), 1)[0]
    result.update({k: v for k, v in subset_keys.items() if k.startswith("recall_")})
    result["n_mentions"] = len(hit)
    result["n_predicted"] = len(batch.span_arrays("pred")[0]) + int(unplaced_per_sentence(batch).sum())
    result.update({k: v for k, v in subset_keys.items() if k.startswith("n_")})
    if ci:
        result = with_intervals(result, counts(stats, batch, match, beta), n_resamples, confidence, seed, unit)
    if detailed:
        per_type = _subset_keys(masks, hit, batch.span_arrays("gold")[3], len(batch.types))
        result["per_type"] = {name: {**spans["per_type"][name], **keys} for name, keys in zip(batch.types, per_type)}
        result["share"] = {name: ratio(result[f"n_{name}"], len(hit)) for name in SUBSETS}
    result.update(input_counts(batch, detailed))
    return result


def aggregate(runs: Sequence[dict]) -> Dict[str, Dict[str, float]]:
    """Mean, sample std (n - 1), min and max of each flat key over several runs on the same
    test set (``uncertainty.aggregate_runs``)."""
    return aggregate_runs(runs)


def paired_difference(runs_a: Sequence[dict], runs_b: Sequence[dict]) -> Dict[str, Dict[str, float]]:
    """Mean and sample std of run-by-run differences A - B (runs paired in order)."""
    if len(runs_a) != len(runs_b):
        raise ValueError(f"paired runs need equal counts: {len(runs_a)} vs {len(runs_b)}")
    differences = [{k: a[k] - b[k] for k, v in a.items() if isinstance(v, (int, float))} for a, b in zip(runs_a, runs_b)]
    return aggregate_runs(differences)
