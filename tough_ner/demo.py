"""The embedded demo corpus (authored by ``tough_ner/data/make_demo.py``; invented names)."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from .attacks import entity_attack
from .baselines import memorization
from .corpus import Corpus, read_conll
from .stats import TrainStats

DATA = Path(__file__).parent / "data"
TRAIN = DATA / "demo_train.conll"
TEST = DATA / "demo_test.conll"  # token gold memorizer contextual
NRB = DATA / "demo_nrb.conll"  # token gold memorizer contextual: NRB-style sentences
WTS = DATA / "demo_wts.conll"  # the same names in easy contexts
SYSTEMS = ("memorizer", "contextual")
NRB_TYPE_MAP = "conll"  # the demo systems tag PER, LOC, ORG, MISC
ATTACK_RATIOS = (0.2, 0.4, 0.6, 0.8, 1.0)


def load_demo() -> Tuple[Corpus, Corpus]:
    """(training corpus, test corpus with one prediction list per system in ``SYSTEMS``)."""
    return read_conll(TRAIN), read_conll(TEST, n_predictions=len(SYSTEMS))


def load_demo_nrb() -> Tuple[Corpus, Corpus]:
    """(NRB corpus, WTS corpus), each with one prediction list per system in ``SYSTEMS``."""
    return read_conll(NRB, n_predictions=len(SYSTEMS)), read_conll(WTS, n_predictions=len(SYSTEMS))


def demo_attacks(stats: TrainStats, test: Corpus, ratios: Sequence[float] = ATTACK_RATIOS, seed: int = 0
                 ) -> Dict[str, List[Tuple[str, Corpus]]]:
    """The demo test set under RockNER's entity attack at each ratio (built-in dictionary,
    training mentions excluded), predicted by the memorization baseline, the one demo
    system that can tag new text: ``{"memorizer": [(label, corpus), ...]}``."""
    versions = []
    for ratio in ratios:
        attacked = entity_attack(test, ratio=ratio, seed=seed, train=stats).to_dict()
        tokens, tags = attacked["tokens"], attacked["ner_tags"]
        versions.append((f"entity {ratio:g}", Corpus(tokens, tags, [memorization(stats, tokens)])))
    return {"memorizer": versions}
