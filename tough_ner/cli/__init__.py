"""The ``tough-ner`` command: a thin dispatcher.  Each command group is a module of this
package (methods, attack, report, tools; shared helpers in _common), imported only when one of
its commands runs, after the process settings of ``_process``."""
from __future__ import annotations

import os
import signal
import sys

# Each command's help line and the module of its group (whose ARGUMENTS adds its arguments).
COMMANDS = {
    "hardeval": ("HardEval token error rates on unseen and diff tokens", "methods"),
    "tmr": ("Tough Mentions Recall on unseen and type-confusable mentions", "methods"),
    "buckets": ("F1 per bucket of entity attributes (interpretable evaluation)", "methods"),
    "nrb": ("Name Regularity Bias: accuracy on NRB and its WTS control set", "methods"),
    "attack": ("RockNER: write an adversarial version of a test set", "attack"),
    "rockner": ("RockNER: F1 drop and error analysis, original vs attacked", "methods"),
    "describe": ("mention statistics of training and test sets", "methods"),
    "stats": ("build training statistics once and save them", "tools"),
    "register": ("make evaluate.load('hardeval') work offline", "tools"),
    "report": ("every method, every system (text, JSON, HTML); no arguments: the demo", "report"),
    "evaluate": ("run models on the test set, its attacked versions and NRB/WTS, then report", "evaluate"),
    "study": ("many systems on many datasets, several runs each, with cross-dataset tables", "study"),
    "explain": ("what a result key or glossary term means; no key: the glossary", "tools"),
    "space": ("serve a metric's Gradio app on 127.0.0.1, or write a folder a Hugging Face "
              "Space runs as it is (the spaces extra)", "tools"),
}


# What a terminal obeys rather than shows: C0 and C1 controls (an escape sequence moves the
# cursor, retitles the window, writes the clipboard) and the bidi overrides that reorder a line.
# Line breaks and tabs are text; a carriage return only redraws a line (the progress does).
_CONTROLS = {code: repr(chr(code))[1:-1] for code in (*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F),
                                                      *range(0x2066, 0x206A)) if chr(code) not in "\n\t\r"}


def printable(text: str) -> str:
    """``text`` as a terminal should show it: each control character as its escape (``\\x1b``).
    A type, a token or a system name comes from a file and reaches the terminal."""
    return text.translate(_CONTROLS)


class _Printable:
    """A terminal's text stream writing ``printable`` text (a pipe or a file gets the bytes as they are)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(printable(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _interrupted_outside_work(signum, frame) -> None:
    """Ctrl-C while the command loads or after it is done, when no file is being written:
    the one line and status of an interrupt, at once (during the work ``_run`` turns it into
    a KeyboardInterrupt, so that what is being written is cleaned up)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # closed, or interrupted in the middle of a write
            pass
    command = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in COMMANDS else "command"
    try:
        os.write(2, f"tough-ner {command}: interrupted\n".encode())
    except OSError:  # stderr closed: the status alone says it
        pass
    os._exit(130)


def _is_the_script() -> bool:
    """Whether this process is the tough-ner script: not a program importing the package, nor a
    worker that multiprocessing's "spawn" started from the script (it runs the script's imports
    again, with its command line)."""
    program = (getattr(sys, "argv", None) or [""])[0]
    # a spawned worker imports the script while it is being prepared: named, but without a parent yet
    worker = "multiprocessing" in sys.modules and sys.modules["multiprocessing"].current_process().name != "MainProcess"
    return os.path.splitext(os.path.basename(program))[0] == "tough-ner" and not worker


# Installed first thing in the tough-ner script, so that a Ctrl-C while the rest of the command
# loads (argparse, then a command group and numpy) gets the one line too.
if _is_the_script():
    signal.signal(signal.SIGINT, _interrupted_outside_work)

import argparse  # noqa: E402 -- after the handler: its import is inside the window it covers
import importlib  # noqa: E402
import warnings  # noqa: E402
from typing import List, Optional  # noqa: E402

from . import _process  # noqa: E402

# The commands that read CoNLL files take the reader's limits (core.corpus.ReadLimits) as options.
READ_LIMITS = {"line": "1 MiB", "sentence": "64 MiB", "file": "4 GiB"}  # ReadLimits' defaults (tested)
READS_FILES = ("hardeval", "tmr", "buckets", "nrb", "attack", "rockner", "describe", "stats", "report", "evaluate",
               "study")


class Terminated(BaseException):
    """SIGTERM, raised where the command is, so that what it was writing is cleaned up (a
    BaseException, like KeyboardInterrupt: no ``except Exception`` swallows it)."""


def main(argv: Optional[List[str]] = None, as_command: Optional[bool] = None) -> int:
    """Run the command line ``argv``; its exit status.  ``as_command``: this process is the
    command (``tough-ner``, ``python -m tough_ner.cli``), so _process's settings apply and it ends
    the process itself; by default, when the program is the ``tough-ner`` script."""
    if as_command is None:
        as_command = _is_the_script()
    if as_command:
        signal.signal(signal.SIGINT, _interrupted_outside_work)  # python -m tough_ner.cli: from here
        _process.at_start()  # before a command group loads numpy
        signal.signal(signal.SIGTERM, _terminate)
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv and argv[0] in COMMANDS else "command"
    try:  # Ctrl-C while the command's modules load: the same one line as later
        parser = _parser(argv)
    except KeyboardInterrupt:
        code = _fail(command, "interrupted", 130)
    except Terminated:
        code = _fail(command, "terminated", 143)
    else:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # the command's usage, not the list of commands
            (parser.commands.get(args.command) or parser).error(f"unrecognized arguments: {' '.join(unknown)}")
        args.argv = ["tough-ner", *argv]  # the command line as run, for the report's provenance
        args.as_command = as_command  # --dask (stats, study) gives the workers the command's memory setting
        if as_command and args.command != "space":  # a server runs for long
            _process.keep_freed_memory()
        code = _run(args)
    if as_command:
        signal.signal(signal.SIGINT, _interrupted_outside_work)  # done: nothing left to clean up
        _process.exit_now(code)
    return code


def _parser(argv: List[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tough-ner", description="Where NER models fail, not just their F1.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    # Only the command being run is built and its group imported (every other one is for --help
    # and errors): each parser looks for argparse's translations on disk, ~7 ms for all of them.
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    parser.commands = {}
    for name, (help_text, group) in COMMANDS.items():
        if chosen in (None, name):
            module = importlib.import_module(f".{group}", __name__)
            command = parser.commands[name] = commands.add_parser(name, help=help_text)
            module.ARGUMENTS[name](command)
            if name in READS_FILES:
                _limit_flags(command)
    return parser


def _limit_flags(p) -> None:
    limits = p.add_argument_group("read limits", "a file, line or sentence beyond its limit is refused as it is read, "
                                                 "in one line naming the limit; sizes in bytes, or with K, M or G")
    for name, default in READ_LIMITS.items():
        limits.add_argument(f"--max-{name}-bytes", type=_size, metavar="SIZE",
                            help=f"the longest {name}{' read whole (test, predictions)' if name == 'file' else ''} "
                                 f"(default {default})")


def _size(text: str) -> int:
    """``1048576``, ``512K``, ``4M``, ``2G`` (binary units): bytes, at least 1."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    number, unit = (text[:-1], units[text[-1].upper()]) if text[-1:].upper() in units else (text, 1)
    try:
        value = int(number) * unit
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a size in bytes such as 1048576, 512K, 4M or 2G")
    return value


def _terminate(signum, frame):
    raise Terminated()


def _run(args) -> int:
    """Run the parsed command: its exit status, errors as one line on stderr."""
    status, stdout = None, sys.stdout
    try:
        if signal.getsignal(signal.SIGINT) is _interrupted_outside_work:  # the work may write: Ctrl-C raises
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if stdout is not None and stdout.isatty():
            sys.stdout = _Printable(stdout)
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # shown, once per place, whatever filters a caller set,
            for hidden in (DeprecationWarning, PendingDeprecationWarning, ResourceWarning):  # but what Python's
                warnings.simplefilter("ignore", hidden)  # own filters hide: notes for libraries' authors
            warnings.showwarning = lambda message, category, *rest, **kw: print(
                printable(f"tough-ner {args.command}: warning: {message}"), file=sys.stderr)
            changes = {name: getattr(args, f"max_{name}_bytes", None) for name in READ_LIMITS}
            changes = {name: value for name, value in changes.items() if value is not None}
            if changes:
                from ..core.corpus import limits

                with limits(**changes):
                    status = args.run(args)
            else:
                status = args.run(args)
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (ValueError, TypeError) as error:
        return _fail(args.command, error, 2)
    except ImportError as error:  # an optional extra that is not installed: the message names it
        return _fail(args.command, error, 2)
    except OSError as error:  # no such file, permission, a directory, disk full ...
        return _fail(args.command, _os_message(error), 2)
    except MemoryError:
        return _fail(args.command, "out of memory (try a smaller input or fewer options, e.g. --bootstrap 0)", 2)
    except KeyboardInterrupt:
        return _fail(args.command, "interrupted", 130)
    except Terminated:
        return _fail(args.command, "terminated", 143)
    finally:
        sys.stdout = stdout
    return status or 0  # a command returns a status only to say more than success (report --rerun)


def _fail(command: str, message, code: int) -> int:
    """One line on stderr, never a traceback; ``code`` is the exit status."""
    text = " ".join(str(message).split()) or type(message).__name__
    print(printable(f"tough-ner {command}: {text[:1000]}"), file=sys.stderr)
    return code


def _os_message(error: OSError) -> str:
    """``report.html: Permission denied`` rather than ``[Errno 13] Permission denied: 'report.html'``."""
    if error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    return error.strerror or str(error)

