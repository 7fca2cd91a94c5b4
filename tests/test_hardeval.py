import json
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tough_ner
from tough_ner import Batch, TrainStats, hardeval, kfold_hard_tokens
from tough_ner.baselines import memorization
from tough_ner.hardeval import (ORDER, SUBSETS, classify, classify_ids, counts as hardeval_counts,
                                gold_types as hardeval_gold_types, scores, token_errors)

# Training: Paris LOC 2 / O 2 (tie), Jordan PER 1 / LOC 1 / O 1, May O 3 / PER 1,
# bank O only, Reading LOC only, Apple ORG 2 / O 1.
TRAIN_TOKENS = [["Paris", "Paris", "Jordan", "Jordan", "May", "bank"], ["Paris", "Paris", "Jordan", "May", "May"],
                ["May", "Reading", "Apple", "Apple", "Apple"], ["Reading"]]
TRAIN_TAGS = [["B-LOC", "O", "B-PER", "O", "O", "O"], ["O", "B-LOC", "B-LOC", "O", "B-PER"],
              ["O", "B-LOC", "B-ORG", "O", "B-ORG"], ["B-LOC"]]
STATS = TrainStats.from_lists(TRAIN_TOKENS, TRAIN_TAGS)

CASES = [  # (token, gold tag, subset or None, strict subset or None)
    ("Paris", "B-LOC", None, None),      # entity/O tie: not diff-I; LOC is its most frequent type
    ("Paris", "O", None, None),          # tie: not diff-O
    ("Paris", "B-PER", "diff_E", "diff_E"),  # usually entity (tie counts as entity), PER never seen
    ("Jordan", "B-PER", None, None),     # PER ties LOC as most frequent type: not diff-E
    ("Jordan", "B-ORG", "diff_E", "diff_E"),
    ("May", "B-PER", "diff_I", None),    # usually O; seen once as PER, so not strict
    ("bank", "B-ORG", "diff_I", "diff_I"),
    ("Reading", "O", "diff_O", "diff_O"),
    ("Apple", "O", "diff_O", None),
    ("Zed", "B-PER", "unseen_I", "unseen_I"),
    ("zebra", "O", "unseen_O", "unseen_O"),
]


def subsets_of(masks):
    return [next((name for name in SUBSETS if masks[name][i]), None) for i in range(len(CASES))]


@pytest.mark.parametrize("strict", [False, True])
def test_subset_rules_and_ties(strict):
    masks = classify(STATS, [c[0] for c in CASES], [c[1][2:] or "O" for c in CASES], strict=strict)
    assert subsets_of(masks) == [c[3] if strict else c[2] for c in CASES]


def one_token_sentences(tags):
    return Batch([[c[0]] for c in CASES], [[c[1]] for c in CASES], [[t] for t in tags])


def test_perfect_predictions_score_zero_everywhere():
    result = hardeval(STATS, one_token_sentences([c[1] for c in CASES]))
    assert all(result[k] == 0.0 for k in result if k.startswith("ter_")) and result["hardeval"] == 0.0
    assert (result["n_diff"], result["n_unseen"], result["n_all"]) == (6, 2, 11)


def test_pooled_score_and_error_schemes():
    batch = Batch([["Zed", "Lee", "Paris"]], [["B-PER", "I-PER", "O"]], [["B-PER", "B-PER", "O"]])
    # BILOU: gold B L vs pred U U -> 2 errors; BIO: B I vs B B -> 1; IO ignores boundaries and types.
    assert hardeval(STATS, batch)["ter_all"] == pytest.approx(2 / 3)
    assert hardeval(STATS, batch, error="bio")["ter_all"] == pytest.approx(1 / 3)
    assert hardeval(STATS, batch, error="io")["ter_all"] == 0.0
    typed = Batch([["Paris"]], [["B-LOC"]], [["B-PER"]])
    assert hardeval(STATS, typed)["ter_all"] == 1.0 and hardeval(STATS, typed, error="io")["ter_all"] == 0.0
    with pytest.raises(ValueError, match="error='token'"):
        hardeval(STATS, typed, error="token")


def test_empty_subsets_are_nan_with_zero_count_and_score_nan():
    result = hardeval(STATS, Batch([["Paris"]], [["B-LOC"]], [["O"]]))
    assert result["n_unseen"] == 0 and math.isnan(result["ter_unseen"]) and math.isnan(result["hardeval"])
    assert result["ter_all"] == 1.0
    empty = hardeval(STATS, Batch([], [], []))
    assert empty["n_all"] == 0 and math.isnan(empty["ter_all"]) and math.isnan(empty["hardeval"])


def test_score_is_mean_of_pooled_unseen_and_diff():
    tags = [c[1] for c in CASES]
    tags[5] = "O"  # May: a diff-I error
    tags[9] = "B-LOC"  # Zed: an unseen-I error
    result = hardeval(STATS, one_token_sentences(tags))
    assert result["ter_diff"] == pytest.approx(1 / 6) and result["ter_unseen"] == 0.5
    assert result["hardeval"] == pytest.approx((0.5 + 1 / 6) / 2)


def test_strict_changes_only_diff():
    tags = [c[1] for c in CASES]
    tags[8] = "B-ORG"  # Apple: diff-O error, not strict
    loose, strict = hardeval(STATS, one_token_sentences(tags)), hardeval(STATS, one_token_sentences(tags), strict=True)
    for key in ("ter_all", "ter_unseen", "n_unseen_I", "n_unseen_O", "n_all"):
        assert loose[key] == strict[key]
    assert loose["n_diff"] == 6 and strict["n_diff"] == 4 and loose["ter_diff_O"] == 0.5 and strict["ter_diff_O"] == 0.0


def test_detailed_tables():
    tags = [c[1] for c in CASES]
    tags[5] = "O"
    result = hardeval(STATS, one_token_sentences(tags), detailed=True)
    assert result["per_type"]["PER"]["n_diff_I"] == 1 and result["per_type"]["PER"]["ter_diff_I"] == 1.0
    assert result["per_type"]["O"]["n_unseen_O"] == 1
    may = result["hard_tokens"]["diff_I"][0]
    assert may == {"token": "May", "gold": "PER", "n": 1, "errors": 1, "train": {"O": 3, "PER": 1}}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["O", "B-PER", "I-PER", "B-LOC", "B-ORG"]), min_size=len(CASES), max_size=len(CASES)))
def test_memorization_baseline_errs_on_every_diff_token_and_rates_are_rates(gold):
    tokens = [[c[0] for c in CASES]]
    predictions = memorization(STATS, tokens)
    result = hardeval(STATS, Batch(tokens, [gold], predictions))
    for name in ("diff_I", "diff_O", "diff_E"):
        assert result[f"n_{name}"] == 0 or result[f"ter_{name}"] == 1.0
    for key, value in result.items():
        if key.startswith("ter_") and not math.isnan(value):
            assert 0.0 <= value <= 1.0


def test_kfold_hard_tokens_cover_every_sentence_and_are_seeded():
    tokens = TRAIN_TOKENS * 3
    tags = TRAIN_TAGS * 3
    first = kfold_hard_tokens(tokens, tags, k=3, seed=1)
    assert [len(s) for s in first] == [len(s) for s in tokens]
    assert first == kfold_hard_tokens(tokens, tags, k=3, seed=1)
    assert {name for s in first for name in s} <= set(SUBSETS) | {None}
    with pytest.raises(ValueError, match="k=1"):
        kfold_hard_tokens(tokens, tags, k=1)


def test_kfold_hard_tokens_hold_each_fold_out():
    # Words found in one sentence only are unseen in the other folds' statistics, whatever
    # the fold; with the held-out fold leaking in they would be seen.
    tokens = TRAIN_TOKENS * 3 + [["Zed", "zebra"], ["Zorro", "bank"]]
    tags = TRAIN_TAGS * 3 + [["B-PER", "O"], ["B-PER", "O"]]
    for seed, strict in ((0, False), (1, False), (2, True)):
        result = kfold_hard_tokens(tokens, tags, k=4, seed=seed, strict=strict)
        assert result[-2] == ["unseen_I", "unseen_O"] and result[-1][0] == "unseen_I"
        # Each sentence is classified exactly as against the statistics of the sentences outside its fold.
        order = list(range(len(tokens)))
        random.Random(seed).shuffle(order)
        for fold in (sorted(order[f::4]) for f in range(4)):
            rest = [i for i in range(len(tokens)) if i not in fold]
            stats = TrainStats.from_lists([tokens[i] for i in rest], [tags[i] for i in rest])
            for i in fold:
                masks = classify(stats, tokens[i], [t[2:] or "O" for t in tags[i]], strict=strict)
                assert result[i] == [next((n for n in SUBSETS if masks[n][j]), None) for j in range(len(tokens[i]))]
    # Defaults k=5, seed=0, not strict; k runs from 2 to the number of sentences.
    assert kfold_hard_tokens(tokens, tags) == kfold_hard_tokens(tokens, tags, k=5, seed=0, strict=False)
    assert kfold_hard_tokens(tokens, tags) != kfold_hard_tokens(tokens, tags, k=6)
    assert kfold_hard_tokens(tokens, tags) != kfold_hard_tokens(tokens, tags, seed=1)
    assert kfold_hard_tokens(tokens, tags) != kfold_hard_tokens(tokens, tags, strict=True)
    assert len(kfold_hard_tokens(tokens, tags, k=2)) == len(kfold_hard_tokens(tokens, tags, k=len(tokens)))
    with pytest.raises(ValueError, match=f"k={len(tokens) + 1}: need 2 <= k <= number of sentences"):
        kfold_hard_tokens(tokens, tags, k=len(tokens) + 1)


def test_defaults_and_messages():
    masks = classify(STATS, ["May"], ["PER"])  # not strict by default: May (O 3, PER 1) is diff-I
    assert masks["diff_I"].tolist() == [True] and not classify(STATS, ["May"], ["PER"], strict=True)["diff_I"][0]
    batch = Batch([["Zed", "Lee"]], [["B-PER", "I-PER"]], [["B-PER", "B-PER"]])
    assert token_errors(batch).tolist() == [True, True] and token_errors(batch, "bio").tolist() == [False, True]
    assert "per_type" not in hardeval(STATS, batch) and "hard_tokens" not in hardeval(STATS, batch)
    with pytest.raises(ValueError, match=r"^error='token': use one of bilou, bio, io$"):
        token_errors(batch, "token")
    with pytest.raises(ValueError, match="^HardEval needs predictions$"):
        token_errors(Batch([["Zed"]], [["B-PER"]]))


def test_io_and_bio_errors_on_single_tokens():
    # IO: entity or not, types ignored; BIO/BILOU of a one-token span: B-X / U-X on both sides.
    batch = Batch([["Zed", "Lee", "Paris"]], [["B-PER", "O", "B-LOC"]], [["O", "B-LOC", "B-ORG"]])
    assert token_errors(batch, "io").tolist() == [True, True, False]
    same = Batch([["Zed"]], [["B-PER"]], [["B-PER"]])
    assert [hardeval(STATS, same, error=e)["ter_all"] for e in ("bilou", "bio", "io")] == [0.0, 0.0, 0.0]


def test_gold_type_never_seen_in_training_is_diff_e():
    # Paris (LOC/O tie) and Jordan (PER, LOC, O) as FAC, a type absent from training.
    for strict in (False, True):
        masks = classify(STATS, ["Paris", "Jordan"], ["FAC", "FAC"], strict=strict)
        assert masks["diff_E"].tolist() == [True, True]


def test_hard_token_rows_count_and_sort_by_frequency_then_token():
    tokens = [["Reading"], ["Apple"], ["bank"], ["bank"], ["May"]]
    gold = [["O"], ["O"], ["B-ORG"], ["B-ORG"], ["B-PER"]]
    pred = [["O"], ["B-ORG"], ["O"], ["B-ORG"], ["O"]]
    table = hardeval(STATS, Batch(tokens, gold, pred), detailed=True)["hard_tokens"]
    assert table["diff_I"] == [{"token": "bank", "gold": "ORG", "n": 2, "errors": 1, "train": {"O": 1}},
                               {"token": "May", "gold": "PER", "n": 1, "errors": 1, "train": {"O": 3, "PER": 1}}]
    assert table["diff_O"] == [{"token": "Apple", "gold": "O", "n": 1, "errors": 1, "train": {"O": 1, "ORG": 2}},
                               {"token": "Reading", "gold": "O", "n": 1, "errors": 0, "train": {"LOC": 2}}]


# ---- CoNLL-2003 figures -------------------------------------------------------------------
def counts(result):
    return {k: v for k, v in result.items() if k.startswith("n_")}


def test_conll_test_subsets(conll_stats, conll_test):
    # The subset sizes the HardEval paper reports for CoNLL-2003 train -> test; its two-step
    # diff-E rule (entity vs O first, then the type) gives 1092 diff tokens, where one argmax
    # over {O, types} would give 1087.
    batch = Batch(conll_test.tokens, conll_test.tags, conll_test.tags)
    result = hardeval(conll_stats, batch)
    assert counts(result) == {"n_all": 46435, "n_unseen": 5656, "n_unseen_I": 2537, "n_unseen_O": 3119,
                              "n_diff": 1092, "n_diff_I": 201, "n_diff_O": 215, "n_diff_E": 676,
                              "n_invalid_transitions_gold": 0, "n_invalid_transitions_pred": 0}  # valid IOB2
    assert all(result[k] == 0.0 for k in result if k.startswith("ter_"))  # gold as prediction
    strict = hardeval(conll_stats, batch, strict=True)
    assert (strict["n_diff_I"], strict["n_diff_O"], strict["n_diff_E"]) == (74, 93, 255)


def test_conll_dev_subsets(conll_stats, conll_dev):
    result = hardeval(conll_stats, Batch(conll_dev.tokens, conll_dev.tags, conll_dev.tags))
    assert (result["n_unseen_I"], result["n_unseen_O"]) == (1753, 2540)
    assert (result["n_diff_I"], result["n_diff_O"], result["n_diff_E"]) == (273, 90, 599)


def test_conll_memorization_baseline(conll_stats, conll_test):
    predictions = memorization(conll_stats, conll_test.tokens)
    result = hardeval(conll_stats, Batch(conll_test.tokens, conll_test.tags, predictions))
    assert result["ter_diff_I"] == result["ter_diff_O"] == result["ter_diff_E"] == 1.0
    assert result["ter_unseen_I"] == 1.0 and result["ter_unseen_O"] == 0.0  # unseen words get O
    assert result["ter_all"] < 0.15  # non-hard tokens are mostly memorization


def test_training_without_entities():
    # No entity type at all in training: every seen token is usually O, nothing is diff-E.
    stats = TrainStats.from_lists([["a", "b"]], [["O", "O"]])
    masks = classify(stats, ["a", "b", "c"], ["PER", "O", "PER"])
    assert [next((n for n in SUBSETS if masks[n][i]), None) for i in range(3)] == ["diff_I", None, "unseen_I"]


# ---- error breakdown, scores of a selection, caching, intervals --------------------------
# Errors by hand on the one-token sentences of CASES: Zed (unseen-I) and zebra (unseen-O),
# Paris as PER (diff-E) and Reading (diff-O), Paris as LOC (in no subset).
WRONG = {9: "O", 10: "B-PER", 2: "B-LOC", 7: "B-LOC", 0: "O"}


def tags_with(changes):
    return [changes.get(i, c[1]) for i, c in enumerate(CASES)]


def test_error_breakdown_by_hand():
    # 5 errors over 11 tokens: unseen 2 of 2 tokens wrong, diff 2 of 6, other 1 of 3.
    result = hardeval(STATS, one_token_sentences(tags_with(WRONG)), detailed=True)
    assert result["error_breakdown"] == {
        "unseen": {"errors": 2, "tokens": 2, "share_of_errors": 2 / 5, "share_of_tokens": 2 / 11},
        "diff": {"errors": 2, "tokens": 6, "share_of_errors": 2 / 5, "share_of_tokens": 6 / 11},
        "other": {"errors": 1, "tokens": 3, "share_of_errors": 1 / 5, "share_of_tokens": 3 / 11}}
    # No error at all: every share of errors is NaN (0 of 0), the token shares stay.
    perfect = hardeval(STATS, one_token_sentences(tags_with({})), detailed=True)["error_breakdown"]
    assert all(part["errors"] == 0 and math.isnan(part["share_of_errors"]) for part in perfect.values())
    assert [part["share_of_tokens"] for part in perfect.values()] == [2 / 11, 6 / 11, 3 / 11]


def test_scores_of_selected_tokens_equal_the_scores_of_those_sentences_alone():
    batch = one_token_sentences(tags_with(WRONG))
    masks = classify(STATS, batch.flat_tokens, hardeval_gold_types(batch))
    errors = token_errors(batch)
    for chosen in ([0, 2, 5, 9], [1, 3, 4, 6, 7, 8, 10], list(range(len(CASES))), []):
        where = np.isin(np.arange(len(CASES)), chosen)
        alone = hardeval(STATS, Batch([[CASES[i][0]] for i in chosen], [[CASES[i][1]] for i in chosen],
                                      [[tags_with(WRONG)[i]] for i in chosen]))
        assert scores(masks, errors, where) == pytest.approx(_scores_of(alone), nan_ok=True)
    assert scores(masks, errors) == pytest.approx(_scores_of(hardeval(STATS, batch)), nan_ok=True)


def _scores_of(result):
    """A result less what the input decoding counted (``scores`` is the rates and sizes alone)."""
    return {k: v for k, v in result.items() if not k.startswith("n_invalid_transitions")}


def test_one_batch_scored_against_two_training_sets():
    # The classification is cached on the batch per statistics object: other statistics classify again.
    batch = Batch([["Zed", "May"]], [["B-PER", "B-PER"]], [["B-PER", "O"]])
    assert hardeval(STATS, batch)["n_unseen_I"] == 1
    other = TrainStats.from_lists([["Zed", "May"]], [["B-PER", "B-PER"]])
    assert (hardeval(other, batch)["n_unseen_I"], hardeval(other, batch)["n_diff_I"]) == (0, 0)
    assert hardeval(STATS, batch)["n_diff_I"] == 1


def test_classify_ids_is_not_strict_by_default():
    # May: O 3, PER 1 in training: diff-I, but not strict diff-I (PER was seen).
    ids, types = STATS.ids(["May"]), np.array([0])
    assert classify_ids(STATS, ids, types, ["PER"])["diff_I"].tolist() == [True]
    assert classify_ids(STATS, ids, types, ["PER"], strict=True)["diff_I"].tolist() == [False]


def test_size_of_the_hardeval_key_is_unseen_plus_diff_tokens():
    # 2 unseen and 6 diff tokens in CASES (the subsets are disjoint); strict: 4 diff tokens.
    batch = one_token_sentences(tags_with(WRONG))
    assert hardeval_counts(STATS, batch).sizes()["hardeval"] == 8
    assert hardeval_counts(STATS, batch, strict=True).sizes()["hardeval"] == 6


def test_intervals_of_identical_sentences_are_the_point_value():
    # Twenty copies of one sentence: every resample holds copies only, so every rate of every
    # resample equals the point value, and each interval is that value, for each option.
    changes = {**WRONG, 8: "B-ORG", 4: "B-PER"}  # Apple: diff-O, not strict; Jordan ORG as PER: a type error
    sentence = ([c[0] for c in CASES], [c[1] for c in CASES], tags_with(changes))
    batch = Batch(*([part] * 20 for part in sentence))
    seen = set()
    for strict in (False, True):
        for error in ("bilou", "io"):
            plain = hardeval(STATS, batch, strict=strict, error=error)
            result = hardeval(STATS, batch, strict=strict, error=error, ci=True, n_resamples=20)
            assert {k: v for k, v in result.items() if "_ci_" not in k} == plain
            for key in ["hardeval"] + [f"ter_{name}" for name in ORDER]:
                assert result[f"{key}_ci_low"] == result[key] == result[f"{key}_ci_high"], (strict, error, key)
            seen.add((plain["ter_all"], plain["ter_diff"]))
    assert len(seen) == 4  # the options give four different pairs of rates


def test_interval_options_and_their_defaults():
    rng = random.Random(0)
    tokens = [[c[0] for c in CASES]] * 30
    pred = [[rng.choice([c[1], "O", "B-LOC"]) for c in CASES] for _ in tokens]
    batch = Batch(tokens, [[c[1] for c in CASES]] * 30, pred)
    assert not any("_ci_" in key for key in hardeval(STATS, batch))  # no intervals by default

    def dumped(**options):
        return json.dumps(hardeval(STATS, batch, ci=True, **options))
    assert dumped() == dumped(n_resamples=1000, confidence=0.95, seed=0, unit="sentence")
    assert dumped(seed=7) == dumped(seed=7) != dumped(seed=8)
    assert dumped(n_resamples=200, seed=7) != dumped(n_resamples=300, seed=7)
    wide, narrow = (hardeval(STATS, batch, ci=True, confidence=c, seed=7) for c in (0.95, 0.5))
    for key in ["hardeval"] + [f"ter_{name}" for name in ORDER]:  # the same draws: the 50% interval nests
        assert wide[f"{key}_ci_low"] <= narrow[f"{key}_ci_low"] <= narrow[f"{key}_ci_high"] \
            <= wide[f"{key}_ci_high"]
    assert wide["ter_all_ci_low"] < narrow["ter_all_ci_low"]
    # documents of 3 sentences each: another unit, other intervals
    grouped = Batch(tokens, [[c[1] for c in CASES]] * 30, pred, [s // 3 for s in range(30)])
    assert json.dumps(hardeval(STATS, grouped, ci=True, unit="document")) != dumped()


def test_hallucinated_mentions_are_counted_and_listed_when_detailed():
    # A predicted mention not in the text has no token: it changes no TER, it is counted.
    batch = tough_ner.as_batch([["Zed", "saw", "Paris"]], [["B-PER", "O", "B-LOC"]],
                               [[{"text": "Zed", "type": "PER"}, {"text": "Atlantis", "type": "LOC"}]])
    plain, detailed = hardeval(STATS, batch), hardeval(STATS, batch, detailed=True)
    assert plain["n_hallucinated"] == detailed["n_hallucinated"] == 1 and "hallucinated" not in plain
    assert detailed["hallucinated"] == [{"sentence": 0, "text": "Atlantis", "type": "LOC"}]
    assert plain["ter_all"] == 1 / 3  # Paris, predicted O
