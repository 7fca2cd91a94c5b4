"""The command's process-level settings, and only the command's (``tough_ner.cli`` applies
them when run as ``tough-ner`` or ``python -m tough_ner.cli``; a program importing the
package keeps its own process as it is).

Each stays because ``bench/bench_process.py`` shows it saves at least 5% of the CPU time of
the HardEval whole job (``tough-ner hardeval`` on CoNLL-2003 train -> test); its figures are in
the README's benchmark table, and a setting that stops paying its way goes.
"""
from __future__ import annotations

import gc
import os
import sys


def at_start() -> None:
    """Before anything loads numpy: OpenBLAS on one thread (its idle workers spin at start-up,
    and the commands' matrix products take no longer on one thread; a value the user set wins),
    and the collector paused while numpy, the package and argparse make their ~100k long-lived
    objects, which are no garbage."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gc.disable()


def at_run(command: str) -> None:
    """The start-up's objects frozen out of the collector's scans, the collector back on for
    the run, and freed memory kept for reuse (not for the long-running space server)."""
    gc.freeze()
    gc.enable()
    if command != "space":
        keep_freed_memory()


def keep_freed_memory() -> None:
    """glibc hands each array of more than ~128 KB back to the system once it is freed
    (munmap, or trimming the heap), so the next one is faulted in page by page again: a
    HardEval of CoNLL-2003, whose reader frees and makes such arrays piece after piece, paid
    about 3k page faults for it.  A command is short-lived: it keeps up to 32 MB (glibc's
    limit) of freed memory for reuse instead.  Other systems: nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # numpy has imported it

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    # M_MMAP_THRESHOLD first: setting M_TRIM_THRESHOLD alone would freeze the mmap one at 128 KB
    if mallopt(-3, 2 ** 25):
        mallopt(-1, 2 ** 25)


def at_end(code: int) -> None:
    """The process ends next: its last full collection would walk every object built, to free
    memory the system takes back anyway, so they are frozen first; then ``exit_now``."""
    gc.freeze()
    exit_now(code)


def exit_now(code: int) -> None:
    """End the process once the exit handlers have run and the output is written, without
    tearing the interpreter down (that frees every object one by one).  Not while other
    threads run (a normal exit waits for them), nor under a tracer or profiler (coverage,
    cProfile, pdb), which writes its results after the program returns."""
    threading = sys.modules.get("threading")
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+
    if ((threading is not None and threading.active_count() > 1) or sys.gettrace() is not None
            or sys.getprofile() is not None or (monitoring is not None and any(map(monitoring.get_tool, range(6))))):
        return
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None when the descriptor was closed before the start
                stream.flush()
        except (OSError, ValueError):  # output closed early (| head): nothing more can be written
            pass
    os._exit(code)
