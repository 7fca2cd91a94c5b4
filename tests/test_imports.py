"""The import graph: `import tough_ner` and the CLI stay light, and a command imports the heavy
libraries (evaluate, datasets, torch, plotting, gradio) only when it uses them.  Each case runs
the command's real code path in a fresh interpreter and reads ``sys.modules`` afterwards."""
import json
import os
import site
import subprocess
import sys

import pytest

from conftest import ROOT

DATA = ROOT / "tough_ner" / "data"
HEAVY = ("evaluate", "datasets", "torch", "transformers", "scipy", "matplotlib", "gradio", "pandas", "pyarrow",
         "spacy", "huggingface_hub", "sklearn", "seqeval", "nervaluate")

PROBE = """
import contextlib, io, json, sys
argv = json.loads(sys.argv[1])
if argv and argv[0] == "import":
    import importlib
    importlib.import_module(argv[1])
    code = 0
else:
    from tough_ner.cli import main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
print(json.dumps([code, sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)]))
"""


def imported(argv, cwd, names=HEAVY):
    """(exit status, which of ``names`` are in ``sys.modules``) after running ``argv`` in a fresh
    interpreter, started without site's ``.pth`` hooks (``-S``; an environment's hooks may load
    modules themselves), the site-packages folders on its path instead."""
    paths = [str(ROOT), *site.getsitepackages(), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run([sys.executable, "-S", "-c", PROBE, json.dumps([str(a) for a in argv]), json.dumps(names)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return tuple(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two systems' prediction files (token gold prediction) and the gold file (token gold) cut
    from the demo test set."""
    folder = tmp_path_factory.mktemp("graph")
    rows = [line.split() for line in (DATA / "demo_test.conll").read_text(encoding="utf-8").splitlines()]
    (folder / "gold.conll").write_text("\n".join(" ".join(r[:2]) for r in rows) + "\n", encoding="utf-8")
    for column, name in ((2, "a.conll"), (3, "b.conll")):
        (folder / name).write_text("\n".join(" ".join([r[0], r[1], r[column]]) if r else "" for r in rows) + "\n",
                                   encoding="utf-8")
    return folder


def test_import_tough_ner_and_the_cli_import_no_heavy_library(tmp_path):
    assert imported(["import", "tough_ner"], tmp_path) == (0, [])
    assert imported(["import", "tough_ner.cli"], tmp_path) == (0, [])


@pytest.mark.parametrize("argv", [
    ["hardeval", "--train", DATA / "demo_train.conll", "--test", "a.conll", "--ci"],
    ["hardeval", "--train", DATA / "demo_train.conll", "--test", "a.conll", "--versus", "b.conll"],
    ["tmr", "--train", DATA / "demo_train.conll", "--test", "a.conll", "--detailed", "--json"],
    ["buckets", "--train", DATA / "demo_train.conll", "--test", "a.conll", "--test", "b.conll"],
    ["rockner", "--original", "a.conll", "--attacked", "b.conll"],
    ["describe", "--train", DATA / "demo_train.conll", "--test", "a.conll"],
    ["stats", "--train", DATA / "demo_train.conll", "--out", "stats.npz"],
    ["register", "--modules-cache", "modules"],
    ["explain", "ter_unseen"],
    ["report", "--train", DATA / "demo_train.conll", "--test", "gold.conll",
     "--pred", "a.conll", "--pred", "b.conll", "--json", "report.json"],
], ids=lambda argv: " ".join(map(str, argv[:1] + argv[-2:])).replace(str(DATA) + os.sep, ""))
def test_commands_import_only_what_they_use(argv, files):
    assert imported(argv, files) == (0, [])


@pytest.mark.parametrize("argv", [
    ["hardeval", "--train", DATA / "demo_train.conll", "--test", "a.conll"],
    ["tmr", "--train", DATA / "demo_train.conll", "--test", "a.conll"],
], ids=lambda argv: argv[0])
def test_a_method_command_without_resampling_loads_neither_the_report_nor_hashlib(argv, files):
    """Start-up counts for a command run once per file: printing a result takes its number
    formats from ``formatting``, not from the report module (which imports every method),
    hashlib (OpenSSL) is loaded only to resample, zipfile (with bz2, lzma, shutil) only to
    read a stats file, random only for k-fold hard tokens."""
    assert imported(argv, files, ("hashlib", "tough_ner.report", "zipfile", "random")) == (0, [])
    from tough_ner import TrainStats

    TrainStats.from_conll(DATA / "demo_train.conll").save(files / "saved.stats")  # any name: a zip is read as one
    assert imported(["hardeval", "--train", files / "saved.stats", "--test", "a.conll"], files, ("zipfile",)) \
        == (0, ["zipfile"])
    assert imported(["import", "site"], files, ("zipfile", "random")) == (0, [])  # the probe's start loads neither


def test_the_package_and_the_command_load_numpy_only_when_used(tmp_path):
    """The dispatcher imports a command group (and numpy) only once the command is chosen,
    after its process settings."""
    assert imported(["import", "tough_ner"], tmp_path, ("numpy",)) == (0, [])
    assert imported(["import", "tough_ner.cli"], tmp_path, ("numpy",)) == (0, [])
    assert imported(["explain", "ter_unseen"], tmp_path, ("numpy",)) == (0, [])
    assert imported(["import", "tough_ner.cli.methods"], tmp_path, ("numpy",)) == (0, ["numpy"])


def _python(code: str, *argv: str, **env) -> subprocess.CompletedProcess:
    """``python -c code argv...`` from this checkout, without any BLAS thread count of ours
    (OpenBLAS also reads GOTO_ and OMP_NUM_THREADS)."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300,
                          env={**environment, "PYTHONPATH": str(ROOT), **env})
    assert done.returncode == 0, done.stderr
    return done


def _run(code: str) -> str:
    return _python(code).stdout.strip()


AS_COMMAND = """import atexit, gc, io, os, runpy, sys
from contextlib import redirect_stdout
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
sys.argv = [sys.argv[1], "explain", "ter_unseen"]


@atexit.register  # the command ends the process itself, after the exit handlers
def report():
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else "?"
    print(os.environ.get("OPENBLAS_NUM_THREADS"), threads, gc.get_freeze_count() > 0, gc.isenabled(),
          len(collections), file=sys.stderr)


with redirect_stdout(io.StringIO()):
    if sys.argv[0] == "-m":
        runpy.run_module("tough_ner.cli", run_name="__main__")
    else:
        import tough_ner.cli
        tough_ner.cli.main(sys.argv[1:])
print("returned", file=sys.stderr)
"""


def _as_command(argv0: str, **env) -> str:
    """The state ``AS_COMMAND`` reports as the process ends, and whether ``main`` returned."""
    lines = _python(AS_COMMAND, argv0, **env).stderr.strip().splitlines()
    return lines[-1] + (" returned" if "returned" in lines else " exited")


def test_the_command_keeps_numpys_blas_on_one_thread_and_a_program_importing_it_does_not():
    """OpenBLAS's idle worker threads spin for ~0.1 s of CPU when numpy loads: run as the
    command (python -m tough_ner.cli, or the tough-ner script), the module sets
    OPENBLAS_NUM_THREADS=1 before numpy loads (on Linux a thread count shows it took
    effect); a value the user set wins.  The collector is left as it is (pausing it saved
    under 5%: tough_ner/cli/_process.py); the command ends the process once the exit handlers
    have run (no interpreter teardown).  A program that imports it and calls ``main`` keeps
    its environment, and gets the exit status back."""
    one = "1 1 False True" if os.path.isdir("/proc/self/task") else "1 ? False True"
    for argv0 in ("-m", "/venv/bin/tough-ner"):  # the command ends the process itself
        *state, _, end = _as_command(argv0).split()
        assert " ".join(state) == one and end == "exited"
    assert _as_command("-m", OPENBLAS_NUM_THREADS="2").split()[0] == "2"
    openblas, _, frozen, enabled, _, end = _as_command("my_program.py").split()
    assert [openblas, frozen, enabled, end] == ["None", "False", "True", "returned"]


def test_submodules_named_like_functions_leave_the_functions_exported():
    """``tough_ner.hardeval`` and ``tough_ner.tmr`` are functions, also after another module
    imported the submodules of the same names (which sets the package's attribute)."""
    code = ("import inspect, tough_ner.report, tough_ner; from tough_ner import Batch, hardeval, tmr; "
            "print(inspect.isfunction(tough_ner.hardeval), inspect.isfunction(tough_ner.tmr), hardeval is "
            "tough_ner.hardeval, sorted(set(tough_ner.__all__) - set(dir(tough_ner))))")
    assert _run(code) == "True True True []"


def test_submodules_are_attributes_of_the_package_as_before():
    code = ("import tough_ner\nprint(tough_ner.stats.build_distributed.__name__, tough_ner.uncertainty.aggregate_runs"
            ".__name__, tough_ner.formats.to_tags.__name__)\ntry:\n    tough_ner.no_such_thing\nexcept AttributeError "
            "as error:\n    print(error)")
    assert _run(code).splitlines() == ["build_distributed aggregate_runs to_tags",
                                       "module 'tough_ner' has no attribute 'no_such_thing'"]


def test_commands_that_use_a_library_import_it(files):
    # Attacks and NRB sets are datasets.Dataset objects in the Python API; the HTML report plots.
    code, modules = imported(["attack", "--test", DATA / "demo_test.conll", "--out", "attacked.conll"], files)
    assert code == 0 and "datasets" in modules and "evaluate" not in modules and "torch" not in modules
    code, modules = imported(["report", "--train", DATA / "demo_train.conll", "--test", "gold.conll",
                              "--pred", "a.conll", "--html", "report.html"], files)
    assert code == 0 and "matplotlib" in modules and {"evaluate", "torch", "gradio"}.isdisjoint(modules), modules



def test_register_finds_evaluates_module_cache_without_importing_it(tmp_path):
    """register works out evaluate.config.HF_MODULES_CACHE itself (importing evaluate costs
    seconds); evaluate's config module is re-read under each environment."""
    code = """
import importlib, json, os, sys
import evaluate.config
import tough_ner.register as r
for env in json.loads(sys.argv[1]):
    for k in ("HF_HOME", "HF_MODULES_CACHE", "XDG_CACHE_HOME"):
        os.environ.pop(k, None)
    os.environ.update(env)
    print(json.dumps([r.default_modules_cache(), str(importlib.reload(evaluate.config).HF_MODULES_CACHE)]))
"""
    envs = [{}, {"HF_HOME": f"{tmp_path}/home"}, {"HF_HOME": "~/hf"}, {"XDG_CACHE_HOME": f"{tmp_path}/xdg"},
            {"HF_HOME": f"{tmp_path}/home", "HF_MODULES_CACHE": f"{tmp_path}/modules"},
            {"HF_MODULES_CACHE": "~/modules"}, {"XDG_CACHE_HOME": "~/x", "HF_HOME": ""}]
    done = subprocess.run([sys.executable, "-c", code, json.dumps(envs)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0, done.stderr
    pairs = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(pairs) == len(envs) and len({ours for ours, _ in pairs}) == len(envs)  # each case a different place
    for env, (ours, theirs) in zip(envs, pairs):
        assert ours == theirs, env
