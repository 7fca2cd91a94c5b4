"""Statistically honest comparisons of systems on one test set, for every method.

``compare`` scores each system with a method's per-sentence counts, then gives, per key, each
system's value with its confidence interval and n, the paired test of every pair of systems
(``tough_ner.uncertainty``), Holm-adjusted over the rows of the table, and the significantly
better system(s) only.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .buckets import counts as bucket_counts
from .hardeval import counts as hardeval_counts
from .nrb import counts as nrb_counts
from .rockner import CATEGORIES, VERSIONS
from .rockner import counts as rockner_counts
from .tmr import counts as tmr_counts
from ..core.batch import Batch, with_shared_types
from ..core.stats import TrainStats
from ..core.uncertainty import (INTERVAL_NAME, SMALL, TEST_NAME, Counts, adjust, analyse, check_options,
                                family_size, holm, verdict)

# method -> counts of (stats, scored input, options); the scored input is a Batch, except for
# nrb (a (Batch, portion per sentence or None) pair) and rockner (an (original, attacked) pair).
COUNTS: Dict[str, Callable[..., Counts]] = {
    "hardeval": hardeval_counts,
    "tmr": tmr_counts,
    "bucket_f1": bucket_counts,
    "nrb": lambda stats, scored, type_map=None: nrb_counts(scored[0], type_map, scored[1], stats),
    "rockner": lambda stats, pair: rockner_counts(*pair),
}
# Keys that are shown but never ranked: an absolute drop rewards a weak system (F1 = 0 drops
# nothing), the WTS - NRB gap shrinks when a system fails the WTS control set, and TMR's
# seen - unseen recall is a contrast within a system (a larger one: more memorisation, not better).
UNRANKED = {"f1_drop", "gap", "recall_seen_minus_unseen"}


def direction(method: str, key: str) -> Optional[str]:
    """``"high"`` or ``"low"`` (which value is better), or None for a key never ranked."""
    if key in UNRANKED or (method == "rockner" and key.split("_", 1)[0] in VERSIONS
                           and key.split("_", 1)[1] in CATEGORIES):
        return None
    if method == "hardeval" or key == "f1_drop_relative":
        return "low"
    return "high"


def rows(analysis: Mapping[str, dict], method: str, labels: Optional[Mapping[str, str]] = None,
         alpha: float = 0.05, family: Optional[str] = None) -> List[dict]:
    """Table rows from ``uncertainty.analyse`` output; the table is one family of tests
    (Holm-adjusted together), named ``family`` (default: the method's table)."""
    return list(decided_rows(analysis, method, labels, alpha, family)[1])


def decided_rows(analysis: Mapping[str, dict], method: str, labels: Optional[Mapping[str, str]] = None,
                 alpha: float = 0.05, family: Optional[str] = None,
                 decided: Optional[Mapping[str, Mapping]] = None) -> Tuple[int, Iterator[dict]]:
    """``rows`` made one at a time, for a table too large to hold as dicts (a bucket F1 row per
    entity type, its cells made as they are read): each cell is read twice, once for the
    family's p-values (Holm over them, as ``adjust`` does), once to make its row with its
    verdicts.  ``decided``: rows of this table whose tests another family decided (a report's
    headline), by key: they keep those verdicts (``tests``, ``best``, ``family``) and are not
    in this family, so that no test is decided twice.  (m: the family's tests with a p-value,
    the rows in order.)"""
    name = family or f"{method} table"
    decided = decided or {}
    p_values = [test["p_value"] for key in analysis if key not in decided for test in analysis[key]["tests"]]
    m = family_size(p_values)
    adjusted = iter(holm(p_values))

    def made() -> Iterator[dict]:
        for key in analysis:
            cell = analysis[key]
            made_row = row((labels or {}).get(key, key), method, key, cell["values"], cell["ci"], cell["n"],
                           cell["tests"])
            if key in decided:
                elsewhere = decided[key]
                yield {**made_row, "tests": elsewhere["tests"], "best": elsewhere["best"],
                       "family": elsewhere["family"]}
                continue
            yield _decided(made_row, (verdict(test, next(adjusted), m, alpha, made_row["better"], name)
                                      for test in made_row["tests"]), name)
    return m, made()


def row(label: str, method: str, key: str, values: Mapping, ci: Mapping, n: Mapping, tests: List[dict]) -> dict:
    """One table row: every system's value, interval and n, small subsets marked, the paired tests."""
    return {"label": label, "method": method, "key": key, "better": direction(method, key), "values": values,
            "ci": ci, "n": n, "small": {s: size < SMALL for s, size in n.items()}, "tests": tests}


def finish(table: List[dict], alpha: float = 0.05, family: str = "table") -> None:
    """Decide the verdicts of one family, the tests of every row of ``table``: each row gets its
    own verdicts (``uncertainty.adjust``: Holm over the family) and ``best``, the systems
    significantly better than every system they were tested against (empty when none).  Every
    mark shown for the row is read from these, never decided again."""
    tests = [test for row in table for test in row["tests"]]
    verdicts = iter(adjust(tests, alpha, [row["better"] for row in table for _ in row["tests"]], family))
    for row in table:
        _decided(row, verdicts, family)


def _decided(row: dict, verdicts: Iterator[dict], family: str) -> dict:
    """The row with its tests' verdicts (the next of ``verdicts``, one a test), its family and ``best``."""
    row["tests"] = [next(verdicts) for _ in row["tests"]]
    row["family"], row["best"] = family, best(row)
    return row


def best(row: Mapping) -> List[str]:
    """The systems of a row significantly better than every system they were tested against."""
    wins: Dict[str, int] = {}
    played: Dict[str, int] = {}
    for test in row["tests"]:
        for system in (test["a"], test["b"]):
            played[system] = played.get(system, 0) + 1
        if test["better"] is not None:
            wins[test["better"]] = wins.get(test["better"], 0) + 1
    return [s for s in row["values"] if played.get(s) and wins.get(s, 0) == played[s]]


def family(name: str, table: Sequence[Mapping], alpha: float, what: str) -> dict:
    """A family's description (``described_family``) from its rows."""
    return described_family(name, len(table), family_size(t["p_value"] for row in table for t in row["tests"]),
                            alpha, what)


def described_family(name: str, n_rows: int, m: int, alpha: float, what: str, elsewhere: int = 0,
                     where: str = "headline") -> dict:
    """A family's description: how many rows and tests (``m``: those with a p-value), the
    adjustment and the level; ``elsewhere``: rows of the same table decided in the ``where``
    family (each test is decided once), said in the description."""
    kept = f"; its {elsewhere} rows also in the {where} keep the {where}'s verdicts" if elsewhere else ""
    return {"name": name, "rows": n_rows, "tests": m, "adjustment": "Holm", "alpha": alpha,
            **({"rows_decided_in": {where: elsewhere}} if elsewhere else {}),
            "description": f"Holm over the {n_rows} {what} ({m} tests){kept}"}


def pairs(names: Sequence[str], baseline: Optional[str] = None) -> List[tuple]:
    """The compared pairs: every system against ``baseline`` (k - 1 pairs), else all pairs."""
    names = list(names)
    if baseline is None:
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}")
    return [(name, baseline) for name in names if name != baseline]


def compare(systems: Mapping[str, object], method: str = "tmr", train=None, keys: Optional[Sequence[str]] = None,
            n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0, unit: str = "sentence",
            alpha: float = 0.05, baseline: Optional[str] = None, **options) -> dict:
    """Compare systems scored on the same test set with one method.

    ``systems``: name -> the scored input (a ``Batch`` with predictions; for ``nrb`` a
    ``(Batch, portion)`` pair, for ``rockner`` an ``(original, attacked)`` pair of Batches).
    ``train``: anything ``TrainStats.coerce`` takes (not needed by nrb and rockner).  ``baseline``:
    compare every system with this one only (else every pair).  The table is one family of
    tests (``family``: Holm over its rows).  Returns
    ``{"method", "test", "interval", "n_resamples", "confidence", "unit", "alpha", "rows", "family"}``; each
    row has ``values``, ``ci`` and ``n`` per system, ``tests`` (``difference``, ``ci``,
    ``test``, ``p_value``, ``family``, ``m``, ``p_adjusted``, ``significant``, ``better`` per pair)
    and ``best``.
    """
    if method not in COUNTS:
        raise ValueError(f"method={method!r}: use one of {', '.join(COUNTS)}")
    if len(systems) < 2:
        raise ValueError(f"compare needs at least two systems, got {len(systems)}")
    check_options(n_resamples, confidence, unit, alpha)
    stats = TrainStats.coerce(train) if train is not None or method not in ("nrb", "rockner") else None
    if all(isinstance(scored, Batch) for scored in systems.values()):  # compared type by type: the same types
        systems = with_shared_types(dict(systems))
    counts = {name: COUNTS[method](stats, scored, **options) for name, scored in systems.items()}
    analysis = analyse(counts, keys, n_resamples, confidence, seed, unit, pairs=pairs(list(counts), baseline))
    table = rows(analysis, method, alpha=alpha)
    return {"method": method, "test": TEST_NAME, "interval": INTERVAL_NAME, "n_resamples": n_resamples,
            "confidence": confidence, "unit": unit, "alpha": alpha, "rows": table,
            "family": family(f"{method} table", table, alpha, "rows of the table")}
