"""Author the embedded demo corpus: ``python -m tough_ner.data.make_demo``.

Invented names in invented sentence templates, seeded, so that every subset of every
tough-ner method is non-empty: unseen words, words whose test label differs from their
usual training label (``May`` the month as a person; ``Eastport`` the town as a team;
``Reading`` the town as a verb), mentions seen with another type, type-confusable mentions,
long mentions.  Two systems: ``memorizer`` (tough_ner.baselines.memorization) and
``contextual`` (tough_ner.demo.contextual: gold with seeded, realistic errors, more of them on
unseen mentions).
"""
from __future__ import annotations

import random
from pathlib import Path

FIRST = ["Alma", "Bruno", "Celia", "Dario", "Elin", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira",
         "Luca", "Mira", "Nils", "Olga", "Pavel", "Rosa", "Sami", "Tilda", "Umar"]
LAST = ["Varga", "Okafor", "Lindqvist", "Moreau", "Petrov", "Castillo", "Haddad", "Brennan", "Novak",
        "Ferreira", "Kowalski", "Tanaka", "Abara", "Sorensen"]
TOWNS = ["Eastport", "Kessling", "Valmora", "Norhaven", "Redmoor", "Saltcombe", "Thornbury", "Quenby",
         "Reading", "Port Alva", "Marlow Falls", "Jordan"]
COUNTRIES = ["Valdoria", "Ostmark", "Selvania", "Karesh"]
COMPANIES = ["Kessling Steel", "Norhaven Bank", "Quenby Press", "Alva Mining Corporation",
             "Bank of Eastport", "Tallow Bay Power Company", "Union Rail", "Marlow Foods"]
TEAMS = ["Valmora United", "Redmoor Rovers", "Thornbury Town", "Saltcombe Athletic"]
ADJECTIVES = ["Valdorian", "Ostmarker", "Selvanian", "Kareshi"]
EVENTS = ["Kessling Open", "Eastport Cup", "Saltcombe Marathon", "Norhaven Film Festival"]
MONTHS = ["May", "June", "March", "April"]

# Test-only names: never in training.
NEW_FIRST = ["Zora", "Quillon", "Yannick", "Wendeline", "Ximena"]
NEW_LAST = ["Drummond", "Ekwueme", "Halvorsen", "Iturbe"]
NEW_TOWNS = ["Brixley", "Ferncastle", "Golspie Hythe"]
NEW_COMPANIES = ["Halden Instruments", "Brixley Savings Bank of the North", "Ovaro Telecom"]
NEW_EVENTS = ["Ferncastle Regatta"]

TRAIN_TEMPLATES = [
    "{PER} said on {DAY} that {ORG} would cut jobs in {LOC} .",
    "{ORG} shares rose 3 percent in {LOC} trading .",
    "{PER} , a spokesman for {ORG} , declined to comment .",
    "The {MISC_ADJ} government met {PER} in {LOC} in {MONTH} .",
    "{TEAM} beat {TEAM} 2-1 in {LOC} on {DAY} .",
    "{PER} won the {EVENT} ahead of {PER} .",
    "Prices in {LOC} fell in {MONTH} , {ORG} said .",
    "{PER} will visit {COUNTRY} in {MONTH} .",
    "Police in {LOC} said the road to {LOC} was closed .",
    "The {EVENT} starts in {MONTH} .",
    "{ORG} reported a profit of 12 million in {MONTH} .",
    "{MISC_ADJ} fans travelled to {LOC} to watch {TEAM} .",
    "Officials from {COUNTRY} and {COUNTRY} signed the accord .",
    "{PER} joined {TEAM} from {TEAM} last season .",
    "Reading is a town near {LOC} .",
    "Flights from Reading to {LOC} resumed on {DAY} .",
    "The talks in Jordan ended on {DAY} .",
    "Union Rail raised fares in {MONTH} .",
    "The union said workers would strike in {MONTH} .",
    "Eastport drew 0-0 with {TEAM} in {LOC} .",
]
TEST_TEMPLATES = TRAIN_TEMPLATES[:14] + [
    "Police in Eastport said the road was closed .",
    "May {LAST} said the plan was fair .",
    "Jordan scored twice as {TEAM} won .",
    "Jordan and {COUNTRY} agreed to talk .",
    "Eastport beat {TEAM} 1-0 on {DAY} .",
    "Reading the report , {PER} smiled .",
    "Brixley won the cup final in Brixley on {DAY} .",
    "{PER} met the head of Brixley Savings Bank of the North .",
    "Analysts expect Ovaro Telecom to grow faster than Halden Instruments .",
    "The Ferncastle Regatta drew record crowds to Ferncastle .",
]
DAYS = ["Monday", "Tuesday", "Friday"]

# NRB-style sentences: one single-word target typed only by its context.  NRB uses names whose
# usual training type is another one; WTS ("witness") puts the same names in easy contexts.
NRB_CONTEXTS = {
    "PERSON": ["{X} said she would retire at the end of the season .", "Coach {X} praised her players .",
               "{X} , 34 , signed a two-year contract on {DAY} ."],
    "LOCATION": ["Heavy snow closed every school in {X} on {DAY} .", "The new bridge links {X} to the coast .",
                 "Tourists flocked to the old harbour of {X} ."],
    "ORGANIZATION": ["{X} shares fell 5 percent after the profit warning .",
                     "{X} hired two hundred engineers last year .", "The board of {X} approved the merger ."],
}
NRB_NAMES = {"PERSON": ["Eastport", "Kessling", "Valmora", "Norhaven", "Valdoria"],
             "LOCATION": ["Varga", "Okafor", "Petrov", "Novak", "Tanaka"],
             "ORGANIZATION": ["Brennan", "Moreau", "Redmoor", "Saltcombe", "Haddad"]}
WTS_NAMES = {"PERSON": ["Varga", "Okafor", "Petrov", "Brennan", "Moreau", "Haddad"],
             "LOCATION": ["Eastport", "Kessling", "Valmora", "Norhaven", "Redmoor", "Saltcombe"],
             "ORGANIZATION": ["Eastport"]}


def _entity(rng: random.Random, slot: str, unseen: bool):
    """(tokens, type) for a template slot; ``unseen`` draws test-only names where they exist."""
    if slot == "PER":
        first = rng.choice(NEW_FIRST if unseen and rng.random() < 0.6 else FIRST)
        last = rng.choice(NEW_LAST if unseen and rng.random() < 0.6 else LAST)
        return ([first, last] if rng.random() < 0.7 else [last]), "PER"
    if slot == "LAST":
        return [rng.choice(LAST)], "PER"
    if slot == "LOC":
        return rng.choice(NEW_TOWNS if unseen and rng.random() < 0.4 else TOWNS[:8]).split(), "LOC"
    if slot == "COUNTRY":
        return [rng.choice(COUNTRIES)], "LOC"
    if slot == "ORG":
        return rng.choice(NEW_COMPANIES if unseen and rng.random() < 0.4 else COMPANIES).split(), "ORG"
    if slot == "TEAM":
        return rng.choice(TEAMS).split(), "ORG"
    if slot == "MISC_ADJ":
        return [rng.choice(ADJECTIVES)], "MISC"
    if slot == "EVENT":
        return rng.choice(NEW_EVENTS + EVENTS if unseen else EVENTS).split(), "MISC"
    words = {"DAY": DAYS, "MONTH": MONTHS}[slot]
    return [rng.choice(words)], None


# Literal names inside templates and their types (everything else literal is O).
LITERAL = {"Jordan": "LOC", "Union Rail": "ORG", "Eastport": "ORG", "Brixley": "ORG",
           "Brixley Savings Bank of the North": "ORG", "Ovaro Telecom": "ORG", "Halden Instruments": "ORG",
           "Ferncastle Regatta": "MISC", "Ferncastle": "LOC"}
LITERAL_TEST = {"Jordan scored": "PER", "Brixley won": "ORG", "in Brixley": "LOC", "Eastport drew": "ORG"}


def _fill(rng: random.Random, template: str, unseen: bool):
    tokens, tags = [], []
    parts = template.split()
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("{"):
            words, entity_type = _entity(rng, part.strip("{}"), unseen)
            tokens += words
            tags += ["O"] * len(words) if entity_type is None else \
                ["B-" + entity_type] + ["I-" + entity_type] * (len(words) - 1)
            i += 1
            continue
        tokens.append(part)
        tags.append("O")
        i += 1
    _tag_literals(tokens, tags, template)
    return tokens, tags


def _tag_literals(tokens, tags, template):
    text = " ".join(tokens)
    for name in sorted(LITERAL, key=len, reverse=True):
        words = name.split()
        for start in range(len(tokens) - len(words) + 1):
            if tokens[start:start + len(words)] == words and all(t == "O" for t in tags[start:start + len(words)]):
                entity_type = LITERAL[name]
                before = tokens[start - 1] if start else ""
                after = tokens[start + len(words)] if start + len(words) < len(tokens) else ""
                for context, forced in LITERAL_TEST.items():
                    left, right = context.split()
                    if (right == after and left == name) or (left == before and right == name):
                        entity_type = forced
                if name == "Jordan" and after == "and" and "agreed" in text:
                    entity_type = "LOC"
                tags[start:start + len(words)] = ["B-" + entity_type] + ["I-" + entity_type] * (len(words) - 1)
    if template.startswith("Reading is") or template.startswith("Flights from Reading"):
        where = tokens.index("Reading")
        tags[where] = "B-LOC"


def _nrb_sentences(rng: random.Random, names, count: int):
    sentences = []
    for i in range(count):
        target = ("PERSON", "LOCATION", "ORGANIZATION")[i % 3]
        template = NRB_CONTEXTS[target][(i // 3) % len(NRB_CONTEXTS[target])]
        tokens = template.replace("{DAY}", rng.choice(DAYS)).split()
        where = tokens.index("{X}")
        tokens[where] = rng.choice(names[target])
        tags = ["O"] * len(tokens)
        tags[where] = "B-" + target
        sentences.append((tokens, tags))
    return sentences


def _nrb_contextual(rng: random.Random, tokens, gold, error_rate: float):
    """A context-aware CoNLL-type system: right most of the time, sometimes misled by the name."""
    conll = {"PERSON": "PER", "LOCATION": "LOC", "ORGANIZATION": "ORG"}
    where = next(i for i, tag in enumerate(gold) if tag != "O")
    tags = ["O"] * len(tokens)
    roll = rng.random()
    if roll < error_rate * 0.7:
        tags[where] = "B-" + rng.choice([t for t in ("PER", "LOC", "ORG", "MISC") if t != conll[gold[where][2:]]])
    elif roll < error_rate * 0.85 and where + 1 < len(tokens):
        tags[where], tags[where + 1] = "B-" + conll[gold[where][2:]], "I-" + conll[gold[where][2:]]
    elif roll >= error_rate:
        tags[where] = "B-" + conll[gold[where][2:]]
    return tags


def make(folder: Path, seed: int = 13) -> None:
    from tough_ner.baselines import memorization
    from tough_ner.corpus import write_conll
    from tough_ner.demo import contextual as contextual_tags
    from tough_ner.stats import TrainStats

    rng = random.Random(seed)
    train = [_fill(rng, TRAIN_TEMPLATES[i % len(TRAIN_TEMPLATES)], unseen=False) for i in range(320)]
    test = [_fill(rng, TEST_TEMPLATES[i % len(TEST_TEMPLATES)], unseen=True) for i in range(110)]
    stats = TrainStats.from_lists([t for t, _ in train], [g for _, g in train])
    seen_texts = {text for text, _ in stats.mentions}
    memorizer = memorization(stats, [t for t, _ in test])
    contextual = [contextual_tags(rng, tokens, gold, seen_texts) for tokens, gold in test]
    write_conll(folder / "demo_train.conll", [t for t, _ in train], [g for _, g in train])
    write_conll(folder / "demo_test.conll", [t for t, _ in test], [g for _, g in test], memorizer, contextual)
    nrb_rng = random.Random(seed + 1)
    for portion, names, error_rate in (("nrb", NRB_NAMES, 0.35), ("wts", WTS_NAMES, 0.1)):
        sentences = _nrb_sentences(nrb_rng, names, 60)
        tokens, gold = [t for t, _ in sentences], [g for _, g in sentences]
        contextual = [_nrb_contextual(nrb_rng, t, g, error_rate) for t, g in sentences]
        write_conll(folder / f"demo_{portion}.conll", tokens, gold, memorization(stats, tokens), contextual)

if __name__ == "__main__":
    make(Path(__file__).parent)
