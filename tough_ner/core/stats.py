"""TrainStats: everything the methods need from a training set, computed once.

Holds the training vocabulary, a token x label count matrix (label = entity type without
prefix, or ``O``), the mention counts by (surface text, type), and either the training
token ids sentence by sentence (``keep_text=True``: for counting arbitrary token sequences
on demand) or, by default, the occurrence tables described below, so a build's memory is
bounded by the statistics, not the text.  Stats that keep the text merge (``a.merge(b)``
equals the stats of ``a``'s data followed by ``b``'s); ``build_distributed`` merges without
it; both forms round-trip through one versioned ``.npz`` file.

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
import pickle
from collections import Counter
from functools import cached_property
from itertools import chain, repeat
from operator import add, itemgetter
from typing import Dict, Iterable, List, NamedTuple, NoReturn, Optional, Sequence, Tuple, Union

import numpy as np

from .._util import QUOTE, no_gc, quote, write_atomic
from .batch import _offsets_within, _span_texts, span_positions
from .corpus import (PIECE_BYTES, STDIN, Corpus, Numbering, Renumbering, Slots, decode_tag_ids, newline_joined,
                     peek_stdin, read_bytes, read_limits, read_pieces, factorize, scan, source_name, tag_names,
                     under_limits, _Growing)
from .schemes import DEFAULT_DECODING, PREFIX_CODES, check_decoding, check_sentence, decode, decode_flat, parse_label
from .sparse import compact_counts

FORMAT = "tough-ner-train-stats"
VERSION = 2  # 2: label counts sparse (label_starts, label_columns, label_values), decoding recorded
READS = (1, 2)  # 1: a dense label_counts table
_META = "meta.json"
_COUNTED_AT_ONCE = 2 ** 22  # tokens whose label counts one bincount adds (its keys: 32 MB)
_SPILL_CHUNK = 2 ** 20  # token ids read back at once from a build's temporary file (4 MB; 8-byte positions)
NO_TOKEN = "training data holds no sentence (no token)"  # statistics of nothing: refused, wherever built


class TrainStats:
    """Training-set statistics.

    Attributes:
        vocab: token strings; a token's id is its index (first-occurrence order).
        labels: ``"O"`` then the entity types, sorted; the columns of ``label_counts``.
        label_counts: ``LabelCounts``, the occurrences of each token (row: its id) with each
            label (column: its index in ``labels``), sparse.
        mentions: ``{(text, type): count}`` of training mentions (text = tokens joined by spaces),
            first-seen order; statistics built from the data count them when first read.
        token_ids: ``int32`` ids of all training tokens, sentences concatenated.
        sentence_starts: ``int64`` start of each sentence in ``token_ids``, plus the total.
        shareable: True when the two above are absent (built without ``keep_text``, or a
            shareable file: module docstring); reading them then raises a ``ValueError``
            naming what needed them and the option.
        decoding: ``(scheme, mode, repair)`` the training tags were decoded with
            (``schemes.check_decoding``; the lenient rule by default).  A method refuses a test
            batch decoded otherwise (``checks.check_inputs``).
    """

    def __init__(self, vocab: List[str], labels: List[str], label_counts: Union["LabelCounts", np.ndarray],
                 mentions: Union[Dict[Tuple[str, str], int], "MentionSpans"], token_ids: Optional[np.ndarray] = None,
                 sentence_starts: Optional[np.ndarray] = None, *, n_sentences: Optional[int] = None,
                 mention_occurrences: Optional[Dict[str, int]] = None,
                 lower_occurrences: Optional[Dict[str, int]] = None,
                 decoding: Tuple[str, str, str] = DEFAULT_DECODING):
        """Full statistics take ``token_ids`` and ``sentence_starts``; shareable ones (no
        running text) take instead ``n_sentences`` and the occurrence tables of the training
        mention texts, as written and lowercased (``{text: occurrences}``).
        ``mentions`` may be the ``MentionSpans`` of the running text instead (full statistics):
        counted when first read (HardEval, for one, never reads them)."""
        if isinstance(mentions, MentionSpans):
            if token_ids is None:
                raise TypeError("mention spans need the running text (token_ids)")
            self._mention_spans = mentions
        else:
            unknown = set(map(itemgetter(1), mentions)).difference(labels[1:])
            if unknown:  # every mention is typed with one of the labels, as any built or loaded statistics are
                raise ValueError(f"mentions typed {sorted(unknown)[:5]} but the labels are {labels}: "
                                 "inconsistent statistics")
            self.mentions = mentions
        self.vocab = vocab
        self.labels = labels
        self.label_counts = label_counts if isinstance(label_counts, LabelCounts) else \
            LabelCounts.from_dense(np.asarray(label_counts, dtype=np.int64))
        self.shareable = token_ids is None
        if self.shareable:
            if sentence_starts is not None or n_sentences is None or mention_occurrences is None \
                    or lower_occurrences is None:
                raise TypeError("statistics without token_ids need n_sentences, mention_occurrences and "
                                "lower_occurrences (and no sentence_starts)")
            self._text = None
            self._n_sentences = n_sentences
            self._n_tokens = self.label_counts.total()
            self.__dict__["_mention_occurrences"] = mention_occurrences
            self._lower_occurrences = lower_occurrences
        else:
            self._text = (token_ids, sentence_starts)
            self._n_sentences = len(sentence_starts) - 1
            self._n_tokens = int(sentence_starts[-1])
        if self._n_tokens == 0:  # every method would divide by nothing later, far from the cause
            raise ValueError(f"{NO_TOKEN}: check the training file or dataset")
        self.label_index = {label: i for i, label in enumerate(labels)}
        self.decoding = check_decoding(*decoding)

    @cached_property
    def token_index(self) -> Dict[str, int]:
        """``{token: id}`` (a builder that holds it already sets it)."""
        return dict(zip(self.vocab, range(len(self.vocab))))

    @cached_property
    def mentions(self) -> Dict[Tuple[str, str], int]:
        spans = self._mention_spans  # dropped once counted (an interrupted count can be read again)
        texts = _span_texts(self.vocab, self.token_ids, spans.starts, spans.ends)
        counted = dict(Counter(zip(texts, np.array(self.labels, dtype=object)[spans.labels].tolist())))
        self.__dict__.pop("_mention_spans", None)
        return counted

    # ---- building -------------------------------------------------------------------
    @classmethod
    def from_lists(cls, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]],
                   first: int = 0, keep_text: bool = True, *, scheme: str = "auto", mode: str = "lenient",
                   repair: str = "conlleval") -> "TrainStats":
        """Stats of sentences given as token lists and tag lists; errors number the sentences
        from ``first`` (a shard's place in the whole data).  The caller holds the text in
        memory already, so the statistics keep it by default (``keep_text``: ``from_conll``).
        ``scheme``, ``mode``, ``repair``: how the tags are decoded (``schemes``; every build
        takes them, and the statistics record them)."""
        builder = _Builder(keep_text, check_decoding(scheme, mode, repair))
        with no_gc():
            builder.add_sentences(tokens, tags, first)
            return builder.stats()

    @classmethod
    def from_corpus(cls, corpus: Corpus, keep_text: bool = True, **decoding) -> "TrainStats":
        return cls.from_lists(corpus.tokens, corpus.tags, keep_text=keep_text, **decoding)

    @classmethod
    def from_conll(cls, path: str | os.PathLike, piece_bytes: int = PIECE_BYTES, keep_text: bool = False, *,
                   scheme: str = "auto", mode: str = "lenient", repair: str = "conlleval") -> "TrainStats":
        """Stats of a CoNLL file (token first, tag last), read in pieces of about
        ``piece_bytes`` (each cut after a blank line) added up one after the other (errors
        still name the file's line).  Memory grows with the statistics, not with the text:
        the running text is not kept, only the training occurrences of every mention text
        (``without_text``), unless ``keep_text`` (needed by ``merge``, ``token_ids`` and
        entity attacks with ``train=``); ``scheme``, ``mode``, ``repair``: as ``from_lists``."""
        return cls._from_pieces([path], piece_bytes, _Builder(keep_text, check_decoding(scheme, mode, repair)))

    @classmethod
    def _from_pieces(cls, paths, piece_bytes: int, builder: "_Builder") -> "TrainStats":
        """The statistics of CoNLL files read one after the other, as one text."""
        _add_pieces(paths, piece_bytes, builder)
        return builder.stats()

    @classmethod
    def from_dataset(cls, dataset, tokens_column: str = "tokens", tags_column: str = "ner_tags",
                     num_proc: Optional[int] = None, batch_size: int = 20_000, keep_text: bool = False, *,
                     scheme: str = "auto", mode: str = "lenient", repair: str = "conlleval") -> "TrainStats":
        """Stats of a ``datasets.Dataset`` or a streaming ``datasets.IterableDataset`` (string
        or ``ClassLabel`` tags), read as Arrow batches of ``batch_size`` sentences added in
        order, so memory holds one batch at a time besides the statistics.  With ``num_proc``
        > 1 (a ``Dataset`` only), contiguous shards are built by ``dataset.map`` in parallel
        and merged in order: the same result (the shards keep their text until merged).
        ``keep_text``, ``scheme``, ``mode``, ``repair``: as ``from_conll``."""
        decoding = check_decoding(scheme, mode, repair)
        _check_columns(dataset, tokens_column, tags_column)
        if num_proc and num_proc > 1 and not hasattr(dataset, "__len__"):
            raise ValueError("num_proc needs a datasets.Dataset: a stream (IterableDataset) is read in one process, "
                             "batch by batch")
        names = tag_names(dataset, tags_column) if getattr(dataset, "features", None) else None
        if dataset.column_names is not None:  # a stream of unknown columns: _batches checks each batch
            dataset = dataset.select_columns([tokens_column, tags_column])
        if not num_proc or num_proc < 2 or not hasattr(dataset, "__len__") or len(dataset) < 2:
            builder = _Builder(keep_text, decoding)
            first = 0
            for tokens, tags in _batches(dataset, tokens_column, tags_column, batch_size):
                builder.add_columns(tokens, tags, names, first)
                first += len(tokens)
            return builder.stats()
        shard = -(-len(dataset) // num_proc)
        parts = dataset.with_format("arrow").map(
            _stats_bytes_of_batch, batched=True, batch_size=shard, num_proc=num_proc, with_indices=True,
            remove_columns=dataset.column_names, load_from_cache_file=False,
            fn_kwargs={"tokens_column": tokens_column, "tags_column": tags_column, "names": names,
                       "batch_size": batch_size, "decoding": decoding}).with_format(None)
        merger = _Merger()
        for blob, n_sentences in zip(parts["stats"], parts["sentences"]):
            if blob:
                merger.add(cls.from_bytes(blob))
            else:  # a shard of empty sentences: no statistics, but its sentences count
                merger.add_empty_sentences(n_sentences)
        merged = merger.result(decoding)
        return merged if keep_text else merged.without_text()

    @classmethod
    def merge_all(cls, parts: Iterable["TrainStats"]) -> "TrainStats":
        """Stats of several parts' data, in order: ``reduce(TrainStats.merge, parts)`` in one
        pass (each part is folded in as it comes, e.g. files loaded one at a time)."""
        merger = _Merger()
        for part in parts:
            # how often one part's mention texts occur in another part's text needs that text
            part.require_text("merging statistics (occurrences of one part's mentions in another part's text)")
            merger.add(part)
        return merger.result()

    @classmethod
    def coerce(cls, train, keep_text: bool = False, *, scheme: str = "auto", mode: str = "lenient",
               repair: str = "conlleval") -> "TrainStats":
        """Accept what ``train=`` may be: TrainStats, a saved stats file, a CoNLL file, or a
        Dataset (``keep_text``: built keeping the running text, for a caller that reads it;
        ``scheme``, ``mode``, ``repair``: how data is decoded, as ``from_lists``; statistics
        given built, or a saved file, keep the decoding they record)."""
        decoding = {"scheme": scheme, "mode": mode, "repair": repair}
        if isinstance(train, TrainStats):
            return train
        if train is None:
            raise ValueError("training statistics are required: pass train= a TrainStats, a stats file, "
                             "a CoNLL training file or a datasets.Dataset")
        if isinstance(train, (str, os.PathLike)):
            path = os.fspath(train)
            if path in STDIN:  # a stats file or CoNLL text on standard input, read as a file is: within the limits
                head = peek_stdin(4)  # a pipe has no end to look at: a stats file is known by its start
                if _looks_zipped(head, head):
                    return cls.from_bytes(read_bytes(path), "<stdin>")
                return cls.from_conll(path, keep_text=keep_text, **decoding)
            if os.path.isdir(path):
                raise IsADirectoryError(f"train={path!r} is a directory, not a stats or CoNLL file")
            if not os.path.isfile(path):
                raise FileNotFoundError(f"train={path!r}: no such file")
            if path.endswith(".npz") or _is_zip(path):
                return cls.load(path)
            return cls.from_conll(path, keep_text=keep_text, **decoding)
        if hasattr(train, "column_names") and hasattr(train, "features"):
            return cls.from_dataset(train, keep_text=keep_text, **decoding)
        raise TypeError(f"train= must be a TrainStats, a file path or a datasets.Dataset, not {type(train).__name__}")

    # ---- combining and comparing ------------------------------------------------------
    def merge(self, other: "TrainStats") -> "TrainStats":
        """Stats of this data followed by ``other``'s (statistics that keep the text only, as
        ``merge_all``)."""
        return TrainStats.merge_all((self, other))

    def __eq__(self, other) -> bool:
        """The same statistics: everything the methods read (vocabulary, labels, counts,
        mentions, sentences, the occurrences of every mention text), and the running text
        when both hold it (statistics without the text equal the ones with it they come from)."""
        if not (isinstance(other, TrainStats) and self.vocab == other.vocab
                and self.labels == other.labels and self.label_counts == other.label_counts
                and self.mentions == other.mentions and self.n_sentences == other.n_sentences
                and self.decoding == other.decoding):
            return False
        if self.shareable or other.shareable:
            mine, theirs = self.without_text(), other.without_text()
            return (mine._mention_occurrences == theirs._mention_occurrences
                    and mine._lower_occurrences == theirs._lower_occurrences)
        return (np.array_equal(self.token_ids, other.token_ids)
                and np.array_equal(self.sentence_starts, other.sentence_starts))

    def __repr__(self) -> str:
        return (f"TrainStats({self.n_sentences} sentences, {self.n_tokens} tokens, {len(self.vocab)} types of token, "
                f"{self.n_mentions} mentions, labels={_some(self.labels)}"
                f"{', without the text' if self.shareable else ''})")

    # ---- the running text (absent from shareable statistics) ----------------------------
    def require_text(self, what: str) -> None:
        """Raise a ``ValueError`` saying that ``what`` needs the training text, when these
        statistics leave it out (built without ``keep_text``, or from a shareable file)."""
        if self.shareable:
            raise ValueError(f"{what} needs the training text, which these statistics leave out (built without "
                             "keep_text=True, or loaded from a file saved without the text): build them with "
                             "keep_text=True (tough-ner stats --keep-text), and save them without --shareable")

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

    @cached_property
    def n_mentions(self) -> int:  # once: summing every call grew with the training data
        spans = self.__dict__.get("_mention_spans")
        return len(spans.starts) if spans is not None else sum(self.mentions.values())

    def ids(self, tokens: Iterable[str]) -> np.ndarray:
        """Vocabulary ids of tokens, -1 for tokens never seen in training."""
        return np.fromiter(map(self.token_index.get, tokens, repeat(-1)), dtype=np.int64)

    def counts_of(self, tokens: Iterable[str]) -> np.ndarray:
        """``[n, len(labels)]`` training label counts of each token (zeros when unseen): a dense
        table, for a few tokens (the methods read ``label_counts``)."""
        return self.label_counts.dense(self.ids(tokens))

    def train_counts(self, token: str) -> Dict[str, int]:
        """``{label: count}`` of one token in training (empty when unseen)."""
        counts = self.label_counts.row(self.token_index.get(token, -1))
        return {self.labels[column]: count for column, count in counts.items()}

    @cached_property
    def token_totals(self) -> np.ndarray:
        """Training occurrences of each vocabulary token (any label)."""
        return self.label_counts.totals

    @cached_property
    def lower_vocab(self) -> frozenset:
        """The vocabulary lowercased (the casing check)."""
        return frozenset(map(str.lower, self.vocab))

    @cached_property
    def spaced_tokens(self) -> bool:
        """Whether a training token holds a space (a CoNLL file's never do).  Without one, a
        training mention's text has one token more than spaces, so a test mention whose tokens
        hold a space (the one token "Paris Hilton") is no training mention, whatever its text."""
        return " " in "".join(self.vocab)

    @cached_property
    def mention_text_counts(self) -> Dict[str, int]:
        """``{text: count}`` of training mentions, any type."""
        table = self.mention_table
        return dict(zip(table.rows, table.totals.tolist()))

    @cached_property
    def mention_table(self) -> "MentionTable":
        """The training mentions by text, built once: a method looks each test span's text up
        once (``rows``), then reads the counts by numpy."""
        with no_gc():  # many small objects: the collector would rescan the caller's data each time
            texts, rows, _ = factorize([text for text, _ in self.mentions])
            columns = [self.label_index[name] for _, name in self.mentions]
        counts = LabelCounts.from_entries(rows, columns, list(self.mentions.values()), len(texts), len(self.labels))
        return MentionTable(dict(zip(texts, range(len(texts)))), counts, counts.totals)

    def occurrences(self, sequences: Sequence[Sequence[str]], texts: Optional[Sequence[str]] = None) -> np.ndarray:
        """Training occurrences (annotated or not, within one sentence) of each token sequence
        (``texts``: the sequences joined by single spaces, when the caller has them).

        One token: its vocabulary count.  A training mention's token sequence: a table built
        once per statistics (``_occurrence_table``: the time per call does not grow with the
        training data).  Any other sequence: counted from the training text (``_scan``);
        shareable statistics hold no text and answer only sequences with a token never seen
        in training (0).
        """
        texts = list(map(" ".join, sequences) if texts is None else texts)
        distinct, back, _ = factorize(texts)  # texts repeat (a test set names the same entities): each read once
        table = self._occurrence_table(distinct)
        # The table holds a text's count for the tokens it splits into at spaces: only a
        # sequence with as many tokens as its text has words (no token holding a space) reads it.
        words = np.fromiter(map(str.count, distinct, repeat(" ")), dtype=np.int64, count=len(distinct)) + 1
        in_table = np.fromiter(map(table.get, distinct, repeat(-1)), dtype=np.int64, count=len(distinct))[back]
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        counts = np.where(lengths == words[back], in_table, -1)
        rest = np.flatnonzero(counts < 0).tolist()
        if rest:
            counts[rest] = self._scan([sequences[i] for i in rest])
        return counts

    def _occurrence_table(self, texts: List[str]) -> Dict[str, int]:
        """The occurrence table a lookup of ``texts`` reads: the full table once built (or
        loaded); before that, the first lookup counts only the training mention texts among
        its own (a one-off command needs no more) and keeps them, and a later lookup needing
        any other builds the full table (repeated calls never rescan the training text)."""
        full = self.__dict__.get("_mention_occurrences")
        if full is not None:
            return full
        rows = self.mention_table.rows
        wanted = set(filter(rows.__contains__, texts))
        some = self.__dict__.get("_some_occurrences")
        if some is None:
            if not wanted:
                return {}
            wanted = list(wanted)
            with no_gc():
                some = self.__dict__["_some_occurrences"] = dict(zip(wanted, self._scan(
                    [text.split(" ") for text in wanted]).tolist()))
            return some
        return some if wanted.issubset(some) else self._mention_occurrences

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
        # the lengths present (np.unique would load numpy.ma: ~8 ms in a fresh process)
        for length in (np.flatnonzero(np.bincount(lengths)[1:]) + 1).tolist() if len(lengths) else []:
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
        token ids, all of one length)."""
        return _count_windows(self.token_ids, queries, len(self.vocab), self._sentence_ends)

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
            counts = self.label_counts.merge_rows(remap, len(index))
            mentions: Counter = Counter()
            for (text, entity_type), count in self.mentions.items():
                mentions[(text.lower(), entity_type)] += count
            parts = (list(index), list(self.labels), counts, dict(mentions))
            if self.shareable:  # lowercasing twice changes nothing: its own lowercased table is the same
                lowered = TrainStats(*parts, n_sentences=self.n_sentences, mention_occurrences=self._lower_occurrences,
                                     lower_occurrences=self._lower_occurrences, decoding=self.decoding)
            else:
                lowered = TrainStats(*parts, remap[self.token_ids], self.sentence_starts, decoding=self.decoding)
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
        out (module docstring; docs/training-statistics.md says what the file still reveals)."""
        write_atomic(path, self.to_bytes(shareable))

    def without_text(self) -> "TrainStats":
        """These statistics without the running text: the occurrences of every training
        mention text (as written and lowercased) counted once, the token sequence dropped;
        every method gives the same results (module docstring).  What ``from_conll`` builds
        by default, and what a shareable file holds."""
        if self.shareable:
            return self
        return TrainStats(self.vocab, self.labels, self.label_counts, self.mentions, n_sentences=self.n_sentences,
                          mention_occurrences=self._mention_occurrences,
                          lower_occurrences=self.lowercased()._mention_occurrences, decoding=self.decoding)

    def to_bytes(self, shareable: bool = False) -> bytes:
        meta = {"format": FORMAT, "version": VERSION, "vocab": self.vocab, "labels": self.labels,
                "mentions": [[text, entity_type, count] for (text, entity_type), count in self.mentions.items()]}
        meta["decoding"] = dict(zip(("scheme", "mode", "repair"), self.decoding))
        arrays = dict(zip(_SPARSE, self.label_counts.arrays()))
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
        with no_gc():  # the metadata's many small acyclic lists and strings
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


def _some(labels: List[str], shown: int = 12) -> str:
    """The labels for a message: all of them, or the first few and how many more (a training
    file may hold thousands of types: its one-line summary stays one line)."""
    if len(labels) <= shown:
        return str(labels)
    return f"{str(labels[:shown])[:-1]}, … {len(labels) - shown} more]"


def describe_decoding(decoding: Tuple[str, str, str]) -> str:
    """``(scheme, mode, repair)`` in words, for messages."""
    scheme, mode, repair = decoding
    return f"scheme={scheme}, mode={mode}" + (f", repair={repair}" if mode == "lenient" else "")


def _count_windows(token_ids: np.ndarray, queries: np.ndarray, n_vocab: int,
                   sentence_ends: Optional[np.ndarray] = None) -> np.ndarray:
    """Occurrences inside one sentence of each row of ``queries`` (distinct rows of token ids
    >= 0, all of one length) in ``token_ids``: ``_Windows.count``."""
    return _Windows(queries).count(token_ids, n_vocab, sentence_ends)


class _Windows:
    """Distinct rows of token ids (>= 0), all of one length, hashed and sorted once, so that a
    text given chunk after chunk pays per chunk only for its own windows."""

    def __init__(self, queries: np.ndarray):
        self.queries = queries
        self.length = queries.shape[1]
        self.weights = _window_weights(self.length)
        with np.errstate(over="ignore"):
            query_hash = (queries.astype(np.uint64) * self.weights).sum(axis=1, dtype=np.uint64)
        self.order = np.argsort(query_hash, kind="stable")
        self.sorted_hash = query_hash[self.order]
        self.collide = len(query_hash) > 1 and bool((self.sorted_hash[1:] == self.sorted_hash[:-1]).any())

    def count(self, token_ids: np.ndarray, n_vocab: int, sentence_ends: Optional[np.ndarray] = None,
              candidates: Optional[np.ndarray] = None) -> np.ndarray:
        """Occurrences of each query in ``token_ids``: sentences end at ``sentence_ends``
        (each token's sentence end), or, without them, at separators (-1) between sentences.
        The start positions whose tokens could match are narrowed column by column (a lookup
        per vocabulary id; a separator reads the last entry, never allowed), the windows left
        are hashed and matched to the queries' hashes, and every match is confirmed token by
        token, so a hash collision never counts.  ``candidates``: increasing positions known
        to hold every possible start (the first narrowing then reads only them)."""
        queries, length = self.queries, self.length
        allowed = np.zeros(n_vocab + 1, dtype=bool)
        allowed[queries[:, 0]] = True
        if candidates is None:
            positions = np.flatnonzero(allowed[token_ids[: max(len(token_ids) - length + 1, 0)]])
        else:
            positions = candidates[: np.searchsorted(candidates, len(token_ids) - length + 1)]
            positions = positions[allowed[token_ids[positions]]]
        if sentence_ends is not None:
            positions = positions[sentence_ends[positions] >= positions + length]  # inside one sentence
        for j in range(1, length):
            allowed[:] = False
            allowed[queries[:, j]] = True
            positions = positions[allowed[token_ids[positions + j]]]
        windows = token_ids[positions[:, None] + np.arange(length)]
        if self.collide:  # two queries, one hash: matched exactly
            _, inverse = np.unique(np.concatenate([windows, queries]), axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            found = np.bincount(inverse[: len(windows)], minlength=int(inverse.max()) + 1)
            return found[inverse[len(windows):]]
        with np.errstate(over="ignore"):
            window_hash = (windows.astype(np.uint64) * self.weights).sum(axis=1, dtype=np.uint64)
        slot = np.minimum(np.searchsorted(self.sorted_hash, window_hash), len(self.order) - 1)
        which = self.order[slot]
        same = (self.sorted_hash[slot] == window_hash) & (windows == queries[which]).all(axis=1)
        return np.bincount(which[same], minlength=len(queries))


def _window_weights(length: int) -> np.ndarray:
    """Odd 64-bit multipliers of a window's token ids in its hash: fixed per length (the hash
    only speeds up matching in memory; ``_count_windows`` confirms every match).  SplitMix64
    of the positions: well mixed, and no random generator to load (numpy.random takes ~10 ms)."""
    mixed = (np.arange(1, length + 1, dtype=np.uint64) + np.uint64(length << 32)) * np.uint64(0x9E3779B97F4A7C15)
    mixed = (mixed ^ (mixed >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    mixed = (mixed ^ (mixed >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return (mixed ^ (mixed >> np.uint64(31))) | np.uint64(1)


def _add_pieces(paths, piece_bytes: int, builder: "_Builder") -> None:
    """Add CoNLL files to ``builder``, one after the other, as one text, a piece at a time."""
    for path in paths:
        width = None  # each file's lines agree on their own number of columns
        for text, lines_before in read_pieces(path, piece_bytes):
            with no_gc():
                table = scan(text, source_name(path), lines_before, width)
                del text
                if not len(table) and table.ragged is None:
                    continue
                width = table.width
                (tag_codes,) = table.columns([width - 1], tags_from=0, codes=True)  # checked, by file line
                builder.add(table.numbered(0, builder.vocabulary), tag_codes, table.starts, builder.n_sentences)


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


def _check_columns(dataset, tokens_column: str, tags_column: str) -> None:
    names = dataset.column_names  # None for a stream whose features are unknown: checked when read
    for column in (tokens_column, tags_column):
        if names is not None and column not in names:
            raise ValueError(f"the dataset has no column {column!r} (columns: {names})")


def _batches(dataset, tokens_column: str, tags_column: str, batch_size: int):
    """(tokens, tags) Arrow columns of consecutive batches of sentences."""
    if getattr(dataset, "features", None) is not None:
        for table in dataset.with_format("arrow").iter(batch_size=batch_size):
            yield table[tokens_column], table[tags_column]
        return
    for batch in dataset.iter(batch_size=batch_size):  # a stream of unknown features: Python lists
        missing = [column for column in (tokens_column, tags_column) if column not in batch]
        if missing:
            raise ValueError(f"the dataset has no column {missing[0]!r} (columns: {sorted(batch)})")
        yield batch[tokens_column], batch[tags_column]


class LabelCounts:
    """How often each row (a vocabulary token, or a mention text) was seen with each label,
    stored sparse: row ``r``'s labels are ``columns[starts[r]:starts[r + 1]]`` (increasing)
    and their counts ``values[...]`` (each >= 1).  Memory follows the rows and the distinct
    (row, label) pairs, never rows x labels (20,000 entity types made a dense table 3 GB).
    Everything the methods read is a vector over rows or a lookup of pairs."""

    def __init__(self, starts: np.ndarray, columns: np.ndarray, values: np.ndarray, n_labels: int):
        self.starts, self.columns, self.values, self.n_labels = starts, columns, values, n_labels

    @classmethod
    def from_entries(cls, rows, columns, values, n_rows: int, n_labels: int) -> "LabelCounts":
        """Counts given as entries ``(rows[e], columns[e]) += values[e]`` in any order."""
        keys = np.asarray(rows, dtype=np.int64) * n_labels + np.asarray(columns, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], np.asarray(values, dtype=np.int64)[order]
        keys, values = _summed(keys, values)
        kept = values != 0
        keys, values = keys[kept], values[kept]
        starts = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // n_labels, minlength=n_rows), out=starts[1:])
        return cls(starts, (keys % n_labels).astype(np.int32), values, n_labels)

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> "LabelCounts":
        rows, columns = np.nonzero(dense)
        return cls.from_entries(rows, columns, dense[rows, columns], dense.shape[0], dense.shape[1])

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __eq__(self, other) -> bool:
        return (isinstance(other, LabelCounts) and self.n_labels == other.n_labels
                and all(np.array_equal(a, b) for a, b in zip(self.arrays(), other.arrays())))

    def arrays(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.starts, self.columns, self.values

    @cached_property
    def rows(self) -> np.ndarray:
        """Each entry's row."""
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.starts))

    @cached_property
    def _keys(self) -> np.ndarray:  # row * n_labels + column, increasing: pairs found by bisection
        return self.rows * self.n_labels + self.columns

    @cached_property
    def totals(self) -> np.ndarray:
        """Each row's count over all labels."""
        running = np.zeros(len(self.values) + 1, dtype=np.int64)
        np.cumsum(self.values, out=running[1:])
        return running[self.starts[1:]] - running[self.starts[:-1]]

    def total(self) -> int:
        return int(self.values.sum())

    def get(self, rows: np.ndarray, columns) -> np.ndarray:
        """The counts at ``(rows[k], columns[k])`` (0 where never seen)."""
        keys = np.asarray(rows, dtype=np.int64) * self.n_labels + np.asarray(columns, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._keys, keys), max(len(self._keys) - 1, 0))
        if not len(self._keys):
            return np.zeros(keys.shape, dtype=np.int64)
        return np.where(self._keys[at] == keys, self.values[at], 0)

    def column(self, column: int) -> np.ndarray:
        """Each row's count of one label."""
        return self.get(np.arange(len(self)), np.full(len(self), column))

    @cached_property
    def entity_max(self) -> np.ndarray:
        """Each row's largest count of an entity type (0 without one); ``usual_entity``: that
        type's column, the first (by name) on a tie, 0 without one."""
        return self._usual[0]

    @cached_property
    def usual_entity(self) -> np.ndarray:
        return self._usual[1]

    @cached_property
    def _usual(self) -> Tuple[np.ndarray, np.ndarray]:
        entity = np.flatnonzero(self.columns > 0)
        # per row, the largest count first and, among equal counts, the smallest column
        order = np.lexsort((self.columns[entity], -self.values[entity], self.rows[entity]))
        entity = entity[order]
        rows = self.rows[entity]
        first = entity[np.append(True, rows[1:] != rows[:-1])] if len(entity) else entity
        largest, usual = np.zeros(len(self), dtype=np.int64), np.zeros(len(self), dtype=np.int64)
        largest[self.rows[first]] = self.values[first]
        usual[self.rows[first]] = self.columns[first]
        return largest, usual

    def dense(self, rows: Optional[np.ndarray] = None) -> np.ndarray:
        """``[len(rows), n_labels]`` counts of some rows (all by default; -1: a row of zeros):
        for a few rows, or a table known to be small."""
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, dtype=np.int64)
        table = np.zeros((len(rows), self.n_labels), dtype=np.int64)
        known = np.flatnonzero(rows >= 0)
        lengths = np.diff(self.starts)[rows[known]]
        entries = span_positions(self.starts[rows[known]], self.starts[rows[known]] + lengths)
        table[np.repeat(known, lengths), self.columns[entries]] = self.values[entries]
        return table

    def row(self, row: int) -> Dict[int, int]:
        """``{column: count}`` of one row (-1: empty)."""
        if row < 0:
            return {}
        entries = slice(int(self.starts[row]), int(self.starts[row + 1]))
        return dict(zip(self.columns[entries].tolist(), self.values[entries].tolist()))

    def merge_rows(self, remap: np.ndarray, n_rows: int) -> "LabelCounts":
        """Row ``r`` added into row ``remap[r]`` of ``n_rows``."""
        return LabelCounts.from_entries(remap[self.rows], self.columns, self.values, n_rows, self.n_labels)


class _LabelTally:
    """Label counts added up batch by batch: the ``O`` count of each token in a vector (most
    tokens are ``O``: one bincount), each (token, entity type) pair as a sorted key with its
    count, batches' keys merged once they hold as many as the merged ones (so each key is
    merged a logarithmic number of times).  Entity types are numbered as met (1, 2, ...)."""

    def __init__(self):
        self.o = np.zeros(0, dtype=np.int64)
        self.keys: List[np.ndarray] = [np.zeros(0, dtype=np.int64)]  # token id << 32 | type id; [0] merged
        self.counts: List[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self.held = 0

    def add(self, token_ids: np.ndarray, label_ids: np.ndarray, n_vocab: int) -> None:
        o = label_ids == 0
        if len(self.o) < n_vocab:
            self.o = np.concatenate([self.o, np.zeros(max(n_vocab - len(self.o), len(self.o) // 4), np.int64)])
        found = np.bincount(token_ids[o], minlength=n_vocab)
        self.o[:len(found)] += found
        keys = token_ids[~o].astype(np.int64) << 32
        keys |= label_ids[~o]
        keys, counts = _summed(np.sort(keys))
        self.keys.append(keys)
        self.counts.append(counts)
        self.held += len(keys)
        if self.held >= len(self.keys[0]):
            self._merge()

    def _merge(self) -> None:
        keys, counts = np.concatenate(self.keys), np.concatenate(self.counts)
        order = np.argsort(keys, kind="stable")  # sorted runs: merged in linear time
        keys, counts = _summed(keys[order], counts[order])
        self.keys, self.counts, self.held = [keys], [counts], 0

    def result(self, n_vocab: int, column_of_type: np.ndarray) -> LabelCounts:
        """The counts, a type id's label in column ``column_of_type[id]``."""
        self._merge()
        keys, counts = self.keys[0], self.counts[0]
        seen_o = np.flatnonzero(self.o[:n_vocab])
        rows = np.concatenate([seen_o, keys >> 32])
        columns = np.concatenate([np.zeros(len(seen_o), dtype=np.int64), column_of_type[keys & 0xFFFFFFFF]])
        return LabelCounts.from_entries(rows, columns, np.concatenate([self.o[seen_o], counts]), n_vocab,
                                        len(column_of_type))


def _add_counts(table: dict, keys: list, counts: Iterable[int]) -> None:
    """``table[key] += count`` for each pair (from 0 for a new key, which goes last), by C-level
    calls: each key's count is read after the earlier pairs are stored, so a key given twice
    (two spans of one text, when tokens hold spaces) adds up.  The counts stay the values (a
    table of mention numbers, one lookup a key, peaked 7-12 MB higher at 10M tokens: small counts
    are shared int objects, numbers are not)."""
    table.update(zip(keys, map(add, map(table.get, keys, repeat(0)), counts)))


def _summed(keys: np.ndarray, counts: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Sorted keys made distinct, each with its count (``counts``: each key's, else 1)."""
    if not len(keys):
        return keys, np.zeros(0, dtype=np.int64)
    first = np.flatnonzero(np.append(True, keys[1:] != keys[:-1]))
    if counts is None:
        return keys[first], np.diff(np.append(first, len(keys)))
    return keys[first], np.add.reduceat(counts, first)


class MentionSpans(NamedTuple):
    """The training mentions as spans of the running text, in order: tokens
    ``[starts[k], ends[k])`` of ``token_ids``, typed ``labels[labels_k]``."""
    starts: np.ndarray
    ends: np.ndarray
    labels: np.ndarray


class MentionTable(NamedTuple):
    """Training mention texts (first-seen order): ``rows[text]`` its row; ``counts.get(row, c)``
    its mentions typed ``labels[c]`` (column 0, "O", is 0); ``totals[row]`` of any type."""
    rows: Dict[str, int]
    counts: LabelCounts
    totals: np.ndarray


class _Builder:
    """The one builder of TrainStats from data: sentences given batch after batch, as lists
    (``add_sentences``), as Arrow or Python list columns (``add_columns``) or as codes (``add``,
    which the other two end in; CoNLL pieces come as codes).  The vocabulary, label ids and
    mention spans are kept as they come, so a batch can be dropped once added; ``stats()``
    equals the stats of all batches' sentences in order.

    With ``keep_text`` the token ids stay in memory (the text of the statistics).  Without,
    memory holds the statistics only: label counts are added up every few million tokens,
    mentions counted as their batch comes, and the token ids go to a temporary file (4
    bytes a token, deleted when closed) that ``stats()`` reads back once, a chunk at a
    time, to count the occurrences of every mention text: they may occur before the
    mention is first seen, so they cannot be counted as the text streams by."""

    def __init__(self, keep_text: bool = True, decoding: Tuple[str, str, str] = DEFAULT_DECODING):
        self.keep_text = keep_text
        self.decoding = decoding  # (scheme, mode, repair), checked
        self.vocabulary = Numbering()  # token -> id (its rank in first-occurrence order)
        self.n_tokens = 0
        self.n_sentences = 0
        self.types: Dict[str, int] = {}  # entity type -> label column (1, 2, ... as met; "O" is 0)
        self.spans: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # mentions: (starts, ends, type ids)
        self.token_ids: List[np.ndarray] = []
        self.label_ids: List[np.ndarray] = []  # each token's label column; counted in stats() (or every few M)
        self.starts: List[np.ndarray] = [np.zeros(1, dtype=np.int64)]
        if not keep_text:
            self.mentions = _MentionNumbers()
            self.type_names: List[str] = []  # by type id - 1
            self.tally = _LabelTally()  # label counts added so far, types numbered as met
            self.pending = 0  # tokens in self.token_ids not added to self.tally yet
            self.spill = _Spill()
            self.keep_spill = False  # build_distributed: the occurrences are counted later, in the kept spill
            self.texts: List[str] = []  # the distinct mention texts, once built, and their tokens (or None)
            self.text_tokens: Optional[Tuple[np.ndarray, np.ndarray]] = None

    def add_sentences(self, tokens, tags, first: int = 0) -> None:
        """Add sentences given as token lists and tag lists, checked (errors number the
        sentences from ``first``)."""
        _check_sentences(tokens, tags, first)
        starts = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum([len(sentence) for sentence in tokens], out=starts[1:])
        self.add(list(chain.from_iterable(tokens)), list(chain.from_iterable(tags)), starts, first)

    def add_columns(self, tokens, tags, names: Optional[List[str]], first: int) -> None:
        """Add a batch of sentences given as Arrow list columns or Python lists (tags as
        strings, or as ids into ``names``): plain columns are read as codes column-wise (no
        Python loop over tokens); any other goes the list way, whose checks name the problem
        (or cope)."""
        with no_gc():
            coded = _arrow_codes(tokens, tags, names)
            if coded is not None:
                self.add(*coded, first)
                return
            tokens, tags = (column.to_pylist() if hasattr(column, "to_pylist") else column for column in (tokens, tags))
            self.add_sentences(tokens, decode_tag_ids(tags, names, first), first)

    def add(self, tokens, tags, starts: np.ndarray, first: int = 0) -> None:
        """Add sentences given flat: sentence ``s`` is ``[starts[s], starts[s + 1])``; errors
        number the sentences from ``first``.  ``tokens``: a list, codes ``(distinct values in
        first-occurrence order, ids)``, or the tokens' ids in ``self.vocabulary`` already
        (``Table.numbered``); ``tags``: a list or codes.  Vocabulary and tag ids by dict calls
        in C, spans by numpy (decoded as ``schemes.decode`` does; tests compare them)."""
        if isinstance(tokens, np.ndarray):
            token_ids = tokens
        else:
            values, local_ids = tokens if isinstance(tokens, tuple) else (tokens, None)
            token_ids = self.vocabulary.number(values)
            if local_ids is not None:
                token_ids = token_ids[local_ids]
        n = len(token_ids)
        if isinstance(tags, tuple):
            distinct, tag_ids = tags
        else:
            try:
                distinct, tag_ids, _ = factorize(tags)
            except TypeError:  # an unhashable tag (parse_label names it below): each tag its own code
                distinct, tag_ids = tags, np.arange(len(tags))
        try:
            parsed = list(map(parse_label, distinct))
        except ValueError:
            _raise_for_first_bad_tag(distinct, tag_ids, starts, first)
        for prefix, entity_type in parsed:
            if prefix != "O":
                self.types.setdefault(entity_type, len(self.types) + 1)
        prefix = np.array([PREFIX_CODES[p] for p, _ in parsed], dtype=np.int8)[tag_ids]
        label = np.array([self.types[t] if p != "O" else 0 for p, t in parsed],
                         dtype=np.int8 if len(self.types) < 128 else np.int32)[tag_ids]
        span_starts, span_ends = decode_flat(prefix, label, starts, *self.decoding, first_sentence=first)
        self.n_sentences += len(starts) - 1
        if not self.keep_text:
            self._add_bounded(token_ids, label, starts, span_starts, span_ends)
            self.n_tokens += n
            return
        self.spans.append((span_starts + self.n_tokens, span_ends + self.n_tokens, label[span_starts]))
        self.token_ids.append(token_ids)
        self.label_ids.append(label)
        self.starts.append(starts[1:] + self.n_tokens)
        self.n_tokens += n

    def _add_bounded(self, token_ids, label, starts, span_starts, span_ends) -> None:
        """``add`` without keeping the text: the batch's mentions counted now, its tokens
        written to the spill, its labels counted with the next few million tokens'."""
        for entity_type in list(self.types)[len(self.type_names):]:
            self.type_names.append(entity_type)
        self.mentions.add(token_ids, label[span_starts].astype(np.int32), span_starts, span_ends,
                          self.vocabulary.values, self.type_names)
        self.spill.add(token_ids, starts)
        self.token_ids.append(token_ids)
        self.label_ids.append(label)
        self.pending += len(token_ids)
        if self.pending >= _COUNTED_AT_ONCE // 2:
            self._count_pending()

    def _count_pending(self) -> None:
        """Add the label counts of the tokens kept since the last call to ``self.tally``."""
        token_ids = np.concatenate(self.token_ids or [np.zeros(0, dtype=np.int32)])
        label_ids = np.concatenate(self.label_ids or [np.zeros(0, dtype=np.int8)])
        self.token_ids, self.label_ids, self.pending = [], [], 0
        self.tally.add(token_ids, label_ids, len(self.vocabulary))

    def _bounded_counts(self, order: List[int]) -> LabelCounts:
        """The label counts of a build without the text (``order``: each label's type id)."""
        self._count_pending()
        self.vocabulary.release_bytes()
        return self.tally.result(len(self.vocabulary.values), np.argsort(order))

    def _bounded_stats(self, labels: List[str], order: List[int]) -> "TrainStats":
        counts = self._bounded_counts(order)
        mentions, numbers, self.mentions = self.mentions.counts(), self.mentions, None
        if self._spaced():  # a text split at spaces may not give its tokens: looked up by its words
            self.texts, first = _mention_texts(mentions), None
        else:  # each text's tokens as kept with its first mention: no text split and looked up again
            self.texts, _, first = numbers.texts()
        self.text_tokens = numbers.tokens_of(first)
        del numbers  # its tables (every mention's ids) are not held through the occurrence pass
        if self.keep_spill:  # counted by the caller (each table empty here)
            occurrences, lowered = {}, {}
        else:
            occurrences, lowered = self.spill.occurrences(self.vocabulary, counts.totals, self.texts, self.text_tokens)
            self.spill.close()
        stats = TrainStats(self.vocabulary.values, labels, counts, mentions, n_sentences=self.n_sentences,
                           mention_occurrences=occurrences, lower_occurrences=lowered, decoding=self.decoding)
        return self._with_index(stats)

    def part(self) -> Tuple[List[str], LabelCounts, Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``stats()`` of a build of CoNLL files without the text, for ``build_distributed``'s
        first round, with no dict of mentions made: the labels, the label counts, and the
        mentions as arrays (in the order first met: each one's text's place in ``self.texts``,
        its label column, its count), the texts and their tokens kept as ``stats()`` keeps them.
        No token of a CoNLL file holds a space, so no two mentions' texts join alike."""
        if self._spaced():
            raise ValueError("a token holds a space: not read from a CoNLL file")
        labels, order = self._labels()
        counts = self._bounded_counts(order)
        numbers, self.mentions = self.mentions, None
        self.texts, text_of, first = numbers.texts()
        self.text_tokens = numbers.tokens_of(first)
        columns = np.argsort(order)[numbers.kinds.data[:len(text_of)]]  # by type id
        return labels, counts, (text_of.astype(np.int32), columns.astype(np.int32), numbers.found())

    def _spaced(self) -> bool:
        """Whether a token holds a space (texts joined from tokens at spaces may then be alike)."""
        return " " in "".join(self.vocabulary.values)

    def _labels(self) -> Tuple[List[str], List[int]]:
        """The labels ("O", then the types sorted) and each one's type id."""
        labels = ["O"] + sorted(self.types)
        return labels, [0] + [self.types[t] for t in labels[1:]]

    def _with_index(self, stats: "TrainStats") -> "TrainStats":
        """``stats`` given the token index where the vocabulary holds it (else made when needed)."""
        if self.vocabulary.held_index is not None:
            stats.token_index = self.vocabulary.held_index
        return stats

    def stats(self) -> "TrainStats":
        labels, order = self._labels()
        if not self.keep_text:
            return self._bounded_stats(labels, order)
        token_ids = np.concatenate(self.token_ids or [np.zeros(0, dtype=np.int32)])
        label_ids = np.concatenate(self.label_ids or [np.zeros(0, dtype=np.int8)])
        self.token_ids, self.label_ids = [token_ids], [label_ids]  # the batches' arrays go (peak memory)
        tally = _LabelTally()
        for start in range(0, len(token_ids), _COUNTED_AT_ONCE):  # a few million at a time
            tally.add(token_ids[start:start + _COUNTED_AT_ONCE], label_ids[start:start + _COUNTED_AT_ONCE],
                      len(self.vocabulary))
        column = np.argsort(order)  # a type id's column in labels
        spans = [np.concatenate(part) for part in zip(*self.spans)] if self.spans else [np.zeros(0, np.int64)] * 3
        stats = TrainStats(self.vocabulary.values, labels, tally.result(len(self.vocabulary), column),
                           MentionSpans(spans[0], spans[1], column[spans[2]]), token_ids, np.concatenate(self.starts),
                           decoding=self.decoding)
        return self._with_index(stats)


class _MentionNumbers:
    """The training mentions met so far, each kept once as its type id and token ids, numbered
    as first met and counted (``add``), found through ``Slots`` by a hash of their ids: a
    batch's spans are matched to the kept ones by numpy, and a text is made only for a mention
    first met.  ``counts()`` gives ``{(text, type): count}`` in first-seen order (two mentions
    whose ids differ but whose texts join alike, tokens holding spaces, add up there)."""

    def __init__(self):
        self.slots = Slots()
        self.kinds, self.lengths = _Growing(np.int32, 1.25), _Growing(np.int32, 1.25)
        self.starts, self.ids = _Growing(np.int64, 1.25), _Growing(np.int32, 1.25)  # ids[starts[k]:][:lengths[k]]
        self.counted = np.zeros(0, dtype=np.int64)  # by number, up to the numbers pending
        self.pending: List[np.ndarray] = []  # the numbers of the spans met since, counted a million at a time
        self.n_pending = 0
        self.keys: List[Tuple[str, str]] = []  # (text, type) by number

    def add(self, token_ids: np.ndarray, kinds: np.ndarray, starts: np.ndarray, ends: np.ndarray,
            vocab: List[str], type_names: List[str]) -> None:
        """Count the spans ``[starts[k], ends[k])`` of ``token_ids`` typed ``kinds[k]`` (type ids
        from 1, named ``type_names[id - 1]``; ``vocab``: the tokens by id)."""
        lengths = (ends - starts).astype(np.int32)
        hashes = _span_hashes(token_ids, kinds, starts, lengths)

        def same(at, numbers):  # span at[i] is mention numbers[i]: type, length and every id
            equal = (self.kinds.data[numbers] == kinds[at]) & (self.lengths.data[numbers] == lengths[at])
            where = np.flatnonzero(equal)
            kept, given, length = self.starts.data[numbers[where]], starts[at[where]], lengths[at[where]]
            for j in range(int(length.max(initial=0))):
                inside = np.flatnonzero(length > j)
                where[inside[self.ids.data[kept[inside] + j] != token_ids[given[inside] + j]]] = -1
            equal[:] = False
            equal[where[where >= 0]] = True
            return equal

        numbers = self.slots.find(hashes, same)
        new = np.flatnonzero(numbers < 0)
        if len(new):  # grouped by hash, each member checked against its group's first, numbered in the order first met
            _, lead, group = np.unique(hashes[new], return_index=True, return_inverse=True)
            group = group.reshape(-1)
            if not _alike(token_ids, kinds, starts, lengths, new, new[lead[group]]):  # a hash of two spans
                lead, group = _grouped(token_ids, kinds, starts, lengths, new)
            order = np.argsort(lead, kind="stable")
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            lead = new[lead[order]]
            numbers[new] = len(self.keys) + rank[group]
            self._keep(token_ids, kinds, starts, lengths, lead, vocab, type_names)
            self.slots.add(hashes[lead], np.arange(len(self.keys) - len(lead), len(self.keys)), self._every)
        self.pending.append(numbers)
        self.n_pending += len(numbers)
        if self.n_pending >= 2 ** 20:
            self._count_pending()

    def _count_pending(self) -> None:
        found = np.bincount(np.concatenate(self.pending), minlength=len(self.keys)) if self.pending else \
            np.zeros(len(self.keys), dtype=np.int64)
        found[:len(self.counted)] += self.counted
        self.counted, self.pending, self.n_pending = found, [], 0

    def _keep(self, token_ids, kinds, starts, lengths, spans, vocab, type_names) -> None:
        """Keep the spans ``spans`` as the next mentions, with their texts."""
        self.kinds.add(kinds[spans])
        self.lengths.add(lengths[spans])
        self.starts.add(len(self.ids) + np.cumsum(lengths[spans]) - lengths[spans])
        self.ids.add(token_ids[span_positions(starts[spans], starts[spans] + lengths[spans])])
        texts = _span_texts(vocab, token_ids, starts[spans], starts[spans] + lengths[spans])
        self.keys.extend(zip(texts, np.array(type_names, dtype=object)[kinds[spans] - 1].tolist()))

    def _every(self) -> Tuple[np.ndarray, np.ndarray]:
        n = len(self.keys)
        return _span_hashes(self.ids.data, self.kinds.data[:n], self.starts.data[:n], self.lengths.data[:n]), \
            np.arange(n)

    def found(self) -> np.ndarray:
        """Each mention's count, by number (the order first met)."""
        self._count_pending()
        return self.counted

    def counts(self) -> Dict[Tuple[str, str], int]:
        """``{(text, type): count}`` of every mention, in the order first met."""
        mentions: Dict[Tuple[str, str], int] = {}
        _add_counts(mentions, self.keys, self.found().tolist())
        return mentions

    def texts(self) -> Tuple[List[str], np.ndarray, np.ndarray]:
        """The distinct mention texts, first met first (``_mention_texts`` of ``counts()``), each
        mention's text's place among them, and the number of each text's first mention."""
        return factorize([text for text, _ in self.keys])

    def tokens_of(self, first: Optional[np.ndarray]) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """The token ids of mentions ``first`` (flat, and each one's number of tokens); None for
        None.  Those are its text's tokens only when no token holds a space (callers check)."""
        if first is None:
            return None
        lengths = self.lengths.data[first].astype(np.int64)
        starts = self.starts.data[first]
        return self.ids.data[span_positions(starts, starts + lengths)], lengths


def _alike(token_ids: np.ndarray, kinds: np.ndarray, starts: np.ndarray, lengths: np.ndarray, a: np.ndarray,
           b: np.ndarray) -> bool:
    """Whether every span ``a[k]`` of ``token_ids`` (starting at ``starts``, of ``lengths``,
    typed ``kinds``) equals span ``b[k]``: the same type, length and ids."""
    if not ((kinds[a] == kinds[b]).all() and (lengths[a] == lengths[b]).all()):
        return False
    return bool((token_ids[span_positions(starts[a], starts[a] + lengths[a])]
                 == token_ids[span_positions(starts[b], starts[b] + lengths[b])]).all())


def _grouped(token_ids: np.ndarray, kinds: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
             spans: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``spans`` grouped exactly by type and ids (where a hash is shared by two different ones):
    each group's first place in ``spans`` (in no order) and each span's group, a length at a
    time (one table of the longest would take spans x longest memory)."""
    lengths_of, firsts, group = lengths[spans], [], np.empty(len(spans), dtype=np.int64)
    for length in np.unique(lengths_of).tolist():
        members = np.flatnonzero(lengths_of == length)
        at = spans[members]
        rows = np.empty((len(at), length + 1), dtype=np.int64)
        rows[:, 0] = kinds[at]
        rows[:, 1:] = token_ids[starts[at][:, None] + np.arange(length)]
        _, lead, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        group[members] = sum(len(f) for f in firsts) + inverse.reshape(-1)
        firsts.append(members[lead])
    return np.concatenate(firsts), group


def _span_hashes(token_ids: np.ndarray, kinds: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each span's type, length and token ids (``token_ids[starts[k]:]`` for
    ``lengths[k]`` ids), the same for the same span wherever it lies."""
    if not len(starts):
        return np.zeros(0, dtype=np.uint64)
    weights = _place_weights(int(lengths.max()) + 1)  # by place in the span, the type's first
    within = _offsets_within(lengths)
    with np.errstate(over="ignore"):
        terms = (token_ids[span_positions(starts, starts + lengths)].astype(np.uint64) + np.uint64(1)) \
            * weights[within + 1]
        summed = np.add.reduceat(terms, np.cumsum(lengths) - lengths) if len(terms) else terms
        mixed = summed + kinds.astype(np.uint64) * weights[0] + lengths.astype(np.uint64) * _MIX_LENGTH
        mixed ^= mixed >> np.uint64(29)
        return mixed * np.uint64(0xBF58476D1CE4E5B9)


_MIX_LENGTH = np.uint64(0x94D049BB133111EB)


def _place_weights(n: int) -> np.ndarray:
    """Odd 64-bit multipliers of places 0 .. n - 1 (SplitMix64 of each place: the same place
    the same weight, whatever ``n``)."""
    mixed = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    mixed = (mixed ^ (mixed >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    mixed = (mixed ^ (mixed >> np.uint64(27))) * _MIX_LENGTH
    return (mixed ^ (mixed >> np.uint64(31))) | np.uint64(1)


class _Spill:
    """The running text of a build without ``keep_text``, on disk: token ids (``int32``),
    each sentence followed by -1, in an anonymous temporary file (gone when closed, or when
    the process ends however it ends), read back a chunk of whole sentences at a time.  The
    first ``_SPILL_CHUNK`` ids stay in memory (4 MB): a small training set needs no file,
    and its build no ``tempfile`` (which imports ``random``; a command's start-up counts)."""

    def __init__(self):
        self.file = io.BytesIO()
        self.on_disk = False

    def add(self, token_ids: np.ndarray, starts: np.ndarray) -> None:
        n_sentences = len(starts) - 1
        entries = np.full(len(token_ids) + n_sentences, -1, dtype=np.int32)
        tokens = np.ones(len(entries), dtype=bool)
        tokens[starts[1:] + np.arange(n_sentences)] = False  # sentence s's separator: after its end, s before it
        entries[tokens] = token_ids
        if not self.on_disk and self.file.tell() + entries.nbytes > 4 * _SPILL_CHUNK:
            import tempfile  # only for a text past the in-memory chunk

            spilled = tempfile.TemporaryFile(prefix="tough-ner-text-")
            with self.file.getbuffer() as held:
                spilled.write(held)
            self.file.close()
            self.file, self.on_disk = spilled, True
        self.file.write(memoryview(entries))

    def chunks(self):
        """The text again, in chunks of about ``_SPILL_CHUNK`` ids ending after a sentence."""
        self.file.flush()
        self.file.seek(0)
        carry = np.zeros(0, dtype=np.int32)
        while True:
            data = self.file.read(4 * _SPILL_CHUNK)
            if not data:
                return
            chunk = np.concatenate([carry, np.frombuffer(data, dtype=np.int32)])
            ends = np.flatnonzero(chunk[-(len(data) // 4):] < 0)
            cut = len(carry) + int(ends[-1]) + 1 if len(ends) else 0
            carry = chunk[cut:]
            yield chunk[:cut]

    def occurrences(self, vocabulary: Numbering, totals: np.ndarray, texts: Sequence[str],
                    tokens: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> Tuple[Dict[str, int], Dict[str, int]]:
        """``({text: occurrences of text.split(" ")}, {lowered text: its occurrences in the
        lowercased text})`` for ``texts`` and the texts lowercased, as
        ``TrainStats.occurrences`` counts them; ``vocabulary`` and ``totals``: the vocabulary
        of the spilled ids and each token's count; ``tokens``: as ``counts``."""
        lowered = _lowered_texts(texts)
        as_written, lower = self.counts(vocabulary, totals, texts, lowered, tokens)
        return dict(zip(texts, as_written.tolist())), dict(zip(lowered, lower.tolist()))

    def counts(self, vocabulary: Numbering, totals: np.ndarray, texts: Sequence[str], lowered: Sequence[str],
               tokens: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> Tuple[np.ndarray, np.ndarray]:
        """The occurrences (``occurrences``) of each of ``texts``, and of each of ``lowered``
        (``_lowered_texts(texts)``) in the lowercased text, as two arrays in their order.
        ``tokens``: the ids of each text's tokens (flat, and each text's length) when the
        caller holds them (a build's own mention texts), so no text is split and looked up."""
        # The lowercased text needs ids only for the words of the lowered texts: every other
        # token gets one id (len(words)) that no query holds.
        words = dict.fromkeys(chain.from_iterable(map(str.split, lowered, repeat(" "))))
        words = dict(zip(words, range(len(words))))
        remap = np.fromiter(map(words.get, map(str.lower, vocabulary.values), repeat(len(words))), dtype=np.int32,
                            count=len(vocabulary))
        lower_totals = np.bincount(remap, weights=totals, minlength=len(words) + 1).astype(np.int64)  # < 2**53
        if tokens is None:  # the ids of the texts' words, found in one pass (no dict of every token made)
            asked = dict.fromkeys(chain.from_iterable(map(str.split, texts, repeat(" "))))
            index = vocabulary.held_index or {token: k for k, token in enumerate(vocabulary.values) if token in asked}
            as_written = _SequenceCounts.of_texts(texts, index, totals)
            lower = _SequenceCounts.of_texts(lowered, words, lower_totals)
        else:  # a lowered text's tokens: its first text's, lowercased (no token holds a space)
            ids, lengths = tokens
            first = factorize(list(map(str.lower, texts)))[2]  # lowered[k] is texts[first[k]] lowercased
            starts = np.cumsum(lengths) - lengths
            as_written = _SequenceCounts(ids, lengths, len(vocabulary), totals)
            lower = _SequenceCounts(remap[ids[span_positions(starts[first], starts[first] + lengths[first])]],
                                    lengths[first], len(words), lower_totals)
        remap = np.append(remap, np.int32(-1))  # a separator stays one
        for chunk in self.chunks() if as_written.longer or lower.longer else ():
            as_written.add(chunk)
            lower.add(remap[chunk])
        return as_written.counts, lower.counts

    def close(self) -> None:
        self.file.close()


class _SequenceCounts:
    """Occurrences of token sequences (texts split at spaces) in a text given chunk after
    chunk (``add``), sentences separated by -1: one token is its vocabulary count, a
    sequence with a token not in ``index`` occurs nowhere, the others are counted
    (``counts``: each text's occurrences so far, in their order)."""

    def __init__(self, ids: np.ndarray, lengths: np.ndarray, n_vocab: int, totals: np.ndarray):
        """The sequences of ``ids`` (flat; -1: a token not in the vocabulary), each of its
        length in ``lengths`` (>= 1); ``totals``: each token's count."""
        self.n_vocab = n_vocab
        starts = np.cumsum(lengths) - lengths
        known = np.minimum.reduceat(ids, starts) >= 0 if len(ids) else np.zeros(0, dtype=bool)
        single = known & (lengths == 1)
        self.counts = np.zeros(len(lengths), dtype=np.int64)
        self.counts[single] = totals[ids[starts[single]]]
        self.longer = []
        self.first = np.zeros(self.n_vocab + 1, dtype=bool)  # the first tokens of every sequence counted
        for length in np.flatnonzero(np.bincount(lengths[known & (lengths > 1)])).tolist():
            chosen = np.flatnonzero(known & (lengths == length))
            self.longer.append((chosen, _Windows(ids[starts[chosen, None] + np.arange(length)])))
            self.first[self.longer[-1][1].queries[:, 0]] = True

    @classmethod
    def of_texts(cls, texts: Sequence[str], index: Dict[str, int], totals: np.ndarray) -> "_SequenceCounts":
        """The sequences of ``texts``' words (split at spaces), looked up in ``index`` (of a
        vocabulary of ``len(totals)`` tokens: every one, or those of the texts at least)."""
        lengths = np.fromiter(map(str.count, texts, repeat(" ")), dtype=np.int64, count=len(texts)) + 1
        words = chain.from_iterable(map(str.split, texts, repeat(" ")))
        return cls(np.fromiter(map(index.get, words, repeat(-1)), dtype=np.int64, count=int(lengths.sum())),
                   lengths, len(totals), totals)

    def add(self, chunk: np.ndarray) -> None:
        candidates = np.flatnonzero(self.first[chunk])  # one pass over the chunk for every length
        for chosen, windows in self.longer:
            self.counts[chosen] += windows.count(chunk, self.n_vocab, candidates=candidates)


def _raise_for_first_bad_tag(distinct: list, tag_ids: np.ndarray, starts: np.ndarray, first: int) -> NoReturn:
    """Raise ``parse_label``'s error for the first token, in text order, whose tag is no tag,
    naming its sentence (numbered from ``first``) and position."""
    bad = np.zeros(len(distinct), dtype=bool)
    for code, tag in enumerate(distinct):
        try:
            parse_label(tag)
        except ValueError:
            bad[code] = True
    i = int(np.flatnonzero(bad[tag_ids])[0])
    s = int(np.searchsorted(starts, i, side="right")) - 1
    parse_label(distinct[tag_ids[i]], s + first, i - int(starts[s]))


def _arrow_codes(tokens, tags, names):
    """A batch of Arrow list columns as ``_Builder.add`` takes it: tokens and tags as codes,
    and sentence starts, found column-wise; or None when the columns are not plain lists of
    strings and of tag strings or ids into ``names`` (then the list way names the problem)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:  # Arrow columns, or Python lists (then Arrow guesses their type)
        tokens, tags = (column.combine_chunks() if isinstance(column, pa.ChunkedArray)
                        else column if isinstance(column, pa.Array) else pa.array(column) for column in (tokens, tags))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    is_list = (pa.types.is_list, pa.types.is_large_list)
    is_string = (pa.types.is_string, pa.types.is_large_string)
    if (not any(f(tokens.type) for f in is_list) or not any(f(tags.type) for f in is_list)
            or not any(f(tokens.type.value_type) for f in is_string) or tokens.null_count or tags.null_count):
        return None
    lengths = pc.list_value_length(tokens).to_numpy(zero_copy_only=False).astype(np.int64)
    if not np.array_equal(lengths, pc.list_value_length(tags).to_numpy(zero_copy_only=False)):
        return None
    flat, flat_tags = tokens.flatten(), tags.flatten()  # flatten() honours slices and offsets
    if flat.null_count or flat_tags.null_count:
        return None
    if names is not None:  # ClassLabel ids
        if not pa.types.is_integer(flat_tags.type):
            return None
        tag_index = flat_tags.to_numpy(zero_copy_only=False).astype(np.int64)
        if len(tag_index) and (tag_index.min() < 0 or tag_index.max() >= len(names)):
            return None
        # only the names used: an unused name need not be a tag, nor give a label
        used = np.flatnonzero(np.bincount(tag_index, minlength=len(names)))
        code_of_name = np.zeros(len(names), dtype=np.int64)
        code_of_name[used] = np.arange(len(used))
        tag_codes = [names[i] for i in used.tolist()], code_of_name[tag_index]
    else:
        if not any(f(flat_tags.type) for f in is_string):
            return None
        encoded = pc.dictionary_encode(flat_tags)  # distinct values in first-occurrence order
        tag_codes = encoded.dictionary.to_pylist(), encoded.indices.to_numpy(zero_copy_only=False)
    encoded = pc.dictionary_encode(flat)
    token_codes = encoded.dictionary.to_pylist(), encoded.indices.to_numpy(zero_copy_only=False)
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return token_codes, tag_codes, starts


def _stats_bytes_of_batch(table, indices, tokens_column, tags_column, names, batch_size, decoding=DEFAULT_DECODING):
    """The map step of ``from_dataset(num_proc=...)``: one shard's statistics as file bytes
    (empty when it holds no token) and its number of sentences."""
    first = indices[0] if indices else 0  # errors give the sentence's index in the whole dataset
    builder = _Builder(decoding=decoding)
    for start in range(0, table.num_rows, batch_size):
        chunk = table.slice(start, batch_size)
        builder.add_columns(chunk[tokens_column], chunk[tags_column], names, first + start)
    blob = builder.stats().to_bytes() if builder.n_tokens else b""
    return {"stats": [blob], "sentences": [table.num_rows]}


# ---- merging built statistics -------------------------------------------------------------


class _Merger:
    """Merges built statistics (parts of a corpus, in order) into one ``TrainStats``: the
    vocabulary grows in first-occurrence order, label columns are sorted at the end, mention
    counts keep their first-occurrence order, so the result equals the one-builder build.
    Mention texts (as written, and lowercased for the occurrence tables) are numbered across
    the parts as the vocabulary is (``Renumbering``); mentions and occurrence counts stay
    arrays of those numbers until the merged tables are made, once."""

    def __init__(self):
        self.vocabulary = Renumbering()
        self.labels: Dict[str, int] = {"O": 0}  # label -> its column in self.entries (first seen)
        self.entries: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # label counts: (rows, columns, values)
        # the mention texts, and (parts without the text) the lowercased texts they count
        self.texts, self.lowered = Renumbering(), Renumbering()
        self.lowered_of = np.zeros(0, dtype=np.int64)  # each text's lowercased text's number (add_part)
        self.mentions: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (text, column as met, count)
        self.token_ids: List[np.ndarray] = []
        self.lengths: List[np.ndarray] = []
        # parts without the text (add_part): each table's occurrence counts, as (text numbers, counts)
        self.counted: Optional[Tuple[list, list]] = None
        self.n_sentences = 0
        self.decoding: Optional[Tuple[str, str, str]] = None  # the parts' (all the same)
        self._summed: Optional[tuple] = None  # (parts summed, labels, LabelCounts, mentions): summed()

    def add(self, stats: "TrainStats") -> None:
        """Fold in the next part, with its text."""
        texts, text_of, _ = factorize(list(map(itemgetter(0), stats.mentions)))
        types = np.fromiter(map(stats.label_index.__getitem__, map(itemgetter(1), stats.mentions)), dtype=np.int64,
                            count=len(text_of))
        remap, columns = self._add_vocabulary(stats.vocab, None, stats.labels, stats.label_counts, stats.n_sentences,
                                              stats.decoding)
        self.mentions.append((self.texts.number(texts)[text_of], columns[types],
                              np.fromiter(stats.mentions.values(), dtype=np.int64, count=len(text_of))))
        self.token_ids.append(remap[stats.token_ids].astype(np.int32))
        self.lengths.append(np.diff(stats.sentence_starts))

    def add_part(self, part: "_Part") -> Tuple[np.ndarray, np.ndarray]:
        """Fold in a part of ``build_distributed``'s first round, whose occurrence counts come
        later (``add_numbered``); the numbers of its mention texts, and of their lowercased
        texts, distinct, first met first (``_lowered_texts``: as the part's worker lists them)."""
        _, columns = self._add_vocabulary(part.vocab, part.joined_vocab, part.labels, part.counts, part.n_sentences,
                                          part.decoding)
        numbers = self.texts.number(part.texts, part.joined_texts)
        text_of, column_of, counts = part.mentions
        self.mentions.append((numbers[text_of], columns[column_of], counts))
        self.counted = self.counted or ([], [])
        unlowered = self.texts.values[len(self.lowered_of):]  # texts new here: lowercased once
        if unlowered:
            distinct, rank, _ = factorize(list(map(str.lower, unlowered)))
            self.lowered_of = np.concatenate([self.lowered_of, self.lowered.number(distinct)[rank]])
        lowered = self.lowered_of[numbers]
        return numbers, lowered[np.sort(np.unique(lowered, return_index=True)[1])]

    def _add_vocabulary(self, vocab: List[str], joined_vocab: Optional[bytes], labels: List[str],
                        counts: LabelCounts, n_sentences: int, decoding: Tuple[str, str, str]) \
            -> Tuple[np.ndarray, np.ndarray]:
        """Add what every part brings: its vocabulary (``joined_vocab``: newline-joined in
        UTF-8, where the caller holds it), labels, label counts and sentences, decoded as the
        others; its token ids' numbers here, and its labels' columns as met here."""
        if self.decoding is not None and decoding != self.decoding:
            raise ValueError(f"cannot merge statistics decoded as {describe_decoding(self.decoding)} with statistics "
                             f"decoded as {describe_decoding(decoding)}: build every part with the same "
                             "scheme, mode and repair")
        self.decoding = decoding
        remap = self.vocabulary.number(vocab, joined_vocab)  # a token new here numbered on (as _Builder.add)
        columns = np.array([self.labels.setdefault(label, len(self.labels)) for label in labels], dtype=np.int64)
        self.entries.append((remap[counts.rows], columns[counts.columns], counts.values))
        self.n_sentences += n_sentences
        return remap, columns

    def add_numbered(self, texts: np.ndarray, counts: np.ndarray, lowered: np.ndarray, lower_counts: np.ndarray) -> None:
        """Add occurrences of mention texts and of lowercased texts (their numbers here, as
        ``add_part`` gave them, each distinct) counted in some part's text: once every part's
        text has counted every part's texts, the tables of the whole are their sums."""
        self.counted[0].append((texts, counts))
        self.counted[1].append((lowered, lower_counts))

    def add_empty_sentences(self, n_sentences: int) -> None:
        """Sentences without a token (a part of them alone has no statistics)."""
        self.lengths.append(np.zeros(n_sentences, dtype=np.int64))

    def summed(self) -> Tuple[List[str], LabelCounts, Dict[Tuple[str, str], int]]:
        """The labels, label counts and mentions (``{(text, type): count}``, first met first)
        of the parts added so far (``result`` reuses them while no part comes after:
        ``build_distributed`` sums them while it awaits the occurrences)."""
        if self._summed is None or self._summed[0] != len(self.entries):
            labels = ["O"] + sorted(list(self.labels)[1:])
            column = np.zeros(len(labels), dtype=np.int64)  # a label's column in labels, by its column as met
            column[[self.labels[label] for label in labels]] = np.arange(len(labels))
            rows, met, values = (np.concatenate(part) for part in zip(*self.entries)) if self.entries else \
                (np.zeros(0, dtype=np.int64),) * 3
            counts = LabelCounts.from_entries(rows, column[met], values, len(self.vocabulary), len(labels))
            self._summed = (len(self.entries), labels, counts, self._mentions())
        return self._summed[1:]

    def _mentions(self) -> Dict[Tuple[str, str], int]:
        texts, columns, counts = (np.concatenate(part) for part in zip(*self.mentions)) if self.mentions else \
            (np.zeros(0, dtype=np.int64),) * 3
        n_columns = len(self.labels)
        keys, first, counts = _summed_first(texts * n_columns + columns, counts)
        order = np.argsort(first)  # the order first met
        keys, counts = keys[order], counts[order]
        names = list(self.labels)
        return dict(zip(zip(map(self.texts.values.__getitem__, (keys // n_columns).tolist()),
                            map(names.__getitem__, (keys % n_columns).tolist())), counts.tolist()))

    def result(self, decoding: Optional[Tuple[str, str, str]] = None) -> "TrainStats":
        """The merged statistics (``decoding``: the parts', where no part holds a token)."""
        decoding = self.decoding or decoding or DEFAULT_DECODING
        labels, counts, mentions = self.summed()
        if self.counted is not None:
            occurrences, lowered = (_counted_table(values.values, counted)
                                    for values, counted in zip((self.texts, self.lowered), self.counted))
            return TrainStats(self.vocabulary.values, labels, counts, mentions, n_sentences=self.n_sentences,
                              mention_occurrences=occurrences, lower_occurrences=lowered, decoding=decoding)
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, dtype=np.int64)
        starts = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        token_ids = np.concatenate(self.token_ids) if self.token_ids else np.zeros(0, dtype=np.int32)
        return TrainStats(self.vocabulary.values, labels, counts, mentions, token_ids, starts, decoding=decoding)


def _summed_first(keys: np.ndarray, counts: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``keys`` (sorted), where each first occurs, and the sum of its ``counts``."""
    order = np.argsort(keys, kind="stable")  # stable: a key's first place among its equals is its first occurrence
    distinct, sums = _summed(keys[order], counts[order])
    return distinct, order[np.searchsorted(keys[order], distinct)], sums


def _counted_table(values: List[str], counted: List[Tuple[np.ndarray, np.ndarray]]) -> Dict[str, int]:
    """``{value: its counts summed}``, ``counted`` giving counts of every one of ``values`` by
    number (``(numbers, counts)`` pairs)."""
    totals = np.zeros(len(values), dtype=np.int64)
    for numbers, counts in counted:
        totals[numbers] += counts  # distinct numbers in a pair
    return dict(zip(values, totals.tolist()))


# ---- validated loading --------------------------------------------------------------------
# Each array of the file: its dtype (as written by to_bytes) and number of dimensions.
_ARRAYS = {_META: (np.uint8, 1), "label_counts": (np.int64, 2), "label_starts": (np.int64, 1),
           "label_columns": (np.int32, 1), "label_values": (np.int64, 1), "token_ids": (np.int32, 1),
           "sentence_starts": (np.int64, 1)}
_SPARSE = ("label_starts", "label_columns", "label_values")  # the label counts of version 2 (LabelCounts)
_DENSE = "label_counts"  # version 1's: a vocabulary x labels table
_TEXT = ("token_ids", "sentence_starts")  # the running text, left out of a shareable file
# np.savez stores members uncompressed; a re-compressed file may shrink, but a member that
# would expand beyond this factor of the whole file (plus 1 MiB) is refused unread (zip bomb).
MAX_EXPANSION = 100
# The JSON metadata is stored uncompressed: it may declare at most this many times the file's
# size (plus 1 MiB), so a small file cannot hold hundreds of MB of text to parse.
MAX_METADATA_EXPANSION = 8
# Every count (label counts, mentions, occurrences, sentences) and every total of them stays
# below 2**53: far above any corpus (10**8 tokens is 2**27), with room for sums in int64.
MAX_COUNT = 2 ** 53


_ZIP_TAIL = 65_557  # the end-of-archive record and the longest comment after it


def _looks_zipped(head: bytes, tail: bytes) -> bool:
    """Whether bytes look like a zip archive (a stats file) as a zip reader looks for one: by
    its first member's signature, else by the end-of-archive record near its end (a zip with
    bytes before it, an empty one), without loading the zip module (~6 ms of a command)."""
    return head == b"PK\x03\x04" or b"PK\x05\x06" in tail


def _is_zip(path: str) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(4)
        handle.seek(max(os.fstat(handle.fileno()).st_size - _ZIP_TAIL, 0))
        return _looks_zipped(head, handle.read())


def _read_archive(blob: bytes, source: str):
    import zipfile

    def bad(reason: str) -> ValueError:
        return ValueError(f"{source} is not a readable tough-ner stats file ({reason})")

    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
        infos = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise bad(str(error)) from None
    counted = (_DENSE,) if _DENSE + ".npy" in infos else _SPARSE  # version 1's members, or version 2's
    expected = {name + ".npy" for name in (_META, *counted, *_TEXT)}
    if set(infos) == {name + ".npy" for name in (_META, *counted)}:
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
            if name == _META and size > MAX_METADATA_EXPANSION * len(blob) + 2 ** 20:
                raise ValueError(f"{source}: its metadata declares {size} bytes in a {len(blob)}-byte file; refused "
                                 f"unread (at most {MAX_METADATA_EXPANSION} times the file's size plus 1 MiB)")
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
    except RecursionError:  # the metadata is three levels deep; a crafted one thousands
        raise bad("metadata nested too deeply") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{source} is not a tough-ner stats file")
    if meta.get("version") not in READS or type(meta.get("version")) is not int:
        found = meta.get("version")
        shown = found if type(found) is int else quote(json.dumps(found))  # "1" is not 1
        raise ValueError(f"{source} has stats format version {shown}; this tough-ner reads versions "
                         f"{' and '.join(map(str, READS))} (a number): rebuild the stats")
    if (meta["version"] == 1) != (_DENSE in arrays):
        raise bad(f"version {meta['version']} with the label counts of version {2 if meta['version'] == 1 else 1}")
    return _check_contents(meta, arrays, source)


def _mentions_of_rows(rows: list, entity_types: set) -> Optional[Dict[Tuple[str, str], int]]:
    """``{(text, type): count}`` of metadata rows when every row is a distinct [text, known
    type, count >= 1] (checked column-wise in C), else None."""
    if not set(map(type, rows)) <= {list} or not set(map(len, rows)) <= {3}:
        return None
    texts, types, counts = zip(*rows) if rows else ((), (), ())
    if not (set(map(type, texts)) <= {str} and set(map(type, types)) <= {str} and set(map(type, counts)) <= {int}):
        return None
    mentions = dict(zip(zip(texts, types), counts))
    if set(types) <= entity_types and min(counts, default=1) >= 1 and sum(counts) < MAX_COUNT \
            and len(mentions) == len(rows):
        return mentions
    return None


def _check_contents(meta: dict, arrays: Dict[str, np.ndarray], source: str):
    def wrong(reason: str) -> ValueError:
        return ValueError(f"{source} is inconsistent: {reason}")

    missing = [key for key in ("vocab", "labels", "mentions") if key not in meta]
    if missing:
        raise wrong(f"its metadata lacks {', '.join(missing)}")
    vocab, labels, mention_rows = meta["vocab"], meta["labels"], meta["mentions"]
    if not isinstance(vocab, list) or not set(map(type, vocab)) <= {str} or len(set(vocab)) != len(vocab):
        raise wrong("the vocabulary is not a list of distinct strings")
    if (not isinstance(labels, list) or not labels or labels[0] != "O" or len(set(labels)) != len(labels)
            or not all(type(x) is str and x and x != "O" for x in labels[1:])):
        raise wrong("the labels are not 'O' followed by distinct entity types")
    entity_types = set(labels[1:])
    if not isinstance(mention_rows, list):
        raise wrong("the mentions are not a list")
    mentions = _mentions_of_rows(mention_rows, entity_types)
    if mentions is None:  # row by row: the first bad one, for the message
        mentions = {}
        for row in mention_rows:
            if (not isinstance(row, list) or len(row) != 3 or type(row[0]) is not str or type(row[1]) is not str
                    or row[1] not in entity_types
                    or type(row[2]) is not int or row[2] < 1 or (row[0], row[1]) in mentions):
                raise wrong(f"mention {quote(json.dumps(row))} is not a distinct [text, known type, count >= 1]")
            mentions[(row[0], row[1])] = row[2]
        if sum(mentions.values()) >= MAX_COUNT:
            raise wrong(f"its mention counts add up to 2**53 or more (at most {MAX_COUNT - 1})")
    counts = _label_counts(arrays, len(vocab), len(labels), wrong)
    if bool(meta.get("shareable")) != ("token_ids" not in arrays):
        raise wrong("its metadata and its members disagree on whether it holds the training text")
    decoding = {"decoding": _decoding_of(meta, wrong)}
    if meta.get("shareable"):
        return (vocab, labels, counts, mentions), {**_check_shareable(meta, mentions, wrong), **decoding}
    ids, starts = arrays["token_ids"], arrays["sentence_starts"]
    if ids.size and (ids.min() < 0 or ids.max() >= len(vocab)):
        raise wrong(f"token ids outside the vocabulary of {len(vocab)}")
    if len(starts) < 1 or starts[0] != 0 or starts[-1] != len(ids) or (np.diff(starts) < 0).any():
        raise wrong("sentence starts do not run from 0 to the number of tokens")
    if not np.array_equal(counts.totals, np.bincount(ids, minlength=len(vocab))):
        raise wrong("label counts disagree with the training token ids")
    return (vocab, labels, counts, mentions, ids, starts), decoding


def _label_counts(arrays: Dict[str, np.ndarray], n_vocab: int, n_labels: int, wrong) -> LabelCounts:
    """The file's label counts, checked: version 1's dense table, or version 2's sparse rows
    (each row's columns increasing within the labels, every count >= 1: one file per
    statistics); every count and their sum below ``MAX_COUNT``."""
    if _DENSE in arrays:
        dense = arrays[_DENSE]
        if dense.shape != (n_vocab, n_labels):
            raise wrong(f"label counts of shape {dense.shape} for {n_vocab} tokens and {n_labels} labels")
        if dense.size and dense.min() < 0:
            raise wrong("negative label counts")
        values = dense[dense != 0]
    else:
        starts, columns, values = (arrays[name] for name in _SPARSE)
        if len(starts) != n_vocab + 1 or starts[0] != 0 or starts[-1] != len(columns) or (np.diff(starts) < 0).any():
            raise wrong(f"label count rows do not run from 0 to the {len(columns)} entries over {n_vocab} tokens")
        if len(values) != len(columns):
            raise wrong(f"{len(values)} label counts for {len(columns)} label columns")
        if len(columns) and (columns.min() < 0 or columns.max() >= n_labels):
            raise wrong(f"label columns outside the {n_labels} labels")
        counts = LabelCounts(starts, columns, values, n_labels)
        if (np.diff(counts._keys) <= 0).any():
            raise wrong("a token's label columns are not increasing")
        if len(values) and values.min() < 1:
            raise wrong("label counts below 1 (a label never seen is left out)")
    if len(values) and (values.max() >= MAX_COUNT or float(values.sum(dtype=np.float64)) >= MAX_COUNT):
        raise wrong(f"label counts add up to 2**53 or more (at most {MAX_COUNT - 1})")
    return LabelCounts.from_dense(arrays[_DENSE]) if _DENSE in arrays else counts


def _decoding_of(meta: dict, wrong) -> Tuple[str, str, str]:
    """The decoding a file records (``{"scheme", "mode", "repair"}``; none: the default)."""
    recorded = meta.get("decoding")
    if recorded is None:
        return DEFAULT_DECODING
    if not isinstance(recorded, dict) or set(recorded) != {"scheme", "mode", "repair"} \
            or not all(type(value) is str for value in recorded.values()):
        raise wrong("its decoding is not {\"scheme\", \"mode\", \"repair\"} strings")
    try:
        return check_decoding(recorded["scheme"], recorded["mode"], recorded["repair"])
    except ValueError as error:
        raise wrong(f"its decoding: {error}") from None


def _check_shareable(meta: dict, mentions, wrong) -> dict:
    """The keyword arguments of shareable statistics, checked: each occurrence table covers
    exactly the mention texts (as written, lowercased) with counts >= 0."""
    n_sentences = meta.get("n_sentences")
    if type(n_sentences) is not int or not 0 <= n_sentences < MAX_COUNT:
        raise wrong(f"n_sentences is {quote(json.dumps(n_sentences))}, not a count")
    texts = {text for text, _ in mentions}
    tables = {}
    for key, expected in (("occurrences", texts), ("lower_occurrences", {text.lower() for text in texts})):
        rows = meta.get(key)
        if not isinstance(rows, list) or not all(isinstance(row, list) and len(row) == 2 and type(row[0]) is str
                                                 and type(row[1]) is int and row[1] >= 0 for row in rows) \
                or sum(row[1] for row in rows) >= MAX_COUNT:
            raise wrong(f"its {key} are not [text, count >= 0] rows (adding up to less than 2**53)")
        table = dict(rows)
        if len(table) != len(rows) or set(table) != expected:
            raise wrong(f"its {key} do not cover exactly the training mention texts")
        tables[key] = table
    return {"n_sentences": n_sentences, "mention_occurrences": tables["occurrences"],
            "lower_occurrences": tables["lower_occurrences"]}


# ---- a distributed map step -----------------------------------------------------------------
def build_distributed(paths: Sequence[str | os.PathLike], client=None, keep_text: bool = False, *,
                      scheme: str = "auto", mode: str = "lenient", repair: str = "conlleval") -> TrainStats:
    """Statistics of CoNLL files that are consecutive shards of one corpus (split on sentence
    boundaries), listed in corpus order, built with Dask on ``client``'s workers (a
    ``distributed.Client``; None: Dask's current scheduler) and merged here, in order.
    Equals ``TrainStats.from_conll`` of the whole file (``scheme``, ``mode``, ``repair``: as
    there).  Needs the ``dask`` extra.

    Without ``keep_text`` the shards are cut into one run of consecutive shards per worker
    (balanced by size), each built by one builder on its worker, which keeps only the
    statistics and its text in a local temporary file, so a part's vocabulary and mentions
    are sent and merged once per worker, not once per shard.  The occurrences of mention
    texts are counted in that kept text in two more rounds, which make the merge exact: each
    part's own texts (while the parts travel here and merge), then the texts of the other
    parts it lacks (any other worker reads the run again)."""
    paths = [os.fspath(path) for path in paths]
    if not paths:
        raise ValueError("build_distributed needs at least one CoNLL shard")
    decoding = check_decoding(scheme, mode, repair)
    if keep_text:  # a shard without a token has no statistics (None)
        blobs = [(blob, path) for blob, path in zip(_results(_submit_on(
            client, _conll_stats_bytes, [(path, decoding) for path in paths])), paths) if blob is not None]
        if not blobs:
            raise _no_token(paths)
        return TrainStats.merge_all(TrainStats.from_bytes(blob, path) for blob, path in blobs)
    workers = sorted(client.scheduler_info()["workers"]) if hasattr(client, "scheduler_info") else []
    runs = _runs(paths, len(workers) or len(paths))
    places = [workers[k] if workers else None for k in range(len(runs))]
    built = _submit_on(client, _run_statistics, [(run, decoding) for run in runs], places)
    own = _submit_on(client, _run_own_occurrences, [(part, run) for part, run in zip(built, runs)], places)
    merger, keys, asked = _Merger(), [], []
    for blob, key in _results(built):  # in order, each as soon as it and those before it are built
        keys.append(key)
        # a run of shards without a token: nothing to merge, nothing to count in
        asked.append(merger.add_part(_read_part(blob)) if key is not None else (np.zeros(0, dtype=np.int64),) * 2)
    if all(key is None for key in keys):
        raise _no_token(paths)

    def lacks(numbered: Renumbering, mine: np.ndarray) -> np.ndarray:  # the numbers not among mine
        held = np.zeros(len(numbered), dtype=bool)
        held[mine] = True
        return np.flatnonzero(~held)

    def strings(numbered: Renumbering, numbers: np.ndarray) -> List[str]:
        return list(map(numbered.values.__getitem__, numbers.tolist()))

    # what each part lacks, counted where its text is kept (asked for by the texts, sent back as
    # counts in their order); sealed: Dask would walk a list argument item by item
    texts, lowered = merger.texts, merger.lowered
    missing = [(lacks(texts, mine), lacks(lowered, mine_lowered)) if key is not None else
               (np.zeros(0, dtype=np.int64),) * 2 for key, (mine, mine_lowered) in zip(keys, asked)]
    lacking = _submit_on(client, _run_occurrences, [
        (run, key, _Sealed((strings(texts, text_numbers), strings(lowered, lowered_numbers))), counted)
        for run, key, (text_numbers, lowered_numbers), counted in zip(runs, keys, missing, own)], places)
    asked += missing  # each round's counts come as arrays, in the order of the texts asked for
    merger.summed()  # label counts and mentions, summed while the workers count
    for k, counted in _completed(own + lacking):  # sums: in any order
        (text_numbers, lowered_numbers), (counts, lower_counts) = asked[k], pickle.loads(counted)
        merger.add_numbered(text_numbers, counts, lowered_numbers, lower_counts)
    return merger.result()


def _no_token(paths: List[str]) -> ValueError:
    """The error of statistics without a token (``TrainStats``'), naming the shards."""
    return ValueError(f"{NO_TOKEN}: check the training files {_some(paths, 4)}")


def _runs(paths: List[str], n: int) -> List[List[str]]:
    """``paths`` cut into at most ``n`` runs of consecutive paths, of about equal bytes (equal
    numbers of files where a size cannot be read here)."""
    n = max(min(n, len(paths)), 1)
    try:
        sizes = np.array([os.path.getsize(path) for path in paths], dtype=np.float64) + 1
    except OSError:
        sizes = np.ones(len(paths))
    ends = np.cumsum(sizes)
    # run k ends with the path whose end first reaches k / n of the bytes, each run holding a path
    cuts = np.searchsorted(ends, ends[-1] * np.arange(1, n) / n) + 1
    # strictly increasing, from 1 to len(paths) - 1: less their rank, non-decreasing in [0, len(paths) - n]
    behind = np.minimum(np.maximum.accumulate(np.maximum(cuts - np.arange(1, n), 0)), len(paths) - n)
    bounds = [0, *(behind + np.arange(1, n)).tolist(), len(paths)]
    return [paths[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _submit_on(client, function, arguments: List[tuple], workers: Optional[List[Optional[str]]] = None) -> list:
    """``function(*a)`` for each ``a`` of ``arguments`` started as Dask tasks (under the read
    limits in force here), each on its worker of ``workers`` where one is named (another one
    if that one is gone): a ``distributed.Client``'s futures, which later tasks may take as
    arguments (they then wait for them; read them with ``_results``).  ``client``: a
    ``distributed.Client``, a Dask scheduler's get function, or None (the current one): those
    compute the results at once."""
    in_force = read_limits()
    if not hasattr(client, "submit"):
        import dask

        tasks = [dask.delayed(under_limits, pure=False)(in_force, function, *a) for a in arguments]
        return list(dask.compute(*tasks, **({"scheduler": client} if client is not None else {})))
    import uuid

    workers = workers or [None] * len(arguments)
    return [client.submit(under_limits, in_force, function, *a, key=f"{function.__name__}-{uuid.uuid4().hex}",
                          **({"workers": [w], "allow_other_workers": True} if w else {}))
            for a, w in zip(arguments, workers)]


def _futures(started: list) -> bool:
    """Whether ``_submit_on`` started a ``distributed.Client``'s futures (else: results computed)."""
    return bool(started) and hasattr(started[0], "result") and hasattr(started[0], "key")


def _results(started: list):
    """The results of ``_submit_on``'s tasks, in order, each as soon as it is done."""
    return (task.result() for task in started) if _futures(started) else iter(started)


def _completed(started: list):
    """``(k, result of started[k])`` for ``_submit_on``'s tasks, in the order they finish
    (computed ones as given)."""
    if not _futures(started):
        return enumerate(started)
    from distributed import as_completed

    place = {id(task): k for k, task in enumerate(started)}
    return ((place[id(task)], task.result()) for task in as_completed(started))


def _mention_texts(mentions: Dict[Tuple[str, str], int]) -> List[str]:
    """The distinct texts of ``mentions`` (``{(text, type): count}``), first met first: the order
    in which a run's occurrence counts are asked for and sent back."""
    return list(dict.fromkeys(text for text, _ in mentions))


def _lowered_texts(texts: Iterable[str]) -> List[str]:
    """The distinct lowercased ``texts``, first met first (the order their counts come in)."""
    return list(dict.fromkeys(map(str.lower, texts)))


# A run's text between the rounds of build_distributed, in the worker's process: {key: (spill,
# vocabulary (Numbering), token totals, its mention texts, lowercased, their token ids or None)}.
_KEPT: Dict[str, tuple] = {}


def _run_statistics(paths: List[str], decoding: Tuple[str, str, str] = DEFAULT_DECODING) \
        -> Tuple[Optional[bytes], Optional[str]]:
    """The first round: the statistics of consecutive shards read as one text, but for the
    occurrences of the mention texts (empty tables), with its mention texts, as bytes for
    ``_read_part``, and the key of that text, kept in this process; ``(None, None)`` for
    shards without a token (empty files: no statistics, nothing to count in)."""
    import uuid

    builder = _Builder(keep_text=False, decoding=decoding)
    builder.keep_spill = True
    _add_pieces(paths, PIECE_BYTES, builder)
    if not builder.n_tokens:
        builder.spill.close()
        return None, None
    labels, counts, mentions = builder.part()
    key = uuid.uuid4().hex
    lowered = _lowered_texts(builder.texts)
    _KEPT[key] = (builder.spill, builder.vocabulary, counts.totals, builder.texts, lowered, builder.text_tokens)
    # for _read_part: strings newline-joined in UTF-8 (no token of a CoNLL file holds a newline), arrays
    # in the narrowest integers that hold them, pickled (Dask sends bytes as they are). A run of 614k
    # token types sends 18 MB: 29 MB as int64 and with its lowercased texts, which the client now makes
    starts, columns, values = counts.arrays()
    return pickle.dumps((_joined(builder.vocabulary.values), labels, tuple(map(compact_counts, (np.diff(starts),
                         columns, values))), builder.n_sentences, builder.decoding, _joined(builder.texts),
                         tuple(map(compact_counts, mentions))), protocol=pickle.HIGHEST_PROTOCOL), key


class _Part(NamedTuple):
    """A part of ``build_distributed``'s first round, as read on the client: the strings
    newline-joined in UTF-8 as sent (``joined_*``) and split; ``mentions``: each one's
    text's place in ``texts``, its label column, its count (``int64``)."""
    vocab: List[str]
    joined_vocab: bytes
    labels: List[str]
    counts: LabelCounts
    n_sentences: int
    decoding: Tuple[str, str, str]
    texts: List[str]
    joined_texts: bytes
    mentions: Tuple[np.ndarray, np.ndarray, np.ndarray]


def _read_part(blob: bytes) -> _Part:
    """The part ``_run_statistics`` sent, its strings split and its arrays as ``int64``."""
    vocab, labels, (lengths, columns, values), n_sentences, decoding, texts, mentions = pickle.loads(blob)
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    counts = LabelCounts(starts, columns.astype(np.int32), values.astype(np.int64), len(labels))
    return _Part(_split_joined(vocab), vocab[0], labels, counts, n_sentences, decoding, _split_joined(texts), texts[0],
                 tuple(part.astype(np.int64) for part in mentions))


def _joined(strings: List[str]) -> Tuple[bytes, int]:
    """Strings that hold no newline as one UTF-8 blob (lone surrogates kept, as read) and how
    many there are."""
    joined = newline_joined(strings)
    if joined is None:
        raise ValueError("a token holds a newline: not read from a CoNLL file")
    return joined, len(strings)


def _split_joined(joined: Tuple[bytes, int]) -> List[str]:
    """The strings ``_joined`` joined."""
    blob, n = joined
    return blob.decode("utf-8", "surrogatepass").split("\n") if n else []


class _Sealed:
    """A value passed to a Dask task as one object."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _run_own_occurrences(part: Tuple[bytes, str], paths: List[str]) -> bytes:
    """The second round: the occurrences of a run's own mention texts (as written and
    lowercased: in the order of its mentions, first met first) in its text (``part``: the
    first round's result), pickled as ``_occurrences_in_run``."""
    kept = _KEPT.get(part[1])
    if part[1] is None:  # shards without a token: nothing to count in
        texts, lowered = [], []
    elif kept:
        texts, lowered = kept[3:5]
    else:
        texts = _read_part(part[0]).texts
        lowered = _lowered_texts(texts)
    return _occurrences_in_run(paths, part[1], texts, lowered, keep=True, own=True)


def _run_occurrences(paths: List[str], key: str, lacking: _Sealed, after=None) -> bytes:
    """The third round: the occurrences of the texts ``lacking`` holds (the mention texts of
    the other runs, and lowercased) in a run's text, which is then let go (``after``: a task
    to wait for, the second round)."""
    return _occurrences_in_run(paths, key, *lacking.value, keep=False)


def _occurrences_in_run(paths: List[str], key: str, texts: List[str], lowered: List[str], keep: bool,
                        own: bool = False) -> bytes:
    """``(occurrences of texts, of lowered in the lowercased text)`` in a run's text, as two
    ``int64`` arrays in their order (no strings to send back), pickled: from the text kept by
    the first round, or, on a process that does not hold it, from the run read again;
    ``keep``: the kept text stays for a later round; ``own``: ``texts`` are the run's own
    mention texts (their token ids kept by the first round are read instead of the texts)."""
    kept = _KEPT.get(key) if keep else _KEPT.pop(key, None)
    try:
        if not texts and not lowered:
            counted = (np.zeros(0, dtype=np.int64),) * 2
        elif kept is None:
            stats = TrainStats._from_pieces(paths, PIECE_BYTES, _Builder(keep_text=True))
            lower = stats.lowercased()
            counted = (stats.occurrences([t.split(" ") for t in texts], texts),
                       lower.occurrences([t.split(" ") for t in lowered], lowered))
        else:
            counted = kept[0].counts(kept[1], kept[2], texts, lowered, kept[5] if own else None)
    finally:
        if kept is not None and not keep:
            kept[0].close()
    return pickle.dumps(counted, protocol=pickle.HIGHEST_PROTOCOL)


def _conll_stats_bytes(path: str, decoding: Tuple[str, str, str] = DEFAULT_DECODING) -> Optional[bytes]:
    """The map step with the text: stats travel as their compact file form (None for a shard
    without a token)."""
    builder = _Builder(keep_text=True, decoding=decoding)
    _add_pieces([path], PIECE_BYTES, builder)
    return builder.stats().to_bytes() if builder.n_tokens else None
