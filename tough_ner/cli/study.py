"""The study command: many systems on many datasets, several runs each (``present.study``)."""
from __future__ import annotations

import sys
from contextlib import nullcontext


def cmd_study(args) -> None:
    from .. import __version__
    from ..present.study import input_files, load_spec, output_files, study, write
    from ._common import dask_client, refuse_overwriting

    spec = load_spec(args.spec)
    refuse_overwriting(output_files(spec, args.out), [("study", args.spec)] + input_files(spec))
    with dask_client(args) if args.dask is not None else nullcontext() as client:
        result = study(spec, workers=args.workers or 1, client=client, progress=_progress(args.quiet))
    for row in result["study"]["headline"][:3]:
        print(_line(row, result))
    written = write(result, args.out, __version__, getattr(args, "argv", None))
    print(f"\nwrote {len(written)} files in {args.out} (study.html, study.json, study.md, study.tex and each "
          "dataset's report and error table)")


def _line(row, result) -> str:
    from ..present.study import _cell

    cells = "; ".join(f"{s}: " + ", ".join(f"{d} {_cell(row['cells'][s].get(d))}" for d in result["datasets"])
                      for s in result["systems"])
    return f"{row['label']}: {cells}"


def _progress(quiet: bool):
    def wrap(items, total):
        from tqdm import tqdm

        yield from tqdm(items, total=total, file=sys.stderr, unit="dataset", desc="datasets",
                        disable=quiet or not sys.stderr.isatty(), leave=False)
    return wrap


def _study_arguments(p) -> None:
    p.add_argument("spec", help="the study file (.toml, or .yaml with PyYAML): datasets, systems, options")
    p.add_argument("--out", default="tough-ner-study", help="the output folder (default tough-ner-study)")
    where = p.add_mutually_exclusive_group()
    # no default value: argparse refuses --dask beside any --workers given, 1 included
    where.add_argument("--workers", type=int, help="datasets run in this many processes (default 1)")
    where.add_argument("--dask", metavar="SCHEDULER",
                       help="run the datasets on the Dask cluster at SCHEDULER (address, e.g. tcp://host:8786), whose "
                            "workers read the study's files by the same paths; the outputs are written here")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=cmd_study)


ARGUMENTS = {"study": _study_arguments}
