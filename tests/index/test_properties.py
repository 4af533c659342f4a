"""Every query of every index against a brute-force scan of random columns with nulls."""
import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.batch import Column, ColumnBatch
from paimon_engine.expressions import col, evaluate_arrow
from paimon_engine.index import (BitmapIndex, BloomFilterIndex, BsiIndex, FileIndexBuilder, FileIndexReader,
                                 REMAIN, SKIP, evaluate_file_index)

N = 3000


def _ints(rng, n=N, distinct=200, nulls=0.1):
    vals = rng.integers(-distinct // 2, distinct // 2, n).astype(np.int64)
    mask = rng.random(n) < nulls
    return [None if m else int(v) for v, m in zip(vals, mask)]


def _strings(rng, n=N, distinct=150, nulls=0.1):
    pool = ["", "a", "é✓", "\x00z"] + [f"k{i:04d}" for i in range(distinct)]
    idx = rng.integers(0, len(pool), n)
    mask = rng.random(n) < nulls
    return [None if m else pool[i] for i, m in zip(idx, mask)]


def _timestamps(rng, n=N, distinct=100, nulls=0.1):
    base = dt.datetime(2024, 1, 1)
    offs = rng.integers(-distinct, distinct, n)
    mask = rng.random(n) < nulls
    return [None if m else base + dt.timedelta(milliseconds=int(o) * 1234567) for o, m in zip(offs, mask)]


CASES = {
    "int": (T.IntType(), pa.int32(), _ints),
    "bigint": (T.BigIntType(), pa.int64(), _ints),
    "string": (T.VarCharType(T.VarCharType.MAX_LENGTH) if hasattr(T.VarCharType, "MAX_LENGTH") else
               T.parse_paimon_type("STRING"), pa.string(), _strings),
    "timestamp3": (T.TimestampType(3), pa.timestamp("ms"), _timestamps),
    "timestamp6": (T.TimestampType(6), pa.timestamp("us"), _timestamps),
}


def _data(name, seed):
    t, at, gen = CASES[name]
    rng = np.random.default_rng(seed)
    values = gen(rng)
    return t, values, Column.from_arrow(pa.array(values, type=at))


def _probes(values, rng):
    present = [v for v in values if v is not None]
    picks = [present[i] for i in rng.integers(0, len(present), 6)]
    if isinstance(picks[0], str):
        picks += ["absent", "k9999"]
    elif isinstance(picks[0], dt.datetime):
        picks += [dt.datetime(1999, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 0, 1000)]
    else:
        picks += [10 ** 6, -10 ** 6, 0]
    return picks


def _rows(values, pred):
    return [i for i, v in enumerate(values) if pred(v)]


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("version,block", [(2, None), (2, "64"), (1, None)])
def test_bitmap_exact(name, version, block):
    t, values, column = _data(name, 1)
    opts = {"version": str(version)}
    if block:
        opts["index-block-size"] = block
    w = BitmapIndex(t, opts)
    half = len(values) // 2
    w.add_column(column.slice(0, half))
    w.add_column(column.slice(half, len(values)))
    r = BitmapIndex.from_bytes(w.to_bytes(), t)
    if block:
        assert len(r.block_firsts) > 10
    rng = np.random.default_rng(2)
    probes = _probes(values, rng)
    for v in probes:
        assert list(r.eq(v).bitmap) == _rows(values, lambda x: x == v)
        assert list(r.ne(v).bitmap) == _rows(values, lambda x: x != v)  # Java: nulls included
    s = probes[:3]
    assert list(r.isin(s).bitmap) == _rows(values, lambda x: x in s)
    assert list(r.not_in(s).bitmap) == _rows(values, lambda x: x not in s)
    assert list(r.is_null().bitmap) == _rows(values, lambda x: x is None)
    assert list(r.is_not_null().bitmap) == _rows(values, lambda x: x is not None)
    nn = lambda f: (lambda x: x is not None and f(x))  # noqa: E731
    for v in probes[:4] + probes[-2:]:
        assert list(r.lt(v).bitmap) == _rows(values, nn(lambda x: x < v))
        assert list(r.le(v).bitmap) == _rows(values, nn(lambda x: x <= v))
        assert list(r.gt(v).bitmap) == _rows(values, nn(lambda x: x > v))
        assert list(r.ge(v).bitmap) == _rows(values, nn(lambda x: x >= v))
    lo, hi = sorted(probes[:2])
    assert list(r.between(lo, hi).bitmap) == _rows(values, nn(lambda x: lo <= x <= hi))


@pytest.mark.parametrize("name", ["int", "bigint", "timestamp3", "timestamp6"])
def test_bsi_exact(name):
    t, values, column = _data(name, 3)
    w = BsiIndex(t)
    w.add_column(column.slice(0, 1000))
    w.add_column(column.slice(1000, len(values)))
    r = BsiIndex.from_bytes(w.to_bytes(), t)
    rng = np.random.default_rng(4)
    nn = lambda f: (lambda x: x is not None and f(x))  # noqa: E731
    for v in _probes(values, rng):
        assert list(r.eq(v).bitmap) == _rows(values, nn(lambda x: x == v))
        assert list(r.ne(v).bitmap) == _rows(values, nn(lambda x: x != v))
        assert list(r.lt(v).bitmap) == _rows(values, nn(lambda x: x < v))
        assert list(r.le(v).bitmap) == _rows(values, nn(lambda x: x <= v))
        assert list(r.gt(v).bitmap) == _rows(values, nn(lambda x: x > v))
        assert list(r.ge(v).bitmap) == _rows(values, nn(lambda x: x >= v))
    lo, hi = sorted(_probes(values, rng)[:2])
    assert list(r.between(lo, hi).bitmap) == _rows(values, nn(lambda x: lo <= x <= hi))
    assert list(r.is_null().bitmap) == _rows(values, lambda x: x is None)
    assert list(r.is_not_null().bitmap) == _rows(values, lambda x: x is not None)


def test_bsi_only_negative_and_zero():
    t = T.BigIntType()
    values = [0, -5, None, -(2 ** 62), 2 ** 62, 0]
    w = BsiIndex(t)
    w.add_values(values)
    r = BsiIndex.from_bytes(w.to_bytes(), t)
    for v in (-(2 ** 63) + 1, -5, -1, 0, 1, 2 ** 62, 2 ** 63 - 1):
        assert list(r.lt(v).bitmap) == [i for i, x in enumerate(values) if x is not None and x < v]
        assert list(r.eq(v).bitmap) == [i for i, x in enumerate(values) if x == v]
    w = BsiIndex(t)
    w.add_values([-(2 ** 63)])
    with pytest.raises(Exception, match="MIN_VALUE"):
        w.to_bytes()


@pytest.mark.parametrize("name", list(CASES))
def test_bloom_superset(name):
    t, values, column = _data(name, 5)
    w = BloomFilterIndex(t, {"items": str(len(values)), "fpp": "0.05"})
    w.add_column(column)
    r = BloomFilterIndex.from_bytes(w.to_bytes(), t)
    present = [v for v in values if v is not None]
    assert r.might_contain(present).all()
    for v in set(present):
        assert r.eq(v) is REMAIN
    assert r.isin(present[:3]) is REMAIN
    rng = np.random.default_rng(6)
    for v in _probes(values, rng):
        if v not in present:
            assert r.eq(v) in (SKIP, REMAIN)
    if name in ("int", "bigint"):
        absent = np.arange(10 ** 7, 10 ** 7 + 20000, dtype=np.int64)
        fp = r.might_contain(absent).mean()
        assert fp < 0.15  # configured 5%


def test_other_bitmap_types():
    for t, at, values in [
        (T.BooleanType(), pa.bool_(), [True, None, False, True, None, True]),
        (T.DoubleType(), pa.float64(), [1.5, float("nan"), -0.0, 0.0, None, 1.5, float("nan")]),
        (T.FloatType(), pa.float32(), [1.5, float("nan"), -0.0, 0.0, None, 1.5]),
        (T.TinyIntType(), pa.int8(), [1, -128, 127, None, 1]),
        (T.SmallIntType(), pa.int16(), [1, -300, 300, None, 1]),
        (T.DateType(), pa.date32(), [dt.date(2020, 1, 1), None, dt.date(1960, 5, 5), dt.date(2020, 1, 1)]),
    ]:
        w = BitmapIndex(t)
        w.add_column(Column.from_arrow(pa.array(values, type=at)))
        r = BitmapIndex.from_bytes(w.to_bytes(), t)
        for v in values:
            if v is None:
                continue
            from paimon_engine.index.values import literal_key
            k = literal_key(v, t)
            expect = [i for i, x in enumerate(values) if x is not None and literal_key(x, t) == k]
            assert list(r.eq(v).bitmap) == expect, (t, v)


def _table(seed, n=4000):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 500, n)
    names = np.array([f"n{i}" for i in rng.integers(0, 40, n)], dtype=object)
    ts = (1_700_000_000_000 + rng.integers(-1000, 1000, n) * 1000)
    return pa.table({
        "id": pa.array(ids, mask=rng.random(n) < 0.05, type=pa.int64()),
        "name": pa.array(names, mask=rng.random(n) < 0.05, type=pa.string()),
        "ts": pa.array(ts, mask=rng.random(n) < 0.05, type=pa.timestamp("ms")),
    })


def test_evaluate_expressions_against_arrow():
    table = _table(7)
    batch = ColumnBatch.from_arrow(table)
    b = FileIndexBuilder(batch.schema, {
        "file-index.bitmap.columns": "id,name",
        "file-index.bsi.columns": "ts,id",
        "file-index.bloom-filter.columns": "name",
        "file-index.bloom-filter.name.items": "100",
        "file-index.bitmap.id.index-block-size": "128",
    })
    for start in range(0, table.num_rows, 1000):
        b.add(batch.slice(start, start + 1000))
    reader = FileIndexReader(b.finish(), schema=batch.schema)
    t0 = dt.datetime(2023, 11, 14, 22, 13, 20)
    exprs = [
        col("id") == 42, col("id").isin([1, 2, 3, 999]), col("name") == "n7", col("name") == "zz",
        (col("id") > 100) & (col("id") <= 120), col("ts") < t0, col("ts").is_null(),
        ((col("name") == "n3") | (col("id") == 7)) & (col("ts") >= t0),
        ~((col("id") < 250) | col("name").is_null()), col("id") != 5, col("name").not_in(["n1", "n2"]),
        col("id").not_null() & ~(col("name") == "n4"),
    ]
    n = table.num_rows
    for e in exprs:
        truth = set(np.flatnonzero(evaluate_arrow(e.bind(batch.schema), table).to_numpy(zero_copy_only=False)))
        r = evaluate_file_index(e, reader)
        if r is SKIP:
            assert not truth, e
            continue
        sel = set(r.selection(n))
        assert truth <= sel, e
    # exact combinations of bitmap/BSI answers
    for e in exprs[:2] + exprs[4:7]:
        truth = set(np.flatnonzero(evaluate_arrow(e.bind(batch.schema), table).to_numpy(zero_copy_only=False)))
        r = evaluate_file_index(e, reader)
        assert (set() if r is SKIP else set(r.selection(n))) == truth, e


def test_lazy_v2_reads_one_block():
    t = T.BigIntType()
    values = np.arange(20000, dtype=np.int64) % 5000
    w = BitmapIndex(t, {"index-block-size": "1024"})
    w.add_column(Column.from_arrow(pa.array(values)))
    data = w.to_bytes()
    reads = []

    def read(off, n):
        reads.append(n)
        return data[off:off + n]

    r = BitmapIndex.open(read, len(data), t)
    head = sum(reads)
    assert list(r.eq(1234).bitmap) == [1234, 6234, 11234, 16234]
    assert sum(reads) - head <= 1024 + 100
    assert sum(reads) < len(data) / 10
