"""Every NER output format to one decoded ``Batch``: the only module that knows formats.

Per sentence, each side (gold or predicted) may be given as
  tags      a list of tags in any scheme the decoder reads (``B-PER``, ``U-LOC``, ...);
  spans     a list of token spans ``(start, end, type)``, end exclusive (tuples, lists, or
            dicts with ``start``, ``end`` and ``type`` or ``label``);
  chars     a record ``{"text": ..., "entities": [{"start", "end", "label"}]}`` of character
            offsets over the sentence text (``text`` defaults to the tokens joined by spaces);
  mentions  a list of ``{"text", "type"}`` without positions (LLM output);
  spacy     a ``spacy.tokens.Doc`` or ``spacy.training.Example`` (its ``reference`` doc for the
            gold side, its ``predicted`` doc for the predictions).
Each side's format is detected from its first non-empty sentence, or named.

Rules (the metric cards repeat them):
  * Entities are flat: nested or overlapping spans on one side are an error naming the sentence.
  * Character spans are aligned to the tokens (found left to right in the text, separated by
    whitespace only).  A span that does not start and end on token boundaries is expanded to
    the tokens it touches (``misaligned="snap"``, counted in ``n_snapped``) or refused
    (``misaligned="error"``).
  * A mention is placed on an occurrence of its text in the sentence, compared with every
    whitespace removed, starting and ending on token boundaries (case-sensitive unless
    ``case_sensitive=False``).  Longer mentions are placed first, then in the given order;
    each takes the leftmost occurrence that overlaps no placed mention, so two predicted
    "Paris" take the first two occurrences.  A mention that finds no free occurrence is
    *hallucinated*: a false positive without a position, listed in ``Batch.hallucinated``.
  * ``type_map`` ({label: type, or None to drop the entity}) renames the types of every side
    not given as tags (e.g. spaCy's OntoNotes labels to CoNLL types); other labels are kept.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from .batch import Batch
from .schemes import Span, decode, spans_to_tags

FORMATS = ("tags", "spans", "chars", "mentions", "spacy")
SIDES = {"references": "reference", "predictions": "prediction"}


# ---- detection -------------------------------------------------------------------------
def _is_record(item) -> bool:
    return isinstance(item, dict) or isinstance(item, Mapping)  # the plain dict test first: ABC checks are slow


def _is_spacy(item) -> bool:
    return hasattr(item, "ents") and hasattr(item, "text") or hasattr(item, "predicted") and hasattr(item, "reference")


def detect(sentences: Sequence[Any]) -> str:
    """The format of one side: ``tags``, ``spans``, ``chars``, ``mentions`` or ``spacy``."""
    for sentence in sentences:
        if _is_spacy(sentence):
            return "spacy"
        if isinstance(sentence, Mapping):
            return "chars"
        if isinstance(sentence, str):
            raise ValueError("a sentence is one string: give a list of tags (or spans, or mentions) per sentence")
        if len(sentence) == 0:
            continue
        first = sentence[0]
        if isinstance(first, str):
            return "tags"
        if isinstance(first, Mapping):
            return "spans" if "start" in first else "mentions"
        if isinstance(first, (tuple, list)):
            return "spans"
        raise ValueError(f"cannot tell the format of a sentence starting with {first!r}")
    return "spans"  # nothing but empty sentences: no entities, whatever the format


# ---- one sentence of each format to token spans -----------------------------------------
def _label(item: Mapping, sentence: int, what: str) -> str:
    value = item.get("type", item.get("label"))
    if not isinstance(value, str) or not value:
        raise ValueError(f"sentence {sentence}: {what} {dict(item)!r} has no 'type' or 'label' string")
    return value


def _token_spans(sentence: int, items, length: int) -> List[Span]:
    spans = []
    for item in items:
        if _is_record(item):
            start, end, label = item.get("start"), item.get("end"), _label(item, sentence, "span")
        else:
            if len(item) != 3:
                raise ValueError(f"sentence {sentence}: span {item!r} is not (start, end, type)")
            start, end, label = item
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(label, str)) or not 0 <= start < end <= length:
            raise ValueError(f"sentence {sentence}: span {item!r} is not (start, end, type) with "
                             f"0 <= start < end <= {length} (token positions, end exclusive)")
        spans.append((start, end, label))
    return spans


def token_offsets(sentence: int, tokens: Sequence[str], text: str) -> Tuple[List[int], List[int]]:
    """Character start and end of each token in ``text`` (tokens in order, whitespace between)."""
    starts, ends, position = [], [], 0
    for i, token in enumerate(tokens):
        found = text.find(token, position) if token else -1
        if found < 0 or text[position:found].strip():
            raise ValueError(f"sentence {sentence}, token {i} {token!r}: not found in the text after character "
                             f"{position} (the text must hold the tokens in order, separated by whitespace)")
        starts.append(found)
        ends.append(found + len(token))
        position = found + len(token)
    return starts, ends


def _char_spans(sentence: int, record, tokens: Sequence[str], misaligned: str, snapped: list) -> List[Span]:
    if not _is_record(record) or not isinstance(record.get("entities", []), (list, tuple)):
        raise ValueError(f"sentence {sentence}: expected {{'text': ..., 'entities': [{{'start', 'end', 'label'}}]}}, "
                         f"got {record!r}")
    joined = " ".join(tokens)
    text = record.get("text")
    text = joined if text is None else text
    if text == joined and text.count(" ") == len(tokens) - 1:  # the usual text: no offsets needed
        locate = _joined_locator(text)
    else:  # also checks that the text holds the tokens (a shifted line is an error)
        locate = _offsets_locator(*token_offsets(sentence, tokens, text))
        return [_snap(sentence, item, locate, text, misaligned, snapped) for item in record.get("entities", [])]
    spans, n = [], len(text)
    for item in record.get("entities", []):
        # the usual well-formed, aligned span inline; anything else through _snap (checks, snapping)
        if type(item) is dict:
            start, end, label = item.get("start"), item.get("end"), item.get("type", item.get("label"))
            if (type(start) is int and type(end) is int and type(label) is str and label and 0 <= start < end <= n
                    and (start == 0 or text[start - 1] == " ") and text[start] != " "
                    and (end == n or text[end] == " ") and text[end - 1] != " "):
                first = text.count(" ", 0, start)
                spans.append((first, first + text.count(" ", start, end) + 1, label))
                continue
        spans.append(_snap(sentence, item, locate, text, misaligned, snapped))
    return spans


def _offsets_locator(starts: List[int], ends: List[int]):
    """(first token, end token, on token boundaries) of a character span, from token offsets."""
    def locate(start: int, end: int) -> Tuple[int, int, bool]:
        first = bisect_right(ends, start)       # first token ending after the span starts
        last = bisect_left(starts, end)         # tokens before this one start before the span ends
        return first, last, first < last and starts[first] == start and ends[last - 1] == end
    return locate


def _joined_locator(text: str):
    """The same over tokens joined by single spaces (no token holds a space): a character's
    token is the number of spaces before it."""
    def locate(start: int, end: int) -> Tuple[int, int, bool]:
        first = text.count(" ", 0, start) + (text[start] == " ")
        last = text.count(" ", 0, end - 1) + 1
        aligned = ((start == 0 or text[start - 1] == " ") and text[start] != " "
                   and (end == len(text) or text[end] == " ") and text[end - 1] != " ")
        return first, last, aligned
    return locate


def _snap(sentence, item, locate, text, misaligned, snapped) -> Span:
    """A character span as the token span it covers: the tokens it touches."""
    start, end = (item.get("start"), item.get("end")) if _is_record(item) else (None, None)
    if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start < end <= len(text):
        raise ValueError(f"sentence {sentence}: character span {item!r} needs integer 'start' < 'end' within "
                         f"the text ({len(text)} characters)")
    label = _label(item, sentence, "character span")
    first, last, aligned = locate(start, end)
    if first >= last:
        raise ValueError(f"sentence {sentence}: character span {start}-{end} {text[start:end]!r} covers no token")
    if not aligned:
        if misaligned == "error":
            raise ValueError(f"sentence {sentence}: character span {start}-{end} {text[start:end]!r} does not "
                             f"fall on token boundaries (misaligned='snap' expands it to the tokens it touches)")
        snapped.append({"sentence": sentence, "start": start, "end": end, "label": label,
                        "tokens": [first, last]})
    return first, last, label


def _mention_spans(sentence: int, items, tokens: Sequence[str], case_sensitive: bool,
                   hallucinated: list) -> List[Span]:
    """Place each mention on a free occurrence of its text (module docstring)."""
    fold = (lambda s: s) if case_sensitive else str.lower
    pieces = [fold("".join(token.split())) for token in tokens]
    joined = "".join(pieces)
    bounds, position = [], 0
    for piece in pieces:
        bounds.append(position)
        position += len(piece)
    first_token = {b: i for i, b in reversed(list(enumerate(bounds)))}  # char -> first token starting there
    end_token = {}  # char -> token after the last token ending there
    for i, piece in enumerate(pieces):
        if piece:
            end_token[bounds[i] + len(piece)] = i + 1
    mentions = []
    for k, item in enumerate(items):
        if not _is_record(item) or not isinstance(item.get("text"), str):
            raise ValueError(f"sentence {sentence}: mention {item!r} is not {{'text': ..., 'type': ...}}")
        needle = fold("".join(item["text"].split()))
        mentions.append((k, needle, _label(item, sentence, "mention")))
    taken = [False] * len(tokens)
    spans = []
    unplaced = []
    for k, needle, label in sorted(mentions, key=lambda m: -len(m[1])):
        place = None
        at = joined.find(needle) if needle else -1
        while at >= 0:
            a, b = first_token.get(at), end_token.get(at + len(needle))
            if a is not None and b is not None and a < b and not any(taken[a:b]):
                place = (a, b)
                break
            at = joined.find(needle, at + 1)
        if place is None:
            unplaced.append((k, {"text": items[k]["text"], "type": label}))
        else:
            taken[place[0]:place[1]] = [True] * (place[1] - place[0])
            spans.append((place[0], place[1], label))
    hallucinated.append([mention for _, mention in sorted(unplaced, key=lambda u: u[0])])
    return spans


def _spacy_spans(sentence: int, item, side: str, tokens: Optional[Sequence[str]], misaligned: str,
                 snapped: list) -> Tuple[List[str], List[Span]]:
    doc = (item.reference if side == "references" else item.predicted) if hasattr(item, "predicted") else item
    words = [token.text for token in doc]
    if tokens is None or list(tokens) == words:
        return words, [(ent.start, ent.end, ent.label_) for ent in doc.ents]
    record = {"text": doc.text, "entities": [{"start": ent.start_char, "end": ent.end_char, "label": ent.label_}
                                             for ent in doc.ents]}
    return list(tokens), _char_spans(sentence, record, tokens, misaligned, snapped)


def _flat(sentence: int, spans: List[Span], side: str) -> List[Span]:
    spans = sorted(spans)
    for (a, b, t), (c, d, u) in zip(spans, spans[1:]):
        if c < b:
            raise ValueError(f"sentence {sentence}: {SIDES[side]} spans {a}-{b} {t} and {c}-{d} {u} overlap or nest; "
                             "tough-ner scores flat entities only (keep one of them)")
    return spans


# ---- the conversion layer ----------------------------------------------------------------
class Converted:
    """One side as token spans per sentence, with what the conversion noticed."""

    def __init__(self, spans, hallucinated=None, snapped=(), tags=None):
        self.spans: List[List[Span]] = spans
        self.tags: Optional[Sequence[Sequence[str]]] = tags  # the tags as given, for a side given as tags
        self.hallucinated: Optional[List[List[dict]]] = hallucinated
        self.snapped: List[dict] = list(snapped)


def convert(tokens: Optional[Sequence[Sequence[str]]], sentences: Sequence[Any], format: Optional[str] = None,
            side: str = "predictions", misaligned: str = "snap", case_sensitive: bool = True,
            type_map: Optional[Mapping[str, Optional[str]]] = None) -> Tuple[List[List[str]], Converted]:
    """(tokens, token spans of one side).  ``tokens`` may be None for spaCy docs (taken from them)."""
    format = format or detect(sentences)
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    if misaligned not in ("snap", "error"):
        raise ValueError(f"misaligned must be 'snap' or 'error', got {misaligned!r}")
    if tokens is None and format != "spacy":
        raise ValueError("tokens= is required (only spaCy docs carry their own tokens)")
    if tokens is not None and len(tokens) != len(sentences):
        raise ValueError(f"{len(tokens)} token sentences but {len(sentences)} {SIDES[side]} sentences")
    out_tokens: List[List[str]] = [] if tokens is None else list(tokens)
    spans: List[List[Span]] = []
    hallucinated: Optional[list] = [] if format == "mentions" else None
    snapped: list = []
    for s, sentence in enumerate(sentences):
        words = None if tokens is None else tokens[s]
        if format == "tags":
            if isinstance(sentence, str) or len(sentence) != len(words):
                raise ValueError(f"sentence {s}: {len(words)} tokens but "
                                 f"{'one string' if isinstance(sentence, str) else len(sentence)} {SIDES[side]} tags")
            found = decode(sentence, s)
        elif format == "spans":
            found = _token_spans(s, sentence, len(words))
        elif format == "chars":
            found = _char_spans(s, sentence, words, misaligned, snapped)
        elif format == "mentions":
            found = _mention_spans(s, sentence, words, case_sensitive, hallucinated)
        else:
            if not _is_spacy(sentence):
                raise ValueError(f"sentence {s}: expected a spaCy Doc or Example, got {type(sentence).__name__}")
            words, found = _spacy_spans(s, sentence, side, words, misaligned, snapped)
            if tokens is None:
                out_tokens.append(words)
        if type_map is not None and format != "tags":
            found = [(a, b, type_map.get(t, t)) for a, b, t in found if type_map.get(t, t) is not None]
            if hallucinated is not None:
                hallucinated[-1] = [{**m, "type": type_map.get(m["type"], m["type"])} for m in hallucinated[-1]
                                    if type_map.get(m["type"], m["type"]) is not None]
        spans.append(found if format == "tags" else _flat(s, found, side))
    return out_tokens, Converted(spans, hallucinated, snapped, sentences if format == "tags" else None)


def to_tags(tokens: Optional[Sequence[Sequence[str]]], sentences: Sequence[Any], format: Optional[str] = None,
            scheme: str = "bio", **options) -> List[List[str]]:
    """One side in any format as tags (IOB2 by default) over ``tokens``.  Mention lists lose
    their hallucinated mentions here: use ``as_batch`` to score them."""
    tokens, converted = convert(tokens, sentences, format, **options)
    return [spans_to_tags(spans, len(words), scheme) for spans, words in zip(converted.spans, tokens)]


def as_batch(tokens: Optional[Sequence[Sequence[str]]], references: Sequence[Any],
             predictions: Optional[Sequence[Any]] = None, reference_format: Optional[str] = None,
             prediction_format: Optional[str] = None, *, misaligned: str = "snap", case_sensitive: bool = True,
             type_map: Optional[Mapping[str, Optional[str]]] = None, documents: Optional[Sequence] = None) -> Batch:
    """The decoded ``Batch`` of gold and predictions given in any format (module docstring).

    ``documents``: a document id per sentence (resampling by document).  The batch carries ``hallucinated`` (per sentence, the predicted mentions placed nowhere;
    None unless predictions are mention lists), ``snapped`` (character spans expanded to token
    boundaries: sentence, offsets, label, token span) and ``formats``.
    """
    options = dict(misaligned=misaligned, case_sensitive=case_sensitive, type_map=type_map)
    tokens, gold = convert(tokens, references, reference_format, "references", **options)
    pred = None
    if predictions is not None:
        _, pred = convert(tokens, predictions, prediction_format, "predictions", **options)
    if gold.hallucinated is not None and any(gold.hallucinated):
        s = next(s for s, items in enumerate(gold.hallucinated) if items)
        raise ValueError(f"sentence {s}: gold mention {gold.hallucinated[s][0]!r} does not occur in the sentence")
    # A side given as tags keeps them (the canonical sentence order hashes the gold tags); others are
    # written in IOB2, which the decoder reads back as the same flat spans.
    tags = [None if side is None else side.tags if side.tags is not None else
            [spans_to_tags(spans, len(words)) for spans, words in zip(side.spans, tokens)] for side in (gold, pred)]
    batch = Batch(tokens, tags[0], tags[1], documents)
    batch.formats = {"references": reference_format or detect(references),
                     "predictions": None if predictions is None else prediction_format or detect(predictions)}
    batch.snapped = [{**item, "side": "reference"} for item in gold.snapped] + (
        [] if pred is None else [{**item, "side": "prediction"} for item in pred.snapped])
    if pred is not None and pred.hallucinated is not None:
        _set_hallucinated(batch, pred.hallucinated)
    return batch


def _set_hallucinated(batch: Batch, hallucinated: List[List[dict]]) -> None:
    batch.hallucinated = hallucinated
    extra = {m["type"] for items in hallucinated for m in items} - set(batch.types)
    if extra:  # a type only hallucinated mentions have still gets its per-type row
        batch.types = sorted(set(batch.types) | extra)
        batch.type_index = {t: i for i, t in enumerate(batch.types)}



def select(batch: Batch, rows: Sequence[int]) -> Batch:
    """The batch of some of ``batch``'s sentences, keeping what ``as_batch`` recorded."""
    part = Batch([batch.tokens[i] for i in rows], [batch.references[i] for i in rows],
                 None if batch.predictions is None else [batch.predictions[i] for i in rows],
                 None if batch.documents is None else [batch.documents[i] for i in rows])
    part.formats = batch.formats
    if batch.hallucinated is not None:
        _set_hallucinated(part, [batch.hallucinated[i] for i in rows])
    where = {row: k for k, row in enumerate(rows)}
    part.snapped = [{**item, "sentence": where[item["sentence"]]} for item in batch.snapped if item["sentence"] in where]
    return part


def read_jsonl(path) -> List[Any]:
    """One sentence per line of a JSON Lines file: the sentence's value in its format (a list
    of tags, of token spans, of mentions, or a character-span record)."""
    import json
    import os

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such JSONL file: {path}")
    sentences = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                raise ValueError(f"{path} line {number}: blank line (one JSON value per sentence, no blank lines)")
            try:
                sentences.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path} line {number}: not JSON ({error.msg})") from None
    return sentences


def batch_from_files(tokens: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], path, format: str,
                     **options) -> Batch:
    """Gold tags read elsewhere (a CoNLL file) and predictions from a JSONL file in ``format``;
    an error about sentence k names the file's line k + 1."""
    import re

    predictions = read_jsonl(path)
    try:
        return as_batch(tokens, gold, predictions, "tags", format, **options)
    except ValueError as error:
        message = re.sub(r"^sentence (\d+)", lambda m: f"line {int(m.group(1)) + 1} (sentence {m.group(1)})",
                         str(error))
        raise ValueError(f"{path}: {message}") from None
