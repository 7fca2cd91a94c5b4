"""How a number and an interval are written in every text view (the CLI, the report's tables,
the HTML page, the Spaces).  Its own module, without imports of the methods, so that a command
printing one method's result does not load them all."""
from __future__ import annotations

import json
import math
from typing import Mapping


def format_value(value) -> str:
    """A number as shown in tables: 4 decimals for floats, ``nan`` for NaN."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_interval(ci) -> str:
    """``[0.8012, 0.8234]``, or an empty string when there is no interval."""
    if not ci or any(isinstance(v, float) and math.isnan(v) for v in ci):
        return ""
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def row_label(row: Mapping) -> str:
    """A headline row's name as every view writes it: with its bucket (``worst eLen bucket (1
    token)``) or the attacked set its values are of (``F1 attacked (entity 1)``)."""
    where = row.get("bucket") or row.get("set")
    return row["label"] + (f" ({where})" if where else "")


def format_p(p: float) -> str:
    """``= 0.004``, ``= 2.5e-08`` (below 0.001, where an adjusted p is compared with a small
    alpha / m) or ``= nan``."""
    return "= nan" if math.isnan(p) else (f"= {p:.3f}" if p >= 0.001 else f"= {p:.1e}")


def describe_test(test: Mapping) -> str:
    """A one-line reading of a test: ``+0.0170 [0.0060, 0.0290], p = 0.004 (Holm = 0.012)``."""
    low, high = test["ci"]
    p, adjusted = test["p_value"], test.get("p_adjusted", math.nan)
    difference = round(test["difference"], 4) + 0.0  # no "-0.0000"
    interval = "[no interval]" if math.isnan(low) else f"[{low:.4f}, {high:.4f}]"
    text = f"{difference:+.4f} {interval}, p {format_p(p)}"
    return text + (f" (Holm {format_p(adjusted)})" if not math.isnan(adjusted) else "")


def to_json(value) -> str:
    """Indented JSON of a result: NaN as null, infinite bucket bounds as "inf" / "-inf"."""
    def clean(item):
        if isinstance(item, float) and math.isnan(item):
            return None
        if isinstance(item, float) and math.isinf(item):  # open bucket bounds; strict JSON has no Infinity
            return "inf" if item > 0 else "-inf"
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        if isinstance(item, list):
            return [clean(v) for v in item]
        return item
    return json.dumps(clean(value), indent=2, ensure_ascii=False, allow_nan=False)
