"""tough-ner: where NER models fail, not just their F1.

Training statistics once (``TrainStats``), then hard-case metrics: HardEval token error
rates, Tough Mentions Recall, bucketed F1, Name Regularity Bias (``tough_ner.nrb``) and
RockNER attacks (``tough_ner.attacks``, ``tough_ner.rockner``).  ``evaluate`` modules live in
``tough_ner.metrics``; ``tough_ner.combine`` joins them; ``tough_ner.trainer`` plugs them
into ``transformers.Trainer``; ``tough_ner.evaluator`` is evaluate's token-classification
evaluator for them.  ``tough_ner.evaluate_model`` runs a model (``tough_ner.models``) on the
test set, its attacked versions and NRB/WTS, and reports every method.
"""
import sys
from types import ModuleType

# Each name is imported from its module when first used: "import tough_ner" loads no numpy,
# so the command line can configure numpy before anything loads it (tough_ner.cli).
_EXPORTS = {
    "Batch": "core.batch", "as_batch": "core.formats", "bucket_f1": "methods.buckets",
    "compare": "methods.comparison", "Corpus": "core.corpus", "from_dataset": "core.corpus",
    "read_conll": "core.corpus", "read_predictions": "core.corpus", "read_batch": "core.corpus",
    "hardeval": "methods.hardeval", "kfold_hard_tokens": "methods.hardeval", "match_scores": "core.matching",
    "decode": "core.schemes", "to_bilou": "core.schemes", "to_bio": "core.schemes", "to_io": "core.schemes",
    "TrainStats": "core.stats", "tmr": "methods.tmr", "combine": "metrics.combine",
    "evaluate_model": "present.evaluation", "evaluator": "metrics.evaluator", "study": "present.study",
}
# The layers (docs/layout.md): core <- models <- methods <- attacks <- present <- the outer ring (metrics,
# trainer, cli, spaces).  Each module's path in the flat layout it had before still
# names it: tough_ner.stats is tough_ner.core.stats, the same module object.
_MOVED = {name: f"{layer}.{name}" for layer, names in (
    ("core", ("schemes", "corpus", "formats", "batch", "stats", "scoring", "matching", "uncertainty", "checks")),
    ("methods", ("hardeval", "tmr", "buckets", "nrb", "rockner", "comparison")),
    ("attacks", ("dictionaries", "fine_classes", "augment", "taggers", "baselines")),
    ("present", ("findings", "glossary", "labels", "errors", "export", "report", "html", "formatting", "demo")),
    ("metrics", ("register",)),
) for name in names}

__version__ = "0.1.0"


def __getattr__(name):
    from importlib import import_module, util
    module = _EXPORTS.get(name)
    if module is None:  # a submodule (tough_ner.stats, ...), as the eager package gave them
        if name.startswith("_") or util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'tough_ner' has no attribute {name!r}")
        return import_module(f".{name}", __name__)
    value = getattr(import_module(f".{module}", __name__), name)  # combine imports evaluate: only when asked for
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(__all__) | {name for name in globals() if name.startswith("__")})


class _Package(ModuleType):
    """Keeps ``tough_ner.hardeval`` and ``tough_ner.tmr`` the functions: the first import of
    the submodule of the same name sets the package's attribute to that module."""

    def __setattr__(self, name, value):
        if isinstance(value, ModuleType) and _EXPORTS.get(name, "").rpartition(".")[2] == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


class _FlatPaths:
    """Finds ``tough_ner.stats`` (a flat path of ``_MOVED``) as the module it names now."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        from importlib.machinery import ModuleSpec
        package, _, name = fullname.partition(".")
        return ModuleSpec(fullname, _FlatPaths) if package == __name__ and name in _MOVED else None

    @staticmethod
    def create_module(spec):
        from importlib import import_module
        module = import_module(f"{__name__}.{_MOVED[spec.name.partition('.')[2]]}")
        spec.loader_state = module.__spec__  # the import system sets the flat spec on it next
        return module

    @staticmethod
    def exec_module(module):
        module.__spec__ = module.__spec__.loader_state  # already run where it lives: its own spec back


sys.modules[__name__].__class__ = _Package
sys.meta_path.append(_FlatPaths)


__all__ = ["Batch", "as_batch", "bucket_f1", "combine", "compare", "Corpus", "TrainStats", "decode", "evaluate_model",
           "evaluator", "from_dataset", "hardeval", "match_scores", "study",
           "kfold_hard_tokens", "read_batch", "read_conll", "read_predictions", "tmr", "to_bilou", "to_bio", "to_io",
           "__version__"]
