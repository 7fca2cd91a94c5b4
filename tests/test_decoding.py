"""Decoding as declared (#37): schemes, strict mode, invalid transitions and their repair.

Differential tests against seqeval (strict mode, every scheme; default mode for the lenient
rule), seqscore's definitions written out here (its validate count, its BIO discard and IOB
conlleval repairs: seqscore is not installed), hand-made fixtures for each rule, the column-wise
decoder against the per-sentence one, and an IOB1 file through the command."""
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from seqeval.metrics import f1_score
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import BILOU, IOB1, IOB2, IOBES, IOE1, IOE2, Tokens

from tough_ner import Batch
from tough_ner.cli import main
from tough_ner.core.corpus import read_batch
from tough_ner.core.scoring import span_scores
from tough_ner.core import schemes
from tough_ner.core.schemes import check_decoding, decode

from conftest import write

# Each scheme's prefixes (as its seqeval class spells them) and that class.
SEQEVAL = {"IOB1": ("OBI", IOB1), "IOB2": ("OBI", IOB2), "IOE1": ("OIE", IOE1), "IOE2": ("OIE", IOE2),
           "BIOES": ("OBIES", IOBES), "BILOU": ("OBILU", BILOU)}


def sentences_of(letters: str, max_sentences: int = 8):
    """Lists of sentences of tags made of ``letters`` (any order: invalid sequences too)."""
    tag = st.tuples(st.sampled_from(letters), st.sampled_from(["PER", "LOC"])).map(
        lambda pair: "O" if pair[0] == "O" else f"{pair[0]}-{pair[1]}")
    return st.lists(st.lists(tag, max_size=7), min_size=1, max_size=max_sentences)


def seqeval_strict(tags, scheme):
    return sorted((e.start, e.end, e.tag) for e in Tokens(tags, SEQEVAL[scheme][1]).entities)


def coded(sentences, **decoding) -> Batch:
    """The batch of ``sentences`` (as gold and predictions) read from codes, as a CoNLL file is."""
    values = list(dict.fromkeys(tag for tags in sentences for tag in tags))
    ids = np.array([values.index(tag) for tags in sentences for tag in tags], dtype=np.int64)
    starts = np.cumsum([0] + [len(tags) for tags in sentences])
    tokens = (["w"] if len(ids) else [], np.zeros(len(ids), dtype=np.int64))
    return Batch.from_codes(starts, tokens, (values, ids), (values, ids), **decoding)


@pytest.mark.parametrize("scheme", list(SEQEVAL))
def test_strict_mode_finds_the_spans_of_seqeval_strict_mode(scheme):
    letters = SEQEVAL[scheme][0]

    @settings(max_examples=150, deadline=None)
    @given(sentences_of(letters), sentences_of(letters))
    def check(gold, pred):
        pred = (pred * len(gold))[:len(gold)]
        pred = [(p + ["O"] * len(g))[:len(g)] for g, p in zip(gold, pred)]
        tokens = [["w"] * len(tags) for tags in gold]
        batch = Batch(tokens, gold, pred, scheme=scheme, mode="strict")
        assert [sorted(spans) for spans in batch.gold_spans] == [seqeval_strict(tags, scheme) for tags in gold]
        assert [sorted(spans) for spans in batch.pred_spans] == [seqeval_strict(tags, scheme) for tags in pred]
        assert [decode(tags, s, scheme, "strict") for s, tags in enumerate(gold)] == batch.gold_spans
        assert coded(gold, scheme=scheme, mode="strict").gold_spans == batch.gold_spans
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seqeval warns of an empty side
            theirs = f1_score(gold, pred, mode="strict", scheme=SEQEVAL[scheme][1], zero_division=0)
        ours = span_scores(batch)["f1"]
        assert math.isclose(0.0 if math.isnan(ours) else ours, theirs, abs_tol=1e-12)

    check()


def test_strict_mode_continues_a_span_where_the_lenient_rule_does():
    """Strict mode and the discard repair keep or drop the lenient rule's spans whole
    (schemes._kept_runs): that holds only while seqeval's inside patterns are exactly the
    lenient continuations, for every transition between the prefixes a scheme uses."""
    for scheme, (start, inside, end) in schemes.STRICT.items():
        letters = schemes.SCHEME_PREFIXES[scheme]
        for prev in letters:
            for cur in letters:
                for same in (0, 1):
                    code = schemes._code(schemes.PREFIX_CODES[prev], schemes.PREFIX_CODES[cur], same)
                    assert inside[code] == (prev in "BI" and cur in "IE" and bool(same)), (scheme, prev, cur, same)


@settings(max_examples=150, deadline=None)
@given(sentences_of("OBI"))
def test_lenient_rule_is_seqeval_default_mode_on_iob2_and_iob1_tags(sentences):
    """conlleval's rules (seqeval's default mode ports them) for IOB2 and IOB1 files: the
    lenient rule, declared or auto, finds the same spans."""
    for tags in sentences:
        theirs = sorted((start, end + 1, kind) for kind, start, end in get_entities(tags))
        for scheme in ("auto", "IOB2", "IOB1"):
            assert sorted(decode(tags, scheme=scheme)) == theirs


def seqscore_count(tags, scheme):
    """seqscore's ``validate`` count: each transition, the sentence preceded and followed by O."""
    from tough_ner.core.schemes import VALID, PREFIX_CODES, parse_label, _code

    parsed = [("O", "")] + [parse_label(tag) for tag in tags] + [("O", "")]
    return sum(not VALID[scheme][_code(PREFIX_CODES[p], PREFIX_CODES[c], p != "O" and c != "O" and a == b)]
               for (p, a), (c, b) in zip(parsed, parsed[1:]))


def sequential_repair(tags, valid, fix):
    """seqscore's repairs: left to right, a tag whose transition from the (repaired) previous
    one is invalid is replaced by ``fix(tag)``."""
    repaired, previous = [], "O"
    for tag in tags:
        if not valid(previous, tag):
            tag = fix(tag)
        repaired.append(tag)
        previous = tag
    return repaired


def bio_valid(previous, tag):  # seqscore's BIO: I-X only after B-X or I-X
    return not tag.startswith("I-") or (previous != "O" and previous[2:] == tag[2:])


def iob_valid(previous, tag):  # seqscore's IOB: B-X only after B-X or I-X
    return not tag.startswith("B-") or (previous != "O" and previous[2:] == tag[2:])


@settings(max_examples=150, deadline=None)
@given(sentences_of("OBI"))
def test_repairs_are_seqscores_on_bio_and_iob(sentences):
    """IOB2 discard: an invalid tag becomes O; IOB2 conlleval: it becomes B-X; IOB1 conlleval:
    an invalid B-X becomes I-X (seqscore's rules), then the tags are decoded."""
    for tags in sentences:
        discarded = sequential_repair(tags, bio_valid, lambda tag: "O")
        assert decode(tags, scheme="IOB2", repair="discard") == decode(discarded)
        begun = sequential_repair(tags, bio_valid, lambda tag: "B-" + tag[2:])
        assert decode(tags, scheme="IOB2") == decode(begun)
        continued = sequential_repair(tags, iob_valid, lambda tag: "I-" + tag[2:])
        assert decode(tags, scheme="IOB1") == decode(continued)
        # a repaired sequence is valid, and every decoding of a valid sequence is the same
        for scheme, repaired in (("IOB2", discarded), ("IOB2", begun), ("IOB1", continued)):
            assert seqscore_count(repaired, scheme) == 0
            assert decode(repaired, scheme=scheme, mode="strict") == decode(repaired, scheme=scheme)


@pytest.mark.parametrize("scheme", ["IOB1", "IOB2", "IOE1", "IOE2", "BIOES", "IO", "auto"])
def test_column_wise_and_per_sentence_decoding_agree_with_every_option(scheme):
    letters = {"auto": "OBIELSU", "IO": "OI", "BIOES": "OBIESLU"}.get(scheme, SEQEVAL.get(scheme, ("",))[0])
    options = [("lenient", "conlleval"), ("lenient", "discard")] + ([("strict", "conlleval")] if scheme != "auto" else [])

    @settings(max_examples=60, deadline=None)
    @given(sentences_of(letters))
    def check(sentences):
        tokens = [["w"] * len(tags) for tags in sentences]
        for mode, repair in options:
            listed = Batch(tokens, sentences, sentences, scheme=scheme, mode=mode, repair=repair)
            expected = [decode(tags, s, scheme, mode, repair) for s, tags in enumerate(sentences)]
            assert listed.gold_spans == expected
            from_codes = coded(sentences, scheme=scheme, mode=mode, repair=repair)
            assert from_codes.pred_spans == expected
            counts = sum(seqscore_count(tags, check_decoding(scheme)[0]) for tags in sentences)
            assert listed.invalid_transitions("gold") == from_codes.invalid_transitions("pred") == counts

    check()


@pytest.mark.parametrize("scheme, tags, count", [
    ("IOB2", ["I-PER", "I-PER", "O", "B-LOC", "I-PER"], 2),  # O -> I-PER, B-LOC -> I-PER
    ("IOB1", ["I-PER", "I-PER", "O", "B-LOC", "I-PER"], 1),  # O -> B-LOC
    ("IOB1", ["I-PER", "B-PER", "I-LOC", "B-PER"], 1),  # I-LOC -> B-PER: B only splits one type
    ("BIOES", ["B-PER", "O", "S-LOC", "E-LOC", "B-ORG"], 3),  # B-PER -> O, S-LOC -> E-LOC, B-ORG at the end
    ("BILOU", ["B-PER", "L-PER", "U-LOC", "I-LOC"], 2),  # U-LOC -> I-LOC, I-LOC at the end
    ("IOE2", ["I-PER", "E-PER", "I-LOC", "O", "E-ORG"], 1),  # I-LOC -> O
    ("IOE1", ["I-PER", "E-PER", "I-PER", "E-PER", "O"], 1),  # E-PER -> O: E only splits one type
    ("IO", ["I-PER", "O", "I-LOC", "I-PER"], 0),
    ("auto", ["E-PER", "B-LOC", "I-LOC", "I-PER", "S-ORG", "L-ORG"], 3),  # continuations that continue nothing
])
def test_invalid_transitions_are_counted_under_the_declared_scheme(scheme, tags, count):
    batch = Batch([["w"] * len(tags)], [tags], [["O"] * len(tags)], scheme=scheme)
    assert batch.invalid_transitions("gold") == count
    assert batch.invalid_transitions("pred") == 0
    assert batch.invalid_counts() == {"n_invalid_transitions_gold": count, "n_invalid_transitions_pred": 0}
    assert Batch([["w"]], [["O"]]).invalid_transitions("pred") == 0  # no predictions


@pytest.mark.parametrize("scheme, tags, conlleval, discard, strict", [
    # IOB2: an I-X that continues nothing begins a span, or goes with the rest of its span
    ("IOB2", ["B-PER", "I-LOC", "I-LOC", "O", "I-PER"],
     [(0, 1, "PER"), (1, 3, "LOC"), (4, 5, "PER")], [(0, 1, "PER")], [(0, 1, "PER")]),
    # BIOES: a span left open (B-X then O) or begun inside (I-X after O) goes
    ("BIOES", ["B-PER", "O", "I-LOC", "E-LOC", "S-ORG", "B-PER", "E-PER"],
     [(0, 1, "PER"), (2, 4, "LOC"), (4, 5, "ORG"), (5, 7, "PER")], [(4, 5, "ORG"), (5, 7, "PER")],
     [(4, 5, "ORG"), (5, 7, "PER")]),
    # IOE2: a span must end with E-: I-X then O is left open
    ("IOE2", ["I-PER", "O", "I-LOC", "E-LOC", "E-ORG"],
     [(0, 1, "PER"), (2, 4, "LOC"), (4, 5, "ORG")], [(2, 4, "LOC"), (4, 5, "ORG")], [(2, 4, "LOC"), (4, 5, "ORG")]),
    # IOE1: E-X only before another X span
    ("IOE1", ["I-PER", "E-PER", "I-PER", "O", "E-LOC", "O"],
     [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC")], [(0, 2, "PER"), (2, 3, "PER")], [(0, 2, "PER"), (2, 3, "PER")]),
    # IOB1 as declared: I-X after O starts a span, B-X separates two X spans; B-X after O is invalid
    ("IOB1", ["I-PER", "I-PER", "B-PER", "O", "B-LOC", "I-LOC"],
     [(0, 2, "PER"), (2, 3, "PER"), (4, 6, "LOC")], [(0, 2, "PER"), (2, 3, "PER")], [(0, 2, "PER"), (2, 3, "PER"),
                                                                                     (5, 6, "LOC")]),
])
def test_each_repair_rule_on_hand_made_sentences(scheme, tags, conlleval, discard, strict):
    assert decode(tags, scheme=scheme) == conlleval
    assert decode(tags, scheme=scheme, repair="discard") == discard
    assert decode(tags, scheme=scheme, mode="strict") == strict
    if scheme in SEQEVAL:
        assert seqeval_strict(tags, scheme) == sorted(strict)


def test_bad_decoding_options_and_foreign_prefixes_are_errors_that_say_what_to_do():
    with pytest.raises(ValueError, match=r"scheme='IOB3': use one of auto, IOB1"):
        check_decoding("IOB3")
    with pytest.raises(ValueError, match="mode='strict' needs a declared scheme"):
        Batch([["w"]], [["O"]], mode="strict")
    with pytest.raises(ValueError, match="repair='discard' applies to mode='lenient'"):
        Batch([["w"]], [["O"]], scheme="IOB2", mode="strict", repair="discard")
    with pytest.raises(ValueError, match="repair='fix': use 'conlleval' or 'discard'"):
        decode(["O"], repair="fix")
    with pytest.raises(ValueError, match=r"sentence 1, position 2: prefix E- \(or L-\) is not in scheme IOB2, "
                                         r"which uses B-, I- and O"):
        Batch([["w"], ["w"] * 3], [["O"], ["B-X", "I-X", "L-X"]], scheme="iob2")
    with pytest.raises(ValueError, match=r"sentence 1, position 0: prefix B- is not in scheme IOE1"):
        coded([["O"], ["B-X"]], scheme="IOE1")
    assert check_decoding("bilou") == ("BIOES", "lenient", "conlleval")  # one scheme, two spellings


def test_metrics_decode_as_declared_and_report_invalid_transitions():
    import evaluate  # noqa: F401  (the metric classes need it)
    from tough_ner.metrics.tmr import Tmr
    from tough_ner import TrainStats

    tokens = [["EU", "rejects", "German", "call"], ["Peter", "Blackburn"]]
    gold = [["I-ORG", "O", "I-MISC", "O"], ["I-PER", "I-PER"]]  # IOB1, as CoNLL-2003 was first released
    pred = [["I-ORG", "O", "B-MISC", "O"], ["I-PER", "B-PER"]]
    stats = TrainStats.from_lists(tokens, gold)
    lenient = Tmr(train=stats).compute(predictions=pred, references=gold, tokens=tokens)
    assert (lenient["n_invalid_transitions_gold"], lenient["n_invalid_transitions_pred"]) == (3, 2)  # read as IOB2
    # training data is decoded as the test data (statistics decoded otherwise are refused)
    iob1 = Tmr(train=TrainStats.from_lists(tokens, gold, scheme="IOB1"), scheme="IOB1").compute(
        predictions=pred, references=gold, tokens=tokens)
    assert (iob1["n_invalid_transitions_gold"], iob1["n_invalid_transitions_pred"]) == (0, 1)  # O -> B-MISC
    assert iob1["recall"] == lenient["recall"] == 2 / 3  # the lenient rule reads IOB1 as declared
    with pytest.raises(ValueError, match="decoded with scheme=IOB1, mode=lenient, repair=conlleval but the training "
                                         "statistics with scheme=auto"):
        Tmr(train=stats, scheme="IOB1").compute(predictions=pred, references=gold, tokens=tokens)
    strict = Tmr(train=TrainStats.from_lists(tokens, gold, scheme="IOB2", mode="strict")).compute(
        predictions=pred, references=gold, tokens=tokens, scheme="IOB2", mode="strict")
    assert strict["recall"] != strict["recall"] or strict["n_invalid_transitions_gold"] == 3  # no gold span: NaN
    assert math.isnan(strict["recall"])


def test_an_iob1_file_through_the_command(tmp_path, capsys):
    train = write(tmp_path / "train.conll", "EU I-ORG\nrejects O\nGerman I-MISC\n\n")
    lines = ["EU I-ORG I-ORG", "rejects O O", "German I-MISC B-MISC", "call O O", "",
             "Peter I-PER I-PER", "Blackburn I-PER B-PER", ""]
    test = write(tmp_path / "iob1.conll", "\n".join(lines) + "\n")
    shown = {}
    for scheme, mode in (("auto", "lenient"), ("IOB1", "lenient"), ("IOB1", "strict"), ("IOB2", "strict")):
        assert main(["tmr", "--train", str(train), "--test", str(test), "--json", "--scheme", scheme,
                     "--mode", mode]) == 0
        shown[scheme, mode] = json.loads(capsys.readouterr().out)
    assert shown["auto", "lenient"]["n_invalid_transitions_gold"] == 3
    assert shown["IOB1", "lenient"]["n_invalid_transitions_gold"] == 0
    assert shown["IOB1", "lenient"]["n_invalid_transitions_pred"] == 1
    assert shown["IOB1", "lenient"]["recall"] == 2 / 3
    # strict IOB1 (seqeval's rule) drops the predicted B-MISC that follows O
    assert read_batch(test, scheme="IOB1", mode="strict").pred_spans == [[(0, 1, "ORG")], [(0, 1, "PER"), (1, 2, "PER")]]
    assert shown["IOB1", "strict"]["precision"] == 1 / 3
    assert shown["IOB2", "strict"]["n_invalid_transitions_gold"] == 3  # no IOB2 gold span is valid
    assert shown["IOB2", "strict"]["recall"] is None or math.isnan(shown["IOB2", "strict"]["recall"])
    assert main(["tmr", "--train", str(train), "--test", str(test), "--mode", "strict"]) == 2  # needs --scheme
    assert "needs a declared scheme" in capsys.readouterr().err


def test_the_report_warns_of_invalid_transitions_above_the_threshold():
    from tough_ner.core.checks import MAX_INVALID_SHARE, invalid_sequence_warnings

    tokens = [["w"] * 10] * 100  # 1000 tokens: a warning from 2 invalid transitions on
    gold = [["B-PER", "I-PER"] + ["O"] * 8] * 100
    broken = [["O", "I-PER"] + ["O"] * 8] * 2 + gold[2:]
    assert MAX_INVALID_SHARE * 1000 == 1
    assert invalid_sequence_warnings({"a": Batch(tokens, gold, gold), "b": Batch(tokens, gold, broken[:1] + gold[1:])}) == []
    warned = invalid_sequence_warnings({"a": Batch(tokens, gold, gold), "b": Batch(tokens, gold, broken)})
    assert warned == ["b's predictions have 2 transitions invalid in scheme auto (0.20% of 1000 tokens; repaired by "
                      "the conlleval rule): is the scheme the one declared?"]
    strict = invalid_sequence_warnings({"a": Batch(tokens, broken, gold, scheme="IOB2", mode="strict")})
    assert strict == ["the gold tags have 2 transitions invalid in scheme IOB2 (0.20% of 1000 tokens; seqeval's strict "
                      "mode drops them): is the scheme the one declared?"]
