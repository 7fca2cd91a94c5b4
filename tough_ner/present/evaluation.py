"""Evaluate models, not prediction files: every method on the test set, its attacked versions
and NRB/WTS, from one or several models (``tough_ner.evaluate_model``, ``tough-ner evaluate``).

The attacked sets are made here (``attacks.attack``, seeded) or read; the model runner
(``tough_ner.models``) turns each model into a ``Batch`` per split, cached on disk; then the
report runs on them as on prediction files (``report.run``), so a model is compared with the
same verdicts as any system.  ``model_index`` writes the headline rows as the Hub model card's
``model-index``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .._util import write_atomic
from ..attacks import attack
from ..core.corpus import Corpus, read_conll
from ..core.schemes import DECODING_KEYS, check_decoding
from ..core.stats import TrainStats
from ..methods.nrb import TypeMap
from ..models import Model, Predicted, Split, from_object, run as run_models
from ..models.cache import Entry, default_folder
from ..models.runner import file_name
from .report import run, run_labels

# The attacked sets made by default, mildest first: the last (entity, the largest ratio) is
# the report's RockNER headline.  Context needs a masked language model (fill_mask=).
ATTACKS = ("typo", "case", "cross_type", "entity")
LEVELS = ATTACKS + ("context",)
RATIOS = (0.5, 1.0)


def attack_label(kind: str, ratio: float = 1.0) -> str:
    """A set's name: ``typo 1``, ``case lower``, ``cross_type 1``, ``context 1``, ``entity 0.5``."""
    return "case lower" if kind == "case" else f"{kind} {ratio:g}"


def _planned(kinds: Sequence[str], ratios: Sequence[float], fill_mask=None) -> List[Tuple[str, float]]:
    """The (kind, ratio) of each attacked set ``attacked_sets`` makes, in order."""
    unknown = sorted(set(kinds) - set(LEVELS))
    if unknown:
        raise ValueError(f"unknown attack(s) {', '.join(unknown)}: use {', '.join(LEVELS)}")
    if "context" in kinds and fill_mask is None:
        raise ValueError("the context attack needs a masked language model (fill_mask= / --mlm) and POS tags (pos=)")
    return [(kind, 1.0) for kind in kinds if kind != "entity"] + \
        [("entity", float(ratio)) for ratio in (ratios if "entity" in kinds else ())]


def attacked_sets(stats: TrainStats, test: Corpus, kinds: Sequence[str] = ATTACKS, ratios: Sequence[float] = RATIOS,
                  seed: int = 0, documents: Optional[Sequence] = None, fill_mask=None, pos=None
                  ) -> List[Tuple[str, Corpus]]:
    """The test set under each attack of ``kinds`` at ratio 1 (``case``: lower-cased), then
    under the entity attack at each of ``ratios`` (training mentions never used; the last is
    the report's headline); ``context`` needs ``fill_mask`` and ``pos``.  Each ``(label,
    corpus)`` holds tokens and gold tags; ``documents`` (one id per sentence) keeps a
    document's replacements alike and travels with the sets."""
    sets = []
    for kind, ratio in _planned(kinds, ratios, fill_mask):
        options = {"fill_mask": fill_mask, "pos": pos} if kind == "context" else {}
        made = attack(test, level=kind, ratio=ratio, seed=seed, train=stats, documents=documents, **options).to_dict()
        sets.append((attack_label(kind, ratio), Corpus(made["tokens"], made["ner_tags"], [], None,
                                                       made.get("document"))))
    return sets


@dataclass
class Prepared:
    """What the report needs from models run on every split: the training statistics, the test
    set with each model's ``Batch`` as its predictions, the systems' names (repeated: runs of
    one system), NRB/WTS with each model's tags, the attacked sets per run, each model's
    ``Predicted`` (label map, time, cache use), and the sets the models ran on."""

    stats: TrainStats
    test: Corpus
    systems: List[str]
    nrb_sets: Optional[Tuple[Corpus, Corpus]]
    type_map: TypeMap
    attacked: Optional[Dict[str, List[Tuple[str, Corpus]]]]
    predicted: List[Predicted]
    sets: "Sets"
    decoding: Dict[str, str] = field(default_factory=dict)  # scheme, mode, repair of every batch (report.run's)

    def models(self) -> List[dict]:
        """Each model: name, kind, spec, identity and the label map its labels were read with."""
        return [{**p.model.describe(), "label_map": p.label_map, "mapping": p.mapping} for p in self.predicted]


def _corpus(value, columns, what: str) -> Corpus:
    """A test, attacked, NRB or WTS set: a Corpus, or a CoNLL file (token ... gold, or ``columns``)."""
    if isinstance(value, Corpus):
        return value
    corpus = read_conll(value, columns=columns)
    if not len(corpus):
        raise ValueError(f"{what} {value} holds no sentence")
    return corpus


def models_of(model, names: Optional[Sequence[str]] = None, **options) -> List[Model]:
    """Runner models from ``model``: one spec or object, a list of them, or ``{name: spec or
    object}``; ``names`` name the list's models (a name given twice makes runs of one system)."""
    if isinstance(model, Mapping):
        pairs = list(model.items())
    elif isinstance(model, (list, tuple)):
        pairs = list(zip(names or [None] * len(model), model))
    else:
        pairs = [((names or [None])[0], model)]
    if names is not None and len(names) != len(pairs):
        raise ValueError(f"{len(names)} names for {len(pairs)} models")
    models = [from_object(item, name, **options) for name, item in pairs]
    defaults = [m.name for (name, _), m in zip(pairs, models) if name is None]
    for (name, _), m in zip(pairs, models):  # two unnamed models called alike are two systems, not two runs
        if name is None and defaults.count(m.name) > 1:
            m.name = m.spec
    return models


class _Child:
    """A function's value computed in a forked child process (another core) while this one
    goes on: the attacks and a model's calls each hold their own process's lock of the
    interpreter most of the time, so a thread would only take turns with them."""

    def __init__(self, function: Callable, *args):
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_in_child, args=(send, function, args), daemon=True)
        self._process.start()
        send.close()
        self._value = None

    def result(self):
        """The value (waiting for it); an error of the child is raised here."""
        if self._process is not None:
            try:
                ok, value = self._receive.recv()
            except EOFError:
                raise RuntimeError("the process making the attacked sets ended without them") from None
            finally:
                self._process.join()
                self._receive.close()
                self._process = None
            if not ok:
                raise value
            self._value = value
        return self._value


def _in_child(send, function: Callable, args: tuple) -> None:
    try:
        outcome = (True, function(*args))
    except Exception as error:  # raised again in the parent, with its message
        outcome = (False, error)
    send.send(outcome)
    send.close()


def _can_fork(fill_mask) -> bool:
    """Whether the attacks may be made in a forked child: on Linux (macOS's system libraries
    are not safe to fork), in a process running one thread (forking threads risks deadlocks),
    with no masked language model (torch's threads) involved."""
    import sys
    import threading

    return sys.platform.startswith("linux") and threading.active_count() == 1 and fill_mask is None


@dataclass
class Sets:
    """The sentences models run on: the test set, the attacked sets ``(label, corpus)`` (or,
    while a child process makes them, that child and their labels) and the NRB and WTS sets
    (or None), each with tokens and gold tags."""

    test: Corpus
    attacked: Union[List[Tuple[str, Corpus]], _Child]
    benchmark: Optional[Tuple[Corpus, Corpus]] = None
    labels: Optional[List[str]] = None

    def made(self) -> List[Tuple[str, Corpus]]:
        """The attacked sets (waiting for them while they are being made)."""
        if isinstance(self.attacked, _Child):
            self.attacked = self.attacked.result()
        return self.attacked

    def _split(self, k: int) -> Split:
        corpus = self.made()[k][1]
        return Split(corpus.tokens, corpus.tags, corpus.documents)

    def splits(self) -> Dict[str, Union[Split, Callable[[], Split]]]:
        """Every set by its split name: ``test``, each attacked set's label, ``nrb``, ``wts``;
        an attacked set still being made is a function that waits for it (the runner calls it
        when it gets there)."""
        pending = isinstance(self.attacked, _Child)
        labels = self.labels if pending else [label for label, _ in self.attacked]
        splits: Dict[str, Union[Split, Callable[[], Split]]] = {
            "test": Split(self.test.tokens, self.test.tags, self.test.documents)}
        for k, label in enumerate(labels):
            if label in splits or label in ("nrb", "wts"):
                raise ValueError(f"two sets are named {label!r}: give the attacked files distinct names")
            splits[label] = (lambda k=k: self._split(k)) if pending else self._split(k)
        if self.benchmark is not None:
            splits.update(nrb=Split(self.benchmark[0].tokens, self.benchmark[0].tags),
                          wts=Split(self.benchmark[1].tokens, self.benchmark[1].tags))
        return splits


def sets_of(stats: TrainStats, test, *, nrb=None, wts=None, attacked: Optional[Sequence] = None,
            attacks: Sequence[str] = ATTACKS, ratios: Sequence[float] = RATIOS, attack_seed: int = 0,
            fill_mask=None, pos=None, columns=None, background: bool = False) -> Sets:
    """The test set (a Corpus or CoNLL file), the attacked sets (``attacked`` files or Corpora,
    named by their file name, else made by ``attacked_sets``) and NRB/WTS.  ``background``:
    the attacked sets are made by a child process, where one can be forked, while this one
    runs the models (the runner waits for them when it gets there)."""
    test = _corpus(test, columns, "test")
    if (nrb is None) != (wts is None):
        raise ValueError("give nrb and wts together")
    benchmark = None if nrb is None else (_corpus(nrb, columns, "NRB set"), _corpus(wts, columns, "WTS set"))
    if attacked is not None:
        sets = [(getattr(item, "path", None) or f"attacked {k + 1}", item) if isinstance(item, Corpus) else
                (str(item), _corpus(item, columns, "attacked set")) for k, item in enumerate(attacked)]
        found = Sets(test, [(os.path.basename(label), corpus) for label, corpus in sets], benchmark)
    else:
        labels = [attack_label(kind, ratio) for kind, ratio in _planned(attacks, ratios, fill_mask)]
        arguments = (stats, test, attacks, ratios, attack_seed, test.documents, fill_mask, pos)
        if background and labels and _can_fork(fill_mask):
            found = Sets(test, _Child(attacked_sets, *arguments), benchmark, labels)
        else:
            found = Sets(test, attacked_sets(*arguments), benchmark)
    found.splits()  # names checked before any model runs
    return found


def write_inputs(folder, sets: Sets) -> List[str]:
    """Each split's sentences as ``<split>.jsonl`` in ``folder`` (one JSON list of tokens per
    line), for a model that runs elsewhere: its predictions, one line per sentence in a file of
    the same name, make a ``jsonl:`` model.  Returns the paths written."""
    import json

    os.makedirs(folder, exist_ok=True)
    written = []
    for name, split in sets.splits().items():
        split = split() if callable(split) else split
        path = os.path.join(folder, file_name(name))
        write_atomic(path, "".join(json.dumps(list(words), ensure_ascii=False) + "\n" for words in split.tokens))
        written.append(path)
    return written


def prepare(model, test, train, *, names: Optional[Sequence[str]] = None, nrb=None, wts=None,
            attacked: Optional[Sequence] = None, attacks: Sequence[str] = ATTACKS, ratios: Sequence[float] = RATIOS,
            attack_seed: int = 0, fill_mask=None, pos=None, columns=None,
            label_map: Union[None, str, Mapping[str, Optional[str]]] = None, type_map: TypeMap = None,
            cache: Union[bool, str, None] = True, progress: bool = False, sets: Optional[Sets] = None,
            scheme: str = "auto", mode: str = "lenient", repair: str = "conlleval", **model_options) -> Prepared:
    """Run every model on the test set, the attacked sets and NRB/WTS (``evaluate_model``'s
    arguments; ``sets``: those sets already made by ``sets_of``): the report's inputs."""
    decoding = dict(zip(DECODING_KEYS, check_decoding(scheme, mode, repair)))
    stats = TrainStats.coerce(train, keep_text=True, **decoding)  # the entity attacks read the training sentences
    models = models_of(model, names, **model_options)
    folder = default_folder() if cache is True else cache or None
    if sets is None:
        test = _corpus(test, columns, "test")
        # A model that has the test set to predict is loaded first, alone; the attacked sets are
        # then made by a child process while it predicts.
        for m in models:
            if m.kind != "jsonl" and not (folder and m.identity and
                                          Entry(folder, m.identity, "test", test.tokens).load() is not None):
                m.load_now()
        sets = sets_of(stats, test, nrb=nrb, wts=wts, attacked=attacked, attacks=attacks, ratios=ratios,
                       attack_seed=attack_seed, fill_mask=fill_mask, pos=pos, columns=columns, background=True)
    systems = [m.name for m in models]
    labels = run_labels(systems)
    test = sets.test
    known = sorted({label for label in stats.labels if label != "O"}
                   | {tag.partition("-")[2] for tags in test.tags for tag in tags if tag != "O"})
    predicted = run_models(models, sets.splits(), known, label_map, folder, progress, decoding)
    scored = Corpus(test.tokens, test.tags, [p.batches["test"] for p in predicted], test.path, test.documents)
    nrb_sets = None
    if sets.benchmark is not None:
        nrb_sets = tuple(Corpus(corpus.tokens, corpus.tags, [p.batches[name].predictions for p in predicted])
                         for name, corpus in zip(("nrb", "wts"), sets.benchmark))
    versions = {label: [(name, Corpus(corpus.tokens, corpus.tags, [p.batches[name]], None, corpus.documents))
                        for name, corpus in sets.made()] for label, p in zip(labels, predicted)} \
        if sets.made() else None
    return Prepared(stats, scored, systems, nrb_sets, type_map, versions, predicted, sets, decoding)


def evaluate_model(model, test, train, *, names: Optional[Sequence[str]] = None, nrb=None, wts=None,
                   attacked: Optional[Sequence] = None, attacks: Sequence[str] = ATTACKS,
                   ratios: Sequence[float] = RATIOS, attack_seed: int = 0, fill_mask=None, pos=None, columns=None,
                   label_map: Union[None, str, Mapping[str, Optional[str]]] = None, type_map: TypeMap = None,
                   cache: Union[bool, str, None] = True, progress: bool = False, bootstrap: int = 1000, seed: int = 0,
                   confidence: float = 0.95, unit: str = "sentence", alpha: float = 0.05,
                   baseline: Optional[str] = None, train_is_reference: bool = False, scheme: str = "auto",
                   mode: str = "lenient", repair: str = "conlleval", beta: float = 1.0, **model_options) -> dict:
    """Every method for one or several models: the report of ``tough_ner.present.report.run``
    (its ``attack_curve`` and RockNER rows for every model), plus ``models`` (each model's
    name, kind, spec and label map).

    ``model``: a spec (``transformers:FOLDER``, a model folder, ``spacy:NAME``, an installed
    spaCy package, ``module:function``, ``jsonl:FOLDER``; ``NAME=SPEC`` names it), a
    transformers model or pipeline (``tokenizer=``), a spaCy pipeline, a function of a list of
    sentences returning one prediction per sentence in any format, a list of these (``names``),
    or ``{name: model}``; a name given twice makes runs (seeds) of one system.  ``test``: a
    CoNLL file (token ... gold; ``columns`` to choose) or a Corpus; ``train``: anything
    ``TrainStats.coerce`` takes.  ``nrb``/``wts``: NRB and WTS sets (token ... gold).
    ``attacked``: attacked test sets (files or Corpora) to read, else ``attacks`` are made with
    ``attack_seed`` (entity at each of ``ratios``; ``context`` with ``fill_mask`` and ``pos``).
    ``label_map``: the models' labels to the data's types (``auto``, ``ontonotes``, a dict, or
    ``A=B,C=`` pairs; ``models.labels``).  ``cache``: the prediction cache's folder (True, the
    default: ``~/.cache/tough-ner/predictions``; None or False: no cache).  ``model_options``:
    ``tokenizer``, ``device``, ``batch_size``, ``aggregation`` (``first``, ``average``,
    ``max``).  The rest as for ``report.run``.  On a system that can fork, the attacked sets
    are made by a child process while the models run on the test set.  ``scheme``, ``mode``,
    ``repair``: how the test and attacked sets' tags and the models' tags are decoded (``Batch``;
    the training statistics are built so, when ``train`` is not already statistics); ``beta``:
    as ``report.run``.
    """
    prepared = prepare(model, test, train, names=names, nrb=nrb, wts=wts, attacked=attacked, attacks=attacks,
                       ratios=ratios, attack_seed=attack_seed, fill_mask=fill_mask, pos=pos, columns=columns,
                       label_map=label_map, type_map=type_map, cache=cache, progress=progress, scheme=scheme,
                       mode=mode, repair=repair, **model_options)
    return report(prepared, bootstrap=bootstrap, seed=seed, confidence=confidence, unit=unit, alpha=alpha,
                  baseline=baseline, train_is_reference=train_is_reference, beta=beta)


def report(prepared: Prepared, **options) -> dict:
    """``report.run`` on prepared models, with their description under ``models`` (decoded as
    they were prepared unless ``options`` say otherwise, which ``report.run`` refuses)."""
    results = run(prepared.stats, prepared.test, prepared.systems, prepared.nrb_sets, prepared.type_map,
                  prepared.attacked, **{**prepared.decoding, **options})
    results["models"] = prepared.models()
    return results


def _headline(results: Mapping, system: str):
    """(row, value) of each headline row with a value for ``system`` (NaN and not-run rows left out)."""
    import math

    for row in results["summary"]["rows"]:
        value = row["values"].get(system)
        if isinstance(value, (int, float)) and not math.isnan(value) and system not in row.get("not_run", ()):
            yield row, value


def model_index(results: Mapping, dataset_type: str, dataset_name: Optional[str] = None,
                split: str = "test") -> dict:
    """The Hub model card's ``model-index`` for each system of a report, in the form
    ``evaluate.push_to_hub`` writes: task ``token-classification``, the dataset, and a metric
    per headline row (``type`` the tough-ner method, ``name`` the row, ``config`` its key) with
    its value; rows without a value (NaN) are left out."""
    index = []
    for system in results["summary"]["systems"]:
        metrics = [{"type": f"tough-ner/{row['method']}", "value": value,
                    "name": row["label"] + (f" ({row['bucket']})" if row.get("bucket") else ""), "config": row["key"]}
                   for row, value in _headline(results, system)]
        index.append({"name": system, "results": [{
            "task": {"type": "token-classification", "name": "Token Classification"},
            "dataset": {"type": dataset_type, "name": dataset_name or dataset_type, "split": split},
            "metrics": metrics}]})
    return {"model-index": index}


def headline(results: Mapping) -> Dict[str, Dict[str, Any]]:
    """Each system's headline values (the summary rows) by ``{method}_{key}``, as the
    ``evaluate.save``-style JSON holds them."""
    return {system: {f"{row['method']}_{row['key']}": value for row, value in _headline(results, system)}
            for system in results["summary"]["systems"]}
