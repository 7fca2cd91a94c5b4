"""Small datasets for study tests: the embedded demo corpus (English news) and a generated
Spanish one in another domain (sports results and travel), each with two systems' runs."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List

from tough_ner.attacks.baselines import memorization
from tough_ner.core.corpus import Corpus, conll_text
from tough_ner.core.stats import TrainStats
from tough_ner.core.schemes import decode, spans_to_tags
from tough_ner.present.demo import contextual, load_demo

PEOPLE = ["Lucía Fernández", "Mateo Ruiz", "Valeria Gómez", "Hugo Navarro", "Carmen Ortega", "Diego Molina",
          "Sofía Herrera", "Pablo Castillo", "Elena Vidal", "Andrés Campos", "Irene Rubio", "Jorge Serrano"]
PLACES = ["Sevilla", "Valencia", "Bilbao", "Zaragoza", "Granada", "Salamanca", "Cádiz", "Oviedo", "Murcia", "Toledo"]
CLUBS = ["Atlético Sur", "Deportivo Norte", "Unión Costa", "Real Sierra", "Club Ribera", "Racing Valle"]
CUPS = ["Copa Regional", "Liga Costera", "Trofeo Sierra", "Copa Ribera"]
TEMPLATES = [
    ["{PER}", "marcó", "dos", "goles", "para", "el", "{ORG}", "en", "{LOC}", "."],
    ["El", "{ORG}", "venció", "al", "{ORG}", "por", "tres", "a", "uno", "."],
    ["{PER}", "viajó", "a", "{LOC}", "con", "{PER}", "el", "lunes", "."],
    ["En", "{LOC}", ",", "el", "entrenador", "{PER}", "habló", "del", "{ORG}", "."],
    ["El", "{ORG}", "ganó", "la", "{MISC}", "en", "{LOC}", "."],
]


def spanish(n_train: int = 120, n_test: int = 60, seed: int = 3):
    """(train sentences, test sentences) as (tokens, BIO tags); test names are partly unseen."""
    rng = random.Random(seed)
    pools = {"PER": PEOPLE, "LOC": PLACES, "ORG": CLUBS, "MISC": CUPS}

    def sentence(held_out: bool):
        tokens, spans = [], []
        for slot in rng.choice(TEMPLATES):
            if slot.startswith("{"):
                kind = slot[1:-1]
                pool = pools[kind]
                name = rng.choice(pool[len(pool) // 2:] if held_out and rng.random() < 0.5 else pool[:len(pool) // 2]
                                  if not held_out else pool)
                words = name.split()
                spans.append((len(tokens), len(tokens) + len(words), kind))
                tokens += words
            else:
                tokens.append(slot)
        return tokens, spans_to_tags(spans, len(tokens), "bio")

    return [sentence(False) for _ in range(n_train)], [sentence(True) for _ in range(n_test)]


def _write(path: Path, *columns) -> str:
    path.write_text(conll_text(*columns), encoding="utf-8")
    return path.name


def make_study(folder: Path, runs: int = 2) -> Dict[str, object]:
    """Both datasets in ``folder`` with a memorizer (one run) and a contextual system (``runs``
    runs, seeds 0, 1, ...) on each; the study as ``present.study.spec_of`` reads it."""
    train, test = load_demo()
    sets = {"demo": (train.tokens, train.tags, test.tokens, test.tags, "en")}
    es_train, es_test = spanish()
    sets["deportes"] = ([t for t, _ in es_train], [g for _, g in es_train], [t for t, _ in es_test],
                        [g for _, g in es_test], "es")
    datasets, systems = [], {"memorizer": {}, "contextual": {}}
    for name, (train_tokens, train_tags, test_tokens, test_tags, language) in sets.items():
        datasets.append({"name": name, "language": language,
                         "train": _write(folder / f"{name}-train.conll", train_tokens, train_tags),
                         "test": _write(folder / f"{name}-test.conll", test_tokens, test_tags)})
        memorized = memorization(TrainStats.from_corpus(Corpus(train_tokens, train_tags)), test_tokens)
        systems["memorizer"][name] = [_write(folder / f"{name}-memorizer.conll", test_tokens, test_tags, memorized)]
        seen = {" ".join(tokens[s:e]) for tokens, tags in zip(train_tokens, train_tags) for s, e, _ in decode(tags)}
        systems["contextual"][name] = []
        for run in range(runs):
            rng = random.Random(run)
            predicted = [contextual(rng, tokens, tags, seen) for tokens, tags in zip(test_tokens, test_tags)]
            systems["contextual"][name].append(_write(folder / f"{name}-contextual-{run}.conll", test_tokens,
                                                      test_tags, predicted))
    return {"datasets": datasets, "systems": systems, "options": {"resamples": 200, "seed": 0}}


def toml(study: Dict[str, object]) -> str:
    """The study as a TOML file's text."""
    lines = ["[options]"] + [f"{k} = {v!r}" for k, v in study["options"].items()]
    for d in study["datasets"]:
        lines += ["", "[[datasets]]"] + [f'{k} = "{v}"' for k, v in d.items()]
    for system, by_dataset in study["systems"].items():
        lines += ["", f"[systems.{system}]"] + [f"{d} = [{', '.join(repr(f) for f in files)}]"
                                               for d, files in by_dataset.items()]
    return "\n".join(lines) + "\n"


def capitalised(sentences):
    """A model for studies (``study_data:capitalised``): every capitalised word after the first
    is a one-word PER."""
    return [["B-PER" if i and word[:1].isupper() else "O" for i, word in enumerate(words)] for words in sentences]


def nothing(sentences):
    """A model that finds no entity (``study_data:nothing``)."""
    return [["O"] * len(words) for words in sentences]


def spanish_files(folder: Path) -> None:
    """The Spanish dataset as the docs name it: ``es-train.txt``, ``es-test.txt`` (token gold)
    and two systems' files ``es-pred.txt`` and ``es-baseline.txt`` (token gold prediction)."""
    train, test = spanish()
    tokens, tags = [t for t, _ in test], [g for _, g in test]
    _write(folder / "es-train.txt", [t for t, _ in train], [g for _, g in train])
    _write(folder / "es-test.txt", tokens, tags)
    seen = {" ".join(t[s:e]) for t, g in train for s, e, _ in decode(g)}
    rng = random.Random(0)
    _write(folder / "es-pred.txt", tokens, tags, [contextual(rng, t, g, seen) for t, g in test])
    stats = TrainStats.from_corpus(Corpus([t for t, _ in train], [g for _, g in train]))
    _write(folder / "es-baseline.txt", tokens, tags, memorization(stats, tokens))
