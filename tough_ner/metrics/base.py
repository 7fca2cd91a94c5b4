"""Shared glue between ``evaluate.Metric`` and the tough_ner methods."""
from __future__ import annotations

import os
from contextlib import suppress
from typing import Any, ClassVar, Dict, Optional, Sequence

import datasets
import evaluate
from datasets.utils.py_utils import temp_seed

from ..core.batch import Batch
from ..core.formats import as_batch
from ..core.matching import match_scores
from ..core.schemes import check_decoding
from ..core.stats import TrainStats
from ..core.uncertainty import check_options as check_resampling

# evaluate.EvaluationModule.__init__'s own keywords, forwarded untouched.
EVALUATE_KEYWORDS = ("config_name", "keep_in_memory", "cache_dir", "num_process", "process_id", "seed",
                     "experiment_id", "hash", "max_concurrent_cache_files", "timeout")


# Resampling options every metric takes (tough_ner.uncertainty); ``documents`` gives one
# document id per sentence of everything scored, in the order added, for unit="document".
RESAMPLING: Dict[str, Any] = {"ci": False, "n_resamples": 1000, "confidence": 0.95, "seed": 0, "unit": "sentence",
                              "documents": None}
RESAMPLING_ARGS = """    ci: add <key>_ci_low and <key>_ci_high (percentile bootstrap) after every rate (default False).
    n_resamples: bootstrap resamples (default 1000).  confidence: interval level (default 0.95).
    seed: resampling seed (default 0; at load time it is also evaluate's own seed).
    unit: "sentence" (default) or "document" (resample whole documents; needs documents=).
    documents: one document id per sentence of everything scored, in the order added."""

# How every metric decodes the tags (tough_ner.core.schemes); the batch is decoded so.
DECODING: Dict[str, Any] = {"scheme": "auto", "mode": "lenient", "repair": "conlleval"}
DECODING_ARGS = """    scheme: the tag scheme, "auto" (default: the lenient rule reads any prefix), "IOB1", "IOB2",
        "IOE1", "IOE2", "BIOES" (or "BILOU") or "IO"; a prefix the scheme does not use is an error.
    mode: "lenient" (default; as conlleval) or "strict" (as seqeval's strict mode; a declared scheme).
    repair: what becomes of an invalid sequence in lenient mode: "conlleval" (default; an invalid
        I-X begins a span) or "discard" (a span begun or left open where its scheme forbids is dropped).
    Every result has n_invalid_transitions_gold and n_invalid_transitions_pred: the transitions
    invalid in the scheme on each side."""

# The three inputs every metric documents the same way.
TAG_ARGS = """    predictions: predicted tags, one list of strings per sentence (any tag scheme).
    references: gold tags, same shape.
    tokens: the test tokens, same shape."""


# Input modes (config_name): the form of the predictions; references stay gold tags.
def _records(**fields) -> dict:
    return {name: datasets.Value(kind) for name, kind in fields.items()}


PREDICTION_FEATURES = {
    "tags": datasets.List(datasets.Value("string")),
    "spans": datasets.List(_records(start="int64", end="int64", type="string")),
    "chars": {"text": datasets.Value("string"),
              "entities": datasets.List(_records(start="int64", end="int64", label="string"))},
    "mentions": datasets.List(_records(text="string", type="string")),
}
INPUT_MODES = tuple(PREDICTION_FEATURES)
MODES_TEXT = """
Input modes (config_name at load time; references are always gold tags):
    "tags" (default): predictions are tags, like the references.
    "spans": per sentence a list of {"start", "end", "type"} token spans (end exclusive; (start, end, type)
        tuples are accepted too).
    "chars": per sentence {"text": ..., "entities": [{"start", "end", "label"}]} character spans over the
        sentence text (null text: the tokens joined by spaces); expanded to the tokens they touch.
    "mentions": per sentence a list of {"text", "type"} without positions (LLM output); a mention placed
        nowhere is a hallucinated false positive (n_hallucinated).
    Results then gain n_hallucinated ("mentions") or n_snapped ("chars").
    With "mentions", three more options say how the lists are placed (tough_ner.as_batch; docs/formats.md):
    placement ("leftmost", default, or "ordered"), normalised (default False) and fuzzy (a difflib
    similarity threshold, default None); results gain n_exact, n_normalised, n_fuzzy and n_unparseable.
    With "spans", "chars" and "mentions", allow_overlap=True keeps overlapping or nested predicted spans
    (default False: an error naming the sentence; a mention found on no free occurrence is
    hallucinated); only tmr scores them, the other metrics refuse them."""

# The options of the "mentions" mode: how the predicted lists are placed (as_batch's).
MENTIONS: Dict[str, Any] = {"placement": "leftmost", "normalised": False, "fuzzy": None}
# The option of the "spans", "chars" and "mentions" modes (as_batch's).
OVERLAP: Dict[str, Any] = {"allow_overlap": False}


def input_features(extra: Sequence[str] = (), mode: str = "tags") -> datasets.Features:
    """predictions (in the ``mode``'s form), references and tokens: one list of strings per
    sentence; each ``extra`` input is one string per sentence."""
    strings = datasets.List(datasets.Value("string"))
    return datasets.Features({"predictions": PREDICTION_FEATURES[mode], "references": strings, "tokens": strings,
                              **{name: datasets.Value("string") for name in extra}})


class ToughMetric(evaluate.Metric):
    """Base of the tough-ner metrics.

    Subclasses set ``options`` (name -> default; accepted at load time and per ``compute``
    call), the card texts, and implement ``score(batch, **options)``.  Any other keyword is
    a ``TypeError`` (evaluate would silently swallow a typo).
    """

    options: ClassVar[Dict[str, Any]] = {}
    # Extra per-sentence string inputs: name -> default; a single string applies to the whole batch.
    extra_inputs: ClassVar[Dict[str, str]] = {}
    needs_train: ClassVar[bool] = True
    # Add the partial-match table (tough_ner.match_scores) to the detailed output.
    match_table: ClassVar[bool] = False
    description: ClassVar[str] = ""
    citation_text: ClassVar[str] = ""
    inputs_text: ClassVar[str] = ""
    reference_urls: ClassVar[list] = []

    def __init__(self, train=None, **kwargs):
        if kwargs.get("config_name") == "mentions":  # this instance also takes the placement options
            self.options = {**self.options, **MENTIONS}
        if kwargs.get("config_name") in ("spans", "chars", "mentions"):
            self.options = {**self.options, **OVERLAP}
        unknown = sorted(set(kwargs) - set(EVALUATE_KEYWORDS) - set(self.options))
        if unknown:
            raise TypeError(
                f"{type(self).__name__} got unexpected keyword argument(s) {', '.join(unknown)}; it accepts "
                f"train, {', '.join(self.options) or 'no options'}, and evaluate's {', '.join(EVALUATE_KEYWORDS)}")
        if self.needs_train or train is not None:  # training data decoded as the load-time options say
            self.train_stats = TrainStats.coerce(train, **{name: kwargs.get(name, default)
                                                           for name, default in DECODING.items()})
        else:
            self.train_stats = None
        mode = kwargs.get("config_name") or "default"
        if mode not in ("default",) + INPUT_MODES:
            raise ValueError(f"config_name={mode!r}: the input modes are {', '.join(INPUT_MODES)}")
        self.input_mode = "tags" if mode == "default" else mode
        # evaluate's own seed keyword doubles as the resampling seed: read, not taken.
        self.defaults = {name: kwargs.get(name, default) if name == "seed" else kwargs.pop(name, default)
                         for name, default in self.options.items()}
        self.check_options(self.defaults)
        super().__init__(**kwargs)

    def check_options(self, options: Dict[str, Any]) -> None:
        """Raise ``ValueError`` for an option value the method cannot use."""
        if "ci" in options:
            check_resampling(options["n_resamples"], options["confidence"], options["unit"])
        if "scheme" in options:
            check_decoding(options["scheme"], options["mode"], options["repair"])

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=self.description, citation=self.citation_text, inputs_description=self.inputs_text,
            features=input_features(list(self.extra_inputs), self.input_mode),
            reference_urls=list(self.reference_urls))

    def add_batch(self, *, predictions=None, references=None, tokens=None, **kwargs):
        """Add a batch of sentences: predicted tags, gold tags and tokens."""
        self._require_tokens(predictions, references, tokens)
        unknown = sorted(set(kwargs) - set(self.extra_inputs))
        if unknown:
            raise TypeError(f"{type(self).__name__}.add_batch got unexpected keyword argument(s) {', '.join(unknown)}")
        return super().add_batch(predictions=self._storable(predictions, tokens), references=references, tokens=tokens,
                                 **self._extra_columns(kwargs, references))

    def compute(self, *, predictions=None, references=None, tokens=None, **kwargs):
        """Score everything added so far plus this batch; options override the load-time ones."""
        self._require_tokens(predictions, references, tokens)
        extra = {name: kwargs.pop(name) for name in self.extra_inputs if name in kwargs}
        unknown = sorted(set(kwargs) - set(self.options))
        if unknown:
            raise TypeError(f"{type(self).__name__}.compute got unexpected keyword argument(s) "
                            f"{', '.join(unknown)}; options are {', '.join(self.options) or 'none'}")
        if predictions is None and references is None and extra:
            raise ValueError(f"{', '.join(extra)} given without predictions and references")
        try:
            if predictions is None and references is None:
                result = super().compute(**kwargs)
            else:
                columns = {"predictions": self._storable(predictions, tokens), "references": references,
                           "tokens": tokens, **self._extra_columns(extra, references)}
                result = self._direct_compute(columns, kwargs) if self._direct(columns) else None
                if result is None:
                    result = super().compute(**columns, **kwargs)
        except BaseException:
            self._release()
            raise
        # evaluate 0.4.6 keeps released file locks on the object, which cannot be pickled.
        self.filelocks = None
        self.rendez_vous_lock = None
        return result

    def _direct(self, columns: Dict[str, Any]) -> bool:
        """Whether ``compute`` may first try scoring the given lists directly, skipping
        evaluate's Arrow round trip (35-64% of a compute): one process, nothing added before,
        tags mode, every column a ``list`` of ``list`` sentences (a per-sentence input: a list
        of ``str``), all of one length -- the shapes the round trip gives back unchanged.
        Tuples, numpy arrays, None and the like take evaluate's path, which converts or refuses them."""
        if self.num_process != 1 or self.process_id != 0 or self.writer is not None or self.input_mode != "tags":
            return False
        lengths = set()
        for name, column in columns.items():
            if type(column) is not list or not set(map(type, column)) <= (_STR if name in self.extra_inputs else _LIST):
                return False
            lengths.add(len(column))
        return len(lengths) == 1

    def _direct_compute(self, columns: Dict[str, Any], options: Dict[str, Any]) -> Optional[dict]:
        """The result of scoring ``columns`` directly, or None when that raised: evaluate's path
        then runs, so every error a caller sees is the one evaluate's path gives (its feature
        check, or the method's own), and inputs evaluate converts are scored as converted.  The
        direct path cannot succeed where evaluate's fails: ``Batch`` accepts only ``str``
        tokens and sentences of equal counts and lengths, and a tag that is not a string never
        decodes; a ``str`` subclass decodes as its ``str`` value, which is what evaluate stores."""
        try:
            with temp_seed(self.seed):  # as evaluate runs _compute
                return self._compute(**columns, **options)
        except Exception:
            return None

    def _storable(self, predictions, tokens):
        """Predictions as the records the features hold: token spans given as (start, end,
        type) tuples become dicts; a character record without text gets the tokens joined by spaces."""
        if predictions is None or tokens is None or self.input_mode not in ("spans", "chars"):
            return predictions
        if self.input_mode == "chars":
            return [{**record, "text": " ".join(words)} if isinstance(record, dict) and record.get("text") is None
                    else record for record, words in zip(predictions, tokens)]
        return [[span if isinstance(span, dict) else dict(zip(("start", "end", "type"), span)) for span in sentence]
                for sentence in predictions]

    def _release(self) -> None:
        """After a failed compute: release evaluate's file locks and delete its cache files, as a
        successful compute does (evaluate 0.4.6 keeps them, so each later compute waited for
        the lock's 1 s timeout).  The failed batch is dropped: the next compute starts afresh."""
        held = list(zip(getattr(self, "filelocks", None) or [], getattr(self, "file_paths", None) or []))
        if self.filelock is not None and self.cache_file_name:  # failed before the data was gathered
            held.append((self.filelock, self.cache_file_name))
        for lock, path in reversed(held):
            with suppress(OSError):
                os.remove(path)
            if lock is not None:
                lock.release()
        self.writer = self.buf_writer = self.data = None
        self.filelock = self.filelocks = self.file_paths = self.cache_file_name = None
        self.selected_feature_format = None

    def _extra_columns(self, given: Dict[str, Any], references) -> Dict[str, list]:
        """Each extra input as one string per sentence (a single string fills the batch)."""
        columns = {}
        for name, default in self.extra_inputs.items():
            value = given.get(name, default)
            columns[name] = [value] * len(references or []) if isinstance(value, str) else list(value)
        return columns

    @staticmethod
    def _require_tokens(predictions, references, tokens) -> None:
        if tokens is None and (predictions is not None or references is not None):
            raise ValueError("tokens= is required: the test tokens, one list of strings per sentence "
                             "(the metric classifies tokens and mentions by their text); evaluate's "
                             "evaluator('token-classification') gives a metric no tokens: use "
                             "tough_ner.evaluator(), which does")
        if (predictions is None) != (references is None):  # evaluate would fail on len(None)
            missing, given = ("predictions", "references") if predictions is None else ("references", "predictions")
            raise ValueError(f"{missing}= is None but {given}= is given: pass both (one list per sentence), or "
                             f"neither to score what add_batch added")

    def _compute(self, predictions, references, tokens, **options):
        extra = {name: options.pop(name) for name in self.extra_inputs}
        chosen = {**self.defaults, **options}
        self.check_options(chosen)
        documents = chosen.pop("documents", None)
        decoding = {name: chosen.pop(name) for name in DECODING if name in chosen}
        placing = {name: chosen.pop(name) for name in {**MENTIONS, **OVERLAP} if name in chosen}
        if self.input_mode == "tags":
            batch = Batch(tokens, references, predictions, documents, **decoding)
        else:
            batch = as_batch(tokens, references, predictions, "tags", self.input_mode, documents=documents,
                             **decoding, **placing)
        result = self.score(batch, **extra, **chosen)
        if self.match_table and chosen.get("detailed"):
            result["match_scores"] = plain(match_scores(batch, detailed=True, beta=chosen.get("beta", 1.0)))
        return result

    def score(self, batch: Batch, **options) -> dict:
        raise NotImplementedError

    def score_options(self) -> Dict[str, Any]:
        """The load-time options ``score`` takes (document ids and the decoding belong to the
        batch instead: ``batch_options``)."""
        return {name: value for name, value in self.defaults.items() if name != "documents" and name not in DECODING
                and name not in MENTIONS and name not in OVERLAP}

    def batch_options(self) -> Dict[str, Any]:
        """The load-time decoding options, for the ``Batch`` this metric scores."""
        return {name: self.defaults[name] for name in DECODING if name in self.defaults}

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("filelock", "filelocks", "rendez_vous_lock"):
            state[name] = None
        return state


_LIST, _STR = {list}, {str}


def plain(value):
    """Python scalars for JSON and the Trainer: numpy numbers become int/float."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "item"):
        return value.item()
    return value

