"""bucket_f1 benchmark on CoNLL-2003 train -> test, with seqeval measured in the same run, and
the authors' tools run where a separate Python environment has them.

    python bench/bench_buckets.py [path/to/conll2003] [--quick] [--peer-python PATH]

Core figures: inputs in memory, training statistics built before.  seqeval's ``f1_score`` (the
yardstick) and ``classification_report`` run in the same run.

Peers, per system, on the same CoNLL test predictions (the memorization baseline's), run only
with ``--peer-python`` (a Python with the peer installed; they pull old pinned dependencies, so
keep them out of tough-ner's environment, e.g. ``python -m venv /work/peers-venv &&
/work/peers-venv/bin/pip install interpret-eval==0.1.7``):
- InterpretEval (``interpret-eval`` 0.1.7 on PyPI, the authors' tool): its NER configuration
  buckets sLen, eLen, eDen, rPos, tag and capital; the training-based attributes (eCon, eFre,
  tCon, tFre, oDen) need precomputed dictionaries the package does not ship, so it does less
  than tough-ner's nine attributes.  Whole job vs whole job: its ``interpret-eval`` command
  (fresh process, from a token/gold/prediction file) against ``tough-ner buckets`` from the
  files, both without intervals; core vs core: its ``evaluate`` function against ``bucket_f1``
  from tag lists, each timed the same way in a fresh process of its own after its imports and
  input loading (CPU time of the call, best of N; measured in this process instead, after the
  benchmarks above, tough-ner's call took about 10% longer).  Each whole job starts the way a
  regular install in a venv does (``common.clean_python``), as the peers run from theirs.
- ExplainaBoard (``explainaboard`` 0.12.7 on PyPI; its dependency checklist does not build,
  so install it as EXPLAINABOARD_INSTALL below says): its ``explainaboard`` command on a gold
  and a system file, with ``--skip-failed-analyses``: without a DataLab training set, 4 of its
  12 NER analyses (num_oov, fre_rank, span_econ, span_efre) fail and are skipped, leaving 8
  test-only ones.  Whole job vs whole job.
Otherwise each peer row says "not run" and why; the published times are quoted.

The last section times bucket_f1 with 1x and 50x training statistics (vocabulary grown by
renaming tokens per copy) and compares shareable with full statistics files.

"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from seqeval.metrics import classification_report, f1_score

from tough_ner import Batch, TrainStats, bucket_f1, read_conll
from tough_ner.baselines import memorization
from tough_ner.metrics.bucket_f1 import BucketF1

from common import DATA, Goal, NotRun, Quoted, best, clean_python, option, peak_mb, print_table, print_verdicts, \
    quick, run_process, start_cpu


def fresh_stats(train):
    """Stats with every cache bucket_f1 uses filled (what eCon, eFre, tFre need)."""
    stats = TrainStats.from_corpus(train)
    stats.token_totals, stats.mention_text_counts  # noqa: B018 -- fill the caches
    return stats


def main():
    train = read_conll(DATA / "train.txt")
    test = read_conll(DATA / "test.txt")
    t_read_stats, stats = best(lambda: fresh_stats(read_conll(DATA / "train.txt")), 5)
    t_stats, stats = best(lambda: fresh_stats(train), 5)
    predictions = memorization(stats, test.tokens)
    batch = lambda: Batch(test.tokens, test.tags, predictions)  # noqa: E731 -- decoding is part of the cost
    t_flat, _ = best(lambda: bucket_f1(stats, batch()), 10)
    t_detailed, _ = best(lambda: bucket_f1(stats, batch(), detailed=True, bootstrap=0), 10)
    t_bootstrap, _ = best(lambda: bucket_f1(stats, batch(), detailed=True, bootstrap=1000), 5)
    spans = [s[a:b] for s, sentence_spans in zip(test.tokens, Batch(test.tokens, test.tags).gold_spans)
             for a, b, _ in sentence_spans]
    t_occurrences, _ = best(lambda: stats.occurrences(spans), 10)
    metric = BucketF1(train=stats, keep_in_memory=True)
    inputs = dict(predictions=predictions, references=test.tags, tokens=test.tokens)
    t_metric, _ = best(lambda: metric.compute(**inputs), 5)
    t_seqeval, _ = best(lambda: classification_report(test.tags, predictions, digits=4), 5)
    t_f1, _ = best(lambda: f1_score(test.tags, predictions), 5)
    peak = peak_mb(lambda: bucket_f1(stats, batch(), detailed=True, bootstrap=1000))
    print(f"{DATA}: test {sum(map(len, test.tokens))} tokens; seconds unless stated")
    print_table([
        ("stats from the CoNLL train file (read + build + caches)", t_read_stats, Goal("<= 1 s", 1.0)),
        ("  the authors' tool, its training statistics", 470.0, Quoted("~470 s")),
        ("stats from lists (build + caches)", t_stats, ""),
        ("bucket_f1, all 9 attributes, flat keys", t_flat, Goal("<= 0.2 s", 0.2)),
        ("  the authors' tool, per system", 4.0, Quoted("~4 s")),
        ("  its successor, per system", 0.3, Quoted("~0.3 s")),
        ("bucket_f1, detailed tables and diagnostics, no bootstrap", t_detailed, ""),
        ("bucket_f1, detailed + 1000 bootstrap resamples", t_bootstrap, Goal("well under 1 s (<= 1 s)", 1.0)),
        ("  of which: occurrence counts of the gold test spans", t_occurrences, ""),
        ("evaluate BucketF1.compute (keep_in_memory)", t_metric, ""),
        ("seqeval f1_score (peer, run; the yardstick)", t_f1, ""),
        ("seqeval classification_report (peer, run)", t_seqeval, ""),
        ("ratio bucket_f1 flat / seqeval f1_score (x)", t_flat / t_f1, ""),
        ("ratio bucket_f1 flat / seqeval classification_report (x)", t_flat / t_seqeval, ""),
        ("peak RSS of this process, detailed + bootstrap (MB)", peak, ""),
    ])
    peers(stats, test, predictions)
    training_size_and_shareable(train, test, predictions)
    print_verdicts()


# Run in a fresh process as the peer's core is: time bucket_f1 from tag lists (CPU, after
# imports, loading and one untimed call that fills the statistics' one-off tables).
OURS_CORE = """import json, sys, time
from tough_ner import Batch, TrainStats, bucket_f1, read_conll
stats, test = TrainStats.load(sys.argv[1]), read_conll(sys.argv[2], 1)
tokens, tags, predictions = test.tokens, test.tags, test.predictions[0]
bucket_f1(stats, Batch(tokens, tags, predictions), bootstrap=0)
times = []
for _ in range(int(sys.argv[3])):
    start = time.process_time()
    bucket_f1(stats, Batch(tokens, tags, predictions), bootstrap=0)
    times.append(time.process_time() - start)
print(json.dumps(min(times)))
"""
# Run inside the peer's Python: time InterpretEval's evaluate() (CPU, after imports) on a file.
INTERPRET_CORE = """import json, os, sys, time, contextlib, io
os.chdir(sys.argv[1])  # it reads its configuration relative to the working folder
from interpret_eval.tasks.ner import tensoreval
times = []
for _ in range(int(sys.argv[4])):
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        tensoreval.evaluate(task_type="ner", analysis_type="single", systems=[sys.argv[2]], output=sys.argv[3])
    times.append(time.process_time() - start)
print(json.dumps(min(times)))
"""
# ExplainaBoard's dependency datalabs needs checklist, whose setup.py runs "pip install
# jupyter" (it fails to build in a clean venv): install it without that one.
EXPLAINABOARD_INSTALL = ("pip install --no-deps explainaboard==0.12.7 datalabs eaas, then pyarrow<20 pandas dill "
                         "xxhash multiprocess pathos fsspec[http] aiohttp 'huggingface-hub<1' requests lexicalrichness "
                         "sacrebleu sqlparse pymongo spacy compare-mt six nltk scipy scikit-learn matplotlib seqeval "
                         "(its dependency checklist does not build)")


def two_columns(tokens, tags) -> str:
    """Token and tag, tab-separated, a blank line after each sentence (ExplainaBoard's CoNLL input)."""
    return "".join("".join(f"{w}\t{t}\n" for w, t in zip(words, labels)) + "\n" for words, labels in zip(tokens, tags))


def peer_site(python: str, module: str) -> str:
    """The folder holding ``module`` in the peer's Python, or '' where it does not import."""
    done = subprocess.run([python, "-c", f"import os, {module}; print(os.path.dirname(os.path.dirname("
                                         f"{module}.__file__)))"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def peers(stats, test, predictions):
    """InterpretEval and ExplainaBoard against tough-ner, per system, when --peer-python is given."""
    from tough_ner.corpus import write_conll

    python = option("--peer-python")
    repeat = 1 if "--quick" in sys.argv else 3  # whole jobs
    core_repeat = 1 if "--quick" in sys.argv else 7  # cores, on both sides: the best of more short runs
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        conll, tsv = Path(folder) / "pred.conll", Path(folder) / "pred.tsv"
        write_conll(conll, test.tokens, test.tags, predictions)
        tsv.write_text(conll.read_text(encoding="utf-8").replace(" ", "\t"), encoding="utf-8")
        saved = Path(folder) / "stats.npz"
        stats.save(saved)
        ours = [clean_python(), "-m", "tough_ner.cli", "buckets", "--test", str(conll), "--resamples", "0"]
        from_train = run_process(ours + ["--train", str(DATA / "train.txt")], repeat)
        from_saved = run_process(ours + ["--train", str(saved)], repeat)
        core = subprocess.run([sys.executable, "-c", OURS_CORE, str(saved), str(conll), str(core_repeat)],
                              capture_output=True, text=True, check=True)
        t_core = json.loads(core.stdout.strip().splitlines()[-1])
        rows += [("interpreter start (python -c pass): tough-ner's venv", start_cpu(ours[0]), ""),
                 ("interpreter start: this environment (its .pth start-up hooks; not used)", start_cpu(sys.executable),
                  ""),
                 ("whole job: tough-ner buckets from the train + prediction files", from_train.cpu, ""),
                 ("whole job: tough-ner buckets, saved training statistics", from_saved.cpu, ""),
                 ("  its peak RSS (MB)", from_saved.peak_mb, ""),
                 ("core: bucket_f1 from tag lists, no intervals", t_core, "")]
        site = peer_site(python, "interpret_eval") if python else ""
        if site:
            command = [str(Path(python).parent / "interpret-eval"), "--task", "ner", "--systems", str(tsv),
                       "--output", str(Path(folder) / "ie.json")]
            theirs = run_process(command, repeat, cwd=site)
            core = subprocess.run([python, "-c", INTERPRET_CORE, site, str(tsv), str(Path(folder) / "ie2.json"),
                                   str(core_repeat)], capture_output=True, text=True, check=True)
            t_theirs = json.loads(core.stdout.strip().splitlines()[-1])
            rows += [("interpreter start: the peers' venv", start_cpu(python), ""),
                     ("whole job: InterpretEval command (6 test-only attributes)", theirs.cpu, ""),
                     ("  its peak RSS (MB)", theirs.peak_mb, ""),
                     ("core: InterpretEval evaluate() after imports", t_theirs, ""),
                     ("ratio whole job, saved statistics / InterpretEval (x)", from_saved.cpu / theirs.cpu,
                      Goal("<= 0.1x InterpretEval", 0.1)),
                     ("ratio whole job with statistics from train / InterpretEval (x)", from_train.cpu / theirs.cpu,
                      ""),
                     ("ratio core / InterpretEval core (x)", t_core / t_theirs, Goal("<= 0.1x InterpretEval", 0.1))]
        else:
            why = ("no --peer-python given" if not python else f"interpret_eval does not import in {python}")
            rows.append(("InterpretEval (interpret-eval 0.1.7), per system", None,
                         NotRun(why, Goal("<= 0.1x InterpretEval", 0.1))))
        eb_site = peer_site(python, "explainaboard") if python else ""
        if eb_site:
            gold_file, pred_file = Path(folder) / "gold.tsv", Path(folder) / "system.tsv"
            gold_file.write_text(two_columns(test.tokens, test.tags), encoding="utf-8")
            pred_file.write_text(two_columns(test.tokens, predictions), encoding="utf-8")
            command = [str(Path(python).parent / "explainaboard"), "--task", "named-entity-recognition",
                       "--custom-dataset-paths", str(gold_file), "--system-outputs", str(pred_file),
                       "--custom-dataset-file-type", "conll", "--output-file-type", "conll",
                       "--report-json", str(Path(folder) / "eb.json"), "--skip-failed-analyses"]
            theirs = run_process(command, repeat, cwd=folder)
            rows += [("whole job: ExplainaBoard command (8 test-only analyses)", theirs.cpu, ""),
                     ("  its peak RSS (MB)", theirs.peak_mb, ""),
                     ("ratio whole job, saved statistics / ExplainaBoard (x)", from_saved.cpu / theirs.cpu,
                      Goal("<= 0.5x ExplainaBoard", 0.5)),
                     ("ratio whole job with statistics from train / ExplainaBoard (x)", from_train.cpu / theirs.cpu,
                      "")]
        else:
            why = ("no --peer-python given" if not python else f"explainaboard does not import in {python}: "
                   + EXPLAINABOARD_INSTALL)
            rows.append(("ExplainaBoard (explainaboard 0.12.7), per system", None,
                         NotRun(why, Goal("<= 0.5x ExplainaBoard", 0.5))))
    print("\nPeers per system (CPU seconds; whole job = fresh process from the files)")
    print_table(rows, 66)


# ---- training-size independence and shareable statistics (issues 21 and 19) -----------------
def training_size_and_shareable(train, test, predictions, copies: int = 50):
    """bucket_f1 with 1x and ``copies``x training statistics, the vocabulary grown by renaming
    every token per copy (so nothing is shared between copies); times paired (1x, then Kx,
    alternately) after each statistics' one-off caches; then shareable vs full stats files."""
    import resource

    copies = 3 if quick() else copies
    tokens = train.tokens + [[f"{t}@{k}" for t in s] for k in range(1, copies) for s in train.tokens]
    small, large = TrainStats.from_corpus(train), TrainStats.from_lists(tokens, train.tags * copies)
    del tokens
    t_table_small, _ = best(lambda: TrainStats.from_bytes(small.to_bytes())._mention_occurrences, 1)
    t_table_large, _ = best(lambda: large._mention_occurrences, 1)
    times = {id(small): [], id(large): []}
    for _ in range(1 if quick() else 7):
        for stats in (small, large):
            times[id(stats)].append(best(lambda: bucket_f1(stats, Batch(test.tokens, test.tags, predictions)), 1)[0])
    t_small, t_large = min(times[id(small)]), min(times[id(large)])
    t_batch, batch = best(lambda: Batch(test.tokens, test.tags, predictions), 10)
    t_core = min(best(lambda: bucket_f1(small, Batch(test.tokens, test.tags, predictions)), 1)[0] - t_batch
                 for _ in range(1 if quick() else 7))
    full, shared = small.to_bytes(), small.to_bytes(shareable=True)
    t_load_full, _ = best(lambda: TrainStats.from_bytes(full), 5)
    t_load_shared, _ = best(lambda: TrainStats.from_bytes(shared), 5)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\ntraining statistics: 1x = {small.n_tokens} tokens, {len(small.vocab)} types; {copies}x (renamed "
          f"copies) = {large.n_tokens} tokens, {len(large.vocab)} types; whole-process peak RSS {peak:.0f} MB")
    print_table([
        ("eCon occurrence table, built once per stats, 1x", t_table_small, ""),
        (f"eCon occurrence table, built once per stats, {copies}x", t_table_large, ""),
        ("bucket_f1 flat keys (incl. Batch), 1x training stats", t_small, ""),
        (f"bucket_f1 flat keys (incl. Batch), {copies}x training stats", t_large, ""),
        (f"ratio {copies}x / 1x training (x)", t_large / t_small, Goal("<= 1.5x", 1.5)),
        ("Batch construction (test set)", t_batch, ""),
        ("ratio bucket_f1 core / its Batch (x)", t_core / t_batch, Goal("<= 3x", 3.0)),
        ("stats file size, full (MB)", len(full) / 2**20, ""),
        ("stats file size, shareable (MB)", len(shared) / 2**20, ""),
        ("load, full stats file", t_load_full, ""),
        ("load, shareable stats file", t_load_shared, ""),
    ])


if __name__ == "__main__":
    main()
