"""The study command: many systems on many datasets, several runs each (``present.study``)."""
from __future__ import annotations

import sys


def cmd_study(args) -> None:
    from .. import __version__
    from ..present.study import input_files, load_spec, output_files, study, write
    from ._common import refuse_overwriting

    spec = load_spec(args.spec)
    refuse_overwriting(output_files(spec, args.out), [("study", args.spec)] + input_files(spec))
    result = study(spec, workers=args.workers, progress=_progress(args.quiet))
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
    p.add_argument("--workers", type=int, default=1, help="datasets run in this many processes (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=cmd_study)


ARGUMENTS = {"study": _study_arguments}
