"""Shared glue between ``evaluate.Metric`` and the tough_ner methods."""
from __future__ import annotations

from typing import Any, ClassVar, Dict

import datasets
import evaluate

from ..batch import Batch
from ..stats import TrainStats

# evaluate.EvaluationModule.__init__'s own keywords, forwarded untouched.
EVALUATE_KEYWORDS = ("config_name", "keep_in_memory", "cache_dir", "num_process", "process_id", "seed",
                     "experiment_id", "hash", "max_concurrent_cache_files", "timeout")


def input_features() -> datasets.Features:
    """predictions, references and tokens: one list of strings per sentence."""
    strings = datasets.List(datasets.Value("string"))
    return datasets.Features({"predictions": strings, "references": strings, "tokens": strings})


class ToughMetric(evaluate.Metric):
    """Base of the tough-ner metrics.

    Subclasses set ``options`` (name -> default; accepted at load time and per ``compute``
    call), the card texts, and implement ``score(batch, **options)``.  Any other keyword is
    a ``TypeError`` (evaluate would silently swallow a typo).
    """

    options: ClassVar[Dict[str, Any]] = {}
    needs_train: ClassVar[bool] = True
    description: ClassVar[str] = ""
    citation_text: ClassVar[str] = ""
    inputs_text: ClassVar[str] = ""
    reference_urls: ClassVar[list] = []

    def __init__(self, train=None, **kwargs):
        unknown = sorted(set(kwargs) - set(EVALUATE_KEYWORDS) - set(self.options))
        if unknown:
            raise TypeError(
                f"{type(self).__name__} got unexpected keyword argument(s) {', '.join(unknown)}; it accepts "
                f"train, {', '.join(self.options) or 'no options'}, and evaluate's {', '.join(EVALUATE_KEYWORDS)}")
        if self.needs_train or train is not None:
            self.train_stats = TrainStats.coerce(train)
        else:
            self.train_stats = None
        self.defaults = {name: kwargs.pop(name, default) for name, default in self.options.items()}
        self.check_options(self.defaults)
        super().__init__(**kwargs)

    def check_options(self, options: Dict[str, Any]) -> None:
        """Raise ``ValueError`` for an option value the method cannot use."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=self.description, citation=self.citation_text, inputs_description=self.inputs_text,
            features=input_features(), reference_urls=list(self.reference_urls))

    def add_batch(self, *, predictions=None, references=None, tokens=None, **kwargs):
        """Add a batch of sentences: predicted tags, gold tags and tokens."""
        self._require_tokens(predictions, references, tokens)
        return super().add_batch(predictions=predictions, references=references, tokens=tokens, **kwargs)

    def compute(self, *, predictions=None, references=None, tokens=None, **kwargs):
        """Score everything added so far plus this batch; options override the load-time ones."""
        self._require_tokens(predictions, references, tokens)
        unknown = sorted(set(kwargs) - set(self.options))
        if unknown:
            raise TypeError(f"{type(self).__name__}.compute got unexpected keyword argument(s) "
                            f"{', '.join(unknown)}; options are {', '.join(self.options) or 'none'}")
        if predictions is None and references is None:
            result = super().compute(**kwargs)
        else:
            result = super().compute(predictions=predictions, references=references, tokens=tokens, **kwargs)
        # evaluate 0.4.6 keeps released file locks on the object, which cannot be pickled.
        self.filelocks = None
        self.rendez_vous_lock = None
        return result

    @staticmethod
    def _require_tokens(predictions, references, tokens) -> None:
        if tokens is None and (predictions is not None or references is not None):
            raise ValueError("tokens= is required: the test tokens, one list of strings per sentence "
                             "(the metric classifies tokens and mentions by their text)")

    def _compute(self, predictions, references, tokens, **options):
        chosen = {**self.defaults, **options}
        self.check_options(chosen)
        return self.score(Batch(tokens, references, predictions), **chosen)

    def score(self, batch: Batch, **options) -> dict:
        raise NotImplementedError

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("filelock", "filelocks", "rendez_vous_lock"):
            state[name] = None
        return state


def plain(value):
    """Python scalars for JSON and the Trainer: numpy numbers become int/float."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "item"):
        return value.item()
    return value

