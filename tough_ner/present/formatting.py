"""How a number and an interval are written in every text view (the CLI, the report's tables,
the HTML page, the Spaces).  Its own module, without imports of the methods, so that a command
printing one method's result does not load them all."""
from __future__ import annotations

import math


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


def format_p(p: float) -> str:
    """``= 0.004``, ``= 2.5e-08`` (below 0.001, where an adjusted p is compared with a small
    alpha / m) or ``= nan``."""
    return "= nan" if math.isnan(p) else (f"= {p:.3f}" if p >= 0.001 else f"= {p:.1e}")


