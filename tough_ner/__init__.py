"""tough-ner: where NER models fail, not just their F1.

Training statistics once (``TrainStats``), then hard-case metrics: HardEval token error
rates, Tough Mentions Recall, bucketed F1, Name Regularity Bias (``tough_ner.nrb``) and
RockNER attacks (``tough_ner.attacks``, ``tough_ner.rockner``).  ``evaluate`` modules live in
``tough_ner.metrics``; ``tough_ner.combine`` joins them; ``tough_ner.trainer`` plugs them
into ``transformers.Trainer``.
"""
# These two names are also their modules' names: imported here, the functions win over the
# submodules that ``import tough_ner.hardeval`` would otherwise leave as the package's attributes.
from .hardeval import hardeval, kfold_hard_tokens
from .tmr import tmr

__version__ = "0.1.0"

# The other names, imported on first use (PEP 562): a command that runs one method does not
# pay for importing the others.
_HOME = {"Batch": "batch", "as_batch": "formats", "bucket_f1": "buckets", "compare": "comparison",
         "Corpus": "corpus", "from_dataset": "corpus", "read_conll": "corpus", "read_predictions": "corpus",
         "match_scores": "matching", "decode": "schemes",
         "to_bilou": "schemes", "to_bio": "schemes", "to_io": "schemes", "TrainStats": "stats",
         "combine": "metrics.combine"}


def __getattr__(name):
    if name not in _HOME:
        raise AttributeError(f"module 'tough_ner' has no attribute {name!r}")
    from importlib import import_module
    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


__all__ = ["Batch", "as_batch", "bucket_f1", "combine", "compare", "Corpus", "TrainStats", "decode", "from_dataset",
           "hardeval", "match_scores",
           "kfold_hard_tokens", "read_conll", "read_predictions", "tmr", "to_bilou", "to_bio", "to_io", "__version__"]
