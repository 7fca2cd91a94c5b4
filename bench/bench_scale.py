"""Training statistics at scale: CoNLL-2003 train copied 1x, 10x and 50x (about 10M tokens),
each copy's tokens renamed (``token~c``) so the vocabulary and the mention list grow with the
corpus (a worst case: real corpora's vocabularies grow more slowly).

Each build runs in its own process, so its peak resident memory (VmHWM: the whole process,
Python, libraries and the touched pages of memory-mapped files included) is its own.  Measured
per size: ``from_conll`` on a file in a temporary folder; ``from_dataset`` on a memory-mapped
Arrow file of string tags, alone and with ``num_proc=2`` (its CPU time and memory are the main
process's only); and the pre-Arrow ``from_dataset`` ("before": ``ds[column]`` lists through
``from_lists``, kept here only to measure against; 1x and 10x, as it holds the whole corpus as
Python lists).  Shown: wall and CPU time of the build, peak RSS, saved file size and load time;
growth is the log-log slope against the number of tokens (1 = linear).  Generated corpora are
deleted at exit.

    python bench/bench_scale.py [CONLL_DIR] [--quick]
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peak_rss_mib() -> float:
    """This process's peak resident memory.  VmHWM starts afresh at exec; ``ru_maxrss`` would
    keep the (larger) parent's peak, inherited through fork."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(spec: dict) -> None:
    """One build in this fresh process; prints its measures as JSON."""
    sys.path.insert(0, ROOT)
    from tough_ner import TrainStats

    if spec["how"] != "from_conll":
        import datasets

        datasets.disable_progress_bars()
        ds = datasets.Dataset.from_file(spec["path"])  # memory-mapped, as a saved or cached dataset is
    wall, cpu = time.perf_counter(), time.process_time()  # the build only (imports and opening excluded)
    if spec["how"] == "from_conll":
        stats = TrainStats.from_conll(spec["path"])
    elif spec["how"] == "from_dataset":
        stats = TrainStats.from_dataset(ds)
    elif spec["how"] == "num_proc=2":
        stats = TrainStats.from_dataset(ds, num_proc=2)
    else:  # before: the whole columns as Python lists, then the list build (the old from_dataset)
        stats = TrainStats.from_lists(ds["tokens"], [list(sentence) for sentence in ds["ner_tags"]])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = peak_rss_mib()
    stats.save(spec["out"])
    load = time.perf_counter()
    TrainStats.load(spec["out"])
    load = time.perf_counter() - load
    with open(spec["out"], "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    print(json.dumps({"wall": wall, "cpu": cpu, "rss": rss, "size": os.path.getsize(spec["out"]) / 2**20,
                      "load": load, "tokens": stats.n_tokens, "vocab": len(stats.vocab), "digest": digest}))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child(json.loads(sys.argv[2]))
    sys.exit(0)

import math  # noqa: E402  (the parent only: children import nothing they do not measure)
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from common import DATA, Goal, print_table, print_verdicts, quick  # noqa: E402
from tough_ner import read_conll  # noqa: E402

FACTORS = [1, 2] if quick() else [1, 10, 50]
BEFORE_UP_TO = 10  # the old path holds the corpus as Python lists: not run at 50x
GIB = 1536  # MiB: the 10M-token memory goal
HOWS = ("from_conll", "from_dataset", "num_proc=2", "before")


def write_corpus(corpus, factor: int, folder: str):
    """The CoNLL file and the Arrow file of ``factor`` renamed copies, written copy by copy."""
    conll, arrow = os.path.join(folder, f"train{factor}.txt"), os.path.join(folder, f"train{factor}.arrow")
    schema = pa.schema([("tokens", pa.list_(pa.string())), ("ner_tags", pa.list_(pa.string()))])
    tags = pa.array(corpus.tags, type=schema.field("ner_tags").type)
    with open(conll, "w", encoding="utf-8") as text, pa.OSFile(arrow, "wb") as sink, \
            pa.ipc.new_stream(sink, schema) as writer:
        for copy in range(factor):
            tokens = corpus.tokens if copy == 0 else [[f"{t}~{copy}" for t in s] for s in corpus.tokens]
            text.write("".join("".join(f"{t} {g}\n" for t, g in zip(s, g_)) + "\n"
                               for s, g_ in zip(tokens, corpus.tags)))
            writer.write_table(pa.table([pa.array(tokens, type=schema.field("tokens").type), tags], schema=schema))
    return conll, arrow


def run(how: str, path: str, folder: str) -> dict:
    spec = {"how": how, "path": path, "out": os.path.join(folder, f"{how}.npz")}
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:  # e.g. killed for memory: shown, and every goal on it is missed
        print(f"  {how} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        return {key: math.nan for key in ("wall", "cpu", "rss", "size", "load", "tokens", "vocab")} | {"digest": None}
    return json.loads(done.stdout.strip().splitlines()[-1])


def slope(xs, ys) -> float:
    """Least-squares slope of log(y) on log(x)."""
    points = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0 and math.isfinite(y)]
    if len(points) < 2:
        return math.nan
    return float(np.polyfit(*zip(*points), 1)[0])


def main() -> None:
    corpus = read_conll(DATA / "train.txt")
    folder = tempfile.mkdtemp(prefix="tough-ner-bench-scale-", dir="/tmp")
    results = {}
    try:
        for factor in FACTORS:
            conll, arrow = write_corpus(corpus, factor, folder)
            for how, path in (("from_conll", conll), ("from_dataset", arrow), ("num_proc=2", arrow),
                              ("before", arrow)):
                if (how == "before" and factor > BEFORE_UP_TO) or (quick() and how != "from_conll" and factor > 1):
                    continue  # --quick: one of each build, and a second size for the fit
                results[how, factor] = run(how, path, folder)
            for path in (conll, arrow):
                os.remove(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(f"{'build':<14} {'copies':>6} {'tokens':>10} {'vocab':>9} {'wall s':>8} {'cpu s':>8} {'peak RSS MiB':>12}"
          f" {'file MiB':>9} {'load s':>7}")
    for (how, factor), r in results.items():
        print(f"{how:<14} {factor:>6} {r['tokens']:>10.0f} {r['vocab']:>9.0f} {r['wall']:>8.2f} {r['cpu']:>8.2f} "
              f"{r['rss']:>12.0f} {r['size']:>9.1f} {r['load']:>7.3f}")
    digests = {f: {results[how, f]["digest"] for how in HOWS if (how, f) in results} for f in FACTORS}
    differing = [f for f in FACTORS if len(digests[f]) != 1 or None in digests[f]]  # None: a build failed
    same = not differing
    print(f"every build of a size wrote the same file: {'yes' if same else 'NO'}")
    for how in HOWS:
        sizes = [f for f in FACTORS if (how, f) in results]
        if len(sizes) < 2:
            continue
        tokens = [results[how, f]["tokens"] for f in sizes]
        print(f"growth of {how} (log-log slope against tokens, 1 = linear): "
              + ", ".join(f"{key} {slope(tokens, [results[how, f][key] for f in sizes]):.2f}"
                          for key in ("wall", "cpu", "rss", "size", "load")))

    big = FACTORS[-1] if not quick() else 1
    rows = []
    for factor in FACTORS:
        if ("before", factor) in results:
            rows.append((f"from_dataset CPU time / before's, {factor}x", results["from_dataset", factor]["cpu"]
                         / results["before", factor]["cpu"], Goal("<= 0.5 (2x faster)", 0.5)))
    tokens = results["from_conll", big]["tokens"]
    for how in ("from_conll", "from_dataset"):
        rows.append((f"{how} peak RSS MiB, {big}x ({tokens / 1e6:.1f}M tokens)", results[how, big]["rss"],
                     Goal("<= 1536 MiB at 10M tokens", GIB)))
        rows.append((f"{how} wall s, {big}x ({tokens / 1e6:.1f}M tokens)", results[how, big]["wall"],
                     Goal("<= 30 s at 10M tokens", 30.0)))
    rows.append(("sizes whose builds wrote different files", float(len(differing)), Goal("0 (same result)", 0.0)))
    print_table(rows)
    print_verdicts("bench_scale goals")


if __name__ == "__main__":
    main()
