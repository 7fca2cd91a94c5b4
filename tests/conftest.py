"""Shared fixtures and helpers (test modules import from here, never from each other)."""
import atexit
import contextlib
import functools
import importlib
import os
import random
import re
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONLL = ROOT.parent / "shared" / "data" / "conll2003"
BROWSER = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_configure(config):
    """Before any test module imports datasets / evaluate (they read these at import): tests
    never reach a hub, Gradio sends no analytics, and the whole session (its subprocesses and
    xdist workers included) uses one temporary Hugging Face home, removed at exit by the
    process that made it, so no test reads or leaves anything in the user's caches."""
    os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    # The suite runs a process per core: a second BLAS/torch thread only waits for the other
    # worker (the example's training took 132 s with two threads under load, 18 s with one).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if os.environ.get("HF_HOME") is None or os.environ.get("HF_HOME") != os.environ.get("TOUGH_NER_TEST_HF_HOME"):
        home = tempfile.mkdtemp(prefix="tough-ner-tests-hf-")
        os.environ["HF_HOME"] = os.environ["TOUGH_NER_TEST_HF_HOME"] = home
        for derived in ("HF_MODULES_CACHE", "HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
            os.environ.pop(derived, None)  # all of them under the temporary home
        atexit.register(shutil.rmtree, home, True)


def _conll(name):
    path = CONLL / f"{name}.txt"
    if not path.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the shared CoNLL-2003 data at {path}")
        pytest.skip(f"shared CoNLL-2003 data not found at {path}")
    return path


@pytest.fixture(scope="session")
def conll_stats():
    from tough_ner import TrainStats
    return TrainStats.from_conll(_conll("train"), keep_text=True)  # the text: attacks and scans read it


@pytest.fixture(scope="session")
def conll_test():
    from tough_ner import read_conll
    return read_conll(_conll("test"))


@pytest.fixture(scope="session")
def conll_dev():
    from tough_ner import read_conll
    return read_conll(_conll("dev"))


@pytest.fixture(scope="session")
def conll_train_path():
    return _conll("train")


@pytest.fixture(scope="session")
def process_cluster():
    """A real Dask cluster: a ``LocalCluster`` of 2 single-thread worker processes (tasks,
    their arguments and results pickled between processes; each worker keeps its own state)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def train_demo():
    """examples/train_demo.py as a module (its model and data builders), not run as a script."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_demo", ROOT / "examples" / "train_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def need(module: str):
    """Import an optional extra's module: skipped locally without it, a failure in CI (which installs every extra)."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"needs {module} (an optional extra)")


def chromium():
    """Debian's Chromium for the browser tests: skipped locally without it, a failure in CI."""
    if not Path(BROWSER).exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI needs Debian's chromium at {BROWSER}")
        pytest.skip(f"no browser at {BROWSER}")
    return BROWSER


def wordpiece_tokenizer(vocab):
    """A lowercasing BERT-style fast tokenizer over a fixed WordPiece vocabulary (built with
    ``tokenizers``: transformers' own BERT tokenizer class ignores a vocab file here)."""
    transformers, tokenizers = need("transformers"), need("tokenizers")
    pieces = tokenizers.models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]")
    wordpiece = tokenizers.Tokenizer(pieces)
    wordpiece.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    wordpiece.post_processor = tokenizers.processors.BertProcessing(
        ("[SEP]", vocab.index("[SEP]")), ("[CLS]", vocab.index("[CLS]")))
    return transformers.PreTrainedTokenizerFast(tokenizer_object=wordpiece, unk_token="[UNK]", pad_token="[PAD]",
                                                cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


# ---- helpers shared by several test modules (tough_ner imported lazily: after pytest_configure) ----
TRAIN_TOKENS = [["Paris", "is", "in", "France"], ["Paris", "Hilton", "sings"], ["Paris", "Hilton", "hotel"],
                ["New", "York", "is", "big"]]
TRAIN_TAGS = [["B-LOC", "O", "O", "B-LOC"], ["B-PER", "I-PER", "O"], ["O", "O", "O"], ["B-LOC", "I-LOC", "O", "O"]]


@functools.lru_cache(maxsize=None)
def small_stats():
    """Training statistics of TRAIN_TOKENS / TRAIN_TAGS (four sentences; types LOC and PER)."""
    from tough_ner import TrainStats
    return TrainStats.from_lists(TRAIN_TOKENS, TRAIN_TAGS)


def random_tags(rng, length, types=("PER", "LOC", "ORG")):
    from tough_ner.schemes import spans_to_tags
    spans, i = [], 0
    while i < length:
        if rng.random() < 0.35:
            end = min(length, i + rng.randint(1, 3))
            spans.append((i, end, rng.choice(types)))
            i = end
        i += 1
    return spans_to_tags(spans, length, "bio")


def random_batch(seed, n_sentences=8):
    """(tokens, gold, predictions) of random sentences over the words of TRAIN_TOKENS and Rome."""
    rng = random.Random(seed)
    words = ["Paris", "Hilton", "is", "Rome", "New", "York", "x", "France"]
    tokens = [[rng.choice(words) for _ in range(rng.randint(0, 9))] for _ in range(n_sentences)]
    gold = [random_tags(rng, len(s)) for s in tokens]
    pred = [g if rng.random() < 0.4 else random_tags(rng, len(g), ("PER", "LOC", "ORG")) for g in gold]
    return tokens, gold, pred


def corrupted(gold, rate, rng):
    """Gold tags with each entity (B- and its I-s) deleted with probability ``rate``."""
    out = []
    for sentence in gold:
        tags, drop = [], False
        for tag in sentence:
            if tag.startswith("B-"):
                drop = rng.random() < rate
            tags.append("O" if drop and tag != "O" else tag)
        out.append(tags)
    return out


@contextlib.contextmanager
def input_warnings(absent_types):
    """Assert the input warnings a block raises (the suite makes them errors elsewhere): some,
    each about predicted types absent from the gold and training data and naming
    ``absent_types``, when there are such types; none otherwise."""
    from tough_ner.core.checks import InputWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        yield
    found = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    if absent_types:
        assert found and all(m.startswith("predicted entity types absent") for m in found), found
        assert all(t in found[0] for t in absent_types), (found, absent_types)
    else:
        assert found == []


def batch_view(batch, stats=None):
    """Everything a method can read of a ``Batch``, as plain values (arrays with their dtype):
    two batches of the same sentences, however built, must give equal views."""
    import numpy as np

    def plain(array):
        return array.dtype.str, array.tolist()

    view = {"len": len(batch), "types": batch.types, "type_index": batch.type_index, "tokens": batch.tokens,
            "references": batch.references, "predictions": batch.predictions, "documents": batch.documents,
            "gold_spans": batch.gold_spans, "pred_spans": batch.pred_spans, "flat_tokens": batch.flat_tokens,
            "has_predictions": batch.has_predictions, "offsets": plain(batch.offsets),
            "token_sentences": plain(batch.token_sentences), "sentence_keys": plain(batch.sentence_keys)}
    for side in ("gold", "pred") if batch.has_predictions else ("gold",):
        view[side] = ([plain(a) for a in batch.span_arrays(side)], plain(batch.token_types(side)),
                      [plain(batch.token_labels(side, scheme)) for scheme in ("bilou", "bio", "io")],
                      batch.span_type_counts(side), batch.span_texts(side))
    if stats is not None:
        ids = batch.token_ids(stats)
        view["token_ids"] = plain(ids)
        vocab, lowered = set(stats.vocab), {token.lower() for token in stats.vocab}
        view["count_in"] = [batch.count_in(where, members, key) for where in (ids < 0, ids >= 0)
                            for members, key in ((vocab, None), (lowered, str.lower), (lowered, None))]
    return view


def undo(row):
    """The original sentence rebuilt from an attacked row and its records."""
    tokens, tags = list(row["tokens"]), list(row["ner_tags"])
    for record in row["replacements"]:  # word for word: positions do not move
        if record["level"] == "context":
            tokens[record["start"]] = record["original"]
        elif record["level"] in ("typo", "case"):
            tokens[record["start"]:record["end"]] = record["original"].split()
    # entities, and the words next to them made to agree ("the" put in: original ""), right to left
    for record in sorted((r for r in row["replacements"] if r["level"] in ("entity", "cross_type", "grammar")),
                         key=lambda r: -r["start"]):
        start, end, words = record["start"], record["end"], record["original"].split()
        tokens[start:end] = words
        if record["level"] == "grammar":
            assert set(tags[start:end]) <= {"O"}
            tags[start:end] = ["O"] * len(words)
            continue
        label = record["original_label"] or record["label"]
        tags[start:end] = ["B-" + label] + ["I-" + label] * (len(words) - 1)
    return tokens, tags


def check_attacked(original_tokens, original_tags, attacked):
    """The quality bars every attacked set meets."""
    from tough_ner import to_bio
    from tough_ner.schemes import decode
    assert len(attacked) == len(original_tokens)
    for s, row in enumerate(attacked):
        assert len(row["tokens"]) == len(row["ner_tags"])
        assert to_bio(row["ner_tags"]) == row["ner_tags"]  # valid IOB2
        for record in row["replacements"]:
            assert " ".join(row["tokens"][record["start"]:record["end"]]) == record["replacement"]
            if record["level"] in ("entity", "cross_type", "typo"):
                assert (record["start"], record["end"], record["label"]) in decode(row["ner_tags"])
        assert undo(row) == (original_tokens[s], to_bio(original_tags[s]))


# ---- the browser checks of the Spaces (tests/test_spaces.py, tests/test_install.py) ----
@pytest.fixture(scope="module")
def browser():
    need("gradio")
    playwright = need("playwright.sync_api")
    path = chromium()
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path, args=FLAGS)  # a fresh profile each launch
        yield launched
        launched.close()


def open_page(browser, url):
    """A page that refuses, and records, every request leaving 127.0.0.1."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    outside = []

    def guard(route):
        if route.request.url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()
    page.route("**/*", guard)
    page.goto(url)
    return page, outside


def shown_table(page, name):
    """The headline table as {measure: [cell per column]} (systems, n, paired test)."""
    page.wait_for_selector(f"#{name}-headline table", timeout=60_000)
    rows = page.locator(f"#{name}-headline table tr").all_inner_texts()
    return {cells[0]: cells[1:] for cells in (re.split(r"\t", row.strip()) for row in rows[1:])}


def results_table(page, name):
    """The results table as {key: (measure, n, [value per system])}."""
    page.wait_for_selector(f"#{name}-table table", timeout=60_000)
    page.wait_for_function(f"document.querySelector('#{name}-table').innerText.split('\\n').length > 12",
                           timeout=60_000)
    systems = [n.strip() for n in page.input_value(f"#{name}-names textarea").split(",")]
    lines = [line.strip() for line in page.inner_text(f"#{name}-table").split("\n") if line.strip()]
    width = 3 + len(systems)
    assert lines[1:1 + width] == ["measure", "key", "n"] + systems, lines[:10]
    cells = lines[1 + width:]
    assert len(cells) % width == 0, cells[:20]
    rows = [cells[i:i + width] for i in range(0, len(cells), width)]
    return {row[1]: (row[0], row[2], row[3:]) for row in rows}


def fmt(value):
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.4f}"
    return str(value)


def expected(name):
    """The Python API's numbers for the demo input of each app, per system column."""
    from tough_ner import Batch, TrainStats, hardeval, tmr
    from tough_ner.attacks import entity_attack
    from tough_ner.baselines import memorization
    from tough_ner.buckets import bucket_f1
    from tough_ner.demo import load_demo, load_demo_nrb
    from tough_ner.nrb import score_sets
    from tough_ner.rockner import rockner

    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    batches = [Batch(test.tokens, test.tags, p) for p in test.predictions]
    if name == "hardeval":
        return [hardeval(stats, b, ci=True) for b in batches]
    if name == "tmr":
        return [tmr(stats, b, ci=True) for b in batches]
    if name == "bucket_f1":
        return [bucket_f1(stats, b, ci=True) for b in batches]
    if name == "nrb":
        nrb_set, wts_set = load_demo_nrb()
        return [score_sets({"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[i]),
                            "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[i])}, "conll", stats, ci=True)
                for i in range(2)]
    attacked = entity_attack(test, ratio=1.0, seed=0, train=stats).to_dict()
    predicted = memorization(stats, attacked["tokens"])
    return [rockner(batches[0], Batch(attacked["tokens"], attacked["ner_tags"], predicted), ci=True)]


def not_blank(shot):
    from PIL import Image, ImageStat

    image = Image.open(shot).convert("L")
    return image.size[1] > 1500 and ImageStat.Stat(image).stddev[0] > 20


def listening_addresses(port):
    """The addresses listening on a TCP port, from /proc/net/tcp and tcp6 (state 0A = LISTEN)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as handle:
            for line in handle.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.rsplit(":", 1)
                if state == "0A" and int(hex_port, 16) == port:
                    raw = bytes.fromhex(address)
                    found.append(".".join(str(b) for b in raw[::-1]) if len(raw) == 4 else raw.hex())
    return found


# Runs a command bounded to a number of bytes of address space and writes its exit status and
# peak RSS to a file: Linux carries a process's peak RSS across fork and exec, so the command
# is started from this small process, not from the test's.
PEAK_LAUNCHER = r"""import os, resource, subprocess, sys
bound, report, *command = sys.argv[1:]
def bounded():
    resource.setrlimit(resource.RLIMIT_AS, (int(bound), int(bound)))
process = subprocess.Popen(command, preexec_fn=bounded)
_, status, usage = os.wait4(process.pid, 0)
with open(report, "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss / 1024} {usage.ru_utime + usage.ru_stime}")
"""


def command_usage(arguments, folder: Path, timeout: float = 120.0, address_space: int = 3 * 2**30, env=None):
    """Run ``tough-ner ARGUMENTS`` (``python -m tough_ner.cli``) in a subprocess bounded to
    ``address_space`` bytes; (exit status, stdout, stderr, peak RSS in MB of that process alone,
    its CPU seconds: user + system, the work it did, which a loaded machine does not stretch as
    it does the wall time)."""
    import subprocess
    import sys

    report = Path(folder) / "figures.txt"
    done = subprocess.run([sys.executable, "-c", PEAK_LAUNCHER, str(address_space), str(report), sys.executable,
                           "-m", "tough_ner.cli", *map(str, arguments)], capture_output=True, text=True,
                          timeout=timeout, env=env)
    code, peak, cpu = report.read_text().split()
    return int(code), done.stdout, done.stderr, float(peak), float(cpu)


def command_peak(arguments, folder: Path, timeout: float = 120.0, address_space: int = 3 * 2**30, env=None):
    """``command_usage`` less the CPU time: (exit status, stdout, stderr, peak RSS in MB)."""
    return command_usage(arguments, folder, timeout, address_space, env)[:4]


def at_work(process, cpu_seconds: float, signals, timeout: float = 120.0) -> bool:
    """Wait until ``process`` catches each of ``signals`` (its handlers are installed:
    /proc/PID/status, SigCgt) and has used ``cpu_seconds`` of CPU time, so that a signal sent
    then finds it at the same point of its work however loaded the machine is (a fixed sleep
    sent SIGINT to a child still starting under load: killed, status -2).  False if it ended
    first."""
    import time

    clock = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended between the poll and the read
            break
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        used = (int(fields[11]) + int(fields[12])) / clock  # utime and stime (fields 14 and 15 of stat)
        if all(caught >> (int(number) - 1) & 1 for number in signals) and used >= cpu_seconds:
            return True
        time.sleep(0.02)
    return False



def version_1_bytes(stats, shareable: bool = False) -> bytes:
    """``stats`` in a file of version 1 (before the label counts were sparse): a dense
    vocabulary x labels ``label_counts`` member and no recorded decoding (the default)."""
    import io
    import json
    import zipfile

    import numpy as np

    with zipfile.ZipFile(io.BytesIO(stats.to_bytes(shareable))) as archive:
        arrays = {name[:-4]: np.load(io.BytesIO(archive.read(name))) for name in archive.namelist()}
    meta = json.loads(arrays.pop("meta.json").tobytes())
    assert meta.pop("decoding") == {"scheme": "auto", "mode": "lenient", "repair": "conlleval"}
    meta["version"] = 1
    for name in ("label_starts", "label_columns", "label_values"):
        del arrays[name]
    out = io.BytesIO()
    np.savez(out, **{"meta.json": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                     "label_counts": stats.label_counts.dense()}, **arrays)
    return out.getvalue()
