import numpy as np
import pytest
from hypothesis import given, strategies as st

from tough_ner import schemes
from tough_ner.corpus import read_conll
from tough_ner.schemes import decode, parse_label, spans_to_tags, to_bilou, to_bio, to_io

TYPES = ["PER", "LOC", "geo-loc"]


@pytest.fixture(autouse=True)
def fresh_label_cache(monkeypatch):
    """parse_label caches every tag it has parsed: start each test from an empty cache, so
    the parsing itself runs (and not a result cached by an earlier test)."""
    monkeypatch.setattr(schemes, "_PARSED", {"O": ("O", "")})


def test_bio_and_types_with_hyphens():
    assert decode(["B-PER", "I-PER", "O", "B-geo-loc", "B-geo-loc"]) == [(0, 2, "PER"), (3, 4, "geo-loc"), (4, 5, "geo-loc")]


def test_lenient_i_opens_and_type_change_splits():
    # IOB1 / conlleval leniency: I-X after O or after another type opens a span.
    assert decode(["I-PER", "I-PER", "I-LOC", "O", "I-ORG"]) == [(0, 2, "PER"), (2, 3, "LOC"), (4, 5, "ORG")]


def test_bilou_and_bioes_prefixes():
    tags = ["B-PER", "L-PER", "U-LOC", "S-ORG", "B-MISC", "I-MISC", "E-MISC"]
    assert decode(tags) == [(0, 2, "PER"), (2, 3, "LOC"), (3, 4, "ORG"), (4, 7, "MISC")]


def test_end_without_open_span_makes_one_token_span_and_closes_other():
    assert decode(["B-PER", "E-LOC", "I-LOC"]) == [(0, 1, "PER"), (1, 2, "LOC"), (2, 3, "LOC")]
    assert decode(["L-ORG"]) == [(0, 1, "ORG")]


def test_single_token_prefixes_never_continue():
    # S-/U- close at once: a following I- or L- of the same type starts a new span.
    assert decode(["S-PER", "I-PER", "U-LOC", "L-LOC"]) == [(0, 1, "PER"), (1, 2, "PER"), (2, 3, "LOC"),
                                                            (3, 4, "LOC")]


def test_o_closes_and_open_span_runs_to_end():
    assert decode(["B-PER", "O", "I-PER", "I-PER"]) == [(0, 1, "PER"), (2, 4, "PER")]


@pytest.mark.parametrize("bad", ["X-PER", "B-", "PER", "", "b-PER", None])
def test_unknown_labels_name_sentence_and_position(bad):
    with pytest.raises(ValueError, match=r"sentence 3, position 1: unknown tag"):
        decode(["O", bad], sentence=3)
    with pytest.raises(ValueError, match=r"^unknown tag 'X-PER' \(expected O or a B-"):
        decode(["X-PER"])  # no sentence index: no position prefix either


def test_conversions():
    tags = ["B-PER", "I-PER", "I-PER", "O", "I-LOC"]
    assert to_bilou(tags) == ["B-PER", "I-PER", "L-PER", "O", "U-LOC"]
    assert to_bio(tags) == ["B-PER", "I-PER", "I-PER", "O", "B-LOC"]
    assert to_io(tags) == ["I-PER", "I-PER", "I-PER", "O", "I-LOC"]
    assert spans_to_tags([(0, 2, "PER")], 3) == ["B-PER", "I-PER", "O"]  # bio by default
    with pytest.raises(ValueError, match="unknown scheme 'iob': use 'bio', 'bilou' or 'io'"):
        spans_to_tags([(0, 1, "PER")], 1, "iob")


@st.composite
def span_sets(draw):
    """(sentence length, spans) from gaps, span lengths and types."""
    pieces = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3), st.sampled_from(TYPES)), max_size=5))
    spans, i = [], 0
    for gap, length, entity_type in pieces:
        spans.append((i + gap, i + gap + length, entity_type))
        i += gap + length
    return i + draw(st.integers(0, 2)), spans


@given(span_sets(), st.sampled_from(["bio", "bilou"]))
def test_writing_then_decoding_gives_the_spans_back(case, scheme):
    length, spans = case
    assert decode(spans_to_tags(spans, length, scheme)) == spans


@given(st.lists(st.sampled_from(["O", "B-PER", "I-PER", "I-LOC", "E-LOC", "S-PER", "U-LOC", "L-PER"]), max_size=15))
def test_any_tag_sequence_decodes_to_ordered_disjoint_spans_and_conversions_agree(tags):
    spans = decode(tags)
    assert all(a < b for a, b, _ in spans)
    assert all(spans[k][1] <= spans[k + 1][0] for k in range(len(spans) - 1))
    assert decode(to_bilou(tags)) == spans == decode(to_bio(tags))
    assert to_bilou(to_bilou(tags)) == to_bilou(tags)


def test_messages_of_non_string_and_padded_tags_name_the_tag_and_its_kind():
    from tough_ner.schemes import parse_label
    # a non-string tag, even an unhashable one, is a ValueError naming its value and type
    with pytest.raises(ValueError, match=r"^sentence 3, position 1: unknown tag \['B-PER'\]: a list, not a string$"):
        decode(["O", ["B-PER"]], sentence=3)
    with pytest.raises(ValueError, match=r"^unknown tag 5: a int, not a string$"):
        parse_label(5)
    # the value is cut to its first 200 characters: 200 of repr's
    long = ["B-PER"] * 50
    with pytest.raises(ValueError) as error:
        parse_label(long)
    assert str(error.value) == f"unknown tag {repr(long)[:200]}: a list, not a string"
    with pytest.raises(ValueError) as error:
        decode(["B-PER "], sentence=0)
    assert str(error.value) == ("sentence 0, position 0: tag 'B-PER ' has surrounding whitespace (strip the tags; "
                                "it is not a new type)")


def test_a_sentence_given_as_one_string_is_refused_by_name():
    from tough_ner.schemes import check_sentence
    check_sentence(["O", "B-PER"], 2)  # a list passes
    with pytest.raises(ValueError) as error:
        check_sentence("OOO", 2)
    assert str(error.value) == "sentence 2: tags must be a list of strings, not one string 'OOO'"
    with pytest.raises(ValueError, match=r"^sentence 7: tokens must be a list of strings, not one string 'a b'$"):
        check_sentence("a b", 7, "tokens")


def test_the_tag_cache_stays_within_its_limit_and_still_knows_o(monkeypatch):
    from tough_ner.schemes import parse_label
    monkeypatch.setattr(schemes, "_PARSED_LIMIT", 3)
    for k in range(10):
        assert parse_label(f"B-T{k}") == ("B", f"T{k}")
        assert len(schemes._PARSED) <= 3
        assert parse_label("O") == ("O", "")  # O is kept when the cache starts afresh
    assert decode(["B-T1", "I-T1", "O", "U-T9"]) == [(0, 2, "T1"), (3, 4, "T9")]


def _decode_token_by_token(tags):
    """The module docstring's rules applied to every token, O included (no skipping of O runs)."""
    spans, open_span = [], None  # open_span: (start, type)
    for i, tag in enumerate(list(tags) + ["O"]):
        if tag == "O":
            prefix = entity_type = None
        else:
            prefix, entity_type = tag.split("-", 1)
            prefix = {"L": "E", "U": "S"}.get(prefix, prefix)
        same = open_span is not None and open_span[1] == entity_type
        if prefix == "I" and same:
            continue
        if prefix == "E" and same:
            spans.append((open_span[0], i + 1, entity_type))
            open_span = None
            continue
        if open_span is not None:
            spans.append((open_span[0], i, open_span[1]))
            open_span = None
        if prefix in ("E", "S"):
            spans.append((i, i + 1, entity_type))
        elif prefix in ("B", "I"):
            open_span = (i, entity_type)
    return spans


@given(st.lists(st.one_of(st.just("O"), st.builds("{}-{}".format, st.sampled_from("BIELSU"),
                                                  st.sampled_from(TYPES))), max_size=12))
def test_decode_equals_the_rules_applied_token_by_token(tags):
    assert decode(tags) == _decode_token_by_token(tags)


@given(st.lists(st.lists(st.one_of(st.just("O"), st.builds("{}-{}".format, st.sampled_from("BIELSU"),
                                                           st.sampled_from(TYPES))), max_size=8), max_size=6))
def test_decode_flat_equals_decode_sentence_by_sentence(sentences):
    """The column-wise decoder on all sentences at once (empty ones included): the spans of
    ``decode`` on each sentence, at their flat positions, in order."""
    flat = [tag for sentence in sentences for tag in sentence]
    parsed = [schemes.parse_label(tag) for tag in flat]
    prefix = np.array([schemes.PREFIX_CODES[p] for p, _ in parsed], dtype=np.int8)
    label = np.array([TYPES.index(t) if p != "O" else -1 for p, t in parsed], dtype=np.int64)
    starts = np.cumsum([0] + [len(sentence) for sentence in sentences])
    got_starts, got_ends = schemes.decode_flat(prefix, label, starts)
    expected = [(start + offset, end + offset, entity_type)
                for sentence, offset in zip(sentences, starts.tolist()) for start, end, entity_type in decode(sentence)]
    assert list(zip(got_starts.tolist(), got_ends.tolist(), [parsed[i][1] for i in got_starts.tolist()])) == expected


@pytest.mark.parametrize("hidden", ["\u200b", "\u00a0", "\x1b", "\u202e"])
def test_a_type_holding_a_character_that_is_not_shown_is_refused(tmp_path, hidden):
    """``PE``, a zero-width space, ``R`` prints as ``PER`` but counts as another type (an
    unseen type for every mention of it): refused, in a file with its line."""
    with pytest.raises(ValueError, match=f"its type holds U\\+{ord(hidden):04X}, a character that is not shown"):
        parse_label(f"B-PE{hidden}R")
    path = tmp_path / "odd.conll"
    path.write_text(f"Ann B-PER\nmet O\n\nBob B-PE{hidden}R\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"^{path}, line 4, column 2: tag .*U\\+{ord(hidden):04X}"):
        read_conll(path)
