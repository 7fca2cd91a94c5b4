"""Interpretable evaluation (Fu, Liu & Neubig): F1 per bucket of an entity attribute.

Attributes of an entity (gold, or predicted for precision):
  eLen  tokens in the entity.          sLen  tokens in its sentence.
  eDen  gold entities in the sentence / sLen.
  oDen  sentence tokens absent from the training vocabulary / sLen.
  eFre  training mentions with the entity's text (any type) / all training mentions.
  eCon  training occurrences of the entity's token sequence annotated as exactly this span
        with the entity's type / all its training occurrences (annotated or not); 0 if none.
  tag   the entity type.
and of each token of an entity (items are (token, type) pairs):
  tFre  training occurrences of the token / all training tokens.
  tCon  training occurrences of the token labelled with the entity's type / all of them.
Every value depends only on (sentence, span, type), so a correct prediction always falls in
the bucket of the gold item it matches.

``match=`` (``tough_ner.matching``): ``"strict"`` (default) counts an entity right when the
other side has the same span and type.  Under ``"exact"``, ``"partial"`` and ``"type"`` each
gold and predicted entity gets its credit from that scheme's one-to-one matching (1 or 0, 0.5
for a partial match): bucket recall = gold credits / gold entities, precision = predicted
credits / predicted entities, so a prediction and the gold entity it matches may sit in
different buckets.  Token items (tFre, tCon) are right when the other side labels the token
with the same type (``strict``, ``type``) or with any type (``exact``, ``partial``).

Bucketing: 0 (and 1 for the consistencies) get special buckets that always exist; the rest
splits into equal-count buckets cut on gold values without splitting a value; the first
and last regular buckets are open, so every item, gold or predicted, has exactly one bucket.
"""
from __future__ import annotations

import math
from itertools import repeat
from typing import Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from .._util import no_gc
from ..core.batch import Batch, span_positions
from ..core.checks import check_inputs
from ..core.matching import check_match, credits, outcomes, _table
from ..core.scoring import (f1 as harmonic_f1, input_counts, matched, prf, ratio, span_scores, unplaced_per_sentence,
                      unplaced_types)
from ..core.stats import TrainStats
from ..core.uncertainty import intervals, per_sentence, with_intervals

ATTRIBUTES = ("eLen", "sLen", "eDen", "oDen", "eFre", "tFre", "eCon", "tCon", "tag")
TOKEN_LEVEL = ("tFre", "tCon")
# Values with a bucket of their own, in front (0) and at the end (1).
SPECIAL = {"eCon": (0.0, 1.0), "tCon": (0.0, 1.0), "eFre": (0.0,), "tFre": (0.0,), "oDen": (0.0,),
           "sLen": (), "eDen": (), "eLen": ()}
NumberOfBuckets = Union[int, Mapping[str, int]]
# More buckets than this leave a handful of entities in each and grow the bootstrap tables
# without bound (100,000 buckets took 22 GB); every interface checks it here.
MAX_BUCKETS = 100


# ---- attribute values ------------------------------------------------------------------
def attribute_values(stats: TrainStats, batch: Batch, lowercase: bool = False,
                     match: str = "strict") -> Dict[str, dict]:
    """``{"gold": items, "pred": items}``; items hold, per level (``"span"``, ``"token"``),
    the attribute arrays, ``sentence`` (for resampling) and ``correct`` (the item is also
    an item of the other side; under a ``match`` other than strict, its credit)."""
    batch.require_flat("bucket F1")  # token attributes need one tag per token
    with no_gc():  # many small lists: the collector would rescan the caller's data (half the time)
        return _attribute_values(stats, batch, lowercase, match)


def _attribute_values(stats: TrainStats, batch: Batch, lowercase: bool, match: str) -> Dict[str, dict]:
    if lowercase:
        stats = stats.lowercased()
        flat = [token.lower() for token in batch.flat_tokens]
        ids = stats.ids(flat)
    else:
        flat = batch.flat_tokens
        ids = batch.token_ids(stats)
    lengths = np.diff(batch.offsets)
    per_token_sentence = np.repeat(np.arange(len(lengths)), lengths)
    size = np.maximum(lengths, 1)
    gold_sentences = batch.span_arrays("gold")[0]
    sentence_values = {
        "sLen": lengths.astype(float),
        "eDen": np.bincount(gold_sentences, minlength=len(lengths)) / size,
        "oDen": np.bincount(per_token_sentence, weights=ids < 0, minlength=len(lengths)) / size,
    }
    seen = ids >= 0
    totals = np.where(seen, stats.token_totals[ids], 0)
    type_columns = np.array([stats.label_index.get(name, -1) for name in batch.types] + [-1], dtype=np.int64)

    gold_token_types, pred_token_types = batch.token_types("gold"), batch.token_types("pred")
    credit = None if match == "strict" else dict(zip(("gold", "pred"), credits(batch, match)))
    mentions = stats.mention_table
    counts_of, sequences, texts_known = {}, [], []
    for which in ("gold", "pred"):
        start, end, types = batch.span_arrays(which)[1:]
        bounds = list(map(slice, start.tolist(), end.tolist()))
        texts = list(map(" ".join, map(flat.__getitem__, bounds)))
        row = np.fromiter(map(mentions.rows.get, texts, repeat(-1)), dtype=np.int64, count=len(texts))
        text_counts = np.zeros(len(texts), dtype=np.int64)
        text_counts[row >= 0] = mentions.totals[row[row >= 0]]
        # eCon is 0 unless (text, type) is a training mention, whatever the occurrences: only
        # those spans are counted (from a table built once; shareable statistics hold just it).
        column = type_columns[types]
        typed = (row >= 0) & (column >= 0)
        annotated = np.zeros(len(texts), dtype=np.int64)
        annotated[typed] = mentions.counts.get(row[typed], column[typed])
        known = np.flatnonzero(annotated > 0).tolist()
        counts_of[which] = text_counts, annotated, known
        sequences += [flat[bounds[i]] for i in known]
        texts_known += [texts[i] for i in known]
    # Both sides in one lookup: a first one counts only the texts it asks for.
    counted = stats.occurrences(sequences, texts_known)
    sides = {}
    for which in ("gold", "pred"):
        sentence, start, end, types = batch.span_arrays(which)
        text_counts, annotated, known = counts_of[which]
        occurrences = np.zeros(len(annotated), dtype=np.int64)
        occurrences[known], counted = counted[:len(known)], counted[len(known):]
        span = {
            "eLen": (end - start).astype(float),
            **{name: values[sentence] for name, values in sentence_values.items()},
            "eFre": _share(text_counts, stats.n_mentions),
            "eCon": _share(annotated, occurrences),
            "tag": types,
            "sentence": sentence,
            "correct": credit[which] if credit is not None else matched(batch, which),
        }
        width = end - start
        positions = span_positions(start, end)
        token_types = np.repeat(types, width)
        column = type_columns[token_types]
        labelled = np.where(seen[positions] & (column >= 0),
                            stats.label_counts.get(ids[positions], np.maximum(column, 0)), 0)
        other = pred_token_types if which == "gold" else gold_token_types
        token = {
            "tFre": _share(totals[positions], stats.n_tokens),
            "tCon": _share(labelled, totals[positions]),
            "sentence": per_token_sentence[positions],
            "correct": (other[positions] >= 0 if match in ("exact", "partial") else
                        other[positions] == token_types),
        }
        sides[which] = {"span": span, "token": token}
    return sides


def _share(numerator, denominator) -> np.ndarray:
    """numerator / denominator elementwise, 0 where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.broadcast_to(np.asarray(denominator, dtype=float), numerator.shape)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)


def _level(attribute: str) -> str:
    return "token" if attribute in TOKEN_LEVEL else "span"


# ---- bucketing -------------------------------------------------------------------------
class Bucketing:
    """The buckets of one numeric attribute: special values, then regular buckets
    ``(cut[k-1], cut[k]]``, the first open below and the last open above."""

    def __init__(self, attribute: str, cuts: Sequence[float], special: Sequence[float], low: float, high: float,
                 labels: Optional[List[List[float]]] = None):
        self.attribute = attribute
        self.cuts = np.asarray(cuts, dtype=float)
        self.special = tuple(special)
        self.low, self.high = low, high
        self.labels = labels

    @property
    def n_regular(self) -> int:
        return len(self.cuts) + 1

    def __len__(self) -> int:
        return len(self.special) + self.n_regular

    def intervals(self) -> List[List[float]]:
        if self.labels is not None:
            return self.labels
        bounds = [self.low, *self.cuts.tolist(), self.high]
        regular = [[bounds[k], bounds[k + 1]] for k in range(self.n_regular)]
        front = [[value, value] for value in self.special if value == 0.0]
        back = [[value, value] for value in self.special if value == 1.0]
        return front + regular + back

    def assign(self, values: np.ndarray) -> np.ndarray:
        """Bucket index of each value."""
        values = np.asarray(values, dtype=float)
        front = 1 if 0.0 in self.special else 0
        index = front + np.searchsorted(self.cuts, values, side="left")
        if front:
            index[values == 0.0] = 0
        if 1.0 in self.special:
            index[values == 1.0] = len(self) - 1
        return index


def equal_count_cuts(values: np.ndarray, n_regular: int, high: float = math.inf) -> np.ndarray:
    """Cut after the first distinct value whose cumulative count reaches k * N / m
    (k = 1 .. m-1); a value is never split.  No values: all cuts at ``high`` (the upper
    bound), so every item goes to the first regular bucket."""
    if len(values) == 0:
        return np.full(n_regular - 1, high)
    distinct, counts = np.unique(values, return_counts=True)
    cumulative = np.cumsum(counts) * n_regular
    return distinct[np.searchsorted(cumulative, np.arange(1, n_regular) * len(values), side="left")]


def make_bucketing(attribute: str, gold_values: np.ndarray, n_buckets: int = 4,
                   edges: Optional[Sequence[float]] = None) -> Bucketing:
    """Buckets of ``attribute`` from the gold values (``edges``: user-given cuts of the
    regular buckets, keeping the special ones)."""
    special = SPECIAL[attribute]
    low = 0.0 if 0.0 in special else -math.inf
    high = 1.0 if 1.0 in special else math.inf
    if edges is not None:
        cuts = np.asarray(edges, dtype=float)
        if cuts.ndim != 1 or np.any(np.diff(cuts) <= 0) or np.any(np.isnan(cuts)):
            raise ValueError(f"edges for {attribute} must be increasing numbers, got {list(edges)!r}")
        if len(cuts) and (cuts[0] <= low or cuts[-1] >= high):
            raise ValueError(f"edges for {attribute} must lie strictly between {low} and {high}")
        return Bucketing(attribute, cuts, special, low, high)
    n_regular = n_buckets - len(special)
    if n_regular < 1:
        raise ValueError(f"{attribute} needs n_buckets >= {len(special) + 1} ({len(special)} special), got {n_buckets}")
    if attribute == "eLen":  # 1, 2, ..., n-1 and >= n tokens
        labels = [[float(k), float(k)] for k in range(1, n_buckets)] + [[float(n_buckets), math.inf]]
        return Bucketing(attribute, np.arange(1, n_buckets, dtype=float), (), 0.0, math.inf, labels)
    regular = gold_values[~np.isin(gold_values, special)] if special else gold_values
    return Bucketing(attribute, equal_count_cuts(regular, n_regular, high), special, low, high)


def interval_text(attribute: str, interval) -> str:
    """A bucket's interval as people read it: ``LOC``, ``0``, ``(0.1, 0.25]``, ``>= 4``."""
    if isinstance(interval, str):
        return interval
    low, high = interval
    if low == high:
        return f"{low:.4g}"
    if attribute == "eLen" and high == math.inf:
        return f">= {low:.4g}"
    closing = ")" if high == math.inf or (attribute in ("eCon", "tCon") and high == 1.0) else "]"
    return f"({low:.4g}, {high:.4g}{closing}"


def _options(value, attribute, default):
    return value.get(attribute, default) if isinstance(value, Mapping) else value


# ---- scoring ---------------------------------------------------------------------------
def _bucket_tables(stats: TrainStats, batch: Batch, n_buckets: NumberOfBuckets, edges, lowercase: bool,
                   match: str = "strict"):
    """(attribute values of both sides, bucket tables, (gold, pred) bucket index per attribute)."""
    batch.require_flat("bucket F1")  # before the input checks' warnings
    check_inputs(stats, batch, lowercase)
    sides = batch.memo(("attribute_values", lowercase, match), stats,
                       lambda: attribute_values(stats, batch, lowercase, match))
    tables, assignments = {}, {}
    for attribute in ATTRIBUTES:
        level = _level(attribute)
        gold, pred = sides["gold"][level], sides["pred"][level]
        if attribute == "tag":
            n, intervals = len(batch.types), list(batch.types)
            gold_index, pred_index = gold["tag"], pred["tag"]
        else:
            bucketing = make_bucketing(attribute, gold[attribute], _options(n_buckets, attribute, 4),
                                       (edges or {}).get(attribute))
            n, intervals = len(bucketing), bucketing.intervals()
            gold_index, pred_index = bucketing.assign(gold[attribute]), bucketing.assign(pred[attribute])
        assignments[attribute] = (gold_index, pred_index)
        n_gold = np.bincount(gold_index, minlength=n)
        n_pred = np.bincount(pred_index, minlength=n)
        if match == "strict":
            n_correct = np.bincount(pred_index[pred["correct"]], minlength=n)
            tables[attribute] = [{"interval": interval, "n_gold": int(g), "n_pred": int(p), "n_correct": int(c),
                                  **prf(int(c), int(g), int(p))}
                                 for interval, g, p, c in zip(intervals, n_gold, n_pred, n_correct)]
        else:  # credits: precision from the predictions', recall from the gold entities'
            n_correct = np.bincount(pred_index, weights=pred["correct"], minlength=n)
            n_found = np.bincount(gold_index, weights=gold["correct"], minlength=n)
            tables[attribute] = [{"interval": interval, "n_gold": int(g), "n_pred": int(p), "n_correct": float(c),
                                  "n_correct_gold": float(cg), **_credit_prf(c, cg, g, p)}
                                 for interval, g, p, c, cg in zip(intervals, n_gold, n_pred, n_correct, n_found)]
    return sides, tables, assignments


def _credit_prf(pred_credit: float, gold_credit: float, n_gold: int, n_pred: int) -> Dict[str, float]:
    precision, recall = ratio(float(pred_credit), int(n_pred)), ratio(float(gold_credit), int(n_gold))
    return {"precision": precision, "recall": recall, "f1": harmonic_f1(precision, recall, int(n_gold), int(n_pred))}


def bucket_key(attribute: str, index: int, interval, measure: str = "f1") -> str:
    """The flat key of a bucket: ``tag_LOC_f1`` for a type (named, so a spurious predicted type
    shifts no other key), ``eLen_0_f1`` (positional) for a value bucket; ``measure`` is f1,
    precision or recall."""
    return f"tag_{interval}_{measure}" if attribute == "tag" else f"{attribute}_{index}_{measure}"


def _counts(batch: Batch, sides, tables, assignments, match: str = "strict"):
    table = batch.counts()
    n = len(batch)

    def credit(items, where=None):  # per sentence, the items' credits (strict: how many are right)
        where = np.ones(len(items["sentence"]), dtype=bool) if where is None else where
        return np.bincount(items["sentence"][where], weights=items["correct"][where].astype(float), minlength=n)

    strict = match == "strict"
    gold, pred = sides["gold"]["span"], sides["pred"]["span"]
    # hallucinated mentions: predictions of the overall F1, in no bucket
    predicted = per_sentence(pred["sentence"], n) + unplaced_per_sentence(batch)
    table.prf(credit(gold) if strict else credit(pred), per_sentence(gold["sentence"], n), predicted,
              found=None if strict else credit(gold))
    for attribute in ATTRIBUTES:
        level = _level(attribute)
        gold, pred = sides["gold"][level], sides["pred"][level]
        gold_index, pred_index = assignments[attribute]
        # Every bucket's counts from one pass over the items, kept as (bucket, sentence) entries:
        # a column per bucket and sentence would be types x sentences for the tag buckets.
        table.prf_groups([[bucket_key(attribute, i, row["interval"], name) for name in ("precision", "recall", "f1")]
                          for i, row in enumerate(tables[attribute])],
                         (pred_index, pred["sentence"], pred["correct"]), (gold_index, gold["sentence"], None),
                         (pred_index, pred["sentence"], None),
                         found=None if strict else (gold_index, gold["sentence"], gold["correct"]))
    return table


def counts(stats: TrainStats, batch: Batch, n_buckets: NumberOfBuckets = 4,
           edges: Optional[Mapping[str, Sequence[float]]] = None, lowercase: bool = False, match: str = "strict"):
    """Per-sentence correct / gold / predicted counts of the overall F1 and of every bucket
    (``uncertainty.Counts``: keys ``f1``, and each bucket's ``bucket_key`` with its precision and recall)."""
    if not batch.has_predictions:
        raise ValueError("bucket_f1 needs predictions")
    check_options(n_buckets, edges, 0, 0.95)
    check_match(match)
    return _counts(batch, *_bucket_tables(stats, batch, n_buckets, edges, lowercase, match), match)


def bucket_f1(stats: TrainStats, batch: Batch, n_buckets: NumberOfBuckets = 4,
              edges: Optional[Mapping[str, Sequence[float]]] = None, lowercase: bool = False,
              detailed: bool = False, bootstrap: int = 1000, confidence: float = 0.95, seed: int = 0,
              ci: bool = False, n_resamples: Optional[int] = None, unit: str = "sentence",
              match: str = "strict") -> dict:
    """F1 per attribute bucket: flat ``{attr}_{i}_f1`` keys (``tag_{type}_f1`` for types) and
    overall ``f1``; with
    ``detailed``, the ``buckets`` tables and ``diagnostics`` (self-diagnosis, Spearman and
    std of bucket F1, mean attribute value ζ, bootstrap intervals of ``bootstrap`` resamples
    of sentences).  ``ci``: ``<key>_ci_low`` / ``<key>_ci_high`` for every flat F1 key, with
    ``n_resamples`` resamples (default: ``bootstrap``, or 1000).  ``match`` picks the matching
    scheme (module docstring)."""
    if not batch.has_predictions:
        raise ValueError("bucket_f1 needs predictions")
    check_options(n_buckets, edges, bootstrap, confidence)
    check_match(match)
    sides, tables, assignments = _bucket_tables(stats, batch, n_buckets, edges, lowercase, match)
    if match == "strict":
        result = {"f1": span_scores(batch)["f1"]}
    else:
        result = {"f1": _table(*outcomes(batch, match), len(unplaced_types(batch)))["f1"]}
    for attribute, rows in tables.items():
        result.update({bucket_key(attribute, i, row["interval"]): row["f1"] for i, row in enumerate(rows)})
    table = None
    if ci or (detailed and bootstrap):
        table = _counts(batch, sides, tables, assignments, match)
    if ci:
        result = with_intervals(result, table, n_resamples or bootstrap or 1000, confidence, seed, unit)
    if detailed:
        result["buckets"] = tables
        diagnostics = {"self": self_diagnosis(tables), "model_wise": model_wise(tables),
                       "zeta": {a: _mean(sides["gold"][_level(a)][a]) for a in ATTRIBUTES if a != "tag"}}
        if bootstrap:
            reported = ["f1"] + [bucket_key(attribute, i, row["interval"])
                                 for attribute, rows in tables.items() for i, row in enumerate(rows)]
            ranges = intervals(table, reported, bootstrap, confidence, seed, unit)
            diagnostics["bootstrap"] = {
                attribute: [ranges[bucket_key(attribute, i, row["interval"])] for i, row in enumerate(rows)]
                for attribute, rows in tables.items()}
            diagnostics["bootstrap"]["f1"] = ranges["f1"]
        result["diagnostics"] = diagnostics
    result.update(input_counts(batch, detailed))
    return result


def check_options(n_buckets, edges, bootstrap, confidence) -> None:
    """Raise ``ValueError`` for options ``bucket_f1`` cannot use."""
    numeric = ATTRIBUTES[:-1]
    if isinstance(n_buckets, Mapping) and set(n_buckets) - set(numeric):
        raise ValueError(f"n_buckets names unknown attribute(s) {sorted(set(n_buckets) - set(numeric))}")
    if edges is not None and (not isinstance(edges, Mapping) or set(edges) - set(numeric)):
        raise ValueError(f"edges must be {{attribute: [cuts]}} over {', '.join(numeric)}, got {edges!r}")
    for attribute in numeric:
        n = _options(n_buckets, attribute, 4)
        if not isinstance(n, int) or isinstance(n, bool):
            raise ValueError(f"n_buckets must be an int or {{attribute: int}}, got {n_buckets!r}")
        if n < len(SPECIAL[attribute]) + 1 and attribute not in (edges or {}):
            raise ValueError(f"{attribute} needs n_buckets >= {len(SPECIAL[attribute]) + 1} "
                             f"({len(SPECIAL[attribute])} special), got {n}")
        if n > MAX_BUCKETS:
            raise ValueError(f"n_buckets is at most {MAX_BUCKETS} per attribute, got {n} for {attribute}")
        cuts = (edges or {}).get(attribute)
        if cuts is not None and np.size(cuts) + 1 + len(SPECIAL[attribute]) > MAX_BUCKETS:
            raise ValueError(f"edges for {attribute} make {np.size(cuts) + 1 + len(SPECIAL[attribute])} buckets; "
                             f"at most {MAX_BUCKETS}")
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError(f"bootstrap must be a number of resamples >= 0, got {bootstrap!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values)) if len(values) else math.nan


# ---- diagnostics -----------------------------------------------------------------------
def _f1s(rows: Sequence[dict]) -> np.ndarray:
    return np.array([row["f1"] for row in rows], dtype=float)


def self_diagnosis(tables: Mapping[str, Sequence[dict]]) -> Dict[str, dict]:
    """Worst and best bucket (by F1, empty buckets ignored) per attribute and their gap."""
    diagnosis = {}
    for attribute, rows in tables.items():
        f1s = _f1s(rows)
        if np.all(np.isnan(f1s)):
            diagnosis[attribute] = {"worst": None, "worst_f1": math.nan, "best": None, "best_f1": math.nan,
                                    "gap": math.nan}
            continue
        worst, best = int(np.nanargmin(f1s)), int(np.nanargmax(f1s))
        diagnosis[attribute] = {"worst": worst, "worst_f1": float(f1s[worst]), "best": best,
                                "best_f1": float(f1s[best]), "gap": float(f1s[best] - f1s[worst])}
    return diagnosis


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation (average ranks for ties); NaN with < 2 points or a constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        return math.nan
    rx, ry = _ranks(x), _ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = math.sqrt(float(np.sum(rx * rx) * np.sum(ry * ry)))
    return float(np.sum(rx * ry) / denominator) if denominator else math.nan


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    distinct, first, counts = np.unique(values[order], return_index=True, return_counts=True)
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(first + (counts + 1) / 2, counts)
    return ranks


def model_wise(tables: Mapping[str, Sequence[dict]]) -> Dict[str, dict]:
    """Spearman correlation of bucket F1 with bucket order (NaN for the unordered ``tag``)
    and the standard deviation of bucket F1, over non-empty buckets."""
    measures = {}
    for attribute, rows in tables.items():
        f1s = _f1s(rows)
        keep = ~np.isnan(f1s)
        order = np.arange(len(f1s))[keep]
        measures[attribute] = {
            "spearman": math.nan if attribute == "tag" else spearman(order, f1s[keep]),
            "std": float(np.std(f1s[keep])) if keep.any() else math.nan}
    return measures


def compare(a: dict, b: dict) -> Dict[str, dict]:
    """Per-bucket F1 difference A - B of two detailed results on the same test set (tag
    buckets matched by type name; a type only one system predicts has a NaN difference).
    Descriptive only: which differences are significant is ``tough_ner.compare``'s job."""
    comparison = {}
    for attribute in ATTRIBUTES:
        rows_a, rows_b = a["buckets"][attribute], b["buckets"][attribute]
        if attribute == "tag":
            intervals = sorted({r["interval"] for r in rows_a} | {r["interval"] for r in rows_b})
            f1_a, f1_b = ({r["interval"]: r["f1"] for r in rows} for rows in (rows_a, rows_b))
            difference = np.array([f1_a.get(t, math.nan) - f1_b.get(t, math.nan) for t in intervals])
        else:
            intervals = [r["interval"] for r in rows_a]
            if intervals != [r["interval"] for r in rows_b]:
                raise ValueError(f"the two results bucket {attribute} differently: "
                                 "compare results on the same test set")
            difference = _f1s(rows_a) - _f1s(rows_b)
        comparison[attribute] = {"intervals": intervals, "difference": difference.tolist()}
    return comparison


def attribute_wise(results: Sequence[dict]) -> Dict[str, dict]:
    """ζ (mean attribute value over the test entities) and ρ (mean |Spearman| of bucket F1
    with bucket order over the systems) per attribute, from detailed results."""
    if not results:
        raise ValueError("attribute_wise needs at least one detailed result")
    table = {}
    for attribute in ATTRIBUTES[:-1]:
        rhos = [abs(r["diagnostics"]["model_wise"][attribute]["spearman"]) for r in results]
        table[attribute] = {"zeta": results[0]["diagnostics"]["zeta"][attribute],
                            "rho": float(np.mean(rhos))}
    return table


def _bucket_matrix(runs: Sequence[dict], attribute: str) -> np.ndarray:
    """[runs, buckets] F1 from flat results (keys ``{attribute}_{i}_f1``, ``tag_{type}_f1``)."""
    keys = [key for key in runs[0] if key.startswith(attribute + "_") and key.endswith("_f1")]
    return np.array([[run.get(key, math.nan) for key in keys] for run in runs], dtype=float)


def friedman(runs: Sequence[dict]) -> Dict[str, dict]:
    """Friedman test per attribute: do bucket F1s differ, with runs (seeds, datasets) as
    blocks?  Buckets empty in any run are left out.  Needs scipy (the ``diagnostics`` extra)."""
    stats = _scipy_stats()
    if len(runs) < 2:
        raise ValueError("the Friedman test needs at least 2 runs")
    table = {}
    for attribute in ATTRIBUTES:
        matrix = _bucket_matrix(runs, attribute)
        matrix = matrix[:, ~np.isnan(matrix).any(axis=0)]
        if matrix.shape[1] < 3:
            table[attribute] = {"statistic": math.nan, "p_value": math.nan, "n_buckets": matrix.shape[1]}
            continue
        test = stats.friedmanchisquare(*matrix.T)
        table[attribute] = {"statistic": float(test.statistic), "p_value": float(test.pvalue),
                            "n_buckets": matrix.shape[1]}
    return table


def wilcoxon(runs_a: Sequence[dict], runs_b: Sequence[dict]) -> Dict[str, dict]:
    """Wilcoxon signed-rank test per attribute on paired bucket F1s of two systems (runs
    paired in order, every non-empty bucket a pair).  Needs scipy."""
    stats = _scipy_stats()
    if len(runs_a) != len(runs_b) or not runs_a:
        raise ValueError(f"paired runs need equal, non-zero counts: {len(runs_a)} vs {len(runs_b)}")
    table = {}
    for attribute in ATTRIBUTES:
        a, b = _bucket_matrix(runs_a, attribute).ravel(), _bucket_matrix(runs_b, attribute).ravel()
        if a.shape != b.shape:
            raise ValueError(f"the two systems have different {attribute} buckets")
        keep = ~(np.isnan(a) | np.isnan(b))
        if not np.any(a[keep] != b[keep]):
            table[attribute] = {"statistic": math.nan, "p_value": math.nan, "n_pairs": int(keep.sum())}
            continue
        test = stats.wilcoxon(a[keep], b[keep])
        table[attribute] = {"statistic": float(test.statistic), "p_value": float(test.pvalue),
                            "n_pairs": int(keep.sum())}
    return table


def _scipy_stats():
    try:
        from scipy import stats
    except ImportError:
        raise ImportError("significance tests need scipy: pip install 'tough-ner[diagnostics]'") from None
    return stats

