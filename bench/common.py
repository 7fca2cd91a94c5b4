"""Shared by the benchmarks: timing (best-of-N wall or CPU time), whole-process peak memory
(resident set size), whole-job runs of commands, the data folder, the ``--quick`` smoke mode,
and goals judged MET / MISSED on the same run's figures.

    python bench/bench_X.py [CONLL_DIR] [--quick] [--save]

``--quick`` runs every step once on the small embedded demo corpus (written as CoNLL files to
a temporary folder): it checks that the benchmark runs, never its speed, so no goal is judged
(tests/test_bench_smoke.py runs it for every benchmark).

``--save`` also writes what the run prints to ``bench/results/bench_X.txt``, after a header
naming the command, the date, the commit and the machine, once the closing line is printed (a
run that fails saves nothing).  docs/benchmarks.md includes these files: the figures in the
documentation are the benchmarks' own output, never typed by hand.

Like for like: each figure says what it covers.  A *whole job* is a fresh process doing
everything from the input files (interpreter start, imports, reading, statistics, scoring);
a *core* figure is the scoring call alone on inputs already in memory.  Peers are timed the
same way as tough-ner in the same row group, in the same run.
"""
from __future__ import annotations

import atexit
import gc
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Optional, Sequence



def quick() -> bool:
    return "--quick" in sys.argv[1:]


FLAGS = ("--quick", "--save")  # options without a value
RESULTS = Path(__file__).resolve().parent / "results"


class _Tee:
    """Standard output that also keeps a copy of what is written."""

    def __init__(self, stream):
        self.stream, self.kept = stream, []

    def write(self, text):
        self.kept.append(text)
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _header(script: Path) -> str:
    """Who ran what, where: the command line, the date, the commit and the machine."""
    import platform

    def git(*args):
        done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=script.parent)
        return done.stdout.strip() if done.returncode == 0 else "unknown"

    model = "unknown processor"
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), model)
    arguments = " ".join(a for a in sys.argv[1:] if a != "--save")
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ":/tough_ner", ":/bench")
    commit = git("rev-parse", "--short", "HEAD") + (" with uncommitted changes" if changed else "")
    return (f"$ python bench/{script.name}{' ' + arguments if arguments else ''}\n"
            f"# {time.strftime('%Y-%m-%d %H:%M %Z')}, commit {commit}, "
            f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}, "
            f"load average {_load[0]:.1f} at the start and {_load_now():.1f} at the end\n\n")


def _load_now() -> float:
    """The one-minute load average: other work on the machine moves the figures."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan


def _save() -> None:
    """With --save: keep what the run prints, and write it out when the run closes."""
    if "--save" not in sys.argv[1:]:
        return
    _load.append(_load_now())
    if quick():
        raise SystemExit("--save keeps a real run's figures: not with --quick")
    script = Path(sys.argv[0]).resolve()
    tee = sys.stdout = _Tee(sys.stdout)

    def write():
        text = "".join(tee.kept)
        if not _closed:  # the run failed or stopped before its closing line
            return
        RESULTS.mkdir(exist_ok=True)
        target = RESULTS / f"{script.stem}.txt"
        scratch = target.with_name(f".{target.name}.tmp")
        scratch.write_text(_header(script) + text, encoding="utf-8")
        os.replace(scratch, target)
        sys.__stdout__.write(f"saved to {target.relative_to(RESULTS.parent.parent)}\n")

    atexit.register(write)


_closed: list = []
_load: list = []


def _data() -> Path:
    if quick():
        from tough_ner.corpus import write_conll
        from tough_ner.demo import load_demo

        folder = Path(tempfile.mkdtemp(prefix="tough-ner-bench-"))
        atexit.register(shutil.rmtree, folder, True)
        train, test = load_demo()
        write_conll(folder / "train.txt", train.tokens, train.tags)
        write_conll(folder / "test.txt", test.tokens, test.tags)
        return folder
    values = {sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a.startswith("--") and "=" not in a
              and a not in FLAGS}
    folders = [a for a in sys.argv[1:] if not a.startswith("--") and a not in values]
    # absolute: peers run from their own folders (EvalNER from nereval/) get the same files
    return Path(folders[0]).resolve() if folders else Path(__file__).resolve().parents[2] / "shared/data/conll2003"


DATA = _data()
_save()


def best(function, repeat=5, clock=time.perf_counter):
    """Best time on ``clock`` (wall by default) of ``repeat`` runs (one run with --quick) and
    the last result."""
    times = []
    for _ in range(1 if quick() else repeat):
        if not quick():  # a full collection of a smoke test's big heap costs more than the work
            gc.collect()
        start = clock()
        result = function()
        times.append(clock() - start)
    return min(times), result


def cpu_best(function, repeat=5):
    """Best process CPU time (user + system) of ``repeat`` runs and the last result: on a
    machine shared with other jobs, wall time also counts their turns."""
    return best(function, repeat, clock=time.process_time)


def paired(functions: dict, repeat=5) -> dict:
    """Best CPU time of each function, run in turns (one of each, then again): a busy moment
    slows every side alike, so their ratios stay fair."""
    times = {name: math.inf for name in functions}
    for _ in range(1 if quick() else repeat):
        for name, function in functions.items():
            times[name] = min(times[name], cpu_best(function, 1)[0])
    return times


def _vm(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return math.nan


def peak_mb(function) -> float:
    """Whole-process peak resident memory (MB) while ``function`` runs once: run in a forked
    child (holding what this process holds: interpreter, imports, inputs), whose high-water
    mark (VmHWM) starts at its current size and is read when the job ends.  Not the allocations
    of the call alone (tracemalloc) -- what the operating system has to give the process."""
    if not quick():
        gc.collect()
    if not os.path.exists("/proc/self/status"):
        return math.nan
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report, leave without cleanup handlers
        code = 1
        try:
            os.close(read)
            function()
            os.write(write, str(_vm("VmHWM")).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not answer:
        raise RuntimeError("the memory measurement's child process failed")
    return float(answer)


class Run(NamedTuple):
    """One whole-process run of a command."""
    wall: float
    cpu: float  # user + system seconds of the process (and its children)
    peak_mb: float  # its peak resident set size


# Runs a command and prints its exit code, wall time, CPU time and peak RSS.  It sits between
# the benchmark and the command because Linux carries a process's peak RSS across fork and
# exec: a command started straight from a large benchmark process would report the
# benchmark's size; started from this small launcher, it reports its own.
_LAUNCHER = """import os, subprocess, sys, time
start = time.perf_counter()
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(process.pid, 0)
print(os.waitstatus_to_exitcode(status), time.perf_counter() - start, usage.ru_utime + usage.ru_stime,
      usage.ru_maxrss / 1024)
"""


def run_process(command: Sequence[str], repeat=3, cwd=None, env=None) -> Run:
    """Run ``command`` ``repeat`` times (once with --quick) as a fresh process, its output
    discarded: the best wall and CPU time and the largest peak RSS of that process.  A failing
    command raises with its error output.  Bytecode is cached after the first run, as for an
    installed package (an environment's PYTHONDONTWRITEBYTECODE would recompile every changed
    module in every run)."""
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = []
    for _ in range(1 if quick() else repeat):
        done = subprocess.run([sys.executable, "-c", _LAUNCHER, *map(str, command)], capture_output=True,
                              text=True, cwd=cwd, env=env)
        code, wall, cpu, peak = (done.stdout.split() or ["1", "0", "0", "0"])[-4:]
        if done.returncode != 0 or int(code) != 0:
            raise RuntimeError(f"{' '.join(map(str, command))} failed: {done.stderr[-2000:]}")
        runs.append(Run(float(wall), float(cpu), float(peak)))
    return Run(min(r.wall for r in runs), min(r.cpu for r in runs), max(r.peak_mb for r in runs))


def clean_python() -> str:
    """The interpreter of whole jobs compared with a peer: a virtual environment of this
    interpreter (made once per run, removed at exit) whose one ``.pth`` file only puts
    tough-ner's folder and this environment's site-packages on ``sys.path``.  It starts as a
    regular install in a venv does, as the peers' venvs do: no ``.pth`` file of this
    environment runs code at start-up (an editable-install finder, a sandbox's certificate
    hook: about 20 ms of CPU per process here, that neither a user's install nor a peer has)."""
    if "clean" not in _PYTHONS:
        import site
        import venv

        import tough_ner

        folder = tempfile.mkdtemp(prefix="tough-ner-bench-venv-")
        atexit.register(shutil.rmtree, folder, True)
        venv.EnvBuilder(with_pip=False, symlinks=True).create(folder)
        python = os.path.join(folder, "bin", "python")
        ask = "import sysconfig; print(sysconfig.get_path('purelib'))"
        purelib = subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True).stdout.strip()
        paths = [os.path.dirname(os.path.dirname(os.path.abspath(tough_ner.__file__))), *site.getsitepackages()]
        if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):  # pip install --user
            paths.append(site.getusersitepackages())
        Path(purelib, "tough_ner_bench.pth").write_text("\n".join(paths) + "\n", encoding="utf-8")
        found = subprocess.run([python, "-c", "import numpy, tough_ner; print(numpy.__file__, tough_ner.__file__)"],
                               capture_output=True, text=True, check=True).stdout.split()
        import numpy
        if found != [numpy.__file__, tough_ner.__file__]:  # the same packages, or the comparison is void
            raise RuntimeError(f"the benchmark venv imports {found}, not {numpy.__file__}, {tough_ner.__file__}")
        _PYTHONS["clean"] = python
    return _PYTHONS["clean"]


_PYTHONS: dict = {}


def start_cpu(python: str) -> float:
    """CPU seconds of ``python -c pass`` (best of 5): what starting that environment costs."""
    return run_process([python, "-c", "pass"], 5).cpu


def grown(tokens, copies: int, seen=None):
    """``copies`` copies of the sentences as new lists of new string objects: a corpus k times
    larger also has a larger vocabulary, as real data would, instead of repeating the same
    objects (which flatters every dictionary and cache).  Every token of copy k > 0 is renamed
    (``word~k``), or with ``seen`` (the training vocabulary) only those not in it: new test
    data brings new unseen words but keeps the seen/unseen share of the original (renaming
    a seen token would turn it unseen and change the work, not just its amount)."""
    def copy(word, k):
        if seen is not None and word in seen:
            return (word + "~")[:-1]  # the same text as a new object
        return f"{word}~{k}"
    return list(tokens) + [[copy(word, k) for word in sentence] for k in range(1, copies) for sentence in tokens]


def copied(sentences, copies: int):
    """``copies`` copies of the tag lists as new lists (``tags * copies`` would repeat the same
    list objects, which stay in cache)."""
    return [list(tags) for _ in range(copies) for tags in sentences]


def option(name: str) -> Optional[str]:
    """The value of ``--name VALUE`` on the command line, or None."""
    argv = sys.argv[1:]
    return argv[argv.index(name) + 1] if name in argv[:-1] else None


class Goal(NamedTuple):
    """A goal for one measure: met when the measure is at most ``limit`` (seconds, MB, a ratio)."""
    text: str
    limit: float


class Quoted(NamedTuple):
    """A peer's figure from its paper or documentation: shown, never run here."""
    text: str


class NotRun(NamedTuple):
    """A peer that could not be run here (the row's value is None): why, and the goal left unjudged."""
    reason: str
    goal: Optional[Goal] = None


_verdicts = []


def verdict(value: float, goal: Goal) -> str:
    if quick():
        return "not judged (--quick)"
    met = value <= goal.limit
    _verdicts.append(met)
    return "MET" if met else "MISSED"


def print_table(rows, width=58):
    """Rows of (measure, value, goal): the goal a ``Goal`` (judged on this run's value), a
    ``Quoted`` peer figure (quoted, not run), ``NotRun`` (value None), a note string, or empty."""
    print(f"{'measure':<{width}} {'value':>9}  goal")
    for name, value, goal in rows:
        if isinstance(goal, NotRun):
            judged = f"{goal.goal.text}: not judged, " if goal.goal else ""
            print(f"{name:<{width}} {'not run':>9}  {judged}{goal.reason}")
            continue
        if isinstance(goal, Goal):
            note = f"{goal.text}: {verdict(value, goal)}"
        elif isinstance(goal, Quoted):
            note = f"{goal.text} (quoted, not run)"
        else:
            note = goal or ""
        print(f"{name:<{width}} {value:>9.4f}  {note}".rstrip())


def print_verdicts(title: Optional[str] = None) -> None:
    """One closing line: how many goals this run met."""
    if quick():
        print("quick smoke run (demo corpus, one repetition): goals not judged")
        return
    missed = _verdicts.count(False)
    print(f"{title or 'goals'}: {_verdicts.count(True)} MET, {missed} MISSED")
    closed()


def closed() -> None:
    """The run printed its closing line: --save may write what it printed."""
    _closed.append(True)


def _do_nothing():
    import evaluate

    from tough_ner.metrics.base import input_features

    class DoNothing(evaluate.Metric):
        """evaluate's own overhead on the same string features (``extra``: per-sentence string
        inputs, as rockner's ``version`` and nrb's ``portion``)."""

        def __init__(self, extra: Sequence[str] = (), **kwargs):
            self.extra = tuple(extra)
            super().__init__(**kwargs)

        def _info(self):
            return evaluate.MetricInfo(description="", citation="", inputs_description="",
                                       features=input_features(self.extra))

        def _compute(self, predictions, references, tokens, **extra):
            return {}

    return DoNothing


def __getattr__(name):
    # DoNothing is built on first use: importing evaluate (datasets, pyarrow) would otherwise
    # add to the peak RSS of every benchmark, also those that never touch evaluate.
    if name == "DoNothing":
        globals()["DoNothing"] = _do_nothing()
        return globals()["DoNothing"]
    raise AttributeError(name)
