"""The embedded demo corpus (authored by ``tough_ner/data/make_demo.py``; invented names)."""
from __future__ import annotations

from pathlib import Path
from typing import Tuple

from .corpus import Corpus, read_conll

DATA = Path(__file__).parent / "data"
TRAIN = DATA / "demo_train.conll"
TEST = DATA / "demo_test.conll"  # token gold memorizer contextual
SYSTEMS = ("memorizer", "contextual")


def load_demo() -> Tuple[Corpus, Corpus]:
    """(training corpus, test corpus with one prediction list per system in ``SYSTEMS``)."""
    return read_conll(TRAIN), read_conll(TEST, n_predictions=len(SYSTEMS))
