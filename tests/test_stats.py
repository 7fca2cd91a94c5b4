import zipfile

import datasets
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tough_ner import TrainStats

from conftest import write

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
    with pytest.raises(ValueError, match="stats format version 9; this tough-ner reads version 1"):
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
