import io
import json
import re
import sys
import zipfile

import datasets
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tough_ner import TrainStats
from tough_ner.core.stats import LabelCounts

from conftest import version_1_bytes, write

WORDS = ["a", "b", "Paris", "May", "x-y"]
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-geo-loc"]
sentences = st.lists(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(TAGS)), min_size=1, max_size=6),
                     min_size=1, max_size=5)  # training data holds at least one sentence


def split(data):
    return [[w for w, _ in s] for s in data], [[t for _, t in s] for s in data]


@settings(max_examples=60, deadline=None)
@given(sentences, sentences)
def test_merge_equals_stats_of_concatenated_data(left, right):
    merged = TrainStats.from_lists(*split(left)).merge(TrainStats.from_lists(*split(right)))
    assert merged == TrainStats.from_lists(*split(left + right))


def test_counts_and_mentions():
    stats = TrainStats.from_lists([["Ann", "Lee", "met", "Ann"]], [["B-PER", "I-PER", "O", "B-LOC"]])
    assert stats.labels == ["O", "LOC", "PER"]
    assert stats.counts_of(["Ann", "met", "zzz"]).tolist() == [[0, 1, 1], [1, 0, 0], [0, 0, 0]]
    assert stats.mentions == {("Ann Lee", "PER"): 1, ("Ann", "LOC"): 1}
    assert stats.n_tokens == 4 and stats.n_sentences == 1


def test_save_load_roundtrip_and_bad_files(tmp_path, monkeypatch):
    stats = TrainStats.from_lists([["Ann", "ran"], ["Bonn"]], [["B-PER", "O"], ["B-LOC"]])
    stats.save(tmp_path / "s.npz")
    assert TrainStats.load(tmp_path / "s.npz") == stats
    assert TrainStats.coerce(str(tmp_path / "s.npz")) == stats
    write(tmp_path / "bad.npz", "not a zip")
    with pytest.raises(ValueError, match="not a readable tough-ner stats file"):
        TrainStats.coerce(tmp_path / "bad.npz")
    with monkeypatch.context() as patch:
        patch.setattr("tough_ner.stats.VERSION", 9)
        stats.save(tmp_path / "v9.npz")
    with pytest.raises(ValueError, match="stats format version 9; this tough-ner reads versions 1 and 2"):
        TrainStats.load(tmp_path / "v9.npz")
    with zipfile.ZipFile(tmp_path / "other.npz", "w") as archive:
        archive.writestr("x.npy", b"")
    with pytest.raises(ValueError, match="not a readable tough-ner stats file"):
        TrainStats.load(tmp_path / "other.npz")


def test_coerce_errors(tmp_path):
    with pytest.raises(ValueError, match="training statistics are required"):
        TrainStats.coerce(None)
    with pytest.raises(FileNotFoundError, match="no such file"):
        TrainStats.coerce(tmp_path / "missing.txt")
    with pytest.raises(TypeError, match="not int"):
        TrainStats.coerce(3)
    conll = write(tmp_path / "t.conll", "Ann B-PER\n")
    assert TrainStats.coerce(conll).mentions == {("Ann", "PER"): 1}


def test_bad_training_input():
    with pytest.raises(ValueError, match="sentence 1: 1 tokens but 2 tags"):
        TrainStats.from_lists([["a"], ["b"]], [["O"], ["O", "O"]])
    with pytest.raises(ValueError, match="sentence 0, position 1: token 3 is a int"):
        TrainStats.from_lists([["a", 3]], [["O", "O"]])
    with pytest.raises(ValueError, match="sentence 0, position 0: unknown tag 'Z'"):
        TrainStats.from_lists([["a"]], [["Z"]])
    for tokens in ([], [[]]):
        with pytest.raises(ValueError, match="training data holds no sentence"):
            TrainStats.from_lists(tokens, tokens)


def test_parallel_dataset_build_equals_single_process():
    names = ["O", "B-PER", "I-PER", "B-LOC"]
    rng = np.random.default_rng(0)
    tokens = [[f"w{rng.integers(30)}" for _ in range(rng.integers(1, 8))] for _ in range(40)]
    tags = [[int(rng.integers(4)) for _ in sentence] for sentence in tokens]
    features = datasets.Features({"tokens": datasets.List(datasets.Value("string")),
                                  "ner_tags": datasets.List(datasets.ClassLabel(names=names))})
    ds = datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags}, features=features)
    single = TrainStats.from_dataset(ds)
    assert TrainStats.from_dataset(ds, num_proc=2) == single
    assert single == TrainStats.from_lists(tokens, [[names[i] for i in s] for s in tags])


def test_conll_tables_1_and_2(conll_stats, conll_test, conll_dev):
    described = conll_stats.describe()
    assert described == {"mentions": 23499, "ambiguous_mentions": 1632, "unique_mentions": 8082,
                         "ambiguous_unique_mentions": 132}
    assert round(100 * described["ambiguous_mentions"] / described["mentions"], 1) == 6.9  # HardEval Table 1: 6.9 %
    assert conll_stats.describe_test(conll_test.tokens, conll_test.tags) == {
        "mentions": 5648, "unseen_mentions": 2600, "unique_mentions": 2637, "unseen_unique_mentions": 1706}
    assert conll_stats.describe_test(conll_dev.tokens, conll_dev.tags) == {
        "mentions": 5942, "unseen_mentions": 1900, "unique_mentions": 2809, "unseen_unique_mentions": 1418}


def test_conll_stats_roundtrip(conll_stats, tmp_path):
    conll_stats.save(tmp_path / "conll.npz")
    assert TrainStats.load(tmp_path / "conll.npz") == conll_stats


# ---- a small corpus worked out by hand ------------------------------------------------------
HAND_TOKENS = [["Bo", "Lee", "met", "Bo"], ["Bo", "Lee", "ran"], ["Bo"], ["bo", "MET"]]
HAND_TAGS = [["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "I-PER", "O"], ["S-PER"], ["B-LOC", "O"]]


def test_small_corpus_by_hand():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    assert stats.vocab == ["Bo", "Lee", "met", "ran", "bo", "MET"] and stats.labels == ["O", "LOC", "PER"]
    assert stats.label_counts.dense().tolist() == [[0, 1, 3], [0, 0, 2], [1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]]
    assert list(stats.mentions.items()) == [(("Bo Lee", "PER"), 2), (("Bo", "LOC"), 1), (("Bo", "PER"), 1),
                                            (("bo", "LOC"), 1)]
    assert stats.token_ids.tolist() == [0, 1, 2, 0, 0, 1, 3, 0, 4, 5]
    assert stats.sentence_starts.tolist() == [0, 4, 7, 8, 10]
    assert (stats.n_tokens, stats.n_sentences, stats.n_mentions) == (10, 4, 5)
    assert repr(stats) == ("TrainStats(4 sentences, 10 tokens, 6 types of token, 5 mentions, "
                           "labels=['O', 'LOC', 'PER'])")
    assert stats.ids(["MET", "x", "Bo"]).tolist() == [5, -1, 0]
    assert stats.counts_of(["Bo", "zzz", "MET"]).tolist() == [[0, 1, 3], [0, 0, 0], [1, 0, 0]]
    assert stats.token_totals.tolist() == [4, 2, 1, 1, 1, 1]
    assert stats.lower_vocab == {"bo", "lee", "met", "ran"}
    assert stats.mention_text_counts == {"Bo Lee": 2, "Bo": 2, "bo": 1}
    assert stats.mention_types() == {"Bo Lee": {"PER": 2}, "Bo": {"LOC": 1, "PER": 1}, "bo": {"LOC": 1}}
    assert stats.describe() == {"mentions": 5, "ambiguous_mentions": 2, "unique_mentions": 3,
                                "ambiguous_unique_mentions": 1}
    test_tokens = [["Bo", "Lee", "and", "Ann"], ["Bo"], ["Ann"]]
    test_tags = [["B-PER", "I-PER", "O", "B-PER"], ["B-LOC"], ["B-ORG"]]
    assert stats.describe_test(test_tokens, test_tags) == {"mentions": 4, "unseen_mentions": 2,
                                                           "unique_mentions": 3, "unseen_unique_mentions": 1}
    # occurrences inside one sentence, annotated or not: "Bo Bo" only across a sentence end
    queries = [["Bo"], ["Bo", "Lee"], ["Lee", "met"], ["Bo", "Lee", "met", "Bo"], ["Bo", "Bo"], ["Lee", "ran"],
               ["zzz"], ["met", "zzz"], ["bo", "MET"], ["Bo", "met"], ["MET"]]
    assert stats.occurrences(queries).tolist() == [4, 2, 1, 1, 0, 1, 0, 0, 1, 0, 1]


def test_lowercased_by_hand():
    lowered = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).lowercased()
    assert lowered.vocab == ["bo", "lee", "met", "ran"] and lowered.labels == ["O", "LOC", "PER"]
    assert lowered.label_counts.dense().tolist() == [[0, 2, 3], [0, 0, 2], [2, 0, 0], [1, 0, 0]]
    assert lowered.mentions == {("bo lee", "PER"): 2, ("bo", "LOC"): 2, ("bo", "PER"): 1}
    assert lowered.token_ids.tolist() == [0, 1, 2, 0, 0, 1, 3, 0, 0, 2]
    assert lowered.sentence_starts.tolist() == [0, 4, 7, 8, 10]
    assert lowered.describe()["ambiguous_mentions"] == 3
    assert lowered.occurrences([["bo", "met"], ["bo"], ["met"]]).tolist() == [1, 5, 2]
    assert lowered.label_counts.values.dtype == np.int64 and TrainStats.from_bytes(lowered.to_bytes()) == lowered


def test_shareable_statistics_by_hand():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    blob = stats.to_bytes(shareable=True)
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        meta = json.loads(np.load(io.BytesIO(archive.read("meta.json.npy"))).tobytes())
    assert meta["shareable"] is True and meta["n_sentences"] == 4
    assert meta["occurrences"] == [["Bo", 4], ["Bo Lee", 2], ["bo", 1]]  # sorted by text
    assert meta["lower_occurrences"] == [["bo", 5], ["bo lee", 2]]
    shared = TrainStats.from_bytes(blob)
    assert (shared.n_tokens, shared.n_sentences, shared.shareable) == (10, 4, True)
    assert shared.occurrences([["Bo", "Lee"], ["Bo"], ["bo"], ["Lee"]]).tolist() == [2, 4, 1, 2]
    assert shared.lowercased().occurrences([["bo", "lee"], ["bo"]]).tolist() == [2, 5]
    assert shared.lowercased().n_sentences == 4 and shared.lowercased().describe() == stats.lowercased().describe()
    assert repr(shared) == ("TrainStats(4 sentences, 10 tokens, 6 types of token, 5 mentions, "
                            "labels=['O', 'LOC', 'PER'], without the text)")


def test_built_statistics_count_their_mentions_when_first_read(tmp_path, monkeypatch):
    """Built from the data, the mentions are kept as spans of the running text and counted
    on first read (HardEval never reads them); the count and the vocabulary index need no
    counting, and the result equals the counting done by hand above."""
    from tough_ner.stats import MentionSpans

    path = write(tmp_path / "train.conll", "".join(
        "".join(f"{token} {tag}\n" for token, tag in zip(tokens, tags)) + "\n"
        for tokens, tags in zip(HAND_TOKENS, HAND_TAGS)))
    for stats in (TrainStats.from_lists(HAND_TOKENS, HAND_TAGS), TrainStats.from_conll(path, keep_text=True)):
        assert "mentions" not in stats.__dict__ and stats.n_mentions == 5 and "mentions" not in stats.__dict__
        assert stats.ids(["MET", "Bo"]).tolist() == [5, 0] and stats.token_index == {
            token: i for i, token in enumerate(stats.vocab)}
        assert list(stats.mentions.items()) == [(("Bo Lee", "PER"), 2), (("Bo", "LOC"), 1), (("Bo", "PER"), 1),
                                                (("bo", "LOC"), 1)]
        assert stats == TrainStats(stats.vocab, stats.labels, stats.label_counts, dict(stats.mentions),
                                   stats.token_ids, stats.sentence_starts)
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    from tough_ner import stats as stats_module

    with monkeypatch.context() as patch:  # a count interrupted (Ctrl-C, memory) can be read again
        patch.setattr(stats_module, "_span_texts", lambda *args: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            stats.mentions
    assert stats.mentions == TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).mentions and stats.n_mentions == 5
    spans = MentionSpans(np.array([0]), np.array([2]), np.array([2]))
    with pytest.raises(TypeError, match="mention spans need the running text"):
        TrainStats(stats.vocab, stats.labels, stats.label_counts, spans, n_sentences=4, mention_occurrences={},
                   lower_occurrences={})


def test_constructor_needs_either_the_text_or_the_three_shareable_parts():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    parts = (stats.vocab, stats.labels, stats.label_counts, stats.mentions)
    whole = {"n_sentences": 4, "mention_occurrences": {}, "lower_occurrences": {}}
    assert TrainStats(*parts, **whole).shareable
    for wrong in ({"sentence_starts": stats.sentence_starts}, {"n_sentences": None},
                  {"mention_occurrences": None}, {"lower_occurrences": None}):
        with pytest.raises(TypeError, match="statistics without token_ids need n_sentences"):
            TrainStats(*parts, **{**whole, **wrong})
    with pytest.raises(ValueError, match="training data holds no sentence"):
        TrainStats([], ["O"], np.zeros((0, 1), dtype=np.int64), {}, **whole)


def test_equality_looks_at_every_part():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    vocab, labels, counts, mentions, ids, starts = (stats.vocab, stats.labels, stats.label_counts.dense(),
                                                    stats.mentions, stats.token_ids, stats.sentence_starts)
    assert TrainStats(list(vocab), list(labels), counts.copy(), dict(mentions), ids.copy(), starts.copy()) == stats
    assert TrainStats(vocab, labels, stats.label_counts, mentions, ids, starts) == stats  # sparse or dense alike
    variants = [TrainStats(["X"] + vocab[1:], labels, counts, mentions, ids, starts),
                TrainStats(vocab, labels[:1] + labels[:0:-1], counts, mentions, ids, starts),  # types swapped
                TrainStats(vocab, labels, counts + np.eye(6, 3, dtype=np.int64), mentions, ids, starts),
                TrainStats(vocab, labels, counts, {**mentions, ("Lee", "PER"): 1}, ids, starts),
                TrainStats(vocab, labels, counts, mentions, ids[::-1].copy(), starts),
                TrainStats(vocab, labels, counts, mentions, ids, np.array([0, 4, 7, 9, 10]))]
    for variant in variants:
        assert variant != stats and stats != variant
    assert stats != "stats" and stats != stats.to_bytes()
    shared = TrainStats.from_bytes(stats.to_bytes(shareable=True))
    # statistics without the text equal the ones they come from; the text is compared when both hold it
    assert shared == stats and stats == shared and shared == TrainStats.from_bytes(shared.to_bytes())
    assert shared != variants[4] and variants[4] != shared
    tables = {"mention_occurrences": shared._mention_occurrences, "lower_occurrences": shared._lower_occurrences}
    assert TrainStats(vocab, labels, counts, mentions, n_sentences=4, **tables) == shared
    assert TrainStats(vocab, labels, counts, mentions, n_sentences=5, **tables) != shared
    for key in tables:
        other = {**tables, key: {**tables[key], "Bo": 9}}
        assert TrainStats(vocab, labels, counts, mentions, n_sentences=4, **other) != shared


def test_coerce_reads_what_train_may_be(tmp_path):
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    stats.save(tmp_path / "stats.bin")  # a stats file by its content, whatever its name
    assert TrainStats.coerce(tmp_path / "stats.bin") == stats
    # bytes before the archive (as zip readers allow): found by the end record, not read as CoNLL
    (tmp_path / "prefixed.bin").write_bytes(b"prefix\n" + (tmp_path / "stats.bin").read_bytes())
    assert TrainStats.coerce(tmp_path / "prefixed.bin") == stats
    # cut short, its end record gone: a stats file by its first bytes, refused as one, not read as CoNLL
    blob = (tmp_path / "stats.bin").read_bytes()
    (tmp_path / "cut.bin").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="cut.bin is not a readable tough-ner stats file"):
        TrainStats.coerce(tmp_path / "cut.bin")
    with pytest.raises(IsADirectoryError, match="is a directory, not a stats or CoNLL file"):
        TrainStats.coerce(tmp_path)
    dataset = datasets.Dataset.from_dict({"tokens": HAND_TOKENS, "ner_tags": HAND_TAGS})
    assert TrainStats.coerce(dataset) == stats
    with pytest.raises(ValueError, match="tokens and tags must be lists of sentences, not one string"):
        TrainStats.from_lists("Bo", [["O"]])
    with pytest.raises(ValueError, match="4 token sentences but 3 tag sentences"):
        TrainStats.from_lists(HAND_TOKENS, HAND_TAGS[:3])


def test_build_distributed_merges_shards_in_order(tmp_path):
    pytest.importorskip("dask.bag")
    from tough_ner.stats import build_distributed
    paths = []
    for i, (tokens, tags) in enumerate(((HAND_TOKENS[:1], HAND_TAGS[:1]), (HAND_TOKENS[1:], HAND_TAGS[1:]))):
        paths.append(tmp_path / f"shard{i}.conll")
        paths[-1].write_text("".join(" ".join(pair) + "\n" for s in zip(tokens, tags)
                                     for pair in list(zip(*s)) + [()]), encoding="utf-8")
    expected = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    import dask
    graphs = []

    def client(graph, keys, **options):  # a scheduler that says it was used
        graphs.append(keys)
        return dask.get(graph, keys, **options)
    assert build_distributed(paths, client) == expected and graphs
    with dask.config.set(scheduler="synchronous"):  # no client: Dask's current scheduler
        assert build_distributed(paths) == expected
    with pytest.raises(ValueError, match="^build_distributed needs at least one CoNLL shard$"):
        build_distributed([])


def test_coerce_names_standard_input_and_what_it_takes(monkeypatch):
    with pytest.raises(ValueError, match="^training statistics are required: pass train= a TrainStats, a stats "
                                         "file, a CoNLL training file or a datasets.Dataset$"):
        TrainStats.coerce(None)
    for blob, message in ((b"PK\x03\x04garbage", "<stdin> is not a readable tough-ner stats file"),
                          (b"Ann B-PER\n\xff O\n", "<stdin>, line 2: bytes that are not UTF-8"),
                          (b"Ann B-PER\nx Q-X\n", "<stdin>, line 2, column 2: unknown tag 'Q-X'")):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(blob)))
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            TrainStats.coerce("-")

    class Columns:  # column names but no features: not a dataset
        column_names = ["tokens", "ner_tags"]
    with pytest.raises(TypeError, match="not Columns"):
        TrainStats.coerce(Columns())


def test_describe_test_names_the_bad_sentence():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    with pytest.raises(ValueError, match="^sentence 1, position 0: unknown tag 'Q-X'"):
        stats.describe_test([["a"], ["b"]], [["O"], ["Q-X"]])


def test_fixed_length_and_untyped_columns_take_the_list_path():
    """Columns the column-wise path does not take (fixed-length lists; a stream's batch of empty
    sentences, typed null by Arrow) give the statistics of the same sentences as lists."""
    tokens, tags = [["Bo", "Lee"], ["met", "Bo"], ["Bo", "ran"]], [["B-PER", "I-PER"], ["O", "B-LOC"], ["S-PER", "O"]]
    features = datasets.Features({"tokens": datasets.List(datasets.Value("string"), length=2),
                                  "ner_tags": datasets.List(datasets.Value("string"), length=2)})
    fixed = datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags}, features=features)
    assert fixed.features["tokens"].length == 2
    for batch_size in (1, 2, 10):
        assert TrainStats.from_dataset(fixed, batch_size=batch_size) == TrainStats.from_lists(tokens, tags)
    with_empty = [[], [], ["Bo", "Lee"], [], []], [[], [], ["B-PER", "I-PER"], [], []]

    def rows():
        yield from ({"tokens": a, "ner_tags": b} for a, b in zip(*with_empty))
    stream = datasets.IterableDataset.from_generator(rows)
    built = TrainStats.from_dataset(stream, batch_size=2)
    assert built == TrainStats.from_lists(*with_empty) and built.n_sentences == 5
    kept = TrainStats.from_dataset(stream, batch_size=2, keep_text=True)
    assert kept == built and kept.sentence_starts.tolist() == [0, 0, 0, 2, 2, 2]
    empty = datasets.IterableDataset.from_generator(lambda: iter([{"tokens": [], "ner_tags": []}] * 3))
    with pytest.raises(ValueError, match="training data holds no sentence"):
        TrainStats.from_dataset(empty, batch_size=2)


def test_map_step_of_the_parallel_build():
    """``_stats_bytes_of_batch``, run by ``datasets.map`` in worker processes: one shard's file and
    sentence count, errors numbered from the shard's first index."""
    import pyarrow as pa
    from tough_ner.stats import _stats_bytes_of_batch
    tokens, tags = HAND_TOKENS, HAND_TAGS
    table = pa.table({"tokens": tokens, "ner_tags": tags})
    for batch_size in (1, 3, 100):
        out = _stats_bytes_of_batch(table, [7, 8, 9, 10], "tokens", "ner_tags", None, batch_size)
        assert out["sentences"] == [4]
        assert TrainStats.from_bytes(out["stats"][0]) == TrainStats.from_lists(tokens, tags)
    ids = pa.table({"t": [["a", "b"], ["c"]], "y": [[1, 0], [2]]})
    assert TrainStats.from_bytes(_stats_bytes_of_batch(ids, [0, 1], "t", "y", ["O", "B-PER", "S-LOC"], 1)["stats"][0]) \
        == TrainStats.from_lists([["a", "b"], ["c"]], [["B-PER", "O"], ["S-LOC"]])
    assert _stats_bytes_of_batch(pa.table({"tokens": [[], []], "ner_tags": [[], []]}).cast(table.schema), [3, 4],
                                 "tokens", "ner_tags", None, 1) == {"stats": [b""], "sentences": [2]}
    bad = pa.table({"tokens": [["a"], ["b"], ["c"]], "ner_tags": [["O"], ["O"], ["Q-X"]]})
    for batch_size in (1, 2, 5):
        with pytest.raises(ValueError, match="^sentence 12, position 0: unknown tag 'Q-X'"):
            _stats_bytes_of_batch(bad, [10, 11, 12], "tokens", "ner_tags", None, batch_size)
    with pytest.raises(ValueError, match="^sentence 2, position 0: unknown tag 'Q-X'"):
        _stats_bytes_of_batch(bad, [], "tokens", "ner_tags", None, 2)  # no indices: numbered from 0


def test_messages_name_the_file_and_what_needs_the_text(tmp_path):
    write(tmp_path / "bad.npz", "not a zip")
    with pytest.raises(ValueError, match="^" + re.escape(f"{tmp_path / 'bad.npz'} is not a readable tough-ner stats")):
        TrainStats.load(tmp_path / "bad.npz")
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    shared = TrainStats.from_bytes(stats.to_bytes(shareable=True))
    with pytest.raises(ValueError, match=r"^merging statistics \(occurrences of one part's mentions in another "
                                         r"part's text\) needs the training text, which these statistics leave out "
                                         r"\(built without keep_text=True"):
        TrainStats.merge_all([stats, shared])


def test_shareable_file_keeps_a_mention_whose_split_text_never_occurs():
    """A mention of one token holding a space ("New York"): its text split at spaces (New, York)
    may never occur in training: an occurrence count of 0 is valid in the file."""
    stats = TrainStats.from_lists([["New York", "is"], ["York", "New"]], [["B-LOC", "O"], ["O", "O"]])
    shared = TrainStats.from_bytes(stats.to_bytes(shareable=True))
    assert shared._mention_occurrences == {"New York": 0} and shared._lower_occurrences == {"new york": 0}
    # New, York: both tokens seen, never in that order; the table's 0 answers it without the text
    counts = shared.occurrences([["New York"], ["New", "York"]])
    assert counts.tolist() == [1, 0] and counts.dtype == np.int64
    assert stats.occurrences([["New York"], ["New", "York"], ["York", "New"]]).tolist() == [1, 0, 1]


# ---- the file's checks, one condition at a time --------------------------------------------
def _members(blob: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _npy(array, version=None) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asanyarray(array), version=version, allow_pickle=False)
    return buffer.getvalue()


def _archive(members: dict) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _changed(shareable=False, meta=None, drop=(), raw_meta=None, **arrays) -> bytes:
    """The hand corpus' file with metadata keys set (``meta``) or dropped, or its metadata bytes
    replaced (``raw_meta``), and members replaced (``name=array or bytes``; None removes one)."""
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)  # a dense label_counts: a file of version 1
    members = _members(version_1_bytes(stats, shareable) if "label_counts" in arrays else stats.to_bytes(shareable))
    content = json.loads(np.load(io.BytesIO(members["meta.json.npy"])).tobytes())
    content.update(meta or {})
    for key in drop:
        content.pop(key)
    data = json.dumps(content).encode() if raw_meta is None else raw_meta
    members["meta.json.npy"] = _npy(np.frombuffer(data, dtype=np.uint8))
    for name, array in arrays.items():
        if array is None:
            members.pop(name + ".npy")
        else:
            members[name + ".npy"] = array if isinstance(array, bytes) else _npy(array)
    return _archive(members)


COUNTS = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).label_counts.dense()
IDS = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).token_ids  # 10 ids of a vocabulary of 6


def _counts_adding_up_to(total: int) -> np.ndarray:
    """The hand corpus' label counts with two cells raised so that all add up to ``total``,
    each below it."""
    counts = COUNTS.copy()
    extra = total - int(counts.sum())
    counts[0, 0] += extra // 2
    counts[1, 1] += extra - extra // 2
    return counts


@pytest.mark.parametrize("blob, message", [
    # the archive
    (lambda: b"PK\x03\x04" + bytes(40), "not a readable tough-ner stats file ("),
    (lambda: _changed(sentence_starts=None), "missing ['sentence_starts.npy'], unexpected []"),
    (lambda: _changed(token_ids=None, sentence_starts=None), "disagree on whether it holds the training text"),
    (lambda: _changed(token_ids=_npy(IDS, version=(3, 0))), "token_ids has .npy format version (3, 0)"),
    (lambda: _changed(token_ids=IDS.reshape(2, 5)), "token_ids is int32 of 2 dimension(s), expected int32 of 1"),
    (lambda: _changed(label_counts=np.asfortranarray(COUNTS)), "label_counts is int64 of 2 dimension(s)"),
    (lambda: _changed(raw_meta=b"\xff{}"), "(metadata: 'utf-8' codec can't decode"),
    (lambda: _changed(raw_meta=b"{nope"), "(metadata: Expecting property name"),
    (lambda: _changed(raw_meta=b"[]"), "is not a tough-ner stats file"),
    (lambda: _changed(raw_meta=b"[" * 100_000), "is not a readable tough-ner stats file (metadata nested too deeply)"),
    (lambda: _changed(meta={"format": "other"}), "is not a tough-ner stats file"),
    # the metadata
    (lambda: _changed(drop=["labels", "mentions"]), "is inconsistent: its metadata lacks labels, mentions"),
    (lambda: _changed(meta={"vocab": "BoLee"}), "is inconsistent: the vocabulary is not a list of distinct strings$"),
    (lambda: _changed(meta={"vocab": ["Bo", "Lee", "met", "ran", "bo", 5]}), "the vocabulary is not a list"),
    (lambda: _changed(meta={"vocab": ["Bo", "Lee", "met", "ran", "bo", "Bo"]}), "the vocabulary is not a list"),
    (lambda: _changed(meta={"labels": "OLP"}), "is inconsistent: the labels are not 'O' followed by distinct entity types$"),
    (lambda: _changed(meta={"labels": []}), "the labels are not 'O' followed"),
    (lambda: _changed(meta={"labels": ["O", "LOC", "LOC"]}), "the labels are not 'O' followed"),
    (lambda: _changed(meta={"labels": ["O", "LOC", 3]}), "the labels are not 'O' followed"),
    (lambda: _changed(meta={"labels": ["O", "LOC", ""]}), "the labels are not 'O' followed"),
    (lambda: _changed(meta={"mentions": {"Bo": 1}}), "the mentions are not a list"),
    (lambda: _changed(meta={"mentions": ["Bo PER 1"]}), 'mention \'"Bo PER 1"\' is not a distinct'),
    (lambda: _changed(meta={"mentions": [["Bo", "PER"]]}), "is not a distinct [text, known type, count >= 1]"),
    (lambda: _changed(meta={"mentions": [[1, "PER", 1]]}), "mention '[1, \"PER\", 1]' is not a distinct"),
    (lambda: _changed(meta={"mentions": [["Bo", "PER", 1.0]]}), "is not a distinct"),
    (lambda: _changed(meta={"mentions": [["Bo", "PER", True]]}), "is not a distinct"),
    (lambda: _changed(meta={"mentions": [["Bo", "PER", 0]]}), "is not a distinct"),
    (lambda: _changed(meta={"mentions": [["Bo", "PER", 1], ["Bo", "PER", 2]]}), "is not a distinct"),
    (lambda: _changed(meta={"mentions": [["Bo", ["PER"], 1]]}), "mention '[\"Bo\", [\"PER\"], 1]' is not a distinct"),
    (lambda: _changed(meta={"mentions": [["Bo", "PER", 1], ["Lee", "GPE", 1]]}), "mention '[\"Lee\", \"GPE\", 1]' is"),
    # the arrays against the metadata and each other
    (lambda: _changed(label_counts=COUNTS[:5]), "label counts of shape (5, 3) for 6 tokens and 3 labels"),
    # the limits themselves: counts, each and in all, stay below 2**53
    (lambda: _changed(meta={"mentions": [["Bo", "PER", 2 ** 53 - 1], ["Lee", "PER", 1]]}),
     "its mention counts add up to 2**53 or more (at most 9007199254740991)"),
    (lambda: _changed(label_counts=np.where(COUNTS == COUNTS.max(), 2 ** 53, COUNTS)),
     "label counts add up to 2**53 or more (at most 9007199254740991)"),
    (lambda: _changed(label_counts=_counts_adding_up_to(2 ** 53)),
     "label counts add up to 2**53 or more (at most 9007199254740991)"),
    (lambda: _changed(token_ids=np.where(IDS == 5, 6, IDS).astype(np.int32)), "token ids outside the vocabulary of 6"),
    (lambda: _changed(sentence_starts=np.zeros(0, dtype=np.int64)), "sentence starts do not run from 0"),
    (lambda: _changed(sentence_starts=np.array([1, 4, 7, 8, 10])), "sentence starts do not run from 0"),
    (lambda: _changed(sentence_starts=np.array([0, 4, 7, 8, 9])), "sentence starts do not run from 0"),
    (lambda: _changed(sentence_starts=np.array([0, 7, 4, 8, 10])), "sentence starts do not run from 0"),
    # a shareable file's tables
    (lambda: _changed(True, meta={"n_sentences": True}), "n_sentences is 'true', not a count"),
    (lambda: _changed(True, meta={"n_sentences": "4"}), "n_sentences is '\"4\"', not a count"),
    (lambda: _changed(True, drop=["n_sentences"]), "n_sentences is 'null', not a count"),
    (lambda: _changed(True, meta={"occurrences": {"Bo": 4}}), r"its occurrences are not [text, count >= 0] rows"),
    (lambda: _changed(True, meta={"occurrences": ["Bo"]}), r"its occurrences are not [text, count >= 0] rows"),
    (lambda: _changed(True, meta={"occurrences": [["Bo", 4, 1]]}), r"its occurrences are not [text, count"),
    (lambda: _changed(True, meta={"occurrences": [[4, "Bo"]]}), r"its occurrences are not [text, count"),
    (lambda: _changed(True, meta={"occurrences": [["Bo", 4.0], ["Bo Lee", 2], ["bo", 1]]}), "are not [text, count"),
    (lambda: _changed(True, meta={"occurrences": [["Bo", 4], ["Bo Lee", 2], ["bo", 1], ["Bo", 3]]}),
     "its occurrences do not cover exactly the training mention texts"),
    (lambda: _changed(True, meta={"lower_occurrences": [["bo", 5], ["bo lee", 2], ["x", 0]]}),
     "its lower_occurrences do not cover exactly"),
])
def test_every_check_of_the_file(blob, message):
    with pytest.raises(ValueError, match="^" + re.escape("stats bytes ")) as error:
        TrainStats.from_bytes(blob())
    if message.endswith("$"):  # the whole rest of the message
        assert str(error.value).endswith(message[:-1]), str(error.value)
    else:
        assert message in str(error.value)


def test_the_checks_accept_what_to_bytes_writes():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    assert TrainStats.from_bytes(_changed()) == stats  # the helper itself changes nothing
    assert TrainStats.from_bytes(_changed(True)) == TrainStats.from_bytes(stats.to_bytes(shareable=True))
    # version 2.0 .npy headers are read too (numpy writes them for very large headers)
    assert TrainStats.from_bytes(_changed(token_ids=_npy(IDS, version=(2, 0)))) == stats


def test_declared_sizes_are_refused_just_above_the_limit():
    """Members may declare at most MAX_EXPANSION times the file's size plus 1 MiB in all."""
    from tough_ner.stats import MAX_EXPANSION
    assert MAX_EXPANSION == 100
    blob = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).to_bytes()
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        others = sum(info.file_size for info in archive.infolist() if info.filename != "token_ids.npy")
    limit = 100 * len(blob) + 2 ** 20
    central = blob.rindex(b"token_ids.npy") - 46
    assert blob[central:central + 4] == b"PK\x01\x02"

    def declaring(total):  # token_ids.npy's uncompressed size in the central directory, patched
        return blob[:central + 24] + (total - others).to_bytes(4, "little") + blob[central + 28:]
    with pytest.raises(ValueError, match=f"its members declare {limit + 1} bytes uncompressed from a {len(blob)}-byte"):
        TrainStats.from_bytes(declaring(limit + 1))
    with pytest.raises(ValueError, match=f"token_ids declares {limit - others} bytes but its header describes"):
        TrainStats.from_bytes(declaring(limit))  # at the limit: read, then refused for what it holds


@pytest.mark.parametrize("bad, shown", [(["B-PER"], "['B-PER']: a list"), (3, "3: a int"), (None, "None: a NoneType"),
                                        ("B-", "'B-'")])
def test_a_tag_that_is_no_tag_is_named_by_sentence_and_position(bad, shown):
    tokens = [["a"], ["a", "b", "c"]]
    with pytest.raises(ValueError, match="^" + re.escape(f"sentence 6, position 2: unknown tag {shown}")):
        TrainStats.from_lists(tokens, [["O"], ["O", "B-PER", bad]], first=5)


def test_a_stream_of_unknown_columns_without_the_column_is_a_clear_error():
    """A stream without features has no column names until read: the first batch is checked
    (this was a KeyError 'ner_tags' from ``select_columns`` before the check could run)."""
    def rows():
        yield from ({"tokens": tokens, "labels": tags} for tokens, tags in zip(HAND_TOKENS, HAND_TAGS))
    stream = datasets.IterableDataset.from_generator(rows)
    assert stream.column_names is None
    with pytest.raises(ValueError, match=r"^the dataset has no column 'ner_tags' \(columns: \['labels', 'tokens'\]\)$"):
        TrainStats.from_dataset(stream)
    with pytest.raises(ValueError, match=r"^the dataset has no column 'words' \(columns: \['labels', 'tokens'\]\)$"):
        TrainStats.from_dataset(stream, tokens_column="words", tags_column="labels")
    expected = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    assert TrainStats.from_dataset(stream, tags_column="labels", batch_size=3) == expected
    assert TrainStats.from_dataset(stream, tags_column="labels", num_proc=1) == expected  # one process: a stream is fine
    with pytest.raises(ValueError, match=r"^num_proc needs a datasets.Dataset: a stream \(IterableDataset\) is read in "
                                         "one process, batch by batch$"):
        TrainStats.from_dataset(stream, tags_column="labels", num_proc=2)


def test_hash_collisions_never_count(monkeypatch):
    """The window hash only speeds matching up: with weights chosen to collide, counts stay exact."""
    tokens = [["x", "y", "z"], ["y", "x"]]  # ids x 0, y 1, z 2; windows (x y) (y z) (y x)
    stats = TrainStats.from_lists(tokens, [["O"] * len(s) for s in tokens])
    queries = [["x", "z"], ["y", "y"], ["z", "x"]]
    expected = [0, 0, 0]
    assert stats.occurrences(queries).tolist() == expected
    # hash 2a + b: windows (y x) and (y z) collide with the queries (x z) and (y y), no two queries collide
    monkeypatch.setattr("tough_ner.stats._window_weights", lambda length: np.array([2, 1], dtype=np.uint64))
    assert TrainStats.from_lists(tokens, [["O"] * len(s) for s in tokens]).occurrences(queries).tolist() == expected
    # equal weights: exactly two queries share a hash, and an absent query sorts last
    monkeypatch.setattr("tough_ner.stats._window_weights", lambda length: np.ones(length, dtype=np.uint64))
    fresh = TrainStats.from_lists(tokens, [["O"] * len(s) for s in tokens])
    assert fresh.occurrences([["x", "y"], ["y", "x"]]).tolist() == [1, 1]
    assert fresh.occurrences([["x", "y"], ["z", "z"], ["y", "x"]]).tolist() == [1, 0, 1]


def test_an_empty_sequence_occurs_nowhere():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    assert stats.occurrences([[], ["Bo"]]).tolist() == [0, 4]
    assert TrainStats.from_bytes(stats.to_bytes(shareable=True)).occurrences([[], ["Bo"]]).tolist() == [0, 4]
    with pytest.raises(ValueError, match=r"^counting the training occurrences of 'met Bo' \(not a training mention\) "
                                         "needs the training text"):
        TrainStats.from_bytes(stats.to_bytes(shareable=True)).occurrences([["met", "Bo"]])


def test_plain_columns_are_built_column_wise():
    """Plain Arrow or Python list columns are read as codes column-wise (no Python loop over
    tokens) and build, in the one builder, the statistics of the list way, to the byte."""
    import pyarrow as pa
    from tough_ner.stats import _arrow_codes, _Builder
    names = ["O", "B-PER", "I-PER", "B-LOC", "S-PER"]
    ids = [[names.index(t) for t in s] for s in HAND_TAGS]
    strings = pa.list_(pa.string())
    chunked = (pa.chunked_array([HAND_TOKENS[:2], HAND_TOKENS[2:]], type=strings),
               pa.chunked_array([HAND_TAGS[:2], HAND_TAGS[2:]], type=strings))
    large = pa.large_list(pa.large_string())
    expected = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    for tokens, tags, tag_names in ((HAND_TOKENS, HAND_TAGS, None), (HAND_TOKENS, ids, names),
                                    (pa.array(HAND_TOKENS, strings), pa.array(ids, pa.list_(pa.int8())), names),
                                    (*chunked, None), (pa.array(HAND_TOKENS, large), pa.array(HAND_TAGS, large), None)):
        codes = _arrow_codes(tokens, tags, tag_names)
        assert codes is not None, type(tokens)
        (vocab, token_ids), _, starts = codes
        assert vocab == expected.vocab and token_ids.tolist() == expected.token_ids.tolist()  # first-occurrence order
        assert starts.tolist() == [0, 4, 7, 8, 10]
        builder = _Builder()
        builder.add(*codes)
        built = builder.stats()
        assert built == expected and built.to_bytes() == expected.to_bytes()
    # ClassLabel ids: only the names used are codes (an unused name need not be a tag)
    _, tag_codes, _ = _arrow_codes([["a", "b"]], [[3, 0]], ["O", "junk", "B-LOC", "S-PER"])
    assert tag_codes[0] == ["O", "S-PER"] and tag_codes[1].tolist() == [1, 0]
    # a tag that is no tag is read as codes; the builder names it by sentence and position
    builder = _Builder()
    with pytest.raises(ValueError, match="^sentence 4, position 1: unknown tag 'Q-X'"):
        builder.add(*_arrow_codes([["a"], ["b", "c"]], [["O"], ["O", "Q-X"]], None), first=3)
    with pytest.raises(ValueError, match="^sentence 0, position 0: unknown tag 'bad2'"):  # the first in text order
        _Builder().add(*_arrow_codes([["a", "b"]], [[2, 1]], ["O", "bad1", "bad2"]))
    # what the column-wise way leaves to the list way (which names the problem, or copes)
    assert _arrow_codes([["a"], None], [["O"], ["O"]], None) is None  # a missing sentence
    assert _arrow_codes([["a"], ["b"]], [["O"], None], None) is None
    assert _arrow_codes([["a", None]], [["O", "O"]], None) is None  # a missing token
    assert _arrow_codes([["a", "b"]], [["O", None]], None) is None
    assert _arrow_codes([["a", "b"]], [["O"]], None) is None  # lengths differ
    assert _arrow_codes([[1, 2]], [["O", "O"]], None) is None  # tokens that are no strings
    assert _arrow_codes([["a"]], [[0]], None) is None  # tag ids without names
    assert _arrow_codes([["a"]], [["O"]], ["O"]) is None  # tag strings where ids are expected
    assert _arrow_codes([["a", "b"]], [[0, 2]], ["O", "B-PER"]) is None  # an id beyond the names
    assert _arrow_codes([["a", "b"]], [[0, -1]], ["O", "B-PER"]) is None
    assert _arrow_codes([["a"], ["b", "c"]], [["O"], "OO"], None) is None  # a string for a sentence


def test_large_string_columns():
    """``datasets.LargeList(Value("large_string"))`` columns (this was an ArrowNotImplementedError
    from the join of a mention's tokens)."""
    features = datasets.Features({"tokens": datasets.LargeList(datasets.Value("large_string")),
                                  "ner_tags": datasets.LargeList(datasets.Value("large_string"))})
    large = datasets.Dataset.from_dict({"tokens": HAND_TOKENS, "ner_tags": HAND_TAGS}, features=features)
    assert TrainStats.from_dataset(large, batch_size=3) == TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)


# ---- what mutation testing found untested (tools/MUTATION.md, "stats") ------------------------
def test_label_counts_do_not_depend_on_how_many_tokens_are_counted_at_once(monkeypatch):
    """The builder adds label counts a few million tokens at a time; in chunks of 3 tokens the
    counts are those of one pass (a chunk's counts replacing the sum survived mutation)."""
    import tough_ner.core.stats as stats_module

    whole = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    monkeypatch.setattr(stats_module, "_COUNTED_AT_ONCE", 3)
    chunked = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    assert chunked.label_counts.dense().tolist() == whole.label_counts.dense().tolist() and chunked == whole
    assert chunked.label_counts.total() == sum(map(len, HAND_TOKENS))


def test_messages_are_whole_and_number_sentences_from_first():
    with pytest.raises(ValueError, match="^training data holds no sentence \\(no token\\): check the training file "
                                         "or dataset$"):
        TrainStats.from_lists([[]], [[]])
    shared = TrainStats.from_bytes(TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).to_bytes(shareable=True))
    with pytest.raises(ValueError, match="^" + re.escape(
            "counting x needs the training text, which these statistics leave out (built without keep_text=True, "
            "or loaded from a file saved without the text): build them with keep_text=True (tough-ner stats "
            "--keep-text), and save them without --shareable") + "$"):
        shared.require_text("counting x")
    with pytest.raises(ValueError, match="^tokens and tags must be lists of sentences, not one string$"):
        TrainStats.from_lists([["a"]], "O")
    with pytest.raises(ValueError, match="^sentence 6: 1 tokens but 2 tags$"):  # a shard's sentences from first
        TrainStats.from_lists([["a"], ["b"]], [["O"], ["O", "O"]], first=5)
    with pytest.raises(ValueError, match="^training data holds no sentence"):  # no part: nothing to fold
        TrainStats.merge_all([])


def test_pieces_of_blank_lines_are_skipped_not_the_end(tmp_path):
    """A piece holding only blank lines (a small ``piece_bytes``) has no sentence: the pieces after it
    still count."""
    path = tmp_path / "gaps.conll"
    path.write_text("Bo B-PER\n" + "\n" * 40 + "Lee B-LOC\nran O\n\n\n\nBo S-PER\n", encoding="utf-8")
    expected = TrainStats.from_lists([["Bo"], ["Lee", "ran"], ["Bo"]], [["B-PER"], ["B-LOC", "O"], ["S-PER"]])
    for piece_bytes in (4, 10, 2 ** 20):
        assert TrainStats.from_conll(path, piece_bytes=piece_bytes) == expected


def test_occurrences_on_each_path_by_hand():
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    # one length of unseen tokens only, another to count from the text (neither a training mention)
    assert stats.occurrences([["zzz"], ["Lee", "ran"]]).tolist() == [0, 1]
    assert stats.occurrences([["Lee", "ran"], ["zzz", "Bo"], ["q"]]).tolist() == [1, 0, 0]
    counts = stats.occurrences([["Bo"], ["Bo", "Lee"]])  # every text read from the mention table
    assert counts.tolist() == [4, 2] and counts.dtype == np.int64
    # tokens holding a space take the careful path: a sequence outside the table is counted, not guessed
    spaced = TrainStats.from_lists([["New York", "is"], ["York", "New"]], [["B-LOC", "O"], ["O", "O"]])
    assert spaced.occurrences([["New York"], ["is", "York"], ["is"], ["York", "New"]]).tolist() == [1, 0, 1, 1]
    # the empty string as a token, and a mention: the empty sequence still occurs nowhere
    empty_token = TrainStats.from_lists([["", "a"]], [["B-PER", "O"]])
    assert empty_token.mentions == {("", "PER"): 1}
    assert empty_token.occurrences([[], [""], ["a"]]).tolist() == [0, 1, 1]


def test_map_step_keeps_a_shard_whose_last_sentences_are_empty():
    import pyarrow as pa
    from tough_ner.stats import _stats_bytes_of_batch
    tokens, tags = [["Bo", "Lee"], ["ran"], [], []], [["B-PER", "I-PER"], ["O"], [], []]
    table = pa.table({"tokens": tokens, "ner_tags": tags})
    for batch_size in (1, 2, 3):
        out = _stats_bytes_of_batch(table, [0, 1, 2, 3], "tokens", "ner_tags", None, batch_size)
        assert out["sentences"] == [4] and TrainStats.from_bytes(out["stats"][0]) == TrainStats.from_lists(tokens, tags)


def test_num_proc_shards_a_dataset_over_map(monkeypatch):
    """``num_proc`` > 1 on a Dataset of 2+ sentences: contiguous shards of ceil(n / num_proc) sentences,
    one per process, built by ``Dataset.map`` without its cache (datasets fingerprints a library
    function by its name, so a cached result could outlive a tough-ner upgrade); otherwise no map.
    The spy records what was asked and runs the map in this process (the result is the same)."""
    calls = []
    original = datasets.Dataset.map

    def spy(self, function, **options):
        calls.append(options)
        return original(self, function, **{**options, "num_proc": None})
    monkeypatch.setattr(datasets.Dataset, "map", spy)
    tokens = [["Bo"], ["Lee", "ran"], ["met"], ["Bo", "Lee"], ["x"]]
    tags = [["S-PER"], ["B-LOC", "O"], ["O"], ["B-PER", "I-PER"], ["O"]]
    whole = datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags})
    for num_proc, n, shard in ((2, 5, 3), (3, 5, 2), (5, 5, 1), (2, 2, 1)):
        calls.clear()
        built = TrainStats.from_dataset(whole.select(range(n)), num_proc=num_proc)
        assert built == TrainStats.from_lists(tokens[:n], tags[:n])
        assert [(call["num_proc"], call["batch_size"], call["load_from_cache_file"]) for call in calls] == [
            (num_proc, shard, False)]
    for num_proc, n in ((None, 5), (1, 5), (2, 1)):
        calls.clear()
        assert TrainStats.from_dataset(whole.select(range(n)), num_proc=num_proc) == \
            TrainStats.from_lists(tokens[:n], tags[:n])
        assert calls == []


def _header_only(descr: str, shape: tuple) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


HUGE = _header_only("<i8", (2 ** 61, 8))  # a header without its data


def _crc_broken() -> bytes:
    """The hand corpus' file with one byte of token_ids' data changed (the member's CRC no longer matches)."""
    blob = bytearray(TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).to_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(blob))) as archive:
        info = archive.getinfo("token_ids.npy")
    local_name = blob.index(b"token_ids.npy", info.header_offset)
    data = local_name + len("token_ids.npy") + int.from_bytes(blob[info.header_offset + 28:info.header_offset + 30],
                                                               "little")
    blob[data + info.file_size - 1] ^= 1  # the last id's high byte: 0 -> 1
    return bytes(blob)


@pytest.mark.parametrize("blob, message", [
    (lambda: b"not a zip", "is not a readable tough-ner stats file (File is not a zip file)"),
    (lambda: _changed(token_ids=_npy(IDS, version=(3, 0))),
     "is not a readable tough-ner stats file (token_ids has .npy format version (3, 0))"),
    (lambda: _changed(token_ids=b"\x93NUMPX" + _npy(IDS)[6:]),
     "is not a readable tough-ner stats file (the magic string is not correct..."),  # numpy's words from here
    (_crc_broken, "is not a readable tough-ner stats file (Bad CRC-32 for file 'token_ids.npy')"),
    # 2**61 x 8 int64 counts: 2**67 bytes, which int64 arithmetic would wrap to 0 (the header alone)
    (lambda: _changed(label_counts=HUGE), f"is not a readable tough-ner stats file (label_counts declares {len(HUGE)} "
                                          f"bytes but its header describes {len(HUGE) + 2 ** 67})"),
    (lambda: _changed(meta={"mentions": {"Bo": 1}}), "is inconsistent: the mentions are not a list"),
    (lambda: _changed(meta={"labels": ["O", 3, "PER"]}), "is inconsistent: the labels are not 'O' followed by distinct "
                                                         "entity types"),
    (lambda: _changed(label_counts=COUNTS - np.eye(6, 3, dtype=np.int64)), "is inconsistent: negative label counts"),
    (lambda: _changed(label_counts=COUNTS + np.eye(6, 3, dtype=np.int64)),
     "is inconsistent: label counts disagree with the training token ids"),
    (lambda: _changed(token_ids=None, sentence_starts=None),
     "is inconsistent: its metadata and its members disagree on whether it holds the training text"),
    (lambda: _changed(sentence_starts=np.array([0, 4, 7, 8, 9])),
     "is inconsistent: sentence starts do not run from 0 to the number of tokens"),
])
def test_file_errors_read_whole(blob, message):
    with pytest.raises(ValueError) as error:
        TrainStats.from_bytes(blob())
    if message.endswith("..."):  # the rest is another library's text
        assert str(error.value).startswith("stats bytes " + message[:-3]), str(error.value)
    else:
        assert str(error.value) == "stats bytes " + message


def test_files_of_empty_sentences_and_of_no_token():
    stats = TrainStats.from_lists([[], ["Bo", "Lee"], [], ["ran"], []], [[], ["B-PER", "I-PER"], [], ["O"], []])
    assert stats.sentence_starts.tolist() == [0, 0, 2, 2, 3, 3] and TrainStats.from_bytes(stats.to_bytes()) == stats
    nothing = _archive({"meta.json.npy": _npy(np.frombuffer(json.dumps(
        {"format": "tough-ner-train-stats", "version": 1, "vocab": [], "labels": ["O"], "mentions": []}).encode(),
        dtype=np.uint8)), "label_counts.npy": _npy(np.zeros((0, 1), dtype=np.int64)),
        "token_ids.npy": _npy(np.zeros(0, dtype=np.int32)), "sentence_starts.npy": _npy(np.zeros(1, dtype=np.int64))})
    with pytest.raises(ValueError, match="^training data holds no sentence"):  # a valid file of nothing
        TrainStats.from_bytes(nothing)


def test_statistics_whose_mentions_have_a_type_outside_the_labels_are_refused():
    built = TrainStats.from_lists([["Ann", "Lee", "went"], ["Bo"]], [["B-PER", "I-PER", "O"], ["B-LOC"]])
    with pytest.raises(ValueError, match=r"mentions typed \['GPE'\] but the labels are \['O', 'LOC', 'PER'\]"):
        TrainStats(built.vocab, built.labels, built.label_counts, {**built.mentions, ("Bo", "GPE"): 1},
                   built.token_ids, built.sentence_starts)


# ---- decoding as declared (#37) ---------------------------------------------------------------
IOB1_SENTENCES = ([["Ann", "Lee", "met", "Bo"]], [["I-PER", "I-PER", "O", "B-PER"]])


def test_every_build_decodes_training_tags_as_declared_and_records_it(tmp_path):
    """I-PER I-PER opens no span under IOB2's strict mode (nor with its discard repair),
    one under the lenient default; each build takes the options and the file keeps them."""
    default = TrainStats.from_lists(*IOB1_SENTENCES)
    assert default.decoding == ("auto", "lenient", "conlleval") and default.mentions == {
        ("Ann Lee", "PER"): 1, ("Bo", "PER"): 1}
    strict = {"scheme": "iob2", "mode": "strict"}  # any case; recorded in the canonical name
    path = write(tmp_path / "train.conll", "Ann I-PER\nLee I-PER\nmet O\nBo B-PER\n")
    built = [TrainStats.from_lists(*IOB1_SENTENCES, **strict), TrainStats.from_conll(path, **strict),
             TrainStats.from_conll(path, keep_text=True, **strict), TrainStats.coerce(str(path), **strict),
             TrainStats.from_dataset(datasets.Dataset.from_dict({"tokens": IOB1_SENTENCES[0],
                                                                 "ner_tags": IOB1_SENTENCES[1]}), **strict)]
    for stats in built:
        assert stats.decoding == ("IOB2", "strict", "conlleval") and stats.mentions == {("Bo", "PER"): 1}
        assert stats != default.without_text() or stats.mentions != default.mentions
    discard = TrainStats.from_lists(*IOB1_SENTENCES, scheme="IOB2", repair="discard")
    assert discard.mentions == {("Bo", "PER"): 1} and discard.decoding == ("IOB2", "lenient", "discard")
    assert TrainStats.from_lists(*IOB1_SENTENCES, scheme="IOB1").mentions == default.mentions
    for stats, shareable in ((built[2], False), (built[0], True)):
        stats.save(tmp_path / "s.npz", shareable=shareable)
        loaded = TrainStats.load(tmp_path / "s.npz")
        assert loaded.decoding == stats.decoding and loaded == stats
        assert loaded.lowercased().decoding == loaded.without_text().decoding == stats.decoding
    # a file of version 1 (written before the option) records none: read as the default
    meta = json.loads(np.load(io.BytesIO(default.to_bytes()))["meta.json"].tobytes())
    assert meta["decoding"] == {"scheme": "auto", "mode": "lenient", "repair": "conlleval"}
    assert TrainStats.from_bytes(version_1_bytes(default)) == default


def test_a_recorded_decoding_is_checked_and_merges_need_one_decoding():
    stats = TrainStats.from_lists(*IOB1_SENTENCES, scheme="BILOU")
    assert stats.decoding == ("BIOES", "lenient", "conlleval")
    merged = stats.merge(TrainStats.from_lists(*IOB1_SENTENCES, scheme="BIOES"))
    assert merged.decoding == stats.decoding and merged.n_sentences == 2
    with pytest.raises(ValueError, match=r"cannot merge statistics decoded as scheme=BIOES, mode=lenient, "
                                         r"repair=conlleval with statistics decoded as scheme=auto"):
        stats.merge(TrainStats.from_lists(*IOB1_SENTENCES))
    blob = stats.to_bytes()
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        meta = json.loads(np.load(io.BytesIO(archive.read("meta.json.npy"))).tobytes())
    for bad, shown in (({"scheme": "IOB9", "mode": "lenient", "repair": "conlleval"}, "its decoding: scheme='IOB9'"),
                       ("IOB2", "its decoding is not"), ({"scheme": "IOB2"}, "its decoding is not")):
        buffer = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            arrays = {name[:-4]: np.load(io.BytesIO(archive.read(name))) for name in archive.namelist()}
        arrays["meta.json"] = np.frombuffer(json.dumps({**meta, "decoding": bad}).encode(), dtype=np.uint8)
        np.savez(buffer, **arrays)
        with pytest.raises(ValueError, match=re.escape(shown)):
            TrainStats.from_bytes(buffer.getvalue())


def test_a_prefix_outside_the_declared_scheme_is_named_by_its_sentence(tmp_path):
    path = write(tmp_path / "t.conll", "a O\n\nb O\n\nc S-PER\n")
    with pytest.raises(ValueError, match=r"sentence 2, position 0: prefix S- \(or U-\) is not in scheme IOB2"):
        TrainStats.from_conll(path, scheme="IOB2", piece_bytes=4)  # the sentence counted across pieces


@pytest.mark.parametrize("method", ["hardeval", "tmr", "bucket_f1"])
def test_a_method_refuses_a_test_batch_decoded_otherwise_than_its_statistics(method):
    import tough_ner
    from tough_ner import Batch

    run = getattr(tough_ner, method)
    tokens, tags = IOB1_SENTENCES
    stats = TrainStats.from_lists(tokens, tags, scheme="IOB1")
    run(stats, Batch(tokens, tags, tags, scheme="IOB1"))  # the same decoding: accepted
    with pytest.raises(ValueError, match=r"the test data is decoded with scheme=IOB2, mode=strict but the training "
                                         r"statistics with scheme=IOB1, mode=lenient, repair=conlleval"):
        run(stats, Batch(tokens, tags, tags, scheme="IOB2", mode="strict"))


def test_the_stats_command_records_the_decoding(tmp_path):
    from tough_ner.cli import main

    train = write(tmp_path / "t.conll", "Ann I-PER\nLee I-PER\nmet O\nBo B-PER\n")
    main(["stats", "--train", str(train), "--out", str(tmp_path / "s.npz"), "--scheme", "IOB2", "--repair", "discard"])
    stats = TrainStats.load(tmp_path / "s.npz")
    assert stats.decoding == ("IOB2", "lenient", "discard") and stats.mentions == {("Bo", "PER"): 1}


# ---- sparse label counts (#33) ----------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 4), st.integers(-2, 5)), max_size=40),
       st.lists(st.integers(0, 7), min_size=1, max_size=12))
def test_label_counts_read_as_their_dense_table(entries, probe):
    """Every reading of the sparse counts equals the same reading of a dense table built by
    hand; entries at one place add up, and a place adding up to 0 is left out."""
    dense = np.zeros((7, 5), dtype=np.int64)
    for row, column, value in entries:
        dense[row, column] += value
    rows, columns, values = (np.array(x, dtype=np.int64).reshape(-1) for x in zip(*entries)) if entries else \
        (np.zeros(0, dtype=np.int64),) * 3
    counts = LabelCounts.from_entries(rows, columns, values, 7, 5)
    assert counts.dense().tolist() == dense.tolist() and len(counts.values) == np.count_nonzero(dense)
    assert counts == LabelCounts.from_dense(dense) and counts.totals.tolist() == dense.sum(axis=1).tolist()
    probe = np.array(probe) - 1  # -1: an unseen token, a row of zeros
    assert counts.dense(probe).tolist() == np.where(probe[:, None] >= 0, dense[probe], 0).tolist()
    for column in range(5):
        assert counts.column(column).tolist() == dense[:, column].tolist()
        assert counts.get(probe.clip(0), np.full(len(probe), column)).tolist() == dense[probe.clip(0), column].tolist()
    if (dense >= 0).all():  # counts as a build makes them: the largest entity count and its first type
        assert counts.entity_max.tolist() == dense[:, 1:].max(axis=1).tolist()
        assert counts.usual_entity.tolist() == np.where(dense[:, 1:].max(axis=1) > 0, 1 + dense[:, 1:].argmax(axis=1),
                                                        0).tolist()
    assert all(counts.row(r) == {c: int(v) for c, v in enumerate(dense[r]) if v} for r in range(7))
    remap = np.array([0, 1, 0, 2, 1, 0, 2])
    merged = np.zeros((3, 5), dtype=np.int64)
    np.add.at(merged, remap, dense)
    assert counts.merge_rows(remap, 3).dense().tolist() == merged.tolist()


def test_files_of_version_1_read_as_the_statistics_they_hold(tmp_path):
    stats = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS)
    for shareable in (False, True):
        old = TrainStats.from_bytes(version_1_bytes(stats, shareable))
        assert old == stats and old.decoding == stats.decoding and old.shareable == shareable
        assert old.to_bytes(shareable) == stats.to_bytes(shareable)  # saved again: version 2, the same file
    with pytest.raises(ValueError, match=r"version 1 with the label counts of version 2"):
        TrainStats.from_bytes(_changed(meta={"version": 1}))
    with pytest.raises(ValueError, match=r"version 2 with the label counts of version 1"):
        TrainStats.from_bytes(_changed(meta={"version": 2}, label_counts=COUNTS))


SPARSE = TrainStats.from_lists(HAND_TOKENS, HAND_TAGS).label_counts  # 6 tokens, 3 labels


@pytest.mark.parametrize("members, message", [
    ({"label_starts": SPARSE.starts[:-1]}, "label count rows do not run from 0 to the"),
    ({"label_starts": SPARSE.starts + 1}, "label count rows do not run from 0 to the"),
    ({"label_values": SPARSE.values[1:]}, "label counts for"),
    ({"label_columns": SPARSE.columns + 3}, "label columns outside the 3 labels"),
    ({"label_columns": SPARSE.columns[[1, 0, 2, 3, 4, 5, 6]]}, "a token's label columns are not increasing"),
    ({"label_values": SPARSE.values - 1}, "label counts below 1"),
    ({"label_values": SPARSE.values + 2 ** 62}, "label counts add up to 2**53 or more"),
    ({"label_values": SPARSE.values * 2}, "label counts disagree with the training token ids"),
])
def test_every_check_of_the_sparse_label_counts(members, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        TrainStats.from_bytes(_changed(**members))


def test_methods_read_the_sparse_counts_as_the_dense_table_on_conll(conll_stats, conll_test):
    """HardEval's subsets and the memorization baseline on CoNLL-2003 test, from the sparse
    counts, equal their rules applied to the dense table (the code before #33, by hand)."""
    from tough_ner.attacks.baselines import memorization
    from tough_ner.methods.hardeval import classify

    dense = conll_stats.label_counts.dense()
    assert dense.shape == (len(conll_stats.vocab), 5) and int(dense.sum()) == conll_stats.n_tokens
    tokens = [token for sentence in conll_test.tokens for token in sentence]
    gold = [tag.partition("-")[2] or "O" for sentence in conll_test.tags for tag in sentence]
    ids = conll_stats.ids(tokens)
    rows = np.where(ids[:, None] >= 0, dense[ids], 0)
    o, entity = rows[:, 0], rows[:, 1:].sum(axis=1)
    columns = np.array([conll_stats.label_index.get(t, 0) for t in gold])
    masks = classify(conll_stats, tokens, gold)
    is_entity, seen = np.array([t != "O" for t in gold]), ids >= 0
    assert masks["diff_I"].tolist() == (seen & is_entity & (entity < o)).tolist()
    assert masks["diff_O"].tolist() == (seen & ~is_entity & (o < entity)).tolist()
    gold_count = rows[np.arange(len(ids)), columns]
    usually_other = gold_count < rows[:, 1:].max(axis=1)
    assert masks["diff_E"].tolist() == (seen & is_entity & (entity >= o) & usually_other).tolist()
    assert masks["diff_E"].sum() > 100 and masks["diff_I"].sum() > 100
    usual = np.where((o <= entity) & (entity > 0), 1 + rows[:, 1:].argmax(axis=1), 0)
    expected = [conll_stats.labels[u] for u in usual]
    predicted = [tag.partition("-")[2] or "O" for sentence in memorization(conll_stats, conll_test.tokens)
                 for tag in sentence]
    assert predicted == expected
