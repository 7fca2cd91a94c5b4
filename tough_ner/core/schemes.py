"""One lenient decoder for every tag scheme (BIO/IOB2, IOB1, BIOES/BILOU, IO).

Rules (DESIGN.md): ``B-X`` opens X, closing any open span; ``I-X`` continues an open X
span, otherwise opens one (as conlleval does); ``E-X``/``L-X`` close an open X span
including the token, or make a one-token span; ``S-X``/``U-X`` make one-token spans;
``O`` closes.  The type is everything after the first ``-``.  ``decode`` reads one
sentence's tags; ``decode_flat`` applies the same rules column-wise to many sentences given
as arrays (the statistics builder and batches read as codes; tests compare the two).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

Span = Tuple[int, int, str]  # (start, end exclusive, type)

_PREFIXES = {"B": "B", "I": "I", "E": "E", "L": "E", "S": "S", "U": "S"}


_PARSED = {"O": ("O", "")}  # tag -> (prefix, type); filled as tags are met
# A long-running server meets arbitrary tags: start the cache afresh when it gets this big.
_PARSED_LIMIT = 50_000


def parse_label(label, sentence: int | None = None, position: int | None = None) -> Tuple[str, str]:
    """Split a tag into a normalised prefix (O, B, I, E, S) and its type."""
    parsed = _PARSED.get(label) if isinstance(label, str) else None
    if parsed is None:
        from .._util import quote

        where = "" if sentence is None else f"sentence {sentence}, position {position}: "
        if not isinstance(label, str):
            raise ValueError(f"{where}unknown tag {repr(label)[:200]}: a {type(label).__name__}, not a string")
        if label != label.strip():
            raise ValueError(f"{where}tag {quote(label)} has surrounding whitespace (strip the tags; it is not "
                             f"a new type)")
        prefix, sep, entity_type = label.partition("-")
        if not sep or not entity_type or prefix not in _PREFIXES:
            raise ValueError(
                f"{where}unknown tag {quote(label)} (expected O or a B-, I-, E-, L-, S- or U- prefix and a type)")
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
            _PARSED["O"] = ("O", "")
        parsed = _PARSED[label] = (_PREFIXES[prefix], entity_type)
    return parsed


def check_sentence(tags, sentence: int, what: str = "tags") -> None:
    """A sentence's tags (or tokens) must be a list, not one string (``"OOO"`` would be read
    as three tags)."""
    if isinstance(tags, str):
        from .._util import quote

        raise ValueError(f"sentence {sentence}: {what} must be a list of strings, not one string {quote(tags)}")


def decode(tags: Sequence[str], sentence: int | None = None) -> List[Span]:
    """Spans ``(start, end, type)`` of one sentence's tags, ``end`` exclusive."""
    spans: List[Span] = []
    open_type = None
    start = 0
    last = -2
    # Only entity tags need work; a gap between them is an O, which closes any open span.
    for i in [i for i, label in enumerate(tags) if label != "O"]:
        label = tags[i]
        try:
            prefix, entity_type = _PARSED[label]
        except (KeyError, TypeError):
            prefix, entity_type = parse_label(label, sentence, i)
        if open_type is not None and i != last + 1:
            spans.append((start, last + 1, open_type))
            open_type = None
        last = i
        if prefix == "I" and open_type == entity_type:
            continue
        if open_type is not None and not (prefix == "E" and open_type == entity_type):
            spans.append((start, i, open_type))
            open_type = None
        if prefix == "E" and open_type == entity_type:
            spans.append((start, i + 1, open_type))
            open_type = None
        elif prefix in ("E", "S"):
            spans.append((i, i + 1, entity_type))
        else:  # B, or an I that opens a span
            open_type, start = entity_type, i
    if open_type is not None:
        spans.append((start, last + 1, open_type))
    return spans


# Prefix codes of the column-wise decoder (decode_flat).
PREFIX_CODES = {"O": 0, "B": 1, "I": 2, "E": 3, "S": 4}


def decode_flat(prefix: np.ndarray, label: np.ndarray, starts: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``decode`` column-wise, over sentences given flat: starts and (exclusive) ends of the
    spans of each token's prefix code (``PREFIX_CODES``) and type label (equal for equal
    types), sentence ``s`` being tokens ``[starts[s], starts[s + 1])``.  An I or E token
    continues the span before it when that token is B or I (the only prefixes that leave a
    span open) of the same type in the same sentence; every other entity token starts a span."""
    n = len(prefix)
    previous_open = np.zeros(n, dtype=bool)
    previous_open[1:] = ((prefix[:-1] == 1) | (prefix[:-1] == 2)) & (label[:-1] == label[1:])
    previous_open[starts[:-1][starts[:-1] < n]] = False  # a sentence's first token continues nothing
    continues = ((prefix == 2) | (prefix == 3)) & previous_open
    entity = prefix > 0
    last = entity & ~np.append(continues[1:], False)  # the next token does not continue this span
    return np.flatnonzero(entity & ~continues), np.flatnonzero(last) + 1


def spans_to_tags(spans: Sequence[Span], length: int, scheme: str = "bio") -> List[str]:
    """Write spans as tags in ``bio`` (IOB2), ``bilou`` or ``io``."""
    tags = ["O"] * length
    for start, end, entity_type in spans:
        if scheme == "io":
            for i in range(start, end):
                tags[i] = "I-" + entity_type
        elif scheme == "bio":
            tags[start] = "B-" + entity_type
            for i in range(start + 1, end):
                tags[i] = "I-" + entity_type
        elif scheme == "bilou":
            if end - start == 1:
                tags[start] = "U-" + entity_type
            else:
                tags[start] = "B-" + entity_type
                for i in range(start + 1, end - 1):
                    tags[i] = "I-" + entity_type
                tags[end - 1] = "L-" + entity_type
        else:
            raise ValueError(f"unknown scheme {scheme!r}: use 'bio', 'bilou' or 'io'")
    return tags


def to_bilou(tags: Sequence[str]) -> List[str]:
    """Re-tag a sentence in BILOU after lenient decoding."""
    return spans_to_tags(decode(tags), len(tags), "bilou")


def to_bio(tags: Sequence[str]) -> List[str]:
    """Re-tag a sentence in IOB2 after lenient decoding."""
    return spans_to_tags(decode(tags), len(tags), "bio")


def to_io(tags: Sequence[str]) -> List[str]:
    """Re-tag a sentence in IO (every entity token ``I-X``) after lenient decoding."""
    return spans_to_tags(decode(tags), len(tags), "io")
