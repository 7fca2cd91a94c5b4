"""The commands around the methods: stats (build, merge, save), register (evaluate offline),
explain (the glossary) and space (serve or export a Gradio app).  Light at import: only the
command that runs loads what it needs."""
from __future__ import annotations

import os


def cmd_stats(args) -> None:
    from ..core.stats import TrainStats
    from ._common import _decoding, refuse_overwriting

    if args.dask is not None:
        stats = _distributed(args)
    else:
        refuse_overwriting([("--out", args.out)],
                           [("--train", args.train)] + [("--merge", m) for m in args.merge or ()])
        if args.merge:  # shards built anywhere, folded in the order given (loaded one at a time)
            stats = TrainStats.merge_all(TrainStats.load(path) for path in args.merge)
        else:
            stats = TrainStats.coerce(args.train, keep_text=args.keep_text, **_decoding(args))
    stats.save(args.out, shareable=args.shareable)
    print(f"{stats!r} -> {args.out}{' (shareable: without the training text)' if args.shareable else ''}")


def _distributed(args):
    """``--train PATTERN --dask SCHEDULER``: the shards the pattern names, in name order, built
    on the cluster's workers (``build_distributed``)."""
    import glob

    from ..core.stats import build_distributed
    from ._common import _decoding, dask_client, refuse_overwriting

    if not args.train:
        raise SystemExit("tough-ner stats: --dask builds the shards of --train PATTERN (not --merge)")
    shards = sorted(glob.glob(args.train)) or ([args.train] if os.path.isfile(args.train) else [])
    if not shards:
        raise ValueError(f"--train {args.train!r}: no file matches")
    refuse_overwriting([("--out", args.out)], [("--train", shard) for shard in shards])
    with dask_client(args) as client:
        return build_distributed(shards, client, keep_text=args.keep_text, **_decoding(args))


def cmd_register(args) -> None:
    from ..metrics.register import register

    for path in register(args.names or None, args.modules_cache):
        print(path)


def cmd_space(args) -> None:
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from ..spaces import build, export, launch

    if args.export:
        for path in export(args.name, args.export, args.stats):
            print(path)
        return
    launch(args.name, port=args.port, app=build(args.name, stats=args.stats) if args.stats else None)


def cmd_explain(args) -> None:
    from ..present import glossary

    if args.key is None:
        print(glossary.text())
        return
    try:
        print(glossary.explain(args.key))
    except KeyError as error:
        raise ValueError(error.args[0]) from None


def _stats_arguments(p) -> None:
    from ._common import _decoding_flags

    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--train", help="training CoNLL file (or stats file) to build from")
    source.add_argument("--merge", nargs="+", metavar="STATS",
                        help="stats files of consecutive shards of one corpus, in corpus order: their merge")
    p.add_argument("--out", required=True, help="output file (.npz)")
    p.add_argument("--shareable", action="store_true",
                   help="leave the training text out (docs/training-statistics.md: what the file still reveals)")
    p.add_argument("--keep-text", action="store_true",
                   help="keep the training text (4 bytes a token) for what needs it: --merge of the files, entity "
                        "attacks with --train (default: the statistics only, memory bounded by them)")
    p.add_argument("--dask", metavar="SCHEDULER",
                   help="build the shards named by --train PATTERN (quoted; consecutive pieces of one corpus, in "
                        "name order) on the Dask cluster at SCHEDULER (address, e.g. tcp://host:8786)")
    _decoding_flags(p)  # recorded in the file; --merge keeps the files' own
    p.set_defaults(run=cmd_stats)


def _register_arguments(p) -> None:
    p.add_argument("names", nargs="*", help="metrics to register (default: all)")
    p.add_argument("--modules-cache", help="evaluate modules cache (default: $HF_HOME/modules)")
    p.set_defaults(run=cmd_register)


def _space_arguments(p) -> None:
    p.add_argument("name", nargs="?", default="all", choices=["hardeval", "tmr", "bucket_f1", "nrb", "rockner", "all"])
    p.add_argument("--port", type=int, help="port (default: gradio's, 7860 or the next free one)")
    p.add_argument("--export", metavar="DIR", help="write the Space to DIR (app.py, card, requirements.txt, a copy "
                                                   "of the package) instead of serving it")
    p.add_argument("--stats", metavar="FILE", help="saved training statistics used when the training data is left "
                                                   "empty (copied into DIR with --export; for a licensed corpus, a "
                                                   "shareable file)")
    p.set_defaults(run=cmd_space)


def _explain_arguments(p) -> None:
    p.add_argument("key", nargs="?", help="a flat result key (ter_unseen_I, recall_tcm_unseen, eLen_2_f1) or term")
    p.set_defaults(run=cmd_explain)


# The arguments of each command of this group (cli.COMMANDS names the group).
ARGUMENTS = {"stats": _stats_arguments, "register": _register_arguments, "explain": _explain_arguments,
             "space": _space_arguments}
