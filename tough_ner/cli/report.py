"""The report command: every method, every system (text, JSON, HTML and exports)."""
from __future__ import annotations

import os
import sys
from itertools import chain
from typing import Optional

from .._util import file_sha256, write_atomic
from ..core.corpus import Corpus, read_conll
from ..core.stats import TrainStats
from ..present.formatting import json_pieces, to_json as _json
from ._common import (_columns_flag, _decoding, _decoding_flags, _mention_flags, _mention_options, _read,
                      refuse_overwriting, seed, system_names)


def _file_input(path) -> dict:
    """A report input: its path and the SHA-256 of its content (None for standard input or a
    pipe, read once and gone: nothing a rerun could check)."""
    path = os.fspath(path)
    if path == "-" or not os.path.isfile(path):
        return {"path": path, "sha256": None}
    return {"path": path, "sha256": file_sha256(path)}


def _progress(quiet: bool):
    """A progress bar on stderr over the report's steps; silent off a terminal or with --quiet."""
    def wrap(steps):
        from tqdm import tqdm

        tqdm.monitor_interval = 0  # no monitor thread: evaluate forks a process to make the attacked sets
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


def run_id(version: str, inputs: dict, options: dict) -> str:
    """What a report's outputs (JSON, HTML, error table) carry to say which run wrote them: a
    digest of the version, the inputs' contents and the options, so a rerun on the same inputs
    writes the same bytes, and an output left by another run says it differs (a run that read
    standard input: a new id each time)."""
    import hashlib

    from ..present.provenance import input_files

    # an input read from standard input has no digest: nothing tells two such runs apart but a draw
    unknown = {"unrecorded": os.urandom(8).hex()} if any(item["sha256"] is None for item in input_files(inputs)) else {}
    text = _json({"version": version, "inputs": inputs, "options": options, **unknown})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _outputs(args) -> list:
    return [("--json", args.json), ("--html", args.html), ("--errors", args.errors), ("--latex", args.latex),
            ("--markdown", args.markdown), ("--csv", args.csv)]


def _written(args) -> list:
    """``_outputs`` and the files written beside them (the page's error table) or in them (the
    CSV tables): what must not be an input."""
    from ..present.errors import beside
    from ..present.export import LABELS

    implied = [(f"the error table beside --html {args.html}:", path) for _, path in beside(args.html)] \
        if args.html else []
    implied += [(f"a table of --csv {args.csv}:", os.path.join(args.csv, f"{label}.csv")) for label in LABELS] \
        if args.csv else []
    return _outputs(args) + implied


DEMO_FOLDER = "tough-ner-report"


def cmd_report(args) -> Optional[int]:
    if args.rerun:
        return rerun(args.rerun, args.run_code)
    from ..core.formats import system_predictions
    from ..present.demo import NRB, NRB_TYPE_MAP, SYSTEMS, TEST, TRAIN, WTS, demo_attacks, load_demo, load_demo_nrb
    from ..present.report import run_labels

    nrb_sets = type_map = attacked = None
    demo = args.train is None and args.test is None
    out_dir = args.out_dir or (DEMO_FOLDER if demo else None)
    if out_dir and getattr(args, "rerunning", None) is None:  # a rerun writes nothing
        args.html = args.html or os.path.join(out_dir, "report.html")
        args.json = args.json or os.path.join(out_dir, "report.json")
    if demo:
        refuse_overwriting(_written(args), [])
        train, test = load_demo()
        stats = _with_progress("training statistics", lambda: TrainStats.from_corpus(train, **_decoding(args)),
                               args.quiet)
        systems, nrb_sets, type_map = list(SYSTEMS), load_demo_nrb(), NRB_TYPE_MAP
        attacked = _with_progress("attacked sets", lambda: demo_attacks(stats, test), args.quiet)
        inputs = {"train": _file_input(TRAIN), "test": _file_input(TEST),
                  "nrb": _file_input(NRB), "wts": _file_input(WTS), "attacked": "the demo test set under the "
                  "typo, case and cross-type attacks and the entity attack at five ratios (built-in dictionary, "
                  "seed 0), predicted by both demo systems"}
    elif args.train is None or args.test is None or not args.pred:
        raise SystemExit("tough-ner report: give --train, --test and at least one --pred, or nothing for the demo")
    else:
        named = system_names(args.pred)
        refuse_overwriting(_written(args), [("--train", args.train), ("--test", args.test), ("--nrb", args.nrb),
                                            ("--wts", args.wts)] + [("--pred", path) for _, path in named]
                           + [("--attacked", path) for path in args.attacked or ()])
        stats = _with_progress("training statistics", lambda: TrainStats.coerce(args.train, **_decoding(args)),
                               args.quiet)
        test = _read(args.test)
        test.predictions.extend(system_predictions(test, path, args.pred_format, args.columns, "--test",
                                                   **_mention_options(args), **_decoding(args)) for _, path in named)
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
    _, written = write_report(args, stats, test, systems, nrb_sets, type_map, attacked, inputs)
    if written:
        from ..present.report import fit

        print("\n" + "\n".join(fit(["wrote " + ", ".join(written)])))  # a long path on a line of its own


def rerun(path: str, run_code: bool = False) -> int:
    """``--rerun REPORT.json``: the command that wrote the report, run again on its inputs
    (each must be the file it read: same path, same SHA-256; each model of ``evaluate`` the
    one it ran: ``evaluate.same_models``), writing nothing but the prediction cache of a model
    that predicts again; says whether the results are identical (the provenance block aside)
    and returns 1 when they are not.  It runs in the folder the report ran in; a model that is
    Python code (``module:function``) is imported only with ``run_code`` (``--run-code``)."""
    import json

    from . import _parser
    from ..core.corpus import refuse_deep_nesting
    from ..present.provenance import KEY, input_files

    with open(path, encoding="utf-8") as handle, refuse_deep_nesting(path):
        stored = json.load(handle)
    recorded = (stored.get(KEY) or {}) if isinstance(stored, dict) else {}
    command, folder = recorded.get("command"), recorded.get("cwd")
    if not isinstance(command, list) or len(command) < 2 or command[1] not in ("report", "evaluate") \
            or not all(isinstance(word, str) for word in command):
        raise ValueError(f"--rerun {path}: no command line of tough-ner report or evaluate recorded in it (a report "
                         "written before tough-ner recorded one?)")
    if not isinstance(stored.get("inputs"), dict) or next(input_files(stored["inputs"]), None) is None:
        raise ValueError(f"--rerun {path}: it records no input file with its SHA-256 (every report tough-ner writes "
                         "does): nothing to check a rerun against")
    args = _parser(command[1:]).parse_args(command[1:])
    if getattr(args, "rerun", None) or getattr(args, "run_code", False):  # a rerun's own flags: never recorded
        raise ValueError(f"--rerun {path}: its command line is itself a rerun ({' '.join(command[1:3])} ...), "
                         "which no report records")
    here = os.getcwd()
    try:
        if isinstance(folder, str) and os.path.isdir(folder):
            os.chdir(folder)  # relative paths are relative to the folder the report ran in
        return _rerun_here(path, stored, args, run_code)
    finally:
        os.chdir(here)


def _rerun_here(path: str, stored: dict, args, run_code: bool) -> int:
    """``rerun`` in the report's folder: ``args`` is its recorded command line, parsed."""
    import json

    from ..models.kinds import kind_of, split_spec
    from ..present.provenance import KEY, versions

    code = [spec for _, spec in map(split_spec, getattr(args, "model", None) or ()) if kind_of(spec)[0] == "callable"]
    if code and not run_code:  # importing a module a report names runs it: a report may come from elsewhere
        raise ValueError(f"--rerun {path}: its command runs Python code ({', '.join(code)}, from {os.getcwd()}); "
                         "read the code, then add --run-code to run it")
    check_inputs(stored["inputs"], path)
    for flag, _ in _outputs(args) + [("--model-index", None), ("--save", None), ("--write-inputs", None)]:
        setattr(args, flag[2:].replace("-", "_"), None)
    args.quiet, args.rerunning, args.recorded = True, [], (path, stored.get("inputs", {}))
    args.run(args)
    again = json.loads(_json(args.rerunning[0]["results"]))
    differences = list(_differences(stored["results"], again, "results"))
    then, now = stored[KEY].get("versions", {}), versions()
    changed = [f"{name} {then.get(name)} -> {now[name]}" for name in now if then.get(name) != now[name]]
    where = f" (package versions changed: {', '.join(changed)})" if changed else ""
    if not differences:
        print(f"rerun of {path}: the results are identical{where}")
        return 0
    print(f"rerun of {path}: the results differ{where}, at {len(differences)} place(s); the first:")
    for place, old, new in differences[:10]:
        print(f"  {place}: {old!r} in the report, {new!r} now")
    return 1


def check_inputs(inputs, report: str) -> None:
    """Every input file a report records is here, with that content: an error naming the
    first that is missing or differs."""
    from ..present.provenance import input_files

    for item in input_files(inputs):
        if item["sha256"] is None:
            raise ValueError(f"--rerun {report}: the input {item['path']} was read from standard input or a pipe, "
                             "whose content a report does not keep: a rerun cannot check it")
        if not os.path.isfile(item["path"]):
            raise ValueError(f"--rerun {report}: the input {item['path']} is missing (relative paths are relative "
                             "to the folder the report ran in, its provenance.cwd)")
        if _file_input(item["path"])["sha256"] != item["sha256"]:
            raise ValueError(f"--rerun {report}: the input {item['path']} is not the file the report read (its "
                             "SHA-256 differs)")


def _differences(old, new, place: str):
    """(place, old, new) of every leaf where two JSON values differ, in document order."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in dict.fromkeys([*old, *new]):
            yield from _differences(old.get(key), new.get(key), f"{place}.{key}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            yield from _differences(a, b, f"{place}[{i}]")
    elif old != new:
        yield place, old, new


def check_outputs(args) -> None:
    """Before the work: an error table is written as CSV or JSON Lines."""
    if args.errors and os.path.splitext(args.errors)[1].lower() not in (".csv", ".jsonl", ".json"):
        raise ValueError(f"--errors {args.errors}: the extension must be .csv or .jsonl")


def write_report(args, stats, test, systems, nrb_sets, type_map, attacked, inputs, options=None,
                 scored=None) -> tuple:
    """Run the report (``present.report.run``, or ``scored(**report options)``) on the
    systems' predictions over ``test``, print it and write the outputs the options ask for
    (--json, --html, --errors, --latex, --markdown, --csv); (the report, the paths written).
    ``options`` adds to what the run id digests."""
    from .. import __version__
    from ..present.provenance import KEY, provenance
    from ..present.report import format_text, run, run_labels

    check_outputs(args)
    options = {"bootstrap": args.bootstrap, "seed": args.seed, "type_map": type_map or "auto", "n_buckets": 4,
               "systems": systems, "train_is_reference": args.train_is_reference, "confidence": args.confidence,
               "unit": args.unit, "alpha": args.alpha, "baseline": args.baseline, **_decoding(args), "beta": args.beta,
               **(options or {})}
    settings = dict(bootstrap=args.bootstrap, seed=args.seed, progress=_progress(args.quiet),
                    train_is_reference=args.train_is_reference, confidence=args.confidence, unit=args.unit,
                    alpha=args.alpha, baseline=args.baseline, **_decoding(args), beta=args.beta)
    results = scored(**settings) if scored is not None else run(stats, test, systems, nrb_sets, type_map, attacked,
                                                                 **settings)
    report = {"tough_ner_version": __version__, "run_id": run_id(__version__, inputs, options), "inputs": inputs,
              "options": options, KEY: provenance(getattr(args, "argv", None)), "results": results}
    if getattr(args, "rerunning", None) is not None:  # report --rerun: compared, not shown
        args.rerunning.append(report)
        return report, []
    print(format_text(results, full=args.full, wide=args.wide))
    rows = None
    if args.errors or args.html:
        from ..present.errors import error_rows

        from ..present.report import _batch

        rows = [row for name, predictions in zip(run_labels(systems), test.predictions)
                for row in error_rows(stats, _batch(test, predictions, _decoding(args)), name)]
    written = []
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        write_atomic(args.json, chain(json_pieces(report), ["\n"]))  # 20,000 types: 171 MB of text, never held
        written.append(args.json)
    if args.html:
        from ..present.errors import write_beside
        from ..present.html import render

        os.makedirs(os.path.dirname(os.path.abspath(args.html)), exist_ok=True)
        beside = write_beside(args.html, rows, report["run_id"])  # the page shows the first rows, links these
        write_atomic(args.html, render(report, errors=rows, error_files=beside))
        written += [args.html] + [os.path.join(os.path.dirname(args.html), name) for _, name in beside]
    if args.errors:
        from ..present.errors import write

        write(rows, args.errors, report["run_id"])
        written.append(args.errors)
    for path, fmt in ((args.latex, "latex"), (args.markdown, "markdown"), (args.csv, "csv")):
        if path:
            from ..present.export import write as export

            export(results, path, fmt)
            written.append(path)
    return report, written


def _report_arguments(p) -> None:
    p.add_argument("--train", help="training CoNLL file or saved stats (.npz)")
    p.add_argument("--test", help="gold CoNLL file (gold tag last)")
    p.add_argument("--pred", action="append", metavar="[NAME=]PATH",
                   help="a system's CoNLL file (prediction last), or a JSON Lines file in --pred-format (.jsonl), "
                        "optionally named (default: the file stem); repeatable")
    p.add_argument("--pred-format", default="tags", choices=["tags", "spans", "chars", "mentions"],
                   help="form of the --pred JSONL lines (as for tmr); tags: CoNLL files unless named .jsonl")
    _mention_flags(p)
    p.add_argument("--nrb", help="NRB sentences: token gold, then one prediction column per --pred system")
    p.add_argument("--wts", help="WTS sentences, same columns as --nrb")
    p.add_argument("--type-map", help="system types to NRB types: auto (default: detected from the system's "
                                      "labels), nrb, conll or ontonotes")
    p.add_argument("--attacked", action="append",
                   help="an attacked test set: token gold, then one prediction column per --pred system; "
                        "repeat, mildest first, for an attack curve")
    output_options(p)
    p.add_argument("--out-dir", help=f"write report.html and report.json into this folder (where --html and --json "
                                     f"are not given; the demo: {DEMO_FOLDER} by default)")
    p.add_argument("--rerun", metavar="REPORT.json",
                   help="run the command that wrote this JSON report again on its inputs (checked by their SHA-256), "
                        "in the folder it ran in, and say whether the results are identical; exit status 1 when they "
                        "differ")
    p.add_argument("--run-code", action="store_true",
                   help="with --rerun: allow a model given as module:function, whose code a rerun imports")
    report_options(p)
    _columns_flag(p, "report")
    p.set_defaults(run=cmd_report)


def output_options(p) -> None:
    """The report's output files (report and evaluate)."""
    p.add_argument("--html", help="write the HTML report here")
    p.add_argument("--json", help="write the JSON report here")
    p.add_argument("--errors", metavar="FILE", help="write every system's per-entity error table (.csv or .jsonl)")
    p.add_argument("--latex", metavar="FILE", help="write the headline, subset and per-type tables as LaTeX (booktabs)")
    p.add_argument("--markdown", metavar="FILE", help="write the headline, subset and per-type tables as Markdown")
    p.add_argument("--csv", metavar="FOLDER", help="write the headline, subset and per-type tables as CSV into this "
                                                   "folder, a file a table (headline.csv, hardeval.csv, ...)")


def report_options(p) -> None:
    """The report's resampling, comparison and display options (report and evaluate)."""
    p.add_argument("--train-is-reference", "--train-is-not-the-system-training-data", action="store_true",
                   dest="train_is_reference",
                   help="--train is not what the systems were trained on: seen/unseen are relative to it")
    p.add_argument("--resamples", "--bootstrap", dest="bootstrap", type=int, default=1000,
                   help="bootstrap resamples for every interval (default 1000; the tests need none)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--seed", type=seed, default=0, help="resampling seed (default 0)")
    p.add_argument("--unit", choices=["sentence", "document"], default="sentence",
                   help="resampling unit: sentence, or document (-DOCSTART- groups)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the paired tests (default 0.05)")
    p.add_argument("--baseline", metavar="NAME",
                   help="compare every system with this one only (k - 1 tests per row), not every pair")
    _decoding_flags(p)
    p.add_argument("--beta", type=float, default=1.0,
                   help="add the span F-beta (recall weighs beta times as much as precision) beside the F1: a row "
                        "of the summary, and TMR's f_beta keys (default 1: F1 only)")
    p.add_argument("--full", action="store_true", help="print every key of every method, not only the summary")
    p.add_argument("--wide", action="store_true",
                   help="one line per row, each row's paired test beside it (default: every line fits 100 columns)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


# The arguments of each command of this group (cli.COMMANDS names the group).
ARGUMENTS = {"report": _report_arguments}
