"""The ``hardeval`` evaluate metric."""
from __future__ import annotations

from ..core.batch import Batch
from ..methods.hardeval import ERROR_SCHEMES, hardeval
from ..metrics.base import MODES_TEXT, DECODING, DECODING_ARGS, RESAMPLING, RESAMPLING_ARGS, ToughMetric, plain

_DESCRIPTION = """HardEval (Bernier-Colborne & Langlais, 2020): token error rates on the test tokens that
are hard for a model that memorises its training data: tokens never seen in training
(unseen-I / unseen-O) and tokens whose gold label differs from their usual training label
(diff-I / diff-O / diff-E).  The hardeval score is the mean of TER(unseen) and TER(diff)."""

_CITATION = """@inproceedings{bernier-colborne-langlais-2020-hardeval,
  title = {{HardEval}: Focusing on Challenging Tokens to Assess Robustness of {NER}},
  author = {Bernier-Colborne, Gabriel and Langlais, Phillippe},
  booktitle = {Proceedings of the 12th Language Resources and Evaluation Conference},
  year = {2020},
  pages = {1704--1711}
}"""

_INPUTS = MODES_TEXT + """
Args:
    predictions: predicted tags, one list of strings per sentence (BIO, IOB1, BIOES/BILOU or IO).
    references: gold tags, same shape.
    tokens: the test tokens, same shape.
    strict: diff subsets keep only tokens never seen with their gold label (default False).
    error: label comparison, "bilou" (default, types included), "bio", or "io" (entity or not).
    detailed: add "per_type", "hard_tokens" and "error_breakdown" tables (default False).
""" + RESAMPLING_ARGS + "\n" + DECODING_ARGS + """
Returns:
    hardeval, ter_all, ter_unseen, ter_unseen_I, ter_unseen_O, ter_diff, ter_diff_I, ter_diff_O,
    ter_diff_E (NaN for an empty subset) and their sizes n_all, n_unseen, ... n_diff_E; with
    ci=True, <key>_ci_low and <key>_ci_high after hardeval and each ter_ key.
"""


class Hardeval(ToughMetric):
    """HardEval token error rates; ``train=`` gives the training statistics."""

    options = {"strict": False, "error": "bilou", "detailed": False, **RESAMPLING, **DECODING}
    match_table = True
    description = _DESCRIPTION
    citation_text = _CITATION
    inputs_text = _INPUTS
    reference_urls = ["https://aclanthology.org/2020.lrec-1.211"]

    def check_options(self, options):
        super().check_options(options)
        if options["error"] not in ERROR_SCHEMES:
            raise ValueError(f"error={options['error']!r}: use one of {', '.join(ERROR_SCHEMES)}")

    def score(self, batch: Batch, strict=False, error="bilou", detailed=False, **resampling) -> dict:
        return plain(hardeval(self.train_stats, batch, strict=bool(strict), error=error, detailed=detailed,
                              **resampling))
