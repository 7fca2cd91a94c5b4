"""Rows kept as columns (core.rows): every row read back as given, and written as JSON as the
dicts and lists were, to the byte (a report's JSON must not change with its layout)."""
import math

import pytest
from hypothesis import example, given, settings, strategies as st

import tough_ner.core.rows as rows_module
from tough_ner.core.rows import Keyed, Rows
from tough_ner.present.formatting import to_json

scalars = st.one_of(st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=False), st.just(math.nan), st.none(),
                    st.booleans(), st.text(max_size=3))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
    st.sampled_from("abc"), inner, max_size=3)), max_leaves=8)
# Rows mostly of one shape, as a table's are, with some that differ in a place or as a whole.
row_lists = st.one_of(st.lists(values, max_size=6), st.lists(st.fixed_dictionaries(
    {"interval": st.text(max_size=2), "n": st.integers(0, 9), "f1": st.floats(), "ci": st.lists(st.floats(), min_size=2,
                                                                                                 max_size=2),
     "best": st.lists(st.sampled_from("ab"), max_size=2)}), max_size=6))


def same(a, b) -> bool:
    """Equal, NaN equal to NaN, and of the same types throughout (1 is not 1.0 nor True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return (isinstance(a, float) and math.isnan(a) and math.isnan(b)) or a == b


@settings(max_examples=300, deadline=None)
@given(row_lists)
@example([1, 2, 2 ** 64, 5])  # an int beyond 64 bits after some that fit: array.extend kept those
@example([{"n": 1}, {"n": 2 ** 70}])
@example([3, -2 ** 63 - 1])
def test_rows_read_back_as_given_and_write_the_same_json(rows):
    kept = Rows(rows)
    chunk, rows_module.CHUNK = rows_module.CHUNK, 2  # as they come, a few at a time (another shape: again)
    try:
        streamed = Rows(iter(rows))
    finally:
        rows_module.CHUNK = chunk
    for table in (kept, streamed):
        assert len(table) == len(rows) and all(same(a, b) for a, b in zip(table, rows))
    assert all(same(kept[i], rows[i]) for i in range(-len(rows), len(rows)))
    keyed = Keyed({f"T{i}": row for i, row in enumerate(rows)})
    assert list(keyed) == [f"T{i}" for i in range(len(rows))] and all(same(keyed[f"T{i}"], row)
                                                                     for i, row in enumerate(rows))
    assert to_json({"rows": kept, "by": keyed, "streamed": streamed}) == \
        to_json({"rows": rows, "by": dict(zip(keyed, rows)), "streamed": rows})


def test_rows_of_numbers_are_kept_as_arrays_ints_in_the_fewest_bytes():
    rows = [{"interval": f"T{i}", "n": i, "gold": i % 100, "big": 2 ** 40 + i, "f1": i / 3, "ci": [0.0, i / 7]}
            for i in range(1000)]
    kept = Rows(rows)
    assert [column.typecode for column in kept._columns[1:]] == ["h", "b", "q", "d", "d", "d"]
    assert kept[7] == rows[7] and kept[-1] == rows[-1] and type(kept[7]["n"]) is int
    with pytest.raises(IndexError):
        kept[1000]


def test_a_field_is_added_last_to_every_row():
    rows = [{"interval": "A", "f1": 0.5}, {"interval": "B", "f1": math.nan}]
    added = Rows(rows).with_field("precision_ci", [[0.1, 0.9], [math.nan, math.nan]])
    assert list(added[0]) == ["interval", "f1", "precision_ci"] and added[0]["precision_ci"] == [0.1, 0.9]
    differing = Rows([{"interval": "A"}, {"interval": "B", "f1_std": 0.1}])  # rows of other keys: kept whole
    assert list(differing.with_field("x", [1, 2])) == [{"interval": "A", "x": 1},
                                                      {"interval": "B", "f1_std": 0.1, "x": 2}]
    with pytest.raises(ValueError, match="1 values of 'x' for 2 rows"):
        Rows(rows).with_field("x", [1])


def test_a_row_read_is_a_new_dict_each_time():
    kept = Keyed({"LOC": {"n": 1, "ci": [0.0, 1.0]}})
    row = kept["LOC"]
    row["n"], row["ci"][0] = 5, 0.5
    assert kept["LOC"] == {"n": 1, "ci": [0.0, 1.0]} and kept.get("PER", {}) == {}
