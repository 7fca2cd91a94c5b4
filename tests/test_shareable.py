"""Shareable training statistics (no running text) and the occurrence table behind eCon."""
import io
import json
import math
import random
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, read_conll, tmr
from tough_ner.baselines import memorization
from tough_ner.buckets import attribute_values
from tough_ner.corpus import Corpus
from tough_ner.nrb import nrb
from tough_ner.report import run as report_run

from conftest import ROOT

WORDS = ["a", "b", "c", "A", "B"]
TAGS = ["O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
sentences = st.lists(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(TAGS)), max_size=6),
                     min_size=1, max_size=6)


def split(data):
    return [[w for w, _ in s] for s in data], [[t for _, t in s] for s in data]


def shared(stats: TrainStats) -> TrainStats:
    return TrainStats.from_bytes(stats.to_bytes(shareable=True))


def brute_force(tokens, query):
    return sum(s[i:i + len(query)] == list(query) for s in tokens for i in range(len(s) - len(query) + 1))


def same(a, b) -> bool:
    """Equal results, NaN equal to NaN (JSON text of both)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


# ---- the occurrence table equals the scan --------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(sentences, st.lists(st.lists(st.sampled_from(WORDS + ["z"]), min_size=1, max_size=4), max_size=6))
def test_table_and_scan_equal_brute_force_and_shareable_answers_every_mention(data, queries):
    tokens, tags = split(data)
    assume(any(tokens))
    stats = TrainStats.from_lists(tokens, tags)
    mentions = [text.split(" ") for text in stats.mention_text_counts]
    everything = mentions + queries
    expected = [brute_force(tokens, q) for q in everything]
    assert stats.occurrences(everything).tolist() == expected  # table for mentions, scan for the rest
    assert stats.occurrences(everything, [" ".join(q) for q in everything]).tolist() == expected
    assert stats._scan(everything).tolist() == expected
    text_free = shared(stats)
    assert text_free.occurrences(mentions).tolist() == expected[: len(mentions)]
    lowered = [[t.lower() for t in s] for s in tokens]
    lower_mentions = [text.split(" ") for text in stats.lowercased().mention_text_counts]
    assert text_free.lowercased().occurrences(lower_mentions).tolist() == [brute_force(lowered, q)
                                                                          for q in lower_mentions]


@settings(max_examples=60, deadline=None)
@given(sentences, st.randoms(use_true_random=False), st.lists(st.lists(st.sampled_from(WORDS + ["z"]), min_size=1,
                                                                       max_size=3), max_size=4))
def test_first_lookup_counts_only_its_mentions_and_later_ones_read_the_full_table(data, rng, queries):
    tokens, tags = split(data)
    assume(any(tokens))
    stats = TrainStats.from_lists(tokens, tags)
    mentions = [text.split(" ") for text in stats.mention_text_counts]
    first = rng.sample(mentions, rng.randint(0, len(mentions))) + queries
    assert stats.occurrences(first).tolist() == [brute_force(tokens, q) for q in first]
    assert "_mention_occurrences" not in stats.__dict__  # a one-off lookup builds no full table
    again = rng.sample(first, len(first))
    assert stats.occurrences(again).tolist() == [brute_force(tokens, q) for q in again]
    everything = mentions + queries
    assert stats.occurrences(everything).tolist() == [brute_force(tokens, q) for q in everything]
    known = {" ".join(q) for q in first} & set(stats.mention_text_counts)
    # built once a lookup needed more than the first one that needed any
    assert ("_mention_occurrences" in stats.__dict__) == (0 < len(known) < len(mentions))
    assert stats.occurrences(first).tolist() == [brute_force(tokens, q) for q in first]


@settings(max_examples=40, deadline=None)
@given(sentences, sentences, st.randoms(use_true_random=False))
def test_attribute_values_equal_from_full_and_shareable_statistics(train, test, rng):
    tokens, tags = split(train)
    assume(any(tokens))
    stats = TrainStats.from_lists(tokens, tags)
    test_tokens, gold = split(test)
    pred = [[rng.choice(TAGS) for _ in s] for s in test_tokens]
    for lowercase in (False, True):
        full = attribute_values(stats, Batch(test_tokens, gold, pred), lowercase)
        free = attribute_values(shared(stats), Batch(test_tokens, gold, pred), lowercase)
        for side in ("gold", "pred"):
            for level in ("span", "token"):
                for key, values in full[side][level].items():
                    np.testing.assert_array_equal(values, free[side][level][key], err_msg=f"{side} {level} {key}")


def test_repeated_queries_and_a_hash_collision_still_count_exactly(monkeypatch):
    tokens = [["x", "y", "x", "y"], ["y", "x"], ["x"]]
    stats = TrainStats.from_lists(tokens, [["O"] * len(s) for s in tokens])
    queries = [["x", "y"], ["y", "x"], ["x", "y"], ["x", "x"]]
    assert stats.occurrences(queries).tolist() == [2, 2, 2, 0]
    # Equal weights give (x, y) and (y, x) one hash: the exact fallback must still tell them apart.
    monkeypatch.setattr("tough_ner.stats._window_weights", lambda length: np.ones(length, dtype=np.uint64))
    assert stats._scan(queries).tolist() == [2, 2, 2, 0]


def test_tokens_holding_spaces_are_counted_as_tokens():
    tokens, tags = [["New York", "is"], ["New", "York"]], [["B-LOC", "O"], ["O", "O"]]
    stats = TrainStats.from_lists(tokens, tags)
    # The mention text "New York" (one token) is also the two-token sequence New, York.
    assert stats.occurrences([["New York"], ["New", "York"]]).tolist() == [1, 1]
    text_free = shared(stats)
    assert text_free.occurrences([["New York"], ["New", "York"]]).tolist() == [1, 1]
    with pytest.raises(ValueError, match="'New York is'.*which these statistics leave out"):
        text_free.occurrences([["New York", "is"]])


# ---- the file -----------------------------------------------------------------------------
def test_shareable_file_holds_no_text_and_refuses_what_needs_it(tmp_path):
    stats = TrainStats.from_lists([["Ann", "met", "Bo", "Lee"], ["Bo", "Lee", "ran"]],
                                  [["B-PER", "O", "B-PER", "I-PER"], ["O", "O", "O"]])
    stats.save(tmp_path / "full.npz")
    stats.save(tmp_path / "shared.npz", shareable=True)
    with zipfile.ZipFile(tmp_path / "shared.npz") as archive:
        assert sorted(archive.namelist()) == ["label_columns.npy", "label_starts.npy", "label_values.npy",
                                              "meta.json.npy"]
    loaded = TrainStats.load(tmp_path / "shared.npz")
    assert loaded.shareable and not TrainStats.load(tmp_path / "full.npz").shareable
    assert loaded.n_tokens == 7 and loaded.n_sentences == 2 and loaded.mentions == stats.mentions
    assert loaded.occurrences([["Bo", "Lee"], ["Ann"]]).tolist() == [2, 1]
    assert loaded == TrainStats.from_bytes(loaded.to_bytes()) == stats  # stays shareable when saved again
    assert TrainStats.from_bytes(loaded.to_bytes()).shareable and "without the text" in repr(loaded)
    with pytest.raises(ValueError, match=r"training token sequence \(token_ids\) needs the training text"):
        loaded.token_ids  # noqa: B018
    with pytest.raises(ValueError, match="merging statistics .* needs the training text"):
        stats.merge(loaded)
    with pytest.raises(ValueError, match="counting the training occurrences of 'met Bo'"):
        loaded.occurrences([["met", "Bo"]])
    assert loaded.occurrences([["met", "Zed"]]).tolist() == [0]  # an unseen token: nothing to count
    with pytest.raises(TypeError, match="need n_sentences, mention_occurrences and lower_occurrences"):
        TrainStats(stats.vocab, stats.labels, stats.label_counts, stats.mentions, n_sentences=2)
    lowered = loaded.lowercased()
    assert lowered.shareable and lowered.vocab == stats.lowercased().vocab
    assert lowered.occurrences([["bo", "lee"]]).tolist() == [2] and lowered.lowercased() is lowered.lowercased()


def _rewrite(blob: bytes, change) -> bytes:
    """The archive with its metadata changed by ``change(meta)`` (and members kept)."""
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(np.load(io.BytesIO(members["meta.json.npy"])).tobytes())
    change(meta)
    buffer = io.BytesIO()
    np.save(buffer, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    members["meta.json.npy"] = buffer.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("change, message", [
    (lambda m: m.update(n_sentences=-1), "n_sentences is '-1', not a count"),
    # the limits themselves (2**53, MAX_COUNT) are refused: counts stay below them
    (lambda m: m.update(n_sentences=2 ** 53), "n_sentences is '9007199254740992', not a count"),
    (lambda m: m.update(occurrences=[[t, 2 ** 53 * (k == 0)] for k, (t, _) in enumerate(m["occurrences"])]),
     r"occurrences are not \[text, count >= 0\] rows \(adding up to less than 2\*\*53\)"),
    (lambda m: m.update(occurrences=m["occurrences"][1:]), "occurrences do not cover exactly"),
    (lambda m: m.update(lower_occurrences=[["x", 1]]), "lower_occurrences do not cover exactly"),
    (lambda m: m.update(occurrences=[[t, -1] for t, _ in m["occurrences"]]), r"occurrences are not \[text"),
    (lambda m: m.pop("shareable"), "disagree on whether it holds the training text"),
])
def test_damaged_shareable_files_are_refused(change, message):
    stats = TrainStats.from_lists([["Ann", "Lee"], ["Bo"]], [["B-PER", "I-PER"], ["B-LOC"]])
    with pytest.raises(ValueError, match=message):
        TrainStats.from_bytes(_rewrite(stats.to_bytes(shareable=True), change))
    with pytest.raises(ValueError, match="disagree on whether it holds the training text"):
        TrainStats.from_bytes(_rewrite(stats.to_bytes(), lambda m: m.update(shareable=True)))


def test_cli_writes_a_shareable_file(tmp_path, conll_train_path):
    out = tmp_path / "stats.npz"
    done = subprocess.run([sys.executable, "-m", "tough_ner.cli", "stats", "--train", str(conll_train_path),
                           "--out", str(out), "--shareable"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "shareable" in done.stdout and TrainStats.load(out).shareable


# ---- CoNLL-2003: every method gives the same results ------------------------------------------
def _noisy(tags, seed=0):
    """Gold tags with some entities dropped and some retyped: a system that errs."""
    rng = random.Random(seed)
    out = []
    for sentence in tags:
        out.append([t if t == "O" or rng.random() > 0.15 else rng.choice(["O", "B-ORG", "I-MISC"]) for t in sentence])
    return out


@pytest.mark.parametrize("source", ["shareable file", "bounded build"])
def test_every_method_identical_from_shareable_conll_statistics(conll_stats, conll_test, conll_train_path, tmp_path,
                                                                source):
    """Statistics without the text, from a shareable file or built by default (the text
    never kept), against the statistics that keep it: every method, the same results."""
    conll_stats.save(tmp_path / "shared.npz", shareable=True)
    text_free = (TrainStats.load(tmp_path / "shared.npz") if source == "shareable file"
                 else TrainStats.from_conll(conll_train_path))
    assert text_free.shareable and not conll_stats.shareable
    full = TrainStats.from_bytes(conll_stats.to_bytes())  # fresh caches on both sides
    systems = [memorization(full, conll_test.tokens), _noisy(conll_test.tags)]
    for predictions in systems:
        batch = lambda: Batch(conll_test.tokens, conll_test.tags, predictions)  # noqa: E731
        for method, options in ((hardeval, {"detailed": True}), (hardeval, {"strict": True}),
                                (tmr, {"detailed": True}), (bucket_f1, {"detailed": True, "bootstrap": 0}),
                                (bucket_f1, {"lowercase": True}), (bucket_f1, {"match": "partial"})):
            a, b = method(full, batch(), **options), method(text_free, batch(), **options)
            assert same(a, b), (method.__name__, options)
            assert len(a) > 10 and not all(isinstance(v, float) and math.isnan(v) for v in a.values())
        # NRB-like sentences: one PER, LOC or ORG target, its gold type named as NRB names it.
        names = {"PER": "PERSON", "LOC": "LOCATION", "ORG": "ORGANIZATION"}
        one = [s for s, spans in enumerate(Batch(conll_test.tokens, conll_test.tags).gold_spans)
               if len(spans) == 1 and spans[0][2] in names]
        renamed = [[t[:2] + names[t[2:]] if t != "O" else t for t in conll_test.tags[s]] for s in one]
        targets = Batch([conll_test.tokens[s] for s in one], renamed, [predictions[s] for s in one])
        a, b = (nrb(targets, stats=s, detailed=True, type_map="conll") for s in (full, text_free))
        assert same(a, b) and a["n_seen_other_type"] > 0
    assert full.describe() == text_free.describe()
    assert full.describe_test(conll_test.tokens, conll_test.tags) == text_free.describe_test(conll_test.tokens,
                                                                                         conll_test.tags)
    corpus = Corpus(conll_test.tokens, conll_test.tags, systems[:1])
    a, b = (report_run(s, corpus, bootstrap=0) for s in (full, text_free))
    assert same(a, b)


def test_econ_from_the_table_equals_the_scan_on_conll_and_a_grown_corpus(conll_stats, conll_test,
                                                                         conll_train_path):
    predictions = memorization(conll_stats, conll_test.tokens)
    train = read_conll(conll_train_path)
    train_tokens, train_tags = train.tokens, train.tags
    grown = TrainStats.from_lists(train_tokens + [[f"{t}~1" for t in s] for s in train_tokens], train_tags * 2)
    test_tokens = conll_test.tokens + [[f"{t}~1" for t in s] for s in conll_test.tokens]
    for stats, tokens, gold, pred in ((conll_stats, conll_test.tokens, conll_test.tags, predictions),
                                      (grown, test_tokens, conll_test.tags * 2, predictions * 2)):
        batch = Batch(tokens, gold, pred)
        values = attribute_values(stats, batch)
        for side in ("gold", "pred"):
            _, start, end, types = batch.span_arrays(side)
            flat = batch.flat_tokens
            sequences = [flat[a:b] for a, b in zip(start.tolist(), end.tolist())]
            annotated = np.array([stats.mentions.get((" ".join(s), batch.types[t]), 0)
                                  for s, t in zip(sequences, types.tolist())], dtype=float)
            scanned = stats._scan(sequences).astype(float)
            expected = np.divide(annotated, scanned, out=np.zeros_like(annotated), where=scanned > 0)
            np.testing.assert_array_equal(values[side]["span"]["eCon"], expected)
            assert (expected > 0).sum() > 1000



def test_entity_attacks_need_the_training_sentences(conll_stats, conll_test):
    from tough_ner.attacks import entity_attack
    data = (conll_test.tokens[:300], conll_test.tags[:300])
    entity_attack(*data, train=conll_stats, seed=1)  # the full statistics decide fine classes from contexts
    with pytest.raises(ValueError, match="deciding fine classes from the training sentences .* keep_text=True"):
        entity_attack(*data, train=shared(conll_stats), seed=1)
