"""Small shared helpers."""
from __future__ import annotations

import errno
import gc
import os
import stat
from contextlib import contextmanager, suppress


@contextmanager
def no_gc():
    """Pause the cyclic garbage collector while building many acyclic lists: its scans
    otherwise triple the time of reading a large corpus."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, data) -> None:
    """Write ``data`` (text as UTF-8, bytes, or text in pieces: an iterable of strings, never
    held whole) to ``path`` so that a kill or an error mid-write leaves
    the previous file intact: write a temporary file in the same folder, flush it to disk, then
    rename it into place (``os.replace`` is atomic on one file system).  A symbolic link is
    followed (its target is replaced); a path that is not a regular file (``/dev/stdout``, a
    pipe) is written directly, since it cannot be renamed over."""
    target = os.path.realpath(os.fspath(path))
    pieces = [data] if isinstance(data, (str, bytes)) else data

    def write(handle):
        held, size = [], 0
        for piece in pieces:  # small pieces (an encoder's) joined a megabyte at a time
            held.append(piece.encode("utf-8") if isinstance(piece, str) else piece)
            size += len(held[-1])
            if size >= 1 << 20:
                handle.write(b"".join(held))
                held, size = [], 0
        handle.write(b"".join(held))

    if os.path.exists(target) and not os.path.isfile(target):
        if os.path.isdir(target):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
        with _named(path), open(target, "wb") as handle:
            write(handle)
        return
    folder, name = os.path.split(target)
    if not os.path.isdir(folder):  # named here, not by the temporary file mkstemp could not make
        raise FileNotFoundError(errno.ENOENT, f"no such folder {folder}", os.fspath(path))
    mode = stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else 0o666 & ~_umask()
    import tempfile  # here: it loads random and shutil, ~3 ms of every command's start

    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with _named(path), os.fdopen(handle, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


@contextmanager
def _named(path):
    """An error writing (a full disk: no file name in it) names the file written."""
    try:
        yield
    except OSError as error:
        if error.filename is None and error.errno is not None:
            raise type(error)(error.errno, error.strerror, os.fspath(path)) from None
        raise


QUOTE = 200  # error messages quote at most this many characters of a line or value


def quote(value) -> str:
    """``repr`` of (at most the first 200 characters of) a value, for error messages."""
    text = value if isinstance(value, str) else str(value)
    return repr(text[:QUOTE]) + ("…" if len(text) > QUOTE else "")


def shown(value, limit: int = QUOTE) -> str:
    """``repr`` of any value (a span, a record), at most its first ``limit`` characters, for
    error messages; a string's own characters are ``quote``'s."""
    text = repr(value)
    return text[:limit] + ("…" if len(text) > limit else "")


def file_sha256(path) -> str:
    """The SHA-256 of a file's content (hex): how reports record their inputs and a model's source."""
    import hashlib  # here, not at start-up: it loads OpenSSL

    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()
