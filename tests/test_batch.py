"""The decoded batch: flat span arrays, token label codes in each scheme, per-token sentence
index and the per-batch memo (label codes checked against the scheme converters); building a
batch pauses the cyclic garbage collector (its scans made building grow superlinearly with the
test size) and always restores its state; token ids are shared per statistics object; exact
span matching by one integer key per span agrees with matching (start, end, type) tuples."""
import gc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import batch_view
from tough_ner import TrainStats
from tough_ner.batch import ROLES, Batch
from tough_ner.schemes import decode, to_bilou, to_bio, to_io
from tough_ner.scoring import matched, matched_by_tuples

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


@pytest.mark.parametrize("as_codes", [False, True])
def test_token_ids_are_looked_up_once_per_statistics_object(as_codes):
    tokens, tags = [["a", "b"], ["c"]], [["B-X", "O"], ["O"]]
    batch = Batch.from_codes(*coded(tokens), coded(tags)[1]) if as_codes else Batch(tokens, tags)
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
    # The predicted side: each predicted span, in its order, found among the gold ones.
    by_hand = [span in set(decode(g)) for g, p in zip(gold, predicted) for span in decode(p)]
    assert matched(batch, "pred").tolist() == matched_by_tuples(batch, "pred").tolist() == by_hand


def test_input_errors_name_the_sentence_and_what_is_wrong():
    """Each check of ``Batch`` by hand: the message names the sentence (and position) and
    which side is wrong; a string where a list of tags belongs is refused even when its length
    matches the sentence (``"OOO"`` would otherwise read as three O tags)."""
    cases = [
        (([["a"]], [["O"]], [["O"], ["O"]]), "^2 prediction sentences but 1 reference sentences$"),
        (([["a"], ["a", "b", "c"]], [["O"], "OOO"]),
         "^sentence 1: reference tags must be a list of strings, not one string 'OOO'$"),
        (([["a"], ["a", "b", "c"]], [["O"], "OOO"], [["O"], ["O", "O", "O"]]),
         "^sentence 1: reference tags must be a list of strings, not one string 'OOO'$"),
        (([["a"], ["a", "b", "c"]], [["O"], ["O", "O", "O"]], [["O"], "OOO"]),
         "^sentence 1: predicted tags must be a list of strings, not one string 'OOO'$"),
        (([["a"], "abc"], [["O"], ["O", "O", "O"]]), "^sentence 1: tokens must be a list of strings, not one string$"),
        (([["a"], ["b"]], [["O"], ["O"]], [["O"], ["Q-X"]]), "^sentence 1, position 0: unknown tag 'Q-X'"),
        (([["a"]], [["O"]], [3]), "^sentence 0: predicted tags must be a list of strings, not int$"),
        (([None], [["O"]]), "^sentence 0: tokens must be a list of strings, not NoneType$"),
        (([["a"]], [None]), "^sentence 0: reference tags must be a list of strings, not NoneType$"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            Batch(*args)



CORRUPTIONS = ["none", "token type", "token subclass", "gold string", "pred string", "tokens string",
               "gold length", "pred length", "tokens length", "one more gold sentence", "one more prediction",
               "gold unsized", "pred unsized", "tokens unsized"]


class Word(str):
    """A str subclass: tokens must be exactly str, sentences only instances of it."""


@given(st.lists(st.integers(0, 3), min_size=1, max_size=4), st.sampled_from(CORRUPTIONS), st.data(), st.booleans())
def test_the_fast_check_passes_exactly_what_the_sentence_by_sentence_search_passes(lengths, corruption, data,
                                                                                   with_predictions):
    """``_looks_right`` (a few passes over all sentences) is the common case's shortcut of
    ``_find_problem`` (which names the first problem): they must agree on each kind of bad
    input, or a bad input would score silently."""
    from tough_ner.batch import _find_problem, _looks_right

    tokens = [["w"] * n for n in lengths]
    references = [["O"] * n for n in lengths]
    predictions = [["O"] * n for n in lengths]
    s = data.draw(st.integers(0, len(lengths) - 1))
    if corruption in ("token type", "token subclass") and lengths[s]:
        tokens[s][data.draw(st.integers(0, lengths[s] - 1))] = 1 if corruption == "token type" else Word("w")
    elif corruption.endswith(" string"):
        side = {"gold": references, "pred": predictions, "tokens": tokens}[corruption.split()[0]]
        side[s] = Word("O" * lengths[s]) if data.draw(st.booleans()) else "O" * lengths[s]
    elif corruption.endswith(" unsized"):  # a sentence without a length
        {"gold": references, "pred": predictions, "tokens": tokens}[corruption.split()[0]][s] = None
    elif corruption.endswith(" length"):
        {"gold": references, "pred": predictions, "tokens": tokens}[corruption.split()[0]][s].append("O")
    elif corruption == "one more gold sentence":
        references.append(["O"])
    elif corruption == "one more prediction":
        predictions.append(["O"])
    predictions = predictions if with_predictions else None
    try:
        _find_problem(tokens, references, predictions)
        found = False
    except ValueError:
        found = True
    assert _looks_right(tokens, references, predictions) is not found


def test_a_side_other_than_gold_or_pred_is_an_error():
    """``which`` names a side; anything else (a typo such as "Gold" or "predicted") must not
    silently select the predictions."""
    batch = Batch([["a", "b"]], [["B-PER", "O"]], [["O", "B-LOC"]])
    assert batch.span_arrays("pred")[3].tolist() == [batch.types.index("LOC")]
    for which in ("Gold", "predicted", "PRED", ""):
        with pytest.raises(ValueError, match=f"^which must be 'gold' or 'pred', not {which!r}$"):
            batch.span_arrays(which)
        with pytest.raises(ValueError, match="^which must be 'gold' or 'pred'"):
            batch.token_types(which)
        with pytest.raises(ValueError, match="^which must be 'gold' or 'pred'"):
            matched(batch, which)


# ---- batches of coded columns (the reader's form) ------------------------------------------
CODED_TAGS = ["O", "O", "B-PER", "I-PER", "E-PER", "L-PER", "S-LOC", "U-LOC", "I-LOC", "B-geo-loc", "I-geo-loc"]


def coded(sentences):
    """``(starts, codes)`` of sentences of values, as ``Batch.from_codes`` takes them."""
    from tough_ner.corpus import factorize

    distinct, ids, _ = factorize([value for sentence in sentences for value in sentence])
    starts = np.cumsum([0] + [len(sentence) for sentence in sentences])
    return starts, (distinct, ids)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["a", "b", "Paris", "paris", "é"]), st.sampled_from(CODED_TAGS),
                                   st.sampled_from(CODED_TAGS)), max_size=7), max_size=6),
       st.booleans(), st.booleans())
def test_a_batch_of_codes_reads_as_the_batch_of_its_lists(sentences, with_predictions, with_documents):
    tokens = [[t for t, _, _ in s] for s in sentences]
    gold = [[g for _, g, _ in s] for s in sentences]
    pred = [[p for _, _, p in s] for s in sentences] if with_predictions else None
    documents = [s // 2 for s in range(len(sentences))] if with_documents else None
    starts, token_codes = coded(tokens)
    built = Batch.from_codes(starts, token_codes, coded(gold)[1], coded(pred)[1] if pred is not None else None,
                             documents)
    stats = TrainStats.from_lists([["a", "Paris"]], [["O", "B-LOC"]])
    assert batch_view(built, stats) == batch_view(Batch(tokens, gold, pred, documents), stats)
    if not with_predictions:
        with pytest.raises(ValueError, match="^this batch has no predictions$"):
            built.span_arrays("pred")


def test_a_batch_of_codes_makes_no_per_sentence_list_for_hardeval(conll_stats):
    """What makes the command fast: HardEval reads only arrays of a coded batch."""
    from tough_ner import hardeval

    batch = Batch.from_codes(*coded([["EU", "rejects", "German"], ["Peter", "Qxzzyv"]]),
                             coded([["B-ORG", "O", "B-MISC"], ["B-PER", "O"]])[1],
                             coded([["B-ORG", "O", "O"], ["B-LOC", "O"]])[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no input warning either (one unseen token, its casing checked)
        result = hardeval(conll_stats, batch)
    assert result["n_all"] == 5 and result["n_unseen"] == 1
    made = {"tokens", "references", "predictions", "gold_spans", "pred_spans", "flat_tokens"} & set(batch.__dict__)
    assert made == set()
    lists = hardeval(conll_stats, Batch(batch.tokens, batch.references, batch.predictions))
    assert str(result) == str(lists)  # as text: NaN (empty subsets) equals NaN


def test_bad_codes_are_named():
    starts, tokens = coded([["a", "b"], ["c"]])
    gold = coded([["O", "B-X"], ["O"]])[1]
    with pytest.raises(ValueError, match=r"^sentence 1, position 0: unknown tag 'Q-X'"):
        Batch.from_codes(starts, tokens, gold, coded([["O", "O"], ["Q-X"]])[1])
    for bad_starts in (np.array([0, 2, 1]), np.array([1, 3]), np.zeros(0, dtype=np.int64), np.array([[0, 3]])):
        with pytest.raises(ValueError, match="^starts must be 0 followed by the non-decreasing sentence ends$"):
            Batch.from_codes(bad_starts, tokens, gold)
    for given_starts in ([0, 2, 3], starts.astype(np.int32)):  # any integer sequence: offsets are int64
        assert Batch.from_codes(given_starts, tokens, gold).offsets.dtype == np.int64
    with pytest.raises(ValueError, match="^2 gold codes for 3 tokens$"):
        Batch.from_codes(starts, tokens, (["O"], np.array([0, 0])))
    with pytest.raises(ValueError, match="^the gold codes are missing$"):
        Batch.from_codes(starts, tokens, None)
    # Values as the reader gives them: distinct, numbered as first met, each used.
    for values, ids in ((["O"], [0, 1, 0]), (["O", "B-X"], [1, 0, 1]), (["O", "B-X", "B-Y"], [0, 1, 0]),
                        (["O", "O"], [0, 1, 0]), (["O"], [0, -1, 0]), (["O", "B-X", "B-Y"], [0, 2, 1]),
                        (["O", "B-X"], [0, 0, 0])):
        with pytest.raises(ValueError, match="^the pred codes are not distinct values numbered in the order they "
                                             r"first occur, each used \(as Table.codes and corpus.factorize"):
            Batch.from_codes(starts, tokens, gold, (values, np.array(ids)))
    with pytest.raises(ValueError, match="^the tokens codes are not distinct"):
        Batch.from_codes(np.zeros(1, dtype=np.int64), (["a"], np.zeros(0, dtype=np.int64)), ([], np.zeros(0)))
    assert len(Batch.from_codes(np.zeros(1, dtype=np.int64), ([], np.zeros(0, dtype=np.int64)),
                                ([], np.zeros(0, dtype=np.int64)))) == 0
    with pytest.raises(ValueError, match="^sentence 0, position 1: token 7 is a int, not a string$"):
        Batch.from_codes(starts, (["a", 7], np.array([0, 1, 0])), gold)
    with pytest.raises(ValueError, match=r"^sentence 0, position 1: token \['b'\] is a list, not a string$"):
        Batch.from_codes(starts, (["a", ["b"]], np.array([0, 1, 0])), gold)  # unhashable: named all the same
    with pytest.raises(ValueError, match="^1 document ids for 2 sentences$"):
        Batch.from_codes(starts, tokens, gold, documents=[0])


def test_types_added_after_construction_keep_every_span_its_type():
    """``as_batch`` adds the types only hallucinated mentions have once the batch is built
    (``formats._set_hallucinated``): span type ids must follow the new numbering."""
    from tough_ner.formats import _set_hallucinated

    tokens, gold, pred = [["a", "b"], ["c"]], [["B-X", "O"], ["B-Y"]], [["O", "B-X"], ["O"]]
    for batch in (Batch(tokens, gold, pred), Batch.from_codes(*coded(tokens), coded(gold)[1], coded(pred)[1])):
        _set_hallucinated(batch, [[{"text": "z", "type": "AAA"}], []])
        assert batch.types == ["AAA", "X", "Y"]
        assert [batch.types[t] for t in batch.span_arrays("gold")[3].tolist()] == ["X", "Y"]
        assert batch.gold_spans == [[(0, 1, "X")], [(0, 1, "Y")]] and batch.pred_spans == [[(1, 2, "X")], []]
        assert batch.span_type_counts() == {"X": 1, "Y": 1}  # gold by default
