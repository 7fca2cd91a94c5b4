"""The resampling engine's parts, each against an independent reference: numpy's percentiles,
Holm's procedure run step by step, the exact permutation test by enumeration, hand-made counts."""
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tough_ner import uncertainty
from tough_ner.uncertainty import (UNITS, Counts, adjust, aggregate_runs, analyse, check_options, evaluate, holm,
                                   per_sentence, pooled, resample_weights, resampled_totals, sentence_keys, units)


def table_of(*columns, order=None, strata=None, documents=None):
    n = len(columns[0])
    return Counts(np.arange(n, dtype=np.uint64) if order is None else order, strata, documents)


# ---- counts and formulas --------------------------------------------------------------------
def test_sentence_keys_hash_tokens_and_tags_apart():
    keys = sentence_keys([["a", "b"], ["ab"], ["a", "b"], ["a", "b"], ["a", "b"]],
                         [["O", "O"], ["O"], ["O", "B-X"], ["O", "O"], ["OO", ""]])
    assert keys.dtype == np.uint64 and len(keys) == 5
    assert keys[0] == keys[3]                       # the same content, the same key
    assert len({int(k) for k in keys}) == 4         # token joins, tags and tag joins all count
    # a lone surrogate (a token read from badly decoded text) is hashed, not an error
    broken = sentence_keys([["\ud800"], ["\udc00"], ["a"], ["a"]], [["O"], ["O"], ["\ud800"], ["\udc00"]])
    assert len(set(broken.tolist())) == 4
    # 64 bits of the hash, not a small number: keys spread over the whole range
    many = sentence_keys([[str(i)] for i in range(200)], [["O"]] * 200)
    assert many.max() > 2 ** 62


def test_per_sentence_counts_items_selected_by_where():
    sentences = np.array([0, 2, 2, 3])
    assert per_sentence(sentences, 5).tolist() == [1, 0, 2, 1, 0]
    assert per_sentence(sentences, 5, np.array([True, False, True, True])).tolist() == [1, 0, 1, 1, 0]
    assert per_sentence(sentences, 5).dtype == float


def test_columns_keys_sizes_and_formulas_by_hand():
    table = Counts(np.arange(3, dtype=np.uint64))
    assert len(table) == 3 and table.matrix().shape == (3, 0)
    table.ratio("rate", [1, 0, 2], [2, 2, 4])                 # 3 / 8
    table.prf([1, 1, 0], [2, 1, 1], [1, 2, 2])                 # c 2, g 4, p 5
    table.derive("both", "mean", "rate", "recall")
    table.derive("less", "diff", "rate", "recall", size=[1, 1, 1])
    table.derive("share", "relative", "rate", "recall")
    table.derive("more", "diff", "recall", "rate", size=[2, 2, 2])  # its own n column, next to less's
    point = table.point()
    assert point.pop("more") == pytest.approx(1 / 2 - 3 / 8) and table.sizes().pop("more") == 6
    del table.keys["more"], table.size["more"]
    assert point == pytest.approx({"rate": 3 / 8, "precision": 2 / 5, "recall": 2 / 4, "f1": 4 / 9,
                                   "both": (3 / 8 + 1 / 2) / 2, "less": 3 / 8 - 1 / 2, "share": (3 / 8) / (1 / 2)})
    assert table.sizes() == {"rate": 8, "precision": 5, "recall": 4, "f1": 4, "both": 8, "less": 3, "share": 8}  # p, g, g
    sums = table.matrix().sum(axis=0)
    assert list(table.values(sums, ["recall", "rate"])) == ["recall", "rate"]
    assert table.values(sums, ["rate"])["rate"] == pytest.approx(3 / 8)
    # a column given again replaces the old one
    table.column("rate/num", [0, 0, 0])
    assert table.point()["rate"] == 0 and table.matrix().shape == (3, 7)  # rate: 2, prf: 3, less and more: their n
    with pytest.raises(ValueError, match=r"column 'x' has shape \(2,\), expected \(3,\)"):
        table.column("x", [1, 2])
    for kind, a, b in (("ratio", "rate", "recall"), ("mean", "rate", "nothing"), ("mean", "nothing", "rate")):
        with pytest.raises(ValueError, match=f"cannot derive 'new' as {kind} of '{a}' and '{b}'"):
            table.derive("new", kind, a, b)


def test_column_names_are_the_key_and_the_count():
    # the methods' tests read columns by these names (e.g. "f1_original/gold", "/found")
    table = Counts(np.arange(2, dtype=np.uint64))
    table.ratio("rate", [1, 0], [1, 1])
    table.prf([1, 0], [1, 1], [1, 1], keys=("p", "r", "f"), found=[1, 0])
    table.derive("gap", "diff", "p", "r", size=[1, 2])
    assert list(table.names) == ["rate/num", "rate/den", "f/correct", "f/gold", "f/pred", "f/found", "gap/n"]
    assert table.sizes()["gap"] == 3 and table.sizes()["f"] == 2


def test_counts_hold_hashes_strata_and_counts_in_fixed_dtypes():
    table = Counts([3, 1, 2])
    assert table.order.dtype == np.uint64 and table.strata.dtype == np.int64 and table.strata.tolist() == [0, 0, 0]
    assert Counts([3, 1, 2], strata=[0.0, 1.0, 1.0]).strata.dtype == np.int64
    # per-sentence flags given as booleans are counts like any other (numpy cannot subtract booleans)
    flags = {name: Counts(np.arange(6, dtype=np.uint64)) for name in "ab"}
    flags["a"].ratio("rate", [True] * 6, [True] * 6)
    flags["b"].ratio("rate", [True, False] * 3, [True] * 6)
    assert flags["a"].matrix().dtype == float
    test = analyse(flags, n_resamples=50)["rate"]["tests"][0]
    assert test["difference"] == 0.5 and 0 < test["p_value"] <= 1


def test_partial_credit_f1_by_hand():
    # predictions' credits 1.5 of 3, gold credits 1 of 2: P = 0.5, R = 0.5, F1 = 0.5
    table = Counts(np.arange(2, dtype=np.uint64))
    table.prf([1.5, 0], [1, 1], [2, 1], found=[1, 0])
    assert table.point() == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})
    # P = 1 / 4, R = 2 / 2: F1 = 2 * 0.25 / 1.25 = 0.4
    table.prf([1, 0], [1, 1], [2, 2], found=[1, 1])
    assert table.point()["f1"] == pytest.approx(0.4)
    # a second set of keys keeps its own columns (the first is untouched)
    table.prf([0, 0], [1, 1], [1, 1], keys=("p2", "r2", "f2"), found=[0, 1])
    assert table.point() == pytest.approx({"precision": 0.25, "recall": 1, "f1": 0.4, "p2": 0, "r2": 0.5, "f2": 0})


def test_empty_denominators_are_nan_and_nothing_right_is_zero():
    names = {"c": 0, "g": 1, "p": 2, "r": 3}
    keys = {"rate": ("ratio", "c", "g"), "f1": ("f1", "c", "g", "p"), "partial": ("f1", "c", "g", "p", "r"),
            "half": ("mean", "rate", "f1"), "gap": ("diff", "rate", "f1"), "share": ("relative", "f1", "rate")}
    sums = np.array([[0, 0, 0, 0], [0, 2, 3, 0], [0, 0, 3, 0], [1, 2, 1, 1]], dtype=float)
    values = evaluate(keys, names, sums)
    assert np.isnan(values["rate"][0]) and values["rate"][1] == 0 and np.isnan(values["rate"][2])
    assert np.isnan(values["f1"][0]) and values["f1"][1] == 0 and values["f1"][2] == 0
    assert np.isnan(values["partial"][0]) and values["partial"][1] == 0 and values["partial"][2] == 0
    assert values["rate"][3] == 0.5 and values["f1"][3] == pytest.approx(2 / 3)
    assert values["partial"][3] == pytest.approx(2 / 3)   # P = 1, R = 1 / 2
    assert values["half"][3] == pytest.approx((0.5 + 2 / 3) / 2) and values["gap"][3] == pytest.approx(0.5 - 2 / 3)
    assert values["share"][3] == pytest.approx((2 / 3) / 0.5) and np.isnan(values["share"][1])  # x / 0
    assert list(evaluate(keys, names, sums, ["f1"])) == ["f1"]
    with pytest.raises(ValueError, match="unknown formula 'median' for 'm'"):
        evaluate({"m": ("median", "c", "g")}, names, sums)


def harmonic(precision, recall):
    if math.isnan(precision) and math.isnan(recall):
        return math.nan
    precision, recall = (0.0 if math.isnan(x) else x for x in (precision, recall))
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def test_formulas_hold_for_fractional_totals():
    # counts pooled over runs are means, partial matches give part credits: totals can lie in (0, 1]
    names = {"c": 0, "g": 1, "p": 2, "r": 3}
    keys = {"precision": ("ratio", "c", "p"), "f1": ("f1", "c", "g", "p"), "partial": ("f1", "c", "g", "p", "r")}
    sums = np.array([[0.25, 0.25, 0.25, 0.25], [0.25, 1, 1, 0.25], [0.5, 1, 1, 0.5], [0, 1, 0, 0], [0.5, 2, 0.5, 1]])
    values = evaluate(keys, names, sums)
    for (c, g, p, r), *got in zip(sums.tolist(), values["precision"], values["f1"], values["partial"]):
        precision = c / p if p else math.nan
        expected = [precision, harmonic(precision, c / g if g else math.nan),
                    harmonic(precision, r / g if g else math.nan)]
        assert got == pytest.approx(expected, nan_ok=True), (c, g, p, r)


# ---- options --------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [dict(n_resamples=1, confidence=0.5), dict(n_resamples=100_000, confidence=0.99),
                                     dict(n_resamples=np.int64(5), confidence=0.9, unit="document", alpha=0.01)])
def test_usable_options(options):
    check_options(**options)


@pytest.mark.parametrize("options, message", [
    (dict(n_resamples=0, confidence=0.9), "n_resamples must be a whole number >= 1, got 0"),
    (dict(n_resamples=True, confidence=0.9), "n_resamples must be a whole number"),
    (dict(n_resamples=10.0, confidence=0.9), "n_resamples must be a whole number"),
    (dict(n_resamples=100_001, confidence=0.9), "n_resamples=100001: at most 100000"),
    (dict(n_resamples=10, confidence=0), r"confidence must lie in \(0, 1\), got 0"),
    (dict(n_resamples=10, confidence=1), r"confidence must lie in \(0, 1\), got 1"),
    (dict(n_resamples=10, confidence=True), "confidence must lie"),
    (dict(n_resamples=10, confidence="0.9"), "confidence must lie"),
    (dict(n_resamples=10, confidence=0.9, alpha=1.0), r"alpha must lie in \(0, 1\), got 1.0"),
    (dict(n_resamples=10, confidence=0.9, unit="token"), "unit='token': use 'sentence' or 'document'"),
])
def test_unusable_options(options, message):
    with pytest.raises(ValueError, match=message):
        check_options(**options)


# ---- units and resamples --------------------------------------------------------------------
def test_units_pair_systems_by_content_and_sum_documents():
    order = np.array([30, 10, 20, 40], dtype=np.uint64)
    a = Counts(order, documents=["d2", "d1", "d1", "d2"])
    a.ratio("rate", [1, 2, 3, 4], [10, 20, 30, 40])
    b = Counts(order[::-1].copy(), documents=["d2", "d1", "d1", "d2"][::-1])
    b.ratio("rate", [4, 3, 2, 1], [40, 30, 20, 10])
    matrix, strata = units([a, b])
    # rows in hash order 10, 20, 30, 40; b's rows follow its own hashes, so each row pairs a sentence with itself
    assert matrix.tolist() == [[2, 20, 2, 20], [3, 30, 3, 30], [1, 10, 1, 10], [4, 40, 4, 40]]
    assert strata.tolist() == [0, 0, 0, 0]
    matrix, strata = units([a, b], "document")
    assert sorted(matrix.tolist()) == [[5, 50, 5, 50], [5, 50, 5, 50]] and strata.tolist() == [0, 0]
    other = Counts(np.array([30, 10, 20, 41], dtype=np.uint64))
    other.ratio("rate", [1, 2, 3, 4], [10, 20, 30, 40])
    with pytest.raises(ValueError, match="^paired comparisons need the same test sentences for every system$"):
        units([a, other])
    short = Counts(order[:3])
    with pytest.raises(ValueError, match="same test sentences"):
        units([a, short])


def test_document_units_within_strata():
    order = np.arange(6, dtype=np.uint64)
    table = Counts(order, strata=[0, 0, 0, 1, 1, 1], documents=["a", "a", "b", "c", "d", "d"])
    table.ratio("rate", [1, 1, 1, 1, 1, 1], [1, 2, 3, 4, 5, 6])
    matrix, strata = units([table], "document")
    assert strata.tolist() == [0, 0, 1, 1]
    assert sorted(map(tuple, matrix[strata == 0].tolist())) == [(1, 3), (2, 3)]
    assert sorted(map(tuple, matrix[strata == 1].tolist())) == [(1, 4), (2, 11)]
    across = Counts(order, strata=[0, 0, 0, 1, 1, 1], documents=["a", "a", "b", "b", "c", "c"])
    across.ratio("rate", [1] * 6, [1] * 6)
    with pytest.raises(ValueError, match=r"^a document spans two sets \(e\.g\. NRB and WTS\): resample by sentence$"):
        units([across], "document")
    lonely = Counts(order, strata=[0, 0, 0, 1, 1, 1], documents=["a", "a", "b", "c", "c", "c"])
    lonely.ratio("rate", [1] * 6, [1] * 6)
    with pytest.raises(ValueError, match=r"^unit='document' needs at least 2 documents per set, got \[2, 1\]:"
                                         r" resample by sentence$"):
        units([lonely], "document")
    with pytest.raises(ValueError, match=r"^unit='document' needs document ids \(-DOCSTART- groups, or a document"
                                         r" input\)$"):
        units([Counts(order)], "document")


def test_identical_sentences_are_ordered_by_their_counts():
    # two sentences with the same hash: the canonical order must not depend on the input order
    one = Counts(np.array([7, 7, 3], dtype=np.uint64))
    one.ratio("rate", [1, 0, 5], [1, 1, 5])
    two = Counts(np.array([7, 7, 3], dtype=np.uint64))
    two.ratio("rate", [0, 1, 5], [1, 1, 5])
    assert units([one])[0].tolist() == units([two])[0].tolist()
    assert units([one])[0][0].tolist() == [5, 5]
    # rows that no order of magnitude separates, (1, 0) and (0, 1): a fixed projection decides, every time
    three, four = Counts(np.array([7, 7], dtype=np.uint64)), Counts(np.array([7, 7], dtype=np.uint64))
    three.ratio("rate", [1, 0], [0, 1])
    four.ratio("rate", [0, 1], [1, 0])
    assert all(units([three])[0].tolist() == units([four])[0].tolist() for _ in range(30))
    # a table without columns still has its units
    matrix, strata = units([Counts(np.arange(3, dtype=np.uint64))])
    assert matrix.shape == (3, 0) and strata.tolist() == [0, 0, 0]


def test_a_systems_units_do_not_depend_on_the_systems_beside_it():
    # documents with distinct sentences are ordered by their content, not by the counts of the
    # systems analysed with them, so a system's interval is the same alone or in a table
    order = np.arange(8, dtype=np.uint64)
    documents = ["d1", "d1", "d2", "d2", "d3", "d3", "d4", "d4"]
    a, b = Counts(order, documents=documents), Counts(order, documents=documents)
    a.ratio("rate", [1, 0, 2, 0, 3, 0, 4, 0], [1, 1, 2, 2, 3, 3, 4, 4])
    b.ratio("rate", [400, 0, 300, 0, 200, 0, 100, 0], [400, 400, 300, 300, 200, 200, 100, 100])
    for unit in UNITS:
        alone, _ = units([a], unit)
        together, _ = units([a, b], unit)
        assert together[:, :2].tolist() == alone.tolist()
    ci = {name: analyse(systems, n_resamples=200, unit="document")["rate"]["ci"]["a"]
          for name, systems in (("alone", {"a": a}), ("together", {"a": a, "b": b}))}
    assert ci["alone"] == ci["together"]


def test_resample_weights_draw_within_strata_with_replacement():
    strata = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    weights = resample_weights(strata, 4000, seed=5)
    assert weights.shape == (4000, 9)
    assert (weights[:, :3].sum(axis=1) == 3).all() and (weights[:, 3:5].sum(axis=1) == 2).all()
    assert (weights[:, 5:].sum(axis=1) == 4).all()
    # with replacement: each unit is drawn Binomial(n, 1/n) times
    assert weights.mean(axis=0) == pytest.approx(np.ones(9), abs=0.06)
    assert weights[:, 5:].var(axis=0) == pytest.approx(np.full(4, 4 * 0.25 * 0.75), abs=0.1)
    assert np.array_equal(resample_weights(strata, 4000, seed=5), weights)
    assert not np.array_equal(resample_weights(strata, 4000, seed=6), weights)
    assert resample_weights(strata, 1, seed=0).shape == (1, 9)


def test_chunked_totals_equal_the_weights_times_the_matrix(monkeypatch):
    strata = np.array([0] * 7 + [1] * 5)
    matrix = np.arange(24, dtype=float).reshape(12, 2)
    uncertainty._WEIGHTS.clear()
    whole = resampled_totals(strata, matrix, 50, 3)
    monkeypatch.setattr(uncertainty, "_CHUNK", 36)  # 3 resamples of 12 units per chunk
    weights = resample_weights(strata, 50, 3)
    assert weights.shape == (50, 12)
    assert (weights[:, :7].sum(axis=1) == 7).all() and (weights[:, 7:].sum(axis=1) == 5).all()
    uncertainty._WEIGHTS.clear()
    chunked = resampled_totals(strata, matrix, 50, 3)
    assert np.array_equal(chunked, weights @ matrix) and not uncertainty._WEIGHTS
    assert chunked.shape == whole.shape == (50, 2)
    # totals of a resample keep each stratum's size: column 1 - column 0 is 1 per unit
    assert (chunked[:, 1] - chunked[:, 0] == 12).all()
    monkeypatch.setattr(uncertainty, "_CHUNK", 50 * 12)  # exactly one chunk: kept for the next call
    uncertainty._WEIGHTS.clear()
    assert np.array_equal(resampled_totals(strata, matrix, 50, 3), whole) and len(uncertainty._WEIGHTS) == 1
    monkeypatch.setattr(uncertainty, "_CHUNK", 20_000_000)
    uncertainty._WEIGHTS.clear()
    first = resampled_totals(strata, matrix, 50, 3)
    assert len(uncertainty._WEIGHTS) == 1
    assert np.array_equal(resampled_totals(strata, matrix, 50, 3), first)
    resampled_totals(strata, matrix, 50, 4)  # another draw replaces the kept one
    assert len(uncertainty._WEIGHTS) == 1 and np.array_equal(first, whole)


def test_weight_chunks_hold_at_most_chunk_weights(monkeypatch):
    strata = np.array([0] * 7 + [1] * 5)
    sizes = []
    draw = uncertainty._draw
    monkeypatch.setattr(uncertainty, "_draw", lambda s, n, rng, *compact: sizes.append(n * len(s)) or draw(s, n, rng, *compact))
    for chunk in (5, 12, 30, 36, 1000):
        monkeypatch.setattr(uncertainty, "_CHUNK", chunk)
        sizes.clear()
        weights = resample_weights(strata, 7, 0)
        assert weights.shape == (7, 12) and (weights[:, :7].sum(axis=1) == 7).all()
        assert sum(sizes) == 7 * 12 and max(sizes) <= max(chunk, 12)  # one resample at least per chunk


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(-5, 5), st.just(math.nan)), min_size=3, max_size=3),
                min_size=1, max_size=12), st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_percentiles_equal_numpys_linear_method(rows, confidence):
    samples = np.array(rows)
    low, high = uncertainty._percentiles(samples, confidence)
    tail = (1 - confidence) / 2
    for j in range(3):
        column = samples[:, j][~np.isnan(samples[:, j])]
        if len(column) == 0:
            assert np.isnan(low[j]) and np.isnan(high[j])
        else:
            assert low[j] == pytest.approx(np.percentile(column, 100 * tail), abs=1e-9)
            assert high[j] == pytest.approx(np.percentile(column, 100 * (1 - tail)), abs=1e-9)


def test_percentile_of_a_constant_is_that_constant_exactly():
    low, high = uncertainty._percentiles(np.full((7, 1), 0.1), 0.95)
    assert low[0] == 0.1 and high[0] == 0.1


# ---- analyse: intervals and tests --------------------------------------------------------------
def two_systems(n=8):
    rng = np.random.default_rng(11)
    order = rng.integers(0, 2 ** 63, size=n, dtype=np.uint64)
    gold = rng.integers(1, 4, size=n)
    systems = {}
    for name, quality in (("a", 0.9), ("b", 0.5)):
        table = Counts(order)
        table.ratio("recall", rng.binomial(gold, quality), gold)
        systems[name] = table
    return systems


def test_bootstrap_interval_is_the_percentile_interval_of_the_resampled_values():
    systems = two_systems(24)
    table = analyse(systems, n_resamples=500, confidence=0.9, seed=2, pairs=[])
    matrix, strata = units(list(systems.values()))
    totals = resample_weights(strata, 500, 2) @ matrix
    recall = {"a": totals[:, 0] / totals[:, 1], "b": totals[:, 2] / totals[:, 3]}
    for name in "ab":
        assert table["recall"]["ci"][name] == pytest.approx(np.percentile(recall[name], [5, 95]))
        c = systems[name].matrix().sum(axis=0)
        assert table["recall"]["values"][name] == c[0] / c[1] and table["recall"]["n"][name] == int(c[1])
        assert table["recall"]["tests"] == [] and table["recall"]["units"] == 24


def test_fewer_than_twenty_units_give_no_interval_but_a_test():
    systems = two_systems(19)
    cell = analyse(systems, n_resamples=200)["recall"]
    assert cell["units"] == 19 and all(math.isnan(v) for v in cell["ci"]["a"] + cell["ci"]["b"])
    test = cell["tests"][0]
    assert all(math.isnan(v) for v in test["ci"]) and 0 < test["p_value"] <= 1
    assert analyse(two_systems(20), n_resamples=200)["recall"]["ci"]["a"][0] > 0


def test_paired_test_is_the_exact_permutation_test_for_few_differing_units():
    """Up to EXACT_UNITS units whose counts differ: every way of swapping them, as enumerated here."""
    systems = two_systems(8)
    table = analyse(systems, n_resamples=50, seed=1)
    test = table["recall"]["tests"][0]
    a, b = (systems[s].matrix() for s in "ab")
    observed = a[:, 0].sum() / a[:, 1].sum() - b[:, 0].sum() / b[:, 1].sum()
    exact = exact_p_value(a, b, lambda m: m[:, 0].sum() / m[:, 1].sum())
    assert (test["a"], test["b"]) == ("a", "b") and test["difference"] == pytest.approx(observed)
    assert test["p_value"] == exact and 0 < exact < 1
    assert test["test"].endswith("exact") and test["units_differ"] == np.count_nonzero((a != b).any(axis=1))
    reverse = analyse(systems, n_resamples=50, seed=1, pairs=[("b", "a")])["recall"]["tests"][0]
    assert reverse["difference"] == -test["difference"] and reverse["p_value"] == test["p_value"]


def test_paired_interval_is_the_percentile_interval_of_the_resampled_difference():
    systems = two_systems(30)
    test = analyse(systems, n_resamples=2000, seed=1)["recall"]["tests"][0]
    matrix, strata = units(list(systems.values()))
    totals = resample_weights(strata, 2000, 1) @ matrix
    difference = totals[:, 0] / totals[:, 1] - totals[:, 2] / totals[:, 3]
    assert test["ci"] == pytest.approx(np.percentile(difference, [2.5, 97.5]))


def random_pair(n, seed, rate_a, rate_b):
    """Two systems' precision/recall/F1 counts, a ratio and derived keys on n sentences."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 4, n)
    systems = {}
    for name, rate in (("a", rate_a), ("b", rate_b)):
        table = Counts(np.arange(n, dtype=np.uint64))
        correct = rng.binomial(gold, rate)
        table.prf(correct, gold, correct + rng.binomial(2, 0.2, n))
        table.derive("mean", "mean", "recall", "precision")
        table.derive("share", "relative", "recall", "precision")
        table.derive("gap", "diff", "recall", "precision")
        systems[name] = table
    return systems


@pytest.mark.parametrize("seed", [0, 1])
def test_normal_approximation_agrees_with_many_random_swaps(seed):
    """Beyond EXACT_UNITS differing units the p-value is the normal approximation of the
    randomisation distribution; 40,000 random swaps (approximate randomisation) estimate the
    same distribution: they agree within the draws' error and the approximation's."""
    systems = random_pair(400, seed, 0.8, 0.76)
    table = analyse(systems, n_resamples=20)
    a, b = (systems[s].matrix() for s in "ab")
    rng = np.random.default_rng(seed + 100)
    moved = (rng.random((40_000, len(a))) < 0.5).astype(float) @ (a - b)
    first = systems["a"]
    swapped_a = evaluate(first.keys, first.names, a.sum(axis=0) - moved)
    swapped_b = evaluate(first.keys, first.names, b.sum(axis=0) + moved)
    for key, cell in table.items():
        test = cell["tests"][0]
        assert test["test"].endswith("normal approximation")
        drawn = np.mean(np.abs(swapped_a[key] - swapped_b[key]) >= abs(test["difference"]) - 1e-12)
        error = 3 * math.sqrt(drawn * (1 - drawn) / 40_000)
        assert abs(test["p_value"] - drawn) <= error + 0.15 * drawn, (key, test["p_value"], drawn)


def test_p_value_is_not_floored_by_the_resamples():
    # one unit, identical systems: nothing to swap, p = 1
    one = Counts(np.array([1], dtype=np.uint64))
    one.ratio("rate", [1], [2])
    test = analyse({"a": one, "b": one}, n_resamples=9)["rate"]["tests"][0]
    assert test["p_value"] == 1.0 and test["difference"] == 0 and test["units_differ"] == 0
    # no gold anywhere: the difference is NaN, and so is its p-value
    empty = Counts(np.arange(3, dtype=np.uint64))
    empty.ratio("rate", [0, 0, 0], [0, 0, 0])
    test = analyse({"a": empty, "b": empty}, n_resamples=20)["rate"]["tests"][0]
    assert math.isnan(test["difference"]) and math.isnan(test["p_value"])
    # 40 units all one way: far below 1 / (R + 1), whatever R; each unit moves the difference by
    # 1/40, the continuity correction is one such step: z = (40 - 1) / sqrt(40)
    a, b = Counts(np.arange(40, dtype=np.uint64)), Counts(np.arange(40, dtype=np.uint64))
    a.ratio("rate", [1] * 40, [1] * 40)
    b.ratio("rate", [0] * 40, [1] * 40)
    p = [analyse({"a": a, "b": b}, n_resamples=r)["rate"]["tests"][0]["p_value"] for r in (9, 999)]
    assert p[0] == p[1] == pytest.approx(math.erfc(39 / math.sqrt(40) / math.sqrt(2)))
    # never below what a permutation test over k units can give (2 / 2^k), where erfc underflows
    a3k, b3k = Counts(np.arange(3000, dtype=np.uint64)), Counts(np.arange(3000, dtype=np.uint64))
    a3k.ratio("rate", [1] * 3000, [1] * 3000)
    b3k.ratio("rate", [0] * 3000, [1] * 3000)
    assert analyse({"a": a3k, "b": b3k}, n_resamples=9)["rate"]["tests"][0]["p_value"] == 2.0 ** (1 - 3000)
    # 16 units all one way: exact, the observed split and its mirror of 2^16
    a16, b16 = Counts(np.arange(16, dtype=np.uint64)), Counts(np.arange(16, dtype=np.uint64))
    a16.ratio("rate", [1] * 16, [1] * 16)
    b16.ratio("rate", [0] * 16, [1] * 16)
    assert analyse({"a": a16, "b": b16}, n_resamples=9)["rate"]["tests"][0]["p_value"] == 2 / 2 ** 16


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.001])
def test_normal_approximation_keeps_alpha_where_contributions_are_equal(alpha):
    """Equal contributions are the worst case of the approximation (the exact distribution is
    a binomial's): with k = 17 to 60 differing units, the share of all 2^k sign patterns the
    test rejects (its exact null rejection rate) stays at or below alpha."""
    for k in range(17, 61):
        a, b = Counts(np.arange(k, dtype=np.uint64)), Counts(np.arange(k, dtype=np.uint64))
        rejected = 0.0
        for j in range(k + 1):  # j units where a is right and b wrong, the rest the other way
            a.ratio("rate", [1] * j + [0] * (k - j), [1] * k)
            b.ratio("rate", [0] * j + [1] * (k - j), [1] * k)
            p = analyse({"a": a, "b": b}, n_resamples=1)["rate"]["tests"][0]["p_value"]
            rejected += math.comb(k, j) / 2 ** k if p < alpha else 0
        assert rejected <= alpha, (k, rejected)


def test_each_key_has_its_own_p_value():
    a, b = Counts(np.arange(40, dtype=np.uint64)), Counts(np.arange(40, dtype=np.uint64))
    for table, hits in ((a, 1), (b, 0)):
        table.ratio("same", [1] * 40, [2] * 40)
        table.ratio("apart", [hits] * 40, [1] * 40)
    rows = analyse({"a": a, "b": b}, n_resamples=99)
    assert rows["same"]["tests"][0]["p_value"] == 1.0  # no difference: nothing differs to swap
    assert rows["apart"]["tests"][0]["p_value"] < 1e-9


def exact_p_value(a, b, value):
    """The exact permutation test over every swap of units, with analyse's stated tie tolerance
    (1e-12 times the difference, at least 1e-12)."""
    observed = value(a) - value(b)
    threshold = abs(observed) - 1e-12 * max(1.0, abs(observed))
    extreme = 0
    for swap in itertools.product([False, True], repeat=len(a)):
        s = np.array(swap)[:, None]
        extreme += abs(value(np.where(s, b, a)) - value(np.where(s, a, b))) >= threshold
    return extreme / 2 ** len(a)


def test_float_noise_tolerance_is_1e_12_times_the_difference():
    order = np.arange(2, dtype=np.uint64)
    # below 1, the tolerance is 1e-12: with 2e12 gold per sentence, A = 7 / 4e12 against B = 0, and a
    # swapped sentence gives 1 / 4e12: a real gap of 1.5e-12, not a tie (exact p = 2 / 4)
    small = {}
    for name, hits in (("a", [3, 4]), ("b", [0, 0])):
        small[name] = Counts(order)
        small[name].ratio("rate", hits, [2e12, 2e12])
    test = analyse(small, n_resamples=400)["rate"]["tests"][0]
    a, b = (small[s].matrix() for s in "ab")
    exact = exact_p_value(a, b, lambda m: m[:, 0].sum() / m[:, 1].sum())
    assert exact == 0.5 and test["p_value"] == exact
    # above 1 it is relative: a share of 2 + 7.5e-13 against 0, swaps giving 2 - 7.5e-13: the gap of
    # 1.5e-12 is below 2e-12, a tie, so every swap is as extreme (exact p = 1)
    big = {}
    for name, hits in (("a", [4e12, 1.5]), ("b", [0, 0])):
        table = big[name] = Counts(order)
        table.ratio("hit", hits, [1e14, 1e14])
        table.ratio("base", [1, 1], [100, 100])
        table.derive("share", "relative", "hit", "base")
    test = analyse(big, ["share"], n_resamples=400)["share"]["tests"][0]
    a, b = (big[s].matrix() for s in "ab")
    exact = exact_p_value(a, b, lambda m: (m[:, 0].sum() / m[:, 1].sum()) / (m[:, 2].sum() / m[:, 3].sum()))
    assert test["difference"] == pytest.approx(2) and exact == 1.0 and test["p_value"] == exact


def test_analyse_checks_its_inputs():
    systems = two_systems()
    with pytest.raises(ValueError, match="^no system to analyse$"):
        analyse({})
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['f1'\]: keys with counts are \['recall'\]"):
        analyse(systems, ["f1"])
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['f1'\]: keys with counts are \['recall'\]"):
        analyse({"a": systems["a"]}, ["f1"])
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\), got 1.5"):
        analyse(systems, alpha=1.5)
    other = Counts(systems["a"].order)
    other.ratio("rate", [1] * 8, [1] * 8)
    with pytest.raises(ValueError, match="^the systems' results have different columns: score them with the same options$"):
        analyse({"a": systems["a"], "b": other}, [])
    wider = Counts(systems["a"].order)
    wider.ratio("recall", [1] * 8, [1] * 8)
    wider.ratio("rate", [1] * 8, [1] * 8)
    with pytest.raises(ValueError, match="different columns"):
        analyse({"a": systems["a"], "b": wider}, ["recall"])
    with pytest.raises(ValueError, match="n_resamples"):
        analyse(systems, n_resamples=0)
    three = dict(systems, c=systems["a"])
    assert [(t["a"], t["b"]) for t in analyse(three, n_resamples=10)["recall"]["tests"]] == [
        ("a", "b"), ("a", "c"), ("b", "c")]


def test_defaults():
    systems = two_systems(60)  # enough units for intervals that move with the seed and the resample count
    assert analyse(systems) == analyse(systems, None, 1000, 0.95, 0, "sentence", 0.05, None)
    one = systems["a"]
    assert uncertainty.intervals(one) == uncertainty.intervals(one, None, 1000, 0.95, 0, "sentence")
    for other in (dict(seed=1), dict(n_resamples=1001), dict(confidence=0.9)):
        assert uncertainty.intervals(one, **other) != uncertainty.intervals(one)
    one.ratio("other", [1] * 60, [2] * 60)
    assert list(uncertainty.intervals(one, ["recall"], n_resamples=20)) == ["recall"]
    assert uncertainty.intervals(one, [], n_resamples=20) == {}
    assert uncertainty.with_intervals({"n": 3}, one, n_resamples=20) == {"n": 3}  # nothing to give an interval
    result = {"recall": one.point()["recall"]}
    assert uncertainty.with_intervals(result, one) == uncertainty.with_intervals(result, one, 1000, 0.95, 0, "sentence")
    for other in (dict(seed=1), dict(n_resamples=1001), dict(confidence=0.9)):
        assert uncertainty.with_intervals(result, one, **other) != uncertainty.with_intervals(result, one)


# ---- Holm, adjust ------------------------------------------------------------------------------
def holm_by_steps(p_values):
    """Holm's procedure run at every level: a hypothesis's adjusted p-value is the smallest
    level at which the step-down procedure rejects it."""
    p = [x for x in p_values if not math.isnan(x)]
    m = len(p)
    levels = sorted({min(1.0, (m - k) * x) for k in range(m) for x in p} | {1.0})

    def rejected(level):
        out, ranked = set(), sorted(range(m), key=lambda i: p[i])
        for k, i in enumerate(ranked):
            if p[i] * (m - k) > level:
                break
            out.add(i)
        return out

    adjusted = [next(level for level in levels if i in rejected(level) or level == 1.0) for i in range(m)]
    it = iter(adjusted)
    return [math.nan if math.isnan(x) else next(it) for x in p_values]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([0.001, 0.01, 0.02, 0.04, 0.3, 0.5, 1.0]), st.floats(0, 1), st.just(math.nan)),
                max_size=7))
def test_holm_equals_the_step_down_procedure(p_values):
    assert holm(p_values) == pytest.approx(holm_by_steps(p_values), nan_ok=True)


def test_adjust_marks_the_better_system_in_the_right_direction():
    def tests():
        return [{"a": "x", "b": "y", "difference": 0.2, "p_value": 0.01},
                {"a": "x", "b": "y", "difference": -0.2, "p_value": 0.01},
                {"a": "x", "b": "y", "difference": 0.2, "p_value": 0.3},
                {"a": "x", "b": "y", "difference": 0.0, "p_value": 0.001},
                {"a": "x", "b": "y", "difference": math.nan, "p_value": math.nan}]
    high = adjust(tests(), family="rows")
    assert [t["p_adjusted"] for t in high[:4]] == pytest.approx([0.03, 0.03, 0.3, 0.004])
    assert [t["significant"] for t in high] == [True, True, False, True, False]
    assert [t["better"] for t in high] == ["x", "y", None, None, None]
    assert {t["family"] for t in high} == {"rows"} and {t["m"] for t in high} == {4}
    low = adjust(tests(), 0.05, ["low", "low", "low", "low", "low"])
    assert [t["better"] for t in low] == ["y", "x", None, None, None]
    unranked = adjust(tests(), 0.05, [None] * 5)
    assert [t["better"] for t in unranked] == [None] * 5 and unranked[0]["significant"] is True
    strict = adjust(tests(), 0.03)  # p_adjusted < alpha, not <=
    assert [t["significant"] for t in strict] == [False, False, False, True, False]
    given = tests()
    adjust(given)
    assert given == tests()  # the tests are left as they were


# ---- runs ----------------------------------------------------------------------------------------
def test_aggregate_runs_by_hand():
    runs = [{"f1": 0.5, "n": 10, "flag": True, "name": "a", "nan": math.nan},
            {"f1": 0.7, "n": 10, "flag": False, "name": "b", "nan": 1.0}]
    table = aggregate_runs(runs)
    assert set(table) == {"f1", "n", "nan"}
    assert table["f1"] == pytest.approx({"mean": 0.6, "std": math.sqrt(0.02), "min": 0.5, "max": 0.7, "runs": 2,
                                         "values": [0.5, 0.7]})
    assert table["n"]["std"] == 0 and math.isnan(table["nan"]["mean"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning for the standard deviation of one run
        one = aggregate_runs(runs[:1])["f1"]
    assert one["mean"] == 0.5 and math.isnan(one["std"]) and one["runs"] == 1
    with pytest.raises(ValueError, match="^aggregate needs at least one run$"):
        aggregate_runs([])


def test_pooled_runs_average_each_sentence():
    order = np.arange(3, dtype=np.uint64)
    runs = []
    for numerators in ([1, 0, 2], [3, 0, 0]):
        table = Counts(order, strata=[0, 0, 1], documents=["d", "d", "e"])
        table.ratio("rate", numerators, [4, 4, 4])
        runs.append(table)
    mean = pooled(runs)
    assert mean.matrix().tolist() == [[2, 4], [0, 4], [1, 4]]
    assert mean.point() == {"rate": 0.25} and mean.sizes() == {"rate": 12}
    assert mean.strata.tolist() == [0, 0, 1] and mean.documents.tolist() == ["d", "d", "e"]
    other = Counts(order[::-1].copy())
    other.ratio("rate", [1, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="^runs to pool must be scored on the same test set with the same options$"):
        pooled([runs[0], other])
    named = Counts(order)
    named.ratio("share", [1, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="same test set with the same options"):
        pooled([runs[0], named])


def test_wilcoxon_over_runs():
    pytest.importorskip("scipy")
    import scipy.stats

    result = uncertainty.wilcoxon_runs([0.5, 0.6, math.nan, 0.9, 0.4, 0.8, 0.71], [0.4, 0.4, 0.3, 0.5, 0.5, 0.3, 0.7])
    expected = scipy.stats.wilcoxon([0.1, 0.2, 0.4, -0.1, 0.5, 0.01])
    assert result["n_pairs"] == 6 and result["statistic"] == pytest.approx(expected.statistic)
    assert result["p_value"] == pytest.approx(expected.pvalue)
    assert result["test"] == "Wilcoxon signed-rank over runs paired by index"
    same = uncertainty.wilcoxon_runs([0.5, 0.6], [0.5, 0.6])
    assert same["n_pairs"] == 2 and math.isnan(same["statistic"]) and math.isnan(same["p_value"])
    assert same["test"] == result["test"] and "note" not in same


def test_wilcoxon_without_scipy_says_so(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy fails
    result = uncertainty.wilcoxon_runs([0.5, 0.6, 0.7], [0.4, 0.4, 0.4])
    assert result["n_pairs"] == 3 and result["test"] == "Wilcoxon signed-rank over runs paired by index"
    assert math.isnan(result["statistic"]) and math.isnan(result["p_value"])
    assert result["note"] == "needs scipy (diagnostics extra)"


def test_compare_runs_without_pairs_has_no_wilcoxon():
    systems = two_systems()
    compared = uncertainty.compare_runs([{"recall": 0.9, "other": 1}], [{"recall": 0.5}], [systems["a"]],
                                        [systems["b"]], n_resamples=50)
    assert list(compared) == ["recall"] and "wilcoxon" not in compared["recall"]
    assert compared["recall"]["A"]["mean"] == 0.9 and compared["recall"]["B"]["runs"] == 1
    assert compared["recall"]["pooled"]["test"].endswith("counts pooled over runs")
    # without keys: the keys both runs report, not every key the counts hold
    a, b = (systems[s] for s in "ab")
    for table in (a, b):
        table.ratio("extra", [1] * 8, [2] * 8)
    compared = uncertainty.compare_runs([{"recall": 0.9}] * 2, [{"recall": 0.5}] * 2, [a, a], [b, b], n_resamples=50)
    assert list(compared) == ["recall"] and "wilcoxon" in compared["recall"]
    assert set(compared["recall"]["pooled"]) == {"difference", "ci", "p_value", "test"}


def test_compare_runs_defaults_keys_and_unit():
    systems = two_systems(60)  # enough units for intervals that move with the seed and the resample count
    a, b = systems["a"], systems["b"]
    runs_a, runs_b = [{"recall": a.point()["recall"]}], [{"recall": b.point()["recall"]}]
    compared = uncertainty.compare_runs(runs_a, runs_b, [a], [b])
    assert compared == uncertainty.compare_runs(runs_a, runs_b, [a], [b], None, 1000, 0.95, 0, "sentence")
    for other in (dict(seed=1), dict(n_resamples=1001)):
        changed = uncertainty.compare_runs(runs_a, runs_b, [a], [b], **other)
        assert changed["recall"]["pooled"]["ci"] != compared["recall"]["pooled"]["ci"]
    # a key only one side's runs report is left out
    for table in (a, b):
        table.ratio("extra", [1] * 60, [2] * 60)
    only_a = uncertainty.compare_runs([{"recall": 0.9, "extra": 0.5}], runs_b, [a], [b], n_resamples=50)
    assert list(only_a) == ["recall"]
    with pytest.raises(ValueError, match="needs document ids"):  # the unit is passed on
        uncertainty.compare_runs(runs_a, runs_b, [a], [b], n_resamples=50, unit="document")


# ---- bounded memory (issue #38) ---------------------------------------------------------------
def test_counts_keep_whole_counts_as_small_integers_and_give_floats():
    table = Counts(np.arange(4, dtype=np.uint64))
    table.ratio("small", [0, 1, 2, 255], [1, 1, 1, 1])
    table.ratio("large", [0, 256, 70_000, 2 ** 32 - 1], [0.5, 1, 1, 1])
    table.ratio("other", [-1, 0, 1, 2], [2 ** 32, 1, 1, 1])
    kept = {name: table.columns[table.names[name]] for name in table.names}
    assert kept["small/num"].dtype == np.uint8 and kept["small/den"].dtype == np.uint8
    assert kept["large/num"].dtype == np.uint32 and kept["large/den"].dtype == float  # a half: as it is
    assert kept["other/num"].dtype == float and kept["other/den"].dtype == float  # negative; too large
    matrix = table.matrix()
    assert matrix.dtype == float
    assert matrix[:, table.names["large/num"]].tolist() == [0, 256, 70_000, 2 ** 32 - 1]
    assert matrix[:, table.names["other/num"]].tolist() == [-1, 0, 1, 2]
    assert table.point()["small"] == 258 / 4


def _method_counts(strata=False):
    """Two demo systems' counts for TMR and HardEval, with documents (and strata: two sets)."""
    from tough_ner import Batch, TrainStats
    from tough_ner.demo import load_demo
    from tough_ner.methods import hardeval, tmr

    train, test = load_demo()
    stats = TrainStats.from_lists(train.tokens, train.tags)
    documents = [s // 5 for s in range(len(test.tokens))]
    layers = None if not strata else np.arange(len(test.tokens)) % 2
    out = {}
    for method in (tmr, hardeval):
        systems = {}
        for i, predicted in enumerate(test.predictions):
            table = method.counts(stats, Batch(test.tokens, test.tags, predicted, documents))
            if strata:
                table.strata = layers.astype(np.int64)
            systems[f"s{i}"] = table
        out[method.__name__] = systems
    return out


@pytest.mark.parametrize("unit,strata", [("sentence", False), ("sentence", True), ("document", False)])
def test_the_bounded_engine_gives_the_dense_engines_intervals_and_tests(monkeypatch, unit, strata):
    """Beyond ``_DENSE_WEIGHTS`` resample weights, every count goes through the entries' engine,
    its weights drawn in chunks: the same intervals to the last digit (whole counts sum
    exactly), the paired tests' p-values to rounding; no dense table, no float weights."""
    def everything():
        out = {}
        for method, systems in _method_counts(strata).items():
            out[method] = analyse(systems, None, 300, 0.9, 4, unit)
            out[method + " values"] = uncertainty.resampled_values(systems["s0"], list(systems["s0"].keys), 300, 4,
                                                                   unit)
        return out

    monkeypatch.setattr(uncertainty, "_CHUNK", 7_000)  # several chunks of a few resamples (fixes a stratified stream)
    uncertainty._WEIGHTS.clear()
    dense = everything()
    uncertainty._WEIGHTS.clear()
    monkeypatch.setattr(uncertainty, "_DENSE_WEIGHTS", 0)
    monkeypatch.setattr(uncertainty.Counts, "matrix", lambda self: pytest.fail("a dense table was built"))
    monkeypatch.setattr(uncertainty, "resample_weights", lambda *a: pytest.fail("float weights were drawn"))
    drawn = []
    draw = uncertainty._draw
    monkeypatch.setattr(uncertainty, "_draw", lambda s, n, rng, compact=False: drawn.append((n * len(s), compact))
                        or draw(s, n, rng, compact))
    bounded = everything()
    assert drawn and all(compact and size <= 7_000 for size, compact in drawn)
    for method in dense:
        if method.endswith("values"):
            for key, values in dense[method].items():
                assert np.array_equal(values, bounded[method][key], equal_nan=True)
            continue
        for key, cell in dense[method].items():
            other = bounded[method][key]
            assert cell["values"] == other["values"] and all(np.array_equal(cell["ci"][s], other["ci"][s], equal_nan=True) for s in cell["ci"]), (method, key)
            assert cell["n"] == other["n"] and cell["units"] == other["units"]
            for test, test_bounded in zip(cell["tests"], other["tests"]):
                assert np.array_equal(test["ci"], test_bounded["ci"], equal_nan=True), (method, key)
                assert test_bounded["p_value"] == pytest.approx(test["p_value"], rel=1e-9, nan_ok=True)


def test_resampled_values_are_what_the_interval_takes_percentiles_of():
    systems = two_systems(30)
    values = uncertainty.resampled_values(systems["a"], ["recall"], 400, 5)["recall"]
    assert values.shape == (400,)
    low, high = analyse({"a": systems["a"]}, ["recall"], 400, 0.9, 5)["recall"]["ci"]["a"]
    assert [low, high] == pytest.approx(np.percentile(values, [5, 95]))
    with pytest.raises(ValueError, match="unknown key"):
        uncertainty.resampled_values(systems["a"], ["nothing"])
