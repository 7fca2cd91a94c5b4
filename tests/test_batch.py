"""Batch construction pauses the cyclic garbage collector (its scans made building a batch
grow superlinearly with the test size) and always restores the collector's state."""
import gc

import pytest

from tough_ner import Batch, TrainStats


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
