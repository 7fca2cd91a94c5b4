"""Macro and support-weighted averages over types, and F-beta (issue #37): against seqeval's
``classification_report`` (macro avg, weighted avg) on CoNLL-2003 and on random tag sequences,
F-beta against scikit-learn's ``fbeta_score`` and seqeval's ``beta``, hand-made fixtures for
the types without gold or predicted mentions, and the macro F1 through the resampling engine."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import classification_report
from seqeval.metrics.sequence_labeling import precision_recall_fscore_support

from tough_ner import uncertainty
from tough_ner.batch import Batch
from tough_ner.matching import SCHEMES, match_scores
from tough_ner.scoring import averages, fbeta, span_scores

NAMES = {"precision": "precision", "recall": "recall", "f1": "f1-score"}


def _seqeval(gold, pred, **mode):
    with warnings.catch_warnings():  # seqeval warns where its zero_division default applies
        warnings.simplefilter("ignore")
        return classification_report(gold, pred, output_dict=True, **mode)


def _assert_averages_equal_seqeval(ours, gold, pred, **mode):
    theirs = _seqeval(gold, pred, **mode)
    if not set(theirs) - {"micro avg", "macro avg", "weighted avg"}:
        # no type at all: NaN, an empty subset (seqeval: macro NaN, its mean of nothing, weighted 0)
        assert all(math.isnan(ours[f"{a}_{n}"]) for a in ("macro", "weighted") for n in NAMES)
        return
    for average in ("macro", "weighted"):
        for name, their_name in NAMES.items():
            assert ours[f"{average}_{name}"] == pytest.approx(float(theirs[f"{average} avg"][their_name]), abs=1e-12), (
                average, name)


def test_averages_equal_seqeval_on_conll2003(conll_stats, conll_test):
    from tough_ner import tmr
    from tough_ner.baselines import memorization

    test = conll_test
    predicted = memorization(conll_stats, test.tokens)
    batch = Batch(test.tokens, test.tags, predicted)
    _assert_averages_equal_seqeval(span_scores(batch), test.tags, predicted)
    result = tmr(conll_stats, batch)
    _assert_averages_equal_seqeval(result, test.tags, predicted)
    # the strict scheme's per-type tables are the exact-match ones: the same averages
    strict = match_scores(batch)["strict"]
    _assert_averages_equal_seqeval(strict, test.tags, predicted)


TAGS = st.sampled_from(["O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-MISC"])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 6).flatmap(lambda n: st.tuples(st.lists(TAGS, min_size=n, max_size=n),
                                                              st.lists(TAGS, min_size=n, max_size=n))),
                min_size=1, max_size=6))
def test_averages_equal_seqeval_on_random_sequences(pairs):
    gold, pred = [g for g, _ in pairs], [p for _, p in pairs]
    batch = Batch([["w"] * len(g) for g in gold], gold, pred)
    ours = span_scores(batch)
    _assert_averages_equal_seqeval(ours, gold, pred)
    assert {k: v for k, v in match_scores(batch)["strict"].items() if k.startswith(("macro", "weighted"))} == \
        pytest.approx({k: v for k, v in ours.items() if k.startswith(("macro", "weighted"))}, nan_ok=True)


STRICT_SCHEMES = {"IOB2": ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG"],
                  "BIOES": ["O", "B-PER", "I-PER", "E-PER", "S-LOC", "B-LOC", "E-LOC", "I-ORG", "S-ORG"]}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(STRICT_SCHEMES)).flatmap(lambda scheme: st.tuples(st.just(scheme), st.lists(
    st.integers(1, 6).flatmap(lambda n: st.tuples(*[st.lists(st.sampled_from(STRICT_SCHEMES[scheme]), min_size=n,
                                                             max_size=n)] * 2)), min_size=1, max_size=6))))
def test_strict_mode_averages_equal_seqeval_strict_classification_report(case):
    """Strict decoding and the averages together: seqeval's classification_report with
    mode="strict" and the scheme, on random sequences (invalid ones included)."""
    from seqeval.scheme import IOB2, IOBES

    scheme, pairs = case
    gold, pred = [g for g, _ in pairs], [p for _, p in pairs]
    ours = span_scores(Batch([["w"] * len(g) for g in gold], gold, pred, scheme=scheme, mode="strict"))
    _assert_averages_equal_seqeval(ours, gold, pred, mode="strict", scheme={"IOB2": IOB2, "BIOES": IOBES}[scheme])


def test_types_without_gold_or_predictions_follow_seqeval_zero_division():
    gold = [["B-PER", "O", "B-LOC", "O"]]
    pred = [["B-PER", "B-ORG", "O", "O"]]  # ORG only predicted, LOC only in gold
    ours = span_scores(Batch([["w"] * 4], gold, pred))
    # per type (P, R, F1): PER (1, 1, 1), LOC (0 for no prediction, 0, 0), ORG (0, 0 for no gold, 0)
    assert ours["macro_precision"] == ours["macro_recall"] == ours["macro_f1"] == pytest.approx(1 / 3)
    assert ours["weighted_f1"] == 0.5  # supports 1, 1, 0: ORG weighs nothing
    # tough-ner's own per-type table keeps NaN where a denominator is empty
    assert math.isnan(ours["per_type"]["LOC"]["precision"]) and math.isnan(ours["per_type"]["ORG"]["recall"])
    _assert_averages_equal_seqeval(ours, gold, pred)
    nothing = span_scores(Batch([["w", "w"]], [["O", "O"]], [["O", "O"]]))
    assert all(math.isnan(nothing[f"{a}_{n}"]) for a in ("macro", "weighted") for n in NAMES)
    only_predicted = span_scores(Batch([["w", "w"]], [["O", "O"]], [["B-PER", "O"]]))
    assert only_predicted["macro_f1"] == 0 and only_predicted["weighted_f1"] == 0  # no support: 0, as seqeval
    _assert_averages_equal_seqeval(only_predicted, [["O", "O"]], [["B-PER", "O"]])


@pytest.mark.parametrize("tp,fp,fn", [(3, 1, 2), (1, 0, 4), (0, 2, 3), (5, 5, 0), (7, 2, 9)])
@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0, 3.0])
def test_fbeta_equals_scikit_learn(tp, fp, fn, beta):
    from sklearn.metrics import fbeta_score

    y_true = [1] * tp + [0] * fp + [1] * fn
    y_pred = [1] * tp + [1] * fp + [0] * fn
    precision = tp / (tp + fp) if tp + fp else math.nan
    recall = tp / (tp + fn) if tp + fn else math.nan
    theirs = fbeta_score(y_true, y_pred, beta=beta, zero_division=0)
    assert fbeta(precision, recall, beta, tp + fn, tp + fp) == pytest.approx(theirs, abs=1e-12)
    # by hand: (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)
    assert theirs == pytest.approx((1 + beta ** 2) * tp / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp))


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_f_beta_keys_equal_seqeval_beta(beta):
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "B-PER", "O"], ["B-LOC", "O", "O", "O"]]
    pred = [["B-PER", "I-PER", "O", "O"], ["B-ORG", "O", "B-LOC", "B-PER"], ["B-LOC", "B-ORG", "O", "O"]]
    batch = Batch([["w"] * 4] * 3, gold, pred)
    ours = span_scores(batch, beta=beta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for average, key in (("micro", "f_beta"), ("macro", "macro_f_beta"), ("weighted", "weighted_f_beta")):
            assert ours[key] == pytest.approx(precision_recall_fscore_support(gold, pred, average=average,
                                                                              beta=beta)[2], abs=1e-12), average
        per_type = precision_recall_fscore_support(gold, pred, average=None, beta=beta)[2]
    assert [ours["per_type"][t]["f_beta"] for t in sorted(ours["per_type"])] == pytest.approx(list(per_type))
    assert "f_beta" not in span_scores(batch) and span_scores(batch)["f1"] == ours["f1"]  # beta 1: F1 only
    table = match_scores(batch, beta=beta)
    assert table["strict"]["f_beta"] == pytest.approx(ours["f_beta"])
    assert table["strict"]["macro_f_beta"] == pytest.approx(ours["macro_f_beta"])
    for bad in (0, -1, math.inf, "2", True):
        with pytest.raises(ValueError, match="beta"):
            span_scores(batch, beta=bad)


def test_partial_scheme_averages_by_hand():
    # PER: a prediction one token short (PAR, 0.5); LOC: exact (COR); ORG: spurious
    gold = [["B-PER", "I-PER", "O", "B-LOC", "O"]]
    pred = [["B-PER", "O", "B-ORG", "B-LOC", "O"]]
    table = match_scores(Batch([["w"] * 5], gold, pred))["partial"]
    # PER: P = R = 0.5, F 0.5; LOC: 1, 1, 1; ORG: 0, 0, 0 (no gold)
    assert table["macro_precision"] == pytest.approx(1.5 / 3) and table["macro_f1"] == pytest.approx(1.5 / 3)
    assert table["weighted_recall"] == pytest.approx((0.5 + 1) / 2)
    assert set(SCHEMES) <= set(match_scores(Batch([["w"] * 5], gold, pred)))


def _demo_counts(beta=1.0, match="strict"):
    from tough_ner import TrainStats
    from tough_ner.demo import load_demo
    from tough_ner.methods.tmr import counts

    train, test = load_demo()
    stats = TrainStats.from_lists(train.tokens, train.tags)
    batches = [Batch(test.tokens, test.tags, predicted) for predicted in test.predictions]
    return [counts(stats, batch, match, beta) for batch in batches], batches


AVERAGED = uncertainty.AVERAGE_KEYS  # macro_precision ... weighted_f1
F_BETA = ("f_beta", "macro_f_beta", "weighted_f_beta")


def test_averages_through_the_engine_are_the_averages_of_each_resample():
    (a, b), batches = _demo_counts()
    assert a.point() == pytest.approx({**a.point(), **{k: span_scores(batches[0])[k] for k in AVERAGED}})
    matrix, strata = uncertainty.units([a])
    totals = uncertainty.resample_weights(strata, 40, 3) @ matrix
    values = uncertainty.resampled_values(a, AVERAGED, 40, 3)
    columns = a.keys["macro_f1"][1:]
    assert all(a.keys[key][1:] == columns for key in AVERAGED)  # one set of count columns for the six
    for r in range(40):
        c, g, p, _ = (totals[r, [a.names[x] for x in columns[i::4]]] for i in range(4))
        expected = averages(c, p, c, g)
        assert {key: values[key][r] for key in AVERAGED} == pytest.approx({k: expected[k] for k in AVERAGED},
                                                                         abs=1e-12)
    table = uncertainty.analyse({"a": a, "b": b}, AVERAGED, 300)
    for key in AVERAGED:
        low, high = table[key]["ci"]["a"]
        assert low <= table[key]["values"]["a"] <= high and 0 <= table[key]["tests"][0]["p_value"] <= 1, key
    same = uncertainty.analyse({"a": a, "a again": a}, AVERAGED, 50)
    assert all(same[key]["tests"][0]["p_value"] == 1.0 for key in AVERAGED)
    # each average's n: the predictions for the precisions, the gold mentions for the others (as micro)
    predicted, gold = len(batches[0].span_arrays("pred")[0]), len(batches[0].span_arrays("gold")[0])
    assert predicted != gold
    assert {key: table[key]["n"]["a"] for key in AVERAGED} == {
        key: predicted if key.endswith("_precision") else gold for key in AVERAGED}


@pytest.mark.parametrize("match", ["strict", "partial"])
def test_f_beta_through_the_engine_is_the_f_beta_of_each_resample(match):
    """tmr's f_beta, macro_f_beta and weighted_f_beta as formulas of the resampling engine: at
    the totals they are tmr's values; in each resample, the F-beta of that resample's totals
    (scoring.fbeta over its precision and recall; scoring.averages over its types)."""
    from tough_ner.scoring import fbeta
    from tough_ner import TrainStats, tmr
    from tough_ner.demo import load_demo

    (a, _), batches = _demo_counts(2.0, match)
    train, _ = load_demo()
    result = tmr(TrainStats.from_lists(train.tokens, train.tags), batches[0], match=match, beta=2.0)
    assert {k: a.point()[k] for k in F_BETA} == pytest.approx({k: result[k] for k in F_BETA}, abs=1e-12)
    matrix, strata = uncertainty.units([a])
    totals = uncertainty.resample_weights(strata, 30, 1) @ matrix
    values = uncertainty.resampled_values(a, F_BETA, 30, 1)
    c, g, p, *r = (a.names[x] for x in a.keys["f_beta"][1:])
    columns = a.keys["macro_f_beta"][1:]
    for k in range(30):
        found = totals[k, r[0]] if r else totals[k, c]
        precision, recall = totals[k, c] / totals[k, p], found / totals[k, g]
        assert values["f_beta"][k] == pytest.approx(fbeta(precision, recall, 2.0, totals[k, g], totals[k, p]))
        tc, tg, tp, tr = (totals[k, [a.names[x] for x in columns[i::4]]] for i in range(4))
        expected = averages(tc, tp, tr, tg, beta=2.0)
        assert values["macro_f_beta"][k] == pytest.approx(expected["macro_f_beta"], abs=1e-12)
        assert values["weighted_f_beta"][k] == pytest.approx(expected["weighted_f_beta"], abs=1e-12)
    ci = tmr(TrainStats.from_lists(train.tokens, train.tags), batches[0], match=match, beta=2.0, ci=True,
             n_resamples=100)
    assert all(ci[f"{k}_ci_low"] <= ci[k] <= ci[f"{k}_ci_high"] for k in F_BETA)


def test_average_intervals_equal_a_slow_reference_bootstrap():
    """tmr(ci=True)'s intervals of the six averages against a bootstrap by hand: each resample
    (the engine's draws: the same weights over the sentences in their canonical order) made as
    a batch of its sentences and scored by span_scores, the percentiles taken by numpy."""
    from tough_ner import TrainStats, tmr

    gold = [["B-PER", "I-PER", "O"], ["B-LOC", "O", "B-ORG"], ["O", "B-MISC", "O"], ["B-PER", "O", "B-LOC"],
            ["B-ORG", "I-ORG", "O"], ["O", "O", "B-PER"], ["B-LOC", "O", "O"], ["B-MISC", "O", "B-ORG"]]
    pred = [["B-PER", "I-PER", "O"], ["B-LOC", "O", "O"], ["O", "B-ORG", "O"], ["B-PER", "O", "B-PER"],
            ["B-ORG", "O", "O"], ["O", "O", "B-PER"], ["O", "O", "B-LOC"], ["B-MISC", "O", "B-ORG"]]
    # 24 sentences (an interval needs 20 units): each gold line three times, with the prediction
    # of its own line, then of others
    gold, pred = [gold[s % 8] for s in range(24)], [pred[(s + s // 8) % 8] for s in range(24)]
    tokens = [[f"w{s}_{i}" for i in range(3)] for s in range(len(gold))]  # distinct sentences
    batch = Batch(tokens, gold, pred)
    stats = TrainStats.from_lists(tokens[:2], gold[:2])
    ours = tmr(stats, batch, ci=True, n_resamples=200, seed=5)
    order = np.argsort(batch.sentence_keys, kind="stable")  # the canonical order of distinct sentences
    weights = uncertainty.resample_weights(np.zeros(len(gold), dtype=np.int64), 200, 5)
    drawn = {key: [] for key in AVERAGED}
    for row in weights:
        chosen = [int(s) for s, k in zip(order, row) for _ in range(int(k))]
        scores = span_scores(Batch([tokens[s] for s in chosen], [gold[s] for s in chosen], [pred[s] for s in chosen]))
        for key in AVERAGED:
            drawn[key].append(scores[key])
    for key in AVERAGED:
        low, high = np.nanpercentile(drawn[key], [2.5, 97.5])
        assert (ours[f"{key}_ci_low"], ours[f"{key}_ci_high"]) == pytest.approx((low, high), abs=1e-12), key
        assert low <= ours[key] <= high, key


@pytest.mark.parametrize("key", AVERAGED + F_BETA)
def test_average_normal_approximation_agrees_with_random_swaps(key):
    """The paired test's normal approximation for each average over types and for F-beta (its
    delta-method contributions) against the share of many random swaps of the units whose
    counts differ."""
    (a, b), _ = _demo_counts(2.0 if "beta" in key else 1.0)
    test = uncertainty.analyse({"a": a, "b": b}, [key], 50)[key]["tests"][0]
    matrix, _ = uncertainty.units([a, b])
    width = len(a.columns)
    delta = matrix[:, :width] - matrix[:, width:]
    rng = np.random.default_rng(0)
    total_a, total_b = matrix[:, :width].sum(axis=0), matrix[:, width:].sum(axis=0)
    observed = abs(test["difference"])
    swaps = rng.integers(0, 2, size=(4000, len(matrix))).astype(float)
    moved = swaps @ delta
    value = uncertainty.evaluate(a.keys, a.names, total_a - moved, [key])[key] - \
        uncertainty.evaluate(a.keys, a.names, total_b + moved, [key])[key]
    share = float(np.mean(np.abs(value) >= observed - 1e-12))
    assert test["units_differ"] > uncertainty.EXACT_UNITS
    assert test["p_value"] == pytest.approx(share, abs=0.03)


def test_the_tmr_metric_takes_beta_at_load_time_and_per_compute():
    from tough_ner import TrainStats, tmr
    from tough_ner.demo import load_demo
    from tough_ner.metrics.tmr import Tmr

    train, test = load_demo()
    stats = TrainStats.from_lists(train.tokens, train.tags)
    inputs = dict(predictions=test.predictions[0], references=test.tags, tokens=test.tokens)
    ours = tmr(stats, Batch(test.tokens, test.tags, test.predictions[0]), beta=0.5)
    loaded = Tmr(train=stats, beta=0.5, keep_in_memory=True).compute(**inputs, detailed=True)
    assert {k: loaded[k] for k in F_BETA} == pytest.approx({k: ours[k] for k in F_BETA})
    assert loaded["match_scores"]["strict"]["f_beta"] == pytest.approx(ours["f_beta"])  # the match table too
    per_call = Tmr(train=stats, keep_in_memory=True)
    assert per_call.compute(**inputs, beta=0.5)["f_beta"] == pytest.approx(ours["f_beta"])
    assert not set(F_BETA) & set(per_call.compute(**inputs))  # beta 1: F1 only
    with pytest.raises(ValueError, match="beta"):
        per_call.compute(**inputs, beta=-1)
