"""Partial-match scoring: hand-made cases and a differential test against nervaluate."""
import math

import pytest
from hypothesis import given, settings, strategies as st

import tough_ner
from tough_ner.matching import SCHEMES, match_scores

TYPES = ["PER", "LOC", "ORG"]
NERVALUATE = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}


def batch(gold, pred, length=12):
    tokens = [[f"w{i}" for i in range(length)] for _ in gold]
    return tough_ner.as_batch(tokens, gold, pred, "spans", "spans")


def counts(table):
    return tuple(table[k] for k in ("correct", "incorrect", "partial", "missed", "spurious"))


def test_each_scheme_on_the_semeval_cases():
    # One sentence with the classic cases: exact, wrong type, overlap right type, overlap wrong type,
    # missed and spurious (David Batista's table of the SemEval-2013 scheme).
    gold = [[(0, 2, "PER"), (3, 4, "LOC"), (5, 8, "ORG"), (9, 10, "PER"), (11, 12, "LOC")]]
    pred = [[(0, 2, "PER"), (3, 4, "ORG"), (5, 7, "ORG"), (9, 11, "LOC"), (2, 3, "PER")]]
    table = match_scores(batch(gold, pred))
    assert counts(table["strict"]) == (1, 3, 0, 1, 1)
    assert counts(table["exact"]) == (2, 2, 0, 1, 1)
    assert counts(table["partial"]) == (2, 0, 2, 1, 1)
    assert counts(table["type"]) == (2, 2, 0, 1, 1)
    assert table["partial"]["precision"] == pytest.approx(3 / 5) and table["partial"]["recall"] == pytest.approx(3 / 5)
    assert table["strict"]["possible"] == 5 and table["strict"]["actual"] == 5
    assert all("per_type" not in table[scheme] for scheme in SCHEMES)  # only with detailed=True


def test_min_overlap_is_a_share_of_the_gold_entity():
    gold, pred = [[(0, 4, "PER")]], [[(3, 6, "PER")]]  # 1 of 4 gold tokens shared
    assert match_scores(batch(gold, pred), min_overlap=0.25)["type"]["correct"] == 1
    assert match_scores(batch(gold, pred), min_overlap=0.26)["type"]["correct"] == 0
    # per type too
    assert match_scores(batch(gold, pred), min_overlap=0.26, detailed=True)["type"]["per_type"]["PER"]["correct"] == 0
    assert match_scores(batch(gold, pred), min_overlap=0.25, detailed=True)["type"]["per_type"]["PER"]["correct"] == 1
    for bad in (1.5, -0.1, True, "0.5", None):
        with pytest.raises(ValueError, match=r"min_overlap is a share of the gold entity's tokens in \[0, 1\], got"):
            match_scores(batch(gold, pred), min_overlap=bad)
    assert match_scores(batch(gold, pred), min_overlap=1)["type"]["correct"] == 0
    assert match_scores(batch(gold, [[(0, 4, "PER")]]), min_overlap=1)["type"]["correct"] == 1


def test_empty_sides_are_nan_not_zero():
    table = match_scores(batch([[]], [[]]), detailed=True)
    assert math.isnan(table["strict"]["precision"]) and math.isnan(table["strict"]["f1"])
    table = match_scores(batch([[(0, 1, "PER")]], [[]]))
    assert math.isnan(table["strict"]["precision"]) and table["strict"]["recall"] == 0 and table["strict"]["f1"] == 0


def _flat_spans(draw, length):
    cuts = sorted(draw(st.sets(st.integers(0, length), max_size=8)))
    spans = []
    for a, b in zip(cuts, cuts[1:]):
        if draw(st.booleans()):
            spans.append((a, b, draw(st.sampled_from(TYPES))))
    return spans


@st.composite
def documents(draw):
    n = draw(st.integers(1, 6))
    length = draw(st.integers(1, 14))
    return [_flat_spans(draw, length) for _ in range(n)], [_flat_spans(draw, length) for _ in range(n)], length


def _nervaluate(gold, pred, percent):
    nervaluate = pytest.importorskip("nervaluate")
    as_dicts = lambda docs: [[{"label": t, "start": a, "end": b - 1} for a, b, t in doc] for doc in docs]
    return nervaluate.Evaluator(as_dicts(gold), as_dicts(pred), tags=TYPES, loader="dict",
                                min_overlap_percentage=percent).evaluate()


def _same(ours, theirs, possible, actual):
    assert counts(ours) == (theirs.correct, theirs.incorrect, theirs.partial, theirs.missed, theirs.spurious)
    assert (ours["possible"], ours["actual"]) == (theirs.possible, theirs.actual) == (possible, actual)
    # Deliberate difference: an empty denominator is NaN here, 0 in nervaluate.
    for key, denominator in (("precision", actual), ("recall", possible)):
        assert ours[key] == pytest.approx(theirs.__dict__[key]) if denominator else math.isnan(ours[key])
    if possible or actual:
        assert ours["f1"] == pytest.approx(theirs.f1)


@settings(max_examples=1000, deadline=None)
@given(documents(), st.sampled_from([1, 20, 34, 50, 67, 100]))
def test_identical_to_nervaluate_on_random_flat_spans(docs, percent):
    gold, pred, length = docs
    ours = match_scores(batch(gold, pred, length), min_overlap=0.0 if percent == 1 else percent / 100, detailed=True)
    theirs = _nervaluate(gold, pred, percent)
    for scheme in SCHEMES:
        n_gold, n_pred = sum(map(len, gold)), sum(map(len, pred))
        _same(ours[scheme], theirs["overall"][NERVALUATE[scheme]], n_gold, n_pred)
        for name in TYPES:
            n_gold = sum(t == name for doc in gold for *_, t in doc)
            n_pred = sum(t == name for doc in pred for *_, t in doc)
            if n_gold or n_pred:
                _same(ours[scheme]["per_type"][name], theirs["entities"][name][NERVALUATE[scheme]], n_gold, n_pred)


@settings(max_examples=300, deadline=None)
@given(documents())
def test_each_types_table_is_the_table_of_that_types_spans_alone(docs):
    """A type's row is its spans matched among themselves (found in one pass over the
    sentences): the overall table of a batch holding only that type's spans."""
    gold, pred, length = docs
    ours = match_scores(batch(gold, pred, length), detailed=True)
    for name in {t for doc in gold + pred for *_, t in doc}:
        only = [[s for s in doc if s[2] == name] for doc in gold], [[s for s in doc if s[2] == name] for doc in pred]
        alone = match_scores(batch(*only, length))
        for scheme in SCHEMES:
            row = ours[scheme]["per_type"][name]
            assert counts(row) == counts(alone[scheme]) and (row["possible"], row["actual"]) == \
                (alone[scheme]["possible"], alone[scheme]["actual"])


def test_credits_by_hand():
    from tough_ner.matching import credits

    # gold: PER 0-4, LOC 5-6; predictions: PER 3-5 (1 of the 4 gold tokens), LOC 5-6 (exact)
    b = batch([[(0, 4, "PER"), (5, 6, "LOC")]], [[(3, 5, "PER"), (5, 6, "LOC")]])
    gold, pred = credits(b)  # strict by default
    assert gold.tolist() == [0, 1] and pred.tolist() == [0, 1]
    assert [c.tolist() for c in credits(b, "partial")] == [[0.5, 1], [0.5, 1]]
    assert [c.tolist() for c in credits(b, "type")] == [[1, 1], [1, 1]]
    # a quarter of the gold entity shared: enough for 0.25, not for 0.5
    assert [c.tolist() for c in credits(b, "type", 0.25)] == [[1, 1], [1, 1]]
    assert [c.tolist() for c in credits(b, "type", 0.5)] == [[0, 1], [0, 1]]


def test_credit_scores_by_hand():
    from tough_ner.matching import credit_scores, credits

    # gold PER 0-2, LOC 3-4, LOC 6-8; predictions PER 0-1 (partial), LOC 3-4 (exact), PER 6-8 (wrong type)
    b = batch([[(0, 2, "PER"), (3, 4, "LOC"), (6, 8, "LOC")]], [[(0, 1, "PER"), (3, 4, "LOC"), (6, 8, "PER")]])
    result = credit_scores(b, *credits(b, "partial"))
    # partial ignores types: credits gold 0.5, 1, 1; predictions 0.5, 1, 1 -> P = R = F1 = 2.5 / 3
    assert result["precision"] == pytest.approx(2.5 / 3) and result["recall"] == pytest.approx(2.5 / 3)
    assert result["f1"] == pytest.approx(2.5 / 3)
    # per type, each side's own entities: PER gold 0.5 of 1, PER predictions 0.5 + 1 of 2 (F1 = 2 * .75 * .5 / 1.25);
    # LOC gold 1 + 1 of 2, LOC predictions 1 of 1
    assert result["per_type"]["PER"] == pytest.approx({"precision": 0.75, "recall": 0.5, "f1": 0.6, "n": 1})
    assert result["per_type"]["LOC"] == pytest.approx({"precision": 1.0, "recall": 1.0, "f1": 1.0, "n": 2})
    empty = batch([[]], [[]])
    nothing = credit_scores(empty, *credits(empty, "partial"))
    assert all(math.isnan(nothing[key]) for key in ("precision", "recall", "f1")) and nothing["per_type"] == {}


def test_report_scores_are_the_table_flattened():
    from tough_ner.matching import flat_keys, report_scores

    b = batch([[(0, 2, "PER"), (3, 4, "LOC")]], [[(0, 1, "PER"), (3, 4, "ORG")]])
    table = match_scores(b, detailed=True)
    flat = report_scores(None, b)
    assert list(flat) == [f"{s}_{k}" for s in SCHEMES for k in ("precision", "recall", "f1")]
    # by hand: strict 0 of 2; exact 1 (LOC) of 2; partial 0.5 + 1 of 2; type 1 (PER) of 2
    assert [flat[f"{s}_recall"] for s in SCHEMES] == [0, 0.5, 0.75, 0.5]
    assert flat == flat_keys(table)
    detailed = report_scores(None, b, detailed=True)
    assert detailed["schemes"] == table and {k: v for k, v in detailed.items() if k != "schemes"} == flat


def test_matching_checks_its_inputs():
    from tough_ner.matching import outcomes

    with pytest.raises(ValueError, match="unknown match 'loose': use one of strict, exact, partial, type"):
        outcomes(batch([[]], [[]]), "loose")
    with pytest.raises(ValueError, match="^matching needs predictions$"):
        outcomes(tough_ner.as_batch([["w"]], [[]]), "strict")


def test_type_scheme_takes_the_closest_same_type_entity_and_each_gold_once():
    from tough_ner.matching import COR, INC, MISSED, match_sentence

    gold = [(0, 2, "PER"), (2, 6, "PER"), (6, 7, "LOC")]
    # 1-6 overlaps both PER entities: distance 1 + 4 to the first, 1 + 0 to the second
    assert match_sentence(gold, [(1, 6, "PER")], "type") == ([MISSED, COR, MISSED], [COR])
    # equal distances: the first; a second prediction cannot take it again and takes the next
    assert match_sentence(gold, [(1, 4, "PER"), (1, 4, "PER")], "type") == ([COR, COR, MISSED], [COR, COR])
    # another type only: INC with the first overlapping free entity (2-6, then 6-7), then nothing left
    assert match_sentence(gold, [(5, 7, "ORG")] * 3, "type") == ([MISSED, INC, INC], [INC, INC, MISSED])
    # the same type preferred to an earlier entity of another type
    assert match_sentence(gold, [(5, 7, "LOC")], "type") == ([MISSED, MISSED, COR], [COR])
    # strict: same boundaries but another type is INC, and a later exact entity still COR
    assert match_sentence(gold, [(2, 6, "LOC"), (6, 7, "LOC")], "strict") == ([MISSED, INC, COR], [INC, COR])
    # the closest by |start difference| + |end difference|: 2-6 is 2 + 3 from 0-3, 2 + 2 from 4-8
    assert match_sentence([(0, 3, "PER"), (4, 8, "PER")], [(2, 6, "PER")], "type") == ([MISSED, COR], [COR])
    # a tie (1-4 is 1 + 2 from 0-2 and 2 + 1 from 3-5) goes to the first, which leaves 3-5 to a LOC
    assert match_sentence([(0, 2, "PER"), (3, 5, "PER")], [(1, 4, "PER"), (3, 5, "LOC")], "type") == (
        [COR, INC], [COR, INC])
    # touching is no overlap (end exclusive)
    assert match_sentence(gold, [(7, 9, "LOC")], "exact") == ([MISSED] * 3, [MISSED])
