"""Run every available method on one test set and several systems; summarise the results.

``run`` returns one JSON-ready dict: ``describe``, each system's flat keys per method
(``systems``), the nested tables (``details``), a compact ``summary`` with the best system per
row, and, when asked, the bucket ``comparison`` and the ``attack_curve``.  ``format_text``
renders it for a terminal; ``tough_ner.html`` renders it as one self-contained page.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .batch import Batch
from .buckets import ATTRIBUTES, bucket_f1, compare, interval_text
from .corpus import Corpus
from .hardeval import hardeval
from .nrb import TypeMap, score_sets
from .rockner import rockner
from .scoring import matched
from .stats import TrainStats
from .tmr import mention_texts, tmr

# method name -> scorer of (stats, batch, detailed) returning flat keys (and tables when detailed).
METHODS: Dict[str, Callable[..., dict]] = {
    "hardeval": hardeval,
    "tmr": tmr,
    "bucket_f1": bucket_f1,
}

# The compact summary: (label, method, key, which is better).  "worst bucket" rows are added per attribute.
SUMMARY_ROWS: List[Tuple[str, str, str, str]] = [
    ("precision", "tmr", "precision", "high"), ("recall", "tmr", "recall", "high"), ("F1", "tmr", "f1", "high"),
    ("hardeval (mean TER)", "hardeval", "hardeval", "low"), ("TER unseen", "hardeval", "ter_unseen", "low"),
    ("TER diff", "hardeval", "ter_diff", "low"),
    ("TMR recall seen", "tmr", "recall_seen", "high"), ("TMR recall unseen", "tmr", "recall_unseen_tokens", "high"),
    ("TMR recall unseen type", "tmr", "recall_unseen_type", "high"),
    ("TMR recall TCM", "tmr", "recall_tcm_all", "high"),
]
NRB_ROWS = [("NRB accuracy", "nrb", "nrb_accuracy", "high"), ("WTS accuracy", "nrb", "wts_accuracy", "high"),
            ("WTS - NRB gap", "nrb", "gap", "low")]
ATTACK_ROWS = [("F1 attacked", "rockner", "f1_attacked", "high"), ("F1 drop", "rockner", "f1_drop", "low")]

Steps = Iterable[Tuple[str, Callable[[], None]]]


def _split(result: Mapping) -> Tuple[dict, dict]:
    """(flat scalar keys, nested tables) of a detailed result."""
    flat = {k: v for k, v in result.items() if not isinstance(v, (dict, list))}
    return flat, {k: v for k, v in result.items() if isinstance(v, (dict, list))}


def hard_mentions(stats: TrainStats, batch: Batch, top: int = 10) -> List[dict]:
    """The gold mentions missed most often (text, type, test count, misses, training counts by type)."""
    texts = list(zip(mention_texts(batch), (batch.types[t] for t in batch.span_arrays("gold")[3].tolist())))
    hit = matched(batch).tolist()
    seen, missed = Counter(texts), Counter(key for key, found in zip(texts, hit) if not found)
    training = stats.mention_types()
    rows = [{"text": text, "type": entity_type, "n": seen[(text, entity_type)], "misses": misses,
             "train": dict(sorted(training.get(text, {}).items()))}
            for (text, entity_type), misses in missed.items()]
    return sorted(rows, key=lambda r: (-r["misses"], -r["n"], r["text"], r["type"]))[:top]


def run(stats: TrainStats, test: Corpus, systems: Sequence[str], nrb_sets: Optional[Tuple[Corpus, Corpus]] = None,
        type_map: TypeMap = None, attacked: Optional[Mapping[str, Sequence[Tuple[str, Corpus]]]] = None,
        bootstrap: int = 1000, seed: int = 0, progress: Callable[[Steps], Steps] = lambda steps: steps) -> dict:
    """Every method for every system.

    ``nrb_sets``: NRB and WTS corpora with one prediction list per system (types mapped by
    ``type_map``).  ``attacked``: per system, attacked versions of the test set ``(label,
    corpus with that system's predictions)``, mildest first; the ``rockner`` keys are those of
    the last.  ``bootstrap`` resamples give the bucket F1 intervals.  ``progress`` wraps the
    list of ``(label, step)`` pairs (a progress bar).
    """
    if len(systems) != len(test.predictions):
        raise ValueError(f"{len(systems)} system names for {len(test.predictions)} prediction sets")
    if len(set(systems)) != len(systems):
        raise ValueError(f"system names must differ: {list(systems)}")
    options = {"bucket_f1": {"bootstrap": bootstrap, "seed": seed}}
    results: dict = {"describe": {"train": stats.describe(), "test": stats.describe_test(test.tokens, test.tags)},
                     "systems": {name: {} for name in systems}, "details": {name: {} for name in systems}}

    def record(name: str, method: str, result: Mapping) -> None:
        results["systems"][name][method], tables = _split(result)
        if tables:
            results["details"][name][method] = tables

    def score_system(name: str, predictions) -> Callable[[], None]:
        def step():
            batch = Batch(test.tokens, test.tags, predictions)
            for method, score in METHODS.items():
                record(name, method, score(stats, batch, detailed=True, **options.get(method, {})))
            results["details"][name]["hard_mentions"] = hard_mentions(stats, batch)
        return step

    def score_nrb(i: int, name: str) -> Callable[[], None]:
        nrb_set, wts_set = nrb_sets
        return lambda: record(name, "nrb", score_sets(
            {"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[i]),
             "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[i])}, type_map, stats, detailed=True))

    def score_attacks(name: str, versions) -> Callable[[], None]:
        def step():
            original = Batch(test.tokens, test.tags, test.predictions[list(systems).index(name)])
            curve = [(label, rockner(original, Batch(corpus.tokens, corpus.tags, corpus.predictions[0]), True))
                     for label, corpus in versions]
            record(name, "rockner", curve[-1][1])
            results.setdefault("attack_curve", {})[name] = [
                {"set": label, **{k: r[k] for k in ("f1_attacked", "f1_drop", "f1_drop_relative")}}
                for label, r in curve]
        return step

    steps = [(f"scoring {name}", score_system(name, predictions))
             for name, predictions in zip(systems, test.predictions)]
    if nrb_sets is not None:
        steps += [(f"NRB/WTS {name}", score_nrb(i, name)) for i, name in enumerate(systems)]
    for name, versions in (attacked or {}).items():
        if name not in results["systems"]:
            raise ValueError(f"attacked predictions for {name!r}, which is not one of the systems {list(systems)}")
        steps.append((f"attacks {name}", score_attacks(name, versions)))
    for _, step in progress(steps):
        step()
    if len(systems) > 1:
        a, b = systems[:2]
        results["comparison"] = {"systems": [a, b], "bucket_f1": compare(
            {**results["systems"][a]["bucket_f1"], **results["details"][a]["bucket_f1"]},
            {**results["systems"][b]["bucket_f1"], **results["details"][b]["bucket_f1"]})}
    results["summary"] = summary(results)
    return results


def _best(values: Dict[str, float], better: str) -> List[str]:
    """The systems with the best value, when at least two have one and they are not all equal
    (compared to 12 decimals, so float noise does not pick a winner)."""
    known = {s: round(v, 12) for s, v in values.items() if isinstance(v, (int, float)) and not math.isnan(v)}
    if len(known) < 2 or len(set(known.values())) == 1:
        return []
    target = max(known.values()) if better == "high" else min(known.values())
    return [s for s, v in known.items() if v == target]


def summary(results: dict) -> dict:
    """The compact table: systems ordered by F1 (best first), one row per headline number
    with the best system(s) marked; the worst bucket F1 of each attribute."""
    systems = results["systems"]
    order = sorted(systems, key=lambda s: -_number(systems[s]["tmr"]["f1"]))
    rows = []
    specs = SUMMARY_ROWS + [row for row in NRB_ROWS if any("nrb" in systems[s] for s in systems)] \
        + [row for row in ATTACK_ROWS if any("rockner" in systems[s] for s in systems)]
    for label, method, key, better in specs:
        values = {s: systems[s].get(method, {}).get(key, math.nan) for s in order}
        rows.append({"label": label, "method": method, "key": key, "better": better, "values": values,
                     "best": _best(values, better)})
    for attribute in ATTRIBUTES:
        values, where = {}, {}
        for s in order:
            buckets = [r for r in results["details"][s]["bucket_f1"]["buckets"][attribute] if not math.isnan(r["f1"])]
            worst = min(buckets, key=lambda r: r["f1"], default=None)
            values[s] = worst["f1"] if worst else math.nan
            where[s] = interval_text(attribute, worst["interval"]) if worst else ""
        rows.append({"label": f"worst {attribute} bucket", "method": "bucket_f1", "key": attribute, "better": "high",
                     "values": values, "buckets": where, "best": _best(values, "high")})
    return {"systems": order, "rows": rows}


def _number(value) -> float:
    return -math.inf if value is None or (isinstance(value, float) and math.isnan(value)) else value


def format_value(value) -> str:
    """A number as shown in tables: 4 decimals for floats, ``nan`` for NaN."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_text(results: dict, full: bool = False) -> str:
    """The terminal summary (systems side by side, ``*`` marks the best per row); ``full``
    adds every flat key of every method."""
    train, test = results["describe"]["train"], results["describe"]["test"]
    lines = ["Training mentions: {mentions} ({ambiguous_mentions} ambiguous), {unique_mentions} unique "
             "({ambiguous_unique_mentions} ambiguous)".format(**train),
             "Test mentions: {mentions} ({unseen_mentions} unseen), {unique_mentions} unique "
             "({unseen_unique_mentions} unseen)".format(**test), ""]
    table = results["summary"]
    order = table["systems"]
    cells = [[(f"{row['buckets'][s]}: " if row.get("buckets", {}).get(s) else "") + format_value(row["values"][s])
              + ("*" if s in row["best"] else " ") for s in order] for row in table["rows"]]
    width = max(len(r["label"]) for r in table["rows"]) + 2
    cell = max([len(s) for s in order] + [len(text) for texts in cells for text in texts]) + 2
    lines.append("summary: systems by F1, * best, ↑ higher / ↓ lower is better")
    lines.append(" " * (width + 2) + "".join(s.rjust(cell - 1) + " " for s in order))
    for row, texts in zip(table["rows"], cells):
        arrow = "↑" if row["better"] == "high" else "↓"
        lines.append(f"{row['label']:<{width}}{arrow} " + "".join(text.rjust(cell) for text in texts))
    if full:
        for method in dict.fromkeys(m for scores in results["systems"].values() for m in scores):
            keys = list(dict.fromkeys(k for scores in results["systems"].values() for k in scores.get(method, {})))
            key_width = max([len(k) for k in keys] + [len(method)])
            lines += ["", method.ljust(key_width) + "".join(f"  {s:>12}" for s in results["systems"]),
                      "-" * (key_width + 14 * len(results["systems"]))]
            for key in keys:  # "-": a method not run for that system
                lines.append(key.ljust(key_width) + "".join(
                    f"  {format_value(scores.get(method, {}).get(key, '-')):>12}"
                    for scores in results["systems"].values()))
    if "comparison" in results:
        a, b = results["comparison"]["systems"]
        lines += ["", f"bucket F1, {a} - {b}: largest and smallest difference per attribute"]
        for attribute, diff in results["comparison"]["bucket_f1"].items():
            if diff["largest"] is None:
                continue
            ends = [f"{interval_text(attribute, diff['intervals'][i])} {diff['difference'][i]:+.4f}"
                    for i in (diff["largest"], diff["smallest"])]
            lines.append(f"  {attribute:<5} largest {ends[0]:<24} smallest {ends[1]}")
    for name, curve in results.get("attack_curve", {}).items():
        lines += ["", f"attack curve, {name}: F1 on each attacked set (drop)"]
        lines += [f"  {point['set']:<14} {format_value(point['f1_attacked'])}  ({format_value(point['f1_drop'])})"
                  for point in curve]
    return "\n".join(lines)
