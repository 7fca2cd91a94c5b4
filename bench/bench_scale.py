"""Training statistics at scale: CoNLL-2003 train repeated to about 1M, 10M and 100M tokens,
half the copies with renamed tokens (``token~k``, 25 renamings taken in turn), so the
vocabulary and the mention list grow to about 600k types by 10M tokens and then stay (the
issue's corpus: a corpus whose text grows faster than its statistics, as real ones do).

Each build runs in its own process, so its peak resident memory (VmHWM: the whole process,
Python, libraries and the touched pages of memory-mapped files included) is its own.  Measured
per size: ``from_conll`` as built by default ("after": the text is not kept, memory bounded by
the statistics) beside ``from_conll(keep_text=True)`` ("before": the token sequence kept in
memory, the build before #38), in the same run; up to 10M tokens also ``from_dataset`` on a
memory-mapped Arrow file of string tags, alone and with ``num_proc=2`` (its CPU time and
memory are the main process's only), and the pre-Arrow list build ("lists": ``ds[column]``
through ``from_lists``, 1M only).  At 100M, the same corpus cut into 8 shard files built by
``build_distributed`` on a ``distributed.LocalCluster`` of 2 single-thread worker processes
(started before the clock, given the command's memory setting as ``tough-ner stats --dask``
gives it; its wall time against the one-process build's: five pairs of runs, each pair the one
process then Dask, and the median of the pairs' ratios, as the machine's speed drifts by a tenth
over minutes and a pair's two runs meet the same state; the workers' peak RSS, the CPU time
of the client and the workers beside the one process's, and when each worker ran each task).
Each pair also runs the same Dask build on a cluster whose workers do not sample their tasks'
stacks (Dask's profiler, on by default every 10 ms, off through the cluster's configuration,
``distributed.worker.profile.enabled``): shown beside the goal, which reads the default cluster.
Shown: wall and CPU time of the build, peak RSS, saved file size and load time; every build of
a size must write the same file (saved without the text, so that builds with and without it
compare).
Generated corpora (about 3 GB at 100M) are deleted at exit.

    python bench/bench_scale.py [CONLL_DIR] [--quick]
"""
from __future__ import annotations

import hashlib
import json
import math
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

    how, workers_rss, workers_cpu, timeline = spec["how"], math.nan, math.nan, ""
    if how in ("from_dataset", "num_proc=2", "lists"):
        import datasets

        datasets.disable_progress_bars()
        ds = datasets.Dataset.from_file(spec["path"])  # memory-mapped, as a saved or cached dataset is
    if how.startswith("dask"):
        from distributed import Client, LocalCluster, get_task_stream

        from tough_ner.stats import build_distributed

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        client.run(lambda: __import__("tough_ner.core.stats") and None)  # the workers' imports before the clock
        from tough_ner.cli._process import keep_freed_memory

        client.run(keep_freed_memory)  # as `tough-ner stats --dask` does (Dask's workers trim every free)
        workers_cpu = client.run(time.process_time)
        profiling = set(client.run(lambda: __import__("dask").config.get("distributed.worker.profile.enabled")).values())
        if profiling != {how == "dask"}:
            raise RuntimeError(f"{how}: the workers' profiler is {profiling}")
        stream = get_task_stream(client)
        stream.__enter__()  # the scheduler's record of tasks, from here (entered and left outside the clock)
    start = time.time()  # the clock the task stream's times are on
    wall, cpu = time.perf_counter(), time.process_time()  # the build only (imports and opening excluded)
    if how == "after":
        stats = TrainStats.from_conll(spec["path"])
    elif how == "before":
        stats = TrainStats.from_conll(spec["path"], keep_text=True)
    elif how == "from_dataset":
        stats = TrainStats.from_dataset(ds)
    elif how == "num_proc=2":
        stats = TrainStats.from_dataset(ds, num_proc=2)
    elif how.startswith("dask"):
        stats = build_distributed(spec["shards"], client)
    else:  # lists: the whole columns as Python lists, then the list build (the old from_dataset)
        stats = TrainStats.from_lists(ds["tokens"], [list(sentence) for sentence in ds["ner_tags"]])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = peak_rss_mib()
    if how.startswith("dask"):
        workers_cpu = sum(now - workers_cpu[worker] for worker, now in client.run(time.process_time).items())
        stream.__exit__(None, None, None)
        timeline = rounds(stream.data, start)
        workers_rss = max(client.run(peak_rss_mib).values())
        client.close()
        cluster.close()
    stats.save(spec["out"], shareable=True)  # the statistics without the text: every build writes the same file
    load = time.perf_counter()
    TrainStats.load(spec["out"])
    load = time.perf_counter() - load
    with open(spec["out"], "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    print(json.dumps({"wall": wall, "cpu": cpu, "rss": rss, "workers_rss": workers_rss, "workers_cpu": workers_cpu,
                      "timeline": timeline,
                      "size": os.path.getsize(spec["out"]) / 2**20, "load": load, "tokens": stats.n_tokens,
                      "vocab": len(stats.vocab), "digest": digest}))


def rounds(tasks, start: float) -> str:
    """Each worker's tasks of the build (a task's name, from its start to its end, in seconds
    since the build began), one line a worker: where the cluster's wall time goes."""
    lines = {}
    for task in sorted(tasks, key=lambda t: min(s["start"] for s in t["startstops"])):
        for span in task["startstops"]:
            if span["action"] == "compute":
                lines.setdefault(task["worker"], []).append(f"{str(task['key']).split('-')[0].lstrip('_')} "
                                                            f"{span['start'] - start:.2f}-{span['stop'] - start:.2f}")
    return "\n".join(f"  worker {k}: " + ", ".join(line) for k, line in enumerate(lines.values()))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child(json.loads(sys.argv[2]))
    sys.exit(0)

import shutil  # noqa: E402  (the parent only: children import nothing they do not measure)  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from common import DATA, Goal, print_table, print_verdicts, quick  # noqa: E402
from tough_ner import read_conll  # noqa: E402

COPIES = [1, 2] if quick() else [5, 49, 491]  # about 1M, 10M and 100M tokens
RENAMINGS = 25  # the renamed copies cycle through these: the vocabulary stops growing at ~10M tokens
SHARDS = 8
PAIRS = 1 if quick() else 5  # pairs of runs of the one-process and the Dask build at 100M: the median ratio
ARROW_UP_TO = 49  # from_dataset and num_proc=2 up to 10M tokens; the list build at 1M only
LISTS_UP_TO = 5
HOWS = ("after", "before", "from_dataset", "num_proc=2", "lists", "dask", "dask_quiet")
QUIET = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}  # dask_quiet: the cluster's workers profile nothing


def write_corpus(corpus, copies: int, folder: str, arrow: bool, shards: int):
    """The CoNLL file of ``copies`` copies (the odd ones renamed), written copy by copy; with
    ``arrow`` the Arrow file too; with ``shards`` the same text cut into that many CoNLL
    files of consecutive copies, as even as whole copies allow (61 or 62 of 491 each)."""
    conll = os.path.join(folder, f"train{copies}.txt")
    schema = pa.schema([("tokens", pa.list_(pa.string())), ("ner_tags", pa.list_(pa.string()))])
    tags = pa.array(corpus.tags, type=schema.field("ner_tags").type)
    variants = {}

    def variant(copy: int):
        k = 0 if copy % 2 == 0 else (copy // 2) % RENAMINGS + 1
        if k not in variants:
            tokens = corpus.tokens if k == 0 else [[f"{t}~{k}" for t in s] for s in corpus.tokens]
            variants[k] = tokens, "".join("".join(f"{t} {g}\n" for t, g in zip(s, g_)) + "\n"
                                          for s, g_ in zip(tokens, corpus.tags))
        return variants[k]

    paths = [os.path.join(folder, f"shard{copies}-{k:02d}.txt") for k in range(shards)]
    with open(conll, "w", encoding="utf-8") as text:
        for copy in range(copies):
            text.write(variant(copy)[1])
            if shards:
                with open(paths[copy * shards // copies], "a", encoding="utf-8") as shard:
                    shard.write(variant(copy)[1])
    path = None
    if arrow:
        path = os.path.join(folder, f"train{copies}.arrow")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
            for copy in range(copies):
                writer.write_table(pa.table([pa.array(variant(copy)[0], type=schema.field("tokens").type), tags],
                                            schema=schema))
    return conll, path, [p for p in paths if os.path.exists(p)]


def run(how: str, path: str, folder: str, shards=()) -> dict:
    spec = {"how": how, "path": path, "shards": list(shards), "out": os.path.join(folder, f"{how}.npz")}
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
           **(QUIET if how == "dask_quiet" else {})}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode != 0:  # e.g. killed for memory: shown, and every goal on it is missed
        print(f"  {how} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        return {key: math.nan for key in ("wall", "cpu", "rss", "workers_rss", "workers_cpu", "size", "load", "tokens",
                                          "vocab")} | {"digest": None, "timeline": ""}
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
        for copies in COPIES:
            biggest = copies == COPIES[-1]
            conll, arrow, shards = write_corpus(corpus, copies, folder, copies <= ARROW_UP_TO and not quick() or
                                                copies == COPIES[0], SHARDS if biggest else 0)
            builds = [("after", conll), ("before", conll)]
            if arrow:
                builds += [("from_dataset", arrow), ("num_proc=2", arrow)]
                if copies <= LISTS_UP_TO:
                    builds.append(("lists", arrow))
            if biggest:
                builds += [("dask", conll), ("dask_quiet", conll)]
            for how, path in builds:
                results[how, copies] = run(how, path, folder, shards if how.startswith("dask") else ())
            if biggest:  # one pair of runs varies with the machine: more pairs, taken in turn
                pairs = [tuple(results[how, copies] for how in ("after", "dask", "dask_quiet"))]
                for _ in range(PAIRS - 1):
                    pairs.append((run("after", conll, folder), run("dask", conll, folder, shards),
                                  run("dask_quiet", conll, folder, shards)))
                results["pairs", copies] = pairs
            for path in [conll, arrow, *shards]:
                if path:
                    os.remove(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(f"{'build':<13} {'copies':>6} {'tokens':>10} {'vocab':>8} {'wall s':>8} {'cpu s':>7} {'peak RSS MiB':>12}"
          f" {'workers MiB':>11} {'file MiB':>8} {'load s':>7}")
    for (how, copies), r in results.items():
        if how == "pairs":
            continue
        print(f"{how:<13} {copies:>6} {r['tokens']:>10.0f} {r['vocab']:>8.0f} {r['wall']:>8.2f} {r['cpu']:>7.2f} "
              f"{r['rss']:>12.0f} {r['workers_rss']:>11.0f} {r['size']:>8.1f} {r['load']:>7.3f}")
    print("(dask: cpu is the client's only; workers MiB is the larger of the two workers' peak RSS)")
    for (how, copies), r in results.items():
        if how == "pairs":
            print(f"{copies} copies, wall s of the one process (after), of dask and of dask_quiet, run in turn: "
                  + "; ".join(f"{a['wall']:.2f}, {d['wall']:.2f} ({d['wall'] / a['wall']:.3f}) and {q['wall']:.2f} "
                              f"({q['wall'] / a['wall']:.3f})" for a, d, q in r))
        if how.startswith("dask"):  # the cluster's CPU beside the one process's, and when each round ran
            print(f"{how}, {copies} copies: CPU s of the client and both workers {r['cpu'] + r['workers_cpu']:.2f} "
                  f"(workers {r['workers_cpu']:.2f}), one process (after) {results['after', copies]['cpu']:.2f}; "
                  f"the tasks, s from the start of the build:\n{r['timeline']}")
    digests = {c: {results[how, c]["digest"] for how in HOWS if (how, c) in results}
               | {r["digest"] for pair in results.get(("pairs", c), ()) for r in pair} for c in COPIES}
    differing = [c for c in COPIES if len(digests[c]) != 1 or None in digests[c]]  # None: a build failed
    print(f"every build of a size wrote the same file: {'yes' if not differing else 'NO'}")
    for how in HOWS:
        sizes = [c for c in COPIES if (how, c) in results]
        if len(sizes) < 2:
            continue
        tokens = [results[how, c]["tokens"] for c in sizes]
        print(f"growth of {how} (log-log slope against tokens, 1 = linear): "
              + ", ".join(f"{key} {slope(tokens, [results[how, c][key] for c in sizes]):.2f}"
                          for key in ("wall", "cpu", "rss", "size", "load")))

    small, middle, big = COPIES[0], COPIES[len(COPIES) // 2], COPIES[-1]
    rows = []
    if ("lists", small) in results:
        rows.append((f"from_dataset CPU time / the list build's, {small}x", results["from_dataset", small]["cpu"]
                     / results["lists", small]["cpu"], Goal("<= 0.5 (2x faster)", 0.5)))
    million = lambda c: f"{results['after', c]['tokens'] / 1e6:.0f}M tokens"  # noqa: E731
    for key, unit, copies, goal in (("rss", "peak RSS MiB", big, Goal("<= 800 MiB at 100M tokens", 800.0)),
                                    ("cpu", "CPU s", big, Goal("<= 50 s at 100M tokens", 50.0)),
                                    ("rss", "peak RSS MiB", middle, Goal("<= 300 MiB at 10M tokens", 300.0))):
        rows.append((f"after: {unit}, {million(copies)}", results["after", copies][key], goal))
        rows.append(("  before (text kept), same run", results["before", copies][key], "the peer"))
    ratios = [dask["wall"] / after["wall"] for after, dask, _ in results["pairs", big]]
    rows.append((f"dask, 2 workers, {SHARDS} shards: wall s / one process's (after), median of {len(ratios)} pairs, "
                 f"{million(big)}", float(np.median(ratios)), Goal("<= 0.625 (>= 1.6x the throughput)", 1 / 1.6)))
    rows.append(("  dask_quiet (the workers' profiler off), same pairs",
                 float(np.median([quiet["wall"] / after["wall"] for after, _, quiet in results["pairs", big]])),
                 "not the goal's cluster"))
    rows.append(("sizes whose builds wrote different files", float(len(differing)), Goal("0 (same result)", 0.0)))
    print_table(rows)
    print_verdicts("bench_scale goals")


if __name__ == "__main__":
    main()
