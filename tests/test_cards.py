import re

import pytest
from seqeval.metrics import f1_score

from tough_ner import Batch, TrainStats
from tough_ner.demo import load_demo, load_demo_nrb
from tough_ner.nrb import nrb
from tough_ner.register import METRICS
from tough_ner.report import METHODS

from conftest import ROOT

CARD_KEYS = {"title", "emoji", "colorFrom", "colorTo", "sdk", "app_file", "tags", "description"}


@pytest.mark.parametrize("name", sorted(METRICS))
def test_card_has_yaml_sections_and_every_output_key(name):
    card = (ROOT / "metrics" / name / "README.md").read_text()
    header = card.split("---")[1]
    assert CARD_KEYS <= set(re.findall(r"^(\w+):", header, re.M))
    for section in ("## How to Use", "### Inputs", "### Output Values", "### Examples", "## Limitations", "## Citation"):
        assert section in card
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    if name == "nrb":  # its own sentences; the card lists single-set and NRB + WTS keys
        nrb_set, wts_set = load_demo_nrb()
        batch = Batch(nrb_set.tokens + wts_set.tokens, nrb_set.tags + wts_set.tags,
                      nrb_set.predictions[0] + wts_set.predictions[0])
        portion = ["nrb"] * len(nrb_set.tokens) + ["wts"] * len(wts_set.tokens)
        result = {**nrb(batch, "conll", stats=stats), **nrb(batch, "conll", portion, stats)}
    elif name == "rockner":  # the original demo test set against its attacked version
        from tough_ner.demo import demo_attacks
        from tough_ner.rockner import rockner
        attacked = demo_attacks(stats, test)["memorizer"][-1][1]
        result = rockner(Batch(test.tokens, test.tags, test.predictions[0]),
                         Batch(attacked.tokens, attacked.tags, attacked.predictions[0]), detailed=True)
        # The card's example figures, each from seqeval on the same tags.
        originals = (f1_score(test.tags, test.predictions[0]), f1_score(attacked.tags, attacked.predictions[0]))
        assert (result["f1_original"], result["f1_attacked"]) == pytest.approx(originals, abs=1e-12)
        drop = originals[0] - originals[1]
        assert (f"F1 {originals[0]:.4f} on the original test set to {originals[1]:.4f} under the entity attack "
                f"at ratio 1.0 (`f1_drop` {drop:.4f}, `f1_drop_relative` {drop / originals[0]:.4f})"
                in " ".join(card.split()))
        result = {k: v for k, v in result.items() if k not in ("errors", "confusion")}
    else:
        result = METHODS[name](stats, Batch(test.tokens, test.tags, test.predictions[0]))
    missing = [key for key in result if f"`{key}`" not in card]
    assert not missing
    # ci=True adds an interval after every rate key: documented once, generically.
    assert "`<key>_ci_low` and `<key>_ci_high`" in card and "### Confidence intervals and comparisons" in card
    assert (ROOT / "metrics" / name / "requirements.txt").read_text().startswith("tough-ner")
