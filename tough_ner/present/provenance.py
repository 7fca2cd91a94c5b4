"""What a report records so that it can be repeated: the exact command line, the versions of
the packages its numbers depend on, the platform and when it ran.  The seeds and the inputs'
SHA-256 are in the report's ``options`` and ``inputs``.

The block is the one part of a report that differs between two runs on the same inputs (the
time stamp), so a comparison of two reports leaves it out: ``without_provenance``.
"""
from __future__ import annotations

import datetime
import os
import platform
import re
import sys
from typing import Iterator, Mapping, Optional, Sequence, Union

KEY = "provenance"  # the block's key in a report (beside ``results``)
# the packages a report's numbers depend on, besides Python
PACKAGES = ("tough-ner", "numpy", "evaluate", "datasets")
NOT_INSTALLED = "not installed"


def versions() -> dict:
    """``{"tough-ner": ..., "python": ..., "numpy": ..., ...}``; ``not installed`` for a missing one."""
    from importlib import metadata

    # tough_ner.__version__ without importing the package root (a layer imports none above it):
    # the root is always loaded before any of its modules
    found = {"tough-ner": sys.modules[__name__.split(".")[0]].__version__, "python": platform.python_version()}
    for name in PACKAGES[1:]:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = NOT_INSTALLED
    return found


def provenance(command: Optional[Sequence[str]] = None) -> dict:
    """The block: ``command``, the command line as run (``tough-ner`` first; from Python,
    ``tough_ner.cli.main(argv)``'s ``argv``; by default this process's own), the folder it ran
    in (relative input paths are relative to it), package versions, platform and UTC time."""
    return {"command": list(command) if command is not None else ["tough-ner", *sys.argv[1:]], "cwd": os.getcwd(),
            "versions": versions(), "platform": platform.platform(),
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def input_files(inputs) -> Iterator[Mapping]:
    """Every input file a report records (``{"path", "sha256", ...}``, at any depth of its
    ``inputs``), in order: what ``--rerun`` checks and the footer lists."""
    if isinstance(inputs, list):
        for item in inputs:
            yield from input_files(item)
    elif isinstance(inputs, dict):
        if "path" in inputs and "sha256" in inputs:
            yield inputs
        for value in inputs.values():
            yield from input_files(value)


def without_provenance(report: Union[Mapping, str]) -> Union[dict, str]:
    """A report less its provenance block, or an HTML page less its provenance footer: what
    two runs on the same inputs share byte for byte (what the determinism tests and
    ``--rerun`` compare)."""
    if isinstance(report, str):
        return re.sub(r"<footer id='provenance'>.*?</footer>", "", report, flags=re.S)
    return {key: value for key, value in report.items() if key != KEY}
