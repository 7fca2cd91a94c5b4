"""The ``tough-ner`` command: a thin dispatcher.  Each command group is a module of this
package (methods, attack, report, tools; shared helpers in _common), imported only when one of
its commands runs, after the process settings of ``_process``."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from typing import List, Optional

from .. import _process

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
    "explain": ("what a result key or glossary term means; no key: the glossary", "tools"),
    "space": ("serve a metric's Gradio app on 127.0.0.1, or write a folder a Hugging Face "
              "Space runs as it is (the spaces extra)", "tools"),
}


def main(argv: Optional[List[str]] = None, as_command: Optional[bool] = None) -> int:
    """Run the command line ``argv``; its exit status.  ``as_command``: this process is the
    command (``tough-ner``, ``python -m tough_ner.cli``), so _process's settings apply and it ends
    the process itself; by default, when the program is the ``tough-ner`` script."""
    if as_command is None:
        as_command = os.path.splitext(os.path.basename(sys.argv[0]))[0] == "tough-ner"
    if as_command:
        _process.at_start()  # before a command group loads numpy
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="tough-ner", description="Where NER models fail, not just their F1.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    # Only the command being run is built and its group imported (every other one is for --help
    # and errors): each parser looks for argparse's translations on disk, ~7 ms for all of them.
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    for name, (help_text, group) in COMMANDS.items():
        if chosen in (None, name):
            module = importlib.import_module(f".{group}", __name__)
            module.ARGUMENTS[name](commands.add_parser(name, help=help_text))

    args = parser.parse_args(argv)
    if as_command and args.command != "space":  # a server runs for long
        _process.keep_freed_memory()
    code = _run(args)
    if as_command:
        _process.exit_now(code)
    return code


def _run(args) -> int:
    """Run the parsed command: its exit status, errors as one line on stderr."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # shown, once per place, whatever filters a caller set
            warnings.showwarning = lambda message, category, *rest, **kw: print(
                f"tough-ner {args.command}: warning: {message}", file=sys.stderr)
            args.run(args)
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
    return 0


def _fail(command: str, message, code: int) -> int:
    """One line on stderr, never a traceback; ``code`` is the exit status."""
    text = " ".join(str(message).split()) or type(message).__name__
    print(f"tough-ner {command}: {text[:1000]}", file=sys.stderr)
    return code


def _os_message(error: OSError) -> str:
    """``report.html: Permission denied`` rather than ``[Errno 13] Permission denied: 'report.html'``."""
    if error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    return error.strerror or str(error)

