"""Findings: what a report's numbers say, in sentences, most important first.

Each finding is built from the report's results only (never recomputed) and carries its
numbers, n and interval.  A difference is stated as a difference only when its test says so:
between systems, the Holm-adjusted paired test of the summary; within a system, a 95% interval
of the contrast that excludes 0.  Everything else is said to be not significant.
"""
from __future__ import annotations

import math
from typing import Dict, List, Mapping, Optional

from .formatting import format_p, row_label
from ..core.uncertainty import SMALL


def _pct(value: float) -> str:
    return "nan" if value is None or math.isnan(value) else f"{100 * value:.0f}%"


def _ci(interval, percent: bool = True) -> str:
    if not interval or any(v is None or math.isnan(v) for v in interval):
        return ""
    low, high = interval
    return f", 95% CI [{_pct(low)}, {_pct(high)}]" if percent else f", 95% CI [{low:+.3f}, {high:+.3f}]"


def _n(n: Optional[int]) -> str:
    if n is None:
        return ""
    return f"n = {n}" + (f", a small subset (< {SMALL})" if n < SMALL else "")


def _winner_minus_loser(test: Mapping, winner: str) -> str:
    """The test's difference and interval as winner - loser."""
    sign = 1 if test["a"] == winner else -1
    low, high = sorted(sign * v for v in test["ci"])
    return f"{sign * test['difference']:+.3f}{_ci([low, high], False)}"


def findings(results: Mapping) -> List[Dict[str, object]]:
    """``[{"text", "weight", "kind"}]`` sorted by weight (the size of the effect), largest first."""
    found: List[Dict[str, object]] = []
    summary = results.get("summary", {})
    rows = {row["key"]: row for row in summary.get("rows", []) if not row.get("bucket")}
    systems = summary.get("systems", [])
    family = results.get("families", {}).get("headline", {}).get("description", "Holm-adjusted over the rows")

    # Between systems: per winner and loser, how many rows it wins and the largest wins in
    # numbers; then one sentence for the rows where no difference is significant.
    wins: Dict[tuple, list] = {}
    compared, not_significant = set(), []
    for row in summary.get("rows", []):
        label = row_label(row)
        for test in row.get("tests", []):
            if row["better"] is None or math.isnan(test.get("p_value", math.nan)):
                continue
            compared.add(label)
            if test.get("better"):
                loser = test["b"] if test["better"] == test["a"] else test["a"]
                wins.setdefault((test["better"], loser), []).append((row, test, label))
            else:
                not_significant.append((label, test["a"], test["b"]))
    for (winner, loser), won in wins.items():
        won.sort(key=lambda item: -abs(item[1]["difference"]))
        largest = "; ".join(
            f"{label} {row['values'][winner]:.3f} vs {row['values'][loser]:.3f} "
            f"({_winner_minus_loser(test, winner)}, adjusted p {format_p(test['p_adjusted'])}, "
            f"{_n(row['n'].get(winner))})"
            for row, test, label in won[:3])
        found.append({"kind": "comparison", "weight": abs(won[0][1]["difference"]), "text": (
            f"{winner} is significantly better than {loser} on {len(won)} of the {len(compared)} compared "
            f"measures (paired tests, {family}); the largest differences: {largest}.")})
    if not_significant and len(systems) > 1:
        found.append({"kind": "comparison", "weight": 0.0, "text": (
            f"No significant difference ({family}) on: " + ", ".join(
                f"{label} ({a} vs {b})" if len(systems) > 2 else label
                for label, a, b in dict.fromkeys(not_significant)) + ".")})

    # Within each system: unseen versus seen mentions (TMR), where the errors fall (HardEval).
    for system in systems:
        contrast = results.get("contrasts", {}).get(system, {}).get("recall_seen_minus_unseen")
        scores = results["systems"][system].get("tmr", {})
        if contrast and not math.isnan(contrast["value"]):
            low, high = contrast["ci"]
            seen, unseen = scores["recall_seen"], scores["recall_unseen_tokens"]
            if low > 0 or high < 0:
                found.append({"kind": "unseen", "weight": abs(contrast["value"]), "text": (
                    f"{system} misses {_pct(1 - unseen)} of the mentions never seen in training "
                    f"({_n(scores['n_unseen_tokens'])}) against {_pct(1 - seen)} of the seen ones "
                    f"({_n(scores['n_seen'])}); recall gap {contrast['value']:+.3f}{_ci(contrast['ci'], False)}.")})
            else:
                found.append({"kind": "unseen", "weight": 0.0, "text": (
                    f"{system}'s recall on unseen mentions ({_pct(unseen)}, {_n(scores['n_unseen_tokens'])}) "
                    f"does not differ significantly from its recall on seen ones ({_pct(seen)}).")})
        breakdown = results.get("details", {}).get(system, {}).get("hardeval", {}).get("error_breakdown")
        if breakdown:
            hard_errors = (breakdown["unseen"]["errors"] + breakdown["diff"]["errors"])
            hard_tokens = (breakdown["unseen"]["tokens"] + breakdown["diff"]["tokens"])
            all_errors = hard_errors + breakdown["other"]["errors"]
            all_tokens = hard_tokens + breakdown["other"]["tokens"]
            if all_errors and all_tokens:
                share_errors, share_tokens = hard_errors / all_errors, hard_tokens / all_tokens
                found.append({"kind": "errors", "weight": max(share_errors - share_tokens, 0.0), "text": (
                    f"{_pct(share_errors)} of {system}'s {all_errors} token errors fall on the "
                    f"{100 * share_tokens:.1f}% of test tokens that are unseen in training or whose label differs "
                    f"from their usual training label (HardEval).")})

    # NRB: accuracy on names typed only by context, and the WTS control.
    for system in systems:
        scores = results["systems"][system].get("nrb")
        gap = rows.get("gap")
        if not scores or gap is None or system not in gap.get("ci", {}):
            continue
        low, high = gap["ci"][system]
        caveat = (" Its WTS accuracy is below 0.8, so the gap reflects domain shift rather than name bias."
                  if scores["wts_accuracy"] < 0.8 else "")
        verdict = ("a significant name-regularity gap" if low > 0 else "no significant gap") + \
            f" of {gap['values'][system]:+.3f}{_ci(gap['ci'][system], False)}"
        found.append({"kind": "nrb", "weight": abs(gap["values"][system]) if low > 0 else 0.0, "text": (
            f"{system} types {_pct(scores['nrb_accuracy'])} of the NRB targets correctly "
            f"({_n(scores['nrb_n'])}) against {_pct(scores['wts_accuracy'])} on WTS: {verdict}.{caveat}")})

    # RockNER: F1 under the strongest attack given.
    relative = rows.get("f1_drop_relative")
    for system in systems:
        scores = results["systems"][system].get("rockner")
        if not scores or relative is None or system not in relative.get("ci", {}):
            continue
        curve = results.get("attack_curve", {}).get(system)
        where = f"the attacked set “{curve[-1]['set']}”" if curve else "the attack"  # the set its keys are of
        found.append({"kind": "attack", "weight": scores["f1_drop"], "text": (
            f"On {where}, {system}'s F1 falls from {scores['f1_original']:.3f} to {scores['f1_attacked']:.3f}: "
            f"a relative drop of {_pct(scores['f1_drop_relative'])}{_ci(relative['ci'][system])} "
            f"({_n(scores['n_attacked'])} attacked gold entities).")})
    return sorted(found, key=lambda item: -float(item["weight"]))
