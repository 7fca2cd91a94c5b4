"""Reading tagged text: CoNLL column files, ``datasets.Dataset`` and plain lists."""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from itertools import chain
from typing import List, Optional, Sequence, Union

import numpy as np

from ._util import no_gc, write_atomic

Sentences = List[List[str]]


@dataclass
class Corpus:
    """Sentences of tokens with gold tags and, for prediction files, one tag list per system."""

    tokens: Sentences
    tags: Sentences
    predictions: List[Sentences] = field(default_factory=list)
    path: Optional[str] = None
    # Document index of each sentence (``-DOCSTART-`` groups), when read from a file.
    documents: Optional[List[int]] = None

    def __len__(self) -> int:
        return len(self.tokens)


def read_columns(path: str | os.PathLike, columns: Optional[Sequence[int]] = None) -> List[Sentences]:
    """Columns of a CoNLL file (all, or those indexed by ``columns``; negative counts
    from the end), each as a list of sentences, following the file rules of ``split_rows``."""
    text = read_text(path)
    with no_gc():  # many small acyclic lists: the collector's scans would triple the time
        return _columns(source_name(path), split_rows(text), columns)


# ---- file rules (kept in one place so a faster reader can carry them over) ----------------
# 1. Bytes are UTF-8; a leading byte-order mark is dropped; undecodable bytes name the line.
# 2. Only "\n" and "\r\n" end a line (str.splitlines() would also break at U+2028, U+0085 ...).
# 3. Only ASCII space and tab separate columns: every other character, even one Python calls
#    whitespace (NBSP, U+2028, U+0085, a lone "\r"), belongs to a token.
# 4. A blank line ends a sentence; a "-DOCSTART-" line is a document boundary, never a token.
# 5. "-" and "/dev/stdin" are the standard input.
STDIN = ("-", "/dev/stdin")
# What str.split() takes as whitespace beyond space, tab and newline: token characters here.
OTHER_SPACE = ("\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
               "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_FIELD = re.compile("[^ \t]+")
QUOTE = 200  # error messages quote at most this many characters of a line or value


def quote(value) -> str:
    """``repr`` of (at most the first 200 characters of) a value, for error messages."""
    text = value if isinstance(value, str) else str(value)
    return repr(text[:QUOTE]) + ("…" if len(text) > QUOTE else "")


def source_name(path) -> str:
    path = os.fspath(path)
    return "<stdin>" if path in STDIN else path


def read_text(path: str | os.PathLike) -> str:
    """A text file's content under rules 1 and 5 (a directory or a missing file is a clear error)."""
    path = os.fspath(path)
    if path in STDIN:
        raw = sys.stdin.buffer.read()
    elif os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory, not a CoNLL file")
    elif not os.path.exists(path):
        raise FileNotFoundError(f"no such CoNLL file: {path}")
    else:
        with open(path, "rb") as handle:
            raw = handle.read()
    return decode_text(raw, source_name(path))


def decode_text(raw: bytes, name: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise ValueError(f"{name}, line {line}: bytes that are not UTF-8 ({error.reason} at byte "
                         f"{error.start}); save the file as UTF-8") from None
    return text[1:] if text.startswith("\ufeff") else text


def split_rows(text: str) -> List[List[str]]:
    """Each line's fields under rules 2 and 3; ``rows[i]`` is line ``i + 1``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if any(c in text for c in OTHER_SPACE):  # rare: split on space and tab only (slower)
        return [_FIELD.findall(line) for line in lines]
    return [line.split() for line in lines]  # fast: no other whitespace to protect


def _table(path: str, rows: List[List[str]]):
    """The token rows (``-DOCSTART-`` and blank lines dropped), sentence ends as counts of
    token rows, the document index of each sentence (None for a file without ``-DOCSTART-``),
    and the common width (rule 4; ragged rows name their line)."""
    kept = []
    ends = []  # sentence ends, as counts of kept rows
    documents = []  # per sentence
    document = 0
    marked = False  # any -DOCSTART- line at all
    for fields in rows:
        if fields and fields[0] != "-DOCSTART-":
            kept.append(fields)
            continue
        if kept and (not ends or ends[-1] != len(kept)):
            ends.append(len(kept))
            documents.append(document)
        marked = marked or bool(fields)
        if fields and documents and documents[-1] == document:  # a new document after some sentences
            document += 1
    if kept and (not ends or ends[-1] != len(kept)):
        ends.append(len(kept))
        documents.append(document)
    widths = set(map(len, kept))
    if len(widths) > 1 or widths == {1}:
        _raise_ragged(path, rows)
    return kept, ends, (documents if marked else None), (widths.pop() if widths else 0)


def _columns(path: str, rows: List[List[str]], columns: Optional[Sequence[int]]) -> List[Sentences]:
    kept, ends, _, width = _table(path, rows)
    if columns is None:
        columns = range(width)
    elif kept and (not all(-width <= c < width for c in columns)
                   or len({c % width for c in columns}) < len(columns)):
        raise ValueError(f"{path}: {width} columns cannot provide columns {list(columns)}")
    return _sentences([[fields[c] for fields in kept] for c in columns], ends)


def _sentences(flat_columns: List[List[str]], ends: List[int]) -> List[Sentences]:
    """Each flat column cut into sentences at ``ends``."""
    starts = [0] + ends[:-1]
    return [[column[a:b] for a, b in zip(starts, ends)] for column in flat_columns]


def _raise_ragged(path: str, rows: List[List[str]]) -> None:
    width = None
    for number, fields in enumerate(rows, 1):
        if not fields or fields[0] == "-DOCSTART-":
            continue
        if width is None:
            width = len(fields)
            if width < 2:
                raise ValueError(f"{path}, line {number}: a CoNLL line needs a token and a tag, "
                                 f"got {quote(' '.join(fields))}")
        elif len(fields) != width:
            raise ValueError(f"{path}, line {number}: {len(fields)} columns where earlier lines have {width}: "
                             f"{quote(' '.join(fields))}")


ColumnChoice = Union[None, str, Sequence[Union[int, str]]]


def column_indices(columns: ColumnChoice, width: int, n_predictions: Optional[int], path: str) -> List[int]:
    """``[token, gold, *predictions]`` column indices from a column choice.

    ``columns`` is either indices (``"0,3,4"`` or ``[0, 3, 4]``: token, gold, then each
    prediction column; negative counts from the end) or one name per column of the file
    (``"token,pos,chunk,gold,pred"``): ``token``, ``gold`` and ``pred`` (repeatable, or
    ``pred1``, ``pred2`` ...) mark the columns read; any other name is a column skipped.
    Without a choice: token first, then gold and the ``n_predictions`` prediction columns last.
    """
    if columns is None:
        n = n_predictions or 0
        if width and width < 2 + n:
            raise ValueError(f"{path}: too few columns ({width}) for a token, a gold tag and {n} prediction "
                             f"column(s) (choose them with columns= / --columns)")
        return [0] + [width - 1 - n + i for i in range(n + 1)] if width else [0] + [0] * (n + 1)
    items = [c.strip() for c in columns.split(",")] if isinstance(columns, str) else list(columns)
    as_int = [_index(c) for c in items]
    if all(i is not None for i in as_int):
        indices = as_int
        if len(indices) < 2:
            raise ValueError(f"columns {items}: give the token column, the gold column and any prediction columns")
        if width and (not all(-width <= c < width for c in indices)
                      or len({c % width for c in indices}) < len(indices)):
            raise ValueError(f"{path}: {width} columns cannot provide columns {items} (token, gold, predictions)")
        indices = [c % width if width else c for c in indices]
    elif any(i is not None for i in as_int):
        raise ValueError(f"columns {items}: use either column indices or one name per column, not both")
    else:
        if width and len(items) != width:
            raise ValueError(f"{path}: columns= names {len(items)} columns ({','.join(items)}) but the file has "
                             f"{width}")
        names = [str(c).lower() for c in items]
        if names.count("token") != 1 or names.count("gold") != 1:
            raise ValueError(f"columns {items}: name exactly one 'token' and one 'gold' column "
                             f"(others: 'pred' for predictions, any other name for a column skipped)")
        indices = [names.index("token"), names.index("gold")] + [i for i, c in enumerate(names) if c.startswith("pred")]
    if n_predictions is not None and len(indices) - 2 != n_predictions:
        raise ValueError(f"columns {items} choose {len(indices) - 2} prediction column(s); {n_predictions} expected")
    return indices


def _index(value) -> Optional[int]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return None


def check_tag_column(path: str, rows: List[List[str]], kept: List[List[str]], column: List[str], c: int) -> None:
    """Every value of a tag column (index ``c``, values ``column``) is a tag; a bad one is
    reported with its file line."""
    from .schemes import parse_label

    for tag in set(column):
        try:
            parse_label(tag)
        except ValueError as error:
            row = kept[column.index(tag)]
            number = next(n for n, fields in enumerate(rows, 1) if fields is row)
            raise ValueError(f"{path}, line {number}, column {c + 1}: {error}") from None


def parse_conll(text: str, n_predictions: int = 0, name: str = "<text>", columns: ColumnChoice = None) -> Corpus:
    """``read_conll`` of CoNLL text already in memory (errors name ``name`` and the line)."""
    with no_gc():  # many small acyclic lists: the collector's scans would triple the time
        return _parse(text, n_predictions, name, columns)


def _parse(text: str, n_predictions: int, name: str, columns: ColumnChoice) -> Corpus:
    rows = split_rows(text)
    kept, ends, documents, width = _table(name, rows)
    indices = column_indices(columns, width, None if columns is not None and not n_predictions else n_predictions,
                             name)
    if not kept:
        return Corpus([], [], [[] for _ in indices[2:]], name, [])
    flat = [[fields[c] for fields in kept] for c in indices]
    for c, column in zip(indices[1:], flat[1:]):
        check_tag_column(name, rows, kept, column, c)
    tokens, gold, *predictions = _sentences(flat, ends)
    return Corpus(tokens, gold, predictions, name, documents)


def read_conll(path: str | os.PathLike, n_predictions: int = 0, columns: ColumnChoice = None) -> Corpus:
    """Read a CoNLL file: token first; the gold tag is the last column, or, with
    ``n_predictions`` systems, the column before their ``n_predictions`` last ones.
    ``columns`` chooses the columns explicitly (see ``column_indices``): ``"0,3,4"`` or
    ``"token,pos,chunk,gold,pred"``.  Tag columns must hold tags (errors name file and line)."""
    return parse_conll(read_text(path), n_predictions, source_name(path), columns)


def read_predictions(path: str | os.PathLike, columns: ColumnChoice = None) -> Corpus:
    """A prediction file: token ... gold prediction (the two last columns, unless ``columns``
    chooses them)."""
    return read_conll(path, n_predictions=1, columns=columns)


def conll_text(*columns: Sentences) -> str:
    """Sentences as CoNLL lines: one space-separated column per argument (token first), a
    blank line after each sentence.  A field that would not read back as itself (empty, or
    holding a space, tab or line end) is a ``ValueError`` naming sentence and position."""
    for c, column in enumerate(columns):
        _check_fields(column, "token" if c == 0 else f"column {c + 1} value")
    return "".join("".join(" ".join(fields) + "\n" for fields in zip(*sentence)) + "\n" for sentence in zip(*columns))


_SEPARATORS = (" ", "\t", "\n", "\r")


def _check_fields(column: Sentences, what: str) -> None:
    joined = "\x00".join(chain.from_iterable(column))
    if not any(c in joined for c in _SEPARATORS) and "\x00\x00" not in joined \
            and not joined.startswith("\x00") and not joined.endswith("\x00"):
        if joined or not any(column):
            return
    for s, sentence in enumerate(column):
        for i, value in enumerate(sentence):
            if not value or any(c in value for c in _SEPARATORS):
                problem = "is empty" if not value else "contains a space, tab or line end"
                raise ValueError(f"sentence {s}, position {i}: {what} {quote(value)} {problem}, which a CoNLL "
                                 f"file cannot hold (columns are separated by spaces); replace it, e.g. by '_'")


def write_conll(path: str | os.PathLike, *columns: Sentences) -> None:
    """Write ``conll_text(*columns)`` to a file (atomically)."""
    write_atomic(path, conll_text(*columns))


def tag_names(dataset, column: str) -> Optional[List[str]]:
    """The label names of a ``ClassLabel`` tag column, or None for string tags."""
    feature = dataset.features[column]
    inner = getattr(feature, "feature", feature)
    names = getattr(inner, "names", None)
    return list(names) if names is not None else None


def from_dataset(dataset, tokens_column: str = "tokens", tags_column: str = "ner_tags") -> Corpus:
    """Tokens and string tags from a ``datasets.Dataset`` (string or ``ClassLabel`` tags)."""
    for column in (tokens_column, tags_column):
        if column not in dataset.column_names:
            raise ValueError(f"the dataset has no column {column!r} (columns: {dataset.column_names})")
    return Corpus(dataset[tokens_column], decode_tag_ids(dataset[tags_column], tag_names(dataset, tags_column)))


def decode_tag_ids(tags: Sequence[Sequence], names: Optional[Sequence[str]], first: int = 0) -> Sentences:
    """Map integer tag ids to names; string tags pass through (sentences numbered from ``first``)."""
    if names is None:
        return [list(sentence) for sentence in tags]
    result = []
    for s, sentence in enumerate(tags, first):
        try:  # ClassLabel's -1 (no label) must not wrap around to the last name
            result.append([names[i] if i >= 0 else names[len(names)] for i in sentence])
        except (IndexError, TypeError):
            bad = next(i for i in sentence if not isinstance(i, int) or not 0 <= i < len(names))
            raise ValueError(f"sentence {s}: tag id {bad!r} is not one of the {len(names)} class labels") from None
    return result
