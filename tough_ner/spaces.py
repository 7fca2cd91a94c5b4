"""Gradio apps (Hugging Face Spaces) for every tough-ner metric, and one with all of them in tabs.

``build(name)`` returns a ``gr.Blocks`` app; ``spaces/<name>/app.py`` is a short shim over
it, and ``export`` writes a folder a Hugging Face Space runs as it is (the shim, the Space card,
PyPI-only requirements, a copy of this package, optional built-in training statistics).  Inputs are pasted or uploaded CoNLL text (or the embedded demo corpus, one click); a test
file has ``token gold prediction [second system's prediction]`` columns.  Bad input shows a
message in the page and a warning pop-up, never a stack trace; what a person typed (names,
tokens, types, warnings quoting them) is always shown as plain text, never as Markdown or HTML.

A request is bounded before it is read whole (``LIMITS``: environment variables with their
defaults, listed on every Space card too): its body by ``TOUGH_NER_MAX_REQUEST_MB`` (checked
from the Content-Length header, else while it streams in, by ``launch``), each text or file by
``TOUGH_NER_MAX_INPUT_MB`` and ``TOUGH_NER_MAX_LINES``, the entity types by
``TOUGH_NER_MAX_TYPES``; 100 buckets and 1,000 bootstrap resamples at most.  No handler fetches
a URL: an upload that names one is refused.  Download files live in one folder per session,
removed when the session ends, and folders left by a process that died are removed at the next
start-up.  Needs the ``spaces`` extra (gradio, matplotlib).
"""
from __future__ import annotations

import atexit
import contextlib
import contextvars
import hashlib
import html
import json
import math
import os
import shutil
import tempfile
import threading
import time
from itertools import chain
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

try:
    import fcntl
except ImportError:  # not on Windows: download folders are then removed only with their session
    fcntl = None

from .present import demo as demo_data
from .core.batch import Batch, with_shared_types
from .core.checks import collected_input_warnings
from .core.corpus import Corpus, conll_text, parse_conll, read_text, split_rows
from .present.html import label_counts
from .present.formatting import format_value
from .core.stats import TrainStats

NAMES = ("hardeval", "tmr", "bucket_f1", "nrb", "rockner")
TITLES = {"hardeval": "HardEval", "tmr": "Tough Mentions Recall", "bucket_f1": "Bucket F1",
          "nrb": "Name Regularity Bias", "rockner": "RockNER"}


MAX_BOOTSTRAP = 1000


# ---- bounds on a request --------------------------------------------------------------------
# (variable, default, what it bounds): the one list of the limits, which the Space card shows.
LIMITS = (
    ("TOUGH_NER_MAX_REQUEST_MB", 16, "MB in one request's body"),
    ("TOUGH_NER_MAX_INPUT_MB", 20, "MB in one pasted text or uploaded file"),
    ("TOUGH_NER_MAX_LINES", 300_000, "lines in one pasted text or uploaded file"),
    ("TOUGH_NER_MAX_TYPES", 1000, "distinct entity types in one request"),
)


def max_input_mb() -> float:
    """The size limit of one pasted text or uploaded file, in MB (``TOUGH_NER_MAX_INPUT_MB``)."""
    return _positive("TOUGH_NER_MAX_INPUT_MB", 20)


def max_lines() -> int:
    """The limit on lines in one pasted text or uploaded file (``TOUGH_NER_MAX_LINES``): the
    work of a request grows with its lines (tokens, resamples of sentences, error rows)."""
    return int(_positive("TOUGH_NER_MAX_LINES", 300_000))


def max_request_mb() -> float:
    """The size limit of one request's body, in MB (``TOUGH_NER_MAX_REQUEST_MB``; default 16).
    gradio parses a body whole: its bytes twice, the body decoded as one text and the strings
    parsed out of it, and Python keeps a text holding one 4-byte character (an emoji) at 4
    bytes a character.  Measured, the worst case (a 4-byte character in each pasted text) costs
    about 9 times the body (24 MB: +220 MB; ASCII about 3 times), so 16 MB keeps the largest
    body accepted within 200 MB while it is parsed, before any text is checked.  It binds
    before ``max_input_mb()`` for one large paste or upload; texts within ``max_lines()`` of
    usual CoNLL lines make far smaller bodies."""
    return _positive("TOUGH_NER_MAX_REQUEST_MB", 16)


def max_types() -> int:
    """The limit on distinct entity types in one request (``TOUGH_NER_MAX_TYPES``)."""
    return int(_positive("TOUGH_NER_MAX_TYPES", 1000))


def _positive(variable: str, default: float) -> float:
    value = os.environ.get(variable, "")
    try:
        number = float(value) if value.strip() else default
    except ValueError:
        raise ValueError(f"{variable}={value!r} is not a number") from None
    if not number > 0:
        raise ValueError(f"{variable}={value!r} must be positive")
    return number


def _too_big(size: int, what: str) -> Optional[ValueError]:
    limit = max_input_mb()
    if size > limit * 2**20:
        return ValueError(f"{what} is {size / 2**20:.3g} MB; the limit is {limit:g} MB "
                          f"(TOUGH_NER_MAX_INPUT_MB sets it)")
    return None


def _check_lines(text: str, what: str) -> str:
    """Refuse a text of more than ``max_lines()`` lines, counted before it is parsed."""
    lines = text.count("\n") + (not text.endswith("\n"))
    if lines > max_lines():
        raise ValueError(f"{what} has {lines:,} lines; the limit is {max_lines():,} lines "
                         f"(TOUGH_NER_MAX_LINES sets it)")
    return text


class RequestSizeLimit:
    """ASGI middleware refusing a request body over ``max_request_mb()`` with 413 and a
    one-line message naming the limit: from its Content-Length header before a byte of the body
    is read, else as soon as the streamed body passes the limit, so no more than the limit is
    ever held (gradio parses a request's JSON whole: a 512 MB paste took 2.5 GB)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = int(max_request_mb() * 2**20)
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            return await self._refuse(send, int(declared))
        received, refused = 0, False

        async def counted():
            nonlocal received, refused
            if refused:  # the rest of the body is never read
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await self._refuse(send, received, at_least=True)
                    return {"type": "http.disconnect"}  # the app stops reading; nothing more is kept
            return message

        async def unless_refused(message):
            if not refused:
                await send(message)

        try:
            await self.app(scope, counted, unless_refused)
        except Exception:
            if not refused:  # the app's reaction to the cut-off body is expected; anything else is not
                raise

    @staticmethod
    async def _refuse(send, size: int, at_least: bool = False) -> None:
        message = (f"the request is {'over ' if at_least else ''}{size / 2**20:.3g} MB; the limit is "
                   f"{max_request_mb():g} MB (TOUGH_NER_MAX_REQUEST_MB sets it)")
        body = json.dumps({"detail": message, "error": message}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def _check_types(corpus: Corpus, what: str) -> Corpus:
    """Refuse more distinct entity types than ``max_types()`` (time and memory grow with them)."""
    found = set()
    for column in (corpus.tags, *corpus.predictions):
        for tags in column:
            found.update(tags)
    types = {tag.partition("-")[2] for tag in found if tag != "O"}
    if len(types) > max_types():
        raise ValueError(f"{what} has {len(types)} distinct entity types; the limit is {max_types()} "
                         f"(TOUGH_NER_MAX_TYPES sets it)")
    return corpus


# ---- reading the inputs -------------------------------------------------------------------
def _text(text: Optional[str], upload: Optional[str]) -> str:
    """An uploaded file's content, else the pasted text; either at most ``max_input_mb()`` and
    ``max_lines()``."""
    if upload:
        if not isinstance(upload, str) or upload.lower().startswith(("http:", "https:")):
            raise ValueError(REFUSED_URL)  # never fetched (gradio's own step: ``_refusing_urls``)
        what = f"the uploaded file {os.path.basename(upload)}"
        error = _too_big(os.path.getsize(upload), what)
        if error:
            raise error
        return _check_lines(read_text(upload), what)  # the file rules of every reader: UTF-8, BOM dropped
    text = text or ""
    error = _too_big(len(text), "the pasted text") or _too_big(_utf8_size(text), "the pasted text")
    if error:
        raise error
    return _check_lines(text, "the pasted text")


def _utf8_size(text: str) -> int:
    """The size of ``text`` in UTF-8, without a copy of it whole (encoded a megabyte at a time)."""
    if text.isascii():
        return len(text)
    step = 2**20
    return sum(len(text[i:i + step].encode("utf-8", "surrogatepass")) for i in range(0, len(text), step))


REFUSED_URL = "an upload must be a file sent from this page, not a URL (a Space fetches nothing)"


def _empty(what: str) -> ValueError:
    return ValueError(f"{what} is empty: paste CoNLL text, upload a file, or load the demo")


def _systems(text: str, what: str) -> Corpus:
    """Token, gold and 1 or 2 prediction columns (the last ones)."""
    width = _width(text)
    if width == 0:
        raise _empty(what)
    if width < 3:
        raise ValueError(f"{what}: each line needs a token, the gold tag and a prediction (found {width} columns)")
    corpus = parse_conll(text, n_predictions=min(width - 2, 2), name=what)
    if not corpus.tokens:
        raise ValueError(f"{what} holds no sentence")
    return _check_types(corpus, what)


def _width(text: str) -> int:
    """The fields of the first token line (the reader names any later line with another number):
    read line by line up to it, not the whole text split into rows first."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        fields = split_rows(text[start:end])[0]
        if fields and fields[0] != "-DOCSTART-":
            return len(fields)
        start = end + 1
    return 0


def _stats(text) -> TrainStats:
    """Training statistics from pasted CoNLL text, or a Space's built-in ``TrainStats`` as they are."""
    if isinstance(text, TrainStats):
        return text
    corpus = parse_conll(text, name="training data")
    if not corpus.tokens:
        raise _empty("training data")
    return TrainStats.from_corpus(_check_types(corpus, "training data"))


def _optional_stats(text) -> Optional[TrainStats]:
    """``_stats``, or None when no training data was given (NRB and RockNER work without)."""
    return _stats(text) if isinstance(text, TrainStats) or (text or "").strip() else None


def as_text(value) -> str:
    """``value`` shown literally inside Markdown: every character but letters, digits and spaces
    becomes an HTML character reference, so no Markdown, HTML, autolink or math can form (a
    pasted ``![x](http://...)`` is text, never an image the browser fetches)."""
    return "".join(c if c.isalnum() or c == " " else f"&#{ord(c)};" for c in str(value).replace("\n", " "))


def _names(corpus: Corpus, names_text: str = "") -> List[str]:
    """The systems' names: given (comma-separated), else ``system A``, ``system B``."""
    given = [n.strip() for n in (names_text or "").split(",") if n.strip()]
    default = ["system A", "system B"][:len(corpus.predictions)]
    names = (given + default[len(given):])[:len(corpus.predictions)]
    if len(set(names)) != len(names):
        raise ValueError(f"the system names must differ: {', '.join(names)}")
    return names


def n_key(key: str, result: dict) -> Optional[str]:
    """The key counting the items behind a rate (the table's n column), if the result has one."""
    candidates = []
    if key.startswith("precision"):  # over predictions, which no count key holds
        return None
    for prefix in ("ter_", "recall_"):
        if key.startswith(prefix):
            candidates.append("n_" + key[len(prefix):])
    if key in ("recall", "f1"):
        candidates.append("n_mentions")
    for part in ("nrb_", "wts_", ""):
        if key == part + "accuracy" or key == part + "accuracy_seen_other_type":
            candidates.append(part + "n" + key[len(part + "accuracy"):])
    for version in ("original", "attacked"):
        if key.endswith("_" + version) or key.startswith(version + "_"):
            candidates.append("n_" + version)
    if key.startswith("f1_drop"):
        candidates.append("n_attacked")
    return next((c for c in candidates if c in result), None)


def headline(method: str, scored: Dict[str, object], stats: Optional[TrainStats], keys: Sequence[str],
             **options) -> str:
    """A markdown table of the headline keys: each system's value with its 95% interval and
    n, and with two systems the paired test (bold: significantly better, Holm-adjusted)."""
    from .methods.comparison import COUNTS, family, rows
    from .present.report import format_cell, format_sizes, format_test
    from .core.uncertainty import analyse

    from .present import glossary
    from .present.findings import findings

    counts = {name: COUNTS[method](stats, value, **options) for name, value in scored.items()}
    known = [k for k in keys if k in next(iter(counts.values())).keys]
    table = rows(analyse(counts, known), method, labels={k: glossary.title(k) for k in known}, family="headline")
    described = family("headline", table, 0.05, "rows of this table")
    systems = list(scored)
    said = [item["text"] for item in findings({"summary": {"systems": systems, "rows": table},
                                               "systems": {name: {} for name in systems},
                                               "families": {"headline": described}})]
    lines = (["**Findings** (a difference is stated only when its paired test is significant):", ""]
             + [f"- {as_text(text)}" for text in said] + [""] if said else [])
    lines += ["| measure | " + " | ".join(map(as_text, systems)) + " | n |" + (" paired test |" if len(systems) > 1 else ""),
             "|---" * (len(systems) + 2 + (len(systems) > 1)) + "|"]
    for row in table:
        # Every cell as text: keys hold type names (tag_LOC_f1), the test names the systems.
        cells = [("**" + as_text(format_cell(row, s).rstrip(" *")) + "**") if s in row["best"]
                 else as_text(format_cell(row, s).rstrip()) for s in systems]
        lines.append(f"| {as_text(row['key'])} | " + " | ".join(cells) + f" | {as_text(format_sizes(row, systems))} |"
                     + (f" {as_text(format_test(row))} |" if len(systems) > 1 else ""))
    return "\n".join(lines) + (
        "\n\nValues with their 95% percentile-bootstrap interval (1000 resamples of sentences); bold: "
        f"significantly better (paired randomisation test, {described['description']}); † fewer than 30 items.")


def results_frame(results: Dict[str, dict], buckets: Optional[Dict[str, dict]] = None):
    """The one results table: each flat key in words (glossary), its key, its n and every
    system's value; counts used as an n column are not repeated as rows.  ``buckets``: a
    system's detailed bucket tables, to name bucket keys and give their gold counts."""
    from .present import glossary
    from .present.labels import bucket_label

    systems = list(results)
    first = results[systems[0]]
    flat = [k for k, v in first.items() if not isinstance(v, (dict, list))]
    used = {n_key(k, first) for k in flat} - {None}
    rows = []
    for key in flat:
        if key in used:
            continue
        n = first[n_key(key, first)] if n_key(key, first) else None
        measure = glossary.title(key)
        if key == "hardeval":
            n = first["n_unseen"] + first["n_diff"]
        parts = key.split("_")
        if buckets and len(parts) == 3 and parts[2] == "f1" and parts[1].isdigit():
            row = buckets[parts[0]][int(parts[1])]
            measure = f"F1 {parts[0]}: {bucket_label(parts[0], row['interval'], buckets.get('_totals'))}"
            n = row["n_gold"]
        rows.append([measure, key, "–" if n is None else n] + [results[s].get(key, math.nan) for s in systems])
    return _frame(rows, ["measure", "key", "n"] + systems)


def _summary(names: Sequence[str], table: str, warnings: Sequence[str] = ()) -> str:
    """The text above the results: the systems, warnings, then the headline ``table``."""
    lines = [f"Systems: {', '.join(f'**{as_text(n)}**' for n in names)}. Every term is explained in the glossary "
             "above."]
    lines += [f"> ⚠ {as_text(w)}" for w in warnings]  # they quote the names
    return "\n\n".join(lines + [table])


def _downloads(results: Dict[str, dict], frame, title: str, rows: Optional[Iterable[dict]] = None) -> tuple:
    """Files to download: the results as JSON, the error table as CSV (when there is one)
    and the results table as LaTeX (booktabs), in a new folder of the session (``_run_folder``)."""
    from . import __version__
    from .present.formatting import to_json as _json
    from ._util import write_atomic
    from .present import errors
    from .present.export import Cell, Table, latex_tables

    with _run_folder() as folder:
        paths = [os.path.join(folder, name) for name in ("results.json", "errors.csv", "table.tex")]
        write_atomic(paths[0], _json({"tough_ner_version": __version__, "results": results}) + "\n")
        rows = iter(rows or ())
        first = next(rows, None)
        if first is not None:
            errors.write(chain([first], rows), paths[1])
        columns = [c for c in frame.columns if c != "key"]
        table = Table(title, columns, [[Cell(v) for c, v in zip(frame.columns, row) if c != "key"]
                                       for row in frame.itertuples(index=False)], "space")
        write_atomic(paths[2], latex_tables([table]))
    return paths[0], paths[1] if first is not None else None, paths[2]


# ---- download files: a folder per session, removed when it ends and at start-up -------------
FOLDER_PREFIX = "tough-ner-space-"
_STAGING_PREFIX = ".tough-ner-space-new-"
_ROOT: Dict[str, object] = {}  # "path" and "handle" (its lock) of this process's folder
_ROOT_GUARD = threading.Lock()  # handlers run in threads
# (session, app) of the running handler, set by ``_in_session``; "no-session" outside gradio
_PLACE: contextvars.ContextVar = contextvars.ContextVar("tough_ner_space_place", default=("no-session", "api"))


def folder_base() -> str:
    """Where the download folders go: gradio's cache folder, so gradio serves a file where it
    is instead of copying it there (a copy nothing removes)."""
    # gradio.utils.get_upload_folder, without importing gradio (seconds) when a scorer runs alone
    return os.environ.get("GRADIO_TEMP_DIR") or os.path.realpath(os.path.join(tempfile.gettempdir(), "gradio"))


def download_root() -> str:
    """This process's folder of download files (``tough-ner-space-*``), made on first use and
    locked (``flock`` on the folder) until the process ends; making it first removes every
    such folder no process holds."""
    with _ROOT_GUARD:
        if _ROOT and os.path.isdir(_ROOT["path"]):
            return _ROOT["path"]
        if _ROOT:
            os.close(_ROOT.pop("handle"))
        base = folder_base()
        os.makedirs(base, exist_ok=True)
        remove_stale_folders(base)
        if os.path.realpath(base) != os.path.realpath(tempfile.gettempdir()):
            remove_stale_folders(tempfile.gettempdir(), min_age=3600)  # earlier versions' place, no locks
        staging = tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=base)
        handle = os.open(staging, os.O_RDONLY)
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # Renamed once locked: a folder with the name cleaning looks for is never unlocked while in use.
        path = os.path.join(base, FOLDER_PREFIX + os.path.basename(staging)[len(_STAGING_PREFIX):])
        os.rename(staging, path)
        _ROOT.update(path=path, handle=handle)
        atexit.register(shutil.rmtree, path, True)
        return path


def remove_stale_folders(base: str, min_age: float = 0) -> List[str]:
    """Remove the download folders in ``base`` that no live process holds (left by a process that
    died, or made by a version without locks) and at least ``min_age`` seconds old; returns
    their paths.  Half-made folders (``.tough-ner-space-new-*``) go after a minute."""
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        staging = entry.name.startswith(_STAGING_PREFIX)
        if not (staging or entry.name.startswith(FOLDER_PREFIX)) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if age < max(min_age, 60 if staging else 0) or _held(entry.path):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


def _held(path: str) -> bool:
    """Whether a live process holds the folder's lock (without ``fcntl``: assumed held)."""
    if fcntl is None:
        return True
    try:
        handle = os.open(path, os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(handle)  # releases the lock just taken, if it was
    return False


def session_folder(session: str) -> str:
    """The folder of a session's files (the session hash comes from the browser: hashed, so it
    names no other path)."""
    return os.path.join(download_root(), hashlib.sha256(str(session).encode()).hexdigest()[:32])


def end_session(session: str) -> None:
    """Remove the files of a session that ended (gradio's unload event)."""
    if _ROOT:
        shutil.rmtree(session_folder(session), ignore_errors=True)


_WRITING: set = set()  # the folders of _run_folder blocks still open
_WRITING_GUARD = threading.Lock()


@contextlib.contextmanager
def _run_folder():
    """A new folder for one evaluation's files, written in inside the block; the same app's
    earlier files of the session go (the page offers only the latest), but not a folder
    another run of the app in the session is still writing in (runs at once, where the Space
    lets an event's requests run together)."""
    session, app = _PLACE.get()
    place = os.path.join(session_folder(session), app)
    os.makedirs(place, exist_ok=True)
    with _WRITING_GUARD:
        earlier = [os.path.join(place, name) for name in os.listdir(place)]
        folder = tempfile.mkdtemp(dir=place)
        _WRITING.add(folder)
        earlier = [path for path in earlier if path not in _WRITING]
    for path in earlier:
        shutil.rmtree(path, ignore_errors=True)
    try:
        yield folder
    finally:
        with _WRITING_GUARD:
            _WRITING.discard(folder)


def _in_session(function: Callable, app: str) -> Callable:
    """``function`` as a gradio handler: gradio passes the request first (the parameter's
    annotation says so), and the files written while it runs go to the session's folder."""
    import gradio as gr

    def handler(request, *args):
        token = _PLACE.set((getattr(request, "session_hash", None) or "no-session", app))
        try:
            return function(*args)
        finally:
            _PLACE.reset(token)
    handler.__annotations__ = {"request": gr.Request}
    return handler


def _error_rows(stats: Optional[TrainStats], batches: Dict[str, Batch]) -> Optional[Iterator[dict]]:
    """Every system's error rows, a system's at a time (the download is written as they come)."""
    from .present.errors import error_rows

    if stats is None:
        return None
    return (row for name, batch in batches.items() for row in error_rows(stats, batch, name))


def _hardest_tokens(stats, batches: Dict[str, Batch], details: Dict[str, dict], top: int = 15):
    from .present.errors import hardest, predicted_text

    names = list(batches)
    rows = hardest(stats, batches, {n: {"hardeval": {"hard_tokens": details[n]}, "hard_mentions": []}
                                    for n in names}, top)["tokens"]
    return _frame([[r["token"], r["gold"], r["n"]] + [v for n in names for v in (
        r["errors"][n], predicted_text(r["predicted"][n]))] + [label_counts(r["train"])] for r in rows],
        ["token", "gold", "test count"] + [h for n in names for h in (f"errors {n}", f"{n} predicted")]
        + ["training labels"])


def _hardest_mentions(stats, batches: Dict[str, Batch], top: int = 15):
    from .present.errors import hardest, predicted_text
    from .present.report import hard_mentions

    names = list(batches)
    rows = hardest(stats, batches, {n: {"hardeval": {"hard_tokens": {}}, "hard_mentions": hard_mentions(
        stats, b, top=top)} for n, b in batches.items()}, top)["mentions"]
    return _frame([[r["text"], r["type"], r["n"]] + [v for n in names for v in (
        r["misses"][n], predicted_text(r["predicted"][n]))] + [label_counts(r["train"])] for r in rows],
        ["mention", "type", "test count"] + [h for n in names for h in (f"missed {n}", f"{n} predicted")]
        + ["training mentions"])


def _frame(rows: List[list], header: List[str]):
    import pandas as pd

    return pd.DataFrame([[format_value(v) if isinstance(v, float) else v for v in row] for row in rows], columns=header)


def _bars(groups: Sequence[str], series: Dict[str, Sequence[float]], ylabel: str, labels=None, errors=None):
    from .present.html import _plotting, fit_ticks, grouped_bars, legend_outside, plain_text

    plt = _plotting()
    figure, ax = plt.subplots(figsize=(7, 2.8))
    grouped_bars(plt, ax, groups, series, labels, errors)
    ax.set_ylabel(ylabel, fontsize=8)
    legend_outside(ax)
    fit_ticks(figure)
    figure.tight_layout()
    return plain_text(figure)  # names and types drawn as written, never as matplotlib math


def _warnings(results: Dict[str, dict]) -> List[str]:
    from .core.checks import training_data_warnings

    return training_data_warnings({"systems": {n: {"tmr": r} for n, r in results.items()}})


def _system_batches(test: Corpus, names: Sequence[str]) -> Dict[str, Batch]:
    """Each system's batch over the test set, all numbering the same entity types (a type one
    system predicts is a column of nothing for the other, and the systems compare)."""
    return with_shared_types({n: Batch(test.tokens, test.tags, p) for n, p in zip(names, test.predictions)})


# ---- one scorer per metric: (inputs...) -> (summary, results table, plot, hardest/details, 3 files) -------------
def score_hardeval(train_text, test_text, strict=False, error="bilou", names_text=""):
    from .methods.hardeval import hardeval

    stats, test = _stats(train_text), _systems(test_text, "test data")
    names = _names(test, names_text)
    batches = _system_batches(test, names)
    detailed = {n: hardeval(stats, b, strict=strict, error=error, detailed=True) for n, b in batches.items()}
    results = {n: {k: v for k, v in r.items() if not isinstance(v, (dict, list))} for n, r in detailed.items()}
    subsets = ["all", "unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E"]
    frame = results_frame(results)
    plot = _bars(subsets, {n: [results[n][f"ter_{x}"] for x in subsets] for n in names}, "token error rate")
    details = _hardest_tokens(stats, batches, {n: detailed[n]["hard_tokens"] for n in names})
    breakdown = _frame([[n, part, cell["errors"], cell["share_of_errors"], cell["tokens"], cell["share_of_tokens"]]
                        for n in names for part, cell in detailed[n]["error_breakdown"].items()],
                       ["system", "part", "errors", "share of errors", "tokens", "share of tokens"])
    files = _downloads(detailed, frame, "HardEval: token error rate per subset", _error_rows(stats, batches))
    table = headline("hardeval", batches, stats, ["hardeval", "ter_all", "ter_unseen", "ter_diff"], strict=strict,
                     error=error)
    return (_summary(names, table), frame, plot, details, breakdown, *files)


def score_tmr(train_text, test_text, names_text=""):
    from .methods.tmr import SUBSETS, tmr

    stats, test = _stats(train_text), _systems(test_text, "test data")
    names = _names(test, names_text)
    batches = _system_batches(test, names)
    results = {n: tmr(stats, b) for n, b in batches.items()}
    frame = results_frame(results)
    plot = _bars(list(SUBSETS), {n: [results[n][f"recall_{x}"] for x in SUBSETS] for n in names}, "recall")
    details = _hardest_mentions(stats, batches)
    files = _downloads(results, frame, "Tough Mentions Recall per subset", _error_rows(stats, batches))
    table = headline("tmr", batches, stats, ["precision", "recall", "f1"] + [f"recall_{x}" for x in SUBSETS])
    return (_summary(names, table, _warnings(results)), frame, plot, details, *files)


def score_bucket_f1(train_text, test_text, n_buckets=4, bootstrap=200, names_text=""):
    from .methods.buckets import ATTRIBUTES, bucket_f1
    if not 0 <= int(bootstrap) <= MAX_BOOTSTRAP:
        raise ValueError(f"bootstrap resamples must lie in 0 .. {MAX_BOOTSTRAP}, got {bootstrap}")
    stats, test = _stats(train_text), _systems(test_text, "test data")
    names = _names(test, names_text)
    batches = _system_batches(test, names)
    detailed = {n: bucket_f1(stats, b, n_buckets=int(n_buckets), detailed=True, bootstrap=int(bootstrap))
                for n, b in batches.items()}
    results = {n: {k: v for k, v in r.items() if not isinstance(v, (dict, list))} for n, r in detailed.items()}
    counts = {"mentions": stats.n_mentions, "tokens": stats.n_tokens}
    frame = results_frame(results, {**detailed[names[0]]["buckets"], "_totals": counts})
    worst = _frame([[a] + [f"{d['worst']} ({format_value(d['worst_f1'])})" if d["worst"] is not None else "-"
                           for d in (detailed[n]["diagnostics"]["self"][a] for n in names)] for a in ATTRIBUTES],
                   ["attribute"] + [f"worst bucket {n}" for n in names])
    files = _downloads(detailed, frame, "Bucket F1 per attribute bucket", _error_rows(stats, batches))
    table = headline("bucket_f1", batches, stats, ["f1"], n_buckets=int(n_buckets))
    return (_summary(names, table), frame, _bucket_chart(detailed, counts), worst, *files)


CHART_TYPES = 20  # bars of the bucket chart's type panel


def _bucket_chart(detailed: Dict[str, dict], counts: Dict[str, int]):
    """The bucket chart of the systems' detailed tables, its type panel showing the
    ``CHART_TYPES`` types with the most gold (then predicted) mentions, as its title says; the
    results table has every type.  Hundreds of bars are unreadable, and placing their labels
    took 14 s for 999 types."""
    from .present.html import _plotting, bucket_figure, plain_text

    size: Dict[str, tuple] = {}
    for table in detailed.values():
        for row in table["buckets"]["tag"]:
            size[row["interval"]] = max(size.get(row["interval"], (0, 0)), (row["n_gold"], row["n_pred"]))
    shown = set(sorted(size, key=lambda t: size[t], reverse=True)[:CHART_TYPES])
    tables = {name: {**table, "buckets": {**table["buckets"], "tag": [row for row in table["buckets"]["tag"]
                                                                     if row["interval"] in shown]}}
              for name, table in detailed.items()}
    figure = bucket_figure(_plotting(), tables, counts)
    if len(size) > CHART_TYPES:
        for ax in figure.axes:
            if ax.get_title() == "tag":
                ax.set_title(f"tag: the {CHART_TYPES} most frequent of {len(size)} types", fontsize=9)
    return plain_text(figure)


def score_nrb(nrb_text, wts_text, train_text="", type_map="auto", names_text=""):
    from .methods.nrb import nrb, sets_batch

    stats = _optional_stats(train_text)
    sets = {"nrb": _systems(nrb_text, "NRB data")}
    if (wts_text or "").strip():
        sets["wts"] = _systems(wts_text, "WTS data")
    names = _names(sets["nrb"], names_text)
    scored = {n: sets_batch({k: (c.tokens, c.tags, c.predictions[i]) for k, c in sets.items()})
              for i, n in enumerate(names)}
    detailed = {n: nrb(batch, type_map, portion, stats, detailed=True) for n, (batch, portion) in scored.items()}
    results = {n: {k: v for k, v in r.items() if not isinstance(v, (dict, list))} for n, r in detailed.items()}
    prefix = "nrb_" if len(sets) > 1 else ""
    frame = results_frame(results)
    plot = _bars([s.upper() for s in sets], {n: [results[n][f"{s}_accuracy" if len(sets) > 1 else "accuracy"]
                                                 for s in sets] for n in names}, "accuracy")
    confusion = {n: detailed[n].get(f"{prefix}confusion", {}) for n in names}
    columns = sorted({c for n in names for cells in confusion[n].values() for c in cells})
    targets = list(dict.fromkeys(t for n in names for t in confusion[n]))
    details = _frame([[n, t] + [confusion[n].get(t, {}).get(c, 0) for c in columns] for n in names for t in targets],
                     ["system", "target type"] + [f"predicted {c}" for c in columns])
    nrb_set = sets["nrb"]
    rows = _error_rows(stats, {n: Batch(nrb_set.tokens, nrb_set.tags, nrb_set.predictions[i])
                               for i, n in enumerate(names)})
    files = _downloads(detailed, frame, "Name Regularity Bias: accuracy", rows)
    keys = ["nrb_accuracy", "wts_accuracy", "gap"] if len(sets) > 1 else ["accuracy"]
    return (_summary(names, headline("nrb", scored, stats, keys, type_map=type_map)), frame, plot, details, *files)


def score_rockner(original_text, attacked_text, train_text="", names_text=""):
    from .methods.rockner import CATEGORIES, rockner

    original, attacked = _systems(original_text, "original data"), _systems(attacked_text, "attacked data")
    if len(original.predictions) != len(attacked.predictions):
        raise ValueError("the original and attacked data need the same number of prediction columns")
    stats = _optional_stats(train_text)
    names = _names(original, names_text)
    pairs = {n: (Batch(original.tokens, original.tags, original.predictions[i]),
                 Batch(attacked.tokens, attacked.tags, attacked.predictions[i])) for i, n in enumerate(names)}
    detailed = {n: rockner(*pair, detailed=True) for n, pair in pairs.items()}
    results = {n: {k: v for k, v in r.items() if not isinstance(v, (dict, list))} for n, r in detailed.items()}
    frame = results_frame(results)
    series = {f"{n} {v}": [results[n][f"{v}_{c}"] for c in CATEGORIES] for n in names for v in ("original", "attacked")}
    plot = _bars([c.replace("_type", "").replace("_", " ") for c in CATEGORIES], series, "share of gold entities")
    differences = {n: detailed[n]["confusion"]["difference"] for n in names}
    columns = sorted({c for table in differences.values() for cells in table.values() for c in cells})
    details = _frame([[n, row] + [f"{cells.get(c, 0):+d}" for c in columns]
                      for n, table in differences.items() for row, cells in table.items()],
                     ["system", "gold type"] + [f"predicted {c} (attacked − original)" for c in columns])
    errors = _error_rows(stats, {n: Batch(attacked.tokens, attacked.tags, attacked.predictions[i])
                                 for i, n in enumerate(names)})
    files = _downloads(detailed, frame, "RockNER: original and attacked test set", errors)
    table = headline("rockner", pairs, None, ["f1_original", "f1_attacked", "f1_drop", "f1_drop_relative"])
    return (_summary(names, table), frame, plot, details, *files)


def attack_text(train_text, original_text, ratio, seed) -> str:
    """The original test set (gold columns) under the entity attack, as CoNLL ``token tag``."""
    from .attacks import entity_attack

    original = _systems(original_text, "original data")
    stats = _optional_stats(train_text)
    attacked = entity_attack(original, ratio=float(ratio), seed=int(seed), train=stats).to_dict()
    return conll_text(attacked["tokens"], attacked["ner_tags"])


# ---- the demo inputs ------------------------------------------------------------------------
def demo_inputs(name: str, ratio: float = 1.0, seed: int = 0) -> Tuple[str, ...]:
    """The embedded demo corpus as each app's text inputs."""
    def read(path) -> str:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    if name == "nrb":
        return read(demo_data.NRB), read(demo_data.WTS), read(demo_data.TRAIN)
    if name == "rockner":
        train, test = demo_data.load_demo()
        attacked = demo_data.demo_attacks(TrainStats.from_corpus(train), test, (float(ratio),), int(seed), kinds=())
        _, corpus = attacked["memorizer"][0]
        return (read(demo_data.TRAIN), conll_text(test.tokens, test.tags, test.predictions[0]),
                conll_text(corpus.tokens, corpus.tags, corpus.predictions[0]))
    return read(demo_data.TRAIN), read(demo_data.TEST)


# ---- the apps -----------------------------------------------------------------------------
def _card(name: str) -> str:
    """The metric's own documentation: description, inputs and outputs, citation."""
    from .metrics.register import metric_class

    cls = metric_class(name)
    return (f"{cls.description}\n\n```\n{cls.inputs_text.strip()}\n```\n\nReferences: "
            + ", ".join(cls.reference_urls) + f"\n\n```bibtex\n{cls.citation_text}\n```")


def error_message(error: BaseException) -> str:
    """The Markdown of an error shown in the page: its text escaped (it quotes user input)."""
    kind = "" if isinstance(error, (ValueError, FileNotFoundError)) else f"{type(error).__name__}: "
    return f"**Error:** {as_text((kind + str(error))[:2000])}"


def _warn(error: BaseException) -> None:
    """A visible pop-up next to the message in the page (gradio renders its text as HTML: escaped)."""
    import gradio as gr

    gr.Warning(html.escape(str(error)[:2000]), title="Error")


def _shown(outputs: tuple) -> tuple:
    """Scorer outputs as component updates: tables and download buttons show only with content."""
    import gradio as gr

    def show(value):  # a table, a file path or nothing
        return gr.update(value=value, visible=value is not None and (isinstance(value, str) or len(value) > 0))

    summary, table, plot, *rest = outputs
    return (summary, show(table), plot, *map(show, rest))


def _safe(function: Callable, n_outputs: int) -> Callable:
    """Run a scorer; any error becomes a message in the page (first output) and a warning
    pop-up, never a trace."""
    def run(*args):
        try:
            with collected_input_warnings() as caught:  # shown on the page (this request's only)
                outputs = function(*args)
            notes = list(dict.fromkeys(caught))
            # The notes quote the input (a predicted tag ``B-![x](http://...)``): text, never Markdown.
            return ("\n\n".join(f"**Warning:** {as_text(note)}" for note in notes), *_shown(outputs))
        except Exception as error:  # noqa: BLE001 -- every failure is shown to the person, readably
            _warn(error)
            return (error_message(error), *_shown((None,) * n_outputs))
    return run


def _reader(function: Callable, n_texts: int, train: Optional[int] = None,
            default: Optional[TrainStats] = None) -> Callable:
    """Turn (text, upload) pairs into texts before calling ``function``; an empty training text
    (pair number ``train``) becomes the Space's built-in statistics ``default``, when it has them."""
    def run(*args):
        texts = [_text(args[2 * i], args[2 * i + 1]) for i in range(n_texts)]
        if default is not None and not texts[train].strip():
            texts[train] = default
        return function(*texts, *args[2 * n_texts:])
    return run


def _text_input(label: str, elem_id: str):
    import gradio as gr

    with gr.Row():
        text = gr.Textbox(label=label, lines=6, max_lines=12, elem_id=elem_id, scale=3)
        upload = _refusing_urls(gr.File(label="or upload a file", type="filepath", scale=1,
                                        elem_id=f"{elem_id}-upload"))
    return text, upload


def _refusing_urls(upload):
    """The File component ``upload``, made to refuse a file named by a URL: gradio downloads such
    a file (a DNS lookup, then a request to wherever the URL points) before any handler runs,
    and a crafted request can name one.  Done on the instance: gradio writes a ``.pyi`` stub
    beside the module of any subclass of its components."""
    import gradio as gr

    move, move_async = upload.move_resource_to_block_cache, upload.async_move_resource_to_block_cache

    def refuse(path) -> None:
        if isinstance(path, str) and path.lower().startswith(("http:", "https:")):
            raise gr.Error(REFUSED_URL)

    def checked(path):
        refuse(path)
        return move(path)

    async def checked_async(path):
        refuse(path)
        return await move_async(path)

    upload.move_resource_to_block_cache, upload.async_move_resource_to_block_cache = checked, checked_async
    return upload


def ui(name: str, stats: Optional[TrainStats] = None) -> None:
    """The components of one metric's app, inside the current ``gr.Blocks`` (or tab); ``stats``:
    built-in training statistics, used when the training data is left empty."""
    import gradio as gr

    from .present import glossary

    gr.Markdown(f"## {TITLES[name]}\nPaste or upload CoNLL text (a blank line between sentences), or load "
                "the embedded demo corpus. Test files: `token gold prediction [second prediction]`."
                + (f"\n\nBuilt-in training statistics ({as_text(repr(stats))}) are used when the training data "
                   "is left empty." if stats is not None else ""))
    with gr.Accordion("Glossary: what each measure and subset means", open=False, elem_id=f"{name}-glossary"):
        gr.Markdown(glossary.markdown())
    if name == "nrb":
        inputs = [*_text_input("NRB sentences: token gold prediction [second prediction]", f"{name}-nrb"),
                  *_text_input("WTS sentences (optional)", f"{name}-wts"),
                  *_text_input("Training data (optional): token ... tag", f"{name}-train")]
        options = [gr.Dropdown(["auto", "nrb", "conll", "ontonotes"], value="auto",
                               label="system types (type map; auto: detected from the labels)")]
        scorer, texts, train = score_nrb, 3, 2
    elif name == "rockner":
        inputs = [*_text_input("Training data (optional): the attack never uses its mentions as replacements, and "
                               "the error table gets its seen / unseen subsets", f"{name}-train"),
                  *_text_input("Original test set: token gold prediction [second prediction]", f"{name}-original"),
                  *_text_input("Attacked test set: token gold prediction [second prediction]", f"{name}-attacked")]
        with gr.Row():
            ratio = gr.Slider(0.0, 1.0, value=1.0, step=0.2, label="attack ratio (share of entities replaced)")
            seed = gr.Number(value=0, precision=0, label="seed")
        options = []
        scorer, texts, train = (lambda train, original, attacked, names: score_rockner(original, attacked, train,
                                                                                       names)), 3, 0
    else:
        inputs = [*_text_input("Training data: token ... tag", f"{name}-train"),
                  *_text_input("Test data: token gold prediction [second prediction]", f"{name}-test")]
        if name == "hardeval":
            options = [gr.Checkbox(label="strict diff subsets"),
                       gr.Radio(["bilou", "bio", "io"], value="bilou", label="label comparison")]
        elif name == "bucket_f1":
            options = [gr.Slider(3, 8, value=4, step=1, label="buckets per attribute"),
                       gr.Slider(0, 1000, value=200, step=100, label="bootstrap resamples")]
        else:
            options = []
        scorer, texts, train = {"hardeval": score_hardeval, "tmr": score_tmr, "bucket_f1": score_bucket_f1}[name], 2, 0
    names_box = gr.Textbox(label="system names (comma-separated, in column order)", placeholder="system A, system B",
                           elem_id=f"{name}-names")
    options = options + [names_box]
    with gr.Row():
        run = gr.Button("Evaluate", variant="primary", elem_id=f"{name}-run")
        demo = gr.Button("Load the demo corpus and evaluate", elem_id=f"{name}-demo")
        if name == "rockner":
            attack = gr.Button("Attack the original (entity level)", elem_id=f"{name}-attack")
    error = gr.Markdown(elem_id=f"{name}-error")
    scores = gr.Markdown(elem_id=f"{name}-headline")
    table = gr.Dataframe(label="results (n: the items each rate is computed over)", elem_id=f"{name}-table",
                         wrap=True, visible=False, max_height=2400)  # tall: every row at once, no inner scroll
    plot = gr.Plot(label="chart", elem_id=f"{name}-plot")
    details = gr.Dataframe(label="hardest cases, every system" if name in ("hardeval", "tmr") else "details",
                           elem_id=f"{name}-details", wrap=True, visible=False)
    breakdown = [gr.Dataframe(label="where the token errors fall: share of errors vs share of test tokens "
                                    "(HardEval Table 10)", elem_id=f"{name}-breakdown", wrap=True, visible=False)
                 ] if name == "hardeval" else []
    with gr.Row():
        downloads = [gr.DownloadButton(label, visible=False, elem_id=f"{name}-download-{kind}", size="sm")
                     for kind, label in (("json", "results (JSON)"), ("csv", "error table (CSV)"),
                                         ("latex", "table (LaTeX)"))]
    if name == "rockner":
        attacked_out = gr.Textbox(label="attacked test set (token tag): tag it with your model, paste it above",
                                  lines=6, max_lines=12, elem_id=f"{name}-attacked-out")
    with gr.Accordion("About this metric", open=False):
        gr.Markdown(_card(name))
    outputs = [error, scores, table, plot, details, *breakdown, *downloads]
    evaluate = _safe(_reader(scorer, texts, train, stats), len(outputs) - 1)
    run.click(_in_session(evaluate, name), inputs=inputs + options, outputs=outputs)
    text_boxes = inputs[0::2]
    demo_names = "memorizer" if name == "rockner" else ", ".join(demo_data.SYSTEMS)

    def load_demo(*values):
        try:
            demo_texts = demo_inputs(name, *(values[:2] if name == "rockner" else ()))
        except Exception as error:  # noqa: BLE001 -- e.g. a bad seed: shown in the page
            _warn(error)
            return (*[""] * len(text_boxes), "", error_message(error), *_shown((None,) * (len(outputs) - 1)))
        pairs = [v for text in demo_texts for v in (text, None)]
        chosen = values[2 if name == "rockner" else 0:-1]
        return (*demo_texts, demo_names, *evaluate(*pairs, *chosen, demo_names))
    demo_options = ([ratio, seed] if name == "rockner" else []) + options
    demo.click(_in_session(load_demo, name), inputs=demo_options, outputs=text_boxes + [names_box] + outputs)
    if name == "rockner":
        def attack_handler(train_text, train_file, original_text, original_file, r, s):
            try:
                given = _text(train_text, train_file)
                train_data = stats if stats is not None and not given.strip() else given
                return "", attack_text(train_data, _text(original_text, original_file), r, s)
            except Exception as error:  # noqa: BLE001
                _warn(error)
                return error_message(error), ""
        attack.click(attack_handler, inputs=inputs[:4] + [ratio, seed], outputs=[error, attacked_out])


def theme():
    """Gradio's default look with system fonts: the default theme loads Google Fonts."""
    import gradio as gr

    return gr.themes.Default(font=["ui-sans-serif", "system-ui", "sans-serif"],
                             font_mono=["ui-monospace", "SFMono-Regular", "monospace"])


def build(name: str = "all", stats=None):
    """The app of one metric (``NAMES``), or ``"all"`` for every metric in tabs; ``stats`` (a
    ``TrainStats`` or a saved stats file): training statistics used when none are pasted."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    if name not in NAMES and name != "all":
        raise ValueError(f"unknown space {name!r}: use {', '.join(NAMES)} or all")
    if stats is not None and not isinstance(stats, TrainStats):  # a bad file refused before gradio loads (seconds)
        stats = TrainStats.load(stats)
    try:
        import gradio as gr
    except ImportError:
        raise ImportError("the Spaces need gradio: pip install 'tough-ner[spaces]'") from None
    download_root()  # made now: start-up removes the folders of processes that died

    def end(request):  # the session ended (tab closed): its download files go
        end_session(getattr(request, "session_hash", None) or "no-session")
    end.__annotations__ = {"request": gr.Request}  # how gradio knows to pass the request
    with gr.Blocks(title=f"tough-ner: {TITLES.get(name, 'every metric')}", analytics_enabled=False) as app:
        if name == "all":
            gr.Markdown("# tough-ner\nWhere NER models fail, not just their F1.")
            for each in NAMES:
                with gr.Tab(TITLES[each], elem_id=f"tab-{each}"):
                    ui(each, stats)
        else:
            ui(name, stats)
        app.unload(end)
    return app


def server_address(from_environment: bool, port: Optional[int] = None) -> Tuple[str, Optional[int]]:
    """(host, port) to serve on: 127.0.0.1 and ``port``, or, ``from_environment`` (a Space's
    ``app.py``), gradio's own ``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT``, with 0.0.0.0 when
    no name is set (a Hub Space must listen there)."""
    if not from_environment:
        return "127.0.0.1", port
    host = os.environ.get("GRADIO_SERVER_NAME") or "0.0.0.0"
    given = os.environ.get("GRADIO_SERVER_PORT")
    return host, int(given) if given else port


def launch(name: str = "all", port: Optional[int] = None, block: bool = True, from_environment: bool = False,
           app=None):
    """Serve an app (``app``, else ``build(name)``) on 127.0.0.1, or where
    ``GRADIO_SERVER_NAME``/``_PORT`` say with ``from_environment`` (analytics off, no share
    link, no server-side rendering, uploads at most ``max_input_mb()``, request bodies at most
    ``max_request_mb()``: ``RequestSizeLimit``)."""
    try:
        from starlette.middleware import Middleware  # gradio's web framework
    except ImportError:
        raise ImportError("the Spaces need gradio: pip install 'tough-ner[spaces]'") from None

    max_request_mb(), max_lines(), max_types()  # a bad setting fails here, not in every request
    app = app if app is not None else build(name)
    host, port = server_address(from_environment, port)
    app.launch(server_name=host, server_port=port, share=False, prevent_thread_lock=not block,
               theme=theme(), ssr_mode=False, quiet=not block, footer_links=[],
               max_file_size=int(max_input_mb() * 2**20), app_kwargs={"middleware": [Middleware(RequestSizeLimit)]})
    return app


# ---- deploying: the files of a Hugging Face Space, and a folder the Hub runs as it is ----------
# name -> (folder under spaces/, emoji, colorFrom, colorTo, what it shows)
SPACES = {
    "hardeval": ("hardeval", "🎯", "red", "yellow",
                 "Token error rates of an NER system on test tokens unseen in training and on tokens whose label "
                 "differs from their usual training label (Bernier-Colborne & Langlais, 2020)."),
    "tmr": ("tmr", "🧗", "blue", "purple", "Recall on unseen and type-confusable test mentions (Tu & Lignos, 2021), "
                                         "beside span precision, recall and F1."),
    "bucket_f1": ("bucket_f1", "🪣", "green", "blue",
                  "F1 per bucket of entity attributes - length, density, OOV density, frequency, label consistency, "
                  "type - for one or two systems (Fu, Liu & Neubig, 2020)."),
    "nrb": ("nrb", "🏷️", "red", "blue", "Accuracy on sentences whose one entity can only be typed from its context "
                                       "(NRB) and on the WTS control set (Ghaddar et al., 2021)."),
    "rockner": ("rockner", "🪨", "gray", "green",
                "F1 drop and error analysis of an NER system between a test set and its natural adversarial version "
                "(Lin et al., 2021); builds the entity-level attack too."),
    "all": ("tough_ner", "🔎", "indigo", "pink",
            "Every tough-ner metric on one page, in tabs: HardEval, TMR, bucket F1, NRB and RockNER."),
}


def requirements() -> List[str]:
    """What a Space installs from PyPI: tough-ner's own dependencies and its ``spaces`` extra, with
    gradio pinned to the installed version (the card's ``sdk_version``), never tough-ner itself."""
    from importlib import metadata

    from packaging.requirements import Requirement

    try:
        declared = metadata.requires("tough-ner") or []
    except metadata.PackageNotFoundError:
        raise ValueError("exporting a Space reads tough-ner's declared dependencies: install tough-ner "
                         "(pip install 'tough-ner[spaces]', or pip install -e . in a checkout)") from None
    wanted = []
    for line in declared:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": "spaces"}):
            requirement.marker = None
            if requirement.name == "gradio":
                requirement.specifier = type(requirement.specifier)(f"=={gradio_version()}")
            wanted.append(str(requirement))
    return list(dict.fromkeys(wanted))


def gradio_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("gradio")
    except metadata.PackageNotFoundError:
        raise ImportError("the Spaces need gradio: pip install 'tough-ner[spaces]'") from None


def space_files(name: str, stats_file: Optional[str] = None, stats: Optional[TrainStats] = None) -> Dict[str, str]:
    """The files of a Space (``app.py``, ``README.md`` with the Hub's YAML header,
    ``requirements.txt``), as text; ``stats_file``: the file of built-in training statistics
    (``stats``) the app loads.  ``spaces/<folder>/`` in the repository holds exactly these."""
    if name not in SPACES:
        raise ValueError(f"unknown space {name!r}: use {', '.join(NAMES)} or all")
    folder, emoji, color_from, color_to, about = SPACES[name]
    title = TITLES.get(name, "tough-ner")
    built_in = repr(stats_file) if stats_file else "None"
    app = (f'"""Hugging Face Space: {title} (tough-ner).  `python app.py` imports the tough_ner package beside\n'
           f'this file (the script\'s folder comes first on sys.path) and listens where GRADIO_SERVER_NAME says\n'
           f'(0.0.0.0 unless set, as a Space needs)."""\n'
           "import os\n\nfrom tough_ner.spaces import build, launch\n\n"
           f"STATS = {built_in}  # built-in training statistics (tough-ner space --export --stats)\n"
           'HERE = os.path.dirname(os.path.abspath(__file__))\n'
           f'demo = build("{name}", stats=STATS and os.path.join(HERE, STATS))\n\n'
           'if __name__ == "__main__":\n'
           f'    launch(app=demo, from_environment=True)\n')
    limits = "\n".join(f"- `{variable}` (default {default:,}): {what}" if isinstance(default, int) else
                       f"- `{variable}` (default {default}): {what}" for variable, default, what in LIMITS)
    statistics = (f"This Space has built-in training statistics (`{stats_file}`: {stats!r}): leave the "
                  "training data empty to evaluate against them. " if stats_file else "")
    card = f"""---
title: {title}
emoji: {emoji}
colorFrom: {color_from}
colorTo: {color_to}
sdk: gradio
sdk_version: {gradio_version()}
app_file: app.py
pinned: false
license: apache-2.0
tags:
- evaluate
- metric
- named-entity-recognition
- tough-ner
short_description: {title} for NER, with training-set statistics
---

# {title} (tough-ner)

{about}

Paste or upload CoNLL text - training data (`token ... tag`) and a test file with the gold tags
and one or two systems' predictions (`token gold prediction [second prediction]`) - or click
**Load the demo corpus and evaluate**. The page shows the headline scores, the subset tables,
a chart (two systems side by side) and the hardest cases with their training counts. Bad
input gets a readable message.

## Training statistics

{statistics}`tough-ner space {name} --export DIR --stats FILE` builds this folder with FILE (saved
statistics, loaded with `TrainStats.load`) as the app's built-in training statistics. For a
licensed corpus (CoNLL-2003, OntoNotes) give a shareable file (`tough-ner stats --shareable`,
`TrainStats.save(path, shareable=True)`): it does not hold the training text.

## Limits

A request is refused, with a one-line message naming the limit, beyond 1,000 bootstrap
resamples or any of these (environment variables of the Space, with their defaults):

{limits}

Names, tokens and types you give are shown as plain text, never as Markdown or HTML; an upload
must be a file sent from the page (a Space fetches no URL). The files to download are kept
for the session only: they are removed when the page is closed.

## How this folder runs

`tough-ner space {name} --export DIR` writes this folder: `app.py`, this card, `requirements.txt`
(tough-ner's dependencies from PyPI, with the Gradio version the app was tested with, the
`sdk_version` above) and `tough_ner/`, a copy of the tough-ner package source. `python app.py`
imports that copy (Python puts the script's folder first on `sys.path`): tough-ner itself is not
installed. The app listens where `GRADIO_SERVER_NAME` says, 0.0.0.0 unless set (a Space needs it).
In the tough-ner repository, `spaces/{folder}/` holds the same files without the package copy.

Run it locally: `pip install -r requirements.txt && GRADIO_SERVER_NAME=127.0.0.1 python app.py`,
or, with tough-ner installed, `tough-ner space {name}` (127.0.0.1, analytics off).
"""
    return {"app.py": app, "README.md": card, "requirements.txt": "\n".join(requirements()) + "\n"}


def export(name: str, folder, stats_path=None) -> List[str]:
    """Write a folder a Hugging Face Space runs as it is: ``space_files(name)``, a copy of the
    package source (``tough_ner/``) and, with ``stats_path``, the training statistics the app
    loads by default (copied as ``train_stats`` with the file's suffix); returns the written paths."""
    import shutil
    import tempfile

    from ._util import write_atomic

    stats = TrainStats.load(stats_path) if stats_path is not None else None  # refuses a bad file before writing
    stats_file = "train_stats" + (os.path.splitext(os.fspath(stats_path))[1] or ".npz") if stats_path else None
    files = space_files(name, stats_file, stats)
    os.makedirs(folder, exist_ok=True)
    source = os.path.dirname(os.path.abspath(__file__))
    target = os.path.join(folder, "tough_ner")
    # The copy is made beside its place and swapped in, so a failed export leaves no half package.
    staging = tempfile.mkdtemp(prefix=".tough_ner-", dir=folder)
    try:
        copied = os.path.join(staging, "tough_ner")
        shutil.copytree(source, copied, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if os.path.exists(target):
            shutil.rmtree(target)
        os.replace(copied, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    written = [target]
    if stats_file:
        copy = os.path.join(folder, f".{stats_file}.tmp")
        shutil.copyfile(stats_path, copy)
        os.replace(copy, os.path.join(folder, stats_file))
        written.append(os.path.join(folder, stats_file))
    for file, text in files.items():
        write_atomic(os.path.join(folder, file), text)
        written.append(os.path.join(folder, file))
    return written
