"""A validated, decoded evaluation batch: test tokens, gold tags and predicted tags."""
from __future__ import annotations

from functools import cached_property
from itertools import chain, repeat
from operator import itemgetter
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._util import no_gc
from .schemes import check_sentence, decode

# Token label codes: 0 is O; an entity token is 1 + 4 * type id + its role.
ROLES = {"bilou": "BILU", "bio": "BI", "io": "I"}


class Batch:
    """Sentences of tokens with gold (and optionally predicted) tags, checked once.

    Bad input raises ``ValueError`` naming the sentence and position: differing sentence
    counts or lengths, non-string tokens, unknown tags.  Spans are kept per sentence
    (``gold_spans``, ``pred_spans``) and as flat arrays over all tokens.
    ``tough_ner.as_batch`` builds one from other formats and sets the last three below.
    """

    # Predictions that have no position (mentions found nowhere): per sentence, or None.
    hallucinated: Optional[List[List[dict]]] = None
    snapped: Sequence[dict] = ()  # character spans expanded to token boundaries
    formats: Optional[dict] = None  # the input format of each side

    def __init__(self, tokens: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                 predictions: Optional[Sequence[Sequence[str]]] = None, documents: Optional[Sequence] = None):
        _check(tokens, references, predictions)
        if documents is not None and len(documents) != len(tokens):
            raise ValueError(f"{len(documents)} document ids for {len(tokens)} sentences")
        self.tokens = tokens
        self.references = references
        self.predictions = predictions
        # Optional document id per sentence: resampling by document (``unit="document"``).
        self.documents = None if documents is None else list(documents)
        with no_gc():  # millions of small span tuples: the collector's scans made this grow superlinearly
            self.gold_spans = [decode(tags, s) for s, tags in enumerate(references)]
            self.pred_spans = None if predictions is None else [decode(tags, s) for s, tags in enumerate(predictions)]
        found = set(map(itemgetter(2), chain.from_iterable(chain(self.gold_spans, self.pred_spans or ()))))
        self.types: List[str] = sorted(found)
        self.type_index = {t: i for i, t in enumerate(self.types)}

    def __len__(self) -> int:
        return len(self.tokens)

    @cached_property
    def flat_tokens(self) -> List[str]:
        return list(chain.from_iterable(self.tokens))

    @cached_property
    def sentence_keys(self) -> np.ndarray:
        """A content hash of each sentence (tokens and gold tags): the canonical order of resampling."""
        from .uncertainty import sentence_keys
        return sentence_keys(self.tokens, self.references)

    @cached_property
    def token_sentences(self) -> np.ndarray:
        """The sentence index of each flat token."""
        return np.repeat(np.arange(len(self.tokens)), np.diff(self.offsets))

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


def _offsets_within(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., n - 1 for each length n, concatenated: a token's place in its span."""
    return np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)


_STR = {str}


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
