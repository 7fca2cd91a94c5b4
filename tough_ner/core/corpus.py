"""Reading tagged text: CoNLL column files, ``datasets.Dataset`` and plain lists."""
from __future__ import annotations

import contextvars
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from itertools import chain, count, repeat
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from .._util import no_gc, quote, write_atomic
from .batch import Batch, span_positions

Sentences = List[List[str]]
# Files read in pieces (training statistics, test files) are read this many bytes at a time:
# the reader's arrays (about 16 bytes per byte of text) stay near 8 MB, so each piece reuses
# the memory the one before freed; with 4 MB pieces a fresh process faulted in ~9k more pages
# for CoNLL-2003 train (~20 ms of system time).  Smaller pieces make more strings: a token's
# string is made once per piece.
PIECE_BYTES = 2 ** 19


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
    from the end), each as a list of sentences, following the file rules below."""
    name = source_name(path)
    with no_gc():  # many small acyclic lists: the collector's scans would triple the time
        table = scan(read_text(path), name)
        width = table.width
        if columns is None:
            columns = range(width)
        elif len(table) and (not all(-width <= c < width for c in columns)
                             or len({c % width for c in columns}) < len(columns)):
            raise ValueError(f"{name}: {width} columns cannot provide columns {list(columns)}")
        indices = [c % width for c in columns] if width else list(columns)
        return [table.sentences(column) for column in table.columns(indices, len(indices))]


# ---- file rules (one reader, ``scan``, applies them all; tests/test_reader.py checks it
# against a line-by-line reference parser) -------------------------------------------------
# 1. Bytes are UTF-8; one leading byte-order mark is dropped; undecodable bytes name the line
#    (read_conll decodes the whole file before anything else; from_conll and read_batch piece
#    by piece).
# 2. Only "\n" and "\r\n" end a line (str.splitlines() would also break at U+2028, U+0085 ...).
# 3. Only ASCII space and tab separate columns: every other character, even one Python calls
#    whitespace (NBSP, U+2028, U+0085, a lone "\r"), belongs to a token.
# 4. A blank line ends a sentence; a line whose first field is "-DOCSTART-" is a document
#    boundary (it ends a sentence too), never a token.
# 5. Every other line is a token line; all token lines have the same number of fields, at least
#    two, and the tag columns read hold tags.  The first line breaking this, in file order, is
#    the error (naming file and line; a bad tag also its column).
# 6. "-" and "/dev/stdin" are the standard input.
STDIN = ("-", "/dev/stdin")
# What str.split() takes as whitespace beyond space, tab and newline: token characters here.
OTHER_SPACE = ("\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
               "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_FIELD = re.compile("[^ \t\n]+")
BOM = "\ufeff"


def source_name(path) -> str:
    path = os.fspath(path)
    return "<stdin>" if path in STDIN else path


def _check_path(path: str) -> None:
    if path in STDIN:
        return
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory, not a CoNLL file")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such CoNLL file: {path}")


@dataclass(frozen=True)
class ReadLimits:
    """The most bytes a reader takes in one line, one sentence (a piece of a file read in
    pieces holds whole sentences) and one file read whole (test and prediction files), checked
    as the bytes arrive, so a hostile file is refused before it fills the memory.  A CoNLL line
    is a token and its tags: real ones are under 1 KB."""

    line: int = 1 << 20  # 1 MiB
    sentence: int = 64 << 20  # 64 MiB
    file: int = 4 << 30  # 4 GiB

    def __post_init__(self):
        for name in ("line", "sentence", "file"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"read limit {name} must be a whole number of bytes >= 1, not "
                                 f"{getattr(self, name)!r}")


_LIMITS = contextvars.ContextVar("read_limits", default=ReadLimits())


def read_limits() -> ReadLimits:
    """The limits in force (``ReadLimits()`` unless changed by ``limits``)."""
    return _LIMITS.get()


@contextmanager
def limits(**changes: int):
    """Readers inside the block use these limits: ``with limits(line=4 << 20): ...``."""
    token = _LIMITS.set(replace(_LIMITS.get(), **changes))
    try:
        yield _LIMITS.get()
    finally:
        _LIMITS.reset(token)


def under_limits(in_force: ReadLimits, function, *args):
    """``function(*args)`` read under ``in_force``: how a task run elsewhere (in a pool's
    process, on a Dask worker) keeps the limits of the call that made it, which the context
    variable does not carry there."""
    with limits(**asdict(in_force)):
        return function(*args)


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


class _Guard:
    """Checks the bytes of a file as they are read, block after block: no line longer than the
    line limit, no sentence (its lines and the blank line ending it) longer than the sentence
    limit (a binary file, such as a gigabyte of NUL bytes, is one long line).  The first fault
    in the file is named, wherever the blocks are cut: the one whose offending byte comes first."""

    def __init__(self, name: str, limit: ReadLimits):
        self.name, self.limit = name, limit
        self.lines = 0  # newlines before this block
        self.line_start = self.sentence_start = 0  # where the line and the sentence being read start (offsets)
        self.sentence_line = 1  # the line the sentence being read starts at
        self.offset = self.last_byte = 0

    def feed(self, block: bytes) -> None:
        data = np.frombuffer(block, dtype=np.uint8)
        newlines = np.flatnonzero(data == 10)
        at = self.offset + newlines  # file offsets of the newlines
        line_starts = np.concatenate([[self.line_start], at + 1])  # each line of the block, and the next
        faults = []  # (offset of the offending byte, line, message)
        lengths = np.append(at, self.offset + len(block)) - line_starts  # the last: so far, no newline yet
        long = np.flatnonzero(lengths > self.limit.line)
        if len(long):
            k = int(long[0])
            faults.append((int(line_starts[k]) + self.limit.line, self.lines + k + 1,
                           f"longer than the line limit of {_size_text(self.limit.line)} (ReadLimits.line; "
                           f"--max-line-bytes)"))
        # blank lines: "\n" or "\r\n" alone; each ends a sentence
        carriage = np.zeros(len(newlines), dtype=bool)
        inside = newlines > 0
        carriage[inside] = data[newlines[inside] - 1] == 13
        if len(newlines) and not inside[0]:  # "\r" the last byte of the block before
            carriage[0] = self.last_byte == 13
        line_lengths = lengths[:-1]
        blank = np.flatnonzero((line_lengths == 0) | ((line_lengths == 1) & carriage))
        sentence_starts = np.concatenate([[self.sentence_start], at[blank] + 1])
        sentence_lines = np.concatenate([[self.sentence_line], self.lines + blank + 2])
        spans = np.append(at[blank] + 1, self.offset + len(block)) - sentence_starts
        over = np.flatnonzero(spans > self.limit.sentence)
        if len(over):
            k = int(over[0])
            faults.append((int(sentence_starts[k]) + self.limit.sentence, int(sentence_lines[k]),
                           f"a sentence longer than the sentence limit of {_size_text(self.limit.sentence)} "
                           f"(ReadLimits.sentence; --max-sentence-bytes)"))
        if faults:
            _, line, message = min(faults)
            raise ValueError(f"{self.name}, line {line}: {message}")
        self.line_start, self.sentence_start = int(line_starts[-1]), int(sentence_starts[-1])
        self.sentence_line = int(sentence_lines[-1])
        self.lines += len(newlines)
        self.offset += len(block)
        self.last_byte = block[-1] if block else self.last_byte


BLOCK = 8 << 20  # bytes read at a time by read_text


class _StandardInput:
    """Standard input's bytes (rule 6), with those a caller looked at first (``peek_stdin``)
    put back in front: a pipe cannot seek back."""

    def __init__(self):
        self.stream, self.head = None, b""  # head: read from the stream by peek, not yet by read

    def _current(self):
        stream = sys.stdin.buffer
        if stream is not self.stream:  # another standard input (a test swaps it): nothing put back
            self.stream, self.head = stream, b""
        return stream

    def peek(self, size: int) -> bytes:
        stream = self._current()
        if len(self.head) < size:
            self.head += stream.read(size - len(self.head))
        return self.head[:size]

    def read(self, size: int) -> bytes:
        stream = self._current()
        if not self.head:
            return stream.read(size)
        block, self.head = self.head[:size], self.head[size:]
        return block + stream.read(size - len(block)) if len(block) < size else block


_STDIN = _StandardInput()


def peek_stdin(size: int) -> bytes:
    """The first ``size`` bytes of standard input (fewer at its end), left to be read again by
    the readers (``read_text``, ``read_pieces``, ``read_bytes``)."""
    return _STDIN.peek(size)


def _open(path: str):
    return _STDIN if path in STDIN else open(path, "rb")


def _read_whole(path: str, name: str, limit: ReadLimits, check=None) -> bytes:
    """A file's bytes, refused past the file limit as they arrive; ``check`` sees each block."""
    handle = _open(path)
    try:
        size = os.fstat(handle.fileno()).st_size if path not in STDIN else 0
        if size > limit.file:
            _too_big(name, limit)
        blocks, total = [], 0
        while True:
            block = handle.read(BLOCK)
            if not block:
                break
            total += len(block)
            if total > limit.file:  # a pipe, or a file that grows
                _too_big(name, limit)
            if check is not None:
                check(block)
            blocks.append(block)
    finally:
        if handle is not _STDIN:
            handle.close()
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


def read_text(path: str | os.PathLike) -> str:
    """A text file's content under rules 1 and 6 (a directory or a missing file is a clear error),
    within the read limits (``ReadLimits``)."""
    path = os.fspath(path)
    _check_path(path)
    name, limit = source_name(path), read_limits()
    return decode_text(_read_whole(path, name, limit, _Guard(name, limit).feed), name)


def read_bytes(path: str | os.PathLike) -> bytes:
    """A binary file's bytes (a saved statistics file; rule 6: standard input for ``-``),
    within the file limit (``ReadLimits.file``)."""
    path = os.fspath(path)
    _check_path(path)
    return _read_whole(path, source_name(path), read_limits())


def _too_big(name: str, limit: ReadLimits):
    raise ValueError(f"{name}: larger than the file limit of {_size_text(limit.file)} for a file read whole "
                     f"(ReadLimits.file; --max-file-bytes)")


def read_pieces(path: str | os.PathLike, size: int, whole: bool = False) -> Iterator[Tuple[str, int]]:
    """``(text, lines before it)`` pieces of a file of about ``size`` bytes each (more when a
    sentence is longer), each cut after a blank line so that no sentence spans two pieces;
    rules 1 and 6 as ``read_text``, errors numbering the lines of the whole file.  ``whole``:
    the file limit of a file read whole too (its every token is kept: ``read_batch``)."""
    path = os.fspath(path)
    _check_path(path)
    name, limit = source_name(path), read_limits()
    guard = _Guard(name, limit)
    handle = _open(path)
    try:
        if whole and path not in STDIN and os.fstat(handle.fileno()).st_size > limit.file:
            _too_big(name, limit)
        rest, lines, offset = bytearray(), 0, 0  # rest: read, not yet in a piece, holding no blank line
        while True:
            block = handle.read(size)
            last = len(block) < size  # read() returns less only at the end
            if whole and offset + len(rest) + len(block) > limit.file:  # a pipe, or a file that grows
                _too_big(name, limit)
            guard.feed(block)
            searched = max(len(rest) - 2, 0)  # a blank line can only end in the new block: time linear in the file
            rest += block
            cut = len(rest)
            if not last:  # after the last blank line ("\n\n" or "\n\r\n"); none yet: read on
                lf = rest.rfind(b"\n\n", searched)
                crlf = rest.rfind(b"\n\r\n", max(lf, searched))  # one before the last "\n\n" cuts earlier
                cut = max(lf + 2 if lf >= 0 else 0, crlf + 3 if crlf >= 0 else 0)
                if not cut:
                    continue
            with memoryview(rest) as view:
                piece = bytes(view[:cut])
            del rest[:cut]
            if piece:
                yield decode_text(piece, name, lines, offset), lines
                lines += int(np.count_nonzero(np.frombuffer(piece, dtype=np.uint8) == 10))  # bytes.count: ~7x the time
                offset += len(piece)
            if last:
                if rest:  # cannot happen: the last piece takes all
                    raise AssertionError("bytes left after the last piece")
                return
    finally:
        if handle is not _STDIN:
            handle.close()


def decode_text(raw: bytes, name: str, lines: int = 0, offset: int = 0) -> str:
    """UTF-8 bytes as text, one leading byte-order mark dropped (rule 1); ``lines`` and ``offset``
    (lines and bytes before ``raw`` in its file, for a piece read after others: its BOM is kept)
    make error positions those of the whole file."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = lines + raw.count(b"\n", 0, error.start) + 1
        raise ValueError(f"{name}, line {line}: bytes that are not UTF-8 ({error.reason} at byte "
                         f"{offset + error.start}); save the file as UTF-8") from None
    return text[1:] if text.startswith(BOM) and not offset else text


# JSON, TOML and YAML parsers recurse once per level: "[" x 100000 would exceed Python's limit.
TOO_DEEP = "nested too deeply (lists or tables inside each other beyond Python's recursion limit)"


@contextmanager
def refuse_deep_nesting(where: str):
    """Parse a JSON, TOML or YAML value inside this block: one nested deeper than the parser
    can go is a one-line ``ValueError`` naming ``where`` (a file, a file and line), not a
    ``RecursionError``."""
    try:
        yield
    except RecursionError:
        raise ValueError(f"{where}: {TOO_DEEP}") from None


def split_rows(text: str) -> List[List[str]]:
    """Each line's fields under rules 2 and 3; ``rows[i]`` is line ``i + 1`` (a helper for
    callers that want lines, e.g. to count columns; the reader itself is ``scan``)."""
    if text.startswith(BOM):
        text = text[1:]
    return [_split(line) for line in text.replace("\r\n", "\n").split("\n")]


class Table:
    """Where the token lines of a CoNLL text lie (built by ``scan``); ``columns`` reads them.

    ``lines[k]`` is the line number (1-based) of the k-th token line; ``ends`` the sentence
    ends as counts of token lines; ``documents`` the document index of each sentence (None for
    a text without ``-DOCSTART-``); ``width`` the fields per token line.  A ragged line ends
    the table there, its error kept for ``columns`` (which reports the first bad line).
    """

    # -DOCSTART- lines before each sentence (None without any) and in all: pieces join by them
    docstarts_before: Optional[np.ndarray] = None
    n_docstarts: int = 0

    def __init__(self, name, text, raw, field_starts, field_ends, first, lines, ends, documents, width, ragged):
        self.name, self.lines, self.ends, self.documents, self.width = name, lines, ends, documents, width
        self.ragged = ragged  # (line, error) of a ragged line after the token lines kept, or None
        self._text, self._raw, self._first = text, raw, first  # first: each token line's first field
        self._field_starts, self._field_ends = field_starts, field_ends  # every field's bytes [start, end)

    def __len__(self) -> int:
        return len(self._first)

    def columns(self, indices: Sequence[int], tags_from: int = 1, codes: bool = False) -> list:
        """Columns ``indices`` (0 <= c < width) of every token line, those from the
        ``tags_from``-th on checked to hold tags; with ``codes`` every column comes as
        ``(distinct values, ids)`` (``Table.codes``) instead of a string per line.  The error is
        that of the first bad line in file order: a value that is not a tag (the first such
        column on a tie) or a ragged line."""
        flat = [] if codes else self._strings(list(indices))
        problems, coded = [], []
        for k, c in enumerate(indices):
            if k >= tags_from or codes:
                distinct, ids, first = self.codes(c, None if codes else flat[k], few=k >= tags_from)
                coded.append((distinct, ids))
                if k >= tags_from:
                    problems.append(self._first_bad_tag(distinct, first, c))
        problems = [problem for problem in problems if problem]
        if self.ragged is not None:
            problems.append(self.ragged)
        if problems:
            raise min(problems, key=lambda problem: problem[0])[1]
        return coded if codes else flat

    def _strings(self, indices: List[int]) -> List[List[str]]:
        """Columns ``indices`` as lists of strings (unchecked)."""
        if len(set(indices)) * len(self) == len(self._field_starts):  # every field is wanted: split the text
            fields = _split(self._text)
            if len(fields) != len(self._field_starts):
                raise AssertionError(f"{self.name}: {len(fields)} fields where the bytes hold "
                                     f"{len(self._field_starts)}")
            wanted = sorted(set(indices))
            return [fields[wanted.index(c)::len(wanted)] for c in indices]
        return [self._decoded(self._field_starts[self._first + c], self._field_ends[self._first + c])
                for c in indices]

    def codes(self, c: int, strings: Optional[List[str]] = None, few: bool = False) -> Tuple[list, np.ndarray,
                                                                                             np.ndarray]:
        """Column ``c`` as ``factorize`` gives it (distinct values in first-occurrence order,
        each line's index among them, where each first occurs), found on the bytes: a string is
        made per distinct value, not per line.  Values of at most 16 bytes (most tokens, every
        usual tag) are keyed by their bytes, longer ones by their string's hash; every line is
        then checked against its key's first line, so a collision falls back to strings, as does
        a column where over one value in eight is long.  The key is 32 bits (16 with ``few``:
        few distinct values expected, as of tags), 48 after a collision.  ``strings``: the
        column's strings when the caller has them."""
        def from_strings():
            return factorize(self._strings([c])[0] if strings is None else strings)

        if not len(self):
            return [], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        begin, length = self._field(c)
        long = np.flatnonzero(length > 16)
        if 8 * len(long) > len(length):  # over one value in eight is long: a string per line costs less
            return from_strings()
        low, high, over = self._byte_words(begin, length)
        key = _byte_key(low, high, length)
        if len(long):
            long_values = ([strings[i] for i in long.tolist()] if strings is not None
                           else self._decoded(begin[long], begin[long] + length[long]))
            key[long] = np.fromiter(map(hash, long_values), dtype=np.int64, count=len(long)).view(np.uint64)
            value_at = dict(zip(long.tolist(), long_values))
        for digits in (1, 3) if few else (2, 3):  # a short key first; on a collision, a longer one
            first, inverse = _groups(key, digits)
            same = ((low[first][inverse] == low).all() and (length[first][inverse] == length).all()
                    and (not len(over) or (high[first][inverse] == high).all()))
            if same and len(long):  # a long value's words are its first 16 bytes only: compare the strings
                same = all(map(str.__eq__, map(value_at.__getitem__, first[inverse[long]].tolist()), long_values))
            if same:
                return self._decoded(begin[first], begin[first] + length[first]), inverse, first
        return from_strings()

    def numbered(self, c: int, numbering: "Numbering") -> np.ndarray:
        """Column ``c``'s values as their numbers in ``numbering`` (``int32``), values new to it
        numbered on in first-occurrence order.  A value it knows by its bytes (at most 15) is
        found by them, with no string made; the others (new, or longer) go through strings."""
        if not len(self):
            return np.zeros(0, dtype=np.int32)
        begin, length = self._field(c)
        low, high, _ = self._byte_words(begin, length)
        key = _byte_key(low, high, length)
        tagged = tagged_words(high, length)
        numbers = numbering.find(low, tagged, key)
        rest = np.flatnonzero(numbers < 0)
        if len(rest):  # new values recur in their piece: a string for the first line of each (by its words)
            _, first, group = np.unique(key[rest], return_index=True, return_inverse=True)
            lead = first[group.reshape(-1)]
            alone = np.flatnonzero((tagged[rest] == 0) | (tagged[rest[lead]] != tagged[rest])
                                   | (low[rest[lead]] != low[rest]))  # long, or another value of that hash
            lead[alone] = alone
            reads = rest[lead == np.arange(len(rest))]  # in text order
            read = np.zeros(len(self), dtype=np.int64)
            read[reads] = np.arange(len(reads))
            numbers[rest] = numbering.add(self._decoded(begin[reads], begin[reads] + length[reads]), low[reads],
                                          tagged[reads], key[reads])[read[rest[lead]]]
        return numbers

    def _field(self, c: int) -> Tuple[np.ndarray, np.ndarray]:
        """Where column ``c``'s value starts on each token line, and its length in bytes."""
        begin = self._field_starts[self._first + c]
        return begin, self._field_ends[self._first + c] - begin

    def _byte_words(self, begin: np.ndarray, length: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``byte_words`` of the values at ``begin`` of ``length`` bytes."""
        return byte_words(self._words, begin, length)

    def _decoded(self, starts: np.ndarray, ends: np.ndarray) -> List[str]:
        """The fields of bytes ``[starts[k], ends[k])`` as strings: their bytes joined by
        newlines (never inside a field) and decoded at once."""
        if not len(starts):
            return []
        joined = self._raw.take(span_positions(starts, ends + 1), mode="clip")  # each field and the byte after
        joined[np.cumsum(ends + 1 - starts) - 1] = 10  # that byte (past the text's end for the last) a newline
        return joined.tobytes().decode("utf-8", "surrogatepass").split("\n")[:-1]

    @cached_property
    def _words(self) -> np.ndarray:
        """The text's bytes as ``word_view`` gives them."""
        return word_view(self._raw)

    def _first_bad_tag(self, distinct: list, first: np.ndarray, c: int):
        """(line, error) of the first value of column ``c`` that is not a tag, or None
        (``distinct`` values in first-occurrence order, ``first`` where each occurs)."""
        from .schemes import parse_label

        for tag, where in zip(distinct, first.tolist()):
            try:
                parse_label(tag)
            except ValueError as error:
                number = int(self.lines[where])
                return number, ValueError(f"{self.name}, line {number}, column {c + 1}: {error}")
        return None

    @property
    def starts(self) -> np.ndarray:
        """``[0, *ends]``: sentence starts plus the total, as counts of token lines."""
        return np.concatenate(([0], self.ends)).astype(np.int64)

    def sentences(self, column: List[str]) -> Sentences:
        """A column cut into sentences."""
        bounds = self.starts.tolist()
        return [column[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def word_view(raw: np.ndarray) -> np.ndarray:
    """Bytes (``uint8``) as little-endian 8-byte words at every offset (zeros after the end)."""
    padded = np.concatenate((raw, np.zeros(16, dtype=np.uint8)))
    return np.ndarray((len(raw) + 8,), dtype="<u8", buffer=padded, strides=(1,))


def byte_words(words: np.ndarray, begin: np.ndarray, length: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first 8 bytes of each value (at ``begin`` in the bytes of ``words``, a
    ``word_view``) and the next 8 (zero bytes past its end: both words and the length are a
    value of at most 16 bytes exactly), and the values over 8 bytes."""
    low = words[begin] & _LOW_BYTES[np.minimum(length, 8)]
    high = np.zeros(len(begin), dtype=np.uint64)
    over = np.flatnonzero(length > 8)  # the second word only where there is one (few tags, some tokens)
    high[over] = words[begin[over] + 8] & _LOW_BYTES[np.minimum(length[over] - 8, 8)]
    return low, high, over


def tagged_words(high: np.ndarray, length: np.ndarray) -> np.ndarray:
    """A value's second word with its length in the top byte (zero there up to 15 bytes): with
    the first word, the value itself; 0 for a value of no byte or over ``Numbering.LONGEST``."""
    return np.where(length <= Numbering.LONGEST, high | length.astype(np.uint64) << np.uint64(56), np.uint64(0))


def newline_joined(values: Sequence[str]) -> Optional[bytes]:
    """Strings newline-joined in UTF-8 (lone surrogates kept, as read), or None when one of them
    holds a newline (the join could not be split again)."""
    text = "\n".join(values)
    return text.encode("utf-8", "surrogatepass") if text.count("\n") == max(len(values) - 1, 0) else None


def factorize(values: list, dtype=np.int64) -> Tuple[list, np.ndarray, np.ndarray]:
    """The distinct values in first-occurrence order, each value's index among them, and where
    each distinct value first occurs: one pass of C-level dict calls (each value is mapped to
    the place it first occurs at, then places are ranked)."""
    index: dict = {}
    place = np.fromiter(map(index.setdefault, values, count()), dtype=np.int64, count=len(values))
    first = np.fromiter(index.values(), dtype=np.int64, count=len(index))
    rank = np.zeros(len(values), dtype=dtype)
    rank[first] = np.arange(len(index), dtype=dtype)
    return list(index), rank[place], first


_DOCSTART = np.frombuffer(b"-DOCSTART-", dtype=np.uint8)
_LOW_BYTES = np.array([(1 << 8 * n) - 1 for n in range(9)], dtype=np.uint64)  # the n low bytes of a word
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)  # odd multipliers


def _byte_key(low: np.ndarray, high: np.ndarray, length: np.ndarray) -> np.ndarray:
    """A value's two words and length (``byte_words``) mixed into one 64-bit hash."""
    return low * _MIX[0] ^ high * _MIX[1] ^ length.astype(np.uint64) * _MIX[2]


class Slots:
    """Numbers found by 64-bit hashes: an open-addressing table (linear probing, at most
    1/``spread`` full) holding each number at the slot its hash's top bits name, or the next
    free one.  It only narrows: the caller confirms a number found (``find``'s ``same``), so a
    hash shared by two entries never mistakes one for the other.  Each probe is a numpy round
    over the hashes still probing: a call takes as many rounds as the longest run of taken
    slots it crosses, and a sparser table has shorter runs."""

    def __init__(self, spread: int = 2):
        self.bits, self.n, self.spread = 10, 0, spread
        self.table = np.full(1 << self.bits, -1, dtype=np.int32)

    def find(self, hashes: np.ndarray, same) -> np.ndarray:
        """The number of each hash's entry, -1 where none: ``same(positions, numbers)`` tells
        which of the numbers met at ``hashes[positions]`` are the entries sought."""
        found = np.full(len(hashes), -1, dtype=np.int32)
        todo = np.arange(len(hashes)) if self.n else np.zeros(0, dtype=np.int64)
        slot = hashes >> np.uint64(64 - self.bits)
        mask = np.uint64(len(self.table) - 1)
        while len(todo):  # each round: the entries met at the slots still probed
            met = self.table[slot]
            taken = np.flatnonzero(met >= 0)
            todo, slot, met = todo[taken], slot[taken], met[taken]  # an empty slot ends the search
            hit = same(todo, met)
            found[todo[hit]] = met[hit]
            todo, slot = todo[~hit], (slot[~hit] + np.uint64(1)) & mask
        return found

    def add(self, hashes: np.ndarray, numbers: np.ndarray, every) -> None:
        """Enter new entries (distinct, none entered before); ``every()``: the hashes and numbers
        of all entries, new ones included, for a table grown (past 1/``spread`` full)."""
        self.n += len(numbers)
        if self.spread * self.n > len(self.table):
            while self.spread * self.n > 1 << self.bits:
                self.bits += 1
            self.table = np.full(1 << self.bits, -1, dtype=np.int32)
            hashes, numbers = every()
        slot = hashes >> np.uint64(64 - self.bits)
        mask = np.uint64(len(self.table) - 1)
        numbers = numbers.astype(np.int32)
        while len(numbers):  # each round: each free slot taken by one of the entries probing it
            free = np.flatnonzero(self.table[slot] < 0)
            self.table[slot[free]] = numbers[free]  # of entries probing one slot, one is written last
            left = np.ones(len(numbers), dtype=bool)
            left[free[self.table[slot[free]] == numbers[free]]] = False
            numbers, slot = numbers[left], (slot[left] + np.uint64(1)) & mask


class _KeptValues:
    """Values numbered in first-occurrence order, each kept by its bytes (``ByteIndex``) where it
    has words (up to ``Numbering.LONGEST`` bytes), else by a dict of strings: what ``Numbering``
    and ``Renumbering`` share."""

    def __init__(self):
        self.values: List[str] = []
        self.by_string: dict = {}  # the values not kept by their bytes -> number
        self.bytes: Optional[ByteIndex] = ByteIndex()

    def __len__(self) -> int:
        return len(self.values)

    def _keep(self, values: Sequence[str], new: np.ndarray, low: np.ndarray, tagged: np.ndarray,
              key: np.ndarray) -> np.ndarray:
        """Number ``values[new]`` on (distinct, none numbered yet, in order), each kept by its
        words (``tagged`` not 0) or its string; their numbers."""
        before = len(self.values)
        numbers = before + np.arange(len(new))
        self.values.extend(values if len(new) == len(values) else map(values.__getitem__, new.tolist()))
        self.bytes.add(before, low[new], tagged[new], key[new])
        by_string = np.flatnonzero(tagged[new] == 0)
        self.by_string.update(zip(map(values.__getitem__, new[by_string].tolist()), numbers[by_string].tolist()))
        return numbers


class Numbering(_KeptValues):
    """Values (strings) numbered in first-occurrence order across the pieces of one text, as a
    build's vocabulary is: ``values`` lists them, ``index`` maps each to its number.  A value of
    at most ``LONGEST`` UTF-8 bytes read by ``Table.numbered`` is kept by its bytes
    (``ByteIndex``), so a piece's known values need no string, no dict lookup and no grouping;
    a longer one by a dict of those alone.  ``index`` is made when first asked for (0.25 s for
    614k types, where meeting each type through it took 0.3 s more): a build never asks for it
    but from token lists (``number``)."""

    LONGEST = 15
    # A third full, not half: while the vocabulary grows, each piece's new values probe on to a
    # free slot.  A first shard of 12.5M tokens meeting 614k types took 0.26 s less (4.26 s,
    # median of 9 pairs), a later shard 0.08 s (the table's last size there is the same)
    SPREAD = 3

    def __init__(self):
        super().__init__()  # bytes: None once released
        self._index: Optional[dict] = None  # every value -> number, once asked for (then kept up to date)

    @property
    def held_index(self) -> Optional[dict]:
        """``index`` where made already (values numbered by their strings), else None."""
        return self._index

    @property
    def index(self) -> dict:
        """Each value's number."""
        if self._index is None:
            self._index, self.by_string = dict(zip(self.values, range(len(self.values)))), {}  # add then uses it alone
        return self._index

    def number(self, values: list) -> np.ndarray:
        """The numbers of ``values`` (strings, in text order), new ones numbered on (kept by
        their strings alone).  Most values are known: a plain lookup, in C."""
        index, before = self.index, len(self.values)
        numbers = np.fromiter(map(index.get, values, repeat(-1)), dtype=np.int32, count=len(values))
        new = np.flatnonzero(numbers < 0).tolist()
        if new:  # in text order: a new value's number is the index's size when first met
            numbers[new] = list(map(index.setdefault, map(values.__getitem__, new), iter(index.__len__, -1)))
            self.values.extend(map(values.__getitem__, _first_of_new(numbers, before).tolist()))
        return numbers

    def find(self, low: np.ndarray, tagged: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The numbers of the values of these words (``Table.numbered``), -1 where not kept."""
        return self.bytes.find(low, tagged, key) if self.bytes is not None else np.full(len(key), -1, np.int32)

    def add(self, values: List[str], low: np.ndarray, tagged: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The numbers of ``values`` (in text order, with their words as ``find`` takes them: a
        value ``find`` missed), new ones numbered on; a new value with words (``tagged`` not 0)
        is kept by them."""
        if self._index is not None or self.bytes is None:  # a value may be known by its string alone
            index, before = self.index, len(self.values)
            numbers = np.fromiter(map(index.setdefault, values, iter(index.__len__, -1)), dtype=np.int32,
                                  count=len(values))
            first = _first_of_new(numbers, before)
            self.values.extend(map(values.__getitem__, first.tolist()))
            if self.bytes is not None:
                self.bytes.add(before, low[first], tagged[first], key[first])
            return numbers
        n = len(values)
        first = np.arange(n)  # where each value first occurs among values
        numbers = np.full(n, -1, dtype=np.int64)
        short = np.flatnonzero(tagged)  # each new: every short value numbered here is kept by its bytes
        hashes = np.sort(key[short])
        if (hashes[1:] == hashes[:-1]).any():  # numbered repeats a value only beside another of its hash
            lead, group = np.unique(np.stack((low[short], tagged[short]), axis=1), axis=0, return_index=True,
                                    return_inverse=True)[1:]
            first[short] = short[lead[group.reshape(-1)]]
        long = np.flatnonzero(tagged == 0).tolist()
        if long:  # known, or new, by their strings
            strings, seen = list(map(values.__getitem__, long)), {}
            first[long] = list(map(seen.setdefault, strings, long))
            numbers[long] = list(map(self.by_string.get, strings, repeat(-1)))
        new = np.flatnonzero((first == np.arange(n)) & (numbers < 0))  # each new value where first met
        numbers[new] = self._keep(values, new, low, tagged, key)
        return numbers[first].astype(np.int32)

    def release_bytes(self) -> None:
        """Forget the values' bytes (the text is read): later values are found by ``index``."""
        self.bytes = None


class ByteIndex:
    """Numbered values found by their bytes: each number's two words (``Table.numbered``'s
    ``low`` and ``tagged``: the value itself, up to ``Numbering.LONGEST`` bytes; ``tagged`` 0
    for a value not kept so) and ``Slots`` over their hashes, so no string is made or hashed
    to find one."""

    def __init__(self):
        self.slots = Slots(Numbering.SPREAD)
        self.low, self.tagged = _Growing(np.uint64, 1.25), _Growing(np.uint64, 1.25)  # by number

    def find(self, low: np.ndarray, tagged: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The numbers of the values of these words and hashes (``_byte_key``), -1 where none."""
        kept_low, kept_tagged = self.low.data, self.tagged.data
        return self.slots.find(key, lambda at, numbers: (kept_tagged[numbers] == tagged[at])
                               & (kept_low[numbers] == low[at]))

    def add(self, first: int, low: np.ndarray, tagged: np.ndarray, key: np.ndarray) -> None:
        """Keep new values numbered from ``first`` on, in order, by their words where they
        have them (numbers below ``first`` not kept yet are kept as values without)."""
        for kept, words in ((self.low, low), (self.tagged, tagged)):
            kept.add(np.zeros(first - len(kept), dtype=np.uint64))
            kept.add(words)
        by_bytes = np.flatnonzero(tagged > 0)
        self.slots.add(key[by_bytes], first + by_bytes, self._every)

    def _every(self) -> Tuple[np.ndarray, np.ndarray]:
        numbers = np.flatnonzero(self.tagged.data[:len(self.tagged)])
        tagged = self.tagged.data[numbers]
        length = tagged >> np.uint64(56)
        return _byte_key(self.low.data[numbers], tagged ^ length << np.uint64(56), length), numbers


class Renumbering(_KeptValues):
    """Lists of distinct values (the vocabularies of a corpus' parts, in order) numbered as
    one: each value by its first occurrence across them.  A value is found by its bytes
    (``ByteIndex``), one over ``Numbering.LONGEST`` bytes (or of none) by a dict of strings:
    a merge of statistics needs no dict of its whole vocabulary.  Three parts of 500k tokens
    out of 600k types: 0.35 s for tokens of at most 8 bytes, against 0.9 s through one dict;
    but 1.2-1.4 s when every token is longer (0.5% of CoNLL-2003's are)."""

    def number(self, values: Sequence[str], joined: Optional[bytes] = None) -> np.ndarray:
        """Each of ``values``' number (``int64``), new ones numbered on in their order;
        ``joined``: the values newline-joined in UTF-8 (surrogates passed), where the caller
        holds them (else made here)."""
        joined = newline_joined(values) if joined is None else joined
        if joined is not None:
            raw = np.frombuffer(joined, dtype=np.uint8)
            ends = np.append(np.flatnonzero(raw == 10), len(raw)) if len(values) else np.zeros(0, dtype=np.int64)
            begin = np.append(0, ends[:-1] + 1)[:len(ends)]
        else:  # a value holds a newline: each one's bytes found by its length
            encoded = [value.encode("utf-8", "surrogatepass") for value in values]
            raw = np.frombuffer(b"".join(encoded), dtype=np.uint8)
            lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
            ends = np.cumsum(lengths)
            begin = ends - lengths
        if len(ends) != len(values):
            raise ValueError(f"{len(values)} values, but {len(ends)} in their joined bytes")
        length = ends - begin
        low, high, _ = byte_words(word_view(raw), begin, length)
        tagged, key = tagged_words(high, length), _byte_key(low, high, length)
        by_string = np.flatnonzero(tagged == 0)
        if len(by_string):  # only the others are looked for by their bytes
            numbers = np.full(len(values), -1, dtype=np.int64)
            by_bytes = np.flatnonzero(tagged)
            numbers[by_bytes] = self.bytes.find(low[by_bytes], tagged[by_bytes], key[by_bytes])
        else:
            numbers = self.bytes.find(low, tagged, key).astype(np.int64)
        strings = values if len(by_string) == len(values) else list(map(values.__getitem__, by_string.tolist()))
        if self.by_string:
            numbers[by_string] = np.fromiter(map(self.by_string.get, strings, repeat(-1)), dtype=np.int64,
                                             count=len(strings))
        new = np.flatnonzero(numbers < 0)
        if len(new):
            numbers[new] = self._keep(values, new, low, tagged, key)
        return numbers


def _first_of_new(numbers: np.ndarray, before: int) -> np.ndarray:
    """Where each number from ``before`` on first occurs: new numbers are given in increasing
    order, each where the running maximum first reaches it."""
    return np.flatnonzero(numbers > np.maximum.accumulate(np.concatenate(([before - 1], numbers[:-1]))))


def _groups(key: np.ndarray, digits: int) -> Tuple[np.ndarray, np.ndarray]:
    """Where each distinct value of ``key`` (uint64) first occurs, in that order, and each
    element's index among them; distinct by the top ``digits`` 16-bit digits only (callers
    check the values).  Sorted digit by digit by stable sorts, linear in time on 16 bits."""
    shift = np.uint64(64 - 16 * digits)
    order = None
    for k in range(digits):  # lowest digit first
        digit = (key >> np.uint64(shift + 16 * k)).astype(np.uint16)
        order = np.argsort(digit, kind="stable") if order is None else order[np.argsort(digit[order], kind="stable")]
    top = key[order] >> shift
    starts = np.ones(len(key), dtype=bool)  # a new value begins here in sorted order
    np.not_equal(top[1:], top[:-1], out=starts[1:])
    first = order[starts]  # a stable sort puts each value's first place first
    is_first = np.zeros(len(key), dtype=bool)
    is_first[first] = True
    rank = np.cumsum(is_first) - 1  # at a first place: its value's rank in first-occurrence order
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[order] = rank[first][np.cumsum(starts) - 1]
    return np.flatnonzero(is_first), inverse


def _split(text: str) -> List[str]:
    """Fields under rule 3: str.split() breaks at more than space, tab and newline, so it is
    used only when none of those other characters occurs (the regular expression is slower)."""
    if text.isascii() and not any(c in text for c in "\x0b\x0c\r\x1c\x1d\x1e\x1f"):
        return text.split()
    return _FIELD.findall(text) if any(c in text for c in OTHER_SPACE) else text.split()


def scan(text: str, name: str = "<text>", lines_before: int = 0, width: Optional[int] = None) -> Table:
    """The ``Table`` of CoNLL text under rules 2-5, found by numpy on its UTF-8 bytes (space,
    tab and newline are single bytes there, never part of another character).
    ``lines_before`` numbers lines after earlier pieces of a file; ``width`` is the number of
    fields of their token lines (a different width here is the ragged-line error)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    newline = raw == 10
    inside = np.zeros(len(raw) + 2, dtype=bool)  # inside[i + 1]: byte i belongs to a field
    np.logical_not(newline | (raw == 32) | (raw == 9), out=inside[1:-1])
    edges = np.flatnonzero(inside[1:] != inside[:-1])  # a field's first byte, then its end, field after field
    field_starts, field_ends = edges[0::2], edges[1::2]
    line_ends = np.flatnonzero(newline)
    # Fields before each line end: one cumulative sum over the bytes costs less than a binary
    # search of field_starts per line end (np.searchsorted), which gives the same numbers.
    begins = inside[1:-1] & ~inside[:-2]  # a field's first byte
    fields_upto = np.cumsum(begins, dtype=np.int32 if len(raw) < 2 ** 31 else np.int64)  # fields begun so far
    bounds = np.concatenate(([0], fields_upto[line_ends], [len(field_starts)])).astype(np.int64)
    first, counts = bounds[:-1], np.diff(bounds)  # per line: index of its first field, number of fields
    token = counts > 0
    docstart = _docstart_lines(raw, field_starts, field_ends, line_ends, first)
    token[docstart] = False
    token_lines = np.flatnonzero(token)
    table_width, ragged = _check_widths(name, text, line_ends, counts, token_lines, lines_before, width)
    if ragged is not None:  # keep the lines before it
        token[token_lines[ragged[0]]:] = False
        token_lines = token_lines[:ragged[0]]
        ragged = ragged[1:]
    seen = np.cumsum(token)  # token lines up to each line
    ends = np.concatenate((seen[~token], seen[-1:]))  # non-decreasing; keep each new value
    ends = ends[(ends > 0) & np.concatenate(([True], ends[1:] != ends[:-1]))]
    documents = before = None
    if len(docstart):
        marks = np.zeros(len(counts), dtype=np.int64)
        marks[docstart] = 1
        before = np.cumsum(marks)[token_lines[ends - 1]]  # -DOCSTART- lines before each sentence
        documents = document_index(before)
    table = Table(name, text, raw, field_starts, field_ends, first[token_lines], token_lines + 1 + lines_before,
                  ends, documents, table_width, ragged)
    table.docstarts_before, table.n_docstarts = before, len(docstart)
    return table


def document_index(docstarts_before: np.ndarray) -> List[int]:
    """Each sentence's document index from the ``-DOCSTART-`` lines before it: a document
    counts the groups that hold a sentence (sentences before the first mark are document 0)."""
    return np.concatenate(([0], np.cumsum(np.diff(docstarts_before) != 0)))[:len(docstarts_before)].tolist()


def _docstart_lines(raw, field_starts, field_ends, line_ends, first) -> np.ndarray:
    """Lines whose first field is ``-DOCSTART-``."""
    n = len(_DOCSTART)
    where = np.flatnonzero((field_ends - field_starts == n) & (raw[field_starts] == 45))  # "-" and 10 bytes (few)
    if len(where):
        where = where[(raw[field_starts[where, None] + np.arange(n)] == _DOCSTART).all(axis=1)]
    line = np.searchsorted(line_ends, field_starts[where])  # the line of each
    return line[first[line] == where]  # only a line's first field counts


def _line_text(text: str, line_ends: np.ndarray, line: int) -> str:
    start = int(line_ends[line - 1]) + 1 if line else 0
    end = int(line_ends[line]) if line < len(line_ends) else None
    raw = text.encode("utf-8", "surrogatepass")[start:end].decode("utf-8", "surrogatepass")
    return " ".join(_split(raw))


def _check_widths(name, text, line_ends, counts, token_lines, lines_before, width):
    """The common number of fields of the token lines (rule 5), and for a ragged line its
    place among the token lines, its line number and its error (or None)."""
    if not len(token_lines):
        return width or 0, None
    widths = counts[token_lines]
    expected = int(widths[0]) if width is None else width
    line = int(token_lines[0])
    if expected < 2:  # no tag column: nothing else can be checked
        raise ValueError(f"{name}, line {line + 1 + lines_before}: a CoNLL line needs a token and a tag, "
                         f"got {quote(_line_text(text, line_ends, line))}")
    bad = np.flatnonzero(widths != expected)
    if not len(bad):
        return expected, None
    line = int(token_lines[bad[0]])
    number = line + 1 + lines_before
    shown = quote(_line_text(text, line_ends, line))
    return expected, (int(bad[0]), number, ValueError(f"{name}, line {number}: {counts[line]} columns where earlier "
                                                      f"lines have {expected}: {shown}"))


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


def parse_conll(text: str, n_predictions: int = 0, name: str = "<text>", columns: ColumnChoice = None) -> Corpus:
    """``read_conll`` of CoNLL text already in memory (errors name ``name`` and the line; a
    leading byte-order mark is dropped, as from a file)."""
    return _parse(text[1:] if text.startswith(BOM) else text, n_predictions, name, columns)


def _parse(text: str, n_predictions: int, name: str, columns: ColumnChoice) -> Corpus:
    with no_gc():  # many small acyclic lists: the collector's scans would triple the time
        return _corpus(scan(text, name), n_predictions, name, columns)


def _corpus(table: Table, n_predictions: int, name: str, columns: ColumnChoice) -> Corpus:
    indices = column_indices(columns, table.width,
                             None if columns is not None and not n_predictions else n_predictions, name)
    if not len(table) and table.ragged is None:
        return Corpus([], [], [[] for _ in indices[2:]], name, [])
    tokens, gold, *predictions = map(table.sentences, table.columns(indices))
    return Corpus(tokens, gold, predictions, name, table.documents)


def read_conll(path: str | os.PathLike, n_predictions: int = 0, columns: ColumnChoice = None) -> Corpus:
    """Read a CoNLL file: token first; the gold tag is the last column, or, with
    ``n_predictions`` systems, the column before their ``n_predictions`` last ones.
    ``columns`` chooses the columns explicitly (see ``column_indices``): ``"0,3,4"`` or
    ``"token,pos,chunk,gold,pred"``.  Tag columns must hold tags (errors name file and line)."""
    return _parse(read_text(path), n_predictions, source_name(path), columns)


def read_predictions(path: str | os.PathLike, columns: ColumnChoice = None) -> Corpus:
    """A prediction file: token ... gold prediction (the two last columns, unless ``columns``
    chooses them)."""
    return read_conll(path, n_predictions=1, columns=columns)


def read_system(path: str | os.PathLike, columns: ColumnChoice = None) -> Corpus:
    """A system's CoNLL file with one prediction column: token ... gold prediction (or the
    columns chosen by ``columns``), or token prediction, which has no gold: ``tags`` is None."""
    name = source_name(path)
    with no_gc():
        table = scan(read_text(path), name)
        if columns is None and table.width == 2:
            corpus = _corpus(table, 0, name, None)
            return Corpus(corpus.tokens, None, [corpus.tags], name, corpus.documents)
        return _corpus(table, 1, name, columns)


def read_batch(path: str | os.PathLike, columns: ColumnChoice = None, piece_bytes: int = PIECE_BYTES,
               **decoding) -> Batch:
    """``read_predictions`` straight to a ``Batch`` (token, gold and the prediction column):
    the columns stay codes (``Batch.from_codes``), so no per-token or per-sentence list is made
    unless a method asks for one; the same file errors as ``read_predictions``.  The file is
    read in pieces of about ``piece_bytes`` (``read_pieces``), so memory holds the codes read so
    far and one piece's scan, never the whole text and its per-byte arrays (about 20 bytes a
    byte of the file).  ``decoding``: ``scheme``, ``mode``, ``repair`` (``Batch``)."""
    name = source_name(path)
    width, indices = None, None
    sides = [_Codes() for _ in range(3)]
    ends, before = _Growing(), _Growing()  # each sentence's end, and the -DOCSTART- lines before it
    docstarts = 0  # -DOCSTART- lines in the pieces before
    with no_gc():
        for text, lines_before in read_pieces(path, piece_bytes, whole=True):
            table = scan(text, name, lines_before, width)
            del text
            if len(table.ends):
                before.add(docstarts + (table.docstarts_before if table.docstarts_before is not None
                                        else np.zeros(len(table.ends), dtype=np.int64)))
            docstarts += table.n_docstarts
            if not len(table) and table.ragged is None:
                continue
            if indices is None:  # the first token line sets the width, as when the file is read whole
                indices = column_indices(columns, table.width, 1, name)
            width = table.width
            n_before = len(sides[0].ids)
            for side, codes in zip(sides, table.columns(indices, codes=True)):
                side.add(*codes)
            ends.add(table.ends + n_before)
        if indices is None:  # no token line
            column_indices(columns, 0, 1, name)
            documents = []
        else:
            documents = document_index(before.array()) if docstarts else None
        starts = np.concatenate(([0], ends.array()))
        return Batch.from_codes(starts, *(side.codes() for side in sides), documents, **decoding)


class _Growing:
    """An integer array added to piece after piece, grown in place (``ndarray.resize``: a large
    block is moved by the system, not copied), so no piece's copy is left behind in the heap."""

    def __init__(self, dtype=np.int64, growth: float = 2.0):
        self.data, self.n, self.growth = np.zeros(0, dtype=dtype), 0, growth

    def __len__(self) -> int:
        return self.n

    def add(self, values: np.ndarray) -> None:
        if self.n + len(values) > len(self.data):
            self.data.resize(max(int(self.growth * len(self.data)), self.n + len(values), 1024), refcheck=False)
        self.data[self.n:self.n + len(values)] = values
        self.n += len(values)

    def array(self) -> np.ndarray:
        self.data.resize(self.n, refcheck=False)
        return self.data


class _Codes:
    """The codes of one column read in pieces (``Table.codes``): each piece's values numbered
    on from those of the pieces before, so the whole is numbered in first-occurrence order;
    the ids as 32-bit integers (4 bytes a token: fewer than 2 ** 31 distinct values)."""

    def __init__(self):
        self.number: dict = {}
        self.ids = _Growing(np.int32)

    def add(self, values: list, local: np.ndarray) -> None:
        number = self.number
        self.ids.add(np.array([number.setdefault(value, len(number)) for value in values], dtype=np.int32)[local])

    def codes(self) -> Tuple[list, np.ndarray]:
        return list(self.number), self.ids.array()


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
