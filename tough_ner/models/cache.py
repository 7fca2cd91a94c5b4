"""Predictions kept on disk, keyed by model, split and input, so that a rerun is free and a
crash resumes.

An entry is a JSON Lines file: a header (what the key is made of, the number of sentences),
then one line per chunk of predictions in order, each flushed as it is made.  While a split
runs, the file is ``<entry>.partial`` and held with an exclusive lock; a complete one is
renamed into place.  A run that died leaves a partial file whose complete lines are kept (a
line cut by the crash is dropped) and the next run starts after them.  Only models with an
identity (loaded from a spec: a folder's files, a package's version, a module's source) are
cached; the identity, the split's name and a digest of its tokens make the key.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any, List, Optional, Sequence

# Bumped when the runner changes what a model's raw predictions are.
RUNNER_VERSION = 1


def default_folder() -> str:
    """``$TOUGH_NER_CACHE``, else ``$XDG_CACHE_HOME/tough-ner/predictions`` (``~/.cache`` by default)."""
    if os.environ.get("TOUGH_NER_CACHE"):
        return os.environ["TOUGH_NER_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tough-ner", "predictions")


def digest(value: Any) -> str:
    """SHA-256 of a JSON value written canonically (sorted keys, no ASCII escapes)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def slug(text: str) -> str:
    """A file-name-safe form of a name (letters, digits, ``.``, ``_`` and ``-``)."""
    kept = "".join(c if c.isalnum() or c in "._-" else "-" for c in text).strip("-.")
    return kept[:60] or "x"


class Entry:
    """One model's predictions for one split, on disk."""

    def __init__(self, folder: str, model_identity: dict, split: str, tokens: Sequence[Sequence[str]]):
        self.header = {"runner": RUNNER_VERSION, "model": model_identity, "split": split,
                       "input": digest([list(words) for words in tokens]), "sentences": len(tokens)}
        key = digest(self.header)
        place = os.path.join(folder, f"{slug(model_identity.get('name', 'model'))}-{digest(model_identity)[:12]}")
        self.path = os.path.join(place, f"{slug(split)}-{key[:16]}.jsonl")
        self.partial = self.path + ".partial"
        self._handle = None

    def load(self) -> Optional[List[Any]]:
        """Every sentence's prediction when the entry is complete, else None."""
        if not os.path.isfile(self.path):
            return None
        with open(self.path, "rb") as handle:
            predictions, _ = self._read(handle)
        if predictions is None or len(predictions) != self.header["sentences"]:
            return None  # another key's file or a damaged one: predicted again
        return predictions

    def resume(self) -> List[Any]:
        """Open the partial file for this run (locked) and return the predictions it already
        holds; a line cut by a crash is removed."""
        os.makedirs(os.path.dirname(self.partial), exist_ok=True)
        handle = open(self.partial, "a+b")  # bytes: offsets to cut a damaged line at
        try:
            _lock(handle, self.partial)
            handle.seek(0)
            predictions, good = self._read(handle)
            if predictions is None:  # empty, or not this entry's: start afresh
                predictions, good = [], 0
            handle.seek(good)
            handle.truncate()
            if not good:
                handle.write(_line(self.header))
                handle.flush()
        except BaseException:
            handle.close()
            raise
        self._handle = handle
        return predictions

    def append(self, start: int, predictions: Sequence[Any]) -> None:
        """Add a chunk (its first sentence's index and its predictions), handed to the system at
        once: a killed run keeps it.  Not synced to the disk: a line a power cut damages is
        dropped by the next run, which predicts it again."""
        self._handle.write(_line({"start": start, "predictions": list(predictions)}))
        self._handle.flush()

    def finish(self) -> None:
        """The partial file becomes the entry."""
        self.close()
        os.replace(self.partial, self.path)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()  # releases the lock
            self._handle = None

    def _read(self, handle):
        """(predictions of the complete chunk lines that follow this entry's header, or None
        when the header is not this entry's; the byte offset after the last good line)."""
        line = handle.readline()
        try:
            if json.loads(line) != self.header:
                return None, 0
        except ValueError:  # not JSON, or not UTF-8
            return None, 0
        predictions: List[Any] = []
        good = handle.tell()
        while True:
            line = handle.readline()
            if not line.endswith(b"\n"):  # end of file, or a line the crash cut short
                break
            try:
                chunk = json.loads(line)
            except ValueError:
                break
            if not isinstance(chunk, dict) or chunk.get("start") != len(predictions) \
                    or not isinstance(chunk.get("predictions"), list):
                break
            predictions += chunk["predictions"]
            good = handle.tell()
        return predictions, good


def _line(value) -> bytes:
    return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")


def _lock(handle, path: str) -> None:
    """An exclusive lock on an open partial file: two runs never write one entry."""
    try:
        import fcntl
    except ImportError:  # not on this system (Windows): no lock
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise ValueError(f"{path} is being written by another run of the same model on the same split: wait for "
                         f"it, or give this run another cache folder") from None
