"""Bounded work: limits on buckets, types and input size; per-type work linear in the types;
user text shown as text; `$` in labels drawn as text."""
import html
import math
from pathlib import Path

import numpy as np
import pytest

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, tmr
from tough_ner import schemes
from tough_ner.buckets import MAX_BUCKETS
from tough_ner.cli import main
from tough_ner.corpus import write_conll
from tough_ner.demo import TEST, TRAIN, load_demo
from tough_ner.hardeval import classify, gold_types, token_errors
from tough_ner.scoring import matched, prf, ratio

from conftest import need


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return TrainStats.from_corpus(train), test


def test_n_buckets_is_bounded_in_every_interface(demo, capsys):
    stats, test = demo
    batch = Batch(test.tokens, test.tags, test.predictions[0])
    assert "eLen_99_f1" in bucket_f1(stats, batch, n_buckets={"eLen": MAX_BUCKETS}, bootstrap=0)
    for bad in (MAX_BUCKETS + 1, 100_000, {"eCon": 100_000}):
        with pytest.raises(ValueError, match=f"at most {MAX_BUCKETS}"):
            bucket_f1(stats, batch, n_buckets=bad)
    with pytest.raises(ValueError, match=f"at most {MAX_BUCKETS}"):
        bucket_f1(stats, batch, edges={"sLen": list(range(1, 200))})
    from tough_ner.metrics.bucket_f1 import BucketF1
    with pytest.raises(ValueError, match=f"at most {MAX_BUCKETS}"):
        BucketF1(train=stats, n_buckets=100_000, keep_in_memory=True)
    metric = BucketF1(train=stats, keep_in_memory=True)
    with pytest.raises(ValueError, match=f"at most {MAX_BUCKETS}"):
        metric.compute(predictions=test.predictions[0], references=test.tags, tokens=test.tokens, n_buckets=101)
    assert main(["buckets", "--train", str(TRAIN), "--test", str(TEST), "--n-buckets", "100000"]) == 2
    assert f"at most {MAX_BUCKETS}" in capsys.readouterr().err


def test_the_tag_parsing_cache_stays_bounded():
    for i in range(schemes._PARSED_LIMIT + 10):
        schemes.parse_label(f"B-T{i}")
    assert len(schemes._PARSED) <= schemes._PARSED_LIMIT
    assert schemes.parse_label("B-T0") == ("B", "T0") and schemes.parse_label("O") == ("O", "")
    assert schemes.decode(["B-LOC", "I-LOC", "O"]) == [(0, 2, "LOC")]


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


def many_types(n, seed=0):
    """n sentences, each with its own type; every third prediction takes the next sentence's type."""
    rng = np.random.default_rng(seed)
    tokens = [[f"w{i}", "x", f"y{rng.integers(5)}"] for i in range(n)]
    gold = [[f"B-T{i}", f"I-T{i}", "O"] for i in range(n)]
    pred = [[f"B-T{(i + 1) % n if i % 3 == 0 else i}", "O" if i % 2 else f"I-T{i}", "O"] for i in range(n)]
    return Batch(tokens, gold, pred)


def test_per_type_results_with_many_types_equal_the_type_by_type_definition(demo):
    """The per-type tables are counted in one pass (they were one pass per type: 300k types
    took minutes); each type's cell must still be the definition applied to that type alone."""
    batch = many_types(3000)
    # training data with the same types (the input checks refuse gold types unknown to training)
    stats = TrainStats.from_lists(batch.tokens[::2], batch.references[::2])
    result = hardeval(stats, batch, detailed=True)
    types = np.array(gold_types(batch), dtype=object)
    masks = classify(stats, batch.flat_tokens, list(types))
    errors = token_errors(batch)
    groups = {"unseen": ("unseen_I", "unseen_O"), "diff": ("diff_I", "diff_O", "diff_E")}
    for name in ("O", "T0", "T1", "T2999", "T1500"):
        where = types == name  # the definition, one type at a time
        cell = result["per_type"][name]
        assert cell["n_all"] == where.sum() and same(cell["ter_all"], ratio(int((where & errors).sum()), where.sum()))
        for subset in ("unseen_I", "unseen_O", "diff_I", "diff_O", "diff_E"):
            size, wrong = int((masks[subset] & where).sum()), int((masks[subset] & where & errors).sum())
            assert cell[f"n_{subset}"] == size and same(cell[f"ter_{subset}"], ratio(wrong, size))
        for group, members in groups.items():
            size = sum(int((masks[m] & where).sum()) for m in members)
            wrong = sum(int((masks[m] & where & errors).sum()) for m in members)
            assert cell[f"n_{group}"] == size and same(cell[f"ter_{group}"], ratio(wrong, size))
        assert same(cell["hardeval"], (cell["ter_unseen"] + cell["ter_diff"]) / 2)
    found = tmr(stats, batch, detailed=True)
    hit, gold_type = matched(batch), batch.span_arrays("gold")[3]
    pred_type = batch.span_arrays("pred")[3]
    for name in ("T0", "T1", "T2999"):
        k = batch.type_index[name]
        cell = found["per_type"][name]
        expected = prf(int(np.sum(hit & (gold_type == k))), int(np.sum(gold_type == k)), int(np.sum(pred_type == k)))
        assert {key: cell[key] for key in expected} == expected
        assert cell["n_seen"] + cell["n_unseen_any"] == int(np.sum(gold_type == k))
    flat = bucket_f1(stats, batch, detailed=True, bootstrap=0)
    assert len([k for k in flat if k.startswith("tag_")]) == 3000 == len(flat["buckets"]["tag"])


def test_spaces_bound_input_size_and_types(monkeypatch, tmp_path):
    need("gradio")
    from tough_ner import spaces

    train, test = TRAIN.read_text(), TEST.read_text()
    monkeypatch.setenv("TOUGH_NER_MAX_INPUT_MB", "0.01")
    with pytest.raises(ValueError, match=r"the pasted text is .* MB; the limit is 0.01 MB \(TOUGH_NER_MAX_INPUT_MB"):
        spaces._text(test, None)
    upload = tmp_path / "big.conll"
    upload.write_text(test)
    with pytest.raises(ValueError, match="the uploaded file big.conll is"):
        spaces._text(None, str(upload))
    monkeypatch.setenv("TOUGH_NER_MAX_INPUT_MB", "20")
    assert spaces._text(None, str(upload)) == test
    assert spaces.max_input_mb() == 20
    monkeypatch.delenv("TOUGH_NER_MAX_INPUT_MB")
    assert spaces.max_input_mb() == 20 and spaces.max_types() == 1000  # the defaults
    monkeypatch.setenv("TOUGH_NER_MAX_TYPES", "3")
    with pytest.raises(ValueError, match="training data has 4 distinct entity types; the limit is 3"):
        spaces.score_tmr(train, test)
    monkeypatch.setenv("TOUGH_NER_MAX_TYPES", "1000")
    many = "\n\n".join(f"w{i} B-T{i} B-T{i}" for i in range(1001)) + "\n"
    with pytest.raises(ValueError, match="test data has 1001 distinct entity types; the limit is 1000"):
        spaces.score_tmr(train, many)
    with pytest.raises(ValueError, match="bootstrap resamples must lie in 0 .. 1000"):
        spaces.score_bucket_f1(train, test, 4, 10**9)
    with pytest.raises(ValueError, match="at most 100"):
        spaces.score_bucket_f1(train, test, 10**5, 0)


def test_spaces_show_user_text_as_text():
    need("gradio")
    from tough_ner import spaces

    pasted = "EU B-ORG ![x](http://203.0.113.9/x.png)<img src=y>\n"
    run = spaces._safe(spaces._reader(spaces.score_hardeval, 2), 4)
    with pytest.warns(UserWarning):  # gr.Warning outside a request falls back to a Python warning
        message, *rest = run("EU B-ORG\n", None, pasted, None, False, "bilou")
    assert len(rest) == 4 and all(r is None or (r["value"] is None and r["visible"] is False) for r in rest)
    assert "![" not in message and "](" not in message and "<img" not in message and "http:" not in message
    assert html.unescape(message) == ("**Error:** test data, line 1, column 3: unknown tag '![x](http://203.0.113.9/x.png)"
                                      "<img' (expected O or a B-, I-, E-, L-, S- or U- prefix and a type)")
    assert spaces.as_text("tag_LOC_f1 | x") == "tag&#95;LOC&#95;f1 &#124; x"


def test_dollar_signs_in_types_and_file_names_are_drawn_as_text(tmp_path, capsys):
    """A type `$\\foo$` or a system file `sys$x$.txt` made matplotlib parse math, fail, and leave
    an empty HTML report."""
    need("matplotlib")
    train, test = load_demo()

    def dollar(tags):
        return [[t.replace("MISC", "$\\foo$") for t in s] for s in tags]
    write_conll(tmp_path / "train.txt", train.tokens, dollar(train.tags))
    write_conll(tmp_path / "test.txt", test.tokens, dollar(test.tags))
    write_conll(tmp_path / "sys$x$.txt", test.tokens, dollar(test.predictions[0]))
    write_conll(tmp_path / "b.txt", test.tokens, dollar(test.predictions[1]))
    html = tmp_path / "report.html"
    assert main(["report", "--train", str(tmp_path / "train.txt"), "--test", str(tmp_path / "test.txt"),
                 "--pred", str(tmp_path / "sys$x$.txt"), "--pred", str(tmp_path / "b.txt"), "--html", str(html),
                 "--bootstrap", "0", "--quiet"]) == 0, capsys.readouterr().err
    page = html.read_text()
    assert "<svg" in page and "$\\foo$" in page and page.rstrip().endswith("</html>")
    if need("gradio"):
        import io

        from tough_ner import spaces
        columns = zip(test.tokens, dollar(test.tags), dollar(test.predictions[0]), dollar(test.predictions[1]))
        test_text = "\n\n".join("\n".join(" ".join(f) for f in zip(*s)) for s in columns) + "\n"
        train_text = (tmp_path / "train.txt").read_text()
        for scorer, options in ((spaces.score_bucket_f1, (4, 0)), (spaces.score_hardeval, ())):
            figure = scorer(train_text, test_text, *options)[2]
            figure.savefig(io.BytesIO(), format="png")


def test_spaces_listen_where_gradio_is_told_and_the_cli_on_localhost(monkeypatch):
    need("gradio")
    from tough_ner.spaces import server_address

    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "7861")
    assert server_address(from_environment=True) == ("0.0.0.0", 7861)
    assert server_address(from_environment=False, port=9000) == ("127.0.0.1", 9000)
    monkeypatch.delenv("GRADIO_SERVER_NAME")
    monkeypatch.delenv("GRADIO_SERVER_PORT")
    assert server_address(from_environment=True, port=None) == ("0.0.0.0", None)  # a Space app: the Hub needs it
    root = Path(__file__).resolve().parents[1]
    for folder in (root / "spaces").iterdir():
        assert "from_environment=True" in (folder / "app.py").read_text(), folder
