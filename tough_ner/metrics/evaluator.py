"""``tough_ner.evaluator``: evaluate's token-classification evaluator, through which every
tough-ner metric receives the tokens.

``evaluate.evaluator("token-classification")`` hands a metric only predictions and
references, and joins the words into one string for the pipeline, whose sub-tokens it maps
back to words by character offsets.  This evaluator runs the model through the model runner
(``tough_ner.models``: the words as given, sub-tokens mapped back by the tokenizer's
``word_ids``), maps its labels (``label_map``), and passes ``tokens`` to a metric that takes
them (a tough-ner metric, ``tough_ner.combine``) and not to one that does not (seqeval).
``strategy="bootstrap"`` uses the metric's own resampling (one draw for every key): each
rate becomes ``{"score", "confidence_interval", "standard_error"}``, counts stay numbers.
"""
from __future__ import annotations

import inspect
import math
from time import perf_counter
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np
from evaluate.evaluator import TokenClassificationEvaluator

from ..core.batch import Batch
from ..core.corpus import from_dataset
from ..core.schemes import check_decoding
from ..core.uncertainty import resampled_values
from ..methods.comparison import COUNTS
from ..models import Split, from_object, run
from .base import ToughMetric
from .register import METRICS, metric_class

# The method whose per-sentence counts a metric's intervals come from (nrb and rockner score
# their own sets, not an evaluator's data).
METHOD_OF = {METRICS[name]: name for name in ("hardeval", "tmr", "bucket_f1")}


class ToughEvaluator(TokenClassificationEvaluator):
    """A ``TokenClassificationEvaluator`` whose metrics get the tokens (module docstring).
    ``train``: training statistics for metrics named by a string (``"hardeval"``);
    ``label_map``: the model's labels to the data's types (``tough_ner.models.labels``);
    ``batch_size`` and ``aggregation`` (``first``, ``average``, ``max``) for a transformers model."""

    def __init__(self, task: str = "token-classification", default_metric_name: Optional[str] = None, train=None,
                 label_map: Union[None, str, Mapping[str, Optional[str]]] = None, batch_size: Optional[int] = None,
                 aggregation: str = "first"):
        super().__init__(task, default_metric_name=default_metric_name)
        self.train, self.label_map, self.batch_size, self.aggregation = train, label_map, batch_size, aggregation

    def prepare_metric(self, metric):
        """A tough-ner metric by name is loaded with this evaluator's ``train``."""
        if isinstance(metric, str) and metric in METRICS:
            if self.train is None:
                raise ValueError(f"metric {metric!r} needs training statistics: tough_ner.evaluator(train=...), or "
                                 f"pass the loaded metric")
            return metric_class(metric)(train=self.train, keep_in_memory=True)
        return super().prepare_metric(metric)

    def compute(self, model_or_pipeline=None, data=None, subset: Optional[str] = None, split: Optional[str] = None,
                metric=None, tokenizer=None, strategy: str = "simple", confidence_level: float = 0.95,
                n_resamples: int = 9999, device: Optional[int] = None, random_state: Optional[int] = None,
                input_column: str = "tokens", label_column: str = "ner_tags", join_by: Optional[str] = " ",
                label_map: Union[None, str, Mapping[str, Optional[str]]] = None) -> Dict[str, Any]:
        """evaluate's ``compute`` (the same arguments; ``join_by`` is unused: the words are never
        joined), plus ``label_map`` (default: the evaluator's).  Returns the metric's keys and
        evaluate's timing keys."""
        if strategy not in ("simple", "bootstrap"):
            raise ValueError(f"strategy must be 'simple' or 'bootstrap', got {strategy!r}")
        if model_or_pipeline is None:
            raise ValueError("give model_or_pipeline: a local model folder, a transformers model or pipeline, a spaCy "
                             "pipeline or a function of sentences (nothing is downloaded for you)")
        data = self.load_data(data=data, subset=subset, split=split)
        corpus = from_dataset(data, input_column, label_column)  # string or ClassLabel tags
        words, references = [list(sentence) for sentence in corpus.tokens], corpus.tags
        metric = self.prepare_metric(metric)
        if getattr(metric, "extra_inputs", None):
            raise ValueError(f"metric {metric.name!r} scores its own sets ({', '.join(metric.extra_inputs)} input), "
                             f"not an evaluator's data: run the model on them with tough_ner.evaluate_model")
        model = from_object(model_or_pipeline, tokenizer=tokenizer, device=_device(device),
                            batch_size=self.batch_size, aggregation=self.aggregation)
        if model.kind != "jsonl":
            model.load_now()  # outside the timing, as evaluate times the pipeline call only
        known = {tag.partition("-")[2] for tags in references for tag in tags if tag != "O"}
        stats = getattr(metric, "train_stats", None)
        known |= {label for label in (stats.labels if stats is not None else ()) if label != "O"}
        started = perf_counter()
        predicted, = run([model], {"data": Split(words, references)}, sorted(known),
                         self.label_map if label_map is None else label_map)
        finished = perf_counter()
        batch = predicted.batches["data"]
        inputs = {"predictions": batch.predictions, "references": references}
        if _takes_tokens(metric):
            inputs["tokens"] = words
        if strategy == "bootstrap":
            result = bootstrap(metric, batch, inputs, confidence_level, n_resamples, random_state)
        else:
            result = metric.compute(**inputs)
        result.update(self._compute_time_perf(started, finished, len(words)))
        return result


def _device(device: Optional[int]) -> Optional[str]:
    """evaluate's device ordinal (-1 CPU, k the k-th GPU; None: inferred) as a torch device name."""
    if device is None:
        return "auto"
    return "cpu" if device < 0 else f"cuda:{device}"


def _takes_tokens(metric) -> bool:
    """Whether a metric (or every module of a ``tough_ner.combine``) is given ``tokens``."""
    if hasattr(metric, "modules"):  # a Combination routes each input to the modules declaring it
        return True
    names = metric._feature_names() if hasattr(metric, "_feature_names") else ()
    return "tokens" in names


def bootstrap(metric, batch: Batch, inputs: Dict[str, Any], confidence: float, n_resamples: int,
              seed: Optional[int]) -> Dict[str, Any]:
    """The ``bootstrap`` strategy with a tough-ner metric's own resampling: its percentile
    interval of each rate key (``ci=True``, ``n_resamples`` resamples of sentences drawn with
    ``seed``) and the standard deviation of the resampled values; count keys stay numbers."""
    if not isinstance(metric, ToughMetric) or type(metric).__name__ not in METHOD_OF:
        raise ValueError(f"strategy='bootstrap' takes one tough-ner metric ({', '.join(METHOD_OF.values())}), which "
                         f"gives its own intervals; got {type(metric).__name__}")
    seed = 0 if seed is None else int(seed)
    result = metric.compute(**inputs, ci=True, n_resamples=n_resamples, confidence=confidence, seed=seed)
    method = METHOD_OF[type(metric).__name__]
    count = COUNTS[method]
    options = metric.score_options()
    if check_decoding(**metric.batch_options()) != batch.decoding:  # count as the metric decodes
        batch = Batch(batch.tokens, batch.references, batch.predictions, batch.documents, **metric.batch_options())
    accepted = inspect.signature(count).parameters
    counts = count(metric.train_stats, batch, **{k: v for k, v in options.items() if k in accepted})
    keys = [key for key in counts.keys if f"{key}_ci_low" in result]
    resampled = resampled_values(counts, keys, n_resamples, seed, options.get("unit", "sentence"))
    out: Dict[str, Any] = {}
    for key, value in result.items():
        if key.endswith(("_ci_low", "_ci_high")) and key.rsplit("_ci_", 1)[0] in resampled:
            continue
        if key in resampled:
            values = resampled[key][~np.isnan(resampled[key])]
            error = float(values.std(ddof=1)) if len(values) > 1 else math.nan
            out[key] = {"score": value, "confidence_interval": (result[f"{key}_ci_low"], result[f"{key}_ci_high"]),
                        "standard_error": error}
        else:
            out[key] = value
    return out


def evaluator(task: str = "token-classification", train=None,
              label_map: Union[None, str, Mapping[str, Optional[str]]] = None, batch_size: Optional[int] = None,
              aggregation: str = "first") -> ToughEvaluator:
    """The token-classification evaluator for tough-ner metrics (``ToughEvaluator``): as
    ``evaluate.evaluator("token-classification")``, with the tokens passed to the metric."""
    if task != "token-classification":
        raise ValueError(f"tough_ner.evaluator does token-classification only, not {task!r}")
    return ToughEvaluator(task, train=train, label_map=label_map, batch_size=batch_size, aggregation=aggregation)


__all__: Sequence[str] = ["ToughEvaluator", "bootstrap", "evaluator"]
