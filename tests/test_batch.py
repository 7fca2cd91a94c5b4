"""Batch construction pauses the cyclic garbage collector (its scans made building a batch
grow superlinearly with the test size) and always restores the collector's state; token ids
are shared per statistics object; exact span matching by one integer key per span agrees with
matching (start, end, type) tuples."""
import gc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tough_ner import Batch, TrainStats
from tough_ner.schemes import decode
from tough_ner.scoring import matched, matched_by_tuples


@pytest.mark.parametrize("enabled", [True, False])
def test_batch_restores_the_collector_state_even_when_decoding_fails(enabled, monkeypatch):
    seen = []
    real_decode = __import__("tough_ner.batch", fromlist=["decode"]).decode

    def watching(tags, s):
        seen.append(gc.isenabled())
        return real_decode(tags, s)

    monkeypatch.setattr("tough_ner.batch.decode", watching)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        Batch([["a", "b"]], [["B-X", "I-X"]], [["O", "B-X"]])
        assert seen == [False, False]  # paused while decoding
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError, match="sentence 1"):
            Batch([["a"], ["b"]], [["O"], ["Q-X"]])
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_token_ids_are_looked_up_once_per_statistics_object():
    batch = Batch([["a", "b"], ["c"]], [["B-X", "O"], ["O"]])
    one = TrainStats.from_lists([["a", "c"]], [["B-X", "O"]])
    other = TrainStats.from_lists([["c", "b"]], [["O", "B-X"]])
    assert batch.token_ids(one).tolist() == one.ids(["a", "b", "c"]).tolist()
    assert batch.token_ids(one) is batch.token_ids(one)
    assert batch.token_ids(other).tolist() == other.ids(["a", "b", "c"]).tolist()  # not the first one's ids
    assert (batch.token_ids(other) < 0).tolist() == [True, False, False]


TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-PER", "S-LOC"]


@given(st.lists(st.tuples(st.lists(st.sampled_from(TAGS), min_size=0, max_size=8),
                          st.lists(st.sampled_from(TAGS), min_size=8, max_size=8)), max_size=12))
def test_matched_by_one_key_per_span_agrees_with_the_tuple_set(sentences):
    gold = [g for g, _ in sentences]
    predicted = [p[:len(g)] for g, p in sentences]
    batch = Batch([["w"] * len(g) for g in gold], gold, predicted)
    expected = matched_by_tuples(batch)
    assert matched(batch).tolist() == expected.tolist()
    assert expected.sum() == sum(len(set(decode(g)) & set(decode(p))) for g, p in zip(gold, predicted))
