# --- The command: read limits, inputs never overwritten, interrupts, small messages ---
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from conftest import at_work, command_usage, version_1_bytes

from tough_ner.core.corpus import ReadLimits, limits, read_conll, read_limits
from tough_ner.core.stats import TrainStats

COMMAND_ROOT = Path(__file__).resolve().parents[1]
COMMAND_DATA = COMMAND_ROOT / "tough_ner" / "data"
COMMAND_ENV = {**os.environ, "PYTHONPATH": str(COMMAND_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def command(*argv):
    """(exit status, stderr, peak memory in MB, CPU seconds) of the command ``argv`` in a child
    process (``conftest.command_usage``): its CPU time, not the wall time, which a loaded
    machine stretches (a bound on it failed at load 20)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        code, _, error, peak, seconds = command_usage(argv, folder, env=COMMAND_ENV)
    return code, error.strip(), peak, seconds


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def gold_and_prediction(tmp_path):
    """gold.conll (token gold) and pred.conll (token gold prediction) from the demo test set."""
    rows = [line.split() for line in (COMMAND_DATA / "demo_test.conll").read_text(encoding="utf-8").splitlines()]
    (tmp_path / "gold.conll").write_text("\n".join(" ".join(r[:2]) for r in rows) + "\n", encoding="utf-8")
    (tmp_path / "pred.conll").write_text("\n".join(" ".join(r[:3]) for r in rows) + "\n", encoding="utf-8")
    return tmp_path / "gold.conll", tmp_path / "pred.conll"


@pytest.mark.parametrize("reader", ["stats", "hardeval"])
def test_a_sparse_gigabyte_is_refused_as_one_long_line(tmp_path, reader):
    """1 GB of NUL bytes (a sparse file): one line longer than the line limit, refused in well
    under 5 s of CPU and 200 MB by the streamed training reader and by the reader of a test file
    read whole (it took 92 s: reading stops at the limit, so its work is the limit's, not the
    file's)."""
    sparse = tmp_path / "sparse.conll"
    with open(sparse, "wb") as handle:
        handle.truncate(1 << 30)
    argv = (["stats", "--train", sparse, "--out", tmp_path / "s.npz"] if reader == "stats" else
            ["hardeval", "--train", COMMAND_DATA / "demo_train.conll", "--test", sparse])
    code, error, peak, seconds = command(*argv)
    assert (code, error) == (2, f"tough-ner {reader}: {sparse}, line 1: longer than the line limit of 1 MiB "
                                f"(ReadLimits.line; --max-line-bytes)")
    assert peak < 200 and seconds < 5, (peak, seconds)


@pytest.mark.parametrize("reader", ["stats", "hardeval"])
def test_a_line_beyond_the_line_limit_is_refused_before_it_is_read_whole(tmp_path, reader):
    """A 24 MB line after a good sentence: the default limit (1 MiB) names it, at line 3, long
    before the line is in memory."""
    long = tmp_path / "long.conll"
    long.write_bytes(b"Ann B-PER B-PER\n\n" + b"x" * (24 << 20) + b" O O\n")
    argv = (["stats", "--train", long, "--out", tmp_path / "s.npz"] if reader == "stats" else
            ["hardeval", "--train", COMMAND_DATA / "demo_train.conll", "--test", long])
    code, error, peak, _ = command(*argv)
    assert (code, error) == (2, f"tough-ner {reader}: {long}, line 3: longer than the line limit of 1 MiB "
                                f"(ReadLimits.line; --max-line-bytes)")
    assert peak < 200, peak


def test_read_limits_are_options_with_the_documented_defaults(tmp_path, gold_and_prediction):
    from tough_ner.cli import READ_LIMITS

    defaults = ReadLimits()
    assert READ_LIMITS == {"line": "1 MiB", "sentence": "64 MiB", "file": "4 GiB"}
    assert (defaults.line, defaults.sentence, defaults.file) == (1 << 20, 64 << 20, 4 << 30)
    _, prediction = gold_and_prediction
    train = tmp_path / "train.conll"
    train.write_text("Ann B-PER\nLee I-PER\nleft O\n\n" + "a O\n" * 300 + "\n", encoding="utf-8")
    code, error, _, _ = command("stats", "--train", train, "--out", tmp_path / "s.npz", "--max-sentence-bytes", "1K")
    assert (code, error) == (2, f"tough-ner stats: {train}, line 5: a sentence longer than the sentence limit of "
                                f"1 KiB (ReadLimits.sentence; --max-sentence-bytes)")
    code, error, _, _ = command("hardeval", "--train", COMMAND_DATA / "demo_train.conll", "--test", prediction,
                                "--max-file-bytes", "2K")
    assert (code, error) == (2, f"tough-ner hardeval: {prediction}: larger than the file limit of 2 KiB for a "
                                f"file read whole (ReadLimits.file; --max-file-bytes)")
    code, error, _, _ = command("hardeval", "--train", COMMAND_DATA / "demo_train.conll", "--test", prediction,
                                "--max-line-bytes", "0")
    assert code == 2 and "argument --max-line-bytes: '0': give a size in bytes" in error
    assert command("hardeval", "--train", train, "--test", prediction, "--max-file-bytes", "1M")[0] == 0


def test_read_limits_hold_in_the_python_api_and_are_restored(tmp_path):
    path = tmp_path / "t.conll"
    path.write_text("Ann B-PER\nLee I-PER\n\n", encoding="utf-8")
    with limits(line=8):
        assert read_limits().line == 8
        with pytest.raises(ValueError, match=r"line 1: longer than the line limit of 8 bytes"):
            read_conll(path)
        with pytest.raises(ValueError, match=r"line 1: longer than the line limit of 8 bytes"):
            TrainStats.from_conll(path)
    assert read_limits() == ReadLimits() and len(read_conll(path)) == 1
    with pytest.raises(ValueError, match="read limit line must be a whole number of bytes >= 1"):
        ReadLimits(line=0)


def test_no_output_overwrites_an_input(tmp_path, gold_and_prediction):
    """stats --out onto --train, report --json onto a --pred file (also through another path to
    the same file), attack --out onto --test, two outputs at one path: one line, before any
    work, every file as it was."""
    gold, prediction = gold_and_prediction
    train = tmp_path / "train.conll"
    train.write_bytes((COMMAND_DATA / "demo_train.conll").read_bytes())
    before = {path: digest(path) for path in (gold, prediction, train)}
    other_path = tmp_path / "." / "sub" / ".." / "pred.conll"
    (tmp_path / "sub").mkdir()
    cases = [
        (["stats", "--train", train, "--out", train], f"--out {train} is the input --train {train}"),
        (["report", "--train", train, "--test", gold, "--pred", prediction, "--json", other_path],
         f"--json {other_path} is the input --pred {prediction}"),
        (["attack", "--test", gold, "--out", gold], f"--out {gold} is the input --test {gold}"),
        (["report", "--train", train, "--test", gold, "--pred", prediction, "--json", tmp_path / "r",
          "--html", tmp_path / "r"], f"--html {tmp_path / 'r'} is also the output --json {tmp_path / 'r'}"),
    ]
    for argv, message in cases:
        code, error, _, _ = command(*argv)
        assert code == 2 and error.startswith(f"tough-ner {argv[0]}: {message}"), error
    assert {path: digest(path) for path in before} == before
    assert not (tmp_path / "r").exists()


def test_no_file_written_beside_a_page_overwrites_an_input(tmp_path, gold_and_prediction, capsys):
    """--html report.html writes its error table beside it (report-errors.csv and .jsonl): an
    input lying there (a --pred file, CoNLL or JSON Lines) is refused before any work, and a
    study refuses an input where it would write a dataset's page, error table or its own files."""
    from tough_ner.cli import main

    def command(*argv):  # in this process: the refusal comes before any work
        code = main(list(map(str, argv)))
        return code, capsys.readouterr().err.strip(), None, None

    gold, prediction = gold_and_prediction
    train = COMMAND_DATA / "demo_train.conll"
    as_csv = tmp_path / "report-errors.csv"  # a CoNLL prediction file, whatever its name
    as_csv.write_bytes(prediction.read_bytes())
    rows = [line.split() for line in prediction.read_text(encoding="utf-8").split("\n\n") if line.strip()]
    as_jsonl = tmp_path / "page-errors.jsonl"
    as_jsonl.write_text("".join(json.dumps([row.split()[2] for row in block.splitlines()]) + "\n"
                                for block in prediction.read_text(encoding="utf-8").split("\n\n") if block.strip()),
                        encoding="utf-8")
    assert len(as_jsonl.read_text(encoding="utf-8").splitlines()) == len(rows)
    before = {path: digest(path) for path in (as_csv, as_jsonl)}
    cases = [(["--pred", as_csv, "--html", tmp_path / "report.html"], "report.html", as_csv),
             (["--pred", f"model={as_jsonl}", "--html", tmp_path / "page.html"], "page.html", as_jsonl)]
    for extra, page, taken in cases:
        code, error, _, _ = command("report", "--train", train, "--test", gold, "--quiet", *extra)
        assert (code, error) == (2, f"tough-ner report: the error table beside --html {tmp_path / page}: {taken} "
                                    f"is the input --pred {taken}: an input is never overwritten; choose another "
                                    f"output path")
        assert not (tmp_path / page).exists()
    # the same file through another path
    code, error, _, _ = command("report", "--train", train, "--test", gold, "--pred", as_csv, "--html",
                                tmp_path / "sub" / ".." / "report.html")
    assert code == 2 and error.endswith(f"is the input --pred {as_csv}: an input is never overwritten; choose "
                                        "another output path"), error
    out = tmp_path / "study"
    (out / "news").mkdir(parents=True)
    inside = {"page": out / "news" / "report-errors.csv", "table": out / "news" / "report.json",
              "own": out / "study.md"}
    for path in inside.values():
        path.write_bytes(prediction.read_bytes())
    before.update({path: digest(path) for path in inside.values()})
    for role, path in inside.items():
        spec = tmp_path / f"{role}.toml"
        spec.write_text(f'[[datasets]]\nname = "news"\ntrain = "{train}"\ntest = "{gold}"\n\n'
                        f'[systems.memorizer]\nnews = "{path}"\n', encoding="utf-8")
        code, error, _, _ = command("study", spec, "--out", out)
        assert (code, error) == (2, f"tough-ner study: --out {out}: {path} is the input system memorizer on news "
                                    f"{path}: an input is never overwritten; choose another output path")
    assert {path: digest(path) for path in before} == before
    assert sorted(p.name for p in out.rglob("*")) == ["news", "report-errors.csv", "report.json", "study.md"]


def test_small_messages_name_what_is_wrong(tmp_path, gold_and_prediction):
    _, prediction = gold_and_prediction
    code, error, _, _ = command("hardeval", "--train", COMMAND_DATA / "demo_train.conll", "--test", prediction,
                                "--seed", "-1")
    assert code == 2 and "argument --seed: '-1': give a whole number from 0 to 4294967295" in error
    missing = tmp_path / "no-such-folder" / "s.npz"
    code, error, _, _ = command("stats", "--train", COMMAND_DATA / "demo_train.conll", "--out", missing)
    assert (code, error) == (2, f"tough-ner stats: {missing}: no such folder {missing.parent}")


def test_evaluate_with_one_of_predictions_and_references_missing_says_which():
    from tough_ner.metrics.hardeval import Hardeval

    metric = Hardeval(train=str(COMMAND_DATA / "demo_train.conll"))
    tokens, tags = [["Ann", "left"]], [["B-PER", "O"]]
    with pytest.raises(ValueError, match=r"^predictions= is None but references= is given: pass both"):
        metric.compute(predictions=None, references=tags, tokens=tokens)
    with pytest.raises(ValueError, match=r"^references= is None but predictions= is given: pass both"):
        metric.compute(predictions=tags, references=None, tokens=tokens)


def test_an_interrupt_while_the_command_loads_is_one_line(monkeypatch, capsys):
    """Ctrl-C while a command group's modules load (the first ~0.25 s of a command): the same
    one line and status 130 as later, not a traceback."""
    import importlib

    from tough_ner import cli

    def interrupted(name, package=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert cli.main(["report", "--quiet"]) == 130
    assert capsys.readouterr().err == "tough-ner report: interrupted\n"


def _signalled(program: str, timeout: float = 60):
    """Run ``program`` in a Python process as the tough-ner script would (``sys.argv[0]`` names
    it); (exit status, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=COMMAND_ENV,
                          timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def test_an_interrupt_before_main_runs_is_one_line():
    """The tough-ner script imports ``tough_ner.cli`` before it calls ``main``: a Ctrl-C while
    that module and its imports load (argparse, ...) is the one line and status 130, not a
    traceback from the script's import line."""
    code, out, err = _signalled("import os, signal, sys, time\n"
                                "sys.argv = ['/usr/local/bin/tough-ner', 'report']\n"
                                "import tough_ner.cli\n"
                                "os.kill(os.getpid(), signal.SIGINT)\n"
                                "time.sleep(30)\n"
                                "print('not interrupted')")
    assert (code, out, err) == (130, "", "tough-ner report: interrupted\n")


def test_a_program_importing_the_command_keeps_its_own_interrupt_handling():
    """Only the tough-ner script gets the at-once handler: another program importing
    ``tough_ner.cli`` keeps Python's KeyboardInterrupt."""
    code, out, err = _signalled("import signal, tough_ner.cli\n"
                                "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    assert (code, out.strip()) == (0, "True"), err


def test_workers_spawned_from_the_script_and_programs_without_argv_keep_python_s_handling(tmp_path):
    """A worker that multiprocessing's "spawn" starts from the tough-ner script runs the
    script's imports again with its command line: it keeps Python's KeyboardInterrupt (its
    parent reports the interrupt, once), while the script itself takes the at-once handler.
    A program with an empty ``sys.argv`` can still import the command and run it in process."""
    script = tmp_path / "tough-ner"
    script.write_text("import multiprocessing, signal\n"
                      "from tough_ner.cli import main\n"
                      "if __name__ == '__main__':\n"
                      "    with multiprocessing.get_context('spawn').Pool(1) as pool:\n"
                      "        worker = pool.apply(signal.getsignal, (signal.SIGINT,))\n"
                      "    print(worker is signal.default_int_handler, signal.getsignal(signal.SIGINT).__name__)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=COMMAND_ENV, timeout=120)
    assert done.stdout.split() == ["True", "_interrupted_outside_work"], done.stderr[-2000:]
    code, out, err = _signalled("import sys\n"
                                "sys.argv = []\n"
                                "from tough_ner.cli import main\n"
                                "sys.exit(main(['explain', 'precision']))")
    assert code == 0 and out.startswith("precision: "), err


def test_an_interrupt_during_the_work_is_a_keyboard_interrupt_and_after_it_the_one_line():
    """While a command works, Ctrl-C raises KeyboardInterrupt (so that what it writes is cleaned
    up), not the at-once exit of the loading; once it is done, Ctrl-C (here: as the process
    ends) is the one line and 130 again, with the command's output written."""
    code, out, err = _signalled(
        "import os, signal, sys\n"
        "sys.argv = ['tough-ner', 'explain', 'precision']\n"
        "from tough_ner.cli import _process, main, tools\n"
        "shown = tools.cmd_explain\n"
        "def explain(args):\n"
        "    print('during:', signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
        "    return shown(args)\n"
        "tools.cmd_explain = explain\n"
        "ending = _process.exit_now\n"
        "def interrupted_at_the_end(code):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    ending(code)\n"
        "_process.exit_now = interrupted_at_the_end\n"
        "main()\n"
        "print('not interrupted')")
    assert code == 130 and err == "tough-ner explain: interrupted\n", (code, err)
    assert out.startswith("during: True\n") and "precision: share of predicted entities" in out and "not interrupted" not in out


def test_sigterm_ends_the_command_in_one_line_and_leaves_no_temporary_file(tmp_path):
    """SIGTERM in the middle of the demo report: status 143, one line, and no hidden temporary
    file of an output left in its folder."""
    out = tmp_path / "out"
    child = subprocess.Popen([sys.executable, "-m", "tough_ner.cli", "report", "--quiet", "--out-dir", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=COMMAND_ENV)
    at_work(child, 1.0, [signal.SIGTERM])  # its handler installed, a second of work done, however loaded the machine
    child.send_signal(signal.SIGTERM)
    _, error = child.communicate(timeout=60)
    if child.returncode == 0:
        pytest.skip("the report finished before the signal")
    assert (child.returncode, error.strip()) == (143, "tough-ner report: terminated")
    assert not [p.name for p in out.glob(".*.tmp")] if out.exists() else True


def test_write_atomic_removes_its_temporary_file_when_terminated(tmp_path, monkeypatch):
    from tough_ner import _util
    from tough_ner.cli import Terminated

    def terminated(descriptor):
        raise Terminated()

    monkeypatch.setattr(_util.os, "fsync", terminated)
    target = tmp_path / "stats.npz"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(Terminated):
        _util.write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["stats.npz"]


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from([b"", b"\r", b"a", b"ab O", b"abc B-X\r", b"x" * 9]), max_size=30),
       cuts=st.lists(st.integers(0, 400), max_size=6), line=st.integers(1, 10), sentence=st.integers(1, 40))
def test_the_read_guard_decides_the_same_whatever_the_blocks(lines, cuts, line, sentence):
    """Fed in one block or cut anywhere, the guard refuses the same text at the same line; a
    text is refused for its lines exactly when one is longer than the line limit, at the first."""
    from tough_ner.core.corpus import _Guard

    data = b"\n".join(lines) + b"\n"
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})

    def verdict(blocks, sentence_limit=sentence):
        guard = _Guard("t", ReadLimits(line=line, sentence=sentence_limit))
        try:
            for block in blocks:
                guard.feed(block)
        except ValueError as error:
            return str(error)
        return None

    whole = verdict([data])
    assert verdict([data[a:b] for a, b in zip(bounds, bounds[1:])]) == whole
    # without the sentence limit: the first line longer than the line limit
    first_long = next((k for k, text in enumerate(lines) if len(text) > line), None)
    alone = verdict([data], sentence_limit=10 ** 9)
    assert alone == (None if first_long is None else
                     f"t, line {first_long + 1}: longer than the line limit of {line} bytes (ReadLimits.line; "
                     f"--max-line-bytes)")


def test_a_reports_outputs_carry_one_run_id(tmp_path, gold_and_prediction):
    """The JSON, the HTML and the error table say which run wrote them: the same id for the
    same inputs and options (a rerun writes the same bytes, the provenance block aside: its
    time stamp), another one when an input changes."""
    import csv
    import json
    import re

    from tough_ner.cli import main
    from tough_ner.present.provenance import without_provenance

    gold, prediction = gold_and_prediction
    train = COMMAND_DATA / "demo_train.conll"

    def report(folder):
        argv = ["report", "--quiet", "--bootstrap", "0", "--train", train, "--test", gold, "--pred", prediction,
                "--json", folder / "r.json", "--html", folder / "r.html", "--errors", folder / "e.csv"]
        assert main(list(map(str, argv))) == 0
        page = (folder / "r.html").read_text(encoding="utf-8")
        with open(folder / "e.csv", newline="", encoding="utf-8") as handle:
            in_table = {row["run_id"] for row in csv.DictReader(handle)}
        found = json.loads((folder / "r.json").read_text())["run_id"], re.search(r"id='run-id'>(\w+)<", page)[1]
        assert in_table == {found[0]}  # every row of the error table
        return found

    first, again = report(tmp_path / "a"), report(tmp_path / "b")
    assert first[0] == first[1] == again[0] and re.fullmatch(r"[0-9a-f]{16}", first[0])
    for name in ("r.json", "r.html"):
        first_text, again_text = ((tmp_path / run / name).read_text(encoding="utf-8") for run in "ab")
        if name.endswith(".json"):  # the rest of the file, as written, less the block
            first_text, again_text = (json.dumps(without_provenance(json.loads(text)), indent=2, ensure_ascii=False)
                                      for text in (first_text, again_text))
        assert "provenance" in (tmp_path / "a" / name).read_text(encoding="utf-8")
        assert without_provenance(first_text) == without_provenance(again_text)
    prediction.write_text(prediction.read_text(encoding="utf-8").replace(" O\n", " B-PER\n", 1), encoding="utf-8")
    changed = report(tmp_path / "c")
    assert changed[0] == changed[1] != first[0]


# --- Statistics files: crafted metadata and counts ---
def _stats_file(change_meta=None, label_counts=None, meta_text=None) -> bytes:
    """The demo statistics saved, then their JSON metadata or label counts replaced."""
    import io
    import json
    import zipfile

    import numpy as np

    stats = TrainStats.from_conll(COMMAND_DATA / "demo_train.conll")
    blob = version_1_bytes(stats) if label_counts is not None else stats.to_bytes()  # dense counts: version 1
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(np.load(io.BytesIO(members["meta.json.npy"])).tobytes().decode("utf-8"))
    if change_meta:
        change_meta(meta)
    text = meta_text if meta_text is not None else json.dumps(meta)
    arrays = {"meta.json": np.frombuffer(text.encode("utf-8"), dtype=np.uint8)}
    if label_counts is not None:
        arrays["label_counts"] = label_counts(np.load(io.BytesIO(members["label_counts.npy"])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            key = name[:-4]
            if key in arrays:
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, arrays[key], allow_pickle=False)
                data = buffer.getvalue()
            archive.writestr(name, data)
    return out.getvalue()


def test_crafted_statistics_files_are_refused_in_one_line(tmp_path):
    """304 MB of metadata in a small file, metadata nested 100,000 deep, a mention count of
    10**30, label counts of 2**62, the version "1": each a one-line error, before use, from
    the statistics reader, a method command and ``space --stats`` (served or exported)."""
    import json

    import base64
    import random

    noise = base64.b64encode(random.Random(0).randbytes(150_000)).decode()  # deflates to ~3/4
    huge = _stats_file(meta_text=json.dumps({"pad": noise}) + " " * (5 << 20))  # ~30 times its deflated size
    deep = _stats_file(meta_text="[" * 100_000 + "]" * 100_000)

    def big_mention(meta):
        meta["mentions"][0][2] = 10 ** 30

    def version_text(meta):
        meta["version"] = "1"

    cases = {
        "huge": (huge, r"its metadata declares \d+ bytes in a \d+-byte file; refused unread"),
        "deep": (deep, "metadata nested too deeply"),
        "mention": (_stats_file(big_mention), "its mention counts add up to 2\\*\\*53 or more"),
        "labels": (_stats_file(label_counts=lambda counts: counts + 2 ** 62), "label counts add up to 2\\*\\*53"),
        "version": (_stats_file(version_text), "has stats format version '\"1\"'; this tough-ner reads versions 1 "
                                               "and 2 \\(a number\\)"),
    }
    for name, (blob, message) in cases.items():
        path = tmp_path / f"{name}.npz"
        path.write_bytes(blob)
        with pytest.raises(ValueError, match=message):
            TrainStats.load(path)
        code, error, peak, _ = command("hardeval", "--train", path, "--test", COMMAND_DATA / "demo_test.conll",
                                       "--columns", "0,1,2")
        assert code == 2 and len(error.splitlines()) == 1 and "Traceback" not in error, (name, error)
        assert peak < 200, (name, peak)
        # The Space's built-in statistics: refused the same way, before gradio loads or a file is exported.
        for space in (["--export", tmp_path / name], []):
            code, error, peak, seconds = command("space", "tmr", "--stats", path, *space)
            assert code == 2 and re.fullmatch(f"tough-ner space: {path}.*{message}.*", error), (name, space, error)
            assert peak < 200 and seconds < 5 and not (tmp_path / name).exists(), (name, space, peak, seconds)


def test_a_token_holding_a_space_is_no_training_mention_of_two_tokens():
    """The one token "Paris Hilton" is not the two-token training mention Paris Hilton (TMR's
    seen and unseen-tokens subsets), while the two tokens are."""
    from tough_ner import Batch
    from tough_ner.methods.tmr import classify

    stats = TrainStats.from_lists([["Paris", "Hilton", "left"]], [["B-PER", "I-PER", "O"]])
    assert not stats.spaced_tokens
    tags = [["B-PER", "O"], ["B-PER", "I-PER", "O"]]
    masks = classify(stats, Batch([["Paris Hilton", "came"], ["Paris", "Hilton", "x"]], tags, tags))
    assert masks["seen"].tolist() == [False, True] and masks["unseen_tokens"].tolist() == [True, False]
    # training with a spaced token of its own: texts are all there is to compare (documented)
    spaced = TrainStats.from_lists([["Paris Hilton", "left"]], [["B-PER", "O"]])
    assert spaced.spaced_tokens
    assert classify(spaced, Batch([["Paris", "Hilton"]], [["B-PER", "I-PER"]], [["B-PER", "I-PER"]]))["seen"].tolist() \
        == [True]


def test_a_terminal_shows_control_characters_from_files_as_escapes(tmp_path, monkeypatch):
    """A system name holding an escape sequence (here OSC 52: write the clipboard) reaches the
    summary, and a type holding one the error that refuses it: a terminal gets them as text
    (``\\x1b``), a pipe gets the bytes as they are."""
    import io

    from tough_ner.cli import main
    from tough_ner.corpus import write_conll
    from tough_ner.demo import TRAIN, load_demo

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    _, test = load_demo()
    sequence = "\x1b]52;c;ZWNobyBwd25lZA\x07"  # no "=": NAME=path
    write_conll(tmp_path / "gold.conll", test.tokens, test.tags)
    write_conll(tmp_path / "pred.conll", test.tokens, test.tags, test.predictions[0])
    write_conll(tmp_path / "other.conll", test.tokens, test.tags, test.predictions[1])
    odd = [[tag if tag == "O" else tag[:2] + "X" + sequence for tag in sentence] for sentence in test.tags]
    write_conll(tmp_path / "odd.conll", test.tokens, test.tags, odd)
    for stream in ("stdout", "stderr"):
        monkeypatch.setattr(sys, stream, Terminal())
    report = ["report", "--train", str(TRAIN), "--test", str(tmp_path / "gold.conll"), "--resamples", "20",
              "--quiet", "--pred", f"A{sequence}={tmp_path / 'pred.conll'}", "--pred", str(tmp_path / "other.conll")]
    assert main(report) == 0
    assert main(["tmr", "--train", str(TRAIN), "--test", str(tmp_path / "odd.conll")]) == 2
    shown = sys.stdout.getvalue() + sys.stderr.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown.count("\\x1b]52;c;ZWNobyBwd25lZA\\x07") >= 2  # the name in the summary, the type in the error
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # a pipe: the bytes as they are
    assert main(report) == 0 and sequence in sys.stdout.getvalue()
