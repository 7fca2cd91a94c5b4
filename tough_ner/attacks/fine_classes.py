"""The fine class of an original entity, so that its replacement reads naturally in context.

Decided for every original, in this order (the first that decides wins; its name is the
*route* reported with each replacement):

1. ``dictionary``: the string (or its stem without a plural ``s``) is a candidate or a
   lookup-only alias of one of its type's classes (case-insensitive);
2. ``rule``: head words of the string (``University``, ``Bank``, ``Party``, ``Ministry``,
   ``River``, ``Mount``, ``Cup`` ...), a person's token count, demonym suffixes, then the
   context (the next word, ``language``/``province``/``river`` ...; sports vocabulary or a
   results line in the sentence or its document for organisations);
3. ``training``: how the training data uses the string: the longer training mentions of the
   same type that contain it, then the context rules over the training sentences it is
   annotated in;
4. ``fallback``: the type's class that reads naturally in most contexts (a country for a
   location, a company for an organisation, a nationality for MISC).

Rules name classes of the built-in dictionary; with another dictionary a rule only decides
when the type has that class.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

ROUTES = ("dictionary", "rule", "coreference", "training", "fallback")

# Head words, looked for among the string's tokens (the class of the first listed that is found).
HEADS: Sequence[Tuple[str, frozenset]] = [
    ("university", frozenset("University College Institute School Academy Polytechnic Universidad Universite "
                             "Universitat Universiteit Seminary Conservatory".split())),
    ("bank", frozenset("Bank Bancorp Banco Banque Banca Bankers Sparkasse".split())),
    ("party", frozenset("Party Front Movement Democrats Socialists Liberals Conservatives Greens Labour Labor "
                        "Republicans".split())),
    ("international", frozenset("Nations Organisation Organization Federation Confederation Fund Union "
                                "Community Committee Red Cross".split())),
    ("government", frozenset("Ministry Department Council Commission Court Parliament Senate Assembly Agency "
                             "Police Army Navy Office Bureau Government Cabinet Authority Administration Tribunal "
                             "Forces Guard Treasury Congress Duma Directorate Prosecutor".split())),
    ("media", frozenset("Times News Post Herald Journal Gazette Tribune Daily Radio Television TV Press Magazine "
                        "Telegraph Chronicle Observer Mirror Express Broadcasting Interfax Xinhua".split())),
    ("sports_club", frozenset("FC F.C. AFC SC CF FK SK Rovers Athletic Wanderers Albion County Rangers Sporting "
                              "Dynamo Dinamo Spartak Lokomotiv Olympique Racing Atletico Juniors Hotspur Orient "
                              "Villa Argyle Alexandra Stanley Thistle".split())),
    ("company", frozenset("Inc Inc. Corp Corp. Corporation Co Co. Ltd Ltd. Plc plc PLC AG SA NV Group Holdings "
                          "Industries Airlines Airways Motors Oil Petroleum Energy Electric Steel Mining Telecom "
                          "Pharmaceuticals Systems Technologies Insurance Securities Capital Partners Investments "
                          "Resources Foods Chemicals Enterprises Communications Motor Brewery Stores".split())),
    ("water", frozenset("River Lake Sea Ocean Gulf Bay Strait Channel Canal Lagoon Falls Reservoir".split())),
    ("mountain", frozenset("Mount Mt Mt. Mountains Hills Range Alps Peak Volcano Massif Highlands Plateau".split())),
    ("region", frozenset("Province State County Region District Island Islands Territory Valley Peninsula Coast "
                         "Desert Basin Prefecture Oblast Governorate Department".split())),
    ("event", frozenset("Cup Championship Championships Open Games Olympics Olympiad Prix Tour Marathon Rally "
                        "Trophy Classic Masters League Series Festival War Revolution Conference Summit Derby "
                        "Bowl Week Show Awards Award Elections Election Tournament Grand Slam".split())),
    ("law", frozenset("Act Treaty Accord Accords Agreement Protocol Convention Amendment Charter Code".split())),
    ("facility", frozenset("Airport Stadium Bridge Tunnel Dam Palace Museum Tower Square Street Avenue Hospital "
                           "Arena Park Station Cathedral Church Mosque Temple Prison Hotel Centre Center".split())),
]
# The next word of the sentence naming the class ("the Tana river", "Sindh province").
NEXT_WORDS: Mapping[str, str] = {
    "language": "language", "languages": "language", "speaking": "language", "-speaking": "language",
    "speakers": "language", "dialect": "language", "translation": "language",
    "province": "region", "state": "region", "region": "region", "district": "region", "county": "region",
    "island": "region", "valley": "region", "prefecture": "region",
    "river": "water", "lake": "water", "sea": "water", "coast": "region",
    "city": "city", "town": "city", "capital": "city", "village": "city", "airport": "city", "port": "city",
    "mountains": "mountain", "mountain": "mountain", "peak": "mountain", "volcano": "mountain",
    "party": "party", "government": "government", "ministry": "government", "parliament": "government",
    "bank": "bank", "newspaper": "media", "daily": "media", "agency": "media", "television": "media",
    "university": "university", "club": "sports_club", "team": "sports_club", "coach": "sports_club",
    "striker": "sports_club", "midfielder": "sports_club", "defender": "sports_club", "goalkeeper": "sports_club",
    "quarterback": "sports_club", "manager": "sports_club", "fans": "sports_club",
    "company": "company", "shares": "company", "stock": "company", "group": "company", "firm": "company",
    "spokesman": "company", "chairman": "company", "unit": "company", "subsidiary": "company",
    "novel": "work", "film": "work", "album": "work", "song": "work", "book": "work",
    "faith": "religion", "church": "religion", "mosque": "religion",
}
SPORTS = frozenset("""soccer football cricket tennis golf rugby baseball basketball hockey nhl nba nfl athletics
cycling boxing skiing racing formula motor match matches league division championship cup tournament goal goals
scored score scorer scorers striker midfielder defender goalkeeper coach quarterback innings wicket wickets
runs batting bowling inning pitcher homer touchdown halftime half-time penalty penalties kickoff stadium draw
drew beat beats defeated win wins won lose lost losing victory defeat season playoff playoffs semifinal
semi-final quarter-final final finals fixture fixtures standings played points tries try conversion referee
club clubs team teams squad fans minute minutes leg round""".split())
HEADLINE_SPORTS = frozenset("""SOCCER FOOTBALL CRICKET TENNIS GOLF RUGBY BASEBALL BASKETBALL HOCKEY NHL NBA NFL
ATHLETICS CYCLING BOXING SKIING RACING MOTOR MOTORCYCLING SWIMMING ROWING SAILING SQUASH BADMINTON HANDBALL
VOLLEYBALL""".split())
DEMONYM = re.compile(r"^[A-Z][a-z]+(?:ian|ean|an|ese|ish|i|ic|ch|ss|ot|ite)s?$")
WORK_WORDS = frozenset("novel film movie album song book play opera series show documentary poem painting".split())
DIGIT = re.compile(r"\d")
LETTER = re.compile(r"[^\W\d_]")


def sports_sentence(words: Sequence[str]) -> bool:
    """Sports vocabulary, or a results/standings line (half its tokens numbers)."""
    numbers = sum(1 for w in words if w[:1].isdigit() or (w[:1] in "+-" and w[1:2].isdigit()))
    if numbers >= 2 and numbers * 2 >= len(words) - 2:
        return True
    return not SPORTS.isdisjoint(map(str.lower, words)) or not HEADLINE_SPORTS.isdisjoint(words)


def sports_documents(tokens: Sequence[Sequence[str]], documents: Sequence[int]) -> Dict[int, bool]:
    """A document is about sport when its first two sentences carry a sports headline word or
    a quarter of its sentences are sports sentences."""
    first: Dict[int, List[int]] = {}
    counts: Dict[int, List[int]] = {}
    for s, doc in enumerate(documents):
        first.setdefault(doc, [])
        if len(first[doc]) < 2:
            first[doc].append(s)
        total = counts.setdefault(doc, [0, 0])
        total[0] += sports_sentence(tokens[s])
        total[1] += 1
    return {doc: any(w.upper() in HEADLINE_SPORTS for s in first[doc] for w in tokens[s])
            or counts[doc][0] * 4 >= counts[doc][1] for doc in first}


def split_suffix(text: str, known) -> Tuple[str, str]:
    """(stem, suffix): a possessive (``'s``, ``'``, attached or a token of its own) or, when the stem is known
    (``known(stem)``), a plural ``s`` ("Germans" -> "German", "s")."""
    for suffix in ("'s", "\u2019s", "'"):
        if text.endswith(suffix) and len(text) > len(suffix) + 1:
            if text[-len(suffix) - 1] == " ":  # a token of its own ("McDonald 's"): it stays one
                return text[: -len(suffix) - 1], " " + suffix
            return text[: -len(suffix)], suffix
    if text.endswith("s") and not text.endswith("ss") and len(text) > 3 and known(text[:-1]):
        return text[:-1], "s"
    return text, ""


class FineClasses:
    """Decides fine classes for one dictionary (its classes per type, plus aliases)."""

    def __init__(self, classes_by_type: Mapping[str, Sequence[str]], lookup: Mapping[str, Mapping[str, str]],
                 fallback: Mapping[str, str], train=None):
        self.classes = {t: tuple(c) for t, c in classes_by_type.items()}
        self.lookup = lookup  # type -> casefolded string -> class
        self.fallback = fallback
        self.train = train
        self._train_longer: Optional[Dict[str, Dict[str, List[str]]]] = None
        self._train_cache: Dict[Tuple[str, str], Optional[str]] = {}

    def known(self, entity_type: str, text: str) -> bool:
        return text.casefold() in self.lookup.get(entity_type, {})

    def _has(self, entity_type: str, name: Optional[str]) -> Optional[str]:
        return name if name is not None and name in self.classes.get(entity_type, ()) else None

    def by_string(self, entity_type: str, text: str) -> Optional[str]:
        """Head words, a person's token count, demonym and acronym shapes."""
        words = text.split()
        classes = self.classes.get(entity_type, ())
        if "person" in classes and "surname" in classes:
            return "surname" if len(words) == 1 else "person"
        if len(classes) == 1:  # nothing to decide
            return classes[0]
        for name, heads in HEADS:
            if name in classes and any(w in heads for w in words):
                return name
        if DIGIT.search(text) and any(DIGIT.search(w) and LETTER.search(w) for w in words):
            return self._has(entity_type, "product")
        if len(words) == 1 and DEMONYM.match(text):
            return self._has(entity_type, "nationality")
        return None

    def by_context(self, entity_type: str, words: Sequence[str], start: int, end: int, sports: bool
                   ) -> Optional[str]:
        """The next word, a title's cue before it, sports (``sports``: the sentence or its
        document is about sport, see ``sports_sentence``)."""
        after = words[end].lower() if end < len(words) else ""
        name = self._has(entity_type, NEXT_WORDS.get(after))
        if name:
            return name
        before = [w.lower() for w in words[max(0, start - 3):start]]
        if any(w in WORK_WORDS for w in before) or (start > 0 and words[start - 1] in ('"', "``", "'")):
            name = self._has(entity_type, "work")
            if name:
                return name
        if sports:
            return self._has(entity_type, "sports_club") or (
                self._has(entity_type, "event") if any(w in ("Cup", "League", "Open") for w in words[start:end])
                else None)
        return None

    def by_training(self, entity_type: str, text: str) -> Optional[str]:
        """Longer training mentions of the type containing the string decided by their own
        string, then the context rules over the training sentences the string occurs in."""
        if self.train is None:
            return None
        key = (entity_type, text)
        if key in self._train_cache:
            return self._train_cache[key]
        cache = self.train.__dict__.setdefault("_fine_class_votes", {})  # built once per statistics
        signature = (tuple(sorted(self.classes.items())), len(self.lookup.get(entity_type, ())))
        if (signature, key) in cache:
            self._train_cache[key] = cache[(signature, key)]
            return cache[(signature, key)]
        votes: Counter = Counter()
        for longer in self._longer(entity_type).get(text.split()[-1], ()):
            if longer != text and f" {text} " in f" {longer} ":
                name = self.lookup.get(entity_type, {}).get(longer.casefold()) or self.by_string(entity_type, longer)
                if name:
                    votes[name] += 1
        if not votes and (text, entity_type) in self.train.mentions:
            for words, start, end in self._occurrences(text.split(), 20):
                name = self.by_context(entity_type, words, start, end, sports_sentence(words))
                if name:
                    votes[name] += 1
        result = min(votes, key=lambda name: (-votes[name], name)) if votes else None
        self._train_cache[key] = cache[(signature, key)] = result
        return result

    def _longer(self, entity_type: str) -> Dict[str, List[str]]:
        index = self.train.__dict__.get("_longer_mentions")  # kept with the statistics: built once
        if index is None:
            index = {}
            for (text, kind), _ in sorted(self.train.mentions.items()):
                words = text.split()
                if len(words) > 1:
                    for word in set(words):
                        index.setdefault(kind, {}).setdefault(word, []).append(text)
            self.train.__dict__["_longer_mentions"] = index
        return index.get(entity_type, {})

    def _occurrences(self, words: Sequence[str], limit: int):
        import numpy as np

        stats = self.train
        stats.require_text("deciding fine classes from the training sentences a mention occurs in (entity attacks "
                           "with training statistics)")
        order = stats.__dict__.get("_positions_by_id")
        if order is None:
            order = np.argsort(stats.token_ids, kind="stable")
            stats.__dict__["_positions_by_id"] = order
        ids = [stats.token_index.get(w, -1) for w in words]
        if min(ids) < 0:
            return []
        token_ids = stats.token_ids
        found = []
        sorted_ids = stats.__dict__.get("_sorted_ids")
        if sorted_ids is None:
            sorted_ids = token_ids[order]
            stats.__dict__["_sorted_ids"] = sorted_ids
        first, last = np.searchsorted(sorted_ids, ids[0]), np.searchsorted(sorted_ids, ids[0], side="right")
        n = len(token_ids)
        for p in order[first:last].tolist():
            if len(found) >= limit:
                break
            if p + len(ids) <= n and all(token_ids[p + j] == ids[j] for j in range(1, len(ids))):
                s = int(np.searchsorted(stats.sentence_starts, p, side="right")) - 1
                a, b = int(stats.sentence_starts[s]), int(stats.sentence_starts[s + 1])
                if p + len(ids) <= b:
                    sentence = [stats.vocab[i] for i in token_ids[a:b].tolist()]
                    found.append((sentence, p - a, p - a + len(ids)))
        return found

    def decide(self, entity_type: str, text: str, words: Sequence[str], start: int, end: int, sports: bool
               ) -> Tuple[Optional[str], str]:
        """(class, route) of one original; the class is None only when the type has no class."""
        classes = self.classes.get(entity_type, ())
        if not classes:
            return None, "fallback"
        table = self.lookup.get(entity_type, {})
        stem, _ = split_suffix(text, lambda s: s.casefold() in table)
        name = table.get(text.casefold(), table.get(stem.casefold()))
        if name is not None:
            return name, "dictionary"
        name = self.by_string(entity_type, stem)
        if name is None:
            name = self.by_context(entity_type, words, start, end, sports)
        if name is not None:
            return name, "rule"
        name = self.by_training(entity_type, text)
        if name is not None:
            return name, "training"
        name = self.fallback.get(entity_type)
        if name not in classes:
            name = classes[0]
        return name, "fallback"


def lookup_table(dictionary: Mapping[str, Mapping[str, Sequence[str]]], aliases: Mapping[str, Sequence[str]]
                 ) -> Dict[str, Dict[str, str]]:
    """Per type, each known string (casefolded) to its class: a type's classes in order, the
    first listing a string keeps it; aliases after candidates."""
    table: Dict[str, Dict[str, str]] = {}
    for entity_type, classes in dictionary.items():
        entries = table.setdefault(entity_type, {})
        for source in (classes, {name: aliases.get(name, ()) for name in classes}):
            for name, strings in source.items():
                for string in strings:
                    entries.setdefault(string.casefold(), name)
    return table
