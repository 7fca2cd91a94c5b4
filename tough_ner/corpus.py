"""Reading tagged text: CoNLL column files, ``datasets.Dataset`` and plain lists."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

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
    from the end), each as a list of sentences.

    Whitespace or tab separated; a blank line ends a sentence; ``-DOCSTART-`` lines are
    document boundaries, never tokens.  Every token line must have the same number of
    columns (the error names the line).
    """
    text = _read_text(path)
    with no_gc():  # the temporaries die inside _split_columns, before collection resumes
        return _split_columns(os.fspath(path), text, columns)[0]


def _read_text(path: str | os.PathLike) -> str:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such CoNLL file: {path}")
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _split_columns(path: str, text: str, columns: Optional[Sequence[int]]) -> Tuple[List[Sentences], List[int]]:
    """(the columns, the document index of each sentence)."""
    rows = [line.split() for line in text.splitlines()]
    kept = []
    ends = []  # sentence ends, as counts of kept rows
    documents = []  # per sentence
    document = 0
    for fields in rows:
        if fields and fields[0] != "-DOCSTART-":
            kept.append(fields)
            continue
        if kept and (not ends or ends[-1] != len(kept)):
            ends.append(len(kept))
            documents.append(document)
        if fields and documents and documents[-1] == document:  # a new document after some sentences
            document += 1
    if kept and (not ends or ends[-1] != len(kept)):
        ends.append(len(kept))
        documents.append(document)
    widths = set(map(len, kept))
    if len(widths) > 1 or widths == {1}:
        _raise_ragged(path, rows)
    width = widths.pop() if widths else 0
    if columns is None:
        columns = range(width)
    elif kept and (not all(-width <= c < width for c in columns)
                   or len({c % width for c in columns}) < len(columns)):
        raise ValueError(f"{path}: {width} columns cannot provide columns {list(columns)}")
    starts = [0] + ends[:-1]
    result = []
    for c in columns:
        column = [fields[c] for fields in kept]
        result.append([column[a:b] for a, b in zip(starts, ends)])
    return result, documents


def _raise_ragged(path: str, rows: List[List[str]]) -> None:
    width = None
    for number, fields in enumerate(rows, 1):
        if not fields or fields[0] == "-DOCSTART-":
            continue
        if width is None:
            width = len(fields)
            if width < 2:
                raise ValueError(f"{path}, line {number}: a CoNLL line needs a token and a tag, got {' '.join(fields)!r}")
        elif len(fields) != width:
            raise ValueError(f"{path}, line {number}: {len(fields)} columns where earlier lines have {width}: "
                             f"{' '.join(fields)!r}")


def parse_conll(text: str, n_predictions: int = 0, name: str = "<text>") -> Corpus:
    """``read_conll`` of CoNLL text already in memory (errors name ``name`` and the line)."""
    try:
        with no_gc():
            (tokens, gold, *predictions), documents = _split_columns(
                name, text, [0] + list(range(-1 - n_predictions, 0)))
    except ValueError as error:
        if "cannot provide" not in str(error):
            raise
        raise ValueError(f"{name}: too few columns for a token, a gold tag and {n_predictions} prediction "
                         f"column(s)") from None
    return Corpus(tokens, gold, predictions, name, documents)


def read_conll(path: str | os.PathLike, n_predictions: int = 0) -> Corpus:
    """Read a CoNLL file: token first; the gold tag is the last column, or, with
    ``n_predictions`` systems, the column before their ``n_predictions`` last ones."""
    return parse_conll(_read_text(path), n_predictions, os.fspath(path))


def read_predictions(path: str | os.PathLike) -> Corpus:
    """A prediction file: token ... gold prediction (the two last columns)."""
    return read_conll(path, n_predictions=1)


def conll_text(*columns: Sentences) -> str:
    """Sentences as CoNLL lines: one space-separated column per argument (token first), a
    blank line after each sentence."""
    return "".join("".join(" ".join(fields) + "\n" for fields in zip(*sentence)) + "\n" for sentence in zip(*columns))


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


def decode_tag_ids(tags: Sequence[Sequence], names: Optional[Sequence[str]]) -> Sentences:
    """Map integer tag ids to names; string tags pass through."""
    if names is None:
        return [list(sentence) for sentence in tags]
    result = []
    for s, sentence in enumerate(tags):
        try:
            result.append([names[i] for i in sentence])
        except (IndexError, TypeError):
            bad = next(i for i in sentence if not isinstance(i, int) or not 0 <= i < len(names))
            raise ValueError(f"sentence {s}: tag id {bad!r} is not one of the {len(names)} class labels") from None
    return result
