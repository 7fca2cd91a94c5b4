"""The ``rockner`` evaluate metric."""
from __future__ import annotations

from ..core.batch import Batch
from ..methods.rockner import rockner, split_versions
from ..core.formats import select
from ..core.schemes import DEFAULT_DECODING
from ..metrics.base import (MODES_TEXT, DECODING, DECODING_ARGS, RESAMPLING, RESAMPLING_ARGS, TAG_ARGS,
                             ToughMetric, plain)

_DESCRIPTION = """RockNER (Lin et al., EMNLP 2021): how much a system's F1 drops from the original test
set to its natural adversarial version (entities replaced by other real entities of the same
class, context words replaced by a masked language model), and how its errors change: exact
span with the right / wrong type, overlapping span by number of differing tokens, or missed."""

_CITATION = """@inproceedings{lin-etal-2021-rockner,
  title = {{R}ock{NER}: A Simple Method to Create Adversarial Examples for Evaluating the Robustness of Named Entity Recognition Models},
  author = {Lin, Bill Yuchen and Gao, Wenyang and Yan, Jun and Moreno, Ryan and Ren, Xiang},
  booktitle = {Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing},
  pages = {3728--3737},
  year = {2021},
  doi = {10.18653/v1/2021.emnlp-main.302}
}"""

_INPUTS = MODES_TEXT + "\nArgs:\n" + TAG_ARGS + """
    version: "original" or "attacked" for the whole batch (or one per sentence); both sets are needed.
    detailed: add "errors" (counts per category) and "confusion" tables (default False).
""" + RESAMPLING_ARGS + "\n" + DECODING_ARGS + """
Returns:
    precision_original, recall_original, f1_original, precision_attacked, recall_attacked,
    f1_attacked, f1_drop, f1_drop_relative, n_original, n_attacked, and for each version the
    share of gold entities per error category: {version}_exact_right_type, _exact_wrong_type,
    _overlap_right_type_d1/_d2/_d3plus, _overlap_wrong_type_d1/_d2/_d3plus, _missed.
"""


class Rockner(ToughMetric):
    """F1 drop and error analysis between an original and an attacked test set."""

    options = {"detailed": False, **RESAMPLING, **DECODING}
    extra_inputs = {"version": ""}
    needs_train = False
    description = _DESCRIPTION
    citation_text = _CITATION
    inputs_text = _INPUTS
    reference_urls = ["https://doi.org/10.18653/v1/2021.emnlp-main.302", "https://github.com/INK-USC/RockNER"]

    def score(self, batch: Batch, version=(), detailed=False, **resampling) -> dict:
        original, attacked = split_versions(batch.tokens, batch.references, batch.predictions, list(version),
                                            batch.documents)
        if batch.formats is not None or batch.decoding != DEFAULT_DECODING:  # keep what as_batch recorded
            # (hallucinated mentions) and the decoding, per version
            original, attacked = (select(batch, [i for i, v in enumerate(version) if v == name])
                                  for name in ("original", "attacked"))
        return plain(rockner(original, attacked, detailed, **resampling))
