"""Run models on splits of sentences and hand back decoded batches: models end at predictions.

``predict`` runs one model on one split, a chunk of sentences at a time: each chunk's
predictions are checked (one per sentence; tags as many as tokens; spans, character spans
and mentions readable) and kept in the prediction cache as they are made, so a rerun reads
them and a run that died resumes after the last chunk kept.  ``run`` does that for every
model and split, chooses each model's label map from every label it used (``labels.choose``),
and turns the predictions into ``Batch`` es with ``as_batch``: below this module nothing
knows what a model is.  Errors name the model, the split and the sentence.
"""
from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .._util import file_sha256, quote
from ..core.batch import Batch
from ..core.formats import as_batch, convert, detect, read_jsonl
from .cache import Entry, slug
from .kinds import Model
from .labels import LabelMap, choose, map_tags, parse_label_map, types_of

CHUNK = 256  # sentences per model call, kept in the cache at once: what a crash can lose


@dataclass
class Split:
    """Sentences a model runs on: tokens, gold tags and document ids (or None)."""

    tokens: Sequence[Sequence[str]]
    tags: Sequence[Sequence[str]]
    documents: Optional[Sequence] = None


@dataclass
class Predicted:
    """One model's decoded predictions per split, the label map it was read with, and what
    running it took (``seconds`` in its calls, sentences ``predicted`` and read from the cache)."""

    model: Model
    batches: Dict[str, Batch]
    label_map: str
    mapping: LabelMap
    seconds: float = 0.0
    predicted: int = 0
    cached: int = 0
    splits: List[str] = field(default_factory=list)


def file_name(split: str) -> str:
    """A split's file among a ``jsonl`` model's files (``entity 0.5`` -> ``entity-0.5.jsonl``)."""
    return slug(split) + ".jsonl"


def _where(model: Model, split: str, words: Sequence[str], sentence: int) -> str:
    return f"model {model.name} on {split}, sentence {sentence} ({quote(' '.join(words))})"


def _renamed(error: ValueError, model: Model, split: str, tokens: Sequence[Sequence[str]], first: int = 0
             ) -> ValueError:
    """An error of the conversion layer (``sentence k: ...`` about ``tokens[k]``) naming the
    model, the split and the sentence's number in the split (``first + k``) and text."""
    message = str(error)
    found = re.match(r"sentence (\d+)(?::|, position \d+:) (.*)", message, re.S)
    if found is None:
        return ValueError(f"model {model.name} on {split}: {message}")
    k = int(found.group(1))
    position = re.match(r"sentence \d+, (position \d+):", message)
    detail = f"{position.group(1)}: {found.group(2)}" if position else found.group(2)
    return ValueError(f"{_where(model, split, tokens[k], first + k)}: {detail}")


def _plain(value):
    """A prediction as JSON values (tuples become lists, numpy numbers Python ones), for the cache."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value


def _format(model: Model, split: str, predicted: Sequence, first: int) -> str:
    if model.format is not None:
        return model.format
    try:
        return detect(predicted)
    except ValueError as error:
        raise ValueError(f"model {model.name} on {split}, sentences from {first}: {error}") from None


def checked(model: Model, split: str, tokens: Sequence[Sequence[str]], predicted, first: int = 0) -> List[Any]:
    """A chunk's predictions (sentences ``first`` ... of the split), checked and as JSON
    values: one per sentence, in a format the conversion layer reads (spaCy Docs become token
    spans).  Tags are checked for their number only: their labels are read after the label map."""
    last = first + len(tokens) - 1
    if isinstance(predicted, (str, bytes, Mapping)) or not hasattr(predicted, "__len__"):
        raise ValueError(f"model {model.name} on {split}: returned a {type(predicted).__name__} for sentences "
                         f"{first}-{last}; return a list with one prediction per sentence")
    predicted = list(predicted)
    if len(predicted) != len(tokens):
        raise ValueError(f"model {model.name} on {split}: returned {len(predicted)} predictions for the "
                         f"{len(tokens)} sentences {first}-{last}; return one per sentence")
    format = _format(model, split, predicted, first)
    if format == "tags":
        for k, (words, tags) in enumerate(zip(tokens, predicted)):
            if isinstance(tags, str) or not hasattr(tags, "__len__") or len(tags) != len(words):
                got = "one string" if isinstance(tags, str) else f"{len(tags)} tags" if hasattr(tags, "__len__") \
                    else f"a {type(tags).__name__}"
                raise ValueError(f"{_where(model, split, words, first + k)}: {len(words)} tokens but {got}")
        return _plain(predicted)
    try:
        _, converted = convert(tokens, predicted, format)
    except ValueError as error:
        raise _renamed(error, model, split, tokens, first) from None
    if format == "spacy":  # Docs are no JSON: their entities as token spans over the given tokens
        return [[[a, b, label] for a, b, label in spans] for spans in converted.spans]
    return _plain(predicted)


def predict(model: Model, split: str, tokens: Sequence[Sequence[str]], cache: Optional[str] = None,
            progress: bool = False, record: Optional[Predicted] = None) -> List[Any]:
    """The model's raw predictions for a split (``tokens``), one per sentence: read from the
    cache folder ``cache`` when complete there, else predicted a chunk at a time from where a
    partial entry stops (``record`` counts the time and sentences)."""
    tokens = [list(words) for words in tokens]
    if model.kind == "jsonl":
        return _stored(model, split, tokens)
    entry = Entry(cache, model.identity, split, tokens) if cache and model.identity else None
    if entry is not None:
        done = entry.load()
        if done is not None:
            if record is not None:
                record.cached += len(done)
            return done
    predictions = entry.resume() if entry is not None else []
    if record is not None:
        record.cached += len(predictions)
    bar = None
    if progress:
        from tqdm import tqdm

        tqdm.monitor_interval = 0  # no monitor thread (a thread would keep the attacks from a forked process)
        bar = tqdm(total=len(tokens), initial=len(predictions), desc=f"{model.name}: {split}", unit="sentence",
                   file=sys.stderr, leave=False)
    try:
        if len(predictions) < len(tokens):
            model.load_now()  # before the clock: loading is not predicting
        for first in range(len(predictions), len(tokens), CHUNK):
            chunk = tokens[first:first + CHUNK]
            started = time.perf_counter()
            made = model.predict(chunk)
            if record is not None:
                record.seconds += time.perf_counter() - started
                record.predicted += len(chunk)
            made = checked(model, split, chunk, made, first)
            if entry is not None:
                entry.append(first, made)
            predictions += made
            if bar is not None:
                bar.update(len(chunk))
        if entry is not None:
            entry.finish()
    finally:
        if entry is not None:
            entry.close()  # a partial entry stays for the next run
        if bar is not None:
            bar.close()
    return predictions


def _stored(model: Model, split: str, tokens: Sequence[Sequence[str]]) -> List[Any]:
    """A ``jsonl`` model's predictions for a split, from its file in the model's folder."""
    path = os.path.join(model.folder, file_name(split))
    if not os.path.isfile(path):
        raise ValueError(f"model {model.name}: no {path} for the {split} split (write every split's sentences with "
                         f"--write-inputs FOLDER, run the model on each file, and keep one prediction per line in "
                         f"{file_name(split)})")
    predictions = read_jsonl(path)
    if all(item["path"] != path for item in model.files):  # a report records it: --rerun checks it is unchanged
        model.files.append({"split": split, "path": path, "sha256": file_sha256(path)})
    if len(predictions) != len(tokens):
        raise ValueError(f"model {model.name}: {path} holds {len(predictions)} lines for the {len(tokens)} sentences "
                         f"of the {split} split")
    try:
        return checked(model, split, tokens, predictions)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def to_batch(model: Model, split: str, data: Split, raw: Sequence[Any], mapping: LabelMap,
             known: Sequence[str], decoding: Optional[Mapping[str, str]] = None) -> Batch:
    """A split's gold and a model's raw predictions as one ``Batch``, labels mapped, the tags
    decoded as ``decoding`` says (``scheme``, ``mode``, ``repair``: ``as_batch``'s); a label
    that is still no type of ``known`` (the test set's and training data's) is an error."""
    format = model.format or detect(raw)
    decoding = dict(decoding or {})
    try:
        if format == "tags":
            batch = as_batch(data.tokens, data.tags, map_tags(raw, mapping), "tags", "tags", documents=data.documents,
                             **decoding)
        else:
            batch = as_batch(data.tokens, data.tags, raw, "tags", format, type_map=mapping or None,
                             documents=data.documents, **decoding)
    except ValueError as error:
        raise _hint(_renamed(error, model, split, data.tokens), mapping) from None
    allowed = set(known)
    hallucinated = batch.hallucinated or [[] for _ in data.tokens]
    for s, (spans, extra) in enumerate(zip(batch.pred_spans, hallucinated)):
        for label in [t for _, _, t in spans] + [m["type"] for m in extra]:
            if label not in allowed:
                raise ValueError(f"{_where(model, split, data.tokens[s], s)}: label {quote(label)} is not a type of "
                                 f"the test set or the training data ({', '.join(sorted(allowed))}); map it with "
                                 f"--label-map {label}=TYPE (label_map=), or drop it with {label}=")
    return batch


def _hint(error: ValueError, mapping: LabelMap) -> ValueError:
    """An unknown tag: say how a whole label is mapped to a tag."""
    found = re.search(r"unknown tag '([^']*)'", str(error))
    if found is None:
        return error
    return ValueError(f"{error}; map the model's labels to tags with --label-map {found.group(1)}=B-TYPE (or "
                      f"{found.group(1)}=O), label_map= in Python")


def run(models: Sequence[Model], splits: Mapping[str, Union[Split, Callable[[], Split]]], known: Sequence[str],
        label_map: Union[None, str, Mapping[str, Optional[str]]] = None, cache: Optional[str] = None,
        progress: bool = False, decoding: Optional[Mapping[str, str]] = None) -> List[Predicted]:
    """Every model on every split (in order): each model's ``Predicted`` batches.  A split may
    be a function giving it, called when the first model gets there (a set still being made).
    ``known``: the types of the test set and training data, which every mapped label must be;
    ``label_map`` as ``labels.parse_label_map`` reads it (default ``auto``, chosen per model);
    ``decoding``: how the tags are decoded (``to_batch``)."""
    given = parse_label_map(label_map)
    splits = dict(splits)
    results = []
    for model in models:
        record = Predicted(model, {}, "none", {})
        raw = {}
        for name, split in splits.items():
            if callable(split):
                split = splits[name] = split()
            raw[name] = predict(model, name, split.tokens, cache, progress, record)
        # Chosen from the labels the model used, not from what it could say: a run read from the
        # cache (the model never loaded) chooses as the run that predicted.
        used: List[str] = []
        for name, predictions in raw.items():
            used += [label for label in types_of(predictions, model.format or detect(predictions)) if label not in used]
        record.label_map, record.mapping = choose(given, used, known)
        record.batches = {name: to_batch(model, name, splits[name], predictions, record.mapping, known,
                                         decoding if name not in ("nrb", "wts") else None)
                          for name, predictions in raw.items()}
        record.splits = list(raw)
        results.append(record)
    return results
