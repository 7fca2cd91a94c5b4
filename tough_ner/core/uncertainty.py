"""One resampling engine for every method: confidence intervals and paired tests.

Each method describes its numbers as per-sentence counts (``Counts``): for each rate key a
numerator and a denominator per sentence (TER, recall, accuracy, share), for F1 the correct,
gold and predicted counts, and a few keys derived from others (the hardeval mean, a drop, a
gap).  A key's value is its formula applied to the summed counts, so resampling sentences is
one matrix product: resample weights (resamples x units) times the count matrix.

- Intervals: percentile bootstrap over units (sentences, or documents), resampled within
  strata (the NRB and WTS sets are resampled separately).
- Paired tests between systems scored on the same test set: the difference A - B with a
  paired bootstrap percentile interval (the same resamples for both systems), and the
  two-sided p-value of the paired randomisation test (each unit's counts as likely the one
  system's as the other's; ``randomisation``): exact over every swap of the units whose counts
  differ when at most ``EXACT_UNITS`` do, else its normal approximation, never floored by a
  number of draws.  ``adjust`` decides the verdicts of one family of tests (Holm).
- Fewer than ``MIN_UNITS`` resampling units give no interval (NaN).
- Units are put in a canonical order (a hash of each sentence's tokens and gold tags, then its
  counts) before resampling, so a result depends on the data and the seed only, not on the
  order of the sentences or on how ``evaluate`` split them across processes.
- Counts with very many mostly-zero columns (bucket F1: columns per bucket, a bucket per entity
  type) are kept as their nonzero entries (``Counts.prf_groups``, ``sparse.Entries``); once
  their dense tables would pass ``DENSE_CELLS``, they are resampled from the entries, a block
  of keys at a time, so memory and work follow the input, never sentences x types.  The same
  resamples and numbers (whole counts sum exactly in any order), but for the last bits of a
  normal approximation's p-value.  An average over types (four columns a type) is resampled a
  few resamples at a time and tested from its nonzero count differences; its exact test
  values only the types a swap moves.
"""
from __future__ import annotations

import math
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .rows import Keyed, Rows
from .sparse import Entries, compact_counts

UNITS = ("sentence", "document")
EXACT_UNITS = 16  # up to 2^16 swaps of differing units are enumerated; beyond, the normal approximation
MIN_UNITS = 20  # fewer resampling units give no interval (a percentile of a handful of units)
TEST_SHORT = "paired randomisation test (two-sided)"
TEST_NAME = (f"{TEST_SHORT}: exact over every swap of the units whose counts differ when at most {EXACT_UNITS} do, "
             "else its normal approximation (delta method); paired bootstrap percentile interval")
INTERVAL_NAME = "percentile bootstrap"
SMALL = 30  # subsets below this size are flagged as small
# Counts kept as entries (bucket F1) go through the dense engine while (units + resamples) x
# columns stays below this (64 MB a table): the same arithmetic as ever on every usual test
# set; beyond it, the entries' engine, whose memory and work follow the nonzero counts.
DENSE_CELLS = 1 << 23


# ---- counts -------------------------------------------------------------------------------
def sentence_keys(tokens: Iterable[Sequence[str]], tags: Iterable[Sequence[str]],
                  n: Optional[int] = None) -> np.ndarray:
    """A 64-bit content hash of each sentence's tokens and gold tags (the canonical order);
    ``n``: how many sentences, when they are given one at a time."""
    import hashlib  # here, not at start-up: it loads OpenSSL, a few ms for commands that never resample

    keys = np.empty(len(tokens) if n is None else n, dtype=np.uint64)
    for s, (sentence, gold) in enumerate(zip(tokens, tags)):
        digest = hashlib.blake2b("\x1f".join(sentence).encode("utf-8", "surrogatepass") + b"\x1e"
                                 + "\x1f".join(gold).encode("utf-8", "surrogatepass"), digest_size=8).digest()
        keys[s] = int.from_bytes(digest, "little")
    return keys


def per_sentence(sentences: np.ndarray, n_sentences: int, where: Optional[np.ndarray] = None) -> np.ndarray:
    """How many items (one per entry of ``sentences``, selected by ``where``) fall in each sentence."""
    if where is not None:
        sentences = sentences[where]
    return np.bincount(sentences, minlength=n_sentences).astype(float)


class Counts:
    """The per-sentence counts of one system's result and the formula of each key.

    ``keys`` holds ``(kind, operands)``: ``("ratio", num, den)`` over columns,
    ``("f1", correct, gold, pred)`` over columns (``("f1", correct, gold, pred, found)`` when the
    gold side has its own correct count, as with partial-match credits), ``(AVERAGE, c, g, p, r, ...)``
    over four columns a group (``AVERAGE_KEYS``: the macro or support-weighted mean of the groups'
    precision, recall or F1, over the groups with a gold or predicted item), and
    ``("mean" | "diff" | "relative", a, b)`` over keys already defined (mean of a and b; a - b;
    a / b).  ``size`` names each key's n.
    """

    def __init__(self, order: np.ndarray, strata: Optional[np.ndarray] = None,
                 documents: Optional[Sequence] = None):
        self.order = np.asarray(order, dtype=np.uint64)
        n = len(self.order)
        self.strata = np.zeros(n, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
        self.documents = None if documents is None else np.asarray(documents)
        self.columns: List[Optional[np.ndarray]] = []  # None: a column kept as entries (prf_groups)
        self.names: Dict[str, int] = {}
        self.keys: Dict[str, tuple] = {}
        self.size: Dict[str, str] = {}  # key -> column whose total is its n
        self._entries: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (column, sentence, value) items

    def __len__(self) -> int:
        return len(self.order)

    def column(self, name: str, values) -> str:
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self),):
            raise ValueError(f"column {name!r} has shape {values.shape}, expected ({len(self)},)")
        values = compact_counts(values)
        if name in self.names:
            if self.columns[self.names[name]] is None:
                raise ValueError(f"column {name!r} is kept as entries: it cannot be replaced")
            self.columns[self.names[name]] = values
        else:
            self.names[name] = len(self.columns)
            self.columns.append(values)
        return name

    def ratio(self, key: str, numerator, denominator) -> None:
        """``key`` = sum(numerator) / sum(denominator); n = sum(denominator)."""
        self.keys[key] = ("ratio", self.column(key + "/num", numerator), self.column(key + "/den", denominator))
        self.size[key] = key + "/den"

    def prf(self, correct, gold, predicted, keys: Sequence[str] = ("precision", "recall", "f1"),
            found=None, beta: float = 1.0) -> None:
        """precision, recall and F1 keys (named by ``keys``) from per-sentence correct, gold and
        predicted counts; n = predicted for precision (its denominator), gold for the others.  ``found``: the gold side's own correct counts (recall's
        numerator; partial-match credits), ``correct`` then being the predictions'.  ``beta``
        other than 1 adds ``f_beta`` (``f_beta_kind``)."""
        precision, recall, f1 = keys
        c, g, p = (self.column(f"{f1}/{name}", values)
                   for name, values in (("correct", correct), ("gold", gold), ("pred", predicted)))
        if found is None:
            self.keys[precision], self.keys[recall], self.keys[f1] = ("ratio", c, p), ("ratio", c, g), ("f1", c, g, p)
        else:
            r = self.column(f"{f1}/found", found)
            self.keys[precision], self.keys[recall], self.keys[f1] = ("ratio", c, p), ("ratio", r, g), ("f1", c, g, p, r)
        if beta != 1:
            self.keys["f_beta"] = (f_beta_kind(beta), *self.keys[f1][1:])
            self.size["f_beta"] = g
        self.size[precision], self.size[recall], self.size[f1] = p, g, g

    def derive(self, key: str, kind: str, a: str, b: str, size=None) -> None:
        """``key`` from keys ``a`` and ``b``; its n is ``a``'s, or the total of ``size`` (per sentence)."""
        if kind not in ("mean", "diff", "relative") or a not in self.keys or b not in self.keys:
            raise ValueError(f"cannot derive {key!r} as {kind} of {a!r} and {b!r}")
        self.keys[key] = (kind, a, b)
        self.size[key] = self.size[a] if size is None else self.column(key + "/n", size)

    def prf_groups(self, keys: Sequence[Sequence[str]], correct, gold, predicted, found=None) -> None:
        """``prf`` for many groups at once: group ``g`` has the precision, recall and F1 keys
        ``keys[g]``, and each count is given as items ``(group, sentence, weight)`` (weight None:
        1 per item), summed per group and sentence (n: as ``prf``'s).  The columns are kept as their nonzero
        entries, not as dense columns: with a group per entity type (bucket F1's tag buckets), a
        dense table is sentences x types."""
        for group_keys, (c, g, p, *r) in zip(keys, self._kept([f1 for _, _, f1 in keys], correct, gold, predicted,
                                                             found)):
            precision, recall, f1 = group_keys
            self.keys[precision], self.keys[recall] = ("ratio", c, p), ("ratio", r[0] if r else c, g)
            self.keys[f1] = ("f1", c, g, p, *r)
            self.size[precision], self.size[recall], self.size[f1] = p, g, g

    def averages(self, n_groups: int, correct, gold, predicted, found=None, beta: float = 1.0) -> None:
        """The keys ``AVERAGE_KEYS`` (``macro_precision`` ... ``weighted_f1``): the macro and
        gold-weighted means of the groups' precision, recall and F1 over the groups with a gold
        or a predicted item (averages over types, as ``scoring.averages`` and seqeval's: a
        type's precision 0 without predictions, its recall 0 without gold; in a resample, the
        types drawn), counts given as in ``prf_groups``, four columns a group; n = predicted for
        the precisions, gold for the others (as ``prf``).  ``beta``
        other than 1 adds ``macro_f_beta`` and ``weighted_f_beta``."""
        groups = self._kept([f"averages/{g}" for g in range(n_groups)], correct, gold, predicted, found)
        operands = tuple(name for c, g, p, *r in groups for name in (c, g, p, r[0] if r else c))
        size = self.column("averages/n", per_sentence(np.asarray(gold[1], dtype=np.int64), len(self)))
        predictions = self.column("averages/n predicted",
                                  per_sentence(np.asarray(predicted[1], dtype=np.int64), len(self)))
        for key in AVERAGE_KEYS:
            self.keys[key] = (key, *operands)
            self.size[key] = predictions if key.endswith("_precision") else size
        for average in ("macro", "weighted") if beta != 1 else ():
            self.keys[f"{average}_f_beta"] = (f"{average}_{f_beta_kind(beta)}", *operands)
            self.size[f"{average}_f_beta"] = size

    def _kept(self, prefixes: Sequence[str], correct, gold, predicted, found=None) -> List[List[str]]:
        """Count columns ``<prefix>/correct``, ``/gold``, ``/pred`` (and ``/found``) for each
        group, kept as the nonzero entries of items ``(group, sentence, weight)``; their names."""
        counted = [("correct", correct), ("gold", gold), ("pred", predicted)] + (
            [("found", found)] if found is not None else [])
        base, width = len(self.columns), len(counted)
        groups = []
        for prefix in prefixes:
            groups.append([f"{prefix}/{name}" for name, _ in counted])
            for name in groups[-1]:
                if name in self.names:
                    raise ValueError(f"column {name!r} defined twice")
                self.names[name] = len(self.columns)
                self.columns.append(None)
        items = [(base + np.asarray(group, dtype=np.int64) * width + k, sentence,
                  np.ones(len(group)) if weight is None else weight)
                 for k, (_, (group, sentence, weight)) in enumerate(counted)]
        summed = Entries(len(self), len(self.columns), *(np.concatenate(part) for part in zip(*items)))
        self._entries.append((summed.column_of, summed.rows, summed.values))
        return groups

    def sharing_formulas(self, other: "Counts") -> "Counts":
        """These counts, reading ``other``'s column names, key formulas and sizes when they equal
        their own (systems scored with the same options, as ``analyse`` needs): one copy of them
        for every system, not one each (bucket F1 of 20,000 entity types: 60,000 keys and as
        many columns named, some 20 MB).  Neither counts may be given further columns or keys
        afterwards."""
        if self.names == other.names and self.keys == other.keys and self.size == other.size:
            self.names, self.keys, self.size = other.names, other.keys, other.size
        return self

    @property
    def has_entries(self) -> bool:
        """Whether some columns are kept as entries (``prf_groups``)."""
        return bool(self._entries)

    def entries(self, new_row: Optional[np.ndarray] = None, n_rows: Optional[int] = None) -> Entries:
        """Every column as its nonzero entries (dense columns included); with ``new_row``,
        sentence ``s`` is row ``new_row[s]`` of ``n_rows`` (rows sharing a number summed).
        Each part (a dense column, a group of kept columns) is put in order on its own, then
        the parts are joined: the memory of the entries and one part, never a sort of them all."""
        n_rows = len(self) if new_row is None else n_rows
        parts = []
        for columns, rows, values in self._parts():
            part = Entries(n_rows, len(self.columns), columns, rows if new_row is None else new_row[rows], values)
            if len(part):
                parts.append((part, 0))
        parts.sort(key=lambda part: part[0].column_of[0])  # parts hold columns of their own, in ranges
        return Entries.joined(n_rows, len(self.columns), parts)

    def _parts(self) -> Iterator[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(column, sentence, value) of the nonzero counts: a part per dense column, then the
        entries; made one at a time."""
        for j, column in enumerate(self.columns):
            if column is not None:
                rows = np.flatnonzero(column)
                yield np.full(len(rows), j), rows, column[rows]
        yield from self._entries

    def row_sums(self, column_weights: np.ndarray) -> np.ndarray:
        """Each sentence's counts times their column's weight, summed (``matrix() @ column_weights``)."""
        sums = np.zeros(len(self))
        for columns, rows, values in self._parts():
            sums += np.bincount(rows, weights=values * column_weights[columns], minlength=len(self))
        return sums

    def matrix(self) -> np.ndarray:
        """(sentences, columns)."""
        table = np.zeros((len(self), len(self.columns)))
        for j, column in enumerate(self.columns):
            if column is not None:
                table[:, j] = column
        if self._entries:
            kept = self.kept_entries()
            table[kept.rows, kept.column_of] = kept.values
        return table

    def kept_entries(self) -> Entries:
        """The columns kept as entries, their items summed per sentence (the others empty)."""
        if not self._entries:
            return Entries(len(self), len(self.columns), [], [], [])
        return Entries(len(self), len(self.columns), *(np.concatenate(part) for part in zip(*self._entries)))

    def large(self) -> bool:
        """Whether these counts keep entries and a dense table of them would exceed
        ``DENSE_CELLS``: then their totals come from the entries."""
        return self.has_entries and len(self) * len(self.columns) > DENSE_CELLS

    def totals(self) -> np.ndarray:
        """Each column's total."""
        return self.entries().totals() if self.large() else self.matrix().sum(axis=0)

    def values(self, sums: np.ndarray, keys: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """Each key's value from summed columns (``sums[..., column]``)."""
        return evaluate(self.keys, self.names, sums, keys)

    def point(self) -> Dict[str, float]:
        return {key: float(value) for key, value in self.values(self.totals()).items()}

    def sizes(self) -> Dict[str, int]:
        totals = self.totals()
        return {key: int(round(totals[self.names[column]])) for key, column in self.size.items()}


def evaluate(keys: Mapping[str, tuple], names: Mapping[str, int], sums: np.ndarray,
             wanted: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
    """Apply the key formulas to summed counts; NaN where a denominator is 0 (``evaluator``)."""
    return evaluator(keys, names, wanted)(sums)


def evaluator(keys: Mapping[str, tuple], names: Mapping[str, int], wanted: Optional[Sequence[str]] = None):
    """``evaluate`` as a function of the sums, the formulas' columns looked up once (an
    average over 20,000 types names 80,000 of them; resampled a few resamples at a time, it is
    valued hundreds of times).  Keys with the same formula are computed together, a bounded
    block at a time (element by element the same operations as one key at a time, so the same
    numbers, without a loop over many keys)."""
    by_formula: Dict[tuple, List[str]] = {}
    averages: Dict[str, np.ndarray] = {}
    for key, (kind, *operands) in keys.items():
        if kind in ("ratio", "f1") or kind.startswith("f_beta:"):
            by_formula.setdefault((kind, len(operands)), []).append(key)
        elif _is_average(kind):  # (c, g, p, r) a group
            averages[key] = np.fromiter(map(names.__getitem__, operands), np.int64, len(operands)).reshape(-1, 4)
        elif kind not in ("mean", "diff", "relative"):
            raise ValueError(f"unknown formula {kind!r} for {key!r}")
    places_of = {formula: np.array([[names[c] for c in keys[key][1:]] for key in group], dtype=np.int64)
                 for formula, group in by_formula.items()}

    def values_of(sums: np.ndarray) -> Dict[str, np.ndarray]:
        values: Dict[str, np.ndarray] = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            for key, places in averages.items():
                values[key] = _average(keys[key][0], [sums[..., places[:, i]] for i in range(4)])
        step = max(1, _EVALUATED // max(1, int(np.prod(sums.shape[:-1]))))
        with np.errstate(invalid="ignore", divide="ignore"):
            for (kind, arity), group in by_formula.items():
                for start in range(0, len(group), step):
                    places = places_of[kind, arity][start:start + step]
                    result = _formula(kind, [sums[..., places[:, i]] for i in range(arity)])
                    for j, key in enumerate(group[start:start + step]):
                        values[key] = result[..., j]
            for key, (kind, *operands) in keys.items():
                if kind == "mean":
                    values[key] = (values[operands[0]] + values[operands[1]]) / 2
                elif kind == "diff":
                    values[key] = values[operands[0]] - values[operands[1]]
                elif kind == "relative":
                    a, b = values[operands[0]], values[operands[1]]
                    values[key] = np.where(b != 0, a / np.where(b != 0, b, 1), np.nan)
        return {key: values[key] for key in (keys if wanted is None else wanted)}

    return values_of


_EVALUATED = 1 << 20  # values of one formula computed at once (8 MB a temporary)


# The averages over groups (types) a key may be: its formula's kind is its name (with F-beta's
# beta: ``macro_f_beta:2.0``).
AVERAGE_KEYS = tuple(f"{average}_{measure}" for average in ("macro", "weighted")
                     for measure in ("precision", "recall", "f1"))


def f_beta_kind(beta: float) -> str:
    """The formula kind of an F-beta (``f_beta:2.0``): beta travels in the kind, the operands
    being count columns as F1's are."""
    return f"f_beta:{float(beta)!r}"


def _beta(kind: str) -> float:
    return float(kind.rpartition(":")[2])


def _is_average(kind: str) -> bool:
    return kind in AVERAGE_KEYS or kind.split(":")[0] in ("macro_f_beta", "weighted_f_beta")


def _average(kind: str, operands: List[np.ndarray], fixed: tuple = (0, 0, 0)) -> np.ndarray:
    """An average over the last axis (groups) of four count operands ``(c, g, p, r)`` a group:
    each group's precision c / p (0 without predictions), recall r / g (0 without gold) or F1,
    undefined for a group with neither; the mean of the defined ones (macro) or their mean
    weighted by g (weighted; 0 when their g add up to 0); NaN when none is defined.  ``fixed``:
    ``_average_sums`` of further groups, added to these groups' (the groups a swap leaves alone)."""
    total, weight, count = (mine + more for mine, more in zip(_average_sums(kind, operands), fixed))
    if not kind.startswith("macro"):
        total, weight = np.where(weight > 0, total, 0.0), np.where(weight > 0, weight, 1)
    return np.where(count > 0, total / np.maximum(weight, 1e-300), np.nan)


def _average_sums(kind: str, operands: List[np.ndarray]) -> tuple:
    """(total, weight, count) over the last axis of ``_average``'s operands: the defined groups'
    scores summed (macro) or their scores times g and their g summed (weighted), and how many."""
    c, g, p, r = operands
    average, _, measure = kind.partition("_")
    if measure == "f1" or measure.startswith("f_beta:"):
        score = _formula(measure, operands)
    else:
        numerator, denominator = (c, p) if measure == "precision" else (r, g)
        score = np.where(g + p > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)
    defined = ~np.isnan(score)
    count = defined.sum(axis=-1)
    if average == "macro":
        return np.where(defined, score, 0.0).sum(axis=-1), count, count
    return np.where(defined, score * g, 0.0).sum(axis=-1), np.where(defined, g, 0.0).sum(axis=-1), count


def _formula(kind: str, operands: List[np.ndarray]) -> np.ndarray:
    if kind == "ratio":
        num, den = operands
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    if kind.startswith("f_beta:"):  # (1 + b^2) P R / (b^2 P + R), P = c / p, R = r / g (r = c: 3 operands)
        b2 = _beta(kind) ** 2
        c, g, p, r = operands if len(operands) == 4 else (*operands, None)
        if r is None:
            numerator, denominator = (1 + b2) * c, b2 * g + p
        else:
            numerator, denominator = (1 + b2) * c * r, b2 * c * g + r * p
        value = numerator / np.where(denominator > 0, denominator, 1)
        return np.where(g + p > 0, np.where(denominator > 0, value, 0.0), np.nan)
    if len(operands) == 4:  # f1 as 2PR / (P + R) with P = c / p, R = r / g
        c, g, p, r = operands
        denominator = c * g + r * p
        f1 = 2 * c * r / np.where(denominator > 0, denominator, 1)
        return np.where(g + p > 0, np.where(denominator > 0, f1, 0.0), np.nan)
    c, g, p = operands  # f1 as 2c / (g + p): the harmonic mean of P and R, 0 when nothing is right
    total = g + p
    return np.where(total > 0, 2 * c / np.where(total > 0, total, 1), np.nan)


# ---- options ------------------------------------------------------------------------------
def check_options(n_resamples, confidence, unit="sentence", alpha=0.05) -> None:
    """Raise ``ValueError`` for resampling options that cannot be used."""
    if not isinstance(n_resamples, (int, np.integer)) or isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a whole number >= 1, got {n_resamples!r}")
    if n_resamples > 100_000:
        raise ValueError(f"n_resamples={n_resamples}: at most 100000")
    for name, value in (("confidence", confidence), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    if unit not in UNITS:
        raise ValueError(f"unit={unit!r}: use 'sentence' or 'document'")


# ---- units and resamples ------------------------------------------------------------------
def units(counts: Sequence[Counts], unit: str = "sentence") -> Tuple[np.ndarray, np.ndarray]:
    """(matrix of every system's columns side by side per unit, stratum of each unit), units in
    canonical order.  The systems must have been scored on the same sentences."""
    aligned, strata, keys = _aligned(counts)
    matrix = np.hstack([c.matrix()[order] for c, order in aligned])
    if unit == "document":
        inverse, strata, keys = _documents(counts[0], aligned[0][1], strata, keys)
        summed = np.zeros((len(keys), matrix.shape[1]))
        np.add.at(summed, inverse, matrix)
        matrix = summed
    # Canonical order: stratum, content hash, then the counts themselves (ties: identical sentences;
    # a fixed random projection of the counts stands for them).
    projection = np.random.default_rng(0).random(matrix.shape[1]) if matrix.shape[1] else None
    row_keys = matrix @ projection if projection is not None else np.zeros(len(keys))
    order = np.lexsort((row_keys, keys, strata))
    return matrix[order], strata[order]


def units_as_entries(counts: Sequence[Counts], unit: str = "sentence") -> Tuple[Entries, np.ndarray]:
    """``units`` with the matrix as its nonzero entries (``sparse.Entries``): the same units in
    the same order (the projection that orders identical sentences is summed another way, so
    two different count rows would have to project within a rounding error to swap)."""
    aligned, strata, keys = _aligned(counts)
    n, width = len(strata), len(counts[0].columns)
    where = np.arange(n)  # each aligned sentence's unit
    if unit == "document":
        where, strata, keys = _documents(counts[0], aligned[0][1], strata, keys)
    projection = np.random.default_rng(0).random(width * len(counts)) if width else None
    row_keys = np.zeros(len(keys))
    if projection is not None:
        for i, (c, sentences) in enumerate(aligned):
            row_keys += np.bincount(where, c.row_sums(projection[i * width:(i + 1) * width])[sentences],
                                    minlength=len(keys))
    order = np.lexsort((row_keys, keys, strata))
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    parts = []
    for i, (c, sentences) in enumerate(aligned):  # each sentence straight to its unit's place
        unit_of = np.empty(n, dtype=np.int64)
        unit_of[sentences] = position[where]
        parts.append((c.entries(unit_of, len(order)), i * width))
    if len(parts) == 1:
        return parts[0][0], strata[order]
    return Entries.joined(len(order), width * len(parts), parts), strata[order]


def _aligned(counts: Sequence[Counts]):
    """Each system's sentences sorted by stratum and content hash (rows pair up even when the
    systems were given the sentences in different orders), with those strata and hashes."""
    first = counts[0]
    for other in counts[1:]:
        if len(other) != len(first) or not np.array_equal(np.sort(other.order), np.sort(first.order)):
            raise ValueError("paired comparisons need the same test sentences for every system")
    aligned = [(c, np.lexsort((c.order, c.strata))) for c in counts]
    return aligned, first.strata[aligned[0][1]], first.order[aligned[0][1]]


def _documents(first: Counts, order: np.ndarray, strata: np.ndarray, keys: np.ndarray):
    """(document of each aligned sentence, stratum and key of each document)."""
    documents = first.documents
    if documents is None:
        raise ValueError("unit='document' needs document ids (-DOCSTART- groups, or a document input)")
    documents = documents[order]
    names, inverse = np.unique(documents.astype(str), return_inverse=True)
    unit_strata = np.zeros(len(names), dtype=np.int64)
    unit_strata[inverse] = strata
    if np.any(unit_strata[inverse] != strata):
        raise ValueError("a document spans two sets (e.g. NRB and WTS): resample by sentence")
    if min(np.bincount(unit_strata)) < 2:
        raise ValueError(f"unit='document' needs at least 2 documents per set, got {np.bincount(unit_strata).tolist()}:"
                         " resample by sentence")
    # A document's key: the hash of its sentences' keys in order.
    import hashlib  # as in sentence_keys
    digests = [hashlib.blake2b(np.sort(keys[inverse == d]).tobytes(), digest_size=8).digest()
               for d in range(len(names))]
    unit_keys = np.array([int.from_bytes(d, "little") for d in digests], dtype=np.uint64)
    return inverse, unit_strata, unit_keys


# Resample weights are drawn in chunks of this many (resamples of a stratified set are drawn
# stratum by stratum within a chunk, so it fixes which resamples a seed gives): the entries'
# engine holds one chunk at a time, a byte a weight as a rule (20 MB).
_CHUNK = 20_000_000
# The dense engine holds every resample's weights at once, as floats, and keeps them for the
# next call (every method of a report) up to this many (32 MB; CoNLL-2003 test x 1000
# resamples fits); beyond, the entries' engine, so memory does not grow with the test set
# beyond its counts.
_DENSE_WEIGHTS = 1 << 22
_WEIGHTS: Dict[tuple, np.ndarray] = {}  # the last draws, reused by every method of a report


def forget_draws() -> None:
    """Drop the kept resample weights (up to 32 MB): a report calls it when its analyses are done."""
    _WEIGHTS.clear()


def resample_weights(strata: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(resamples, units): how often each unit is drawn, resampling with replacement within
    each stratum.  Deterministic for the strata, count and seed."""
    return np.vstack(list(_weight_chunks(strata, n_resamples, seed)))


def _weight_chunks(strata: np.ndarray, n_resamples: int, seed: int, compact: bool = False):
    """The resample weights in row chunks of at most ``_CHUNK`` weights, from one random stream
    (``compact``: (units, resamples), a unit's weights side by side, as the smallest unsigned
    integers that hold them; the same numbers)."""
    rows = max(1, min(n_resamples, _CHUNK // max(len(strata), 1)))
    rng = np.random.default_rng([seed, 0])
    for start in range(0, n_resamples, rows):
        yield _draw(strata, min(rows, n_resamples - start), rng, compact)


def _draw(strata: np.ndarray, n_resamples: int, rng: np.random.Generator, compact: bool = False) -> np.ndarray:
    """How often each unit is drawn, a resample row at a time: the same numbers as drawing the
    whole (resamples x members) block at once (the generator keeps the spare half of a 64-bit
    draw between calls), without holding that block beside the weights.  ``compact``: the
    weights transposed, (units, resamples), as the smallest unsigned integers that hold them."""
    weights = np.zeros((n_resamples, len(strata)), dtype=float) if not compact else \
        np.zeros((len(strata), n_resamples), dtype=np.uint8).T  # written a resample at a time, read a unit at a time
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        whole = len(members) == len(strata)
        for r in range(n_resamples):
            row = np.bincount(rng.integers(0, len(members), size=len(members)), minlength=len(members))
            if compact and row.max() > np.iinfo(weights.dtype).max:  # a unit drawn 256 times or more
                weights = weights.T.astype(np.min_scalar_type(row.max())).T
            if whole:
                weights[r] = row
            else:
                weights[r, members] = row
    return weights.T if compact else weights


# Compact resample weights the entries' engine keeps between key blocks (resamples x units, one
# byte each as a rule: 32 MB); more are drawn again for each block.
_HELD = 1 << 25


class _CompactWeights:
    """The resample weights of the entries' engine, drawn in ``_weight_chunks``'s chunks (so
    the same numbers as the dense engine's), kept when they fit in ``_HELD``."""

    def __init__(self, strata: np.ndarray, n_resamples: int, seed: int):
        self.drawn = (strata, n_resamples, seed)
        self.held = list(self._drawn()) if n_resamples * len(strata) <= _HELD else None

    def totals(self, entries: Entries, columns: Sequence[int], at_once: int) -> Iterator[np.ndarray]:
        """(resamples, columns): each resample's totals of the chosen columns, ``at_once``
        resamples (or a chunk's, if fewer) at a time, in order."""
        chunks = self.held if self.held is not None else self._drawn()
        for chunk in chunks:
            for start in range(0, chunk.shape[1], at_once):
                yield entries.weighted_sums(chunk[:, start:start + at_once], columns)

    def _drawn(self):  # (units, resamples) chunks: a unit's weights side by side, gathered per entry
        return _weight_chunks(*self.drawn, compact=True)


def resampled_totals(strata: np.ndarray, matrix: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(resamples, columns): the column totals of each resample, weights @ matrix, drawn in
    chunks of at most ``_CHUNK`` weights; the weights of a small test set (one chunk) are kept
    for the next call with the same strata, count and seed (every method of a report)."""
    key = (strata.tobytes(), n_resamples, seed)
    if key in _WEIGHTS:
        return _WEIGHTS[key] @ matrix
    if n_resamples * len(strata) > _CHUNK:
        return np.vstack([chunk @ matrix for chunk in _weight_chunks(strata, n_resamples, seed)])
    _WEIGHTS.clear()
    _WEIGHTS[key] = resample_weights(strata, n_resamples, seed)
    return _WEIGHTS[key] @ matrix


def _percentiles(samples: np.ndarray, confidence: float) -> Tuple[np.ndarray, np.ndarray]:
    """Per column, the two-sided percentile bounds ignoring NaN (numpy's linear method)."""
    tail = (1 - confidence) / 2
    ordered = np.sort(samples, axis=0)  # NaN sorts last
    valid = np.count_nonzero(~np.isnan(samples), axis=0)
    columns = np.arange(samples.shape[1])
    bounds = []
    for q in (tail, 1 - tail):
        position = q * np.maximum(valid - 1, 0)
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(valid - 1, 0))
        low, high = ordered[below, columns], ordered[above, columns]
        with np.errstate(invalid="ignore"):
            value = low + (high - low) * (position - below)
        value = np.where(high == low, low, value)  # exact where no interpolation is needed
        bounds.append(np.where(valid > 0, value, np.nan))
    return bounds[0], bounds[1]


# ---- intervals and tests ------------------------------------------------------------------
def analyse(systems: Mapping[str, Counts], keys: Optional[Sequence[str]] = None, n_resamples: int = 1000,
            confidence: float = 0.95, seed: int = 0, unit: str = "sentence", alpha: float = 0.05,
            pairs: Optional[Sequence[Tuple[str, str]]] = None, compact: bool = False) -> Mapping[str, dict]:
    """Intervals for every system and paired tests for every pair of systems (or ``pairs``),
    with one draw of resample weights and one matrix product (counts kept as entries and too
    large for dense tables: the same from the entries, a block of keys at a time).

    Returns ``{key: {"values", "ci", "n", "tests", "units"}}``: values and n per system, ci per
    system ``[low, high]``, tests a list of ``{"a", "b", "difference", "ci", "p_value"}``.  The
    p-values are raw here; ``adjust`` applies Holm's adjustment over a table's rows.
    ``compact``: the same cells as ``core.rows.Keyed``, kept as columns and made as they are
    read (a table of 60,000 keys: some 70 MB of dicts otherwise).
    """
    check_options(n_resamples, confidence, unit, alpha)
    names = list(systems)
    if not names:
        raise ValueError("no system to analyse")
    counts = [systems[name] for name in names]
    keys = list(keys if keys is not None else counts[0].keys)
    if not keys:  # nothing to give an interval or a test (a result without rate keys); the input still checked
        units_as_entries(counts, unit)
        _check_columns(counts)
        return Keyed({}) if compact else {}
    strata, sums, tested_from, resampled = _resampling(counts, keys, n_resamples, seed, unit)
    formulas, columns = counts[0].keys, counts[0].names
    sizes = [{key: int(round(total[columns[column]])) for key, column in c.size.items()}
             for total, c in zip(sums, counts)]
    point = {name: evaluate(formulas, columns, sums[i], keys) for i, name in enumerate(names)}
    pairs = list(pairs) if pairs is not None else [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    index = {name: i for i, name in enumerate(names)}
    place = {key: i for i, key in enumerate(keys)}
    ci = np.full((len(keys), len(names), 2), np.nan)  # each key's interval per system, then per pair
    pair_ci = np.full((len(keys), len(pairs), 2), np.nan)
    for block_keys, values in resampled:  # each key's resamples, a block of keys at a time
        boot = dict(zip(names, values))
        rows = [place[key] for key in block_keys]
        for i, name in enumerate(names):
            ci[rows, i, 0], ci[rows, i, 1] = _percentiles(np.stack([boot[name][k] for k in block_keys], axis=1),
                                                          confidence)
        for i, (a, b) in enumerate(pairs):
            pair_ci[rows, i, 0], pair_ci[rows, i, 1] = _percentiles(
                np.stack([boot[a][key] - boot[b][key] for key in block_keys], axis=1), confidence)
    tested = []
    for a, b in pairs:
        ia, ib = index[a], index[b]
        if isinstance(tested_from, Entries):
            tested.append(_randomisation_entries(formulas, columns, tested_from, len(counts[0].columns), ia, ib,
                                                 sums[ia], sums[ib], keys))
        else:
            tested.append(randomisation(formulas, columns, tested_from[ia], tested_from[ib], keys))
    units = len(strata)
    few = units < MIN_UNITS  # a percentile of a handful of units is no interval: say so

    def interval(bounds: np.ndarray) -> List[float]:
        return [math.nan, math.nan] if few else bounds.tolist()

    def cell(j: int, key: str) -> dict:
        return {"values": {n: float(point[n][key]) for n in names},
                "ci": {n: interval(ci[j, i]) for i, n in enumerate(names)},
                "n": {n: sizes[i][key] for i, n in enumerate(names)},
                "tests": [{"a": a, "b": b, "difference": float(point[a][key] - point[b][key]),
                           "ci": interval(pair_ci[j, i]), **tested[i][key]} for i, (a, b) in enumerate(pairs)],
                "units": units}

    cells = (cell(j, key) for j, key in enumerate(keys))
    return Keyed(names=keys, rows=Rows(cells)) if compact else dict(zip(keys, cells))


def resampled_values(counts: Counts, keys: Sequence[str], n_resamples: int = 1000, seed: int = 0,
                     unit: str = "sentence") -> Dict[str, np.ndarray]:
    """Each key's value in each resample: the values whose percentiles ``intervals`` gives
    (for a standard error), drawn the same way."""
    check_options(n_resamples, 0.5, unit)
    out: Dict[str, np.ndarray] = {}
    for _, (values,) in _resampling([counts], list(keys), n_resamples, seed, unit)[3]:
        out.update(values)
    return out


def _check_columns(counts: Sequence[Counts]) -> None:
    width = len(counts[0].columns)
    if any(len(c.columns) != width or c.names != counts[0].names for c in counts):
        raise ValueError("the systems' results have different columns: score them with the same options")


def _resampling(counts: Sequence[Counts], keys: Sequence[str], n_resamples: int, seed: int, unit: str):
    """(stratum of each unit, each system's column totals, what the paired tests read: the units'
    entries, or each system's dense (units, columns) block, and the resampled values: blocks of
    ``(keys, per system {key: each resample's value})``).  The dense engine when every
    resample's weights are held at once, else the entries' engine, whose weights are drawn in
    chunks: the same resamples either way."""
    missing = [k for k in keys if any(k not in c.keys for c in counts)]
    if missing:
        raise ValueError(f"unknown key(s) {missing}: keys with counts are {sorted(counts[0].keys)}")
    _check_columns(counts)
    formulas, columns, width = counts[0].keys, counts[0].names, len(counts[0].columns)
    if _by_entries(counts, n_resamples):
        entries, strata = units_as_entries(counts, unit)
        totals = entries.totals()
        sums = [totals[i * width:(i + 1) * width] for i in range(len(counts))]
        return strata, sums, entries, _resampled_by_blocks(entries, width, len(counts), formulas, columns, keys,
                                                           strata, n_resamples, seed)
    matrix, strata = units(counts, unit)
    blocks = [matrix[:, i * width:(i + 1) * width] for i in range(len(counts))]
    everything = resampled_totals(strata, matrix, n_resamples, seed)  # (R, systems * columns)
    value = evaluator(formulas, columns, keys)  # the formulas' columns looked up once for every system
    values = [value(everything[:, i * width:(i + 1) * width]) for i in range(len(counts))]
    return strata, [block.sum(axis=0) for block in blocks], blocks, [(keys, values)]


def _by_entries(counts: Sequence[Counts], n_resamples: int) -> bool:
    """Whether ``analyse`` works from the counts' entries: every resample's weights would not be
    held at once (more than ``_DENSE_WEIGHTS``), or the counts keep entries and the dense tables ((units
    + resamples) x every system's columns) would exceed ``DENSE_CELLS``."""
    if n_resamples * len(counts[0]) > _DENSE_WEIGHTS:
        return True
    width = sum(len(c.columns) for c in counts)
    return any(c.has_entries for c in counts) and (len(counts[0]) + n_resamples) * width > DENSE_CELLS


# Resampled totals held at once by the entries' engine (resamples x systems x columns): 8 MB.  A
# block of keys reads half as many columns: its keys' values and their percentiles' tables are
# held beside its totals (20,000 types: some 15 MB less at a report's peak).
_BLOCK_CELLS = 1 << 20


def _resampled_by_blocks(entries: Entries, width: int, n_systems: int, formulas, columns, keys, strata,
                         n_resamples: int, seed: int):
    """For blocks of keys in order: (the keys, per system {key: each resample's value}).  A key
    reading more columns than a block holds (an average over very many types) has its totals
    taken a few resamples at a time (each resample's value depends on its own totals alone:
    the same numbers)."""
    budget = max(1, _BLOCK_CELLS // 2 // max(1, n_resamples * n_systems))  # columns a block reads
    blocks, block, wanted = [], [], set()
    for key in keys:
        mine = _columns_of(formulas, columns, key)
        if block and len(wanted) + len(set(mine) - wanted) > budget:
            blocks.append((block, wanted))
            block, wanted = [], set()
        block.append(key)
        wanted.update(mine)
    if block:
        blocks.append((block, wanted))
    weights = _CompactWeights(strata, n_resamples, seed)
    name_of = {j: name for name, j in columns.items()}
    rank = {key: i for i, key in enumerate(formulas)}
    for block, wanted in blocks:
        used = sorted(wanted)
        sub, local = _local(formulas, block, used, name_of, rank)
        chosen = [i * width + j for i in range(n_systems) for j in used]
        value = evaluator(sub, local, block)
        parts = [[value(totals[:, i * len(used):(i + 1) * len(used)]) for i in range(n_systems)]
                 for totals in weights.totals(entries, chosen, max(1, _BLOCK_CELLS // max(1, len(chosen))))]
        yield block, [{key: np.concatenate([part[i][key] for part in parts]) for key in block}
                      for i in range(n_systems)]


def _local(formulas, keys: Sequence[str], used: Sequence[int], name_of: Mapping[int, str], rank: Mapping[str, int]):
    """The formulas ``keys`` need, in definition order, and their columns renumbered as positions
    in ``used`` (the columns they read)."""
    needed: set = set()
    for key in keys:
        needed |= set(_needed(formulas, key, rank))
    sub = {k: formulas[k] for k in sorted(needed, key=rank.__getitem__)}
    return sub, {name_of[j]: i for i, j in enumerate(used)}


def randomisation(formulas: Mapping[str, tuple], columns: Mapping[str, int], a: np.ndarray, b: np.ndarray,
                  keys: Sequence[str]) -> Dict[str, dict]:
    """The paired randomisation test of systems A and B for each key: under the null, each
    unit's counts are as likely to be A's as B's, so the statistic's null distribution is that
    of A - B over the 2^k ways of swapping the k units whose counts differ.

    The p-value (two-sided) is exact, over all 2^k swaps, when k <= ``EXACT_UNITS``; otherwise
    it is the normal approximation of the same distribution: each unit's swap moves the
    difference by about its linear contribution u_i (delta method at the mean of the two
    systems' totals), so A - B has null variance sum u_i^2 (with a continuity correction of
    the smallest |u_i|).  Neither is floored by a number of draws.  ``a`` and ``b``: the systems' (units, columns) counts, rows paired."""
    delta = a - b
    total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    observed = {key: value_a - value_b for key, value_a, value_b in zip(
        keys, evaluate(formulas, columns, total_a, keys).values(), evaluate(formulas, columns, total_b, keys).values())}
    contributions = _contributions(formulas, columns, (total_a + total_b) / 2, delta)
    differ = delta != 0
    name_of = {j: name for name, j in columns.items()}
    rank = {key: i for i, key in enumerate(formulas)}
    out = {}
    for key in keys:
        used = _columns_of(formulas, columns, key)
        rows = np.flatnonzero(differ[:, used].any(axis=1))
        sub, local = _local(formulas, [key], used, name_of, rank)
        out[key] = _tested(sub, local, key, total_a[used], total_b[used], len(rows),
                           lambda: _moving(delta[np.ix_(rows, used)]), float(observed[key]), lambda: contributions[key])
    return out


def _randomisation_entries(formulas, columns, entries: Entries, width: int, a: int, b: int, total_a: np.ndarray,
                           total_b: np.ndarray, keys: Sequence[str]) -> Dict[str, dict]:
    """``randomisation`` of systems ``a`` and ``b`` (their places among ``entries``' systems of
    ``width`` columns each), reading for each key only the units where its counts differ.  The
    same test and numbers, but for the last bit of the normal approximation's variance (summed
    over the differing units alone)."""
    observed = {key: value_a - value_b for key, value_a, value_b in zip(
        keys, evaluate(formulas, columns, total_a, keys).values(), evaluate(formulas, columns, total_b, keys).values())}
    at = (total_a + total_b) / 2
    name_of = {j: name for name, j in columns.items()}
    rank = {key: i for i, key in enumerate(formulas)}
    lengths = np.diff(entries.starts)  # each column's entries
    out = {}
    averages = [key for key in keys if _is_average(formulas[key][0])]  # four columns a type: kept sparse
    for key in averages:
        used = _columns_of(formulas, columns, key)
        sub, local = _local(formulas, [key], used, name_of, rank)
        unit, column, value = _sparse_differences(entries, width, a, b, used)
        k = int(unit[-1]) + 1 if len(unit) else 0
        out[key] = _tested(sub, local, key, total_a[used], total_b[used], k,
                           lambda: _spread(unit, column, value, k),
                           float(observed[key]), lambda: _average_contributions(sub, local, key, at[used], unit,
                                                                                column, value, k))
    averaged = set(averages)
    others = [key for key in keys if key not in averaged]
    for block in _gathered_blocks(others, [_columns_of(formulas, columns, key) for key in others],
                                  lambda used: int(lengths[a * width + used].sum() + lengths[b * width + used].sum())):
        used_of = [used for _, used in block]
        for (key, used), delta in zip(block, _key_differences(entries, width, a, b, used_of)):
            sub, local = _local(formulas, [key], used, name_of, rank)
            out[key] = _tested(sub, local, key, total_a[used], total_b[used], len(delta), lambda: _moving(delta),
                               float(observed[key]), lambda: _contributions(sub, local, at[used], delta)[key])
    return {key: out[key] for key in keys}


def _sparse_differences(entries: Entries, width: int, a: int, b: int, used: Sequence[int]):
    """System ``a``'s counts minus system ``b``'s in the columns ``used``, as their nonzero
    entries ``(unit, column, value)`` in order of unit: units numbered 0 .. k-1 among the units
    where some column differs, columns as places in ``used``.  Memory and work follow those
    columns' entries (an average over 20,000 types reads 80,000 columns: as a dense table of
    the differing units, gigabytes)."""
    used = np.asarray(used, dtype=np.int64)
    positions, owner = entries.positions(np.concatenate([a * width + used, b * width + used]))
    column = owner % len(used)
    value = np.where(owner >= len(used), -entries.values[positions], entries.values[positions])
    places, inverse = np.unique(entries.rows[positions].astype(np.int64) * len(used) + column, return_inverse=True)
    value = np.bincount(inverse.ravel(), weights=value, minlength=len(places))  # A's count, then minus B's
    kept = value != 0
    places, value = places[kept], value[kept]
    rows, column = np.divmod(places, len(used))
    unit = np.unique(rows, return_inverse=True)[1].ravel()
    return unit, column, value


def _spread(unit: np.ndarray, column: np.ndarray, value: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """``_moving`` of sparse differences: (the columns they move, the (k, those columns) table)."""
    moving, where = np.unique(column, return_inverse=True)
    delta = np.zeros((k, len(moving)))
    delta[unit, where.ravel()] = value
    return moving, delta


def _average_contributions(sub, local, key: str, at: np.ndarray, unit: np.ndarray, column: np.ndarray,
                           value: np.ndarray, k: int) -> np.ndarray:
    """``_contributions`` of an average over types from sparse differences (``_sparse_differences``):
    each unit's contribution is linear in its count differences, so it is their sum times each
    column's coefficient (``_average_coefficients``), read from the nonzero ones alone."""
    kind, *operands = sub[key]
    places = np.array([local[c] for c in operands], dtype=np.int64).reshape(-1, 4)  # (c, g, p, r) a group
    coefficients = _average_coefficients(kind, [at[places[:, i]] for i in range(4)])
    # A column read twice (a group's correct count is its c and its r without partial credits) adds both.
    per_column = np.bincount(places.ravel(), weights=coefficients.T.ravel(), minlength=len(at))
    return np.nan_to_num(np.bincount(unit, weights=value * per_column[column], minlength=k))


# Keys whose count differences are gathered together: at most this many, reading at most
# _GATHERED_AT_ONCE entries (some hundred bytes each while grouped: a 20,000-type pair's first
# keys, each bucket's three over 20,000 sentences, took 100 MB at once).
_TESTED_AT_ONCE = 4096
_GATHERED_AT_ONCE = 1 << 18


def _gathered_blocks(keys: Sequence[str], used_of: Sequence[List[int]], read) -> Iterator[List[tuple]]:
    """The keys with their columns, ``(key, columns)``, in blocks of at most ``_TESTED_AT_ONCE``
    keys whose columns hold at most ``_GATHERED_AT_ONCE`` entries together (``read(columns)``),
    a key over that alone in its block."""
    block, gathered = [], 0
    for key, used in zip(keys, used_of):
        used = np.asarray(used, dtype=np.int64)
        size = read(used)
        if block and (len(block) == _TESTED_AT_ONCE or gathered + size > _GATHERED_AT_ONCE):
            yield block
            block, gathered = [], 0
        block.append((key, used.tolist()))
        gathered += size
    if block:
        yield block


def _key_differences(entries: Entries, width: int, a: int, b: int,
                     used_of: Sequence[Sequence[int]]) -> List[np.ndarray]:
    """For each key (the columns it reads, ``used_of``), the (units where they differ, columns)
    differences of system ``a``'s counts minus system ``b``'s, units in order: every key's
    entries gathered and grouped at once."""
    sizes = np.array([len(used) for used in used_of], dtype=np.int64)
    slots = int(sizes.sum())
    key_of = np.repeat(np.arange(len(used_of)), sizes)
    slot_of = np.arange(slots) - np.repeat(np.cumsum(sizes) - sizes, sizes)  # the column's place among its key's
    read = np.concatenate([np.asarray(used, dtype=np.int64) for used in used_of])
    positions, owner = entries.positions(np.concatenate([a * width + read, b * width + read]))
    of_b = owner >= slots
    owner = owner % slots
    key, row = key_of[owner], entries.rows[positions]
    order = np.lexsort((row, key))
    key, row, slot, value = key[order], row[order], slot_of[owner][order], entries.values[positions][order]
    value = np.where(of_b[order], -value, value)  # A's count plus minus B's: exactly A's minus B's
    new = np.ones(len(key), dtype=bool)  # the first entry of each key's unit
    new[1:] = (key[1:] != key[:-1]) | (row[1:] != row[:-1])
    delta = np.zeros((int(new.sum()), int(sizes.max())))
    np.add.at(delta, (np.cumsum(new) - 1, slot), value)
    differ = np.any(delta != 0, axis=1)
    per_key = np.bincount(key[new][differ], minlength=len(used_of))
    delta = delta[differ]
    ends = np.cumsum(per_key).tolist()
    return [delta[end - count:end, :size] for end, count, size in zip(ends, per_key.tolist(), sizes.tolist())]


def _tested(sub, local, key: str, total_a: np.ndarray, total_b: np.ndarray, k: int, differences, d: float,
            contributions) -> dict:
    """One key's test from its formulas (``sub``, columns ``local``), the systems' totals of its
    columns and the ``k`` units where they differ: ``differences()`` gives their differences
    (``_moving``: the columns some unit moves, and those), ``contributions()`` each unit's
    linear contribution (zeros for the others allowed); each asked for only by its test."""
    if math.isnan(d):
        p, how = math.nan, "no difference to test (a value is undefined)"
    elif k == 0:
        p, how = 1.0, "identical counts"
    elif k <= EXACT_UNITS:
        p, how = _exact(sub, local, key, total_a, total_b, *differences(), d), "exact"
    else:
        u = contributions()
        variance = float(np.sum(u ** 2))
        # Continuity correction: half the smallest step the difference can take (with equal
        # contributions, where the distribution is a binomial's, it keeps the test at or
        # below alpha); p no smaller than a permutation test over k units can give.
        step = float(np.min(np.abs(u[u != 0]))) if np.any(u != 0) else 0.0
        p = (max(math.erfc(max(abs(d) - step, 0.0) / math.sqrt(2 * variance)), 2.0 ** (1 - k))
             if variance > 0 else (1.0 if d == 0 else math.nan))
        how = "normal approximation"
    return {"p_value": p, "test": f"{TEST_SHORT}, {how}", "units_differ": k}


def _columns_of(formulas: Mapping[str, tuple], columns: Mapping[str, int], key: str) -> List[int]:
    """The count columns a key's value depends on."""
    kind, *operands = formulas[key]
    if kind in ("mean", "diff", "relative"):
        return sorted({c for operand in operands for c in _columns_of(formulas, columns, operand)})
    return sorted({columns[c] for c in operands})  # a macro F1 reads a group's correct count twice without found


def _needed(formulas: Mapping[str, tuple], key: str, rank: Optional[Mapping[str, int]] = None) -> Dict[str, tuple]:
    """The formulas of ``key`` and of the keys it is derived from, in definition order
    (``rank``: each key's place in ``formulas``, so as not to scan them all)."""
    wanted, stack = set(), [key]
    while stack:
        current = stack.pop()
        wanted.add(current)
        kind, *operands = formulas[current]
        if kind in ("mean", "diff", "relative"):
            stack += operands
    if rank is not None:
        return {k: formulas[k] for k in sorted(wanted, key=rank.__getitem__)}
    return {k: f for k, f in formulas.items() if k in wanted}


_SWAPS: List[np.ndarray] = []  # row r: the bits of r, the swaps of every unit but the last, made once


def _moving(delta: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(the columns of ``delta`` some unit moves, ``delta`` on those columns)."""
    moving = np.flatnonzero(np.any(delta != 0, axis=0))
    return moving, delta[:, moving]


# Values of one swapped table computed at once by the exact test (2 MB a table).
_SWAPPED = 1 << 18


def _exact(sub, local, key, total_a, total_b, moving, delta, observed) -> float:
    """The share of the 2^k swaps of the differing units (rows of ``delta``) whose |A - B| is at
    least the observed one (a tolerance keeps float noise in a tie from counting as less).
    Swapping every unit exchanges A and B, so each swap's |A - B| is its complement's: half
    of the swaps (the last unit never swapped) give the same share.  ``sub``: the formulas
    ``key`` needs, over the columns ``local`` numbers as in ``total_a`` and ``total_b``;
    ``delta``: the differences in the columns ``moving`` (the others are equal in A and B).
    An average over types reads only the types a swap moves (the others' part is the same in
    every swap: summed once), and the swaps are taken a block at a time: memory follows the
    moved counts, not the types."""
    k = len(delta)
    if not _SWAPS:
        _SWAPS.append(((np.arange(2 ** (EXACT_UNITS - 1))[:, None] >> np.arange(EXACT_UNITS - 1)) & 1).astype(float))
    kind, *operands = sub[key]
    if _is_average(kind):
        places = np.array([local[c] for c in operands], dtype=np.int64).reshape(-1, 4)  # (c, g, p, r) a group
        moved_group = np.isin(places, moving).any(axis=1)
        fixed = _average_sums(kind, [total_a[places[~moved_group, i]] for i in range(4)])
        read, where = np.unique(places[moved_group], return_inverse=True)
        where = where.reshape(-1, 4)

        def value(totals):
            return _average(kind, [totals[..., where[:, i]] for i in range(4)], fixed)
    else:
        read = np.arange(len(total_a))
        values_of = evaluator(sub, local, [key])  # its columns looked up once, not for every block of swaps

        def value(totals):
            return values_of(totals)[key]
    spread = np.zeros((k, len(read)))
    spread[:, np.searchsorted(read, moving)] = delta
    total_a, total_b = total_a[read], total_b[read]
    threshold = abs(observed) - 1e-12 * max(1.0, abs(observed))
    rows, extreme = max(1, _SWAPPED // max(1, len(read))), 0
    for start in range(0, 2 ** (k - 1), rows):
        moved = _SWAPS[0][start:min(start + rows, 2 ** (k - 1)), :k - 1] @ spread[:k - 1]
        with np.errstate(invalid="ignore"):
            extreme += np.count_nonzero(np.abs(value(total_a - moved) - value(total_b + moved)) >= threshold)
    return float(extreme / 2 ** (k - 1))


def _contributions(formulas: Mapping[str, tuple], columns: Mapping[str, int], at: np.ndarray,
                   delta: np.ndarray) -> Dict[str, np.ndarray]:
    """Per key, each unit's linear contribution to A - B: the key's gradient at the totals
    ``at`` times the unit's count differences (rows of ``delta``).  Zero where the value is
    undefined."""
    values = evaluate(formulas, columns, at)
    out: Dict[str, np.ndarray] = {}

    def safe(x):
        return np.where(x != 0, x, 1.0)

    for key, (kind, *operands) in formulas.items():
        if kind == "ratio":
            (n, d), (dn, dd) = ((at[columns[c]] for c in operands), (delta[:, columns[c]] for c in operands))
            u = dn / safe(d) - n * dd / safe(d) ** 2 if d > 0 else np.zeros(len(delta))
        elif kind == "f1" and len(operands) == 4:  # 2cr / (cg + rp)
            c, g, p, r = (at[columns[x]] for x in operands)
            dc, dg, dp, dr = (delta[:, columns[x]] for x in operands)
            den = c * g + r * p
            u = (2 * r * r * p * dc + 2 * c * c * g * dr - 2 * c * c * r * dg - 2 * c * r * r * dp) / den ** 2 \
                if den > 0 else np.zeros(len(delta))
        elif kind == "f1":  # 2c / (g + p)
            c, g, p = (at[columns[x]] for x in operands)
            dc, dg, dp = (delta[:, columns[x]] for x in operands)
            u = 2 * dc / (g + p) - 2 * c * (dg + dp) / (g + p) ** 2 if g + p > 0 else np.zeros(len(delta))
        elif kind.startswith("f_beta:"):
            u = _f_beta_gradient(_beta(kind), [at[columns[x]] for x in operands],
                                 [delta[:, columns[x]] for x in operands])
        elif _is_average(kind):
            u = _average_gradient(kind, [at[[columns[x] for x in operands[i::4]]] for i in range(4)],
                                  [delta[:, [columns[x] for x in operands[i::4]]] for i in range(4)])
        elif kind == "mean":
            u = (out[operands[0]] + out[operands[1]]) / 2
        elif kind == "diff":
            u = out[operands[0]] - out[operands[1]]
        else:  # relative: a / b
            x, y = values[operands[0]], values[operands[1]]
            u = out[operands[0]] / y - x * out[operands[1]] / y ** 2 if y and not math.isnan(y) and not math.isnan(x) \
                else np.zeros(len(delta))
        out[key] = np.nan_to_num(np.asarray(u, dtype=float))
    return out


def _f_beta_gradient(beta: float, at: List[np.ndarray], delta: List[np.ndarray]) -> np.ndarray:
    """The gradient of F-beta (``_formula``) at the counts ``at`` times the count differences
    ``delta`` (per unit; per unit and group when the counts are per group); 0 where undefined."""
    b2 = beta * beta
    if len(at) == 3:  # (1 + b^2) c / (b^2 g + p)
        (c, g, p), (dc, dg, dp) = at, delta
        den = b2 * g + p
        return np.where(den > 0, (1 + b2) * (dc * den - c * (b2 * dg + dp)) / np.where(den > 0, den, 1) ** 2, 0.0)
    (c, g, p, r), (dc, dg, dp, dr) = at, delta  # (1 + b^2) c r / (b^2 c g + r p)
    num, den = (1 + b2) * c * r, b2 * c * g + r * p
    d_num = (1 + b2) * (dc * r + c * dr)
    d_den = b2 * (dc * g + c * dg) + dr * p + r * dp
    return np.where(den > 0, (d_num * den - num * d_den) / np.where(den > 0, den, 1) ** 2, 0.0)


def _average_gradient(kind: str, at: List[np.ndarray], delta: List[np.ndarray]) -> np.ndarray:
    """Each unit's linear contribution to an average over groups (``_average``): the groups'
    scores' gradients at the totals ``at`` = (c, g, p, r) times the unit's count differences
    ``delta``, averaged as the scores are (the set of defined groups held fixed)."""
    c, g, p, r = at
    dg = delta[1]
    average, _, measure = kind.partition("_")
    score, u = _group_gradient(measure, at, delta)
    defined = (g + p) > 0
    if average == "macro":
        return u[:, defined].sum(axis=1) / max(int(defined.sum()), 1)
    support = g[defined].sum()
    if support <= 0:
        return np.zeros(len(u))
    weighted = (score * g)[defined].sum() / support  # d(sum s g / G) = (sum (u g + s dg) - W dG) / G
    return ((u * g + score * dg)[:, defined].sum(axis=1) - weighted * dg[:, defined].sum(axis=1)) / support


def _average_coefficients(kind: str, at: List[np.ndarray]) -> np.ndarray:
    """(4, groups): the coefficient of each group's c, g, p and r difference in a unit's
    contribution to the average (``_average_gradient`` is the sum of the unit's differences
    times them), from the groups' gradients of a unit difference in one count."""
    c, g, p, r = at
    average, _, measure = kind.partition("_")
    zero, one = np.zeros_like(c, dtype=float), np.ones_like(c, dtype=float)
    coefficients = np.zeros((4, len(c)))
    for i in range(4):
        score, coefficients[i] = _group_gradient(measure, at, [one if j == i else zero for j in range(4)])
    defined = (g + p) > 0
    coefficients[:, ~defined] = 0.0
    if average == "macro":
        return coefficients / max(int(defined.sum()), 1)
    support = g[defined].sum()
    if support <= 0:
        return np.zeros_like(coefficients)
    weighted = (score * g)[defined].sum() / support
    coefficients *= g
    coefficients[1] += np.where(defined, score - weighted, 0.0)  # a g difference also moves the weights
    return coefficients / support


def _group_gradient(measure: str, at: List[np.ndarray], delta: List[np.ndarray]):
    """(each group's score, 0 where undefined; its gradient at the totals ``at`` times the count
    differences ``delta``, group by group)."""
    c, g, p, r = at
    dc, dg, dp, dr = delta

    def safe(x):
        return np.where(x > 0, x, 1.0)

    if measure == "f1":  # 2cr / (cg + rp)
        den = c * g + r * p
        score = np.where(den > 0, 2 * c * r / safe(den), 0.0)
        u = np.where(den > 0, (2 * r * r * p * dc + 2 * c * c * g * dr - 2 * c * c * r * dg - 2 * c * r * r * dp)
                     / safe(den) ** 2, 0.0)
    elif measure.startswith("f_beta:"):
        score = np.nan_to_num(_formula(measure, at))
        u = _f_beta_gradient(_beta(measure), at, delta)
    else:
        n, d, dn, dd = (c, p, dc, dp) if measure == "precision" else (r, g, dr, dg)
        score = np.where(d > 0, n / safe(d), 0.0)
        u = np.where(d > 0, dn / safe(d) - n * dd / safe(d) ** 2, 0.0)
    return score, u


def holm(p_values: Sequence[float]) -> List[float]:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count as a test)."""
    p = np.asarray(p_values, dtype=float)
    known = np.flatnonzero(~np.isnan(p))
    adjusted = np.full(len(p), math.nan)
    m = len(known)
    running = 0.0
    for rank, i in enumerate(known[np.argsort(p[known], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def family_size(p_values: Iterable[float]) -> int:
    """Holm's m: the tests of a family that have a p-value (NaN is no test, as in ``holm``)."""
    return sum(not math.isnan(p) for p in p_values)


def adjust(tests: Sequence[dict], alpha: float = 0.05, better: Optional[Sequence[str]] = None,
           family: str = "table") -> List[dict]:
    """The verdicts of one family of tests: a new dict per test (the tests are not changed; a
    report decides each test in one family, and a table that shows it elsewhere reads that
    verdict) with ``family``, ``m`` (tests
    in the family), ``p_adjusted`` (Holm over the family), ``significant`` and ``better`` (the
    significantly better system, or None).  ``better`` gives, per test, ``"high"`` or ``"low"``
    (which direction is better), or None for a key that is not ranked."""
    adjusted = holm([t["p_value"] for t in tests])
    m = family_size(t["p_value"] for t in tests)
    return [verdict(test, p, m, alpha, better[i] if better is not None else "high", family)
            for i, (test, p) in enumerate(zip(tests, adjusted))]


def verdict(test: dict, p_adjusted: float, m: int, alpha: float, direction: Optional[str], family: str) -> dict:
    """One test's verdict in its family of ``m`` tests, from its Holm-adjusted p-value
    (``holm`` over the family): a new dict, as ``adjust`` describes."""
    significant = bool(not math.isnan(p_adjusted) and p_adjusted < alpha)
    winner = None
    if significant and direction in ("high", "low") and test["difference"] != 0:
        a_higher = test["difference"] > 0
        winner = test["a"] if a_higher == (direction == "high") else test["b"]
    return {**test, "family": family, "m": m, "p_adjusted": p_adjusted, "significant": significant, "better": winner}


def intervals(counts: Counts, keys: Optional[Sequence[str]] = None, n_resamples: int = 1000,
              confidence: float = 0.95, seed: int = 0, unit: str = "sentence") -> Dict[str, List[float]]:
    """``{key: [low, high]}`` for one system."""
    table = analyse({"system": counts}, keys, n_resamples, confidence, seed, unit)
    return {key: row["ci"]["system"] for key, row in table.items()}


def with_intervals(result: dict, counts: Counts, n_resamples: int = 1000, confidence: float = 0.95,
                   seed: int = 0, unit: str = "sentence") -> dict:
    """``result`` with ``<key>_ci_low`` / ``<key>_ci_high`` after each rate key it has."""
    keys = [key for key in counts.keys if key in result]
    ci = intervals(counts, keys, n_resamples, confidence, seed, unit)
    out = {}
    for key, value in result.items():
        out[key] = value
        if key in ci:
            out[f"{key}_ci_low"], out[f"{key}_ci_high"] = ci[key]
    return out


# ---- several runs per system ---------------------------------------------------------------
def aggregate_runs(runs: Sequence[Mapping]) -> Dict[str, Dict[str, float]]:
    """Mean, sample standard deviation (n - 1; NaN for one run), min, max and the values of each
    numeric flat key over runs (e.g. training seeds) on the same test set; NaN if any run is NaN."""
    if not runs:
        raise ValueError("aggregate needs at least one run")
    table = {}
    for key, value in runs[0].items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or any(key not in run for run in runs):
            continue  # a key some run lacks (a type only one run predicted) has no aggregate
        values = np.array([run[key] for run in runs], dtype=float)
        table[key] = {"mean": float(np.mean(values)),
                      "std": float(np.std(values, ddof=1)) if len(values) > 1 else math.nan,
                      "min": float(np.min(values)), "max": float(np.max(values)), "runs": len(values),
                      "values": values.tolist()}
    return table


def pooled(runs: Sequence[Counts]) -> Counts:
    """One system's runs as one: each sentence's counts averaged over the runs (the paired
    bootstrap pooled over runs).  The runs must cover the same sentences in the same order."""
    first = runs[0]
    for run in runs[1:]:
        if not np.array_equal(run.order, first.order) or run.names != first.names:
            raise ValueError("runs to pool must be scored on the same test set with the same options")
    mean = Counts(first.order, first.strata, first.documents)
    if first.has_entries:  # summed run after run, as numpy's mean adds them, then divided: the same numbers
        kept = [run.kept_entries() for run in runs]
        summed = Entries(len(first), len(first.columns), *(np.concatenate(part) for part in zip(
            *((k.column_of, k.rows, k.values) for k in kept))))
        mean._entries = [(summed.column_of, summed.rows, summed.values / len(runs))]
    dense = [j for j, column in enumerate(first.columns) if column is not None]
    stacked = np.mean([np.stack([run.columns[j] for j in dense], axis=1) if dense else np.zeros((len(first), 0))
                       for run in runs], axis=0)
    mean.columns = [None] * len(first.columns)
    for i, j in enumerate(dense):
        mean.columns[j] = stacked[:, i]
    mean.names, mean.keys, mean.size = dict(first.names), dict(first.keys), dict(first.size)
    return mean


def compare_runs(results_a: Sequence[Mapping], results_b: Sequence[Mapping], counts_a: Sequence[Counts],
                 counts_b: Sequence[Counts], keys: Optional[Sequence[str]] = None, n_resamples: int = 1000,
                 confidence: float = 0.95, seed: int = 0, unit: str = "sentence") -> Dict[str, dict]:
    """Two systems with several runs each: per key the runs' aggregates, the paired bootstrap /
    approximate randomisation test on counts pooled over runs, and, when the run counts match,
    the Wilcoxon signed-rank test over runs paired by index (needs scipy; with fewer than 6
    pairs it cannot reach p < 0.05)."""
    a, b = pooled(counts_a), pooled(counts_b)
    if keys is None:  # the keys the runs report (counts may hold contrasts beyond them)
        keys = [key for key in a.keys if key in results_a[0] and key in results_b[0]]
    table = analyse({"A": a, "B": b}, keys, n_resamples, confidence, seed, unit)
    aggregated_a, aggregated_b = aggregate_runs(results_a), aggregate_runs(results_b)
    paired = len(results_a) == len(results_b) and len(results_a) > 1
    out = {}
    for key, row in table.items():
        test = row["tests"][0]
        entry = {"A": aggregated_a.get(key), "B": aggregated_b.get(key), "pooled": {
            "difference": test["difference"], "ci": test["ci"], "p_value": test["p_value"],
            "test": test["test"] + ", counts pooled over runs"}}
        if paired:
            entry["wilcoxon"] = wilcoxon_runs([r[key] for r in results_a], [r[key] for r in results_b])
        out[key] = entry
    return out


def wilcoxon_runs(a: Sequence[float], b: Sequence[float]) -> dict:
    """The Wilcoxon signed-rank test of two systems' values over runs paired by index."""
    differences = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    keep = ~np.isnan(differences)
    result = {"n_pairs": int(keep.sum()), "test": "Wilcoxon signed-rank over runs paired by index"}
    if not np.any(differences[keep] != 0):
        return {**result, "statistic": math.nan, "p_value": math.nan}
    try:
        from scipy import stats
    except ImportError:
        return {**result, "statistic": math.nan, "p_value": math.nan, "note": "needs scipy (diagnostics extra)"}
    test = stats.wilcoxon(differences[keep])
    return {**result, "statistic": float(test.statistic), "p_value": float(test.pvalue)}
