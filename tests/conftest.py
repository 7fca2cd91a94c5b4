"""Shared fixtures and helpers (test modules import from here, never from each other)."""
import atexit
import functools
import importlib
import os
import random
import shutil
import tempfile
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
    return TrainStats.from_conll(_conll("train"))


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


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


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
    pred = [g if rng.random() < 0.4 else random_tags(rng, len(g), ("PER", "LOC", "MISC")) for g in gold]
    return tokens, gold, pred


def undo(row):
    """The original sentence rebuilt from an attacked row and its records."""
    tokens, tags = list(row["tokens"]), list(row["ner_tags"])
    for record in row["replacements"]:  # word for word: positions do not move
        if record["level"] == "context":
            tokens[record["start"]] = record["original"]
        elif record["level"] in ("typo", "case"):
            tokens[record["start"]:record["end"]] = record["original"].split()
    for record in sorted((r for r in row["replacements"] if r["level"] in ("entity", "cross_type")),
                         key=lambda r: -r["start"]):
        start, end, words = record["start"], record["end"], record["original"].split()
        label = record["original_label"] or record["label"]
        tokens[start:end] = words
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
