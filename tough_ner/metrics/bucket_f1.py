"""The ``bucket_f1`` evaluate metric."""
from __future__ import annotations

from ..core.batch import Batch
from ..methods.buckets import bucket_f1, check_options
from ..core.matching import check_match
from ..metrics.base import (MODES_TEXT, DECODING, DECODING_ARGS, RESAMPLING, RESAMPLING_ARGS, TAG_ARGS,
                             ToughMetric, plain)

_DESCRIPTION = """Interpretable evaluation (Fu, Liu & Neubig, 2020): entity F1 per bucket of an entity
attribute: entity length (eLen), sentence length (sLen), entity density (eDen), OOV density
(oDen), entity and token frequency in training (eFre, tFre), entity and token label
consistency (eCon, tCon) and type (tag), with the paper's diagnostics."""

_CITATION = """@inproceedings{fu-etal-2020-interpretable,
  title = {Interpretable Multi-dataset Evaluation for Named Entity Recognition},
  author = {Fu, Jinlan and Liu, Pengfei and Neubig, Graham},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year = {2020},
  pages = {6058--6069},
  doi = {10.18653/v1/2020.emnlp-main.489}
}"""

_INPUTS = MODES_TEXT + "\nArgs:\n" + TAG_ARGS + """
    n_buckets: buckets per attribute, special ones included (default 4, at most 100); an int or {attribute: int}.
    edges: {attribute: [cuts]} user-given cuts of the regular buckets (special buckets stay).
    lowercase: match tokens and mention texts lowercased (default False: exact).
    match: "strict" (default), "exact", "partial" or "type": how an entity counts as right (credits of
        nervaluate's schemes; see the card).
    detailed: add the "buckets" tables, "diagnostics" and "match_scores" (default False).
    bootstrap: resamples for the bucket intervals of the diagnostics (default 1000; 0: none).
""" + RESAMPLING_ARGS + "\n" + DECODING_ARGS + """
Returns:
    f1 (overall micro span F1) and {attr}_{i}_f1 for every value attribute and bucket index i
    (0-based, in value order; stable for a fixed test set), e.g. eLen_0_f1, and tag_{type}_f1
    per entity type, e.g. tag_LOC_f1; NaN for an empty bucket.  With ci=True,
    <key>_ci_low and <key>_ci_high after each.
"""


class BucketF1(ToughMetric):
    """F1 per attribute bucket; ``train=`` gives the training statistics."""

    options = {"n_buckets": 4, "edges": None, "lowercase": False, "detailed": False, "bootstrap": 1000,
               "match": "strict", **RESAMPLING, **DECODING}
    match_table = True
    description = _DESCRIPTION
    citation_text = _CITATION
    inputs_text = _INPUTS
    reference_urls = ["https://aclanthology.org/2020.emnlp-main.489", "https://github.com/neulab/InterpretEval"]

    def check_options(self, options):
        super().check_options(options)
        check_options(options["n_buckets"], options["edges"], options["bootstrap"], options["confidence"])
        check_match(options["match"])

    def score(self, batch: Batch, **options) -> dict:
        return plain(bucket_f1(self.train_stats, batch, **options))
