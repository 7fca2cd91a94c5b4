"""Presentation: glossary, bucket labels, error table, exports, training-data warnings, names, plots."""
import csv
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tough_ner import Batch, TrainStats, glossary
from tough_ner.buckets import ATTRIBUTES, bucket_f1
from tough_ner.checks import REFERENCE_NOTE, training_data_warnings
from tough_ner.cli import main
from tough_ner.cli.report import system_names
from tough_ner.corpus import write_conll
from tough_ner.demo import TRAIN, load_demo, load_demo_nrb
from tough_ner.errors import COLUMNS, error_rows, error_table, outcome_counts, summary, write
from tough_ner.export import latex, markdown, tables
from tough_ner.labels import bucket_label, percent
from tough_ner.register import METRICS
from tough_ner.core.rows import plain
from tough_ner.report import METHODS, run

from conftest import need

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return TrainStats.from_corpus(train), test


@pytest.fixture(scope="module")
def demo_results(demo):
    stats, test = demo
    from tough_ner.demo import demo_attacks
    return run(stats, test, names=["memorizer", "contextual"], nrb_sets=load_demo_nrb(), type_map="conll",
               attacked=demo_attacks(stats, test), bootstrap=0)


# ---- glossary -------------------------------------------------------------------------------
def card_keys(name, stats, test):
    """The flat keys a metric returns (as the card test computes them)."""
    from tough_ner.nrb import nrb
    from tough_ner.rockner import rockner
    if name == "nrb":
        a, b = load_demo_nrb()
        batch = Batch(a.tokens + b.tokens, a.tags + b.tags, a.predictions[0] + b.predictions[0])
        portion = ["nrb"] * len(a.tokens) + ["wts"] * len(b.tokens)
        return {**nrb(batch, "conll", stats=stats), **nrb(batch, "conll", portion, stats)}
    batch = Batch(test.tokens, test.tags, test.predictions[0])
    if name == "rockner":
        return rockner(batch, batch)
    return METHODS[name](stats, batch)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_output_key_of_every_card_is_explained_by_the_glossary(name, demo):
    keys = card_keys(name, *demo)  # test_cards checks the card lists them; here the glossary explains them
    for key in keys:
        terms = glossary.terms_of(key)
        assert terms and all(t in glossary.TERMS for t in terms), key
        assert glossary.explain(key).strip()


def test_explain_names_the_parts_of_a_key():
    assert glossary.terms_of("ter_unseen_I") == ["ter", "unseen_I"]
    assert glossary.terms_of("recall_tcm_unseen") == ["recall", "tcm_unseen"]
    assert glossary.terms_of("eLen_2_f1") == ["f1", "eLen"]
    assert glossary.terms_of("tag_LOC_recall") == ["recall", "tag"]
    assert glossary.terms_of("nrb_n_type_errors") == ["n", "nrb", "type_errors"]
    assert glossary.terms_of("attacked_overlap_wrong_type_d2") == ["attacked", "overlap_wrong_type_d2"]
    text = glossary.explain("eLen_2_f1")
    assert "entity length" in text and "bucket 2" in text
    with pytest.raises(KeyError, match="did you mean ter_unseen"):
        glossary.explain("ter_unsen")


def test_every_term_the_glossary_lists_can_be_explained_by_its_name():
    """``tough-ner explain`` lists the terms by name ("TER", "macro average"): each name, in
    any case, explains that term in its one line."""
    for term, (name, line) in glossary.TERMS.items():
        for asked in (name, name.upper(), term):
            assert glossary.explain(asked) == f"{name}: {line}", asked
    with pytest.raises(KeyError, match=r"did you mean ter_unseen, unseen, ter_unseen_O\?"):
        glossary.explain("Ter unsen")


def test_explain_command(capsys):
    assert main(["explain", "recall_unseen_type"]) == 0
    out = capsys.readouterr().out
    assert "unseen-type" in out and "never of this type" in out
    assert main(["explain"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(glossary.TERMS)
    assert main(["explain", "nonsense_key"]) == 2


# ---- bucket labels --------------------------------------------------------------------------
def test_bucket_labels_in_words():
    totals = {"mentions": 1000, "tokens": 5000}
    assert bucket_label("eLen", [1.0, 1.0]) == "1 token"
    assert bucket_label("eLen", [2.0, 2.0]) == "2 tokens"
    assert bucket_label("eLen", [4.0, math.inf]) == "≥ 4 tokens"
    assert bucket_label("sLen", [-math.inf, 9.0]) == "≤ 9 tokens"
    assert bucket_label("sLen", [9.0, 11.0]) == "10–11 tokens"
    assert bucket_label("sLen", [11.0, 11.0]) == "empty (11, 11]"  # a cut on one value: no entity fits
    assert bucket_label("eFre", [0.0, 0.0], totals) == "unseen in training"
    assert bucket_label("eFre", [0.0, 0.003], totals) == "seen 1–3 times"
    assert bucket_label("eFre", [0.003, math.inf], totals) == "seen ≥ 4 times"
    assert bucket_label("tFre", [0.0002, 0.0002 * 7], totals) == "seen 2–7 times"
    assert bucket_label("eCon", [1.0, 1.0]) == "label-consistent (1.0)"
    assert bucket_label("tCon", [0.5, 0.8]) == "consistent 50–80%"
    assert bucket_label("oDen", [0.0667, 0.125]) == "6.7–12% unseen words"
    assert bucket_label("tag", "LOC") == "LOC"
    assert [percent(v) for v in (0, 0.0042, 0.0667, 0.5, 1)] == ["0%", "0.42%", "6.7%", "50%", "100%"]


def test_frequency_buckets_count_training_mentions_on_conll(conll_stats, conll_test):
    """eFre = training mentions with the text / all: the labels' counts are those mentions."""
    batch = Batch(conll_test.tokens, conll_test.tags, conll_test.tags)
    rows = bucket_f1(conll_stats, batch, detailed=True, bootstrap=0)["buckets"]["eFre"]
    totals = {"mentions": conll_stats.n_mentions, "tokens": conll_stats.n_tokens}
    labels = [bucket_label("eFre", r["interval"], totals) for r in rows]
    assert labels[0] == "unseen in training" and rows[0]["n_gold"] == 2600  # = TMR unseen-tokens (README)
    counts = Counter(conll_stats.mention_text_counts.get(" ".join(conll_test.tokens[s][a:b]), 0)
                     for s, spans in enumerate(Batch(conll_test.tokens, conll_test.tags).gold_spans)
                     for a, b, _ in spans)
    for label, row in zip(labels[1:], rows[1:]):
        low, high = re.match(r"seen (\d+)(?:–(\d+))? times|seen ≥ (\d+) times", label).groups()[:2] \
            if "≥" not in label else (re.search(r"(\d+)", label).group(1), None)
        inside = sum(n for c, n in counts.items() if int(low) <= c and (high is None or c <= int(high)))
        assert inside == row["n_gold"], label


# ---- error table ----------------------------------------------------------------------------
TRAIN_FIXTURE = ([["John", "lives", "in", "Paris", "."]], [["B-PER", "O", "O", "B-LOC", "O"]])
TOKENS = [["John", "met", "Anna", "Smith", "in", "New", "York", "today"], ["Paris", "is", "big"],
          ["Rome", "and", "Oslo"]]
GOLD = [["B-PER", "O", "B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O"], ["B-LOC", "O", "O"],
        ["B-LOC", "I-LOC", "I-LOC"]]
PRED = [["B-PER", "O", "B-PER", "O", "O", "B-ORG", "I-ORG", "B-MISC"], ["O", "O", "O"],
        ["B-LOC", "O", "B-LOC"]]


def test_error_rows_on_a_hand_made_batch():
    stats = TrainStats.from_lists(*TRAIN_FIXTURE)
    rows = error_rows(stats, Batch(TOKENS, GOLD, PRED), "sys", documents=[0, 0, 1])
    table = [(r["side"], r["sentence"], r["text"], r["gold_type"], r["predicted_type"], r["outcome"], r["overlap"])
             for r in rows]
    assert table == [
        ("gold", 0, "John", "PER", "PER", "correct", 1),
        ("gold", 0, "Anna Smith", "PER", "PER", "wrong boundary", 1),
        ("gold", 0, "New York", "LOC", "ORG", "wrong type", 2),
        ("predicted", 0, "today", "", "MISC", "spurious", 0),
        ("gold", 1, "Paris", "LOC", "", "missed", 0),
        ("gold", 2, "Rome and Oslo", "LOC", "LOC", "wrong boundary", 1),  # the leftmost of two equal matches
        ("predicted", 2, "Oslo", "LOC", "LOC", "wrong boundary", 1),  # the other one gets its own row
    ]
    assert [r["document"] for r in rows] == [0, 0, 0, 0, 0, 1, 1]
    john, anna, paris = rows[0], rows[1], rows[4]
    assert (john["seen"], john["unseen_tokens"], anna["unseen_tokens"], paris["seen"]) == (True, False, True, True)
    assert anna["n_unseen_words"] == 2 and anna["hard_words"] == "Anna (unseen-I), Smith (unseen-I)"
    assert anna["context"] == "John met [Anna Smith] in New York today"
    assert rows[3]["seen"] is None  # a spurious prediction is in no mention subset
    assert john["bucket_eLen"] == "1 token" and anna["bucket_eLen"] == "2 tokens" and john["bucket_tag"] == "PER"
    assert john["bucket_eFre"] == "seen 1 time" and anna["bucket_eFre"] == "unseen in training"
    assert list(rows[0]) == list(COLUMNS) or set(rows[0]) == set(COLUMNS)
    # gold outcomes sum to the 5 gold entities; the unmatched "Oslo" and "today" are counted apart
    assert summary(rows) == {"sys": {"gold": {"correct": 1, "wrong type": 1, "wrong boundary": 2, "missed": 1},
                                     "predicted": {"wrong boundary": 1, "spurious": 1}}}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]), min_size=1, max_size=8),
                min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_every_gold_and_predicted_entity_is_accounted_for(gold, rng):
    pred = [[rng.choice(["O", "B-PER", "I-PER", "B-LOC"]) for _ in s] for s in gold]
    tokens = [[f"w{rng.randint(0, 5)}" for _ in s] for s in gold]
    stats = TrainStats.from_lists(*TRAIN_FIXTURE)
    batch = Batch(tokens, gold, pred)
    rows = error_rows(stats, batch)
    gold_rows = [r for r in rows if r["side"] == "gold"]
    assert len(gold_rows) == sum(map(len, batch.gold_spans)) == sum(outcome_counts(rows)["gold"].values())
    correct = sum(r["outcome"] == "correct" for r in gold_rows)
    from tough_ner.scoring import span_scores
    scores = span_scores(batch)
    assert correct == round(scores["recall"] * len(gold_rows)) if gold_rows else correct == 0
    # every predicted entity is a gold row's match or has its own row
    # (a prediction may be the closest match of several gold entities, as in RockNER's analysis)
    covered = {(r["sentence"], r["predicted_start"], r["predicted_end"]) for r in rows if r["predicted_type"]}
    assert len(covered) == sum(map(len, batch.pred_spans))
    assert len([r for r in rows if r["side"] == "predicted"]) == len(covered - {
        (r["sentence"], r["predicted_start"], r["predicted_end"]) for r in gold_rows if r["predicted_type"]})
    assert all(r["overlap"] == 0 for r in rows if r["outcome"] in ("missed", "spurious"))


def test_error_rows_take_the_documents_of_the_corpus(tmp_path):
    from tough_ner import read_conll
    path = tmp_path / "docs.conll"
    path.write_text("-DOCSTART- O O\n\nAnn B-PER B-PER\n\nBo B-PER O\n\n-DOCSTART- O O\n\nCy B-LOC B-LOC\n")
    corpus = read_conll(path, n_predictions=1)
    rows = error_rows(TrainStats.from_lists(*TRAIN_FIXTURE),
                      Batch(corpus.tokens, corpus.tags, corpus.predictions[0], corpus.documents))
    assert [(r["text"], r["document"], r["outcome"]) for r in rows] == [("Ann", 0, "correct"), ("Bo", 0, "missed"),
                                                                        ("Cy", 1, "correct")]


def test_error_table_is_a_dataset_and_writes_csv_and_jsonl(tmp_path):
    need("datasets")
    stats = TrainStats.from_lists(*TRAIN_FIXTURE)
    batch = Batch(TOKENS, GOLD, PRED)
    table = error_table(stats, batch, "sys")
    assert table.column_names == list(COLUMNS) and len(table) == 7
    assert table.to_pandas()["outcome"].tolist()[:3] == ["correct", "wrong boundary", "wrong type"]
    rows = error_rows(stats, batch, "sys")
    write(rows, tmp_path / "e.csv")
    write(rows, tmp_path / "e.jsonl")
    with open(tmp_path / "e.csv", newline="", encoding="utf-8") as handle:
        read = list(csv.DictReader(handle))
    assert [r["text"] for r in read] == [r["text"] for r in rows] and list(read[0]) == list(COLUMNS)
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == rows
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tough-ner-")]  # no temporary file left
    with pytest.raises(ValueError, match=".csv or .jsonl"):
        write(rows, tmp_path / "e.txt")


# ---- exports --------------------------------------------------------------------------------
def test_latex_tables_have_booktabs_structure_n_columns_and_bold_winners(demo_results):
    results = json.loads(json.dumps(demo_results, default=plain))  # as read back from JSON
    row = next(r for r in results["summary"]["rows"] if r["key"] == "f1")
    row["ci"] = {"contextual": [0.8, 0.87], "memorizer": [0.44, 0.52]}
    row["best"] = ["contextual"]  # the report's tests decide; the exporter bolds what it is given
    text = latex(results)
    blocks = re.findall(r"\\begin\{table\}.*?\\end\{table\}", text, re.S)
    assert len(blocks) == len(tables(results)) == 7  # headline, HardEval, TMR, buckets, per type, NRB, RockNER
    for block in blocks:
        spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", block).group(1)
        body = block.split("\\midrule")[1].split("\\bottomrule")[0].strip().splitlines()
        header = block.split("\\toprule")[1].split("\\midrule")[0].strip()
        assert block.index("\\toprule") < block.index("\\midrule") < block.index("\\bottomrule")
        assert " & n & " in header or header.startswith("n &") or "& n &" in header
        for line in [header] + body:
            assert line.endswith("\\\\") and len(re.split(r"(?<!\\)&", line)) == len(spec)
        assert "_" not in block.replace("\\_", "")  # escaped
    assert "0.4808 [0.4400, 0.5200] & \\textbf{0.8383 [0.8000, 0.8700]}" in text  # systems in the order given
    assert "precision ($\\uparrow$) & 188 / 211 & 0.5319 & 0.8720" in text  # n: each one's predictions; not bold


def test_markdown_tables_are_well_formed(demo_results, tmp_path):
    results = json.loads(json.dumps(demo_results, default=plain))
    next(r for r in results["summary"]["rows"] if r["key"] == "f1")["best"] = ["contextual"]
    text = markdown(results)
    for block in text.strip().split("\n\n### "):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in lines}
        assert len(widths) == 1 and len(lines) >= 3
        assert "| n |" in lines[0]
    assert "| F1 (↑) | 228 | 0.4808 | **0.8383** |" in text


def test_report_command_writes_errors_latex_and_markdown(tmp_path, demo, capsys):
    stats, test = demo
    write_conll(tmp_path / "gold.conll", test.tokens, test.tags)
    write_conll(tmp_path / "a.conll", test.tokens, test.predictions[0])
    (tmp_path / "other").mkdir()
    write_conll(tmp_path / "other" / "a.conll", test.tokens, test.predictions[1])
    out = tmp_path / "out"
    assert main(["report", "--train", str(TRAIN), "--test", str(tmp_path / "gold.conll"), "--pred",
                 f"mem={tmp_path / 'a.conll'}", "--pred", str(tmp_path / "other" / "a.conll"), "--json",
                 str(out / "r.json"), "--errors", str(out / "e.csv"), "--latex", str(out / "t.tex"), "--markdown",
                 str(out / "t.md"), "--bootstrap", "0", "--quiet"]) == 0
    report = json.loads((out / "r.json").read_text())
    assert list(report["results"]["systems"]) == ["mem", "a"]
    with open(out / "e.csv", newline="", encoding="utf-8") as handle:
        systems = Counter(row["system"] for row in csv.DictReader(handle))
    n_gold = sum(map(len, Batch(test.tokens, test.tags).gold_spans))
    assert systems["mem"] >= n_gold and systems["a"] >= n_gold
    assert "\\toprule" in (out / "t.tex").read_text() and "| measure | n |" in (out / "t.md").read_text()
    assert main(["report", "--train", str(TRAIN), "--test", str(tmp_path / "gold.conll"), "--pred",
                 str(tmp_path / "a.conll"), "--errors", str(out / "e.xlsx"), "--quiet"]) == 2


def test_system_names_default_to_unique_file_stems(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    for path in ("x/run.conll", "y/run.conll", "b.conll", "has=sign.conll"):
        (tmp_path / path).write_text("A O\n")
    paths = [str(tmp_path / p) for p in ("x/run.conll", "y/run.conll", "b.conll", "has=sign.conll")]
    assert [name for name, _ in system_names(paths)] == ["x/run", "y/run", "b", "has=sign"]
    assert system_names([f"flair={paths[2]}", paths[3]]) == [("flair", paths[2]), ("has=sign", paths[3])]
    # a name given twice names two runs of one system; a file given twice is an error
    assert system_names([f"flair={paths[0]}", f"flair={paths[1]}"]) == [("flair", paths[0]), ("flair", paths[1])]
    with pytest.raises(ValueError, match="given more than once"):
        system_names([f"flair={paths[0]}", f"elmo={paths[0]}"])


def test_run_takes_names_or_numbers_the_systems(demo):
    stats, test = demo
    assert list(run(stats, test, bootstrap=0)["systems"]) == ["system 1", "system 2"]
    with pytest.raises(ValueError, match="once"):
        run(stats, test, ["a", "b"], names=["c", "d"], bootstrap=0)


# ---- training-data warnings -----------------------------------------------------------------
def test_warning_when_the_training_data_is_not_the_systems(demo):
    stats, test = demo
    assert run(stats, test, names=["memorizer", "contextual"], bootstrap=0)["warnings"] == []
    # statistics of unrelated text: nothing in the test set was seen
    other = TrainStats.from_lists([["Zed", "walks", "."]] * 3, [["B-PER", "O", "O"]] * 3)
    warnings = run(other, test, names=["memorizer", "contextual"], bootstrap=0)["warnings"]
    assert len(warnings) == 1 and "0 of the 228 test mentions" in warnings[0]
    # a system that recalls unseen mentions better than seen ones (swap the subsets' hits)
    results = {"systems": {"s": {"tmr": {"n_mentions": 200, "n_seen": 100, "n_unseen_tokens": 90,
                                         "recall_seen": 0.6, "recall_unseen_tokens": 0.7}}}}
    assert "s recalls test mentions seen in training (0.600, n = 100)" in training_data_warnings(results)[0]
    results["systems"]["s"]["tmr"]["recall_seen"] = 0.9
    assert training_data_warnings(results) == []
    assert training_data_warnings(results, train_is_reference=True) == [REFERENCE_NOTE]


# ---- plots ----------------------------------------------------------------------------------
def test_plots_have_no_overlapping_tick_labels_and_mark_empty_and_zero_bars(demo_results):
    need("matplotlib")
    from tough_ner.html import _plotting, bucket_figure, fit_ticks, grouped_bars, legend_outside, overlapping

    plt = _plotting()
    figure = bucket_figure(plt, {s: demo_results["details"][s]["bucket_f1"] for s in demo_results["systems"]},
                           {"mentions": 656, "tokens": 3172})
    figure.canvas.draw()
    for ax in figure.axes:
        assert not overlapping(ax.get_xticklabels()), ax.get_title()
    # the demo's sLen bucket (11, 11], empty by construction, is left out, not drawn as "no entities"
    slen = next(ax for ax in figure.axes if ax.get_title() == "sLen")
    assert len(slen.get_xticklabels()) == 3 and not [t for t in slen.texts if t.get_text() == "no entities"]
    assert all("empty" not in t.get_text() for ax in figure.axes for t in ax.get_xticklabels())
    legend = figure.legends[0].get_window_extent()
    assert not any(legend.overlaps(ax.get_window_extent()) for ax in figure.axes)
    plt.close(figure)
    # many long labels (the per-type TMR chart on WNUT-16) end up rotated, not overlapping
    figure, ax = plt.subplots(figsize=(7, 2.6))
    groups = [f"{t} unseen" for t in ("corporation", "creative-work", "group", "location", "person", "product")] * 2
    grouped_bars(plt, ax, groups, {"a": [0.0, math.nan] + [0.5] * 10, "b": [0.3] * 12})
    legend_outside(ax)
    fit_ticks(figure)
    assert not overlapping(ax.get_xticklabels())
    assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())
    assert [t.get_text() for t in ax.texts] == ["empty"]  # NaN: marked; 0.0: a line at zero, not nothing
    zero_lines = [line for line in ax.lines if list(line.get_ydata()) == [0, 0]]
    assert len(zero_lines) == 1
    plt.close(figure)


WNUT_TYPES = ["corporation", "creative-work", "group", "location", "person", "product", "company", "facility",
              "geo-loc", "sportsteam"]


def synthetic_buckets(n, types, systems=("first system", "second system")):
    """Two systems' detailed bucket tables with n regular buckets per attribute and these tag types."""
    def row(interval, i, k):
        return {"interval": interval, "n_gold": 5 + 37 * i, "n_pred": 5 + 30 * i, "n_correct": 3 * i,
                "precision": 0.5, "recall": 0.5, "f1": ((i + k) % 7) / 7}
    shares = ("eDen", "oDen", "eCon", "tCon")
    return {s: {"buckets": {a: [row(t, i, k) for i, t in enumerate(types)] if a == "tag" else
                            [row([i / n, (i + 1) / n] if a in shares else [10.0 * i, 10.0 * i + 10], i, k)
                             for i in range(n)] for a in ATTRIBUTES}, "diagnostics": {}}
            for k, s in enumerate(systems)}


@pytest.mark.parametrize("n", [2, 10, 30])
def test_bucket_plot_labels_never_overlap_at_any_number_of_buckets(n):
    """WNUT-16 has 10 tag buckets; 30 buckets per attribute put the panels one a row."""
    need("matplotlib")
    from matplotlib.text import Text

    from tough_ner.html import _plotting, bucket_figure, overlapping

    plt = _plotting()
    types = [f"{t}{'-' + str(i // 10) if i >= 10 else ''}" for i, t in enumerate(WNUT_TYPES * 3)][:max(n, 2)]
    figure = bucket_figure(plt, synthetic_buckets(n, types), {"mentions": 1000, "tokens": 5000})
    figure.canvas.draw()
    texts = [t for t in figure.findobj(Text) if t.get_visible() and t.get_text()]
    assert not overlapping(texts, figure.canvas.get_renderer())  # ticks, titles, axis labels, legend
    tag = next(ax for ax in figure.axes if ax.get_title() == "tag")
    assert [t.get_text().split("\n")[0] for t in tag.get_xticklabels()] == types  # tag buckets named by type
    counts = [t.get_text().split("\n")[1] for t in tag.get_xticklabels()]
    assert counts == [f"n {5 + 37 * i}" for i in range(len(types))]  # gold entities under each name
    plt.close(figure)


def test_spaces_open_with_findings_that_claim_only_significant_differences():
    import html as html_module

    spaces = pytest.importorskip("tough_ner.spaces")
    train, test = spaces.demo_inputs("tmr")[:2]
    summary = html_module.unescape(spaces.score_tmr(train, test, "memorizer, contextual")[0])
    assert summary.index("**Findings**") < summary.index("| measure |")
    finding = next(line for line in summary.splitlines() if "significantly better" in line)
    assert finding.startswith("- contextual is significantly better than memorizer on ")
    assert "(+0.617, 95% CI [" in finding  # unseen-token recall, winner minus loser
    same = html_module.unescape(spaces.score_tmr(train, "\n".join(
        " ".join(line.split()[:3] + line.split()[2:3]) if line.strip() else line
        for line in test.splitlines()), "a, b")[0])
    assert "is significantly better than" not in same and "No significant difference" in same


def test_subset_tables_carry_the_reports_intervals_and_significant_winners(demo):
    stats, test = demo
    results = json.loads(json.dumps(run(stats, test, names=["memorizer", "contextual"], bootstrap=1000),
                                 default=plain))
    tested = results["tests"]["hardeval"]
    [hardeval_table] = [t for t in tables(results) if t.label == "hardeval"]
    for row in hardeval_table.rows:
        key = f"ter_{row[0].value}"
        for cell, system in zip(row[2:], results["summary"]["systems"]):
            assert list(cell.ci) == tested[key]["ci"][system] and cell.bold == (system in tested[key]["best"])
    # a win only where the method's Holm-adjusted test says so: the demo's 4 diff-O tokens decide nothing
    assert tested["ter_diff_O"]["best"] == [] and tested["ter_unseen"]["best"] == ["contextual"]
    [buckets] = [t for t in tables(results) if t.label == "buckets"]
    assert any(cell.bold for row in buckets.rows for cell in row[3:])
    assert all(cell.ci is not None for row in buckets.rows for cell in row[3:5])  # the systems' F1 (then A - B)
