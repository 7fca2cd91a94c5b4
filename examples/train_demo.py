"""Train a tiny BERT tagger on the embedded demo corpus and evaluate it with tough-ner.

    python examples/train_demo.py

Everything is built here, offline and on CPU in well under a minute: a WordPiece tokenizer
whose small vocabulary comes from the demo training sentences by a fixed rule (rarer words
split into several sub-tokens; the same vocabulary in every run and process), a 2-layer BERT from a config, one ``Trainer`` run, and an evaluation
whose ``compute_metrics`` adds HardEval, TMR and bucket F1 to span P/R/F1.
Needs the ``trainer`` extra: pip install 'tough-ner[trainer]'.
"""
from __future__ import annotations

import sys
import tempfile
from collections import Counter

import datasets
import tokenizers
import torch
import transformers

from tough_ner import TrainStats
from tough_ner.demo import load_demo
from tough_ner.trainer import robust_compute_metrics, tokenize_and_align

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tokenizer(sentences, vocab_size: int = 160) -> transformers.PreTrainedTokenizerFast:
    """A cased WordPiece tokenizer for ``sentences`` (lists of words) with a small vocabulary,
    so that rarer words split into several sub-tokens: the special tokens, every character
    (alone and as a continuation ``##c``), then the most frequent words, ties broken by the
    word, up to ``vocab_size``.  Built by rule, it is the same in every run and process
    (tokenizers' WordPieceTrainer breaks frequency ties differently in each process, so the
    ranks of a ``torchrun`` job disagreed on token ids)."""
    wordpiece = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=False)
    wordpiece.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    counts = Counter(piece for words in sentences for word in words
                     for piece, _ in wordpiece.pre_tokenizer.pre_tokenize_str(wordpiece.normalizer.normalize_str(word)))
    characters = sorted({c for piece in counts for c in piece})
    vocab = SPECIAL + characters + [f"##{c}" for c in characters]
    vocab += sorted((p for p in counts if len(p) > 1), key=lambda p: (-counts[p], p))[:max(vocab_size - len(vocab), 0)]
    wordpiece.model = tokenizers.models.WordPiece({token: i for i, token in enumerate(vocab)}, unk_token="[UNK]")
    wordpiece.post_processor = tokenizers.processors.BertProcessing(
        ("[SEP]", wordpiece.token_to_id("[SEP]")), ("[CLS]", wordpiece.token_to_id("[CLS]")))
    return transformers.PreTrainedTokenizerFast(tokenizer_object=wordpiece, unk_token="[UNK]", pad_token="[PAD]",
                                                cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def build_model(tokenizer, label_list, seed: int = 0) -> transformers.BertForTokenClassification:
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=128, max_position_embeddings=128,
                                     id2label=dict(enumerate(label_list)),
                                     label2id={label: i for i, label in enumerate(label_list)})
    torch.manual_seed(seed)
    return transformers.BertForTokenClassification(config)


def main(output_dir: str, epochs: float = 3, batch_eval_metrics: bool = False) -> dict:
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    label_list = ["O"] + [f"{p}-{t}" for t in stats.labels[1:] for p in ("B", "I")]
    tokenizer = build_tokenizer(train.tokens)
    encode = tokenize_and_align(tokenizer, label_list)
    train_set = datasets.Dataset.from_dict({"tokens": train.tokens, "ner_tags": train.tags}).map(encode, batched=True)
    eval_set = datasets.Dataset.from_dict({"tokens": test.tokens, "ner_tags": test.tags}).map(encode, batched=True)
    args = transformers.TrainingArguments(
        output_dir=output_dir, num_train_epochs=epochs, learning_rate=5e-3, per_device_train_batch_size=16,
        per_device_eval_batch_size=32, batch_eval_metrics=batch_eval_metrics, save_strategy="no",
        report_to=[], use_cpu=True, seed=0, disable_tqdm=True, logging_strategy="no")
    trainer = transformers.Trainer(
        model=build_model(tokenizer, label_list), args=args, train_dataset=train_set, eval_dataset=eval_set,
        data_collator=transformers.DataCollatorForTokenClassification(tokenizer),
        compute_metrics=robust_compute_metrics(label_list, eval_set, train=stats,
                                               metrics=["seqeval", "hardeval", "tmr", "bucket_f1"]))
    trainer.train()
    return trainer.evaluate()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        metrics = main(folder, batch_eval_metrics="--batch-eval-metrics" in sys.argv)
    for key in ("eval_precision", "eval_recall", "eval_f1", "eval_hardeval", "eval_hardeval_ter_unseen",
                "eval_hardeval_ter_diff", "eval_tmr_recall_unseen_tokens", "eval_tmr_recall_seen",
                "eval_bucket_f1_eLen_0_f1"):
        print(f"{key:<32} {metrics[key]:.4f}")
