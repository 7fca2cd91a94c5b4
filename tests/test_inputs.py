"""Inputs checked against each other (issue #40): a report's prediction files must hold the
--test file's tokens and gold tags; a system equal to the gold standard is warned about; the
error summary counts each side's outcomes apart, so they reconcile with the gold mentions."""
import html
import json
import re

from tough_ner import Batch, TrainStats, tmr
from tough_ner.checks import first_difference, identical_to_gold
from tough_ner.cli import main
from tough_ner.corpus import write_conll
from tough_ner.demo import SYSTEMS, TRAIN, load_demo
from tough_ner.errors import error_rows, outcome_counts

TOKENS = [["John", "lives", "in", "Paris"], ["Anna", "Smith", "works", "at", "Acme"], ["Rome", "is", "old"]]
GOLD = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "I-PER", "O", "O", "B-ORG"], ["B-LOC", "O", "O"]]
PRED = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "B-PER", "O", "O", "B-ORG"], ["B-ORG", "O", "O"]]


def conll(path, *columns):
    write_conll(path, *columns)
    return str(path)


def report(test, *preds, options=()):
    return main(["report", "--train", str(TRAIN), "--test", test, *[a for p in preds for a in ("--pred", p)],
                 "--bootstrap", "0", "--quiet", *options])


def error_line(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_a_prediction_file_given_as_test_is_an_error_naming_both_files_and_the_first_difference(tmp_path, capsys):
    a = conll(tmp_path / "a.conll", TOKENS, GOLD, PRED)
    b = conll(tmp_path / "b.conll", TOKENS, GOLD, GOLD)
    assert report(a, b) == 2  # a's predictions (its last column) taken as the gold
    message = error_line(capsys)
    assert f"{b} does not hold the tokens and gold tags of --test {a}" in message
    assert f"sentence 2, token 2: gold 'I-PER' in {b}, 'B-PER' in {a}" in message
    assert "was a prediction file given as --test?" in message


def test_a_gold_column_differing_in_sentence_2_names_sentence_2(tmp_path, capsys):
    gold = conll(tmp_path / "gold.conll", TOKENS, GOLD)
    other = [GOLD[0], GOLD[1][:4] + ["B-LOC"], GOLD[2]]
    pred = conll(tmp_path / "p.conll", TOKENS, other, PRED)
    assert report(gold, pred) == 2
    assert f"sentence 2, token 5: gold 'B-LOC' in {pred}, 'B-ORG' in {gold}" in error_line(capsys)


def test_the_gold_column_chosen_by_columns_is_the_one_compared(tmp_path, capsys):
    gold = conll(tmp_path / "gold.conll", TOKENS, GOLD)
    pred = conll(tmp_path / "p.conll", TOKENS, GOLD, PRED)
    assert report(gold, pred, options=["--columns", "0,2,1"]) == 2  # the predictions as gold
    assert f"sentence 2, token 2: gold 'B-PER' in {pred}, 'I-PER' in {gold}" in error_line(capsys)


def test_two_column_files_have_no_gold_but_their_tokens_are_checked(tmp_path, capsys):
    gold = conll(tmp_path / "gold.conll", TOKENS, GOLD)
    tokens = [TOKENS[0], TOKENS[1], ["Roma", "is", "old"]]
    pred = conll(tmp_path / "p.conll", tokens, PRED)
    assert report(gold, pred) == 2
    assert f"sentence 3, token 1: token 'Roma' in {pred}, 'Rome' in {gold}" in error_line(capsys)


def test_first_difference_names_sentence_lengths_and_counts():
    assert first_difference("a", "b", token=(TOKENS, TOKENS), gold=(GOLD, GOLD)) is None
    assert first_difference("a", "b", token=(TOKENS, TOKENS), gold=(None, PRED)) is None  # no gold: skipped
    assert first_difference("a", "b", token=(TOKENS[:1] + [TOKENS[1][:3]], TOKENS[:2])) == \
        "sentence 2: 3 tokens in a, 5 in b"
    assert first_difference("a", "b", token=(TOKENS[:2], TOKENS)) == "a holds 2 sentences, b 3"
    # tokens before gold tags within a sentence; the earlier sentence first
    assert first_difference("a", "b", token=(TOKENS, [TOKENS[0], TOKENS[1], ["Roma", "is", "old"]]),
                            gold=(GOLD, PRED)) == "sentence 2, token 2: gold 'I-PER' in a, 'B-PER' in b"


def test_report_with_a_three_and_a_two_column_file_and_a_system_equal_to_the_gold(tmp_path, capsys):
    """Both prediction file forms still work; a system whose predictions are the gold tags is
    warned about in the results, the terminal text and the HTML page."""
    _, test = load_demo()
    gold = conll(tmp_path / "gold.conll", test.tokens, test.tags)
    three = conll(tmp_path / "three.conll", test.tokens, test.tags, test.predictions[0])
    two = conll(tmp_path / "two.conll", test.tokens, test.predictions[1])
    perfect = conll(tmp_path / "perfect.conll", test.tokens, test.tags)
    out = tmp_path / "out"
    assert report(gold, three, two, perfect,
                  options=["--json", str(out / "r.json"), "--html", str(out / "r.html")]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "r.json").read_text())["results"]
    expected = "perfect's predictions are identical to the gold standard: did you pass a prediction file as --test?"
    assert [w for w in results["warnings"] if "identical" in w] == [expected]
    assert f"warning: {expected}" in " ".join(printed.split())  # the terminal wraps it at 100 columns
    assert expected in html.unescape((out / "r.html").read_text())
    stats = TrainStats.from_conll(TRAIN)
    for name, tags in (("three", test.predictions[0]), ("two", test.predictions[1])):
        assert results["systems"][name]["tmr"]["f1"] == tmr(stats, Batch(test.tokens, test.tags, tags))["f1"]


def test_identical_to_gold_warns_only_for_an_exact_copy_with_entities():
    copy, close = Batch(TOKENS, GOLD, GOLD), Batch(TOKENS, GOLD, PRED)
    nothing = Batch([["a", "b"]], [["O", "O"]], [["O", "O"]])  # no entity to find: nothing to warn about
    assert identical_to_gold({"copy": copy, "close": close, "nothing": nothing}) == [
        "copy's predictions are identical to the gold standard: did you pass a prediction file as --test?"]


# ---- error summary counts that reconcile --------------------------------------------------
def test_gold_outcomes_sum_to_the_gold_mentions_and_extra_predictions_are_counted_apart():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    extra = 0
    for i, name in enumerate(SYSTEMS):
        batch = Batch(test.tokens, test.tags, test.predictions[i])
        rows = error_rows(stats, batch, name)
        counts = outcome_counts(rows)
        assert sum(counts["gold"].values()) == sum(map(len, batch.gold_spans))
        predicted = [r for r in rows if r["side"] == "predicted"]
        assert sum(counts["predicted"].values()) == len(predicted)
        assert counts["predicted"]["wrong boundary"] == sum(r["outcome"] == "wrong boundary" for r in predicted)
        # every predicted entity is some gold entity's match or an extra prediction
        matched = {(r["sentence"], r["predicted_start"], r["predicted_end"]) for r in rows
                   if r["side"] == "gold" and r["predicted_type"]}
        assert len(matched) + len(predicted) == sum(map(len, batch.pred_spans))
        extra += counts["predicted"]["wrong boundary"]
    assert extra > 0  # the demo has extra overlapping predictions: the case the sides keep apart


def test_the_html_error_summary_reconciles_with_the_gold_mentions(tmp_path):
    _, test = load_demo()
    gold = conll(tmp_path / "gold.conll", test.tokens, test.tags)
    preds = [conll(tmp_path / f"{name}.conll", test.tokens, test.predictions[i]) for i, name in enumerate(SYSTEMS)]
    assert report(gold, *preds, options=["--html", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    table = re.search(r"<table id='error-summary'>(.*?)</table>", page, re.S).group(1)
    header = [re.sub("<[^>]+>", "", h) for h in re.findall(r"<th>(.*?)</th>", table)]
    assert header == ["system", "gold mentions", "correct", "wrong type", "wrong boundary", "missed",
                      "extra predictions overlapping a gold entity", "spurious"]
    n_gold = sum(map(len, Batch(test.tokens, test.tags).gold_spans))
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr><td>.*?</tr>", table)]
    assert [row[0] for row in rows] == list(SYSTEMS)
    for row in rows:
        numbers = list(map(int, row[1:]))
        assert numbers[0] == sum(numbers[1:5]) == n_gold
    assert "sum to the gold mentions" in page and "counted apart" in page


def test_a_prediction_file_cut_short_is_said_to_be_so(tmp_path, capsys):
    """Fewer tokens or sentences than the test set: the hint is a file cut short (not a
    prediction file given as --test, which has the test's tokens)."""
    gold = conll(tmp_path / "gold.conll", TOKENS, GOLD)
    short = conll(tmp_path / "short.conll", [TOKENS[0], TOKENS[1][:3]], [GOLD[0], GOLD[1][:3]],
                  [PRED[0], PRED[1][:3]])
    assert report(gold, short) == 2
    message = error_line(capsys)
    assert "is one of them cut short, or of another test set?" in message and "given as --test" not in message
