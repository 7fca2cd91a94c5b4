"""Nothing lost on a crash: every file tough-ner writes appears whole or not at all, and the
CLI turns system errors into one line."""
import errno
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tough_ner import TrainStats
from tough_ner._util import write_atomic
from tough_ner.cli import main
from tough_ner.demo import TEST, TRAIN, load_demo

from conftest import at_work, write

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def start(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=str(ROOT))


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)


def test_stats_save_killed_mid_write_leaves_the_previous_file(tmp_path):
    """Before: 30 kills out of 30 during save left a truncated file."""
    train, _ = load_demo()
    stats = TrainStats.from_corpus(train)
    path = tmp_path / "train.npz"
    stats.save(path)
    rng = random.Random(0)
    for _ in range(12):  # bounded: each round kills a process saving in a loop at a random moment
        saver = start(f"""
            import sys
            from tough_ner import TrainStats
            from tough_ner.demo import load_demo
            stats = TrainStats.from_corpus(load_demo()[0])
            print("ready", flush=True)
            while True:
                stats.save({str(path)!r})
            """)
        assert saver.stdout.readline().strip() == "ready", saver.stderr.read()
        time.sleep(rng.uniform(0, 0.05))
        kill(saver)
        assert TrainStats.load(path) == stats
    # Leftovers of killed writes are hidden temporary files next to it, never the file itself.
    assert all(name == "train.npz" or (name.startswith(".train.npz.") and name.endswith(".tmp"))
               for name in os.listdir(tmp_path))


def test_report_killed_at_random_points_leaves_the_previous_html_and_json(tmp_path):
    """Before: a kill during `report` left report.html empty 13 times out of 15 (the file was
    opened, hence emptied, before the slow rendering)."""
    html, json_file = tmp_path / "report.html", tmp_path / "report.json"
    rng = random.Random(1)
    for _ in range(3):
        html.write_text("<html>previous</html>\n")
        json_file.write_text('{"previous": true}\n')
        report = subprocess.Popen([sys.executable, "-m", "tough_ner.cli", "report", "--quiet", "--bootstrap", "0",
                                   "--html", str(html), "--json", str(json_file)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, cwd=str(ROOT))
        # Kill while the HTML is being rendered: just after the JSON (written first) changed.
        deadline = time.monotonic() + 120
        while json_file.read_text() == '{"previous": true}\n' and report.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.3))
        kill(report)
        # The previous file or a whole new one, never a truncated one.
        assert html.read_text().rstrip().endswith("</html>")
        assert json.loads(json_file.read_text())


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    path = write(tmp_path / "out.conll", "old\n")
    os.chmod(path, 0o640)

    def full_disk(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(path, "new\n")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["out.conll"]
    monkeypatch.undo()
    write_atomic(path, "new\n")
    assert path.read_text() == "new\n" and oct(os.stat(path).st_mode & 0o777) == "0o640"  # mode kept
    link = tmp_path / "link.conll"
    link.symlink_to(path)
    write_atomic(link, "through the link\n")
    assert link.is_symlink() and path.read_text() == "through the link\n"
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path, "x")


def test_write_atomic_writes_text_in_pieces_and_keeps_the_old_file_if_they_fail(tmp_path):
    """A large JSON or CSV is written as the encoder makes it (a 20,000-type report: 171 MB of
    text never held whole): the pieces joined, and an error while they are made (the encoder
    meets a value it cannot write) leaves the old file and no temporary one."""
    path = write(tmp_path / "report.json", "old\n")

    def pieces(fail):
        for i in range(300_000):  # past the megabyte the pieces are joined by
            yield f"{i},"
        if fail:
            raise ValueError("Out of range float values are not JSON compliant")
        yield "é\n"

    with pytest.raises(ValueError, match="JSON compliant"):
        write_atomic(path, pieces(True))
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["report.json"]
    write_atomic(path, pieces(False))
    assert path.read_text(encoding="utf-8") == "".join(f"{i}," for i in range(300_000)) + "é\n"


def test_attack_refuses_a_ratio_given_twice(tmp_path, capsys):
    out = tmp_path / "attacked.conll"
    assert main(["attack", "--test", str(TEST), "--ratios", "0.5,0.50", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "same ratio twice" in error and "attacked-0.5.conll" in error
    assert not list(tmp_path.iterdir())
    assert main(["attack", "--test", str(TEST), "--ratios", "0.25,0.5", "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attacked-0.25.conll", "attacked-0.5.conll"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_permission_denied_is_one_line(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    assert main(["stats", "--train", str(TRAIN), "--out", str(locked / "s.npz")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Permission denied" in error


def test_system_errors_are_one_line_and_a_non_zero_exit(tmp_path, capsys, monkeypatch):
    # An output path that is a folder.
    assert main(["stats", "--train", str(TRAIN), "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "is a directory" in error.lower() and "Traceback" not in error
    # A folder that cannot be created under a file.
    blocker = write(tmp_path / "file", "x")
    assert main(["attack", "--test", str(TEST), "--out", str(blocker / "sub" / "a.conll")]) == 2
    assert capsys.readouterr().err.count("\n") == 1

    # Disk full, out of memory and Ctrl-C while the command runs.
    def failing(error):
        def run(*args, **kwargs):
            raise error
        return run
    for error, code, text in ((OSError(28, "No space left on device", "s.npz"), 2, "s.npz: No space left on device"),
                              (MemoryError(), 2, "out of memory"), (KeyboardInterrupt(), 130, "interrupted")):
        monkeypatch.setattr(TrainStats, "save", failing(error))
        assert main(["stats", "--train", str(TRAIN), "--out", str(tmp_path / "s.npz")]) == code
        shown = capsys.readouterr().err
        assert shown.count("\n") == 1 and text in shown, shown


def test_a_killed_cli_reports_interrupt_in_one_line(tmp_path):
    """SIGINT (Ctrl-C) in the middle of a command: one line, exit 130, no traceback.  Sent once
    the command has done a second of CPU work (not after a fixed sleep: under load the child
    could still be starting, before Python catches SIGINT)."""
    process = subprocess.Popen([sys.executable, "-m", "tough_ner.cli", "report", "--quiet",
                                "--out-dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=ENV, cwd=str(ROOT))
    at_work(process, 1.0, [signal.SIGINT])
    process.send_signal(signal.SIGINT)
    _, error = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("the report finished before the interrupt")
    assert process.returncode == 130 and error.strip() == "tough-ner report: interrupted", error


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device always full)")
def test_a_full_disk_is_an_error_naming_the_file(capsys):
    """A write that fails for want of space has no file name of its own: the error names the
    file written, the command's one line too."""
    with pytest.raises(OSError) as raised:
        write_atomic("/dev/full", "x" * 100)
    assert raised.value.filename == "/dev/full" and raised.value.errno == errno.ENOSPC
    assert main(["stats", "--train", str(TRAIN), "--out", "/dev/full"]) == 2
    assert capsys.readouterr().err.strip().endswith("/dev/full: No space left on device")
