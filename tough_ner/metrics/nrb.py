"""The ``nrb`` evaluate metric."""
from __future__ import annotations

from ..core.batch import Batch
from ..methods.nrb import nrb, resolve_type_map
from ..metrics.base import MODES_TEXT, DECODING, DECODING_ARGS, RESAMPLING, RESAMPLING_ARGS, ToughMetric, plain

_DESCRIPTION = """Name Regularity Bias (Ghaddar et al., TACL 2021): accuracy on sentences whose one target
entity can only be typed from its context (NRB), on the same names in easy contexts (WTS, the
control set), and their gap.  A sentence counts when a predicted span has exactly the target's
boundaries and a type mapping to the target's type, whatever else is predicted."""

_CITATION = """@article{ghaddar-etal-2021-context,
  title = {Context-aware Adversarial Training for Name Regularity Bias in Named Entity Recognition},
  author = {Ghaddar, Abbas and Langlais, Philippe and Rashid, Ahmad and Rezagholizadeh, Mehdi},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {9},
  pages = {586--604},
  year = {2021},
  doi = {10.1162/tacl_a_00386}
}"""

_INPUTS = MODES_TEXT + """
Args:
    predictions: predicted tags, one list of strings per sentence (any tag scheme, system types).
    references: gold tags of NRB / WTS sentences: exactly one entity per sentence, typed
        PERSON, LOCATION or ORGANIZATION.
    tokens: the sentences' tokens, same shape.
    portion: optional, "nrb" or "wts" for the whole batch (or one per sentence): with it the
        result holds both sets and their gap.
    type_map: "auto" (default: detected from the predicted types), "nrb", "conll", "ontonotes"
        or a dict {system type: NRB type or None}; unmapped types are always wrong; the key
        type_map of the result names the map used.
    detailed: add the confusion counts (default False).
""" + RESAMPLING_ARGS + "\n" + DECODING_ARGS + """
Returns:
    accuracy, n, accuracy_PERSON, accuracy_LOCATION, accuracy_ORGANIZATION, n_boundary_errors,
    n_type_errors, n_missed, type_map (with train=: n_seen_other_type, accuracy_seen_other_type); with
    portions: nrb_accuracy, wts_accuracy, gap (WTS - NRB) and every key prefixed nrb_ / wts_.
"""


class Nrb(ToughMetric):
    """NRB / WTS accuracy; ``train=`` (optional) adds the targets seen with another type."""

    options = {"type_map": None, "detailed": False, **RESAMPLING, **DECODING}
    extra_inputs = {"portion": ""}
    needs_train = False
    description = _DESCRIPTION
    citation_text = _CITATION
    inputs_text = _INPUTS
    reference_urls = ["https://doi.org/10.1162/tacl_a_00386", "https://github.com/ghaddarAbs/NRB"]

    def check_options(self, options):
        super().check_options(options)
        resolve_type_map(options["type_map"])

    def score(self, batch: Batch, portion=(), type_map=None, detailed=False, **resampling) -> dict:
        given = [p != "" for p in portion]
        if any(given) and not all(given):
            raise ValueError("give portion= for every batch or for none")
        return plain(nrb(batch, type_map, portion if any(given) else None, self.train_stats, detailed,
                         **resampling))
