"""``tough_ner.combine``: several evaluate modules as one, each given only its own inputs.

``evaluate.combine`` passes every keyword to every module, so a ``tokens=`` meant for the
tough-ner metrics breaks modules that do not take it, and it prefixes keys only when they
clash.  Here each module receives the inputs its features declare, and every key is prefixed
by the module's name (``hardeval_ter_unseen``, ``sentence_count_sentences``), so names are
stable; a module's headline key named like it stays single (``hardeval``, ``accuracy``), and
the overall span ``precision``/``recall``/``f1`` of the tough-ner metrics appear once, unprefixed.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ..core.batch import Batch
from .register import METRICS, metric_class
from ..trainer import SPAN_SCORES, prefixed, standard_scores
from ..metrics.base import ToughMetric


class Seqeval:
    """``"seqeval"`` as the Trainer helper has it: overall span P/R/F1 and token accuracy
    plus per-type ``{type}_{precision,recall,f1,number}`` (seqeval's defaults), computed here
    (evaluate's seqeval module would need a download)."""

    name = "seqeval"

    def __init__(self):
        self.predictions: List = []
        self.references: List = []

    @staticmethod
    def _feature_names():
        return ["predictions", "references"]

    def add_batch(self, *, predictions, references) -> None:
        self.predictions.extend(predictions)
        self.references.extend(references)

    def compute(self, *, predictions=None, references=None) -> dict:
        if predictions is not None or references is not None:
            self.add_batch(predictions=predictions, references=references)
        batch = Batch([[""] * len(tags) for tags in self.references], self.references, self.predictions)
        self.predictions, self.references = [], []
        return standard_scores(batch, per_type=True)


class Combination:
    """Modules evaluated together: ``add_batch`` and ``compute`` as for one module."""

    def __init__(self, modules: Sequence):
        if not modules:
            raise ValueError("combine needs at least one evaluate module")
        self.modules = list(modules)
        names = [module.name for module in self.modules]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"modules named {', '.join(repeated)} appear twice: their keys would clash")

    def _inputs(self, module, given: Dict) -> Dict:
        wanted = module._feature_names()
        missing = [name for name in wanted if given.get(name) is None]
        if missing and any(value is not None for value in given.values()):
            raise ValueError(f"{module.name} needs {', '.join(missing)}")
        return {name: given[name] for name in wanted if given.get(name) is not None}

    def add_batch(self, *, predictions=None, references=None, **inputs) -> None:
        given = {"predictions": predictions, "references": references, **inputs}
        for module in self.modules:
            module.add_batch(**self._inputs(module, given))

    def compute(self, *, predictions=None, references=None, **inputs) -> Optional[dict]:
        """Every module's result, keys prefixed ``{module name}_``; None off the main process."""
        given = {"predictions": predictions, "references": references, **inputs}
        merged: Dict[str, object] = {}
        for module in self.modules:
            result = module.compute(**self._inputs(module, given))
            if result is None:
                return None
            shared = SPAN_SCORES + ("accuracy",) if isinstance(module, Seqeval) else \
                SPAN_SCORES if isinstance(module, ToughMetric) else ()
            merged.update(prefixed(module.name, result, shared))
        return merged


def combine(modules: Sequence, train=None, **load_options) -> Combination:
    """Combine evaluate modules; tough-ner metric names (``"hardeval"``, ...) are loaded from
    this package with ``train=`` and ``load_options`` (e.g. ``keep_in_memory=True``), and
    ``"seqeval"`` adds seqeval's overall and per-type scores as the Trainer helper does."""
    loaded: List = []
    for module in modules:
        if module == "seqeval":
            module = Seqeval()
        elif isinstance(module, str):
            if module not in METRICS:
                raise ValueError(f"unknown tough-ner metric {module!r}; load other modules with evaluate.load "
                                 f"and pass them in")
            module = metric_class(module)(train=train, **load_options)
        loaded.append(module)
    return Combination(loaded)
