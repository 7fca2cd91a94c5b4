"""compute(predictions=, references=, tokens=) in one process with nothing added before first
tries scoring the given lists directly (tough_ner.metrics.base.ToughMetric._direct), falling
back to evaluate's Arrow cache when that raises; other inputs go through the cache.  Both paths
must give the same results and the same errors: each case here runs twice, once with the direct
path switched off."""
import json
import os

import evaluate
import numpy as np
import pytest

from tough_ner import TrainStats
from tough_ner.demo import load_demo
from tough_ner.metrics.base import ToughMetric
from tough_ner.register import METRICS, metric_class

# NRB-like sentences (one target each) for the nrb metric, which refuses the demo's sentences.
NRB_TOKENS = [["Jordan", "won", "."], ["Coutts", "opened", "a", "bank"], ["He", "met", "Paris"]]
NRB_GOLD = [["B-PERSON", "O", "O"], ["B-ORGANIZATION", "O", "O", "O"], ["O", "O", "B-PERSON"]]
NRB_PRED = [["B-LOC", "O", "O"], ["B-ORG", "O", "O", "O"], ["O", "O", "B-PER"]]


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return TrainStats.from_corpus(train), test


def inputs_for(name, test):
    if name == "nrb":
        return dict(predictions=NRB_PRED, references=NRB_GOLD, tokens=NRB_TOKENS)
    inputs = dict(predictions=test.predictions[1], references=test.tags, tokens=test.tokens)
    if name == "rockner":  # the first half as the original set, the second half as the attacked one
        half = len(test) // 2
        inputs["version"] = ["original"] * half + ["attacked"] * (len(test) - half)
    return inputs


def load_options(name):
    return {"type_map": "conll"} if name == "nrb" else {}


def both_paths(monkeypatch, run):
    """run() with the direct path, then with evaluate's Arrow path: (result or error) of each,
    and how many computes went through evaluate's own EvaluationModule.compute each time."""
    through_arrow = []
    original = evaluate.EvaluationModule.compute

    def counted(self, **kwargs):
        through_arrow.append(1)
        return original(self, **kwargs)

    monkeypatch.setattr(evaluate.EvaluationModule, "compute", counted)
    outcomes = []
    for direct in (True, False):
        through_arrow.clear()
        with monkeypatch.context() as patch:
            if not direct:
                patch.setattr(ToughMetric, "_direct", lambda self, columns: False)
            try:
                outcome = ("result", json.dumps(run(), sort_keys=True, default=repr))
            except Exception as error:  # the same type and message on both paths
                outcome = ("error", type(error).__name__, str(error))
        outcomes.append((outcome, len(through_arrow)))
    return outcomes


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("keep_in_memory", [True, False])
@pytest.mark.filterwarnings("ignore:.*another number of gold entities")  # rockner's halves: not an attack's pair
def test_direct_path_gives_the_arrow_result_for_every_metric(demo, monkeypatch, tmp_path, name, keep_in_memory):
    stats, test = demo
    metric = metric_class(name)(train=stats, keep_in_memory=keep_in_memory, cache_dir=str(tmp_path),
                                **load_options(name))
    inputs = inputs_for(name, test)
    copies = json.dumps(inputs)
    (direct, arrow_calls), (arrow, arrow_calls_off) = both_paths(
        monkeypatch, lambda: metric.compute(**inputs, detailed=True, ci=True, n_resamples=50))
    assert direct[0] == "result" and direct == arrow
    assert (arrow_calls, arrow_calls_off) == (0, 1)  # the direct path skipped evaluate's compute
    assert json.dumps(inputs) == copies  # the caller's lists are left as they were
    assert not [f for f in os.listdir(metric.data_dir) if f.endswith(".arrow")]


# Inputs evaluate's features refuse or convert: the direct path must hand every one of them to
# evaluate (same error or same converted result).
def bad_inputs(test):
    tokens, gold, pred = test.tokens[:3], test.tags[:3], test.predictions[1][:3]
    return {
        "an int token": dict(predictions=pred, references=gold, tokens=[[1] + s[1:] for s in tokens]),
        "an int tag late in a sentence": dict(predictions=pred, references=[s[:-1] + [7] for s in gold], tokens=tokens),
        "a None tag": dict(predictions=[s[:-1] + [None] for s in pred], references=gold, tokens=tokens),
        "a sentence given as one string": dict(predictions=pred, references=gold,
                                               tokens=[" ".join(tokens[0])] + tokens[1:]),
        "one sentence fewer in the predictions": dict(predictions=pred[:2], references=gold, tokens=tokens),
        "a sentence with one tag fewer": dict(predictions=[pred[0][:-1]] + pred[1:], references=gold, tokens=tokens),
        "references missing": dict(predictions=pred, references=None, tokens=tokens),
        "tuples": dict(predictions=tuple(map(tuple, pred)), references=gold, tokens=tokens),
        "numpy arrays": dict(predictions=[np.array(s) for s in pred], references=gold, tokens=tokens),
        "numpy string tokens": dict(predictions=pred, references=gold,
                                    tokens=[[np.str_(t) for t in s] for s in tokens]),
        "numpy string tags": dict(predictions=[[np.str_(t) for t in s] for s in pred], references=gold,
                                  tokens=tokens),
        "bytes tags": dict(predictions=[[t.encode() for t in s] for s in pred], references=gold, tokens=tokens),
        "nested lists as tokens": dict(predictions=pred, references=gold, tokens=[[[t] for t in s] for s in tokens]),
        "an unknown tag": dict(predictions=[["Q-1"] + s[1:] for s in pred], references=gold, tokens=tokens),
    }


@pytest.mark.parametrize("case", sorted(bad_inputs(load_demo()[1])))
@pytest.mark.parametrize("name", sorted(METRICS))
def test_bad_inputs_raise_the_same_error_or_give_the_same_result_on_both_paths(demo, monkeypatch, name, case):
    stats, test = demo
    inputs = bad_inputs(test)[case]
    if name == "nrb":  # NRB needs one target per sentence: score the NRB-like sentences' shapes instead
        inputs = {key: (value if value is None or key != "references" else NRB_GOLD)
                  for key, value in inputs.items()}
    extra = {"version": "original"} if name == "rockner" else {}
    metric = metric_class(name)(train=stats, keep_in_memory=True, **load_options(name))
    (direct, _), (arrow, _) = both_paths(monkeypatch, lambda: metric.compute(**inputs, **extra))
    assert direct == arrow


def test_the_direct_path_is_taken_only_in_one_process_with_nothing_added(demo, tmp_path):
    stats, test = demo
    Hardeval = metric_class("hardeval")
    inputs = dict(predictions=test.predictions[1], references=test.tags, tokens=test.tokens)
    columns = dict(inputs)
    assert Hardeval(train=stats, keep_in_memory=True)._direct(columns)
    distributed = Hardeval(train=stats, num_process=2, process_id=0, cache_dir=str(tmp_path), experiment_id="x")
    assert not distributed._direct(columns)  # every rank writes its Arrow file; rank 0 gathers them
    added = Hardeval(train=stats, keep_in_memory=True)
    added.add_batch(**{key: value[:5] for key, value in inputs.items()})
    assert not added._direct(columns)
    everything = added.compute(**inputs)  # the batch added before counts too
    fresh = Hardeval(train=stats, keep_in_memory=True)
    expected = fresh.compute(**{key: value[:5] + value for key, value in inputs.items()})
    assert json.dumps(everything, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert fresh._direct(columns)  # after a compute the module starts afresh
    spans = Hardeval(train=stats, keep_in_memory=True, config_name="spans")
    assert not spans._direct(columns)  # records are normalised by evaluate's features
