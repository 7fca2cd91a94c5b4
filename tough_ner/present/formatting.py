"""How a number and an interval are written in every text view (the CLI, the report's tables,
the HTML page, the Spaces).  Its own module, without imports of the methods, so that a command
printing one method's result does not load them all."""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Iterable


def format_value(value) -> str:
    """A number as shown in tables: 4 decimals for floats, ``nan`` for NaN."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_interval(ci) -> str:
    """``[0.8012, 0.8234]``, or an empty string when there is no interval."""
    if not ci or any(isinstance(v, float) and math.isnan(v) for v in ci):
        return ""
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def row_label(row: Mapping) -> str:
    """A headline row's name as every view writes it: with its bucket (``worst eLen bucket (1
    token)``) or the attacked set its values are of (``F1 attacked (entity 1)``)."""
    where = row.get("bucket") or row.get("set")
    return row["label"] + (f" ({where})" if where else "")


def format_p(p: float) -> str:
    """``= 0.004``, ``= 2.5e-08`` (below 0.001, where an adjusted p is compared with a small
    alpha / m) or ``= nan``."""
    return "= nan" if math.isnan(p) else (f"= {p:.3f}" if p >= 0.001 else f"= {p:.1e}")


def describe_test(test: Mapping) -> str:
    """A one-line reading of a test: ``+0.0170 [0.0060, 0.0290], p = 0.004 (Holm = 0.012)``."""
    low, high = test["ci"]
    p, adjusted = test["p_value"], test.get("p_adjusted", math.nan)
    difference = round(test["difference"], 4) + 0.0  # no "-0.0000"
    interval = "[no interval]" if math.isnan(low) else f"[{low:.4f}, {high:.4f}]"
    text = f"{difference:+.4f} {interval}, p {format_p(p)}"
    return text + (f" (Holm {format_p(adjusted)})" if not math.isnan(adjusted) else "")


def _json_scalar(item) -> str:
    """A value that holds no other as strict JSON: NaN as null, an infinite bucket bound as
    "inf" / "-inf" (strict JSON has no Infinity)."""
    if isinstance(item, str):
        return _json_string(item)
    if item is None or item is True or item is False:
        return {None: "null", True: "true", False: "false"}[item]
    if isinstance(item, float):
        if math.isnan(item):
            return "null"
        return ('"inf"' if item > 0 else '"-inf"') if math.isinf(item) else float.__repr__(item)
    if isinstance(item, int):
        return int.__repr__(item)
    raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")


def _json_key(key) -> str:
    """A mapping's key as JSON writes it: a string; a number, true, false or null as its text."""
    return _json_string(key) if isinstance(key, str) else _json_string(_json_scalar(key).strip('"'))


_json_string = json.encoder.py_encode_basestring if json.encoder.c_encode_basestring is None \
    else json.encoder.c_encode_basestring  # JSON's quoting of a string, characters beyond ASCII kept


_SCALAR_TYPES = (str, int, float, type(None))  # bool is an int
_NO_TABLE = _SCALAR_TYPES + (bytes, bytearray)  # sequences, but not of rows: an error, as before


def _json_parts(item, depth: int):
    """The pieces of ``item``'s indented JSON at ``depth``, made as they are written: a table
    without tables inside is one piece, a larger one its entries' pieces in turn.  A mapping or
    sequence other than a dict or list (``core.rows``: rows made as they are read) is written as
    one, its rows made one at a time."""
    inner = "\n" + "  " * (depth + 1)
    if isinstance(item, dict):
        entries = [(_json_key(key) + ": ", value) for key, value in item.items()]
        opening, closing = "{", "}"
    elif isinstance(item, (list, tuple)):
        entries, opening, closing = [("", value) for value in item], "[", "]"
    elif isinstance(item, _NO_TABLE) or not isinstance(item, (Mapping, Sequence)):
        yield _json_scalar(item)
        return
    else:
        opening, closing = ("{", "}") if isinstance(item, Mapping) else ("[", "]")
        entries = ((_json_key(key) + ": ", value) for key, value in item.items()) if isinstance(item, Mapping) \
            else (("", value) for value in item)
        first = next(entries, None)
        if first is not None and isinstance(first[1], _SCALAR_TYPES):
            entries = [first, *entries]  # maybe a table without tables inside: written as one
        else:
            entries = [] if first is None else chain([first], entries)  # rows: a table inside
    if not entries:
        yield opening + closing
    elif isinstance(entries, list) and all(isinstance(value, _SCALAR_TYPES) for _, value in entries):
        yield opening + inner + ("," + inner).join(name + _json_scalar(value) for name, value in entries) \
            + "\n" + "  " * depth + closing
    else:
        for i, (name, value) in enumerate(entries):
            yield ("," if i else opening) + inner + name
            yield from _json_parts(value, depth + 1)
        yield "\n" + "  " * depth + closing


def to_json(value) -> str:
    """Indented JSON of a result: NaN as null, infinite bucket bounds as "inf" / "-inf"."""
    return "".join(json_pieces(value))


def json_pieces(value):
    """``to_json``'s text in pieces, made while they are written, from the result itself: no
    JSON-ready copy of it and no text held whole (20,000 types' report for two systems: 171 MB
    of text, its copy 100 MB)."""
    return _json_parts(value, 0)


# A spreadsheet evaluates a cell starting with one of these (OWASP: CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value):
    """A CSV cell a spreadsheet shows as it is: text starting with ``FORMULA_STARTS`` behind a
    ``'``; numbers (and None, as an empty cell) unchanged."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(columns: Sequence[str], rows: Iterable[Sequence]) -> str:
    """The one CSV writer (error tables, exported tables): a header, then the rows, every cell
    through ``spreadsheet_cell``: text a spreadsheet would evaluate as a formula gets a leading
    ``'`` (OWASP's rule against CSV injection), even when it reads as a number (an entity whose
    text is ``-5`` is text); numbers are written as numbers, never prefixed (their minus is a
    sign, not a formula), so numeric columns stay numeric; None is an empty cell."""
    return "".join(csv_pieces(columns, rows))


def csv_pieces(columns: Sequence[str], rows: Iterable[Sequence], rows_at_once: int = 10_000):
    """``csv_text`` in pieces of ``rows_at_once`` rows, for writing a large table without
    holding its text whole (a Space's error table of a 10 MB paste: 180 MB as one text)."""
    import csv
    import io

    buffer = io.StringIO()
    # Rows end with CRLF (RFC 4180) so that a cell holding a lone CR is quoted: with "\n" the
    # writer left it bare, and a spreadsheet started a new row there.
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([spreadsheet_cell(value) for value in columns])
    for count, row in enumerate(rows, 1):
        writer.writerow([spreadsheet_cell(value) for value in row])
        if count % rows_at_once == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
