"""Which instances failed: one row per gold and per predicted entity, for each system.

A gold entity's outcome (against the predicted entities of its sentence):
  correct         a prediction has exactly its span and type;
  wrong type      a prediction has exactly its span, another type;
  wrong boundary  else, the overlapping prediction differing from it in the fewest token
                  positions (ties: the right type, then the leftmost; RockNER's rule) --
                  ``overlap`` is the number of tokens they share;
  missed          no prediction shares a token with it.
A predicted entity that is not the match of any gold entity gets its own row: ``wrong
boundary`` when it overlaps a gold entity, else ``spurious``.  So outcomes are counted per
side (``outcome_counts``): the gold rows' outcomes sum to the gold entities; the predicted
rows are extra predictions counted apart.  Predictions given as mention lists add
``mention_status`` (how the prediction was placed: exact, normalised or fuzzy) and a ``spurious``
row without a position for each mention placed nowhere (status ``ungrounded``).

Each row also says which subsets the gold entity belongs to (TMR's seen / unseen-tokens /
unseen-type / TCM), how many of its tokens are unseen or diff tokens (HardEval), and the
bucket of every attribute (Fu et al.) in words.  ``error_rows`` returns plain dicts (fast,
no import of ``datasets``); ``error_table`` a ``datasets.Dataset``; ``write`` a CSV or JSONL
file, atomically.

The CSV is safe to open in a spreadsheet (the command's ``--errors`` file and the Spaces'
download alike): it is written by ``formatting.csv_pieces``, which puts a ``'`` before a text
cell a spreadsheet would evaluate as a formula and writes numbers as numbers.  The JSON lines
are written as they are.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from .._util import write_atomic
from ..core.batch import Batch
from ..methods.buckets import ATTRIBUTES, attribute_values, make_bucketing
from ..methods.hardeval import classify as hard_tokens_of, gold_types
from .formatting import csv_pieces
from .labels import bucket_label
from ..core.stats import TrainStats
from ..methods.tmr import classify as mention_subsets

OUTCOMES = ("correct", "wrong type", "wrong boundary", "missed", "spurious")
GOLD_OUTCOMES = ("correct", "wrong type", "wrong boundary", "missed")  # of a gold entity: one each
PREDICTED_OUTCOMES = ("wrong boundary", "spurious")  # of a predicted entity no gold entity matched
COLUMNS = ("system", "side", "sentence", "document", "start", "end", "text", "context", "gold_type",
           "predicted_type", "predicted_text", "predicted_start", "predicted_end", "mention_status", "outcome",
           "overlap",
           "seen", "unseen_tokens", "unseen_type", "tcm", "n_unseen_words", "n_diff_words", "hard_words"
           ) + tuple(f"bucket_{a}" for a in ATTRIBUTES)


def _context(tokens: Sequence[str], start: int, end: int, window: int) -> str:
    left = ("… " if start > window else "") + " ".join(tokens[max(start - window, 0):start])
    right = " ".join(tokens[end:end + window]) + (" …" if end + window < len(tokens) else "")
    return " ".join(part for part in (left.strip(), "[" + " ".join(tokens[start:end]) + "]", right.strip()) if part)


def _best_overlap(start: int, end: int, gold_type: str, predicted) -> Optional[int]:
    best = None  # (differing positions, wrong type, start, index)
    for k, (p_start, p_end, p_type) in enumerate(predicted):
        if p_start < end and start < p_end:
            common = min(end, p_end) - max(start, p_start)
            key = ((end - start) + (p_end - p_start) - 2 * common, p_type != gold_type, p_start, k)
            best = key if best is None or key < best else best
    return None if best is None else best[3]


def _bucket_columns(stats: TrainStats, batch: Batch, n_buckets: int, totals: Mapping[str, int]):
    """Per side, per attribute, the bucket label of each span (token-level attributes: the
    labels of its tokens joined by " | ")."""
    sides = attribute_values(stats, batch)
    columns: Dict[str, Dict[str, List[str]]] = {"gold": {}, "pred": {}}
    for attribute in ATTRIBUTES:
        level = "token" if attribute in ("tFre", "tCon") else "span"
        if attribute == "tag":
            for side in columns:
                columns[side][attribute] = [batch.types[t] for t in sides[side]["span"]["tag"].tolist()]
            continue
        bucketing = make_bucketing(attribute, sides["gold"][level][attribute], n_buckets)
        intervals = bucketing.intervals()
        names = [bucket_label(attribute, i, totals) for i in intervals]
        for side in columns:
            index = bucketing.assign(sides[side][level][attribute]).tolist()
            if level == "span":
                columns[side][attribute] = [names[i] for i in index]
            else:  # tokens of the spans in order: split by span widths
                _, starts, ends, _ = batch.span_arrays(side)
                labels, position = [], 0
                for width in (ends - starts).tolist():
                    labels.append(" | ".join(names[i] for i in index[position:position + width]))
                    position += width
                columns[side][attribute] = labels
    return columns


def error_rows(stats: TrainStats, batch: Batch, system: str = "system", documents: Optional[Sequence[int]] = None,
               window: int = 5, n_buckets: int = 4) -> List[dict]:
    """One dict per gold entity and per unmatched predicted entity (``COLUMNS``), in
    sentence order; ``documents``: each sentence's document index (default: the batch's)."""
    if not batch.has_predictions:
        raise ValueError("the error table needs predictions")
    documents = batch.documents if documents is None else documents
    if documents is not None and len(documents) != len(batch):
        raise ValueError(f"{len(documents)} document indices for {len(batch)} sentences")
    totals = {"mentions": stats.n_mentions, "tokens": stats.n_tokens}
    buckets = _bucket_columns(stats, batch, n_buckets, totals)
    subsets = mention_subsets(stats, batch)
    token_subsets = hard_tokens_of(stats, batch.flat_tokens, gold_types(batch), False)
    token_subset = np.full(len(batch.flat_tokens), "", dtype=object)
    for name, mask in token_subsets.items():
        token_subset[mask] = name.replace("_", "-")
    subset_of = token_subset.tolist()
    # prefix sums over flat tokens: unseen and diff tokens inside any span in O(1)
    unseen_before = np.concatenate([[0], np.cumsum(token_subsets["unseen_I"] | token_subsets["unseen_O"])]).tolist()
    diff_mask = token_subsets["diff_I"] | token_subsets["diff_O"] | token_subsets["diff_E"]
    diff_before = np.concatenate([[0], np.cumsum(diff_mask)]).tolist()
    hard_before = np.concatenate([[0], np.cumsum(token_subset != "")]).tolist()
    offsets = batch.offsets.tolist()
    rows: List[dict] = []
    placed = batch.mention_status or [{}] * len(batch)  # mention lists: how each prediction was placed
    unplaced = batch.hallucinated or [()] * len(batch)
    gold_k = pred_k = 0  # running index into the flat span arrays (bucket columns)
    for s, (tokens, gold, predicted) in enumerate(zip(batch.tokens, batch.gold_spans, batch.pred_spans)):
        used = [False] * len(predicted)
        entries = []
        base = {"system": system, "sentence": s, "document": documents[s] if documents is not None else None}

        def hard(start, end):
            a, b = offsets[s] + start, offsets[s] + end
            words = "" if hard_before[b] == hard_before[a] else ", ".join(
                f"{tokens[start + i]} ({subset_of[a + i]})" for i in range(end - start) if subset_of[a + i])
            return unseen_before[b] - unseen_before[a], diff_before[b] - diff_before[a], words
        for start, end, gold_type in gold:
            k = _best_overlap(start, end, gold_type, predicted)
            if k is None:
                outcome, p_type, p_text, overlap, p_start, p_end = "missed", "", "", 0, None, None
            else:
                used[k] = True
                p_start, p_end, p_type = predicted[k]
                overlap = min(end, p_end) - max(start, p_start)
                exact = (p_start, p_end) == (start, end)
                outcome = ("correct" if p_type == gold_type else "wrong type") if exact else "wrong boundary"
                p_text = " ".join(tokens[p_start:p_end])
            unseen, diff, words = hard(start, end)
            entries.append((start, 0, {
                **base, "side": "gold", "start": start, "end": end, "text": " ".join(tokens[start:end]),
                "context": _context(tokens, start, end, window), "gold_type": gold_type, "predicted_type": p_type,
                "predicted_text": p_text, "predicted_start": p_start, "predicted_end": p_end,
                "mention_status": placed[s].get((p_start, p_end)), "outcome": outcome, "overlap": overlap,
                "seen": bool(subsets["seen"][gold_k]), "unseen_tokens": bool(subsets["unseen_tokens"][gold_k]),
                "unseen_type": bool(subsets["unseen_type"][gold_k]), "tcm": bool(subsets["tcm_all"][gold_k]),
                "n_unseen_words": unseen, "n_diff_words": diff, "hard_words": words,
                **{f"bucket_{a}": buckets["gold"][a][gold_k] for a in ATTRIBUTES}}))
            gold_k += 1
        for k, (p_start, p_end, p_type) in enumerate(predicted):
            if not used[k]:
                overlaps = [(min(end, p_end) - max(start, p_start), g_type, start, end)
                            for start, end, g_type in gold if start < p_end and p_start < end]
                overlap, g_type, g_start, g_end = max(overlaps, default=(0, "", 0, 0))
                unseen, diff, words = hard(p_start, p_end)
                text = " ".join(tokens[p_start:p_end])
                entries.append((p_start, 1, {
                    **base, "side": "predicted", "start": p_start, "end": p_end, "text": text,
                    "context": _context(tokens, p_start, p_end, window), "gold_type": g_type,
                    "predicted_type": p_type, "predicted_text": text, "predicted_start": p_start,
                    "predicted_end": p_end, "mention_status": placed[s].get((p_start, p_end)),
                    "outcome": "wrong boundary" if overlaps else "spurious", "overlap": overlap,
                    "seen": None, "unseen_tokens": None, "unseen_type": None, "tcm": None,
                    "n_unseen_words": unseen, "n_diff_words": diff, "hard_words": words,
                    **{f"bucket_{a}": buckets["pred"][a][pred_k] for a in ATTRIBUTES}}))
            pred_k += 1
        for mention in unplaced[s]:  # after the sentence's entities: they have no position
            entries.append((len(tokens), 2, {
                **dict.fromkeys(COLUMNS), **base, "side": "predicted", "text": mention["text"],
                "context": " ".join(tokens), "gold_type": "", "predicted_type": mention["type"],
                "predicted_text": mention["text"], "mention_status": "ungrounded", "outcome": "spurious",
                "overlap": 0, "n_unseen_words": 0, "n_diff_words": 0, "hard_words": ""}))
        rows += [entry for _, _, entry in sorted(entries, key=lambda e: (e[0], e[1]))]
    return rows


def error_table(stats: TrainStats, batch: Batch, system: str = "system", documents: Optional[Sequence[int]] = None,
                window: int = 5, n_buckets: int = 4):
    """``error_rows`` as a ``datasets.Dataset`` (``.to_pandas()`` for a DataFrame)."""
    from datasets import Dataset

    rows = error_rows(stats, batch, system, documents, window, n_buckets)
    return Dataset.from_dict({c: [row[c] for row in rows] for c in COLUMNS})


def outcome_counts(rows: Sequence[dict]) -> Dict[str, Dict[str, int]]:
    """Outcome counts of one system's rows, per side: ``{"gold": GOLD_OUTCOMES counts (summing
    to the gold entities), "predicted": PREDICTED_OUTCOMES counts}`` -- a "wrong boundary" of
    each side counted apart, as they count different entities."""
    counts = Counter((row["side"], row["outcome"]) for row in rows)
    return {"gold": {o: counts[("gold", o)] for o in GOLD_OUTCOMES},
            "predicted": {o: counts[("predicted", o)] for o in PREDICTED_OUTCOMES}}


def summary(rows: Sequence[dict]) -> Dict[str, Dict[str, Dict[str, int]]]:
    """``outcome_counts`` per system, in the order the systems first occur."""
    systems = list(dict.fromkeys(row["system"] for row in rows))
    return {system: outcome_counts([row for row in rows if row["system"] == system]) for system in systems}


def to_text(rows: Sequence[dict], fmt: str, run_id: Optional[str] = None) -> str:
    """The rows as CSV (``csv``, cells a spreadsheet would evaluate neutralised) or JSON lines
    (``jsonl``); with ``run_id``, a first column saying which report run wrote them."""
    return "".join(_pieces(rows, fmt, run_id))


def _pieces(rows: Iterable[dict], fmt: str, run_id: Optional[str] = None):
    """``to_text`` in pieces (``write`` never holds the whole text)."""
    columns = COLUMNS if run_id is None else ("run_id",) + COLUMNS
    rows = rows if run_id is None else ({"run_id": run_id, **row} for row in rows)
    if fmt == "jsonl":
        return (json.dumps({c: row[c] for c in columns}, ensure_ascii=False) + "\n" for row in rows)
    if fmt == "csv":
        return csv_pieces(columns, ([row[c] for c in columns] for row in rows))
    raise ValueError(f"unknown error table format {fmt!r}: use csv or jsonl")


def write(rows: Sequence[dict], path: str | os.PathLike, run_id: Optional[str] = None) -> None:
    """Write the rows to ``path``: CSV for ``.csv``, JSON lines for ``.jsonl`` / ``.json``."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    formats = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}
    if extension not in formats:
        raise ValueError(f"--errors {path}: the extension must be .csv or .jsonl")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_atomic(path, _pieces(rows, formats[extension], run_id))


def beside(page: str | os.PathLike) -> List[tuple]:
    """The files of the full error table beside an HTML page, as CSV and JSON Lines
    (``report.html`` -> ``report-errors.csv``, ``report-errors.jsonl``): (format, path) pairs,
    each path in the page's folder as the page's path names it (what the commands check
    against their inputs before any work)."""
    folder, name = os.path.split(os.fspath(page))
    stem = os.path.splitext(name)[0]
    return [(label, os.path.join(folder, f"{stem}-errors.{extension}"))
            for label, extension in (("CSV", "csv"), ("JSON Lines", "jsonl"))]


def write_beside(page: str | os.PathLike, rows: Sequence[dict], run_id: Optional[str] = None) -> List[tuple]:
    """The full error table written beside an HTML page (``beside``), for the page to link: its
    (format, file name) pairs."""
    files = beside(page)
    for _, path in files:
        write(rows, path, run_id)
    return [(label, os.path.basename(path)) for label, path in files]


# ---- what each system predicted on the hardest tokens and mentions --------------------------
def token_predictions(batch: Batch, keys) -> Dict[tuple, Dict[str, int]]:
    """For (token, gold type or "O") keys, the predicted type ("O" outside entities) of each
    test occurrence, counted."""
    keys = set(keys)
    gold = gold_types(batch)
    names = np.array(batch.types + ["O"], dtype=object)[batch.token_types("pred")].tolist()
    table: Dict[tuple, Counter] = {key: Counter() for key in keys}
    for token, gold_type, predicted in zip(batch.flat_tokens, gold, names):
        if (token, gold_type) in keys:
            table[(token, gold_type)][predicted] += 1
    return {key: dict(counts.most_common()) for key, counts in table.items()}


def mention_predictions(batch: Batch, keys) -> Dict[tuple, Dict[str, int]]:
    """For (text, type) keys of gold mentions, what was predicted on each occurrence: the type
    of a prediction with exactly its span, ``"TYPE (boundary)"`` for the closest overlapping
    one, or ``"missed"``."""
    keys = set(keys)
    table: Dict[tuple, Counter] = {key: Counter() for key in keys}
    for tokens, gold, predicted in zip(batch.tokens, batch.gold_spans, batch.pred_spans):
        for start, end, gold_type in gold:
            key = (" ".join(tokens[start:end]), gold_type)
            if key not in keys:
                continue
            k = _best_overlap(start, end, gold_type, predicted)
            if k is None:
                table[key]["missed"] += 1
            else:
                p_start, p_end, p_type = predicted[k]
                table[key][p_type if (p_start, p_end) == (start, end) else f"{p_type} (boundary)"] += 1
    return {key: dict(counts.most_common()) for key, counts in table.items()}


def hardest(stats: TrainStats, batches: Mapping[str, Batch], details: Mapping[str, dict], top: int = 10) -> dict:
    """The hardest tokens (most errors) and mentions (most misses) of each system, merged,
    with every system's errors and predictions on each: ``{"tokens": rows, "mentions": rows}``.
    ``details``: per system, its report details (``hardeval.hard_tokens``, ``hard_mentions``)."""
    token_rows: Dict[tuple, dict] = {}
    for name, detail in details.items():
        rows = [row for rows in detail["hardeval"]["hard_tokens"].values() for row in rows]
        for row in sorted(rows, key=lambda r: (-r["errors"], r["token"]))[:top]:
            token_rows.setdefault((row["token"], row["gold"]), {k: row[k] for k in ("token", "gold", "n", "train")})
    mention_rows: Dict[tuple, dict] = {}
    for name, detail in details.items():
        for row in detail["hard_mentions"][:top]:
            mention_rows.setdefault((row["text"], row["type"]), {k: row[k] for k in ("text", "type", "n", "train")})
    for name, batch in batches.items():
        errors = {(r["token"], r["gold"]): r["errors"]  # HardEval's count (BILOU labels with type)
                  for rows in details[name]["hardeval"]["hard_tokens"].values() for r in rows}
        tokens = token_predictions(batch, token_rows)
        mentions = mention_predictions(batch, mention_rows)
        for key, row in token_rows.items():
            row.setdefault("predicted", {})[name] = tokens[key]
            row.setdefault("errors", {})[name] = errors.get(key, 0)
        for key, row in mention_rows.items():
            row.setdefault("predicted", {})[name] = mentions[key]
            row.setdefault("misses", {})[name] = sum(n for label, n in mentions[key].items() if label != key[1])
    order = lambda rows, what: sorted(rows, key=lambda r: (-max(r[what].values(), default=0), -r["n"]))  # noqa: E731
    return {"tokens": order(token_rows.values(), "errors"), "mentions": order(mention_rows.values(), "misses")}


def predicted_text(counts: Mapping[str, int]) -> str:
    """Predicted labels with their counts: ``ORG ×3, missed ×1``."""
    return ", ".join(f"{label} ×{n}" for label, n in counts.items()) or "-"
