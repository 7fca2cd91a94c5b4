"""Bucket labels people read: "1 token", "≥ 4 tokens", "unseen in training", "seen 1–3 times",
"label-consistent (1.0)", "6.7–12% of tokens".  The exact interval stays in the JSON and, in
HTML, in a tooltip (``buckets.interval_text``).  One function for the text report, the HTML
page and the Spaces.
"""
from __future__ import annotations

import math
from typing import Mapping, Optional

from ..methods.buckets import SPECIAL

# attribute -> training total its values are shares of (key of ``totals``)
COUNT_SHARES = {"eFre": "mentions", "tFre": "tokens"}
_UNITS = {"eLen": "token", "sLen": "token"}


def percent(value: float) -> str:
    """A share as a percentage with sensible rounding: 0%, 0.42%, 6.7%, 12%, 100%."""
    pct = 100 * value
    if pct == 0 or pct >= 10 or pct == round(pct):
        return f"{pct:.0f}%" if pct >= 10 or pct == round(pct) else f"{pct:.2g}%"
    return f"{pct:.2g}%"


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" + ("" if n == 1 else "s")


def _range(low: Optional[float], high: Optional[float], show, unit: str = "") -> str:
    """``low < x <= high`` as text; None: open end."""
    tail = f" {unit}" if unit else ""
    if low is None:
        return f"≤ {show(high)}{tail}"
    if high is None:
        return f"> {show(low)}{tail}"
    first, last = show(low), show(high)
    if first.endswith("%") and last.endswith("%"):
        first = first[:-1]
    return f"{first}–{last}{tail}" if show(low) != last else f"{last}{tail}"


# axis titles for short labels (plots): what the numbers count
UNITS = {"eLen": "tokens in the entity", "sLen": "tokens in the sentence", "eDen": "entities per token",
         "oDen": "share of unseen words", "eFre": "training mentions of the text", "tFre": "training occurrences",
         "eCon": "label consistency", "tCon": "label consistency", "tag": "type"}
_SHORT = (("unseen in training", "unseen"), ("token unseen", "unseen"), ("entity density ", ""),
          (" unseen words", ""), ("label-consistent (1.0)", "1.0"), ("never this label (0)", "0"),
          ("consistent ", ""), (" tokens", ""), (" token", ""), (" times", "×"), (" time", "×"), ("seen ", ""))


def bucket_label(attribute: str, interval, totals: Optional[Mapping[str, int]] = None, short: bool = False) -> str:
    """The bucket ``interval`` of ``attribute`` in words.  ``totals`` (``{"mentions": n,
    "tokens": n}`` of the training data) turns eFre / tFre shares into training counts;
    ``short``: the number part only, for plot ticks (the axis says the unit, ``UNITS``)."""
    text = _label(attribute, interval, totals)
    if short:
        for long, brief in _SHORT:
            text = text.replace(long, brief)
    return text


def empty_bucket(attribute: str, interval) -> bool:
    """Whether a bucket holds nothing by construction: a regular bucket cut on one value,
    ``(v, v]`` (views leave it out rather than show an interval with NaN)."""
    if isinstance(interval, str):
        return False
    low, high = (float(v) for v in interval)
    return low == high and attribute != "eLen" and low not in SPECIAL.get(attribute, ())


def _label(attribute: str, interval, totals: Optional[Mapping[str, int]]) -> str:
    if isinstance(interval, str):
        return interval
    low, high = (float(v) for v in interval)
    if empty_bucket(attribute, interval):
        return f"empty ({low:.4g}, {high:.4g}]"  # a regular bucket cut on one value holds nothing
    special = SPECIAL.get(attribute, ())
    bottom, top = (0.0 if 0.0 in special else -math.inf), (1.0 if 1.0 in special else math.inf)
    if attribute != "eLen" and low == bottom and high == top:
        return "all other values" if special else "all"  # one regular bucket spans everything
    if attribute in ("eLen", "sLen"):  # integer counts of tokens
        unit = "tokens"
        if low == high:
            return _count(int(low), "token")
        if high == math.inf:
            return f"≥ {int(low) if attribute == 'eLen' else int(math.floor(low)) + 1} {unit}"
        if low == -math.inf:
            return f"≤ {int(high)} {unit}"
        first, last = int(math.floor(low)) + 1, int(high)
        return _count(first, "token") if first == last else f"{first}–{last} {unit}"
    if attribute in COUNT_SHARES:
        what = "unseen in training" if attribute == "eFre" else "token unseen in training"
        total = (totals or {}).get(COUNT_SHARES[attribute])
        if low == high == 0.0:
            return what
        if total:
            first = int(round(low * total)) + 1
            if high == math.inf:
                return f"seen ≥ {first} times"
            last = int(round(high * total))
            return f"seen {first} time" if first == last == 1 else (
                f"seen {first} times" if first == last else f"seen {first}–{last} times")
        return "share " + _range(None if low <= 0 else low, None if high == math.inf else high, percent)
    if attribute in ("eCon", "tCon"):
        if low == high == 1.0:
            return "label-consistent (1.0)"
        if low == high == 0.0:
            return "never this label (0)"
        return "consistent " + _range(None if low <= 0 else low, None if high >= 1 else high, percent)
    # eDen, oDen: shares of the sentence
    text = percent(low) if low == high else _range(None if low in (-math.inf, 0.0) else low,
                                                   None if high == math.inf else high, percent)
    return f"entity density {text}" if attribute == "eDen" else f"{text} unseen words"


def totals(results: Mapping) -> dict:
    """The training totals of a report's results (``describe.train``) for ``bucket_label``."""
    train = results.get("describe", {}).get("train", {})
    return {"mentions": train.get("mentions"), "tokens": train.get("tokens")}
