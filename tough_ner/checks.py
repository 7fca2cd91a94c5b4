"""Warnings about the inputs of a report: does the training data look like the systems' own?

Seen / unseen subsets (HardEval, TMR, eFre, ...) only mean "memorised" / "new to the model"
when ``--train`` is the data the systems were trained on.  Two signs that it is not, read
from the TMR results (heuristics, not tests; the warning says so):
  - almost no test mention occurs in the training data (< ``MIN_SEEN_SHARE``);
  - a system recalls the test mentions seen in training no better than those it never saw
    (both subsets with at least ``MIN_N`` mentions): a system trained on these data almost
    always recalls what it saw better.
The person can also say so (``train_is_reference``); then the report says what the subsets mean.
"""
from __future__ import annotations

import math
from typing import List, Mapping

MIN_SEEN_SHARE = 0.05
MIN_N = 30
REFERENCE_NOTE = ("the training data is a reference corpus, not the systems' own training data (as stated): "
                  "'seen' and 'unseen' mean seen or unseen in that corpus, not memorised by the systems")


def _known(value) -> bool:
    return isinstance(value, (int, float)) and not math.isnan(value)


def training_data_warnings(results: Mapping, train_is_reference: bool = False) -> List[str]:
    """Plain-language warnings for a report's results (``report.run``)."""
    if train_is_reference:
        return [REFERENCE_NOTE]
    warnings = []
    systems = results["systems"]
    first = next(iter(systems.values()), {}).get("tmr", {})
    n, n_seen = first.get("n_mentions", 0), first.get("n_seen", 0)
    if n >= MIN_N and n_seen / n < MIN_SEEN_SHARE:
        warnings.append(f"only {n_seen} of the {n} test mentions ({100 * n_seen / n:.1f}%) occur in the training "
                        "data: is --train the data the systems were trained on? If not, say so with "
                        "--train-is-reference; seen/unseen subsets are relative to it")
    for name, scores in systems.items():
        tmr = scores.get("tmr", {})
        seen, unseen = tmr.get("recall_seen"), tmr.get("recall_unseen_tokens")
        if (_known(seen) and _known(unseen) and tmr.get("n_seen", 0) >= MIN_N
                and tmr.get("n_unseen_tokens", 0) >= MIN_N and seen <= unseen):
            warnings.append(f"{name} recalls test mentions seen in training ({seen:.3f}, n = {tmr['n_seen']}) no "
                            f"better than unseen ones ({unseen:.3f}, n = {tmr['n_unseen_tokens']}); a system "
                            "trained on this data almost always does better on what it saw (a heuristic, not a "
                            "test): is --train its training data? If not, use --train-is-reference")
    return warnings
