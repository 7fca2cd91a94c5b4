"""Start-up cost of the package and of commands that only write files: `tough-ner register`
(which imported evaluate until it worked out evaluate's module cache itself), `import
tough_ner`, `import tough_ner.cli` and `tough-ner explain`, next to their peers measured in the
same run: a bare interpreter and `import evaluate` (what `register` cost before).  Each figure
is the best of N fresh interpreters' own CPU time (user + system, start-up included: wall time
is unreliable on a shared machine) and their peak RSS.

    python bench/bench_startup.py [--quick]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import Goal, print_table, print_verdicts, quick

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import atexit, json, resource, runpy, sys


@atexit.register  # as the process ends: a command ends it itself, after the exit handlers
def report():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    # VmHWM, not ru_maxrss: the latter keeps the forking parent's size across exec
    peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
    print(json.dumps([usage.ru_utime + usage.ru_stime, peak / 1024]))


what = sys.argv[1]
if what.startswith("cli "):
    sys.argv = ["tough-ner"] + what.split()[1:]
    runpy.run_module("tough_ner.cli", run_name="__main__")
elif what:
    __import__(what)
"""


def measure(what: str, env) -> tuple:
    """(best CPU seconds, peak RSS MB of that run) over fresh interpreters running ``what``."""
    runs = []
    for _ in range(1 if quick() else 5):
        done = subprocess.run([sys.executable, "-c", PROBE, what], capture_output=True, text=True, env=env,
                              check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return min(runs)


def main() -> None:
    home = tempfile.mkdtemp(prefix="tough-ner-bench-startup-")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "HF_HOME": home,
           "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    cases = [("python (bare interpreter, peer)", ""), ("import evaluate (peer: register's old floor)", "evaluate"),
             ("import tough_ner", "tough_ner"), ("import tough_ner.cli", "tough_ner.cli"),
             ("tough-ner register", "cli register"), ("tough-ner explain ter_unseen", "cli explain ter_unseen")]
    figures = {name: measure(what, env) for name, what in cases}
    evaluate_cpu = figures["import evaluate (peer: register's old floor)"][0]
    register_cpu = figures["tough-ner register"][0]
    rows = []
    for name, _ in cases:
        cpu, rss = figures[name]
        goal = {"tough-ner register": Goal("<= 1.0 s CPU", 1.0), "import tough_ner.cli": Goal("<= 0.6 s CPU", 0.6),
                "import tough_ner": Goal("<= 0.6 s CPU", 0.6)}.get(name, "")
        rows.append((f"{name}: CPU s", cpu, goal))
        rows.append((f"{name}: peak RSS MB", rss, ""))
    rows.append(("register CPU / import evaluate CPU", register_cpu / evaluate_cpu, Goal("<= 0.25", 0.25)))
    print_table(rows)
    print_verdicts("startup goals")


if __name__ == "__main__":
    main()
