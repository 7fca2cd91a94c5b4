import json
import math
import random

import evaluate
import pytest
from hypothesis import assume, given, settings, strategies as st
from seqeval.metrics import classification_report, f1_score, precision_score, recall_score

from tough_ner import Batch, TrainStats, as_batch
from tough_ner.cli import main
from tough_ner.demo import TRAIN, load_demo
from tough_ner.schemes import decode, spans_to_tags
from tough_ner.tmr import SUBSETS, aggregate, counts, paired_difference, tmr
from tough_ner.uncertainty import aggregate_runs

from conftest import input_warnings, write

# Training mentions: "Jordan" LOC, "New York" LOC, "Ann Lee" PER; "Bonn" only unannotated.
STATS = TrainStats.from_lists([["Jordan", "New", "York", "Ann", "Lee", "Bonn"]],
                              [["B-LOC", "B-LOC", "I-LOC", "B-PER", "I-PER", "O"]])


def test_subsets_by_hand():
    tokens = [["Jordan", "New", "York", "Ann", "Lee", "Bonn", "Jordan"]]
    gold = [["B-PER", "B-LOC", "I-LOC", "B-PER", "I-PER", "B-LOC", "B-LOC"]]
    result = tmr(STATS, Batch(tokens, gold, gold), detailed=True)
    # Jordan/PER unseen-type; New York, Ann Lee, Jordan/LOC seen; Bonn unseen-tokens (unannotated in training).
    assert {k: result[k] for k in result if k.startswith("n_")} == {
        "n_invalid_transitions_gold": 0, "n_invalid_transitions_pred": 0,  # valid tags
        "n_mentions": 5, "n_predicted": 5, "n_seen": 3, "n_unseen_any": 2, "n_unseen_tokens": 1, "n_unseen_type": 1,
        "n_tcm_all": 2, "n_tcm_seen": 2, "n_tcm_unseen": 0}
    assert math.isnan(result["recall_tcm_unseen"])  # empty subset: NaN, size 0
    assert all(result[f"recall_{name}"] == 1.0 for name in SUBSETS if name != "tcm_unseen")
    assert result["share"]["seen"] == 3 / 5
    assert result["per_type"]["PER"]["n_unseen_type"] == 1 and result["per_type"]["LOC"]["n_seen"] == 2
    spurious = tmr(STATS, Batch(tokens, gold, [gold[0][:-1] + ["B-LOC"]]), detailed=True)
    tokens2 = [tokens[0] + ["x"]]
    with input_warnings({"MISC"}):
        with_extra = tmr(STATS, Batch(tokens2, [gold[0] + ["O"]], [gold[0] + ["B-MISC"]]))
    assert with_extra["precision"] == 5 / 6 and with_extra["recall"] == result["recall"] == 1.0
    assert spurious["recall_seen"] == 1.0


def test_recall_needs_exact_span_and_type():
    tokens = [["New", "York", "Bonn"]]
    gold = [["B-LOC", "I-LOC", "B-LOC"]]
    with input_warnings({"ORG"}):
        result = tmr(STATS, Batch(tokens, gold, [["B-LOC", "O", "B-ORG"]]))
    assert result["recall_seen"] == 0.0 and result["recall_unseen_tokens"] == 0.0
    assert result["precision"] == 0.0 and result["f1"] == 0.0


def test_tcm_unseen():
    tokens = [["Bonn", "Bonn"]]
    gold = [["B-LOC", "B-ORG"]]
    result = tmr(STATS, Batch(tokens, gold, [["B-LOC", "O"]]))
    assert (result["n_tcm_all"], result["n_tcm_unseen"], result["n_tcm_seen"]) == (2, 2, 0)
    assert result["recall_tcm_unseen"] == 0.5


def test_no_predictions_and_no_mentions():
    result = tmr(STATS, Batch([["Bonn"]], [["B-LOC"]], [["O"]]))
    assert math.isnan(result["precision"]) and result["recall"] == 0.0 and result["f1"] == 0.0
    empty = tmr(STATS, Batch([["a"]], [["O"]], [["O"]]))
    assert empty["n_mentions"] == 0 and all(math.isnan(empty[k]) for k in empty if not k.startswith("n_"))


# Gold: Ann Lee/PER (seen), Bonn/LOC (unseen tokens: unannotated in training), New York/LOC (seen),
# Jordan/PER (unseen type: LOC in training).  Predictions as mention lists: "Ann"/PER lies inside
# Ann Lee, Bonn/LOC is right, New York/PER has the span but not the type, Jordan is missed, and
# the last sentence (no gold, nothing placed) holds two hallucinated mentions.
MATCH_TOKENS = [["Ann", "Lee", "met", "Bonn"], ["New", "York", "x", "Jordan"], ["x"]]
MATCH_GOLD = [["B-PER", "I-PER", "O", "B-LOC"], ["B-LOC", "I-LOC", "O", "B-PER"], ["O"]]
MATCH_PRED = [[{"text": "Ann", "type": "PER"}, {"text": "Bonn", "type": "LOC"}], [{"text": "New York", "type": "PER"}],
              [{"text": "Paris", "type": "LOC"}, {"text": "Rome", "type": "LOC"}]]


@pytest.mark.parametrize("match, credit", [
    # credits of (Ann Lee, Bonn, New York, Jordan) by the schemes' table in metrics/tmr/README.md
    ("strict", (0, 1, 0, 0)), ("exact", (0, 1, 1, 0)), ("partial", (0.5, 1, 1, 0)), ("type", (1, 1, 0, 0))])
def test_counts_and_scores_under_each_match_by_hand(match, credit):
    batch = as_batch(MATCH_TOKENS, MATCH_GOLD, MATCH_PRED)
    found = sum(credit)  # each prediction takes at most one gold entity: the predictions' credits sum alike
    seen, unseen_tokens = (credit[0] + credit[2]) / 2, credit[1] / 1
    expected = {"precision": found / 5, "recall": found / 4, "f1": 2 * found / (5 + 4),  # 5 predictions, 4 gold
                "recall_seen": seen, "recall_unseen_tokens": unseen_tokens, "recall_unseen_type": credit[3] / 1,
                "recall_unseen_any": (credit[1] + credit[3]) / 2, "recall_seen_minus_unseen": seen - unseen_tokens}
    sizes = {"precision": 5, "recall": 4, "f1": 4, "recall_seen": 2, "recall_unseen_tokens": 1,  # precision: predictions
             "recall_unseen_type": 1, "recall_unseen_any": 2, "recall_seen_minus_unseen": 2 + 1}
    table = counts(STATS, batch, match)
    point = table.point()
    assert {k: point[k] for k in expected} == pytest.approx(expected)
    assert {k: table.sizes()[k] for k in sizes} == sizes
    assert all(math.isnan(point[f"recall_{name}"]) and table.sizes()[f"recall_{name}"] == 0
               for name in ("tcm_all", "tcm_seen", "tcm_unseen"))
    result = tmr(STATS, batch, match=match, detailed=True)
    own = [k for k in expected if k != "recall_seen_minus_unseen"]  # that one is in comparisons only
    assert {k: result[k] for k in own} == pytest.approx({k: expected[k] for k in own})
    assert all(result[f"n_{k[7:]}"] == sizes[k] for k in own if k.startswith("recall_"))
    assert result["n_hallucinated"] == 2 and result["hallucinated"] == [
        {"sentence": 2, "text": "Paris", "type": "LOC"}, {"sentence": 2, "text": "Rome", "type": "LOC"}]
    assert "hallucinated" not in tmr(STATS, batch, match=match)  # the list only with detailed
    if match == "strict":
        assert json.dumps(table.point()) == json.dumps(counts(STATS, batch).point())  # the default


def test_intervals_are_those_of_the_match_asked():
    # Twenty copies of one sentence: every resample is the whole set, so each interval is its point.
    batch = as_batch(MATCH_TOKENS[:1] * 20, MATCH_GOLD[:1] * 20, MATCH_PRED[:1] * 20)
    for match, recall in (("strict", 0.5), ("partial", 0.75), ("type", 1.0)):  # Ann Lee 0 / 0.5 / 1, Bonn 1
        result = tmr(STATS, batch, ci=True, n_resamples=20, match=match)
        assert result["recall"] == result["recall_ci_low"] == result["recall_ci_high"] == recall
        assert result["precision_ci_low"] == result["precision_ci_high"] == recall  # two predictions, as many credits


def test_interval_options_default_to_the_documented_values():
    rng = random.Random(1)
    tokens = [[rng.choice(["Jordan", "Bonn", "Ann", "x", "New"]) for _ in range(rng.randint(1, 6))] for _ in range(30)]
    gold = [random_bio(rng, len(s)) for s in tokens]
    pred = [g if rng.random() < 0.5 else ["O"] * len(g) for g in gold]
    batch = Batch(tokens, gold, pred)
    default = json.dumps(tmr(STATS, batch, ci=True))
    assert default == json.dumps(tmr(STATS, batch, ci=True, n_resamples=1000, confidence=0.95, seed=0, unit="sentence"))
    for option in ({"n_resamples": 999}, {"confidence": 0.9}, {"seed": 1}):  # each of them moves an interval
        assert json.dumps(tmr(STATS, batch, ci=True, **option)) != default


def test_predictions_are_needed_and_subsets_follow_the_statistics_given():
    for method in (tmr, counts):
        with pytest.raises(ValueError, match="^TMR needs predictions$"):
            method(STATS, Batch([["Bonn"]], [["B-LOC"]]))
    batch = Batch([["Bonn"]], [["B-LOC"]], [["B-LOC"]])
    assert tmr(STATS, batch)["n_unseen_tokens"] == 1  # Bonn is only unannotated in STATS
    # The same batch with other statistics: classified again, not the first statistics' subsets.
    assert tmr(TrainStats.from_lists([["Bonn"]], [["B-LOC"]]), batch)["n_seen"] == 1
    assert tmr(STATS, batch)["n_unseen_tokens"] == 1


def random_bio(rng, length):
    spans, i = [], 0
    while i < length:
        if rng.random() < 0.3:
            end = min(length, i + rng.randint(1, 3))
            spans.append((i, end, rng.choice(["PER", "LOC", "ORG"])))
            i = end
        i += 1
    return spans_to_tags(spans, length, "bio")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_overall_and_per_type_scores_equal_seqeval_and_spurious_predictions_leave_recall(seed):
    rng = random.Random(seed)
    tokens = [[rng.choice(["Jordan", "Bonn", "Ann", "x", "New"]) for _ in range(rng.randint(1, 8))] for _ in range(6)]
    gold = [random_bio(rng, len(s)) for s in tokens]
    pred = [random_bio(rng, len(s)) for s in tokens]
    gold_types = {t[2:] for s in gold for t in s if t != "O"}
    pred_types = {t[2:] for s in pred for t in s if t != "O"}
    known = gold_types | set(STATS.labels)
    # else an input error (tests/test_bad_inputs.py): types disjoint from training, or predicted from both
    assume(not gold_types or gold_types & set(STATS.labels))
    assume(not pred_types or not gold_types or pred_types & known)
    with input_warnings(pred_types - known):
        result = tmr(STATS, Batch(tokens, gold, pred), detailed=True)
    if any(t != "O" for s in gold for t in s) and any(t != "O" for s in pred for t in s):
        assert result["precision"] == precision_score(gold, pred)
        assert result["recall"] == recall_score(gold, pred)
        assert result["f1"] == f1_score(gold, pred)
        report = classification_report(gold, pred, output_dict=True, zero_division=0)
        for name, row in result["per_type"].items():
            if name in report and row["n"] and not math.isnan(row["precision"]):
                assert (row["precision"], row["recall"], row["f1"]) == (
                    report[name]["precision"], report[name]["recall"], report[name]["f1-score"])
    # Adding spurious predicted mentions where gold is O changes no recall.
    spurious = []
    for g, p in zip(gold, pred):
        spans = decode(p) + [(i, i + 1, "MISC") for i in range(len(g))
                             if g[i] == "O" and all(not a <= i < b for a, b, _ in decode(p))]
        spurious.append(spans_to_tags(sorted(spans), len(g), "bio"))
    if not pred_types and gold_types:
        return  # only spurious MISC predictions against typed gold: an input error (check_types)
    spurious_types = {t[2:] for s in spurious for t in s if t != "O"}
    with input_warnings(spurious_types - known):
        more = tmr(STATS, Batch(tokens, gold, spurious))
    for key in result:
        if key.startswith("recall") or (key.startswith("n_") and key != "n_predicted"):
            assert more[key] == result[key] or (math.isnan(more[key]) and math.isnan(result[key]))
    assert more["n_predicted"] == result["n_predicted"] + sum(
        len(decode(s)) - len(decode(p)) for s, p in zip(spurious, pred))  # the spurious ones are predictions


def test_aggregate_and_paired_difference():
    runs = [{"recall": 0.5, "n": 3}, {"recall": 0.7, "n": 3}]
    table = aggregate(runs)
    assert table["recall"]["mean"] == pytest.approx(0.6) and table["recall"]["std"] == pytest.approx(0.1414213562)
    assert table["n"]["std"] == 0.0
    difference = paired_difference(runs, [{"recall": 0.4, "n": 3}, {"recall": 0.4, "n": 3}])
    assert difference["recall"]["mean"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="equal counts: 2 vs 1"):
        paired_difference(runs, runs[:1])
    assert math.isnan(aggregate(runs[:1])["recall"]["std"])


def test_sentence_count_mismatch_names_both_counts():
    with pytest.raises(ValueError, match="1 prediction sentences but 2 reference sentences"):
        tmr(STATS, Batch([["a"], ["b"]], [["O"], ["O"]], [["O"]]))


def test_metric_module_equals_core_and_cli_runs(tmp_path, capsys):
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    metric = evaluate.load("metrics/tmr", train=stats, keep_in_memory=True)
    result = metric.compute(predictions=test.predictions[1], references=test.tags, tokens=test.tokens)
    expected = tmr(stats, Batch(test.tokens, test.tags, test.predictions[1]))
    assert result == expected
    assert all(result[f"n_{name}"] > 0 for name in SUBSETS)  # the demo exercises every subset
    with pytest.raises(TypeError, match="unexpected keyword"):
        evaluate.load("metrics/tmr", train=stats, strict=True)
    files = []
    for k, predictions in enumerate(test.predictions):
        text = "\n\n".join("\n".join(f"{t} {g} {p}" for t, g, p in zip(*s))
                           for s in zip(test.tokens, test.tags, predictions))
        files.append(str(write(tmp_path / f"run{k}.conll", text + "\n")))
    # A = (run0, run1), B = (run1, run1): the A-B differences are run0 - run1 and 0, not symmetric.
    versus = ["--versus", files[1], "--versus", files[1]]
    assert main(["tmr", "--train", str(TRAIN), "--test", files[0], "--test", files[1], *versus, "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    runs = [tmr(stats, Batch(test.tokens, test.tags, p)) for p in test.predictions]
    plain = lambda value: json.loads(json.dumps(value))  # noqa: E731 -- as the command prints it
    assert table["runs"] == 2 and table["aggregate"] == plain(aggregate_runs(runs))
    assert table["versus"] == plain(aggregate_runs([runs[1], runs[1]]))
    # Same gold in every run, so pooling the runs' counts averages their recalls: A - B = (r0 - r1) / 2.
    gap = runs[0]["recall_unseen_tokens"] - runs[1]["recall_unseen_tokens"]
    cell = table["comparison"]["recall_unseen_tokens"]
    assert cell["pooled"]["difference"] == pytest.approx(gap / 2) and gap != 0
    assert cell["A"] == table["aggregate"]["recall_unseen_tokens"] and cell["wilcoxon"]["n_pairs"] == 2
    assert main(["tmr", "--train", str(TRAIN), "--test", files[0], "--test", files[1], *versus]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("recall_unseen_tokens "))
    assert f"A-B {gap / 2:+.4f} " in " ".join(lines[at:at + 2])  # the test beside the row, or under it


def test_conll_subsets(conll_stats, conll_test):
    result = tmr(conll_stats, Batch(conll_test.tokens, conll_test.tags, conll_test.tags))
    assert {k: result[k] for k in result if k.startswith("n_")} == {
        "n_invalid_transitions_gold": 0, "n_invalid_transitions_pred": 0,  # CoNLL-2003 here is valid IOB2
        "n_mentions": 5648, "n_predicted": 5648, "n_seen": 2963, "n_unseen_any": 2685, "n_unseen_tokens": 2600,
        "n_unseen_type": 85, "n_tcm_all": 367, "n_tcm_seen": 263, "n_tcm_unseen": 104}
    assert all(result[k] == 1.0 for k in result if not k.startswith("n_"))
