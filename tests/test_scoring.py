"""Span scores: hand-made fixtures for the NaN and zero cases, hallucinated mentions and the
input counts; seqeval (default mode, lenient like our decoder) on random IOB2 tags."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import classification_report

from tough_ner.batch import Batch
from tough_ner.scoring import (f1, input_counts, matched, prf, ratio, span_scores, unplaced_per_sentence,
                               unplaced_types)


def test_ratio_is_nan_only_for_an_empty_denominator():
    assert ratio(1, 4) == 0.25
    assert ratio(0, 3) == 0.0
    assert math.isnan(ratio(0, 0)) and math.isnan(ratio(5, 0))


def test_f1_zero_nan_and_harmonic_cases():
    assert math.isnan(f1(math.nan, math.nan, 0, 0))  # nothing to find, nothing found
    assert f1(0.0, math.nan, 0, 3) == 0.0  # only wrong predictions
    assert f1(math.nan, 0.0, 2, 0) == 0.0  # nothing predicted
    assert f1(0.0, 0.0, 2, 2) == 0.0
    assert f1(math.nan, 0.5, 2, 0) == 0.0 and f1(0.5, math.nan, 0, 2) == 0.0  # one side undefined: 0, not NaN
    assert f1(0.5, 1.0, 1, 2) == 2 * 0.5 / 1.5
    assert f1(1.0, 0.25, 4, 1) == 0.4


def test_prf_by_hand():
    # 2 right of 3 predicted and 4 gold: P = 2/3, R = 1/2, F1 = 2PR / (P + R) = 4/7.
    scores = prf(2, 4, 3)
    assert scores["precision"] == 2 / 3 and scores["recall"] == 0.5
    assert math.isclose(scores["f1"], 4 / 7)
    empty = prf(0, 0, 0)
    assert all(math.isnan(v) for v in empty.values())


def _batch():
    # Sentence 0: gold PER "A B", LOC "C"; predicted PER "A B" (right), LOC "C D" (wrong end).
    # Sentence 1: gold ORG "E"; predicted LOC "E" (wrong type) and MISC "F" (type never gold).
    tokens = [["A", "B", "C", "D"], ["E", "F"]]
    gold = [["B-PER", "I-PER", "B-LOC", "O"], ["B-ORG", "O"]]
    pred = [["B-PER", "I-PER", "B-LOC", "I-LOC"], ["B-LOC", "B-MISC"]]
    return Batch(tokens, gold, pred)


def test_matched_needs_same_boundaries_and_type_in_gold_order():
    batch = _batch()
    # gold order: PER(0), LOC(0), ORG(1)
    assert matched(batch).tolist() == [True, False, False]
    assert matched(batch).dtype == bool
    # predicted order: PER(0), LOC(0) with other boundaries, LOC(1), MISC(1)
    assert matched(batch, "pred").tolist() == [True, False, False, False]


def test_matched_is_computed_once_and_read_only():
    """Every caller gets the same cached array: writing into it would change the answer of every
    later caller (mutation audit: nothing checked that it is read-only)."""
    batch = _batch()
    first = matched(batch)
    assert matched(batch) is first and not first.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first[1] = True
    assert matched(batch).tolist() == [True, False, False]


def test_span_scores_micro_and_per_type_by_hand():
    scores = span_scores(_batch())
    assert scores["precision"] == 1 / 4 and scores["recall"] == 1 / 3
    assert math.isclose(scores["f1"], 2 * (1 / 4) * (1 / 3) / (1 / 4 + 1 / 3))
    per_type = scores["per_type"]
    assert sorted(per_type) == ["LOC", "MISC", "ORG", "PER"]
    assert per_type["PER"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "n": 1}
    assert per_type["LOC"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "n": 1}
    assert per_type["ORG"]["n"] == 1 and per_type["ORG"]["recall"] == 0.0 and math.isnan(per_type["ORG"]["precision"])
    assert per_type["ORG"]["f1"] == 0.0
    misc = per_type["MISC"]  # predicted only: no gold, so recall is NaN with n = 0
    assert misc["n"] == 0 and misc["precision"] == 0.0 and math.isnan(misc["recall"]) and misc["f1"] == 0.0


def test_hallucinated_mentions_are_false_positives_of_their_type():
    batch = _batch()
    batch.hallucinated = [[{"text": "X", "type": "PER"}], [{"text": "Y", "type": "PER"}, {"text": "Z", "type": "ORG"}]]
    assert unplaced_types(batch) == ["PER", "PER", "ORG"]
    per_sentence = unplaced_per_sentence(batch)
    assert per_sentence.tolist() == [1.0, 2.0] and per_sentence.dtype == float  # a count column, as without
    scores = span_scores(batch)
    assert scores["precision"] == 1 / 7 and scores["recall"] == 1 / 3  # 4 placed + 3 unplaced predictions
    assert scores["per_type"]["PER"]["precision"] == 1 / 3 and scores["per_type"]["PER"]["recall"] == 1.0
    assert scores["per_type"]["ORG"]["precision"] == 0.0 and scores["per_type"]["ORG"]["n"] == 1
    assert scores["per_type"]["LOC"]["precision"] == 0.0  # no unplaced LOC: still 1 prediction


def test_no_hallucinated_list_means_zero_per_sentence_and_no_counts():
    batch = _batch()
    assert unplaced_types(batch) == []
    counted = unplaced_per_sentence(batch)
    assert counted.tolist() == [0.0, 0.0] and counted.dtype == float
    valid = {"n_invalid_transitions_gold": 0, "n_invalid_transitions_pred": 0}  # counted for every input
    assert input_counts(batch) == valid and input_counts(batch, detailed=True) == valid


def test_input_counts_lists_hallucinated_and_snapped_when_detailed():
    batch = _batch()
    batch.hallucinated = [[], [{"text": "Y", "type": "PER"}]]
    assert _without_validity(input_counts(batch)) == {"n_hallucinated": 1}
    assert _without_validity(input_counts(batch, detailed=True)) == {
        "n_hallucinated": 1, "hallucinated": [{"sentence": 1, "text": "Y", "type": "PER"}]}
    batch = _batch()
    batch.formats = {"references": "tags", "predictions": "chars"}  # character spans, none snapped
    assert _without_validity(input_counts(batch)) == {"n_snapped": 0}
    assert _without_validity(input_counts(batch, detailed=True)) == {"n_snapped": 0, "snapped": []}
    batch.snapped = [{"sentence": 0, "start": 1, "end": 3, "label": "LOC", "side": "prediction"}]
    assert _without_validity(input_counts(batch, detailed=True)) == {"n_snapped": 1, "snapped": list(batch.snapped)}
    batch.formats = None  # snapped spans are counted whatever the recorded format
    assert _without_validity(input_counts(batch)) == {"n_snapped": 1}


def _without_validity(counts: dict) -> dict:
    """``input_counts`` less the invalid transitions (always there; tests/test_decoding.py)."""
    return {key: value for key, value in counts.items() if not key.startswith("n_invalid_transitions")}


TAGS = st.sampled_from(["O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 6).flatmap(lambda n: st.tuples(st.lists(TAGS, min_size=n, max_size=n),
                                                              st.lists(TAGS, min_size=n, max_size=n))),
                min_size=1, max_size=5))
def test_span_scores_equal_seqeval(pairs):
    gold = [g for g, _ in pairs]
    pred = [p for _, p in pairs]
    tokens = [["w"] * len(g) for g in gold]
    ours = span_scores(Batch(tokens, gold, pred))
    theirs = classification_report(gold, pred, output_dict=True, zero_division=0)
    for name, row in ours["per_type"].items():
        if row["n"]:
            assert row["n"] == theirs[name]["support"]
            assert math.isclose(row["recall"], theirs[name]["recall"])
            if not math.isnan(row["precision"]):
                assert math.isclose(row["precision"], theirs[name]["precision"])
                assert math.isclose(row["f1"], theirs[name]["f1-score"])
    micro = theirs["micro avg"]
    if micro["support"]:
        assert math.isclose(ours["recall"], micro["recall"])
        if not math.isnan(ours["precision"]):
            assert math.isclose(ours["precision"], micro["precision"])
            assert math.isclose(ours["f1"], micro["f1-score"])
    assert np.isnan(ours["recall"]) == (micro["support"] == 0)


class _HugeCorpus:
    """What ``matched`` reads of a batch, for one sentence of 2**31 - 1 tokens (too large to
    build) and 7 types: gold PER from token 1 and from token 2**30 + 1 to the end, predicted
    PER from token 2**30 + 1 to the end."""
    offsets = np.array([0, 2 ** 31 - 1], dtype=np.int64)
    types = ["LOC", "MISC", "ORG", "PER", "PRODUCT", "TIME", "WORK"]
    memo = Batch.memo  # matched caches its answer on the batch

    def span_arrays(self, which):
        starts = [1, 2 ** 30 + 1] if which == "gold" else [2 ** 30 + 1]
        n = len(starts)
        return (np.zeros(n, dtype=np.int64), np.array(starts, dtype=np.int64),
                np.full(n, 2 ** 31 - 1, dtype=np.int64), np.full(n, 3, dtype=np.int64))


def test_matched_on_a_corpus_too_large_for_one_int64_key_per_span():
    # One int64 key (start * n_positions + end) * n_types + type per span would wrap here:
    # with 2**31 positions and 8 type codes, the two gold spans' keys differ by 2**64, so the
    # first would match the prediction of the second.
    huge = _HugeCorpus()
    n_positions, n_types = 2 ** 31, 8
    first, second = ((start * n_positions + 2 ** 31 - 1) * n_types + 3 for start in (1, 2 ** 30 + 1))
    assert first != second and first % 2 ** 64 == second % 2 ** 64  # the trap is real
    hit = matched(huge)
    assert hit.tolist() == [False, True] and hit.dtype == bool  # a mask: gold_types[hit]
    assert matched(huge, "pred").tolist() == [True] and matched(huge, "pred").dtype == bool


def test_a_span_differing_in_start_and_type_is_not_matched():
    # 7 tokens, types LOC MISC PER: gold PER (0, 1), LOC (2, 7); predicted MISC (0, 7). The
    # predicted span shares only the end with LOC: no gold span is found, nor the prediction.
    batch = Batch([list("abcdefg")], [["B-PER", "O"] + ["B-LOC"] + ["I-LOC"] * 4], [["B-MISC"] + ["I-MISC"] * 6])
    assert matched(batch).tolist() == [False, False] and matched(batch, "pred").tolist() == [False]


def test_per_type_scores_list_a_type_never_predicted():
    # types LOC, PER; PER is gold only (the last type: its predicted count is 0, not missing)
    scores = span_scores(Batch([["Paris", "Ann"]], [["B-LOC", "B-PER"]], [["B-LOC", "O"]]))
    per = scores["per_type"]["PER"]
    assert math.isnan(per["precision"]) and per["recall"] == 0.0 and per["f1"] == 0.0 and per["n"] == 1
    assert scores["per_type"]["LOC"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "n": 1}
