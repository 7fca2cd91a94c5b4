"""Building statistics at scale: column-wise from Arrow batches, streaming, merged shards, Dask."""
import re
from functools import reduce
from pathlib import Path

import datasets
import pytest
from hypothesis import example, given, settings, strategies as st

from tough_ner import TrainStats, read_conll
from tough_ner.cli import main

from conftest import _conll

# Every prefix the decoder knows, types with "-", and tokens whose joins collide ("a b" + "c"
# and "a" + "b c" are both the mention text "a b c").
WORDS = ["a", "b", "c", "a b", "b c", "Paris", "x-y"]
TAGS = ["O", "B-PER", "I-PER", "E-PER", "L-LOC", "S-LOC", "U-PER", "B-LOC", "I-LOC", "I-geo-loc", "B-geo-loc"]
sentences = st.lists(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(TAGS)), max_size=7),
                     min_size=1, max_size=12)  # empty sentences included


def split(data):
    return [[w for w, _ in s] for s in data], [[t for _, t in s] for s in data]


def string_dataset(tokens, tags):
    features = datasets.Features({"tokens": datasets.List(datasets.Value("string")),
                                  "ner_tags": datasets.List(datasets.Value("string"))})
    return datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags}, features=features)


def class_label_dataset(tokens, tags, names):
    features = datasets.Features({"tokens": datasets.List(datasets.Value("string")),
                                  "ner_tags": datasets.List(datasets.ClassLabel(names=names))})
    return datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": [[names.index(t) for t in s] for s in tags]},
                                      features=features)


@settings(max_examples=80, deadline=None)
@given(sentences, st.integers(1, 5))
def test_from_dataset_equals_the_list_build(data, batch_size):
    """The column-wise decoder and chunked merge against the list path (the one decoder)."""
    tokens, tags = split(data)
    if not any(tokens):
        with pytest.raises(ValueError, match="training data holds no sentence"):
            TrainStats.from_dataset(string_dataset(tokens, tags), batch_size=batch_size)
        return
    expected = TrainStats.from_lists(tokens, tags)
    for ds in (string_dataset(tokens, tags), class_label_dataset(tokens, tags, TAGS)):
        built = TrainStats.from_dataset(ds, batch_size=batch_size)
        assert built == expected
        assert list(built.mentions) == list(expected.mentions)  # first-occurrence order too
        assert built.to_bytes() == expected.to_bytes(shareable=True)  # and the very same file
        assert TrainStats.from_dataset(ds, batch_size=batch_size, keep_text=True).to_bytes() == expected.to_bytes()


# Tokens a CoNLL line can hold (no whitespace), some looking like tags or differing only in case
# (a capital sigma lowercases by its place in a word: the text lowercased as one string, or its
# tokens one by one, as the count of a build's own mention texts does).
CONLL_WORDS = ["a", "b", "Paris", "paris", "x-y", "é", "O", "B-PER", "ΟΔΟΣ", "Σ"]
conll_sentences = st.lists(st.lists(st.tuples(st.sampled_from(CONLL_WORDS), st.sampled_from(TAGS)), min_size=1,
                                    max_size=7), min_size=1, max_size=10)  # CoNLL has no empty sentence


def conll_text(tokens, tags):
    return "".join("".join(f"{t} {g}\n" for t, g in zip(s, g_)) + "\n" for s, g_ in zip(tokens, tags))


@settings(max_examples=60, deadline=None)
@given(conll_sentences, st.integers(1, 4), st.sampled_from([8, 40, 2 ** 20]), st.integers(1, 3))
def test_every_input_path_builds_the_very_same_statistics(data, batch_size, piece_bytes, n_shards):
    """One corpus given as lists, as a CoNLL file read in pieces, as CoNLL shard files built
    by the distributed map step and merged (with the text, and without it in two rounds), as
    Arrow batches (string and ClassLabel tags) and as Arrow shards built by the parallel map
    step and merged: the same file, byte for byte (without the text where it is left out)."""
    import tempfile

    import pyarrow as pa
    import dask
    from tough_ner.stats import _conll_stats_bytes, _stats_bytes_of_batch, build_distributed

    tokens, tags = split(data)
    expected = TrainStats.from_lists(tokens, tags)
    size = -(-len(tokens) // n_shards)  # contiguous shards, none empty
    bounds = [(start, min(start + size, len(tokens))) for start in range(0, len(tokens), size)]
    built = {"Arrow strings": TrainStats.from_dataset(string_dataset(tokens, tags), batch_size=batch_size),
             "Arrow ClassLabel": TrainStats.from_dataset(class_label_dataset(tokens, tags, TAGS),
                                                         batch_size=batch_size)}
    table = pa.table({"tokens": tokens, "ner_tags": tags})
    built["Arrow map step"] = TrainStats.merge_all(TrainStats.from_bytes(_stats_bytes_of_batch(
        table.slice(start, end - start), list(range(start, end)), "tokens", "ner_tags", None, batch_size)["stats"][0])
        for start, end in bounds)
    with tempfile.TemporaryDirectory() as folder:
        whole = Path(folder, "train.conll")
        whole.write_text(conll_text(tokens, tags), encoding="utf-8")
        built["CoNLL pieces"] = TrainStats.from_conll(whole, piece_bytes=piece_bytes)
        built["CoNLL pieces, text kept"] = TrainStats.from_conll(whole, piece_bytes=piece_bytes, keep_text=True)
        shards = []
        for k, (start, end) in enumerate(bounds):
            shards.append(Path(folder, f"shard{k}.conll"))
            shards[-1].write_text(conll_text(tokens[start:end], tags[start:end]), encoding="utf-8")
        built["CoNLL shards"] = TrainStats.merge_all(TrainStats.from_bytes(_conll_stats_bytes(str(shard)))
                                                     for shard in shards)
        built["CoNLL shards, two rounds"] = build_distributed(shards, dask.get)
    assert not built["CoNLL pieces, text kept"].shareable and built["CoNLL shards, two rounds"].shareable
    for path, stats in built.items():
        assert stats == expected, path
        assert stats.to_bytes() == expected.to_bytes(shareable=stats.shareable), path


def test_conll2003_from_dataset_string_and_class_label_tags(conll_stats):
    corpus = read_conll(_conll("train"))
    names = sorted({t for s in corpus.tags for t in s})
    strings = string_dataset(corpus.tokens, corpus.tags)
    labelled = class_label_dataset(corpus.tokens, corpus.tags, names)
    assert TrainStats.from_dataset(strings) == conll_stats
    assert TrainStats.from_dataset(labelled, batch_size=2500).to_bytes() == conll_stats.to_bytes(shareable=True)
    assert TrainStats.from_dataset(labelled, batch_size=2500, keep_text=True).to_bytes() == conll_stats.to_bytes()
    reverse = strings.select(range(len(strings) - 1, -1, -1))  # an indices mapping over the Arrow table
    assert TrainStats.from_dataset(reverse, batch_size=3000) == TrainStats.from_lists(corpus.tokens[::-1],
                                                                                     corpus.tags[::-1])


def test_streaming_iterable_dataset():
    tokens = [["Ann", "met", "Bob"], [], ["in", "Paris"]] * 7
    tags = [["B-PER", "O", "B-PER"], [], ["O", "S-LOC"]] * 7

    def rows():
        for sentence, sentence_tags in zip(tokens, tags):
            yield {"tokens": sentence, "ner_tags": sentence_tags, "other": 1}

    stream = datasets.IterableDataset.from_generator(rows)
    assert TrainStats.from_dataset(stream, batch_size=4) == TrainStats.from_lists(tokens, tags)
    assert TrainStats.coerce(stream) == TrainStats.from_lists(tokens, tags)  # what train= takes
    typed = datasets.IterableDataset.from_generator(rows, features=datasets.Features(
        {"tokens": datasets.List(datasets.Value("string")), "ner_tags": datasets.List(datasets.Value("string")),
         "other": datasets.Value("int64")}))
    with pytest.raises(ValueError, match="the dataset has no column 'labels'"):
        TrainStats.from_dataset(typed, tags_column="labels")
    with pytest.raises(ValueError, match="num_proc needs a datasets.Dataset"):
        TrainStats.from_dataset(stream, num_proc=2)


@pytest.mark.parametrize("tokens, tags, message", [
    ([["a"], ["b"], ["c"], ["d"]], [["O"], ["O"], ["O"], ["Z-PER"]], "sentence 3, position 0: unknown tag 'Z-PER'"),
    ([["a"], ["b"], ["c"], ["d", "e"]], [["O"], ["O"], ["O"], ["O", " B-PER"]],
     "sentence 3, position 1: tag ' B-PER' has surrounding whitespace"),
    ([["a"], ["b"], ["c", "d"]], [["O"], ["O"], ["O"]], "sentence 2: 2 tokens but 1 tags"),
    ([["a"], ["b"], ["c", None]], [["O"], ["O"], ["O", "O"]], "sentence 2, position 1: token None is a NoneType"),
])
def test_bad_input_names_sentence_and_position(tokens, tags, message):
    ds = datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags})
    for batch_size in (1, 2, 100):
        with pytest.raises(ValueError, match=message):
            TrainStats.from_dataset(ds, batch_size=batch_size)


def test_bad_class_label_id_and_untyped_columns():
    # ClassLabel stores -1 for "no label" (datasets refuses ids beyond the names); it used to
    # wrap around to the last name, silently
    ds = class_label_dataset([["a"], ["b"], ["c"]], [["O"], ["O"], ["B-PER"]], ["O", "B-PER"])
    ds = ds.map(lambda row, i: {"ner_tags": [-1] if i == 2 else row["ner_tags"]}, with_indices=True)
    assert ds.features["ner_tags"].feature.names == ["O", "B-PER"]
    for batch_size in (1, 10):
        with pytest.raises(ValueError, match="sentence 2: tag id -1 is not one of the 2 class labels"):
            TrainStats.from_dataset(ds, batch_size=batch_size)
    ints = ds.cast_column("ner_tags", datasets.List(datasets.Value("int64")))
    with pytest.raises(ValueError, match="sentence 0, position 0: unknown tag 0: a int"):  # ids without names
        TrainStats.from_dataset(ints, batch_size=1)
    one_string = datasets.Dataset.from_dict({"tokens": ["abc"], "ner_tags": [["O"]]})
    with pytest.raises(ValueError, match="sentence 0: tokens must be a list of strings, not one string"):
        TrainStats.from_dataset(one_string)


def test_class_label_names_that_are_not_tags_fail_only_when_used():
    names = ["O", "B-PER", "junk"]
    ds = class_label_dataset([["a", "b"], ["c"]], [["B-PER", "O"], ["O"]], names)
    assert TrainStats.from_dataset(ds) == TrainStats.from_lists([["a", "b"], ["c"]], [["B-PER", "O"], ["O"]])
    bad = class_label_dataset([["a", "b"], ["c"]], [["B-PER", "O"], ["junk"]], names)
    with pytest.raises(ValueError, match="sentence 1, position 0: unknown tag 'junk'"):
        TrainStats.from_dataset(bad, batch_size=1)


def test_parallel_build_keeps_empty_shards_sentences():
    tokens, tags = [[], [], ["Ann"], ["x"]], [[], [], ["B-PER"], ["O"]]
    ds = string_dataset(tokens, tags)
    expected = TrainStats.from_lists(tokens, tags)
    assert expected.n_sentences == 4
    assert TrainStats.from_dataset(ds, num_proc=2) == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(sentences, min_size=1, max_size=4))
def test_merge_all_is_reduce_merge_and_the_build_of_the_concatenation(shards):
    shards = [shard for shard in shards if any(split(shard)[0])]  # a part holds at least one token
    if not shards:
        return
    parts = [TrainStats.from_lists(*split(shard)) for shard in shards]
    merged = TrainStats.merge_all(parts)
    whole = TrainStats.from_lists(*split([s for shard in shards for s in shard]))
    assert merged == reduce(TrainStats.merge, parts)
    assert merged == whole and list(merged.mentions) == list(whole.mentions)  # first-occurrence order too
    assert merged.to_bytes() == whole.to_bytes()
    if len(parts) >= 3:  # associative: any grouping, same order
        assert TrainStats.merge_all([parts[0], TrainStats.merge_all(parts[1:])]) == merged


def test_a_merger_sums_again_after_a_part_comes_later():
    """build_distributed has the labels, label counts and mentions summed while the workers
    count; a part added after that is in the result."""
    from tough_ner.core.stats import _Merger

    first = TrainStats.from_lists([["Ann", "met", "Bob"]], [["B-PER", "O", "B-PER"]])
    later = TrainStats.from_lists([["Bob", "in", "Rome"]], [["B-PER", "O", "B-LOC"]])
    merger = _Merger()
    merger.add(first)
    assert merger.summed()[0] == ["O", "PER"]
    merger.add(later)
    assert merger.result() == first.merge(later)
    assert merger.result().mentions == {("Ann", "PER"): 1, ("Bob", "PER"): 2, ("Rome", "LOC"): 1}


def shard_conll(path, n, folder):
    """A CoNLL file cut into ``n`` files on blank lines (sentence boundaries), in order."""
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    size = -(-len(blocks) // n)
    paths = []
    for i in range(n):
        paths.append(folder / f"shard{i}.txt")
        paths[-1].write_text("\n\n".join(blocks[i * size:(i + 1) * size]) + "\n\n", encoding="utf-8")
    return paths


def test_cli_merges_shard_files_into_the_whole_corpus_stats(tmp_path, capsys, conll_stats):
    shards = shard_conll(_conll("train"), 3, tmp_path)
    files = []
    for i, shard in enumerate(shards):
        files.append(str(tmp_path / f"s{i}.npz"))
        assert main(["stats", "--train", str(shard), "--out", files[-1], "--keep-text"]) == 0
    out = tmp_path / "all.npz"
    assert main(["stats", "--merge", *files, "--out", str(out)]) == 0
    assert TrainStats.load(out) == conll_stats
    assert "-> " + str(out) in capsys.readouterr().out
    assert main(["stats", "--merge", files[1], files[0], files[2], "--out", str(out)]) == 0
    assert TrainStats.load(out) != conll_stats  # order matters: the token ids follow the corpus
    shards[0].write_text("not a stats file\n")
    assert main(["stats", "--merge", files[0], str(shards[0]), "--out", str(tmp_path / "x.npz")]) == 2
    assert f"{shards[0]} is not a readable tough-ner stats file" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()


def test_shards_on_a_cluster_of_worker_processes_equal_one_process(tmp_path, conll_stats, process_cluster):
    """Four shards on two worker processes: one builder per worker (a run of two consecutive
    shards each, on both workers), merged exactly into the one-process statistics."""
    distributed = pytest.importorskip("distributed")
    from tough_ner.stats import build_distributed

    shards = shard_conll(_conll("train"), 4, tmp_path)
    with distributed.Client(process_cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        with distributed.get_task_stream(client) as stream:
            built = build_distributed(shards, client)
        assert built.shareable and built == conll_stats  # without the text: exact in two rounds
        # each run's text was read back, then let go, in its worker's process
        kept = client.run(lambda: len(__import__("tough_ner.core.stats", fromlist=["_KEPT"])._KEPT))
        assert list(kept.values()) == [0, 0]
        first_round = [task for task in stream.data if str(task["key"]).startswith("_run_statistics")]
        assert len(first_round) == 2 and len({task["worker"] for task in first_round}) == 2


def test_shards_without_a_token_on_a_local_cluster_equal_one_process(tmp_path, conll_stats):
    """Shards that hold no token (empty files, a document marker alone) have no statistics:
    a worker whose whole run is such shards sends none, and the build equals the one-process
    build of the concatenation, with the text or without; a corpus of them alone is the
    one-process error, naming the shards."""
    distributed = pytest.importorskip("distributed")
    from tough_ner.core.stats import _KEPT, _runs
    from tough_ner.stats import build_distributed

    shards = shard_conll(_conll("train"), 2, tmp_path)
    empty = [tmp_path / "empty0.txt", tmp_path / "empty1.txt", tmp_path / "empty2.txt"]
    empty[0].write_bytes(b"")
    empty[1].write_text("-DOCSTART- O\n\n", encoding="utf-8")
    empty[2].write_bytes(b"")
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        for paths, a_run_without_token in (([*shards, empty[0], empty[1]], True), ([*shards, *empty], True),
                                           ([empty[0], *shards, empty[2]], True),
                                           ([empty[0], shards[0], empty[1], shards[1]], False)):
            paths = [str(path) for path in paths]
            assert (set(_runs(paths, 2)[1]) <= set(map(str, empty))) == a_run_without_token
            for keep_text in (False, True):
                built = build_distributed(paths, client, keep_text=keep_text)
                assert built == conll_stats and built.to_bytes() == conll_stats.to_bytes(shareable=not keep_text)
            assert not _KEPT
        with pytest.raises(ValueError, match="^" + re.escape(
                f"training data holds no sentence (no token): check the training files {[str(e) for e in empty]}")):
            build_distributed(empty, client)
        with pytest.raises(ValueError, match="^training data holds no sentence"):
            build_distributed(empty, client, keep_text=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=9), st.integers(1, 12))
def test_shards_are_cut_into_consecutive_runs_of_about_equal_bytes(sizes, n):
    """One run per worker: the shards in order, every run holding one, as many runs as
    workers (or shards), and no run's bytes more than the largest shard above its share."""
    import tempfile

    from tough_ner.core.stats import _runs

    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for k, size in enumerate(sizes):
            paths.append(str(Path(folder, f"shard{k}.txt")))
            Path(paths[-1]).write_bytes(b"x" * size)
        runs = _runs(paths, n)
        weight = dict(zip(paths, (size + 1 for size in sizes)))  # a byte more per shard: empty ones weigh
        missing = [str(Path(folder, "none"))] * 3
        assert _runs(missing, 2) == [missing[:2], missing[2:]]  # sizes unread: cut by count
    assert [path for run in runs for path in run] == paths and all(runs) and len(runs) == min(n, len(paths))
    assert max(sum(map(weight.get, run)) for run in runs) <= sum(weight.values()) / len(runs) + max(weight.values())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(1, 3), st.lists(st.sampled_from([0, 1, 2, 7, 2 ** 20, 2 ** 31 - 2]),
                                                               min_size=1, max_size=5)), max_size=8), max_size=4),
       st.booleans())
@example([[(1, [7, 2])], [(1, [7, 1]), (1, [2, 7])], [(1, [7, 1])]], True)
def test_mentions_numbered_across_batches_as_counted_one_by_one(batches, weak_hash):
    """The builder's mention table, batch after batch: each (type, tokens) counted once, in the
    order first met, with large ids and long spans; with a weak hash (one per type, so every
    span probes past the others) the matches are still exact."""
    import numpy as np
    from tough_ner.core import stats

    vocab = {i: f"w{i}" for batch in batches for _, tokens in batch for i in tokens}  # only read by id
    expected = {}
    for batch in batches:
        for kind, tokens in batch:
            key = (" ".join(map(vocab.__getitem__, tokens)), "ABC"[kind - 1])
            expected[key] = expected.get(key, 0) + 1
    with pytest.MonkeyPatch.context() as patch:
        if weak_hash:
            patch.setattr(stats, "_span_hashes", lambda ids, kinds, starts, lengths: kinds.astype(np.uint64) << 60)
        numbers = stats._MentionNumbers()
        for batch in batches:
            ids = np.array([i for _, tokens in batch for i in tokens], dtype=np.int32)
            lengths = np.array([len(tokens) for _, tokens in batch], dtype=np.int64)
            ends = np.cumsum(lengths)
            kinds = np.array([kind for kind, _ in batch], dtype=np.int32)
            numbers.add(ids, kinds, ends - lengths, ends, vocab, ["A", "B", "C"])
        counted = numbers.counts()
    assert list(counted.items()) == list(expected.items())  # the counts, in first-occurrence order
    assert len(numbers.keys) == len(expected)  # each kept once: found again, not re-added and summed by text


def test_mentions_found_again_after_the_table_grows():
    """600 one-token mentions (past the table's first growth), then the same 600 again: each is
    found through the grown table, kept once and counted twice."""
    import numpy as np
    from tough_ner.core import stats

    ids, kinds = np.arange(600, dtype=np.int32), np.ones(600, dtype=np.int32)
    starts, ends = np.arange(600), np.arange(1, 601)
    numbers = stats._MentionNumbers()
    for _ in range(2):
        numbers.add(ids, kinds, starts, ends, {i: f"w{i}" for i in range(600)}, ["A"])
    assert len(numbers.keys) == 600 and set(numbers.counts().values()) == {2}


# Tokens around the byte-key limits (8 and 16 bytes, multi-byte characters) and longer ones.
EDGE_WORDS = ["a", "abcdefgh", "abcdefghi", "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnopqr",
              "é" * 8, "é" * 9, "x\x00y", "abcdefgh\x00"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(EDGE_WORDS), st.sampled_from(TAGS)), min_size=1, max_size=6),
                min_size=1, max_size=8), st.sampled_from([8, 60, 2 ** 20]), st.booleans())
@example([[("abcdefghi", "O")], [("abcdefgh\x00", "O")], [("abcdefgh\x00", "B-PER"), ("abcdefghi", "O")]], 8, True)
def test_tokens_numbered_by_their_bytes_as_by_their_strings(data, piece_bytes, weak_hash):
    """A CoNLL file's tokens found by their bytes across pieces (``Table.numbered``) get the
    ids the strings get, long tokens included; with a weak hash (by length only) too."""
    import tempfile

    import numpy as np
    from tough_ner.core import corpus

    tokens, tags = split(data)
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        path = Path(folder, "train.conll")
        path.write_text(conll_text(tokens, tags), encoding="utf-8")
        if weak_hash:
            patch.setattr(corpus, "_byte_key", lambda low, high, length: length.astype(np.uint64) << 59)
        built = TrainStats.from_conll(path, piece_bytes=piece_bytes)
    expected = TrainStats.from_lists(tokens, tags)
    assert built == expected and built.to_bytes() == expected.to_bytes(shareable=True)


def test_later_rounds_on_a_worker_without_the_shard_text_read_it_again(tmp_path):
    """The second round counts a run's own mention texts in the text the first round kept (and
    keeps it), the third the other runs' texts (and lets it go); a worker that does not hold
    the run's text (it moved, or the first one is gone) reads the run's shards again: the
    same counts."""
    import pickle

    from tough_ner.core.stats import (_KEPT, _Sealed, _read_part, _run_occurrences, _run_own_occurrences,
                                      _run_statistics)

    run = [str(tmp_path / "shard0.conll"), str(tmp_path / "shard1.conll")]
    Path(run[0]).write_text("New B-LOC\nYork I-LOC\nis O\nbig O\n\n", encoding="utf-8")
    Path(run[1]).write_text("new O\nyork O\n\n", encoding="utf-8")
    texts, lowered = ["York New", "is big", "New", "zzz New"], ["york new", "is big"]

    def counted(blob, asked):  # the counts come as arrays in the order of the texts asked for
        return tuple(dict(zip(keys, counts.tolist())) for keys, counts in zip(asked, pickle.loads(blob)))

    part = _run_statistics(run)
    sent = _read_part(part[0])
    (text_of, column_of, counts) = sent.mentions
    assert (text_of.tolist(), [sent.labels[c] for c in column_of], counts.tolist()) == ([0], ["LOC"], [1])
    assert sent.texts == ["New York"] and sent.labels == ["O", "LOC"]
    assert sent.counts.dense().tolist() == [[0, 1], [0, 1], [1, 0], [1, 0], [1, 0], [1, 0]]  # New York is big new york
    for values, joined in ((sent.vocab, sent.joined_vocab), (sent.texts, sent.joined_texts)):
        assert joined.decode("utf-8").split("\n") == values
    own = counted(_run_own_occurrences(part, run), (["New York"], ["new york"]))
    assert part[1] in _KEPT  # for the third round
    kept = counted(_run_occurrences(run, part[1], _Sealed((texts, lowered))), (texts, lowered))
    assert part[1] not in _KEPT
    own_again = counted(_run_own_occurrences(part, run), (["New York"], ["new york"]))  # the key is gone: read again
    again = counted(_run_occurrences(run, part[1], _Sealed((texts, lowered))), (texts, lowered))
    assert own == own_again == ({"New York": 1}, {"new york": 2})
    assert kept == again == ({"York New": 0, "is big": 1, "New": 1, "zzz New": 0}, {"york new": 0, "is big": 1})
    assert counted(_run_occurrences(run, part[1], _Sealed(([], []))), ([], [])) == ({}, {})  # nothing asked


def test_a_part_refuses_a_token_holding_a_space():
    """A part's mentions are sent as arrays, one per (text, type): two mentions whose tokens
    join alike (tokens holding spaces) would be sent twice.  A CoNLL file holds no such token,
    so a part with one says where it could come from."""
    from tough_ner.core.stats import _Builder

    builder = _Builder(keep_text=False)
    builder.add_sentences([["New York", "is"], ["New", "York"]], [["B-LOC", "O"], ["B-LOC", "I-LOC"]])
    with pytest.raises(ValueError, match="holds a space: not read from a CoNLL file"):
        builder.part()


def test_conll_builds_make_no_dict_of_every_token(tmp_path, conll_stats, monkeypatch):
    """A build of CoNLL files finds tokens by their bytes: neither ``from_conll`` nor
    ``build_distributed``'s rounds (each part counting the other parts' mention texts in its
    text included) make a dict of every token (0.25 s at 614k types); the statistics make
    theirs when a method first looks a token up."""
    dask = pytest.importorskip("dask")
    from tough_ner.core.corpus import Numbering
    from tough_ner.stats import build_distributed

    shards = shard_conll(_conll("train"), 3, tmp_path)
    monkeypatch.setattr(Numbering, "index", property(lambda self: pytest.fail("a dict of every token was made")))
    whole, built = TrainStats.from_conll(_conll("train")), build_distributed(shards, dask.get)
    monkeypatch.undo()
    assert whole == built == conll_stats and "token_index" not in vars(whole)
    assert whole.token_index == {token: k for k, token in enumerate(whole.vocab)}


def test_cli_builds_shards_on_a_dask_cluster(tmp_path, capsys, conll_stats, process_cluster):
    shard_conll(_conll("train"), 3, tmp_path)
    out, scheduler = tmp_path / "all.npz", process_cluster.scheduler_address
    assert main(["stats", "--train", str(tmp_path / "shard*.txt"), "--dask", scheduler, "--out", str(out)]) == 0
    assert TrainStats.load(out) == conll_stats and TrainStats.load(out).shareable
    assert "without the text" in capsys.readouterr().out
    assert main(["stats", "--train", str(tmp_path / "none*.txt"), "--dask", scheduler, "--out", str(out)]) == 2
    assert "no file matches" in capsys.readouterr().err
    assert main(["stats", "--train", str(tmp_path / "shard*.txt"), "--dask", scheduler, "--out", str(out),
                 "--keep-text"]) == 0
    assert TrainStats.load(out).token_ids.tolist() == conll_stats.token_ids.tolist()


def test_the_read_limits_reach_the_workers(tmp_path, capsys, process_cluster):
    """The limits in force where the build is called (a context variable, which neither a
    Dask worker process nor a thread of Dask's pool sees) are the ones the workers read by:
    a line over --max-line-bytes is refused on the cluster as in one process."""
    import dask

    from tough_ner.core.corpus import limits
    from tough_ner.stats import build_distributed

    shards = shard_conll(_conll("train"), 2, tmp_path)
    for keep_text in (False, True):
        with limits(line=10), pytest.raises(ValueError, match="longer than the line limit of 10 bytes"):
            build_distributed(shards, dask.threaded.get, keep_text=keep_text)
    assert main(["stats", "--train", str(tmp_path / "shard*.txt"), "--dask", process_cluster.scheduler_address,
                 "--out", str(tmp_path / "s.npz"), "--max-line-bytes", "10"]) == 2
    assert "longer than the line limit of 10 bytes (ReadLimits.line; --max-line-bytes)" in capsys.readouterr().err
    assert not (tmp_path / "s.npz").exists()


_SETTINGS_RUN = []  # the workers' calls of the memory setting (a module's list: client.run pickles by name)


def _record_setting():
    _SETTINGS_RUN.append(1)


def test_the_command_gives_its_dask_workers_its_memory_setting(tmp_path, monkeypatch, conll_stats):
    """``tough-ner stats --dask`` runs the command's memory setting on every worker (Dask starts
    them trimming every free over 64 KB, which made a shard's build take 2.2 times the CPU);
    called from Python (not as the command), the workers are left as they are."""
    distributed = pytest.importorskip("distributed")
    from tough_ner.cli import _parser, _process, tools

    shard_conll(_conll("train"), 2, tmp_path)
    monkeypatch.setattr(_process, "keep_freed_memory", _record_setting)
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None) \
            as cluster:
        argv = ["stats", "--train", str(tmp_path / "shard*.txt"), "--dask", cluster.scheduler_address,
                "--out", str(tmp_path / "s.npz")]
        for as_command, expected in ((False, []), (True, [1, 1])):
            args = _parser(argv).parse_args(argv)
            args.as_command = as_command
            assert tools._distributed(args) == conll_stats
            assert _SETTINGS_RUN == expected  # once on each of the 2 workers (threads of this process here)
    _SETTINGS_RUN.clear()
