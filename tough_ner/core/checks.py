"""Guards against inputs that score but mean nothing (one place for every entry point).

The methods call these on their batch, so the Python functions, the ``evaluate`` modules,
the CLI, the report and the Spaces all get the same checks, once per batch:

- entity types: gold types sharing nothing with the training types, or predicted types
  sharing nothing with the gold types (nor the training types: a weak system predicting only
  types absent from a small test set is no input error), are errors (a wrong column or an
  unmapped tag set);
  predicted types known to neither are a warning naming them and the spans they cover;
- casing: when lowercasing both sides would cut the unseen test tokens by more than half,
  the test and training data differ in casing: a warning points to ``lowercase=``.

And for a report: does the training data look like the systems' own?  Seen / unseen subsets
(HardEval, TMR, eFre, ...) only mean "memorised" / "new to the model" when ``--train`` is the
data the systems were trained on.  Two signs that it is not, read from the TMR results
(heuristics, not tests; the warning says so): almost no test mention occurs in the training
data (< ``MIN_SEEN_SHARE``); a system recalls the test mentions seen in training no better than
those it never saw (both subsets with at least ``MIN_N`` mentions).  The person can also say so
(``train_is_reference``); then the report says what the subsets mean.
"""
from __future__ import annotations

import math
import threading
import warnings
from contextlib import contextmanager
from typing import Iterable, List, Mapping, Optional

import numpy as np

from .._util import no_gc, quote
from .batch import Batch


class InputWarning(UserWarning):
    """Input that scores, but probably not as meant."""


_COLLECTING = threading.local()  # .notes: the input warnings of a thread inside collected_input_warnings


def warn_input(message: str, stacklevel: int = 2) -> None:
    """An input warning: kept for the block where this thread collects them
    (``collected_input_warnings``), else raised as an ``InputWarning`` (``stacklevel``: as
    ``warnings.warn``'s, counted from the caller)."""
    notes = getattr(_COLLECTING, "notes", None)
    if notes is not None:
        notes.append(message)
    else:
        warnings.warn(message, InputWarning, stacklevel=stacklevel + 1)


@contextmanager
def collected_input_warnings():
    """The input warnings this thread gives inside the block, in order (a list), none raised:
    what a Space's page shows, or a task run elsewhere hands back for its caller to raise.  Per
    thread, unlike ``warnings.catch_warnings``, whose state every thread shares (two pages
    computed at once would see each other's warnings).  Blocks nest; a block must not stay open
    across a ``yield`` while another is opened in the same thread."""
    before = getattr(_COLLECTING, "notes", None)
    _COLLECTING.notes = notes = []
    try:
        yield notes
    finally:
        _COLLECTING.notes = before


def type_names(types: Iterable[str], limit: int = 20) -> str:
    """``{LOC, ORG}``: sorted; long sets end with how many there are in all."""
    types = sorted(types)
    shown = ", ".join(types[:limit]) + (f", … ({len(types)} in all)" if len(types) > limit else "")
    return "{" + shown + "}"


def _once(batch: Batch, key) -> bool:
    """True the first time ``key`` is checked on this batch (three methods share a batch in the report)."""
    done = batch.__dict__.setdefault("_checked", set())
    if key in done:
        return False
    done.add(key)
    return True


def check_types(batch: Batch, train_types: Optional[Iterable[str]] = None, also_gold: Iterable[str] = ()) -> None:
    """Compare the entity types of training (optional), gold and predictions; ``also_gold``:
    types of a companion set's gold (RockNER's other version)."""
    train = None if train_types is None else set(train_types) - {"O"}
    also_gold = frozenset(also_gold)
    if not _once(batch, ("types", None if train is None else frozenset(train), also_gold)):
        return
    gold = set(batch.span_type_counts("gold")) | also_gold
    if train and gold and not gold & train:
        raise ValueError(f"the gold entity types {type_names(gold)} share nothing with the training types "
                         f"{type_names(train)}: is the gold column the right one? (choose columns with columns= / "
                         f"--columns token,gold,pred)")
    if not batch.has_predictions:
        return
    predicted = batch.span_type_counts("pred")
    known = gold | (train or set())
    if predicted and gold and not known & set(predicted):
        also = f" nor the training types {type_names(train)}" if train else ""
        raise ValueError(f"the predicted entity types {type_names(predicted)} share nothing with the gold types "
                         f"{type_names(gold)}{also}: map the system's types to the gold ones (a type map), or "
                         f"check the prediction column (columns= / --columns token,gold,pred)")
    unknown = {t: n for t, n in predicted.items() if t not in known}
    if unknown:
        where = "gold or training data" if train else "gold data"
        listed = ", ".join(f"{t} ({n} span{'s' if n != 1 else ''})" for t, n in sorted(unknown.items())[:20])
        warn_input(f"predicted entity types absent from the {where}: {listed}"
                   f"{' …' if len(unknown) > 20 else ''}; {sum(unknown.values())} of {sum(predicted.values())} "
                   f"predicted spans can never be correct", stacklevel=3)


@no_gc()  # a string per unseen token: the collector's scans grew with the test size
def check_casing(stats, batch: Batch, lowercase: bool = False) -> None:
    """Warn when the test tokens and the training vocabulary differ in casing."""
    if lowercase or not _once(batch, ("casing", id(stats))):
        return
    ids = batch.token_ids(stats)
    unseen = ids < 0
    n_unseen = int(np.count_nonzero(unseen))
    if n_unseen == 0:
        return
    n_lower = n_unseen - batch.count_in(unseen, stats.lower_vocab, str.lower)
    if 2 * n_lower < n_unseen:
        warn_input(f"{n_unseen} of {len(ids)} test tokens are unseen in training, but only {n_lower} once both "
                   f"sides are lowercased: the test and training data differ in casing. Use the same casing, or "
                   f"match tokens lowercased where offered (lowercase=True, --lowercase)", stacklevel=3)


def check_decoding_matches(stats, batch: Batch) -> None:
    """A ``ValueError`` when the test batch's gold tags are decoded otherwise than the
    training statistics' (a mention would not mean the same thing on both sides)."""
    from .stats import describe_decoding

    tested = batch.side_decoding("gold")
    if stats.decoding != tested:
        raise ValueError(f"the test data is decoded with {describe_decoding(tested)} but the training statistics with "
                         f"{describe_decoding(stats.decoding)}: build the statistics with the same options "
                         "(TrainStats.from_conll(..., scheme=..., mode=..., repair=...); tough-ner stats --scheme "
                         "--mode --repair)")


def check_inputs(stats, batch: Batch, lowercase: bool = False) -> None:
    """The checks of a training-based method."""
    check_decoding_matches(stats, batch)
    check_types(batch, stats.labels)
    check_casing(stats, batch, lowercase)


# ---- inputs checked against each other -------------------------------------------------
def first_difference(a: str, b: str, **columns) -> Optional[str]:
    """Where two files' sentences first differ, in words, or None.  ``columns``: per column
    name, (``a``'s sentences, ``b``'s), compared in the order given; a column whose ``a``
    side is None is skipped.  Sentences and tokens are numbered from 1."""
    columns = {what: pair for what, pair in columns.items() if pair[0] is not None}
    if all(mine == theirs for mine, theirs in columns.values()):
        return None
    n_a, n_b = (len(side) for side in next(iter(columns.values())))
    for s in range(min(n_a, n_b)):
        for what, (mine, theirs) in columns.items():
            x, y = mine[s], theirs[s]
            if x == y:
                continue
            if len(x) != len(y):
                return f"sentence {s + 1}: {len(x)} tokens in {a}, {len(y)} in {b}"
            i = next(i for i, pair in enumerate(zip(x, y)) if pair[0] != pair[1])
            return f"sentence {s + 1}, token {i + 1}: {what} {quote(x[i])} in {a}, {quote(y[i])} in {b}"
    return f"{a} holds {n_a} sentences, {b} {n_b}"


def identical_to_gold(batches: Mapping[str, Batch]) -> List[str]:
    """A warning for each system whose predictions equal the gold tags everywhere (and that
    has gold entities to find): most likely a prediction file given as the gold standard."""
    return [f"{name}'s predictions are identical to the gold standard: did you pass a prediction file as --test?"
            for name, batch in batches.items()
            if batch.predictions == batch.references and not any(batch.hallucinated or ())
            and batch.span_type_counts("gold")]


# A side with more invalid transitions than this share of its tokens gets a report warning.
MAX_INVALID_SHARE = 0.001


def invalid_sequence_warnings(batches: Mapping[str, Batch]) -> List[str]:
    """A warning for each side (gold once, each system's predictions) whose transitions invalid
    in the declared scheme (``Batch.invalid_transitions``) exceed ``MAX_INVALID_SHARE`` of its
    tokens: the scheme is likely another than declared, or the system breaks it."""
    found, gold_seen = [], False
    for name, batch in batches.items():
        n_tokens = int(batch.offsets[-1])
        scheme, mode, repair = batch.decoding
        rule = "seqeval's strict mode drops them" if mode == "strict" else f"repaired by the {repair} rule"
        for side in ("gold", "pred") if not gold_seen else ("pred",):
            count = batch.invalid_transitions(side)
            if count > MAX_INVALID_SHARE * n_tokens:
                whose = "the gold tags" if side == "gold" else f"{name}'s predictions"
                found.append(f"{whose} have {count} transitions invalid in scheme {scheme} ({count / n_tokens:.2%} "
                                f"of {n_tokens} tokens; {rule}): is the scheme the one declared?")
        gold_seen = True
    return found


# ---- does the training data look like the systems' own? (report) -------------------------
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
                and tmr.get("n_unseen_tokens", 0) >= MIN_N and seen <= unseen and seen < 1):  # 1: nothing to do better
            warnings.append(f"{name} recalls test mentions seen in training ({seen:.3f}, n = {tmr['n_seen']}) no "
                            f"better than unseen ones ({unseen:.3f}, n = {tmr['n_unseen_tokens']}); a system "
                            "trained on this data almost always does better on what it saw (a heuristic, not a "
                            "test): is --train its training data? If not, use --train-is-reference")
    return warnings
