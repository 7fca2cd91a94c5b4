"""Write evaluate's offline module cache so ``evaluate.load("hardeval")`` and
``evaluate.load("tough-ner/hardeval")`` find this package's metrics without a network.

Writing a few files must not cost ``import evaluate`` (seconds): the cache location is worked
out here the way ``evaluate.config`` does it (``HF_MODULES_CACHE``, else ``$HF_HOME/modules``,
else ``$XDG_CACHE_HOME/huggingface/modules``, else ``~/.cache/huggingface/modules``); a test
checks it against evaluate's own answer."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Dict, List, Optional

from .._util import write_atomic

# metric name -> class name in tough_ner.metrics.<name>
METRICS: Dict[str, str] = {"hardeval": "Hardeval", "tmr": "Tmr", "bucket_f1": "BucketF1", "nrb": "Nrb",
                           "rockner": "Rockner"}
NAMESPACES = ("evaluate-metric", "tough-ner")


def metric_class(name: str):
    """The evaluate class of a tough-ner metric, by name (imported on demand: evaluate is heavy)."""
    import importlib

    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(METRICS)}")
    return getattr(importlib.import_module(f"tough_ner.metrics.{name}"), METRICS[name])


def shim_source(name: str) -> str:
    """The one-line module evaluate imports; only the concrete class is imported because
    evaluate takes the first EvaluationModule subclass it finds in the file."""
    return (f'"""tough-ner `{name}` metric for evaluate; the code lives in the tough_ner package."""\n'
            f"from tough_ner.metrics.{name} import {METRICS[name]}\n")


def default_modules_cache() -> str:
    """evaluate's dynamic-module cache (``evaluate.config.HF_MODULES_CACHE``), without importing evaluate."""
    home = os.path.expanduser(os.environ.get("HF_HOME", os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"),
                                                                      "huggingface")))
    return str(Path(os.environ.get("HF_MODULES_CACHE", os.path.join(home, "modules"))))  # not expanded, as there


def register(names: Optional[List[str]] = None, modules_cache: Optional[str] = None) -> List[str]:
    """Write the shims into evaluate's dynamic-module cache; returns the written files.

    ``modules_cache`` defaults to evaluate's ``HF_MODULES_CACHE`` (``$HF_HOME/modules``).
    """
    unknown = sorted(set(names or []) - set(METRICS))
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(METRICS)}")
    cache = os.fspath(modules_cache) if modules_cache is not None else default_modules_cache()
    root = os.path.join(cache, "evaluate_modules")  # evaluate.config.MODULE_NAME_FOR_DYNAMIC_MODULES
    os.makedirs(root, exist_ok=True)
    written = []
    for name in names or list(METRICS):
        source = shim_source(name)
        digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
        for namespace in NAMESPACES:
            folder = os.path.join(root, "metrics", f"{namespace}--{name}", digest)
            os.makedirs(folder, exist_ok=True)
            for init in (os.path.join(cache, "__init__.py"), os.path.join(root, "__init__.py"),
                         os.path.join(root, "metrics", "__init__.py"),
                         os.path.join(root, "metrics", f"{namespace}--{name}", "__init__.py"),
                         os.path.join(folder, "__init__.py")):
                if not os.path.exists(init):
                    write_atomic(init, "")
            path = os.path.join(folder, f"{name}.py")
            write_atomic(path, source)
            written.append(path)
    return written
