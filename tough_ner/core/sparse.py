"""Count columns stored as their nonzero entries, for tables with very many mostly-zero columns.

Bucket F1 keeps three or four count columns per bucket, and a bucket per entity type: as a dense
(sentences x columns) table that is sentences x types (20,000 types in 20,000 sentences: 9.6
GB).  Each entity or token adds to one bucket per attribute, so the nonzero entries are at most
the items times the attributes: stored as entries, memory and work follow the input's size.

Whole-number values (counts, and halves for partial credits) sum exactly in any order, so every
sum taken here equals the dense table's to the last bit; other values (means over runs) may
differ in the last bit.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

# Entries gathered at once in ``weighted_sums``: resamples x entries floats, 16 MB.
GATHER = 1 << 21
SHORT = 16  # columns with at most this many entries are summed entry by entry, many columns at once


def compact_counts(values: np.ndarray) -> np.ndarray:
    """Whole non-negative counts as the smallest unsigned integers that hold them (the same
    numbers in an eighth of the memory, as a rule: a test set's counts are its size in memory,
    a statistics part's its size on the wire); other values (partial credits, means) as they
    are."""
    if not len(values) or not values.min() >= 0 or values.max() >= 2 ** 32 or not (values % 1 == 0).all():
        return values
    return values.astype(np.min_scalar_type(int(values.max())))


def _index_type(n_rows: int, width: int):
    """Rows and columns as 32-bit integers when they fit: an entry is then 16 bytes, not 24."""
    return np.int32 if max(n_rows, width) < 2 ** 31 else np.int64


class Entries:
    """Columns ``0 .. width-1`` over ``n_rows`` rows as nonzero entries sorted by column, then
    row: entry ``e`` is ``values[e]`` at ``(rows[e], column_of[e])``, and column ``j``'s entries
    are ``starts[j]:starts[j + 1]``."""

    def __init__(self, n_rows: int, width: int, columns, rows, values):
        """Entries in any order; those at the same place are summed in the order given."""
        columns = np.asarray(columns, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        values = np.asarray(values, dtype=float)
        place = columns * max(n_rows, 1) + rows
        if not (place[1:] > place[:-1]).all():  # not already in order, each place once: sort, sum
            order = np.argsort(place, kind="stable")
            place = place[order]
            first = np.ones(len(place), dtype=bool)
            first[1:] = place[1:] != place[:-1]
            if first.all():
                values = values[order]
            else:
                values = np.bincount(np.cumsum(first) - 1, weights=values[order])  # in the order given
                place = place[first]
        if not values.all():
            kept = values != 0
            place, values = place[kept], values[kept]
        self.values = values
        self.n_rows, self.width = n_rows, width
        index = _index_type(n_rows, width)
        self.column_of, self.rows = (part.astype(index, copy=False) for part in np.divmod(place, max(n_rows, 1)))
        self.starts = np.zeros(width + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.column_of, minlength=width), out=self.starts[1:])

    def __len__(self) -> int:
        return len(self.values)

    @classmethod
    def side_by_side(cls, parts: Sequence["Entries"]) -> "Entries":
        """The parts' columns one after the other (same rows)."""
        offsets = np.cumsum([0] + [part.width for part in parts])
        return cls.joined(parts[0].n_rows, int(offsets[-1]), [(part, offset) for part, offset in zip(parts, offsets)])

    @classmethod
    def joined(cls, n_rows: int, width: int, parts: list) -> "Entries":
        """Parts ``(entries, first column)`` holding columns of their own, in column order, as
        one: copied into place without sorting again, each part dropped from ``parts`` once
        copied (memory: the result and one part, not every part twice)."""
        size = sum(len(part) for part, _ in parts)
        out = cls.__new__(cls)
        out.n_rows, out.width = n_rows, width
        index = _index_type(n_rows, width)
        out.column_of, out.rows = np.empty(size, dtype=index), np.empty(size, dtype=index)
        out.values = np.empty(size)
        at = 0
        while parts:
            part, offset = parts.pop(0)
            end = at + len(part)
            np.add(part.column_of, offset, out=out.column_of[at:end])
            out.rows[at:end], out.values[at:end] = part.rows, part.values
            at = end
        out.starts = np.zeros(width + 1, dtype=np.int64)
        np.cumsum(np.bincount(out.column_of, minlength=width), out=out.starts[1:])
        return out

    def totals(self) -> np.ndarray:
        """Each column's total."""
        return np.bincount(self.column_of, weights=self.values, minlength=self.width)

    def row_sums(self, column_weights: np.ndarray) -> np.ndarray:
        """Each row's entries times their column's weight, summed (``dense @ column_weights``)."""
        return np.bincount(self.rows, weights=self.values * column_weights[self.column_of], minlength=self.n_rows)

    def column(self, j: int):
        """Column ``j``'s (rows, values)."""
        start, end = self.starts[j], self.starts[j + 1]
        return self.rows[start:end], self.values[start:end]

    def positions(self, columns: np.ndarray):
        """(the places of the columns' entries, column after column; for each, which of
        ``columns`` it belongs to)."""
        lengths = self.starts[columns + 1] - self.starts[columns]
        before = np.cumsum(lengths) - lengths
        return (np.repeat(self.starts[columns] - before, lengths) + np.arange(lengths.sum()),
                np.repeat(np.arange(len(columns)), lengths))

    def weighted_sums(self, weights: np.ndarray, columns: Sequence[int]) -> np.ndarray:
        """``weights.T @ dense[:, columns]``, (resamples, columns), from the entries; ``weights``:
        (rows, resamples) of any number type, so each entry reads one contiguous row.  Work:
        resamples x entries of those columns; memory at most ``GATHER`` numbers besides."""
        columns = np.asarray(columns, dtype=np.int64)
        n_resamples = weights.shape[1]
        out = np.zeros((len(columns), n_resamples))
        lengths = self.starts[columns + 1] - self.starts[columns]
        step = max(1, GATHER // max(n_resamples, 1))
        # Whole weights (counts of draws) times whole values sum exactly as integers, the fastest
        # way; any sum of one resample's weights is at most the units drawn.
        whole = weights.dtype.kind in "ui" and self.n_rows < 2 ** 32
        # Most columns have an entry or two (a bucket per entity type): those of one length are
        # summed together, entry by entry; a long column a value at a time, a piece at a time.
        for length in np.unique(lengths[(lengths > 0) & (lengths <= SHORT)]).tolist():
            which = np.flatnonzero(lengths == length)
            for start in range(0, len(which), step):
                chosen = which[start:start + step]
                first = self.starts[columns[chosen]]
                values = self.values[first[:, None] + np.arange(length)]
                if whole and (values == 1).all():  # counts of one item each: sums of weights
                    total = weights[self.rows[first]].astype(np.uint32)
                    for k in range(1, length):
                        total += weights[self.rows[first + k]]
                else:
                    total = weights[self.rows[first]] * values[:, :1]  # floats, whatever the weights' type
                    for k in range(1, length):
                        total += weights[self.rows[first + k]] * values[:, k:k + 1]
                out[chosen] = total
        for j in np.flatnonzero(lengths > SHORT).tolist():
            rows, values = self.column(columns[j])
            distinct = np.unique(values)
            if whole and len(distinct) <= SHORT and (distinct == np.round(distinct)).all():
                for value in distinct.tolist():
                    same = rows[values == value]
                    for start in range(0, len(same), step):
                        out[j] += value * np.add.reduce(weights[same[start:start + step]], axis=0, dtype=np.uint32)
            else:
                for start in range(0, len(rows), step):
                    out[j] += values[start:start + step] @ weights[rows[start:start + step]]
        return out.T
