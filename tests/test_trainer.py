import json
import math
import os
import subprocess
import sys

import datasets
import evaluate
import numpy as np
import pytest
from seqeval.metrics import f1_score

import tough_ner
from tough_ner import Batch, TrainStats
from tough_ner.buckets import bucket_f1
from tough_ner.demo import load_demo
from tough_ner.hardeval import hardeval
from tough_ner.metrics.hardeval import Hardeval
from tough_ner.metrics.tmr import Tmr
from tough_ner.tmr import tmr
from tough_ner.trainer import robust_compute_metrics, tokenize_and_align

from conftest import ROOT, need, train_demo



def same(a, b):
    return a.keys() == b.keys() and all(
        (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a)


@pytest.fixture(scope="module")
def setting():
    need("torch")
    need("transformers")
    need("tokenizers")
    example = train_demo()
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    label_list = ["O"] + [f"{p}-{t}" for t in stats.labels[1:] for p in ("B", "I")]
    tokenizer = example.build_tokenizer(train.tokens)
    encode = tokenize_and_align(tokenizer, label_list)
    train_set = datasets.Dataset.from_dict({"tokens": train.tokens, "ner_tags": train.tags}).map(encode, batched=True)
    eval_set = datasets.Dataset.from_dict({"tokens": test.tokens, "ner_tags": test.tags}).map(encode, batched=True)
    return example, stats, test, label_list, tokenizer, train_set, eval_set


def expected_scores(stats, batch, sizes=False):
    """What robust_compute_metrics must report, computed directly from word-level tags: seqeval's
    overall scores once, each method's keys prefixed (its headline key just by its name), no
    duplicated overall precision/recall/f1, counts only with ``sizes``, NaN left out."""
    from seqeval.metrics import accuracy_score, classification_report

    report = classification_report(batch.references, batch.predictions, output_dict=True, zero_division=0)
    result = {"precision": report["micro avg"]["precision"], "recall": report["micro avg"]["recall"],
              "f1": report["micro avg"]["f1-score"], "accuracy": accuracy_score(batch.references, batch.predictions)}
    for name, method in (("hardeval", hardeval), ("tmr", tmr), ("bucket_f1", bucket_f1)):
        for key, value in method(stats, batch).items():
            if key in ("precision", "recall", "f1"):
                assert value == pytest.approx(result[key])
            elif not math.isnan(value) and (sizes or not key.startswith("n_")):
                result[name if key == name else f"{name}_{key}"] = value
    return result


def test_the_tokenizer_splits_words_and_the_labels_mark_first_sub_tokens(setting):
    _, _, test, label_list, tokenizer, _, eval_set = setting
    row = eval_set[0]
    assert len(row["input_ids"]) > len(test.tokens[0]) + 2  # some words have several sub-tokens
    firsts = [p for p, w in enumerate(row["word_ids"]) if w is not None and row["word_ids"][p - 1] != w]
    assert [p for p, label in enumerate(row["labels"]) if label != -100] == firsts
    assert [label_list[row["labels"][p]] for p in firsts] == test.tags[0]


def test_trainer_evaluation_equals_scores_from_word_level_predictions(setting, tmp_path):
    transformers = need("transformers")
    from tough_ner.taggers import transformers_tagger

    example, stats, test, label_list, tokenizer, train_set, eval_set = setting
    model = example.build_model(tokenizer, label_list)
    results = {}
    for batch_mode in (False, True):
        args = transformers.TrainingArguments(
            output_dir=str(tmp_path / str(batch_mode)), num_train_epochs=1 if not batch_mode else 0.0001,
            learning_rate=5e-3, per_device_train_batch_size=16, per_device_eval_batch_size=7,
            batch_eval_metrics=batch_mode, save_strategy="no", report_to=[], use_cpu=True, seed=0,
            disable_tqdm=True, logging_strategy="no")
        trainer = transformers.Trainer(
            model=model, args=args, train_dataset=train_set, eval_dataset=eval_set,
            data_collator=transformers.DataCollatorForTokenClassification(tokenizer),
            compute_metrics=robust_compute_metrics(label_list, eval_set, train=stats,
                                                   metrics=["hardeval", "tmr", "bucket_f1"]))
        if not batch_mode:
            trainer.train()  # one epoch; the batch-mode run evaluates the same trained model
        metrics = trainer.evaluate()
        results[batch_mode] = {k[len("eval_"):]: v for k, v in metrics.items()
                               if k not in ("eval_loss", "eval_runtime", "eval_samples_per_second",
                                            "eval_steps_per_second", "eval_model_preparation_time", "epoch")}
    predicted = transformers_tagger(model, tokenizer, batch_size=7)(test.tokens)
    expected = expected_scores(stats, Batch(test.tokens, test.tags, predicted))
    assert 0 < expected["f1"] < 1
    assert same(results[False], expected)
    assert same(results[True], expected)


def logits_for(eval_set, predicted_ids, n_labels):
    """Padded logits (-100 padding, as the Trainer pads) whose argmax is ``predicted_ids``."""
    width = max(len(ids) for ids in eval_set["input_ids"])
    logits = np.full((len(eval_set), width, n_labels), -100.0, dtype=np.float32)
    labels = np.full((len(eval_set), width), -100, dtype=np.int64)
    for row, (ids, label_row) in enumerate(zip(predicted_ids, eval_set["labels"])):
        logits[row, :len(ids)] = 0.0
        logits[row, np.arange(len(ids)), ids] = 1.0
        labels[row, :len(label_row)] = label_row
    return logits, labels


def random_predictions(eval_set, n_labels, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, n_labels, len(ids)).tolist() for ids in eval_set["input_ids"]]


def test_batches_padded_to_different_lengths_give_the_one_pass_result(setting):
    transformers = need("transformers")
    torch = need("torch")
    _, stats, test, label_list, _, _, eval_set = setting
    logits, labels = logits_for(eval_set, random_predictions(eval_set, len(label_list)), len(label_list))
    compute = robust_compute_metrics(label_list, eval_set, train=stats)
    whole = compute(transformers.EvalPrediction(predictions=logits, label_ids=labels))
    for size in (7, 50):
        for start in range(0, len(eval_set), size):
            rows = slice(start, start + size)
            width = max(len(ids) for ids in eval_set["input_ids"][rows])  # each batch padded to its own longest
            part = transformers.EvalPrediction(predictions=torch.tensor(logits[rows, :width]),
                                               label_ids=torch.tensor(labels[rows, :width]))
            result = compute(part, compute_result=start + size >= len(eval_set))
        assert same(result, whole)
    assert compute(transformers.EvalPrediction(predictions=logits, label_ids=labels)) == whole  # state was reset
    # argmax done in preprocess_logits_for_metrics: ids arrive instead of logits
    assert same(compute(transformers.EvalPrediction(predictions=logits.argmax(-1), label_ids=labels)), whole)
    words, gold, predicted = [], [], []
    for row in range(len(eval_set)):
        keep = labels[row] != -100
        words.append(test.tokens[row])
        gold.append([label_list[i] for i in labels[row][keep]])
        predicted.append([label_list[i] for i in logits[row].argmax(-1)[keep]])
    assert gold == test.tags
    assert same(whole, expected_scores(stats, Batch(words, gold, predicted)))


def test_words_from_a_sentence_index_column_and_the_errors(setting):
    transformers = need("transformers")
    _, stats, test, label_list, tokenizer, _, eval_set = setting
    logits, labels = logits_for(eval_set, random_predictions(eval_set, len(label_list), 1), len(label_list))
    prediction = transformers.EvalPrediction(predictions=logits, label_ids=labels)
    expected = robust_compute_metrics(label_list, eval_set, train=stats, metrics=["seqeval", "tmr"])(prediction)
    assert {"LOC_f1", "PER_recall"} <= {k[len("seqeval_"):] for k in expected if k.startswith("seqeval_")}
    indexed = eval_set.remove_columns(["tokens", "word_ids"]).add_column("sentence_id", list(range(len(eval_set))))
    words = datasets.Dataset.from_dict({"tokens": test.tokens})
    compute = robust_compute_metrics(label_list, indexed, train=stats, metrics=["seqeval", "tmr"],
                                     sentence_column="sentence_id", words=words)
    assert same(compute(prediction), expected)
    with pytest.raises(ValueError, match="no 'tokens' column"):
        robust_compute_metrics(label_list, eval_set.remove_columns(["tokens"]), train=stats)
    with pytest.raises(ValueError, match="needs training statistics"):
        robust_compute_metrics(label_list, eval_set, metrics=["tmr"])
    with pytest.raises(ValueError, match="'rockner' scores its own test sets"):
        robust_compute_metrics(label_list, eval_set, train=stats, metrics=["rockner"])
    with pytest.raises(ValueError, match="unknown metric 'f2'"):
        robust_compute_metrics(label_list, eval_set, train=stats, metrics=["f2"])
    # truncated sentences: word_ids align them; without word_ids, a clear error
    short = datasets.Dataset.from_dict({"tokens": test.tokens, "ner_tags": test.tags}).map(
        tokenize_and_align(tokenizer, label_list, max_length=8), batched=True)
    logits, labels = logits_for(short, random_predictions(short, len(label_list)), len(label_list))
    truncated = transformers.EvalPrediction(predictions=logits, label_ids=labels)
    result = robust_compute_metrics(label_list, short, train=stats, metrics=[])(truncated)
    # Scored on the words that kept a label, read through word_ids (seqeval on those words).
    kept_gold, kept_pred = [], []
    for row, ids in enumerate(short["word_ids"]):
        positions = np.flatnonzero(labels[row] != -100)
        kept_gold.append([test.tags[row][ids[p]] for p in positions])
        kept_pred.append([label_list[i] for i in logits[row, positions].argmax(-1)])
    assert sum(map(len, kept_gold)) < sum(map(len, test.tags))  # some words were cut off
    assert result["f1"] == pytest.approx(f1_score(kept_gold, kept_pred)) and 0 < result["f1"] < 1
    n_labelled = sum(label != -100 for label in short[0]["labels"])
    assert n_labelled < len(test.tokens[0])
    with pytest.raises(ValueError, match=f"example 0: {n_labelled} labelled positions but {len(test.tokens[0])} "
                                         f"words; keep the tokenizer's word_ids"):
        robust_compute_metrics(label_list, short.remove_columns(["word_ids"]), train=stats, metrics=[])(truncated)
    with pytest.raises(ValueError, match="predictions for 3 examples but eval_dataset has 110"):
        robust_compute_metrics(label_list, short, train=stats, metrics=[])(
            transformers.EvalPrediction(predictions=logits[:3], label_ids=labels[:3]))


def test_a_loaded_module_plugs_in_with_its_options(setting):
    transformers = need("transformers")
    _, stats, _, label_list, _, _, eval_set = setting
    logits, labels = logits_for(eval_set, random_predictions(eval_set, len(label_list), 2), len(label_list))
    prediction = transformers.EvalPrediction(predictions=logits, label_ids=labels)
    strict = Hardeval(train=stats, strict=True, keep_in_memory=True)
    by_module = robust_compute_metrics(label_list, eval_set, metrics=[strict])(prediction)
    by_name = robust_compute_metrics(label_list, eval_set, train=stats, metrics=["hardeval"],
                                     options={"hardeval": {"strict": True}})(prediction)
    assert same(by_module, by_name) and "hardeval_ter_diff_E" in by_name and "hardeval_n_diff_E" not in by_name
    with_sizes = robust_compute_metrics(label_list, eval_set, metrics=[strict], sizes=True)(prediction)
    assert with_sizes["hardeval_n_diff_E"] >= 0 and set(with_sizes) - set(by_module) == {
        k for k in with_sizes if k.startswith("hardeval_n_")}


def test_trainer_keys_once_without_counts_or_nan(setting, caplog):
    """hardeval_hardeval was doubled, f1 came three times (overall, tmr_f1, bucket_f1_f1), counts
    were logged every epoch and empty buckets logged NaN."""
    transformers = need("transformers")
    _, stats, test, label_list, _, _, eval_set = setting
    predicted = random_predictions(eval_set, len(label_list), 4)
    logits, labels = logits_for(eval_set, predicted, len(label_list))
    prediction = transformers.EvalPrediction(predictions=logits, label_ids=labels)
    compute = robust_compute_metrics(label_list, eval_set, train=stats, metrics=["seqeval", "hardeval", "tmr",
                                                                                 "bucket_f1"])
    with caplog.at_level("WARNING", logger="tough_ner.trainer"):
        first = compute(prediction)
        again = compute(prediction)
        warned = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert first == again
    assert "hardeval" in first and not any(k.endswith("hardeval_hardeval") for k in first)
    assert not {"tmr_f1", "tmr_precision", "tmr_recall", "bucket_f1_f1"} & set(first)
    assert not any(k.startswith(("hardeval_n_", "tmr_n_", "bucket_f1_n_")) or k.endswith("_number") for k in first)
    assert "seqeval_LOC_f1" in first
    assert not any(isinstance(v, float) and math.isnan(v) for v in first.values())
    full = robust_compute_metrics(label_list, eval_set, train=stats, metrics=["seqeval", "hardeval", "tmr",
                                                                              "bucket_f1"], sizes=True)(prediction)
    assert set(full) - set(first) == {k for k in full if k.startswith(("hardeval_n_", "tmr_n_", "bucket_f1_n_"))
                                      or k.endswith("_number")}
    assert "bucket_f1_n_invalid_transitions_gold" in full  # every method's counts, those added later too
    assert "hardeval_n_unseen" in full and "seqeval_LOC_number" in full
    nan_keys = [k for k, v in compute.scorers[3][1](compute_batch(compute, prediction)).items() if math.isnan(v)]
    assert nan_keys and len(warned) == 1 and all(f"bucket_f1_{k}" in warned[0] for k in nan_keys)
    assert not any(f"bucket_f1_{k}" in first for k in nan_keys)


def compute_batch(compute, prediction):
    """The word-level batch robust_compute_metrics decodes the Trainer's predictions to."""
    compute._reset()
    compute._add(prediction.predictions, prediction.label_ids)
    batch = Batch(compute.tokens, compute.references, compute.predictions)
    compute._reset()
    return batch


class SentenceCount(evaluate.Metric):
    """A module that takes predictions and references only (as most evaluate modules do)."""

    def _info(self):
        strings = datasets.List(datasets.Value("string"))
        return evaluate.MetricInfo(description="", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": strings, "references": strings}))

    def _compute(self, predictions, references):
        return {"sentences": len(references)}


def test_combine_gives_each_module_its_own_inputs_and_prefixes_every_key():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    inputs = {"predictions": test.predictions[1], "references": test.tags, "tokens": test.tokens}
    batch = Batch(test.tokens, test.tags, test.predictions[1])
    # evaluate.combine works with the tough-ner modules alone (they all take tokens) ...
    combined = evaluate.combine([Hardeval(train=stats, keep_in_memory=True), Tmr(train=stats, keep_in_memory=True)])
    result = combined.compute(**inputs)
    assert result["ter_unseen"] == hardeval(stats, batch)["ter_unseen"]
    assert result["recall_unseen_tokens"] == tmr(stats, batch)["recall_unseen_tokens"]
    # ... but hands tokens= to every module; tough_ner.combine gives each only what it declares.
    with pytest.raises(TypeError, match="unexpected keyword argument 'tokens'"):
        evaluate.combine([Hardeval(train=stats, keep_in_memory=True), SentenceCount(keep_in_memory=True)]).compute(
            **inputs)
    counter = SentenceCount(keep_in_memory=True)
    both = tough_ner.combine(["hardeval", counter], train=stats, keep_in_memory=True)
    both.add_batch(predictions=inputs["predictions"][:50], references=inputs["references"][:50],
                   tokens=inputs["tokens"][:50])
    result = both.compute(predictions=inputs["predictions"][50:], references=inputs["references"][50:],
                          tokens=inputs["tokens"][50:])
    assert result[f"{counter.name}_sentences"] == len(test.tokens) and counter.name == "sentence_count"
    # The headline key is not doubled (hardeval, not hardeval_hardeval); every other key is prefixed.
    assert same({"hardeval": result["hardeval"],
                 **{k[len("hardeval_"):]: v for k, v in result.items() if k.startswith("hardeval_")}},
                hardeval(stats, batch))
    assert set(result) == {"hardeval", "sentence_count_sentences"} | {f"hardeval_{k}" for k in hardeval(stats, batch)
                                                                      if k != "hardeval"}
    with pytest.raises(ValueError, match="appear twice"):
        tough_ner.combine(["tmr", "tmr"], train=stats)


def test_combine_takes_seqeval_and_gives_the_overall_scores_once():
    from seqeval.metrics import accuracy_score, classification_report

    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    gold, pred = test.tags, test.predictions[1]
    result = tough_ner.combine(["seqeval", "hardeval", "tmr", "bucket_f1"], train=stats, keep_in_memory=True).compute(
        predictions=pred, references=gold, tokens=test.tokens)
    report = classification_report(gold, pred, output_dict=True, zero_division=0)
    assert result["f1"] == pytest.approx(report["micro avg"]["f1-score"])
    assert result["precision"] == pytest.approx(report["micro avg"]["precision"])
    assert result["accuracy"] == accuracy_score(gold, pred)
    for name in ("LOC", "MISC", "ORG", "PER"):
        assert result[f"seqeval_{name}_f1"] == pytest.approx(report[name]["f1-score"])
        assert result[f"seqeval_{name}_number"] == report[name]["support"]
        assert result[f"bucket_f1_tag_{name}_f1"] == pytest.approx(report[name]["f1-score"])
    assert not {"tmr_precision", "tmr_recall", "tmr_f1", "bucket_f1_f1"} & set(result)  # said once, above
    assert "hardeval" in result and "hardeval_hardeval" not in result


def test_the_example_script_runs_end_to_end():
    need("torch")
    process = subprocess.run([sys.executable, str(ROOT / "examples" / "train_demo.py"), "--batch-eval-metrics"],
                             capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr
    value = {line.split()[0]: float(line.split()[1]) for line in process.stdout.splitlines() if line.startswith("eval_")}
    # The printed keys hold together (to the 4 printed decimals): F1 from P and R, HardEval from its two TERs.
    p, r = value["eval_precision"], value["eval_recall"]
    assert 0 < value["eval_f1"] < 1 and value["eval_f1"] == pytest.approx(2 * p * r / (p + r), abs=2e-4)
    assert value["eval_hardeval"] == pytest.approx(
        (value["eval_hardeval_ter_unseen"] + value["eval_hardeval_ter_diff"]) / 2, abs=2e-4)


def test_evaluation_under_torchrun_equals_one_process(tmp_path):
    """Two CPU processes (gloo) evaluate the same model: the gathered predictions must score
    exactly as in one process (each rank built its own tokenizer: the vocabulary must agree)."""
    need("torch")
    need("transformers")
    script = ROOT / "tests" / "ddp_evaluate.py"
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    single, double = tmp_path / "one.json", tmp_path / "two.json"
    alone = subprocess.run([sys.executable, str(script), str(single)], capture_output=True, text=True, env=env,
                           timeout=600)
    assert alone.returncode == 0, alone.stderr[-3000:]
    both = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                           str(script), str(double)], capture_output=True, text=True, env=env, timeout=600)
    assert both.returncode == 0, both.stderr[-3000:]
    one, two = json.loads(single.read_text()), json.loads(double.read_text())
    assert one.pop("world_size") == 1 and two.pop("world_size") == 2
    assert 0 < one["False"]["eval_f1"] < 1 and one["False"]["eval_hardeval"] > 0
    assert one == two and one["False"] == one["True"]
