"""The decoded batch: flat span arrays, token label codes in each scheme, per-token sentence
index and the per-batch memo; label codes checked against the scheme converters."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tough_ner.batch import ROLES, Batch
from tough_ner.schemes import to_bilou, to_bio, to_io

TOKENS = [["a", "b", "c"], [], ["d", "e", "f", "g"]]
GOLD = [["B-PER", "I-PER", "O"], [], ["O", "B-LOC", "B-PER", "O"]]
PRED = [["O", "B-ORG", "O"], [], ["B-LOC", "I-LOC", "I-LOC", "O"]]


def test_flat_span_arrays_and_offsets():
    batch = Batch(TOKENS, GOLD, PRED)
    assert batch.types == ["LOC", "ORG", "PER"] and batch.type_index == {"LOC": 0, "ORG": 1, "PER": 2}
    assert batch.offsets.tolist() == [0, 3, 3, 7]
    assert batch.flat_tokens == ["a", "b", "c", "d", "e", "f", "g"]
    assert batch.token_sentences.tolist() == [0, 0, 0, 2, 2, 2, 2]
    gold = batch.span_arrays()  # gold by default
    assert [a.tolist() for a in gold] == [[0, 2, 2], [0, 4, 5], [2, 5, 6], [2, 0, 2]]
    assert [a.tolist() for a in batch.span_arrays("gold")] == [a.tolist() for a in gold]
    assert [a.tolist() for a in batch.span_arrays("pred")] == [[0, 2], [1, 3], [2, 6], [1, 0]]
    with pytest.raises(ValueError, match="^this batch has no predictions$"):
        Batch(TOKENS, GOLD).span_arrays("pred")
    empty = Batch([], [], [])
    assert [a.tolist() for a in empty.span_arrays("pred")] == [[], [], [], []]
    assert len(empty) == 0 and empty.token_labels().tolist() == []


def test_token_labels_and_types_by_hand():
    batch = Batch(TOKENS, GOLD, PRED)
    # code = 1 + 4 * type id + role; LOC 0, ORG 1, PER 2; roles B I L U (bilou), B I (bio), I (io)
    assert batch.token_labels().tolist() == [1 + 8, 1 + 8 + 2, 0, 0, 1 + 3, 1 + 8 + 3, 0]
    assert batch.token_labels("gold", "bilou").tolist() == batch.token_labels().tolist()
    assert batch.token_labels("gold", "bio").tolist() == [9, 10, 0, 0, 1, 9, 0]
    assert batch.token_labels("pred", "io").tolist() == [0, 5, 0, 1, 1, 1, 0]
    assert batch.token_labels("pred", "bilou").tolist() == [0, 8, 0, 1, 2, 3, 0]
    assert batch.token_types().tolist() == [2, 2, -1, -1, 0, 2, -1]
    assert batch.token_types("pred").tolist() == [-1, 1, -1, 0, 0, 0, -1]
    with pytest.raises(ValueError, match="unknown scheme 'bioes'"):
        batch.token_labels("gold", "bioes")


TAGS = st.sampled_from(["O", "B-PER", "I-PER", "E-PER", "S-LOC", "I-LOC", "B-geo-loc", "L-geo-loc"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(TAGS, max_size=8), min_size=1, max_size=4))
def test_label_codes_spell_the_converted_tags(sentences):
    batch = Batch([["w"] * len(s) for s in sentences], sentences)
    flat = {name: [t for s in sentences for t in convert(s)]
            for name, convert in (("bilou", to_bilou), ("bio", to_bio), ("io", to_io))}
    for scheme, tags in flat.items():
        codes = batch.token_labels("gold", scheme)
        spelled = ["O" if c == 0 else f"{ROLES[scheme][(c - 1) % 4]}-{batch.types[(c - 1) // 4]}" for c in codes]
        assert spelled == tags
    assert (batch.token_types() >= 0).sum() == sum(t != "O" for t in flat["io"])


def test_memo_computes_once_per_key_and_statistics():
    batch = Batch(TOKENS, GOLD, PRED)
    calls = []
    stats_a, stats_b = object(), object()
    assert batch.memo(("k",), stats_a, lambda: calls.append(1) or "first") == "first"
    assert batch.memo(("k",), stats_a, lambda: calls.append(2) or "again") == "first"
    assert batch.memo(("k",), stats_b, lambda: calls.append(3) or "other stats") == "other stats"
    assert batch.memo(("j",), stats_b, lambda: calls.append(4) or "other key") == "other key"
    assert calls == [1, 3, 4]


def test_documents_and_counts():
    batch = Batch(TOKENS, GOLD, PRED, documents=("x", "x", "y"))
    assert batch.documents == ["x", "x", "y"]
    table = batch.counts(np.array([0, 1, 1]))
    assert len(table) == 3 and table.strata.tolist() == [0, 1, 1] and table.documents.tolist() == ["x", "x", "y"]
    assert np.array_equal(table.order, batch.sentence_keys)
    assert Batch(TOKENS, GOLD).documents is None
    with pytest.raises(ValueError, match="^2 document ids for 3 sentences$"):
        Batch(TOKENS, GOLD, documents=["x", "y"])
