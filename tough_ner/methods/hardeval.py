"""HardEval (Bernier-Colborne & Langlais): token error rates on hard test tokens.

Subsets of test tokens, by the token string (exact, case-sensitive) and its gold label:
  unseen-I / unseen-O  the string never occurs in training; gold entity / gold O.
  diff-I   gold entity, seen, and its training entity count < its O count (tie: not diff).
  diff-O   gold O, seen, and its training O count < its entity count (tie: not diff).
  diff-E   gold type X, the word is usually an entity (entity count >= O count), and X is
           absent or less frequent than its most frequent training type (tie: not diff).
  strict   the gold IO label (diff-E: the gold type) never occurs with the word in training.
A token is an error when its predicted label differs from its gold label after both
sequences are re-written in one scheme (BILOU by default, with types).
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..core.batch import Batch
from ..core.checks import check_inputs
from ..core.corpus import factorize
from ..core.scoring import input_counts, ratio
from ..core.stats import TrainStats
from ..core.uncertainty import per_sentence, with_intervals

SUBSETS = ("unseen_I", "unseen_O", "diff_I", "diff_O", "diff_E")
GROUPS = {"unseen": ("unseen_I", "unseen_O"), "diff": ("diff_I", "diff_O", "diff_E")}
ERROR_SCHEMES = ("bilou", "bio", "io")


def classify(stats: TrainStats, tokens: Sequence[str], gold_types: Sequence[str],
             strict: bool = False, ids: Optional[np.ndarray] = None) -> Dict[str, np.ndarray]:
    """Boolean masks of the HardEval subsets over flat tokens.

    ``gold_types`` holds each token's gold entity type, or ``"O"``; ``ids`` the tokens'
    vocabulary ids where already known (``Batch.token_ids``).
    """
    names, type_ids, _ = factorize(gold_types)
    return classify_ids(stats, stats.ids(tokens) if ids is None else ids, type_ids, names, strict)


def classify_ids(stats: TrainStats, ids: np.ndarray, type_ids: np.ndarray, type_names: Sequence[str],
                 strict: bool = False) -> Dict[str, np.ndarray]:
    """``classify`` from the tokens' vocabulary ids (-1: unseen) and gold types given as
    indices into ``type_names`` (index -1 is "O", as in ``Batch.token_types``).  Each
    training count is gathered only for the tokens whose subset needs it."""
    entity = np.array([name != "O" for name in type_names] + [False])
    column = np.array([stats.label_index.get(name, -1) for name in type_names] + [-1], dtype=np.int64)
    gold_entity = entity[type_ids]
    seen = ids >= 0
    where = np.flatnonzero(seen)
    known = ids[where]
    counts = stats.label_counts  # sparse: each count is read for the tokens that need it
    o_count = counts.get(known, 0)
    entity_count = stats.token_totals[known] - o_count
    entity_here = gold_entity[where]
    if strict:
        diff_i, diff_o = entity_count == 0, o_count == 0
    else:
        diff_i, diff_o = entity_count < o_count, o_count < entity_count
    # diff-E: gold entity tokens that are usually entities; their gold type's count.
    chosen = np.flatnonzero(entity_here & (entity_count >= o_count))
    gold_column = column[type_ids[where[chosen]]]
    gold_type_count = np.where(gold_column > 0, counts.get(known[chosen], np.maximum(gold_column, 0)), 0)
    diff_e = gold_type_count == 0 if strict else gold_type_count < counts.entity_max[known[chosen]]
    masks = {"unseen_I": ~seen & gold_entity, "unseen_O": ~seen & ~gold_entity}
    for name, mask in (("diff_I", entity_here & diff_i), ("diff_O", ~entity_here & diff_o)):
        masks[name] = np.zeros(len(ids), dtype=bool)
        masks[name][where[mask]] = True
    masks["diff_E"] = np.zeros(len(ids), dtype=bool)
    masks["diff_E"][where[chosen[diff_e]]] = True
    return {name: masks[name] for name in SUBSETS}


def token_errors(batch: Batch, error: str = "bilou") -> np.ndarray:
    """Whether each flat token's prediction differs from its gold label in ``error`` scheme
    (``bilou`` or ``bio`` with types; ``io``: entity or not, types ignored)."""
    if error not in ERROR_SCHEMES:
        raise ValueError(f"error={error!r}: use one of {', '.join(ERROR_SCHEMES)}")
    if not batch.has_predictions:
        raise ValueError("HardEval needs predictions")
    if error == "io":
        return (batch.token_labels("gold", "io") > 0) != (batch.token_labels("pred", "io") > 0)
    return batch.token_labels("gold", error) != batch.token_labels("pred", error)


def gold_types(batch: Batch) -> List[str]:
    """Each flat token's gold type or ``"O"``."""
    names = np.array(batch.types + ["O"], dtype=object)
    return names[batch.token_types("gold")].tolist()  # type id -1 picks the trailing "O"


ORDER = ("all", "unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E")


def subset_masks(masks: Dict[str, np.ndarray], n_tokens: int) -> Dict[str, np.ndarray]:
    """Every reported subset in ``ORDER``: all tokens, the groups and the subsets."""
    every = dict(masks, all=np.ones(n_tokens, dtype=bool))
    for group, members in GROUPS.items():
        every[group] = np.logical_or.reduce([masks[m] for m in members])
    return {name: every[name] for name in ORDER}


def scores(masks: Dict[str, np.ndarray], errors: np.ndarray, where: Optional[np.ndarray] = None) -> Dict[str, float]:
    """The flat HardEval keys for tokens selected by ``where`` (all by default)."""
    group = np.zeros(len(errors), dtype=np.int64) if where is None else np.where(where, 0, -1)
    return grouped_scores(masks, errors, group, 1)[0]


def grouped_scores(masks: Dict[str, np.ndarray], errors: np.ndarray, group: np.ndarray, n: int
                   ) -> List[Dict[str, float]]:
    """The flat HardEval keys of each of ``n`` token groups (``group``: each token's group, -1
    for none), counted in one pass: time linear in tokens + groups."""
    keep = group >= 0
    subsets = subset_masks(masks, len(errors))
    group, errors = group[keep], errors[keep]
    sizes = {name: np.bincount(group[mask[keep]], minlength=n) for name, mask in subsets.items()}
    wrong = {name: np.bincount(group[mask[keep] & errors], minlength=n) for name, mask in subsets.items()}
    results = []
    for k in range(n):
        ter = {name: ratio(int(wrong[name][k]), int(sizes[name][k])) for name in ORDER}
        result = {"hardeval": (ter["unseen"] + ter["diff"]) / 2}  # NaN if either is NaN
        result.update({f"ter_{name}": ter[name] for name in ORDER})
        result.update({f"n_{name}": int(sizes[name][k]) for name in ORDER})
        results.append(result)
    return results


def error_breakdown(masks: Dict[str, np.ndarray], errors: np.ndarray) -> Dict[str, dict]:
    """The paper's Table 10: the share of all token errors on unseen, diff and the other
    tokens, beside each part's share of the test tokens."""
    unseen = masks["unseen_I"] | masks["unseen_O"]
    diff = masks["diff_I"] | masks["diff_O"] | masks["diff_E"]
    parts = {"unseen": unseen, "diff": diff, "other": ~(unseen | diff)}
    n_errors, n_tokens = int(np.count_nonzero(errors)), len(errors)
    return {name: {"errors": int(np.count_nonzero(mask & errors)), "tokens": int(np.count_nonzero(mask)),
                   "share_of_errors": ratio(int(np.count_nonzero(mask & errors)), n_errors),
                   "share_of_tokens": ratio(int(np.count_nonzero(mask)), n_tokens)}
            for name, mask in parts.items()}


def _masks(stats: TrainStats, batch: Batch, strict: bool) -> Dict[str, np.ndarray]:
    batch.require_flat("HardEval")
    check_inputs(stats, batch)
    return batch.memo(("hardeval", strict), stats,
                      lambda: classify_ids(stats, batch.token_ids(stats), batch.token_types("gold"), batch.types,
                                           strict))


def counts(stats: TrainStats, batch: Batch, strict: bool = False, error: str = "bilou"):
    """Per-sentence errors and sizes of every TER key (``uncertainty.Counts``)."""
    masks = _masks(stats, batch, strict)
    errors = token_errors(batch, error)
    table = batch.counts()
    sentence, n = batch.token_sentences, len(batch)
    subsets = subset_masks(masks, len(errors))
    for name, mask in subsets.items():
        table.ratio(f"ter_{name}", per_sentence(sentence, n, mask & errors), per_sentence(sentence, n, mask))
    table.derive("hardeval", "mean", "ter_unseen", "ter_diff",
                 size=per_sentence(sentence, n, subsets["unseen"] | subsets["diff"]))
    return table


def hardeval(stats: TrainStats, batch: Batch, strict: bool = False, error: str = "bilou",
             detailed: bool = False, ci: bool = False, n_resamples: int = 1000, confidence: float = 0.95,
             seed: int = 0, unit: str = "sentence") -> dict:
    """HardEval scores of predictions against gold, with training statistics ``stats``.
    ``ci``: add ``<key>_ci_low`` / ``<key>_ci_high`` to every rate (``tough_ner.uncertainty``)."""
    masks = _masks(stats, batch, strict)
    errors = token_errors(batch, error)
    result = scores(masks, errors)
    if ci:
        result = with_intervals(result, counts(stats, batch, strict, error), n_resamples, confidence, seed, unit)
    if detailed:
        types, tokens = gold_types(batch), batch.flat_tokens
        names, group = np.unique(np.array(types, dtype=object), return_inverse=True)
        per_type = grouped_scores(masks, errors, group.astype(np.int64), len(names))
        result["per_type"] = dict(zip(names.tolist(), per_type))
        result["hard_tokens"] = hard_tokens(stats, tokens, types, masks, errors)
        result["error_breakdown"] = error_breakdown(masks, errors)
    result.update(input_counts(batch, detailed))  # hallucinated mentions have no token: they change no TER
    return result


def hard_tokens(stats: TrainStats, tokens: Sequence[str], types: Sequence[str],
                masks: Dict[str, np.ndarray], errors: np.ndarray) -> Dict[str, List[dict]]:
    """Per subset, the distinct hard tokens, most frequent first, with their gold label,
    test count, errors and training label counts."""
    table = {}
    for name, mask in masks.items():
        count: Counter = Counter()
        wrong: Counter = Counter()
        for i in np.flatnonzero(mask):
            key = (tokens[i], types[i])
            count[key] += 1
            wrong[key] += int(errors[i])
        rows = []
        for (token, gold), n in sorted(count.items(), key=lambda item: (-item[1], item[0])):
            rows.append({"token": token, "gold": gold, "n": n, "errors": wrong[(token, gold)],
                         "train": stats.train_counts(token)})
        table[name] = rows
    return table


def kfold_hard_tokens(tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]], k: int = 5,
                      seed: int = 0, strict: bool = False) -> List[List[Optional[str]]]:
    """Hard tokens inside a training set (the paper's recommendation): sentences are
    shuffled with ``seed`` and split into ``k`` folds; each fold is classified against the
    statistics of the other folds.  Returns, per sentence and token, the subset name
    (one of ``SUBSETS``) or None."""
    if not 2 <= k <= len(tokens):
        raise ValueError(f"k={k}: need 2 <= k <= number of sentences ({len(tokens)})")
    import random  # here: only this function shuffles

    order = list(range(len(tokens)))
    random.Random(seed).shuffle(order)
    folds = [sorted(order[f::k]) for f in range(k)]
    result: List[List[Optional[str]]] = [[] for _ in tokens]
    for f, fold in enumerate(folds):
        rest = sorted(i for g, other in enumerate(folds) if g != f for i in other)
        stats = TrainStats.from_lists([tokens[i] for i in rest], [tags[i] for i in rest])
        batch = Batch([tokens[i] for i in fold], [tags[i] for i in fold])
        masks = classify(stats, batch.flat_tokens, gold_types(batch), strict)
        names = np.full(len(batch.flat_tokens), None, dtype=object)
        for name, mask in masks.items():
            names[mask] = name
        for sentence, start, end in zip(fold, batch.offsets[:-1], batch.offsets[1:]):
            result[sentence] = list(names[start:end])
    return result
