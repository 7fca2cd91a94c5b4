"""Many rows of one shape kept as columns: a report's tables of one row per entity type.

A row is a dict of numbers (and lists of them, and dicts of those); 20,000 types make 20,000
dicts per table, about 1 KB each as Python objects, where their numbers take 8 bytes or fewer
each in a column.  ``Rows`` keeps every place of the shape (a key of a dict, a position of a
list) as one column (an ``array`` of floats, or of ints in the fewest bytes that hold them, when
every value there is one, else the values as they are) and makes a row anew, equal to the one
given, each time it is read.  ``Keyed`` is the same rows by name (a mapping, as a dict of rows).
Both are read-only: a change to a row read from them is not kept (``Rows.with_field`` makes the
rows with a field added).
"""
from __future__ import annotations

from array import array
from collections.abc import ItemsView, Mapping, Sequence, ValuesView
from functools import lru_cache, reduce
from itertools import islice
from operator import itemgetter
from typing import Any, Iterable, List, Optional, Tuple

LEAF = None  # a place kept as one column (a number, a string, or anything not the same shape in every row)


def _shape(value) -> Any:
    """The shape of one value: ``(type, keys, shapes of the parts)`` for a dict, list or tuple, else LEAF."""
    kind = type(value)
    if kind is dict:
        return dict, tuple(value), tuple(_shape(part) for part in value.values())
    if kind is list or kind is tuple:
        return kind, None, tuple(_shape(part) for part in value)
    return LEAF


def _common(shape, value) -> Any:
    """The shape both ``shape`` and ``value`` have: a place where they differ (other keys, another
    length, another type) is a LEAF."""
    if shape is LEAF:
        return LEAF
    kind, keys, parts = shape
    if type(value) is not kind or len(value) != len(parts) or (kind is dict and tuple(value) != keys):
        return LEAF
    nested = _nested(shape)
    if not nested:  # a row of numbers: its keys were all to compare
        return shape
    items = list(value.values()) if kind is dict else value
    common = list(parts)
    for i in nested:
        common[i] = _common(parts[i], items[i])
    return shape if all(common[i] is parts[i] for i in nested) else (kind, keys, tuple(common))


@lru_cache(maxsize=None)
def _nested(shape) -> Tuple[int, ...]:
    """The places of a shape's parts that are not LEAF (a list or dict in every row)."""
    return tuple(i for i, part in enumerate(shape[2]) if part is not LEAF)


def _numbered(shape, start: int = 0):
    """(the shape with each LEAF replaced by its column's number, counting from ``start``; the next number)."""
    if shape is LEAF:
        return start, start + 1
    kind, keys, parts = shape
    numbered = []
    for part in parts:
        part, start = _numbered(part, start)
        numbered.append(part)
    return (kind, keys, tuple(numbered)), start


def _paths(shape, path=()) -> List[tuple]:
    """The keys or positions leading to each LEAF of ``shape``, in the order of their columns."""
    if shape is LEAF:
        return [path]
    kind, keys, parts = shape
    return [found for place, part in zip(keys if kind is dict else range(len(parts)), parts)
            for found in _paths(part, path + (place,))]


def _made(template, columns, i: int):
    """Row ``i``, made from the columns as ``template`` (a shape numbered by ``_numbered``) places them."""
    if type(template) is int:
        return columns[template][i]
    kind, keys, parts = template
    if kind is dict:
        return {key: _made(part, columns, i) for key, part in zip(keys, parts)}
    made = [_made(part, columns, i) for part in parts]
    return made if kind is list else tuple(made)


_CODES = {float: "d", int: "q"}  # exactly these types: a bool is kept as it is


class _Column:
    """A column as its values come: 8-byte ints or floats while each is exactly one (Python's
    ``int`` within 64 bits, ``float``; ``array`` gives them back as such), else a list."""
    __slots__ = ("values",)

    def __init__(self):
        self.values = None

    def extend(self, values: list) -> None:
        kinds = set(map(type, values))
        code = _CODES.get(kinds.pop()) if len(kinds) == 1 else None
        if self.values is None:
            self.values = array(code) if code else []
        elif type(self.values) is array and code != self.values.typecode:
            self.values = list(self.values)
        before = len(self.values)
        try:
            self.values.extend(values)
        except OverflowError:  # an int beyond 64 bits; array.extend kept the values before it
            self.values = list(self.values[:before]) + values

    def __getitem__(self, i):
        return self.values[i]

    def kept(self):
        """The values as kept: ints in the fewest bytes that hold them all (counts: one or two)."""
        if self.values is None:
            return []
        if type(self.values) is array and self.values.typecode == "q" and self.values:
            low, high = min(self.values), max(self.values)
            for code in "bhi":  # 1, 2 and 4 bytes
                bits = 8 * array(code).itemsize
                if -2 ** (bits - 1) <= low and high < 2 ** (bits - 1):
                    return array(code, self.values)
        return self.values


CHUNK = 4096  # rows from an iterator taken at a time, each place's values gathered at once


class Rows(Sequence):
    """The rows given, kept as columns; ``rows[i]`` makes row ``i`` anew (equal to the one given).
    Rows given as a list share the shape of them all; rows from an iterator are kept as they come
    (``CHUNK`` at a time beside the columns) while they have the first ones' shape."""

    def __init__(self, rows: Iterable = ()):
        given = isinstance(rows, (list, tuple))
        items = iter(rows)
        chunk = list(rows) if given else list(islice(items, CHUNK))
        shape = reduce(_common, chunk[1:], _shape(chunk[0])) if chunk else LEAF
        self._template, width = _numbered(shape)
        paths = _paths(shape)
        columns = [_Column() for _ in range(width)]
        count = 0
        while chunk:
            if not given and any(_common(shape, row) is not shape for row in chunk):
                # a row of another shape: all of them again, as a list, in the shape they all share
                self.__init__([_made(self._template, columns, i) for i in range(count)] + chunk + list(items))
                return
            for column, path in zip(columns, paths):
                values = chunk
                for place in path:
                    values = map(itemgetter(place), values)
                column.extend(list(values))
            count += len(chunk)
            chunk = [] if given else list(islice(items, CHUNK))
        self._columns, self._length = [column.kept() for column in columns], count

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._length))]
        if not -self._length <= i < self._length:
            raise IndexError(f"row {i} of {self._length}")
        return _made(self._template, self._columns, i % self._length)

    def __iter__(self):
        template, columns = self._template, self._columns
        return (_made(template, columns, i) for i in range(self._length))

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"Rows({self._length} rows)"

    def with_field(self, name: str, values: Iterable) -> "Rows":
        """These rows (dicts) with ``name`` added last, row ``i``'s value ``values[i]``."""
        values = list(values)
        if len(values) != self._length:
            raise ValueError(f"{len(values)} values of {name!r} for {self._length} rows")
        if type(self._template) is int or self._template[0] is not dict or name in self._template[1]:
            # rows of other keys (a dict a column as it is), or not dicts (an error here)
            return Rows([{**row, name: value} for row, value in zip(self, values)])
        added = Rows(values)
        shifted, _ = _numbered(_unnumbered(added._template), len(self._columns))
        out = Rows()
        out._length, out._columns = self._length, self._columns + added._columns
        out._template = (dict, self._template[1] + (name,), self._template[2] + (shifted,))
        return out


def _unnumbered(template):
    if type(template) is int:
        return LEAF
    kind, keys, parts = template
    return kind, keys, tuple(_unnumbered(part) for part in parts)


class Keyed(Mapping):
    """Rows by name, as a dict of rows read-only: ``table[name]`` makes that row anew."""

    def __init__(self, table: Optional[Mapping] = None, names: Iterable = (), rows: Optional[Rows] = None):
        """``Keyed(a_dict)``, or ``Keyed(names=..., rows=...)``: the names of the rows in order."""
        if table is not None:
            names, rows = list(table), Rows(list(table.values()))
        self._names = list(names)
        self.rows = rows if rows is not None else Rows()
        if len(self.rows) != len(self._names):
            raise ValueError(f"{len(self._names)} names for {len(self.rows)} rows")
        self._index: Optional[dict] = None  # made when a row is first asked for by name

    def __getitem__(self, name):
        if name not in self:  # the index by name, made here the first time
            raise KeyError(name)
        return self.rows[self._index[name]]

    def __contains__(self, name) -> bool:
        if self._index is None:
            self._index = {key: i for i, key in enumerate(self._names)}
        return name in self._index

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def items(self):
        return _Items(self)

    def values(self):
        return _Values(self)

    def __repr__(self) -> str:
        return f"Keyed({len(self)} rows)"


class _Items(ItemsView):
    def __iter__(self):  # in order, without the index by name
        return zip(self._mapping._names, self._mapping.rows)


class _Values(ValuesView):
    def __iter__(self):
        return iter(self._mapping.rows)


def plain(value):
    """For ``json.dumps(results, default=plain)``: a table of rows as the dict or list it stands
    for (``formatting.to_json``, which writes every report, needs no help)."""
    if isinstance(value, Keyed):
        return dict(value.items())
    if isinstance(value, Rows):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
