"""Shared fixtures and helpers (test modules import from here, never from each other)."""
import atexit
import importlib
import os
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
