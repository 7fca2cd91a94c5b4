"""The column-wise CoNLL reader (corpus.scan) and the statistics built from it, checked against
a line-by-line reference parser and a sentence-by-sentence reference builder written here from
the numbered file rules of corpus.py."""
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from conftest import batch_view
from tough_ner import Batch, TrainStats
from tough_ner.corpus import column_indices, factorize, parse_conll, quote, read_batch, read_conll, read_columns, \
    read_pieces, read_predictions, scan
from tough_ner.schemes import decode, parse_label

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll2003"


# ---- references -----------------------------------------------------------------------------
def reference_parse(text, n_predictions=0, name="<text>"):
    """(tokens, gold, predictions, documents) of CoNLL text, rules 2-5 applied line by line;
    the error of the first bad line (ragged, or a tag column value that is not a tag)."""
    lines = text.split("\n")
    lines = [line[:-1] if line.endswith("\r") and i < len(lines) - 1 else line for i, line in enumerate(lines)]
    sentences, documents = [], []
    current, document, marked, indices = [], 0, False, None
    for number, line in enumerate(lines, 1):
        fields = [f for f in re.split("[ \t]", line) if f]  # rule 3: only space and tab
        if fields and fields[0] != "-DOCSTART-":
            if indices is None:
                if len(fields) < 2:
                    raise ValueError(f"{name}, line {number}: a CoNLL line needs a token and a tag, "
                                     f"got {quote(' '.join(fields))}")
                indices = column_indices(None, len(fields), n_predictions, name)
                width = len(fields)
            elif len(fields) != width:
                raise ValueError(f"{name}, line {number}: {len(fields)} columns where earlier lines have {width}: "
                                 f"{quote(' '.join(fields))}")
            for c in indices[1:]:
                try:
                    parse_label(fields[c])
                except ValueError as error:
                    raise ValueError(f"{name}, line {number}, column {c + 1}: {error}") from None
            current.append([fields[c] for c in indices])
            continue
        if current:
            sentences.append(current)
            documents.append(document)
            current = []
        if fields:  # a -DOCSTART- line: a new document once the current one holds a sentence
            marked = True
            if documents and documents[-1] == document:
                document += 1
    if current:
        sentences.append(current)
        documents.append(document)
    columns = [[[row[k] for row in sentence] for sentence in sentences] for k in range(len(indices) if indices else 2 + n_predictions)]
    return columns[0], columns[1], columns[2:], (documents if marked and sentences else ([] if not sentences else None))


def reference_stats(tokens, tags):
    """TrainStats fields built sentence by sentence with schemes.decode."""
    flat = [token for sentence in tokens for token in sentence]
    index = {}
    for token in flat:
        index.setdefault(token, len(index))
    spans = [decode(sentence_tags, s) for s, sentence_tags in enumerate(tags)]
    labels = ["O"] + sorted({t for sentence in spans for _, _, t in sentence})
    counts = np.zeros((len(index), len(labels)), dtype=np.int64)
    mentions = Counter()
    for sentence, sentence_spans in zip(tokens, spans):
        label = [0] * len(sentence)
        for start, end, entity_type in sentence_spans:
            mentions[(" ".join(sentence[start:end]), entity_type)] += 1
            label[start:end] = [labels.index(entity_type)] * (end - start)
        for token, k in zip(sentence, label):
            counts[index[token], k] += 1
    starts = np.cumsum([0] + [len(s) for s in tokens])
    return TrainStats(list(index), labels, counts, dict(mentions), np.array([index[t] for t in flat], dtype=np.int32),
                      starts.astype(np.int64))


def outcome(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except ValueError as error:
        return ("error", str(error))


def parsed(text, n_predictions=0, name="<text>"):
    corpus = parse_conll(text, n_predictions, name)
    return corpus.tokens, corpus.tags, corpus.predictions, corpus.documents


# ---- random CoNLL-ish texts ---------------------------------------------------------------
TOKEN_CHARS = st.sampled_from(list("aZ9-.é") + ["\xa0", "\u2028", "\x85", "\r", "\x0b", "\x0c", "\x1c", "\u3000",
                                                "\ufeff", "\x00", "\ud800"])
GOOD_TAGS = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-LOC", "L-PER", "S-ORG", "U-ORG", "B-geo-loc",
             "I-geo-loc"]
TAGS = st.sampled_from(GOOD_TAGS * 8 + ["PER", "B-", "Z-X"])  # now and then one that is not a tag
SEPARATORS = st.sampled_from([" ", " ", "\t", "  ", " \t"])
ENDS = st.sampled_from(["\n", "\n", "\r\n"])


@st.composite
def conll_texts(draw, tag_columns=1):
    """CoNLL-ish text: token lines of 2-4 fields whose last ``tag_columns`` fields are tags
    (now and then not), blank, whitespace-only, -DOCSTART- and ragged lines, CRLF, a BOM."""
    width = draw(st.integers(1 + tag_columns, 4))
    lines = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["token"] * 12 + ["blank", "blank", "spaces", "docstart", "ragged", "dashes"]))
        if kind == "blank":
            line = ""
        elif kind == "spaces":
            line = draw(SEPARATORS)
        elif kind == "docstart":
            line = draw(st.sampled_from(["-DOCSTART-", "-DOCSTART- -X- O", "-DOCSTART-x O", " -DOCSTART-\tO"]))
        else:
            n = draw(st.integers(1, 5)) if kind == "ragged" else width
            tags = min(tag_columns, n - 1)
            fields = [draw(st.text(TOKEN_CHARS, min_size=1, max_size=3)) if kind != "dashes" else "-DOCSTART-"]
            fields += [draw(st.text(TOKEN_CHARS, min_size=1, max_size=3)) for _ in range(max(n - 1 - tags, 0))]
            fields += [draw(TAGS) for _ in range(tags)]
            line = draw(SEPARATORS).join(fields) if draw(st.booleans()) else " ".join(fields)
            if draw(st.integers(0, 5)) == 0:
                line = draw(SEPARATORS) + line + draw(SEPARATORS)
        lines.append(line)
    ends = [draw(ENDS) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends))
    return ("\ufeff" if draw(st.integers(0, 6)) == 0 else "") + (text[:-1] if draw(st.booleans()) and text else text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conll_texts(), st.sampled_from([0, 1]))
def test_reader_equals_the_line_by_line_reference(text, n_predictions):
    body = text[1:] if text.startswith("\ufeff") else text
    assert outcome(parsed, text, n_predictions) == outcome(reference_parse, body, n_predictions)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(conll_texts(), st.sampled_from([16, 64, 2 ** 20]))
def test_stats_from_file_in_pieces_equal_the_reference(tmp_path_factory, text, piece_bytes):
    assume("\ud800" not in text)  # a lone surrogate cannot be written as UTF-8
    path = tmp_path_factory.mktemp("r") / "t.conll"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    body = text[1:] if text.startswith("\ufeff") else text
    expected = outcome(reference_parse, body, 0, str(path))
    if isinstance(expected, tuple) and expected[0] == "error":
        assert outcome(TrainStats.from_conll, path, piece_bytes) == expected
    elif not any(expected[0]):
        assert outcome(TrainStats.from_conll, path, piece_bytes)[0] == "error"  # no token: a clear error
    else:
        assert TrainStats.from_conll(path, piece_bytes) == reference_stats(expected[0], expected[1])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from("abcab"), st.sampled_from(GOOD_TAGS)),
                         max_size=7), max_size=6))
def test_numpy_span_decoding_equals_schemes_decode(sentences):
    tokens = [[t for t, _ in s] for s in sentences]
    tags = [[g for _, g in s] for s in sentences]
    if not any(tokens):
        return
    built, reference = TrainStats.from_lists(tokens, tags), reference_stats(tokens, tags)
    assert built == reference and list(built.mentions) == list(reference.mentions)  # same first-seen order


VALUE_CHARS = st.sampled_from(list("BIO-XYé") + ["\x00", "\u3000", "\r"])
VALUES = st.text(VALUE_CHARS, min_size=1, max_size=30).filter(lambda v: not v.endswith("\r"))  # "\r\n" ends a line


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES.filter(lambda v: len(v.encode()) <= 16)), max_size=30), st.booleans())
def test_column_codes_from_bytes_equal_factorize_of_the_strings(rows, docstart):
    text = ("-DOCSTART- x\n\n" if docstart else "") + "".join(f"{a} {b}\n" + "\n" * (i % 3 == 0)
                                                              for i, (a, b) in enumerate(rows))
    table = scan(text)
    for c, few in ((0, False), (0, True), (1, False), (1, True)):
        distinct, ids, first = table.codes(c, few=few)
        expected = factorize(table.columns([c], tags_from=1)[0])
        assert (distinct, ids.tolist(), first.tolist()) == (expected[0], expected[1].tolist(), expected[2].tolist())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2 ** 64 - 1), min_size=1, max_size=8), st.lists(st.integers(0, 7), max_size=200),
       st.integers(1, 4))
def test_groups_of_keys_equal_factorize_of_their_top_digits(values, picks, digits):
    from tough_ner.corpus import _groups

    key = np.array([values[i % len(values)] for i in picks] or values, dtype=np.uint64)
    first, inverse = _groups(key, digits)
    _, ids, expected_first = factorize((key >> np.uint64(64 - 16 * digits)).tolist())
    assert first.tolist() == expected_first.tolist() and inverse.tolist() == ids.tolist()


def test_column_codes_take_the_bytes_unless_many_values_are_long_or_two_values_share_a_key(monkeypatch):
    from tough_ner import corpus

    def strings_path(values):
        calls.append(len(values))
        return factorize(values)

    monkeypatch.setattr(corpus, "factorize", strings_path)
    calls = []
    short = scan("a B-PER\nb O\nc I-geo-loc\nd B-PER\n\ne O\n")
    assert short.columns([0, 1], codes=True)[1][0] == ["B-PER", "O", "I-geo-loc"] and calls == []
    # a few values over 16 bytes are keyed by their strings; sharing their first 16 bytes does not merge them
    mixed = scan("".join(f"w{i % 5} O\n" for i in range(20)) + "abcdefghijklmnopQ O\nabcdefghijklmnopR O\n")
    distinct, ids, _ = mixed.codes(0)
    assert distinct == [f"w{i}" for i in range(5)] + ["abcdefghijklmnopQ", "abcdefghijklmnopR"] and calls == []
    assert ids.tolist() == [i % 5 for i in range(20)] + [5, 6]
    long = scan("a B-WORK_OF_ART_LONG\nb O\n")  # over one value in eight longer than 16 bytes: strings are cheaper
    assert long.codes(1)[0] == ["B-WORK_OF_ART_LONG", "O"] and calls == [2]
    split = []
    monkeypatch.setattr(corpus.Table, "_strings", lambda self, indices, real=corpus.Table._strings:
                        split.append(list(indices)) or real(self, indices))
    assert long.columns([0, 1]) == [["a", "b"], ["B-WORK_OF_ART_LONG", "O"]]
    assert split == [[0, 1]] and calls == [2, 2]  # the strings read are factorized, not split again
    many = scan("".join(f"t v{i}\n" for i in range(3000)))  # 3000 values in 65536 slots of a tag's first key
    distinct, ids, first = many.codes(1, few=True)
    assert calls == [2, 2] and distinct == [f"v{i}" for i in range(3000)] and ids.tolist() == list(range(3000))
    # every key alike: the check against each key's first value sends the column to its strings
    monkeypatch.setattr(corpus, "_MIX", np.zeros(3, dtype=np.uint64))
    monkeypatch.setattr(corpus, "hash", lambda value: 1 << 40, raising=False)
    assert mixed.codes(0, few=True)[0] == distinct_of(mixed) and calls == [2, 2, 22]
    # long values alike in their first 16 bytes and length: their strings tell them apart
    alike = scan("x b\n" * 30 + "x abcdefghijklmnopQ\nx abcdefghijklmnopR\nx abcdefghijklmnopQ\n")
    assert alike.codes(1)[1].tolist() == [0] * 30 + [1, 2, 1] and calls == [2, 2, 22, 33]


def distinct_of(table):
    return factorize(table.columns([0], tags_from=1)[0])[0]


def test_label_counts_added_up_in_parts_and_past_127_types_equal_the_reference(monkeypatch):
    from tough_ner import stats as stats_module

    tokens = [[f"w{i % 7}", "x", f"w{i % 5}"] for i in range(300)]
    tags = [[f"B-T{i}", "O", f"S-T{(i * 7) % 200}"] for i in range(300)]  # 200 entity types: wider label codes
    monkeypatch.setattr(stats_module, "_COUNTED_AT_ONCE", 7)  # the keys of 7 tokens per count
    assert TrainStats.from_lists(tokens, tags) == reference_stats(tokens, tags)


# ---- the real file --------------------------------------------------------------------------
needs_data = pytest.mark.skipif(not (DATA / "train.txt").exists(), reason="CoNLL-2003 not available")


@needs_data
def test_conll2003_train_stats_equal_the_reference_and_do_not_depend_on_pieces():
    path = DATA / "train.txt"
    tokens, tags, _, documents = reference_parse(path.read_text(encoding="utf-8"))
    stats = TrainStats.from_conll(path)
    assert stats == reference_stats(tokens, tags)
    assert TrainStats.from_conll(path, piece_bytes=100_000) == stats
    corpus = read_conll(path)
    assert (corpus.tokens, corpus.tags, corpus.documents) == (tokens, tags, documents)
    assert read_columns(path, [1])[0][0] == ["NNP", "VBZ", "JJ", "NN", "TO", "VB", "JJ", "NN", "."]  # POS, sentence 1


# ---- pieces of a file -------------------------------------------------------------------------
def test_errors_in_later_pieces_name_the_file_line(tmp_path):
    good = "".join(f"w{i} O\nx B-PER\n\n" for i in range(50))  # 150 lines
    path = tmp_path / "t.conll"
    path.write_text(good + "y O\nz Q-PER\n")
    with pytest.raises(ValueError, match=rf"^{path}, line 152, column 2: unknown tag 'Q-PER'"):
        TrainStats.from_conll(path, piece_bytes=32)
    path.write_text(good + "y X O\n")  # the width comes from the first piece
    with pytest.raises(ValueError, match=rf"^{path}, line 151: 3 columns where earlier lines have 2: 'y X O'$"):
        TrainStats.from_conll(path, piece_bytes=32)
    path.write_bytes(good.encode() + b"y O\n\xff O\n")
    offset = len(good) + 4
    with pytest.raises(ValueError, match=rf"^{path}, line 152: bytes that are not UTF-8 \(invalid start byte at "
                                         rf"byte {offset}\)"):
        TrainStats.from_conll(path, piece_bytes=32)
    path.write_text(good)
    assert TrainStats.from_conll(path, piece_bytes=32) == TrainStats.from_conll(path)


def test_read_pieces_keep_sentences_whole_and_a_later_bom(tmp_path):
    path = tmp_path / "p.conll"
    path.write_bytes("\ufeffa O\nb O\r\n\r\n\ufeffc O\n\nd O".encode())
    pieces = list(read_pieces(path, 4))
    assert "".join(text for text, _ in pieces) == "a O\nb O\r\n\r\n\ufeffc O\n\nd O"
    assert [lines for _, lines in pieces] == [0, 3, 5]
    assert all(text.endswith("\n\n") or text.endswith("\r\n\r\n") for text, _ in pieces[:-1])
    # a byte-order mark after the start is a token character (rule 1 drops only a leading one)
    assert TrainStats.from_conll(path, 4).vocab == ["a", "b", "\ufeffc", "d"] == TrainStats.from_conll(path).vocab


def test_first_bad_line_in_file_order_is_the_error():
    with pytest.raises(ValueError, match=r"^<text>, line 2, column 2: unknown tag 'X'"):
        parse_conll("a O\nb X\nc O O\n")  # the bad tag comes before the ragged line
    with pytest.raises(ValueError, match=r"^<text>, line 2: 3 columns where earlier lines have 2"):
        parse_conll("a O\nc O O\nb X\n")
    with pytest.raises(ValueError, match=r"^<text>, line 1, column 3: unknown tag 'Y'"):
        parse_conll("a O Y\nb Q O\n", n_predictions=1)  # a bad prediction on line 1 before a bad gold tag
    with pytest.raises(ValueError, match=r"^<text>, line 1, column 2: unknown tag 'X'"):
        parse_conll("a X Y\n", n_predictions=1)  # same line: the first column read


def test_small_cases_of_the_reader(tmp_path):
    empty = tmp_path / "e.conll"
    empty.write_text("\n-DOCSTART- O\n\n")
    assert read_columns(empty) == [] and read_columns(empty, [1]) == [[]]
    with pytest.raises(ValueError, match=r"^<text>, line 1: a CoNLL line needs a token and a tag, got 'EU'$"):
        parse_conll("EU\nx\n")  # the line shown is the one named, from its first character
    with pytest.raises(ValueError, match=r"^<text>, line 1, column 2: unknown tag 'NNP'"):
        parse_conll("EU NNP B-ORG\n", columns="0,1")  # parse_conll reads the columns it is given
    assert parse_conll("B-ORG NNP EU\n", columns="2,0").tags == [["B-ORG"]]


def test_pieces_are_about_the_size_asked_and_stdin_is_read_in_pieces(tmp_path, monkeypatch):
    import io
    import sys

    text = "".join(f"w{i:03d} B-PER\n\n" for i in range(100))  # 100 sentences of 12 bytes
    path = tmp_path / "s.conll"
    path.write_text(text)
    pieces = list(read_pieces(path, 120))
    assert "".join(piece for piece, _ in pieces) == text
    assert len(pieces) <= len(text) // 120 + 1  # each cut at the last blank line of its block
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert TrainStats.from_conll("-", piece_bytes=120) == TrainStats.from_conll(path)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(conll_texts(tag_columns=2), st.sampled_from([16, 64, 2 ** 20]))
def test_read_batch_equals_the_batch_of_read_predictions(tmp_path_factory, text, piece_bytes):
    """The command reads prediction files as codes, in pieces (``read_batch``): the same
    errors, and a batch whose every part equals that of the lists ``read_predictions`` gives
    (its documents too, wherever the pieces are cut)."""
    assume("\ud800" not in text)  # a lone surrogate cannot be written as UTF-8
    path = tmp_path_factory.mktemp("b") / "p.conll"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    expected = outcome(read_predictions, path)
    got = outcome(read_batch, path, piece_bytes=piece_bytes)
    if isinstance(expected, tuple):
        assert got == expected
    else:
        assert batch_view(got) == batch_view(Batch(expected.tokens, expected.tags, expected.predictions[0],
                                                   expected.documents))


@needs_data
def test_read_batch_of_conll2003_test_equals_the_batch_of_its_lists(conll_stats):
    path = DATA / "test.txt"
    for columns, piece_bytes in (("0,3,2", 1 << 19), ("token,pos,gold,pred", 1 << 15)):  # chunk tags as gold
        corpus = read_conll(path, columns=columns)
        lists = Batch(corpus.tokens, corpus.tags, corpus.predictions[0], corpus.documents)
        coded = read_batch(path, columns, piece_bytes)  # -DOCSTART- lines in several pieces
        assert len(set(coded.documents)) == 231
        assert batch_view(coded, conll_stats) == batch_view(lists, conll_stats)


def test_read_batch_holds_the_file_limit_of_a_file_read_whole(tmp_path, monkeypatch):
    """Read in pieces, a prediction file still has the file limit (its every token is kept),
    checked before reading a file and while reading a pipe."""
    import io
    import sys

    from tough_ner.corpus import limits

    text = "".join(f"w{i} O B-PER\n\n" for i in range(40))
    path = tmp_path / "p.conll"
    path.write_text(text)
    message = re.escape(f"{path}: larger than the file limit of 256 bytes ")
    with limits(file=256), pytest.raises(ValueError, match=message):
        read_batch(path, piece_bytes=64)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    with limits(file=256), pytest.raises(ValueError, match="larger than the file limit"):
        read_batch("-", piece_bytes=64)
    assert len(read_batch(path, piece_bytes=64)) == 40
