"""The embedded demo corpus (authored by ``tough_ner/data/make_demo.py``; invented names)."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from ..attacks import attack, entity_attack
from ..attacks.baselines import memorization
from ..core.corpus import Corpus, read_conll
from ..core.stats import TrainStats

DATA = Path(__file__).parents[1] / "data"
TRAIN = DATA / "demo_train.conll"
TEST = DATA / "demo_test.conll"  # token gold memorizer contextual
NRB = DATA / "demo_nrb.conll"  # token gold memorizer contextual: NRB-style sentences
WTS = DATA / "demo_wts.conll"  # the same names in easy contexts
SYSTEMS = ("memorizer", "contextual")
NRB_TYPE_MAP = "conll"  # the demo systems tag PER, LOC, ORG, MISC
ATTACK_RATIOS = (0.2, 0.4, 0.6, 0.8, 1.0)
ATTACK_KINDS = ("typo", "case", "cross_type")  # before the entity curve, each at ratio 1 (case: lower-cased)


def load_demo() -> Tuple[Corpus, Corpus]:
    """(training corpus, test corpus with one prediction list per system in ``SYSTEMS``)."""
    return read_conll(TRAIN), read_conll(TEST, n_predictions=len(SYSTEMS))


def load_demo_nrb() -> Tuple[Corpus, Corpus]:
    """(NRB corpus, WTS corpus), each with one prediction list per system in ``SYSTEMS``."""
    return read_conll(NRB, n_predictions=len(SYSTEMS)), read_conll(WTS, n_predictions=len(SYSTEMS))


def demo_attacks(stats: TrainStats, test: Corpus, ratios: Sequence[float] = ATTACK_RATIOS, seed: int = 0,
                 kinds: Sequence[str] = ATTACK_KINDS) -> Dict[str, List[Tuple[str, Corpus]]]:
    """The demo test set under each of ``kinds`` (typo, case, cross_type) at ratio 1, then
    under RockNER's entity attack at each ratio (built-in dictionary, training mentions
    excluded; the last is the report's headline), predicted by the memorization baseline, the
    one demo system that can tag new text: ``{"memorizer": [(label, corpus), ...]}`` (labels
    ``typo 1``, ``case lower``, ``cross_type 1``, ``entity 0.2`` ...)."""
    versions = []
    sets = [("case lower" if kind == "case" else f"{kind} 1",
             lambda k=kind: attack(test, level=k, seed=seed, train=stats)) for kind in kinds]
    sets += [(f"entity {ratio:g}", lambda r=ratio: entity_attack(test, ratio=r, seed=seed, train=stats))
             for ratio in ratios]
    for label, make in sets:
        attacked = make().to_dict()
        tokens, tags = attacked["tokens"], attacked["ner_tags"]
        versions.append((label, Corpus(tokens, tags, [memorization(stats, tokens)])))
    return {"memorizer": versions}
