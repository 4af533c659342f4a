import datetime
import decimal

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.batch import Column, ColumnBatch, concat_batches
from paimon_engine.errors import InvalidArgumentError, SchemaError
from paimon_engine.types import IntType, RowType

TABLE = pa.table({
    "i": pa.array([1, None, 3, 4], pa.int64()),
    "f": pa.array([1.5, 2.5, None, 4.0], pa.float32()),
    "b": pa.array([True, None, False, True]),
    "s": pa.array(["x", None, "zz", ""]),
    "ls": pa.array(["x", "y", None, "w"], pa.large_string()),
    "bin": pa.array([b"\x00", None, b"ab", b""]),
    "d": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.00"), decimal.Decimal("0")],
                  pa.decimal128(10, 2)),
    "dt": pa.array([datetime.date(2020, 1, 1), None, datetime.date(1960, 5, 5), datetime.date(2000, 2, 29)]),
    "ts": pa.array([0, 1, None, -5], pa.timestamp("us", tz="UTC")),
    "l": pa.array([[1, 2], None, [], [None, 5]], pa.list_(pa.int32())),
    "m": pa.array([[("a", 1)], None, [], [("b", None), ("c", 3)]], pa.map_(pa.string(), pa.int32())),
    "st": pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "c"}, {"x": 4, "y": None}]),
    "fx": pa.array([b"abcd", b"efgh", None, b"ijkl"], pa.binary(4)),
})


def test_arrow_roundtrip_is_exact_and_zero_copy():
    batch = ColumnBatch.from_arrow(TABLE)
    rb = batch.to_arrow()
    assert rb.equals(TABLE.to_batches()[0])
    i_col = batch.column("i")
    assert np.shares_memory(i_col.values, np.frombuffer(rb.column(0).buffers()[1], dtype=np.int64))


@pytest.mark.parametrize("start,stop", [(0, 4), (1, 3), (3, 4), (2, 2), (0, 1)])
def test_slice_matches_arrow_slice(start, stop):
    batch = ColumnBatch.from_arrow(TABLE)
    expected = TABLE.slice(start, stop - start).to_pylist()
    assert batch.slice(start, stop).to_arrow().to_pylist() == expected
    # slice of a slice
    assert batch.slice(1).slice(start, stop).to_pylist() == TABLE.slice(1).slice(start, stop - start).to_pylist()


def test_from_sliced_arrow_arrays():
    sliced = TABLE.slice(1, 3)
    batch = ColumnBatch.from_arrow(sliced)
    assert batch.to_pylist() == sliced.to_pylist()


def test_to_pandas_uses_nullable_dtypes():
    df = ColumnBatch.from_arrow(TABLE).to_pandas()
    assert str(df["i"].dtype) == "Int64"
    assert str(df["f"].dtype) == "Float32"
    assert str(df["b"].dtype) == "boolean"
    assert df["i"].isna().tolist() == [False, True, False, False]
    assert df["s"].dtype.name.startswith("string")


def test_to_numpy_masks_and_views():
    batch = ColumnBatch.from_arrow(TABLE)
    arrays = batch.to_numpy()
    assert arrays["i"].mask.tolist() == [False, True, False, False]
    assert arrays["i"].compressed().tolist() == [1, 3, 4]
    assert arrays["ts"].dtype == np.dtype("datetime64[us]")
    assert arrays["b"].compressed().tolist() == [True, False, True]
    assert arrays["s"][2] == "zz"
    sliced = batch.slice(1, 3).to_numpy()
    assert sliced["i"].mask.tolist() == [True, False]


def test_concat_and_select():
    batch = ColumnBatch.from_arrow(TABLE)
    both = concat_batches([batch, batch.slice(2)])
    assert both.num_rows == 6
    assert both.to_pylist() == TABLE.to_pylist() + TABLE.slice(2).to_pylist()
    assert batch.select(["s", "i"]).names == ["s", "i"]


def test_schema_mismatch_errors():
    with pytest.raises(SchemaError):
        ColumnBatch(RowType.of(("a", IntType())), [])
    a = Column.from_numpy(np.arange(3, dtype=np.int32))
    b = Column.from_numpy(np.arange(4, dtype=np.int32))
    with pytest.raises(SchemaError, match="rows"):
        ColumnBatch(RowType.of(("a", IntType()), ("b", IntType())), [a, b])
    with pytest.raises(SchemaError):
        concat_batches([ColumnBatch.from_arrow(TABLE), ColumnBatch.from_arrow(TABLE.select(["i"]))])


def test_from_numpy_and_pandas():
    col = Column.from_numpy(np.array([True, False, True]))
    assert col.to_arrow().to_pylist() == [True, False, True]
    import pandas as pd
    batch = ColumnBatch.from_pandas(pd.DataFrame({"a": [1, 2], "b": ["x", None]}))
    assert batch.to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
    assert ColumnBatch.from_pydict({"a": [1]}).num_rows == 1


def test_empty_table():
    empty = TABLE.slice(0, 0)
    batch = ColumnBatch.from_arrow(empty)
    assert batch.num_rows == 0
    assert batch.to_arrow().num_rows == 0


def test_from_arrow_takes_buffers_longer_than_the_array():
    # Arrow lets a buffer be longer than its array needs, also by less than one element: an empty int64 array in
    # a 1-byte allocation, an int32 array of 2 values in 11 bytes
    empty = pa.Array.from_buffers(pa.int64(), 0, [None, pa.py_buffer(b"\x00")])
    padded = pa.Array.from_buffers(pa.int32(), 2, [None, pa.py_buffer(b"\x01\x00\x00\x00\x02\x00\x00\x00zzz")])
    lst = pa.Array.from_buffers(pa.list_(pa.int64()), 1, [None, pa.py_buffer(np.zeros(2, np.int32).tobytes())],
                                children=[empty])
    for arr in (empty, padded, lst):
        arr.validate(full=True)
        col = Column.from_arrow(arr)
        assert col.to_arrow().equals(arr)
    assert Column.from_arrow(padded).to_numpy().tolist() == [1, 2]


@pytest.mark.parametrize("layout", ["standard", "compact"])
@pytest.mark.parametrize("rows", [[], [{"l": [], "m": [], "s": ""}], [{"l": None, "m": None, "s": None}]])
def test_fory_rows_as_a_batch(layout, rows):
    # zero rows, or rows whose lists and maps are all empty: the decoder's value buffers are shorter than one
    # element, and the batch wraps them all the same
    from paimon_engine.formats import fory
    schema = fory.ForySchema(pa.schema([("s", pa.string()), ("l", pa.list_(pa.int64())),
                                        ("m", pa.map_(pa.string(), pa.int32()))]))
    encoded = [fory.encode_row(r, schema, layout) for r in rows]
    offsets = np.cumsum([0] + [len(e) for e in encoded]).astype(np.int64)
    body = b"".join(encoded)
    arrow = fory.decode_rows(body, offsets, schema, layout)
    batch = fory.decode_rows(body, offsets, schema, layout, output="batch")
    assert batch.num_rows == len(rows)
    assert batch.to_arrow().equals(arrow)
    assert batch.to_pylist() == arrow.to_pylist() == [{"s": r["s"], "l": r["l"],
                                                       "m": None if r["m"] is None else []} for r in rows]


def test_repeat_string_is_the_array_arrow_converts():
    from paimon_engine.batch import repeat_string
    for value, n in [("s3://b/t/data/0001.parquet", 5), ("é€ 𝄞", 3), ("", 4), ("x", 0), ("ab", 1)]:
        got = repeat_string(value, n)
        want = pa.array([value] * n, pa.string())
        assert got.type == pa.string() and got.equals(want), (value, n)
        got.validate(full=True)


def test_repeat_string_splits_what_one_array_cannot_address(monkeypatch):
    # past what one string array addresses (2**31 - 1 bytes of characters; lowered here) the values come as
    # chunks of whole values, one string array each
    import paimon_engine.batch as B
    assert isinstance(B.repeat_string("abc", 7), pa.Array)
    monkeypatch.setattr(B, "STRING_ARRAY_MAX_BYTES", 20)
    assert isinstance(B.repeat_string("abcd", 5), pa.Array)
    out = B.repeat_string("abc", 15)
    assert isinstance(out, pa.ChunkedArray) and out.type == pa.string()
    assert [len(c) for c in out.chunks] == [6, 6, 3]
    assert out.to_pylist() == ["abc"] * 15
    for c in out.chunks:
        c.validate(full=True)


def test_numbers_to_arrow_is_the_array_arrow_converts():
    from paimon_engine.batch import numbers_to_arrow
    for dt in ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", ">i4", ">f8"]:
        a = np.arange(-5, 25).astype(dt)[::3] if dt[-2] != "u" else np.arange(30).astype(dt)[::3]
        got = numbers_to_arrow(a)
        want = pa.array(a.astype(a.dtype.newbyteorder("=")))
        assert got.type == want.type and got.equals(want), dt
    flags = np.arange(19) % 3 == 0
    assert numbers_to_arrow(flags[::2]).to_pylist() == flags[::2].tolist()
    assert numbers_to_arrow(np.zeros(0, np.int64)).equals(pa.array([], pa.int64()))
    for bad in (np.array(["a"]), np.zeros((2, 2)), np.array([None], dtype=object)):
        with pytest.raises(InvalidArgumentError):
            numbers_to_arrow(bad)
    # with validity flags: the array pa.array makes with the inverse mask
    vals = np.arange(-4, 13, dtype=np.int32)[::2]
    valid = np.arange(len(vals)) % 3 != 1
    for v, ok in [(vals, valid), (vals.astype(np.float64), valid), (vals > 2, valid), (vals, np.ones(9, bool)),
                  (vals[:0], valid[:0])]:
        got = numbers_to_arrow(v, ok)
        want = pa.array(v, mask=~ok)
        assert got.equals(want) and got.null_count == want.null_count
        got.validate(full=True)
    with pytest.raises(InvalidArgumentError):
        numbers_to_arrow(vals, valid[:-1])


def test_pool_array_takes_large_buffers_from_numpy():
    """Below POOL_MAX bytes an output buffer comes from Arrow's pool; from POOL_MAX on from NumPy (the pool
    returns blocks that large to the system on free). Either way: the length and dtype asked for, zeroed on request."""
    import pyarrow as pa

    from paimon_engine import batch as B
    for count, dtype in ((1000, np.int64), (B.POOL_MAX // 8, np.int64), (B.POOL_MAX // 8 - 1, np.int64),
                         (B.POOL_MAX + 3, np.uint8)):
        before = pa.total_allocated_bytes()
        arr = B.pool_array(count, dtype, zero=True)
        grew = pa.total_allocated_bytes() - before
        assert arr.shape == (count,) and arr.dtype == np.dtype(dtype) and arr.flags.writeable
        assert not arr.any()
        nbytes = count * np.dtype(dtype).itemsize
        assert (grew >= nbytes) == (nbytes < B.POOL_MAX), (count, dtype, grew)
        arr[-1] = 7
        assert pa.py_buffer(arr).size == nbytes
