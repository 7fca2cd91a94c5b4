"""A report that fits a terminal and can be repeated (#35): the default summary's width, the
provenance block, ``report --rerun``, and the paired columns of the exports."""
import json
import random

import pytest

import tough_ner
from tough_ner import TrainStats
from tough_ner.cli import main
from tough_ner.corpus import Corpus, write_conll
from tough_ner.demo import SYSTEMS, TRAIN, load_demo
from tough_ner.export import markdown, tables
from tough_ner.formatting import format_p
from tough_ner.present.provenance import KEY, NOT_INSTALLED, without_provenance
from tough_ner.report import WIDTH, format_text, run


def perturbed(tags, share, rng):
    """Tags with about ``share`` of the entity tokens' types changed or dropped: another system."""
    out = []
    for sentence in tags:
        changed = list(sentence)
        for i, tag in enumerate(changed):
            if tag != "O" and rng.random() < share:
                changed[i] = "O" if rng.random() < 0.5 else tag[:2] + rng.choice(["PER", "LOC", "ORG", "MISC"])
        out.append(changed)
    return out


@pytest.fixture(scope="module")
def five_systems():
    """A 5-system report over the demo test set, the systems made by perturbing the gold tags
    (long names, as files named by their folders would give)."""
    train, test = load_demo()
    rng = random.Random(3)
    names = [f"system-with-a-rather-long-name-{k}" for k in range(5)]
    predictions = [perturbed(test.tags, share, rng) for share in (0.05, 0.1, 0.2, 0.3, 0.5)]
    return run(TrainStats.from_corpus(train), Corpus(test.tokens, test.tags, predictions), names, bootstrap=200)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    assert main(["report", "--out-dir", str(folder), "--quiet"]) == 0
    return folder, json.loads((folder / "report.json").read_text(encoding="utf-8"))


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_the_default_summary_fits_100_columns_and_wide_does_not(demo, five_systems, capsys):
    _, report = demo
    for results in (report["results"], five_systems):
        for full in (False, True):
            text = format_text(results, full=full)
            assert widest(text) <= WIDTH, [line for line in text.splitlines() if len(line) > WIDTH][:3]
        assert widest(format_text(results, wide=True)) > WIDTH  # the long form is still there
    # 5 systems: every system's F1 cell is printed (in blocks), each name once in the legend
    text = format_text(five_systems)
    row = next(r for r in five_systems["summary"]["rows"] if r["key"] == "f1")
    for k, name in enumerate(five_systems["summary"]["systems"]):
        assert f"{row['values'][name]:.4f}" in text and f"S{k + 1} = {name}" in text
    # the command prints the same text
    assert main(["report", "--quiet", "--resamples", "50", "--out-dir", str(demo[0] / "again")]) == 0
    assert widest(capsys.readouterr().out) <= WIDTH


def test_the_provenance_block_records_how_the_report_was_made(demo):
    folder, report = demo
    block = report[KEY]
    assert block["command"] == ["tough-ner", "report", "--out-dir", str(folder), "--quiet"]
    assert block["versions"]["tough-ner"] == tough_ner.__version__ == report["tough_ner_version"]
    assert set(block["versions"]) == {"tough-ner", "python", "numpy", "evaluate", "datasets"}
    assert all(v and v != NOT_INSTALLED for k, v in block["versions"].items() if k in ("python", "numpy"))
    assert block["time"].endswith("+00:00") and block["platform"]
    assert report["options"]["seed"] == 0 and all(len(report["inputs"][k]["sha256"]) == 64 for k in ("train", "test"))
    page = (folder / "report.html").read_text(encoding="utf-8")
    footer = page[page.index("<footer id='provenance'>"):]
    assert "tough-ner report --out-dir" in footer and report["inputs"]["test"]["sha256"] in footer
    assert block["time"] in footer and "numpy " + block["versions"]["numpy"] in footer
    # what a comparison of two runs leaves out: the block, the footer; nothing else
    assert KEY not in without_provenance(report) and set(report) - set(without_provenance(report)) == {KEY}
    assert "<footer id='provenance'>" not in without_provenance(page)
    assert len(page) - len(without_provenance(page)) == len(footer[:footer.index("</footer>") + 9])


def test_rerun_of_the_demo_finds_the_same_results(demo, capsys):
    folder, _ = demo
    assert main(["report", "--rerun", str(folder / "report.json")]) == 0
    assert capsys.readouterr().out.startswith(f"rerun of {folder / 'report.json'}: the results are identical")


def test_rerun_names_a_changed_or_missing_input_and_a_different_result(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the recorded paths are relative, as typed
    _, test = load_demo()
    gold = [["O"] * len(s) for s in test.tags]
    write_conll("test.conll", test.tokens, test.tags)
    for name, predictions in zip(SYSTEMS, test.predictions):
        write_conll(f"{name}.conll", test.tokens, test.tags, predictions)
    assert main(["report", "--quiet", "--resamples", "20", "--train", str(TRAIN), "--test", "test.conll",
                 "--pred", f"{SYSTEMS[0]}.conll", "--pred", f"{SYSTEMS[1]}.conll", "--json", "r.json"]) == 0
    capsys.readouterr()
    assert main(["report", "--rerun", "r.json"]) == 0
    assert "identical" in capsys.readouterr().out
    # a stored result that is not what the inputs give: exit status 1, the place named
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    report["results"]["systems"][SYSTEMS[0]]["tmr"]["f1"] = 0.5
    (tmp_path / "tampered.json").write_text(json.dumps(report), encoding="utf-8")
    assert main(["report", "--rerun", "tampered.json"]) == 1
    out = capsys.readouterr().out
    assert "the results differ" in out and f"results.systems.{SYSTEMS[0]}.tmr.f1: 0.5 in the report" in out
    # a prediction file changed since: an error naming it, before any work
    write_conll(f"{SYSTEMS[1]}.conll", test.tokens, test.tags, gold)
    assert main(["report", "--rerun", "r.json"]) == 2
    assert f"the input {SYSTEMS[1]}.conll is not the file the report read" in capsys.readouterr().err
    (tmp_path / f"{SYSTEMS[1]}.conll").unlink()
    assert main(["report", "--rerun", "r.json"]) == 2
    assert f"the input {SYSTEMS[1]}.conll is missing" in capsys.readouterr().err
    # a JSON without the block
    del report[KEY]
    (tmp_path / "old.json").write_text(json.dumps(report), encoding="utf-8")
    assert main(["report", "--rerun", "old.json"]) == 2
    assert "no command line" in capsys.readouterr().err


def test_exports_carry_each_pairs_stored_difference_interval_and_p(demo, five_systems):
    _, report = demo
    results = report["results"]
    for made in (results, five_systems):
        pairs = [tuple(p) for p in made["statistics"]["pairs"]]
        headline = tables(made)[0]
        order = made["summary"]["systems"]
        assert headline.columns[2 + len(order):] == [c for a, b in pairs for c in (
            f"{a} - {b} [CI]", "Holm p" + (f" {a} - {b}" if len(pairs) > 1 else ""))]
        for cells, row in zip(headline.rows, made["summary"]["rows"]):
            for k, (a, b) in enumerate(pairs):
                difference, p = cells[2 + len(order) + 2 * k:4 + len(order) + 2 * k]
                test = next(t for t in row["tests"] if {t["a"], t["b"]} == {a, b})
                sign = 1 if (test["a"], test["b"]) == (a, b) else -1
                assert difference.value == pytest.approx(sign * test["difference"], nan_ok=True)
                assert sorted(difference.ci) == pytest.approx(sorted(sign * v for v in test["ci"]))
                assert difference.bold == test["significant"]
                assert p.value == format_p(test["p_adjusted"])[2:]
            # the small-n mark of the HTML: † on a value whose n is under 30
            for s, cell in zip(order, cells[2:2 + len(order)]):
                assert cell.small == row["small"][s]
    text = markdown(results)
    row = next(r for r in results["summary"]["rows"] if r["key"] == "recall_unseen_type")
    assert row["small"] and text.count("†") >= 2
    test = row["tests"][0]
    a, b = results["statistics"]["pairs"][0]
    sign = 1 if (test["a"], test["b"]) == (a, b) else -1
    line = next(line for line in text.splitlines() if line.startswith("| TMR recall unseen type"))
    assert f"| {sign * test['difference']:+.4f} [" in line and line.endswith(f"| {format_p(test['p_adjusted'])[2:]} |")
    # the subset tables: each key's stored test, read
    hardeval_table = next(t for t in tables(results) if t.label == "hardeval")
    stored = results["tests"]["hardeval"]["ter_unseen"]["tests"][0]
    unseen = next(cells for cells in hardeval_table.rows if cells[0].value == "unseen")
    assert abs(unseen[-2].value) == pytest.approx(abs(stored["difference"]))
    assert unseen[-1].value == format_p(stored["p_adjusted"])[2:]
