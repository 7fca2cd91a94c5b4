"""Every fenced code block of README.md and docs/ (and of the files they include, such as the
metric cards) is run or checked here, so no example can rot.

How a block is treated is decided by its language and by an optional marker, an HTML comment
on the line before it (invisible on the page, read here):

- ``python``: run, each page's blocks in order in one namespace, in a temporary folder that
  holds the small files the examples name (``train.txt``, ``test.txt``, ``pred.txt`` ... made
  from the embedded demo corpus: see ``workspace``).  A block of ``>>>`` lines is a doctest:
  its printed values are checked too.
- ``bash``: run line by line in that folder (a ``\\`` continues a line).  A line that is one
  ``tough-ner`` command without redirections runs in this process (``tough_ner.cli.main``: no
  interpreter start and no imports per command); any other line runs with bash.  A block that
  installs packages must carry a marker.
- ``bibtex``: one well-formed entry.
- ``text``: must carry a marker (``output`` or ``file``).

Markers (``<!-- docs-test: KIND ARGUMENTS -->``):

- ``output``: the block is what the block before it prints; compared line by line, ``...``
  standing for any text (doctest's ELLIPSIS) and runs of spaces for any spaces.
- ``file NAME``: the block is the content of the file NAME, written to the folder for the
  blocks after it.
- ``setup checked-by: TEST``: ``pip install ".[extras]" && COMMAND``: the extras must exist and
  TEST, which runs COMMAND, must exist.
- ``ci``: the block is the command .ci/run runs, character for character.
- ``given trainer``: the block receives a tiny token-classification model and its data
  (``model``, ``tokenizer``, ``label_list``, ``raw_train``, ``raw_eval``, ``args``), built as
  examples/train_demo.py builds them, untrained.
- ``saved``: the block shows one file a benchmark saved (``--8<-- "bench/results/NAME.txt"``),
  checked by ``test_the_benchmark_figures_are_the_benchmarks_own_output``.
- ``skip REASON [checked-by: tests/FILE.py::TEST]``: not run; the reason is required and the
  test it names must exist.
"""
import contextlib
import doctest
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, NamedTuple, Optional

import pytest

from conftest import ROOT, train_demo

MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*([\w-]+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
SNIPPET = re.compile(r'^\s*-{1,}8<-{1,}\s+"([^"]+)"\s*$')
KINDS = {"output", "file", "setup", "ci", "given", "saved", "skip"}
RUNNABLE = {"python", "bash"}


class Block(NamedTuple):
    source: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    kind: Optional[str]  # the marker's kind, None without one
    argument: str

    def where(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}"


def included(path: Path) -> List[Path]:
    """The files a page includes with pymdownx.snippets (``--8<-- "path"`` or ``"path:section"``)."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = SNIPPET.match(line)
        if match:
            found.append(ROOT / match.group(1).split(":")[0])
    return found


def sources() -> List[Path]:
    """README.md, every page of docs/, and every Markdown file they include, once each."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    seen, order = set(), []
    while pages:
        page = pages.pop(0)
        if page in seen:
            continue
        seen.add(page)
        order.append(page)
        pages += [p for p in included(page) if p.suffix == ".md"]
    return order


def blocks(path: Path) -> List[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, lang = opening.groups()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        assert j < len(lines), f"{path}:{i + 1}: the code block is never closed"
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:j])
        before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        marker = MARKER.match(before)
        kind, argument = (marker.group(1), marker.group(2)) if marker else (None, "")
        found.append(Block(path, i + 1, lang, body + "\n", kind, argument))
        i = j + 1
    return found


PAGES = sources()


def test_the_pages_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/index.md", "docs/cli.md", "docs/python.md", "metrics/hardeval/README.md",
            "tools/MUTATION.md"} <= names


def test_every_block_has_a_known_language_and_marker():
    problems = []
    for page in PAGES:
        for block in blocks(page):
            if block.kind is not None and block.kind not in KINDS:
                problems.append(f"{block.where()}: unknown marker {block.kind!r}")
            elif block.kind == "skip" and len(block.argument.split("checked-by:")[0].split()) < 3:
                problems.append(f"{block.where()}: a skipped block needs a reason (three words at least)")
            elif block.kind is None and block.lang not in RUNNABLE | {"bibtex"}:
                problems.append(f"{block.where()}: a {block.lang or 'plain'} block needs a marker (output, file, skip)")
            elif block.kind is None and block.lang == "bash" and re.search(r"\b(pip|apt-get|venv)\b", block.text):
                problems.append(f"{block.where()}: a block that installs packages needs a marker")
    assert problems == []


def test_skipped_blocks_name_tests_that_exist():
    """A block left to another test is believed only if that test exists."""
    for page in PAGES:
        for block in blocks(page):
            assert block.kind != "setup" or "checked-by:" in block.argument, block.where()
            if block.kind in ("skip", "setup") and "checked-by:" in block.argument:
                for name in block.argument.split("checked-by:")[1].split():
                    file, _, test = name.partition("::")
                    assert re.search(rf"^(async )?def {re.escape(test)}\(", (ROOT / file).read_text(), re.M), \
                        f"{block.where()}: {name} not found"


def ci_command() -> str:
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "pytest" in line]
    assert len(lines) == 1, "the CI script runs pytest on one line"
    return lines[0].strip()


def optional_dependencies() -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]["optional-dependencies"]


def extras() -> set:
    return set(optional_dependencies())


def installed_extras(command: str) -> set:
    return {extra for group in re.findall(r'install[^"]*"\.\[([^\]]*)\]"', command) for extra in group.split(",")}


def test_the_readme_test_command_is_what_ci_runs():
    commands = [b.text.strip() for b in blocks(ROOT / "README.md") if b.kind == "ci"]
    assert commands == [ci_command()]
    assert "-n 2" in commands[0] and {"test", "docs"} <= installed_extras(commands[0]) <= extras()
    assert "mkdocs build --strict" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_is_short_and_links_into_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).is_file(), target


def test_every_page_is_in_the_site_navigation():
    yaml = pytest.importorskip("yaml")  # mkdocs's own dependency (the docs extra)

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(entry):
        if isinstance(entry, str):
            yield entry
        elif isinstance(entry, dict):
            for value in entry.values():
                yield from pages(value)
        elif isinstance(entry, list):
            for value in entry:
                yield from pages(value)

    listed = set(pages(config["nav"]))
    assert listed == {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}


def test_the_benchmark_figures_are_the_benchmarks_own_output():
    """docs/benchmarks.md shows bench/results/*.txt, each written by ``bench/X.py --save``."""
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    shown = re.findall(r'--8<-- "bench/results/(bench_\w+)\.txt"', page)
    saved = sorted(p.stem for p in (ROOT / "bench" / "results").glob("*.txt"))
    assert shown and sorted(shown) == saved
    for name in saved:
        text = (ROOT / "bench" / "results" / f"{name}.txt").read_text(encoding="utf-8")
        assert text.startswith(f"$ python bench/{name}.py") and (ROOT / "bench" / f"{name}.py").is_file()
        assert re.search(r"^[\w ]*(goals|settings): .*$", text, re.M), f"{name}: no closing line"
    listed = re.findall(r"^\| `(bench_\w+)\.py` \|", page, re.M)  # the table of what each one measures
    assert sorted(listed) == sorted(p.stem for p in (ROOT / "bench").glob("bench_*.py"))


def test_the_spacy_model_the_pages_name_is_the_one_the_spacy_extra_installs():
    """``en_core_web_sm`` is not installed by the extra: a command naming it fails."""
    pinned = optional_dependencies()["spacy"]
    model = next(r.split("==")[0] for r in pinned if r.startswith("en-core-web")).replace("-", "_")
    for page in PAGES:
        named = {name.replace("-", "_") for name in re.findall(r"en[_-]core[_-]web[_-][\w-]+", page.read_text())}
        assert named <= {model}, f"{page.relative_to(ROOT)} names {sorted(named - {model})}"


# ---------------------------------------------------------------------------------------------
# Running the blocks


def workspace(folder: Path) -> Path:
    """The files the examples name, made from the embedded demo corpus."""
    from tough_ner.core.corpus import write_conll
    from tough_ner.demo import load_demo, load_demo_nrb

    train, test = load_demo()
    memorizer, contextual = test.predictions
    write_conll(folder / "train.txt", train.tokens, train.tags)
    write_conll(folder / "test.txt", test.tokens, test.tags)
    write_conll(folder / "pred.txt", test.tokens, test.tags, contextual)
    write_conll(folder / "baseline.txt", test.tokens, test.tags, memorizer)
    nrb_set, wts_set = load_demo_nrb()
    for name, corpus in (("nrb", nrb_set), ("wts", wts_set)):
        write_conll(folder / f"en.{name}.conll", corpus.tokens, corpus.tags)  # the authors' files: token gold
        write_conll(folder / f"{name}.pred", corpus.tokens, corpus.predictions[1])  # a system's: token tag
        write_conll(folder / f"{name}.conll", corpus.tokens, corpus.tags, *reversed(corpus.predictions))
    from tough_ner import TrainStats
    from tough_ner.attacks import attack
    from tough_ner.baselines import memorization

    stats = TrainStats.from_corpus(train)
    for ratio in (0.2, 1.0):  # attacked test sets, predicted by the memorization baseline
        attacked = attack(test, level="entity", ratio=ratio, seed=0, train=stats).to_dict()
        write_conll(folder / f"att-{ratio:g}.pred", attacked["tokens"], attacked["ner_tags"],
                    memorization(stats, attacked["tokens"]))
    from study_data import spanish_files

    spanish_files(folder)  # a second dataset for the studies page: es-train.txt, es-test.txt, es-pred.txt ...
    for name in ("metrics", "examples"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def trainer_names() -> dict:
    """A tiny BERT tagger and its data, as examples/train_demo.py builds them (untrained)."""
    import datasets
    import transformers

    example = train_demo()
    from tough_ner.demo import load_demo

    train, test = load_demo()
    labels = ["O"] + [f"{p}-{t}" for t in ("LOC", "MISC", "ORG", "PER") for p in ("B", "I")]
    tokenizer = example.build_tokenizer(train.tokens)
    return {"tokenizer": tokenizer, "model": example.build_model(tokenizer, labels), "label_list": labels,
            "raw_train": datasets.Dataset.from_dict({"tokens": train.tokens, "ner_tags": train.tags}),
            "raw_eval": datasets.Dataset.from_dict({"tokens": test.tokens, "ner_tags": test.tags}),
            "args": transformers.TrainingArguments(output_dir="out", use_cpu=True, report_to=[], max_steps=1,
                                                   save_strategy="no", per_device_eval_batch_size=64,
                                                   disable_tqdm=True)}


def same_output(expected: str, got: str) -> bool:
    checker = doctest.OutputChecker()
    return checker.check_output(expected, got, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


def run_python(block: Block, namespace: dict) -> str:
    out = io.StringIO()
    if block.text.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.text, namespace, block.where(), str(block.source), block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=out.write, clear_globs=False)
        assert runner.failures == 0, f"{block.where()}: doctest failed\n{out.getvalue()}"
        return ""
    with contextlib.redirect_stdout(out):
        exec(compile(block.text, block.where(), "exec"), namespace)
    return out.getvalue()


def commands(text: str) -> List[str]:
    """The block's command lines, continuations joined."""
    return [line for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def run_bash(text: str, where: str, folder: Path) -> str:
    from tough_ner.cli import main

    printed = []
    for line in commands(text):
        words = shlex.split(line, comments=True)
        if words[:1] == ["tough-ner"] and not set("<>|&;$`") & set(line.split("#")[0]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(words[1:], as_command=False)
            assert code == 0, f"{where}: {line}: exit {code}\n{out.getvalue()[-3000:]}\n{err.getvalue()[-3000:]}"
            printed.append(out.getvalue())
            continue
        done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + line], cwd=folder, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{where}: {line}: exit {done.returncode}\n{done.stderr[-3000:]}"
        printed.append(done.stdout)
    return "".join(printed)


def check_bibtex(block: Block):
    text = block.text.strip()
    assert re.match(r"^@\w+\{[\w:.-]+,", text) and text.endswith("}"), f"{block.where()}: not a BibTeX entry"
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0, f"{block.where()}: unbalanced braces"
    assert depth == 0, f"{block.where()}: unbalanced braces"


def run_page(page: Path, folder: Path):
    namespace, printed, previous = {"__name__": "__docs__"}, None, None
    for block in blocks(page):
        if block.kind == "skip":
            printed = None
        elif block.kind == "saved":
            assert re.fullmatch(r'--8<-- "bench/results/bench_\w+\.txt"\n', block.text), block.where()
        elif block.kind == "output":
            assert printed is not None, f"{block.where()}: an output block follows no block that ran"
            assert same_output(block.text, printed), \
                f"{block.where()}: the page shows\n{block.text}\nbut {previous.where()} printed\n{printed}"
        elif block.kind == "file":
            (folder / block.argument).write_text(block.text, encoding="utf-8")
        elif block.kind == "ci":
            assert block.text.strip() == ci_command(), block.where()
        elif block.kind == "setup":  # the command after the install: run by the test it names
            install, _, command = block.text.strip().partition(" && ")
            assert install.startswith("python3 -m pip install ") and installed_extras(install) <= extras(), \
                block.where()
            assert command.split()[0] == "tough-ner", block.where()
            printed = None
        elif block.lang == "bibtex":
            check_bibtex(block)
        elif block.lang == "python":
            if block.kind == "given":
                assert block.argument == "trainer", block.where()
                namespace.update(trainer_names())
            printed = run_python(block, namespace)
        elif block.lang == "bash":
            printed = run_bash(block.text, block.where(), folder)
        else:
            raise AssertionError(f"{block.where()}: a {block.lang} block with marker {block.kind}")
        previous = block


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The examples' files, made once per process and copied for each page."""
    return workspace(tmp_path_factory.mktemp("docs-workspace"))


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_block_of_the_page_runs(page, template, tmp_path, monkeypatch):
    folder = tmp_path / "work"
    shutil.copytree(template, folder, symlinks=True)
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path])
    run_page(page, folder)


def test_the_site_builds_strictly(tmp_path):
    """What .ci/run does, so that a broken link fails here too."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
