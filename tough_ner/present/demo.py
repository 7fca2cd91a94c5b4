"""The embedded demo corpus (authored by ``tough_ner/data/make_demo.py``; invented names)."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from ..attacks.baselines import memorization
from ..core.corpus import Corpus, read_conll
from ..core.schemes import decode, spans_to_tags
from ..core.stats import TrainStats
from .evaluation import attacked_sets

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


def contextual(rng: random.Random, tokens: Sequence[str], gold: Sequence[str], seen_texts) -> List[str]:
    """The ``contextual`` demo system on one sentence: its gold tags with seeded, realistic
    errors, more of them on mentions whose text is not among ``seen_texts`` (the training
    mentions): missed, mistyped, cut short, and a few spurious capitalised words."""
    types = ["PER", "LOC", "ORG", "MISC"]
    spans = []
    for start, end, entity_type in decode(gold):
        unseen = " ".join(tokens[start:end]) not in seen_texts
        roll = rng.random()
        if roll < (0.12 if unseen else 0.02):
            continue  # missed
        if roll < (0.30 if unseen else 0.06):
            entity_type = rng.choice([t for t in types if t != entity_type])
        elif roll < (0.38 if unseen else 0.08) and end - start > 1:
            end -= 1  # boundary error
        spans.append((start, end, entity_type))
    covered = {i for start, end, _ in spans for i in range(start, end)}
    for i, token in enumerate(tokens):
        if i and token[:1].isupper() and i not in covered and rng.random() < 0.05:
            spans.append((i, i + 1, "MISC"))  # spurious
            covered.add(i)
    return spans_to_tags(sorted(spans), len(tokens), "bio")


def demo_attacks(stats: TrainStats, test: Corpus, ratios: Sequence[float] = ATTACK_RATIOS, seed: int = 0,
                 kinds: Sequence[str] = ATTACK_KINDS) -> Dict[str, List[Tuple[str, Corpus]]]:
    """The demo test set under each of ``kinds`` (typo, case, cross_type) at ratio 1, then
    under RockNER's entity attack at each ratio (built-in dictionary, training mentions
    excluded; the last is the report's headline), predicted by both demo systems:
    ``{"memorizer": [(label, corpus), ...], "contextual": [...]}`` (labels ``typo 1``, ``case
    lower``, ``cross_type 1``, ``entity 0.2`` ...).  The memorizer tags the new sentences by
    its rule; the contextual system, a simulation, makes its errors on them at its test
    set's rates (``contextual``, seeded by ``seed`` and the sentence)."""
    seen_texts = {text for text, _ in stats.mentions}
    versions: Dict[str, List[Tuple[str, Corpus]]] = {name: [] for name in SYSTEMS}
    for label, corpus in attacked_sets(stats, test, list(kinds) + ["entity"], ratios, seed):
        # One generator per sentence, the same in every set: a sentence draws the same rolls
        # whatever was replaced, so more replaced (unseen) mentions can only mean more errors.
        made = {"memorizer": memorization(stats, corpus.tokens),
                "contextual": [contextual(random.Random(f"{seed}/{s}"), tokens, gold, seen_texts)
                               for s, (tokens, gold) in enumerate(zip(corpus.tokens, corpus.tags))]}
        for name in SYSTEMS:
            versions[name].append((label, Corpus(corpus.tokens, corpus.tags, [made[name]])))
    return versions
