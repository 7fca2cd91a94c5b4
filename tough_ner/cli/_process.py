"""The command's process-level settings, and only the command's (``tough_ner.cli`` applies
them when run as ``tough-ner`` or ``python -m tough_ner.cli``; a program importing the
package keeps its own process as it is).

Each stays because ``bench/bench_process.py`` shows it saves at least 5% of the CPU time of
the HardEval whole job (``tough-ner hardeval`` on CoNLL-2003 train -> test, 15 paired rounds,
2026-11-26, 0.193 s CPU with these three): OpenBLAS on one thread saves 56%, freed memory kept
6.7%, the end without interpreter teardown 6.8%.  Two settings went, measured below 5% with
the others in place: the collector paused while the start-up loads (2.9%) and frozen before
the end (0.4%: the end without teardown makes no last collection anyway).
"""
from __future__ import annotations

import os
import sys


def at_start() -> None:
    """Before anything loads numpy: OpenBLAS on one thread.  Its idle worker threads spin at
    start-up, and the commands' matrix products take no longer on one thread.  A value the
    user set wins."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def keep_freed_memory() -> None:
    """glibc hands each array of more than ~128 KB back to the system once it is freed
    (munmap, or trimming the heap), so the next one is faulted in page by page again: a
    HardEval of CoNLL-2003, whose reader frees and makes such arrays piece after piece, paid
    about 3k page faults for it.  A command is short-lived: it keeps up to 32 MB (glibc's
    limit) of freed memory for reuse instead.  Other systems: nothing changes.  ``--dask``
    (``stats``, ``study``) runs it on the workers too: Dask starts them trimming every free over
    64 KB (``MALLOC_TRIM_THRESHOLD_``), which made a statistics build take 2.2 times the CPU."""
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


def exit_now(code: int) -> None:
    """End the process once the exit handlers have run and the output is written, without
    the interpreter's teardown (a last full collection, then every object freed one by one:
    memory the system takes back at once).  Not while other threads run (a normal exit waits
    for them), nor under a tracer or profiler (coverage, cProfile, pdb), which writes its
    results after the program returns."""
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
