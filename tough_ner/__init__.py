"""tough-ner: where NER models fail, not just their F1.

Training statistics once (``TrainStats``), then hard-case metrics: HardEval token error
rates, Tough Mentions Recall, bucketed F1, Name Regularity Bias (``tough_ner.nrb``) and
RockNER attacks (``tough_ner.attacks``, ``tough_ner.rockner``).  ``evaluate`` modules live in
``tough_ner.metrics``; ``tough_ner.combine`` joins them; ``tough_ner.trainer`` plugs them
into ``transformers.Trainer``.
"""
import sys
from types import ModuleType

# Each name is imported from its module when first used: "import tough_ner" loads no numpy,
# so the command line can configure numpy before anything loads it (tough_ner.cli).
_EXPORTS = {
    "Batch": "batch", "as_batch": "formats", "bucket_f1": "buckets", "compare": "comparison", "Corpus": "corpus",
    "from_dataset": "corpus", "read_conll": "corpus", "read_predictions": "corpus", "read_batch": "corpus",
    "hardeval": "hardeval", "kfold_hard_tokens": "hardeval", "match_scores": "matching", "decode": "schemes",
    "to_bilou": "schemes", "to_bio": "schemes", "to_io": "schemes", "TrainStats": "stats", "tmr": "tmr",
    "combine": "metrics.combine",
}

__version__ = "0.1.0"


def __getattr__(name):
    from importlib import import_module, util
    module = _EXPORTS.get(name)
    if module is None:  # a submodule (tough_ner.stats, ...), as the eager package gave them
        if name.startswith("_") or util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'tough_ner' has no attribute {name!r}")
        return import_module(f".{name}", __name__)
    value = getattr(import_module(f".{module}", __name__), name)  # combine imports evaluate: only when asked for
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(__all__) | {name for name in globals() if name.startswith("__")})


class _Package(ModuleType):
    """Keeps ``tough_ner.hardeval`` and ``tough_ner.tmr`` the functions: the first import of
    the submodule of the same name sets the package's attribute to that module."""

    def __setattr__(self, name, value):
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = ["Batch", "as_batch", "bucket_f1", "combine", "compare", "Corpus", "TrainStats", "decode", "from_dataset",
           "hardeval", "match_scores",
           "kfold_hard_tokens", "read_batch", "read_conll", "read_predictions", "tmr", "to_bilou", "to_bio", "to_io",
           "__version__"]
