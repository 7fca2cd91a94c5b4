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
from typing import Dict, List, Optional, Tuple

import numpy as np

from .._util import no_gc
from ..core.batch import Batch
from ..core.checks import check_types, warn_input
from ..core.scoring import input_counts, matched, ratio, span_scores, unplaced_per_sentence
from ..core.uncertainty import per_sentence, with_intervals

CATEGORIES = ("exact_right_type", "exact_wrong_type",
              "overlap_right_type_d1", "overlap_right_type_d2", "overlap_right_type_d3plus",
              "overlap_wrong_type_d1", "overlap_wrong_type_d2", "overlap_wrong_type_d3plus",
              "missed")
VERSIONS = ("original", "attacked")


def error_analysis(batch: Batch) -> Tuple[Dict[str, int], Dict[str, Dict[str, int]]]:
    """(count per category over gold entities, confusion ``{gold type: {predicted type: n}}``)."""
    _, categories, confusion = _analysis(batch)
    tally = Counter({category: 0 for category in CATEGORIES})
    tally.update(categories)
    return dict(tally), confusion


@no_gc()
def _analysis(batch: Batch) -> Tuple[List[int], List[str], Dict[str, Dict[str, int]]]:
    """(sentence of each gold entity, its category, confusion table).  Parallel lists of ints
    and strings, no tuple per entity: the collector scans every tuple kept, which grew with
    the test size."""
    sentences: List[int] = []
    categories: List[str] = []
    rows: List[str] = []  # the confusion cell of each entity and unmatched prediction: gold type or "O"
    columns: List[str] = []  # and predicted type or "O"
    for sentence, (gold, predicted) in enumerate(zip(batch.gold_spans, batch.pred_spans)):
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
            sentences.append(sentence)
            categories.append(category)
            rows.append(gold_type)
            columns.append(found)
        unmatched = [span[2] for span, hit in zip(predicted, touched) if not hit]
        rows.extend(["O"] * len(unmatched))
        columns.extend(unmatched)
    confusion: Dict[str, Dict[str, int]] = {}
    for (row, column), n in sorted(Counter(zip(rows, columns)).items()):
        confusion.setdefault(row, {})[column] = n
    return sentences, categories, confusion


def confusion_difference(attacked: Dict[str, Dict[str, int]], original: Dict[str, Dict[str, int]]
                         ) -> Dict[str, Dict[str, int]]:
    """Attacked minus original, cell by cell, over the union of rows and columns."""
    rows = sorted(set(attacked) | set(original))
    columns = sorted({c for table in (attacked, original) for cells in table.values() for c in cells})
    return {row: {c: attacked.get(row, {}).get(c, 0) - original.get(row, {}).get(c, 0) for c in columns}
            for row in rows}


def _check(original: Batch, attacked: Batch) -> None:
    """The input checks, either version's gold types being known to both, and a warning when
    the attacked set does not look like the original sentence by sentence (the drop would
    then compare other sentences, not the attack)."""
    original.require_flat("RockNER")
    attacked.require_flat("RockNER")
    known = set(original.span_type_counts("gold")) | set(attacked.span_type_counts("gold"))
    check_types(original, also_gold=known)
    check_types(attacked, also_gold=known)
    if len(original) != len(attacked):
        warn_input(f"the attacked set has {len(attacked)} sentences and the original {len(original)}: the F1 drop "
                   "compares different sentences, not the attack alone (an attacked version of a test set has one "
                   "sentence per original sentence, in its order)", stacklevel=3)
        return
    # Every attack (entity, context, typo, case, cross-type) keeps each sentence's number of
    # gold entities: pairs that differ in it are not an original sentence and its attack.
    n = len(original)
    entities = [np.bincount(batch.span_arrays("gold")[0], minlength=n) for batch in (original, attacked)]
    holding = np.flatnonzero((entities[0] > 0) | (entities[1] > 0))
    apart = holding[entities[0][holding] != entities[1][holding]]
    if len(apart) > len(holding) / 10:
        warn_input(f"{len(apart)} of the {len(holding)} sentences with entities have another number of gold entities "
                   f"in the attacked set than in the original (the first: sentence {apart[0] + 1}), which no attack "
                   "changes: are the two sets in the same order? The F1 drop pairs them sentence by sentence",
                   stacklevel=3)


def counts(original: Batch, attacked: Batch):
    """Per-sentence counts of the P/R/F1 keys of both sets, the drops and the category shares
    (``uncertainty.Counts``).  An attacked set with one sentence per original sentence is
    resampled with it, sentence by sentence; otherwise the two sets are resampled separately."""
    _check(original, attacked)
    paired = len(original) == len(attacked)
    n = len(original) if paired else len(original) + len(attacked)
    if paired:
        table = original.counts()
        rows = {"original": np.arange(len(original)), "attacked": np.arange(len(attacked))}
    else:
        from ..core.uncertainty import Counts
        table = Counts(np.concatenate([original.sentence_keys, attacked.sentence_keys]),
                       np.repeat([0, 1], [len(original), len(attacked)]))
        rows = {"original": np.arange(len(original)), "attacked": len(original) + np.arange(len(attacked))}
    for name, batch in zip(VERSIONS, (original, attacked)):
        place = rows[name]
        gold_sentences, pred_sentences = place[batch.span_arrays("gold")[0]], place[batch.span_arrays("pred")[0]]
        table.prf(per_sentence(gold_sentences, n, matched(batch)), per_sentence(gold_sentences, n),
                  per_sentence(pred_sentences, n) + np.bincount(place, weights=unplaced_per_sentence(batch), minlength=n),
                  keys=[f"{key}_{name}" for key in ("precision", "recall", "f1")])
        entity_sentences, categories, _ = _analysis(batch)
        sentences = place[np.array(entity_sentences, dtype=np.int64)]
        labels = np.array(categories, dtype=object)
        for category in CATEGORIES:
            table.ratio(f"{name}_{category}", per_sentence(sentences, n, labels == category),
                        per_sentence(sentences, n))
    table.derive("f1_drop", "diff", "f1_original", "f1_attacked")
    table.derive("f1_drop_relative", "relative", "f1_drop", "f1_original")
    return table


def rockner(original: Batch, attacked: Batch, detailed: bool = False, ci: bool = False, n_resamples: int = 1000,
            confidence: float = 0.95, seed: int = 0, unit: str = "sentence") -> dict:
    """Scores of one system on the original and the attacked test set.

    Flat keys: ``{precision,recall,f1}_{original,attacked}``, ``f1_drop`` (original -
    attacked), ``f1_drop_relative`` (drop / original F1), ``n_original`` / ``n_attacked``
    (gold entities) and, per error category, ``{original,attacked}_{category}``: its share of
    the gold entities.  ``detailed`` adds ``errors`` (counts) and ``confusion``
    (``original``, ``attacked`` and ``difference`` = attacked - original).
    """
    _check(original, attacked)
    result: Dict[str, object] = {}
    analyses = {}
    for name, batch in zip(VERSIONS, (original, attacked)):
        scores = span_scores(batch)
        for key in ("precision", "recall", "f1"):
            result[f"{key}_{name}"] = scores[key]
        analyses[name] = error_analysis(batch)
        result.update({f"{key}_{name}": value for key, value in input_counts(batch, detailed).items()})
    result["f1_drop"] = result["f1_original"] - result["f1_attacked"]
    result["f1_drop_relative"] = ratio(result["f1_drop"], result["f1_original"])
    for name in VERSIONS:
        tally = analyses[name][0]
        total = sum(tally.values())
        result[f"n_{name}"] = total
        for category in CATEGORIES:
            result[f"{name}_{category}"] = ratio(tally[category], total)
    if ci:
        result = with_intervals(result, counts(original, attacked), n_resamples, confidence, seed, unit)
    if detailed:
        result["errors"] = {name: analyses[name][0] for name in VERSIONS}
        tables = {name: analyses[name][1] for name in VERSIONS}
        result["confusion"] = {**tables, "difference": confusion_difference(tables["attacked"], tables["original"])}
    return result


def split_versions(tokens: List, references: List, predictions: List, versions: List[str],
                   documents: Optional[List] = None) -> Tuple[Batch, Batch]:
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
                             [predictions[i] for i in rows], None if documents is None else [documents[i] for i in rows]))
    return batches[0], batches[1]
