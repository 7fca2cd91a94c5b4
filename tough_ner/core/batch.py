"""A validated, decoded evaluation batch: test tokens, gold tags and predicted tags."""
from __future__ import annotations

import copy
from functools import cached_property
from itertools import chain, repeat
from operator import itemgetter
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._util import no_gc
from .schemes import (DEFAULT_DECODING, PREFIX_CODES, SCHEME_PREFIXES, Span, check_decoding, check_prefix,
                      check_sentence, decode, decode_flat, invalid_transitions, parse_label)

# Token label codes: 0 is O; an entity token is 1 + 4 * type id + its role.
ROLES = {"bilou": "BILU", "bio": "BI", "io": "I"}
Codes = Tuple[List[str], np.ndarray]  # (distinct values, each token's index among them)


class Batch:
    """Sentences of tokens with gold (and optionally predicted) tags, checked once.

    Bad input raises ``ValueError`` naming the sentence and position: differing sentence
    counts or lengths, non-string tokens, unknown tags.  Spans are kept per sentence
    (``gold_spans``, ``pred_spans``) and as flat arrays over all tokens.  ``from_codes``
    builds one from the reader's columns; its per-sentence lists are made when first read.
    ``tough_ner.as_batch`` builds one from other formats and sets the last three below.

    ``scheme``, ``mode`` and ``repair`` say how the tags are decoded (``schemes``: the lenient
    rule by default); ``declared`` names the sides whose tags are in that scheme (``as_batch``
    writes a side given in another format in IOB2, read by the lenient rule).
    ``invalid_transitions(side)`` counts a side's transitions invalid in its scheme.
    """

    # Predictions that have no position (mentions found nowhere): per sentence, or None.
    hallucinated: Optional[List[List[dict]]] = None
    snapped: Sequence[dict] = ()  # character spans expanded to token boundaries
    formats: Optional[dict] = None  # the input format of each side
    # Predicted mention lists: per sentence {(start, end): status} of the placed mentions, and
    # the predictions that were no mention list ({"sentence", "problem"}); None / () otherwise.
    mention_status: Optional[List[dict]] = None
    unparseable: Sequence[dict] = ()
    # Sides holding overlapping or nested spans (as_batch's allow_overlap): {side: (sentence, span,
    # span)}, the first such pair of each; empty for a flat batch.
    overlapping: Dict[str, Tuple[int, Span, Span]] = {}
    _codes: Optional[Dict[str, Optional[Codes]]] = None  # the sides as codes (from_codes), by name

    decoding: Tuple[str, str, str] = DEFAULT_DECODING  # (scheme, mode, repair)
    _declared: Tuple[str, ...] = ("gold", "pred")

    def __init__(self, tokens: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                 predictions: Optional[Sequence[Sequence[str]]] = None, documents: Optional[Sequence] = None, *,
                 scheme: str = "auto", mode: str = "lenient", repair: str = "conlleval",
                 declared: Sequence[str] = ("gold", "pred")):
        self._set_decoding(scheme, mode, repair, declared)
        _check(tokens, references, predictions)
        if documents is not None and len(documents) != len(tokens):
            raise ValueError(f"{len(documents)} document ids for {len(tokens)} sentences")
        self.tokens = tokens
        self.references = references
        self.predictions = predictions
        # Optional document id per sentence: resampling by document (``unit="document"``).
        self.documents = None if documents is None else list(documents)
        with no_gc():  # millions of small span tuples: the collector's scans made this grow superlinearly
            self.gold_spans = self._decode_sentences(references, "gold")
            self.pred_spans = None if predictions is None else self._decode_sentences(predictions, "pred")
        found = set(map(itemgetter(2), chain.from_iterable(chain(self.gold_spans, self.pred_spans or ()))))
        self.types: List[str] = sorted(found)
        self.type_index = {t: i for i, t in enumerate(self.types)}

    def _set_decoding(self, scheme: str, mode: str, repair: str, declared: Sequence[str]) -> None:
        self.decoding = check_decoding(scheme, mode, repair)
        unknown = set(declared) - {"gold", "pred"}
        if unknown:
            raise ValueError(f"declared={sorted(unknown)!r}: the sides are 'gold' and 'pred'")
        self._declared = tuple(declared)

    def require_flat(self, method: str) -> None:
        """Refuse overlapping or nested spans for ``method``, one defined on a flat tagging."""
        for side, (s, (a, b, t), (c, d, u)) in self.overlapping.items():
            raise ValueError(f"{method} is defined on flat tags (one tag per token), but sentence {s} holds the "
                             f"overlapping {'gold' if side == 'gold' else 'predicted'} spans {a}-{b} {t} and "
                             f"{c}-{d} {u} (kept by allow_overlap=True): score overlapping spans with span scores, "
                             f"match_scores or tmr, or give flat spans")

    def with_types(self, types: Sequence[str]) -> "Batch":
        """This batch numbering the entity types as ``types`` (sorted, its own among them), as
        the batches compared with it do (``with_shared_types``): a renumbered copy, sharing
        its sentences, or this batch when its types are those already."""
        types = list(types)
        if types == self.types:
            return self
        if types != sorted(set(types)) or not set(self.types) <= set(types):
            raise ValueError(f"with_types needs the sorted types of every batch compared, this one's "
                             f"{self.types} among them, not {types}")
        renumbered = copy.copy(self)
        renumbered.types, renumbered.type_index = types, {t: i for i, t in enumerate(types)}
        for made in ("_arrays_gold", "_arrays_pred", "_memo"):  # made from the old numbers
            renumbered.__dict__.pop(made, None)
        return renumbered

    def decoding_options(self) -> dict:
        """The keywords that make another ``Batch`` decode as this one."""
        return dict(zip(("scheme", "mode", "repair"), self.decoding), declared=self._declared)

    def side_decoding(self, which: str) -> Tuple[str, str, str]:
        """``(scheme, mode, repair)`` of the gold or predicted side."""
        return self.decoding if which in self._declared else DEFAULT_DECODING

    def _decode_sentences(self, sentences: Sequence[Sequence[str]], which: str) -> List[List[Span]]:
        """Each sentence's spans: by ``decode``, sentence after sentence, for the lenient rule;
        column-wise over all sentences (``decode_flat``) for any other decoding."""
        decoding = self.side_decoding(which)
        if decoding == DEFAULT_DECODING:
            return [decode(tags, s) for s, tags in enumerate(sentences)]
        prefix, label, types = self.__dict__["_flat_" + which] = _flat_codes(sentences, int(self.offsets[-1]))
        starts, ends = decode_flat(prefix, label, self.offsets, *decoding)
        sentence = np.searchsorted(self.offsets, starts, side="right") - 1
        within = self.offsets[sentence]
        spans = list(zip((starts - within).tolist(), (ends - within).tolist(),
                         map(types.__getitem__, label[starts].tolist())))
        return self._sentences(spans, np.searchsorted(sentence, np.arange(len(self) + 1)))

    def invalid_transitions(self, which: str = "gold") -> int:
        """How many transitions of a side's tags are invalid in its scheme (``schemes``; the
        lenient rule counts continuations that continue nothing).  0 for a side not given."""
        key = "_invalid_" + which
        if key not in self.__dict__:
            if which not in ("gold", "pred"):
                raise ValueError(f"which must be 'gold' or 'pred', not {which!r}")
            if self._codes:
                if self._codes[which] is None:
                    return 0
                prefixes, names = self._tags[which]
                ids = self._codes[which][1]
                local = {name: k for k, name in enumerate(dict.fromkeys(names))}
                label = np.array([local[name] if name is not None else -1 for name in names], dtype=np.int64)[ids]
                prefix = prefixes[ids]
            else:
                sentences = self.references if which == "gold" else self.predictions
                if sentences is None:
                    return 0
                if self.side_decoding(which) == DEFAULT_DECODING:  # the lenient rule's invalid transitions
                    # are its continuations that continue nothing, each the first tag of a span
                    spans = self.gold_spans if which == "gold" else self.pred_spans
                    self.__dict__[key] = sum(parse_label(tags[start])[0] in "IE"
                                             for tags, found in zip(sentences, spans) for start, _, _ in found)
                    return self.__dict__[key]
                if "_flat_" + which not in self.__dict__:  # the flat codes a declared decoding made, or new ones
                    self.__dict__["_flat_" + which] = _flat_codes(sentences, int(self.offsets[-1]))
                prefix, label, _ = self.__dict__["_flat_" + which]
            self.__dict__[key] = invalid_transitions(prefix, label, self.offsets, self.side_decoding(which)[0])
        return self.__dict__[key]

    def invalid_counts(self) -> Dict[str, int]:
        """``n_invalid_transitions_gold`` and ``_pred``, the result keys of ``invalid_transitions``."""
        return {f"n_invalid_transitions_{side}": self.invalid_transitions(side) for side in ("gold", "pred")}

    @classmethod
    def from_codes(cls, starts: np.ndarray, tokens: Codes, references: Codes, predictions: Optional[Codes] = None,
                   documents: Optional[Sequence] = None, *, scheme: str = "auto", mode: str = "lenient",
                   repair: str = "conlleval") -> "Batch":
        """A batch of flat columns given as codes, the reader's form (``Table.codes``): each
        side is ``(values, each token's index among them)``, the values distinct and numbered
        in the order they first occur; sentence ``s`` holds tokens ``[starts[s], starts[s + 1])``.
        Spans are decoded column-wise (``schemes.decode_flat``) and vocabulary ids looked up
        once per distinct token; the per-sentence lists (``tokens``, ``gold_spans`` ...) are
        made when first read and equal those of ``Batch(tokens, references, predictions)``."""
        starts = np.asarray(starts, dtype=np.int64)
        if starts.ndim != 1 or not len(starts) or starts[0] != 0 or (np.diff(starts) < 0).any():
            raise ValueError("starts must be 0 followed by the non-decreasing sentence ends")
        if documents is not None and len(documents) != len(starts) - 1:
            raise ValueError(f"{len(documents)} document ids for {len(starts) - 1} sentences")
        sides = {"tokens": tokens, "gold": references, "pred": predictions}
        for side in ("tokens", "gold", "pred") if predictions is not None else ("tokens", "gold"):
            _check_codes(side, sides[side], int(starts[-1]))
        batch = cls.__new__(cls)
        batch._set_decoding(scheme, mode, repair, ("gold", "pred"))
        batch._codes = sides
        batch.offsets = starts
        if not set(map(type, tokens[0])) <= _STR:  # in first-occurrence order, the first bad value is met first
            k, bad = next((k, value) for k, value in enumerate(tokens[0]) if type(value) is not str)
            s, i = batch._first_place("tokens", k)
            raise ValueError(f"sentence {s}, position {i}: token {bad!r} is a {type(bad).__name__}, not a string")
        batch.documents = None if documents is None else list(documents)
        parsed = {side: [batch._parsed(side, k, tag) for k, tag in enumerate(sides[side][0])]
                  for side in ("gold", "pred") if sides[side] is not None}
        scheme = batch.decoding[0]
        for side, tags in parsed.items():  # a prefix the declared scheme does not use: refused now
            for k, (prefix, _) in enumerate(tags):
                if prefix not in SCHEME_PREFIXES[scheme]:
                    check_prefix(prefix, scheme, *batch._first_place(side, k))
        batch.types = sorted({t for tags in parsed.values() for prefix, t in tags if prefix != "O"})
        batch.type_index = {t: i for i, t in enumerate(batch.types)}
        batch._tags = {side: (np.array([PREFIX_CODES[p] for p, _ in tags], dtype=np.int8),
                              [t if p != "O" else None for p, t in tags]) for side, tags in parsed.items()}
        return batch

    def _parsed(self, side: str, k: int, tag) -> Tuple[str, str]:
        """``parse_label`` of value ``k`` of a coded tag side; its error names the sentence
        and position where the value first occurs."""
        try:
            return parse_label(tag)
        except ValueError:
            return parse_label(tag, *self._first_place(side, k))

    def _first_place(self, side: str, k: int) -> Tuple[int, int]:
        """(sentence, position) where value ``k`` of a coded side first occurs."""
        i = int(np.argmax(self._codes[side][1] == k))
        s = int(np.searchsorted(self.offsets, i, side="right")) - 1
        return s, i - int(self.offsets[s])

    # What a coded batch (from_codes) makes when first read; Batch() sets them all at once.
    @cached_property
    def tokens(self) -> List[List[str]]:
        return self._sentences(self.flat_tokens)

    @cached_property
    def references(self) -> List[List[str]]:
        return self._sentences(_values(self._codes["gold"]))

    @cached_property
    def predictions(self) -> Optional[List[List[str]]]:
        return None if self._codes["pred"] is None else self._sentences(_values(self._codes["pred"]))

    @cached_property
    def gold_spans(self) -> List[List[Span]]:
        return self._span_lists("gold")

    @cached_property
    def pred_spans(self) -> Optional[List[List[Span]]]:
        return None if self._codes["pred"] is None else self._span_lists("pred")

    @no_gc()
    def _sentences(self, flat: list, bounds: Optional[np.ndarray] = None) -> list:
        """``flat`` cut into sentences (``bounds``: where each begins, plus the end; the
        tokens' ``offsets`` by default)."""
        bounds = (self.offsets if bounds is None else bounds).tolist()
        return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    @no_gc()
    def _span_lists(self, which: str) -> List[List[Span]]:
        """Per sentence, the spans of ``span_arrays(which)`` as ``decode`` gives them."""
        sentence, starts, ends, types = self.span_arrays(which)
        within = self.offsets[sentence]
        spans = list(zip((starts - within).tolist(), (ends - within).tolist(),
                         map(self.types.__getitem__, types.tolist())))
        return self._sentences(spans, np.searchsorted(sentence, np.arange(len(self) + 1)))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def has_predictions(self) -> bool:  # without making a coded batch's lists
        return self._codes["pred"] is not None if self._codes else self.predictions is not None

    @cached_property
    def flat_tokens(self) -> List[str]:
        return _values(self._codes["tokens"]) if self._codes else list(chain.from_iterable(self.tokens))

    def count_in(self, where: np.ndarray, members, key=None) -> int:
        """How many tokens at the positions ``where`` (a boolean mask) are in ``members``
        once ``key`` (e.g. ``str.lower``) is applied: once per distinct token of a coded
        batch, once per position otherwise (each token read once: a second pass over
        scattered strings costs more than the lookups)."""
        if self._codes:
            values, ids = self._codes["tokens"]
            counts = np.bincount(ids[where], minlength=len(values))
            present = np.flatnonzero(counts)
            tokens = map(values.__getitem__, present.tolist())
            found = np.fromiter(map(members.__contains__, tokens if key is None else map(key, tokens)), dtype=bool,
                                count=len(present))
            return int(counts[present][found].sum())
        tokens = map(self.flat_tokens.__getitem__, np.flatnonzero(where).tolist())
        return sum(map(members.__contains__, tokens if key is None else map(key, tokens)))

    @cached_property
    def sentence_keys(self) -> np.ndarray:
        """A content hash of each sentence (tokens and gold tags): the canonical order of
        resampling.  A coded batch's from its codes, a block of sentences at a time: neither a
        list per sentence (most of what intervals added on a million sentences) nor a flat list
        of every token (most of what they added on CoNLL-2003 test x 50) is made."""
        from .uncertainty import sentence_keys
        if self._codes is None:
            return sentence_keys(self.tokens, self.references)
        bounds = self.offsets.tolist()

        def cut(codes, block=4096):  # each sentence's values, made a block of sentences at a time
            for first in range(0, len(self), block):
                last = min(first + block, len(self))
                flat = _values(codes, bounds[first], bounds[last])
                yield from (flat[a - bounds[first]:b - bounds[first]]
                            for a, b in zip(bounds[first:last], bounds[first + 1:last + 1]))
        return sentence_keys(cut(self._codes["tokens"]), cut(self._codes["gold"]), len(self))

    @cached_property
    def token_sentences(self) -> np.ndarray:
        """The sentence index of each flat token."""
        return np.repeat(np.arange(len(self)), np.diff(self.offsets))

    def memo(self, key: tuple, stats, compute):
        """``compute()`` once per key and statistics object: a method's classification is
        shared by its scores and its per-sentence counts."""
        cache = self.__dict__.setdefault("_memo", {})
        held = cache.get(key)
        if held is None or held[0] is not stats:
            held = cache[key] = (stats, compute())
        return held[1]

    def token_ids(self, stats) -> np.ndarray:
        """The flat tokens' ids in ``stats``' vocabulary (-1: unseen), looked up once per
        statistics object (the input checks and the methods share them)."""
        if self._codes:
            values, ids = self._codes["tokens"]
            return self.memo(("token_ids",), stats, lambda: stats.ids(values)[ids])
        return self.memo(("token_ids",), stats, lambda: stats.ids(self.flat_tokens))

    def counts(self, strata=None):
        """An empty ``uncertainty.Counts`` over this batch's sentences."""
        from .uncertainty import Counts
        return Counts(self.sentence_keys, strata, self.documents)

    @cached_property
    def offsets(self) -> np.ndarray:
        """Start of each sentence in the flat token list, plus the total at the end."""
        offsets = np.zeros(len(self.tokens) + 1, dtype=np.int64)
        np.cumsum([len(sentence) for sentence in self.tokens], out=offsets[1:])
        return offsets

    def span_arrays(self, which: str = "gold") -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Flat ``(sentence, start, end, type id)`` arrays of the gold or predicted spans
        (start and end are positions in the flat token list)."""
        if which not in ("gold", "pred"):  # a misspelt side must not silently mean the predictions
            raise ValueError(f"which must be 'gold' or 'pred', not {which!r}")
        key = "_arrays_" + which
        if key not in self.__dict__ and self._codes:
            self.__dict__[key] = self._decoded_arrays(which)
        if key not in self.__dict__:
            all_spans = self.gold_spans if which == "gold" else self.pred_spans
            if all_spans is None:
                raise ValueError("this batch has no predictions")
            counts = np.fromiter(map(len, all_spans), dtype=np.int64, count=len(all_spans))
            sentence = np.repeat(np.arange(len(all_spans)), counts)
            # Columns by zip in C over the spans' own tuples (its iterator per span would set
            # off the collector's scans of everything the caller holds, growing with the test).
            with no_gc():
                starts, ends, types = list(zip(*chain.from_iterable(all_spans))) or ((), (), ())
            offsets = self.offsets[sentence]
            self.__dict__[key] = (sentence, np.array(starts, dtype=np.int64) + offsets,
                                  np.array(ends, dtype=np.int64) + offsets,
                                  np.fromiter(map(self.type_index.__getitem__, types), dtype=np.int64,
                                              count=len(types)))
        return self.__dict__[key]

    def _decoded_arrays(self, which: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``span_arrays`` of a coded side, by the column-wise decoder."""
        if self._codes[which] is None:
            raise ValueError("this batch has no predictions")
        ids = self._codes[which][1]
        prefixes, names = self._tags[which]
        # type ids from the current type_index (as_batch may add types after construction, with_types renumber)
        type_ids = np.array([self.type_index[name] if name is not None else -1 for name in names], dtype=np.int64)
        prefix, types = prefixes[ids], type_ids[ids]
        starts, ends = decode_flat(prefix, types, self.offsets, *self.side_decoding(which))
        sentence = np.searchsorted(self.offsets, starts, side="right") - 1
        return sentence, starts, ends, types[starts]

    @no_gc()
    def span_texts(self, which: str = "gold") -> List[str]:
        """The text of each span of ``span_arrays(which)``, in that order: its tokens joined by
        single spaces.  A coded batch's from its token codes (no list per sentence is made)."""
        _, starts, ends, _ = self.span_arrays(which)  # a bad side or no predictions: its error
        if not self._codes:
            spans = self.gold_spans if which == "gold" else self.pred_spans
            return [" ".join(self.tokens[s][a:b]) for s, found in enumerate(spans) for a, b, _ in found]
        values, ids = self._codes["tokens"]
        return _span_texts(values, ids, starts, ends)

    def span_type_counts(self, which: str = "gold") -> Dict[str, int]:
        """``{type: spans}`` of the gold or predicted side, for the types it has."""
        counts = np.bincount(self.span_arrays(which)[3], minlength=len(self.types)).tolist()
        return {name: n for name, n in zip(self.types, counts) if n}

    def token_labels(self, which: str = "gold", scheme: str = "bilou") -> np.ndarray:
        """Each flat token's label as an integer code in ``scheme`` (``bilou``, ``bio`` or
        ``io``): equal codes mean equal tags in that scheme."""
        _, starts, ends, types = self.span_arrays(which)
        labels = np.zeros(int(self.offsets[-1]), dtype=np.int64)
        lengths = ends - starts
        position = _offsets_within(lengths)
        inside = np.repeat(starts, lengths)
        length = np.repeat(lengths, lengths)
        if scheme == "bilou":  # roles B=0 I=1 L=2 U=3
            role = np.where(length == 1, 3, np.where(position == 0, 0, np.where(position == length - 1, 2, 1)))
        elif scheme == "bio":
            role = np.where(position == 0, 0, 1)
        elif scheme == "io":
            role = np.zeros(len(inside), dtype=np.int64)
        else:
            raise ValueError(f"unknown scheme {scheme!r}: use 'bilou', 'bio' or 'io'")
        labels[inside + position] = 1 + 4 * np.repeat(types, lengths) + role
        return labels

    def token_types(self, which: str = "gold") -> np.ndarray:
        """Each flat token's type id, -1 outside entities."""
        _, starts, ends, types = self.span_arrays(which)
        result = np.full(int(self.offsets[-1]), -1, dtype=np.int64)
        result[span_positions(starts, ends)] = np.repeat(types, ends - starts)
        return result


def span_positions(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The positions inside the spans ``[start, end)``, span after span."""
    lengths = ends - starts
    return np.repeat(starts, lengths) + _offsets_within(lengths)


def _span_texts(vocab: List[str], token_ids: Optional[np.ndarray], starts: np.ndarray, ends: np.ndarray) -> List[str]:
    """The texts of the spans ``[starts[k], ends[k])`` of a running text given as token ids
    into ``vocab`` (None: ``vocab`` is the running text itself): tokens joined by single spaces."""
    lengths = ends - starts
    positions = span_positions(starts, ends)
    words = list(map(vocab.__getitem__, (positions if token_ids is None else token_ids[positions]).tolist()))
    ends = np.cumsum(lengths)
    return list(map(" ".join, map(words.__getitem__, map(slice, (ends - lengths).tolist(), ends.tolist()))))


def _offsets_within(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., n - 1 for each length n, concatenated: a token's place in its span."""
    return np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)


_STR = {str}


def _check_codes(side: str, codes: Optional[Codes], n: int) -> None:
    """``codes`` must be ``(values, ids)`` with one id per token, the values distinct and
    numbered in the order they first occur, each used: what ``Table.codes`` gives."""
    if codes is None:
        raise ValueError(f"the {side} codes are missing")
    values, ids = codes
    if len(ids) != n:
        raise ValueError(f"{len(ids)} {side} codes for {n} tokens")
    if n:  # numbered as first met: the running maximum climbs by steps of one from 0 to the last value
        highest = np.maximum.accumulate(ids)
        numbered = (ids[0] == 0 and ids.min() >= 0 and not (np.diff(highest) > 1).any()
                    and highest[-1] + 1 == len(values))
    else:
        numbered = not len(values)
    try:
        distinct = len(set(values)) == len(values)
    except TypeError:  # an unhashable value: the type checks that follow name it
        distinct = True
    if not (numbered and distinct):
        raise ValueError(f"the {side} codes are not distinct values numbered in the order they first occur, "
                         f"each used (as Table.codes and corpus.factorize give them)")


def _flat_codes(sentences: Sequence[Sequence[str]], n: int) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """Sentences of ``n`` tags in all as flat columns: each tag's prefix code and type id (-1
    for O), and the types by id.  Each distinct tag is parsed once; a bad one is named by the
    first sentence and position where it occurs."""
    try:
        distinct = dict.fromkeys(chain.from_iterable(sentences))
        parsed = list(map(parse_label, distinct))
    except (TypeError, ValueError):  # an unhashable or unknown tag: find where it is
        for s, tags in enumerate(sentences):
            for i, tag in enumerate(tags):
                parse_label(tag, s, i)
        raise
    types = list({t: None for p, t in parsed if p != "O"})
    type_ids = {t: k for k, t in enumerate(types)}
    # one number per tag holds both: its prefix code + 5 * (type id + 1), 0 for O
    number = {tag: PREFIX_CODES[p] + 5 * (type_ids[t] + 1 if p != "O" else 0) for tag, (p, t) in zip(distinct, parsed)}
    numbers = np.fromiter(map(number.__getitem__, chain.from_iterable(sentences)), dtype=np.int64, count=n)
    return (numbers % 5).astype(np.int8), numbers // 5 - 1, types


def _values(codes: Codes, start: int = 0, end: Optional[int] = None) -> list:
    """A coded column as its flat list of values (those of tokens ``[start, end)``)."""
    values, ids = codes
    return list(map(values.__getitem__, ids[start:end].tolist()))


def _check(tokens, references, predictions) -> None:
    if not _looks_right(tokens, references, predictions):
        _find_problem(tokens, references, predictions)


def _looks_right(tokens, references, predictions) -> bool:
    """The checks of ``_find_problem`` as a few passes in C over all sentences (the common
    case: nothing wrong); False sends the input to ``_find_problem`` for its message.  A new
    rule goes in both (the property test in test_batch.py lists the kinds of bad input)."""
    try:
        sides = [tokens, references] + ([predictions] if predictions is not None else [])
        lengths = list(map(len, references))  # equal lists of lengths: equal sentence counts too
        return (not any(any(map(isinstance, side, repeat(str))) for side in sides)
                and all(list(map(len, side)) == lengths for side in sides)
                and set(map(type, chain.from_iterable(tokens))) <= _STR)
    except TypeError:  # a sentence without a length: _find_problem names it
        return False


def _find_problem(tokens, references, predictions) -> None:
    """Raise the error of the first problem, naming its sentence and position."""
    if len(tokens) != len(references):
        raise ValueError(f"{len(tokens)} token sentences but {len(references)} reference sentences")
    if predictions is not None and len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} prediction sentences but {len(references)} reference sentences")
    for s, (sentence, gold) in enumerate(zip(tokens, references)):
        sides = (("tokens", sentence), ("reference tags", gold)) + (
            (("predicted tags", predictions[s]),) if predictions is not None else ())
        for what, value in sides:
            if not hasattr(value, "__len__"):
                raise ValueError(f"sentence {s}: {what} must be a list of strings, not {type(value).__name__}")
        if isinstance(gold, str) or (predictions is not None and isinstance(predictions[s], str)):
            check_sentence(gold, s, "reference tags")
            check_sentence(predictions[s], s, "predicted tags")
        if len(sentence) != len(gold):
            raise ValueError(f"sentence {s}: {len(sentence)} tokens but {len(gold)} reference tags")
        if predictions is not None and len(predictions[s]) != len(gold):
            raise ValueError(f"sentence {s}: {len(predictions[s])} predicted tags but {len(gold)} reference tags")
        if isinstance(sentence, str) or not set(map(type, sentence)) <= _STR:
            if isinstance(sentence, str):
                raise ValueError(f"sentence {s}: tokens must be a list of strings, not one string")
            i = next(i for i, token in enumerate(sentence) if type(token) is not str)
            raise ValueError(f"sentence {s}, position {i}: token {sentence[i]!r} is a "
                             f"{type(sentence[i]).__name__}, not a string")


def with_shared_types(batches: Dict[str, Batch]) -> Dict[str, Batch]:
    """Batches of systems compared type by type, numbering the same entity types (the sorted
    union of theirs): a type one system predicts and no other side holds is then a column of
    nothing for the others, not a column the others lack (``with_types``; the batches as given
    where nothing changes)."""
    shared = sorted(set().union(*(batch.types for batch in batches.values())))
    return {name: batch.with_types(shared) for name, batch in batches.items()}
