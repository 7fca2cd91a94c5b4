"""Run every available method on one test set and several systems; summarise the results.

``run`` returns one dict for ``formatting.to_json``: ``describe``, each system's flat keys per method
(``systems``), the nested tables (``details``), a compact ``summary`` with the best system per
row, each compared pair's bucket ``comparisons``, the ``families`` of tests whose verdicts the
rows hold, ``runs`` for systems with several, and, when asked, the ``attack_curve``.  ``format_text``
renders it for a terminal; ``tough_ner.html`` renders it as one self-contained page.  Its tables
of a row per type are kept as columns (``core.rows``: read-only, each row made as it is read;
``json.dumps`` writes them with ``default=core.rows.plain``).
"""
from __future__ import annotations

import math
import textwrap
from collections import Counter
from functools import partial
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..core.batch import Batch, with_shared_types
from ..methods.buckets import ATTRIBUTES, bucket_f1, bucket_key, compare
from ..core.checks import identical_to_gold, invalid_sequence_warnings, training_data_warnings
from ..methods.comparison import COUNTS, decided_rows, described_family, family, finish, pairs
from ..methods.comparison import row as table_row
from ..core.corpus import Corpus
from ..core.rows import Keyed, Rows
from .errors import hardest
from .findings import findings
from .formatting import describe_test, format_interval, format_p, format_value
from ..methods.hardeval import hardeval
from .labels import bucket_label, totals
from ..core.matching import report_scores
from ..methods.nrb import TypeMap, nrb, sets_batch
from ..methods.rockner import rockner
from ..core.schemes import DECODING_KEYS, DEFAULT_DECODING, check_decoding
from ..core.scoring import check_beta, matched
from ..core.stats import TrainStats, describe_decoding
from ..methods.tmr import tmr
from ..core.uncertainty import (AVERAGE_KEYS, INTERVAL_NAME, MIN_UNITS, SMALL, TEST_NAME, Counts,
                          aggregate_runs, analyse, check_options, forget_draws, pooled, verdict, wilcoxon_runs)

# method name -> scorer of (stats, batch, detailed) returning flat keys (and tables when detailed).
METHODS: Dict[str, Callable[..., dict]] = {
    "hardeval": hardeval,
    "tmr": tmr,
    "bucket_f1": bucket_f1,
}
# Bucket F1 intervals come from the report's shared resamples, not from bucket_f1's own.
OPTIONS = {"bucket_f1": {"bootstrap": 0}}

# The compact summary: (label, method, key).  Which value is better comes from
# ``comparison.direction``; "worst bucket" rows are added per attribute.
SUMMARY_ROWS: List[Tuple[str, str, str]] = [
    ("precision", "tmr", "precision"), ("recall", "tmr", "recall"), ("F1", "tmr", "f1"), ("macro F1", "tmr", "macro_f1"),
    ("hardeval (mean TER)", "hardeval", "hardeval"), ("TER unseen", "hardeval", "ter_unseen"),
    ("TER diff", "hardeval", "ter_diff"),
    ("TMR recall seen", "tmr", "recall_seen"), ("TMR recall unseen", "tmr", "recall_unseen_tokens"),
    ("TMR recall unseen type", "tmr", "recall_unseen_type"), ("TMR recall TCM", "tmr", "recall_tcm_all"),
]
NRB_ROWS = [("NRB accuracy", "nrb", "nrb_accuracy"), ("WTS accuracy", "nrb", "wts_accuracy"),
            ("WTS - NRB gap", "nrb", "gap")]
ATTACK_ROWS = [("F1 original", "rockner", "f1_original"), ("F1 attacked", "rockner", "f1_attacked"),
               ("F1 drop", "rockner", "f1_drop"), ("F1 relative drop", "rockner", "f1_drop_relative")]
# The keys of each method's subset table (the exports): TERs, subset recalls, bucket F1s.
SUBSET_TABLES = {"hardeval": lambda key: key.startswith("ter_"),
                 "tmr": lambda key: key.startswith("recall_") and key != "recall_seen_minus_unseen",
                 "bucket_f1": lambda key: key.endswith("_f1") and key != "f1"}
SUBSET_FAMILIES = {"hardeval": "HardEval subsets", "tmr": "TMR subsets", "bucket_f1": "bucket F1 table"}
HEADLINE = "headline"
WIDTH = 100  # columns of a terminal summary (--wide: one line per row, however long)
LABEL_WIDTH = 30  # a longer measure name is wrapped in its column
WTS_FLOOR = 0.8  # below it, the NRB paper reads the gap as domain shift, not name bias

Steps = Iterable[Tuple[str, Callable[[], None]]]


def _compact(tables: dict) -> dict:
    """A method's tables with those of a row per type or bucket kept as columns (``core.rows``):
    hardeval's and TMR's ``per_type``, each match scheme's ``per_type``, bucket F1's rows,
    HardEval's hard tokens (20,000 types: 20,000 dicts per table, some 1 KB each, against some
    100 bytes)."""
    if "per_type" in tables:
        tables["per_type"] = Keyed(tables["per_type"])
    for scheme in tables.get("schemes", {}).values():
        if "per_type" in scheme:
            scheme["per_type"] = Keyed(scheme["per_type"])
    for table in ("buckets", "hard_tokens"):  # lists of rows by attribute, by subset
        if table in tables:
            tables[table] = {name: Rows(rows) for name, rows in tables[table].items()}
    return tables


def _split(result: Mapping) -> Tuple[dict, dict]:
    """(flat scalar keys, nested tables) of a detailed result."""
    flat = {k: v for k, v in result.items() if not isinstance(v, (dict, list))}
    return flat, {k: v for k, v in result.items() if isinstance(v, (dict, list))}


def hard_mentions(stats: TrainStats, batch: Batch, top: int = 10) -> List[dict]:
    """The gold mentions missed most often (text, type, test count, misses, training counts by type)."""
    texts = list(zip(batch.span_texts("gold"), (batch.types[t] for t in batch.span_arrays("gold")[3].tolist())))
    hit = matched(batch).tolist()
    seen, missed = Counter(texts), Counter(key for key, found in zip(texts, hit) if not found)
    training = stats.mention_types()
    rows = [{"text": text, "type": entity_type, "n": seen[(text, entity_type)], "misses": misses,
             "train": dict(sorted(training.get(text, {}).items()))}
            for (text, entity_type), misses in missed.items()]
    return sorted(rows, key=lambda r: (-r["misses"], -r["n"], r["text"], r["type"]))[:top]


def _batch(test: Corpus, predictions, decoding: Optional[Mapping[str, str]] = None) -> Batch:
    """A system's batch: its tags over the test set, decoded as ``decoding`` says (``scheme``,
    ``mode``, ``repair``; the lenient rule by default), or a batch ``tough_ner.as_batch`` built
    from another format (which keeps its hallucinated mentions), whose gold must be decoded so."""
    wanted = check_decoding(**(decoding or {}))
    if not isinstance(predictions, Batch):
        return Batch(test.tokens, test.tags, predictions, test.documents, **dict(zip(DECODING_KEYS, wanted)))
    given = predictions.side_decoding("gold")
    if given != wanted:
        raise ValueError(f"a system's batch decodes the gold tags with {describe_decoding(given)} but the report with "
                         f"{describe_decoding(wanted)}: build it with the same scheme, mode and repair (as_batch(..., "
                         "scheme=, mode=, repair=))")
    return predictions


def decoding_in_words(decoding: Sequence[str]) -> str:
    """``(scheme, mode, repair)`` in words, for the report's header (``scheme IOB2, strict mode``)."""
    scheme, mode, repair = decoding
    if scheme == "auto":
        return "the lenient rule (any scheme, as conlleval)" + (f", repair {repair}" if repair != "conlleval" else "")
    return f"scheme {scheme}, {mode} mode" + (f", repair {repair}" if mode == "lenient" else "")


def run(stats: TrainStats, test: Corpus, systems: Optional[Sequence[str]] = None,
        nrb_sets: Optional[Tuple[Corpus, Corpus]] = None,
        type_map: TypeMap = None, attacked: Optional[Mapping[str, Sequence[Tuple[str, Corpus]]]] = None,
        bootstrap: int = 1000, seed: int = 0, progress: Callable[[Steps], Steps] = lambda steps: steps,
        confidence: float = 0.95, unit: str = "sentence", alpha: float = 0.05,
        names: Optional[Sequence[str]] = None, train_is_reference: bool = False,
        baseline: Optional[str] = None, scheme: str = "auto", mode: str = "lenient", repair: str = "conlleval",
        beta: float = 1.0) -> dict:
    """Every method for every system.

    A system's predictions in ``test.predictions`` are tags or a ``Batch`` (``as_batch``).
    ``names`` (or ``systems``): one name per prediction set, default ``system 1``, ``system 2``,
    ...; a name given several times makes those prediction sets runs (training seeds) of one
    system: its values are the means over runs (``runs`` holds mean, sample std, min, max and
    each run's value), its intervals and tests come from its counts pooled over runs, and its
    details are those of its first run.  ``nrb_sets``: NRB and WTS corpora with one prediction
    list per prediction set (types mapped by ``type_map``).  ``attacked``: per system (per run:
    ``NAME#2`` for a name's second run), attacked versions of the test set ``(label, corpus
    with those predictions)`` (tags, or a ``Batch`` as for the test set), mildest first; the
    ``rockner`` keys are those of the last.
    ``bootstrap`` resamples (by ``unit``, sentence or document) give every interval;
    ``tough_ner.uncertainty.randomisation`` every paired test, of every pair of systems or of
    each system against ``baseline``.  Each table is one family of tests (``families``):
    its verdicts are Holm-adjusted over it at ``alpha`` and stored with its rows, and every
    mark any view shows is read from them.  ``progress`` wraps the list of ``(label, step)``
    pairs (a progress bar).  ``train_is_reference``: the training data is not the systems' own
    (seen/unseen are relative to it; said in ``warnings``).  ``scheme``, ``mode``, ``repair``:
    how the test set's and the attacked sets' tags are decoded (``Batch``; recorded in
    ``decoding``; on NRB/WTS the systems' tags, the targets being the sets' own IOB2, one a
    sentence).  ``beta`` other than 1 adds TMR's span ``f_beta`` (and its macro and weighted
    averages) and an F-beta row.
    """
    if systems is not None and names is not None and list(systems) != list(names):
        raise ValueError("give the system names once: systems= or names=")
    given = list(names if names is not None else systems if systems is not None else
                 [f"system {i + 1}" for i in range(len(test.predictions))])
    if len(given) != len(test.predictions):
        raise ValueError(f"{len(given)} system names for {len(test.predictions)} prediction sets")
    systems = list(dict.fromkeys(given))
    labels = run_labels(given)  # one per prediction set
    runs = {name: [label for label, of in zip(labels, given) if of == name] for name in systems}
    check_options(max(bootstrap, 1), confidence, unit, alpha)
    check_beta(beta)
    decoding = dict(zip(DECODING_KEYS, check_decoding(scheme, mode, repair)))
    compared = pairs(systems, baseline)
    results: dict = {"describe": {"train": {**stats.describe(), "tokens": stats.n_tokens},
                                  "test": stats.describe_test(test.tokens, test.tags)},
                     "systems": {}, "details": {},
                     "statistics": {"test": TEST_NAME, "interval": INTERVAL_NAME, "n_resamples": bootstrap,
                                    "confidence": confidence, "unit": unit, "alpha": alpha, "seed": seed,
                                    "adjustment": "Holm, over each family of tests (families)", "small": SMALL,
                                    "baseline": baseline, "pairs": [list(pair) for pair in compared]},
                     "decoding": decoding}
    if beta != 1:
        results["beta"] = beta
    scores: Dict[str, dict] = {label: {} for label in labels}
    details: Dict[str, dict] = {label: {} for label in labels}
    # Per method and system, what makes its counts when they are analysed: a method's counts, of
    # a column or more per type, never wait beside the others' (20,000 types: 35 MB a system).
    counts: Dict[str, Dict[str, Callable[[], Counts]]] = {}
    curves: Dict[str, list] = {}

    def record(label: str, method: str, result: Mapping, scored=None) -> None:
        scores[label][method], tables = _split(result)
        if tables:
            details[label][method] = _compact(tables)
        if scored is not None:
            counts.setdefault(method, {})[label] = partial(COUNTS[method], stats, scored, **(
                {"type_map": type_map} if method == "nrb" else {"beta": beta} if method == "tmr" else {}))

    batches: Dict[str, Batch] = {}

    def decode_system(label: str, predictions) -> Callable[[], None]:
        def step():
            batches[label] = _batch(test, predictions, decoding)
        return step

    def share_types() -> None:  # a type one system predicts is a column (of nothing) for the others
        batches.update(with_shared_types(batches))

    def score_system(label: str) -> Callable[[], None]:
        def step():
            batch = batches[label]
            for method, score in METHODS.items():
                options = {**OPTIONS.get(method, {}), **({"beta": beta} if method == "tmr" and beta != 1 else {})}
                record(label, method, score(stats, batch, detailed=True, **options), batch)
            record(label, "match_scores", report_scores(stats, batch, detailed=True))  # no intervals: no counts
            details[label]["hard_mentions"] = hard_mentions(stats, batch)
        return step

    def score_nrb(i: int, label: str) -> Callable[[], None]:
        nrb_set, wts_set = nrb_sets

        def step():
            batch, portion = sets_batch({"nrb": (nrb_set.tokens, nrb_set.tags, nrb_set.predictions[i]),
                                         "wts": (wts_set.tokens, wts_set.tags, wts_set.predictions[i])},
                                        {**decoding, "declared": ("pred",)})  # the targets: the sets' own
            record(label, "nrb", nrb(batch, type_map, portion, stats, detailed=True), (batch, portion))
        return step

    def score_attacks(label: str, versions) -> Callable[[], None]:
        def step():
            original = _batch(test, test.predictions[labels.index(label)], decoding)
            scored = [(name, original, _batch(corpus, corpus.predictions[0], decoding)) for name, corpus in versions]
            curve = [(name, rockner(original, attacked_batch, True)) for name, original, attacked_batch in scored]
            record(label, "rockner", curve[-1][1], scored[-1][1:])
            curves[label] = [{"set": name, **{k: r[k] for k in ("f1_attacked", "f1_drop", "f1_drop_relative")}}
                             for name, r in curve]
        return step

    steps = [(f"reading {label}", decode_system(label, predictions))
             for label, predictions in zip(labels, test.predictions)]
    steps += [("entity types", share_types)] + [(f"scoring {label}", score_system(label)) for label in labels]
    if nrb_sets is not None:
        steps += [(f"NRB/WTS {label}", score_nrb(i, label)) for i, label in enumerate(labels)]
    for label, versions in (attacked or {}).items():
        if label not in labels:
            raise ValueError(f"attacked predictions for {label!r}, which is not one of the systems or runs {labels}")
        steps.append((f"attacks {label}", score_attacks(label, versions)))
    steps.append(("confidence intervals and tests", lambda: None))
    for _, step in progress(steps):
        step()
    # Runs become their system: means of the values, counts pooled over runs, the first run's details.
    not_pooled: List[str] = []
    for name in systems:
        first = runs[name][0]
        results["details"][name] = details[first]
        if len(runs[name]) == 1:
            results["systems"][name] = scores[first]
            if first in curves:
                results.setdefault("attack_curve", {})[name] = curves[first]
            for by_label in counts.values():
                if first in by_label:
                    by_label[name] = by_label.pop(first)
            continue
        methods = [m for m in scores[first] if all(m in scores[label] for label in runs[name])]
        results.setdefault("runs", {})[name] = {"runs": len(runs[name]), "details_from": "run 1", **{
            method: aggregate_runs([scores[label][method] for label in runs[name]]) for method in methods}}
        results["systems"][name] = {method: {key: _over_runs(value, results["runs"][name][method].get(key))
                                             for key, value in scores[first][method].items()} for method in methods}
        buckets = {attribute: list(rows) for attribute, rows in details[first].get("bucket_f1", {}).get("buckets",
                                                                                                        {}).items()}
        for attribute, bucket_rows in buckets.items():  # the bucket F1 shown: the runs' mean, as every value
            for i, row in enumerate(bucket_rows):
                aggregated = results["runs"][name].get("bucket_f1", {}).get(bucket_key(attribute, i, row["interval"]))
                if aggregated:
                    row["f1"], row["f1_std"] = aggregated["mean"], aggregated["std"]
        if "tag" in buckets:
            _type_means(buckets["tag"], [details[label]["bucket_f1"]["buckets"]["tag"] for label in runs[name]])
        if buckets:
            details[first]["bucket_f1"]["buckets"] = {attribute: Rows(rows) for attribute, rows in buckets.items()}
        for method, by_label in counts.items():
            mine = [by_label.pop(label) for label in runs[name] if label in by_label]
            why = f"{len(mine)} of its {len(runs[name])} runs have them" if len(mine) != len(runs[name]) else None
            if why is None:
                try:
                    by_label[name] = _made(pooled([make() for make in mine]))  # pooled now: it may fail
                except ValueError as error:  # runs scored on different sets or with other columns
                    why = str(error)
            if why is not None:
                not_pooled.append(f"{name}: no intervals or tests for {method} ({why}): runs pooled only when all "
                                  "are scored on the same sentences with the same columns")
        if all(label in curves for label in runs[name]):
            results.setdefault("attack_curve", {})[name] = [
                {"set": point["set"], **{k: sum(curves[label][j][k] for label in runs[name]) / len(runs[name])
                                         for k in ("f1_attacked", "f1_drop", "f1_drop_relative")}}
                for j, point in enumerate(curves[first])]
    batches = {name: batches[runs[name][0]] for name in systems}
    # bootstrap=0: no resampling, so no intervals, no tests and no winner.
    analyses = _analyses(counts, systems, compared, bootstrap, confidence, seed, unit)
    # every cell of an analysis holds its one number of units: the first cell says it (cells are made as read)
    if any(next(iter(analysis.values()), {}).get("units", MIN_UNITS) < MIN_UNITS for analysis in analyses.values()):
        results["statistics"]["too_few_units"] = True
    for name in systems:  # bucket F1 whiskers: the intervals of the shared resamples
        bucket = results["details"][name]["bucket_f1"]
        if analyses:
            bucket["diagnostics"]["bootstrap"] = {
                attribute: Rows(analyses["bucket_f1"][bucket_key(attribute, i, row["interval"])]["ci"][name]
                                for i, row in enumerate(rows)) for attribute, rows in bucket["buckets"].items()}
            bucket["diagnostics"]["bootstrap"]["f1"] = analyses["bucket_f1"]["f1"]["ci"][name]
            bucket["buckets"]["tag"] = type_intervals(bucket["buckets"]["tag"], analyses["bucket_f1"], name)
    results["hardest"] = hardest(stats, batches, results["details"])
    results["summary"] = summary(results, analyses, alpha)
    families = {HEADLINE: family(HEADLINE, results["summary"]["rows"], alpha, "headline rows")}
    _add_run_tests(results)
    results["warnings"] = (training_data_warnings(results, train_is_reference) + identical_to_gold(batches)
                           + invalid_sequence_warnings(batches) + not_pooled)
    if results["statistics"].get("too_few_units"):
        results["warnings"].append(f"fewer than {MIN_UNITS} resampling units ({unit}s): too few units for an "
                                   "interval (each is shown as such)")
    results["averages"] = averages_table(results, analyses.get("tmr", {}), systems)
    contrast = analyses.get("tmr", {}).get("recall_seen_minus_unseen")
    if contrast:
        results["contrasts"] = {name: {"recall_seen_minus_unseen": {
            "value": contrast["values"][name], "ci": contrast["ci"][name], "n": contrast["n"][name]}}
            for name in systems}
    # Each method's subset table (what the exports show) is a family of its own, but for its rows
    # in the headline, which keep the headline's verdicts: each test is decided once.
    results["tests"] = {}
    in_headline = {(row["method"], row["key"]): row for row in results["summary"]["rows"] if row["tests"]}
    for method, analysis in analyses.items():
        if method in SUBSET_TABLES:
            name = SUBSET_FAMILIES[method]
            keys = [key for key in analysis if SUBSET_TABLES[method](key)]
            decided = {key: {**in_headline[method, key], "tests": [  # as the table's other rows face (a baseline)
                _oriented(in_headline[method, key], test["a"], test["b"]) for test in analysis[key]["tests"]]}
                for key in keys if (method, key) in in_headline}
            # each cell made as its row is, each row as it is kept: no table of 20,000 rows as dicts
            m, table = decided_rows(_Cells(keys, analysis), method, alpha=alpha, family=name, decided=decided)
            results["tests"][method] = Keyed(names=keys, rows=Rows(
                {"ci": row["ci"], "best": row["best"], "tests": row["tests"], "family": row["family"]}
                for row in table))
            families[name] = described_family(name, len(keys) - len(decided), m, alpha, "rows of the table"
                                              + (f" not in the {HEADLINE}" if decided else ""), len(decided))
    # each pair's bucket comparison reads the verdicts of the bucket F1 table (or the headline)
    results["comparisons"] = [{"systems": [a, b], "family": SUBSET_FAMILIES["bucket_f1"],
                               "bucket_f1": bucket_comparison(
        {**results["systems"][a]["bucket_f1"], **results["details"][a]["bucket_f1"]},
        {**results["systems"][b]["bucket_f1"], **results["details"][b]["bucket_f1"]},
        analyses.get("bucket_f1", {}), a, b, results["tests"].get("bucket_f1", {}))} for a, b in compared]
    results["families"] = families
    results["findings"] = findings(results)
    return results


MEASURES = {"precision": "precision", "recall": "recall", "f1": "F1"}


def per_type_rows(results: Mapping) -> List[dict]:
    """Precision, recall and F1 of each type (the tag buckets: strict spans) as rows of a table
    of systems, three a type: ``label`` (``LOC precision``), ``type``, ``measure``, each
    system's value, interval and n (its predicted entities of the type for precision, the gold
    ones for recall and F1), ``small`` when n < 30; an F1 row carries the stored verdicts of
    the bucket F1 table (``best``, ``tests``), precision and recall are not tested."""
    order = list(results["systems"])
    tables = {s: {row["interval"]: row for row in results["details"][s]["bucket_f1"]["buckets"]["tag"]}
              for s in order}
    verdicts = results.get("tests", {}).get("bucket_f1", {})
    out = []
    for entity_type in dict.fromkeys(t for s in order for t in tables[s]):
        cells = {s: tables[s].get(entity_type, {}) for s in order}
        for measure, word in MEASURES.items():
            key = bucket_key("tag", 0, entity_type, measure)
            verdict = verdicts.get(key, {}) if measure == "f1" else {}
            n = {s: cell.get("n_pred" if measure == "precision" else "n_gold", 0) for s, cell in cells.items()}
            ci = verdict.get("ci", {}) if measure == "f1" else \
                {s: cell[f"{measure}_ci"] for s, cell in cells.items() if f"{measure}_ci" in cell}
            out.append({"label": f"{entity_type} {word}", "type": entity_type, "measure": measure,
                        "method": "bucket_f1", "key": key, "better": "high",
                        "values": {s: _nan(cell.get(measure)) for s, cell in cells.items()},
                        "ci": {s: [_nan(v) for v in ci[s]] for s in order if s in ci}, "n": n,
                        "small": {s: count < SMALL for s, count in n.items()},
                        "best": verdict.get("best", []), "tests": verdict.get("tests", [])})
    return out


def subset_row(results: Mapping, method: str, key: str, values: Mapping[str, float], n) -> dict:
    """A row of a method's subset table shaped as the summary's (``format_cell`` reads it):
    each system's value as shown (``values``), its interval and ``best`` from the stored
    verdicts (``results["tests"]``, never decided again), the subset's n (the same for every
    system: test tokens, gold mentions or gold entities) and ``small`` when n < 30."""
    stored = results.get("tests", {}).get(method, {}).get(key, {})
    runs = results.get("runs", {})
    return {"values": dict(values), "ci": stored.get("ci", {}), "n": {s: n for s in values},
            "small": {s: isinstance(n, int) and n < SMALL for s in values}, "best": stored.get("best", []),
            "std": {s: runs[s][method][key]["std"] for s in values if key in runs.get(s, {}).get(method, {})}}


def average_rows(results: Mapping) -> List[dict]:
    """TMR's macro and weighted averages over types (the stored ``averages`` table) as rows of a
    table of systems: precision, recall, F1 (and F-beta), each system's value, interval and n
    (its gold mentions); not tested, so no row marks a system better."""
    table = results.get("averages", {})
    order = [s for s in results["systems"] if table.get(s)]
    if not order:
        return []
    words = {"precision": "precision", "recall": "recall", "f1": "F1",
             "f_beta": f"F-beta (beta {results.get('beta', 1):g})"}
    rows = []
    for average in ("macro", "weighted"):
        for measure, word in words.items():
            key = f"{average}_{measure}"
            cells = {s: table[s][key] for s in order if key in table[s]}
            if not cells:
                continue
            n = {s: cell["n"] for s, cell in cells.items()}
            rows.append({"label": f"{average} {word}", "key": key, "better": "high",
                         "values": {s: _nan(cell["value"]) for s, cell in cells.items()},
                         "ci": {s: [_nan(v) for v in cell["ci"]] for s, cell in cells.items() if cell["ci"]},
                         "n": n, "small": {s: count is not None and count < SMALL for s, count in n.items()}})
    return rows


def _nan(value) -> float:
    return math.nan if value is None else value


def averages_table(results: Mapping, analysis: Mapping[str, dict], systems: Sequence[str]) -> Dict[str, dict]:
    """Per system, TMR's macro and weighted precision, recall and F1 over types (and F-beta):
    value (a system with runs: the mean over runs), interval (of the counts pooled over runs;
    none without resamples) and n (its predictions for a precision, else the gold mentions)."""
    table: Dict[str, dict] = {}
    for name in systems:
        scores = results["systems"][name].get("tmr", {})
        table[name] = {key: {"value": scores[key], "ci": analysis[key]["ci"].get(name) if key in analysis else None,
                             "n": scores.get("n_predicted" if key.endswith("_precision") else "n_mentions")}
                       for key in AVERAGE_KEYS + ("macro_f_beta", "weighted_f_beta") if key in scores}
    return table


def run_labels(names: Sequence[str]) -> List[str]:
    """A label per prediction set: its system's name alone, or ``NAME#2`` for the second of
    several runs of that system."""
    labels = [name if names.count(name) == 1 else f"{name}#{names[:i].count(name) + 1}" for i, name in enumerate(names)]
    if len(set(labels)) != len(labels):
        raise ValueError(f"system names {sorted(set(names))} give runs the same label: rename the system named like "
                         "a run (NAME#2)")
    return labels


def _over_runs(first, aggregated: Optional[Mapping]):
    """A flat key of a system with several runs: the first run's value where every run has it
    (counts of the gold side, options), else the mean over runs."""
    if aggregated is None or aggregated["min"] == aggregated["max"]:
        return first
    return aggregated["mean"]


def _add_run_tests(results: dict) -> None:
    """With several runs for both systems of a pair (as many each), the run-level test of each
    headline row: Wilcoxon signed-rank over runs paired by index (the verdict stays the pooled
    paired test's)."""
    runs = results.get("runs", {})
    for row in results["summary"]["rows"]:
        for test in row["tests"]:
            a, b = (runs.get(s, {}).get(row["method"], {}).get(row["key"]) for s in (test["a"], test["b"]))
            if a and b and a["runs"] == b["runs"]:
                test["runs_test"] = wilcoxon_runs(a["values"], b["values"])


def type_intervals(rows: Rows, analysis: Mapping[str, dict], system: str) -> Rows:
    """The tag bucket rows with each type's precision and recall interval (``precision_ci``,
    ``recall_ci`` after the values), from the resamples every bucket F1 interval is drawn from."""
    types = [row["interval"] for row in rows]
    for measure in ("precision", "recall"):
        cells = (analysis.get(bucket_key("tag", 0, interval, measure)) for interval in types)
        rows = rows.with_field(f"{measure}_ci", [cell["ci"][system] if cell else [math.nan, math.nan]
                                                 for cell in cells])
    return rows


def _type_means(rows: Sequence[dict], runs: Sequence[Sequence[dict]]) -> None:
    """A system with several runs: each type's precision and recall shown is the runs' mean,
    as its F1 (a type some run never saw keeps the first run's values)."""
    by_run = [{r["interval"]: r for r in run} for run in runs]  # a type's bucket once per run
    for row in rows:
        found = [rows_of[row["interval"]] for rows_of in by_run if row["interval"] in rows_of]
        if len(found) == len(runs):
            for measure in ("precision", "recall"):
                row[measure] = sum(r[measure] for r in found) / len(found)


def _analysed(method: str, by_system: Mapping[str, Counts], compared: Sequence[Tuple[str, str]],
              *options) -> Dict[str, dict]:
    """``analyse`` of one method's counts: each key's intervals, and the paired tests of the
    keys some view shows; a bucket's precision and recall have intervals only (the per-type
    table), untested: with 20,000 types, 40,000 tests never read.  The same resamples either
    way (drawn from the seed and the units, whatever the keys)."""
    keys = list(next(iter(by_system.values())).keys)
    untested = [key for key in keys if method == "bucket_f1" and key.endswith(("_precision", "_recall"))]
    if not untested:
        return analyse(by_system, None, *options, pairs=compared, compact=True)
    alone = set(untested)
    tested = analyse(by_system, [key for key in keys if key not in alone], *options, pairs=compared, compact=True)
    return _Cells(keys, tested, analyse(by_system, untested, *options, pairs=[], compact=True))


class _Cells(Mapping):
    """The cells of ``keys``, in that order, each read (made) from the first analysis that has it."""

    def __init__(self, keys: Sequence[str], *analyses: Mapping[str, dict]):
        self.keys_in_order, self.analyses = keys, analyses

    def __getitem__(self, key: str) -> dict:
        for analysis in self.analyses:
            if key in analysis:
                return analysis[key]
        raise KeyError(key)

    def __contains__(self, key) -> bool:  # without making the cell (Mapping's tries to read it)
        return any(key in analysis for analysis in self.analyses)

    def __iter__(self):
        return iter(self.keys_in_order)

    def __len__(self) -> int:
        return len(self.keys_in_order)


def _made(counts: Counts) -> Callable[[], Counts]:
    """A maker of counts (as ``run`` keeps them until analysed) that are already made."""
    return lambda: counts


def _analyses(counts: Dict[str, Dict[str, Callable[[], Counts]]], systems: Sequence[str],
              compared: Sequence[Tuple[str, str]], bootstrap: int, *options) -> Dict[str, Dict[str, dict]]:
    """Each method's ``_analysed`` (none with ``bootstrap`` 0, nor for counts of other sentences
    than the test set's), emptying ``counts``: a method's counts are made when it is analysed and
    dropped once it is, so no analysis holds another method's counts beside its own work."""
    analyses = {}
    for method in list(counts):  # in the order scored
        makers = counts.pop(method)
        if not bootstrap or not set(makers) <= set(systems):
            continue
        by_system: Dict[str, Counts] = {}
        for name, make in makers.items():  # every system's counts reading the first's formulas
            made = make()
            by_system[name] = made.sharing_formulas(next(iter(by_system.values()), made))
        if _same_sentences(by_system):
            analyses[method] = _analysed(method, by_system, [p for p in compared if p[0] in by_system
                                                             and p[1] in by_system], bootstrap, *options)
        del by_system  # before the next method's are made
    forget_draws()
    return analyses


def _same_sentences(by_system: Mapping[str, Counts]) -> bool:
    """Whether the systems' counts cover the same sentences (attacked sets may differ per system)."""
    first = next(iter(by_system.values()))
    return all(len(c) == len(first) and (c.order == first.order).all() for c in by_system.values())


def bucket_comparison(a: dict, b: dict, analysis: Mapping[str, dict], name_a: str, name_b: str,
                      verdicts: Mapping[str, Mapping]) -> Dict[str, dict]:
    """Per attribute: each bucket's F1 difference A - B, its n (gold entities), the paired
    interval, and its test's verdict as stored in ``verdicts`` (the bucket F1 table's rows,
    by key: decided in that family, or in the headline for a bucket shown there; an untested
    bucket has a NaN test), with its ``p_value``, ``p_adjusted`` and ``significant`` read
    from them."""
    table = compare(a, b)
    for attribute, entry in table.items():
        keys = [bucket_key(attribute, i, interval) for i, interval in enumerate(entry["intervals"])]
        entry["n"] = [analysis.get(key, {}).get("n", {}).get(name_a, 0) for key in keys]
        entry["tests"] = [_oriented(verdicts.get(key, {}), name_a, name_b) or verdict(
            {"a": name_a, "b": name_b, "difference": math.nan, "ci": [math.nan, math.nan], "p_value": math.nan},
            math.nan, 0, 1.0, None, SUBSET_FAMILIES["bucket_f1"]) for key in keys]
        # the difference shown is the one tested (with runs: of counts pooled over runs)
        entry["difference"] = [d if math.isnan(t["difference"]) else t["difference"]
                               for d, t in zip(entry["difference"], entry["tests"])]
        for field in ("ci", "p_value", "p_adjusted", "significant"):
            entry[field] = [test[field] for test in entry["tests"]]
    return {attribute: {field: Rows(values) for field, values in entry.items()} for attribute, entry in table.items()}


def decided_buckets(analysis: Mapping[str, dict], alpha: float = 0.05) -> Dict[str, dict]:
    """The verdicts of every bucket of ``analysis`` decided as one family (Holm over them), by
    key: what ``bucket_comparison`` reads for a comparison outside a report (``buckets`` with
    two systems)."""
    keys = [key for key in analysis if SUBSET_TABLES["bucket_f1"](key)]
    return dict(zip(keys, decided_rows(_Cells(keys, analysis), "bucket_f1", alpha=alpha,
                                       family=SUBSET_FAMILIES["bucket_f1"])[1]))


def _oriented(cell: Mapping, a: str, b: str) -> Optional[dict]:
    """A copy of the test of systems a and b in an analysis cell, as a - b."""
    for test in cell.get("tests", []):
        if (test["a"], test["b"]) == (a, b):
            return {**test, "ci": list(test["ci"])}
        if (test["a"], test["b"]) == (b, a):
            return {**test, "a": a, "b": b, "difference": -test["difference"],
                    "ci": [-test["ci"][1], -test["ci"][0]]}
    return None


def summary(results: dict, analyses: Mapping[str, Mapping[str, dict]], alpha: float = 0.05) -> dict:
    """The compact table: systems in the order given (every view shows them so; the ranking
    is in the marks, never in the order); each row has every system's value, interval and n,
    the paired tests (Holm-adjusted over the table) and ``best``, the significantly better
    system(s) only.  "Worst bucket" rows compare every system on the bucket that is worst for
    the system with the best F1."""
    systems = results["systems"]
    order = list(systems)
    f_beta = [(f"F-beta (beta {results['beta']:g})", "tmr", "f_beta")] if "beta" in results else []
    specs = SUMMARY_ROWS[:3] + f_beta + SUMMARY_ROWS[3:] \
        + [row for row in NRB_ROWS if "nrb" in analyses or _any(systems, "nrb")] \
        + [row for row in ATTACK_ROWS if "rockner" in analyses or _any(systems, "rockner")]
    runs = results.get("runs", {})
    rows = [_row(label, method, key, systems, analyses, order, runs) for label, method, key in specs]
    attacked = last_attacked_set(results)
    for row in rows:
        if row["method"] == "rockner" and attacked:
            row["set"] = attacked  # the rockner keys are those of the last attacked set: say which
        if row["key"] == "gap":
            low = {s: v for s, v in systems_values(systems, "nrb", "wts_accuracy", order).items()
                   if not math.isnan(v) and v < WTS_FLOOR}
            row["warnings"] = {s: f"WTS accuracy {v:.2f} < {WTS_FLOOR}: the gap reflects domain shift, "
                                  f"not name bias" for s, v in low.items()}
    best_system = max(order, key=lambda s: _number(systems[s]["tmr"]["f1"]))  # the first of equals
    for attribute in ATTRIBUTES:
        buckets = [(i, r) for i, r in enumerate(results["details"][best_system]["bucket_f1"]["buckets"][attribute])
                   if r["n_gold"] > 0 and not math.isnan(r["f1"])]  # a bucket without gold entities is no worst
        if not buckets:
            continue
        i, worst = min(buckets, key=lambda item: item[1]["f1"])
        key = bucket_key(attribute, i, worst["interval"])
        row = _row(f"worst {attribute} bucket", "bucket_f1", key, systems, analyses, order, runs)
        row["bucket"] = bucket_label(attribute, worst["interval"], totals(results))
        row["interval"] = worst["interval"]
        row["worst_for"] = best_system
        rows.append(row)
    finish(rows, alpha, HEADLINE)
    return {"systems": order, "rows": rows}


def last_attacked_set(results: Mapping) -> Optional[str]:
    """The name of the attacked set the ``rockner`` keys are of (each system's last), or the
    systems' names for it joined when they differ; None without attacks."""
    names = list(dict.fromkeys(curve[-1]["set"] for curve in results.get("attack_curve", {}).values() if curve))
    return " / ".join(names) or None


def _any(systems: Mapping[str, dict], method: str) -> bool:
    return any(method in scores for scores in systems.values())


def systems_values(systems: Mapping[str, dict], method: str, key: str, order: Sequence[str]) -> Dict[str, float]:
    return {s: systems[s].get(method, {}).get(key, math.nan) for s in order}


def _row(label: str, method: str, key: str, systems: Mapping[str, dict], analyses: Mapping[str, Mapping[str, dict]],
         order: Sequence[str], runs: Mapping[str, dict]) -> dict:
    """One summary row: values from the results (a system with several runs: their mean and
    sample std), intervals, n and tests from the analysis."""
    cell = analyses.get(method, {}).get(key)
    over_runs = {s: runs[s][method][key] for s in order if key in runs.get(s, {}).get(method, {})}
    values = {s: (over_runs[s]["mean"] if s in over_runs else cell["values"][s] if cell and s in cell["values"] else
                  systems[s].get(method, {}).get(key, math.nan)) for s in order}
    ci = {s: cell["ci"][s] for s in order if cell and s in cell["ci"]}
    n = {s: cell["n"][s] for s in order if cell and s in cell["n"]}
    tests = [_oriented(cell, *sorted((t["a"], t["b"]), key=list(order).index)) for t in cell["tests"]] if cell else []
    return {**table_row(label, method, key, values, ci, n, tests), "not_run": [s for s in order if method not in systems[s]],
            "std": {s: entry["std"] for s, entry in over_runs.items()}, "units": cell["units"] if cell else None}


def _number(value) -> float:
    return -math.inf if value is None or (isinstance(value, float) and math.isnan(value)) else value


def headline_family(results: Mapping) -> str:
    """How the headline's tests were adjusted, in words (``Holm over the 19 headline rows (57 tests)``)."""
    return family_description(results, HEADLINE)


def family_description(results: Mapping, name: str) -> str:
    """How a family's tests were adjusted, in words (a report without tests has no family)."""
    return results.get("families", {}).get(name, {}).get("description", "Holm-adjusted over the rows")


def format_cell(row: dict, system: str) -> str:
    """A summary cell: value (± sample std over runs), interval, ``*`` when significantly best,
    ``†`` when n < 30; ``-`` for a method not run for that system."""
    if system in row.get("not_run", ()):
        return "- "
    text = format_value(row["values"][system])
    if system in row.get("std", {}):
        text += f" ± {format_value(row['std'][system])}"
    ci = row.get("ci", {}).get(system)
    interval = "[too few units]" if ci and all(isinstance(v, float) and math.isnan(v) for v in ci) \
        and (row.get("units") or MIN_UNITS) < MIN_UNITS else format_interval(ci)
    if interval:
        text += " " + interval
    if row.get("small", {}).get(system):
        text += "†"
    return text + ("*" if system in row.get("best", []) else " ")


def format_test(row: dict, shown: Optional[Mapping[str, str]] = None) -> str:
    """Each compared pair's test of a row in words, ``; ``-joined (``shown``: a system's name as shown)."""
    return "; ".join(format_tests(row, shown))


def format_tests(row: dict, shown: Optional[Mapping[str, str]] = None) -> List[str]:
    """Each compared pair's test of a row in words, one string a pair."""
    name = (shown or {}).get
    return [f"{name(test['a'], test['a'])} - {name(test['b'], test['b'])} {describe_test(test)}: "
            + verdict_words(test, shown, " better") for test in row.get("tests", [])]


def verdict_words(test: Mapping, shown: Optional[Mapping[str, str]] = None, after: str = "") -> str:
    """A stored verdict in words: the better system (as ``shown``, then ``after``), else
    whether the difference is significant (a key never ranked) or not."""
    if test.get("better"):
        return (shown or {}).get(test["better"], test["better"]) + after
    return "significant, not ranked" if test.get("significant") else "not significant"


def format_text(results: dict, full: bool = False, wide: bool = False, width: int = WIDTH) -> str:
    """The terminal summary: systems side by side, in the order given, with intervals and n,
    ``*`` marking a system significantly better than the others (paired test, Holm-adjusted);
    ``full`` adds every flat key of every method.  Every line fits in ``width`` columns: the
    systems that do not fit beside the measures come in a further block, a name too long for
    its column is abbreviated (``S1``, with a legend) and prose is wrapped; each row's paired
    test follows the table.  ``wide``: one line per row, the test beside it, however long."""
    train, test = results["describe"]["train"], results["describe"]["test"]
    lines = ["Training mentions: {mentions} ({ambiguous_mentions} ambiguous), {unique_mentions} unique "
             "({ambiguous_unique_mentions} ambiguous)".format(**train),
             "Test mentions: {mentions} ({unseen_mentions} unseen), {unique_mentions} unique "
             "({unseen_unique_mentions} unseen)".format(**test), decoding_line(results), ""]
    lines[:0] = [f"warning: {warning}" for warning in results.get("warnings", [])]
    if results.get("findings"):
        lines.append("Findings (most important first; a difference is stated only when its test is significant):")
        lines += [f"- {item['text']}" for item in results["findings"]] + [""]
    table = results["summary"]
    order = table["systems"]
    statistics = results.get("statistics", {})
    labels = [row["label"] + (f" ({row['bucket']})" if row.get("bucket") else "") for row in table["rows"]]
    compared = len(order) > 1
    lines.append(f"summary: systems in the order given; value [{statistics.get('confidence', 0.95):.0%} interval]; "
                 f"* significantly better than every system it is compared with (paired test, "
                 f"{headline_family(results)}, adjusted p < {statistics.get('alpha', 0.05)}); "
                 f"† n < {SMALL}; ↑ higher / ↓ lower is better, · not ranked")
    rows, shown = side_by_side(table["rows"], labels, order, wide=wide, width=width)
    lines += legend(shown)
    if results.get("runs"):
        lines.append("runs: " + "; ".join(f"{name} {entry['runs']} runs (value: mean ± sample std over runs; "
                                          "interval and tests: counts pooled over runs)"
                                          for name, entry in results["runs"].items()))
    lines += rows
    label_width = min(max(map(len, labels), default=0), LABEL_WIDTH)
    if compared and not wide:
        lines += paired_tests(table["rows"], labels, shown, label_width)
    if statistics:
        lines.append(f"intervals: {statistics['interval']}, {statistics['n_resamples']} resamples of "
                     f"{statistics['unit']}s (seed {statistics['seed']}); tests: {statistics['test']}")
    averages = average_rows(results)
    if averages:
        lines += ["", "averages over types (TMR's spans): macro, the mean over the types with a gold or a predicted "
                      "mention; weighted, each type weighed by its gold mentions (as seqeval's classification_report); "
                      "n: a precision's predictions, else the gold mentions; not tested"]
        rows, averages_shown = side_by_side(averages, [row["label"] for row in averages],
                                            [s for s in order if s in averages[0]["values"]], wide=wide, width=width)
        lines += (legend(averages_shown) if averages_shown != shown else []) + rows
    if full:
        typed = per_type_rows(results)
        if typed:
            lines += ["", "precision, recall and F1 per type: strict spans; n: the system's predicted entities of "
                          "the type for precision, the gold ones for recall and F1; * F1 significantly better "
                          f"({results.get('families', {}).get('bucket F1 table', {}).get('description', 'Holm')})"]
            rows, typed_shown = side_by_side(typed, [row["label"] for row in typed], order, wide=wide, width=width)
            lines += (legend(typed_shown) if typed_shown != shown else []) + rows
        names = list(results["systems"])
        short = dict(zip(names, names)) if wide else short_names(names, 12)
        for method in dict.fromkeys(m for scores in results["systems"].values() for m in scores):
            keys = list(dict.fromkeys(k for scores in results["systems"].values() for k in scores.get(method, {})))
            key_width = max([len(k) for k in keys] + [len(method)])
            per_block = len(names) if wide else max(1, (width - key_width) // 14)
            for start in range(0, len(names), per_block):
                block = names[start:start + per_block]
                lines += ["", method.ljust(key_width) + "".join(f"  {short[s]:>12}" for s in block),
                          "-" * (key_width + 14 * len(block))]
                for key in keys:  # "-": a method not run for that system
                    lines.append(key.ljust(key_width) + "".join(
                        f"  {format_value(results['systems'][s].get(method, {}).get(key, '-')):>12}" for s in block))
    for entry in results.get("comparisons", []):
        a, b = entry["systems"]
        found = significant_buckets(entry["bucket_f1"], totals(results))
        lines += ["", f"bucket F1, {a} - {b}: buckets whose difference is significant "
                      f"({family_description(results, entry['family'])})"]
        lines += [f"  {item['attribute']:<5} {item['bucket']:<28} n {item['n']:>5}  {item['difference']:+.4f} "
                  f"{format_interval(item['ci'])}  Holm p {format_p(item['p_adjusted'])}" for item in found] \
            or ["  none: no bucket F1 differs significantly"]
    maps = {s: scores["nrb"].get("type_map") for s, scores in results["systems"].items() if "nrb" in scores}
    if maps:  # the map decides what counts as right: always say which one was used
        lines += ["", "NRB type map: " + ", ".join(f"{s} {m}" for s, m in maps.items())]
    for name, curve in results.get("attack_curve", {}).items():
        lines += ["", f"attack curve, {name}: F1 on each attacked set (drop, relative drop)"]
        lines += [f"  {point['set']:<14} {format_value(point['f1_attacked'])}  ({format_value(point['f1_drop'])}, "
                  f"{format_value(point['f1_drop_relative'])})" for point in curve]
    return "\n".join(lines if wide else fit(lines, width))


def decoding_line(results: Mapping) -> str:
    """How the tags were decoded, and F-beta's beta when it is not 1: the report's header line."""
    decoding = results.get("decoding", dict(zip(DECODING_KEYS, DEFAULT_DECODING)))
    beta = f"; F-beta with beta = {results['beta']:g}" if "beta" in results else ""
    return f"Tags decoded by {decoding_in_words([decoding[key] for key in DECODING_KEYS])}{beta}"


def side_by_side(rows: Sequence[dict], labels: Sequence[str], order: Sequence[str],
                 names: Optional[Mapping[str, str]] = None, wide: bool = False,
                 width: int = WIDTH) -> Tuple[List[str], Dict[str, str]]:
    """Rows of a table of systems side by side (value [interval], marks; then n), each
    system's column headed by its name (``names``: a display name per system); and the
    header each system got (``S1``... when a name does not fit: ``legend``).  Systems
    that do not fit in ``width`` come in a further block; ``wide``: one block, each row's
    paired test beside it."""
    names = {s: (names or {}).get(s, s) for s in order}
    cells = [[format_cell(row, s) for s in order] for row in rows]
    sizes = [format_sizes(row, order) for row in rows]
    cell = max([len(text) for texts in cells for text in texts] + [1]) + 2
    short = short_names([names[s] for s in order], width if wide else cell - 1)
    shown = {s: short[names[s]] for s in order}
    cell = max([cell] + [len(name) + 1 for name in shown.values()])
    label_width = max(map(len, labels), default=0) if wide else min(max(map(len, labels), default=0), LABEL_WIDTH)
    n_width = max([len(text) for text in sizes] + [1]) + 2
    compared = len(order) > 1
    lines: List[str] = []
    per_block = len(order) if wide else max(1, (width - label_width - 4 - n_width) // cell)
    for start in range(0, len(order), per_block):
        block = range(start, min(start + per_block, len(order)))
        if start:
            lines.append("")
        lines.append(" " * (label_width + 4) + "".join(shown[order[i]].rjust(cell - 1) + " " for i in block)
                     + "n".rjust(n_width) + ("   test" if wide and compared else ""))
        for row, label, texts, size in zip(rows, labels, cells, sizes):
            arrow = {"high": "↑", "low": "↓"}.get(row["better"], "·")
            first, *rest = [label] if wide else textwrap.wrap(label, label_width) or [""]
            lines.append(f"{first:<{label_width}}  {arrow} " + "".join(texts[i].rjust(cell) for i in block)
                         + size.rjust(n_width) + ("   " + format_test(row, shown) if wide and compared else ""))
            lines += [f"  {more}" for more in rest]
            if block.stop == len(order):
                lines += [f"{'':<{label_width}}  ! {shown[system]}: {warning}"
                          for system, warning in row.get("warnings", {}).items()]
    return lines, shown


def paired_tests(rows: Sequence[dict], labels: Sequence[str], shown: Mapping[str, str], label_width: int) -> List[str]:
    """Each row's paired tests as tables under the summary, one table a compared pair:
    difference [interval], p, Holm-adjusted p and the significantly better system."""
    compared = list(dict.fromkeys((test["a"], test["b"]) for row in rows for test in row.get("tests", [])))
    lines = []
    for a, b in compared:
        lines += ["", f"paired test of each row, {shown.get(a, a)} - {shown.get(b, b)} (--wide: beside the row)",
                  " " * (label_width + 3) + f"{'difference [interval]':>26}{'p':>10}{'Holm p':>10}  better"]
        for row, label in zip(rows, labels):
            for test in row.get("tests", []):
                if (test["a"], test["b"]) != (a, b):
                    continue
                verdict = verdict_words(test, shown)
                first, *rest = textwrap.wrap(label, label_width) or [""]
                difference = f"{round(test['difference'], 4) + 0.0:+.4f} {format_interval(test['ci']) or '[no interval]'}"
                lines.append(f"  {first:<{label_width}} {difference:>26}{format_p(test['p_value'])[2:]:>10}"
                             f"{format_p(test.get('p_adjusted', math.nan))[2:]:>10}  {verdict}")
                lines += [f"    {more}" for more in rest]
    return lines


def short_names(names: Sequence[str], room: int) -> Dict[str, str]:
    """Each name as a column header: itself when every name fits in ``room`` columns, else
    ``S1``, ``S2``, ... in the order given (``legend`` says which is which)."""
    if all(len(name) <= room for name in names):
        return {name: name for name in names}
    return {name: f"S{i + 1}" for i, name in enumerate(names)}


def legend(shown: Mapping[str, str], names: Optional[Mapping[str, str]] = None) -> List[str]:
    """The lines naming abbreviated systems (``S1 = ...``; ``names``: a system's display name);
    none when every system is shown by its name."""
    names = names or {}
    if all(names.get(system, system) == short for system, short in shown.items()):
        return []
    return ["systems:"] + [f"  {short} = {names.get(system, system)}" for system, short in shown.items()]


def fit(lines: Sequence[str], width: int = WIDTH) -> List[str]:
    """The lines, each longer than ``width`` wrapped at spaces (its continuation indented two
    more than the line); a word longer than the width (a path) stays whole."""
    out: List[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    return out


def format_sizes(row: dict, order: Sequence[str]) -> str:
    sizes = [row.get("n", {}).get(s) for s in order]
    known = [n for n in sizes if n is not None]
    if not known:
        return ""
    return str(known[0]) if len(set(known)) == 1 else "/".join("-" if n is None else str(n) for n in sizes)


def significant_buckets(comparison: Mapping[str, dict], counts: Optional[Mapping[str, int]] = None) -> List[dict]:
    """The buckets of a ``bucket_comparison`` whose difference is significant, largest first
    (``bucket`` in words, with the training totals ``counts``; ``interval`` exact)."""
    found = [{"attribute": attribute, "bucket": bucket_label(attribute, interval, counts), "interval": interval,
              "n": n, "difference": d, "ci": ci, "p_adjusted": p}
             for attribute, entry in comparison.items()
             for interval, n, d, ci, p, significant in zip(entry["intervals"], entry["n"], entry["difference"],
                                                           entry["ci"], entry["p_adjusted"], entry["significant"])
             if significant]
    return sorted(found, key=lambda item: -abs(item["difference"]))


def format_comparison(table: dict, names: Optional[Mapping[str, str]] = None, wide: bool = False,
                      width: int = WIDTH) -> str:
    """A ``tough_ner.compare`` table for a terminal, laid out as the report's summary: each key
    with every system's value [interval] and n side by side (``names``: how each system is
    shown, as the report names it), then each key's paired test; every line within ``width``
    columns unless ``wide`` (one line a key, its test beside it)."""
    systems = list(table["rows"][0]["values"]) if table["rows"] else []
    labels = [row["key"] for row in table["rows"]]
    lines = [f"{table['method']}: value [{table['confidence']:.0%} interval], * significantly better; "
             f"{table['test']}, Holm-adjusted over {len(table['rows'])} rows, alpha {table['alpha']}; "
             f"{table['n_resamples']} resamples of {table['unit']}s"]
    rows, shown = side_by_side(table["rows"], labels, systems, names, wide, width)
    lines += legend(shown, names) + rows
    if len(systems) > 1 and not wide:
        lines += paired_tests(table["rows"], labels, shown, min(max(map(len, labels), default=0), LABEL_WIDTH))
    return "\n".join(lines if wide else fit(lines, width))
