"""RockNER's natural adversarial attacks (Lin et al., EMNLP 2021), and three more.

Entity level: gold entities are replaced by other real entities of the same type and fine
class (decided for every original by ``tough_ner.fine_classes``) that are not training
mentions, with the original's surface kept (case pattern, acronym, possessive or plural
suffix, the same replacement across its document, the other columns); tags are rewritten in
IOB2.  Context level: up to ``max_words`` non-entity content words per sentence are masked in
turn and filled by a masked language model with a word drawn from a rank window of its
proposals (ranks 51-100 by default); of several candidate sentences, the one that makes a
victim tagger miss most gold entities is kept.  Typo, case and cross-type attacks: one
keyboard typo inside entities, sentences lower- or upper-cased, entities replaced by entities
of another type.

All return a ``datasets.Dataset`` with ``tokens``, ``ner_tags`` (IOB2 strings) and
``replacements``: one record per replaced entity, word or sentence with its level, its position
in the new sentence, the original and new text, its label (entity type, POS tag or case mode),
the original's fine class, the route that decided it and its type.  Randomness comes from
``random.Random`` seeded by ``seed`` over sorted candidates, so the same seed, data and
resources give byte-identical output on any machine.
"""
from __future__ import annotations

import random
import re
from bisect import bisect_left
from collections import Counter
from functools import lru_cache
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .._util import no_gc, write_atomic
from ..core.batch import Batch
from ..core.corpus import Corpus, Sentences, from_dataset
from .dictionaries import (Dictionary, DictionaryLike, builtin, builtin_classes, builtin_continents,
                           builtin_country_codes, builtin_dateline_cities, builtin_name_zones, builtin_origins,
                           builtin_sport_nations, builtin_subregions, normalize, scheme_for)
from ..core.schemes import Span, decode, spans_to_tags
from ..core.stats import TrainStats
from .fine_classes import (COMPETITION_WORDS, DEFAULT_FACETS, EVENT_KINDS, HEAD_FACETS, HEADLINE_SPORTS,
                           LEAGUE_SPORTS, ROUTES, TEAM_SPORTS, UNCLASSIFIED, Genders, competition_scope, demonym_form,
                           document_sports, industry_cue, language_context, sentence_sport, split_suffix,
                           womens_competition)
from .surface import (DATE, DETERMINERS, distinctive_words, acronym_band, acronym_candidate, article_free,
                      case_pattern, fits_band, indefinite_article, is_acronym, pluralize, possessive_for, shouting,
                      takes_the, takes_the_as_acronym, the_fits, with_case)
from .taggers import Tagger

Record = Dict[str, Union[str, int]]
FillMask = Callable[[str], Sequence]

# Nouns (common and proper), verbs, adjectives and adverbs, as Penn Treebank or Universal POS tags.
CONTENT_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "JJ", "JJR", "JJS",
                          "RB", "RBR", "RBS", "NOUN", "PROPN", "VERB", "ADJ", "ADV"})


def as_lists(data, tags=None) -> Tuple[Sentences, Sentences, List[List[Record]]]:
    """Tokens, tags and earlier replacement records from a Dataset (``tokens``/``ner_tags``,
    string or ClassLabel tags), a Corpus, or token and tag lists."""
    records, tokens = None, data
    if tags is None:
        if isinstance(data, Corpus):
            tokens, tags = data.tokens, data.tags
        elif hasattr(data, "column_names"):
            corpus = from_dataset(data)
            tokens, tags = corpus.tokens, corpus.tags
            if "replacements" in data.column_names:
                records = [list(r) for r in data["replacements"]]
        else:
            raise TypeError("give a datasets.Dataset, a Corpus, or token lists and tag lists")
    with no_gc():
        tokens, tags = [list(s) for s in tokens], [list(s) for s in tags]
    return tokens, tags, records or [[] for _ in tokens]


RECORD_FIELDS = ("level", "start", "end", "original", "replacement", "label", "fine_class", "route", "original_label",
                 "facet")
# An original the entity attack leaves as it is: where it now stands, its text and type, and why.
KEPT_FIELDS = ("start", "end", "original", "label", "reason")
KEPT_REASONS = ("unclassified", "no_candidate", "context", "unplaced", "no_origin")
# Classes kept as they are: a continent named in news is geopolitics ("NATO's plans for eastern and central
# Europe", "between Europe and the US"): another continent breaks the sentence; a party or militant group
# belongs to its country's politics ("Labour leader Helen Clark" in New Zealand), which the
# dictionary does not tell.
KEPT_CLASSES = frozenset({"continent", "party"})


def attack_input(data, tags=None, columns: Optional[Mapping[str, Sentences]] = None,
                 documents: Optional[Sequence] = None):
    """(tokens, tags, records, columns, documents) of a Dataset (``tokens``/``ner_tags``,
    string or ClassLabel tags; ``pos_tags``, ``chunk_tags`` and ``document`` columns are
    kept when present), a Corpus, or token and tag lists.  ``columns``: other per-token
    columns (``{name: sentences}``) written back for the new tokens; ``documents``: a
    document id per sentence (repeated strings are replaced alike within a document)."""
    tokens, tags, records = as_lists(data, tags)
    columns = dict(columns or {})  # read only: new sentences are new lists
    if hasattr(data, "column_names"):
        from ..core.corpus import decode_tag_ids, tag_names
        for name in data.column_names:  # other per-token columns (pos_tags, chunk_tags ...)
            if name in ("tokens", "ner_tags", "replacements", "kept", "document", "id") or name in columns:
                continue
            if not hasattr(data.features[name], "feature"):  # not a list per sentence
                continue
            values = [list(map(str, s)) for s in decode_tag_ids(data[name], tag_names(data, name))]
            if all(len(v) == len(t) for v, t in zip(values, tokens)):
                columns[name] = values
        if documents is None and "document" in data.column_names:
            documents = data["document"]
    for name, values in columns.items():
        if len(values) != len(tokens):
            raise ValueError(f"column {name!r}: {len(values)} sentences but {len(tokens)} token sentences")
        for s, (sentence, column) in enumerate(zip(tokens, values)):
            if len(sentence) != len(column):
                raise ValueError(f"column {name!r}, sentence {s}: {len(column)} values for {len(sentence)} tokens")
    if documents is not None:
        if len(documents) != len(tokens):
            raise ValueError(f"{len(documents)} document ids for {len(tokens)} sentences")
        index: Dict = {}
        documents = [index.setdefault(d, len(index)) for d in documents]
    return tokens, tags, records, columns, documents


def to_dataset(tokens: Sentences, tags: Sentences, records: List[List[Record]],
               columns: Optional[Mapping[str, Sentences]] = None, documents: Optional[Sequence[int]] = None,
               kept: Optional[List[List[Record]]] = None):
    """The attacked sentences as a ``datasets.Dataset`` (other columns and document ids kept;
    ``kept``: the entity attack's originals left as they are, per sentence)."""
    import datasets
    import pyarrow as pa

    strings = datasets.List(datasets.Value("string"))
    record = {name: datasets.Value("int32" if name in ("start", "end") else "string") for name in RECORD_FIELDS}
    fields = {"tokens": strings, "ner_tags": strings, "replacements": datasets.List(record)}
    data = {"tokens": tokens, "ner_tags": tags,
            "replacements": [[r if len(r) == len(RECORD_FIELDS) else {name: r.get(name, "") for name in RECORD_FIELDS}
                              for r in rs] for rs in records]}
    if kept is not None:
        fields["kept"] = datasets.List({name: datasets.Value("int32" if name in ("start", "end") else "string")
                                        for name in KEPT_FIELDS})
        data["kept"] = kept
    for name, values in (columns or {}).items():
        fields[name], data[name] = strings, values
    if documents is not None:
        fields["document"], data["document"] = datasets.Value("int32"), list(documents)
    features = datasets.Features(fields)
    # Straight to Arrow: datasets' per-example encoding would triple the attack's time.
    table = pa.Table.from_pydict(data, schema=features.arrow_schema)
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=features))


def rewrite(tokens: Sequence[str], spans: Sequence[Span], new_texts: Dict[int, List[str]]
            ) -> Tuple[List[str], List[str], List[Span]]:
    """Replace the tokens of ``spans[i]`` by ``new_texts[i]``: new tokens, IOB2 tags and spans."""
    result, moved, _ = rewritten(tokens, spans, new_texts)
    return result, spans_to_tags(moved, len(result), "bio"), moved


def rewritten(tokens: Sequence[str], spans: Sequence[Span], new_texts: Mapping[int, List[str]],
              before: Optional[Mapping[int, List[str]]] = None, edits: Optional[Mapping[int, str]] = None
              ) -> Tuple[List[str], List[Span], List[int]]:
    """``rewrite`` with the words agreeing with a replacement: ``before[i]`` put just before
    span ``i`` ("the"), ``edits[j]`` the new word at position ``j`` outside the spans ("an",
    "'").  Returns the new tokens, the spans moved, and each old position's new position (a
    span's tokens: its new start; one more for the end)."""
    result: List[str] = []
    moved: List[Span] = []
    position = [0] * (len(tokens) + 1)
    edits = edits or {}
    last = 0
    for i, (start, end, entity_type) in enumerate(list(spans) + [(len(tokens), len(tokens), "")]):
        for j in range(last, start):
            position[j] = len(result)
            result.append(edits.get(j, tokens[j]))
        if i == len(spans):
            break
        if before and i in before:
            result += before[i]
        words = new_texts.get(i, tokens[start:end])
        for j in range(start, end):
            position[j] = len(result)
        moved.append((len(result), len(result) + len(words), entity_type))
        result += words
        last = end
    position[len(tokens)] = len(result)
    return result, moved, position


def draw_other(rng: random.Random, pool: Tuple[str, ...], text: str) -> str:
    """A uniform draw from a sorted pool, never ``text`` itself."""
    at = bisect_left(pool, text)
    if at < len(pool) and pool[at] == text:
        index = rng.randrange(len(pool) - 1)
        return pool[index + (index >= at)]
    return pool[rng.randrange(len(pool))]


_BIO = re.compile(r"^(?:[BIESLU]-.+|O)$")


def bio_like(values: Sentences) -> bool:
    """A column of chunk-like tags (``B-X``, ``I-X``, ``O`` ...)."""
    return all(_BIO.match(v) for v in {v for sentence in values for v in sentence})


def rewrite_column(values: Sequence[str], spans: Sequence[Span], moved: Sequence[Span], replaced,
                   bio: bool, before: Optional[Mapping[int, List[str]]] = None, filler: str = "DT") -> List[str]:
    """Another column (POS, chunk) for a rewritten sentence: outside replaced spans the values
    move along; a new span copies the original's values position by position (a proper-noun
    ``NNP`` stays ``NNP``; the last one repeats), or, for a BIO-like column (``bio``: chunks),
    keeps the original's first tag and continues its chunk with ``I-``.  A word put before a
    span (``before``) takes ``filler`` (a determiner's tag), or in a BIO-like column opens the
    span's chunk, which the span then continues."""
    result: List[str] = []
    last = 0
    for i, ((start, end, _), (new_start, new_end, _)) in enumerate(zip(spans, moved)):
        result += values[last:start]
        old = list(values[start:end])
        inserted = len(before[i]) if before and i in before else 0
        if i in replaced:
            n = new_end - new_start
            if bio:
                first = old[0]
                rest = "O" if first == "O" else "I-" + first.split("-", 1)[1]
                old = [first] + [rest] * (n - 1)
            else:
                old = [old[min(j, len(old) - 1)] for j in range(n)]
        if inserted:
            if bio and old[0] != "O":
                result += [old[0]] + ["I-" + old[0].split("-", 1)[1]] * (inserted - 1)
                old[0] = "I-" + old[0].split("-", 1)[1]
            else:
                result += ["O" if bio else filler] * inserted
        result += old
        last = end
    result += values[last:]
    return result


# ---- entity level ---------------------------------------------------------------------------
_POOL_CACHE: Dict[str, Dict] = {}
# Classes whose replacement needs its facet (a club of the same sport, a company of the same industry);
# without one the original is kept.
FACET_NEEDED = frozenset({"sports_club", "event", "government", "company"})
# Classes that also draw from another class's facet: a people noun ("Britons") takes "Italians" too.
BORROWED = {"people": ("nationality", "dual")}
BAND_ORDER = ("large", "medium", "small", "micro")  # states' size bands (make_entities.BANDS)
PLACE_CLASSES = frozenset({"city", "region"})  # faceted by their country (a region also "world": "the Balkans")
# A state or nationality word is replaced by one of its own subregion (and a state of its size band) when
# that pool has this many candidates besides the original, else by one of its continent, else kept.
MIN_SUBREGION_POOL = 2


class _Pools:
    """Replacement candidates per (type, class, facet, shape), training mentions removed; drawn
    from seeded decks (sampling without replacement, reshuffled when used up) so that no
    candidate is used far more often than another.  ``facets``: per class, each string's facet
    (see ``dictionaries.builtin_facets``); a shape is ``("word",)``, ``("the",)`` (names read
    with "the") or ``("acronym", band, dotted)`` (see ``surface.acronym_band``)."""

    def __init__(self, dictionary: Dictionary, excluded: set, facets: Mapping[str, Mapping[str, str]],
                 later: frozenset = frozenset()):
        self.dictionary = dictionary
        self.excluded = excluded
        self.later = later  # names that came into use after the corpus was written: never drawn
        self.facets = facets
        self._pools: Dict[Tuple, Tuple[str, ...]] = {}
        self._allowed: Dict[Tuple, Optional[Tuple[str, ...]]] = {}
        self._decks: Dict[Tuple, Tuple[List[str], int]] = {}
        self._usage: Dict[str, Counter] = {}

    def _with_facet(self, entity_type: str, name: str, allowed: Optional[Tuple[str, ...]]) -> List[str]:
        if allowed is not None and allowed[0] == "origin":  # a person's name of a zone: ("origin", zone, gender)
            return _zone_names(allowed[1], name, allowed[2])
        classes = self.dictionary.get(entity_type, {})
        strings = list(classes.get(name, ()))
        table = self.facets.get(name)
        if table:
            if name == "surname":  # most surnames have no gender: they fit either; "Ivanova" only a woman
                strings = [x for x in strings if table.get(x) is None or table.get(x) in (allowed or ())]
            elif allowed is not None:
                strings = [x for x in strings if table.get(x) in allowed]
        if name in BORROWED and BORROWED[name][0] in classes:
            other, other_facet = BORROWED[name]
            other_table = self.facets.get(other, {})
            strings += [x for x in classes[other] if not other_table or other_table.get(x) == other_facet]
        return strings

    def pool(self, entity_type: str, name: str, allowed: Optional[Tuple[str, ...]], shape: Tuple
             ) -> Tuple[str, ...]:
        key = (entity_type, name, allowed, shape)
        if key not in self._pools:
            strings = [x for x in self._with_facet(entity_type, name, allowed)
                       if x not in self.excluded and x not in self.later]
            if shape[0] == "acronym":  # an acronym for an acronym, of the same length band
                shaped = [x for x in strings if acronym_candidate(x) and fits_band(x, shape[1])
                          and ("." in x) == shape[2]]
            else:  # a candidate with both cases (never "dpa" for "Reuters"), read with "the" for a "the" name
                shaped = [x for x in strings if case_pattern(x) == "mixed" and not acronym_candidate(x)
                          and (shape[0] != "the" or takes_the(x, name))]
            # a plural beside its singular ("Hindus", "Hindu") is the singular's form, made by the surface
            shaped = set(shaped)
            self._pools[key] = tuple(sorted(x for x in shaped if not (x.endswith("s") and x[:-1] in shaped)))
        return self._pools[key]

    def allowed(self, entity_type: str, name: str, facet: Optional[str], shape: Tuple, collective: bool
                ) -> Optional[Tuple[str, ...]]:
        """The facets a replacement may have: the original's (a city or region: its country's); a
        state any size band (the drawing narrows states by subregion and band: ``near``); a
        nationality adjective also takes a dual-form one ("French troops", "Italian troops") unless
        it names the people (``collective``: "the French")."""
        key = (entity_type, name, facet, shape, collective)
        if key not in self._allowed:
            self._allowed[key] = self._allowed_facets(entity_type, name, facet, shape, collective)
        return self._allowed[key]

    def _allowed_facets(self, entity_type: str, name: str, facet: Optional[str], shape: Tuple, collective: bool
                        ) -> Optional[Tuple[str, ...]]:
        if facet is None:
            return None
        if name == "nationality" and facet == "adjective" and not collective:
            return ("adjective", "dual")
        if facet in BAND_ORDER:
            return None
        return (facet,)

    def resolve(self, entity_type: str, name: Optional[str], allowed: Optional[Tuple[str, ...]], shape: Tuple,
                text: str) -> Optional[Tuple]:
        """The pool key for an original, when its pool has a candidate other than itself."""
        if name is None or name not in self.dictionary.get(entity_type, {}):
            return None
        pool = self.pool(entity_type, name, allowed, shape)
        folded = text.casefold()
        if any(x.casefold() != folded for x in pool[:2]):
            return entity_type, name, allowed, shape
        return None

    def narrowed(self, key: Tuple, tag: Tuple, keep: Callable[[str], bool]) -> Tuple:
        """The key of a pool's candidates that ``keep`` accepts (``tag`` names the test)."""
        narrow = key + (tag,)
        if narrow not in self._pools:
            self._pools[narrow] = tuple(x for x in self._pools[key] if keep(x))
        return narrow

    def draw(self, key: Tuple, rng: random.Random, avoid: Tuple[set, ...], weight: int = 1, cap: int = 0,
             valid=None) -> Optional[str]:
        """A draw from the pool's deck (a partial Fisher-Yates shuffle), skipping strings in the
        ``avoid`` sets (casefolded) and those ``valid`` rejects, and, while another candidate is
        found within a few draws, candidates that have replaced more than ``cap`` mentions with
        this one's ``weight`` mentions added.  None when no candidate is left."""
        pool = self._pools[key]
        deck, left = self._decks.get(key) or (list(pool), 0)
        usage = self._usage.setdefault(key[0], Counter())
        best = None
        for _ in range(min(len(pool), 50) + 1):
            if left == 0:
                left = len(deck)
            j = rng.randrange(left)
            choice = deck[j]
            deck[j], deck[left - 1] = deck[left - 1], choice
            left -= 1
            over = cap and usage[choice] + weight > cap
            if over and best is not None and usage[choice] >= usage[best]:
                continue  # no better than the best found so far: not worth checking
            folded = choice.casefold()
            if any(folded in strings for strings in avoid) or (valid is not None and not valid(choice)):
                continue
            if not over:
                best = choice
                break
            if best is None or usage[choice] < usage[best]:
                best = choice
        self._decks[key] = (deck, left)
        if best is not None:
            usage[best] += weight
        return best


def fallback_classes(dictionary: Dictionary, scheme: Optional[str], fallback) -> Dict[str, str]:
    """The class each type falls back to when nothing decides one (``entity_attack``'s
    ``fallback``): none by default; True: the type's most natural class (the built-in choice
    when the type has that class, else its largest class); a class name: that class for the
    types that have it; a mapping: type -> class."""
    if fallback is None or fallback is False:
        return {}
    if isinstance(fallback, Mapping):
        return dict(fallback)
    if isinstance(fallback, str):
        return {t: fallback for t, classes in dictionary.items() if fallback in classes}
    if fallback is True:
        from .dictionaries import builtin_fallback

        chosen = builtin_fallback()
        for entity_type, classes in dictionary.items():
            if chosen.get(entity_type) not in classes:
                chosen[entity_type] = min(classes, key=lambda name: (-len(classes[name]), name))
        return chosen
    raise TypeError(f"fallback must be None, True, a class name or a {{type: class}} mapping, not {fallback!r}")


def _fine_classes(dictionary: Dictionary, scheme: Optional[str], stats: Optional[TrainStats],
                  fallback: Mapping[str, str]):
    from .fine_classes import FineClasses, lookup_table

    if scheme:
        table = _builtin_lookup(scheme)
        classes_by_type = {t: [c for c in names if c in dictionary.get(t, {}) or c == "other"]
                           for t, names in builtin_classes(scheme).items()}
    else:
        table = lookup_table(dictionary, {})
        classes_by_type = {t: list(classes) for t, classes in dictionary.items()}
    return FineClasses(classes_by_type, table, fallback, stats)


@lru_cache(maxsize=2)
def _builtin_lookup(scheme: str):
    from .dictionaries import builtin_aliases
    from .fine_classes import lookup_table

    # every class of the scheme, those with lookup-only strings ("other") too
    classes = {t: {name: builtin(scheme)[t].get(name, ()) for name in names}
               for t, names in builtin_classes(scheme).items()}
    return lookup_table(classes, builtin_aliases())


class _Mention:
    __slots__ = ("s", "i", "start", "end", "type", "text", "stem", "suffix", "pattern", "acronym", "part",
                 "name", "route", "facet", "the", "the_fits", "determiner", "article_at", "possessive_at",
                 "next_word", "initials", "attached", "anchor", "spells", "frame", "dateline")


def _surface(base: str, m: "_Mention", cross: bool = False) -> str:
    """A replacement as the original appears: a surname's last word, the place word the
    sentence already says ("the Tana river": "Mekong", not "Mekong River"), plural,
    case, suffix (a possessive as the corpus writes it after the new name)."""
    text = base.split()[-1] if m.part == "last" else base
    if m.initials and " " in text and not cross:  # "R. Samuels": "B. Brookes"
        text = _initials(text)
    words = text.split()
    if len(words) > 1 and words[-1].lower() == m.next_word:
        text = " ".join(words[:-1])
    if m.suffix == "s" and not cross:
        text = pluralize(text)
    text = with_case(text, m.pattern) if m.pattern in ("upper", "lower") else text
    suffix = m.suffix if m.suffix != "s" else ""  # another type: no plural
    if suffix.strip() in ("'s", "'", "\u2019s"):
        suffix = suffix[:len(suffix) - len(suffix.lstrip())] + possessive_for(text)
    return text + suffix


INITIAL = re.compile(r"^(?:[A-Z]\.)+$")


def _initials(name: str) -> str:
    """A full name written with its given name's initial, as the original was ("B. Brookes")."""
    first, rest = name.split(" ", 1)
    return f"{first[0]}. {rest}"


@lru_cache(maxsize=1)
def _league_clubs() -> frozenset:
    """The North American leagues' clubs (casefolded): prose names them with "the" ("against the
    Boston Bruins", "the Utah Jazz")."""
    from .dictionaries import builtin_facets

    return frozenset(club.casefold() for club, sport in builtin_facets().get("sports_club", {}).items()
                     if sport in LEAGUE_SPORTS)


def _places_of(club: str) -> List[str]:
    """A club name's leading words (casefolded), the ways a place may be written in it."""
    words = club.casefold().split()
    return [" ".join(words[:k]) for k in range(1, len(words))]


@lru_cache(maxsize=1)
def _team_cities() -> Dict[str, frozenset]:
    """Per North American league, the ways its clubs are named by their place (casefolded): every
    name's words but its nickname ("Boston" of "Boston Red Sox", "New York" of "New York Knicks")."""
    from .dictionaries import builtin_facets

    found: Dict[str, set] = {}
    for club, sport in builtin_facets().get("sports_club", {}).items():
        if sport in LEAGUE_SPORTS:
            found.setdefault(sport, set()).update(_places_of(club))
    return {sport: frozenset(places) for sport, places in found.items()}


def reads_with_the(name: str, fine_class: Optional[str]) -> bool:
    """A replacement that prose puts after "the": a place read with it (``surface.takes_the``)
    or a North American league's club (a possessive or plural suffix aside)."""
    if takes_the(name, fine_class):
        return True
    if fine_class != "sports_club":
        return False
    words = name.split()
    while len(words) > 1 and words[-1].startswith("'"):
        words.pop()
    return " ".join(words).casefold() in _league_clubs()


def _agreement(new_text: str, m: "_Mention", words: Sequence[str], fine_class: Optional[str], is_free):
    """The words next to a replacement that must agree with it: "the" put before a place read
    with it or a North American league's club (where the sentence is not a headline, a results
    line or a dateline), "a"/"an" before it, "'s"/"'" after it.  Returns (words to put before,
    {position: new word})."""
    before: List[str] = []
    edits: Dict[int, str] = {}
    score = fine_class == "sports_club" and m.next_word[:1].isdigit()  # "Portland 110 BOSTON 108": a result
    if reads_with_the(new_text, fine_class) and not m.the and not is_free(m) and not score:
        before = ["The" if m.start == 0 else "the"]
    if m.article_at >= 0 and not before:
        old = words[m.article_at]
        article = indefinite_article(new_text)
        if old.lower() != article:
            edits[m.article_at] = article.capitalize() if old[0].isupper() else article
    if m.possessive_at >= 0:
        mark = possessive_for(new_text)
        if words[m.possessive_at] != mark:
            edits[m.possessive_at] = mark
    return before, edits


def entity_attack(data, tags=None, dictionary: Optional[DictionaryLike] = None, ratio: float = 1.0, seed: int = 0,
                  train=None, exclude_seen: bool = True, *, columns: Optional[Mapping[str, Sentences]] = None,
                  documents: Optional[Sequence] = None, cross_type: bool = False, fallback=None,
                  year: Optional[int] = None):
    """RockNER's entity-level attack, with the surface of each original kept.

    Args:
        data: a ``datasets.Dataset`` (``tokens``, ``ner_tags``), a Corpus, or token lists (with ``tags``).
        dictionary: ``{type: [...]}`` or ``{type: {class: [...]}}`` (see ``tough_ner.dictionaries``);
            default: the built-in one for the data's CoNLL or OntoNotes types.
        ratio: share of the eligible originals to replace; an original is a string of one type
            in one document (its repeats are replaced alike), eligible when its fine class is
            decided and its pool has a candidate other than itself; ``round(ratio * eligible)``
            are chosen.
        seed: the seed of the draws.
        train: training statistics (anything ``train=`` accepts); with ``exclude_seen``,
            candidates that are training mentions of any type are never used; they also help
            decide fine classes.
        columns: other per-token columns (``{name: sentences}``, e.g. POS and chunk tags),
            written back for the new tokens; a Dataset's ``pos_tags``/``chunk_tags`` are taken.
        documents: a document id per sentence (default: a Dataset's ``document`` column, else
            each sentence is its own document).
        cross_type: replace each chosen entity by one of another type (a seeded draw among the
            dictionary's other types, their most natural class), its tags updated.
        fallback: the class for originals whose class nothing decides (see
            ``fallback_classes``).  Default None: they are kept, and listed in the ``kept``
            column with reason ``unclassified``.
        year: the year the corpus was written (CoNLL-2003: 1996, Reuters news); the built-in
            dictionary's names that came into use later (``dictionaries.builtin_first_years``:
            Czechia, South Sudan, the Europa League) or went out of use before
            (``builtin_last_years``: the Houston Oilers) are never drawn, and companies only
            among those known by their name by then (``builtin_in_use_by``).  Default None: any name.

    Each original's fine class is decided by ``tough_ner.fine_classes`` (route in the record),
    and refined by a facet where the dictionary has them (the record's ``facet``: a sport from
    the document's headline, a gender from the given name, a title, the event or the document's
    names, a state's size band, a nationality word's form).  The replacement takes the
    original's surface (``tough_ner.attacks.surface``): case pattern, an acronym of the same
    kind and length band for an acronym (none: the original is kept), a possessive or plural
    suffix, "the" where a place takes it and the original had none, "a"/"an" and "'s"/"'" next
    to it made to agree (records of level ``grammar``); a one-word person mention that is the
    last word of a full name in the document is replaced by the last word of that name's
    replacement.  With the built-in dictionary, like is replaced by like in place: a state by a
    state of its subregion and size band (else of its subregion, else of its continent), a
    nationality word likewise, a city or region by one of its country, a club by one of its sport
    and country (else of a neighbour's, a fixture's clubs of one country); a city, region or club
    followed by its country ("DILI , East Timor", "AEK Athens ( Greece )") is drawn among those of
    the country replacing it (so are a city or region of a country its document names, and a
    nationality of a country its sentence names); a person gets a name of its own name's origin
    (``person_origin``: its given name's and surname's zone, else that of the country its sentence
    or document ties it to; none sure: kept, reason ``no_origin``), and the country or nationality
    that ties it is replaced only by one whose people's names are of that zone; in a document about a sport
    not every nation plays, a country is replaced only by one of the sport's nations
    (``dictionaries.builtin_sport_nations``).  A company is replaced by one of its industry (the
    dictionary's, else the sentence's word for it: "the metals producer"), a North American league's
    team named by its city by a club of the league, and a dateline's city by a capital or a large
    city (``dictionaries.builtin_dateline_cities``).  The ``kept`` column
    lists the originals left as they are (``unclassified``; ``no_candidate``: no candidate of the
    class, facet, shape and place is left; ``unplaced``: a place, club or nationality word of no
    known country; ``context``: a continent or world region, a party or
    militant group, a place attached to the entity beside it and that entity, see
    ``_mark_attached``, or a country whose city or club beside it is kept, and the reverse; a
    league's home team named by its city (LOC), a state or country in a dateline);
    ``summary`` counts them per type.  An acronym after "the" is
    replaced only by one read with "the" (``surface.takes_the_as_acronym``).
    """
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must be between 0 and 1, got {ratio}")
    with no_gc():  # many small acyclic objects: the collector's scans would double the time
        return _entity_attack(data, tags, dictionary, ratio, seed, train, exclude_seen, columns, documents,
                              cross_type, fallback, year)


@lru_cache(maxsize=1)
def _folded_codes() -> Dict[str, str]:
    from .dictionaries import builtin_country_codes

    return {name.casefold(): code for name, code in builtin_country_codes().items()}


def _facet_tables(scheme: Optional[str]):
    from .dictionaries import builtin_facets, builtin_given_names

    if scheme is None:
        return {}, {}, {}
    facets = builtin_facets()
    folded = _folded_facets()
    return facets, folded, builtin_given_names()


@lru_cache(maxsize=1)
def _folded_facets() -> Dict[str, Dict[str, str]]:
    from .dictionaries import builtin_facets

    return {name: {s.casefold(): v for s, v in table.items()} for name, table in builtin_facets().items()}


def _later_names(scheme: Optional[str], year: Optional[int]) -> frozenset:
    """The built-in names not drawn for a corpus of ``year``: those first used after it or last
    used before it, and the companies not known to be in use under their name by then (none
    without a year or the built-in dictionary)."""
    if scheme is None or year is None:
        return frozenset()
    from .dictionaries import _builtin_data, builtin_first_years, builtin_in_use_by, builtin_last_years

    in_use = builtin_in_use_by()
    unknown = (name for name in _builtin_data()["classes"]["company"] if in_use.get(name, year + 1) > year)
    gone = (name for name, last in builtin_last_years().items() if last < year)
    return frozenset(name for name, first in builtin_first_years().items() if first > year).union(unknown, gone)


def _entity_attack(data, tags, dictionary, ratio, seed, train, exclude_seen, columns, documents, cross_type,
                   fallback, year):
    tokens, tags, records, columns, documents = attack_input(data, tags, columns, documents)
    batch = Batch(tokens, tags)
    scheme = scheme_for(batch.types) if dictionary is None else None
    dictionary = builtin(scheme) if dictionary is None else normalize(dictionary)
    stats = TrainStats.coerce(train, keep_text=True) if train is not None else None  # fine classes read the text
    excluded = set(stats.mention_text_counts) if stats is not None and exclude_seen else set()
    type_fallback = fallback_classes(dictionary, scheme, fallback)
    natural = fallback_classes(dictionary, scheme, True) if cross_type else {}
    deciders = _fine_classes(dictionary, scheme, stats, type_fallback)
    facets, folded_facets, given_names = _facet_tables(scheme)
    pools = _Pools(dictionary, excluded, facets, _later_names(scheme, year))
    if scheme is not None:  # the built-in dictionary: its filtered pools are kept with the statistics
        holder = stats.__dict__ if stats is not None and exclude_seen else _POOL_CACHE
        pools._pools = holder.setdefault(f"_attack_pools_{scheme}_{year}", {})
        pools._allowed = holder.setdefault(f"_attack_allowed_{scheme}_{year}", {})
    docs = documents if documents is not None else list(range(len(tokens)))
    sports = document_sports(tokens, docs) if documents is not None else {}
    sentence_sports = _sentence_sports(tokens, batch.gold_spans) if documents is None else []
    person_types = {t for t, classes in dictionary.items() if "person" in classes}
    genders = None
    if given_names and person_types:
        genders = Genders(given_names, tokens, docs,
                          [[(a, b) for a, b, t in spans if t in person_types] for spans in batch.gold_spans])

    # Every original mention, its surface and its fine class.
    mentions: List[_Mention] = []
    string_cache: Dict[Tuple[str, str], Tuple] = {}
    for s, spans in enumerate(batch.gold_spans):
        words = tokens[s]
        for i, (start, end, entity_type) in enumerate(spans):
            m = _Mention()
            m.s, m.i, m.start, m.end, m.type = s, i, start, end, entity_type
            m.text = " ".join(words[start:end])
            key = (entity_type, m.text)
            if key not in string_cache:
                table = deciders.lookup.get(entity_type, {})
                stem, suffix = split_suffix(m.text, lambda x: x.casefold() in table and
                                            table[x.casefold()] in ("nationality", "people", "religion"))
                string_cache[key] = (stem, suffix) + deciders.decide(entity_type, m.text, (), 0, 0, None)
            m.stem, m.suffix, m.name, m.route = string_cache[key]
            sport = sports.get(docs[s]) if documents is not None else sentence_sports[s]
            if m.route in ("training", "fallback", UNCLASSIFIED):  # the context may decide before training and fallback
                name = deciders.by_context(entity_type, words, start, end, sport)
                if name is not None:
                    m.name, m.route = name, "rule"
            elif m.name == "nationality" and "language" in deciders.classes.get(entity_type, ()) and \
                    language_context(words, start, end):  # "in French ."
                m.name, m.route = "language", "rule"
            elif m.name == "international" and m.route == "rule" and sport is not None:
                m.name, m.route = None, UNCLASSIFIED  # a federation in sport is a sports body: no class drawn
            if sport in LEAGUE_SPORTS and m.stem.casefold() in _team_cities().get(sport, ()):
                # "NEW YORK AT MIAMI", "St Louis 4 COLORADO 3": a league's team named by its city. A club
                # (ORG) is replaced by a club of the league; a place (LOC) is kept: another city has no
                # team in the league, and the league's cities are the training data's too.
                m.name, m.route = ("sports_club", "rule") if "sports_club" in deciders.classes.get(
                    entity_type, ()) else (m.name, m.route)
                m.attached = m.name != "sports_club"
            else:
                m.attached = False
            # a dateline's place ("BEIJING 1996-12-06", "DILI , East Timor 1996-12-06"); a region or a
            # country first there is kept ("NEW YORK" the state, "SINGAPORE" the city-state: no other is one)
            m.dateline = start == 0 and len(words) <= end + 4 and bool(DATE.match(words[-1]))
            m.attached = m.attached or (m.dateline and m.name in ("region", "country")) or (
                m.name in COASTAL_CLASSES and _by_the_sea(words, start, end)) or (
                m.name == "international" and any(SECRETARY_GENERAL.match(w) for w in words[max(0, start - 4):start])
            ) or (m.name in PERSON_CLASSES and _holds_a_unique_office(words, start))
            m.pattern = case_pattern(m.stem)
            m.acronym = (m.pattern == "upper" and " " not in m.stem and len(m.stem) <= 12
                         and is_acronym(m.stem, shouting(words)))
            m.facet = _facet(m, words, docs[s], sport, folded_facets, genders)
            before = words[start - 1] if start > 0 else ""
            m.the = before.lower() == "the"
            m.the_fits = the_fits(words, start)
            m.determiner = before.lower() in DETERMINERS
            m.article_at = start - 1 if before.lower() in ("a", "an") else -1
            after = words[end] if end < len(words) else ""
            m.possessive_at = end if after in ("'s", "'") and " " not in m.suffix and \
                (i + 1 == len(spans) or spans[i + 1][0] != end) else -1  # (never another entity's token)
            m.next_word = after.lower()
            m.initials = m.name == "person" and end - start > 1 and bool(INITIAL.match(words[start]))
            m.part = ""
            m.anchor = m.spells = m.frame = None
            mentions.append(m)
    _mark_attached(mentions, tokens)
    if scheme is not None and not cross_type:  # the built-in dictionary knows the countries
        _mark_anchored(mentions, tokens)
        _mark_framed(mentions, tokens)
    if not cross_type:
        _mark_spelled(mentions, tokens)
    # Units: one per (document, type, string); a lone surname joins its full name's unit.
    full_names: Dict[Tuple, Tuple] = {}
    for m in mentions:
        if len(m.stem.split()) > 1 and m.name == "person":
            full_names.setdefault((docs[m.s], m.type, m.stem.split()[-1].casefold()), (docs[m.s], m.type,
                                                                                        m.stem.casefold()))
    units: Dict[Tuple, List[_Mention]] = {}
    for m in mentions:
        key = (docs[m.s], m.type, m.stem.casefold())
        if " " not in m.stem and m.name == "surname" and key in full_names and not cross_type:
            key, m.part, m.route = full_names[key], "last", "coreference"
        units.setdefault(key, []).append(m)
    order = {route: k for k, route in enumerate(ROUTES + (UNCLASSIFIED,))}
    eligible = []  # (unit key, pool key)
    kept: Dict[Tuple, str] = {}  # unit key -> reason
    for key, members in units.items():
        heads = [m for m in members if not m.part] or members
        best = min(heads, key=lambda m: order[m.route])
        facet = next((m.facet for m in heads if m.facet is not None and m.name == best.name), None)
        for m in members:
            if not m.part:
                m.name, m.route = best.name, best.route
            m.facet = facet
        target_type, target_class = best.type, best.name
        if cross_type:  # another type's most natural class, whatever the original's class
            others = sorted(t for t in dictionary if t != best.type)
            if not others:
                continue
            target_type = others[random.Random(f"{seed}/{key}").randrange(len(others))]
            target_class, facet = natural.get(target_type), None
        elif best.name is None:
            kept[key] = "unclassified"
            continue
        elif best.name in KEPT_CLASSES or (best.name == "region" and facet == "world") or \
                any(m.attached for m in members):
            kept[key] = "context"
            continue
        elif scheme is not None and best.name in PLACE_CLASSES and facet is None and best.route != "fallback" and \
                all(m.anchor is None for m in members):
            kept[key] = "unplaced"  # a place of no known country: no place of its country to draw
            continue
        # an acronym only if never written in lower case in the document ("DILI" in a dateline, "Dili" later)
        acronym = any(m.acronym for m in heads) and all(m.pattern == "upper" for m in heads)
        if acronym:
            shape = ("acronym", acronym_band(len(best.stem.replace(".", ""))), "." in best.stem)
        elif any(m.the for m in heads) and takes_the(best.stem, target_class):  # "the Netherlands": a "the" name
            shape = ("the",)
        else:
            shape = ("word",)
        if target_class in FACET_NEEDED and facet is None and facets.get(target_class) and not cross_type and \
                best.route != "fallback":  # (a fallback asked for guesses the facet too: any)
            kept[key] = "unclassified"  # a club whose sport nothing tells, a company whose industry
            continue
        collective = any(m.the for m in heads)
        if target_class in PLACE_CLASSES and any(m.anchor is not None for m in members):
            facet = None  # before its country ("DILI , East Timor"): drawn among the new country's places
        pool_key = pools.resolve(target_type, target_class,
                                 pools.allowed(target_type, target_class, facet, shape, collective), shape, best.stem)
        if pool_key is None and cross_type and shape[0] == "acronym":  # another type seldom has acronyms: a name
            pool_key = pools.resolve(target_type, target_class, None, ("word",), best.stem)
        if pool_key is None:
            kept[key] = "no_candidate"
        else:
            eligible.append((key, pool_key))
    # A city, region or club next to its country ("DILI , East Timor", "AEK Athens ( Greece )") goes
    # with it: drawn after it, of the country replacing it (of the country itself when no candidate is
    # left for it); kept, and its country with it, when either is kept for its class.
    codes = builtin_country_codes() if scheme is not None and not cross_type else {}
    anchored: Dict[Tuple, Tuple] = {}  # the city's or club's unit -> its country's unit
    for key, members in units.items() if codes else ():
        anchor = next((m.anchor for m in members if m.anchor is not None), None)
        if anchor is not None:
            anchored[key] = (docs[anchor.s], anchor.type, anchor.stem.casefold())
    if codes:
        _tie_to_named_countries(units, anchored, kept)
        for key, anchor in anchored.items():  # a club after a nationality tied to a country: of that country
            if anchor in anchored:
                anchored[key] = anchored[anchor]
        # a city called a capital ("the Cameroonian capital Yaounde", "Malaysia 's capital Kuala Lumpur") is
        # kept, and the country it is tied to or that calls it so: the dictionary does not say which city is one
        for key, members in units.items():
            if any((m.name == "city" and tokens[m.s][m.start - 1:m.start] == ["capital"]) or
                   (m.name in FRAME_CLASSES and "capital" in tokens[m.s][m.end:m.end + 2]) for m in members):
                kept[key] = "context"
    for key, country in anchored.items():
        if key in kept and country not in kept:
            kept[country] = "context"
    # A person named with a country or nationality ("Hermann Maier ( Austria )", "Argentine Nestor
    # Sensini") is framed by it; a person kept keeps its country too.
    framed: Dict[Tuple, Tuple] = {}  # the person's unit -> its country's or nationality's unit
    for key, members in units.items() if codes else ():
        frame = next((m.frame for m in members if m.frame is not None), None)
        if frame is not None and key not in anchored:
            framed[key] = (docs[frame.s], frame.type, frame.stem.casefold())
    zones = builtin_name_zones() if codes else {}
    headlines = {s for s in range(len(tokens)) if s == 0 or docs[s - 1] != docs[s]}  # a document's first sentence
    bound = _origins_of_persons(units, eligible, kept, framed, zones, pools, headlines) if zones else {}
    for key, frame in framed.items():
        if key in kept and frame not in kept:
            kept[frame] = "context"
    followers = {key: pool_key for key, pool_key in eligible if key in anchored and anchored[key] not in kept}
    for key, country in anchored.items():
        if key not in kept and country in kept:
            kept[key] = "context"
    eligible = [(key, pool_key) for key, pool_key in eligible if key not in kept and key not in anchored]
    # An acronym in brackets after the name it spells ("World Trade Organisation ( WTO )") is the
    # same entity: it becomes the initials of the name's replacement, or stays when the name stays.
    spelled: Dict[Tuple, List[Tuple]] = {}  # the long name's unit -> its acronyms' units
    for key, members in units.items():
        long = next((m.spells for m in members if m.spells is not None), None)
        if long is None:
            continue
        long_key = (docs[long.s], long.type, long.stem.casefold())
        if long_key in kept or long_key in anchored or long_key == key:
            kept[key] = "context"
        else:
            spelled.setdefault(long_key, []).append(key)
            kept.pop(key, None)
    acronym_units = {acronym for keys in spelled.values() for acronym in keys}
    eligible = [(key, pool_key) for key, pool_key in eligible if key not in acronym_units]
    followers = {key: pool_key for key, pool_key in followers.items() if key not in acronym_units and key not in kept}
    needs: Dict[Tuple, List[Tuple]] = {}  # a country's unit -> the pool keys of the places that follow it
    for key, pool_key in followers.items():
        needs.setdefault(anchored[key], []).append(pool_key)
    def listed(m: _Mention) -> bool:
        """Not a player's club in brackets ("Kent Gilbert ( Benfica )")."""
        return m.start == 0 or tokens[m.s][m.start - 1] != "("

    # A club's country: the dictionary's, else the one most of the known clubs of its sentences give
    # ("Ross County 4 Montrose 4"), else of its document (a league table), else of the places its
    # document's clubs' names hold ("Real Madrid"); a player's club in brackets ("Kent Gilbert ( Benfica
    # )") only its own or its name's. None: the club is kept.
    club_countries: Dict[Tuple, str] = {}
    around: Dict[Tuple, Counter] = {}  # ("s", sentence) or ("d", document) -> its known clubs' countries
    for key, members in units.items() if codes else ():
        code = _folded_codes().get(key[2]) if members[0].name == "sports_club" else None
        if code:
            club_countries[key] = code
            for m in members:
                if listed(m):
                    around.setdefault(("s", m.s), Counter())[code] += 1
                    around.setdefault(("d", key[0]), Counter())[code] += 1
    named_places: Dict[int, Counter] = {}  # document -> the countries of the places its clubs' names hold
    city_names = _folded_candidates(next((classes["city"] for classes in dictionary.values() if "city" in classes), ()))
    for key, pool_key in eligible if codes else ():
        if pool_key[1] == "sports_club" and key not in club_countries:
            code = _place_in_name(units[key][0].stem, folded_facets, city_names)
            if code and not any(map(listed, units[key])):
                club_countries[key] = code
            elif code:
                named_places.setdefault(key[0], Counter())[code] += 1
    for key, pool_key in eligible:
        if pool_key[1] == "sports_club" and key not in club_countries and any(map(listed, units[key])):
            found = sum((around.get(("s", m.s), Counter()) for m in units[key] if listed(m)), Counter()) or \
                around.get(("d", key[0])) or named_places.get(key[0])
            if found:
                club_countries[key] = min(found, key=lambda c: (-found[c], c))
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(eligible)), round(ratio * len(eligible))))
    # At most 1% of a type's replaced mentions per replacement string, where the pools allow it.
    demand = Counter(pool_key[0] for index in chosen for pool_key in [eligible[index][1]]
                     for _ in units[eligible[index][0]])
    # A document never gets a replacement that is another of its originals ("Mali" for Burkina Faso beside Mali).
    used_in_doc: Dict[int, set] = {}
    for doc, _, stem in units:
        used_in_doc.setdefault(doc, set()).add(stem)
    free: Dict[int, bool] = {}

    def is_free(m: _Mention) -> bool:
        """The mention's sentence is written without articles (a headline, results, a dateline)."""
        if m.s not in free:
            free[m.s] = article_free(tokens[m.s])
        return free[m.s]

    supplies: Dict[Tuple, Counter] = {}

    def supply(pool_key: Tuple, code: Optional[str]) -> int:
        """How many candidates of a pool are of a country (cities and regions: by the country's ISO
        code; two spare, as a training mention's case forms may rule some out)."""
        if pool_key[1] in PLACE_CLASSES:
            return len(pools.pool(pool_key[0], pool_key[1], ((code or "").split("-")[0],), pool_key[3])) - 2
        if pool_key not in supplies:
            supplies[pool_key] = Counter(_country_of(x) for x in pools.pool(*pool_key))
        return supplies[pool_key][code] or supplies[pool_key][(code or "").split("-")[0]]

    def code_of(name: str) -> Optional[str]:
        """The country of a country name or a demonym (its ISO code)."""
        folded = name.casefold()
        return folded_codes.get(folded) or _folded_origins().get(folded)

    replaced_codes: Dict[Tuple, Optional[str]] = {}  # a country's unit -> its replacement's code

    def drawing_order():
        # Larger units first, so that the usage cap can still be kept for them (largest first packs
        # best); the cities and clubs next to a country last, once their country is drawn.
        for index in sorted(chosen, key=lambda index: (-len(units[eligible[index][0]]), index)):
            yield eligible[index]
        for key, pool_key in followers.items():
            if anchored[key] in replaced_codes:
                yield key, pool_key

    names_used: Dict[int, set] = {}  # document -> the given names and surnames drawn for its persons
    sport_nations = builtin_sport_nations() if codes else {}
    dateline_cities = builtin_dateline_cities() if scheme is not None else frozenset()

    def unit_sport(key: Tuple) -> Optional[str]:
        return sports.get(key[0]) if documents is not None else sentence_sports[units[key][0].s]

    folded_codes = _folded_codes() if codes else {}

    def sentence_stems(sentences) -> set:
        """The originals of these sentences (casefolded)."""
        return {" ".join(tokens[s][a:b]).casefold() for s in sentences for a, b, _ in batch.gold_spans[s]}

    new_texts: Dict[int, Dict[int, List[str]]] = {}
    befores: Dict[int, Dict[int, List[str]]] = {}
    edits: Dict[int, Dict[int, Tuple[str, str]]] = {}  # sentence -> position -> (new word, label)
    labels: Dict[int, Dict[int, str]] = {}
    notes: Dict[int, Dict[int, _Mention]] = {}

    subregions, continents = (builtin_subregions(), builtin_continents()) if codes else ({}, {})
    band_of = facets.get("country", {})

    def near(pool_key: Tuple, home: str, band: Optional[str], own: str = "") -> List[Tuple]:
        """A state's or nationality word's pools by distance: of its subregion and (a state) size
        band, of its subregion, of its continent and size band, of its continent; the first with
        ``MIN_SUBREGION_POOL`` candidates besides the original (the continent's: one) is drawn
        from, the others when it runs out (a neighbour of another size reads better than a state
        of the same size far away: Syria as Qatar, not Laos).  With ``own`` (a company's name),
        first of its own country, and one candidate is enough."""
        levels = []
        steps = [("country", None)] * bool(own) + [("subregion", band), ("subregion", None), ("continent", band),
                                                   ("continent", None)]  # (a nationality word has no band)
        for table, size in dict.fromkeys(steps):
            areas = {"subregion": subregions, "continent": continents}.get(table, {home: home})
            area = areas.get(home)
            if area is None:
                continue
            level = pools.narrowed(pool_key, ("near", area, size), lambda x, areas=areas, area=area, size=size: (
                areas.get((code_of(x) or "").split("-")[0]) == area and size in (None, band_of.get(x))))
            left = sum((x.casefold() != own) if own else (code_of(x) or "").split("-")[0] != home
                       for x in pools._pools[level])
            if levels or left >= (MIN_SUBREGION_POOL if table == "subregion" and not own else 1):
                levels.append(level)
        return levels

    club_drawn: Dict[int, str] = {}  # sentence -> the country of the first club drawn in it
    clubs_in: Counter = Counter()  # sentence -> its listed clubs (a fixture's, a score line's)
    for key, pool_key in eligible:
        if pool_key[1] == "sports_club":
            clubs_in.update({m.s for m in units[key] if listed(m)})

    def club_pools(pool_key: Tuple, code: str, sentences, used: set) -> List[Tuple]:
        """A club's pools by distance: of its own country, then of the other countries of its
        subregion and of its continent, the ones with most clubs of the sport left first, and the
        nearest with clubs left for all of its sentence's clubs (``used``: its document's) first.
        A club whose sentence already has a club drawn: of that one's country alone, or none (a
        fixture's clubs stay of one country)."""
        def of(code):  # (a place's "GB" takes the clubs of the UK's nations; a tag of its own: not the same test)
            return pools.narrowed(pool_key, ("country or nation", code), lambda x, code=code: codes.get(x) == code or
                                  (codes.get(x) or "").split("-")[0] == code)
        drawn = {club_drawn[s] for s in sentences if s in club_drawn}
        if drawn:
            level = of(drawn.pop()) if len(drawn) == 1 else None
            return [level] if level is not None and pools._pools[level] else []
        left = Counter(codes.get(x) for x in pools._pools[pool_key])
        home = code.split("-")[0]
        nearby = [sorted((c for c in left if c and (table.get(c.split("-")[0]) or 0) == table.get(home)),
                         key=lambda c: (-left[c], c)) for table in (subregions, continents) if table.get(home)]
        levels = [level for level in map(of, dict.fromkeys([code] + sum(nearby, []))) if pools._pools[level]]
        need = max((clubs_in[s] for s in sentences), default=1)
        enough = [sum(x.casefold() not in used for x in pools._pools[level]) >= need for level in levels]
        return [level for level, ok in zip(levels, enough) if ok] + [level for level, ok in zip(levels, enough) if not ok]

    for key, pool_key in drawing_order():
        members = units[key]
        target_class = pool_key[1]
        sentences = {m.s for m in members if listed(m)}
        wider: List[Tuple] = []  # pools further away, drawn from when this one runs out
        # the country a candidate must be of: its pool narrowed
        if key in anchored:  # a city or club of the country replacing its neighbour (or of it, when kept)
            code = replaced_codes[anchored[key]] or code_of(anchored[key][2])
            if code is None:
                kept[key] = "context"
                continue
            if target_class in PLACE_CLASSES:
                pool_key = (pool_key[0], target_class, (code.split("-")[0],), pool_key[3])
                pools.pool(*pool_key)
            else:  # a club of the country (its nation in the UK), a nationality of it
                pool_key = pools.narrowed(pool_key, ("country", code), lambda x, code=code: codes.get(x) == code or
                                          _folded_origins().get(x.casefold()) == code.split("-")[0])
        elif key in needs:  # a country with cities or clubs of its own for the places that follow it
            wanted = tuple(sorted(Counter(needs[key]).items(), key=repr))
            pool_key = pools.narrowed(pool_key, ("supplies",) + wanted,
                                      lambda x, wanted=wanted: all(supply(p, code_of(x)) >= n for p, n in wanted))
        elif target_class == "sports_club" and codes and (pool_key[2] is None or
                                                          LEAGUE_SPORTS.keys().isdisjoint(pool_key[2])):
            # a club of its own country (North American leagues' clubs have none: their league is their
            # place; a user's dictionary gives no countries: any of its clubs)
            code = club_countries.get(key)
            levels = club_pools(pool_key, code, sentences, used_in_doc.get(key[0], set())) if code is not None else []
            if not levels:
                kept[key] = "unplaced" if code is None else "no_candidate"
                continue
            pool_key, wider = levels[0], levels[1:]
        if key in bound:  # a country or nationality whose persons keep their names' origin: one of its name zone
            pool_key = pools.narrowed(pool_key, ("zone", bound[key]), lambda x, zone=bound[key]: zones.get(
                (code_of(x) or "").split("-")[0]) == zone)
        nations = sport_nations.get(WINTER_SPORTS.get(unit_sport(key), unit_sport(key)))
        if nations and target_class in FRAME_CLASSES:  # a nation that plays the document's sport
            pool_key = pools.narrowed(pool_key, ("nations",) + nations, lambda x, nations=nations: (
                code_of(x) or "").split("-")[0] in nations or code_of(x) in nations)
        if target_class in FRAME_CLASSES and key not in anchored and codes and members[0].route != "fallback":
            home = (code_of(members[0].stem) or "").split("-")[0]
            if not home:
                kept[key] = "unplaced"  # a people or region word of no one state ("Kurdish", "European")
                if key in needs:
                    replaced_codes[key] = None
                continue
            band = members[0].facet if target_class == "country" else None
            levels = near(pool_key, home, band)
            if not levels:
                kept[key] = "no_candidate"
                if key in needs:
                    replaced_codes[key] = None
                continue
            pool_key, wider = levels[0], levels[1:]
        home = (_folded_codes().get(key[2]) or "").split("-")[0] if target_class in LISTED_CLASSES and codes and \
            key not in spelled else ""
        if home:  # a listed company, bank or media group: one of its country, else of its subregion, continent
            levels = near(pool_key, home, None, own=key[2])
            if not levels:
                kept[key] = "no_candidate"
                continue
            pool_key, wider = levels[0], levels[1:]
        if target_class == "city" and key not in anchored and any(m.dateline for m in members):
            # a dateline's city alone: a capital or a large city (before its country: of the new country)
            narrow = pools.narrowed(pool_key, ("dateline",), lambda x: x in dateline_cities)
            pool_key, wider = (narrow, [pool_key]) if pools._pools[narrow] else (pool_key, [])
        if key in spelled:  # its acronyms will be its initials: of their length band; a public body's, known
            bands = tuple(sorted({acronym_band(len(acronym[2].replace(".", ""))) for acronym in spelled[key]}))
            known = deciders.lookup.get(pool_key[0], {})
            pool_key = pools.narrowed(pool_key, ("initials",) + bands, lambda x, bands=bands, c=target_class: all(
                fits_band(initials(x), band) for band in bands) and (
                c not in KNOWN_ACRONYMS or known.get(initials(x).casefold()) == c))
        if not pools._pools[pool_key]:
            kept[key] = "no_candidate"
            if key in needs:
                replaced_codes[key] = None  # kept: the places that follow it stay in its country
            continue
        avoid = used_in_doc.setdefault(key[0], set())
        distinct = distinctive_words(members[0].stem)
        # members written alike get one surface: check each way of writing once
        ways = list({(m.part, m.suffix, m.pattern, m.initials, m.next_word): m for m in members}.values())
        the_free = all(m.the or m.the_fits or is_free(m) for m in members)

        def valid(candidate, ways=ways, target_class=target_class, distinct=distinct, the_free=the_free,
                  determiner=any(m.determiner for m in members), after_the=any(m.the for m in members),
                  acronym_shape=pool_key[3][0] == "acronym", avoid=avoid, spells=key in spelled,
                  longer=scheme is not None and len(members[0].stem.replace(".", "")) > 2,
                  league=sentence_stems(sentences) if target_class == "sports_club" and pool_key[2] is not None
                  and not LEAGUE_SPORTS.keys().isdisjoint(pool_key[2]) else None,
                  womens=womens_competition(members[0].stem) if target_class == "event" else None,
                  names=names_used.get(key[0], ()) if target_class in PERSON_CLASSES else ()):
            if longer and len(candidate.replace(".", "")) == 2:
                return False  # built-in names: "Li" for "Ivanov", "SL" for "UK" read as a cut; two letters only for two
            if womens is not None and womens_competition(candidate) != womens:
                return False  # the WTA Finals for the Grand Slam Cup: its players' names would change gender
            if names and not names.isdisjoint(candidate.casefold().split()):
                return False  # no two persons of a document with one given name or surname ("twin Temistocles")
            if spells and (initials(candidate) in excluded or initials(candidate).casefold() in avoid):
                return False  # its initials, its acronyms' replacement, are a training mention or taken
            last = candidate[candidate.rfind(" ") + 1:].lower()
            if " " in candidate and len({m.next_word == last for m in ways}) > 1:
                return False  # "Northern" before "province", "Northern Province" elsewhere: one string for both
            if target_class == "water" and any(m.next_word in ("river", "sea") and m.next_word != last for m in ways):
                return False  # "the Tana river": a river ("Mekong River" written "Mekong"), never "Torres Strait"
            if not distinct.isdisjoint(candidate.casefold().replace(".", " ").split()):
                return False  # it may name the same thing: "NY RANGERS" is not replaced by "New York Rangers"
            if league and any(place in league for place in _places_of(candidate)):
                return False  # "DETROIT PISTONS AT DETROIT": the place of another original of its sentence
            if candidate.startswith("The ") and determiner:
                return False  # never "the The Strongest"
            if not the_free and reads_with_the(candidate, target_class):
                return False  # "the" cannot be put here ("neighbouring Falkland Islands")
            if after_the and acronym_shape and not takes_the_as_acronym(candidate, target_class):
                return False  # "the US", never "the PNG"; "the IMF", never "the AES"
            if not excluded:
                return True
            # the surfaces (case, suffix, a surname's last word) must not be training mentions either;
            # written as the candidate is (its pool has no training mention), one needs no check
            return all(_surface(candidate, m, cross_type) not in excluded for m in ways
                       if m.part or m.suffix or m.initials or m.pattern in ("upper", "lower") or m.next_word == last)
        base = pools.draw(pool_key, rng, (avoid, {m.stem.casefold() for m in members}), len(members),
                          demand[pool_key[0]] // 100, valid)
        for further in wider:  # none left there: the next pool, further away
            if base is None and pools._pools[further]:
                base = pools.draw(further, rng, (avoid, {m.stem.casefold() for m in members}), len(members),
                                  demand[pool_key[0]] // 100, valid)
        if base is None:
            kept[key] = "no_candidate"
            if key in needs:
                replaced_codes[key] = None  # kept: the places that follow it stay in its country
            continue
        avoid.add(base.casefold())
        if target_class in PERSON_CLASSES:
            names_used.setdefault(key[0], set()).update(base.casefold().split())
        if key in needs:
            replaced_codes[key] = code_of(base)
        if target_class == "sports_club" and codes.get(base):
            for s in sentences:
                club_drawn.setdefault(s, codes[base])
        acronyms = [(m, initials(base)) for acronym in spelled.get(key, ()) for m in units[acronym]]
        for acronym in {initials(base).casefold()} if acronyms else ():
            avoid.add(acronym)
        for m, written in [(m, base) for m in members] + acronyms:
            if written is not base:  # the same entity as its long name
                m.name, m.route, m.facet = members[0].name, "coreference", members[0].facet
            text = _surface(written, m, cross_type)
            new_texts.setdefault(m.s, {})[m.i] = text.split()
            before, changed = _agreement(text, m, tokens[m.s], target_class, is_free)
            if before:
                befores.setdefault(m.s, {})[m.i] = before
            for position, word in changed.items():
                edits.setdefault(m.s, {})[position] = (word, "article" if position < m.start else "possessive")
            labels.setdefault(m.s, {})[m.i] = pool_key[0]
            notes.setdefault(m.s, {})[m.i] = m
    for key, acronyms in spelled.items():
        for acronym in acronyms:
            if key in kept:
                kept[acronym] = "context"
    kept_at: Dict[int, Dict[int, str]] = {}
    for key, reason in kept.items():
        for m in units[key]:
            kept_at.setdefault(m.s, {})[m.i] = reason
    out_tokens, out_tags, out_kept = [], [], []
    out_columns: Dict[str, Sentences] = {name: [] for name in columns}
    bio = {name: bio_like(values) for name, values in columns.items()}
    fillers: Dict[str, str] = {}
    for s, sentence in enumerate(tokens):
        spans = batch.gold_spans[s]
        if s not in new_texts:
            out_tokens.append(sentence)
            out_tags.append(spans_to_tags(spans, len(sentence), "bio"))
            for name in columns:
                out_columns[name].append(columns[name][s])
            out_kept.append([{"start": spans[i][0], "end": spans[i][1], "original": " ".join(sentence[a:b]),
                              "label": spans[i][2], "reason": reason}
                             for i, reason in sorted(kept_at.get(s, {}).items()) for a, b in [spans[i][:2]]])
            continue
        relabelled = [(a, b, labels[s].get(i, t)) for i, (a, b, t) in enumerate(spans)]
        sentence_edits = {j: word for j, (word, _) in edits.get(s, {}).items()}
        new_tokens, moved, position = rewritten(sentence, relabelled, new_texts[s], befores.get(s), sentence_edits)
        out_tokens.append(new_tokens)
        out_tags.append(spans_to_tags(moved, len(new_tokens), "bio"))
        for name in columns:
            if befores.get(s) and name not in fillers:
                fillers[name] = _determiner_tag(columns[name], tokens)
            out_columns[name].append(rewrite_column(columns[name][s], spans, moved, new_texts[s], bio[name],
                                                    befores.get(s), fillers.get(name, "DT")))
        records[s] = _shifted(records[s], spans, moved, new_texts[s], position)
        for i, words in sorted(new_texts[s].items()):
            start, end, label = moved[i]
            m = notes[s][i]
            if i in befores.get(s, {}):
                records[s].append(_grammar_record(start - 1, "", befores[s][i][0], "article"))
            records[s].append({"level": "cross_type" if cross_type else "entity", "start": start, "end": end,
                               "original": m.text, "replacement": " ".join(words), "label": label,
                               "fine_class": m.name or "", "route": m.route, "original_label": m.type,
                               "facet": m.facet or ""})
        for j, (word, kind) in sorted(edits.get(s, {}).items()):
            records[s].append(_grammar_record(position[j], sentence[j], word, kind))
        out_kept.append([{"start": moved[i][0], "end": moved[i][1], "original": " ".join(sentence[a:b]),
                          "label": spans[i][2], "reason": reason}
                         for i, reason in sorted(kept_at.get(s, {}).items()) for a, b in [spans[i][:2]]])
    return to_dataset(out_tokens, out_tags, records, out_columns, documents, out_kept)


ATTACHING_WORDS = frozenset("club side team".split())
LISTED_CLASSES = frozenset({"company", "bank", "media"})  # their country from their stock listing
ANCHOR_CLASSES = PLACE_CLASSES | {"sports_club"}


TIED_CLASSES = PLACE_CLASSES | {"nationality", "people"}
COASTAL_CLASSES = PLACE_CLASSES | {"country", "water"}
# "a secretary-general of the United Nations" (the corpus's "secretray-general" too): few bodies have one,
# and the dictionary does not say which, so the body is kept
SECRETARY_GENERAL = re.compile(r"^secret\w*-general$", re.IGNORECASE)
WORLDSCALE = re.compile(r"^W(?:S)?\d+(?:\.\d+)?$")  # a tanker fixture's rate: "Ras Tanura / Red Sea W46.50"


# The heads of bodies that have one, each a well-known person in any year ("FIFA chairman Joao Havelange",
# "U.N. Secretary-General Boutros Boutros-Ghali"), and the president the White House speaks for
UNIQUE_OFFICE_BODIES = frozenset("FIFA UEFA IOC IAAF UN U.N. NATO IMF WTO OPEC".split())
OFFICE_TITLES = frozenset("president chairman chief director-general".split())


def _holds_a_unique_office(words: Sequence[str], start: int) -> bool:
    """A person named with a unique well-known office ("FIFA chairman Joao Havelange", "President
    Clinton ... the White House said"): kept, as an invented holder of it ("President Sims") reads false."""
    title = words[start - 1].lower() if start > 0 else ""
    if not (title in OFFICE_TITLES or SECRETARY_GENERAL.match(title)):
        return False
    if start > 1 and words[start - 2] in UNIQUE_OFFICE_BODIES:
        return True
    return title == "president" and "White House" in " ".join(words)


def _by_the_sea(words: Sequence[str], start: int, end: int) -> bool:
    """A place whose coast the sentence names ("KwaZulu-Natal province 's south coast", "Pacific
    Coast", "the coast of southern Baja California and Sinaloa") or a port of a tanker fixture (a
    Worldscale rate in the line): the dictionary does not tell which places have a coast or a port,
    so the place is kept (an inland city is no tanker port, Coahuila has no coast)."""
    if words[end - 1].lower() == "coast" or "coast" in (w.lower() for w in words[end:end + 4]):
        return True
    before = [w.lower() for w in words[max(0, start - 7):start]]
    if any(w in ("coast", "coasts") and after == "of" for w, after in zip(before, before[1:])):
        return True
    return any(WORLDSCALE.match(w) for w in words)


def _country_of(name: str) -> Optional[str]:
    """The country (ISO code) of a built-in club or country name, or of a demonym."""
    return builtin_country_codes().get(name) or _folded_origins().get(name.casefold())


def _origins_of_persons(units: Mapping[Tuple, List["_Mention"]], eligible: List[Tuple], kept: Dict[Tuple, str],
                        framed: Mapping[Tuple, Tuple], zones: Mapping[str, str], pools: "_Pools",
                        headlines: set) -> Dict[Tuple, str]:
    """A person's name is replaced by a name of its own origin (``person_origin``), of its gender:
    its pool (in ``eligible``) becomes that zone's names; when no origin is sure it is kept (reason
    ``no_origin``).  The frames that settle an origin: the country or nationality its sentence ties it
    to (``framed``), else the countries of its sentences' countries, nationalities, clubs and places,
    then its document's (the country most of them are of first; in a document, its headline's count
    twice; a tie: the first named).  Returns the countries and nationalities whose people's names
    replaced persons keep (a unit -> its name zone: it is replaced only by one of that zone); a main
    frame whose names the dictionary cannot write ("South Korea - Kim Do Hoon") is kept with the
    persons kept."""
    def code_of(key: Tuple) -> str:
        m = units[key][0]
        code = m.facet if m.name in PLACE_CLASSES else _folded_codes().get(key[2]) or _folded_origins().get(key[2])
        return (code or "").split("-")[0] if code != "world" else ""

    counts: Dict[int, Counter] = {}
    in_sentence: Dict[int, Counter] = {}
    first: Dict[Tuple, int] = {}
    framing: Dict[Tuple, List[Tuple]] = {}  # (document, country) -> its country and nationality units
    for key, members in units.items():
        if members[0].name not in DOCUMENT_FRAME_CLASSES or not code_of(key):
            continue
        code = code_of(key)
        counts.setdefault(key[0], Counter())[code] += sum(1 + (m.s in headlines) for m in members)
        for m in members:
            in_sentence.setdefault(m.s, Counter())[code] += 1
        first[(key[0], code)] = min(first.get((key[0], code), members[0].s), members[0].s)
        if members[0].name in FRAME_CLASSES:
            framing.setdefault((key[0], code), []).append(key)
    frames = {doc: sorted(found, key=lambda c: (-found[c], first[(doc, c)], c)) for doc, found in counts.items()}

    def frames_of(key: Tuple) -> List[str]:
        """A person's frames: its sentences' countries (the most named first), then its document's."""
        found = sum((in_sentence.get(m.s, Counter()) for m in units[key]), Counter())
        near = sorted(found, key=lambda c: (-found[c], first[(key[0], c)], c))
        return near + [code for code in frames.get(key[0], []) if code not in found]

    bound: Dict[Tuple, str] = {}

    def tied(key: Tuple, frame: Optional[Tuple], code: str) -> List[Tuple]:
        """The frame's country and nationality units that share a sentence with the person, or head its document."""
        if frame in units:
            return [frame]
        sentences = {m.s for m in units[key]} | headlines
        return [unit for unit in framing.get((key[0], code), []) if any(m.s in sentences for m in units[unit])]

    for index, (key, pool_key) in enumerate(eligible):
        if pool_key[1] not in PERSON_CLASSES:
            continue
        frame = framed.get(key)
        codes = [code_of(frame)] if frame in units else frames_of(key)
        origin = person_origin(key[2], [zones.get(code) for code in codes])
        if origin is None:
            kept[key] = "no_origin"
            if codes and zones.get(codes[0]) is None:  # its frame's names cannot be written: the frame stays
                for unit in tied(key, frame, codes[0]):
                    kept.setdefault(unit, "context")
            continue
        gender = pool_key[2][0] if pool_key[2] else None
        named = pools.resolve(pool_key[0], pool_key[1], ("origin", origin, gender), pool_key[3], key[2])
        if named is None:
            kept[key] = "no_candidate"
            continue
        eligible[index] = (key, named)
        for code in codes:
            if zones.get(code) in origin.split("+"):
                bound.update((unit, zones[code]) for unit in tied(key, frame, code))
    return bound


def _tie_to_named_countries(units: Mapping[Tuple, List["_Mention"]], anchored: Dict[Tuple, Tuple],
                            kept: Mapping[Tuple, str]) -> None:
    """A city or region of a country its document names, and a nationality of a country its sentence
    names, go with that country as a city before it does ("Galanta , western Slovakia", "Polish
    tariffs ... between the EU and Poland", "The Italian upper house ... Italy 's budget"): anchored
    to the country's first unit, so drawn after it, of the country replacing it, or kept with it."""
    named: Dict[Tuple, Tuple] = {}  # (document, country code) -> the first unit naming the country
    for key, members in units.items():
        code = _folded_codes().get(key[2]) if members[0].name == "country" and key not in kept else None
        if code:
            named.setdefault((key[0], code.split("-")[0]), key)
    for key, members in units.items():
        m = members[0]
        if key in anchored or m.name not in TIED_CLASSES or m.part or key in kept:
            continue
        code = m.facet if m.name in PLACE_CLASSES else _folded_origins().get(key[2])
        country = named.get((key[0], (code or "").split("-")[0]))
        # (a nationality only in a sentence that names the country: few states have a demonym left to
        # draw, training mentions out, and tying every one would repeat those few)
        if country is not None and (m.name in PLACE_CLASSES or
                                    not {x.s for x in members}.isdisjoint(x.s for x in units[country])):
            anchored[key] = country


def _place_in_name(club: str, folded_facets: Mapping[str, Mapping[str, str]], cities: frozenset) -> Optional[str]:
    """The country of a city or region a club's name holds ("Real Madrid", "Werder Bremen",
    "Barcelona"), the longest first; a city only among the candidates (``cities``, casefolded:
    never a small namesake)."""
    words = club.casefold().split()
    for n in range(len(words), 0, -1):
        for k in range(len(words) - n + 1):
            part = " ".join(words[k:k + n])
            code = (folded_facets.get("city", {}).get(part) if part in cities else None) or \
                folded_facets.get("region", {}).get(part)
            if code and code != "world":
                return code
    return None


@lru_cache(maxsize=4)
def _folded_candidates(strings: Tuple[str, ...]) -> frozenset:
    return frozenset(s.casefold() for s in strings)


def _mark_anchored(mentions: Sequence[_Mention], tokens: Sentences) -> None:
    """A city or club followed by its country ("DILI , East Timor", "AEK Athens ( Greece )"), or after
    its nationality and up to three role words ("Dutch first division leaders PSV Eindhoven", "the
    Malaysian city of Johor Bahru", "a Belgian first division match between Lierse and"): its
    ``anchor`` is the country or nationality; a place of the country's type not in the dictionary
    before ", country" is a city (a dateline's "CHONJU , South Korea"), and a city named before its
    country is no acronym."""
    for m, after in zip(mentions, mentions[1:]):
        if m.s != after.s or after.name != "country" or m.attached or after.attached:
            continue
        between = tokens[m.s][m.end:after.start]
        if between in (["("], [","]):
            if m.name is None and m.type == after.type and between == [","]:
                m.name, m.route = "city", "rule"
            if m.name in ANCHOR_CLASSES:
                m.anchor = after
                m.acronym = False  # a name, even in capitals ("HOBART , Australia")
    for before, m in zip(mentions, mentions[1:]):
        if m.s != before.s or before.name != "nationality" or m.name not in ANCHOR_CLASSES or m.anchor is not None \
                or m.attached or before.attached or before.suffix:
            continue
        between = tokens[m.s][before.end:m.start]
        if between[-1:] == ["of"]:  # "the Malaysian city of Johor Bahru"
            between = between[:-1]
        if between[-1:] == ["between"]:  # "a Belgian first division match between Lierse and ..."
            between = between[:-1]
        if len(between) <= 3 and all(ROLE_WORD.match(w) and w.islower() and w not in NOT_A_ROLE for w in between):
            m.anchor = before  # "Dutch first division leaders PSV Eindhoven": a Dutch club
    # the other clubs of its sentence are of its country too ("... between Lierse and Club Brugge", "PSV
    # Eindhoven romped to a 6-0 win over Volendam"), but a player's club in brackets
    by_nationality = {m.s: m.anchor for m in mentions if m.anchor is not None and m.anchor.name == "nationality"
                      and m.name == "sports_club"}
    for m in mentions:
        if m.s in by_nationality and m.name == "sports_club" and m.anchor is None and tokens[m.s][m.start - 1:m.start] \
                != ["("]:
            m.anchor = by_nationality[m.s]


PERSON_CLASSES = frozenset({"person", "surname"})
WINTER_SPORTS = {"skiing": "winter", "skating": "winter", "bobsleigh": "winter", "luge": "winter"}
FRAME_CLASSES = frozenset({"country", "nationality", "people"})
DOCUMENT_FRAME_CLASSES = FRAME_CLASSES | PLACE_CLASSES | {"sports_club"}  # what tells a document's country
# Words that end a person's description: "Germany beat Italy", "French troops and ..."
NOT_A_ROLE = frozenset("and or of the a an in to for with by at on from as than but who which that said says say was "
                       "were is are has have had will would could not no after before beat beats drew lost won".split())


ROLE_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*$")  # "striker", "under-21"


def _mark_framed(mentions: Sequence[_Mention], tokens: Sentences) -> None:
    """A person named with the country or nationality they are of: "Hermann Maier ( Austria )",
    "Tim Guldimann , the Swiss diplomat", "Argentine Nestor Sensini", "French midfielder Daniel
    Bravo", "Senegal 's President Abdou Diouf" (up to three role words between, no other entity);
    its ``frame`` is that mention."""
    for k, m in enumerate(mentions):
        if m.name not in PERSON_CLASSES:
            continue
        words = tokens[m.s]
        after = mentions[k + 1] if k + 1 < len(mentions) and mentions[k + 1].s == m.s else None
        if after is not None and after.name == "country" and after.start == m.end + 1 and words[m.end] == "(" \
                and words[after.end:after.end + 1] == [")"]:
            m.frame = after
            continue
        if after is not None and after.name in FRAME_CLASSES and not after.suffix and \
                [w.lower() for w in words[m.end:after.start]] in ([","], [",", "the"], [",", "a"], [",", "an"]):
            m.frame = after  # "Tim Guldimann , the Swiss diplomat", "Michael Johnson , U.S."
            continue
        before = mentions[k - 1] if k > 0 and mentions[k - 1].s == m.s else None
        if before is None or before.name not in FRAME_CLASSES or before.suffix:
            continue
        between = words[before.end:m.start]
        if [w.lower() for w in between[:1]] == ["'s"] and before.name == "country":  # "PANAMA 'S" in a headline
            between = between[1:]
        if len(between) <= 3 and all(ROLE_WORD.match(w) and w.lower() not in NOT_A_ROLE for w in between):
            m.frame = before


@lru_cache(maxsize=1)
def _name_lookup() -> Tuple[Dict[str, frozenset], Dict[str, frozenset]]:
    """The name zones each given name and each surname (casefolded) is listed in."""
    from .dictionaries import builtin_person_names

    given: Dict[str, set] = {}
    surnames: Dict[str, set] = {}
    for zone, lists in builtin_person_names().items():
        for kind, names in lists.items():
            for name in names:
                (surnames if kind.startswith("surname") else given).setdefault(name.casefold(), set()).add(zone)
    return ({name: frozenset(zones) for name, zones in given.items()},
            {name: frozenset(zones) for name, zones in surnames.items()})


def name_zones(name: str) -> Tuple[frozenset, frozenset]:
    """The name zones a person's given name and surname (its first and last word; an initial or a
    lone word has no given name) are listed in (``dictionaries.builtin_person_names``)."""
    words = name.split()
    given_zones, surname_zones = _name_lookup()
    given = given_zones.get(words[0].casefold(), frozenset()) if len(words) > 1 and \
        not INITIAL.match(words[0]) else frozenset()
    return given, surname_zones.get(words[-1].casefold(), frozenset())


def person_origin(name: str, frames: Sequence[Optional[str]] = ()) -> Optional[str]:
    """The name zone (or zones) a person's name is of, when it can be told.  ``frames``: the zones of
    the countries the text ties the person to, the main one first (None for a country whose names
    the dictionary cannot write).  Of the zones its given name and surname (``name_zones``) are both
    listed in, else those either is listed in: the first frame's, or the first frame's whose language
    of names (``_alike``) one of them shares ("Hermann Maier", listed as Swiss, beside Austria:
    Austrian), else the one zone, or the zones of one language of names joined by "+" where both parts
    are listed or the text names no country (when the main frame's names cannot be written, only one
    zone that both parts are listed in); no part listed: the main frame's.  None when no zone is sure
    ("Kim Do Hoon" beside South Korea, "Moin Khan" among English surnames in a Pakistani side)."""
    given, surname = name_zones(name)
    both = given & surname
    found = both or given | surname
    framed = next((zone for zone in frames if zone in found), None)
    if framed is None:  # a frame of a language of the name's zones ("Healy", Irish and New Zealand, for Australia)
        framed = next((zone for zone in frames if not _alike(zone).isdisjoint(found)), None)
    if framed is not None:
        return framed
    if frames and frames[0] is None and len(both) != 1:
        return None  # its country's names cannot be written: only a name listed whole in one zone is sure
    if len(found) == 1 or ((both or not any(frames)) and any(found <= _alike(zone) for zone in found)):
        return "+".join(sorted(found))  # one zone, or several of one language of names ("Lee": Britain's, the US's)
    # listed in zones of several languages, none the text's: not sure ("Carlos Belo" in a story of Indonesia);
    # listed nowhere: the main frame's
    return None if found or not frames else frames[0]


@lru_cache(maxsize=None)
def _alike(zone: Optional[str]) -> frozenset:
    """The name zones that share a language of names with ``zone`` (``dictionaries.builtin_name_languages``)."""
    from .dictionaries import builtin_name_languages

    return frozenset(other for zones in builtin_name_languages().values() if zone in zones for other in zones)


def _zone_names(origin: str, fine_class: str, gender: Optional[str]) -> List[str]:
    """Names of a zone (of each of the zones ``origin`` joins by "+") to draw from: a surname of the
    gender's form (without a gender: only the zone's surnames of no gendered form, as a Czech or
    Russian surname's form would tell one), or a full name, each of the zone's given names of the
    gender and surnames used at least once (paired after a fixed shuffle: the same pairs on every
    machine)."""
    from .dictionaries import builtin_person_names

    zones = origin.split("+")
    if fine_class == "surname":  # each zone's once, whatever the gender (the pool sorts and dedupes)
        forms = ("surname", "surname_" + gender) if gender in ("female", "male") else ("surname",)
        return [name for zone in zones for form in forms for name in builtin_person_names().get(zone, {}).get(form, ())]
    genders = (gender,) if gender in ("female", "male") else ("female", "male")
    names: List[str] = []
    for zone, g in ((zone, g) for zone in zones for g in genders):
        lists = builtin_person_names().get(zone, {})
        surnames = sorted(set(lists.get("surname", ())) | set(lists.get("surname_" + g, ()) if gender else ()))
        given = sorted(lists.get(g, ()))
        if not given or not surnames:
            continue
        rng = random.Random(f"names/{zone}/{g}")
        rng.shuffle(given)
        rng.shuffle(surnames)
        names += [f"{given[k % len(given)]} {surnames[k % len(surnames)]}"
                  for k in range(max(len(given), len(surnames)))]
    return names


@lru_cache(maxsize=1)
def _folded_origins() -> Dict[str, str]:
    """Demonyms (casefolded) -> their country's ISO code."""
    return {name.casefold(): code for name, code in builtin_origins().items()}


SPELLED_CLASSES = frozenset({"company", "bank", "university", "government", "international", "media", None})
# Public bodies whose acronyms readers know ("the Caribbean Community" is CARICOM, not "CC"): their
# replacement's initials must be an acronym of the class in the dictionary.
KNOWN_ACRONYMS = frozenset({"government", "international", "university"})
MINOR_WORDS = frozenset("of and for the in on de du des la le del di da der und y et to at".split())
LEGAL_WORDS = frozenset("Ltd Ltd. Corp Corp. Inc Inc. Co Co. Company Plc plc PLC AG SA NV Group Holdings".split())


def initials(name: str) -> str:
    """A name's acronym as its initials: the capital starting each word but minor ones, each
    capitalised part of a hyphenated word ("Organisation for Economic Co-operation and
    Development": OECD; "Rolls-Royce": RR); a legal form left out ("South African Breweries
    Ltd": SAB)."""
    words = name.split()
    while len(words) > 1 and words[-1] in LEGAL_WORDS:
        words = words[:-1]
    return "".join(part[0] for word in words if word.lower() not in MINOR_WORDS
                   for part in word.split("-") if part[:1].isupper())


def _mark_spelled(mentions: Sequence[_Mention], tokens: Sentences) -> None:
    """An acronym in brackets after the organisation it spells ("World Trade Organisation ( WTO
    )", "South African Breweries Ltd ( SAB )"): its ``spells`` is the long name's mention."""
    for m, after in zip(mentions, mentions[1:]):
        if m.s == after.s and m.type == after.type and tokens[m.s][m.end:after.start] == ["("] and \
                " " in m.stem and " " not in after.stem and m.name in SPELLED_CLASSES and \
                after.stem.replace(".", "").isupper() and initials(m.stem) == after.stem.replace(".", ""):
            after.spells = m


def _mark_attached(mentions: Sequence[_Mention], tokens: Sentences) -> None:
    """Mentions whose place only fits the entity next to it, kept with it as they are: a city
    before "club X" ("London side Saracens": no other city is the club's; "Turkish club
    Galatasaray" is anchored instead, ``_mark_anchored``), a nationality before "team X" where X is
    no club, a region after a city ("VAIL , Colorado": the resort is in that
    state), and that entity; a religion or nationality in "the X state" (Israel as "the Jewish state")."""
    for m in mentions:  # "the Jewish state": a name for one country
        words = tokens[m.s]
        if m.name in ("religion", "nationality") and 0 < m.start and m.end < len(words) and \
                words[m.start - 1].lower() == "the" and words[m.end].lower() == "state":
            m.attached = True
    for m, after in zip(mentions, mentions[1:]):
        if m.s != after.s:
            continue
        between = tokens[m.s][m.end:after.start]
        if (m.name in ("nationality", "city") and after.type != m.type and len(between) == 1 and
                between[0].lower() in ATTACHING_WORDS and (m.name == "city" or after.name != "sports_club")) or \
                (after.name == "region" and m.name in ("city", None) and m.type == after.type and between == [","]):
            m.attached = after.attached = True


SPORT_REACH = 30  # sentences a named sport carries to the sports sentences after it, without documents


def _sentence_sports(tokens: Sentences, spans: Sequence[Sequence[Span]]) -> List[Optional[str]]:
    """Without document ids, the sport of each sentence with entities: the sport it names; for a
    sports sentence naming none (a results line), the sport the closest sentence before it named,
    up to ``SPORT_REACH`` sentences back (a headline and its results follow each other)."""
    found: List[Optional[str]] = []
    last, last_at = None, -SPORT_REACH - 1
    for s, words in enumerate(tokens):
        if not spans[s] and not HEADLINE_SPORTS.intersection(words):
            found.append(None)
            continue
        sport = sentence_sport(words)
        if sport:
            last, last_at = sport, s
        elif sport == "" and s - last_at <= SPORT_REACH and last is not None:
            sport = last
        found.append(sport)
    return found


def _facet(m: _Mention, words: Sequence[str], doc: int, sport: Optional[str],
           folded_facets: Mapping[str, Mapping[str, str]], genders: Optional[Genders]) -> Optional[str]:
    """The facet an original's replacement must share: a known string's own facet, else the
    sentence's: a person's gender, the document's sport for a club or competition, a
    nationality word's form by its ending."""
    name = m.name
    own = folded_facets.get(name, {}).get(m.stem.casefold()) if name else None
    if own is not None or not folded_facets:
        return own
    if name in ("person", "surname") and genders is not None:
        return genders.of_mention(words, m.start, m.end, m.s, doc)
    if name == "sports_club":
        return sport if sport in TEAM_SPORTS else None
    if name == "company":  # its industry, by the sentence's word for it ("the metals producer")
        return industry_cue(words, m.start, m.end)
    if name == "event":
        kind = next((EVENT_KINDS[w] for w in m.stem.split() if w in EVENT_KINDS), None)
        if kind is None and sport and any(w in COMPETITION_WORDS for w in m.stem.split()):
            kind = LEAGUE_SPORTS.get(sport, sport)
        if kind == "soccer":  # a soccer competition keeps its scope; one whose words do not tell is kept
            kind = competition_scope(m.stem)
        return kind
    if name == "nationality":
        form = demonym_form(m.stem)
        return "dual" if form == "people" else form
    words = m.stem.split()
    for facet, heads in HEAD_FACETS.get(name, ()):
        if not heads.isdisjoint(words):
            return facet
    return DEFAULT_FACETS.get(name)


def _grammar_record(start: int, original: str, replacement: str, kind: str) -> Record:
    """A word next to a replacement changed to agree with it: ``original`` "" when put in."""
    return {"level": "grammar", "start": start, "end": start + 1, "original": original, "replacement": replacement,
            "label": kind, "fine_class": "", "route": "", "original_label": "", "facet": ""}


def _determiner_tag(values: Sentences, tokens: Sentences) -> str:
    """The tag a column gives "the" (a determiner's POS tag), "DT" when it never does."""
    for column, sentence in zip(values, tokens):
        for value, word in zip(column, sentence):
            if word.lower() == "the":
                return value
    return "DT"


def _shifted(records: List[Record], spans: Sequence[Span], moved: Sequence[Span], replaced,
             position: Sequence[int]) -> List[Record]:
    """Earlier records moved along with the rewritten sentence (``position``: each old token's
    new position); a record of an entity that is replaced again is dropped (the new record's
    original is that earlier replacement)."""
    kept = []
    for record in records:
        where = (record["start"], record["end"])
        j = next((j for j, span in enumerate(spans) if span[:2] == where), None)
        if j is not None and record["level"] in ("entity", "cross_type", "typo"):
            if j in replaced:
                continue
            start, end = moved[j][:2]
        else:
            start = position[record["start"]]
            end = start + record["end"] - record["start"]
        kept.append({**record, "start": start, "end": end})
    return kept


def cross_type_attack(data, tags=None, dictionary: Optional[DictionaryLike] = None, ratio: float = 1.0,
                      seed: int = 0, train=None, **options):
    """Entities replaced by entities of another type, tags updated: does the model read the
    name or the context?  ``entity_attack(..., cross_type=True)``."""
    return entity_attack(data, tags, dictionary, ratio, seed, train, cross_type=True, **options)


# ---- typos and casing ----------------------------------------------------------------------
KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
_NEIGHBOURS = {}
for _row, _keys in enumerate(KEYBOARD):
    for _col, _key in enumerate(_keys):
        _NEIGHBOURS[_key] = "".join(KEYBOARD[r][c] for r in range(max(0, _row - 1), min(3, _row + 2))
                                    for c in (_col - 1, _col, _col + 1)
                                    if 0 <= c < len(KEYBOARD[r]) and (r, c) != (_row, _col))
TYPOS = ("swap", "delete", "insert", "substitute")


def typo(word: str, rng: random.Random) -> str:
    """One keyboard typo inside a word of 3+ characters, never at its first letter: two
    neighbouring letters swapped, a letter deleted, a neighbouring key inserted or hit instead
    (as MultiCoNER v2's noisy sets and TextFlint's EntTypos do); the case of the letter kept."""
    kind = TYPOS[rng.randrange(len(TYPOS))]
    at = rng.randrange(1, len(word) - 1) if kind == "swap" else rng.randrange(1, len(word))
    if kind == "swap":
        changed = word[:at] + word[at + 1] + word[at] + word[at + 2:]
        if changed != word:
            return changed
        kind = "substitute"
    if kind == "delete":
        return word[:at] + word[at + 1:]
    near = _NEIGHBOURS.get(word[at].lower(), "") or "e"
    key = near[rng.randrange(len(near))]
    key = key.upper() if word[at].isupper() else key
    return word[:at] + key + word[at:] if kind == "insert" else word[:at] + key + word[at + 1:]


def typo_attack(data, tags=None, ratio: float = 1.0, seed: int = 0, *,
                columns: Optional[Mapping[str, Sentences]] = None, documents: Optional[Sequence] = None):
    """Character-level typos inside entities: ``round(ratio * eligible)`` entities (those with
    an alphabetic word of 3+ characters) get one typo in one such word.  Tags and token counts
    are unchanged; records have level ``typo``."""
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must be between 0 and 1, got {ratio}")
    tokens, tags, records, columns, documents = attack_input(data, tags, columns, documents)
    batch = Batch(tokens, tags)
    eligible = [(s, span) for s, spans in enumerate(batch.gold_spans) for span in spans
                if any(len(w) >= 3 and w.isalpha() for w in tokens[s][span[0]:span[1]])]
    rng = random.Random(seed)
    out = [list(sentence) for sentence in tokens]
    for index in sorted(rng.sample(range(len(eligible)), round(ratio * len(eligible)))):
        s, (start, end, entity_type) = eligible[index]
        words = [j for j in range(start, end) if len(tokens[s][j]) >= 3 and tokens[s][j].isalpha()]
        j = words[rng.randrange(len(words))]
        out[s][j] = typo(tokens[s][j], rng)
        records[s] = records[s] + [{"level": "typo", "start": start, "end": end,
                                    "original": " ".join(tokens[s][start:end]),
                                    "replacement": " ".join(out[s][start:end]), "label": entity_type,
                                    "original_label": entity_type}]
    return to_dataset(out, [spans_to_tags(spans, len(t), "bio") for spans, t in zip(batch.gold_spans, tokens)],
                      records, columns, documents)


def case_attack(data, tags=None, ratio: float = 1.0, seed: int = 0, mode: str = "lower", *,
                columns: Optional[Mapping[str, Sentences]] = None, documents: Optional[Sequence] = None):
    """Whole sentences lower- or upper-cased (``mode``): ``round(ratio * n)`` of the ``n``
    sentences whose text the mode changes.  Tags are unchanged; one ``case`` record per sentence
    (start 0, end = its length, label = the mode)."""
    if mode not in ("lower", "upper"):
        raise ValueError(f"mode must be 'lower' or 'upper', got {mode!r}")
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must be between 0 and 1, got {ratio}")
    tokens, tags, records, columns, documents = attack_input(data, tags, columns, documents)
    batch = Batch(tokens, tags)
    change = str.lower if mode == "lower" else str.upper
    eligible = [s for s, sentence in enumerate(tokens) if any(change(w) != w for w in sentence)]
    rng = random.Random(seed)
    out = [list(sentence) for sentence in tokens]
    for index in sorted(rng.sample(range(len(eligible)), round(ratio * len(eligible)))):
        s = eligible[index]
        out[s] = [change(w) for w in tokens[s]]
        records[s] = records[s] + [{"level": "case", "start": 0, "end": len(out[s]), "original": " ".join(tokens[s]),
                                    "replacement": " ".join(out[s]), "label": mode}]
    return to_dataset(out, [spans_to_tags(spans, len(t), "bio") for spans, t in zip(batch.gold_spans, tokens)],
                      records, columns, documents)


def summary(attacked) -> Dict[str, object]:
    """Quality figures of an entity-attacked set, from its records: ``n_replaced`` replaced
    mentions of ``n_mentions`` gold mentions (``attacked_share``); per type, the originals
    left as they are (``n_kept_unclassified_*``: no fine class decided; ``n_kept_context_*``: kept for their context; ``n_kept_no_candidate_*``:
    no candidate of the class, facet, shape and place; ``n_kept_unplaced_*``: of no known country;
    ``n_kept_no_origin_*``: a person whose name's origin is not sure); the share of replaced originals whose fine
    class came by each route (``route_*``; ``route_fallback`` is 0 unless a fallback was asked
    for, ``route_unclassified`` unless the attack is cross-type); ``case_kept``, the share
    whose replacement has the original's case pattern (upper, lower or mixed, see
    ``case_pattern``; a possessive suffix aside, as the attack sets the case; originals
    without letters count as kept); ``consistent``, the share of (document,
    type, original) groups replaced by one string everywhere; per type, the largest share of
    one replacement string among the type's replaced mentions (``max_share_*``, with the
    string) and the floor document consistency sets on it, the most repeated original of one
    document (``max_repeat_share_*``)."""
    rows = attacked.to_dict() if hasattr(attacked, "to_dict") else attacked
    docs = rows.get("document") or list(range(len(rows["tokens"])))
    routes: Counter = Counter()
    kept = n = 0
    per_type: Dict[str, Counter] = {}
    seen: Dict[Tuple, List[str]] = {}
    repeats: Counter = Counter()
    for doc, records in zip(docs, rows["replacements"]):
        for r in records:
            if r["level"] not in ("entity", "cross_type"):
                continue
            n += 1
            routes[r["route"]] += 1
            # as the attack sets the case: on the text without its possessive ("2 's" has no case)
            before, after = (case_pattern(split_suffix(r[side], lambda stem: False)[0])
                             for side in ("original", "replacement"))
            kept += before == after or before == "none"
            seen.setdefault((doc, r["original_label"] or r["label"], r["original"]), []).append(r["replacement"])
            per_type.setdefault(r["label"], Counter())[r["replacement"]] += 1
            repeats[(doc, r["label"], r["original"])] += 1
    n_mentions = sum(tag.startswith("B-") for tags in rows.get("ner_tags", ()) for tag in tags)
    result: Dict[str, object] = {"n_replaced": n, "n_mentions": n_mentions,
                                 "attacked_share": n / n_mentions if n_mentions else float("nan")}
    left: Counter = Counter((r["reason"], r["label"]) for rs in rows.get("kept") or () for r in rs)
    types = sorted({tag[2:] for tags in rows.get("ner_tags", ()) for tag in tags if tag != "O"})
    for reason in KEPT_REASONS:
        for entity_type in types:
            result[f"n_kept_{reason}_{entity_type}"] = left[(reason, entity_type)]
    for route in ROUTES + (UNCLASSIFIED,):  # unclassified: only a cross-type attack replaces those
        result[f"route_{route}"] = routes[route] / n if n else float("nan")
    result["case_kept"] = kept / n if n else float("nan")
    result["consistent"] = sum(len(set(v)) == 1 for v in seen.values()) / len(seen) if seen else float("nan")
    for entity_type, counts in sorted(per_type.items()):
        text, most = max(counts.items(), key=lambda item: (item[1], item[0]))
        total = sum(counts.values())
        result[f"max_share_{entity_type}"] = most / total
        result[f"max_share_{entity_type}_string"] = text
        # the floor document consistency sets: the most repeated original of one document
        result[f"max_repeat_share_{entity_type}"] = max(n for k, n in repeats.items() if k[1] == entity_type) / total
    return result


# ---- context level --------------------------------------------------------------------------
def _mask_of(fill_mask, mask_token: Optional[str]) -> str:
    tokenizer = getattr(fill_mask, "tokenizer", None)
    return mask_token or getattr(fill_mask, "mask_token", None) or getattr(tokenizer, "mask_token", None) or "[MASK]"


def _proposals(result) -> List[str]:
    """Words from a fill-mask result: ``(word, score)`` pairs, dicts with ``token_str``, or words."""
    words = []
    for item in result:
        if isinstance(item, dict):
            item = item.get("token_str", item.get("word", ""))
        elif isinstance(item, (tuple, list)):
            item = item[0]
        words.append(str(item).strip())
    return words


def usable(word: str, original: str, mask: str) -> bool:
    """A proposal can replace a word when it is one ASCII token with a letter (as RockNER keeps
    ASCII words), not a sub-word piece or a special token, and differs from the original."""
    return (bool(word) and word.isascii() and not any(ch.isspace() for ch in word) and any(ch.isalpha() for ch in word)
            and not word.startswith("##") and word != mask and not (word[0] in "[<" and word[-1] in "]>")
            and word.lower() != original.lower())


def _pos_tags(pos, tokens: Sentences) -> Sentences:
    if pos is None:
        raise ValueError("the context attack needs POS tags: pos= a list of tag lists, a function of the "
                         "sentences, or a spaCy pipeline")
    if hasattr(pos, "pipe") and hasattr(pos, "vocab"):
        from .taggers import spacy_pos
        pos = spacy_pos(pos)
    tags = pos(tokens) if callable(pos) else pos
    if len(tags) != len(tokens):
        raise ValueError(f"{len(tokens)} sentences but POS tags for {len(tags)}")
    for s, (sentence, sentence_tags) in enumerate(zip(tokens, tags)):
        if len(sentence) != len(sentence_tags):
            raise ValueError(f"sentence {s}: {len(sentence)} tokens but {len(sentence_tags)} POS tags")
    return [list(t) for t in tags]


def context_attack(data, tags=None, fill_mask: Union[FillMask, str, None] = None, pos=None, *, n_candidates: int = 5,
                   max_words: int = 3, ranks: Tuple[int, int] = (51, 100), victim: Optional[Tagger] = None,
                   seed: int = 0, mask_token: Optional[str] = None, batch_size: int = 64,
                   progress: Optional[bool] = None, columns: Optional[Mapping[str, Sentences]] = None,
                   documents: Optional[Sequence] = None):
    """RockNER's context-level attack.

    Args:
        data: a ``datasets.Dataset`` (``tokens``, ``ner_tags``; an entity-attacked set keeps
            its records), a Corpus, or token lists (with ``tags``).
        fill_mask: a function ``text with one mask -> [(word, score), ...]`` ranked best
            first, a transformers fill-mask pipeline, or a local model directory.
        pos: POS tags (one list per sentence), a function of the sentences returning them,
            or a spaCy pipeline; words tagged as nouns, verbs, adjectives or adverbs
            (``CONTENT_TAGS``) outside gold entities are the targets.
        n_candidates: candidate sentences per sentence; each masks 1 to ``max_words`` random targets.
        ranks: the 1-based, inclusive rank window the new word is drawn from.
        victim: a tagger ``sentences -> tags``; the candidate where it misses most gold
            entities is kept (ties and no victim: a random candidate).
        seed: each sentence draws from ``random.Random(f"{seed}/{index}")``.
        batch_size: masked texts per call of the model (a fill-mask function with a ``batch``
            attribute, as ``tough_ner.taggers.mlm_fill_mask`` gives, takes a list of texts).
        progress: a progress bar on stderr (default: when stderr is a terminal).
        columns, documents: other per-token columns and document ids, kept (see ``entity_attack``).
    """
    first, last = ranks
    if not 1 <= first <= last:
        raise ValueError(f"ranks must be (first, last) with 1 <= first <= last, got {ranks}")
    if max_words < 1 or n_candidates < 1:
        raise ValueError("max_words and n_candidates must be at least 1")
    if fill_mask is None:
        raise ValueError("the context attack needs a masked language model: fill_mask= a function, "
                         "a transformers pipeline or a local model directory")
    if isinstance(fill_mask, str) or hasattr(fill_mask, "model"):
        from .taggers import mlm_fill_mask
        fill_mask = mlm_fill_mask(fill_mask, top_k=last)
    mask = _mask_of(fill_mask, mask_token)
    tokens, tags, records, columns, documents = attack_input(data, tags, columns, documents)
    batch = Batch(tokens, tags)
    pos_tags = _pos_tags(pos, tokens)
    memo: Dict[str, List[str]] = {}
    fill_many = getattr(fill_mask, "batch", None) or (lambda texts: [fill_mask(t) for t in texts])

    # Every candidate's positions first; then one round per masked word: the texts of all
    # candidates' k-th masks go to the model together (batched), earlier replacements in place.
    rngs, candidates, plans = [], [], []  # per sentence: generator, candidates (words, changed), positions
    for s, sentence in enumerate(tokens):
        rng = random.Random(f"{seed}/{s}")
        rngs.append(rng)
        inside = {i for start, end, _ in batch.gold_spans[s] for i in range(start, end)}
        targets = [i for i, tag in enumerate(pos_tags[s]) if tag in CONTENT_TAGS and i not in inside]
        chosen = [sorted(rng.sample(targets, rng.randint(1, min(max_words, len(targets)))))
                  for _ in range(n_candidates if targets else 0)]
        plans.append(chosen)
        candidates.append([(list(sentence), []) for _ in chosen])
    bar = _progress_bar(sum(len(c) for chosen in plans for c in chosen), "context attack", progress)
    for k in range(max_words):
        requests = [(s, c, chosen[k], " ".join(words[:chosen[k]] + [mask] + words[chosen[k] + 1:]))
                    for s, sentence_plans in enumerate(plans) for c, (chosen, (words, _))
                    in enumerate(zip(sentence_plans, candidates[s])) if len(chosen) > k]
        if not requests:
            break
        new = sorted({text for *_, text in requests if text not in memo})
        for first_new in range(0, len(new), batch_size):
            texts = new[first_new:first_new + batch_size]
            for text, result in zip(texts, fill_many(texts)):
                memo[text] = _proposals(result)[first - 1:last]
            if bar is not None:
                bar.update(len(texts))
        if bar is not None:
            bar.update(len(requests) - len(new))
        for s, c, i, text in requests:
            words, changed = candidates[s][c]
            proposals = [w for w in memo[text] if usable(w, tokens[s][i], mask)]
            if proposals:
                words[i] = rngs[s].choice(proposals)
                changed.append(i)
    if bar is not None:
        bar.close()
    missed = _missed_by(victim, batch, candidates)
    out_tokens = []
    for s, options in enumerate(candidates):
        if not options:
            out_tokens.append(tokens[s])
            continue
        worst = max(missed[s])
        words, changed = options[rngs[s].choice([k for k, m in enumerate(missed[s]) if m == worst])]
        out_tokens.append(words)
        records[s] = records[s] + [{"level": "context", "start": i, "end": i + 1, "original": tokens[s][i],
                                    "replacement": words[i], "label": pos_tags[s][i]} for i in changed]
    return to_dataset(out_tokens, [spans_to_tags(spans, len(t), "bio") for spans, t in zip(batch.gold_spans, tokens)],
                      records, columns, documents)


def _progress_bar(total: int, label: str, progress: Optional[bool]):
    import sys

    if progress is None:
        progress = sys.stderr.isatty()
    if not progress or not total:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=label, unit="mask", file=sys.stderr)


def _missed_by(victim: Optional[Tagger], batch: Batch, candidates) -> List[List[int]]:
    """For each sentence's candidates, how many gold entities the victim does not predict exactly."""
    if victim is None:
        return [[0] * len(options) for options in candidates]
    flat = [words for options in candidates for words, _ in options]
    predicted = iter(victim(flat) if flat else [])
    missed = []
    for s, options in enumerate(candidates):
        gold = batch.gold_spans[s]
        row = []
        for _ in options:
            found = set(decode(next(predicted), s))
            row.append(sum(span not in found for span in gold))
        missed.append(row)
    return missed


LEVELS = ("entity", "context", "both", "typo", "case", "cross_type")


def attack(data, tags=None, level: str = "entity", ratio: float = 1.0, seed: int = 0, dictionary=None, train=None,
           fill_mask=None, pos=None, *, columns=None, documents=None, mode: str = "lower", year: Optional[int] = None,
           **context_options):
    """One attack by name: ``entity``, ``context``, ``both`` (entities first, then context
    words), ``typo``, ``case`` (``mode`` lower or upper) or ``cross_type``; ``year``: the
    corpus's year, for the entity levels (see ``entity_attack``)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(map(repr, LEVELS))}, got {level!r}")
    surface = {"columns": columns, "documents": documents}
    if level == "typo":
        return typo_attack(data, tags, ratio, seed, **surface)
    if level == "case":
        return case_attack(data, tags, ratio, seed, mode, **surface)
    if level == "cross_type":
        return cross_type_attack(data, tags, dictionary, ratio, seed, train, year=year, **surface)
    if level != "context":
        data = entity_attack(data, tags, dictionary, ratio, seed, train, year=year, **surface)
        tags = None
        if level == "entity":
            return data
        if pos is not None and not callable(pos) and not hasattr(pos, "pipe"):
            raise ValueError("with level='both', pos= must tag the new sentences: give a function or a spaCy "
                             "pipeline, not fixed tag lists")
        return context_attack(data, None, fill_mask, pos, seed=seed, **context_options)
    return context_attack(data, tags, fill_mask, pos, seed=seed, **surface, **context_options)


def write_attacked(path, attacked, columns: Sequence[str] = ()) -> None:
    """An attacked set as a CoNLL file: token, the named other columns, tag; a ``-DOCSTART-``
    line before each document when the set has document ids.  Written atomically."""
    rows = attacked.to_dict() if hasattr(attacked, "to_dict") else attacked
    docs = rows.get("document")
    lines = []
    for s, (words, tags) in enumerate(zip(rows["tokens"], rows["ner_tags"])):
        if docs is not None and (s == 0 or docs[s] != docs[s - 1]):
            lines.append(" ".join(["-DOCSTART-"] + ["-X-"] * len(columns) + ["O"]) + "\n\n")
        values = [rows[name][s] for name in columns]
        lines.append("".join(" ".join(fields) + "\n" for fields in zip(words, *values, tags)) + "\n")
    write_atomic(path, "".join(lines))


def audit(attacked, n: int, seed: int = 0, width: int = 8) -> str:
    """``n`` random replaced entities of an attacked set in context (``width`` words either side),
    each with its original, type, fine class and route, for a person to judge; then the
    summary figures (``summary``)."""
    rows = attacked.to_dict() if hasattr(attacked, "to_dict") else attacked
    records = [(s, r) for s, rs in enumerate(rows["replacements"]) for r in rs
               if r["level"] not in ("context", "grammar")]
    picked = sorted(random.Random(seed).sample(range(len(records)), min(n, len(records))))
    lines = [f"{len(picked)} of {len(records)} attacked entities, in context ([original -> replacement]):"]
    for k, index in enumerate(picked, 1):
        s, r = records[index]
        words = rows["tokens"][s]
        if r["level"] == "case":
            lines.append(f"{k:>3}. sentence {s} ({r['label']}): {r['replacement']}")
            continue
        left = words[max(0, r["start"] - width):r["start"]]
        right = words[r["end"]:r["end"] + width]
        old = r.get("original_label")
        label = r["label"] if old in ("", None, r["label"]) else f"{old}->{r['label']}"
        facet = f"/{r['facet']}" if r.get("facet") else ""
        how = f"{r['fine_class']}{facet} by {r['route']}" if r.get("route") else r["level"]
        context = " ".join(left + [f"[{r['original']} -> {r['replacement']}]"] + right)
        lines.append(f"{k:>3}. {label:<5} {how:<28} ... {context} ...")
    facts = summary(rows)
    if facts["n_replaced"]:
        lines.append("")
        lines.append(", ".join(f"{key} {value:.4f}" if isinstance(value, float) else f"{key} {value}"
                               for key, value in facts.items()))
    return "\n".join(lines)


def restored(words: Sequence[str], records: Sequence[Record], marked: Optional[Record] = None) -> List[str]:
    """The sentence before the attacks, from the attacked words and their records (right to
    left, so that no record moves another's position; a case attack's casing is left);
    ``marked``'s original between ``[[`` and ``]]``."""
    tokens = list(words)
    for r in sorted((r for r in records if r["level"] != "case"), key=lambda r: -r["start"]):
        original = r["original"].split()
        if r is marked:
            original = ["[["] + original + ["]]"]
        tokens[r["start"]:r["end"]] = original
    return tokens


AUDIT_HEADER = """Blind audit of an entity attack: {n} replaced entities drawn at random (seed {seed}) of {total}.
Each item shows a sentence as written, then as attacked; the entity replaced is between [[ and ]].
Judge each attacked sentence as a careful native reader: is it plausible text, the new entity of
the right kind, form and scope for its context (a club of the same sport, a state for a state,
a nationality word of the right form, a name of the gender the text signals)?  Answer per item:
plausible or implausible, with a word on why.  The key to the items is in a separate file.
"""


def write_audit(attacked, n: int, blind_path, key_path, seed: int = 0) -> int:
    """A blind audit anyone can repeat: ``n`` replaced entities drawn at random (``seed``) from
    an attacked set, written to ``blind_path`` as the original and the attacked sentence and
    nothing else (no type, class or route), and their key to ``key_path``: per item its
    sentence, type, fine class, facet, route and the replacement.  Both written atomically;
    returns the number of items."""
    rows = attacked.to_dict() if hasattr(attacked, "to_dict") else attacked
    replaced = [(s, r) for s, rs in enumerate(rows["replacements"]) for r in rs
                if r["level"] in ("entity", "cross_type")]
    picked = random.Random(seed).sample(range(len(replaced)), min(n, len(replaced)))
    blind = [AUDIT_HEADER.format(n=len(picked), seed=seed, total=len(replaced))]
    key = [f"Key to the blind audit ({len(picked)} items, seed {seed}): item. sentence number, type, fine class, "
           f"facet, route: original -> replacement\n"]
    for k, index in enumerate(picked, 1):
        s, r = replaced[index]
        words = rows["tokens"][s]
        attacked_words = words[:r["start"]] + ["[["] + words[r["start"]:r["end"]] + ["]]"] + words[r["end"]:]
        blind.append(f"{k}.\n  original: {' '.join(restored(words, rows['replacements'][s], r))}\n"
                     f"  attacked: {' '.join(attacked_words)}\n")
        label = r["original_label"] or r["label"]
        if r["label"] != label:
            label = f"{label}->{r['label']}"
        key.append(f"{k}. sentence {s}, {label}, {r['fine_class'] or '-'}, {r.get('facet') or '-'}, "
                   f"{r['route'] or r['level']}: {r['original']} -> {r['replacement']}")
    write_atomic(blind_path, "\n".join(blind))
    write_atomic(key_path, "\n".join(key) + "\n")
    return len(picked)
