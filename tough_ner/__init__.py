"""tough-ner: where NER models fail, not just their F1.

Training statistics once (``TrainStats``), then hard-case metrics: HardEval token error
rates, Tough Mentions Recall, bucketed F1, Name Regularity Bias (``tough_ner.nrb``) and
RockNER attacks (``tough_ner.attacks``, ``tough_ner.rockner``).  ``evaluate`` modules live in
``tough_ner.metrics``; ``tough_ner.combine`` joins them; ``tough_ner.trainer`` plugs them
into ``transformers.Trainer``.
"""
from .batch import Batch
from .formats import as_batch
from .buckets import bucket_f1
from .comparison import compare
from .corpus import Corpus, from_dataset, read_conll, read_predictions
from .hardeval import hardeval, kfold_hard_tokens
from .matching import match_scores
from .schemes import decode, to_bilou, to_bio, to_io
from .stats import TrainStats
from .tmr import tmr

__version__ = "0.1.0"


def __getattr__(name):
    if name == "combine":  # imports evaluate: only when asked for
        from .metrics.combine import combine
        return combine
    raise AttributeError(f"module 'tough_ner' has no attribute {name!r}")


__all__ = ["Batch", "as_batch", "bucket_f1", "combine", "compare", "Corpus", "TrainStats", "decode", "from_dataset",
           "hardeval", "match_scores",
           "kfold_hard_tokens", "read_conll", "read_predictions", "tmr", "to_bilou", "to_bio", "to_io", "__version__"]
