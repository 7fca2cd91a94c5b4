"""What every command shares: reading test and prediction files (an empty one is an error
here), the resampling and column options, and the paired comparison of --versus."""
from __future__ import annotations

import argparse
import os
from contextlib import contextmanager
from typing import List

from ..core.batch import Batch
from ..core.corpus import STDIN, Corpus, read_batch, read_conll, source_name
from ..present.formatting import format_value, to_json as _json


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


def _read_batch(path, columns=None, decoding=None) -> Batch:
    """A prediction file as a ``Batch`` (``corpus.read_batch``): token ... gold prediction, or
    the columns chosen by --columns, decoded as ``decoding`` says (``_decoding``)."""
    return _some(lambda: read_batch(path, columns, **(decoding or {})), path)


def _decoding(args) -> dict:
    """How a command decodes the tags (``--scheme``, ``--mode``, ``--repair``)."""
    return {"scheme": args.scheme, "mode": args.mode, "repair": args.repair}


def _decoding_flags(p) -> None:
    p.add_argument("--scheme", default="auto",
                   help="tag scheme: auto (default: the lenient rule reads any prefix), IOB1, IOB2, IOE1, IOE2, "
                        "BIOES (or BILOU) or IO; a prefix the scheme does not use is an error")
    p.add_argument("--mode", default="lenient", choices=["lenient", "strict"],
                   help="lenient (default; as conlleval) or strict (as seqeval's strict mode; needs --scheme)")
    p.add_argument("--repair", default="conlleval", choices=["conlleval", "discard"],
                   help="invalid sequences in lenient mode: conlleval (default; an invalid I-X begins a span) or "
                        "discard (a span begun or left open where the scheme forbids is dropped)")


def _batch(corpus: Corpus, column: int = 0) -> Batch:
    return Batch(corpus.tokens, corpus.tags, corpus.predictions[column], corpus.documents)


def _versus(args, method: str, systems: dict, files=None, **options) -> bool:
    """With ``--versus``: print the paired comparison of the systems and return True.  On the
    terminal each system is named as the report names it: by its file's stem (``files``: the
    file of each system, by default its key)."""
    from ..methods.comparison import compare
    from ..present.report import format_comparison

    if len(systems) < 2:
        return False
    table = compare(systems, method, **options, **_resampling(args), alpha=args.alpha)
    if args.json:
        print(_json(table))
        return True
    print(format_comparison(table, dict(zip(systems, display_names(files or list(systems))))))
    return True


def display_names(paths) -> List[str]:
    """Each file's system name as the report gives it (``system_names``: the file stem, made
    unique); the paths themselves when one file is given twice."""
    try:
        return [name for name, _ in system_names([os.fspath(path) for path in paths])]
    except ValueError:  # the same file twice: the numbered paths stay its names
        return [os.fspath(path) for path in paths]


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


def _runs(args, paths, versus=()):
    """(batches of ``paths``, batches of ``versus``): prediction CoNLL files (token ... gold
    prediction) with the same tokens and gold tags, or with ``--pred`` JSON Lines files in
    ``--pred-format`` over the gold CoNLL file ``--test``."""
    paths, versus = list(paths), list(versus or ())
    if not args.pred:
        if args.pred_format != "tags":
            raise ValueError(f"--pred-format {args.pred_format} reads --pred JSONL files: give --pred")
        batches = _read_runs(paths + versus, getattr(args, "columns", None), _decoding(args))
    else:
        from ..core.formats import batch_from_files

        tests = args.test if isinstance(args.test, list) else [args.test]
        if len(tests) != 1:
            raise ValueError("with --pred, give one --test file: the gold CoNLL file (token ... gold)")
        gold = _read(tests[0])
        batches = [batch_from_files(gold.tokens, gold.tags, path, args.pred_format, documents=gold.documents,
                                    **_decoding(args), **_mention_options(args)) for path in paths + versus]
    return batches[:len(paths)], batches[len(paths):]


def _read_runs(paths, columns=None, decoding=None) -> List[Batch]:
    from ..core.checks import first_difference

    runs = [_read_batch(path, columns, decoding) for path in paths]
    first = source_name(paths[0])
    for path, run in zip(paths[1:], runs[1:]):
        where = first_difference(source_name(path), first, token=(run.tokens, runs[0].tokens),
                                 gold=(run.references, runs[0].references))
        if where:
            raise ValueError(f"{source_name(path)} does not hold the tokens and gold tags of {first}: {where}")
    return runs


def _add_pred_format(p, repeat_help: str) -> None:
    p.add_argument("--pred", action="append",
                   help="predictions as JSON Lines, one sentence per line in --pred-format; --test is then the "
                        "gold CoNLL file (token ... gold) and --versus files are JSONL too" + repeat_help)
    p.add_argument("--pred-format", default="tags", choices=["tags", "spans", "chars", "mentions"],
                   help="form of each --pred line: a list of tags; of [start, end, type] token spans; "
                        '{"text", "entities": [{"start", "end", "label"}]} character spans; or of '
                        '{"text", "type"} mentions (LLM output; unplaced ones count as hallucinated)')
    _mention_flags(p)


def _mention_flags(p) -> None:
    """How --pred mention lists are placed and parsed, and whether span lists may overlap."""
    p.add_argument("--placement", default="leftmost", choices=["leftmost", "ordered"],
                   help="mentions: leftmost (default) places each on the leftmost free occurrence of its text, "
                        "longer mentions first; ordered follows the list's order (a repeated mention goes to "
                        "its next occurrence)")
    p.add_argument("--normalise", action="store_true",
                   help="mentions: also place those whose text matches once normalised (Unicode NFKC, case, "
                        "whitespace, punctuation at the edges)")
    p.add_argument("--fuzzy", type=float, metavar="THRESHOLD",
                   help="mentions: also place those whose normalised text has a difflib similarity ratio of at "
                        "least THRESHOLD (in (0, 1]) with some tokens")
    p.add_argument("--strict-json", action="store_true",
                   help="mentions: stop at a line that is not JSON or holds no mention list (default: count it "
                        "as unparseable, predicting nothing, with a warning naming the line)")
    p.add_argument("--allow-overlap", action="store_true",
                   help="spans, chars: keep overlapping or nested spans (default: an error naming the line); "
                        "mentions: place one found on no free occurrence inside or across placed ones; only span "
                        "scores, the match schemes and tmr score them, the other methods refuse them")


def _mention_options(args) -> dict:
    """How --pred lists are read (``as_batch``'s options)."""
    return {"placement": args.placement, "normalised": args.normalise, "fuzzy": args.fuzzy,
            "strict_json": args.strict_json, "allow_overlap": args.allow_overlap}


def _names(paths) -> List[str]:
    """Display names of files: their paths, made unique."""
    names = [os.fspath(p) for p in paths]
    return names if len(set(names)) == len(names) else [f"{name} ({i + 1})" for i, name in enumerate(names)]


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
        p.add_argument("--seed", type=seed, default=0, help="resampling seed (default 0)")
    p.add_argument("--unit", choices=["sentence", "document"], default="sentence",
                   help="resample sentences, or whole documents (-DOCSTART- groups)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the paired tests (default 0.05)")


def _columns_flag(p, command: str) -> None:
    p.add_argument("--columns", help="the columns of the prediction files: indices token,gold,pred (e.g. 0,3,4) or one "
                                     "name per column (e.g. token,pos,chunk,gold,pred; other names are skipped)"
                                     + ("; for report, of the --pred files" if command == "report" else ""))


def seed(text: str) -> int:
    """A resampling or attack seed: a whole number from 0 to 2**32 - 1 (numpy's range)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2 ** 32:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 0 to 4294967295")
    return value


def refuse_overwriting(outputs, inputs) -> None:
    """Before any work: an output that is one of the command's inputs (the same file, whatever
    the path says), or two outputs at one path, is an error.  ``outputs`` and ``inputs`` are
    (flag, path or None) pairs."""
    outputs = [(flag, os.fspath(path)) for flag, path in outputs if path is not None]
    inputs = [(flag, os.fspath(path)) for flag, path in inputs if path is not None and os.fspath(path) not in STDIN]
    for k, (flag, path) in enumerate(outputs):
        for other_flag, other in inputs + outputs[:k]:
            if _same_file(path, other):
                if (other_flag, other) in inputs:
                    raise ValueError(f"{flag} {path} is the input {other_flag} {other}: an input is never "
                                     f"overwritten; choose another output path")
                raise ValueError(f"{flag} {path} is also the output {other_flag} {other}: give each output "
                                 f"its own path")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


@contextmanager
def dask_client(args):
    """A client of the Dask scheduler at ``--dask`` (its address).  Run as the command, the
    workers get the command's memory setting (``_process.keep_freed_memory``; it stays for
    their lifetime): Dask starts them returning every freed block over 64 KB to the system,
    which made a statistics build take 2.2 times the CPU."""
    if not args.dask.strip():  # distributed.Client("") would start a cluster of its own here
        raise ValueError("--dask needs the scheduler's address (e.g. tcp://host:8786)")
    try:
        from distributed import Client
    except ImportError:
        raise ImportError("--dask needs the dask extra: pip install 'tough-ner[dask]'") from None
    from ._process import keep_freed_memory

    with Client(args.dask) as client:
        if getattr(args, "as_command", False):
            client.run(keep_freed_memory)
        yield client
