"""TrainStats: everything the methods need from a training set, computed once.

Holds the training vocabulary, a token x label count matrix (label = entity type without
prefix, or ``O``), the mention counts by (surface text, type), and the training token ids
sentence by sentence (for counting arbitrary token sequences on demand).  Stats merge
(``a.merge(b)`` equals the stats of ``a``'s data followed by ``b``'s) and round-trip
through one versioned ``.npz`` file.

A *shareable* file (``save(path, shareable=True)``) leaves the running text out (token ids
and sentence starts) and keeps instead the one thing the methods read from it: the training
occurrences (annotated or not) of every training mention's token sequence, as written and
lowercased.  That is enough because eCon, the only attribute that counts token sequences,
is 0 for a test span whose (text, type) is not a training mention, whatever its occurrences;
every other figure comes from the vocabulary counts and the mention list.
"""
from __future__ import annotations

import io
import json
import os
import sys
import zipfile
from collections import Counter
from functools import cached_property, reduce
from itertools import chain, repeat
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ._util import no_gc, write_atomic
from .corpus import (QUOTE, STDIN, Corpus, decode_tag_ids, decode_text, from_dataset, parse_conll, quote, read_conll,
                     tag_names)
from .schemes import check_sentence, decode

FORMAT = "tough-ner-train-stats"
VERSION = 1
_META = "meta.json"


class TrainStats:
    """Training-set statistics.

    Attributes:
        vocab: token strings; a token's id is its index (first-occurrence order).
        labels: ``"O"`` then the entity types, sorted; the columns of ``label_counts``.
        label_counts: ``int64 [len(vocab), len(labels)]`` occurrences of each token with each label.
        mentions: ``{(text, type): count}`` of training mentions (text = tokens joined by spaces).
        token_ids: ``int32`` ids of all training tokens, sentences concatenated.
        sentence_starts: ``int64`` start of each sentence in ``token_ids``, plus the total.
        shareable: True when the two above are absent (a shareable file: module docstring);
            reading them then raises a ``ValueError`` naming what needed them.
    """

    def __init__(self, vocab: List[str], labels: List[str], label_counts: np.ndarray,
                 mentions: Dict[Tuple[str, str], int], token_ids: Optional[np.ndarray] = None,
                 sentence_starts: Optional[np.ndarray] = None, *, n_sentences: Optional[int] = None,
                 mention_occurrences: Optional[Dict[str, int]] = None,
                 lower_occurrences: Optional[Dict[str, int]] = None):
        """Full statistics take ``token_ids`` and ``sentence_starts``; shareable ones (no
        running text) take instead ``n_sentences`` and the occurrence tables of the training
        mention texts, as written and lowercased (``{text: occurrences}``)."""
        self.vocab = vocab
        self.labels = labels
        self.label_counts = label_counts
        self.mentions = mentions
        self.shareable = token_ids is None
        if self.shareable:
            if sentence_starts is not None or n_sentences is None or mention_occurrences is None \
                    or lower_occurrences is None:
                raise TypeError("statistics without token_ids need n_sentences, mention_occurrences and "
                                "lower_occurrences (and no sentence_starts)")
            self._text = None
            self._n_sentences = n_sentences
            self._n_tokens = int(label_counts.sum())
            self.__dict__["_mention_occurrences"] = mention_occurrences
            self._lower_occurrences = lower_occurrences
        else:
            self._text = (token_ids, sentence_starts)
            self._n_sentences = len(sentence_starts) - 1
            self._n_tokens = int(sentence_starts[-1])
        if self._n_tokens == 0:  # every method would divide by nothing later, far from the cause
            raise ValueError("training data holds no sentence (no token): check the training file or dataset")
        self.token_index = {token: i for i, token in enumerate(vocab)}
        self.label_index = {label: i for i, label in enumerate(labels)}

    # ---- building -------------------------------------------------------------------
    @classmethod
    def from_lists(cls, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]],
                   first: int = 0) -> "TrainStats":
        """Stats of sentences given as token lists and tag lists (any scheme); errors number
        the sentences from ``first`` (a shard's place in the whole data)."""
        with no_gc():
            return cls._from_lists(tokens, tags, first)

    @classmethod
    def _from_lists(cls, tokens, tags, first: int = 0) -> "TrainStats":
        _check_sentences(tokens, tags, first)
        flat = list(chain.from_iterable(tokens))
        token_index = {token: i for i, token in enumerate(dict.fromkeys(flat))}
        token_ids = np.fromiter(map(token_index.__getitem__, flat), dtype=np.int32, count=len(flat))
        starts = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum([len(sentence) for sentence in tokens], out=starts[1:])
        spans = [decode(sentence_tags, s) for s, sentence_tags in enumerate(tags, first)]
        label_names = ["O"] + sorted({entity_type for sentence in spans for _, _, entity_type in sentence})
        label_index = {label: i for i, label in enumerate(label_names)}
        mentions: Counter = Counter()
        # Each token's label id: +id at a mention's start, -id at its end, summed along.
        delta = np.zeros(len(flat) + 1, dtype=np.int64)
        for sentence, sentence_spans, offset in zip(tokens, spans, starts.tolist()):
            for start, end, entity_type in sentence_spans:
                mentions[(" ".join(sentence[start:end]), entity_type)] += 1
                delta[offset + start] += label_index[entity_type]
                delta[offset + end] -= label_index[entity_type]
        label_ids = np.cumsum(delta[:-1])
        counts = np.bincount(token_ids.astype(np.int64) * len(label_names) + label_ids,
                             minlength=len(token_index) * len(label_names))
        return cls(list(token_index), label_names, counts.reshape(len(token_index), len(label_names)),
                   dict(mentions), token_ids, starts)

    @classmethod
    def from_corpus(cls, corpus: Corpus) -> "TrainStats":
        return cls.from_lists(corpus.tokens, corpus.tags)

    @classmethod
    def from_conll(cls, path: str | os.PathLike) -> "TrainStats":
        """Stats of a CoNLL file (token first, tag last)."""
        return cls.from_corpus(read_conll(path))

    @classmethod
    def from_dataset(cls, dataset, tokens_column: str = "tokens", tags_column: str = "ner_tags",
                     num_proc: Optional[int] = None) -> "TrainStats":
        """Stats of a ``datasets.Dataset``; with ``num_proc`` > 1, built in parallel by
        ``dataset.map`` over contiguous shards and merged in order (same result)."""
        if not num_proc or num_proc < 2 or len(dataset) < 2:
            return cls.from_corpus(from_dataset(dataset, tokens_column, tags_column))
        from_dataset(dataset.select(range(0)), tokens_column, tags_column)  # column checks
        names = tag_names(dataset, tags_column)
        shard = -(-len(dataset) // num_proc)
        parts = dataset.map(_stats_bytes_of_batch, batched=True, batch_size=shard, num_proc=num_proc, with_indices=True,
                            remove_columns=dataset.column_names, load_from_cache_file=False,
                            fn_kwargs={"tokens_column": tokens_column, "tags_column": tags_column, "names": names})
        blobs = [blob for blob in parts["stats"] if blob]  # a shard of empty sentences gives nothing
        if not blobs:
            raise ValueError("training data holds no sentence (no token): check the training file or dataset")
        return reduce(TrainStats.merge, (cls.from_bytes(blob) for blob in blobs))

    @classmethod
    def coerce(cls, train) -> "TrainStats":
        """Accept what ``train=`` may be: TrainStats, a saved stats file, a CoNLL file, or a Dataset."""
        if isinstance(train, TrainStats):
            return train
        if train is None:
            raise ValueError("training statistics are required: pass train= a TrainStats, a stats file, "
                             "a CoNLL training file or a datasets.Dataset")
        if isinstance(train, (str, os.PathLike)):
            path = os.fspath(train)
            if path in STDIN:  # a stats file or CoNLL text on standard input
                blob = sys.stdin.buffer.read()
                if blob[:4] == b"PK\x03\x04":
                    return cls.from_bytes(blob, "<stdin>")
                return cls.from_corpus(parse_conll(decode_text(blob, "<stdin>"), name="<stdin>"))
            if os.path.isdir(path):
                raise IsADirectoryError(f"train={path!r} is a directory, not a stats or CoNLL file")
            if not os.path.isfile(path):
                raise FileNotFoundError(f"train={path!r}: no such file")
            if path.endswith(".npz") or zipfile.is_zipfile(path):
                return cls.load(path)
            return cls.from_conll(path)
        if hasattr(train, "column_names") and hasattr(train, "features"):
            return cls.from_dataset(train)
        raise TypeError(f"train= must be a TrainStats, a file path or a datasets.Dataset, not {type(train).__name__}")

    # ---- combining and comparing ------------------------------------------------------
    def merge(self, other: "TrainStats") -> "TrainStats":
        """Stats of this data followed by ``other``'s (full statistics only: how often one
        side's mention texts occur in the other side's text needs that text)."""
        self.require_text("merging statistics (occurrences of one side's mentions in the other side's text)")
        other.require_text("merging statistics (occurrences of one side's mentions in the other side's text)")
        token_index = dict(self.token_index)
        for token in other.vocab:
            token_index.setdefault(token, len(token_index))
        remap = np.fromiter((token_index[t] for t in other.vocab), dtype=np.int32, count=len(other.vocab))
        labels = ["O"] + sorted((set(self.labels) | set(other.labels)) - {"O"})
        label_index = {label: i for i, label in enumerate(labels)}
        counts = np.zeros((len(token_index), len(labels)), dtype=np.int64)
        counts[: len(self.vocab), [label_index[x] for x in self.labels]] += self.label_counts
        np.add.at(counts, (remap[:, None], np.array([label_index[x] for x in other.labels])[None, :]),
                  other.label_counts)
        mentions = Counter(self.mentions)
        mentions.update(other.mentions)
        return TrainStats(list(token_index), labels, counts, dict(mentions),
                          np.concatenate([self.token_ids, remap[other.token_ids]]).astype(np.int32),
                          np.concatenate([self.sentence_starts, other.sentence_starts[1:] + self.n_tokens]))

    def __eq__(self, other) -> bool:
        if not (isinstance(other, TrainStats) and self.shareable == other.shareable and self.vocab == other.vocab
                and self.labels == other.labels and np.array_equal(self.label_counts, other.label_counts)
                and self.mentions == other.mentions and self.n_sentences == other.n_sentences):
            return False
        if self.shareable:
            return (self._mention_occurrences == other._mention_occurrences
                    and self._lower_occurrences == other._lower_occurrences)
        return (np.array_equal(self.token_ids, other.token_ids)
                and np.array_equal(self.sentence_starts, other.sentence_starts))

    def __repr__(self) -> str:
        return (f"TrainStats({self.n_sentences} sentences, {self.n_tokens} tokens, {len(self.vocab)} types of token, "
                f"{self.n_mentions} mentions, labels={self.labels}{', shareable' if self.shareable else ''})")

    # ---- the running text (absent from shareable statistics) ----------------------------
    def require_text(self, what: str) -> None:
        """Raise a ``ValueError`` saying that ``what`` needs the training text, when these
        statistics come from a shareable file (which leaves it out)."""
        if self.shareable:
            raise ValueError(f"{what} needs the training text, which shareable statistics leave out: use the full "
                             "statistics (a stats file saved without shareable=True, or the training data itself)")

    @property
    def token_ids(self) -> np.ndarray:
        """``int32`` ids of all training tokens, sentences concatenated (full statistics only)."""
        self.require_text("the training token sequence (token_ids)")
        return self._text[0]

    @property
    def sentence_starts(self) -> np.ndarray:
        """``int64`` start of each sentence in ``token_ids``, plus the total (full statistics only)."""
        self.require_text("the training sentence boundaries (sentence_starts)")
        return self._text[1]

    # ---- simple views ---------------------------------------------------------------
    @property
    def n_tokens(self) -> int:
        return self._n_tokens

    @property
    def n_sentences(self) -> int:
        return self._n_sentences

    @property
    def n_mentions(self) -> int:
        return sum(self.mentions.values())

    def ids(self, tokens: Iterable[str]) -> np.ndarray:
        """Vocabulary ids of tokens, -1 for tokens never seen in training."""
        return np.fromiter(map(self.token_index.get, tokens, repeat(-1)), dtype=np.int64)

    def counts_of(self, tokens: Iterable[str]) -> np.ndarray:
        """``[n, len(labels)]`` training label counts of each token (zeros when unseen)."""
        ids = self.ids(tokens)
        counts = self.label_counts[ids]
        counts[ids < 0] = 0
        return counts

    @cached_property
    def token_totals(self) -> np.ndarray:
        """Training occurrences of each vocabulary token (any label)."""
        return self.label_counts.sum(axis=1)

    @cached_property
    def lower_vocab(self) -> frozenset:
        """The vocabulary lowercased (the casing check)."""
        return frozenset(token.lower() for token in self.vocab)

    @cached_property
    def mention_text_counts(self) -> Dict[str, int]:
        """``{text: count}`` of training mentions, any type."""
        counts: Dict[str, int] = {}
        with no_gc():  # many small objects: the collector would rescan the caller's data each time
            for (text, _), count in self.mentions.items():
                counts[text] = counts.get(text, 0) + count
        return counts

    def occurrences(self, sequences: Sequence[Sequence[str]], texts: Optional[Sequence[str]] = None) -> np.ndarray:
        """Training occurrences (annotated or not, within one sentence) of each token sequence
        (``texts``: the sequences joined by single spaces, when the caller has them).

        One token: its vocabulary count.  A training mention's token sequence: a table built
        once per statistics (so the time per call does not grow with the training data).  Any
        other sequence: counted from the training text (``_scan``); shareable statistics hold
        no text and answer only sequences with a token never seen in training (0).
        """
        texts = map(" ".join, sequences) if texts is None else texts
        table = self._mention_occurrences
        # The table holds a text's count for the tokens it splits into at spaces: only a
        # sequence with as many tokens as its text has words (no token holding a space) reads it.
        counts = np.fromiter((table.get(text, -1) if len(sequence) == text.count(" ") + 1 else -1
                              for sequence, text in zip(sequences, texts)),
                             dtype=np.int64, count=len(sequences))
        rest = np.flatnonzero(counts < 0).tolist()
        if rest:
            counts[rest] = self._scan([sequences[i] for i in rest])
        return counts

    @cached_property
    def _mention_occurrences(self) -> Dict[str, int]:
        """``{text: training occurrences of text.split(" ")}`` for every training mention text
        (a mention's tokens joined by spaces: the split gives them back unless a token holds a
        space, and ``occurrences`` only looks up sequences without one)."""
        texts = list(self.mention_text_counts)
        with no_gc():
            return dict(zip(texts, self._scan([text.split(" ") for text in texts]).tolist()))

    def _scan(self, sequences: Sequence[Sequence[str]]) -> np.ndarray:
        """``occurrences`` counted from the training token ids, for each needed length at once."""
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        ids = self.ids(chain.from_iterable(sequences))
        starts = np.cumsum(lengths) - lengths
        unknown = np.zeros(len(sequences), dtype=bool)  # a token never seen: no occurrence
        unknown[np.repeat(np.arange(len(sequences)), lengths)[ids < 0]] = True
        counts = np.zeros(len(sequences), dtype=np.int64)
        for length in np.unique(lengths[lengths > 0]).tolist():
            chosen = np.flatnonzero((lengths == length) & ~unknown)
            if len(chosen) == 0:
                continue
            queries = ids[starts[chosen, None] + np.arange(length)]
            if length == 1:
                counts[chosen] = self.token_totals[queries[:, 0]]
                continue
            self.require_text(f"counting the training occurrences of {quote(' '.join(sequences[chosen[0]]))} "
                              "(not a training mention)")
            distinct, back = np.unique(queries, axis=0, return_inverse=True)
            counts[chosen] = self._count_windows(distinct)[back.reshape(-1)]
        return counts

    def _count_windows(self, queries: np.ndarray) -> np.ndarray:
        """Training occurrences inside one sentence of each row of ``queries`` (distinct rows of
        token ids, all of one length): the start positions whose tokens could match are
        narrowed column by column (a lookup per vocabulary id), the windows left are hashed
        and matched to the queries' hashes, and every match is confirmed token by token, so a
        hash collision never counts."""
        length = queries.shape[1]
        token_ids = self.token_ids
        allowed = np.zeros(len(self.vocab), dtype=bool)
        allowed[queries[:, 0]] = True
        positions = np.flatnonzero(allowed[token_ids[: max(self.n_tokens - length + 1, 0)]])
        positions = positions[self._sentence_ends[positions] >= positions + length]  # inside one sentence
        for j in range(1, length):
            allowed[:] = False
            allowed[queries[:, j]] = True
            positions = positions[allowed[token_ids[positions + j]]]
        windows = token_ids[positions[:, None] + np.arange(length)]
        weights = _window_weights(length)
        with np.errstate(over="ignore"):
            query_hash = (queries.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
            window_hash = (windows.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
        order = np.argsort(query_hash, kind="stable")
        sorted_hash = query_hash[order]
        if len(sorted_hash) > 1 and (sorted_hash[1:] == sorted_hash[:-1]).any():  # two queries, one hash
            _, inverse = np.unique(np.concatenate([windows, queries]), axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            found = np.bincount(inverse[: len(windows)], minlength=int(inverse.max()) + 1)
            return found[inverse[len(windows):]]
        slot = np.minimum(np.searchsorted(sorted_hash, window_hash), len(order) - 1)
        which = order[slot]
        same = (sorted_hash[slot] == window_hash) & (windows == queries[which]).all(axis=1)
        return np.bincount(which[same], minlength=len(queries))

    @cached_property
    def _sentence_ends(self) -> np.ndarray:
        """End of each training token's sentence in ``token_ids``."""
        return np.repeat(self.sentence_starts[1:], np.diff(self.sentence_starts))

    def lowercased(self) -> "TrainStats":
        """These statistics with every token and mention text lowercased (counts merged)."""
        if "_lowercased" not in self.__dict__:
            index: Dict[str, int] = {}
            remap = np.fromiter((index.setdefault(token.lower(), len(index)) for token in self.vocab),
                                dtype=np.int32, count=len(self.vocab))
            counts = np.zeros((len(index), len(self.labels)), dtype=np.int64)
            np.add.at(counts, remap, self.label_counts)
            mentions: Counter = Counter()
            for (text, entity_type), count in self.mentions.items():
                mentions[(text.lower(), entity_type)] += count
            parts = (list(index), list(self.labels), counts, dict(mentions))
            if self.shareable:  # lowercasing twice changes nothing: its own lowercased table is the same
                lowered = TrainStats(*parts, n_sentences=self.n_sentences, mention_occurrences=self._lower_occurrences,
                                     lower_occurrences=self._lower_occurrences)
            else:
                lowered = TrainStats(*parts, remap[self.token_ids], self.sentence_starts)
            self.__dict__["_lowercased"] = lowered
        return self.__dict__["_lowercased"]

    def mention_types(self) -> Dict[str, Counter]:
        """``{text: Counter(type -> count)}`` of training mentions (built once; read, never change it)."""
        return self._mention_types

    @cached_property
    def _mention_types(self) -> Dict[str, Counter]:
        by_text: Dict[str, Counter] = {}
        with no_gc():
            for (text, entity_type), count in self.mentions.items():
                by_text.setdefault(text, Counter())[entity_type] = count
        return by_text

    # ---- persistence ------------------------------------------------------------------
    def save(self, path: str | os.PathLike, shareable: bool = False) -> None:
        """Write one versioned file (``.npz``; numpy arrays plus a JSON header), atomically: a
        kill mid-write leaves any previous file intact.  ``shareable``: leave the training text
        out (module docstring; README "Shareable statistics" says what the file still reveals)."""
        write_atomic(path, self.to_bytes(shareable))

    def to_bytes(self, shareable: bool = False) -> bytes:
        meta = {"format": FORMAT, "version": VERSION, "vocab": self.vocab, "labels": self.labels,
                "mentions": [[text, entity_type, count] for (text, entity_type), count in self.mentions.items()]}
        arrays = {"label_counts": self.label_counts}
        if shareable or self.shareable:  # statistics without the text can only be written without it
            lowered = self._lower_occurrences if self.shareable else self.lowercased()._mention_occurrences
            meta.update(shareable=True, n_sentences=self.n_sentences,
                        occurrences=sorted(self._mention_occurrences.items()),
                        lower_occurrences=sorted(lowered.items()))
        else:
            arrays.update(token_ids=self.token_ids, sentence_starts=self.sentence_starts)
        buffer = io.BytesIO()
        np.savez(buffer, **{_META: np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)}, **arrays)
        return buffer.getvalue()

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TrainStats":
        """Read a file written by ``save``; a corrupt or foreign file is a ``ValueError``."""
        with open(path, "rb") as handle:
            return cls.from_bytes(handle.read(), source=os.fspath(path))

    @classmethod
    def from_bytes(cls, blob: bytes, source: str = "stats bytes") -> "TrainStats":
        """Statistics from ``to_bytes`` output.  Everything is checked before anything large
        is allocated (member names, declared sizes, array headers), then every value: a
        corrupt, crafted or foreign file is a ``ValueError``, never a wrong result."""
        arguments, shareable = _read_archive(blob, source)
        return cls(*arguments, **shareable)

    # ---- descriptive statistics (HardEval Tables 1 and 2) --------------------------------
    def describe(self) -> Dict[str, int]:
        """Training mentions, ambiguous mentions (occurrences of surface strings annotated
        with 2+ types), unique mention strings and ambiguous unique strings."""
        by_text = self.mention_types()
        ambiguous = {text for text, types in by_text.items() if len(types) > 1}
        return {"mentions": self.n_mentions,
                "ambiguous_mentions": sum(sum(by_text[text].values()) for text in ambiguous),
                "unique_mentions": len(by_text),
                "ambiguous_unique_mentions": len(ambiguous)}

    def describe_test(self, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]]) -> Dict[str, int]:
        """An evaluation set's mentions, unseen mentions (surface string never a training
        mention of any type), unique strings and unseen unique strings."""
        texts = [" ".join(sentence[start:end])
                 for s, (sentence, sentence_tags) in enumerate(zip(tokens, tags))
                 for start, end, _ in decode(sentence_tags, s)]
        seen = self.mention_types()
        unique = set(texts)
        return {"mentions": len(texts),
                "unseen_mentions": sum(text not in seen for text in texts),
                "unique_mentions": len(unique),
                "unseen_unique_mentions": sum(text not in seen for text in unique)}


def _window_weights(length: int) -> np.ndarray:
    """Odd 64-bit multipliers of a window's token ids in its hash: fixed per length (the hash
    only speeds up matching in memory; ``_count_windows`` confirms every match)."""
    return np.random.default_rng(length).integers(1, 2 ** 63, size=length, dtype=np.uint64) | np.uint64(1)


def _check_sentences(tokens, tags, first: int = 0) -> None:
    if isinstance(tokens, str) or isinstance(tags, str):
        raise ValueError("tokens and tags must be lists of sentences, not one string")
    if len(tokens) != len(tags):
        raise ValueError(f"{len(tokens)} token sentences but {len(tags)} tag sentences")
    for s, (sentence, sentence_tags) in enumerate(zip(tokens, tags), first):
        check_sentence(sentence, s, "tokens")
        check_sentence(sentence_tags, s)
        if len(sentence) != len(sentence_tags):
            raise ValueError(f"sentence {s}: {len(sentence)} tokens but {len(sentence_tags)} tags")
        if not all(type(token) is str for token in sentence):
            i = next(i for i, token in enumerate(sentence) if type(token) is not str)
            raise ValueError(f"sentence {s}, position {i}: token {sentence[i]!r} is a "
                             f"{type(sentence[i]).__name__}, not a string")


def _stats_bytes_of_batch(batch, indices, tokens_column, tags_column, names):
    first = indices[0] if indices else 0  # errors give the sentence's index in the whole dataset
    tags = decode_tag_ids(batch[tags_column], names, first)
    if not any(batch[tokens_column]):
        _check_sentences(batch[tokens_column], tags, first)
        return {"stats": [b""]}
    return {"stats": [TrainStats.from_lists(batch[tokens_column], tags, first).to_bytes()]}


# ---- validated loading --------------------------------------------------------------------
# Each array of the file: its dtype (as written by to_bytes) and number of dimensions.
_ARRAYS = {_META: (np.uint8, 1), "label_counts": (np.int64, 2), "token_ids": (np.int32, 1),
           "sentence_starts": (np.int64, 1)}
_TEXT = ("token_ids", "sentence_starts")  # the running text, left out of a shareable file
# np.savez stores members uncompressed; a re-compressed file may shrink, but a member that
# would expand beyond this factor of the whole file (plus 1 MiB) is refused unread (zip bomb).
MAX_EXPANSION = 100


def _read_archive(blob: bytes, source: str):
    def bad(reason: str) -> ValueError:
        return ValueError(f"{source} is not a readable tough-ner stats file ({reason})")

    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
        infos = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise bad(str(error)) from None
    expected = {name + ".npy" for name in _ARRAYS}
    if set(infos) == {name + ".npy" for name in _ARRAYS if name not in _TEXT}:
        expected = set(infos)  # a shareable file: no running text (its metadata must say so)
    if set(infos) != expected:
        missing, extra = sorted(expected - set(infos)), sorted(set(infos) - expected)
        raise bad(f"missing {missing}, unexpected {extra}"[:QUOTE])
    declared = sum(info.file_size for info in infos.values())
    if declared > MAX_EXPANSION * len(blob) + 2 ** 20:
        raise ValueError(f"{source}: its members declare {declared} bytes uncompressed from a {len(blob)}-byte "
                         f"file; refused unread (a tough-ner stats file is stored uncompressed)")
    arrays = {}
    for name, (dtype, ndim) in _ARRAYS.items():
        if name + ".npy" not in infos:
            continue
        info = infos[name + ".npy"]
        try:
            with archive.open(info) as member:  # the header first: refuse before allocating
                version = np.lib.format.read_magic(member)
                if version not in ((1, 0), (2, 0)):
                    raise bad(f"{name} has .npy format version {version}")
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, found = read_header(member)
                header = member.tell() if hasattr(member, "tell") else None
            if found != np.dtype(dtype) or len(shape) != ndim or fortran:
                raise bad(f"{name} is {found} of {len(shape)} dimension(s), expected {np.dtype(dtype)} of {ndim}")
            size = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
            if header is not None and header + size != info.file_size:
                raise bad(f"{name} declares {info.file_size} bytes but its header describes {header + size}")
            with archive.open(info) as member:
                arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
        except ValueError as error:
            if str(error).startswith(source):
                raise
            raise bad(str(error)[:QUOTE]) from None
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError) as error:  # damaged data, CRC mismatch
            raise bad(str(error)[:QUOTE]) from None
    try:
        meta = json.loads(arrays.pop(_META).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise bad(f"metadata: {error}"[:QUOTE]) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{source} is not a tough-ner stats file")
    if meta.get("version") != VERSION:
        raise ValueError(f"{source} has stats format version {meta.get('version')}; "
                         f"this tough-ner reads version {VERSION}: rebuild the stats")
    return _check_contents(meta, arrays, source)


def _check_contents(meta: dict, arrays: Dict[str, np.ndarray], source: str):
    def wrong(reason: str) -> ValueError:
        return ValueError(f"{source} is inconsistent: {reason}")

    missing = [key for key in ("vocab", "labels", "mentions") if key not in meta]
    if missing:
        raise wrong(f"its metadata lacks {', '.join(missing)}")
    vocab, labels, mention_rows = meta["vocab"], meta["labels"], meta["mentions"]
    if not isinstance(vocab, list) or not all(type(t) is str for t in vocab) or len(set(vocab)) != len(vocab):
        raise wrong("the vocabulary is not a list of distinct strings")
    if (not isinstance(labels, list) or not labels or labels[0] != "O" or len(set(labels)) != len(labels)
            or not all(type(x) is str and x and x != "O" for x in labels[1:])):
        raise wrong("the labels are not 'O' followed by distinct entity types")
    entity_types = set(labels[1:])
    mentions: Dict[Tuple[str, str], int] = {}
    if not isinstance(mention_rows, list):
        raise wrong("the mentions are not a list")
    for row in mention_rows:
        if (not isinstance(row, list) or len(row) != 3 or type(row[0]) is not str or row[1] not in entity_types
                or type(row[2]) is not int or row[2] < 1 or (row[0], row[1]) in mentions):
            raise wrong(f"mention {quote(json.dumps(row))} is not a distinct [text, known type, count >= 1]")
        mentions[(row[0], row[1])] = row[2]
    counts = arrays["label_counts"]
    if counts.shape != (len(vocab), len(labels)):
        raise wrong(f"label counts of shape {counts.shape} for {len(vocab)} tokens and {len(labels)} labels")
    if counts.size and counts.min() < 0:
        raise wrong("negative label counts")
    if bool(meta.get("shareable")) != ("token_ids" not in arrays):
        raise wrong("its metadata and its members disagree on whether it holds the training text")
    if meta.get("shareable"):
        return (vocab, labels, counts, mentions), _check_shareable(meta, mentions, wrong)
    ids, starts = arrays["token_ids"], arrays["sentence_starts"]
    if ids.size and (ids.min() < 0 or ids.max() >= len(vocab)):
        raise wrong(f"token ids outside the vocabulary of {len(vocab)}")
    if len(starts) < 1 or starts[0] != 0 or starts[-1] != len(ids) or (np.diff(starts) < 0).any():
        raise wrong("sentence starts do not run from 0 to the number of tokens")
    if not np.array_equal(counts.sum(axis=1), np.bincount(ids, minlength=len(vocab))):
        raise wrong("label counts disagree with the training token ids")
    return (vocab, labels, counts, mentions, ids, starts), {}


def _check_shareable(meta: dict, mentions, wrong) -> dict:
    """The keyword arguments of shareable statistics, checked: each occurrence table covers
    exactly the mention texts (as written, lowercased) with counts >= 0."""
    n_sentences = meta.get("n_sentences")
    if type(n_sentences) is not int or n_sentences < 0:
        raise wrong(f"n_sentences is {quote(json.dumps(n_sentences))}, not a count")
    texts = {text for text, _ in mentions}
    tables = {}
    for key, expected in (("occurrences", texts), ("lower_occurrences", {text.lower() for text in texts})):
        rows = meta.get(key)
        if not isinstance(rows, list) or not all(isinstance(row, list) and len(row) == 2 and type(row[0]) is str
                                                 and type(row[1]) is int and row[1] >= 0 for row in rows):
            raise wrong(f"its {key} are not [text, count >= 0] rows")
        table = dict(rows)
        if len(table) != len(rows) or set(table) != expected:
            raise wrong(f"its {key} do not cover exactly the training mention texts")
        tables[key] = table
    return {"n_sentences": n_sentences, "mention_occurrences": tables["occurrences"],
            "lower_occurrences": tables["lower_occurrences"]}
