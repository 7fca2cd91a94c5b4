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
"""
from __future__ import annotations

import math
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

UNITS = ("sentence", "document")
EXACT_UNITS = 16  # up to 2^16 swaps of differing units are enumerated; beyond, the normal approximation
MIN_UNITS = 20  # fewer resampling units give no interval (a percentile of a handful of units)
TEST_SHORT = "paired randomisation test (two-sided)"
TEST_NAME = (f"{TEST_SHORT}: exact over every swap of the units whose counts differ when at most {EXACT_UNITS} do, "
             "else its normal approximation (delta method); paired bootstrap percentile interval")
INTERVAL_NAME = "percentile bootstrap"
SMALL = 30  # subsets below this size are flagged as small


# ---- counts -------------------------------------------------------------------------------
def sentence_keys(tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]]) -> np.ndarray:
    """A 64-bit content hash of each sentence's tokens and gold tags (the canonical order)."""
    import hashlib  # here, not at start-up: it loads OpenSSL, a few ms for commands that never resample

    keys = np.empty(len(tokens), dtype=np.uint64)
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
    gold side has its own correct count, as with partial-match credits), and ``("mean" | "diff" | "relative", a, b)``
    over keys already defined (mean of a and b; a - b; a / b).  ``size`` names each key's n.
    """

    def __init__(self, order: np.ndarray, strata: Optional[np.ndarray] = None,
                 documents: Optional[Sequence] = None):
        self.order = np.asarray(order, dtype=np.uint64)
        n = len(self.order)
        self.strata = np.zeros(n, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
        self.documents = None if documents is None else np.asarray(documents)
        self.columns: List[np.ndarray] = []
        self.names: Dict[str, int] = {}
        self.keys: Dict[str, tuple] = {}
        self.size: Dict[str, str] = {}  # key -> column whose total is its n

    def __len__(self) -> int:
        return len(self.order)

    def column(self, name: str, values) -> str:
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self),):
            raise ValueError(f"column {name!r} has shape {values.shape}, expected ({len(self)},)")
        if name in self.names:
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
            found=None) -> None:
        """precision, recall and F1 keys (named by ``keys``) from per-sentence correct, gold and
        predicted counts; n = gold.  ``found``: the gold side's own correct counts (recall's
        numerator; partial-match credits), ``correct`` then being the predictions'."""
        precision, recall, f1 = keys
        c, g, p = (self.column(f"{f1}/{name}", values)
                   for name, values in (("correct", correct), ("gold", gold), ("pred", predicted)))
        if found is None:
            self.keys[precision], self.keys[recall], self.keys[f1] = ("ratio", c, p), ("ratio", c, g), ("f1", c, g, p)
        else:
            r = self.column(f"{f1}/found", found)
            self.keys[precision], self.keys[recall], self.keys[f1] = ("ratio", c, p), ("ratio", r, g), ("f1", c, g, p, r)
        for key in keys:
            self.size[key] = g

    def derive(self, key: str, kind: str, a: str, b: str, size=None) -> None:
        """``key`` from keys ``a`` and ``b``; its n is ``a``'s, or the total of ``size`` (per sentence)."""
        if kind not in ("mean", "diff", "relative") or a not in self.keys or b not in self.keys:
            raise ValueError(f"cannot derive {key!r} as {kind} of {a!r} and {b!r}")
        self.keys[key] = (kind, a, b)
        self.size[key] = self.size[a] if size is None else self.column(key + "/n", size)

    def matrix(self) -> np.ndarray:
        """(sentences, columns)."""
        return np.stack(self.columns, axis=1) if self.columns else np.zeros((len(self), 0))

    def values(self, sums: np.ndarray, keys: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """Each key's value from summed columns (``sums[..., column]``)."""
        return evaluate(self.keys, self.names, sums, keys)

    def point(self) -> Dict[str, float]:
        return {key: float(value) for key, value in self.values(self.matrix().sum(axis=0)).items()}

    def sizes(self) -> Dict[str, int]:
        totals = self.matrix().sum(axis=0)
        return {key: int(round(totals[self.names[column]])) for key, column in self.size.items()}


def evaluate(keys: Mapping[str, tuple], names: Mapping[str, int], sums: np.ndarray,
             wanted: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
    """Apply the key formulas to summed counts; NaN where a denominator is 0."""
    values: Dict[str, np.ndarray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for key, (kind, *operands) in keys.items():
            if kind == "ratio":
                num, den = (sums[..., names[c]] for c in operands)
                values[key] = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
            elif kind == "f1" and len(operands) == 4:  # 2PR / (P + R) with P = c / p, R = r / g
                c, g, p, r = (sums[..., names[c]] for c in operands)
                denominator = c * g + r * p
                f1 = 2 * c * r / np.where(denominator > 0, denominator, 1)
                values[key] = np.where(g + p > 0, np.where(denominator > 0, f1, 0.0), np.nan)
            elif kind == "f1":  # 2c / (g + p): the harmonic mean of P and R, 0 when nothing is right
                c, g, p = (sums[..., names[c]] for c in operands)
                total = g + p
                values[key] = np.where(total > 0, 2 * c / np.where(total > 0, total, 1), np.nan)
            elif kind == "mean":
                values[key] = (values[operands[0]] + values[operands[1]]) / 2
            elif kind == "diff":
                values[key] = values[operands[0]] - values[operands[1]]
            elif kind == "relative":
                a, b = values[operands[0]], values[operands[1]]
                values[key] = np.where(b != 0, a / np.where(b != 0, b, 1), np.nan)
            else:
                raise ValueError(f"unknown formula {kind!r} for {key!r}")
    return values if wanted is None else {key: values[key] for key in wanted}


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
    first = counts[0]
    for other in counts[1:]:
        if len(other) != len(first) or not np.array_equal(np.sort(other.order), np.sort(first.order)):
            raise ValueError("paired comparisons need the same test sentences for every system")
    # Each system's sentences sorted by stratum and content hash, so rows pair up even when
    # the systems were given the sentences in different orders.
    aligned = [(c, np.lexsort((c.order, c.strata))) for c in counts]
    matrix = np.hstack([c.matrix()[order] for c, order in aligned])
    strata = first.strata[aligned[0][1]]
    keys = first.order[aligned[0][1]]
    if unit == "document":
        documents = first.documents
        if documents is None:
            raise ValueError("unit='document' needs document ids (-DOCSTART- groups, or a document input)")
        documents = documents[aligned[0][1]]
        names, inverse = np.unique(documents.astype(str), return_inverse=True)
        summed = np.zeros((len(names), matrix.shape[1]))
        np.add.at(summed, inverse, matrix)
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
        matrix, strata, keys = summed, unit_strata, unit_keys
    # Canonical order: stratum, content hash, then the counts themselves (ties: identical sentences;
    # a fixed random projection of the counts stands for them).
    projection = np.random.default_rng(0).random(matrix.shape[1]) if matrix.shape[1] else None
    row_keys = matrix @ projection if projection is not None else np.zeros(len(keys))
    order = np.lexsort((row_keys, keys, strata))
    return matrix[order], strata[order]


_CHUNK = 20_000_000  # weights held at once (160 MB): resamples are drawn in chunks below it
_WEIGHTS: Dict[tuple, np.ndarray] = {}  # the last draws, reused by every method of a report


def resample_weights(strata: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(resamples, units): how often each unit is drawn, resampling with replacement within
    each stratum.  Deterministic for the strata, count and seed."""
    return np.vstack(list(_weight_chunks(strata, n_resamples, seed)))


def _weight_chunks(strata: np.ndarray, n_resamples: int, seed: int):
    """The resample weights in row chunks of at most ``_CHUNK`` weights, from one random stream."""
    rows = max(1, min(n_resamples, _CHUNK // max(len(strata), 1)))
    rng = np.random.default_rng([seed, 0])
    for start in range(0, n_resamples, rows):
        yield _draw(strata, min(rows, n_resamples - start), rng)


def _draw(strata: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    weights = np.zeros((n_resamples, len(strata)))
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        draws = rng.integers(0, len(members), size=(n_resamples, len(members)))
        block = np.empty((n_resamples, len(members)))
        for r in range(n_resamples):  # row by row: far faster than one huge bincount
            block[r] = np.bincount(draws[r], minlength=len(members))
        weights[:, members] = block
    return weights


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
            pairs: Optional[Sequence[Tuple[str, str]]] = None) -> Dict[str, dict]:
    """Intervals for every system and paired tests for every pair of systems (or ``pairs``),
    with one draw of resample weights and one matrix product.

    Returns ``{key: {"values", "ci", "n", "tests"}}``: values and n per system, ci per system
    ``[low, high]``, tests a list of ``{"a", "b", "difference", "ci", "p_value"}``.  The
    p-values are raw here; ``adjust`` applies Holm's adjustment over a table's rows.
    """
    check_options(n_resamples, confidence, unit, alpha)
    names = list(systems)
    if not names:
        raise ValueError("no system to analyse")
    counts = [systems[name] for name in names]
    keys = list(keys if keys is not None else counts[0].keys)
    missing = [k for k in keys if any(k not in c.keys for c in counts)]
    if missing:
        raise ValueError(f"unknown key(s) {missing}: keys with counts are {sorted(counts[0].keys)}")
    matrix, strata = units(counts, unit)
    width = len(counts[0].columns)
    if any(len(c.columns) != width or c.names != counts[0].names for c in counts):
        raise ValueError("the systems' results have different columns: score them with the same options")
    if not keys:  # nothing to give an interval or a test (a result without rate keys)
        return {}
    blocks = [matrix[:, i * width:(i + 1) * width] for i in range(len(names))]
    formulas, columns = counts[0].keys, counts[0].names

    resampled = resampled_totals(strata, matrix, n_resamples, seed)  # (R, systems * columns)
    point = {name: evaluate(formulas, columns, block.sum(axis=0), keys) for name, block in zip(names, blocks)}
    boot = {name: evaluate(formulas, columns, resampled[:, i * width:(i + 1) * width], keys)
            for i, name in enumerate(names)}
    sizes = {name: c.sizes() for name, c in zip(names, counts)}
    table = {key: {"values": {n: float(point[n][key]) for n in names},
                   "ci": {}, "n": {n: sizes[n][key] for n in names}, "tests": []} for key in keys}
    for name in names:
        low, high = _percentiles(np.stack([boot[name][k] for k in keys], axis=1), confidence)
        for j, key in enumerate(keys):
            table[key]["ci"][name] = [float(low[j]), float(high[j])]

    pairs = list(pairs) if pairs is not None else [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    index = {name: i for i, name in enumerate(names)}
    for a, b in pairs:
        low, high = _percentiles(np.stack([boot[a][key] - boot[b][key] for key in keys], axis=1), confidence)
        tested = randomisation(formulas, columns, blocks[index[a]], blocks[index[b]], keys)
        for j, key in enumerate(keys):
            table[key]["tests"].append({"a": a, "b": b, "difference": float(point[a][key] - point[b][key]),
                                        "ci": [float(low[j]), float(high[j])], **tested[key]})
    if len(strata) < MIN_UNITS:  # a percentile of a handful of units is no interval: say so
        for cell in table.values():
            cell["ci"] = {name: [math.nan, math.nan] for name in names}
            for test in cell["tests"]:
                test["ci"] = [math.nan, math.nan]
    for cell in table.values():
        cell["units"] = len(strata)
    return table


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
    out = {}
    for key in keys:
        d = float(observed[key])
        used = _columns_of(formulas, columns, key)
        rows = np.flatnonzero(differ[:, used].any(axis=1))
        k = len(rows)
        if math.isnan(d):
            p, how = math.nan, "no difference to test (a value is undefined)"
        elif k == 0:
            p, how = 1.0, "identical counts"
        elif k <= EXACT_UNITS:
            p, how = _exact(formulas, columns, key, used, total_a, total_b, delta[rows], d), "exact"
        else:
            u = contributions[key]
            variance = float(np.sum(u ** 2))
            # Continuity correction: half the smallest step the difference can take (with equal
            # contributions, where the distribution is a binomial's, it keeps the test at or
            # below alpha); p no smaller than a permutation test over k units can give.
            step = float(np.min(np.abs(u[u != 0]))) if np.any(u != 0) else 0.0
            p = (max(math.erfc(max(abs(d) - step, 0.0) / math.sqrt(2 * variance)), 2.0 ** (1 - k))
                 if variance > 0 else (1.0 if d == 0 else math.nan))
            how = "normal approximation"
        out[key] = {"p_value": p, "test": f"{TEST_SHORT}, {how}", "units_differ": k}
    return out


def _columns_of(formulas: Mapping[str, tuple], columns: Mapping[str, int], key: str) -> List[int]:
    """The count columns a key's value depends on."""
    kind, *operands = formulas[key]
    if kind in ("mean", "diff", "relative"):
        return sorted({c for operand in operands for c in _columns_of(formulas, columns, operand)})
    return sorted(columns[c] for c in operands)


def _needed(formulas: Mapping[str, tuple], key: str) -> Dict[str, tuple]:
    """The formulas of ``key`` and of the keys it is derived from, in definition order."""
    wanted, stack = set(), [key]
    while stack:
        current = stack.pop()
        wanted.add(current)
        kind, *operands = formulas[current]
        if kind in ("mean", "diff", "relative"):
            stack += operands
    return {k: f for k, f in formulas.items() if k in wanted}


_SWAPS: List[np.ndarray] = []  # row r: the bits of r, the swaps of every unit but the last, made once


def _exact(formulas, columns, key, used, total_a, total_b, delta, observed) -> float:
    """The share of the 2^k swaps of the differing units (rows of ``delta``) whose |A - B| is at
    least the observed one (a tolerance keeps float noise in a tie from counting as less).
    Swapping every unit exchanges A and B, so each swap's |A - B| is its complement's: half
    of the swaps (the last unit never swapped) give the same share."""
    k = len(delta)
    if not _SWAPS:
        _SWAPS.append(((np.arange(2 ** (EXACT_UNITS - 1))[:, None] >> np.arange(EXACT_UNITS - 1)) & 1).astype(float))
    moved = _SWAPS[0][:2 ** (k - 1), :k - 1] @ delta[:k - 1, used]
    local = {name: used.index(j) for name, j in columns.items() if j in used}
    sub = _needed(formulas, key)
    swapped_a = evaluate(sub, local, total_a[used] - moved, [key])[key]
    swapped_b = evaluate(sub, local, total_b[used] + moved, [key])[key]
    threshold = abs(observed) - 1e-12 * max(1.0, abs(observed))
    with np.errstate(invalid="ignore"):
        return float(np.count_nonzero(np.abs(swapped_a - swapped_b) >= threshold) / 2 ** (k - 1))


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


def adjust(tests: Sequence[dict], alpha: float = 0.05, better: Optional[Sequence[str]] = None,
           family: str = "table") -> List[dict]:
    """The verdicts of one family of tests: a new dict per test (the tests are not changed, so
    a test shown in two tables gets two verdicts, one per family) with ``family``, ``m`` (tests
    in the family), ``p_adjusted`` (Holm over the family), ``significant`` and ``better`` (the
    significantly better system, or None).  ``better`` gives, per test, ``"high"`` or ``"low"``
    (which direction is better), or None for a key that is not ranked."""
    adjusted = holm([t["p_value"] for t in tests])
    m = sum(not math.isnan(t["p_value"]) for t in tests)
    out = []
    for i, (test, p) in enumerate(zip(tests, adjusted)):
        direction = better[i] if better is not None else "high"
        significant = bool(not math.isnan(p) and p < alpha)
        winner = None
        if significant and direction in ("high", "low") and test["difference"] != 0:
            a_higher = test["difference"] > 0
            winner = test["a"] if a_higher == (direction == "high") else test["b"]
        out.append({**test, "family": family, "m": m, "p_adjusted": p,
                    "significant": significant, "better": winner})
    return out


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
    stacked = np.mean([run.matrix() for run in runs], axis=0)
    for name, j in first.names.items():
        mean.column(name, stacked[:, j])
    mean.keys, mean.size = dict(first.keys), dict(first.size)
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
