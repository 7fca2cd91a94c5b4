import json
import subprocess

import pytest

from tough_ner import Batch, TrainStats, bucket_f1, hardeval, read_conll
from tough_ner.buckets import ATTRIBUTES, compare
from tough_ner.cli import COMMANDS, main
from tough_ner.demo import SYSTEMS, TEST, TRAIN, load_demo, load_demo_nrb
from tough_ner.hardeval import SUBSETS
from tough_ner.nrb import nrb
from tough_ner.schemes import decode

from conftest import write


def test_hardeval_command_matches_python(tmp_path, capsys):
    test = read_conll(TEST, n_predictions=2)
    lines = ["\n".join(f"{t} {g} {p}" for t, g, p in zip(*s)) for s in zip(test.tokens, test.tags, test.predictions[1])]
    pred = write(tmp_path / "pred.conll", "\n\n".join(lines) + "\n")
    assert main(["hardeval", "--train", str(TRAIN), "--test", str(pred), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    expected = hardeval(TrainStats.from_conll(TRAIN), Batch(test.tokens, test.tags, test.predictions[1]))
    assert shown == pytest.approx(expected, nan_ok=True)
    stats, batch = TrainStats.from_conll(TRAIN), Batch(test.tokens, test.tags, test.predictions[1])
    for options, kwargs in ((["--strict"], {"strict": True}), (["--error", "io"], {"error": "io"}),
                            (["--strict", "--error", "bio"], {"strict": True, "error": "bio"})):
        assert main(["hardeval", "--train", str(TRAIN), "--test", str(pred), "--json", *options]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown == pytest.approx(hardeval(stats, batch, **kwargs), nan_ok=True)
        assert shown != pytest.approx(expected, nan_ok=True)  # the option changes the demo's figures
    assert main(["hardeval", "--train", str(TRAIN), "--test", str(pred), "--strict"]) == 0
    lines = dict(line.split() for line in capsys.readouterr().out.splitlines())
    assert lines["n_diff_E"] == str(hardeval(stats, batch, strict=True)["n_diff_E"])


def test_the_command_ends_with_its_output_written_and_its_status(tmp_path):
    """Run as a command, tough-ner ends the process itself (no interpreter teardown): the
    output is complete in a file and in a pipe closed early, with the command's status."""
    import shlex
    import sys

    test = read_conll(TEST, n_predictions=2)
    lines = ["\n".join(f"{t} {g} {p}" for t, g, p in zip(*s)) for s in zip(test.tokens, test.tags, test.predictions[1])]
    pred = write(tmp_path / "pred.conll", "\n\n".join(lines) + "\n")
    command = [sys.executable, "-m", "tough_ner.cli", "hardeval", "--train", str(TRAIN), "--test", str(pred)]
    with open(tmp_path / "out.json", "w") as out:
        done = subprocess.run(command + ["--json"], stdout=out, stderr=subprocess.PIPE, text=True, timeout=300)
    expected = hardeval(TrainStats.from_conll(TRAIN), Batch(test.tokens, test.tags, test.predictions[1]))
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads((tmp_path / "out.json").read_text()) == pytest.approx(expected, nan_ok=True)
    closed = subprocess.Popen(command + ["--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    closed.stdout.close()  # as `| true` does: the output, written as the command ends, has no reader
    assert (closed.wait(timeout=300), closed.stderr.read()) == (0, b"")
    bad = subprocess.run(command[:-1] + [str(tmp_path / "missing.conll")], capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "missing.conll" in bad.stderr
    # no standard output at all (Python's sys.stdout is None): the status, no traceback
    shut = subprocess.run(shlex.join(command) + " >&-", shell=True, capture_output=True, text=True, timeout=300)
    assert (shut.returncode, shut.stderr) == (0, "")
    # under a profiler the process is left to end as usual: the profiler writes its results after
    profiled = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(tmp_path / "run.prof"), *command[1:]],
                              capture_output=True, text=True, timeout=300)
    assert profiled.returncode == 0 and (tmp_path / "run.prof").stat().st_size > 0


def test_freed_memory_is_kept_only_on_linux(monkeypatch):
    import ctypes

    from tough_ner.cli import _process

    calls = []
    monkeypatch.setattr(ctypes, "CDLL", lambda name: calls.append(name) or type("libc", (), {
        "mallopt": staticmethod(lambda option, value: calls.append((option, value)) or 1)}))
    monkeypatch.setattr(_process.sys, "platform", "win32")  # where CDLL(None) raises TypeError
    _process.keep_freed_memory()
    assert calls == []
    monkeypatch.setattr(_process.sys, "platform", "linux")
    _process.keep_freed_memory()
    assert calls == [None, (-3, 2 ** 25), (-1, 2 ** 25)]  # the mmap threshold first, then the trim one


def test_stats_file_then_hardeval_and_describe(tmp_path, capsys):
    assert main(["stats", "--train", str(TRAIN), "--out", str(tmp_path / "s.npz")]) == 0
    assert TrainStats.load(tmp_path / "s.npz") == TrainStats.from_conll(TRAIN)
    capsys.readouterr()
    assert main(["describe", "--train", str(tmp_path / "s.npz"), "--test", str(TRAIN)]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described["train"]["mentions"] == described[str(TRAIN)]["mentions"]
    assert described[str(TRAIN)]["unseen_mentions"] == 0
    # A test set that is not the training set: the figures of describe_test, counted by hand below.
    test = read_conll(TEST)
    assert main(["describe", "--train", str(TRAIN), "--test", str(TEST)]) == 0
    described = json.loads(capsys.readouterr().out)[str(TEST)]
    train = read_conll(TRAIN)
    train_texts = {" ".join(s[a:b]) for s, tags in zip(train.tokens, train.tags) for a, b, _ in decode(tags)}
    texts = [" ".join(s[a:b]) for s, tags in zip(test.tokens, test.tags) for a, b, _ in decode(tags)]
    assert described == {"mentions": len(texts), "unseen_mentions": sum(t not in train_texts for t in texts),
                         "unique_mentions": len(set(texts)), "unseen_unique_mentions": len(set(texts) - train_texts)}
    assert 0 < described["unseen_mentions"] < described["mentions"]


def test_bad_input_is_a_message_not_a_traceback(tmp_path, capsys):
    bad = write(tmp_path / "bad.conll", "EU B-ORG O\nrejects O\n")
    assert main(["hardeval", "--train", str(TRAIN), "--test", str(bad)]) == 2
    assert "line 2: 2 columns where earlier lines have 3" in capsys.readouterr().err
    assert main(["hardeval", "--train", str(tmp_path / "none.txt"), "--test", str(bad)]) == 2
    assert "no such file" in capsys.readouterr().err
    unknown = write(tmp_path / "unknown.conll", "EU B-ORG X-ORG\n")
    assert main(["hardeval", "--train", str(TRAIN), "--test", str(unknown)]) == 2
    assert "unknown.conll, line 1, column 3: unknown tag 'X-ORG'" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_built_alone_keeps_its_arguments(name, capsys):
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert text.startswith(f"usage: tough-ner {name} ")
    resampled = name in ("hardeval", "tmr", "buckets", "nrb", "rockner")
    assert ("--ci" in text) == resampled  # report always gives intervals and tests
    reports = name in ("report", "evaluate")
    assert all((flag in text) == (resampled or reports)
               for flag in ("--resamples", "--confidence", "--unit", "--alpha"))
    assert ("--baseline" in text) == reports
    assert ("--columns" in text) == (name in ("hardeval", "tmr", "buckets", "rockner", "report", "evaluate"))
    with pytest.raises(SystemExit):
        main(["--help"])
    listing = " ".join(capsys.readouterr().out.split())
    assert f"{name} {' '.join(COMMANDS[name][0].split())}" in listing  # every command listed with its help line


def test_an_unknown_command_shows_every_command_in_the_usage(capsys):
    with pytest.raises(SystemExit):  # every command named, though no command's parser is built
        main(["no-such-command", "--no-such-flag"])
    err = "".join(capsys.readouterr().err.split())
    assert "{" + ",".join(COMMANDS) + "}" in err and "invalidchoice:'no-such-command'" in err


def test_report_on_demo_runs_as_console_script(tmp_path):
    done = subprocess.run(["tough-ner", "report", "--full", "--out-dir", str(tmp_path)], capture_output=True,
                          text=True, check=True)
    assert done.stderr == ""  # no progress bar off a terminal
    assert "hardeval" in done.stdout and all(system in done.stdout for system in SYSTEMS)
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    score = hardeval(stats, Batch(test.tokens, test.tags, test.predictions[1]))["hardeval"]
    assert f"{score:.4f}" in done.stdout
    # Two systems: the bucket comparative diagnosis, A - B per attribute, as the Python API gives it.
    a, b = (bucket_f1(stats, Batch(test.tokens, test.tags, p), detailed=True, bootstrap=0) for p in test.predictions)
    assert "bucket F1, memorizer - contextual" in done.stdout
    shown = json.loads((tmp_path / "report.json").read_text())["results"]["comparisons"][0]["bucket_f1"]
    assert shown["eFre"]["difference"] == pytest.approx(compare(a, b)["eFre"]["difference"], nan_ok=True)
    nrb_set, wts_set = load_demo_nrb()
    portion = ["nrb"] * len(nrb_set.tokens) + ["wts"] * len(wts_set.tokens)
    errors = [str(nrb(Batch(nrb_set.tokens + wts_set.tokens, nrb_set.tags + wts_set.tags,
                            nrb_set.predictions[i] + wts_set.predictions[i]), "conll", portion, stats)
                  ["nrb_n_type_errors"]) for i in range(2)]
    line = next(line for line in done.stdout.splitlines() if line.startswith("nrb_n_type_errors "))
    assert line.split()[1:] == errors and int(errors[0]) > int(errors[1])  # the memorizer types names by habit
    # Only significant bucket differences are listed, each with its n, interval and adjusted p.
    listed = [line for line in done.stdout.split("bucket F1,")[1].split("\n\n")[0].splitlines()
              if line.split()[0] in ATTRIBUTES]  # one line a bucket (the heading may wrap)
    report = json.loads((tmp_path / "report.json").read_text())["results"]["comparisons"][0]["bucket_f1"]
    significant = [(a, d) for a, entry in report.items() for d, flag in zip(entry["difference"], entry["significant"])
                   if flag]
    assert len(listed) == len(significant) > 0
    assert all(f"{d:+.4f}" in done.stdout for _, d in significant)


def test_tmr_runs_versus_runs_fit_the_terminal_with_whole_counts(tmp_path, capsys):
    from tough_ner.tmr import tmr

    test = read_conll(TEST, n_predictions=2)
    runs = [str(write(tmp_path / f"run{k}.conll", "\n\n".join("\n".join(f"{t} {g} {p}" for t, g, p in zip(*s))
                                                               for s in zip(test.tokens, test.tags, pred)) + "\n"))
            for k, pred in enumerate(test.predictions)]
    # two runs a side: every rate's row carries the pooled test and a Wilcoxon p, the longest rows there are
    assert main(["tmr", "--train", str(TRAIN), "--test", runs[0], "--test", runs[1], "--versus", runs[1],
                 "--versus", runs[0], "--resamples", "100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 100 and any("Wilcoxon p" in line for line in lines)
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines if line.startswith("n_")}
    n = tmr(TrainStats.from_conll(TRAIN), Batch(test.tokens, test.tags, test.tags))["n_mentions"]
    assert rows["n_mentions"] == f"{n} ± 0 [{n}, {n}]" and not any(".0000" in row for row in rows.values())


def test_report_with_files(tmp_path, capsys):
    test = read_conll(TEST, n_predictions=2)
    gold = write(tmp_path / "gold.conll", "\n\n".join("\n".join(f"{t} {g}" for t, g in zip(*s))
                                                      for s in zip(test.tokens, test.tags)) + "\n")
    sys_a = write(tmp_path / "a.conll", "\n\n".join("\n".join(f"{t} {p}" for t, p in zip(*s))
                                                    for s in zip(test.tokens, test.predictions[0])) + "\n")
    assert main(["report", "--train", str(TRAIN), "--test", str(gold), "--pred", str(sys_a), "--json",
                 str(tmp_path / "r.json"), "--bootstrap", "0"]) == 0
    result = json.loads((tmp_path / "r.json").read_text())["results"]
    assert result["systems"]["a"]["hardeval"]["n_all"] == sum(map(len, test.tokens))
    assert "eCon_3_f1" in result["systems"]["a"]["bucket_f1"] and "comparison" not in result


def test_demo_corpus_makes_every_subset_non_empty():
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    assert stats.describe()["ambiguous_mentions"] > 0
    assert stats.describe_test(test.tokens, test.tags)["unseen_mentions"] > 0
    for strict in (False, True):
        result = hardeval(stats, Batch(test.tokens, test.tags, test.predictions[0]), strict=strict)
        assert all(result[f"n_{name}"] > 0 for name in SUBSETS), result
    assert 200 <= len(train) <= 600 and 80 <= len(test) <= 150


def test_demo_memorizer_is_the_memorization_baseline():
    from tough_ner.baselines import memorization
    train, test = load_demo()
    assert test.predictions[0] == memorization(TrainStats.from_corpus(train), test.tokens)


def test_an_unknown_option_shows_the_commands_usage(capsys):
    """``tmr ... --no-such-option``: the usage of tmr (its options), not the list of commands."""
    with pytest.raises(SystemExit) as ended:
        main(["tmr", "--train", str(TRAIN), "--test", str(TRAIN), "--no-such-option"])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: tough-ner tmr ") and "--versus" in err
    assert err.strip().endswith("tough-ner tmr: error: unrecognized arguments: --no-such-option")


def test_a_command_shows_its_input_warnings_but_not_what_python_hides(monkeypatch, capsys):
    """The command shows every warning once, whatever filters a caller set, but not the ones
    Python's own filters hide (a library's unclosed event loop, a deprecation): those are for
    the libraries' authors, and a Space printed three of them at every start."""
    import warnings

    from tough_ner.checks import InputWarning
    from tough_ner.cli import tools

    def noisy(args):
        warnings.warn("unclosed event loop", ResourceWarning)
        warnings.warn("old API", DeprecationWarning)
        warnings.warn("predicted types absent from the gold data", InputWarning)
        return 0

    monkeypatch.setattr(tools, "cmd_explain", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a caller's filter: the command's own decide
        assert main(["explain", "ter"]) == 0
    assert capsys.readouterr().err == "tough-ner explain: warning: predicted types absent from the gold data\n"
