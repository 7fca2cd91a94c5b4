"""A catalogue of bad inputs (issue 15, "no silent wrong answers"): each one must be an error
or a warning whose message says what is wrong, never a confident number.

``CASES`` is the table: an id, a function doing the bad thing (given a scratch folder), the
exception or warning class and a fragment of the expected message.  Cases needing real data
or a subprocess follow the table.
"""
import io
import json
import math
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import datasets
import numpy as np
import pytest

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, read_conll, read_predictions, tmr
from tough_ner.checks import InputWarning
from tough_ner.cli import main
from tough_ner.corpus import OTHER_SPACE, parse_conll, read_batch, write_conll
from tough_ner.nrb import nrb
from tough_ner.rockner import rockner

from conftest import _conll, version_1_bytes, write

ROOT = Path(__file__).resolve().parents[1]
TRAIN_TEXT = "Ann B-PER\nLee I-PER\nmet O\nBob B-PER\nin O\nParis B-LOC\n\nIBM B-ORG\nhired O\nAnn B-PER\n\n"
STATS = TrainStats.from_lists([["Ann", "Lee", "met", "Bob", "in", "Paris"], ["IBM", "hired", "Ann"]],
                              [["B-PER", "I-PER", "O", "B-PER", "O", "B-LOC"], ["B-ORG", "O", "B-PER"]])
TOKENS = [["Bob", "met", "Ann", "in", "Paris"]]
GOLD = [["B-PER", "O", "B-PER", "O", "B-LOC"]]


def stats_file(folder: Path, name: str = "bad.npz", drop=(), **changes) -> Path:
    """A stats file whose members are replaced by ``changes`` (arrays, or ``meta`` as a dict)."""
    blob = io.BytesIO(version_1_bytes(STATS) if "label_counts" in changes else STATS.to_bytes())  # dense: version 1
    with np.load(blob, allow_pickle=False) as archive:
        members = {key: archive[key] for key in archive.files}
    meta = json.loads(members["meta.json"].tobytes())
    meta.update(changes.pop("meta", {}))
    for key in drop:
        meta.pop(key)
    members["meta.json"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    members.update(changes)
    path = folder / name
    np.savez(path, **members)
    return path


def bomb(folder: Path) -> Path:
    """A stats file whose compressed token ids declare 3 GB uncompressed.  The declared size
    is what a zip reader trusts (it stops there), so the file is made small and its size
    fields patched: deflating 3 GB of zeros would take a minute of test time."""
    buffer = io.BytesIO()
    real = zipfile.ZipFile(io.BytesIO(STATS.to_bytes()))
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in real.infolist():
            archive.writestr(info.filename, real.read(info) + (bytes(2 ** 20) if info.filename == "token_ids.npy"
                                                               else b""))
    data = bytearray(buffer.getvalue())
    declared = (3 * 10 ** 9).to_bytes(4, "little")
    local = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("token_ids.npy").header_offset
    data[local + 22:local + 26] = declared  # local header: uncompressed size
    central = data.rindex(b"token_ids.npy") - 46
    assert data[central:central + 4] == b"PK\x01\x02"
    data[central + 24:central + 28] = declared  # central directory: uncompressed size
    path = folder / "bomb.npz"
    path.write_bytes(bytes(data))
    assert zipfile.ZipFile(path).getinfo("token_ids.npy").file_size == 3 * 10 ** 9
    return path


def nrb_batch(predicted_type):
    return Batch([["Ann", "ran"]], [["B-PERSON", "O"]], [[f"B-{predicted_type}", "O"]])


CASES = [
    # ---- files
    ("bom-stripped-docstart", lambda d: read_conll(write(d / "a.conll", "\ufeff-DOCSTART- O\n\nx B-PER\n")).tokens,
     None, [["x"]]),
    ("undecodable-bytes", lambda d: read_conll(_bytes(d / "a.conll", b"a O\n\nb\xff\xfe O\n")),
     ValueError, "a.conll, line 3: bytes that are not UTF-8"),
    ("directory", lambda d: read_conll(d), IsADirectoryError, "is a directory"),
    ("missing-file", lambda d: read_conll(d / "none.conll"), FileNotFoundError, "no such CoNLL file"),
    ("training-directory", lambda d: TrainStats.coerce(d), IsADirectoryError, "is a directory"),
    ("nbsp-u2028-u0085-are-token-characters",
     lambda d: read_conll(write(d / "a.conll", "New\xa0York B-LOC\nA\u2028B O\nC\x85D O\ne\rf O\n")).tokens,
     None, [["New\xa0York", "A\u2028B", "C\x85D", "e\rf"]]),
    ("crlf-ends-lines", lambda d: read_conll(write(d / "a.conll", "a B-PER\r\nb O\r\n\r\nc O\r\n")).tags,
     None, [["B-PER", "O"], ["O"]]),
    ("token-with-space-at-write", lambda d: write_conll(d / "o.conll", [["New York"]], [["B-LOC"]]),
     ValueError, "sentence 0, position 0: token 'New York' contains a space"),
    ("empty-tag-at-write", lambda d: write_conll(d / "o.conll", [["a", "b"]], [["O", ""]]),
     ValueError, "sentence 0, position 1: column 2 value '' is empty"),
    ("long-line-quoted-200", lambda d: read_conll(write(d / "a.conll", "a O\n" + "x " * 5000 + "O\n")),
     ValueError, "…"),
    # ---- columns
    ("4-column-file-as-predictions", lambda d: hardeval(STATS, _batch(read_predictions(
        write(d / "p.conll", "Bob NNP B-NP B-PER\nmet VBD B-VP O\n")))),
     ValueError, "the gold entity types {NP, VP} share nothing with the training types {LOC, ORG, PER}"),
    ("columns-names-count", lambda d: read_conll(write(d / "p.conll", "a X O O\n"), columns="token,gold,pred"),
     ValueError, "columns= names 3 columns (token,gold,pred) but the file has 4"),
    ("columns-mixed", lambda d: read_conll(write(d / "p.conll", "a X O O\n"), columns="0,gold,3"),
     ValueError, "either column indices or one name per column"),
    ("columns-out-of-range", lambda d: read_predictions(write(d / "p.conll", "a X O O\n"), columns="0,3,7"),
     ValueError, "4 columns cannot provide columns"),
    ("columns-not-a-tag", lambda d: read_predictions(write(d / "p.conll", "a NNP O O\n"), columns="0,1,3"),
     ValueError, "p.conll, line 1, column 2: unknown tag 'NNP'"),
    # ---- tags and sentences
    ("tag-with-trailing-space", lambda d: Batch([["IBM"]], [["B-ORG "]]),
     ValueError, "sentence 0, position 0: tag 'B-ORG ' has surrounding whitespace"),
    ("tag-with-space-in-training", lambda d: TrainStats.from_lists([["IBM"]], [[" B-ORG"]]),
     ValueError, "has surrounding whitespace"),
    ("tags-as-one-string", lambda d: Batch([["a", "b", "c"]], ["OOO"]),
     ValueError, "sentence 0: reference tags must be a list of strings, not one string 'OOO'"),
    ("predictions-as-one-string", lambda d: Batch([["a", "b", "c"]], [["O"] * 3], ["OOO"]),
     ValueError, "sentence 0: predicted tags must be a list of strings"),
    ("tokens-as-one-string", lambda d: Batch(["abc"], [["O"] * 3]),
     ValueError, "sentence 0: tokens must be a list of strings, not one string"),
    ("training-tags-as-one-string", lambda d: TrainStats.from_lists([["a", "b", "c"]], ["OOO"]),
     ValueError, "sentence 0: tags must be a list of strings, not one string"),
    ("training-tokens-as-one-string", lambda d: TrainStats.from_lists(["abc"], [["O"] * 3]),
     ValueError, "sentence 0: tokens must be a list of strings"),
    ("bad-tag-in-file", lambda d: TrainStats.from_conll(write(d / "t.conll", "a O\n\nb O\nc Z-PER\n")),
     ValueError, "t.conll, line 4, column 2: unknown tag 'Z-PER'"),
    # ---- empty data
    ("empty-training-lists", lambda d: TrainStats.from_lists([], []), ValueError, "training data holds no sentence"),
    ("empty-training-file", lambda d: TrainStats.coerce(write(d / "t.conll", "-DOCSTART- O\n\n")),
     ValueError, "training data holds no sentence"),
    ("empty-test-python-is-nan", lambda d: hardeval(STATS, Batch([], [], []))["n_unseen"], None, 0),
    # ---- entity types
    ("gold-types-disjoint-from-training", lambda d: tmr(STATS, Batch(TOKENS, [["B-X", "O", "B-Y", "O", "O"]],
                                                                     [["B-X", "O", "B-Y", "O", "O"]])),
     ValueError, "the gold entity types {X, Y} share nothing with the training types {LOC, ORG, PER}"),
    ("predicted-types-disjoint-from-gold", lambda d: bucket_f1(STATS, Batch(TOKENS, GOLD, [
        ["B-PERSON", "O", "B-PERSON", "O", "B-GPE"]]), bootstrap=0),
     ValueError, "the predicted entity types {GPE, PERSON} share nothing with the gold types {LOC, PER}"),
    ("predicted-type-unknown", lambda d: hardeval(STATS, Batch(TOKENS, GOLD, [["B-BAR", "O", "B-PER", "O", "B-BAR"]])),
     InputWarning, "predicted entity types absent from the gold or training data: BAR (2 spans); 2 of 3"),
    ("rockner-predicted-disjoint", lambda d: rockner(Batch(TOKENS, GOLD, [["B-Q", "O", "O", "O", "O"]]),
                                                     Batch(TOKENS, GOLD, GOLD)),
     ValueError, "the predicted entity types {Q} share nothing with the gold types {LOC, PER}"),
    ("lowercased-test-tokens", lambda d: hardeval(STATS, Batch([["bob", "met", "ann", "in", "paris"]], GOLD, GOLD)),
     InputWarning, "3 of 5 test tokens are unseen in training, but only 0 once both sides are lowercased"),
    # ---- NRB type maps
    ("nrb-map-detected", lambda d: nrb(nrb_batch("PER"))["type_map"], None, "conll"),
    ("nrb-map-detected-ontonotes", lambda d: nrb(Batch([["Ann", "in", "Rome"]], [["B-PERSON", "O", "O"]],
                                                       [["B-PERSON", "O", "B-GPE"]]))["type_map"], None, "ontonotes"),
    ("nrb-map-maps-nothing", lambda d: nrb(nrb_batch("PER"), type_map="nrb"),
     ValueError, "with the nrb type map, none of the predicted types {PER} maps to an NRB type"),
    ("nrb-no-preset-knows", lambda d: nrb(nrb_batch("FOO")), ValueError, "no type map preset"),
    # ---- stats files
    ("stats-negative-token-id", lambda d: TrainStats.load(stats_file(d, token_ids=np.array(
        [-1, 1, 2, 3, 4, 5, 6, 7, 0], dtype=np.int32))), ValueError, "token ids outside the vocabulary"),
    ("stats-negative-count", lambda d: TrainStats.load(stats_file(d, label_counts=-STATS.label_counts.dense())),
     ValueError, "negative label counts"),
    ("stats-labels-not-starting-with-O", lambda d: TrainStats.load(stats_file(d, meta={"labels": ["PER", "O", "LOC",
                                                                                                  "ORG"]})),
     ValueError, "the labels are not 'O' followed by distinct entity types"),
    ("stats-metadata-without-vocab", lambda d: TrainStats.load(stats_file(d, drop=["vocab"])),
     ValueError, "its metadata lacks vocab"),
    ("stats-wrong-dtype", lambda d: TrainStats.load(stats_file(d, token_ids=STATS.token_ids.astype(np.float64))),
     ValueError, "token_ids is float64 of 1 dimension(s), expected int32"),
    ("stats-object-array-no-pickle", lambda d: TrainStats.load(stats_file(
        d, sentence_starts=np.array([0, 6, 9], dtype=object))), ValueError, "sentence_starts is object"),
    ("stats-shape-mismatch", lambda d: TrainStats.load(stats_file(d, label_counts=STATS.label_counts.dense()[:, :2])),
     ValueError, "label counts of shape"),
    ("stats-starts-inconsistent", lambda d: TrainStats.load(stats_file(d, sentence_starts=np.array([0, 6, 7]))),
     ValueError, "sentence starts do not run from 0 to the number of tokens"),
    ("stats-counts-disagree", lambda d: TrainStats.load(stats_file(d, label_counts=STATS.label_counts.dense() * 2)),
     ValueError, "label counts disagree with the training token ids"),
    ("stats-mention-of-unknown-type", lambda d: TrainStats.load(stats_file(d, meta={"mentions": [["Ann", "XX", 1]]})),
     ValueError, "is not a distinct [text, known type, count >= 1]"),
    ("stats-extra-member", lambda d: TrainStats.load(stats_file(d, extra=np.zeros(3))),
     ValueError, "unexpected ['extra.npy']"),
]


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _batch(corpus):
    return Batch(corpus.tokens, corpus.tags, corpus.predictions[0])


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_catalogue(case, tmp_path):
    _, action, kind, expected = case
    if kind is None:  # not an error: the value read or computed
        with warnings.catch_warnings():
            warnings.simplefilter("error", InputWarning)
            assert action(tmp_path) == expected
    elif issubclass(kind, Warning):
        with pytest.warns(kind) as caught:
            action(tmp_path)
        assert any(expected in str(w.message) for w in caught), [str(w.message) for w in caught]
    else:
        with pytest.raises(kind) as error:
            action(tmp_path)
        assert expected in str(error.value)
        assert len(str(error.value)) < 600  # at most 200 characters of any line quoted


def test_other_whitespace_list_is_what_str_split_uses():
    python = {c for c in map(chr, range(0x110000)) if c.isspace()} - {" ", "\t", "\n"}
    assert set(OTHER_SPACE) == python


def test_zip_bomb_is_refused_unread(tmp_path):
    path = bomb(tmp_path)
    assert path.stat().st_size < 2 ** 20
    with pytest.raises(ValueError, match="declare .* bytes uncompressed .* refused unread"):
        TrainStats.load(path)


def test_stats_header_lying_about_its_size_is_refused(tmp_path):
    """A header describing a huge array in a small member: refused before numpy allocates."""
    path = tmp_path / "liar.npz"
    real = zipfile.ZipFile(io.BytesIO(STATS.to_bytes()))
    with zipfile.ZipFile(path, "w") as archive:
        for info in real.infolist():
            data = real.read(info)
            if info.filename == "token_ids.npy":
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {"descr": "<i4", "fortran_order": False,
                                                              "shape": (2 ** 40,)})
                data = header.getvalue() + data[len(header.getvalue()):]
            archive.writestr(info.filename, data)
    with pytest.raises(ValueError, match="token_ids declares .* bytes but its header describes"):
        TrainStats.load(path)


def test_bad_tag_from_parallel_dataset_build_names_the_global_sentence():
    tokens = [["a"], ["b"], ["c"], ["d"]]
    tags = [["O"], ["O"], ["O"], ["Z-PER"]]
    ds = datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags})
    with pytest.raises(ValueError, match="sentence 3, position 0: unknown tag 'Z-PER'"):
        TrainStats.from_dataset(ds, num_proc=2)


def test_conll2003_test_file_as_predictions_no_longer_scores(tmp_path, capsys):
    """The raw 4-column file scored chunk tags as gold and NER as prediction (hardeval 0.9988, exit 0)."""
    train, test = _conll("train"), _conll("test")
    assert main(["hardeval", "--train", str(train), "--test", str(test)]) == 2
    err = capsys.readouterr().err
    assert "the gold entity types {ADJP, ADVP, CONJP" in err and "training types {LOC, MISC, ORG, PER}" in err
    assert "--columns" in err
    # naming the columns scores it as intended: the NER column is gold and prediction
    assert main(["hardeval", "--train", str(train), "--test", str(test), "--columns", "0,3,2"]) == 2
    assert "the predicted entity types {ADJP, ADVP, CONJP" in capsys.readouterr().err
    assert read_conll(test, columns="token,pos,chunk,gold").tags == read_conll(test).tags
    assert main(["tmr", "--train", str(train), "--test", str(test), "--columns", "token,pos,chunk,gold"]) == 2
    assert "choose 0 prediction column(s); 1 expected" in capsys.readouterr().err


def test_lowercased_conll_test_warns_about_casing(conll_stats, conll_test, tmp_path):
    lowered = [[t.lower() for t in sentence] for sentence in conll_test.tokens]
    with pytest.warns(InputWarning, match=r"lowercase=True") as caught:
        hardeval(conll_stats, Batch(lowered, conll_test.tags, conll_test.tags))
    vocab = set(conll_stats.vocab)
    lower_vocab = {token.lower() for token in vocab}
    unseen = [token for sentence in lowered for token in sentence if token not in vocab]
    n_lower = sum(token.lower() not in lower_vocab for token in unseen)
    message = str(caught[0].message)
    assert message.startswith(f"{len(unseen)} of {sum(map(len, lowered))} test tokens are unseen in training, but "
                              f"only {n_lower} once both sides are lowercased")
    # The same counts from a batch read as codes (each distinct token lowercased once).
    write_conll(tmp_path / "lowered.conll", lowered, conll_test.tags, conll_test.tags)
    with pytest.warns(InputWarning) as caught:
        hardeval(conll_stats, read_batch(tmp_path / "lowered.conll"))
    assert [str(w.message) for w in caught] == [message]
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        hardeval(conll_stats, Batch(conll_test.tokens, conll_test.tags, conll_test.tags))  # real casing: silent
        bucket_f1(conll_stats, Batch(lowered, conll_test.tags, conll_test.tags), lowercase=True, bootstrap=0)


def test_warning_once_per_batch_and_in_the_cli(tmp_path, capsys):
    batch = Batch(TOKENS, GOLD, [["B-BAR", "O", "B-PER", "O", "B-LOC"]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hardeval(STATS, batch)
        tmr(STATS, batch)
    assert len([w for w in caught if issubclass(w.category, InputWarning)]) == 1
    train = write(tmp_path / "train.conll", TRAIN_TEXT)
    test = write(tmp_path / "test.conll", "Bob B-PER B-BAR\nmet O O\nAnn B-PER B-PER\n")
    assert main(["tmr", "--train", str(train), "--test", str(test)]) == 0
    assert "tough-ner tmr: warning: predicted entity types absent from the gold or training data: BAR (1 span)" \
        in capsys.readouterr().err


def test_cli_empty_test_file_and_empty_training(tmp_path, capsys):
    train = write(tmp_path / "train.conll", TRAIN_TEXT)
    empty = write(tmp_path / "empty.conll", "-DOCSTART- O O\n\n")
    assert main(["hardeval", "--train", str(train), "--test", str(empty)]) == 2
    assert "empty.conll holds no sentence" in capsys.readouterr().err
    assert main(["hardeval", "--train", str(empty), "--test", str(train)]) == 2
    assert "training data holds no sentence" in capsys.readouterr().err
    assert main(["describe", "--train", str(train), "--test", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_metric_construction_with_empty_training_is_an_error(tmp_path):
    from tough_ner.metrics.hardeval import Hardeval

    with pytest.raises(ValueError, match="training data holds no sentence"):
        Hardeval(train=write(tmp_path / "t.conll", "\n\n"), keep_in_memory=True)


def test_metric_checks_types_and_warns():
    from tough_ner.metrics.tmr import Tmr

    metric = Tmr(train=STATS, keep_in_memory=True)
    with pytest.raises(ValueError, match="share nothing with the gold types"):
        metric.compute(predictions=[["B-Q", "O", "O", "O", "O"]], references=GOLD, tokens=TOKENS)
    with pytest.warns(InputWarning, match="BAR"):
        metric.compute(predictions=[["B-BAR", "O", "B-PER", "O", "O"]], references=GOLD, tokens=TOKENS)


@pytest.mark.parametrize("name", ["-", "/dev/stdin"])
def test_standard_input(tmp_path, name):
    train = write(tmp_path / "train.conll", TRAIN_TEXT)
    run = subprocess.run([sys.executable, "-m", "tough_ner.cli", "hardeval", "--train", str(train), "--test", name,
                          "--json"], input="Bob B-PER B-PER\nmet O O\n\n", capture_output=True, text=True,
                         cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["n_all"] == 2


def test_read_standard_input_in_python(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("\ufeffa B-PER\n".encode())))
    assert read_conll("-").tokens == [["a"]]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(STATS.to_bytes())))
    assert TrainStats.coerce("/dev/stdin") == STATS
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TRAIN_TEXT.encode())))
    assert TrainStats.coerce("-") == STATS


def test_nrb_cli_and_report_say_which_map(tmp_path, capsys):
    nrb_file = write(tmp_path / "en.nrb.conll", "Ann B-PERSON\nran O\n\n")
    pred = write(tmp_path / "nrb.pred", "Ann B-PER\nran O\n\n")
    assert main(["nrb", "--nrb", str(nrb_file), "--pred", str(pred), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["type_map"] == "conll" and result["accuracy"] == 1.0
    assert main(["nrb", "--nrb", str(nrb_file), "--pred", str(pred), "--type-map", "nrb"]) == 2
    assert "none of the predicted types {PER} maps to an NRB type" in capsys.readouterr().err


def test_parse_conll_keeps_python_nan_for_empty_text():
    corpus = parse_conll("", n_predictions=1)
    result = tmr(STATS, Batch(corpus.tokens, corpus.tags, corpus.predictions[0]))
    assert result["n_mentions"] == 0 and math.isnan(result["recall"])


# ---- checks.py's helpers, by hand ----------------------------------------------------------
def test_type_names_sorts_and_cuts_long_sets_at_the_limit():
    from tough_ner.checks import type_names
    assert type_names({"ORG", "LOC"}) == "{LOC, ORG}"
    twenty = [f"T{i:02d}" for i in range(20)]
    assert type_names(twenty) == "{" + ", ".join(twenty) + "}"  # exactly the limit: all, no count
    assert type_names(twenty + ["T20"]) == "{" + ", ".join(twenty) + ", … (21 in all)}"
    assert type_names(["c", "a", "b"], limit=2) == "{a, b, … (3 in all)}"


def _warnings_of(*tmrs, **options):
    from tough_ner.checks import training_data_warnings
    return training_data_warnings({"systems": {f"s{i}": {"tmr": tmr} for i, tmr in enumerate(tmrs)}}, **options)


def test_training_data_warnings_thresholds_by_hand():
    from tough_ner.checks import REFERENCE_NOTE
    assert _warnings_of() == [] and _warnings_of({}) == []
    # the share of test mentions seen in training: < 5 % of at least 30 mentions warns
    assert _warnings_of({"n_mentions": 100, "n_seen": 5}) == []  # 5 % is not below 5 %
    share = _warnings_of({"n_mentions": 100, "n_seen": 4})
    assert len(share) == 1 and share[0].startswith("only 4 of the 100 test mentions (4.0%) occur in the training data")
    assert _warnings_of({"n_mentions": 30, "n_seen": 1}) == [
        "only 1 of the 30 test mentions (3.3%) occur in the training data: is --train the data the systems were "
        "trained on? If not, say so with --train-is-reference; seen/unseen subsets are relative to it"]
    assert _warnings_of({"n_mentions": 100})[0].startswith("only 0 of the 100 test mentions (0.0%)")  # none seen
    assert _warnings_of({"n_mentions": 29, "n_seen": 0}) == []  # too few mentions to say
    assert _warnings_of({"n_mentions": 29}) == []
    # only the first system's counts are read for the share (every system has the same test set)
    assert _warnings_of({"n_mentions": 100, "n_seen": 50}, {"n_mentions": 100, "n_seen": 0}) == []
    # a system recalling seen mentions no better than unseen ones, both subsets with >= 30 mentions
    fair = {"n_mentions": 200, "n_seen": 30, "n_unseen_tokens": 30}
    assert _warnings_of(dict(fair, recall_seen=0.8, recall_unseen_tokens=0.5)) == []
    odd = _warnings_of(dict(fair, recall_seen=0.5, recall_unseen_tokens=0.5))  # equal: no better
    assert odd == [
        "s0 recalls test mentions seen in training (0.500, n = 30) no better than unseen ones (0.500, n = 30); a "
        "system trained on this data almost always does better on what it saw (a heuristic, not a test): is --train "
        "its training data? If not, use --train-is-reference"]
    assert _warnings_of(dict(fair, recall_seen=0, recall_unseen_tokens=1)) != []  # ints are numbers too
    for changed in ({"n_seen": 29}, {"n_unseen_tokens": 29}, {"recall_seen": float("nan")},
                    {"recall_unseen_tokens": float("nan")}, {"recall_unseen_tokens": None}):
        assert _warnings_of({**fair, "recall_seen": 0.5, "recall_unseen_tokens": 0.6, **changed}) == [], changed
    assert _warnings_of({"recall_seen": 0.1, "recall_unseen_tokens": 0.9}) == []  # no n: nothing to say
    assert _warnings_of({"n_seen": 40, "recall_seen": 0.1, "recall_unseen_tokens": 0.9}) == []  # nor one n
    # a system without TMR results (a report of other methods) is skipped
    assert _warnings_of(dict(fair, recall_seen=0.5, recall_unseen_tokens=0.5), {})[0].startswith("s0 recalls")
    from tough_ner.checks import training_data_warnings
    assert training_data_warnings({"systems": {"a": {}, "b": {"hardeval": {}}}}) == []
    # both kinds, in order: the share first, then each system that warns, in the results' order
    both = _warnings_of({"n_mentions": 1000, "n_seen": 40, "n_unseen_tokens": 500, "recall_seen": 0.2,
                         "recall_unseen_tokens": 0.3}, dict(fair, recall_seen=0.9, recall_unseen_tokens=0.1),
                        dict(fair, recall_seen=0.1, recall_unseen_tokens=0.9))
    assert [w.split(" ")[0] for w in both] == ["only", "s0", "s2"]
    assert _warnings_of({"n_mentions": 100, "n_seen": 0}, train_is_reference=True) == [REFERENCE_NOTE]


def _type_warnings(batch, train=None):
    from tough_ner.checks import check_types
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_types(batch, train)
    return [str(w.message) for w in caught if issubclass(w.category, InputWarning)]


def test_check_types_messages_by_hand_and_once_per_training_set():
    from tough_ner.checks import check_types
    batch = Batch(TOKENS, GOLD, GOLD)
    check_types(batch)  # no training types: nothing to compare the gold with
    with pytest.raises(ValueError) as error:  # the same batch against training types is checked anew
        check_types(batch, ["O", "X"])
    assert str(error.value) == ("the gold entity types {LOC, PER} share nothing with the training types {X}: is the "
                                "gold column the right one? (choose columns with columns= / --columns token,gold,pred)")
    check_types(batch, ["PER"])  # and against other training types, once more
    # predictions of types known nowhere, with and without training types
    unmapped = [["B-Q", "O", "O", "O", "B-R"]]
    message = ("the predicted entity types {Q, R} share nothing with the gold types {LOC, PER}{}: map the system's "
               "types to the gold ones (a type map), or check the prediction column (columns= / --columns "
               "token,gold,pred)")
    with pytest.raises(ValueError) as error:
        check_types(Batch(TOKENS, GOLD, unmapped))
    assert str(error.value) == message.replace("{}", "")
    with pytest.raises(ValueError) as error:
        check_types(Batch(TOKENS, GOLD, unmapped), ["ORG", "PER"])
    assert str(error.value) == message.replace("{}", " nor the training types {ORG, PER}")
    # some predicted types known nowhere: a warning counting their spans
    some = Batch(TOKENS, GOLD, [["B-BAR", "B-FOO", "B-PER", "O", "B-BAR"]])
    assert _type_warnings(some) == ["predicted entity types absent from the gold data: BAR (2 spans), FOO (1 span); "
                                    "3 of 4 predicted spans can never be correct"]
    some = Batch(TOKENS, GOLD, [["B-BAR", "B-FOO", "B-PER", "O", "B-BAR"]])
    assert _type_warnings(some, ["ORG", "PER"])[0].startswith("predicted entity types absent from the gold or training data: "
                                                       "BAR (2 spans), FOO (1 span); 3 of 4")
    # at most 20 types are named; more end with an ellipsis
    for n in (20, 21):
        names = [f"T{k:02d}" for k in range(n)]
        batch = Batch([["w"] * 22], [["B-PER"] + ["O"] * 21], [["B-PER"] + ["B-" + t for t in names] + ["O"] * (21 - n)])
        listed = ", ".join(f"{t} (1 span)" for t in names[:20]) + (" …" if n > 20 else "")
        assert _type_warnings(batch) == [f"predicted entity types absent from the gold data: {listed}; {n} of {n + 1} "
                                         f"predicted spans can never be correct"]


def test_input_warnings_are_collected_per_thread(conll_stats, conll_test):
    """Two threads collecting at once (two Space pages computed together) each get their own
    input warnings, none raised and none of the other's; outside a block they are raised."""
    import threading

    from tough_ner.checks import collected_input_warnings

    lowered = [[t.lower() for t in sentence] for sentence in conll_test.tokens]
    both_inside, got = threading.Barrier(2), {}

    def page(name, tokens):
        with collected_input_warnings() as notes:
            both_inside.wait()
            hardeval(conll_stats, Batch(tokens, conll_test.tags, conll_test.tags))
            both_inside.wait()  # the other's block is still open while this one's warning came
        got[name] = notes

    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)  # nothing escapes the blocks
        threads = [threading.Thread(target=page, args=("lowered", lowered)),
                   threading.Thread(target=page, args=("as is", conll_test.tokens))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert got["as is"] == [] and len(got["lowered"]) == 1 and "lowercase=True" in got["lowered"][0]
    with collected_input_warnings() as outer:
        with collected_input_warnings() as inner:
            hardeval(conll_stats, Batch(lowered, conll_test.tags, conll_test.tags))
        assert len(inner) == 1 and outer == []  # the inner block's, and the outer one's again after it
    with pytest.warns(InputWarning, match="lowercase=True"):
        hardeval(conll_stats, Batch([list(s) for s in lowered], conll_test.tags, conll_test.tags))


# ---- values nested deeper than the parsers recurse: one line naming the file, never a RecursionError
DEEP = "[" * 100_000 + "]" * 100_000
TOO_DEEP = "nested too deeply"


@pytest.mark.parametrize("pred_format", ["spans", "chars", "tags"])
def test_a_prediction_line_nested_too_deeply_names_file_and_line(tmp_path, capsys, pred_format):
    train, test = write(tmp_path / "train.conll", TRAIN_TEXT), write(tmp_path / "test.conll", "Bob B-PER\nran O\n\n")
    pred = write(tmp_path / "deep.jsonl", DEEP + "\n")
    assert main(["tmr", "--train", str(train), "--test", str(test), "--pred", str(pred),
                 "--pred-format", pred_format]) == 2
    assert capsys.readouterr().err == f"tough-ner tmr: {pred} line 1: {TOO_DEEP} (lists or tables inside each other " \
                                      "beyond Python's recursion limit)\n"


def test_a_dictionary_nested_too_deeply_names_the_file(tmp_path):
    from tough_ner.attacks import dictionaries

    whole = write(tmp_path / "deep.json", '{"PER": ' + DEEP + "}")
    with pytest.raises(ValueError, match=f"^{re.escape(str(whole))}: {TOO_DEEP}"):
        dictionaries.load(whole)
    rows = write(tmp_path / "PER.jsonl", '{"class_title": "x", "instances": ["Ann"]}\n' + DEEP + "\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(rows))}:2: {TOO_DEEP}"):
        dictionaries.load(rows)


def test_a_label_map_nested_too_deeply_names_the_file(tmp_path):
    from tough_ner.models.labels import parse_label_map

    path = write(tmp_path / "labels.json", DEEP)
    with pytest.raises(ValueError, match=f"^label map {re.escape(str(path))}: {TOO_DEEP}"):
        parse_label_map(str(path))


def test_a_type_map_file_is_read_with_one_line_errors(tmp_path):
    from tough_ner.methods.nrb import read_type_map

    assert read_type_map(write(tmp_path / "map.json", '{"PER": "PERSON", "MISC": null}')) == {
        "PER": "PERSON", "MISC": None}
    for text, message in ((DEEP, TOO_DEEP), ("{", "line 1: not JSON"), ("[]", "a type map is a JSON object"),
                          ('{"PER": "HUMAN"}', "type_map values must be one of")):
        path = write(tmp_path / "bad.json", text)
        with pytest.raises(ValueError, match=f"^{re.escape(str(path))}(: |, ).*{message}"):
            read_type_map(path)


# ---- standard input is read as a file is: the read limits hold as the bytes arrive
class _Endless(io.RawIOBase):
    """A pipe of ``size`` bytes of one long line, counting what was read of it."""

    def __init__(self, size):
        self.size, self.taken = size, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), self.size - self.taken)
        buffer[:n] = b"a" * n
        self.taken += n
        return n


def test_training_data_on_standard_input_stops_at_the_line_limit(monkeypatch):
    from tough_ner.corpus import limits

    pipe = _Endless(64 << 20)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(pipe)))
    with limits(line=100), pytest.raises(ValueError, match=r"^<stdin>, line 1: longer than the line limit of 100 "):
        TrainStats.coerce("-")
    assert pipe.taken < 4 << 20  # refused a piece in, not after reading the whole pipe


def test_statistics_on_standard_input_stop_at_the_file_limit(monkeypatch):
    from tough_ner.corpus import limits

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(STATS.to_bytes())))
    with limits(file=100), pytest.raises(ValueError, match=r"^<stdin>: larger than the file limit of 100 bytes"):
        TrainStats.coerce("-")
