"""Evaluate the example's model (seeded initial weights: deterministic and not trivial) with
``robust_compute_metrics`` inside ``Trainer.evaluate``, once per ``batch_eval_metrics`` mode;
run alone or under ``torchrun``.  Rank 0 writes the metrics as JSON to argv[1].  Each process
builds its own tokenizer, as a real distributed job does."""
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

import datasets
import torch.distributed
import transformers

from tough_ner import TrainStats
from tough_ner.demo import load_demo
from tough_ner.trainer import robust_compute_metrics, tokenize_and_align

ROOT = Path(__file__).resolve().parents[1]
IGNORED = ("eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second",
           "eval_model_preparation_time", "epoch")


def main(out: str) -> None:
    spec = importlib.util.spec_from_file_location("train_demo", ROOT / "examples" / "train_demo.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    label_list = ["O"] + [f"{p}-{t}" for t in stats.labels[1:] for p in ("B", "I")]
    tokenizer = example.build_tokenizer(train.tokens)
    eval_set = datasets.Dataset.from_dict({"tokens": test.tokens, "ner_tags": test.tags}).map(
        tokenize_and_align(tokenizer, label_list), batched=True)
    model = example.build_model(tokenizer, label_list, seed=0)
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for batch_mode in (False, True):
            args = transformers.TrainingArguments(
                output_dir=folder, per_device_eval_batch_size=7, batch_eval_metrics=batch_mode, report_to=[],
                use_cpu=True, disable_tqdm=True, logging_strategy="no",
                ddp_backend="gloo" if int(os.environ.get("WORLD_SIZE", "1")) > 1 else None)
            trainer = transformers.Trainer(
                model=model, args=args, eval_dataset=eval_set,
                data_collator=transformers.DataCollatorForTokenClassification(tokenizer),
                compute_metrics=robust_compute_metrics(label_list, eval_set, train=stats,
                                                       metrics=["seqeval", "hardeval", "tmr", "bucket_f1"]))
            metrics = trainer.evaluate()
            results[str(batch_mode)] = {k: v for k, v in metrics.items() if k not in IGNORED}
            results["world_size"] = args.world_size
    if int(os.environ.get("RANK", "0")) == 0:
        Path(out).write_text(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
    # Without this, gloo's threads can outlive the interpreter's teardown and abort the process
    # (SIGABRT, "terminate called without an active exception"). Not after a failure: a rank
    # still in a collective would make it wait.
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
