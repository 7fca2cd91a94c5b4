"""The one tag decoder: every tag scheme, read leniently (as conlleval) or strictly (as seqeval).

Lenient rules (DESIGN.md; ``scheme="auto"``, the default): ``B-X`` opens X, closing any open
span; ``I-X`` continues an open X span, otherwise opens one (as conlleval does); ``E-X``/``L-X``
close an open X span including the token, or make a one-token span; ``S-X``/``U-X`` make
one-token spans; ``O`` closes.  The type is everything after the first ``-``.  ``decode`` reads
one sentence's tags; ``decode_flat`` applies the same rules column-wise to many sentences given
as arrays (the statistics builder and batches read as codes; tests compare the two).

A declared ``scheme`` (``IOB1``, ``IOB2``, ``IOE1``, ``IOE2``, ``BIOES``/``BILOU``, ``IO``)
names the prefixes allowed (another is an error) and which transitions between two tags are
valid (``invalid_transitions`` counts the others, a sentence being preceded and followed by
``O``, as seqscore's ``validate``).  What happens to an invalid sequence: ``mode="lenient"``
with ``repair="conlleval"`` keeps every entity tag in a span (the lenient rules above: an
invalid ``I-X`` begins a span); ``repair="discard"`` drops a span that begins where its first
tag cannot begin one, or is left open where its last tag cannot end one (its tags read as
``O``; seqscore's rule for IOB2); ``mode="strict"`` keeps the spans seqeval's strict mode
finds (its start, inside and end patterns per scheme).
"""
from __future__ import annotations

from functools import cached_property
from typing import List, Optional, Sequence, Tuple

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
        hidden = next((c for c in entity_type if not c.isprintable()), None)
        if hidden is not None:  # a zero-width space or a control: a type that looks like another one
            raise ValueError(f"{where}tag {quote(label)}: its type holds U+{ord(hidden):04X}, a character that is not "
                             "shown (it would look like another type)")
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


# Prefix codes of the column-wise decoder (decode_flat).
PREFIX_CODES = {"O": 0, "B": 1, "I": 2, "E": 3, "S": 4}
_LETTERS = "OBIES"

SCHEMES = ("auto", "IOB1", "IOB2", "IOE1", "IOE2", "BIOES", "BILOU", "IO")
MODES = ("lenient", "strict")
REPAIRS = ("conlleval", "discard")
DEFAULT_DECODING = ("auto", "lenient", "conlleval")
DECODING_KEYS = ("scheme", "mode", "repair")  # the keywords that name them (check_decoding's)

# The prefixes each declared scheme uses (L- and U- read as E- and S-: BILOU is BIOES).
SCHEME_PREFIXES = {"auto": "OBIES", "IOB1": "OBI", "IOB2": "OBI", "IOE1": "OIE", "IOE2": "OIE", "BIOES": "OBIES",
                   "IO": "OI"}


def _valid(scheme: str, prev: str, cur: str, same: bool) -> bool:
    """Whether tag ``cur`` may follow tag ``prev`` (``same``: both entity tags of one type)."""
    continues = prev in "BI" and same  # an open span of cur's type
    if scheme in ("auto", "IOB2"):  # auto: only a continuation that continues nothing is repaired
        return cur not in "IE" or continues
    if scheme == "IOB1":  # B-X only separates two adjacent X spans
        return cur != "B" or continues
    if scheme == "BIOES":  # B-/I- need I- or E- of their type after them
        return continues if cur in "IE" else prev not in "BI"
    if scheme == "IOE2":  # every span ends with E-: I- needs I- or E- of its type
        return prev != "I" or (cur in "IE" and same)
    if scheme == "IOE1":  # E-X only ends a span followed by another X span
        return prev != "E" or (cur in "IE" and same)
    return True  # IO: any sequence


# seqeval's strict mode, per scheme: where a span may start, continue, and end (each pattern:
# previous prefixes > current prefixes, and whether the types must be the same or differ).
# IO (not in seqeval) gets the lenient rule, under which no IO sequence is invalid.
_STRICT = {
    "IOB1": ("O>I I>I:diff B>I I>B:same B>B:same", "B>I:same I>I:same",
             "I>I:diff I>O I>B B>O B>I:diff B>B:same"),
    "IOB2": ("OBIES>B", "B>I:same I>I:same", "I>O I>I:diff I>B B>O B>I:diff B>B"),
    "IOE1": ("O>I I>I:diff E>I E>E:same", "I>I:same I>E:same", "I>I:diff I>O I>E:diff E>I:same E>E:same"),
    "IOE2": ("O>I O>E E>I E>E I>I:diff I>E:diff", "I>E:same I>I:same", "E>OBIES"),
    "BIOES": ("OBIES>B OBIES>S", "B>I:same B>E:same I>I:same I>E:same", "S>OBIES E>OBIES"),
    "IO": ("O>I I>I:diff", "I>I:same", "I>O I>I:diff"),
}


def _code(prev, cur, same):
    """Index of a transition in the tables below: previous prefix code, current, same type."""
    return (prev * 5 + cur) * 2 + same


def _table(holds) -> np.ndarray:
    """A boolean table over every transition ``(prev, cur, same)`` of ``holds``."""
    return np.array([holds(p, c, bool(same)) for p in _LETTERS for c in _LETTERS for same in (0, 1)], dtype=bool)


def _patterns(text: str):
    """Whether a transition matches one of the patterns of ``text`` (``_STRICT``)."""
    def holds(prev, cur, same):
        for pattern in text.split():
            letters, _, condition = pattern.partition(":")
            before, after = letters.split(">")
            if prev in before and cur in after and condition in ("", "same" if same else "diff"):
                return True
        return False
    return holds


VALID = {scheme: _table(lambda p, c, same, scheme=scheme: _valid(scheme, p, c, same)) for scheme in SCHEME_PREFIXES}
STRICT = {scheme: tuple(_table(_patterns(text)) for text in texts) for scheme, texts in _STRICT.items()}


def check_decoding(scheme: str = "auto", mode: str = "lenient", repair: str = "conlleval") -> Tuple[str, str, str]:
    """The decoding options, checked: ``(scheme, mode, repair)`` with the scheme's canonical
    name (any case; ``BILOU`` is ``BIOES``); a bad value is a ``ValueError`` naming the choices."""
    name = scheme.upper() if isinstance(scheme, str) else scheme
    name = {"AUTO": "auto", "BILOU": "BIOES", "BIO": "IOB2", "IOBES": "BIOES"}.get(name, name)
    if name not in SCHEME_PREFIXES:
        raise ValueError(f"scheme={scheme!r}: use one of {', '.join(SCHEMES)}")
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: use 'lenient' or 'strict'")
    if repair not in REPAIRS:
        raise ValueError(f"repair={repair!r}: use 'conlleval' or 'discard'")
    if mode == "strict" and name == "auto":
        raise ValueError("mode='strict' needs a declared scheme (IOB1, IOB2, IOE1, IOE2, BIOES/BILOU or IO)")
    if mode == "strict" and repair != "conlleval":
        raise ValueError(f"repair={repair!r} applies to mode='lenient'; mode='strict' keeps only the spans "
                         f"seqeval's strict mode finds")
    return name, mode, repair


def check_prefix(prefix: str, scheme: str, sentence: int, position: int) -> None:
    """A ``ValueError`` naming the place of a tag whose prefix (``parse_label``'s) the declared
    scheme does not use."""
    if prefix not in SCHEME_PREFIXES[scheme]:
        raise ValueError(f"sentence {sentence}, position {position}: prefix {prefix}-"
                         f"{' (or ' + {'E': 'L', 'S': 'U'}[prefix] + '-)' if prefix in 'ES' else ''} is not in "
                         f"scheme {scheme}, which uses {', '.join(p + '-' for p in SCHEME_PREFIXES[scheme][1:])} and O")


def decode(tags: Sequence[str], sentence: int | None = None, scheme: str = "auto", mode: str = "lenient",
           repair: str = "conlleval") -> List[Span]:
    """Spans ``(start, end, type)`` of one sentence's tags, ``end`` exclusive, decoded as
    declared (module docstring); the default is the lenient rule, read tag by tag here."""
    if (scheme, mode, repair) != DEFAULT_DECODING:
        prefix, label, types = _sentence_codes(tags, sentence)
        starts, ends = decode_flat(prefix, label, np.array([0, len(tags)]), scheme, mode, repair,
                                   first_sentence=sentence or 0)
        return [(a, b, types[c]) for a, b, c in zip(starts.tolist(), ends.tolist(), label[starts].tolist())]
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


def _sentence_codes(tags: Sequence[str], sentence: int | None) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """One sentence's prefix codes, type labels (indices into the returned types; -1 for O)."""
    types: dict = {}
    parsed = [parse_label(tag, sentence, i) for i, tag in enumerate(tags)]
    prefix = np.array([PREFIX_CODES[p] for p, _ in parsed], dtype=np.int8)
    label = np.array([types.setdefault(t, len(types)) if p != "O" else -1 for p, t in parsed], dtype=np.int64)
    return prefix, label, list(types)


class _Transitions:
    """The transitions of flat sentences, as codes into the tables (``_code``): into a token
    from the tag before it (``into``), out of a token to the next (``after``); a sentence is
    preceded and followed by an ``O``.  Only entity tags need any (``entities``): between two
    ``O`` every scheme is valid and nothing starts."""

    def __init__(self, prefix: np.ndarray, label: np.ndarray, starts: np.ndarray):
        self.prefix, self.label, self.starts = prefix, label, starts  # codes up to 49 fit the prefixes' int8

    @cached_property
    def first(self) -> np.ndarray:
        """Whether a sentence begins at each token (or the tokens end there)."""
        first = np.zeros(len(self.prefix) + 1, dtype=bool)
        first[self.starts] = True
        return first

    @cached_property
    def entities(self) -> np.ndarray:
        return np.flatnonzero(self.prefix > 0)

    def into(self, positions: np.ndarray) -> np.ndarray:
        before = positions - 1
        previous = np.where(self.first[positions], 0, self.prefix[before])
        return _code(previous, self.prefix[positions], self.label[positions] == self.label[before])

    def after(self, table: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """``table`` at the transition out of each token at ``positions``."""
        following = np.minimum(positions + 1, len(self.prefix) - 1)
        ends = self.first[positions + 1]
        current = np.where(ends, 0, self.prefix[following])
        return table[_code(self.prefix[positions], current, ~ends & (self.label[following] == self.label[positions]))]

    def before_o(self, positions: np.ndarray) -> np.ndarray:
        """Which tokens at ``positions`` are followed by an O (or their sentence's end)."""
        following = np.minimum(positions + 1, len(self.prefix) - 1)
        return self.first[positions + 1] | (self.prefix[following] == 0)


def invalid_transitions(prefix: np.ndarray, label: np.ndarray, starts: np.ndarray, scheme: str = "auto") -> int:
    """How many transitions of flat sentences (as ``decode_flat`` takes them) are invalid in
    ``scheme``, each sentence preceded and followed by ``O`` (seqscore's ``validate`` count)."""
    if not len(prefix):
        return 0
    moves, valid = _Transitions(prefix, label, starts), VALID[check_decoding(scheme)[0]]
    entities = moves.entities
    last = entities[moves.before_o(entities)]  # the transitions into the O after an entity tag
    return int((~valid[moves.into(entities)]).sum() + (~moves.after(valid, last)).sum())


def decode_flat(prefix: np.ndarray, label: np.ndarray, starts: np.ndarray, scheme: str = "auto",
                mode: str = "lenient", repair: str = "conlleval",
                first_sentence: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """``decode`` column-wise, over sentences given flat: starts and (exclusive) ends of the
    spans of each token's prefix code (``PREFIX_CODES``) and type label (equal for equal
    types), sentence ``s`` being tokens ``[starts[s], starts[s + 1])``.  Leniently, an I or E
    token continues the span before it when that token is B or I (the only prefixes that
    leave a span open) of the same type in the same sentence; every other entity token starts
    a span.  ``scheme``, ``mode`` and ``repair`` as the module docstring says; a prefix the
    scheme does not use is a ``ValueError`` naming its sentence (from ``first_sentence``) and position."""
    scheme, mode, repair = check_decoding(scheme, mode, repair)
    n = len(prefix)
    if scheme != "auto" and _has_prefix_outside(prefix, scheme):
        i = int(np.argmax(~np.isin(prefix, [PREFIX_CODES[p] for p in SCHEME_PREFIXES[scheme]])))
        s = int(np.searchsorted(starts, i, side="right")) - 1
        check_prefix(_LETTERS[prefix[i]], scheme, first_sentence + s, i - int(starts[s]))
    previous_open = np.zeros(n, dtype=bool)
    previous_open[1:] = ((prefix[:-1] == 1) | (prefix[:-1] == 2)) & (label[:-1] == label[1:])
    previous_open[starts[:-1][starts[:-1] < n]] = False  # a sentence's first token continues nothing
    continues = ((prefix == 2) | (prefix == 3)) & previous_open
    entity = prefix > 0
    last = entity & ~np.append(continues[1:], False)  # the next token does not continue this span
    span_starts, span_ends = np.flatnonzero(entity & ~continues), np.flatnonzero(last) + 1
    if (mode == "strict" or repair == "discard") and len(span_starts):
        # The lenient spans are the runs of tags that continue one another (seqeval's strict
        # "inside" transitions in every scheme): strict mode and the discard repair keep or
        # drop whole runs by the transition into a run's first tag and out of its last.
        span_starts, span_ends = _kept_runs(_Transitions(prefix, label, starts), span_starts, span_ends,
                                            *_RUN_RULES[scheme, mode, repair])
    return span_starts, span_ends


def _has_prefix_outside(prefix: np.ndarray, scheme: str) -> bool:
    """Whether some prefix code is not one ``scheme`` uses: codes above the scheme's highest by
    one pass (IOB schemes use O, B, I: the three lowest), any other by a comparison each."""
    allowed = [PREFIX_CODES[p] for p in SCHEME_PREFIXES[scheme]]
    if len(prefix) and prefix.max() > max(allowed):
        return True
    return any((prefix == code).any() for code in range(max(allowed)) if code not in allowed)


def _kept_runs(moves: _Transitions, starts: np.ndarray, ends: np.ndarray, opens: "_Rule", closes: "_Rule",
               later_start: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """The runs ``[starts, ends)`` kept: a run whose first tag passes ``opens`` at the
    transition into it and whose last tag passes ``closes`` at the transition out of it.
    ``later_start`` (IOB1's strict mode): the transitions inside a run where a span may start,
    so that a run whose first tag cannot begin a span begins at the first tag that can."""
    keep = opens.passes(moves, starts)
    if later_start is not None and keep is not None and not keep.all():
        late = np.flatnonzero(~keep)
        lengths = ends[late] - starts[late] - 1  # the tags after the first of each such run
        inner = np.repeat(starts[late] + 1 - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        can = later_start[_code(moves.prefix[inner - 1], moves.prefix[inner], 1)]
        runs, first = np.unique(np.repeat(late, lengths)[can], return_index=True)
        starts = starts.copy()
        starts[runs], keep[runs] = inner[can][first], True
    closing = closes.passes(moves, ends - 1)
    keep = closing if keep is None else keep if closing is None else keep & closing
    if keep is None or keep.all():  # nothing dropped (valid tags): the runs as they are
        return starts, ends
    return starts[keep], ends[keep]


class _Rule:
    """Whether a run may begin (``into``: the transition into its first tag) or end (out of
    its last tag) where it is, ``table`` over transitions.  Most prefixes decide it alone
    (``always``: every transition that does not continue a run passes), so the transitions
    are looked at only for the tags of the prefixes where it depends (``depends``); both are
    sets of prefix codes held as bits, read for many tags at once by a shift."""

    def __init__(self, table: np.ndarray, scheme: str, into: bool):
        self.table, self.into = table, into
        letters = [PREFIX_CODES[p] for p in SCHEME_PREFIXES[scheme]]
        self.always, self.depends = 0b11111, 0
        for tag in letters[1:]:  # a run's first or last tag is an entity tag
            passes = {bool(table[_code(other, tag, same) if into else _code(tag, other, same)])
                      for other in letters for same in ((0, 1) if other else (0,))
                      if not _CONTINUES[_code(other, tag, same) if into else _code(tag, other, same)]}
            if passes != {True}:
                self.always &= ~(1 << tag)
            if len(passes) == 2:
                self.depends |= 1 << tag

    def passes(self, moves: _Transitions, positions: np.ndarray) -> Optional[np.ndarray]:
        """Whether the run beginning (``into``) or ending at each of ``positions`` passes; None:
        every run does, whatever its tags (the rule holds for every prefix)."""
        if self.always == 0b11111:
            return None
        prefix = moves.prefix[positions]
        keep = _members(self.always, prefix)
        if self.depends:
            unsure = np.flatnonzero(_members(self.depends, prefix))
            keep[unsure] = (self.table[moves.into(positions[unsure])] if self.into
                            else moves.after(self.table, positions[unsure]))
        return keep


def _members(bits: int, prefix: np.ndarray) -> np.ndarray:
    """Whether each prefix code is in the set ``bits`` (bit k: code k)."""
    return ((np.int8(bits) >> prefix) & 1).view(bool)


# The lenient rule's continuations: a run of tags, each continuing the one before it.
_CONTINUES = _table(lambda p, c, same: p in "BI" and c in "IE" and same)


def _run_rules(scheme: str, mode: str) -> tuple:
    """``_kept_runs``' rules for a scheme in strict mode (seqeval's start and end patterns) or
    under the discard repair (a run goes when its first tag is invalid where it is and could
    not begin a span even after an O, or its last tag is invalid where it is and could not
    end one even before an O: the blame of an invalid transition falls on the tag that cannot
    stand there)."""
    if mode == "strict":
        start, inside, end = STRICT[scheme]
        return _Rule(start, scheme, True), _Rule(end, scheme, False), start & inside if (start & inside).any() else None
    valid, letters = VALID[scheme], np.arange(50) // 2
    can_open, can_close = valid[_code(0, letters % 5, 0)], valid[_code(letters // 5, 0, 0)]
    return _Rule(valid | can_open, scheme, True), _Rule(valid | can_close, scheme, False), None


_RUN_RULES = {(scheme, mode, repair): _run_rules(scheme, mode) for scheme in SCHEME_PREFIXES
              for mode, repair in (("strict", "conlleval"), ("lenient", "discard"))
              if (scheme, mode) != ("auto", "strict")}


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
