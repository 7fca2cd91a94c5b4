import importlib
import os
from pathlib import Path

import pytest

CONLL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "conll2003"

# Tests never reach a hub.
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


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
