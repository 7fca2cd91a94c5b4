import json
import math
import os
import pickle
import subprocess
import sys
import textwrap

import evaluate
import pytest

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, tmr
from tough_ner.demo import load_demo
from tough_ner.register import METRICS, shim_source

from conftest import ROOT

METRIC_DIR = str(ROOT / "metrics" / "hardeval")


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return TrainStats.from_corpus(train), test


def same(a, b):
    return a.keys() == b.keys() and all(
        (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a)


def test_load_local_module_and_compute_equals_core(demo):
    stats, test = demo
    metric = evaluate.load(METRIC_DIR, train=stats, keep_in_memory=True)
    result = metric.compute(predictions=test.predictions[1], references=test.tags, tokens=test.tokens)
    assert same(result, hardeval(stats, Batch(test.tokens, test.tags, test.predictions[1])))
    assert all(type(v) in (int, float) for v in result.values())
    assert list(result)[:2] == ["hardeval", "ter_all"]


def test_options_at_load_and_per_compute(demo):
    stats, test = demo
    inputs = dict(predictions=test.predictions[0], references=test.tags, tokens=test.tokens)
    batch = Batch(test.tokens, test.tags, test.predictions[0])
    strict_metric = evaluate.load(METRIC_DIR, train=stats, strict=True, error="io", keep_in_memory=True)
    assert same(strict_metric.compute(**inputs), hardeval(stats, batch, strict=True, error="io"))
    assert same(strict_metric.compute(**inputs, strict=False), hardeval(stats, batch, error="io"))
    detailed = strict_metric.compute(**inputs, detailed=True)
    expected = hardeval(stats, batch, strict=True, error="io", detailed=True)
    assert detailed["per_type"].keys() == expected["per_type"].keys()
    assert json.dumps(detailed["hard_tokens"], sort_keys=True) == json.dumps(expected["hard_tokens"], sort_keys=True)
    assert detailed["per_type"] and detailed["hard_tokens"]["diff_E"]  # the demo fills the tables


def test_add_batch_then_compute(demo):
    stats, test = demo
    metric = evaluate.load(METRIC_DIR, train=stats, keep_in_memory=True)
    for start in range(0, len(test), 25):
        metric.add_batch(predictions=test.predictions[1][start:start + 25], references=test.tags[start:start + 25],
                         tokens=test.tokens[start:start + 25])
    assert same(metric.compute(), hardeval(stats, Batch(test.tokens, test.tags, test.predictions[1])))


def test_train_forms(demo, tmp_path):
    stats, test = demo
    stats.save(tmp_path / "demo.npz")
    from tough_ner.demo import TRAIN
    for train in (str(tmp_path / "demo.npz"), TRAIN):
        metric = evaluate.load(METRIC_DIR, train=train, keep_in_memory=True)
        assert metric.train_stats == stats


def test_clear_errors(demo, tmp_path):
    stats, test = demo
    with pytest.raises(TypeError, match="unexpected keyword argument.*strcit"):
        evaluate.load(METRIC_DIR, train=stats, strcit=True)
    with pytest.raises(ValueError, match="training statistics are required"):
        evaluate.load(METRIC_DIR)
    with pytest.raises(FileNotFoundError, match="no such file"):
        evaluate.load(METRIC_DIR, train=str(tmp_path / "nope.txt"))
    with pytest.raises(ValueError, match="error='x'"):
        evaluate.load(METRIC_DIR, train=stats, error="x")
    metric = evaluate.load(METRIC_DIR, train=stats, keep_in_memory=True)
    with pytest.raises(ValueError, match="tokens= is required"):
        metric.compute(predictions=test.tags, references=test.tags)
    with pytest.raises(TypeError, match="compute got unexpected keyword argument.*detail"):
        metric.compute(predictions=test.tags, references=test.tags, tokens=test.tokens, detail=True)
    with pytest.raises(ValueError, match="sentence 0: 1 predicted tags but"):
        metric.compute(predictions=[["O"]] + test.tags[1:], references=test.tags, tokens=test.tokens)


def test_pickles_after_compute_and_still_works(demo, tmp_path):
    stats, test = demo
    inputs = dict(predictions=test.predictions[0], references=test.tags, tokens=test.tokens)
    metric = evaluate.load(METRIC_DIR, train=stats, cache_dir=str(tmp_path))  # on-disk cache: file locks
    first = metric.compute(**inputs)
    clone = pickle.loads(pickle.dumps(metric))
    assert same(clone.compute(**inputs), first)


def test_shim_file_is_what_register_writes():
    assert set(METRICS) >= {"hardeval"}
    assert (ROOT / "metrics" / "hardeval" / "hardeval.py").read_text() == shim_source("hardeval")


SCRIPT = textwrap.dedent("""
    import json, sys
    import evaluate
    from tough_ner.demo import load_demo
    _, test = load_demo()
    names, train = sys.argv[1], sys.argv[2]
    kwargs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    for name in names.split(","):  # a line each, in order
        metric = evaluate.load(name, train=train, **kwargs)
        rank, size = kwargs.get("process_id", 0), kwargs.get("num_process", 1)
        n = len(test.tokens)
        part = slice(rank * n // size, (rank + 1) * n // size)
        metric.add_batch(predictions=test.predictions[1][part], references=test.tags[part], tokens=test.tokens[part])
        print(json.dumps(metric.compute()))
""")


# A guard against hangs, not a timing check: on a loaded machine (pytest -n 2 next to other
# jobs) one evaluate.load in a fresh interpreter took over 120 s.
HANG = 600


def run_script(args, env):
    return subprocess.Popen([sys.executable, "-c", SCRIPT, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_register_makes_bare_and_namespaced_names_load_offline(demo, tmp_path):
    stats, test = demo
    stats.save(tmp_path / "demo.npz")
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env.pop("HF_MODULES_CACHE", None)
    before = run_script(["hardeval", str(tmp_path / "demo.npz")], env)
    _, err = before.communicate(timeout=HANG)
    # Nothing registered yet: no network, no module (and not some other crash).
    assert before.returncode != 0 and "FileNotFoundError: Couldn't find a module script" in err, err
    subprocess.run([sys.executable, "-m", "tough_ner.cli", "register"], env=env, check=True, capture_output=True)
    batch = Batch(test.tokens, test.tags, test.predictions[1])
    expected = {"hardeval": hardeval(stats, batch), "tmr": tmr(stats, batch), "bucket_f1": bucket_f1(stats, batch)}
    assert set(expected) == set(METRICS) - {"nrb", "rockner"}  # their own inputs: tested in test_nrb, test_rockner
    # Every name loaded by one fresh process (each load resolves its name through the cache).
    names = ["hardeval", "tough-ner/hardeval", "tmr", "tough-ner/tmr", "bucket_f1", "tough-ner/bucket_f1"]
    process = run_script([",".join(names), str(tmp_path / "demo.npz")], env)
    out, err = process.communicate(timeout=HANG)
    assert process.returncode == 0, err
    lines = out.strip().splitlines()[-len(names):]
    for name, line in zip(names, lines, strict=True):
        assert same(json.loads(line), expected[name.split("/")[-1]]), name


@pytest.mark.parametrize("name", ["hardeval", "tmr", "bucket_f1"])
def test_two_processes_give_rank_zero_the_single_process_result(demo, tmp_path, name):
    stats, test = demo
    stats.save(tmp_path / "demo.npz")
    method = {"hardeval": hardeval, "tmr": tmr, "bucket_f1": bucket_f1}[name]
    # With intervals: the canonical sentence order makes the resamples independent of the split.
    processes = [run_script([str(ROOT / "metrics" / name), str(tmp_path / "demo.npz"),
                             json.dumps({"num_process": 2, "process_id": rank, "cache_dir": str(tmp_path / "cache"),
                                         "experiment_id": "two", "ci": True, "n_resamples": 300})], dict(os.environ))
                 for rank in (0, 1)]
    outputs = [p.communicate(timeout=HANG) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err for _, err in outputs]
    assert outputs[1][0].strip().splitlines()[-1] == "null"
    expected = method(stats, Batch(test.tokens, test.tags, test.predictions[1]), ci=True, n_resamples=300)
    assert any(key.endswith("_ci_low") for key in expected)
    assert same(json.loads(outputs[0][0].strip().splitlines()[-1]), expected)


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("empty", [[], [[]]])
def test_empty_input_is_nan_with_zero_counts(demo, name, empty):
    stats, _ = demo
    metric = evaluate.load(str(ROOT / "metrics" / name), train=stats, keep_in_memory=True)
    if name == "nrb" and empty:  # an NRB sentence without its one target is bad input
        with pytest.raises(ValueError, match="sentence 0: 0 gold entities"):
            metric.compute(predictions=empty, references=empty, tokens=empty)
        return
    if name == "rockner" and empty:  # an empty original and an empty attacked sentence
        metric.add_batch(predictions=empty, references=empty, tokens=empty, version="original")
        result = metric.compute(predictions=empty, references=empty, tokens=empty, version="attacked")
    else:
        result = metric.compute(predictions=empty, references=empty, tokens=empty)
    counts = {k: v for k, v in result.items() if k.startswith("n_") or k == "n"}
    assert counts or name == "bucket_f1"  # its flat keys are F1s only; its counts are tested with the buckets
    assert all(v == 0 for v in counts.values())
    assert all(math.isnan(v) for k, v in result.items() if k not in counts and k != "type_map")  # nrb names its map


def test_a_failed_compute_releases_the_cache_lock(demo, tmp_path):
    """evaluate kept the lock and the cache file of a compute whose scoring raised, so every later
    compute waited for the lock's timeout and took another file name."""
    import filelock
    from tough_ner.metrics.hardeval import Hardeval

    stats, test = demo
    metric = Hardeval(train=stats, cache_dir=str(tmp_path))
    for _ in range(2):
        with pytest.raises(ValueError, match="unknown tag 'Q-1'"):
            metric.compute(predictions=[["O"]], references=[["Q-1"]], tokens=[["a"]])
        assert not [name for name in os.listdir(metric.data_dir) if name.endswith(".arrow")]
        for name in os.listdir(metric.data_dir):  # every lock free: taking it does not time out
            lock = filelock.FileLock(os.path.join(metric.data_dir, name))
            lock.acquire(timeout=0)
            lock.release()
    batch = Batch(test.tokens, test.tags, test.predictions[0])
    assert same(metric.compute(predictions=test.predictions[0], references=test.tags, tokens=test.tokens),
                hardeval(stats, batch))
    metric.add_batch(predictions=test.predictions[0], references=test.tags, tokens=test.tokens)
    assert same(metric.compute(), hardeval(stats, batch))
    pickle.dumps(metric)
