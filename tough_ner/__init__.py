"""tough-ner: where NER models fail, not just their F1.

Training statistics once (``TrainStats``), then hard-case metrics: HardEval token error
rates, Tough Mentions Recall and bucketed F1 today, more methods as they land.
``evaluate`` modules live in ``tough_ner.metrics``.
"""
from .batch import Batch
from .buckets import bucket_f1
from .corpus import Corpus, from_dataset, read_conll, read_predictions
from .hardeval import hardeval, kfold_hard_tokens
from .schemes import decode, to_bilou, to_bio, to_io
from .stats import TrainStats
from .tmr import tmr

__version__ = "0.1.0"

__all__ = ["Batch", "bucket_f1", "Corpus", "TrainStats", "decode", "from_dataset", "hardeval", "kfold_hard_tokens",
           "read_conll", "read_predictions", "tmr", "to_bilou", "to_bio", "to_io", "__version__"]
