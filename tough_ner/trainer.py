"""A ``compute_metrics`` for ``transformers.Trainer`` that reports the hard-case metrics.

The Trainer hands over sub-token logits and labels (-100 on special tokens, later
sub-tokens and padding).  ``robust_compute_metrics`` takes the argmax, keeps each word's first
sub-token (the labelled positions), maps ids to tags, recovers the words from the evaluation
dataset, and returns one flat dict: span ``precision``/``recall``/``f1`` and token
``accuracy`` (seqeval's defaults) plus each requested metric's keys prefixed by its name
(count keys only with ``sizes=True``; undefined NaN rates left out, with a warning).

The words come from the evaluation dataset: its ``tokens`` column (or ``words[sentence_id]``
with a sentence index column), aligned by the tokenizer's ``word_ids`` kept in a column —
one line in the usual preprocessing::

    encoded["word_ids"] = [encoded.word_ids(i) for i in range(len(examples["tokens"]))]

Without ``word_ids``, the k-th labelled position is taken as the k-th word, which must then
match the sentence's word count (it does unless sentences were truncated).
"""
from __future__ import annotations

import logging
import math
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .core.batch import Batch
from .core.scoring import ratio, span_scores
from .core.stats import TrainStats

OVERALL = ("precision", "recall", "f1", "accuracy")
# Every tough-ner method reporting these means the same micro span scores: they are kept once, unprefixed.
SPAN_SCORES = ("precision", "recall", "f1")
logger = logging.getLogger(__name__)
MetricSpec = Union[str, Any]  # a metric name ("seqeval", "hardeval", ...) or a tough-ner evaluate module


# A count's key: ``n`` as one of its words (n, n_unseen, n_invalid_transitions_gold, nrb_n_missed)
# or seqeval's ``{type}_number``.
_COUNT = re.compile(r"(?:^|_)n(?:_|$)|_number$")


def is_count(key: str) -> bool:
    """Whether a flat result key is a count (the same every epoch), not a score."""
    return _COUNT.search(key) is not None


def standard_scores(batch: Batch, per_type: bool = False) -> Dict[str, float]:
    """Span precision / recall / F1 and token accuracy, as seqeval computes them by default
    (``overall_*`` in evaluate's seqeval); ``per_type`` adds ``{type}_{precision,recall,f1,number}``."""
    scores = span_scores(batch)
    flat_gold = [tag for tags in batch.references for tag in tags]
    flat_pred = [tag for tags in batch.predictions for tag in tags]
    accuracy = ratio(sum(g == p for g, p in zip(flat_gold, flat_pred)), len(flat_gold))
    result = dict(zip(OVERALL, (scores["precision"], scores["recall"], scores["f1"], accuracy)))
    if per_type:
        for name, cell in scores["per_type"].items():
            result.update({f"{name}_precision": cell["precision"], f"{name}_recall": cell["recall"],
                           f"{name}_f1": cell["f1"], f"{name}_number": cell["n"]})
    return result


def _scorers(metrics: Sequence[MetricSpec], stats: Optional[TrainStats], options: Mapping[str, dict]
             ) -> List[Tuple[str, Callable[[Batch], dict]]]:
    """(prefix, batch -> flat result) for each requested metric, built once."""
    from .metrics.base import ToughMetric
    from .metrics.register import METRICS, metric_class

    scorers = []
    for spec in metrics:
        if spec == "seqeval":  # the overall scores are always there, unprefixed: add the per-type ones
            scorers.append(("seqeval", lambda batch: {k: v for k, v in standard_scores(batch, per_type=True).items()
                                                      if k not in OVERALL}))
            continue
        if isinstance(spec, ToughMetric):
            module = spec
        elif isinstance(spec, str) and spec in METRICS:
            cls = metric_class(spec)
            if cls.extra_inputs:  # nrb, rockner: their own sentences (NRB/WTS, an attacked set), not eval_dataset
                raise ValueError(f"metric {spec!r} scores its own test sets ({', '.join(cls.extra_inputs)} input), "
                                 f"not a Trainer's evaluation set; run it after training")
            if cls.needs_train and stats is None:
                raise ValueError(f"metric {spec!r} needs training statistics: pass train=")
            module = cls(train=stats, keep_in_memory=True, **options.get(spec, {}))
        else:
            raise ValueError(f"unknown metric {spec!r}: use 'seqeval', {', '.join(map(repr, METRICS))}, "
                             f"or a tough-ner evaluate module")
        name = spec if isinstance(spec, str) else type(module).__name__.lower()
        scorers.append((name, lambda batch, module=module: module.score(batch, **module.score_options())))
    return scorers


def prefixed(prefix: str, result: Mapping[str, Any], shared: Sequence[str] = ()) -> Dict[str, Any]:
    """The scalar keys of one metric's result named ``{prefix}_{key}``, except the metric's
    headline key named like the metric (``hardeval``: ``hardeval``, not ``hardeval_hardeval``)
    and the ``shared`` keys (kept unprefixed, once for all metrics)."""
    flat = {}
    for key, value in result.items():
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            name = key if key in shared else prefix if key == prefix else f"{prefix}_{key}"
            flat[name] = value.item() if hasattr(value, "item") else value
    return flat


def _columns(dataset, names: Sequence[str]) -> Dict[str, list]:
    """Plain Python lists of some columns (a datasets 5 ``Column`` re-reads Arrow per row)."""
    return dataset.select_columns(list(names)).to_dict()


class RobustComputeMetrics:
    """The callable returned by ``robust_compute_metrics``; see there."""

    def __init__(self, label_list: Sequence[str], eval_dataset, train=None,
                 metrics: Sequence[MetricSpec] = ("hardeval", "tmr", "bucket_f1"), *,
                 options: Optional[Mapping[str, dict]] = None, words: Optional[Sequence[Sequence[str]]] = None,
                 tokens_column: str = "tokens", word_ids_column: str = "word_ids",
                 sentence_column: Optional[str] = None, sizes: bool = False):
        self.label_list = list(label_list)
        self.sizes = sizes
        self.reported_nan: set = set()
        columns = list(getattr(eval_dataset, "column_names", None) or [])
        if not columns:
            raise TypeError("eval_dataset must be the tokenized evaluation datasets.Dataset given to the Trainer")
        if tokens_column in columns:
            self.words = _columns(eval_dataset, [tokens_column])[tokens_column]
        elif sentence_column is not None and words is not None:
            if sentence_column not in columns:
                raise ValueError(f"eval_dataset has no column {sentence_column!r} (columns: {columns})")
            source = _columns(words, [tokens_column])[tokens_column] if hasattr(words, "column_names") else words
            self.words = [list(source[i]) for i in _columns(eval_dataset, [sentence_column])[sentence_column]]
        else:
            raise ValueError(
                f"cannot recover the words of the evaluation sentences: eval_dataset has no {tokens_column!r} "
                f"column (columns: {columns}). Keep the word-level tokens column when tokenizing, or give "
                f"sentence_column= (a column with each example's sentence index) and words= (the word-level "
                f"sentences); keeping the tokenizer's word_ids in a {word_ids_column!r} column aligns them exactly.")
        self.word_ids = (_columns(eval_dataset, [word_ids_column])[word_ids_column]
                         if word_ids_column in columns else None)
        stats = TrainStats.coerce(train) if train is not None else None
        self.scorers = _scorers(metrics, stats, options or {})
        self._reset()

    def _reset(self) -> None:
        self.seen = 0
        self.tokens: List[List[str]] = []
        self.references: List[List[str]] = []
        self.predictions: List[List[str]] = []

    def __call__(self, eval_prediction, compute_result: Optional[bool] = None) -> Dict[str, float]:
        """Default mode (``compute_result`` None): score the whole evaluation set.  With
        ``batch_eval_metrics=True``: collect each batch, score when ``compute_result`` is true."""
        if compute_result is None:
            self._reset()
        self._add(eval_prediction.predictions, eval_prediction.label_ids)
        if compute_result is False:
            return {}
        if self.seen != len(self.words):
            count = self.seen
            self._reset()
            raise ValueError(f"predictions for {count} examples but eval_dataset has {len(self.words)}: "
                             f"pass the eval_dataset the Trainer evaluates")
        try:
            return self.score(Batch(self.tokens, self.references, self.predictions))
        finally:
            self._reset()

    def score(self, batch: Batch) -> Dict[str, float]:
        """The flat result for word-level sentences: no count keys unless ``sizes``, no NaN."""
        result = standard_scores(batch)
        for prefix, scorer in self.scorers:
            scores = scorer(batch)
            if not self.sizes:  # counts (n_unseen, seqeval's LOC_number) are the same every epoch
                scores = {k: v for k, v in scores.items() if not is_count(k)}
            result.update({k: v for k, v in prefixed(prefix, scores, SPAN_SCORES).items() if k not in SPAN_SCORES})
        missing = sorted(k for k, v in result.items() if isinstance(v, float) and math.isnan(v))
        new = [k for k in missing if k not in self.reported_nan]
        if new:  # loggers and trackers choke on NaN; say once why a key is absent
            logger.warning("left out of the evaluation metrics while undefined (an empty subset, n = 0): %s",
                           ", ".join(new))
            self.reported_nan.update(new)
        return {k: v for k, v in result.items() if k not in missing}

    def _add(self, logits, labels) -> None:
        logits = _numpy(logits[0] if isinstance(logits, (tuple, list)) else logits)
        labels = _numpy(labels)
        best = logits.argmax(-1) if logits.ndim == 3 else logits  # ids already, e.g. from preprocess_logits_for_metrics
        names = self.label_list
        for row in range(len(labels)):
            example = self.seen + row
            if example >= len(self.words):
                raise ValueError(f"more predictions than the {len(self.words)} examples of eval_dataset")
            positions = np.flatnonzero(labels[row] != -100)
            sentence = self.words[example]
            if self.word_ids is not None:
                ids = self.word_ids[example]
                try:
                    chosen = [ids[p] for p in positions.tolist()]
                except IndexError:
                    raise ValueError(f"example {example}: labels are longer than its word_ids") from None
                if None in chosen:
                    raise ValueError(f"example {example}: a labelled position has no word in word_ids")
            else:
                if len(positions) != len(sentence):
                    raise ValueError(
                        f"example {example}: {len(positions)} labelled positions but {len(sentence)} words; keep the "
                        f"tokenizer's word_ids in a 'word_ids' column to align truncated sentences")
                chosen = range(len(sentence))
            self.tokens.append([sentence[w] for w in chosen])
            self.references.append([names[i] for i in labels[row, positions].tolist()])
            self.predictions.append([names[i] for i in best[row, positions].tolist()])
        self.seen += len(labels)


def _numpy(array) -> np.ndarray:
    if hasattr(array, "detach"):  # a torch tensor (batch_eval_metrics hands them over on the device)
        array = array.detach().cpu().numpy()
    return np.asarray(array)


def tokenize_and_align(tokenizer, label_list: Sequence[str], tokens_column: str = "tokens",
                       tags_column: str = "ner_tags", max_length: Optional[int] = None):
    """A ``Dataset.map(..., batched=True)`` function: tokenizes the words, labels each word's
    first sub-token (-100 elsewhere) and keeps the tokenizer's ``word_ids``.  Tags may be
    strings or class ids."""
    label_ids = {name: i for i, name in enumerate(label_list)}

    def encode(examples):
        encoded = tokenizer(examples[tokens_column], is_split_into_words=True, truncation=True,
                            max_length=max_length)
        labels, word_ids = [], []
        for i, tags in enumerate(examples[tags_column]):
            ids = encoded.word_ids(i)
            tag_ids = [label_ids[t] if isinstance(t, str) else t for t in tags]
            labels.append([tag_ids[w] if w is not None and (p == 0 or ids[p - 1] != w) else -100
                           for p, w in enumerate(ids)])
            word_ids.append(ids)
        encoded["labels"] = labels
        encoded["word_ids"] = word_ids
        return encoded
    return encode


def robust_compute_metrics(label_list: Sequence[str], eval_dataset, train=None,
                           metrics: Sequence[MetricSpec] = ("hardeval", "tmr", "bucket_f1"),
                           **kwargs) -> RobustComputeMetrics:
    """A ``compute_metrics`` for ``transformers.Trainer``.

    Args:
        label_list: tag names by label id (``model.config.id2label`` in order).
        eval_dataset: the tokenized evaluation dataset given to the Trainer, with the word-level
            ``tokens`` column and, ideally, a ``word_ids`` column (see the module docstring).
        train: training statistics (anything ``train=`` accepts), for the metrics needing them.
        metrics: names among ``seqeval`` (adds per-type P/R/F1) and the tough-ner metrics, or
            tough-ner evaluate modules already loaded; their keys are prefixed ``{name}_``
            (a metric's headline key is just ``{name}``: ``hardeval``), and the overall span
            ``precision``/``recall``/``f1`` appear once, unprefixed.
        sizes: keep the count keys (``hardeval_n_unseen``, ``seqeval_LOC_number``, ...); off by
            default since they do not change between epochs.  Undefined rates (NaN, an empty
            subset) are always left out; a warning names them the first time.
        options: ``{metric name: {option: value}}`` for the named metrics.
        words, sentence_column: the word-level sentences and the column of each example's
            index into them, when the tokenized dataset has no ``tokens`` column.
    """
    return RobustComputeMetrics(label_list, eval_dataset, train, metrics, **kwargs)
