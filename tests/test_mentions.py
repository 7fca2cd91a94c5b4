"""LLM mention lists: placement (leftmost, ordered), the status of each mention (exact,
normalised, fuzzy, ungrounded) and unparseable lines, on hand-made fixtures and properties."""
import json
import warnings

import pytest
from hypothesis import given, strategies as st

import tough_ner
from tough_ner.core.checks import InputWarning
from tough_ner.core.formats import (_best_alignment, _earliest_alignment, _place_leftmost, _place_ordered, _Placer,
                                    batch_from_files)

TOKENS = ["Ann", "Lee", "left", "Bonn", ".", "Kessling", "hired", "Ｕｌｍ", "staff"]
GOLD = ["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "O", "B-LOC", "O"]


@pytest.fixture(scope="module")
def demo():
    from tough_ner.demo import load_demo
    train, test = load_demo()
    return tough_ner.TrainStats.from_corpus(train), test


def placed(mentions, tokens=TOKENS, gold=GOLD, **options):
    """(pred spans, status of each, hallucinated texts) of one sentence's mention list."""
    batch = tough_ner.as_batch([tokens], [gold], [mentions], **options)
    status = batch.mention_status[0]
    return ([(a, b, t, status[(a, b)]) for a, b, t in batch.pred_spans[0]],
            [m["text"] for m in batch.hallucinated[0]])


# ---- each status ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, options, expected", [
    ("Ann Lee", {}, (0, 2, "exact")),
    ("Ann  Lee", {}, (0, 2, "exact")),                      # whitespace never counts
    ("ann lee", {"normalised": True}, (0, 2, "normalised")),  # case
    ("ann lee", {"case_sensitive": False}, (0, 2, "normalised")),  # case alone
    ("Ulm", {"normalised": True}, (7, 8, "normalised")),      # NFKC: full-width letters
    ("Bonn.", {"normalised": True}, (3, 5, "exact")),         # "Bonn" "." as written
    ("Bonn,", {"normalised": True}, (3, 4, "normalised")),    # edge punctuation of the mention
    ("\u201cKessling\u201d", {"normalised": True}, (5, 6, "normalised")),
    ("Kesling", {"fuzzy": 0.8}, (5, 6, "fuzzy")),
    ("Ann Le", {"fuzzy": 0.8}, (0, 2, "fuzzy")),
])
def test_each_placement_status(text, options, expected):
    spans, missing = placed([{"text": text, "type": "X"}], **options)
    a, b, status = expected
    assert spans == [(a, b, "X", status)] and missing == []


@pytest.mark.parametrize("text, options", [
    ("ann lee", {}),                                  # case needs normalised or case_sensitive=False
    ("Bonn.x", {"normalised": True}),                 # inner characters are not edge punctuation
    ("Ulm", {"case_sensitive": False}),               # case folding alone does not apply NFKC
    ("Kesling", {"normalised": True}),                # a typo needs fuzzy
    ("Kesling", {"fuzzy": 0.95}),                     # ratio 14/15 < 0.95
    ("Nowhere", {"fuzzy": 0.7}),
])
def test_ungrounded_mentions_are_hallucinated(text, options):
    spans, missing = placed([{"text": text, "type": "X"}], **options)
    assert spans == [] and missing == [text]


def test_exact_is_tried_for_every_mention_before_normalised():
    # "bonn" alone would take Bonn when normalised; the exact "Bonn ." must not lose its place to it
    spans, missing = placed([{"text": "bonn", "type": "A"}, {"text": "Bonn .", "type": "B"}], normalised=True)
    assert spans == [(3, 5, "B", "exact")] and missing == ["bonn"]


def test_status_counts_in_every_result_and_error_table(demo):
    from tough_ner.errors import error_rows

    stats, _ = demo
    mentions = [{"text": "ANN LEE", "type": "PER"}, {"text": "Bonn", "type": "LOC"},
                {"text": "Kesling", "type": "ORG"}, {"text": "Oslo", "type": "LOC"}]
    batch = tough_ner.as_batch([TOKENS], [GOLD], [mentions], normalised=True, fuzzy=0.8)
    result = tough_ner.tmr(stats, batch, detailed=True)
    assert (result["n_exact"], result["n_normalised"], result["n_fuzzy"], result["n_hallucinated"]) == (1, 1, 1, 1)
    assert result["n_unparseable"] == 0 and result["unparseable"] == []
    rows = error_rows(stats, batch)
    assert [(r["text"], r["mention_status"], r["outcome"]) for r in rows] == [
        ("Ann Lee", "normalised", "correct"), ("Bonn", "exact", "correct"), ("Kessling", "fuzzy", "correct"),
        ("Ｕｌｍ", None, "missed"), ("Oslo", "ungrounded", "spurious")]
    assert "mention_status" not in tough_ner.tmr(stats, tough_ner.Batch([TOKENS], [GOLD], [GOLD]))


def test_options_are_checked():
    for bad in (0, 1.5, True, "0.8"):
        with pytest.raises(ValueError, match="fuzzy is a similarity threshold in \\(0, 1\\]"):
            tough_ner.as_batch([TOKENS], [GOLD], [[]], fuzzy=bad)
    with pytest.raises(ValueError, match="placement must be one of leftmost, ordered, got 'first'"):
        tough_ner.as_batch([TOKENS], [GOLD], [[]], placement="first")


# ---- ordered vs leftmost -----------------------------------------------------------------------
WASHINGTON = ["Washington", "praised", "Adams", "in", "Washington", "."]
WASHINGTON_GOLD = ["B-PER", "O", "B-PER", "O", "B-LOC", "O"]


def test_ordered_places_a_repeated_mention_on_its_next_occurrence():
    # The list follows the text but missed the first Washington: leftmost puts the LOC on it.
    mentions = [{"text": "Adams", "type": "PER"}, {"text": "Washington", "type": "LOC"}]
    leftmost, _ = placed(mentions, WASHINGTON, WASHINGTON_GOLD)
    ordered, _ = placed(mentions, WASHINGTON, WASHINGTON_GOLD, placement="ordered")
    assert leftmost == [(0, 1, "LOC", "exact"), (2, 3, "PER", "exact")]
    assert ordered == [(2, 3, "PER", "exact"), (4, 5, "LOC", "exact")]


def test_repeated_mentions_take_successive_occurrences_in_both_placements():
    mentions = [{"text": "Washington", "type": "PER"}, {"text": "Washington", "type": "LOC"}]
    for placement in ("leftmost", "ordered"):
        spans, missing = placed(mentions, WASHINGTON, WASHINGTON_GOLD, placement=placement)
        assert spans == [(0, 1, "PER", "exact"), (4, 5, "LOC", "exact")] and missing == []


def test_ordered_alignment_places_the_most_mentions():
    # A greedy pass would put the first mention on the last Washington and lose the other two.
    mentions = [{"text": "Washington", "type": "LOC"}, {"text": "praised", "type": "X"}, {"text": "Adams", "type": "PER"}]
    spans, missing = placed(mentions, WASHINGTON, WASHINGTON_GOLD, placement="ordered")
    assert spans == [(0, 1, "LOC", "exact"), (1, 2, "X", "exact"), (2, 3, "PER", "exact")] and missing == []
    spans, missing = placed(mentions[1:] + mentions[:1], WASHINGTON, WASHINGTON_GOLD, placement="ordered")
    assert spans == [(1, 2, "X", "exact"), (2, 3, "PER", "exact"), (4, 5, "LOC", "exact")] and missing == []
    # out of order: one of the two cannot follow the other; the earlier in the list is kept
    spans, missing = placed([{"text": "Adams", "type": "PER"}, {"text": "praised", "type": "X"}], WASHINGTON,
                            WASHINGTON_GOLD, placement="ordered")
    assert spans == [(2, 3, "PER", "exact")] and missing == ["praised"]


def test_ordered_prefers_exact_to_normalised_and_the_best_fuzzy_match():
    tokens, gold = ["paris", "and", "Paris", "and", "Pariss"], ["B-LOC", "O", "B-LOC", "O", "B-LOC"]
    spans, _ = placed([{"text": "Paris", "type": "LOC"}], tokens, gold, placement="ordered", normalised=True)
    assert spans == [(2, 3, "LOC", "exact")]
    spans, _ = placed([{"text": "Parisss", "type": "LOC"}], tokens, gold, placement="ordered", fuzzy=0.8)
    assert spans == [(4, 5, "LOC", "fuzzy")]  # ratio 12/13 beats paris' 10/12


def mentions_in_order(tokens, cuts):
    """Mentions of distinct texts, each the first occurrence of its text, left to right."""
    mentions, end, texts = [], 0, set()
    for start, length in cuts:
        start = end + start
        stop = min(start + length, len(tokens))
        if start >= stop:
            break
        text = "".join(tokens[start:stop])
        if text not in texts and "".join(tokens).find(text) == len("".join(tokens[:start])):
            mentions.append({"text": " ".join(tokens[start:stop]), "type": "X"})
            texts.add(text)
        end = stop
    return mentions


@given(st.lists(st.sampled_from("abc"), max_size=12),
       st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3)), max_size=5))
def test_ordered_equals_leftmost_for_distinct_mentions_in_text_order(tokens, cuts):
    mentions = mentions_in_order(tokens, cuts)
    gold = [["O"] * len(tokens)]
    leftmost = tough_ner.as_batch([tokens], gold, [mentions], prediction_format="mentions")
    ordered = tough_ner.as_batch([tokens], gold, [mentions], prediction_format="mentions", placement="ordered")
    assert ordered.pred_spans == leftmost.pred_spans and not any(ordered.hallucinated)
    assert len(ordered.pred_spans[0]) == len(mentions)


@given(st.lists(st.sampled_from(["a", "b", "A", "b.", "ab"]), max_size=10),
       st.lists(st.text("abAB. ", min_size=1, max_size=4), max_size=6), st.booleans(),
       st.sampled_from([None, 0.6, 0.9]))
def test_ordered_never_places_a_mention_before_the_previous_one(tokens, texts, normalised, fuzzy):
    placer = _Placer(tokens, True, normalised, fuzzy)
    needles = [placer.needles(text) for text in texts]
    placed = _place_ordered(placer, needles)
    previous_end = 0
    for k in sorted(placed):
        a, b, _ = placed[k]
        assert previous_end <= a < b <= len(tokens)
        previous_end = b
    # and never fewer mentions than the greedy pass of the same rules would place
    assert len(placed) >= len(_greedy(placer, needles))
    assert all(0 <= a < b <= len(tokens) for a, b, _ in _place_leftmost(placer, needles, len(tokens)).values())


@given(st.lists(st.sampled_from(["a", "b", "A", "B", "b.", "ab"]), max_size=10),
       st.lists(st.text("abAB. ", min_size=1, max_size=4), max_size=6), st.booleans())
def test_the_earliest_alignment_is_the_best_one_whenever_it_is_used(tokens, texts, normalised):
    """The shortcut (every mention of one status wherever it goes, all placed) gives exactly
    what the dynamic programme gives; it is taken on some of these inputs."""
    placer = _Placer(tokens, True, normalised, None)
    options = [sorted(placer.candidates(*placer.needles(text)), key=lambda o: (o[1], o[2])) for text in texts]
    earliest = _earliest_alignment(options)
    if earliest is not None:
        assert earliest == _best_alignment(options)


def test_upper_cased_mentions_in_order_take_the_earliest_alignment():
    """Upper-cased lists (an LLM's headline style): each mention is normalised wherever it
    goes, so the shortcut places them, on their earliest in-order occurrences."""
    placer = _Placer(["Ann", "met", "Bo", "and", "Ann", "in", "Bonn"], True, True, None)
    options = [sorted(placer.candidates(*placer.needles(text)), key=lambda o: (o[1], o[2]))
               for text in ["ANN", "BO,", "ANN", "BONN"]]
    expected = {0: (0, 1, "normalised"), 1: (2, 3, "normalised"), 2: (4, 5, "normalised"), 3: (6, 7, "normalised")}
    assert _earliest_alignment(options) == expected == _best_alignment(options)
    options[1].insert(0, ("exact", 2, 3, 1.0))  # a mention of two statuses: the dynamic programme decides
    assert _earliest_alignment(options) is None


def _greedy(placer, needles):
    placed, cursor = {}, 0
    for k, needle in enumerate(needles):
        found = [(a, b) for _, a, b, _ in placer.candidates(*needle) if a >= cursor]
        if found:
            placed[k] = min(found)
            cursor = placed[k][1]
    return placed


# ---- unparseable lines -----------------------------------------------------------------------
BROKEN = [
    '[{"text": "Ann Lee", "type": "PER"}]',        # fine
    'Here are the entities: Ann Lee (PER)',          # not JSON
    '{"entities": [{"text": "Bonn", "type": "LOC"}]}',  # an object holding one list: read
    '{"answer": "none"}',                            # JSON without a list
    '[{"text": 3, "type": "PER"}]',                  # wrong types
    '["Ann Lee"]',                                   # a list of strings
    'null',
    '',                                              # an empty answer
    '[{"text": "Kessling", "label": "ORG"}]',
]


def test_broken_jsonl_lines_count_as_unparseable(tmp_path, demo):
    stats, _ = demo
    path = tmp_path / "llm.jsonl"
    path.write_text("\n".join(BROKEN) + "\n", encoding="utf-8")
    tokens, gold = [TOKENS] * len(BROKEN), [GOLD] * len(BROKEN)
    with pytest.warns(InputWarning) as caught:
        batch = batch_from_files(tokens, gold, path, "mentions")
    message = str(caught[0].message)
    assert message.startswith(f"{path}: 6 unparseable mention list(s)")
    assert "line 2: not JSON" in message and "line 4: holds no list of mentions (dict)" in message
    assert "line 5: mention {'text': 3, 'type': 'PER'} is not" in message and "and 1 more" in message
    assert [item["sentence"] for item in batch.unparseable] == [1, 3, 4, 5, 6, 7]
    # scored as predicting nothing: the same scores as empty lists there, counted apart
    lines = [json.loads(line) if k not in (1, 3, 4, 5, 6, 7) else [] for k, line in enumerate(BROKEN)]
    lines[2] = lines[2]["entities"]
    same = tough_ner.as_batch(tokens, gold, lines)
    assert batch.pred_spans == same.pred_spans
    result, expected = tough_ner.tmr(stats, batch), tough_ner.tmr(stats, same)
    assert result.pop("n_unparseable") == 6 and expected.pop("n_unparseable") == 0
    assert result == expected
    with pytest.raises(ValueError, match=f"{path}: line 2 \\(sentence 1\\): not JSON .*strict_json"):
        batch_from_files(tokens, gold, path, "mentions", strict_json=True)


def test_unparseable_predictions_through_the_python_api():
    with pytest.warns(InputWarning, match="predictions: 1 unparseable .*: sentence 1: holds no list"):
        batch = tough_ner.as_batch([TOKENS] * 2, [GOLD] * 2, ['[{"text": "Bonn", "type": "LOC"}]', '"Bonn"'],
                                   prediction_format="mentions")
    assert batch.pred_spans == [[(3, 4, "LOC")], []] and batch.unparseable == [
        {"sentence": 1, "problem": "holds no list of mentions (str)"}]
    assert tough_ner.formats.select(batch, [1]).unparseable == [{"sentence": 0, "problem": batch.unparseable[0]["problem"]}]
    with pytest.raises(ValueError, match="^sentence 0: not JSON \\(Expecting value\\)$"):
        tough_ner.as_batch([TOKENS], ["oops"], None, reference_format="mentions")


def test_command_counts_unparseable_lines_or_stops_with_strict_json(tmp_path, capsys):
    from tough_ner.cli import main

    gold = tmp_path / "gold.conll"
    gold.write_text("\n".join(f"{t} {g}" for t, g in zip(WASHINGTON, WASHINGTON_GOLD)) + "\n\n"
                    + "\n".join(f"{t} {g}" for t, g in zip(TOKENS, GOLD)) + "\n")
    pred = tmp_path / "llm.jsonl"
    pred.write_text('[{"text": "adams", "type": "PER"}, {"text": "Washington", "type": "LOC"}]\nSorry, no idea.\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        assert main(["tmr", "--train", str(gold), "--test", str(gold), "--pred", str(pred), "--pred-format",
                     "mentions", "--placement", "ordered", "--normalise", "--json"]) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)
    assert (result["n_exact"], result["n_normalised"], result["n_unparseable"]) == (1, 1, 1)
    assert f"{pred}: 1 unparseable mention list(s)" in out.err and "line 2: not JSON" in out.err
    assert result["recall"] == pytest.approx(2 / 7)
    assert main(["tmr", "--train", str(gold), "--test", str(gold), "--pred", str(pred), "--pred-format",
                 "mentions", "--strict-json"]) != 0
    assert f"{pred}: line 2 (sentence 1): not JSON" in capsys.readouterr().err


def test_evaluate_mentions_mode_takes_the_placement_options(demo):
    import evaluate
    from pathlib import Path

    stats, _ = demo
    path = str(Path(__file__).resolve().parents[1] / "metrics" / "tmr")
    llm = [[{"text": "adams", "type": "PER"}, {"text": "Washington", "type": "LOC"}]]
    metric = evaluate.load(path, train=stats, config_name="mentions", placement="ordered", keep_in_memory=True)
    result = metric.compute(predictions=llm, references=[WASHINGTON_GOLD], tokens=[WASHINGTON], normalised=True)
    assert (result["n_exact"], result["n_normalised"], result["n_hallucinated"]) == (1, 1, 0)
    assert result["recall"] == pytest.approx(2 / 3)
    result = metric.compute(predictions=llm, references=[WASHINGTON_GOLD], tokens=[WASHINGTON], placement="leftmost")
    assert (result["n_exact"], result["n_normalised"], result["n_hallucinated"]) == (1, 0, 1)
    with pytest.raises(TypeError, match="unexpected keyword argument\\(s\\) placement"):
        evaluate.load(path, train=stats, placement="ordered")  # tags mode: nothing to place


# ---- allow_overlap: mentions inside or across placed ones ---------------------------------------
BANK = ["Bank", "of", "America", "sued", "Bank", "of", "Boston", "in", "America"]


@pytest.mark.parametrize("mentions, options, expected, hallucinated", [
    # nested: "Boston" inside the placed "Bank of Boston" (flat, it would be hallucinated)
    ([("Bank of Boston", "ORG"), ("Boston", "LOC")], {}, [(4, 7, "ORG", "exact"), (6, 7, "LOC", "exact")], []),
    # a free occurrence first: the second "America" takes the last token, the third goes inside
    ([("Bank of America", "ORG"), ("America", "LOC"), ("America", "GPE")], {},
     [(0, 3, "ORG", "exact"), (2, 3, "GPE", "exact"), (8, 9, "LOC", "exact")], []),
    # one mention an occurrence: a fourth "America" has no occurrence left
    ([("Bank of America", "ORG"), ("America", "LOC"), ("America", "GPE"), ("America", "X")], {},
     [(0, 3, "ORG", "exact"), (2, 3, "GPE", "exact"), (8, 9, "LOC", "exact")], ["America"]),
    # across: "America sued" overlaps the end of the placed "Bank of America"
    ([("Bank of America", "ORG"), ("America sued", "X")], {}, [(0, 3, "ORG", "exact"), (2, 4, "X", "exact")], []),
    # the tiers: a normalised nested mention
    ([("Bank of America", "ORG"), ("AMERICA,", "LOC"), ("america", "GPE")], {"normalised": True},
     [(0, 3, "ORG", "exact"), (2, 3, "GPE", "normalised"), (8, 9, "LOC", "normalised")], []),
    # ordered: "Bank" after "Boston" goes into the second "Bank of ...", not the first
    ([("Bank of America", "ORG"), ("Bank of Boston", "ORG"), ("Bank", "X"), ("America", "LOC")],
     {"placement": "ordered"},
     [(0, 3, "ORG", "exact"), (4, 5, "X", "exact"), (4, 7, "ORG", "exact"), (8, 9, "LOC", "exact")], []),
    # ordered: nested between its neighbours' starts, never before the previous one
    ([("America", "LOC"), ("Bank of Boston", "ORG"), ("of", "X")], {"placement": "ordered"},
     [(2, 3, "LOC", "exact"), (4, 7, "ORG", "exact"), (5, 6, "X", "exact")], []),
])
def test_allow_overlap_places_mentions_inside_or_across_placed_ones(mentions, options, expected, hallucinated):
    listed = [{"text": text, "type": t} for text, t in mentions]
    spans, unplaced = placed(listed, BANK, ["O"] * len(BANK), allow_overlap=True, **options)
    assert sorted(spans) == expected and unplaced == hallucinated
    flat_spans, _ = placed(listed, BANK, ["O"] * len(BANK), **options)
    assert set(flat_spans) <= set(spans)  # the flat placement is kept


def test_allow_overlap_with_mentions_reaches_the_scores_and_the_flat_methods_refuse_it(demo):
    stats, _ = demo
    gold = [[(0, 3, "ORG"), (2, 3, "LOC")]]
    pred = [[{"text": "Bank of America", "type": "ORG"}, {"text": "America", "type": "LOC"}]]
    batch = tough_ner.as_batch([BANK[:4]], gold, pred, "spans", "mentions", allow_overlap=True)
    assert batch.overlapping == {"gold": (0, (0, 3, "ORG"), (2, 3, "LOC")), "pred": (0, (0, 3, "ORG"), (2, 3, "LOC"))}
    assert tough_ner.tmr(stats, batch)["f1"] == 1.0 and batch.hallucinated == [[]]
    with pytest.raises(ValueError, match="HardEval is defined on flat tags"):
        tough_ner.hardeval(stats, batch)


@given(st.lists(st.sampled_from(["a", "b", "A", "b.", "ab"]), min_size=1, max_size=10),
       st.lists(st.tuples(st.text("abAB. ", min_size=1, max_size=4), st.sampled_from("XY")), max_size=6),
       st.sampled_from(["leftmost", "ordered"]), st.booleans())
def test_allow_overlap_keeps_the_flat_placement_and_adds_only_distinct_occurrences(tokens, mentions, placement,
                                                                                 normalised):
    listed = [{"text": text, "type": t} for text, t in mentions]
    options = dict(placement=placement, normalised=normalised, prediction_format="mentions")
    flat = tough_ner.as_batch([tokens], [["O"] * len(tokens)], [listed], **options)
    allowed = tough_ner.as_batch([tokens], [["O"] * len(tokens)], [listed], allow_overlap=True, **options)
    assert set(flat.pred_spans[0]) <= set(allowed.pred_spans[0])
    assert len(allowed.pred_spans[0]) + len(allowed.hallucinated[0]) == len(listed)
    assert len({(a, b) for a, b, _ in allowed.pred_spans[0]}) == len(allowed.pred_spans[0])  # one an occurrence
    if not any(flat.hallucinated):  # flat input: nothing changes
        assert allowed.pred_spans == flat.pred_spans and allowed.mention_status == flat.mention_status
        assert not allowed.overlapping


def test_an_answer_whose_type_holds_a_character_not_shown_is_unparseable_not_a_stop():
    """An LLM's type with a soft hyphen prints as PER but is another type: that answer counts as
    unparseable (the sentence predicts nothing, and is listed), the evaluation goes on."""
    with pytest.warns(InputWarning, match="1 unparseable mention list"):
        batch = tough_ner.as_batch([["Ann", "met", "Bob"], ["Bob", "left"]], [["B-PER", "O", "B-PER"], ["B-PER", "O"]],
                         ['[{"text": "Ann", "type": "PER\u00ad"}]', '[{"text": "Bob", "type": "PER"}]'],
                         prediction_format="mentions")
    from tough_ner.core.scoring import input_counts

    counts = input_counts(batch, detailed=True)
    assert counts["n_unparseable"] == 1 and "U+00AD" in counts["unparseable"][0]["problem"]
    assert batch.pred_spans == [[], [(0, 1, "PER")]]
