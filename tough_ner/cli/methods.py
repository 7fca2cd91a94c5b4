"""The methods' commands: hardeval, tmr, buckets, nrb, rockner, and describe."""
from __future__ import annotations

import math
import sys

from ..core.stats import TrainStats
from ..present.formatting import format_interval, format_p, format_value, json_pieces, to_json as _json
from ._common import (_add_pred_format, _columns_flag, _decoding, _decoding_flags, _names, _print_flat, _read,
                      _read_batch, _resampling, _resampling_flags, _runs, _versus, display_names, seed)


def cmd_hardeval(args) -> None:
    from ..methods.hardeval import hardeval

    stats = TrainStats.coerce(args.train, **_decoding(args))
    options = {"strict": args.strict, "error": args.error}
    paths = (args.pred or [args.test])[:1]
    (test,), others = _runs(args, paths, [args.versus] if args.versus else [])
    if others and _versus(args, "hardeval", dict(zip(_names(paths + [args.versus]), [test] + others)), train=stats,
                          **options):
        return
    result = hardeval(stats, test, detailed=args.detailed, ci=args.ci, **options, **_resampling(args))
    print(_json(result)) if args.json else _print_flat(result)


def cmd_tmr(args) -> None:
    from ..methods.tmr import counts, tmr
    from ..core.uncertainty import aggregate_runs, compare_runs

    stats = TrainStats.coerce(args.train, **_decoding(args))
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
    from ..present.report import WIDTH, fit
    from ..trainer import is_count

    lines = [f"{len(results)} run(s): mean ± sample std [min, max]" + (
        f"; A - B: pooled {next(iter(table['comparison'].values()))['pooled']['test']}" if others else "")]
    width = max(map(len, table["aggregate"]))
    for key, cell in table["aggregate"].items():
        shown = _count if is_count(key) else "{:.4f}".format
        line = f"{key:<{width}} {shown(cell['mean'])} ± {shown(cell['std'])} [{shown(cell['min'])}, " \
               f"{shown(cell['max'])}]"
        test = ""
        if others and key in table["comparison"]:
            entry = table["comparison"][key]
            pooled = entry["pooled"]
            test = f"A-B {pooled['difference']:+.4f} {format_interval(pooled['ci'])}, p {format_p(pooled['p_value'])}"
            if "wilcoxon" in entry and not math.isnan(entry["wilcoxon"]["p_value"]):
                test += f"; Wilcoxon p = {entry['wilcoxon']['p_value']:.3f} ({entry['wilcoxon']['n_pairs']} pairs)"
        # a row too long for the terminal gets its test on the next line, as the report's rows
        lines += [f"{line}   {test}"] if test and len(line) + 3 + len(test) <= WIDTH else [line] + (
            [f"  {test}"] if test else [])
    print("\n".join(fit(lines)))


def _count(value: float) -> str:
    """A count over runs: whole (5648), or with one decimal when a mean of counts is not."""
    return "nan" if math.isnan(value) else f"{value:.0f}" if value == round(value) else f"{value:.1f}"


def cmd_buckets(args) -> None:
    from ..methods.buckets import ATTRIBUTES, attribute_wise, bucket_f1, counts

    stats = TrainStats.coerce(args.train, **_decoding(args))
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
        from ..present.report import bucket_comparison, decided_buckets
        from ..core.uncertainty import analyse

        a, b = names[:2]
        pair = {name: counts(stats, batches[name], **options) for name in (a, b)}
        f1_keys = [key for key in pair[a].keys if key.endswith("f1")]  # what the comparison reads: a third of the keys
        analysis = analyse(pair, f1_keys, max(args.resamples, 1), args.confidence, args.seed, args.unit, args.alpha)
        del pair  # the counts, not needed any more: a table per type
        table["comparison"] = bucket_comparison(first, second, analysis, a, b, decided_buckets(analysis, args.alpha))
    if args.json:
        sys.stdout.writelines(json_pieces(table))  # a bucket per type: the text is never held whole
        print()
        return
    from ..present.labels import bucket_label
    from ..present.report import fit, short_names

    shown = display_names(names)  # as the report names them; a name too long for a column: S1, ...
    labels = list(short_names(shown, 10).values())
    column = max([8] + [len(label) for label in labels])
    for label, name in zip(labels, results):
        print(f"{label} = {name}  (F1 {format_value(results[name]['f1'])})")
    training = {"mentions": stats.describe()["mentions"], "tokens": stats.n_tokens}  # eFre / tFre shares as counts
    lines = []
    if second is not None:
        lines.append(f"A - B: paired difference {labels[0]} - {labels[1]} [{args.confidence:.0%} interval], Holm p; "
                     f"* significant (paired randomisation test, Holm over the family of every bucket, alpha "
                     f"{args.alpha})")
    for attribute in ATTRIBUTES:
        lines += ["", f"{attribute:<26}{'n gold':>6}" + "".join(f"  {label:>{column}}" for label in labels)
                  + (f"  {'A - B [interval]':>26}  {'Holm p':>7}" if second is not None else "")]
        intervals = table["comparison"][attribute]["intervals"] if second is not None else \
            [r["interval"] for r in first["buckets"][attribute]]
        by_interval = [{_key(r["interval"]): r for r in result["buckets"][attribute]} for result in results.values()]
        for i, interval in enumerate(intervals):
            rows = [rows_of.get(_key(interval)) for rows_of in by_interval]  # a dict: linear in buckets
            n_gold = next(r["n_gold"] for r in rows if r is not None)
            line = f"  {bucket_label(attribute, interval, training):<24}{n_gold:>6}"
            line += "".join(f"  {format_value(r['f1'] if r else math.nan):>{column}}" for r in rows)
            if second is not None:
                cell = table["comparison"][attribute]
                difference = f"{round(cell['difference'][i], 4) + 0.0:+.4f} {format_interval(cell['ci'][i])}"
                line += f"  {difference:>26}  {format_p(cell['p_adjusted'][i])[2:]:>7}" + (
                    " *" if cell["significant"][i] else "")
            lines.append(line)
        worst = first["diagnostics"]["self"][attribute]
        if worst["worst"] is not None:
            worst_label, best_label = (bucket_label(attribute, first["buckets"][attribute][worst[k]]["interval"], training)
                                       for k in ("worst", "best"))
            lines.append(f"  {labels[0]}: worst bucket {worst_label} ({format_value(worst['worst_f1'])}), best "
                         f"{best_label} ({format_value(worst['best_f1'])}), gap {format_value(worst['gap'])}")
    print("\n".join(fit(lines)))


def _key(interval):
    """A bucket's interval as a dict key (a list in JSON-like results)."""
    return tuple(interval) if isinstance(interval, list) else interval


def cmd_nrb(args) -> None:
    from ..methods.nrb import read_nrb, read_nrb_predictions, read_type_map, score_sets, sets_batch
    from ..attacks.taggers import spacy_tagger

    sets = [(name, read_nrb(path)) for name, path in (("nrb", args.nrb), ("wts", args.wts)) if path]
    if bool(args.pred) == bool(args.spacy):
        raise ValueError("give --pred files (one per set, NRB first) or --spacy MODEL")
    if args.pred and len(args.pred) != len(sets):
        raise ValueError(f"{len(sets)} benchmark file(s) but {len(args.pred)} --pred file(s)")
    type_map = read_type_map(args.type_map) if args.type_map and args.type_map.endswith(".json") else args.type_map
    if args.spacy:
        tag = spacy_tagger(args.spacy)
        predictions = [tag(dataset["tokens"]) for _, dataset in sets]
    else:
        predictions = [read_nrb_predictions(path, dataset["tokens"]) for path, (_, dataset) in zip(args.pred, sets)]
    stats = TrainStats.coerce(args.train, **_decoding(args)) if args.train else None
    # The system's tags are decoded as declared; the targets are the benchmark's (IOB2 by its
    # definition, one a sentence, as read_nrb reads them), whatever scheme the system uses.
    decoding = {**_decoding(args), "declared": ("pred",)}
    scored = {name: (dataset["tokens"], dataset["ner_tags"], tags) for (name, dataset), tags in zip(sets, predictions)}
    if args.versus:
        if len(args.versus) != len(sets):
            raise ValueError(f"{len(sets)} benchmark file(s) but {len(args.versus)} --versus file(s)")
        other = {name: (dataset["tokens"], dataset["ner_tags"], read_nrb_predictions(path, dataset["tokens"]))
                 for path, (name, dataset) in zip(args.versus, sets)}
        _versus(args, "nrb", {"A": sets_batch(scored, decoding), "B": sets_batch(other, decoding)},
                files=[args.pred[0], args.versus[0]] if args.pred else None, train=stats, type_map=type_map)
        return
    result = score_sets(scored, type_map, stats, args.detailed, decoding, ci=args.ci, **_resampling(args))
    print(_json(result)) if args.json else _print_flat(result)


def cmd_rockner(args) -> None:
    from ..methods.rockner import rockner

    base = _read_batch(args.original, args.columns, _decoding(args))
    if args.versus:
        if len(args.attacked) != 1:
            raise ValueError("--versus compares one attacked set: give one --attacked file")
        other_original, other_attacked = (_read_batch(path, args.columns, _decoding(args)) for path in args.versus)
        _versus(args, "rockner", {"A": (base, _read_batch(args.attacked[0], args.columns, _decoding(args))),
                                  "B": (other_original, other_attacked)}, files=[args.original, args.versus[0]])
        return
    results = {}
    for path in args.attacked:
        results[path] = rockner(base, _read_batch(path, args.columns, _decoding(args)), args.detailed, ci=args.ci,
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
    _decoding_flags(p)
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
    _decoding_flags(p)
    p.set_defaults(run=cmd_tmr)


def _buckets_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training CoNLL file or saved stats (.npz)")
    p.add_argument("--test", required=True, action="append",
                   help="prediction CoNLL file (token ... gold prediction); repeat for systems side by side")
    p.add_argument("--n-buckets", type=int, default=4, help="buckets per attribute, special ones included (at most 100)")
    p.add_argument("--lowercase", action="store_true", help="match tokens lowercased")
    p.add_argument("--seed", type=seed, default=0, help="resampling seed")
    p.add_argument("--json", action="store_true", help="print every table as JSON")
    p.add_argument("--match", default="strict", choices=["strict", "exact", "partial", "type"],
                   help="when an entity counts as right (nervaluate's schemes; default strict)")
    _add_pred_format(p, "; repeat for systems side by side")
    _resampling_flags(p, "buckets")
    _columns_flag(p, "buckets")
    _decoding_flags(p)
    p.set_defaults(run=cmd_buckets)


def _nrb_arguments(p) -> None:
    p.add_argument("--nrb", required=True, help="NRB file ({lang}.nrb.conll or .txt)")
    p.add_argument("--wts", help="WTS file ({lang}.wts.conll or .txt)")
    p.add_argument("--pred", action="append",
                   help="predictions as 'token TAG' lines, one file per set (NRB first, then WTS), decoded as "
                        "--scheme/--mode/--repair say (the benchmark files' targets are IOB2, one a sentence)")
    p.add_argument("--spacy", help="tag the sentences with this spaCy pipeline (name or path) instead")
    p.add_argument("--type-map", help="auto (default: detected from the system's labels), nrb, conll, ontonotes "
                                      "or a JSON file {type: NRB type}")
    p.add_argument("--train", help="training CoNLL file or stats: count targets seen with another type")
    p.add_argument("--versus", action="append", help="another system's predictions, one file per set as --pred: "
                                                     "paired comparison")
    p.add_argument("--detailed", action="store_true", help="confusion counts (with --json)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _resampling_flags(p, "nrb")
    _decoding_flags(p)  # the system's tags (--pred, --versus, --spacy) and --train's
    p.set_defaults(run=cmd_nrb)


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
    _decoding_flags(p)
    p.set_defaults(run=cmd_rockner)


def _describe_arguments(p) -> None:
    p.add_argument("--train", required=True)
    p.add_argument("--test", action="append", help="evaluation CoNLL file (gold tag last); repeatable")
    p.set_defaults(run=cmd_describe)


# The arguments of each command of this group (cli.COMMANDS names the group).
ARGUMENTS = {"hardeval": _hardeval_arguments, "tmr": _tmr_arguments, "buckets": _buckets_arguments, "nrb": _nrb_arguments, "rockner": _rockner_arguments, "describe": _describe_arguments}
