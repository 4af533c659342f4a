"""Grouping the rows of a write by partition: the same groups with the same rows as Arrow's hash group-by of the
transformed values (the rows listed per group), for every transform, nulls, NaN and signed zeros, several
partition fields and many groups; groups in the order of their first row, rows in table order."""
import datetime
import decimal
import itertools
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine.catalog import FileSystemCatalog
from paimon_engine.table.data_writer import partition_groups

COLUMNS = {
    "i": pa.int32(), "l": pa.int64(), "s": pa.string(), "b": pa.binary(), "f": pa.float64(), "ok": pa.bool_(),
    "d": pa.date32(), "ts": pa.timestamp("us"), "tz": pa.timestamp("us", tz="UTC"), "dec": pa.decimal128(9, 2),
}
VALUES = {
    "i": st.integers(-3, 3), "l": st.integers(-2**63, 2**63 - 1) | st.integers(0, 5),
    "s": st.sampled_from(["", "a", "ab", "abc", "é€", "😀x"]), "b": st.sampled_from([b"", b"\x00", b"\x00\x01", b"z"]),
    "f": st.sampled_from([0.0, -0.0, 1.5, math.nan, -2.25]), "ok": st.booleans(),
    "d": st.dates(datetime.date(1960, 1, 1), datetime.date(2030, 12, 31)),
    "ts": st.datetimes(datetime.datetime(1960, 1, 1), datetime.datetime(2030, 1, 1)),
    "tz": st.datetimes(datetime.datetime(1960, 1, 1), datetime.datetime(2030, 1, 1)).map(
        lambda v: v.replace(tzinfo=datetime.timezone.utc)),
    "dec": st.sampled_from([decimal.Decimal("0.00"), decimal.Decimal("-1.05"), decimal.Decimal("12.34")]),
}
TRANSFORMS = {
    "i": ["identity", "bucket[3]", "truncate[2]"], "l": ["identity", "bucket[16]", "truncate[10]"],
    "s": ["identity", "bucket[4]", "truncate[1]"], "b": ["identity", "bucket[2]", "truncate[1]"],
    "f": ["identity"], "ok": ["identity"], "d": ["identity", "year", "month", "day", "bucket[5]"],
    "ts": ["identity", "year", "month", "day", "hour"], "tz": ["day", "hour", "identity"],
    "dec": ["identity", "bucket[3]", "truncate[10]"],
}


def _table(rows):
    cols = {name: pa.array([r.get(name) for r in rows], t) for name, t in COLUMNS.items()}
    cols["row"] = pa.array(range(len(rows)), pa.int64())
    return pa.table(cols)


def _reference(tbl, spec, schema):
    """Arrow's group-by of the transformed values, groups in its order, rows listed per group."""
    keys = {}
    for i, f in enumerate(spec.fields):
        st_ = schema.find_type(schema.column_name(f.source_id))
        keys[f"p{i}"] = f.transform.apply(st_, tbl.column(schema.column_name(f.source_id)).combine_chunks())
    keys["row"] = tbl.column("row")
    names = [f"p{i}" for i in range(len(spec.fields))]
    grouped = pa.table(keys).group_by(names, use_threads=False).aggregate([("row", "list")])
    return [(tuple(r[nm] for nm in names), rows)
            for r, rows in zip(grouped.select(names).to_pylist(), grouped.column("row_list").to_pylist())]


def _key(part):
    """A partition tuple as a dict key: NaN equal to NaN, -0.0 apart from 0.0 (as Arrow groups them)."""
    return tuple(("nan",) if isinstance(v, float) and math.isnan(v) else
                 ("float", v, math.copysign(1, v)) if isinstance(v, float) else v for v in part)


_names = itertools.count()


def _check(tmp_path, tbl, spec):
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = cat.create_table(f"db.t{next(_names)}", tbl.schema, partition_spec=spec)
    schema, sp = t.schema(), t.spec()
    groups = partition_groups(tbl, sp, schema)
    got = [(_key(part), sub.column("row").to_pylist()) for part, sub in groups]
    want = {_key(part): rows for part, rows in _reference(tbl, sp, schema)}
    assert dict(got) == want and len(got) == len(want)
    firsts = [rows[0] for _, rows in got]
    assert firsts == sorted(firsts)
    assert all(sub.schema == tbl.schema for _, sub in groups)


@st.composite
def _rows(draw):
    n = draw(st.integers(1, 40))
    row = st.fixed_dictionaries({}, optional={k: v for k, v in VALUES.items()})
    return [draw(row) for _ in range(n)]


@pytest.mark.parametrize("column", sorted(COLUMNS))
def test_every_transform_of_every_type_groups_as_arrow_does(tmp_path, column):
    @settings(max_examples=25, deadline=None)
    @given(_rows(), st.sampled_from(TRANSFORMS[column]), st.sampled_from(sorted(COLUMNS)), st.booleans())
    def run(rows, transform, second, two):
        spec = [(column, transform)] + ([(second, TRANSFORMS[second][0])] if two and second != column else [])
        _check(tmp_path, _table(rows), spec)
    run()


def test_many_groups_and_more_groups_than_rows_can_number(tmp_path):
    # two partition fields of a distinct value per row: more combinations than the rows (the sorting path), and
    # more than 65536 groups (no radix sort); then columns of many repeats (the counting path)
    n = 70_000
    rng = np.random.default_rng(5)
    tbl = pa.table({"a": pa.array(rng.permutation(n).astype(np.int64)), "b": pa.array(rng.permutation(n) * 3),
                    "c": pa.array(rng.integers(0, 3, n).astype(np.int32)), "row": pa.array(np.arange(n))})
    _check(tmp_path, tbl, [("a", "identity"), ("b", "identity")])
    _check(tmp_path, tbl, [("c", "identity"), ("a", "bucket[300]")])
    _check(tmp_path, tbl.slice(10, 5000), [("c", "identity")])


def test_groups_of_adjacent_rows_are_slices(tmp_path):
    # one partition, or rows sorted by partition: the groups are slices of the table (no copy), with the same rows
    n = 3000
    tbl = pa.table({"k": pa.array(np.repeat(np.arange(3, dtype=np.int32), n // 3)), "row": pa.array(np.arange(n))})
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", tbl.schema, partition_spec=[("k", "identity")])
    groups = partition_groups(tbl, t.spec(), t.schema())
    assert [(p, s.column("row").to_pylist()) for p, s in groups] == \
        [((k,), list(range(k * 1000, (k + 1) * 1000))) for k in range(3)]
    base = tbl.column("row").chunk(0).buffers()[1].address
    assert [s.column("row").chunk(0).buffers()[1].address for _, s in groups] == [base] * 3
    _check(tmp_path, tbl, [("k", "identity")])


def test_empty_table_has_no_groups(tmp_path):
    tbl = _table([]).slice(0, 0)
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", tbl.schema, partition_spec=[("i", "identity")])
    assert partition_groups(tbl, t.spec(), t.schema()) == []
