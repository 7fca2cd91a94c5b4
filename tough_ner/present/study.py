"""A study: many systems on many datasets, several runs (training seeds) each, in one run.

A study is a set of reports (DESIGN.md, Wave 3): each dataset gets the report ``report.run``
makes on its own, and the cross-dataset tables only read those results — no method is run a
second way.  The tables are

- ``headline``: every headline row as systems × datasets (value, std over runs, interval, n,
  the dataset's own verdicts) and, per compared pair, one verdict pooled over the datasets
  (``POOLED_TEST``), Holm-adjusted over the pooled family;
- ``model_wise``: the interpretable-evaluation paper's S^ρ (Spearman correlation of bucket F1
  with the bucket order) and S^σ (standard deviation of bucket F1) per system, dataset and
  attribute, with the exact permutation p-value of S^ρ, Holm over the family;
- ``attribute_wise``: its dataset measures ζ (the attribute's mean over the test entities) and
  ρ (the mean |S^ρ| over the systems) per dataset and attribute;
- ``diagnosis``: per dataset, each system's worst and best bucket per attribute (self
  diagnosis) and each compared pair's significant buckets (comparative diagnosis, read from
  the dataset's stored bucket verdicts);
- ``hardeval_domains``: HardEval of each dataset's test set against every dataset's training
  statistics (in-domain on the diagonal);
- ``tmr_languages``: the TMR recalls per system and language.

``study`` takes a mapping (or a TOML/YAML file, ``load_spec``); ``write`` writes the study's
JSON, HTML, Markdown and LaTeX and each dataset's own report.
"""
from __future__ import annotations

import itertools
import math
import os
import re
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..core.checks import collected_input_warnings, warn_input
from ..core.corpus import Corpus, read_conll, read_limits, refuse_deep_nesting, under_limits
from ..core.formats import system_predictions
from ..core.schemes import DECODING_KEYS, check_decoding
from ..core.scoring import check_beta
from ..core.stats import TrainStats, _results, _submit_on
from ..core.uncertainty import SMALL, adjust, check_options
from ..methods.buckets import ATTRIBUTES, model_wise, self_diagnosis
from ..methods.comparison import family, finish, pairs
from ..methods.hardeval import hardeval
from .formatting import format_p
from .labels import bucket_label, totals
from .report import run as run_report, run_labels, significant_buckets

POOLED_TEST = ("fixed-effect (inverse-variance) mean of the datasets' paired differences, standard errors from "
               "each dataset's bootstrap interval; two-sided z-test")
SPEARMAN_TEST = "exact permutation test of Spearman's rank correlation with the bucket order (two-sided)"
OPTIONS = {"resamples": 1000, "seed": 0, "confidence": 0.95, "unit": "sentence", "alpha": 0.05, "baseline": None,
           "cache": True, "attack_seed": 0, "methods": None, "scheme": "auto", "mode": "lenient",
           "repair": "conlleval", "beta": 1.0}
STUDY_FILES = ("study.json", "study.html", "study.md", "study.tex")  # what write puts beside the datasets' folders
# The methods whose tables a study shows (option ``methods``; default all).  Each dataset's report
# always holds every method the files allow: a study reads reports, it does not make smaller ones.
METHODS = ("hardeval", "tmr", "bucket_f1", "nrb", "rockner")
TMR_KEYS = ("recall", "recall_seen", "recall_unseen_tokens", "recall_unseen_type", "recall_tcm_all")
HARDEVAL_KEYS = ("hardeval", "ter_unseen", "ter_diff")
# What the paper-shaped LaTeX table shows by default: (headline label, column title).
PAPER_MEASURES = (("F1", "F1"), ("TMR recall unseen", "TMR unseen"), ("hardeval (mean TER)", "HardEval"))


# ---- the specification ---------------------------------------------------------------------
@dataclass
class Dataset:
    """One dataset of a study: training data (a CoNLL file, saved statistics or a
    ``TrainStats``), the test set (a CoNLL file or a ``Corpus``), optional NRB/WTS and attacked
    sets (files with one prediction column per prediction set, in the study's order of systems
    and runs), and a language."""

    name: str
    train: Any
    test: Any
    language: Optional[str] = None
    nrb: Any = None
    wts: Any = None
    type_map: Optional[str] = None
    attacked: Sequence[Any] = ()
    attacks: Sequence[str] = ()  # attacked sets to make, when every run of the dataset is a model
    ratios: Sequence[float] = (0.5, 1.0)


@dataclass
class Spec:
    datasets: List[Dataset]
    systems: Dict[str, Dict[str, List[Any]]]  # system -> dataset -> runs (files, tag lists or Batches)
    options: Dict[str, Any] = field(default_factory=dict)
    folder: str = "."  # relative paths are read from here


def load_spec(path) -> Spec:
    """A study file: TOML (``.toml``) or YAML (``.yaml``/``.yml``, needs PyYAML)."""
    path = os.fspath(path)
    if path.endswith(".toml"):
        import tomllib

        with open(path, "rb") as handle, refuse_deep_nesting(path):
            try:
                data = tomllib.load(handle)
            except tomllib.TOMLDecodeError as error:
                raise ValueError(f"{path}: {error}") from None
    elif path.endswith((".yaml", ".yml")):
        try:
            import yaml
        except ImportError:
            raise ImportError(f"{path}: reading YAML needs PyYAML (pip install pyyaml), or write the study as "
                              ".toml") from None
        with open(path, encoding="utf-8") as handle, refuse_deep_nesting(path):
            try:
                data = yaml.safe_load(handle)
            except yaml.YAMLError as error:
                raise ValueError(f"{path}: {error}") from None
    else:
        raise ValueError(f"{path}: a study file is .toml, .yaml or .yml")
    return spec_of(data, os.path.dirname(os.path.abspath(path)), path)


def spec_of(data: Mapping, folder: str = ".", where: str = "the study") -> Spec:
    """A ``Spec`` from a mapping: ``datasets`` (a list of tables with ``name``, ``train``,
    ``test`` and optional ``language``, ``nrb``, ``wts``, ``type_map``, ``attacked``),
    ``systems`` (``{system: {dataset: run or [runs]}}``) and ``options`` (``OPTIONS``)."""
    if isinstance(data, Spec):
        return data
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: a study is a table with datasets, systems and options")
    unknown = sorted(set(data) - {"datasets", "systems", "options"})
    if unknown:
        raise ValueError(f"{where}: unknown section(s) {', '.join(map(repr, unknown))}: use datasets, systems, options")
    datasets = []
    for i, entry in enumerate(data.get("datasets") or []):
        if not isinstance(entry, Mapping) or not {"name", "train", "test"} <= set(entry):
            raise ValueError(f"{where}: dataset {i + 1} needs name, train and test")
        extra = sorted(set(entry) - set(Dataset.__dataclass_fields__))
        if extra:
            raise ValueError(f"{where}: dataset {entry['name']!r}: unknown key(s) {', '.join(map(repr, extra))}")
        attacked = entry.get("attacked") or ()
        datasets.append(Dataset(**{**entry, "name": str(entry["name"]),
                                   "attacked": [attacked] if isinstance(attacked, (str, os.PathLike)) else attacked}))
    if not datasets:
        raise ValueError(f"{where}: no datasets")
    names = [d.name for d in datasets]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: dataset names given twice: {sorted({n for n in names if names.count(n) > 1})}")
    systems: Dict[str, Dict[str, List[Any]]] = {}
    for system, by_dataset in (data.get("systems") or {}).items():
        if not isinstance(by_dataset, Mapping):
            raise ValueError(f"{where}: system {system!r}: give {{dataset: prediction file or [files]}}")
        unknown = sorted(set(by_dataset) - set(names))
        if unknown:
            raise ValueError(f"{where}: system {system!r} names unknown dataset(s) {unknown}; datasets: {names}")
        systems[str(system)] = {d: list(runs) if isinstance(runs, (list, tuple)) else [runs]
                                for d, runs in by_dataset.items()}
    if not systems:
        raise ValueError(f"{where}: no systems")
    options = dict(data.get("options") or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{where}: unknown option(s) {', '.join(map(repr, unknown))}: use {', '.join(OPTIONS)}")
    methods = options.get("methods")
    if methods is not None:
        if isinstance(methods, str) or not methods or sorted(set(methods) - set(METHODS)):
            raise ValueError(f"{where}: methods must list some of {', '.join(METHODS)}, got {methods!r}")
        options["methods"] = [m for m in METHODS if m in methods]
    try:
        check_decoding(*(options.get(key, OPTIONS[key]) for key in DECODING_KEYS))
        check_beta(options.get("beta", OPTIONS["beta"]))
        _check_options({**OPTIONS, **options})
    except ValueError as error:
        raise ValueError(f"{where}: options: {error}") from None
    try:  # names clashing with each other or with the study's files: refused before any work
        _folders(names)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    return Spec(datasets, systems, options, folder)


def _check_options(options: Mapping[str, Any]) -> None:
    """The resampling, seed, baseline and cache options' types and ranges (the report's own
    checks would fail deep inside a run, naming neither the option nor the file)."""
    for name, low in (("resamples", 0), ("seed", 0), ("attack_seed", 0)):
        value = options[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
    # as report.run checks them (0 resamples: no intervals)
    check_options(max(options["resamples"], 1), options["confidence"], options["unit"], options["alpha"])
    if options["baseline"] is not None and not isinstance(options["baseline"], str):
        raise ValueError(f"baseline must be a system's name, got {options['baseline']!r}")
    if not isinstance(options["cache"], (bool, str)):
        raise ValueError(f"cache must be true, false or a folder, got {options['cache']!r}")


# ---- one dataset ---------------------------------------------------------------------------
def _path(folder: str, value):
    return os.path.join(folder, value) if isinstance(value, (str, os.PathLike)) else value


def _predictions(test: Corpus, value, folder: str = ".", decoding: Optional[Mapping[str, str]] = None):
    """One prediction set for ``test``: tags, a ``Batch``, or a file (``formats.system_predictions``:
    a CoNLL file whose tokens and gold must be the test set's, or JSON Lines, ``{"path": ...,
    "format": ...}`` for a format other than tags, decoded as ``decoding`` says)."""
    decoding = dict(decoding or {})
    if isinstance(value, Mapping):
        return system_predictions(test, _path(folder, value["path"]), value.get("format", "tags"), **decoding)
    if not isinstance(value, (str, os.PathLike)):
        return value
    return system_predictions(test, _path(folder, value), **decoding)


def _test(dataset: Dataset, folder: str) -> Corpus:
    test = _path(folder, dataset.test)
    corpus = test if isinstance(test, Corpus) else read_conll(test)
    if not len(corpus):
        raise ValueError(f"dataset {dataset.name!r}: the test set {dataset.test} holds no sentence")
    return Corpus(corpus.tokens, corpus.tags, [], corpus.path, corpus.documents)


def _stats(dataset: Dataset, folder: str, decoding: Mapping[str, str]) -> TrainStats:
    return TrainStats.coerce(_path(folder, dataset.train), **decoding)


def _names(spec: Spec, dataset: str) -> List[str]:
    """The prediction sets of a dataset, in the study's order: one name per run."""
    return [system for system, by_dataset in spec.systems.items() for _ in by_dataset.get(dataset, ())]


def _is_model(value) -> bool:
    return isinstance(value, Mapping) and "model" in value


def run_dataset(spec: Spec, index: int) -> dict:
    """One dataset's report (``report.run``) and its test set scored by HardEval against every
    dataset's training statistics (in the study's order; its own on the diagonal).

    A run given as ``{"model": SPEC}`` (optionally ``label_map``) is a model the runner
    (``tough_ner.models``) runs on the test set, as ``tough-ner evaluate`` does; when every run
    of the dataset is a model, it also runs on the NRB/WTS sets and on the attacked sets the
    dataset names or makes (``attacks``, ``ratios``)."""
    dataset, folder, options = spec.datasets[index], spec.folder, {**OPTIONS, **spec.options}
    decoding = {key: options[key] for key in DECODING_KEYS}  # how every dataset's tags are decoded
    stats, test = _stats(dataset, folder, decoding), _test(dataset, folder)
    runs = [(system, value) for system, by_dataset in spec.systems.items()
            for value in by_dataset.get(dataset.name, ())]
    names = [system for system, _ in runs]
    if not names:
        raise ValueError(f"dataset {dataset.name!r}: no system has predictions for it")
    if bool(dataset.nrb) != bool(dataset.wts):
        raise ValueError(f"dataset {dataset.name!r}: give nrb and wts together")
    models = [value for _, value in runs if _is_model(value)]
    nrb_sets = attacked = None
    if models and len(models) == len(runs):  # evaluate's path: every set predicted by every model
        prepared = _prepare(dataset, folder, options, stats, test, runs, with_sets=True)
        test, nrb_sets, attacked = prepared.test, prepared.nrb_sets, prepared.attacked
    else:
        if models and (dataset.attacks or dataset.attacked or dataset.nrb):
            raise ValueError(f"dataset {dataset.name!r}: attacked and NRB/WTS sets with models need every run of "
                             "the dataset to be a model (files hold their own prediction columns)")
        predicted = iter(_prepare(dataset, folder, options, stats, test, runs, with_sets=False).test.predictions
                         if models else ())
        test.predictions.extend(next(predicted) if _is_model(value) else _predictions(test, value, folder, decoding)
                                for _, value in runs)
        if dataset.nrb:
            nrb_sets = tuple(read_conll(_path(folder, p), n_predictions=len(names)) for p in (dataset.nrb, dataset.wts))
        if dataset.attacked:
            versions = [(os.path.basename(os.fspath(p)), read_conll(_path(folder, p), n_predictions=len(names)))
                        for p in dataset.attacked]
            attacked = {label: [(name, Corpus(c.tokens, c.tags, [c.predictions[i]])) for name, c in versions]
                        for i, label in enumerate(run_labels(names))}
    results = run_report(stats, test, names=names, nrb_sets=nrb_sets, type_map=dataset.type_map, attacked=attacked,
                         bootstrap=options["resamples"], seed=options["seed"], confidence=options["confidence"],
                         unit=options["unit"], alpha=options["alpha"], baseline=options["baseline"], **decoding,
                         beta=options["beta"])
    from .report import _batch

    batches = [_batch(test, predictions, decoding) for predictions in test.predictions]  # one per run
    domains = {}
    for other in spec.datasets if _shown(options, "hardeval") else ():  # each run's TERs, then the runs' mean
        other_stats = stats if other.name == dataset.name else _stats(other, folder, decoding)
        scored = [hardeval(other_stats, batch) for batch in batches]
        domains[other.name] = {system: {key: _mean([s[key] for s, n in zip(scored, names) if n == system])
                                        for key in HARDEVAL_KEYS + ("n_unseen", "n_diff")}
                               for system in dict.fromkeys(names)}
    from .errors import error_rows

    errors = [row for label, batch in zip(run_labels(names), batches) for row in error_rows(stats, batch, label)]
    return {"results": results, "hardeval_domains": domains, "names": names, "errors": errors}


def _prepare(dataset: Dataset, folder: str, options: Mapping, stats: TrainStats, test: Corpus, runs, with_sets: bool):
    """The dataset's model runs, run by the model runner (``evaluation.prepare``): on the test
    set only, or (``with_sets``) also on NRB/WTS and the attacked sets."""
    from .evaluation import prepare

    models = [(system, value) for system, value in runs if _is_model(value)]
    maps = {value.get("label_map") for _, value in models}
    if len(maps) > 1:
        raise ValueError(f"dataset {dataset.name!r}: the models of one dataset share one label_map")
    sets = {}
    if with_sets:
        sets = dict(nrb=_path(folder, dataset.nrb), wts=_path(folder, dataset.wts),
                    attacked=[_path(folder, p) for p in dataset.attacked] or None, attacks=dataset.attacks,
                    ratios=dataset.ratios, attack_seed=options["attack_seed"])
    cache = options["cache"]
    return prepare([_path(folder, v["model"]) if os.path.exists(_path(folder, v["model"])) else v["model"]
                    for _, v in models], test, stats, names=[system for system, _ in models],
                   label_map=maps.pop(), type_map=dataset.type_map, cache=_path(folder, cache) if isinstance(
                       cache, str) else cache, **({"attacks": ()} | sets), **{key: options[key] for key in DECODING_KEYS})


def _mean(values: Sequence[float]) -> float:
    values = [float(v) for v in values]
    return math.fsum(values) / len(values) if values else math.nan


# ---- across datasets -------------------------------------------------------------------------
def pooled_test(tests: Sequence[Tuple[Mapping, bool]], a: str, b: str, confidence: float) -> dict:
    """One verdict for ``a - b`` over datasets: the fixed-effect (inverse-variance) mean of the
    datasets' paired differences, each dataset's standard error read from its bootstrap
    interval at ``confidence`` (``flip``: the dataset tested ``b - a``), and its two-sided
    z-test.  The datasets are independent test sets; one whose two systems never differ (an
    interval of width 0) carries no information about the others and is left out."""
    z_level = NormalDist().inv_cdf(0.5 + confidence / 2)
    weights, differences, used = [], [], 0
    for test, flip in tests:
        low, high = test["ci"]
        difference = test["difference"]
        if any(v is None or math.isnan(v) for v in (low, high, difference)) or high <= low:
            continue
        weights.append((2 * z_level / (high - low)) ** 2)
        differences.append(-difference if flip else difference)
        used += 1
    out = {"a": a, "b": b, "test": POOLED_TEST, "datasets": used, "differences": differences}
    if not used:
        return {**out, "difference": math.nan, "ci": [math.nan, math.nan], "p_value": math.nan, "z": math.nan}
    total = math.fsum(weights)
    mean = math.fsum(w * d for w, d in zip(weights, differences)) / total
    error = 1 / math.sqrt(total)
    z = mean / error
    return {**out, "difference": mean, "ci": [mean - z_level * error, mean + z_level * error], "z": z,
            "p_value": min(1.0, math.erfc(abs(z) / math.sqrt(2)))}  # 0.0 below double precision


def _tests_of(row: Mapping, a: str, b: str) -> List[Tuple[Mapping, bool]]:
    return [(t, t["a"] == b) for t in row.get("tests", ()) if {t["a"], t["b"]} == {a, b}]


def headline(datasets: Mapping[str, dict], systems: Sequence[str], alpha: float, baseline: Optional[str],
             confidence: float, methods: Optional[Sequence[str]] = None) -> List[dict]:
    """Every headline row (of ``methods``, default all) as systems × datasets, with the
    datasets' verdicts and one pooled verdict per compared pair (Holm over the pooled family:
    the rows shown)."""
    labels = list(dict.fromkeys(row["label"] for r in datasets.values() for row in r["summary"]["rows"]
                                if methods is None or row["method"] in methods))
    table = []
    for label in labels:
        rows = {name: next((row for row in r["summary"]["rows"] if row["label"] == label), None)
                for name, r in datasets.items()}
        first = next(row for row in rows.values() if row is not None)
        cells = {}
        for system in systems:
            cells[system] = {}
            for name, row in rows.items():
                if row is None or system not in row["values"]:
                    continue
                runs = datasets[name].get("runs", {}).get(system, {}).get(first["method"], {}).get(first["key"])
                cells[system][name] = {
                    "value": row["values"][system], "std": runs["std"] if runs else math.nan,
                    "runs": runs["runs"] if runs else 1, "ci": (row.get("ci") or {}).get(system),
                    "n": row["n"].get(system), "small": row["n"].get(system, 0) < SMALL,
                    "best": system in row.get("best", []), "verdicts": [
                        t for t in row.get("tests", ()) if system in (t["a"], t["b"])]}
        tests = [pooled_test([pair for row in rows.values() if row is not None for pair in _tests_of(row, a, b)], a, b,
                             confidence)
                 for a, b in pairs(systems, baseline)]
        table.append({"label": label, "method": first["method"], "key": first["key"], "better": first["better"],
                      "values": {s: _mean([c["value"] for c in cells[s].values()]) for s in systems},
                      "cells": cells, "tests": tests})
    finish(table, alpha, family="pooled across datasets")
    return table


def spearman_p(n: int, rho: float) -> float:
    """Two-sided p of Spearman's ρ between the order 1..n and n values without ties, exact over
    the n! orders (n ≤ 8; above, the normal approximation ρ·√(n − 1))."""
    if n < 3 or math.isnan(rho):
        return math.nan
    if n > 8:
        return min(1.0, 2 * NormalDist().cdf(-abs(rho) * math.sqrt(n - 1)))
    denominator = n * (n * n - 1)
    extreme = sum(abs(1 - 6 * sum((i - p) ** 2 for i, p in enumerate(order)) / denominator) >= abs(rho) - 1e-12
                  for order in itertools.permutations(range(n)))
    return extreme / math.factorial(n)


def model_wise_table(datasets: Mapping[str, dict], systems: Sequence[str], alpha: float) -> dict:
    """S^ρ and S^σ per system, dataset and attribute (bucket F1 as the report shows it: a
    system's runs' mean), each S^ρ with its exact permutation p, Holm over the family."""
    table: Dict[str, Dict[str, dict]] = {}
    tests, where = [], []
    for system in systems:
        table[system] = {}
        for name, results in datasets.items():
            details = results["details"].get(system)
            if details is None:
                continue
            buckets = details["bucket_f1"]["buckets"]
            measures = model_wise(buckets)
            for attribute, cell in measures.items():
                f1s = [row["f1"] for row in buckets[attribute] if not math.isnan(row["f1"])]
                ties = len(set(f1s)) < len(f1s)
                p = math.nan if attribute == "tag" or ties else spearman_p(len(f1s), cell["spearman"])
                cell.update(n_buckets=len(f1s), p_value=p)
                tests.append({"a": system, "b": name, "difference": cell["spearman"], "p_value": p})
                where.append(cell)
            table[system][name] = measures
    for cell, verdict in zip(where, adjust(tests, alpha, [None] * len(tests), "model-wise S^rho")):
        cell.update(p_adjusted=verdict["p_adjusted"], significant=verdict["significant"])
    most = max((c["n_buckets"] for c in where), default=0)
    floor = 2 / math.factorial(most) if 3 <= most <= 8 else 0.0  # the smallest p an exact test can give
    note = (f"with at most {most} non-empty buckets the smallest possible two-sided p is {floor:.3f}: no S^rho "
            f"can be significant at alpha = {alpha}" if floor >= alpha else "")
    return {"table": table, "test": SPEARMAN_TEST, "note": note,
            "family": family("model-wise S^rho", [{"tests": [t]} for t in tests], alpha, "S^rho values")}


def attribute_wise_table(datasets: Mapping[str, dict], model: Mapping[str, Mapping[str, dict]],
                         systems: Sequence[str]) -> Dict[str, dict]:
    """ζ and ρ per dataset and attribute (``buckets.attribute_wise``'s measures, ρ over the
    S^ρ of the study's table)."""
    table = {}
    for name, results in datasets.items():
        present = [s for s in systems if name in model[s]]
        zeta = results["details"][present[0]]["bucket_f1"]["diagnostics"]["zeta"]
        table[name] = {attribute: {"zeta": zeta[attribute],
                                   "rho": _mean([abs(model[s][name][attribute]["spearman"]) for s in present])}
                       for attribute in ATTRIBUTES[:-1]}
    return table


def diagnosis(datasets: Mapping[str, dict]) -> Dict[str, dict]:
    """Per dataset: each system's worst and best bucket per attribute (in words; a system's
    runs: of the bucket F1 the report shows, their mean, as ``model_wise_table``), and each
    compared pair's significant buckets (read from the dataset's stored bucket verdicts)."""
    out = {}
    for name, results in datasets.items():
        counts = totals(results)
        own = {}
        for system, details in results["details"].items():
            buckets = details["bucket_f1"]["buckets"]
            own[system] = {attribute: {**cell, **{f"{end}_bucket": bucket_label(
                attribute, buckets[attribute][cell[end]]["interval"], counts) if cell[end] is not None else None
                for end in ("worst", "best")}} for attribute, cell in self_diagnosis(buckets).items()}
        out[name] = {"self": own,
                     "comparative": [{"systems": entry["systems"], "family": entry["family"],
                                      "significant": significant_buckets(entry["bucket_f1"], counts)}
                                     for entry in results.get("comparisons", [])]}
    return out


def tmr_languages(spec: Spec, datasets: Mapping[str, dict], systems: Sequence[str]) -> Dict[str, dict]:
    """The TMR recalls per language (the mean over the language's datasets) and system."""
    languages: Dict[str, List[str]] = {}
    for d in spec.datasets:
        languages.setdefault(d.language or "unspecified", []).append(d.name)
    return {language: {"datasets": names, "systems": {s: {key: _mean(
        [datasets[n]["systems"][s]["tmr"][key] for n in names if s in datasets[n]["systems"]])
        for key in TMR_KEYS} for s in systems}} for language, names in languages.items()}


def study(spec, workers: int = 1, client=None, progress: Callable = lambda items, total: items) -> dict:
    """Run a study (``spec``: a ``Spec``, a mapping as ``spec_of`` reads, or a study file).

    Datasets run in ``workers`` processes (or on a Dask ``client``): the results do not depend
    on how many.  Returns ``{"datasets": {name: report results}, "study": cross tables,
    "options": ..., "systems": [...], "errors": {name: the error table's rows}}``."""
    if isinstance(spec, (str, os.PathLike)):
        spec = load_spec(spec)
    spec = spec_of(spec)
    options = {**OPTIONS, **spec.options}
    systems = list(spec.systems)
    if options["baseline"] is not None and options["baseline"] not in systems:
        raise ValueError(f"baseline {options['baseline']!r} is not one of the systems {systems}")
    indices = range(len(spec.datasets))
    if client is not None:  # a task per dataset, as build_distributed's (under the read limits in force here)
        done = progress(_delivered(_results(_submit_on(client, _run_elsewhere, [(spec, i) for i in indices]))),
                        len(indices))
    elif workers > 1 and len(indices) > 1:
        done = progress(_delivered(_in_processes(spec, indices, workers)), len(indices))
    else:
        done = progress((run_dataset(spec, i) for i in indices), len(indices))
    per = dict(zip((d.name for d in spec.datasets), done))
    datasets = {name: part["results"] for name, part in per.items()}
    tables_ = {"headline": headline(datasets, systems, options["alpha"], options["baseline"], options["confidence"],
                                    options["methods"]), "pooled_test": POOLED_TEST}
    if _shown(options, "bucket_f1"):
        model = model_wise_table(datasets, systems, options["alpha"])
        tables_.update(model_wise=model, attribute_wise=attribute_wise_table(datasets, model["table"], systems),
                       diagnosis=diagnosis(datasets))
    if _shown(options, "hardeval"):
        tables_["hardeval_domains"] = {name: part["hardeval_domains"] for name, part in per.items()}
    if _shown(options, "tmr"):
        tables_["tmr_languages"] = tmr_languages(spec, datasets, systems)
    return {"options": options, "systems": systems, "datasets": datasets,
            "errors": {name: part["errors"] for name, part in per.items()}, "study": tables_}


def _shown(options: Mapping, method: str) -> bool:
    return options["methods"] is None or method in options["methods"]


def _in_processes(spec: Spec, indices, workers: int):
    """The datasets' reports in worker processes, yielded in the study's order."""
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    # fork where the platform's libraries allow it (no interpreter start per worker)
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    n = len(indices)  # the limits passed: a spawned process would start with the defaults
    with ProcessPoolExecutor(max_workers=min(workers, n), mp_context=context) as pool:
        yield from pool.map(under_limits, [read_limits()] * n, [_run_elsewhere] * n, [spec] * n, indices)


def _run_elsewhere(spec: Spec, index: int) -> Tuple[dict, List[str]]:
    """``run_dataset`` in another process (a pool's, a Dask worker's), with the input warnings it
    gave, which the study's caller gives (``_delivered``): a worker's own are in no output the
    person reads.  A dataset that fails carries them on its error (``input_warnings``)."""
    with collected_input_warnings() as notes:
        try:
            part = run_dataset(spec, index)
        except Exception as error:
            error.input_warnings = notes  # pickled with the error (its __dict__)
            raise
    return part, notes


def _delivered(outcomes: Iterable[Tuple[dict, List[str]]]):
    """The datasets' parts from ``_run_elsewhere``, each one's input warnings given here first
    (``warn_input``: raised, or collected by a caller that collects them), a failed one's too."""
    outcomes = iter(outcomes)
    while True:
        try:
            part, notes = next(outcomes)
        except StopIteration:
            return
        except Exception as error:
            for note in getattr(error, "input_warnings", ()):
                warn_input(note)
            raise
        for note in notes:
            warn_input(note)
        yield part


# ---- views -----------------------------------------------------------------------------------
def _cell(cell: Optional[Mapping]) -> str:
    """``0.8123 ± 0.0040`` (mean ± sample std over runs) or ``0.8123``; ``–`` when absent."""
    if not cell or cell["value"] is None or (isinstance(cell["value"], float) and math.isnan(cell["value"])):
        return "–"
    std = cell.get("std")
    text = f"{cell['value']:.4f}" + (f" ± {std:.4f}" if std is not None and not math.isnan(std) else "")
    return text + ("†" if cell.get("small") else "")


def _pooled_text(test: Mapping) -> str:
    if math.isnan(test["p_value"]):
        return f"{test['a']} − {test['b']}: no pooled test ({test['datasets']} datasets with an interval)"
    mark = f", better: {test['better']}" if test.get("better") else ", not significant"
    def p(value):
        return "< 1e-300" if value == 0 else format_p(value)
    return (f"{test['a']} − {test['b']}: {test['difference']:+.4f} [{test['ci'][0]:.4f}, {test['ci'][1]:.4f}] over "
            f"{test['datasets']} dataset{'s' if test['datasets'] != 1 else ''}, p {p(test['p_value'])} "
            f"(Holm {p(test['p_adjusted'])}){mark}")


def tables(result: Mapping):
    """The study's tables as ``export.Table``s (Markdown; the HTML page uses the same rows)."""
    from .export import Cell, Table

    datasets, systems = list(result["datasets"]), result["systems"]
    study_ = result["study"]
    out = []
    rows = []
    for row in study_["headline"]:
        for s in systems:
            rows.append([Cell(row["label"]), Cell(s)] + [Cell(_cell(row["cells"][s].get(d))) for d in datasets]
                        + [Cell("yes" if s in row["best"] else "")])
    out.append(Table("Headline measures, systems × datasets (mean ± sample std over runs; † fewer than "
                     f"{SMALL} items); best: significantly better than every system it is compared with in the pooled "
                     f"test ({study_['pooled_test']}; Holm over the {len(study_['headline'])} rows)",
                     ["measure", "system"] + datasets + ["best (pooled)"], rows, "study-headline"))
    out.append(Table("Pooled verdicts per compared pair", ["measure", "pooled test"],
                     [[Cell(row["label"]), Cell(_pooled_text(t))] for row in study_["headline"] for t in row["tests"]],
                     "study-pooled"))
    if "model_wise" in study_:  # the bucket tables, when the study shows bucket F1
        model = study_["model_wise"]["table"]
        rows = []
        for s in systems:
            for d in datasets:
                if d in model[s]:
                    rows.append([Cell(s), Cell(d)] + [Cell(_model_text(model[s][d][a])) for a in ATTRIBUTES])
        out.append(Table("Model-wise measures S^ρ / S^σ per attribute (* S^ρ significant: "
                         f"{study_['model_wise']['test']}, "
                         f"{study_['model_wise']['family']['description']}) {study_['model_wise']['note']}".strip(),
                         ["system", "dataset"] + list(ATTRIBUTES), rows, "study-model-wise"))
        attributes = ATTRIBUTES[:-1]
        out.append(Table("Dataset measures ζ (mean attribute value) and ρ (mean |S^ρ| over systems)",
                         ["dataset", "measure"] + list(attributes),
                         [[Cell(d), Cell(m)] + [Cell(study_["attribute_wise"][d][a][m]) for a in attributes]
                          for d in datasets for m in ("zeta", "rho")], "study-attribute-wise"))
        diagnosed = study_["diagnosis"]
        out.append(Table("Self-diagnosis: each system's worst bucket per attribute (its F1)", ["dataset", "system"]
                         + list(ATTRIBUTES), [[Cell(d), Cell(s)] + [Cell(_worst_text(diagnosed[d]["self"][s].get(a)))
                                                                   for a in ATTRIBUTES]
                                              for d in datasets for s in systems if s in diagnosed[d]["self"]],
                         "study-self-diagnosis"))
        out.append(Table("Comparative diagnosis: the buckets where a pair differs significantly (largest first; "
                         "each dataset's verdicts: its bucket F1 table, Holm, or its headline for a bucket shown "
                         "there)", ["dataset", "pair", "significant buckets"],
                         [[Cell(d), Cell(" − ".join(entry["systems"])), Cell(_buckets_text(entry["significant"]))]
                          for d in datasets for entry in diagnosed[d]["comparative"]], "study-comparative-diagnosis"))
    if "hardeval_domains" in study_:
        domains = study_["hardeval_domains"]
        out.append(Table("HardEval of each test set (rows) against each training set (columns): mean TER, and TER on "
                         "the unseen tokens with their n; the diagonal is in-domain",
                         ["system", "test set"] + [f"train {d}" for d in datasets],
                         [[Cell(s), Cell(t)] + [Cell(_domain_text(domains[t][d].get(s))) for d in datasets]
                          for s in systems for t in datasets], "study-domains"))
    if "tmr_languages" in study_:
        languages = study_["tmr_languages"]
        out.append(Table("TMR recalls per language (mean over the language's datasets)",
                         ["language", "system"] + list(TMR_KEYS),
                         [[Cell(f"{lang} ({', '.join(v['datasets'])})"), Cell(s)]
                          + [Cell(v["systems"][s][k]) for k in TMR_KEYS]
                          for lang, v in languages.items() for s in systems],
                         "study-languages"))
    return out


def _worst_text(cell: Optional[Mapping]) -> str:
    if not cell or cell["worst"] is None:
        return "–"
    return f"{cell['worst_bucket']} ({cell['worst_f1']:.3f})"


def _buckets_text(found: Sequence[Mapping], most: int = 3) -> str:
    if not found:
        return "none"
    shown = "; ".join(f"{b['attribute']} {b['bucket']}: {b['difference']:+.3f} (n = {b['n']})" for b in found[:most])
    return shown + (f"; and {len(found) - most} more" if len(found) > most else "")


def _domain_text(cell: Optional[Mapping]) -> str:
    if cell is None:
        return "–"
    mean, unseen = (("–" if math.isnan(cell[k]) else f"{cell[k]:.4f}") for k in ("hardeval", "ter_unseen"))
    return f"{mean}; unseen {unseen} (n = {cell['n_unseen']:g})"


def _model_text(cell: Mapping) -> str:
    rho, sigma = cell["spearman"], cell["std"]
    rho_text = "–" if math.isnan(rho) else f"{rho:+.2f}" + ("*" if cell.get("significant") else "")
    return f"{rho_text} / {'–' if math.isnan(sigma) else f'{sigma:.3f}'}"


def latex(result: Mapping, measures: Sequence[Tuple[str, str]] = PAPER_MEASURES) -> str:
    """The papers' layout: systems as rows, datasets as column groups, ``mean ± sd`` cells (bold:
    significantly best in the dataset's own headline family); ready for ``\\input``."""
    from .export import latex_escape

    datasets, systems = list(result["datasets"]), result["systems"]
    by_label = {row["label"]: row for row in result["study"]["headline"]}
    measures = [(label, title) for label, title in measures if label in by_label]
    k = len(measures)
    lines = [r"% tough-ner study; needs \usepackage{booktabs}", r"\begin{tabular}{l" + "r" * (k * len(datasets)) + "}",
             r"\toprule",
             " & " + " & ".join(rf"\multicolumn{{{k}}}{{c}}{{{latex_escape(d)}}}" for d in datasets) + r" \\",
             "".join(rf"\cmidrule(lr){{{2 + i * k}-{1 + (i + 1) * k}}}" for i in range(len(datasets))),
             "system & " + " & ".join(latex_escape(title) for _ in datasets for _, title in measures) + r" \\",
             r"\midrule"]
    for s in systems:
        cells = []
        for d in datasets:
            for label, _ in measures:
                cell = by_label[label]["cells"][s].get(d)
                text = latex_escape(_cell(cell)).replace("±", r"$\pm$")
                cells.append(rf"\textbf{{{text}}}" if cell and cell["best"] else text)
        lines.append(latex_escape(s) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def markdown(result: Mapping) -> str:
    from .export import markdown_tables

    return markdown_tables(tables(result))


def render(result: Mapping, version: str = "") -> str:
    """The study as one self-contained HTML page: the tables and a chart of ρ and ζ per dataset."""
    import html

    from .export import _cell_text

    parts = [f"<h1>tough-ner study</h1><p class='note'>tough-ner {html.escape(version)}; datasets: "
             f"{html.escape(', '.join(result['datasets']))}; systems: {html.escape(', '.join(result['systems']))}. "
             "Each dataset's own report is in its folder.</p>"]
    for table in tables(result):
        head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
        body = "".join("<tr>" + "".join(_td(_cell_text(cell, 4)) for cell in row) + "</tr>" for row in table.rows)
        heading, note = _heading(table.title)
        parts.append(f"<h2 id='{table.label}'>{html.escape(heading)}</h2>"
                     + (f"<p class='note'>{html.escape(note)}</p>" if note else "")
                     + f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        if table.label == "study-attribute-wise":  # only there with bucket F1
            parts += [_chart(result["study"]["attribute_wise"], measure) for measure in ("rho", "zeta")]
    style = ("body{font-family:system-ui,sans-serif;max-width:72em;margin:2em auto;color:#111}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .5em;"
             "text-align:left}td.n{text-align:right;white-space:nowrap}.note{color:#333}")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>tough-ner study</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")


def _heading(title: str) -> Tuple[str, str]:
    """A table's title as a short heading and the note after it (from the first " (" or "; ")."""
    cut = min((i for i in (title.find(" ("), title.find("; "), title.find(": ")) if i > 0), default=len(title))
    return title[:cut], title[cut:].lstrip(" ;:")


def _td(text: str) -> str:
    """A cell; numbers right-aligned."""
    import html

    number = bool(re.match(r"^([-+−]?\d|nan$|–$)", text))
    return f"<td class='n'>{html.escape(text)}</td>" if number else f"<td>{html.escape(text)}</td>"


PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")


def _chart(table: Mapping[str, Mapping[str, dict]], measure: str = "rho") -> str:
    """One line per dataset over the attributes (parallel coordinates), as inline SVG: ρ on
    0..1; ζ, whose attributes have different units, scaled per attribute from the smallest to
    the largest dataset's value (the table gives the values)."""
    import html

    attributes = list(ATTRIBUTES[:-1])
    values = {name: {a: row[a][measure] for a in attributes} for name, row in table.items()}
    if measure == "zeta":
        for a in attributes:
            known = [v[a] for v in values.values() if not math.isnan(v[a])]
            low, high = (min(known), max(known)) if known else (0.0, 0.0)
            for v in values.values():
                v[a] = 0.5 if high == low else (v[a] - low) / (high - low)
    title = "ρ (mean |S^ρ|)" if measure == "rho" else "ζ, scaled per attribute (lowest dataset 0, highest 1)"
    width, height, left, top = 120 * len(attributes), 200, 40, 30
    x = {a: left + 120 * i + 40 for i, a in enumerate(attributes)}
    parts = [f"<figure><svg role='img' aria-label='{html.escape(title)} per attribute and dataset' "
             f"width='{width + left}' height='{height + top + 30 + 16 * len(values)}' "
             "xmlns='http://www.w3.org/2000/svg' font-size='13'>"]
    for a in attributes:
        parts.append(f"<line x1='{x[a]}' y1='{top}' x2='{x[a]}' y2='{top + height}' stroke='#999'/>"
                     f"<text x='{x[a]}' y='{top + height + 18}' text-anchor='middle'>{html.escape(a)}</text>")
    for i, (name, by_attribute) in enumerate(values.items()):
        points = [(x[a], top + height * (1 - v)) for a, v in by_attribute.items() if not math.isnan(v)]
        colour = PALETTE[i % len(PALETTE)]
        parts.append(f"<polyline fill='none' stroke='{colour}' stroke-width='2' points='"
                     + " ".join(f"{px:.1f},{py:.1f}" for px, py in points) + "'/>")
        parts.append(f"<text x='{left}' y='{top + height + 40 + 16 * i}' fill='{colour}'>"
                     f"— {html.escape(name)}</text>")
    parts.append(f"<text x='4' y='{top + 4}'>1</text><text x='4' y='{top + height}'>0</text></svg>"
                 f"<figcaption>{html.escape(title)}</figcaption></figure>")
    return "".join(parts)


def write(result: Mapping, folder, version: str = "", command: Optional[Sequence[str]] = None) -> List[str]:
    """``study.json``, ``study.html``, ``study.md`` and ``study.tex`` in ``folder``, and each
    dataset's report (``DATASET/report.json``, ``report.html`` and its full error table beside
    it, ``report-errors.csv`` and ``.jsonl``), every
    file written atomically; the paths written.  The JSON files and the pages record their
    provenance (``command``: the command line; by default this process's)."""
    from .._util import write_atomic
    from .errors import write_beside
    from .formatting import to_json
    from .html import render as render_report
    from .provenance import KEY, provenance

    folders = _folders(result["datasets"])
    os.makedirs(folder, exist_ok=True)
    made = {KEY: provenance(command)}
    written = []
    for name, results in result["datasets"].items():
        sub = os.path.join(folder, folders[name])
        os.makedirs(sub, exist_ok=True)
        report = {"tough_ner_version": version, "inputs": {"dataset": name}, "options": result["options"],
                  "results": results, **made}
        page = os.path.join(sub, "report.html")
        rows = result.get("errors", {}).get(name)
        beside = write_beside(page, rows) if rows is not None else ()  # the page shows the first rows, links these
        written += [os.path.join(sub, file) for _, file in beside]
        for file, text in (("report.json", to_json(report) + "\n"),
                           ("report.html", render_report(report, errors=rows, error_files=beside))):
            write_atomic(os.path.join(sub, file), text)
            written.append(os.path.join(sub, file))
    shown = {k: v for k, v in result.items() if k not in ("datasets", "errors")}
    for file, text in zip(STUDY_FILES, (to_json({"tough_ner_version": version, **shown, **made}) + "\n",
                                        render(result, version), markdown(result), latex(result))):
        write_atomic(os.path.join(folder, file), text)
        written.append(os.path.join(folder, file))
    return written


def _folders(datasets) -> Dict[str, str]:
    """Each dataset's folder name (``_safe``); two datasets sharing one, or one named as a
    study file (compared case-folded: some file systems ignore case), is an error."""
    folders = {name: _safe(name) for name in datasets}
    folded = [f.casefold() for f in folders.values()]  # CoNLL and conll: one folder where case is ignored
    clash = sorted({f for f in folders.values() if folded.count(f.casefold()) > 1})
    if clash:
        raise ValueError(f"datasets {sorted(n for n, f in folders.items() if f in clash)} would share the folder "
                         f"{clash[0]!r}: rename one")
    taken = next(((n, f) for n, f in folders.items() if f.casefold() in STUDY_FILES), None)
    if taken:
        raise ValueError(f"dataset {taken[0]!r}: its folder {taken[1]!r} would clash with the study's own file "
                         f"{taken[1].casefold()}: rename the dataset")
    return folders


def input_files(spec: Spec) -> List[Tuple[str, str]]:
    """(what, path) of every file the study reads: each dataset's files and each system's
    prediction files."""
    files = [(f"dataset {d.name}", _path(spec.folder, p)) for d in spec.datasets
             for p in (d.train, d.test, d.nrb, d.wts, *d.attacked) if isinstance(p, (str, os.PathLike))]
    for system, by_dataset in spec.systems.items():
        for dataset, runs in by_dataset.items():
            for run in runs:
                run = run.get("path") if isinstance(run, Mapping) else run
                if isinstance(run, (str, os.PathLike)):
                    files.append((f"system {system} on {dataset}", _path(spec.folder, run)))
    return files


def output_files(spec: Spec, folder) -> List[Tuple[str, str]]:
    """(what, path) of every file ``write`` may write into ``folder`` for this study: the
    study's four files, and each dataset's report and the error table beside its page."""
    from .errors import beside

    what = f"--out {os.fspath(folder)}:"
    files = [(what, os.path.join(folder, name)) for name in STUDY_FILES]
    for sub in _folders([d.name for d in spec.datasets]).values():
        page = os.path.join(folder, sub, "report.html")
        files += [(what, os.path.join(folder, sub, "report.json")), (what, page)]
        files += [(what, path) for _, path in beside(page)]
    return files


def _safe(name: str) -> str:
    """A dataset's folder name: its name with anything but letters, digits, ``-``, ``_`` and
    ``.`` replaced (a name cannot leave the study's folder)."""
    import re

    safe = re.sub(r"[^\w.-]", "_", name).strip(".") or "dataset"
    return safe
