"""Name Regularity Bias (Ghaddar et al., TACL 2021): accuracy on sentences whose single
target entity can only be typed from its context (NRB), and on the same names in easy
contexts (WTS, the control set).

A sentence scores 1 when a predicted span has exactly the target's boundaries and a type
that maps to the target's type, whatever else is predicted in the sentence.  An error is a
*type error* (a span with the target's boundaries, wrong type), else a *boundary error* (a
predicted span overlaps the target), else a *miss*.
"""
from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..core.batch import Batch
from ..core.checks import type_names
from .._util import quote
from ..core.corpus import read_text
from ..core.scoring import input_counts, ratio
from ..core.stats import TrainStats
from ..core.uncertainty import with_intervals

NRB_TYPES = ("PERSON", "LOCATION", "ORGANIZATION")
PORTIONS = ("nrb", "wts")
OTHER = "other"
# System type -> NRB type; a type missing from the map is "other" (wrong for every target).
PRESETS: Dict[str, Dict[str, str]] = {
    "nrb": {t: t for t in NRB_TYPES},
    "conll": {"PER": "PERSON", "LOC": "LOCATION", "ORG": "ORGANIZATION"},
    # FAC (buildings, airports, bridges) -> LOCATION is a choice; pass a dict to change it.
    "ontonotes": {"PERSON": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION",
                  "ORG": "ORGANIZATION"},
}
TypeMap = Union[None, str, Mapping[str, Optional[str]]]
AUTO = "auto"


def resolve_type_map(type_map: TypeMap) -> Dict[str, str]:
    """A preset name (``nrb``, ``conll``, ``ontonotes``), a dict ``{system type: NRB type
    or None}``, or None / ``"auto"`` (here: the ``nrb`` preset; ``nrb()`` detects the preset
    from the predicted types with ``choose_type_map``)."""
    if type_map is None or type_map == AUTO:
        return PRESETS["nrb"]
    if isinstance(type_map, str):
        if type_map not in PRESETS:
            raise ValueError(f"unknown type map {type_map!r}: use {AUTO}, {', '.join(PRESETS)} or a dict")
        return PRESETS[type_map]
    if not isinstance(type_map, Mapping):
        raise ValueError(f"type_map must be a preset name or a dict, not {type(type_map).__name__}")
    wrong = {k: v for k, v in type_map.items() if v not in NRB_TYPES + (OTHER, None)}
    if wrong:
        raise ValueError(f"type_map values must be one of {', '.join(NRB_TYPES)}, 'other' or None; got {wrong}")
    return {k: v for k, v in type_map.items() if v in NRB_TYPES}


def read_type_map(path: Union[str, os.PathLike]) -> Dict[str, Optional[str]]:
    """A type map from a JSON file (``--type-map FILE.json``): ``{system type: NRB type or
    null}``; a file that is not such an object, or nests too deeply, is a one-line error naming it."""
    import json

    from ..core.corpus import refuse_deep_nesting

    path = os.fspath(path)
    with open(path, encoding="utf-8") as handle, refuse_deep_nesting(path):
        try:
            mapping = json.load(handle)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}, line {error.lineno}: not JSON ({error.msg})") from None
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: bytes that are not UTF-8 ({error.reason} at byte {error.start})") from None
    if not isinstance(mapping, dict):
        raise ValueError(f"{path}: a type map is a JSON object {{system type: NRB type or null}}, not "
                         f"{type(mapping).__name__}")
    try:
        resolve_type_map(mapping)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return mapping


def detect_type_map(predicted: Mapping[str, int]) -> Optional[str]:
    """The preset whose system types cover the most distinct predicted types (then the most
    predicted spans; ties in the order nrb, conll, ontonotes), or None when none covers any."""
    def cover(name: str):
        known = [t for t in predicted if t in PRESETS[name]]
        return len(known), sum(predicted[t] for t in known)
    best = max(PRESETS, key=lambda name: (cover(name), -list(PRESETS).index(name)))
    return best if cover(best)[0] else None


def choose_type_map(type_map: TypeMap, batch: Batch) -> Tuple[str, Dict[str, str]]:
    """The type map's name (``custom`` for a dict) and mapping; None or ``"auto"`` detects
    the preset from the predicted types.  Predicted spans none of whose types maps to an
    NRB type are an error (every target would count as wrong)."""
    predicted = Counter(t for spans in (batch.pred_spans or []) for _, _, t in spans)
    if type_map is None or type_map == AUTO:
        name = detect_type_map(predicted)
        if name is None and predicted:
            raise ValueError(f"no type map preset ({', '.join(PRESETS)}) knows the predicted types "
                             f"{type_names(predicted)}: pass type_map= a dict {{system type: NRB type}}")
        name = name or "nrb"
    else:
        name = type_map if isinstance(type_map, str) else "custom"
    mapping = resolve_type_map(type_map if name == "custom" else name)
    if predicted and not any(t in mapping for t in predicted):
        raise ValueError(f"with the {name} type map, none of the predicted types {type_names(predicted)} maps to an "
                         f"NRB type ({', '.join(NRB_TYPES)}): choose the map of the system's labels "
                         f"(type_map= / --type-map: {AUTO}, {', '.join(PRESETS)} or a dict)")
    return name, mapping


# ---- reading the benchmark files ---------------------------------------------------------
def read_nrb(path: Union[str, os.PathLike]):
    """Read an NRB or WTS file (``.conll`` or ``.txt``) into a ``datasets.Dataset`` with
    ``tokens``, ``ner_tags`` (IOB2 strings) and the target: ``target_start``,
    ``target_end`` (exclusive) and ``target_type``."""
    import datasets

    path = os.fspath(path)
    if path.endswith(".conll"):
        tokens, tags, lines = _read_conll(path)
    elif path.endswith(".txt"):
        tokens, tags, lines = _read_txt(path)
    else:
        raise ValueError(f"{path}: NRB files end in .conll or .txt")
    starts, ends, types = [], [], []
    for sentence_tags, line in zip(tags, lines):
        (start, end, entity_type), = _one_target(sentence_tags, path, line)
        starts.append(start)
        ends.append(end)
        types.append(entity_type)
    features = datasets.Features({"tokens": datasets.List(datasets.Value("string")),
                                  "ner_tags": datasets.List(datasets.Value("string")),
                                  "target_start": datasets.Value("int32"), "target_end": datasets.Value("int32"),
                                  "target_type": datasets.Value("string")})
    return datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags, "target_start": starts,
                                       "target_end": ends, "target_type": types}, features=features)


def _read_conll(path: str, iob2: bool = True) -> Tuple[List[List[str]], List[List[str]], List[int]]:
    """``token TAG`` lines split on the last space (a token may itself be a space); with
    ``iob2`` the tags must be O, B-X or I-X (prediction files may use any scheme)."""
    tokens: List[List[str]] = []
    tags: List[List[str]] = []
    first_lines: List[int] = []
    sentence_tokens: List[str] = []
    sentence_tags: List[str] = []
    for number, line in enumerate(_lines(path), 1):
        if not line:
            if sentence_tokens:
                tokens.append(sentence_tokens)
                tags.append(sentence_tags)
                sentence_tokens, sentence_tags = [], []
            continue
        token, space, tag = line.rpartition(" ")
        if not space or not token or not tag or (iob2 and not _valid_tag(tag)):
            raise ValueError(f"{path}:{number}: expected 'token TAG' with an IOB2 tag (O, B-TYPE, I-TYPE), "
                             f"got {quote(line)}")
        if not sentence_tokens:
            first_lines.append(number)
        sentence_tokens.append(token)
        sentence_tags.append(tag)
    if sentence_tokens:
        tokens.append(sentence_tokens)
        tags.append(sentence_tags)
    return tokens, tags, first_lines


def _lines(path: str) -> List[str]:
    """The lines of a benchmark or prediction file under the readers' file rules (UTF-8, BOM
    dropped, only \\n and \\r\\n end a line; see ``tough_ner.corpus``)."""
    return [line[:-1] if line.endswith("\r") else line for line in read_text(path).split("\n")]


def read_nrb_predictions(path: Union[str, os.PathLike], tokens: Sequence[Sequence[str]]) -> List[List[str]]:
    """A system's tags for an NRB/WTS file, as ``token TAG`` lines (split on the last space,
    any tag scheme) holding the same sentences and tokens in the same order."""
    path = os.fspath(path)
    predicted_tokens, tags, lines = _read_conll(path, iob2=False)
    if len(predicted_tokens) != len(tokens):
        raise ValueError(f"{path}: {len(predicted_tokens)} sentences, but the benchmark file has {len(tokens)}")
    for s, (mine, theirs, line) in enumerate(zip(predicted_tokens, tokens, lines)):
        if list(mine) != list(theirs):
            raise ValueError(f"{path}:{line}: sentence {s} does not have the benchmark's tokens")
    return tags


def _valid_tag(tag: str) -> bool:
    return tag == "O" or (tag[:2] in ("B-", "I-") and len(tag) > 2)


MARKER = re.compile(r"\[([^\[\]]+)\]_\{([A-Z]+)\}")
# The .txt tokeniser: words (letters/digits, with inner - ' ’ joining them) and single
# other characters, after splitting on whitespace.
WORD = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")


def tokenize(text: str) -> List[str]:
    """Deterministic tokenisation of the ``.txt`` files: ``"Coutts' branches, 3.5%"`` ->
    ``["Coutts", "'", "branches", ",", "3", ".", "5", "%"]``."""
    return WORD.findall(text)


def _read_txt(path: str) -> Tuple[List[List[str]], List[List[str]], List[int]]:
    """One sentence per line with the target marked ``[Name]_{TYPE}``; other brackets are text."""
    tokens, tags, lines = [], [], []
    for number, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        markers = list(MARKER.finditer(line))
        if len(markers) != 1:
            raise ValueError(f"{path}:{number}: expected exactly one [name]_{{TYPE}} target, "
                             f"found {len(markers)}")
        marker = markers[0]
        name = tokenize(marker.group(1))
        if not name:
            raise ValueError(f"{path}:{number}: the target [{marker.group(1)}] holds no token")
        before, after = tokenize(line[:marker.start()]), tokenize(line[marker.end():])
        entity_type = marker.group(2)
        tokens.append(before + name + after)
        tags.append(["O"] * len(before) + ["B-" + entity_type] + ["I-" + entity_type] * (len(name) - 1)
                    + ["O"] * len(after))
        lines.append(number)
    return tokens, tags, lines


def _one_target(tags: Sequence[str], path: str, line: int):
    from ..core.schemes import decode

    spans = decode(tags)
    if len(spans) != 1:
        raise ValueError(f"{path}:{line}: the sentence starting here has {len(spans)} target entities, expected 1")
    return spans


def portion_of(path: Union[str, os.PathLike]) -> Optional[str]:
    """``nrb`` or ``wts`` from a benchmark file name ``{lang}.{portion}.{format}``."""
    parts = os.path.basename(os.fspath(path)).split(".")
    return parts[-2] if len(parts) >= 3 and parts[-2] in PORTIONS else None


# ---- scoring -----------------------------------------------------------------------------
def targets(batch: Batch) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """Each sentence's one gold target: starts, ends, types; anything else is an error."""
    batch.require_flat("NRB")
    counts = np.bincount(batch.span_arrays("gold")[0], minlength=len(batch))
    if len(batch) and (counts != 1).any():
        s = int(np.flatnonzero(counts != 1)[0])
        raise ValueError(f"sentence {s}: {counts[s]} gold entities; NRB and WTS sentences have exactly one target")
    starts = np.array([spans[0][0] for spans in batch.gold_spans], dtype=np.int64)
    ends = np.array([spans[0][1] for spans in batch.gold_spans], dtype=np.int64)
    types = [spans[0][2] for spans in batch.gold_spans]
    unknown = [(s, t) for s, t in enumerate(types) if t not in NRB_TYPES]
    if unknown:
        raise ValueError(f"sentence {unknown[0][0]}: target type {unknown[0][1]!r} is not one of "
                         f"{', '.join(NRB_TYPES)}")
    return starts, ends, types


def outcomes(batch: Batch, type_map: TypeMap = None, target_spans=None) -> List[Tuple[str, str]]:
    """Per sentence: (outcome, predicted label) with outcome ``correct``, ``type``
    (target boundaries, wrong type), ``boundary`` (overlapping span, other boundaries) or
    ``missed``; the label is the system type on the target's boundaries, else
    ``(boundary)`` or ``(missed)``."""
    if not batch.has_predictions:
        raise ValueError("NRB needs predictions")
    mapping = resolve_type_map(type_map)
    starts, ends, types = targets(batch) if target_spans is None else target_spans
    results = []
    for start, end, target_type, predicted in zip(starts.tolist(), ends.tolist(), types, batch.pred_spans):
        exact = [t for a, b, t in predicted if a == start and b == end]
        if exact:
            label = exact[0]
            results.append(("correct" if mapping.get(label) == target_type else "type", label))
        elif any(a < end and start < b for a, b, _ in predicted):
            results.append(("boundary", "(boundary)"))
        else:
            results.append(("missed", "(missed)"))
    return results


def _summary(results, types: np.ndarray, seen: Optional[np.ndarray], detailed: bool) -> dict:
    """One set's keys from its sentences' outcomes."""
    correct = np.array([outcome == "correct" for outcome, _ in results], dtype=bool)
    kinds = Counter(outcome for outcome, _ in results)
    result = {"accuracy": ratio(int(correct.sum()), len(results)), "n": len(results)}
    for entity_type in NRB_TYPES:
        mask = types == entity_type
        result[f"accuracy_{entity_type}"] = ratio(int(correct[mask].sum()), int(mask.sum()))
    result.update({"n_boundary_errors": kinds["boundary"], "n_type_errors": kinds["type"],
                   "n_missed": kinds["missed"]})
    if seen is not None:
        result["n_seen_other_type"] = int(seen.sum())
        result["accuracy_seen_other_type"] = ratio(int(correct[seen].sum()), int(seen.sum()))
    if detailed:
        confusion: Dict[str, Counter] = defaultdict(Counter)
        for entity_type, (_, label) in zip(types.tolist(), results):
            confusion[entity_type][label] += 1
        result["confusion"] = {t: dict(sorted(confusion[t].items())) for t in NRB_TYPES if t in confusion}
        result["n_per_type"] = {t: int(np.sum(types == t)) for t in NRB_TYPES}
    return result


def seen_with_other_type(stats: TrainStats, batch: Batch, type_map: TypeMap = None) -> np.ndarray:
    """Targets whose text is a training mention of a type that does not map to the target's
    type (the name regularity the set probes)."""
    mapping = resolve_type_map(type_map)
    starts, ends, types = targets(batch)
    by_text = stats.mention_types()
    return np.array([any(mapping.get(t, OTHER) != target_type for t in by_text.get(" ".join(tokens[a:b]), ()))
                     for tokens, a, b, target_type in zip(batch.tokens, starts.tolist(), ends.tolist(), types)],
                    dtype=bool)


def _portions(batch: Batch, portion) -> np.ndarray:
    portion = np.array(list(portion), dtype=object)
    if len(portion) != len(batch):
        raise ValueError(f"{len(portion)} portion labels for {len(batch)} sentences")
    wrong = [(s, p) for s, p in enumerate(portion.tolist()) if p not in PORTIONS]
    if wrong:
        raise ValueError(f"sentence {wrong[0][0]}: portion {wrong[0][1]!r} is not 'nrb' or 'wts'")
    return portion


def counts(batch: Batch, type_map: TypeMap = None, portion: Optional[Sequence[str]] = None,
           stats: Optional[TrainStats] = None):
    """Per-sentence counts of every accuracy key (``uncertainty.Counts``); the NRB and WTS
    sentences are resampled separately."""
    target_spans = targets(batch)
    _, mapping = choose_type_map(type_map, batch)
    correct = np.array([outcome == "correct" for outcome, _ in outcomes(batch, mapping, target_spans)], dtype=float)
    types = np.array(target_spans[2], dtype=object)
    seen = None if stats is None else seen_with_other_type(stats, batch, mapping)
    sets = {"": np.ones(len(batch), dtype=bool)}
    strata = None
    if portion is not None:
        portion = _portions(batch, portion)
        sets = {f"{name}_": portion == name for name in PORTIONS}
        strata = (portion == "wts").astype(np.int64)
    table = batch.counts(strata)
    for prefix, members in sets.items():
        table.ratio(f"{prefix}accuracy", correct * members, members)
        for entity_type in NRB_TYPES:
            mask = members & (types == entity_type)
            table.ratio(f"{prefix}accuracy_{entity_type}", correct * mask, mask)
        if seen is not None:
            table.ratio(f"{prefix}accuracy_seen_other_type", correct * (members & seen), members & seen)
    if portion is not None:
        table.derive("gap", "diff", "wts_accuracy", "nrb_accuracy")
    return table


def nrb(batch: Batch, type_map: TypeMap = None, portion: Optional[Sequence[str]] = None,
        stats: Optional[TrainStats] = None, detailed: bool = False, ci: bool = False, n_resamples: int = 1000,
        confidence: float = 0.95, seed: int = 0, unit: str = "sentence") -> dict:
    """NRB scores of one set (keys ``accuracy``, ``n``, ``accuracy_PERSON`` ...,
    ``n_boundary_errors``, ``n_type_errors``, ``n_missed``).  With ``portion`` (``"nrb"``
    or ``"wts"`` per sentence): ``nrb_accuracy``, ``wts_accuracy``, ``gap`` (WTS - NRB)
    and every per-set key prefixed ``nrb_`` / ``wts_`` (NaN with n 0 for a set not given).
    With ``stats``: also ``n_seen_other_type`` and ``accuracy_seen_other_type``; with
    ``detailed``: ``confusion`` (target type -> system label -> count) and ``n_per_type``.
    ``ci``: ``<key>_ci_low`` / ``<key>_ci_high`` for every accuracy and the gap.
    ``type_map`` None or ``"auto"`` detects the preset from the predicted types; the key
    ``type_map`` names the map used (``custom`` for a dict)."""
    target_spans = targets(batch)
    if not batch.has_predictions:
        raise ValueError("NRB needs predictions")
    map_name, mapping = choose_type_map(type_map, batch)
    results = outcomes(batch, mapping, target_spans)
    types = np.array(target_spans[2], dtype=object)
    seen = None if stats is None else seen_with_other_type(stats, batch, mapping)
    if portion is None:
        result = _summary(results, types, seen, detailed)
    else:
        portion = _portions(batch, portion)
        per_set = {}
        for name in PORTIONS:
            mask = portion == name
            per_set[name] = _summary([r for r, m in zip(results, mask) if m], types[mask],
                                     None if seen is None else seen[mask], detailed)
        result = {"nrb_accuracy": per_set["nrb"]["accuracy"], "wts_accuracy": per_set["wts"]["accuracy"],
                  "gap": per_set["wts"]["accuracy"] - per_set["nrb"]["accuracy"]}
        for name in PORTIONS:
            result.update({f"{name}_{key}": value for key, value in per_set[name].items()})
    if ci:
        result = with_intervals(result, counts(batch, mapping, portion, stats), n_resamples, confidence, seed, unit)
    result.update(input_counts(batch, detailed))
    result["type_map"] = map_name
    return result


def sets_batch(sets: Mapping[str, Tuple[Sequence, Sequence, Sequence]],
               decoding: Optional[Mapping] = None) -> Tuple[Batch, Optional[List[str]]]:
    """One batch of ``{"nrb": (tokens, gold, predictions), "wts": (...)}`` and the portion of
    each sentence (None for one set).  ``decoding``: ``Batch``'s keywords (``scheme``, ``mode``,
    ``repair``, ``declared``; the lenient rule on both sides by default)."""
    wrong = sorted(set(sets) - set(PORTIONS))
    if wrong or not sets:
        raise ValueError(f"sets are named 'nrb' and/or 'wts', got {sorted(sets)}")
    tokens, gold, predictions, portion = [], [], [], []
    for name, (set_tokens, set_gold, set_predictions) in sets.items():
        tokens += list(set_tokens)
        gold += list(set_gold)
        predictions += list(set_predictions)
        portion += [name] * len(set_tokens)
    return Batch(tokens, gold, predictions, **(decoding or {})), (portion if len(sets) > 1 else None)


def score_sets(sets: Mapping[str, Tuple[Sequence, Sequence, Sequence]], type_map: TypeMap = None,
               stats: Optional[TrainStats] = None, detailed: bool = False, decoding: Optional[Mapping] = None,
               **resampling) -> dict:
    """Score ``{"nrb": (tokens, gold, predictions), "wts": (...)}``: with both sets, the
    NRB + WTS keys and the gap; with one, that set's own keys.  ``decoding`` as for
    ``sets_batch``; ``resampling``: ``ci``, ``n_resamples``, ``confidence``, ``seed``, ``unit`` as
    for ``nrb``."""
    batch, portion = sets_batch(sets, decoding)
    return nrb(batch, type_map, portion, stats, detailed, **resampling)
