"""The ``tough-ner`` command."""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections import Counter
from typing import List, Optional

# Run as the command (not imported by a program or a test): its process settings (_process).
AS_COMMAND = __name__ == "__main__" or os.path.splitext(os.path.basename(sys.argv[0]))[0] == "tough-ner"
if AS_COMMAND:  # before anything loads numpy (hence the lazy package)
    from . import _process

    _process.at_start()


from ._util import write_atomic  # noqa: E402
from .core.batch import Batch  # noqa: E402
from .core.corpus import Corpus, read_batch, read_conll, read_system, source_name  # noqa: E402
from .present.formatting import format_interval, format_p, format_value, to_json as _json  # noqa: E402
from .core.stats import TrainStats  # noqa: E402


def _print_flat(result: dict) -> None:
    flat = {key: value for key, value in result.items() if not isinstance(value, (dict, list))}
    width = max(map(len, flat), default=0)
    for key, value in flat.items():
        print(f"{key:<{width}}  {format_value(value)}")


def _some(read, path):
    """What ``read`` makes of a file; one holding no sentence is an error here (the Python API
    returns NaN with n = 0 for it)."""
    read_in = read()
    if not len(read_in):
        raise ValueError(f"{source_name(path)} holds no sentence")
    return read_in


def _read(path, n_predictions: int = 0, columns=None) -> Corpus:
    """A test or prediction file (``corpus.read_conll``)."""
    return _some(lambda: read_conll(path, n_predictions, columns), path)


def _resampling(args) -> dict:
    """The resampling options of a command (``--ci`` and friends)."""
    return {"n_resamples": args.resamples, "confidence": args.confidence, "seed": args.seed, "unit": args.unit}


def _read_batch(path, columns=None) -> Batch:
    """A prediction file as a ``Batch`` (``corpus.read_batch``): token ... gold prediction, or
    the columns chosen by --columns."""
    return _some(lambda: read_batch(path, columns), path)


def _read_system(path, columns=None) -> Corpus:
    """A system's CoNLL file for report (``corpus.read_system``): token ... gold prediction, or
    token prediction (no gold)."""
    return _some(lambda: read_system(path, columns), path)


def _batch(corpus: Corpus, column: int = 0) -> Batch:
    return Batch(corpus.tokens, corpus.tags, corpus.predictions[column], corpus.documents)


def _versus(args, method: str, systems: dict, **options) -> bool:
    """With ``--versus``: print the paired comparison of the systems and return True."""
    from .methods.comparison import compare
    from .present.report import format_comparison

    if len(systems) < 2:
        return False
    table = compare(systems, method, **options, **_resampling(args), alpha=args.alpha)
    print(_json(table)) if args.json else print(format_comparison(table))
    return True


def _runs(args, paths, versus=()):
    """(batches of ``paths``, batches of ``versus``): prediction CoNLL files (token ... gold
    prediction) with the same tokens and gold tags, or with ``--pred`` JSON Lines files in
    ``--pred-format`` over the gold CoNLL file ``--test``."""
    paths, versus = list(paths), list(versus or ())
    if not args.pred:
        if args.pred_format != "tags":
            raise ValueError(f"--pred-format {args.pred_format} reads --pred JSONL files: give --pred")
        batches = _read_runs(paths + versus, getattr(args, "columns", None))
    else:
        from .core.formats import batch_from_files

        tests = args.test if isinstance(args.test, list) else [args.test]
        if len(tests) != 1:
            raise ValueError("with --pred, give one --test file: the gold CoNLL file (token ... gold)")
        gold = _read(tests[0])
        batches = [batch_from_files(gold.tokens, gold.tags, path, args.pred_format, documents=gold.documents)
                   for path in paths + versus]
    return batches[:len(paths)], batches[len(paths):]


def _add_pred_format(p, repeat_help: str) -> None:
    p.add_argument("--pred", action="append",
                   help="predictions as JSON Lines, one sentence per line in --pred-format; --test is then the "
                        "gold CoNLL file (token ... gold) and --versus files are JSONL too" + repeat_help)
    p.add_argument("--pred-format", default="tags", choices=["tags", "spans", "chars", "mentions"],
                   help="form of each --pred line: a list of tags; of [start, end, type] token spans; "
                        '{"text", "entities": [{"start", "end", "label"}]} character spans; or of '
                        '{"text", "type"} mentions (LLM output; unplaced ones count as hallucinated)')


def _names(paths) -> List[str]:
    """Display names of files: their paths, made unique."""
    names = [os.fspath(p) for p in paths]
    return names if len(set(names)) == len(names) else [f"{name} ({i + 1})" for i, name in enumerate(names)]


def cmd_hardeval(args) -> None:
    from .methods.hardeval import hardeval

    stats = TrainStats.coerce(args.train)
    options = {"strict": args.strict, "error": args.error}
    paths = (args.pred or [args.test])[:1]
    (test,), others = _runs(args, paths, [args.versus] if args.versus else [])
    if others and _versus(args, "hardeval", dict(zip(_names(paths + [args.versus]), [test] + others)), train=stats,
                          **options):
        return
    result = hardeval(stats, test, detailed=args.detailed, ci=args.ci, **options, **_resampling(args))
    print(_json(result)) if args.json else _print_flat(result)


def _read_runs(paths, columns=None) -> List[Batch]:
    from .core.checks import first_difference

    runs = [_read_batch(path, columns) for path in paths]
    first = source_name(paths[0])
    for path, run in zip(paths[1:], runs[1:]):
        where = first_difference(source_name(path), first, token=(run.tokens, runs[0].tokens),
                                 gold=(run.references, runs[0].references))
        if where:
            raise ValueError(f"{source_name(path)} does not hold the tokens and gold tags of {first}: {where}")
    return runs


def cmd_tmr(args) -> None:
    from .methods.tmr import counts, tmr
    from .core.uncertainty import aggregate_runs, compare_runs

    stats = TrainStats.coerce(args.train)
    paths = args.pred or args.test
    runs, others = _runs(args, paths, args.versus)
    if len(runs) == 1 and len(others) == 1:  # one run each: the paired test on sentences
        _versus(args, "tmr", dict(zip(_names(paths + args.versus), runs + others)), train=stats, match=args.match)
        return
    results = [tmr(stats, run, detailed=args.detailed, ci=args.ci, match=args.match, **_resampling(args))
               for run in runs]
    if len(results) == 1 and not others:
        print(_json(results[0])) if args.json else _print_flat(results[0])
        return
    table = {"runs": len(results), "aggregate": aggregate_runs(results)}
    if others:
        other_results = [tmr(stats, run, match=args.match) for run in others]
        table["versus"] = aggregate_runs(other_results)
        table["comparison"] = compare_runs(results, other_results, [counts(stats, r, args.match) for r in runs],
                                           [counts(stats, r, args.match) for r in others], **_resampling(args))
    if args.json:
        print(_json(table))
        return
    print(f"{len(results)} run(s): mean ± sample std [min, max]" + (
        f"; A - B: pooled {next(iter(table['comparison'].values()))['pooled']['test']}" if others else ""))
    for key, cell in table["aggregate"].items():
        line = f"{key:<22} {cell['mean']:.4f} ± {cell['std']:.4f} [{cell['min']:.4f}, {cell['max']:.4f}]"
        if others and key in table["comparison"]:
            entry = table["comparison"][key]
            pooled = entry["pooled"]
            line += f"   A-B {pooled['difference']:+.4f} {format_interval(pooled['ci'])}, p {format_p(pooled['p_value'])}"
            if "wilcoxon" in entry and not math.isnan(entry["wilcoxon"]["p_value"]):
                line += f"; Wilcoxon p = {entry['wilcoxon']['p_value']:.3f} ({entry['wilcoxon']['n_pairs']} pairs)"
        print(line)


def cmd_buckets(args) -> None:
    from .methods.buckets import ATTRIBUTES, attribute_wise, bucket_f1, counts, interval_text

    stats = TrainStats.coerce(args.train)
    runs, _ = _runs(args, args.pred or args.test)
    names = _names(args.pred or args.test)
    options = {"n_buckets": args.n_buckets, "lowercase": args.lowercase, "match": args.match}
    batches = dict(zip(names, runs))
    results = {name: bucket_f1(stats, batch, detailed=True, bootstrap=args.resamples, ci=args.ci, **options,
                               **{k: v for k, v in _resampling(args).items() if k != "n_resamples"})
               for name, batch in batches.items()}
    table = {"systems": results, "attribute_wise": attribute_wise(list(results.values()))}
    first, second = (list(results.values()) + [None])[:2]
    if second is not None:
        from .present.report import bucket_comparison
        from .core.uncertainty import analyse

        a, b = names[:2]
        analysis = analyse({name: counts(stats, batches[name], **options) for name in (a, b)}, None,
                           max(args.resamples, 1), args.confidence, args.seed, args.unit, args.alpha)
        table["comparison"] = bucket_comparison(first, second, analysis, a, b, args.alpha)
    if args.json:
        print(_json(table))
        return
    labels = [f"sys{i}" for i in range(len(results))]
    for label, name in zip(labels, results):
        print(f"{label} = {name}  (F1 {format_value(results[name]['f1'])})")
    if second is not None:
        print(f"A - B: paired difference sys0 - sys1 [{args.confidence:.0%} interval]; * significant "
              f"(paired randomisation test, Holm over the family of every bucket, alpha {args.alpha})")
    for attribute in ATTRIBUTES:
        print(f"\n{attribute}".ljust(24) + "n_gold" + "".join(f"  {n:>8}" for n in labels)
              + ("      A-B" if second is not None else ""))
        intervals = table["comparison"][attribute]["intervals"] if second is not None else \
            [r["interval"] for r in first["buckets"][attribute]]
        for i, interval in enumerate(intervals):
            rows = [next((r for r in result["buckets"][attribute] if r["interval"] == interval), None)
                    for result in results.values()]
            n_gold = next(r["n_gold"] for r in rows if r is not None)
            line = f"  {interval_text(attribute, interval):<21}{n_gold:>6}"
            line += "".join(f"  {format_value(r['f1'] if r else math.nan):>8}" for r in rows)
            if second is not None:
                cell = table["comparison"][attribute]
                line += f"  {cell['difference'][i]:+7.4f} {format_interval(cell['ci'][i])}"
                line += f"  Holm p {format_p(cell['p_adjusted'][i])}" + (" *" if cell["significant"][i] else "")
            print(line)
        worst = first["diagnostics"]["self"][attribute]
        if worst["worst"] is not None:
            print(f"  sys0: worst bucket {worst['worst']} ({format_value(worst['worst_f1'])}), "
                  f"best {worst['best']} ({format_value(worst['best_f1'])}), gap {format_value(worst['gap'])}")


def cmd_nrb(args) -> None:
    from .methods.nrb import read_nrb, read_nrb_predictions, score_sets, sets_batch
    from .attacks.taggers import spacy_tagger

    sets = [(name, read_nrb(path)) for name, path in (("nrb", args.nrb), ("wts", args.wts)) if path]
    if bool(args.pred) == bool(args.spacy):
        raise ValueError("give --pred files (one per set, NRB first) or --spacy MODEL")
    if args.pred and len(args.pred) != len(sets):
        raise ValueError(f"{len(sets)} benchmark file(s) but {len(args.pred)} --pred file(s)")
    type_map = args.type_map
    if type_map and type_map.endswith(".json"):
        with open(type_map, encoding="utf-8") as handle:
            type_map = json.load(handle)
    if args.spacy:
        tag = spacy_tagger(args.spacy)
        predictions = [tag(dataset["tokens"]) for _, dataset in sets]
    else:
        predictions = [read_nrb_predictions(path, dataset["tokens"]) for path, (_, dataset) in zip(args.pred, sets)]
    stats = TrainStats.coerce(args.train) if args.train else None
    scored = {name: (dataset["tokens"], dataset["ner_tags"], tags) for (name, dataset), tags in zip(sets, predictions)}
    if args.versus:
        if len(args.versus) != len(sets):
            raise ValueError(f"{len(sets)} benchmark file(s) but {len(args.versus)} --versus file(s)")
        other = {name: (dataset["tokens"], dataset["ner_tags"], read_nrb_predictions(path, dataset["tokens"]))
                 for path, (name, dataset) in zip(args.versus, sets)}
        _versus(args, "nrb", {"A": sets_batch(scored), "B": sets_batch(other)}, train=stats, type_map=type_map)
        return
    result = score_sets(scored, type_map, stats, args.detailed, ci=args.ci, **_resampling(args))
    print(_json(result)) if args.json else _print_flat(result)


def _dictionary(sources, types):
    from .attacks import dictionaries

    scheme = dictionaries.scheme_for(types)
    person, place = ("PER", "LOC") if scheme == "conll" else ("PERSON", "GPE")
    parts = []
    for source in sources or ["builtin"]:
        if source == "builtin" or source.startswith("builtin:"):
            parts.append(dictionaries.builtin(source.partition(":")[2] or scheme))
        elif source == "faker":
            parts.append(dictionaries.faker_people(person))
        elif source == "geonames":
            parts.append(dictionaries.geonames_places(place, place))
        else:
            parts.append(dictionaries.load(source))
    return dictionaries.merge(*parts)


def _pos(source, path):
    if source is None:
        return None
    if source == "column":  # the test file's second column (CoNLL-2003 has POS there)
        from .core.corpus import read_columns
        return read_columns(path, [1])[0]
    from .attacks.taggers import spacy_pos
    return spacy_pos(source.partition(":")[2] if source.startswith("spacy:") else source)


def _victim(spec):
    """``spacy:NAME`` (a spaCy pipeline) or ``module:function`` (sentences -> tag lists)."""
    if spec is None:
        return None
    if spec.startswith("spacy:"):
        from .attacks.taggers import spacy_tagger
        return spacy_tagger(spec.partition(":")[2])
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"--victim {spec!r}: give spacy:NAME or module:function")
    import importlib
    sys.path.insert(0, os.getcwd())  # a module beside the user's files
    try:
        function = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"--victim {spec!r}: {error}") from None
    finally:
        sys.path.pop(0)
    if not callable(function):
        raise ValueError(f"--victim {spec!r} is not callable")
    return function


def cmd_attack(args) -> None:
    from .attacks import attack, audit, summary, write_attacked
    from .core.corpus import read_columns
    from .attacks.fine_classes import ROUTES

    test = _read(args.test)
    if args.level in ("context", "both") and (args.mlm is None or args.pos is None):
        raise ValueError(f"--level {args.level} needs --mlm (a local masked-LM directory) and --pos")
    ratios = [float(r) for r in args.ratios.split(",")] if args.ratios else [args.ratio]
    root, suffix = os.path.splitext(args.out)
    outputs = [f"{root}-{value:g}{suffix}" if args.ratios else args.out for value in ratios]
    repeated = sorted({out for out in outputs if outputs.count(out) > 1})
    if repeated:  # 0.5,0.50 would write one file twice
        raise ValueError(f"--ratios {args.ratios} names the same ratio twice: {', '.join(repeated)} would be "
                         f"written more than once")
    dictionary = None
    if args.level in ("entity", "both", "cross_type") and args.dictionary:
        dictionary = _dictionary(args.dictionary, Batch(test.tokens, test.tags).types)
    fill_mask = pos = None
    if args.level in ("context", "both"):
        from .attacks.taggers import mlm_fill_mask
        fill_mask = mlm_fill_mask(args.mlm, top_k=args.ranks[1])
        pos = _pos(args.pos, args.test)
    victim = _victim(args.victim)
    # The file's middle columns (POS, chunk) and documents are kept in the output.
    middle = read_columns(args.test)[1:-1]
    columns = {f"column{k + 1}": values for k, values in enumerate(middle)}
    documents = test.documents  # None without -DOCSTART-: each sentence its own document
    stats = TrainStats.coerce(args.train) if args.train else None  # once for every ratio
    for value, out in zip(ratios, outputs):
        attacked = attack(test, level=args.level, ratio=value, seed=args.seed, dictionary=dictionary, train=stats,
                          fill_mask=fill_mask, pos=pos, ranks=tuple(args.ranks), victim=victim, columns=columns,
                          documents=documents, mode=args.case).to_dict()
        write_attacked(out, attacked, list(columns))
        levels = Counter(r["level"] for records in attacked["replacements"] for r in records)
        print(f"{out}: {len(attacked['tokens'])} sentences; replaced: "
              + ", ".join(f"{n} {level}" for level, n in sorted(levels.items())) if levels else
              f"{out}: {len(attacked['tokens'])} sentences; nothing replaced")
        if levels["entity"] or levels["cross_type"]:
            facts = summary(attacked)
            print("  fine class by " + ", ".join(f"{route} {format_value(facts['route_' + route])}"
                                                  for route in ROUTES) + f" (n={facts['n_replaced']})")
    if args.audit:
        print(audit(attacked, args.audit, seed=args.seed))


def cmd_rockner(args) -> None:
    from .methods.rockner import rockner

    base = _read_batch(args.original, args.columns)
    if args.versus:
        if len(args.attacked) != 1:
            raise ValueError("--versus compares one attacked set: give one --attacked file")
        other_original, other_attacked = (_read_batch(path, args.columns) for path in args.versus)
        _versus(args, "rockner", {"A": (base, _read_batch(args.attacked[0], args.columns)),
                                  "B": (other_original, other_attacked)})
        return
    results = {}
    for path in args.attacked:
        results[path] = rockner(base, _read_batch(path, args.columns), args.detailed, ci=args.ci,
                                **_resampling(args))
    if len(results) == 1:
        result = results[args.attacked[0]]
        print(_json(result)) if args.json else _print_flat(result)
    elif args.json:
        print(_json(results))
    else:
        width = max(map(len, results))
        print(f"{'attacked set':<{width}}  {'f1':>8}  {'drop':>8}  {'relative':>8}")
        print(f"{args.original:<{width}}  {format_value(next(iter(results.values()))['f1_original']):>8}")
        for path, result in results.items():
            print(f"{path:<{width}}  {format_value(result['f1_attacked']):>8}  {format_value(result['f1_drop']):>8}"
                  f"  {format_value(result['f1_drop_relative']):>8}")


def cmd_describe(args) -> None:
    stats = TrainStats.coerce(args.train)
    result = {"train": stats.describe()}
    for path in args.test or []:
        test = _read(path)
        result[path] = stats.describe_test(test.tokens, test.tags)
    print(_json(result))


def cmd_stats(args) -> None:
    if args.merge:  # shards built anywhere, folded in the order given (loaded one at a time)
        stats = TrainStats.merge_all(TrainStats.load(path) for path in args.merge)
    else:
        stats = TrainStats.coerce(args.train)
    stats.save(args.out, shareable=args.shareable)
    print(f"{stats!r} -> {args.out}{' (shareable: without the training text)' if args.shareable else ''}")


def cmd_register(args) -> None:
    from .metrics.register import register

    for path in register(args.names or None, args.modules_cache):
        print(path)


def _file_input(path) -> dict:
    """A report input: its path and the SHA-256 of its content."""
    import hashlib

    with open(path, "rb") as handle:
        return {"path": os.fspath(path), "sha256": hashlib.sha256(handle.read()).hexdigest()}


def _progress(quiet: bool):
    """A progress bar on stderr over the report's steps; silent off a terminal or with --quiet."""
    def wrap(steps):
        from tqdm import tqdm

        steps = list(steps)
        bar = tqdm(steps, file=sys.stderr, unit="step", disable=quiet or not sys.stderr.isatty(), leave=False)
        for label, step in bar:
            bar.set_description(label)
            yield label, step
    return wrap


def _with_progress(label: str, work, quiet: bool):
    """``work()`` shown as one step of a progress bar (on a terminal)."""
    result = None
    for _, step in _progress(quiet)([(label, work)]):
        result = step()
    return result


def system_names(specs: List[str]) -> List[tuple]:
    """``--pred`` values as (name, path): ``NAME=path`` (an existing file path is taken whole),
    or a path named by its file stem; stems shared by several files get their folder, then
    a number.  A name given several times names runs (training seeds) of one system; the
    same file given twice is an error."""
    pairs = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        pairs.append((name, path) if sep and name and not os.path.exists(spec) else (None, spec))
    given = [name for name, _ in pairs if name is not None]
    paths = [os.path.abspath(path) for _, path in pairs]
    twice = sorted({path for _, path in pairs if paths.count(os.path.abspath(path)) > 1})
    if twice:
        raise ValueError(f"--pred {', '.join(twice)} given more than once")
    stem = [os.path.splitext(os.path.basename(path))[0] for _, path in pairs]
    folder = [f"{os.path.basename(os.path.dirname(os.path.abspath(path)))}/{s}" for (_, path), s in zip(pairs, stem)]
    unnamed = [s for (name, _), s in zip(pairs, stem) if name is None]
    names = [name if name is not None else (s if unnamed.count(s) == 1 and s not in given else f)
             for (name, _), s, f in zip(pairs, stem, folder)]
    for i, ((name, _), shown) in enumerate(zip(pairs, list(names))):
        if name is None and names.count(shown) > 1:  # unnamed files never become runs of one system
            names[i] = f"{shown} ({names[:i].count(shown) + 1})"
    return [(name, path) for name, (_, path) in zip(names, pairs)]


def cmd_report(args) -> None:
    from . import __version__
    from .core.checks import first_difference
    from .present.demo import NRB, NRB_TYPE_MAP, SYSTEMS, TEST, TRAIN, WTS, demo_attacks, load_demo, load_demo_nrb
    from .present.report import format_text, run, run_labels

    nrb_sets = type_map = attacked = None
    demo = args.train is None and args.test is None
    if demo:
        train, test = load_demo()
        stats = _with_progress("training statistics", lambda: TrainStats.from_corpus(train), args.quiet)
        systems, nrb_sets, type_map = list(SYSTEMS), load_demo_nrb(), NRB_TYPE_MAP
        attacked = _with_progress("entity attacks", lambda: demo_attacks(stats, test), args.quiet)
        inputs = {"train": _file_input(TRAIN), "test": _file_input(TEST),
                  "nrb": _file_input(NRB), "wts": _file_input(WTS), "attacked": "the demo test set under the "
                  "entity attack (built-in dictionary, seed 0), predicted by the memorization baseline"}
        args.html = args.html or os.path.join(args.out_dir, "report.html")
        args.json = args.json or os.path.join(args.out_dir, "report.json")
    elif args.train is None or args.test is None or not args.pred:
        raise SystemExit("tough-ner report: give --train, --test and at least one --pred, or nothing for the demo")
    else:
        stats = _with_progress("training statistics", lambda: TrainStats.coerce(args.train), args.quiet)
        test = _read(args.test)
        named = system_names(args.pred)
        for _, path in named:
            if args.pred_format != "tags" or path.endswith(".jsonl"):
                from .core.formats import batch_from_files

                test.predictions.append(batch_from_files(test.tokens, test.tags, path, args.pred_format,
                                                         documents=test.documents))
                continue
            predicted = _read_system(path, args.columns)
            where = first_difference(predicted.path, test.path, token=(predicted.tokens, test.tokens),
                                     gold=(predicted.tags, test.tags))
            if where:
                raise ValueError(f"{predicted.path} does not hold the tokens and gold tags of --test {test.path}: "
                                 f"{where} (was a prediction file given as --test? a system file is read as token "
                                 f"... gold prediction, or token prediction; choose its columns with --columns)")
            test.predictions.append(predicted.predictions[0])
        systems = [name for name, _ in named]
        inputs = {"train": _file_input(args.train), "test": _file_input(args.test),
                  "pred": [{"name": name, **_file_input(path)} for name, path in named]}
        if bool(args.nrb) != bool(args.wts):
            raise ValueError("give --nrb and --wts together")
        if args.nrb:  # token gold, then one prediction column per --pred system
            nrb_sets = tuple(read_conll(path, n_predictions=len(systems)) for path in (args.nrb, args.wts))
            type_map = args.type_map
            inputs.update(nrb=_file_input(args.nrb), wts=_file_input(args.wts))
        if args.attacked:
            versions = [(os.path.basename(path), read_conll(path, n_predictions=len(systems)))
                        for path in args.attacked]
            attacked = {label: [(name, Corpus(corpus.tokens, corpus.tags, [corpus.predictions[i]]))
                                for name, corpus in versions] for i, label in enumerate(run_labels(systems))}
            inputs["attacked"] = [_file_input(path) for path in args.attacked]
    if args.errors and os.path.splitext(args.errors)[1].lower() not in (".csv", ".jsonl", ".json"):
        raise ValueError(f"--errors {args.errors}: the extension must be .csv or .jsonl")  # before the work
    options = {"bootstrap": args.bootstrap, "seed": args.seed, "type_map": type_map or "auto", "n_buckets": 4,
               "systems": systems, "train_is_reference": args.train_is_reference, "confidence": args.confidence,
               "unit": args.unit, "alpha": args.alpha, "baseline": args.baseline}
    results = run(stats, test, systems, nrb_sets, type_map, attacked, bootstrap=args.bootstrap, seed=args.seed,
                  progress=_progress(args.quiet), train_is_reference=args.train_is_reference,
                  confidence=args.confidence, unit=args.unit, alpha=args.alpha, baseline=args.baseline)
    report = {"tough_ner_version": __version__, "inputs": inputs, "options": options, "results": results}
    print(format_text(results, full=args.full))
    rows = None
    if args.errors or args.html:
        from .present.errors import error_rows

        from .present.report import _batch

        rows = [row for name, predictions in zip(run_labels(systems), test.predictions)
                for row in error_rows(stats, _batch(test, predictions), name)]
    written = []
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        write_atomic(args.json, _json(report) + "\n")
        written.append(args.json)
    if args.html:
        from .present.html import render

        os.makedirs(os.path.dirname(os.path.abspath(args.html)), exist_ok=True)
        write_atomic(args.html, render(report, errors=rows))
        written.append(args.html)
    if args.errors:
        from .present.errors import write

        write(rows, args.errors)
        written.append(args.errors)
    for path, fmt in ((args.latex, "latex"), (args.markdown, "markdown")):
        if path:
            from .present.export import write as export

            export(results, path, fmt)
            written.append(path)
    if written:
        print("\nwrote " + ", ".join(written))


def cmd_explain(args) -> None:
    from .present import glossary

    if args.key is None:
        print(glossary.text())
        return
    try:
        print(glossary.explain(args.key))
    except KeyError as error:
        raise ValueError(error.args[0]) from None


def cmd_space(args) -> None:
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from .spaces import build, export, launch

    if args.export:
        for path in export(args.name, args.export, args.stats):
            print(path)
        return
    launch(args.name, port=args.port, app=build(args.name, stats=args.stats) if args.stats else None)


def _resampling_flags(p, command: str) -> None:
    """--ci and the resampling options (tough_ner.uncertainty), the same for every method."""
    p.add_argument("--ci", action="store_true", help="add a confidence interval (<key>_ci_low/_ci_high) to every rate")
    if command == "buckets":  # --bootstrap is the older name of --resamples here
        p.add_argument("--resamples", "--bootstrap", dest="resamples", type=int, default=1000,
                       help="bootstrap resamples (default 1000; 0: no intervals)")
    else:
        p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    if command != "buckets":
        p.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    p.add_argument("--unit", choices=["sentence", "document"], default="sentence",
                   help="resample sentences, or whole documents (-DOCSTART- groups)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the paired tests (default 0.05)")


def _columns_flag(p, command: str) -> None:
    p.add_argument("--columns", help="the columns of the prediction files: indices token,gold,pred (e.g. 0,3,4) or one "
                                     "name per column (e.g. token,pos,chunk,gold,pred; other names are skipped)"
                                     + ("; for report, of the --pred files" if command == "report" else ""))


def _hardeval_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training CoNLL file or saved stats (.npz)")
    p.add_argument("--test", required=True, help="prediction CoNLL file: token ... gold prediction")
    p.add_argument("--strict", action="store_true", help="strict diff subsets")
    p.add_argument("--versus", help="another system's prediction file on the same test set: paired comparison")
    p.add_argument("--error", default="bilou", choices=["bilou", "bio", "io"], help="label comparison")
    p.add_argument("--detailed", action="store_true", help="per-type tables and hard tokens (with --json)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_pred_format(p, "")
    _resampling_flags(p, "hardeval")
    _columns_flag(p, "hardeval")
    p.set_defaults(run=cmd_hardeval)


def _tmr_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training CoNLL file or saved stats (.npz)")
    p.add_argument("--test", required=True, action="append",
                   help="prediction CoNLL file (token ... gold prediction); repeat for several runs: mean and std")
    p.add_argument("--versus", action="append",
                   help="another system's runs (repeatable): one run each, the paired test on sentences; several, "
                        "aggregates with the pooled paired test and Wilcoxon over runs paired in order")
    p.add_argument("--detailed", action="store_true", help="per-type tables (with --json)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--match", default="strict", choices=["strict", "exact", "partial", "type"],
                   help="when a mention counts as found (nervaluate's schemes; default strict)")
    _add_pred_format(p, "; repeat for several runs")
    _resampling_flags(p, "tmr")
    _columns_flag(p, "tmr")
    p.set_defaults(run=cmd_tmr)


def _buckets_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training CoNLL file or saved stats (.npz)")
    p.add_argument("--test", required=True, action="append",
                   help="prediction CoNLL file (token ... gold prediction); repeat for systems side by side")
    p.add_argument("--n-buckets", type=int, default=4, help="buckets per attribute, special ones included (at most 100)")
    p.add_argument("--lowercase", action="store_true", help="match tokens lowercased")
    p.add_argument("--seed", type=int, default=0, help="resampling seed")
    p.add_argument("--json", action="store_true", help="print every table as JSON")
    p.add_argument("--match", default="strict", choices=["strict", "exact", "partial", "type"],
                   help="when an entity counts as right (nervaluate's schemes; default strict)")
    _add_pred_format(p, "; repeat for systems side by side")
    _resampling_flags(p, "buckets")
    _columns_flag(p, "buckets")
    p.set_defaults(run=cmd_buckets)


def _nrb_arguments(p) -> None:
    p.add_argument("--nrb", required=True, help="NRB file ({lang}.nrb.conll or .txt)")
    p.add_argument("--wts", help="WTS file ({lang}.wts.conll or .txt)")
    p.add_argument("--pred", action="append",
                   help="predictions as 'token TAG' lines, one file per set (NRB first, then WTS)")
    p.add_argument("--spacy", help="tag the sentences with this spaCy pipeline (name or path) instead")
    p.add_argument("--type-map", help="auto (default: detected from the system's labels), nrb, conll, ontonotes "
                                      "or a JSON file {type: NRB type}")
    p.add_argument("--train", help="training CoNLL file or stats: count targets seen with another type")
    p.add_argument("--versus", action="append", help="another system's predictions, one file per set as --pred: "
                                                     "paired comparison")
    p.add_argument("--detailed", action="store_true", help="confusion counts (with --json)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _resampling_flags(p, "nrb")
    p.set_defaults(run=cmd_nrb)


def _attack_arguments(p) -> None:
    p.add_argument("--test", required=True, help="CoNLL file to attack (token first, gold tag last)")
    p.add_argument("--train", help="training CoNLL file or stats: its mentions are never used as replacements")
    p.add_argument("--level", default="entity", choices=["entity", "context", "both", "typo", "case", "cross_type"],
                   help="entity (RockNER, default), context (RockNER), both, typo (character typos inside "
                        "entities), case (sentences lower- or upper-cased, see --case), cross_type (entities "
                        "replaced by entities of another type)")
    p.add_argument("--case", default="lower", choices=["lower", "upper"], help="the case attack's mode")
    p.add_argument("--ratio", type=float, default=1.0,
                   help="share of eligible originals attacked (entities; sentences for --level case)")
    p.add_argument("--ratios", help="comma-separated ratios, one output file per ratio: OUT-RATIO.EXT")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dictionary", action="append",
                   help="builtin[:conll|:ontonotes] (default), faker, geonames, a JSON file or RockNER .jsonl "
                        "file/folder; repeatable (pooled)")
    p.add_argument("--mlm", help="local masked-LM directory (transformers) for the context level")
    p.add_argument("--pos", help="POS tags for the context level: 'column' (the test file's 2nd column) "
                                 "or a spaCy pipeline (spacy:NAME)")
    p.add_argument("--ranks", type=int, nargs=2, default=[51, 100], metavar=("FIRST", "LAST"),
                   help="rank window of the masked-LM proposals (default 51 100)")
    p.add_argument("--victim", help="context level: the tagger whose misses choose the candidate sentence, "
                                    "spacy:NAME or module:function (sentences -> IOB2 tag lists)")
    p.add_argument("--audit", type=int, default=0, metavar="N",
                   help="print N random replaced entities in context, with fine class and route (last ratio)")
    p.add_argument("--out", required=True, help="output CoNLL file: the input's columns, -DOCSTART- lines kept")
    p.set_defaults(run=cmd_attack)


def _rockner_arguments(p) -> None:
    p.add_argument("--original", required=True, help="predictions on the original set: token ... gold prediction")
    p.add_argument("--attacked", required=True, action="append",
                   help="predictions on an attacked set; repeat for a coverage curve")
    p.add_argument("--versus", nargs=2, metavar=("ORIGINAL", "ATTACKED"),
                   help="another system's predictions on the original and the attacked set: paired comparison")
    p.add_argument("--detailed", action="store_true", help="error counts and confusion tables (with --json)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _resampling_flags(p, "rockner")
    _columns_flag(p, "rockner")
    p.set_defaults(run=cmd_rockner)


def _describe_arguments(p) -> None:
    p.add_argument("--train", required=True)
    p.add_argument("--test", action="append", help="evaluation CoNLL file (gold tag last); repeatable")
    p.set_defaults(run=cmd_describe)


def _stats_arguments(p) -> None:
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--train", help="training CoNLL file (or stats file) to build from")
    source.add_argument("--merge", nargs="+", metavar="STATS",
                        help="stats files of consecutive shards of one corpus, in corpus order: their merge")
    p.add_argument("--out", required=True, help="output file (.npz)")
    p.add_argument("--shareable", action="store_true",
                   help="leave the training text out (README: Shareable statistics, what the file still reveals)")
    p.set_defaults(run=cmd_stats)


def _register_arguments(p) -> None:
    p.add_argument("names", nargs="*", help="metrics to register (default: all)")
    p.add_argument("--modules-cache", help="evaluate modules cache (default: $HF_HOME/modules)")
    p.set_defaults(run=cmd_register)


def _report_arguments(p) -> None:
    p.add_argument("--train", help="training CoNLL file or saved stats (.npz)")
    p.add_argument("--test", help="gold CoNLL file (gold tag last)")
    p.add_argument("--pred", action="append", metavar="[NAME=]PATH",
                   help="a system's CoNLL file (prediction last), or a JSON Lines file in --pred-format (.jsonl), "
                        "optionally named (default: the file stem); repeatable")
    p.add_argument("--pred-format", default="tags", choices=["tags", "spans", "chars", "mentions"],
                   help="form of the --pred JSONL lines (as for tmr); tags: CoNLL files unless named .jsonl")
    p.add_argument("--nrb", help="NRB sentences: token gold, then one prediction column per --pred system")
    p.add_argument("--wts", help="WTS sentences, same columns as --nrb")
    p.add_argument("--type-map", help="system types to NRB types: auto (default: detected from the system's "
                                      "labels), nrb, conll or ontonotes")
    p.add_argument("--attacked", action="append",
                   help="an attacked test set: token gold, then one prediction column per --pred system; "
                        "repeat, mildest first, for an attack curve")
    p.add_argument("--html", help="write the HTML report here")
    p.add_argument("--json", help="write the JSON report here")
    p.add_argument("--errors", metavar="FILE", help="write every system's per-entity error table (.csv or .jsonl)")
    p.add_argument("--latex", metavar="FILE", help="write the headline and subset tables as LaTeX (booktabs)")
    p.add_argument("--markdown", metavar="FILE", help="write the headline and subset tables as Markdown")
    p.add_argument("--train-is-reference", "--train-is-not-the-system-training-data", action="store_true",
                   dest="train_is_reference",
                   help="--train is not what the systems were trained on: seen/unseen are relative to it")
    p.add_argument("--out-dir", default="tough-ner-report", help="the demo's output folder")
    p.add_argument("--resamples", "--bootstrap", dest="bootstrap", type=int, default=1000,
                   help="bootstrap resamples for every interval (default 1000; the tests need none)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    p.add_argument("--unit", choices=["sentence", "document"], default="sentence",
                   help="resampling unit: sentence, or document (-DOCSTART- groups)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the paired tests (default 0.05)")
    p.add_argument("--baseline", metavar="NAME",
                   help="compare every system with this one only (k - 1 tests per row), not every pair")
    p.add_argument("--full", action="store_true", help="print every key of every method, not only the summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _columns_flag(p, "report")
    p.set_defaults(run=cmd_report)


def _explain_arguments(p) -> None:
    p.add_argument("key", nargs="?", help="a flat result key (ter_unseen_I, recall_tcm_unseen, eLen_2_f1) or term")
    p.set_defaults(run=cmd_explain)


def _space_arguments(p) -> None:
    p.add_argument("name", nargs="?", default="all", choices=["hardeval", "tmr", "bucket_f1", "nrb", "rockner", "all"])
    p.add_argument("--port", type=int, help="port (default: gradio's, 7860 or the next free one)")
    p.add_argument("--export", metavar="DIR", help="write the Space to DIR (app.py, card, requirements.txt, a copy "
                                                   "of the package) instead of serving it")
    p.add_argument("--stats", metavar="FILE", help="saved training statistics used when the training data is left "
                                                   "empty (copied into DIR with --export; for a licensed corpus, a "
                                                   "shareable file)")
    p.set_defaults(run=cmd_space)


# Each command's help line and the function adding its arguments.
COMMANDS = {
    "hardeval": ("HardEval token error rates on unseen and diff tokens", _hardeval_arguments),
    "tmr": ("Tough Mentions Recall on unseen and type-confusable mentions", _tmr_arguments),
    "buckets": ("F1 per bucket of entity attributes (interpretable evaluation)", _buckets_arguments),
    "nrb": ("Name Regularity Bias: accuracy on NRB and its WTS control set", _nrb_arguments),
    "attack": ("RockNER: write an adversarial version of a test set", _attack_arguments),
    "rockner": ("RockNER: F1 drop and error analysis, original vs attacked", _rockner_arguments),
    "describe": ("mention statistics of training and test sets", _describe_arguments),
    "stats": ("build training statistics once and save them", _stats_arguments),
    "register": ("make evaluate.load('hardeval') work offline", _register_arguments),
    "report": ("every method, every system (text, JSON, HTML); no arguments: the demo", _report_arguments),
    "explain": ("what a result key or glossary term means; no key: the glossary", _explain_arguments),
    "space": ("serve a metric's Gradio app on 127.0.0.1, or write a folder a Hugging Face "
              "Space runs as it is (the spaces extra)", _space_arguments),
}


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="tough-ner", description="Where NER models fail, not just their F1.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    # Only the command being run is built (every other one is for --help and errors): each
    # parser looks for argparse's translations on disk, and all of them took ~7 ms per start.
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    for name, (help_text, add_arguments) in COMMANDS.items():
        if chosen in (None, name):
            add_arguments(commands.add_parser(name, help=help_text))

    args = parser.parse_args(argv)
    if AS_COMMAND and args.command != "space":  # a server runs for long
        _process.keep_freed_memory()
    code = _run(args)
    if AS_COMMAND:
        _process.exit_now(code)
    return code


def _run(args) -> int:
    """Run the parsed command: its exit status, errors as one line on stderr."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # shown, once per place, whatever filters a caller set
            warnings.showwarning = lambda message, category, *rest, **kw: print(
                f"tough-ner {args.command}: warning: {message}", file=sys.stderr)
            args.run(args)
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (ValueError, TypeError) as error:
        return _fail(args.command, error, 2)
    except ImportError as error:  # an optional extra that is not installed: the message names it
        return _fail(args.command, error, 2)
    except OSError as error:  # no such file, permission, a directory, disk full ...
        return _fail(args.command, _os_message(error), 2)
    except MemoryError:
        return _fail(args.command, "out of memory (try a smaller input or fewer options, e.g. --bootstrap 0)", 2)
    except KeyboardInterrupt:
        return _fail(args.command, "interrupted", 130)
    return 0


def _fail(command: str, message, code: int) -> int:
    """One line on stderr, never a traceback; ``code`` is the exit status."""
    text = " ".join(str(message).split()) or type(message).__name__
    print(f"tough-ner {command}: {text[:1000]}", file=sys.stderr)
    return code


def _os_message(error: OSError) -> str:
    """``report.html: Permission denied`` rather than ``[Errno 13] Permission denied: 'report.html'``."""
    if error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    return error.strerror or str(error)


if __name__ == "__main__":
    sys.exit(main())
