import datasets
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tough_ner import Batch, from_dataset, read_conll, read_predictions
from tough_ner.core.corpus import Slots
from tough_ner.corpus import parse_conll, read_columns

from conftest import write


def test_conll_columns_docstart_tabs_and_blank_lines(tmp_path):
    path = write(tmp_path / "a.conll", "-DOCSTART- -X- O\n\nEU\tNNP B-ORG\nrejects VBZ O\n\n\n"
                                       "-DOCSTART- -X- O\nPeter NNP B-PER\n  \nBonn NNP B-LOC\n")
    corpus = read_conll(path)
    assert corpus.tokens == [["EU", "rejects"], ["Peter"], ["Bonn"]]
    assert corpus.tags == [["B-ORG", "O"], ["B-PER"], ["B-LOC"]]
    assert read_columns(path)[1] == [["NNP", "VBZ"], ["NNP"], ["NNP"]]


def test_prediction_file_gold_is_second_to_last(tmp_path):
    path = write(tmp_path / "p.conll", "EU NNP B-ORG B-LOC\nrejects VBZ O O\n")
    corpus = read_predictions(path)
    assert corpus.tags == [["B-ORG", "O"]] and corpus.predictions == [[["B-LOC", "O"]]]


def test_ragged_columns_name_the_line(tmp_path):
    path = write(tmp_path / "bad.conll", "EU B-ORG\nrejects VBZ O\n")
    with pytest.raises(ValueError, match=r"bad.conll, line 2: 3 columns where earlier lines have 2"):
        read_conll(path)


def test_one_column_file_and_too_few_columns(tmp_path):
    with pytest.raises(ValueError, match="line 1: a CoNLL line needs a token and a tag"):
        read_conll(write(tmp_path / "one.conll", "EU\nrejects\n"))
    with pytest.raises(ValueError, match="too few columns"):
        read_predictions(write(tmp_path / "two.conll", "EU B-ORG\n"))


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no such CoNLL file: /nonexistent.conll"):
        read_conll("/nonexistent.conll")


def test_empty_file(tmp_path):
    assert read_conll(write(tmp_path / "e.conll", "\n\n")).tokens == []


def test_dataset_with_classlabel_and_string_tags():
    names = ["O", "B-PER", "I-PER"]
    features = datasets.Features({"tokens": datasets.List(datasets.Value("string")),
                                  "ner_tags": datasets.List(datasets.ClassLabel(names=names))})
    ds = datasets.Dataset.from_dict({"tokens": [["Ann", "Lee", "ran"]], "ner_tags": [[1, 2, 0]]}, features=features)
    assert from_dataset(ds).tags == [["B-PER", "I-PER", "O"]]
    ds2 = datasets.Dataset.from_dict({"words": [["Ann"]], "labels": [["B-PER"]]})
    assert from_dataset(ds2, "words", "labels").tags == [["B-PER"]]
    with pytest.raises(ValueError, match="no column 'ner_tags'"):
        from_dataset(ds2, "words")


def test_batch_errors_name_the_sentence():
    with pytest.raises(ValueError, match="2 token sentences but 1 reference"):
        Batch([["a"], ["b"]], [["O"]])
    with pytest.raises(ValueError, match="sentence 1: 2 tokens but 1 reference tags"):
        Batch([["a"], ["b", "c"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match="sentence 0: 1 predicted tags but 2 reference tags"):
        Batch([["a", "b"]], [["O", "O"]], [["O"]])
    with pytest.raises(ValueError, match="sentence 0, position 1: token 5 is a int"):
        Batch([["a", 5]], [["O", "O"]])
    with pytest.raises(ValueError, match="sentence 1, position 0: unknown tag 'Q-PER'"):
        Batch([["a"], ["b"]], [["O"], ["Q-PER"]])


def test_documents_are_docstart_groups_and_none_without_them():
    from tough_ner.corpus import parse_conll

    assert parse_conll("a O\n\nb O\n-DOCSTART- O\nc O\n\n-DOCSTART- O\n\n\nd O\n").documents == [0, 0, 1, 2]
    assert parse_conll("-DOCSTART- O\n\na O\n\nb O\n").documents == [0, 0]
    assert parse_conll("a O\n\nb O\n").documents is None  # no -DOCSTART-: no document ids at all


def test_chosen_columns_and_their_errors_name_the_file(tmp_path):
    path = write(tmp_path / "c.conll", "-DOCSTART- -X- O\n\nEU NNP B-ORG\nrejects VBZ O\n\nBonn NNP B-LOC\n")
    assert read_columns(path, [1]) == [[["NNP", "VBZ"], ["NNP"]]]
    assert read_columns(path, [-3, 2]) == [[["EU", "rejects"], ["Bonn"]], [["B-ORG", "O"], ["B-LOC"]]]
    for bad in ([3], [-4], [0, -3]):  # out of range, or the same column twice
        with pytest.raises(ValueError, match=rf"^{path}: 3 columns cannot provide columns"):
            read_columns(path, bad)
    ragged = write(tmp_path / "r.conll", "EU NNP B-ORG\n-DOCSTART- -X-\n\nrejects O\n")
    with pytest.raises(ValueError, match=rf"^{ragged}, line 4: 2 columns where earlier lines have 3: 'rejects O'$"):
        read_columns(ragged)
    with pytest.raises(ValueError, match=r"line 2: a CoNLL line needs a token and a tag, got 'EU'$"):
        read_conll(write(tmp_path / "one.conll", "-DOCSTART-\nEU\nrejects\n"))


def test_parse_conll_defaults_and_the_last_sentence_without_blank_line():
    corpus = parse_conll("EU B-ORG\nrejects O\n\nBonn B-LOC")
    assert corpus.tokens == [["EU", "rejects"], ["Bonn"]] and corpus.tags == [["B-ORG", "O"], ["B-LOC"]]
    assert corpus.predictions == [] and corpus.path == "<text>"
    with pytest.raises(ValueError, match=r"^<text>, line 2: 3 columns"):
        parse_conll("EU B-ORG\nrejects X O\n")


# ---- the smaller pieces of corpus.py, by hand ----------------------------------------------
def test_split_rows_follows_the_line_and_field_rules():
    from tough_ner.corpus import split_rows

    # rule 1: one leading BOM dropped; rule 2: "\n" and "\r\n" end lines; rule 3: only space
    # and tab separate fields (a lone "\r" and NBSP are token characters)
    assert split_rows("\ufeffab O\r\n\r\nc\td\xa0e  O\nf\rg O") == [["ab", "O"], [], ["c", "d\xa0e", "O"], ["f\rg", "O"]]
    assert split_rows("a O\n") == [["a", "O"], []]  # rows[i] is line i + 1; the text after the last "\n" too
    assert split_rows("x\ufeff O") == [["x\ufeff", "O"]]


def test_column_indices_from_ints_strings_and_names():
    from tough_ner.corpus import column_indices

    assert column_indices([0, 3], 4, 0, "f") == [0, 3]  # Python ints ...
    assert column_indices([0, -1, 2], 4, 1, "f") == [0, 3, 2]  # ... negative counting from the end
    assert column_indices("0,-2", 4, None, "f") == [0, 2]  # the same as text
    assert column_indices("token,x,gold,pred", 4, None, "f") == [0, 2, 3]
    for mixed in ("0,X3", [0, True]):  # "X3" is a name and a bool is not an index: a mix of both kinds
        with pytest.raises(ValueError, match="use either column indices or one name per column, not both"):
            column_indices(mixed, 4, None, "f")


def test_conll_text_and_write_conll_by_hand(tmp_path):
    from tough_ner.corpus import conll_text, write_conll

    columns = ([["EU", "rejects"], [], ["Bonn"]], [["B-ORG", "O"], [], ["B-LOC"]], [["B-ORG", "O"], [], ["O"]])
    expected = "EU B-ORG B-ORG\nrejects O O\n\n\nBonn B-LOC O\n\n"  # a blank line ends every sentence
    assert conll_text(*columns) == expected
    assert conll_text([[]], [[]]) == "\n"
    write_conll(tmp_path / "w.conll", *columns)
    assert (tmp_path / "w.conll").read_text(encoding="utf-8") == expected
    corpus = read_predictions(tmp_path / "w.conll")  # an empty sentence cannot be read back: it is dropped
    assert (corpus.tokens, corpus.tags, corpus.predictions) == ([["EU", "rejects"], ["Bonn"]],
                                                                [["B-ORG", "O"], ["B-LOC"]],
                                                                [[["B-ORG", "O"], ["O"]]])


@pytest.mark.parametrize("tokens, where", [
    ([["", "b"]], "sentence 0, position 0"),  # an empty value first ...
    ([["a", "", "b"]], "sentence 0, position 1"),  # ... in the middle ...
    ([["a"], ["b", ""]], "sentence 1, position 1"),  # ... last
    ([[""]], "sentence 0, position 0"),  # ... alone
    ([[], ["a"], [""]], "sentence 2, position 0"),
])
def test_conll_text_refuses_an_empty_value_anywhere(tokens, where):
    from tough_ner.corpus import conll_text

    tags = [["O"] * len(sentence) for sentence in tokens]
    with pytest.raises(ValueError, match=f"^{where}: token '' is empty, which a CoNLL file cannot hold"):
        conll_text(tokens, tags)


def test_tag_names_of_sequence_and_plain_class_label_columns():
    from tough_ner.corpus import tag_names

    names = ["O", "B-PER", "I-PER"]
    features = datasets.Features({"tags": datasets.List(datasets.ClassLabel(names=names)),
                                  "label": datasets.ClassLabel(names=["x", "y"]),
                                  "words": datasets.List(datasets.Value("string"))})
    ds = datasets.Dataset.from_dict({"tags": [[1, 2]], "label": [1], "words": [["a", "b"]]}, features=features)
    assert tag_names(ds, "tags") == names and tag_names(ds, "label") == ["x", "y"] and tag_names(ds, "words") is None


def test_from_dataset_keeps_the_tokens():
    ds = datasets.Dataset.from_dict({"tokens": [["Ann", "ran"], ["Bo"]], "ner_tags": [["B-PER", "O"], ["B-PER"]]})
    corpus = from_dataset(ds)
    assert corpus.tokens == [["Ann", "ran"], ["Bo"]] and corpus.tags == [["B-PER", "O"], ["B-PER"]]


def test_decode_tag_ids_names_the_first_bad_id_and_its_sentence():
    from tough_ner.corpus import decode_tag_ids

    names = ["O", "B-PER", "I-PER"]
    assert decode_tag_ids([[1, 2, 0], []], names) == [["B-PER", "I-PER", "O"], []]
    assert decode_tag_ids([("O", "B-X")], None) == [["O", "B-X"]]  # string tags pass through as lists
    for sentence, bad in (([0, -1], "-1"),  # ClassLabel's "no label" does not wrap around to I-PER
                          ([0, 3, 1], "3"), ([1, 7, -1], "7"), ([0, "x"], "'x'"), ([0, None], "None")):
        with pytest.raises(ValueError, match=rf"^sentence 1: tag id {bad} is not one of the 3 class labels$"):
            decode_tag_ids([[0], sentence], names)
    with pytest.raises(ValueError, match=r"^sentence 6: tag id 9 is not one of the 3 class labels$"):
        decode_tag_ids([[0], [9]], names, first=5)  # sentences numbered from `first`


def test_read_pieces_cut_at_the_last_blank_line_read(tmp_path):
    """Pieces by hand: each ends at the last blank line ("\\n\\n" or "\\n\\r\\n") of what has been
    read so far, even one at the very start; bytes after it wait for the next piece."""
    from tough_ner.corpus import read_pieces

    path = tmp_path / "p.conll"
    for end in ("\n", "\r\n"):  # sentences that tile the pieces exactly: one piece per read
        sentence = f"w B-PER{end}{end}"
        path.write_bytes((sentence * 10).encode())
        assert [(text, lines) for text, lines in read_pieces(path, 3 * len(sentence))] == \
            [(sentence * 3, 0), (sentence * 3, 6), (sentence * 3, 12), (sentence, 18)]
    path.write_bytes(b"\n\nab O\n\nc O\n")  # read 4 bytes at a time: "\n\nab" | " O\n\n" | "c O\n" | ""
    assert list(read_pieces(path, 4)) == [("\n\n", 0), ("ab O\n\n", 2), ("c O\n", 4)]
    path.write_bytes(b"\n\r\nab O\n")  # "\n\r\na" | "b O\n" | ""
    assert list(read_pieces(path, 4)) == [("\n\r\n", 0), ("ab O\n", 2)]


def test_standard_input_names_itself_and_stays_open(monkeypatch):
    import io
    import sys

    from tough_ner import TrainStats

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a O\nb Q-X\n")))
    with pytest.raises(ValueError, match=r"^<stdin>, line 2, column 2: unknown tag 'Q-X'"):
        read_conll("-")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a B-X\n\nb O\n")))
    assert TrainStats.from_conll("/dev/stdin", piece_bytes=4).vocab == ["a", "b"]
    assert not sys.stdin.buffer.closed  # reading pieces closes the files it opened, never the standard input


def test_undecodable_bytes_name_their_line_counting_a_first_empty_line(tmp_path):
    path = tmp_path / "u.conll"
    path.write_bytes(b"\n\xff O\n")
    with pytest.raises(ValueError, match=rf"^{path}, line 2: bytes that are not UTF-8 \(invalid start byte at byte 1\)"):
        read_conll(path)


def test_chosen_columns_fix_the_number_of_prediction_columns_only_when_asked(tmp_path):
    path = write(tmp_path / "p.conll", "EU NNP B-ORG B-LOC O\n")
    # read_conll with columns= and no n_predictions: as many prediction columns as chosen
    assert parse_conll("EU NNP B-ORG B-LOC O\n", columns="0,2,3,4").predictions == [[["B-LOC"]], [["O"]]]
    assert read_conll(path, columns="0,2").predictions == []
    # read_predictions asks for exactly one
    assert read_predictions(path, columns="0,2,4").predictions == [[["O"]]]
    for columns, n in (("0,2", 0), ("0,2,3,4", 2)):
        with pytest.raises(ValueError, match=rf"^columns \['0', '2'.*\] choose {n} prediction column\(s\); 1 expected$"):
            read_predictions(path, columns=columns)


def test_conll_text_refuses_every_separator_even_all_at_once():
    from tough_ner.corpus import conll_text

    for value in ("a b", "a\tb", "a\nb", "a\rb", "a b\tc\nd\re"):
        with pytest.raises(ValueError, match=r"^sentence 0, position 1: token .* contains a space, tab or line end"):
            conll_text([["x", value]], [["O", "O"]])


def test_column_choices_in_range_distinct_and_complete():
    from tough_ner.corpus import column_indices

    assert column_indices("-4,1", 4, None, "f") == [0, 1]  # -width is the first column
    for bad in ("0,6", "1,4", "0,-5", "1,-3"):  # out of range (even when wrapping would not repeat one), repeated
        with pytest.raises(ValueError, match=rf"^f: 4 columns cannot provide columns \[.*\] \(token, gold, predictions\)$"):
            column_indices(bad, 4, None, "f")
    with pytest.raises(ValueError, match=r"^columns \['0'\]: give the token column, the gold column and any prediction"):
        column_indices("0", 4, None, "f")
    for names in ("token,token,gold", "token,gold,gold", "tok,x,gold"):
        with pytest.raises(ValueError, match=r"^columns \[.*\]: name exactly one 'token' and one 'gold' column \(others"):
            column_indices(names, 3, None, "f")


def test_empty_files_with_chosen_columns(tmp_path):
    empty = write(tmp_path / "e.conll", "")
    assert read_columns(empty) == [] and read_columns(empty, [1]) == [[]]
    corpus = read_conll(empty, columns="0,3,4")  # no line to check the columns against
    assert (corpus.tokens, corpus.tags, corpus.predictions) == ([], [], [[]])


def test_quote_cuts_at_200_characters():
    from tough_ner.corpus import quote

    assert quote(12345) == "'12345'" and quote(None) == "'None'"  # any value, as its str
    assert quote("x" * 200) == repr("x" * 200) and quote("x" * 201) == repr("x" * 200) + "…"


def test_table_gives_columns_as_strings_or_factorized():
    from tough_ner.corpus import scan

    table = scan("a B-X\nb O\n\na B-X\n")
    assert table.columns([0, 1]) == [["a", "b", "a"], ["B-X", "O", "B-X"]]
    (tokens, token_ids), (tags, tag_ids) = table.columns([0, 1], codes=True)
    assert (tokens, token_ids.tolist(), tags, tag_ids.tolist()) == (["a", "b"], [0, 1, 0], ["B-X", "O"], [0, 1, 0])


def test_fields_split_only_at_space_and_tab_whatever_else_a_token_holds():
    from tough_ner.corpus import OTHER_SPACE, split_rows

    ascii_only = "a\x0b\x0c\r\x1c\x1d\x1e\x1fb"  # every ASCII character str.split() also breaks at
    every = "a" + OTHER_SPACE + "b"  # and every other one
    for token in (ascii_only, every):
        assert parse_conll(f"{token} B-X\nc\tO\n").tokens == [[token, "c"]]
        assert split_rows(f"{token}\tO") == [[token, "O"]]


def test_docstart_only_as_a_whole_first_field():
    assert parse_conll("x-DOCSTART- O\na-DOCSTART- O\n").tokens == [["x-DOCSTART-", "a-DOCSTART-"]]
    corpus = parse_conll("a O\n\n-DOCSTART-")  # the last line, without a line end
    assert corpus.tokens == [["a"]] and corpus.documents == [0]


def test_scan_names_text_and_counts_lines_of_earlier_pieces(tmp_path):
    from tough_ner import TrainStats
    from tough_ner.corpus import scan

    with pytest.raises(ValueError, match=r"^<text>, line 1: a CoNLL line needs a token and a tag, got 'a'$"):
        scan("a\n")
    path = write(tmp_path / "d.conll", "-DOCSTART- O\n\n" * 3 + "EU\n")  # pieces of 16 bytes: no token line before
    with pytest.raises(ValueError, match=rf"^{path}, line 7: a CoNLL line needs a token and a tag, got 'EU'$"):
        TrainStats.from_conll(path, piece_bytes=16)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 700), min_size=1, max_size=4), st.sampled_from([2, 3]), st.integers(0, 5),
       st.integers(0, 2 ** 32 - 1))
def test_slots_find_every_entry_and_stay_sparse(sizes, spread, crowd, seed):
    """Entries added batch after batch (hashes crowded onto the first few slots by zeroing
    their top bits, or onto the last few by inverting those, so runs of taken slots form and
    wrap around) are each found, a hash never added is not, and the table is never fuller than
    1/spread."""
    rng = np.random.default_rng(seed)
    kept = np.zeros(0, dtype=np.uint64)
    slots = Slots(spread)

    def same(at, numbers):
        return kept[numbers] == asked[at]

    for size in sizes:
        hashes = rng.integers(0, 2 ** 63, size, dtype=np.int64).view(np.uint64) >> np.uint64(crowd * 10)
        hashes = np.unique(~hashes if crowd % 2 else hashes)
        hashes = hashes[~np.isin(hashes, kept)]
        numbers = np.arange(len(kept), len(kept) + len(hashes))
        kept = np.concatenate([kept, hashes])
        slots.add(hashes, numbers, lambda: (kept, np.arange(len(kept))))
        assert spread * slots.n <= len(slots.table) and (slots.table >= 0).sum() == len(kept)
        asked = np.concatenate([kept, kept[:5] + np.uint64(1)])
        found = slots.find(asked, same)
        assert found[:len(kept)].tolist() == list(range(len(kept)))
        assert all(f == -1 or kept[f] == a for f, a in zip(found[len(kept):].tolist(), asked[len(kept):].tolist()))


# Values near the byte boundaries of Numbering's words (8, 15 and 16 bytes), multi-byte
# characters, a lone surrogate, spaces, newlines, NUL bytes (a value's bytes then do not give
# its length) and the empty string.
_VALUES = st.text(st.sampled_from(["a", "B", "é", "€", "𝄞", " ", "\n", "\ud800", "~", "\x00"]), max_size=9) | \
    st.sampled_from(["abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnop", "é" * 7 + "a", "é" * 8, "",
                     "a", "a\x00", "\x00", "abcdefgh\x00"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_VALUES, unique=True, max_size=30), max_size=5), st.data())
def test_renumbering_numbers_parts_as_a_dict_of_first_occurrences(parts, data):
    """Each part's values get the numbers one dict of first occurrences gives across the parts,
    whether the part's joined bytes are given or made (values with a newline: by lengths).
    Parts of thousands of values sharing their first 8 bytes, some over 15, grow the table
    between the drawn parts and the same parts again."""
    from tough_ner.core.corpus import Renumbering

    renumbering, index = Renumbering(), {}
    big = [[f"abcdefgh{k}" for k in range(3000)],
           [f"abcdefgh{k}" for k in range(5000, 2000, -1)] + [f"abcdefghijklmnop{k}" for k in range(300)]]
    for part in parts + big + parts:
        expected = [index.setdefault(value, len(index)) for value in part]
        joined = "\n".join(part)
        given_joined = joined.count("\n") == max(len(part) - 1, 0) and data.draw(st.booleans())
        numbers = renumbering.number(part, joined.encode("utf-8", "surrogatepass") if given_joined else None)
        assert numbers.tolist() == expected
        assert renumbering.values == list(index) and len(renumbering) == len(index)


# Tokens a CoNLL line can hold, near Numbering's word limits (8, 15 and 16 bytes), NUL bytes included
_TOKENS = st.sampled_from(["a", "B", "abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnop", "é" * 8,
                           "x\x00", "abcdefgh\x00", "𝄞~"]) | st.text(st.sampled_from("aé~\x00"), min_size=1, max_size=18)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(_TOKENS, min_size=1, max_size=12)), max_size=8),
       st.integers(0, 8), st.booleans())
def test_numbering_numbers_pieces_as_a_dict_of_first_occurrences(pieces, released_at, weak_hash):
    """Pieces of tokens numbered by their bytes (``Table.numbered``) or by their strings
    (``number``), in any mix, the bytes released after some piece, with a hash that tells
    values apart or one by length only: each token gets the number one dict of first
    occurrences gives, and ``index`` (made when first asked for) is that dict."""
    from tough_ner.core import corpus

    numbering, index = corpus.Numbering(), {}
    with pytest.MonkeyPatch.context() as patch:
        if weak_hash:
            patch.setattr(corpus, "_byte_key", lambda low, high, length: length.astype(np.uint64) << 59)
        for k, (by_bytes, tokens) in enumerate(pieces):
            if k == released_at:
                numbering.release_bytes()
            expected = [index.setdefault(token, len(index)) for token in tokens]
            if by_bytes:
                numbers = corpus.scan("".join(f"{token} O\n" for token in tokens)).numbered(0, numbering)
            else:
                numbers = numbering.number(tokens)
            assert numbers.tolist() == expected and numbering.values == list(index)
    assert numbering.index == index and len(numbering) == len(index)
