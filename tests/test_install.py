"""tough-ner as a user installs it, outside any checkout: `python -m build` makes a wheel and an
sdist that pass `twine check`; a fresh virtualenv that installs only the wheel runs the demo
report, `tough-ner register` and `evaluate.load("hardeval")` offline; a fresh virtualenv that
installs only an exported Space's requirements.txt serves the Space, and the demo evaluates in
a headless browser.

Slow (marked ``slow``, run by CI): the packages come from the package registry.  They are
downloaded once into a wheelhouse (at the versions installed here, so the venvs run what the
rest of the suite tested) and both venvs install from it with ``--no-index``; pip's cache is
left on.  torch must never be pulled in: the base install does not depend on it.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import venv
import zipfile
import tarfile
from importlib import metadata
from pathlib import Path

import pytest

from conftest import ROOT, expected, fmt, listening_addresses, open_page, shown_table

pytestmark = pytest.mark.slow
DATA = ROOT / "tough_ner" / "data"


def package_files():
    """Every file of the package directory (what the wheel must hold), as wheel paths."""
    source = ROOT / "tough_ner"
    return sorted(str(Path("tough_ner") / p.relative_to(source)) for p in source.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def run(args, timeout=600, **kwargs):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def user_env(home):
    """A user's environment: no PYTHONPATH into this checkout, a fresh HF home, offline."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HF_MODULES_CACHE", "VIRTUAL_ENV")}
    env.update(HF_HOME=str(home), HF_EVALUATE_OFFLINE="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               GRADIO_ANALYTICS_ENABLED="False", PYTHONUNBUFFERED="1")
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The wheel and the sdist, built from a copy of the sources (nothing else of the checkout, no
    build litter in it)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "tough_ner", source / "tough_ner", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # No build isolation: setuptools comes from the test extra (an isolated build fetches it again).
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source])
    wheel, sdist = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheel) == 1 and len(sdist) == 1, list(out.iterdir())
    return wheel[0], sdist[0]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """`tough-ner space hardeval --export DIR --stats demo.npz`, run from this checkout, with
    shareable statistics (no training text) as a public Space would embed them."""
    folder = tmp_path_factory.mktemp("export")
    stats = folder / "demo.npz"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run([sys.executable, "-m", "tough_ner.cli", "stats", "--train", DATA / "demo_train.conll", "--out", stats, "--shareable"],
        env=env)
    run([sys.executable, "-m", "tough_ner.cli", "space", "hardeval", "--export", folder / "space", "--stats", stats],
        env=env)
    return folder / "space"


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory, dist, exported):
    """Every package both venvs need, downloaded once, at the versions installed here."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    pins = folder / "constraints.txt"
    installed = {d.metadata["Name"].lower(): d.version for d in metadata.distributions() if d.metadata["Name"]}
    installed.pop("tough-ner", None)
    pins.write_text("".join(f"{name}=={version}\n" for name, version in sorted(installed.items())
                            if "+" not in version))  # local builds (torch+cpu) are no registry release
    # pip wheel: downloads wheels, and builds the one sdist-only dependency (seqeval) once.
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "-w", folder, "-c", pins, dist[0],
         "-r", exported / "requirements.txt"], timeout=900)
    assert not list(folder.glob("torch-*")), "torch was pulled in"
    return folder


def fresh_venv(path, wheelhouse, *install):
    """``python -m venv`` (no system site-packages; this pip installs into it, so the venv needs
    none of its own), then ``install`` from the wheelhouse (no bytecode compiled ahead: most of
    it would never be imported here)."""
    venv.EnvBuilder(with_pip=False, system_site_packages=False, clear=True).create(path)
    python = path / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", python]
    run([*pip, "install", "--quiet", "--no-compile", "--no-index", "--find-links", wheelhouse, *install],
        timeout=900, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    installed = run([*pip, "list", "--format", "freeze"]).stdout.lower()
    assert "torch" not in installed, installed
    return python, installed


def test_wheel_and_sdist_hold_the_package_and_pass_twine(dist):
    wheel, sdist = dist
    run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist])
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(n for n in names if not n.startswith("tough_ner-")) == package_files()
    assert {"tough_ner/data/demo_train.conll", "tough_ner/data/entities.json.gz"} <= set(names)
    with tarfile.open(sdist) as archive:
        members = {Path(*Path(n).parts[1:]).as_posix() for n in archive.getnames()}
    assert set(package_files()) <= members and {"README.md", "pyproject.toml"} <= members
    assert not any("shared" in n or "conll2003" in n for n in list(names) + sorted(members))
    entry = zipfile.ZipFile(wheel).read("tough_ner-0.1.0.dist-info/entry_points.txt").decode()
    assert "tough-ner = tough_ner.cli:main" in entry


def test_the_wheel_alone_runs_report_register_and_evaluate_offline(dist, wheelhouse, tmp_path):
    python, installed = fresh_venv(tmp_path / "venv", wheelhouse, dist[0])
    assert "tough-ner==0.1.0" in installed and "gradio" not in installed
    command = tmp_path / "venv" / "bin" / "tough-ner"
    work = tmp_path / "elsewhere"  # outside any checkout: nothing of ROOT is importable from here
    work.mkdir()
    env = user_env(tmp_path / "hf")
    where = run([python, "-c", "import tough_ner, importlib.util as u; print(tough_ner.__file__); "
                               "print([m for m in ('torch', 'gradio', 'matplotlib') if u.find_spec(m)])"],
                cwd=work, env=env).stdout.split("\n")
    assert where[0].startswith(str(tmp_path / "venv")) and where[1] == "[]", where

    # The demo report, compared with this checkout's own run of it.
    run([command, "report", "--out-dir", "report", "--quiet"], cwd=work, env=env)
    from tough_ner.cli import main
    assert main(["report", "--out-dir", str(tmp_path / "here"), "--quiet"]) == 0
    ours = json.loads((tmp_path / "here" / "report.json").read_text())
    theirs = json.loads((work / "report" / "report.json").read_text())
    assert theirs["results"] == ours["results"] and (work / "report" / "report.html").stat().st_size > 10_000

    # register, then evaluate.load by bare name with no network.
    written = run([command, "register"], cwd=work, env=env).stdout.split()
    assert len(written) == 10 and all(p.startswith(str(tmp_path / "hf" / "modules")) for p in written)
    script = ("import json, sys, evaluate\n"
              "from tough_ner.corpus import read_conll\n"
              "test = read_conll(sys.argv[2], n_predictions=2)\n"
              "metric = evaluate.load('hardeval', train=sys.argv[1])\n"
              "print(type(metric).__module__)\n"
              "print(json.dumps(metric.compute(predictions=test.predictions[1], references=test.tags, "
              "tokens=test.tokens)))\n")
    data = next((tmp_path / "venv" / "lib").glob("python*/site-packages/tough_ner/data"))
    out = run([python, "-c", script, data / "demo_train.conll", data / "demo_test.conll"], cwd=work, env=env)
    module, result = out.stdout.strip().split("\n")[-2:]
    assert module == "tough_ner.metrics.hardeval"
    api = expected("hardeval")[1]
    assert {k: fmt(v) for k, v in json.loads(result, parse_constant=float).items()} == {
        k: fmt(v) for k, v in api.items() if not k.endswith(("_ci_low", "_ci_high"))}

    # Without the spaces extra, `tough-ner space` says which extra to install.
    done = subprocess.run([command, "space", "hardeval"], capture_output=True, text=True, cwd=work, env=env,
                          timeout=300)
    assert done.returncode == 2 and "pip install 'tough-ner[spaces]'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def serve(python, folder, env, command=("app.py",)):
    """``python app.py`` (or ``command``) in ``folder`` on 127.0.0.1 and a free port; a port taken
    between the probe and the bind (parallel runs) makes the app exit, and another is tried."""
    for _ in range(5):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen([python, *command], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env={**env, "GRADIO_SERVER_NAME": "127.0.0.1",
                                                   "GRADIO_SERVER_PORT": str(port)})
        for _ in range(600):
            if listening_addresses(port) or process.poll() is not None:
                break
            time.sleep(0.5)
        if process.poll() is None and listening_addresses(port):
            return process, port
        process.kill()
        output = process.communicate(timeout=30)[0]
    pytest.fail(f"the exported Space never listened:\n{output[-3000:]}")


def test_an_exported_space_runs_from_its_requirements_alone(exported, wheelhouse, browser, tmp_path):
    python, installed = fresh_venv(tmp_path / "venv", wheelhouse, "-r", exported / "requirements.txt")
    assert "tough" not in installed and "gradio==" in installed  # the package is the folder's copy
    process, port = serve(python, exported, user_env(tmp_path / "hf"))
    try:
        assert listening_addresses(port) == ["127.0.0.1"]
        api = expected("hardeval")
        page, outside = open_page(browser, f"http://127.0.0.1:{port}/")
        page.click("#hardeval-demo")
        table = shown_table(page, "hardeval")
        assert table and {key: [c.rstrip("†") for c in cells[:2]] for key, cells in table.items()} == {
            key: [f"{fmt(r[key])} [{r[key + '_ci_low']:.4f}, {r[key + '_ci_high']:.4f}]" for r in api] for key in table}
        # The built-in shareable statistics (the demo's, from --stats) stand in for empty training data, with
        # the same numbers as the demo's training text.
        page.fill("#hardeval-train textarea", "")
        page.fill("#hardeval-names textarea", "A, B")
        page.click("#hardeval-run")
        page.wait_for_function("Array.from(document.querySelectorAll('#hardeval-headline th'))"
                               ".some(th => th.innerText.trim() == 'A')", timeout=60_000)
        again = shown_table(page, "hardeval")
        assert {key: [c.rstrip("†") for c in cells[:2]] for key, cells in again.items()} == {
            key: [c.rstrip("†") for c in cells[:2]] for key, cells in table.items()}
        assert page.inner_text("#hardeval-error").strip() == ""
        page.close()
        assert outside == []
    finally:
        process.terminate()
        process.wait(30)


def test_the_wheel_with_the_spaces_extra_serves_a_space(dist, wheelhouse, tmp_path):
    """`pip install 'tough-ner[spaces]'` from the wheel alone, then `tough-ner space hardeval`."""
    python, installed = fresh_venv(tmp_path / "venv", wheelhouse, f"{dist[0]}[spaces]")
    assert "tough-ner==0.1.0" in installed and "gradio==" in installed
    work = tmp_path / "elsewhere"
    work.mkdir()
    script = tmp_path / "venv" / "bin" / "tough-ner"  # the console script pip wrote
    process, port = serve(python, work, user_env(tmp_path / "hf"), command=(script, "space", "hardeval"))
    try:
        assert listening_addresses(port) == ["127.0.0.1"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as page:
            assert page.status == 200 and "gradio" in page.read().decode("utf-8", "replace").lower()
    finally:
        process.terminate()
        process.wait(30)
