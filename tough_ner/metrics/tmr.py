"""The ``tmr`` evaluate metric."""
from __future__ import annotations

from ..core.batch import Batch
from ..core.matching import check_match
from ..core.scoring import check_beta
from ..methods.tmr import tmr
from ..metrics.base import (MODES_TEXT, DECODING, DECODING_ARGS, RESAMPLING, RESAMPLING_ARGS, TAG_ARGS,
                             ToughMetric, plain)

_DESCRIPTION = """Tough Mentions Recall: recall on gold test mentions that are unseen in training (by
text, or by text and type) and on type-confusable mentions (text with 2+ types in the test
gold), beside overall micro precision / recall / F1."""

_CITATION = """@inproceedings{tu-lignos-2021-tmr,
  title = {{TMR}: Evaluating {NER} Recall on Tough Mentions},
  author = {Tu, Jingxuan and Lignos, Constantine},
  booktitle = {Proceedings of the 16th Conference of the European Chapter of the Association for Computational Linguistics: Student Research Workshop},
  year = {2021},
  note = {arXiv:2103.12312}
}"""

_INPUTS = MODES_TEXT + "\nArgs:\n" + TAG_ARGS + """
    match: "strict" (default: exact span and type), "exact", "partial" or "type": how a mention counts as
        found (nervaluate's schemes; "partial" gives half credit to an overlapping prediction).
    detailed: add "per_type", "share" and "match_scores" tables (default False).
    beta: a number > 0 (default 1); other than 1, the span F-beta, (1 + beta^2) P R / (beta^2 P + R),
        is added beside every F1 (f_beta, macro_f_beta, weighted_f_beta, per type, the match table);
        the subset recalls are recalls whatever beta.
""" + RESAMPLING_ARGS + "\n" + DECODING_ARGS + """
Returns:
    precision, recall, f1 (overall micro), macro_precision, macro_recall, macro_f1,
    weighted_precision, weighted_recall, weighted_f1 (over types, as seqeval's macro and
    weighted averages), f_beta, macro_f_beta, weighted_f_beta (beta other than 1),
    recall_seen, recall_unseen_any, recall_unseen_tokens,
    recall_unseen_type, recall_tcm_all, recall_tcm_seen, recall_tcm_unseen (NaN for an empty
    subset), n_mentions and the subset sizes n_seen ... n_tcm_unseen.
"""


class Tmr(ToughMetric):
    """Tough Mentions Recall; ``train=`` gives the training statistics."""

    options = {"detailed": False, "match": "strict", "beta": 1.0, **RESAMPLING, **DECODING}
    match_table = True
    description = _DESCRIPTION
    citation_text = _CITATION
    inputs_text = _INPUTS
    reference_urls = ["https://arxiv.org/abs/2103.12312"]

    def check_options(self, options):
        super().check_options(options)
        check_match(options["match"])
        check_beta(options["beta"])

    def score(self, batch: Batch, detailed=False, match="strict", beta=1.0, **resampling) -> dict:
        return plain(tmr(self.train_stats, batch, detailed=detailed, match=match, beta=beta, **resampling))
