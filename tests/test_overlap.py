"""Overlapping and nested spans (``allow_overlap=True``): hand-made nested cases, the refusal
by the methods defined on flat tags, properties (no overlap: today's numbers; any span order:
the same numbers) and differential tests against spaCy's ``Scorer.score_spans(...,
allow_overlap=True)`` and nervaluate on random overlapping span sets."""
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

import tough_ner
from tough_ner.formats import select
from tough_ner.matching import SCHEMES, match_scores
from tough_ner.scoring import span_scores

from conftest import need, write

TYPES = ["PER", "LOC", "ORG"]
NERVALUATE = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}
# "Bank of America sued John Smith of Boston": an ORG holding a LOC, a PER beside them.
TOKENS = ["Bank", "of", "America", "sued", "John", "Smith", "of", "Boston"]
GOLD = [(0, 3, "ORG"), (2, 3, "LOC"), (4, 8, "PER"), (7, 8, "LOC")]


def batch(gold, pred, length=len(TOKENS), **options):
    tokens = [TOKENS[:length] if length <= len(TOKENS) else [f"w{i}" for i in range(length)] for _ in gold]
    return tough_ner.as_batch(tokens, gold, pred, "spans", "spans", allow_overlap=True, **options)


def counts(table):
    return tuple(table[k] for k in ("correct", "incorrect", "partial", "missed", "spurious"))


# ---- hand-made nested cases --------------------------------------------------------------
def test_nested_spans_are_scored_by_hand():
    # the outer ORG right, the nested LOC typed GPE, the PER cut short, its nested LOC right, one spurious
    pred = [(0, 3, "ORG"), (2, 3, "GPE"), (4, 6, "PER"), (7, 8, "LOC"), (3, 4, "ORG")]
    b = batch([GOLD], [pred])
    assert b.gold_spans == [sorted(GOLD)] and b.pred_spans == [sorted(pred)]
    assert b.overlapping == {"gold": (0, (0, 3, "ORG"), (2, 3, "LOC")), "pred": (0, (0, 3, "ORG"), (2, 3, "GPE"))}
    scores = span_scores(b)
    assert (scores["precision"], scores["recall"]) == (2 / 5, 2 / 4)
    assert scores["f1"] == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    per_type = scores["per_type"]
    assert per_type["LOC"]["precision"] == 1.0 and per_type["LOC"]["recall"] == 0.5 and per_type["LOC"]["n"] == 2
    assert per_type["ORG"]["precision"] == 0.5 and per_type["ORG"]["recall"] == 1.0
    assert per_type["PER"]["recall"] == 0.0 and per_type["GPE"]["precision"] == 0.0
    # macro over the four types present: F1 of LOC 2/3, ORG 2/3, PER 0, GPE 0
    assert scores["macro_f1"] == pytest.approx((2 / 3 + 2 / 3) / 4)
    assert scores["weighted_f1"] == pytest.approx((2 * 2 / 3 + 1 * 2 / 3) / 4)
    table = match_scores(b)
    # gold in order (0,3,ORG) (2,3,LOC) (4,8,PER) (7,8,LOC); predictions in order (0,3,ORG) (2,3,GPE)
    # (3,4,ORG) (4,6,PER) (7,8,LOC): (3,4,ORG) overlaps no gold entity, (4,6,PER) overlaps the PER
    assert counts(table["strict"]) == (2, 2, 0, 0, 1)
    assert counts(table["exact"]) == (3, 1, 0, 0, 1)
    assert counts(table["partial"]) == (3, 0, 1, 0, 1)
    assert counts(table["type"]) == (3, 1, 0, 0, 1)


def test_a_prediction_overlapping_two_nested_gold_entities_takes_the_first_untaken():
    gold = [(0, 3, "ORG"), (2, 3, "LOC")]
    table = match_scores(batch([gold], [[(1, 3, "LOC"), (2, 3, "ORG")]]), detailed=True)
    # (1,3,LOC) overlaps both: strict INC against the first, (0,3,ORG); (2,3,ORG) then takes (2,3,LOC)
    assert counts(table["strict"]) == (0, 2, 0, 0, 0)
    assert counts(table["exact"]) == (1, 1, 0, 0, 0)
    # type: (1,3,LOC) takes the same-type (2,3,LOC), not the first overlapping ORG; (2,3,ORG) then the ORG
    assert counts(table["type"]) == (2, 0, 0, 0, 0)
    assert counts(table["type"]["per_type"]["LOC"]) == (1, 0, 0, 0, 0)


def test_same_boundaries_with_two_types_are_two_entities():
    b = batch([[(0, 3, "ORG"), (0, 3, "LOC")]], [[(0, 3, "LOC")]])
    scores = span_scores(b)
    assert (scores["precision"], scores["recall"]) == (1.0, 0.5)
    assert counts(match_scores(b)["exact"]) == (1, 0, 0, 1, 0)


def test_a_span_given_twice_is_an_error():
    with pytest.raises(ValueError, match="sentence 1: prediction span 0-3 ORG is given twice"):
        batch([[], []], [[], [(2, 3, "LOC"), (0, 3, "ORG"), (0, 3, "ORG")]])


def test_without_allow_overlap_the_error_names_the_sentence_the_spans_and_the_option():
    with pytest.raises(ValueError, match=r"sentence 1: reference spans 0-3 ORG and 2-3 LOC overlap or nest; .*"
                                         r"allow_overlap=True"):
        tough_ner.as_batch([TOKENS, TOKENS], [[], GOLD], [[], []])


def test_chars_keep_overlapping_spans():
    text = " ".join(TOKENS)
    record = {"text": text, "entities": [{"start": 0, "end": 15, "label": "ORG"}, {"start": 8, "end": 15,
                                                                                   "label": "LOC"}]}
    b = tough_ner.as_batch([TOKENS], [GOLD], [record], allow_overlap=True)
    assert b.pred_spans == [[(0, 3, "ORG"), (2, 3, "LOC")]]
    assert span_scores(b)["precision"] == 1.0


def test_tags_stay_flat_and_mention_lists_nest():
    # tags cannot nest; a mention found on no free occurrence goes inside a placed one (tests/test_mentions.py)
    tags = tough_ner.as_batch([TOKENS], [GOLD], [["B-ORG", "I-ORG", "I-ORG"] + ["O"] * 5], allow_overlap=True)
    assert tags.overlapping == {"gold": (0, (0, 3, "ORG"), (2, 3, "LOC"))}
    listed = [[{"text": "Bank of America", "type": "ORG"}, {"text": "America", "type": "LOC"}]]
    mentions = tough_ner.as_batch([TOKENS], [GOLD], listed, allow_overlap=True)
    assert mentions.pred_spans == [[(0, 3, "ORG"), (2, 3, "LOC")]] and mentions.hallucinated == [[]]
    flat = tough_ner.as_batch([TOKENS], [GOLD[:1]], listed)
    assert flat.pred_spans == [[(0, 3, "ORG")]] and flat.hallucinated == [[{"text": "America", "type": "LOC"}]]


def test_a_type_only_a_nested_span_has_gets_its_row():
    b = batch([[(0, 3, "ORG"), (2, 3, "LOC")]], [[]])
    assert b.types == ["LOC", "ORG"] and b.references == [["B-ORG", "I-ORG", "I-ORG"] + ["O"] * 5]
    assert span_scores(b)["per_type"]["LOC"]["n"] == 1 and b.invalid_counts() == {
        "n_invalid_transitions_gold": 0, "n_invalid_transitions_pred": 0}


def test_select_keeps_the_overlapping_spans_of_the_sentences_it_keeps():
    b = batch([[(0, 1, "PER")], GOLD, [(4, 8, "PER")]], [[(0, 1, "PER")], [(0, 3, "ORG"), (2, 3, "LOC")], []])
    part = select(b, [1, 2])
    assert part.gold_spans == [sorted(GOLD), [(4, 8, "PER")]]
    assert part.pred_spans == [[(0, 3, "ORG"), (2, 3, "LOC")], []]
    assert part.overlapping["gold"][0] == 0 and span_scores(part)["recall"] == 2 / 5
    flat = select(b, [0, 2])
    assert not flat.overlapping and flat.gold_spans == [[(0, 1, "PER")], [(4, 8, "PER")]]


# ---- the methods defined on flat tags refuse; TMR reads mentions ------------------------------
def test_methods_on_flat_tags_refuse_overlapping_spans_in_one_clear_error():
    from tough_ner.nrb import nrb
    from tough_ner.rockner import rockner

    stats = tough_ner.TrainStats.from_lists([TOKENS], [["B-ORG", "I-ORG", "I-ORG", "O", "B-PER", "I-PER", "O",
                                                        "B-LOC"]])
    b = batch([GOLD], [[(0, 3, "ORG")]])
    message = (r"{} is defined on flat tags \(one tag per token\), but sentence 0 holds the overlapping gold spans "
               r"0-3 ORG and 2-3 LOC \(kept by allow_overlap=True\)")
    for name, run in (("HardEval", lambda: tough_ner.hardeval(stats, b)),
                      ("bucket F1", lambda: tough_ner.bucket_f1(stats, b)),
                      ("NRB", lambda: nrb(b)),
                      ("RockNER", lambda: rockner(b, b))):
        with pytest.raises(ValueError, match=message.format(name)):
            run()
    result = tough_ner.tmr(stats, b, match="partial")
    assert result["n_mentions"] == 4 and result["recall"] == match_scores(b)["partial"]["recall"]
    # seen in training: Bank of America (found) and Boston; America and John Smith of Boston are not
    assert tough_ner.tmr(stats, b)["recall_seen"] == 0.5 and tough_ner.tmr(stats, b)["n_seen"] == 2


def test_command_line_reads_overlapping_span_lines(tmp_path, capsys):
    from tough_ner.cli import main

    gold = write(tmp_path / "gold.txt", "\n".join(f"{t} {g}" for t, g in zip(
        TOKENS, ["B-ORG", "I-ORG", "I-ORG", "O", "B-PER", "I-PER", "I-PER", "I-PER"])) + "\n")
    train = write(tmp_path / "train.txt", gold.read_text())
    pred = write(tmp_path / "pred.jsonl", json.dumps([[0, 3, "ORG"], [2, 3, "LOC"]]) + "\n")
    command = ["--train", str(train), "--test", str(gold), "--pred", str(pred), "--pred-format", "spans"]
    assert main(["tmr", *command, "--json"]) == 2
    assert "pred.jsonl: line 1 (sentence 0): prediction spans 0-3 ORG and 2-3 LOC overlap" in capsys.readouterr().err
    assert main(["tmr", *command, "--allow-overlap", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["precision"], result["recall"]) == (0.5, 0.5)
    assert main(["hardeval", *command, "--allow-overlap"]) == 2
    assert "HardEval is defined on flat tags" in capsys.readouterr().err


def test_metrics_take_allow_overlap_in_the_span_modes():
    import evaluate
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "metrics"
    stats = tough_ner.TrainStats.from_lists([TOKENS], [["B-ORG", "I-ORG", "I-ORG", "O", "B-PER", "I-PER", "O",
                                                        "B-LOC"]])
    gold = [["B-ORG", "I-ORG", "I-ORG", "O", "B-PER", "I-PER", "I-PER", "I-PER"]]
    pred = [[{"start": 0, "end": 3, "type": "ORG"}, {"start": 2, "end": 3, "type": "LOC"}]]
    tmr = evaluate.load(str(folder / "tmr"), train=stats, config_name="spans", keep_in_memory=True)
    with pytest.raises(ValueError, match="sentence 0: prediction spans 0-3 ORG and 2-3 LOC overlap"):
        tmr.compute(predictions=pred, references=gold, tokens=[TOKENS])
    result = tmr.compute(predictions=pred, references=gold, tokens=[TOKENS], allow_overlap=True, detailed=True)
    assert (result["precision"], result["recall"]) == (0.5, 0.5)
    assert result["match_scores"]["exact"]["correct"] == 1 and result["match_scores"]["exact"]["spurious"] == 1
    hardeval = evaluate.load(str(folder / "hardeval"), train=stats, config_name="chars", allow_overlap=True,
                             keep_in_memory=True)
    record = {"text": None, "entities": [{"start": 0, "end": 15, "label": "ORG"}, {"start": 8, "end": 15,
                                                                                   "label": "LOC"}]}
    with pytest.raises(ValueError, match="HardEval is defined on flat tags"):
        hardeval.compute(predictions=[record], references=gold, tokens=[TOKENS])
    with pytest.raises(TypeError, match="allow_overlap"):  # tags cannot overlap: no such option
        evaluate.load(str(folder / "tmr"), train=stats, allow_overlap=True)
    mentions = evaluate.load(str(folder / "tmr"), train=stats, config_name="mentions", keep_in_memory=True)
    listed = [[{"text": "Bank of America", "type": "ORG"}, {"text": "America", "type": "LOC"}]]
    flat = mentions.compute(predictions=listed, references=gold, tokens=[TOKENS])
    nested = mentions.compute(predictions=listed, references=gold, tokens=[TOKENS], allow_overlap=True)
    assert (flat["n_hallucinated"], nested["n_hallucinated"], nested["precision"]) == (1, 0, 0.5)


# ---- properties ---------------------------------------------------------------------------
def _spans(draw, length, overlapping=True):
    if not overlapping:
        cuts = sorted(draw(st.sets(st.integers(0, length), max_size=8)))
        return [(a, b, draw(st.sampled_from(TYPES))) for a, b in zip(cuts, cuts[1:]) if draw(st.booleans())]
    pairs = draw(st.lists(st.tuples(st.integers(0, length - 1), st.integers(1, 4), st.sampled_from(TYPES)),
                          max_size=6))
    return sorted({(a, min(a + n, length), t) for a, n, t in pairs})


@st.composite
def documents(draw, overlapping=True):
    n, length = draw(st.integers(1, 5)), draw(st.integers(1, 10))
    sides = [[_spans(draw, length, overlapping) for _ in range(n)] for _ in ("gold", "pred")]
    return sides[0], sides[1], length


def _same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):
            _same(a[key], b[key])
        else:
            assert a[key] == b[key] or math.isnan(a[key]) and math.isnan(b[key]), key


@settings(max_examples=100, deadline=None)
@given(documents(overlapping=False))
def test_without_overlap_allow_overlap_changes_nothing(docs):
    gold, pred, length = docs
    flat = tough_ner.as_batch([[f"w{i}" for i in range(length)]] * len(gold), gold, pred, "spans", "spans")
    allowed = batch(gold, pred, length)
    assert not allowed.overlapping and allowed.references == flat.references
    _same(span_scores(flat, beta=2), span_scores(allowed, beta=2))
    _same(match_scores(flat, detailed=True), match_scores(allowed, detailed=True))


@settings(max_examples=100, deadline=None)
@given(documents(), st.randoms(use_true_random=False))
def test_scores_do_not_depend_on_the_order_of_the_spans(docs, rng):
    gold, pred, length = docs
    shuffled = [[rng.sample(spans, len(spans)) for spans in side] for side in (gold, pred)]
    one, other = batch(gold, pred, length + 100), batch(*shuffled, length + 100)
    _same(span_scores(one), span_scores(other))
    _same(match_scores(one, min_overlap=0.5, detailed=True), match_scores(other, min_overlap=0.5, detailed=True))


# ---- differential tests -------------------------------------------------------------------
def _spacy_scores(gold, pred, length):
    need("spacy")
    from spacy.scorer import Scorer
    from spacy.tokens import Doc, Span
    from spacy.training import Example
    from spacy.vocab import Vocab

    vocab, words = Vocab(), [f"w{i}" for i in range(length)]
    examples = []
    for g, p in zip(gold, pred):
        docs = []
        for spans in (p, g):
            doc = Doc(vocab, words=words)
            doc.spans["sc"] = [Span(doc, a, b, label=t) for a, b, t in spans]
            docs.append(doc)
        examples.append(Example(*docs))
    return Scorer.score_spans(examples, "spans", getter=lambda doc, _: doc.spans["sc"], allow_overlap=True)


@settings(max_examples=150, deadline=None)
@given(documents())
def test_span_scores_equal_spacy_score_spans_with_allow_overlap(docs):
    gold, pred, length = docs
    ours, theirs = span_scores(batch(gold, pred, length + 100), beta=0.5), _spacy_scores(gold, pred, length)
    n_gold, n_pred = sum(map(len, gold)), sum(map(len, pred))
    if not n_gold and not n_pred:  # spaCy: None; here NaN (no gold nor predicted entity)
        assert theirs["spans_f"] is None and math.isnan(ours["f1"])
        return
    # Deliberate difference: an empty denominator is NaN here, 0 in spaCy (its 1e-100 guard).
    for key, denominator in (("precision", n_pred), ("recall", n_gold)):
        assert ours[key] == pytest.approx(theirs[f"spans_{key[0]}"]) if denominator else math.isnan(ours[key])
    assert ours["f1"] == pytest.approx(theirs["spans_f"])
    p, r = theirs["spans_p"], theirs["spans_r"]
    assert ours["f_beta"] == pytest.approx(1.25 * p * r / (0.25 * p + r) if p and r else 0.0)
    per_type = ours["per_type"]  # the types with a gold or a predicted entity
    assert per_type.keys() == theirs["spans_per_type"].keys()
    for name, row in per_type.items():
        assert row["f1"] == pytest.approx(theirs["spans_per_type"][name]["f"])
    # macro: the mean of spaCy's per-type F (a type's P or R without entities being 0 there too)
    assert ours["macro_f1"] == pytest.approx(sum(row["f"] for row in theirs["spans_per_type"].values())
                                             / len(theirs["spans_per_type"]))
    support = {name: row["n"] for name, row in per_type.items()}
    if n_gold:
        assert ours["weighted_recall"] == pytest.approx(sum(theirs["spans_per_type"][name]["r"] * n
                                                            for name, n in support.items()) / n_gold)


@settings(max_examples=300, deadline=None)
@given(documents(), st.sampled_from([1, 34, 50, 100]))
def test_match_scores_equal_nervaluate_on_overlapping_spans(docs, percent):
    nervaluate = pytest.importorskip("nervaluate")
    gold, pred, length = docs
    ours = match_scores(batch(gold, pred, length + 100), min_overlap=0.0 if percent == 1 else percent / 100,
                        detailed=True)
    # nervaluate scans the entities in list order: given the order tough-ner sorts them in
    as_dicts = lambda docs: [[{"label": t, "start": a, "end": b - 1} for a, b, t in sorted(doc)] for doc in docs]
    theirs = nervaluate.Evaluator(as_dicts(gold), as_dicts(pred), tags=TYPES, loader="dict",
                                  min_overlap_percentage=percent).evaluate()
    for scheme in SCHEMES:
        for table, result in [(ours[scheme], theirs["overall"][NERVALUATE[scheme]])] + [
                (ours[scheme]["per_type"][name], theirs["entities"][name][NERVALUATE[scheme]])
                for name in TYPES if name in ours[scheme]["per_type"]]:
            assert counts(table) == (result.correct, result.incorrect, result.partial, result.missed, result.spurious)
            if table["possible"] and table["actual"]:
                assert (table["precision"], table["recall"]) == pytest.approx((result.precision, result.recall))


def test_a_spacy_span_group_is_read_with_spans_key_as_spacys_scorer_reads_it():
    """#37: spaCy's span categorizer writes overlapping spans to ``doc.spans[key]``; with
    ``spans_key`` they are read instead of ``doc.ents`` and scored as spaCy's ``score_spans``
    scores that group (hand-made docs: nested, crossing, one span with two types, one missed)."""
    spacy = need("spacy")
    from spacy.scorer import Scorer
    from spacy.tokens import Span
    from spacy.training import Example

    nlp = spacy.blank("en")
    texts = ["Bank of America sued John Smith of Boston", "the University of Paris Hospital in Paris"]
    gold_spans = [[(0, 3, "ORG"), (2, 3, "LOC"), (4, 8, "PER"), (7, 8, "LOC")],
                  [(1, 4, "ORG"), (3, 5, "FAC"), (3, 4, "LOC"), (3, 4, "GPE"), (6, 7, "GPE")]]
    pred_spans = [[(0, 3, "ORG"), (2, 3, "GPE"), (4, 6, "PER"), (7, 8, "LOC")],
                  [(1, 4, "ORG"), (3, 5, "FAC"), (3, 4, "GPE"), (6, 7, "LOC")]]
    examples = []
    for text, gold, pred in zip(texts, gold_spans, pred_spans):
        reference, predicted = nlp.make_doc(text), nlp.make_doc(text)
        reference.spans["sc"] = [Span(reference, a, b, label=t) for a, b, t in gold]
        predicted.spans["sc"] = [Span(predicted, a, b, label=t) for a, b, t in pred]
        predicted.ents = [Span(predicted, 0, 3, "ORG")] if text.startswith("Bank") else []  # not read with spans_key
        examples.append(Example(predicted, reference))
    theirs = Scorer.score_spans(examples, "spans_sc", getter=lambda doc, attr: doc.spans.get(attr[len("spans_"):], []),
                                allow_overlap=True)
    batch = tough_ner.as_batch(None, examples, examples, spans_key="sc", allow_overlap=True)
    assert batch.gold_spans == [sorted(spans) for spans in gold_spans]
    assert batch.pred_spans == [sorted(spans) for spans in pred_spans]
    ours = span_scores(batch)
    assert (ours["precision"], ours["recall"], ours["f1"]) == pytest.approx(
        (theirs["spans_sc_p"], theirs["spans_sc_r"], theirs["spans_sc_f"]))
    assert ours["precision"] == 5 / 8 and ours["recall"] == 5 / 9
    assert {t: row["f1"] for t, row in ours["per_type"].items()} == pytest.approx(
        {t: row["f"] for t, row in theirs["spans_sc_per_type"].items()})
    assert tough_ner.as_batch(None, examples, examples).pred_spans == [[(0, 3, "ORG")], []]  # ents by default
    with pytest.raises(ValueError, match=r"spans_key='spans': no reference doc has that span group \(their groups: "
                                         r"'sc'\)"):
        tough_ner.as_batch(None, examples, examples, spans_key="spans", allow_overlap=True)
    with pytest.raises(ValueError, match="sentence 0: reference spans 0-3 ORG and 2-3 LOC overlap or nest"):
        tough_ner.as_batch(None, examples, examples, spans_key="sc")
    with pytest.raises(ValueError, match="spans_key='sc' names a span group of spaCy docs, but no side is given"):
        tough_ner.as_batch([TOKENS], [GOLD], [GOLD], spans_key="sc", allow_overlap=True)
