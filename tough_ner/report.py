"""Run every available method on one test set and several systems; render the results."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .batch import Batch
from .buckets import bucket_f1, compare, interval_text
from .corpus import Corpus
from .hardeval import hardeval
from .nrb import TypeMap, score_sets
from .rockner import rockner
from .stats import TrainStats
from .tmr import tmr

# method name -> scorer of (stats, batch) returning flat keys; later methods add themselves here.
METHODS: Dict[str, Callable[[TrainStats, Batch], dict]] = {
    "hardeval": hardeval,
    "tmr": tmr,
    "bucket_f1": bucket_f1,
}


def run(stats: TrainStats, test: Corpus, systems: Sequence[str], nrb_sets: Optional[Tuple[Corpus, Corpus]] = None,
        type_map: TypeMap = None, attacked: Optional[Mapping[str, Sequence[Tuple[str, Corpus]]]] = None) -> dict:
    """``{"describe": {...}, "systems": {system: {method: flat result}}}``, and with two or
    more systems ``"comparison"``: the bucket comparative diagnosis of the first two.
    ``nrb_sets``: NRB and WTS corpora with one prediction list per system (types mapped by
    ``type_map``) add each system's ``"nrb"`` result.  ``attacked``: per system, attacked
    versions of the test set ``(label, corpus with that system's predictions)``, mildest
    first; each system's ``"rockner"`` result is for the last one, and ``"attack_curve"``
    holds every version's F1 and drop."""
    if len(systems) != len(test.predictions):
        raise ValueError(f"{len(systems)} system names for {len(test.predictions)} prediction sets")
    results = {"describe": {"train": stats.describe(), "test": stats.describe_test(test.tokens, test.tags)},
               "systems": {}}
    detailed = []  # bucket tables of the first two systems, for the comparison
    for name, predictions in zip(systems, test.predictions):
        batch = Batch(test.tokens, test.tags, predictions)
        scores = {method: score(stats, batch) for method, score in METHODS.items() if method != "bucket_f1"}
        if len(systems) > 1 and len(detailed) < 2:
            detailed.append(bucket_f1(stats, batch, detailed=True, bootstrap=0))
            scores["bucket_f1"] = {k: v for k, v in detailed[-1].items() if k not in ("buckets", "diagnostics")}
        else:
            scores["bucket_f1"] = bucket_f1(stats, batch)
        results["systems"][name] = {method: scores[method] for method in METHODS}
    if nrb_sets is not None:
        nrb_set, wts_set = nrb_sets
        for i, name in enumerate(systems):
            results["systems"][name]["nrb"] = score_sets(
                {"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[i]),
                 "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[i])}, type_map, stats)
    if attacked:
        results["attack_curve"] = {}
        for name, versions in attacked.items():
            if name not in results["systems"]:
                raise ValueError(f"attacked predictions for {name!r}, which is not one of the systems {list(systems)}")
            original = Batch(test.tokens, test.tags, test.predictions[list(systems).index(name)])
            curve = [{"set": label, **rockner(original, Batch(corpus.tokens, corpus.tags, corpus.predictions[0]))}
                     for label, corpus in versions]
            results["systems"][name]["rockner"] = {k: v for k, v in curve[-1].items() if k != "set"}
            results["attack_curve"][name] = [{k: point[k] for k in ("set", "f1_attacked", "f1_drop",
                                                                     "f1_drop_relative")} for point in curve]
    if len(detailed) == 2:
        results["comparison"] = {"systems": list(systems[:2]), "bucket_f1": compare(*detailed)}
    return results


def format_value(value) -> str:
    """A number as shown in tables: 4 decimals for floats, ``nan`` for NaN."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_text(results: dict) -> str:
    """A readable plain-text table: one block per method, systems side by side."""
    lines: List[str] = []
    train, test = results["describe"]["train"], results["describe"]["test"]
    lines.append("Training mentions: {mentions} ({ambiguous_mentions} ambiguous), {unique_mentions} unique "
                 "({ambiguous_unique_mentions} ambiguous)".format(**train))
    lines.append("Test mentions: {mentions} ({unseen_mentions} unseen), {unique_mentions} unique "
                 "({unseen_unique_mentions} unseen)".format(**test))
    systems = results["systems"]
    methods = list(dict.fromkeys(method for scores in systems.values() for method in scores))
    for method in methods:
        keys = list(dict.fromkeys(key for scores in systems.values() for key in scores.get(method, {})))
        width = max([len(k) for k in keys] + [len(method)])
        lines.append("")
        lines.append(method.ljust(width) + "".join(f"  {s:>12}" for s in systems))
        lines.append("-" * (width + 14 * len(systems)))
        for key in keys:  # "-": a method not run for that system
            lines.append(key.ljust(width) + "".join(f"  {format_value(scores.get(method, {}).get(key, '-')):>12}"
                                                    for scores in systems.values()))
    for name, curve in results.get("attack_curve", {}).items():
        lines += ["", f"attack curve, {name}: F1 on each attacked set (drop)"]
        lines += [f"  {point['set']:<14} {format_value(point['f1_attacked'])}  ({format_value(point['f1_drop'])})"
                  for point in curve]
    if "comparison" in results:
        a, b = results["comparison"]["systems"]
        lines += ["", f"bucket F1, {a} - {b}: largest and smallest difference per attribute"]
        for attribute, cell in results["comparison"]["bucket_f1"].items():
            if cell["largest"] is None:
                continue
            ends = [f"{interval_text(attribute, cell['intervals'][i])} {cell['difference'][i]:+.4f}"
                    for i in (cell["largest"], cell["smallest"])]
            lines.append(f"  {attribute:<5} largest {ends[0]:<24} smallest {ends[1]}")
    return "\n".join(lines)
