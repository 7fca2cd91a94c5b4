import json
import math
import random

import evaluate
import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given, settings, strategies as st
from seqeval.metrics import classification_report
from seqeval.metrics.sequence_labeling import get_entities

from tough_ner import Batch, TrainStats, bucket_f1, read_conll, tmr
from tough_ner.buckets import (ATTRIBUTES, attribute_values, attribute_wise, compare, equal_count_cuts, friedman,
                               make_bucketing, spearman, wilcoxon)
from tough_ner.cli import main
from tough_ner.present.formatting import to_json as cli_json
from tough_ner.demo import load_demo

from conftest import ROOT, input_warnings, random_batch, small_stats, write

STATS = small_stats()
TOKENS = [["Paris", "Hilton", "visits", "Rome"]]
GOLD = [["B-PER", "I-PER", "O", "B-LOC"]]
PRED = [["B-LOC", "O", "O", "B-LOC"]]


def test_attribute_values_by_hand():
    sides = attribute_values(STATS, Batch(TOKENS, GOLD, PRED))
    gold, pred = sides["gold"]["span"], sides["pred"]["span"]
    # Gold: "Paris Hilton"/PER, "Rome"/LOC.  14 training tokens, 4 training mentions.
    assert gold["eLen"].tolist() == [2, 1] and gold["sLen"].tolist() == [4, 4]
    assert all(gold[a].dtype == float for a in ATTRIBUTES[:-1] if a in gold)  # every numeric attribute: floats
    assert gold["eDen"].tolist() == [0.5, 0.5] and gold["oDen"].tolist() == [0.5, 0.5]  # visits, Rome unseen
    assert gold["eFre"].tolist() == [0.25, 0.0]
    assert gold["eCon"].tolist() == [0.5, 0.0]  # "Paris Hilton" twice in training, once a PER mention
    assert gold["correct"].tolist() == [False, True]
    # Predicted "Paris"/LOC: 3 occurrences, 1 LOC mention; predicted spans share the gold eDen.
    assert pred["eLen"].tolist() == [1, 1] and pred["eDen"].tolist() == [0.5, 0.5]
    assert pred["eFre"].tolist() == [0.25, 0.0] and pred["eCon"].tolist() == [1 / 3, 0.0]
    assert pred["correct"].tolist() == [False, True]
    tokens_gold, tokens_pred = sides["gold"]["token"], sides["pred"]["token"]
    assert tokens_gold["tFre"].tolist() == [3 / 14, 2 / 14, 0.0]
    assert tokens_gold["tCon"].tolist() == [1 / 3, 1 / 2, 0.0]  # Paris: LOC, PER, O once each
    assert tokens_gold["correct"].tolist() == [False, False, True]
    assert tokens_pred["tCon"].tolist() == [1 / 3, 0.0] and tokens_pred["correct"].tolist() == [False, True]


def test_one_call_counts_both_sides_mention_texts_without_the_full_table():
    """Gold "Paris Hilton" and predicted "Paris" are both training mentions: one lookup counts
    both (a one-off command scans only those), and the full table is left unbuilt."""
    stats = small_stats()
    sides = attribute_values(stats, Batch(TOKENS, GOLD, PRED))
    assert sides["gold"]["span"]["eCon"].tolist() == [0.5, 0.0] and sides["pred"]["span"]["eCon"].tolist() == [1 / 3, 0.0]
    assert "_mention_occurrences" not in stats.__dict__ and sorted(stats._some_occurrences) == ["Paris", "Paris Hilton"]


def test_lowercase_option_matches_case_insensitively():
    tokens = [["paris", "HILTON", "visits", "Rome"]]
    exact = attribute_values(STATS, Batch(tokens, GOLD, PRED))["gold"]["span"]
    folded = attribute_values(STATS, Batch(tokens, GOLD, PRED), lowercase=True)["gold"]["span"]
    assert exact["eCon"].tolist() == [0.0, 0.0] and exact["oDen"].tolist() == [1.0, 1.0]
    assert folded["eCon"].tolist() == [0.5, 0.0] and folded["oDen"].tolist() == [0.5, 0.5]


def test_occurrences_stay_inside_sentences_and_skip_unseen_tokens():
    counts = STATS.occurrences([["Paris", "Hilton"], ["France", "Paris"], ["is"], ["Rome"], ["Paris", "Rome"], []])
    assert counts.tolist() == [2, 0, 2, 0, 0, 0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcd"), max_size=7), min_size=1, max_size=6),
       st.lists(st.lists(st.sampled_from("abcde"), min_size=1, max_size=4), min_size=1, max_size=8))
def test_occurrences_equal_brute_force_counts(sentences, queries):
    assume(any(sentences))  # training data holds at least one token
    stats = TrainStats.from_lists(sentences, [["O"] * len(s) for s in sentences])
    expected = [sum(s[i:i + len(q)] == q for s in sentences for i in range(len(s) - len(q) + 1)) for q in queries]
    assert stats.occurrences(queries).tolist() == expected


def test_lowercased_stats_equal_stats_of_lowercased_data():
    tokens = [["Paris", "PARIS", "is"], ["paris", "Is", "New", "York"]]
    tags = [["B-LOC", "B-ORG", "O"], ["B-LOC", "O", "B-LOC", "I-LOC"]]
    lowered = TrainStats.from_lists([[t.lower() for t in s] for s in tokens], tags)
    assert TrainStats.from_lists(tokens, tags).lowercased() == lowered


def test_equal_count_cuts_never_split_a_value():
    # 8 values, 4 buckets: cuts where the cumulative count first reaches 2, 4, 6.
    assert equal_count_cuts(np.array([1, 1, 1, 2, 3, 3, 4, 5.0]), 4).tolist() == [1, 2, 3]
    # One value holds most items: coinciding cuts leave empty buckets, indices stay stable.
    assert equal_count_cuts(np.array([7, 7, 7, 7, 7, 7, 8, 9.0]), 4).tolist() == [7, 7, 7]
    assert equal_count_cuts(np.array([]), 3).tolist() == [math.inf, math.inf]


def test_special_buckets_always_exist_and_bounds_cover_the_line():
    bucketing = make_bucketing("eCon", np.array([0.0, 0.2, 0.4, 0.6, 1.0]))
    assert len(bucketing) == 4
    assert bucketing.intervals() == [[0, 0], [0, 0.4], [0.4, 1], [1, 1]]
    assert bucketing.assign(np.array([0.0, 1e-9, 0.4, 0.41, 0.999, 1.0])).tolist() == [0, 1, 1, 2, 2, 3]
    empty_special = make_bucketing("eFre", np.array([0.1, 0.2, 0.3]))
    assert len(empty_special) == 4 and empty_special.assign(np.array([0.0, 5.0])).tolist() == [0, 3]
    plain = make_bucketing("sLen", np.array([3.0, 5, 8, 13]))
    assert plain.intervals() == [[-math.inf, 3], [3, 5], [5, 8], [8, math.inf]]
    assert plain.assign(np.array([-1.0, 100])).tolist() == [0, 3]
    assert make_bucketing("eLen", np.array([1.0]), 3).intervals() == [[1, 1], [2, 2], [3, math.inf]]
    user = make_bucketing("oDen", np.array([0.5]), edges=[0.1, 0.3])
    assert user.intervals() == [[0, 0], [0, 0.1], [0.1, 0.3], [0.3, math.inf]]
    with pytest.raises(ValueError, match="increasing"):
        make_bucketing("oDen", np.array([0.5]), edges=[0.3, 0.1])
    with pytest.raises(ValueError, match="n_buckets >= 3"):
        make_bucketing("tCon", np.array([0.5]), 2)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 100_000), st.integers(1, 6))
def test_every_item_in_exactly_one_bucket_and_tag_f1_is_seqeval(seed, n_buckets):
    tokens, gold, pred = random_batch(seed)
    batch = Batch(tokens, gold, pred)
    # inputs the type checks refuse (gold types unknown to training, predicted types unknown to both)
    gold_types = {t for spans in batch.gold_spans for *_, t in spans}
    pred_types = {t for spans in batch.pred_spans for *_, t in spans}
    train_types = {"LOC", "PER"}
    assume(not gold_types or gold_types & train_types)
    assume(not pred_types or pred_types & (gold_types | train_types))
    with input_warnings(pred_types - gold_types - train_types):
        result = bucket_f1(STATS, batch, n_buckets={"eLen": n_buckets, "sLen": n_buckets, "eDen": n_buckets},
                           detailed=True, bootstrap=0)
    n_gold_spans, n_pred_spans = len(batch.span_arrays("gold")[0]), len(batch.span_arrays("pred")[0])
    n_gold_tokens = int((batch.token_types("gold") >= 0).sum())
    n_pred_tokens = int((batch.token_types("pred") >= 0).sum())
    sides = attribute_values(STATS, batch)
    for attribute, rows in result["buckets"].items():
        token_level = attribute in ("tFre", "tCon")
        assert sum(r["n_gold"] for r in rows) == (n_gold_tokens if token_level else n_gold_spans)
        assert sum(r["n_pred"] for r in rows) == (n_pred_tokens if token_level else n_pred_spans)
        level = "token" if token_level else "span"
        assert sum(r["n_correct"] for r in rows) == int(sides["gold"][level]["correct"].sum())
    if n_gold_spans and n_pred_spans:
        report = classification_report(gold, pred, output_dict=True, zero_division=0)
        for row in result["buckets"]["tag"]:
            assert result[f"tag_{row['interval']}_f1"] == pytest.approx(report[row["interval"]]["f1-score"])
    perfect = bucket_f1(STATS, Batch(tokens, gold, gold))
    assert all(v == 1.0 or math.isnan(v) for k, v in perfect.items()
               if not k.startswith("n_invalid_transitions"))  # counts of the input (#37), not scores


def test_conll_figures(conll_stats, conll_test, conll_train_path):
    gold = conll_test.tags
    perfect = bucket_f1(conll_stats, Batch(conll_test.tokens, gold, gold), detailed=True, bootstrap=0)
    buckets = perfect["buckets"]
    # Counted independently: entity lengths from seqeval's decoder; oDen = 0 is an entity in a
    # sentence whose every token occurs in the training file.
    lengths = [end - start + 1 for _, start, end in get_entities(gold)]
    assert [r["n_gold"] for r in buckets["eLen"]] == [lengths.count(1), lengths.count(2), lengths.count(3),
                                                      sum(n >= 4 for n in lengths)] == [3574, 1776, 236, 62]
    vocabulary = {token for sentence in read_conll(conll_train_path).tokens for token in sentence}
    all_seen = sum(len(get_entities(tags)) for sentence, tags in zip(conll_test.tokens, gold)
                   if set(sentence) <= vocabulary)
    assert buckets["oDen"][0]["n_gold"] == all_seen == 1091 and buckets["oDen"][0]["interval"] == [0, 0]
    assert buckets["eFre"][0]["n_gold"] == 2600
    assert tmr(conll_stats, Batch(conll_test.tokens, gold, gold))["n_unseen_tokens"] == 2600
    assert {r["interval"]: r["n_gold"] for r in buckets["tag"]} == {"LOC": 1668, "MISC": 702, "ORG": 1661, "PER": 1617}
    assert all(v == 1.0 for v in perfect.values() if isinstance(v, float))
    rng = random.Random(3)
    pred = [[t if rng.random() < 0.85 else rng.choice(["O", "B-PER", "I-ORG"]) for t in s] for s in gold]
    result = bucket_f1(conll_stats, Batch(conll_test.tokens, gold, pred), detailed=True, bootstrap=0)
    report = classification_report(gold, pred, output_dict=True)
    assert [result[f"tag_{t}_f1"] for t in ("LOC", "MISC", "ORG", "PER")] == pytest.approx(
        [report[t]["f1-score"] for t in ("LOC", "MISC", "ORG", "PER")], abs=1e-12)
    # Buckets are cut on gold: the same for every system.
    assert all(r["interval"] == p["interval"] for a in ATTRIBUTES for r, p in zip(result["buckets"][a], buckets[a]))


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    batch = Batch(test.tokens, test.tags, test.predictions[1])
    one = bucket_f1(stats, batch, detailed=True, bootstrap=300, seed=1)["diagnostics"]["bootstrap"]
    again = bucket_f1(stats, batch, detailed=True, bootstrap=300, seed=1)["diagnostics"]["bootstrap"]
    other = bucket_f1(stats, batch, detailed=True, bootstrap=300, seed=2)["diagnostics"]["bootstrap"]
    assert json.dumps(one) == json.dumps(again) and json.dumps(one) != json.dumps(other)
    point = bucket_f1(stats, batch, detailed=True, bootstrap=0)
    low, high = one["f1"]
    assert low < point["f1"] < high
    for attribute in ATTRIBUTES:
        for (lo, hi), row in zip(one[attribute], point["buckets"][attribute]):
            value = row["f1"]
            assert math.isnan(value) == math.isnan(lo) or value in (0.0, 1.0)
            assert math.isnan(lo) or lo <= hi
    perfect = bucket_f1(stats, Batch(test.tokens, test.tags, test.tags), detailed=True, bootstrap=50)
    assert perfect["diagnostics"]["bootstrap"]["f1"] == [1.0, 1.0]


def test_bootstrap_equals_a_plain_loop_over_resamples_in_canonical_order():
    tokens, gold, pred = random_batch(17, n_sentences=24)
    batch = Batch(tokens, gold, pred)
    result = bucket_f1(STATS, batch, detailed=True, bootstrap=200, seed=5)
    # The engine resamples sentences sorted by their content hash (distinct sentences here).
    order = np.argsort(batch.sentence_keys, kind="stable")
    assert len(set(batch.sentence_keys.tolist())) == len(tokens)
    rng = np.random.default_rng([5, 0])  # the engine's resampling stream for seed 5
    draws = rng.integers(0, len(tokens), size=(200, len(tokens)))
    f1s = []
    for draw in order[draws]:
        resampled = Batch([tokens[i] for i in draw], [gold[i] for i in draw], [pred[i] for i in draw])
        f1s.append(bucket_f1(STATS, resampled, bootstrap=0)["f1"])
    assert result["diagnostics"]["bootstrap"]["f1"] == pytest.approx(np.nanquantile(f1s, [0.025, 0.975]).tolist())
    # Shuffling the sentences changes nothing.
    shuffled = random.Random(3).sample(range(len(tokens)), len(tokens))
    again = bucket_f1(STATS, Batch([tokens[i] for i in shuffled], [gold[i] for i in shuffled],
                                   [pred[i] for i in shuffled]), detailed=True, bootstrap=200, seed=5)
    assert json.dumps(again["diagnostics"]["bootstrap"]) == json.dumps(result["diagnostics"]["bootstrap"])


def test_diagnostics():
    tokens, gold, pred = random_batch(7, n_sentences=30)
    a = bucket_f1(STATS, Batch(tokens, gold, pred), detailed=True, bootstrap=0)
    b = bucket_f1(STATS, Batch(tokens, gold, gold), detailed=True, bootstrap=0)
    for attribute, diagnosis in a["diagnostics"]["self"].items():
        f1s = [r["f1"] for r in a["buckets"][attribute]]
        assert diagnosis["worst_f1"] == np.nanmin(f1s) and diagnosis["best_f1"] == np.nanmax(f1s)
        assert diagnosis["gap"] == diagnosis["best_f1"] - diagnosis["worst_f1"]
    comparison = compare(a, b)
    for attribute in ATTRIBUTES[:-1]:  # A - B, bucket by bucket
        assert comparison[attribute]["difference"] == pytest.approx(
            [ra["f1"] - rb["f1"] for ra, rb in zip(a["buckets"][attribute], b["buckets"][attribute])], nan_ok=True)
    assert all(d <= 0 or math.isnan(d) for d in comparison["tCon"]["difference"])  # b is perfect
    table = attribute_wise([a, b])
    assert math.isnan(table["eLen"]["rho"])  # b is perfect: its F1 is 1 in every bucket, no rank correlation
    # rho: mean over systems of |Spearman(bucket order, bucket F1)|, here from scipy.
    rng = random.Random(2)
    c = bucket_f1(STATS, Batch(tokens, gold, [[t if rng.random() < 0.7 else "O" for t in s] for s in gold]),
                  detailed=True, bootstrap=0)
    table = attribute_wise([a, c])
    checked = 0
    for attribute in ATTRIBUTES[:-1]:
        rhos = []
        for result in (a, c):
            f1s = np.array([r["f1"] for r in result["buckets"][attribute]])
            keep = ~np.isnan(f1s)
            rhos.append(abs(scipy.stats.spearmanr(np.arange(len(f1s))[keep], f1s[keep]).statistic)
                        if keep.sum() >= 2 and np.ptp(f1s[keep]) > 0 else math.nan)
        assert table[attribute]["rho"] == pytest.approx(np.mean(rhos), nan_ok=True)
        checked += not math.isnan(table[attribute]["rho"])
    assert checked >= 4
    sides = attribute_values(STATS, Batch(tokens, gold, pred))
    assert table["sLen"]["zeta"] == pytest.approx(sides["gold"]["span"]["sLen"].mean())
    model = a["diagnostics"]["model_wise"]
    for attribute in ATTRIBUTES[:-1]:
        f1s = np.array([r["f1"] for r in a["buckets"][attribute]])
        keep = ~np.isnan(f1s)
        if keep.sum() >= 2 and np.ptp(f1s[keep]) > 0:
            assert model[attribute]["spearman"] == pytest.approx(
                scipy.stats.spearmanr(np.arange(len(f1s))[keep], f1s[keep]).statistic)
        assert model[attribute]["std"] == pytest.approx(np.std(f1s[keep]))
    assert math.isnan(model["tag"]["spearman"])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=12))
def test_spearman_equals_scipy(pairs):
    x, y = zip(*pairs)
    expected = scipy.stats.spearmanr(x, y).statistic if len(set(x)) > 1 and len(set(y)) > 1 else math.nan
    assert spearman(x, y) == pytest.approx(expected, nan_ok=True)


def test_type_keys_are_named_so_a_spurious_type_renames_nothing():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    clean = bucket_f1(stats, Batch(test.tokens, test.tags, test.predictions[1]))
    # One extra predicted type sorting before every real one ("AAA") used to shift LOC from tag_0 to tag_1.
    # Put it on a token that is O in gold and prediction, with O neighbours: no other span changes.
    spurious = [list(s) for s in test.predictions[1]]
    s, p = next((s, p) for s, (g, q) in enumerate(zip(test.tags, spurious)) for p in range(1, len(g) - 1)
                if g[p - 1:p + 2] == q[p - 1:p + 2] == ["O", "O", "O"])
    spurious[s][p] = "B-AAA"
    with input_warnings({"AAA"}):
        noisy = bucket_f1(stats, Batch(test.tokens, test.tags, spurious))
    types = ["tag_LOC_f1", "tag_MISC_f1", "tag_ORG_f1", "tag_PER_f1"]
    assert sorted(k for k in clean if k.startswith("tag_")) == types
    assert noisy["tag_AAA_f1"] == 0.0 and set(noisy) == set(clean) | {"tag_AAA_f1"}
    assert [noisy[k] for k in types] == [clean[k] for k in types]


def test_friedman_and_wilcoxon_over_runs():
    tokens, gold, _ = random_batch(5, n_sentences=40)
    runs_a, runs_b = [], []
    for seed in range(4):
        rng = random.Random(seed)
        noisy = [[t if rng.random() < 0.8 else "O" for t in s] for s in gold]
        noisier = [[t if rng.random() < 0.5 else "O" for t in s] for s in gold]
        runs_a.append(bucket_f1(STATS, Batch(tokens, gold, noisy)))
        runs_b.append(bucket_f1(STATS, Batch(tokens, gold, noisier)))
    result = friedman(runs_a)
    matrix = np.array([[run[f"sLen_{i}_f1"] for i in range(4)] for run in runs_a])
    expected = scipy.stats.friedmanchisquare(*matrix.T)
    assert result["sLen"]["statistic"] == pytest.approx(expected.statistic)
    assert result["sLen"]["p_value"] == pytest.approx(expected.pvalue)
    paired = wilcoxon(runs_a, runs_b)
    a = [run[f"eLen_{i}_f1"] for run in runs_a for i in range(4)]
    b = [run[f"eLen_{i}_f1"] for run in runs_b for i in range(4)]
    keep = [not (math.isnan(x) or math.isnan(y)) for x, y in zip(a, b)]
    expected = scipy.stats.wilcoxon([x for x, k in zip(a, keep) if k], [y for y, k in zip(b, keep) if k])
    assert paired["eLen"]["p_value"] == pytest.approx(expected.pvalue) and paired["eLen"]["n_pairs"] == sum(keep)
    with pytest.raises(ValueError, match="at least 2 runs"):
        friedman(runs_a[:1])
    with pytest.raises(ValueError, match="equal"):
        wilcoxon(runs_a, runs_b[:2])


def test_empty_and_entity_free_input_give_nan_with_zero_counts():
    result = bucket_f1(STATS, Batch([["a", "b"]], [["O", "O"]], [["O", "O"]]), detailed=True)
    assert all(math.isnan(v) for v in result.values() if isinstance(v, float))
    assert all(r["n_gold"] == r["n_pred"] == 0 for rows in result["buckets"].values() for r in rows)
    assert result["buckets"]["tag"] == [] and len(result["buckets"]["eCon"]) == 4
    empty = bucket_f1(STATS, Batch([], [], []), detailed=True)
    assert math.isnan(empty["f1"]) and all(map(math.isnan, empty["diagnostics"]["bootstrap"]["f1"]))


def test_bad_options_and_input():
    batch = Batch(TOKENS, GOLD, PRED)
    for bad, message in (({"n_buckets": 0}, "eLen needs n_buckets >= 1"), ({"n_buckets": {"size": 3}}, "'size'"),
                         ({"edges": [1, 2]}, "edges must be"), ({"bootstrap": -1}, "bootstrap must be"),
                         ({"confidence": 1.0}, "confidence must lie in"), ({"n_buckets": 2.5}, "n_buckets must be")):
        with pytest.raises(ValueError, match=message):
            bucket_f1(STATS, batch, **bad)
    with pytest.raises(ValueError, match="sentence 0"):
        bucket_f1(STATS, Batch(TOKENS, GOLD, [["B-LOC"]]))
    with pytest.raises(ValueError, match="^bucket_f1 needs predictions$"):
        bucket_f1(STATS, Batch(TOKENS, GOLD))


def test_evaluate_metric_equals_core_and_takes_options():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    metric = evaluate.load(str(ROOT / "metrics" / "bucket_f1"), train=stats, n_buckets=5, keep_in_memory=True)
    inputs = {"predictions": test.predictions[0], "references": test.tags, "tokens": test.tokens}
    result = metric.compute(**inputs)
    expected = bucket_f1(stats, Batch(test.tokens, test.tags, test.predictions[0]), n_buckets=5)
    assert result.keys() == expected.keys() and "sLen_4_f1" in result
    assert all(result[k] == expected[k] or (math.isnan(result[k]) and math.isnan(expected[k])) for k in result)
    detailed = metric.compute(**inputs, detailed=True, bootstrap=20, edges={"sLen": [10]})
    assert len(detailed["buckets"]["sLen"]) == 2 and len(detailed["diagnostics"]["bootstrap"]["eLen"]) == 5
    json.dumps(detailed)  # plain Python values throughout
    with pytest.raises(TypeError, match="n_bucket"):
        evaluate.load(str(ROOT / "metrics" / "bucket_f1"), train=stats, n_bucket=3)
    with pytest.raises(ValueError, match="n_buckets"):
        evaluate.load(str(ROOT / "metrics" / "bucket_f1"), train=stats, n_buckets=1)


def test_cli_buckets(tmp_path, capsys):
    train, test = load_demo()
    write(tmp_path / "train.txt", "\n\n".join("\n".join(f"{t} {g}" for t, g in zip(s, tags))
                                            for s, tags in zip(train.tokens, train.tags)) + "\n")
    for i in range(2):
        rows = zip(test.tokens, test.tags, test.predictions[i])
        write(tmp_path / f"sys{i}.txt", "\n\n".join("\n".join(f"{t} {g} {p}" for t, g, p in zip(*row))
                                                  for row in rows) + "\n")
    assert main(["buckets", "--train", str(tmp_path / "train.txt"), "--test", str(tmp_path / "sys0.txt")]) == 0
    out = capsys.readouterr().out
    assert "eLen" in out and "tCon" in out and "n gold" in out
    # named as the report names them: systems by file stem, buckets in words (labels.bucket_label)
    assert out.startswith(f"sys0 = {tmp_path / 'sys0.txt'}") and "  1 token " in out and "(-inf" not in out
    assert main(["buckets", "--train", str(tmp_path / "train.txt"), "--test", str(tmp_path / "sys0.txt"),
                 "--test", str(tmp_path / "sys1.txt"), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "A - B: paired difference sys0 - sys1" in out and "unseen in training" in out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert main(["buckets", "--train", str(tmp_path / "train.txt"), "--test", str(tmp_path / "sys0.txt"),
                 "--test", str(tmp_path / "sys1.txt"), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    stats = TrainStats.from_corpus(train)
    a = bucket_f1(stats, Batch(test.tokens, test.tags, test.predictions[0]), detailed=True, bootstrap=0)
    assert table["systems"][str(tmp_path / "sys0.txt")]["eLen_0_f1"] == a["eLen_0_f1"]
    assert "comparison" in table and set(table["comparison"]) == set(ATTRIBUTES)
    assert main(["buckets", "--train", str(tmp_path / "train.txt"), "--test", str(tmp_path / "sys0.txt"),
                 "--lowercase", "--bootstrap", "0", "--json"]) == 0
    lowered = json.loads(capsys.readouterr().out)["systems"][str(tmp_path / "sys0.txt")]
    expected = bucket_f1(stats, Batch(test.tokens, test.tags, test.predictions[0]), lowercase=True, detailed=True,
                         bootstrap=0)
    assert lowered == json.loads(cli_json(expected))
    assert lowered != json.loads(cli_json(a))  # the demo has words whose case varies
    assert main(["buckets", "--train", str(tmp_path / "train.txt"), "--test", str(tmp_path / "sys0.txt"),
                 "--n-buckets", "1"]) == 2
    assert "n_buckets" in capsys.readouterr().err


def test_demo_buckets_are_empty_only_between_coinciding_cuts():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    result = bucket_f1(stats, Batch(test.tokens, test.tags, test.predictions[0]), detailed=True, bootstrap=0)
    empty = [(a, r["interval"]) for a, rows in result["buckets"].items() for r in rows if not r["n_gold"]]
    # 35 of the 110 demo sentences have 11 tokens: two sLen cuts fall on 11.
    assert empty == [("sLen", [11.0, 11.0])]


def test_interval_text_reads_as_written():
    from tough_ner.buckets import interval_text
    assert interval_text("tag", "LOC") == "LOC"
    assert interval_text("eCon", [0.0, 0.0]) == "0"
    assert interval_text("eLen", [4.0, math.inf]) == ">= 4"
    assert interval_text("sLen", [4.0, math.inf]) == "(4, inf)"
    assert interval_text("eCon", [0.25, 1.0]) == "(0.25, 1)"  # 1 has a bucket of its own
    assert interval_text("eFre", [0.123456, 1.0]) == "(0.1235, 1]"


def test_partial_match_credits_by_hand():
    # Gold "Paris Hilton"/PER, "Rome"/LOC; predicted "Paris"/LOC (overlaps: 0.5 under partial), "Rome"/LOC (1).
    result = bucket_f1(STATS, Batch(TOKENS, GOLD, PRED), match="partial", detailed=True, bootstrap=0)
    assert result["f1"] == 0.75
    loc, per = result["buckets"]["tag"]
    assert (loc["interval"], loc["n_gold"], loc["n_pred"]) == ("LOC", 1, 2)
    assert (loc["n_correct"], loc["n_correct_gold"]) == (1.5, 1.0)
    assert (loc["precision"], loc["recall"]) == (0.75, 1.0) and loc["f1"] == pytest.approx(6 / 7)
    assert (per["n_gold"], per["n_pred"], per["n_correct_gold"], per["recall"], per["f1"]) == (1, 0, 0.5, 0.5, 0.0)
    assert math.isnan(per["precision"])


@pytest.mark.parametrize("match", [None, "partial"])
def test_per_sentence_counts_give_the_flat_keys_and_bucket_sizes(match):
    from tough_ner.buckets import counts
    tokens = [["paris", "HILTON", "visits", "Rome"], ["Paris", "Hilton", "sings"], ["New", "York", "is", "big"]]
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "I-PER", "O"], ["B-LOC", "I-LOC", "O", "O"]]
    pred = [["B-LOC", "O", "O", "B-LOC"], ["B-PER", "I-PER", "O"], ["B-LOC", "O", "O", "B-PER"]]
    options = {} if match is None else {"match": match}  # None: the defaults of both functions
    table = counts(STATS, Batch(tokens, gold, pred), **options)
    result = bucket_f1(STATS, Batch(tokens, gold, pred), detailed=True, bootstrap=0, **options)
    point, sizes = table.point(), table.sizes()
    flat = {k: v for k, v in result.items() if k.endswith("_f1") or k == "f1"}
    assert set(flat) <= set(point) and len(flat) > 20
    for key, value in flat.items():
        assert point[key] == pytest.approx(value, nan_ok=True), key
    for attribute, rows in result["buckets"].items():
        for i, row in enumerate(rows):
            key = f"tag_{row['interval']}_f1" if attribute == "tag" else f"{attribute}_{i}_f1"
            assert sizes[key] == row["n_gold"], key
            assert point[key.replace("_f1", "_precision")] == pytest.approx(row["precision"], nan_ok=True)
            assert point[key.replace("_f1", "_recall")] == pytest.approx(row["recall"], nan_ok=True)


# ---- diagnostics on hand-made tables and flat results (fast; the mutation run uses them) ----------
def _rows(*f1s):
    return [{"interval": [float(i), float(i + 1)], "f1": f1} for i, f1 in enumerate(f1s)]


def _tables(**by_attribute):
    """Bucket tables of every attribute: the given F1s, two buckets of F1 0.5 elsewhere."""
    return {a: by_attribute.get(a, _rows(0.5, 0.5)) for a in ATTRIBUTES}


def test_self_diagnosis_by_hand():
    from tough_ner.buckets import self_diagnosis
    nan = math.nan
    diagnosis = self_diagnosis({"eLen": _rows(nan, 0.2, 0.9, 0.5), "sLen": _rows(nan, nan),
                                "eDen": _rows(0.4, 0.1, 0.4, 0.1), "tag": []})
    assert diagnosis["eLen"] == {"worst": 1, "worst_f1": 0.2, "best": 2, "best_f1": 0.9, "gap": pytest.approx(0.7)}
    assert diagnosis["eDen"] == {"worst": 1, "worst_f1": 0.1, "best": 0, "best_f1": 0.4, "gap": pytest.approx(0.3)}
    for empty in ("sLen", "tag"):  # no non-empty bucket: nothing to name
        assert diagnosis[empty]["worst"] is None and diagnosis[empty]["best"] is None
        assert all(math.isnan(diagnosis[empty][k]) for k in ("worst_f1", "best_f1", "gap"))
        assert set(diagnosis[empty]) == set(diagnosis["eLen"])
    assert list(diagnosis) == ["eLen", "sLen", "eDen", "tag"]


def test_model_wise_by_hand():
    from tough_ner.buckets import model_wise
    nan = math.nan
    measures = model_wise({"eLen": _rows(0.2, nan, 0.5, 0.9), "sLen": _rows(0.9, 0.6, nan, 0.1),
                           "eDen": _rows(nan, nan), "oDen": _rows(0.3, 0.3), "tag": _rows(0.2, 0.5, 0.9)})
    # Over the non-empty buckets: F1 rises with bucket order (rho 1) or falls (rho -1).
    assert measures["eLen"]["spearman"] == 1.0 and measures["sLen"]["spearman"] == -1.0
    assert measures["eLen"]["std"] == pytest.approx(math.sqrt(((0.2 - 8 / 15) ** 2 + (0.5 - 8 / 15) ** 2
                                                               + (0.9 - 8 / 15) ** 2) / 3))
    assert measures["sLen"]["std"] == pytest.approx(math.sqrt(((0.9 - 1.6 / 3) ** 2 + (0.6 - 1.6 / 3) ** 2
                                                               + (0.1 - 1.6 / 3) ** 2) / 3))
    assert math.isnan(measures["eDen"]["spearman"]) and math.isnan(measures["eDen"]["std"])  # all empty
    assert math.isnan(measures["oDen"]["spearman"]) and measures["oDen"]["std"] == 0.0  # constant F1
    assert math.isnan(measures["tag"]["spearman"])  # types have no order
    assert measures["tag"]["std"] == pytest.approx(np.std([0.2, 0.5, 0.9]))
    assert set(measures["eLen"]) == {"spearman", "std"}


def test_compare_by_hand():
    nan = math.nan
    tags_a = [{"interval": "LOC", "f1": 0.75}, {"interval": "PER", "f1": 0.5}]
    tags_b = [{"interval": "AAA", "f1": 0.0}, {"interval": "LOC", "f1": 0.5}, {"interval": "PER", "f1": 0.25}]
    a = {"buckets": _tables(eLen=_rows(0.9, 0.5, nan), tag=tags_a)}
    b = {"buckets": _tables(eLen=_rows(0.4, 0.75, 0.5), tag=tags_b)}
    comparison = compare(a, b)
    assert list(comparison) == list(ATTRIBUTES)
    assert comparison["eLen"]["intervals"] == [[0, 1], [1, 2], [2, 3]]
    assert comparison["eLen"]["difference"][:2] == pytest.approx([0.5, -0.25]) and math.isnan(
        comparison["eLen"]["difference"][2])
    # Types matched by name over the union, sorted; a type only one side has: NaN.
    assert comparison["tag"]["intervals"] == ["AAA", "LOC", "PER"]
    assert math.isnan(comparison["tag"]["difference"][0])
    assert comparison["tag"]["difference"][1:] == pytest.approx([0.25, 0.25])
    assert isinstance(comparison["tag"]["difference"], list) and isinstance(comparison["sLen"]["difference"], list)
    assert comparison["tag"] == {"intervals": ["AAA", "LOC", "PER"], "difference": comparison["tag"]["difference"]}
    with pytest.raises(ValueError, match="^the two results bucket sLen differently: compare results on the same test set$"):
        compare({"buckets": _tables()}, {"buckets": _tables(sLen=[{"interval": [0.0, 2.0], "f1": 0.5}, {"interval": [2.0, 3.0], "f1": 1.0}])})


def test_attribute_wise_by_hand():
    def result(rhos, zetas):
        return {"diagnostics": {"model_wise": {a: {"spearman": rhos.get(a, 0.5)} for a in ATTRIBUTES},
                                "zeta": {a: zetas.get(a, 1.0) for a in ATTRIBUTES[:-1]}}}
    one = result({"eLen": -0.5, "sLen": 1.0}, {"eLen": 1.5})
    two = result({"eLen": 1.0, "sLen": -0.25}, {"eLen": 9.0})
    table = attribute_wise([one, two])
    assert list(table) == list(ATTRIBUTES[:-1])  # no rho for the unordered types
    assert table["eLen"] == {"zeta": 1.5, "rho": 0.75}  # mean of |rho| (the first system's zeta: same test set)
    assert table["sLen"] == {"zeta": 1.0, "rho": 0.625}
    assert attribute_wise([two])["eLen"] == {"zeta": 9.0, "rho": 1.0}
    assert isinstance(table["eLen"]["rho"], float)
    with pytest.raises(ValueError, match="^attribute_wise needs at least one detailed result$"):
        attribute_wise([])


def _flat(**f1s):
    """A flat result: ``eLen=[...]`` becomes eLen_0_f1, eLen_1_f1, ...; ``tag={"LOC": ..}`` tag_LOC_f1."""
    flat = {"f1": 0.5, "n_gold": 10}
    for attribute, values in f1s.items():
        items = values.items() if isinstance(values, dict) else enumerate(values)
        for i, value in items:
            flat[f"{attribute}_{i}_f1"] = value
            flat[f"{attribute}_{i}_precision"] = 1.0  # not F1: never in a test
    return flat


def test_friedman_by_hand_and_against_scipy():
    nan = math.nan
    runs = [_flat(eLen=[0.9, 0.5, 0.2, nan], sLen=[0.1, 0.2], eCon=[0.3, 0.3, 0.3], tag={"LOC": 0.5, "PER": 0.4,
                                                                                       "ORG": 0.1}),
            _flat(eLen=[0.8, 0.6, 0.1, 0.5], sLen=[0.1, 0.2], eCon=[0.1, 0.2, 0.3], tag={"LOC": 0.6, "PER": 0.1,
                                                                                       "ORG": 0.3}),
            _flat(eLen=[0.7, 0.4, 0.3, 0.5], sLen=[0.3, 0.2], eCon=[0.3, 0.2, 0.1], tag={"LOC": 0.9, "PER": 0.8,
                                                                                       "ORG": 0.7})]
    table = friedman(runs)
    assert list(table) == list(ATTRIBUTES)
    # eLen: bucket 3 is empty in the first run and left out; the ranks within each run are 3, 2, 1:
    # chi2 = 12 / (n k (k + 1)) * sum R_j^2 - 3 n (k + 1) with n = 3 runs, k = 3 buckets = 6.
    assert table["eLen"]["statistic"] == pytest.approx(6.0) and table["eLen"]["n_buckets"] == 3
    assert table["eLen"]["p_value"] == pytest.approx(math.exp(-3.0))  # chi2 with 2 df: exp(-x / 2)
    for attribute, columns in (("eCon", [[0.3, 0.3, 0.3], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]),
                               ("tag", [[0.5, 0.4, 0.1], [0.6, 0.1, 0.3], [0.9, 0.8, 0.7]])):
        expected = scipy.stats.friedmanchisquare(*np.array(columns).T)
        assert table[attribute] == {"statistic": pytest.approx(expected.statistic),
                                    "p_value": pytest.approx(expected.pvalue), "n_buckets": 3}
        assert type(table[attribute]["statistic"]) is float and type(table[attribute]["p_value"]) is float
    # fewer than 3 buckets (2 here; none for attributes the runs lack): no test
    assert math.isnan(table["sLen"]["statistic"]) and math.isnan(table["sLen"]["p_value"])
    assert table["sLen"]["n_buckets"] == 2 and table["oDen"]["n_buckets"] == 0
    # a bucket a later run lacks counts as empty in that run (the first run's keys name the buckets)
    del runs[2]["eLen_0_f1"]
    assert friedman(runs)["eLen"]["n_buckets"] == 2 and friedman(runs[1:])["eLen"]["n_buckets"] == 3
    with pytest.raises(ValueError, match="^the Friedman test needs at least 2 runs$"):
        friedman(runs[:1])


def test_wilcoxon_by_hand_and_against_scipy():
    nan = math.nan
    runs_a = [_flat(eLen=[0.9, 0.5, nan], sLen=[0.5, 0.5], eDen=[0.9, 0.5, 0.2], tag={"LOC": 0.9}),
              _flat(eLen=[0.8, 0.6, 0.7], sLen=[0.4, 0.5], eDen=[nan, nan, nan], tag={"LOC": 0.8})]
    runs_b = [_flat(eLen=[0.1, 0.2, 0.3], sLen=[0.5, 0.5], eDen=[0.1, 0.7, 0.6], tag={"LOC": 0.1}),
              _flat(eLen=[0.5, nan, 0.0], sLen=[0.4, 0.5], eDen=[0.1, 0.7, 0.6], tag={"LOC": 0.6})]
    table = wilcoxon(runs_a, runs_b)
    assert list(table) == list(ATTRIBUTES)
    # eLen pairs (runs in order, buckets in order), the NaN ones left out: differences 0.8, 0.3, 0.3, 0.7,
    # all positive: W = 0 (the smaller rank sum), exact two-sided p = 2 / 2^4.
    assert table["eLen"]["n_pairs"] == 4 and table["eLen"]["statistic"] == 0.0
    assert table["eLen"]["p_value"] == pytest.approx(
        scipy.stats.wilcoxon([0.8, 0.3, 0.3, 0.7]).pvalue)
    # eDen: differences 0.8, -0.2, -0.4 (ranks 3, 1, 2): W = min(3, 3) = 3, and no evidence (p = 1)
    assert (table["eDen"]["statistic"], table["eDen"]["n_pairs"]) == (3.0, 3)
    assert table["eDen"]["p_value"] == pytest.approx(1.0)
    expected = scipy.stats.wilcoxon([0.9, 0.8], [0.1, 0.6])
    assert table["tag"] == {"statistic": pytest.approx(expected.statistic), "p_value": pytest.approx(expected.pvalue),
                            "n_pairs": 2}
    assert type(table["tag"]["statistic"]) is float and type(table["tag"]["p_value"]) is float
    # identical F1s: no difference to test
    assert math.isnan(table["sLen"]["statistic"]) and math.isnan(table["sLen"]["p_value"])
    assert table["sLen"]["n_pairs"] == 4 and table["oDen"]["n_pairs"] == 0
    assert wilcoxon(runs_a[:1], runs_b[:1])["eLen"]["n_pairs"] == 2
    with pytest.raises(ValueError, match="^paired runs need equal, non-zero counts: 2 vs 1$"):
        wilcoxon(runs_a, runs_b[:1])
    with pytest.raises(ValueError, match="paired runs need equal, non-zero counts: 0 vs 0"):
        wilcoxon([], [])
    with pytest.raises(ValueError, match="^the two systems have different eLen buckets$"):
        wilcoxon(runs_a, [_flat(eLen=[0.1, 0.2]), _flat(eLen=[0.1, 0.2])])


def test_significance_tests_say_they_need_scipy(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy now raises ImportError
    for call in (lambda: friedman([_flat(), _flat()]), lambda: wilcoxon([_flat()], [_flat()])):
        with pytest.raises(ImportError, match=r"^significance tests need scipy: pip install 'tough-ner\[diagnostics\]'$"):
            call()


def test_check_options_limits_and_messages():
    from tough_ner.buckets import MAX_BUCKETS, check_options
    assert MAX_BUCKETS == 100
    check_options({"eLen": 100, "tCon": 3, "eCon": 100}, {"sLen": list(range(1, 100))}, 0, 0.5)  # at the limits
    check_options(1, {a: [0.5] for a in ("eCon", "tCon", "eFre", "tFre", "oDen")}, 1, 1e-9)  # edges: n_buckets unused
    for (n_buckets, edges, bootstrap, confidence), message in (
            ((101, None, 0, 0.5), "n_buckets is at most 100 per attribute, got 101 for eLen"),
            (({"tFre": 101}, None, 0, 0.5), "got 101 for tFre"),
            ((4, {"sLen": list(range(1, 101))}, 0, 0.5), r"edges for sLen make 101 buckets; at most 100"),
            ((4, {"eCon": [i / 100 for i in range(1, 99)]}, 0, 0.5), "edges for eCon make 101 buckets"),
            ((2, None, 0, 0.5), r"eCon needs n_buckets >= 3 \(2 special\), got 2"),  # eFre (1 special) takes 2
            (({"tCon": 2}, None, 0, 0.5), r"tCon needs n_buckets >= 3 \(2 special\), got 2"),
            (({"tag": 3}, None, 0, 0.5), r"n_buckets names unknown attribute\(s\) \['tag'\]"),
            ((4, {"tag": [1]}, 0, 0.5), "edges must be {attribute: \\[cuts\\]} over eLen, sLen, eDen, oDen, eFre, "
                                        "tFre, eCon, tCon, got {'tag': \\[1\\]}"),
            ((4, [("sLen", [1])], 0, 0.5), "edges must be"),
            ((True, None, 0, 0.5), "n_buckets must be an int or {attribute: int}, got True"),
            (({"sLen": 3.0}, None, 0, 0.5), "n_buckets must be an int"),
            ((4, None, True, 0.5), "bootstrap must be a number of resamples >= 0, got True"),
            ((4, None, 2.5, 0.5), "bootstrap must be"),
            ((4, None, -1, 0.5), "bootstrap must be"),
            ((4, None, 0, 0.0), r"confidence must lie in \(0, 1\), got 0.0"),
            ((4, None, 0, 1.0), "confidence must lie in")):
        with pytest.raises(ValueError, match=message):
            check_options(n_buckets, edges, bootstrap, confidence)


def test_bucketing_parts_by_hand():
    from tough_ner.buckets import Bucketing, bucket_key, interval_text
    bucketing = make_bucketing("eFre", np.array([0.0, 0.1, 0.2, 0.3, 0.4]), 3)  # 1 special + 2 regular
    assert (bucketing.n_regular, len(bucketing), bucketing.special, bucketing.low, bucketing.high) == (2, 3, (0.0,), 0.0,
                                                                                                       math.inf)
    assert bucketing.cuts.tolist() == [0.2] and bucketing.intervals() == [[0, 0], [0, 0.2], [0.2, math.inf]]
    assert bucketing.assign(np.array([0.0, 0.2, 0.25, 1.0])).tolist() == [0, 1, 2, 2]  # 1 is no special eFre value
    labelled = Bucketing("x", [1.0], (), 0.0, 5.0, labels=[["a"], ["b"]])
    assert labelled.intervals() == [["a"], ["b"]] and labelled.assign(np.array([1.0, 1.5])).tolist() == [0, 1]
    length = make_bucketing("eLen", np.array([]), 2)
    assert length.intervals() == [[1, 1], [2, math.inf]] and length.assign(np.array([1, 2, 7])).tolist() == [0, 1, 1]
    # user edges keep the special buckets and may be empty (one regular bucket)
    assert make_bucketing("tCon", np.array([0.5]), edges=[]).intervals() == [[0, 0], [0, 1], [1, 1]]
    with pytest.raises(ValueError, match=r"edges for eCon must lie strictly between 0.0 and 1.0"):
        make_bucketing("eCon", np.array([0.5]), edges=[0.0, 0.5])
    with pytest.raises(ValueError, match=r"edges for eCon must lie strictly between 0.0 and 1.0"):
        make_bucketing("eCon", np.array([0.5]), edges=[0.5, 1.0])
    make_bucketing("sLen", np.array([5.0]), edges=[-3.0, 100.0])  # open below and above: any cut goes
    for bad in ([0.3, 0.3], [[0.1, 0.2]], [0.1, math.nan]):
        with pytest.raises(ValueError, match="edges for oDen must be increasing numbers, got"):
            make_bucketing("oDen", np.array([0.5]), edges=bad)
    with pytest.raises(ValueError, match=r"eCon needs n_buckets >= 3 \(2 special\), got 2"):
        make_bucketing("eCon", np.array([0.5]), 2)
    assert make_bucketing("sLen", np.array([2.0, 4.0]), 1).intervals() == [[-math.inf, math.inf]]
    # regular cuts come from the non-special gold values only
    assert make_bucketing("eCon", np.array([0.0] * 5 + [1.0] * 5 + [0.2, 0.6]), 4).cuts.tolist() == [0.2]
    assert make_bucketing("eCon", np.array([0.0, 1.0]), 4).cuts.tolist() == [1.0]  # none: at the upper bound
    assert make_bucketing("sLen", np.array([]), 3).cuts.tolist() == [math.inf, math.inf]
    assert [bucket_key("eLen", 2, [3, 3], m) for m in ("f1", "precision", "recall")] == [
        "eLen_2_f1", "eLen_2_precision", "eLen_2_recall"]
    assert bucket_key("tag", 0, "LOC") == "tag_LOC_f1" and bucket_key("tag", 3, "PER", "recall") == "tag_PER_recall"
    assert bucket_key("sLen", 1, [2, 4]) == "sLen_1_f1"
    assert interval_text("tCon", [0.5, 1.0]) == "(0.5, 1)" and interval_text("eFre", [0.0, 0.0]) == "0"
    assert interval_text("sLen", [-math.inf, 3.0]) == "(-inf, 3]" and interval_text("tFre", [0.1, math.inf]) == "(0.1, inf)"
    assert interval_text("eLen", [2.0, 2.0]) == "2" and interval_text("eCon", [0.123456, 0.25]) == "(0.1235, 0.25]"


def test_counts_take_the_options_of_bucket_f1():
    from tough_ner.buckets import counts
    tokens = [["paris", "HILTON", "visits", "Rome"], ["Paris", "Hilton", "sings"]]
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "I-PER", "O"]]
    pred = [["B-PER", "I-PER", "O", "B-LOC"], ["B-LOC", "O", "O"]]
    batch = Batch(tokens, gold, pred)
    options = {"lowercase": True, "edges": {"sLen": [3.5], "eCon": [0.25]}, "n_buckets": {"eCon": 2}}
    point = counts(STATS, batch, **options).point()
    expected = bucket_f1(STATS, batch, detailed=True, bootstrap=0, **options)
    assert len(expected["buckets"]["sLen"]) == 2 and "sLen_2_f1" not in point and "eCon_3_f1" in point
    # lowercased, "paris HILTON" is the PER "Paris Hilton" of training: eCon 1/2, not 0
    assert [r["n_gold"] for r in expected["buckets"]["eCon"]] == [1, 0, 2, 0]
    for attribute, rows in expected["buckets"].items():
        for i, row in enumerate(rows):
            key = f"tag_{row['interval']}_f1" if attribute == "tag" else f"{attribute}_{i}_f1"
            assert point[key] == pytest.approx(row["f1"], nan_ok=True), key
    # strict matching: one correct count per key serves precision and recall (no separate gold credit)
    strict = counts(STATS, batch)
    assert strict.keys["f1"][0] == "f1" and len(strict.keys["f1"]) == 4
    assert not any(name.endswith("/found") for name in strict.names)
    assert any(name.endswith("/found") for name in counts(STATS, batch, match="partial").names)
    with pytest.raises(ValueError, match="^bucket_f1 needs predictions$"):
        counts(STATS, Batch(tokens, gold))
    with pytest.raises(ValueError, match="n_buckets"):
        counts(STATS, batch, n_buckets={"eCon": 2})
    with pytest.raises(ValueError, match="match"):
        counts(STATS, batch, match="fuzzy")


def _plain_bootstrap(tokens, gold, pred, n_resamples, seed):
    """Flat results of bucket_f1 on each resample of the engine's stream (sentences in content-hash order)."""
    order = np.argsort(Batch(tokens, gold, pred).sentence_keys, kind="stable")
    draws = np.random.default_rng([seed, 0]).integers(0, len(tokens), size=(n_resamples, len(tokens)))
    return [bucket_f1(STATS, Batch([tokens[i] for i in d], [gold[i] for i in d], [pred[i] for i in d]), bootstrap=0)
            for d in order[draws]]


def test_intervals_options_equal_a_plain_loop():
    tokens, gold, pred = random_batch(17, n_sentences=24)
    batch = Batch(tokens, gold, pred)
    assert len(set(batch.sentence_keys.tolist())) == len(tokens)
    loop = _plain_bootstrap(tokens, gold, pred, 120, 5)

    def quantiles(key, n, confidence):
        return np.nanquantile([r[key] for r in loop[:n]], [(1 - confidence) / 2, (1 + confidence) / 2]).tolist()

    keys = ("f1", "tag_PER_f1", "eLen_0_f1", "tCon_2_f1")
    # ci: n_resamples defaults to bootstrap; n_resamples wins when given; confidence and seed are used
    for options, n in (({"bootstrap": 120}, 120), ({"bootstrap": 120, "n_resamples": 80}, 80)):
        result = bucket_f1(STATS, batch, ci=True, confidence=0.9, seed=5, **options)
        for key in keys:
            assert [result[f"{key}_ci_low"], result[f"{key}_ci_high"]] == pytest.approx(quantiles(key, n, 0.9)), key
        assert "buckets" not in result and "diagnostics" not in result
    # detailed: the diagnostics' intervals, with the same options
    detailed = bucket_f1(STATS, batch, detailed=True, bootstrap=120, confidence=0.8, seed=5)
    ranges = detailed["diagnostics"]["bootstrap"]
    assert ranges["f1"] == pytest.approx(quantiles("f1", 120, 0.8))
    per = [row["interval"] for row in detailed["buckets"]["tag"]].index("PER")
    assert ranges["tag"][per] == pytest.approx(quantiles("tag_PER_f1", 120, 0.8))
    assert ranges["eLen"][0] == pytest.approx(quantiles("eLen_0_f1", 120, 0.8))
    assert not any(key.endswith("_ci_low") for key in detailed)  # intervals only when asked for
    # documented defaults: bootstrap=1000, confidence=0.95, seed=0, 1000 resamples for ci when neither
    # n_resamples nor bootstrap gives a number
    def ranges(**options):
        return json.dumps(bucket_f1(STATS, batch, detailed=True, **options)["diagnostics"]["bootstrap"])
    assert ranges() == ranges(bootstrap=1000, confidence=0.95, seed=0)
    assert ranges() not in (ranges(bootstrap=999), ranges(confidence=0.9), ranges(seed=1))
    assert json.dumps(bucket_f1(STATS, batch, ci=True)) == json.dumps(bucket_f1(STATS, batch, ci=True, n_resamples=1000))
    default = json.dumps(bucket_f1(STATS, batch, ci=True, bootstrap=0))
    assert default == json.dumps(bucket_f1(STATS, batch, ci=True, n_resamples=1000))
    assert default != json.dumps(bucket_f1(STATS, batch, ci=True, n_resamples=999))
    # the unit reaches the resampling (these sentences have no document ids)
    for options in ({"ci": True}, {"detailed": True, "bootstrap": 10}):
        with pytest.raises(ValueError, match="unit='document' needs document ids"):
            bucket_f1(STATS, batch, unit="document", **options)


def test_entity_free_input_gives_nan_diagnostics_without_numpy_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "mean of empty slice" reaches the user
        result = bucket_f1(STATS, Batch([["a", "b"]], [["O", "O"]], [["O", "O"]]), detailed=True, bootstrap=0)
    diagnostics = result["diagnostics"]
    assert set(diagnostics["zeta"]) == set(ATTRIBUTES[:-1]) and all(map(math.isnan, diagnostics["zeta"].values()))
    assert all(math.isnan(m["std"]) and math.isnan(m["spearman"]) for m in diagnostics["model_wise"].values())
    assert all(d["worst"] is None for d in diagnostics["self"].values())


def test_hallucinated_mentions_are_predictions_of_the_overall_f1_only():
    from tough_ner import as_batch
    from tough_ner.buckets import counts
    mentions = [[{"text": "Paris Hilton", "type": "PER"}, {"text": "Rome", "type": "LOC"},
                 {"text": "Atlantis", "type": "LOC"}]]
    batch = as_batch(TOKENS, GOLD, mentions)
    assert batch.hallucinated == [[{"text": "Atlantis", "type": "LOC"}]]
    # both gold entities found, 3 predictions: P = 2/3, R = 1, F1 = 0.8
    result = bucket_f1(STATS, batch, detailed=True, bootstrap=0)
    table = counts(STATS, batch)
    point, sizes = table.point(), table.sizes()
    assert result["f1"] == pytest.approx(0.8) and point["f1"] == pytest.approx(0.8)
    assert point["precision"] == pytest.approx(2 / 3) and point["recall"] == 1.0 and sizes["f1"] == 2
    # in no bucket: each bucket's precision counts only placed predictions
    assert sum(r["n_pred"] for r in result["buckets"]["eLen"]) == 2 and point["eLen_0_precision"] == 1.0
    assert result["n_hallucinated"] == 1
    assert result["hallucinated"] == [{"sentence": 0, "text": "Atlantis", "type": "LOC"}]  # listed when detailed
    assert "hallucinated" not in bucket_f1(STATS, batch)


def test_cached_attribute_values_follow_statistics_match_and_casing():
    tokens = [["paris", "HILTON", "visits", "Rome"], ["Paris", "Hilton", "sings"]]
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "I-PER", "O"]]
    pred = [["B-PER", "O", "O", "B-LOC"], ["B-LOC", "O", "O"]]
    other = TrainStats.from_lists([["Rome", "is", "Rome"]], [["B-LOC", "O", "B-PER"]])
    shared = Batch(tokens, gold, pred)  # one batch scored several ways: its cache must tell them apart
    for stats, options in ((STATS, {}), (STATS, {"match": "partial"}), (STATS, {"lowercase": True}), (other, {}),
                           (STATS, {"lowercase": True, "match": "partial"})):
        expected = bucket_f1(stats, Batch(tokens, gold, pred), detailed=True, bootstrap=0, **options)
        assert json.dumps(bucket_f1(stats, shared, detailed=True, bootstrap=0, **options)) == json.dumps(expected)


def test_lowercase_silences_the_casing_warning():
    import warnings
    from tough_ner.checks import InputWarning
    tokens, gold = [["PARIS", "HILTON", "is"]], [["B-PER", "I-PER", "O"]]
    with pytest.warns(InputWarning, match="differ in casing"):
        bucket_f1(STATS, Batch(tokens, gold, gold))
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        assert bucket_f1(STATS, Batch(tokens, gold, gold), lowercase=True)["f1"] == 1.0


def test_table_rows_per_attribute_and_matching():
    batch = Batch(TOKENS, GOLD, PRED)
    sizes = {"sLen": 2, "eCon": 5, "tFre": 3}
    strict = bucket_f1(STATS, batch, n_buckets=sizes, detailed=True, bootstrap=0)["buckets"]
    partial = bucket_f1(STATS, batch, n_buckets=sizes, detailed=True, bootstrap=0, match="partial")["buckets"]
    for attribute in ATTRIBUTES[:-1]:  # the unnamed attributes keep the default of 4 buckets
        assert len(strict[attribute]) == len(partial[attribute]) == sizes.get(attribute, 4), attribute
    assert strict["eCon"][-1]["n_gold"] == 0  # an empty last bucket still has its row under partial credits
    # strict: whole counts; credits: fractional counts and the gold side's own credit
    keys = {"interval", "n_gold", "n_pred", "n_correct", "precision", "recall", "f1"}
    assert all(set(row) == keys and type(row["n_correct"]) is int for rows in strict.values() for row in rows)
    assert all(set(row) == keys | {"n_correct_gold"} and type(row["n_correct"]) is float
               for rows in partial.values() for row in rows)


def test_attribute_values_of_one_token_sentences_and_types_unknown_to_training():
    # "Rome" alone: 1 gold entity in 1 token, the token unseen in training
    one = attribute_values(STATS, Batch([["Rome"], ["Paris"]], [["B-LOC"], ["B-LOC"]], [["B-LOC"], ["B-MISC"]]))
    assert one["gold"]["span"]["eDen"].tolist() == [1.0, 1.0] and one["gold"]["span"]["oDen"].tolist() == [1.0, 0.0]
    assert one["gold"]["span"]["sLen"].tolist() == [1.0, 1.0]
    # "Paris" is LOC, PER and O once each in training, never MISC: tCon 0 for the MISC prediction
    assert one["pred"]["token"]["tCon"].tolist() == [0.0, 0.0] and one["gold"]["token"]["tCon"].tolist() == [0.0, 1 / 3]
    assert one["pred"]["token"]["tFre"].tolist() == [0.0, 3 / 14]
    # "Paris Hilton" is a training mention (eFre 1/4), but never a LOC one: eCon 0
    other_type = attribute_values(STATS, Batch(TOKENS, GOLD, [["B-LOC", "I-LOC", "O", "O"]]))["pred"]["span"]
    assert other_type["eFre"].tolist() == [0.25] and other_type["eCon"].tolist() == [0.0]


def test_a_plain_score_builds_no_per_sentence_counts(monkeypatch):
    import tough_ner.buckets as buckets

    def refuse(*args, **kwargs):
        raise AssertionError("per-sentence counts built for a plain score")
    expected = bucket_f1(STATS, Batch(TOKENS, GOLD, PRED))
    monkeypatch.setattr(buckets, "_counts", refuse)
    assert json.dumps(bucket_f1(STATS, Batch(TOKENS, GOLD, PRED))) == json.dumps(expected)  # no intervals asked for
    assert "buckets" in bucket_f1(STATS, Batch(TOKENS, GOLD, PRED), detailed=True, bootstrap=0)


def test_token_items_are_right_by_type_or_by_position_as_the_matching_says():
    # Gold "Paris Hilton"/PER, "Rome"/LOC; predicted "Paris"/LOC, "Rome"/LOC (types: LOC = 0, PER = 1).
    batch = Batch(TOKENS, GOLD, PRED)
    for match, gold_right, pred_right in (("strict", [False, False, True], [False, True]),
                                          ("type", [False, False, True], [False, True]),
                                          ("exact", [True, False, True], [True, True]),  # any type labels it
                                          ("partial", [True, False, True], [True, True])):
        sides = attribute_values(STATS, batch, match=match)
        assert sides["gold"]["token"]["correct"].tolist() == gold_right, match
        assert sides["pred"]["token"]["correct"].tolist() == pred_right, match


def test_consistency_one_from_a_single_training_occurrence():
    # "New York" and "France" occur once each in training, both as LOC mentions: eCon = tCon = 1/1
    tokens, tags = [["New", "York", "in", "France"]], [["B-LOC", "I-LOC", "O", "B-LOC"]]
    gold = attribute_values(STATS, Batch(tokens, tags, tags))["gold"]
    assert gold["span"]["eCon"].tolist() == [1.0, 1.0] and gold["token"]["tCon"].tolist() == [1.0, 1.0, 1.0]
    assert gold["span"]["eFre"].tolist() == [0.25, 0.25]
    rows = bucket_f1(STATS, Batch(tokens, tags, tags), detailed=True, bootstrap=0)["buckets"]["eCon"]
    assert rows[-1]["interval"] == [1.0, 1.0] and rows[-1]["n_gold"] == 2


def test_spearman_of_a_constant_is_nan_without_numpy_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(spearman([1, 2, 3], [5, 5, 5])) and math.isnan(spearman([1], [2]))
        assert spearman([1, 2, 3], [3, 1, 2]) == pytest.approx(-0.5)  # d = (-2, 1, 1): 1 - 6 * 6 / (3 * 8)


def test_partial_match_intervals_resample_the_credits():
    from tough_ner.buckets import counts
    from tough_ner.uncertainty import intervals
    tokens, gold, pred = random_batch(11, n_sentences=12)
    batch = Batch(tokens, gold, pred)
    result = bucket_f1(STATS, batch, match="partial", ci=True, n_resamples=60, seed=3)
    # the per-sentence credits (test_per_sentence_counts_give_the_flat_keys_and_bucket_sizes checks them)
    table = counts(STATS, batch, match="partial")
    keys = [key for key in result if key == "f1" or key.endswith("_f1") and key[:-3] + "_recall" in table.keys]
    expected = intervals(table, keys, 60, 0.95, 3)
    assert len(keys) > 20
    for key in keys:
        assert [result[f"{key}_ci_low"], result[f"{key}_ci_high"]] == pytest.approx(expected[key], nan_ok=True), key
