"""The embedded demo corpus (authored by ``tough_ner/data/make_demo.py``; invented names)."""
from __future__ import annotations

from pathlib import Path
from typing import Tuple

from .corpus import Corpus, read_conll

DATA = Path(__file__).parent / "data"
TRAIN = DATA / "demo_train.conll"
TEST = DATA / "demo_test.conll"  # token gold memorizer contextual
NRB = DATA / "demo_nrb.conll"  # token gold memorizer contextual: NRB-style sentences
WTS = DATA / "demo_wts.conll"  # the same names in easy contexts
SYSTEMS = ("memorizer", "contextual")
NRB_TYPE_MAP = "conll"  # the demo systems tag PER, LOC, ORG, MISC


def load_demo() -> Tuple[Corpus, Corpus]:
    """(training corpus, test corpus with one prediction list per system in ``SYSTEMS``)."""
    return read_conll(TRAIN), read_conll(TEST, n_predictions=len(SYSTEMS))


def load_demo_nrb() -> Tuple[Corpus, Corpus]:
    """(NRB corpus, WTS corpus), each with one prediction list per system in ``SYSTEMS``."""
    return read_conll(NRB, n_predictions=len(SYSTEMS)), read_conll(WTS, n_predictions=len(SYSTEMS))
