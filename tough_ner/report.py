"""Run every available method on one test set and several systems; render the results."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Sequence

from .batch import Batch
from .corpus import Corpus
from .hardeval import hardeval
from .stats import TrainStats
from .tmr import tmr

# method name -> scorer of (stats, batch) returning flat keys; later methods add themselves here.
METHODS: Dict[str, Callable[[TrainStats, Batch], dict]] = {
    "hardeval": hardeval,
    "tmr": tmr,
}


def run(stats: TrainStats, test: Corpus, systems: Sequence[str]) -> dict:
    """``{"describe": {...}, "systems": {system: {method: flat result}}}``."""
    if len(systems) != len(test.predictions):
        raise ValueError(f"{len(systems)} system names for {len(test.predictions)} prediction sets")
    results = {"describe": {"train": stats.describe(), "test": stats.describe_test(test.tokens, test.tags)},
               "systems": {}}
    for name, predictions in zip(systems, test.predictions):
        batch = Batch(test.tokens, test.tags, predictions)
        results["systems"][name] = {method: score(stats, batch) for method, score in METHODS.items()}
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
    systems = list(results["systems"])
    for method in METHODS:
        keys = list(next(iter(results["systems"].values()))[method]) if systems else []
        width = max([len(k) for k in keys] + [len(method)])
        lines.append("")
        lines.append(method.ljust(width) + "".join(f"  {s:>12}" for s in systems))
        lines.append("-" * (width + 14 * len(systems)))
        for key in keys:
            lines.append(key.ljust(width) + "".join(f"  {format_value(results['systems'][s][method][key]):>12}"
                                                    for s in systems))
    return "\n".join(lines)
