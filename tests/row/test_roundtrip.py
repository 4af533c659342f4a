"""Property tests: anything we write reads back identically, with both kernel implementations."""
import decimal
import io

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from paimon_engine import _speedups
from paimon_engine import types as T
from paimon_engine.formats.row import RowFileReader, RowFileWriter

LEAVES = [
    T.BooleanType(), T.TinyIntType(), T.SmallIntType(), T.IntType(), T.BigIntType(), T.FloatType(),
    T.DoubleType(), T.STRING(), T.CharType(3), T.BYTES(), T.BinaryType(4), T.DecimalType(9, 2),
    T.DecimalType(18, 0), T.DecimalType(38, 10), T.DecimalType(20, 20), T.DateType(), T.TimeType(0),
    T.TimeType(6), T.TimestampType(0), T.TimestampType(3), T.TimestampType(6), T.TimestampType(9),
    T.TimestampType(5), T.LocalZonedTimestampType(3), T.LocalZonedTimestampType(9), T.VariantType(),
]

leaf = st.sampled_from(LEAVES)


def _nested(children):
    return st.one_of(
        children.map(lambda t: T.ArrayType(t)),
        st.tuples(st.sampled_from([T.STRING(False), T.IntType(False)]), children).map(lambda kv: T.MapType(*kv)),
        st.sampled_from([T.IntType(), T.STRING()]).map(lambda t: T.MultisetType(t)),
        st.lists(children, min_size=1, max_size=3).map(
            lambda ts: T.RowType([T.DataField(100 + i, f"f{i}", t) for i, t in enumerate(ts)])),
    )


types = st.recursive(leaf, _nested, max_leaves=4)


def values_of(t):
    if isinstance(t, T.BooleanType):
        return st.booleans()
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType)):
        bits = {T.TinyIntType: 8, T.SmallIntType: 16, T.IntType: 32, T.BigIntType: 64}[type(t)]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if isinstance(t, T.FloatType):
        return st.floats(allow_nan=False, width=32)
    if isinstance(t, T.DoubleType):
        return st.floats(allow_nan=False)
    if isinstance(t, (T.VarCharType, T.CharType)):
        return st.text(max_size=8)
    if isinstance(t, (T.VarBinaryType, T.BinaryType)):
        return st.binary(max_size=8)
    if isinstance(t, T.DecimalType):
        lim = 10 ** t.precision - 1
        return st.integers(-lim, lim).map(lambda u: decimal.Decimal(u).scaleb(-t.scale, decimal.Context(prec=80)))
    if isinstance(t, T.DateType):
        return st.integers(-100000, 100000)
    if isinstance(t, T.TimeType):
        mult = 1 if t.precision <= 3 else (1000 if t.precision <= 6 else 1000000)
        return st.integers(0, 86399999).map(lambda ms: ms * mult)
    if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        unit = t.arrow_unit
        scale = {"ms": 1, "us": 1000, "ns": 1000000}[unit]
        v = st.integers(-6 * 10**13 * min(scale, 1000), 2 * 10**14 * min(scale, 1000))
        if t.precision == 0:
            v = v.map(lambda x: x - x % 1000)
        elif t.precision in (4, 5):
            step = 10 ** (6 - t.precision)
            v = v.map(lambda x: x - x % step)
        return v
    if isinstance(t, T.VariantType):
        return st.fixed_dictionaries({"value": st.binary(max_size=5), "metadata": st.binary(max_size=5)})
    if isinstance(t, T.ArrayType):
        return st.lists(nullable(t.element), max_size=4)
    if isinstance(t, (T.MapType, T.MultisetType)):
        m = t.as_map() if isinstance(t, T.MultisetType) else t
        return st.dictionaries(values_of(m.key), nullable(m.value) if m.value.nullable else values_of(m.value),
                               max_size=3).map(lambda d: list(d.items()))
    if isinstance(t, T.RowType):
        return st.fixed_dictionaries({f.name: nullable(f.type) for f in t.fields})
    raise AssertionError(t)


def nullable(t):
    return st.one_of(st.none(), values_of(t))


@st.composite
def tables(draw):
    ts = draw(st.lists(types, min_size=1, max_size=4))
    schema = T.RowType([T.DataField(i, f"c{i}", t) for i, t in enumerate(ts)])
    n = draw(st.integers(0, 25))
    cols = {}
    for f in schema.fields:
        vals = draw(st.lists(nullable(f.type), min_size=n, max_size=n))
        cols[f.name] = pa.array(vals, type=f.type.to_arrow())
    return schema, pa.table(cols) if cols else None


def impl(name):
    return _speedups.twin("rowcodec") if name == "twin" else _speedups.kernel("rowcodec")


@pytest.mark.parametrize("kernel", ["compiled", "twin"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(), block_size=st.sampled_from([1, 24, 100, 65536]), data_st=st.data())
def test_roundtrip(kernel, data, block_size, data_st):
    schema, table = data
    buf = io.BytesIO()
    w = RowFileWriter(buf, schema, block_size=block_size)
    w._kernel = impl(kernel)
    w.write(table)
    md = w.close()
    assert md.row_count == table.num_rows and md.file_size == len(buf.getvalue())
    r = RowFileReader(io.BytesIO(buf.getvalue()), schema)
    r._kernel = impl(kernel)
    assert r.read_all().to_arrow_table().to_pylist() == table.to_pylist()
    n = table.num_rows
    if n:
        rows = data_st.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6))
        want = table.to_pylist()
        assert r.take(rows).to_pylist() == [want[i] for i in rows]
        from pyroaring import BitMap
        assert r.read_all(selection=BitMap(rows)).to_pylist() == [want[i] for i in sorted(set(rows))]
        cols = [f.name for f in schema.fields][::-1]
        assert r.read_all(columns=cols).to_pylist() == table.select(cols).to_pylist()


def test_selection_by_flags_reads_the_flagged_rows():
    """A selection given as one flag per row (bool or uint8): the same rows as the bitmap of those rows, for the
    whole file and for a split of it (flags of the split's rows only); blocks with every row flagged are read
    whole, blocks without a flagged row not at all; a flag array of the wrong length is refused."""
    from pyroaring import BitMap

    from paimon_engine.errors import InvalidArgumentError
    rng = np.random.default_rng(31)
    n = 3000
    schema = T.RowType.of(("s", T.STRING()), ("i", T.IntType()), ("d", T.DoubleType()))
    table = pa.table({"s": pa.array([None if i % 7 == 0 else "ü" * (i % 5) + str(i) for i in range(n)]),
                      "i": pa.array([None if i % 11 == 0 else i for i in range(n)], pa.int32()),
                      "d": rng.random(n)})
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=900) as w:
        w.write(table)
    r = RowFileReader(io.BytesIO(buf.getvalue()), schema)
    starts = [int(x) for x in r.index.row_starts] + [n]
    assert r.num_blocks > 20
    flags = rng.random(n) < 0.95
    flags[starts[2]:starts[3]] = True       # a block of kept rows only
    flags[starts[4]:starts[5]] = False      # a block without one
    for f in (flags, flags.astype(np.uint8), np.ones(n, np.bool_), np.zeros(n, np.bool_)):
        want = r.to_arrow(selection=BitMap(np.flatnonzero(f).tolist()))
        assert r.to_arrow(selection=f).equals(want)
        assert want.num_rows == int(np.count_nonzero(f))
    plan = r._plan(flags)
    assert (2, None) in plan and all(b != 4 for b, _ in plan)
    assert sum(r._block_rows[b] if rows is None else len(rows) for b, rows in plan) == int(flags.sum())
    first, end = 3, 9
    lo, hi = starts[first], starts[end]
    got = r.read_all(selection=flags[lo:hi], blocks=(first, end)).to_arrow_table()
    assert got.equals(table.slice(lo, hi - lo).filter(pa.array(flags[lo:hi])))
    for bad in (flags[:-1], np.ones(n + 1, np.bool_), np.ones((n, 1), np.bool_), np.array(True)):
        with pytest.raises(InvalidArgumentError, match="flags"):
            r.read_all(selection=bad)
    with pytest.raises(InvalidArgumentError, match="flags"):
        r.read_all(selection=flags, blocks=(first, end))


@settings(max_examples=25, deadline=None)
@given(data=tables(), block_size=st.sampled_from([1, 50, 65536]))
def test_kernel_twin_writes_identical_bytes(data, block_size):
    schema, table = data
    out = []
    for name in ("compiled", "twin"):
        buf = io.BytesIO()
        w = RowFileWriter(buf, schema, block_size=block_size)
        w._kernel = impl(name)
        w.write(table)
        w.write(table.slice(0, 3))
        w.close()
        out.append(buf.getvalue())
    assert out[0] == out[1]


def test_nan_payloads_and_negative_zero_survive():
    schema = T.RowType.of(("f", T.FloatType()), ("d", T.DoubleType()))
    f = np.array([0x7FC00001, 0xFFC00000, 0x80000000], dtype=np.uint32).view(np.float32)
    d = np.array([0x7FF8000000000001, 0x8000000000000000, 0x7FF0000000000000], dtype=np.uint64).view(np.float64)
    table = pa.table({"f": f, "d": d})
    buf = io.BytesIO()
    with RowFileWriter(buf, schema) as w:
        w.write(table)
    md = w.metadata
    assert md.nan_counts == {0: 2, 1: 1}
    got = RowFileReader(io.BytesIO(buf.getvalue()), schema).read_all()
    assert got.columns[0].values.view(np.uint32).tolist() == f.view(np.uint32).tolist()
    assert got.columns[1].values.view(np.uint64).tolist() == d.view(np.uint64).tolist()


def test_timestamps_use_integer_arithmetic_and_utc_instants():
    import datetime
    schema = T.RowType.of(("t6", T.TimestampType(6)), ("t9", T.TimestampType(9)), ("l", T.LocalZonedTimestampType(6)))
    tz = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    aware = datetime.datetime(2020, 1, 1, 12, 0, 0, 1, tzinfo=tz)
    table = pa.table({
        "t6": pa.array([datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)], pa.timestamp("us")),
        "t9": pa.array([-1], pa.timestamp("ns")),
        "l": pa.array([aware], pa.timestamp("us", tz="UTC")),
    })
    buf = io.BytesIO()
    with RowFileWriter(buf, schema) as w:
        w.write(table)
    data = buf.getvalue()
    r = RowFileReader(io.BytesIO(data), schema)
    assert r.to_arrow().to_pylist() == table.to_pylist()
    import zstandard
    ft_len = 32
    payload = zstandard.ZstdDecompressor().decompress(data[:r.index.compressed_sizes[0]])
    # t6: floor millis -1, nano-of-milli 999000 ; t9: floor millis -1, nano-of-milli 999999
    assert payload[1:9] == (-1).to_bytes(8, "little", signed=True)
    assert payload[9:12] == bytes([0xD8, 0xFC, 0x3C])  # varint 999000
    assert payload[12:20] == (-1).to_bytes(8, "little", signed=True)
    assert payload[20:23] == bytes([0xBF, 0x84, 0x3D])  # varint 999999
    assert ft_len


def test_stats():
    schema = T.RowType.of(("i", T.IntType()), ("s", T.STRING()), ("d", T.DoubleType()), ("a", T.ArrayType(T.IntType())))
    buf = io.BytesIO()
    with RowFileWriter(buf, schema) as w:
        w.write(pa.table({"i": pa.array([3, None, -2], pa.int32()), "s": ["b", "a", None],
                          "d": [1.5, float("nan"), None], "a": [[1], None, []]}))
        w.write(pa.table({"i": pa.array([10], pa.int32()), "s": ["zz"], "d": [-4.0], "a": [[2]]}))
    md = w.metadata
    assert md.value_counts == {0: 4, 1: 4, 2: 4, 3: 4}
    assert md.null_counts == {0: 1, 1: 1, 2: 1, 3: 1}
    assert md.nan_counts == {2: 1}
    assert md.lower_bounds == {0: -2, 1: "a", 2: -4.0}
    assert md.upper_bounds == {0: 10, 1: "zz", 2: 1.5}
    assert md.row_count == 4 and md.block_count == 1


def test_inputs_pandas_columnbatch_and_file_io(tmp_path):
    import pandas as pd
    from paimon_engine.batch import ColumnBatch
    schema = T.RowType.of(("a", T.BigIntType()), ("b", T.STRING()))
    df = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    loc = str(tmp_path / "f.row")
    with RowFileWriter(loc, schema) as w:
        w.write(df)
        w.write(ColumnBatch.from_pandas(df, schema))
        w.write(pa.table(df).to_batches()[0])
    r = RowFileReader(loc, schema)
    assert r.to_pandas()["a"].tolist() == [1, 2] * 3
    assert r.to_numpy()["b"].tolist() == ["x", None] * 3
    assert [len(b) for b in r.read(batch_rows=4)] == [6]
    import pyarrow.fs as fs
    with fs.LocalFileSystem().open_input_file(loc) as f:
        assert RowFileReader(f, schema).get_row(3) == {"a": 2, "b": None}
    with pytest.raises(Exception):
        RowFileReader(loc, schema).take([6])


@settings(max_examples=30, deadline=None)
@given(data=tables(), data_st=st.data())
def test_get_row_matches_take(data, data_st):
    schema, table = data
    if table.num_rows == 0:
        return
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=40) as w:
        w.write(table)
    r = RowFileReader(io.BytesIO(buf.getvalue()), schema, cache_blocks=2)
    want = table.to_pylist()
    for i in data_st.draw(st.lists(st.integers(0, table.num_rows - 1), min_size=1, max_size=5)):
        assert r.get_row(i) == want[i] == r.take([i]).to_pylist()[0]


@settings(max_examples=40, deadline=None)
@given(data=tables(), block_size=st.sampled_from([1, 24, 100]), threads=st.integers(2, 5), data_st=st.data())
def test_threaded_reads_equal_single_threaded(data, block_size, threads, data_st):
    """Reads cut into parts for several threads (parts start on a multiple of 8 rows, inside blocks) give the
    same batches as one thread: full reads, projections, selections and takes with repeats."""
    from pyroaring import BitMap

    from paimon_engine.formats.row import reader as R
    schema, table = data
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=block_size) as w:
        w.write(table)
    one = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=1)
    many = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=threads)
    saved = R.PARALLEL_MIN_BLOCKS
    R.PARALLEL_MIN_BLOCKS = 2
    try:
        assert many.to_arrow().equals(one.to_arrow())
        cols = [f.name for f in schema.fields][::-1]
        assert many.to_arrow(columns=cols).equals(one.to_arrow(columns=cols))
        n = table.num_rows
        if n:
            rows = data_st.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=30))
            assert many.take(rows).to_pylist() == one.take(rows).to_pylist() == [table.to_pylist()[i] for i in rows]
            assert many.to_arrow(selection=BitMap(rows)).equals(one.to_arrow(selection=BitMap(rows)))
    finally:
        R.PARALLEL_MIN_BLOCKS = saved


def test_threaded_read_of_many_blocks_splits_inside_blocks():
    """1,000 rows in ~100 blocks of odd row counts: parts begin inside blocks; bitmaps, string offsets, nested
    values and the blocks-read count all come out as with one thread."""
    from pyroaring import BitMap

    from paimon_engine.formats.row import reader as R
    rng = np.random.default_rng(3)
    n = 1000
    schema = T.RowType.of(("b", T.BooleanType()), ("s", T.STRING()), ("i", T.IntType()),
                          ("a", T.ArrayType(T.STRING())), ("x", T.BYTES()))
    table = pa.table({
        "b": pa.array([None if i % 7 == 0 else bool(i % 3) for i in range(n)]),
        "s": pa.array([None if i % 5 == 0 else "é" * (i % 13) + str(i) for i in range(n)]),
        "i": pa.array([None if i % 11 == 0 else i for i in range(n)], pa.int32()),
        "a": pa.array([None if i % 9 == 0 else [str(i)] * (i % 3) for i in range(n)]),
        "x": pa.array([bytes([i % 256]) * (i % 40) for i in range(n)]),
    })
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=700) as w:
        w.write(table)
    one = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=1)
    assert one.num_blocks >= 60
    assert set(np.diff(one.index.row_starts) % 8) != {0}
    want = one.to_arrow()
    assert want.equals(table)
    for threads in (2, 3, 7):
        many = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=threads)
        cut = many._parts([(b, None) for b in range(many.num_blocks)], n)
        parts = len(cut)
        assert 1 < parts <= min(R.UNITS_PER_THREAD * threads, many.num_blocks // 8)
        assert all(start % 8 == 0 for _, start in cut)
        assert many.to_arrow().equals(want)
        # a block cut between two parts is decompressed by both
        assert one.blocks_read == one.num_blocks <= many.blocks_read <= one.num_blocks + parts - 1
        sel = BitMap(rng.choice(n, 300, replace=False).tolist())
        assert many.to_arrow(selection=sel).equals(want.take(pa.array(sorted(sel))))
        req = rng.integers(0, n, 500)
        assert many.take(req).to_arrow().equals(pa.RecordBatch.from_arrays(
            [c.combine_chunks() for c in want.take(pa.array(req)).columns], names=want.column_names))


def test_parts_cut_inside_blocks_when_no_step_boundary_is_on_a_bitmap_byte():
    """A plan whose step boundaries all fall inside a bitmap byte (9 rows, then 8 per block): every part after
    the first starts inside a block, on a multiple of 8, and the decoded rows match one thread's."""
    schema = T.RowType.of(("b", T.BooleanType()), ("s", T.STRING()), ("i", T.IntType()))
    n = 2000
    table = pa.table({"b": pa.array([None if i % 7 == 0 else bool(i % 3) for i in range(n)]),
                      "s": pa.array([None if i % 5 == 0 else "é" * (i % 13) + str(i) for i in range(n)]),
                      "i": pa.array([None if i % 11 == 0 else i for i in range(n)], pa.int32())})
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=700) as w:
        w.write(table)
    one = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=1)
    many = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=3)
    assert one.num_blocks >= 40 and min(one._block_rows) >= 9
    plan = [(0, np.arange(9, dtype=np.int32))] + [(b, np.arange(1, 9, dtype=np.int32))
                                                  for b in range(1, one.num_blocks)]
    total = 9 + 8 * (one.num_blocks - 1)
    cut = many._parts(plan, total)
    assert len(cut) > 1
    assert all(start % 8 == 0 for _, start in cut)
    assert all(steps[0][1] is not None and len(steps[0][1]) < 8 for steps, _ in cut[1:])
    assert sum(len(rows) for steps, _ in cut for _, rows in steps) == total
    assert many._decode(plan, [0, 1, 2]).to_arrow().equals(one._decode(plan, [0, 1, 2]).to_arrow())


def test_string_and_binary_bounds_match_arrow_min_max():
    """Bounds of bytes columns (sliced, large and plain Arrow arrays, non-ASCII, shared prefixes longer than
    16 bytes, nulls) are Arrow's min/max of the values written."""
    import pyarrow.compute as pc
    rng = np.random.default_rng(8)
    stem = "préfixe-commun-très-long-"
    words = [None if i % 9 == 0 else stem[:int(rng.integers(0, len(stem)))] + chr(int(rng.integers(32, 0x2FF)))
             * int(rng.integers(0, 3)) for i in range(400)]
    schema = T.RowType.of(("s", T.STRING()), ("b", T.BYTES()), ("c", T.STRING()))
    s = pa.array(words)
    b = pa.array([None if w is None else w.encode()[::-1] for w in words], pa.binary())
    c = pa.array(words, pa.large_string())
    table = pa.table({"s": s, "b": b, "c": c})
    buf = io.BytesIO()
    with RowFileWriter(buf, schema) as w:
        w.write(table.slice(3, 200))
        w.write(table.slice(250))
    written = pa.concat_tables([table.slice(3, 200), table.slice(250)])
    for fid, name in enumerate(("s", "b", "c")):
        mm = pc.min_max(written[name])
        assert w.metadata.lower_bounds[fid] == mm["min"].as_py()
        assert w.metadata.upper_bounds[fid] == mm["max"].as_py()


def test_number_bounds_match_arrow_min_max_and_order_signed_zeros():
    """Bounds of integer and float columns (sliced arrays, nulls, NaN, type limits, a cast from a wider input)
    are Arrow's min/max of the values written, NaN counted apart; -0.0 is a lower bound before 0.0."""
    import math
    import pyarrow.compute as pc
    rng = np.random.default_rng(9)
    n = 500
    schema = T.RowType.of(("t", T.TinyIntType()), ("s", T.SmallIntType()), ("i", T.IntType()),
                          ("l", T.BigIntType()), ("f", T.FloatType()), ("d", T.DoubleType()))
    mask = rng.random(n) < 0.2
    d = rng.normal(size=n) * 1e6
    d[rng.random(n) < 0.05] = np.nan
    table = pa.table({
        "t": pa.array(rng.integers(-128, 128, n).astype(np.int8), mask=mask),
        "s": pa.array(rng.integers(-2**15, 2**15, n).astype(np.int16)),
        "i": pa.array(rng.integers(-2**31, 2**31, n), pa.int64()),   # int64 input stored as INT
        "l": pa.array(np.r_[rng.integers(-2**63, 2**63 - 1, n - 2, dtype=np.int64), [-2**63, 2**63 - 1]]),
        "f": pa.array(d.astype(np.float32), mask=~mask),
        "d": pa.array(d, mask=mask)})
    buf = io.BytesIO()
    with RowFileWriter(buf, schema) as w:
        w.write(table.slice(5, 200))
        w.write(table.slice(240))
    written = pa.concat_tables([table.slice(5, 200), table.slice(240)])
    for fid, name in enumerate(("t", "s", "i", "l", "f", "d")):
        col = written[name]
        if name in ("f", "d"):
            nan = pc.is_nan(col).fill_null(False)
            assert w.metadata.nan_counts[fid] == pc.sum(nan).as_py()
            col = col.filter(pc.invert(nan))
        mm = pc.min_max(col)
        assert w.metadata.lower_bounds[fid] == mm["min"].as_py(), name
        assert w.metadata.upper_bounds[fid] == mm["max"].as_py(), name
    schema = T.RowType.of(("d", T.DoubleType()))
    for values, lo_sign, hi_sign in (([0.0, -0.0], -1, 1), ([-0.0, 0.0, -1.0], -1, 1), ([-0.0, 2.0], -1, 1),
                                     ([-3.0, 0.0], -1, 1), ([-0.0, -0.0], -1, -1)):
        with RowFileWriter(io.BytesIO(), schema) as w:
            w.write(pa.table({"d": values}))
        lo, hi = w.metadata.lower_bounds[0], w.metadata.upper_bounds[0]
        assert (lo, hi) == (min(values), max(values))
        if lo == 0:
            assert math.copysign(1, lo) == lo_sign, values
        if hi == 0:
            assert math.copysign(1, hi) == hi_sign, values


def test_threaded_read_with_every_pool_thread_held_up_runs_on_the_caller():
    """Every thread of the row pool is busy: the calling thread decodes every part itself, each part writing
    its string bytes right behind the previous one's, and the batch equals a one-thread read."""
    import threading

    from paimon_engine import _parallel
    schema = T.RowType.of(("s", T.STRING()), ("i", T.IntType()), ("b", T.BYTES()))
    n = 3000
    table = pa.table({"s": pa.array([None if i % 5 == 0 else "ü" * (i % 7) + str(i) for i in range(n)]),
                      "i": pa.array([None if i % 11 == 0 else i for i in range(n)], pa.int32()),
                      "b": pa.array([bytes([i % 256]) * (i % 23) for i in range(n)])})
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=900) as w:
        w.write(table)
    one = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=1)
    many = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=4)
    assert len(many._parts([(b, None) for b in range(many.num_blocks)], n)) > 2
    pool = _parallel._pool("row")
    release = threading.Event()
    held = [pool.submit(release.wait) for _ in range(pool._max_workers)]
    try:
        assert many.to_arrow().equals(one.to_arrow())
        assert many.to_arrow(columns=["b", "s"]).equals(one.to_arrow(columns=["b", "s"]))
    finally:
        release.set()
        for f in held:
            f.result()
    assert many.to_arrow().equals(table)


def test_string_rooms_are_kept_per_thread_and_never_shared_with_a_batch():
    """String bytes are decoded into a room the calling thread keeps between reads and copied out: a later read
    (same room) leaves an earlier batch unchanged, no batch's data shares memory with the room, reads on other
    threads at the same time and reads whose rooms exceed ROOM_KEEP (fresh rooms, joined in place) agree."""
    import threading

    from paimon_engine.formats.row import reader as R
    schema = T.RowType.of(("s", T.STRING()), ("i", T.IntType()), ("b", T.BYTES()))

    def file(seed, n):
        table = pa.table({"s": pa.array([None if i % 5 == 0 else f"{seed}-" + "ü" * (i % 7) for i in range(n)]),
                          "i": pa.array(range(n), pa.int32()),
                          "b": pa.array([bytes([(i + seed) % 256]) * (i % 23) for i in range(n)])})
        buf = io.BytesIO()
        with RowFileWriter(buf, schema, block_size=900) as w:
            w.write(table)
        return table, buf.getvalue()

    (ta, fa), (tb, fb) = file(1, 3000), file(2, 2000)
    saved = R.PARALLEL_MIN_BLOCKS
    R.PARALLEL_MIN_BLOCKS = 2
    try:
        for threads in (1, 3):
            first = RowFileReader(io.BytesIO(fa), schema, threads=threads).read_all()
            room = R._ROOMS.scratch
            second = RowFileReader(io.BytesIO(fb), schema, threads=threads).read_all()
            assert R._ROOMS.scratch is room
            assert pa.Table.from_batches([first.to_arrow()]).equals(ta)
            assert pa.Table.from_batches([second.to_arrow()]).equals(tb)
            for batch in (first, second):
                for c in batch.columns:
                    if c.data is not None:
                        assert not np.shares_memory(c.data, room)
        got, errors = {}, []

        def read(name, data, k):
            try:
                for _ in range(5):
                    got[name, k] = RowFileReader(io.BytesIO(data), schema, threads=2).to_arrow()
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)
        workers = [threading.Thread(target=read, args=(n, d, k)) for k in range(3) for n, d in (("a", fa), ("b", fb))]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        assert not errors
        assert all(v.equals(ta if name == "a" else tb) for (name, _), v in got.items())
        keep = R.ROOM_KEEP
        R.ROOM_KEEP = 0
        try:
            for threads in (1, 3):
                assert RowFileReader(io.BytesIO(fa), schema, threads=threads).to_arrow().equals(ta)
        finally:
            R.ROOM_KEEP = keep
    finally:
        R.PARALLEL_MIN_BLOCKS = saved


def test_string_bytes_are_copied_out_of_the_room_on_the_read_threads():
    """Above PARALLEL_COPY_BYTES the copies of each part's string bytes out of the scratch room (and the shift of
    its offsets) run on the read's threads, one copy per part and string column; with nulls, empty strings,
    multi-byte text and two string columns, the batch equals one thread's and holds none of the room."""
    from paimon_engine.formats.row import reader as R
    schema = T.RowType.of(("s", T.STRING()), ("i", T.IntType()), ("b", T.BYTES()))
    n = 4000
    table = pa.table({"s": pa.array([None if i % 5 == 0 else "ü" * (i % 9) + str(i) for i in range(n)]),
                      "i": pa.array(range(n), pa.int32()),
                      "b": pa.array([bytes([i % 256]) * (i % 31) for i in range(n)])})
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=900) as w:
        w.write(table)
    saved = R.PARALLEL_MIN_BLOCKS, R.PARALLEL_COPY_BYTES, R.shared_map
    calls = []

    def spy(purpose, fn, items, threads=None):
        items = list(items)
        calls.append((fn, len(items)))
        return saved[2](purpose, fn, items, threads)
    R.PARALLEL_MIN_BLOCKS, R.PARALLEL_COPY_BYTES, R.shared_map = 2, 0, spy
    try:
        for threads in (2, 3):
            calls.clear()
            many = RowFileReader(io.BytesIO(buf.getvalue()), schema, threads=threads)
            batch = many.read_all()
            parts = len(many._parts([(b, None) for b in range(many.num_blocks)], n))
            assert parts > 1
            assert (R._place, 2 * parts) in calls
            assert pa.Table.from_batches([batch.to_arrow()]).equals(table)
            for c in batch.columns:
                if c.data is not None:
                    assert not np.shares_memory(c.data, R._ROOMS.scratch)
            assert many.to_arrow(columns=["b"]).column(0).equals(table.column("b"))
    finally:
        R.PARALLEL_MIN_BLOCKS, R.PARALLEL_COPY_BYTES, R.shared_map = saved


def test_a_block_whose_last_row_ends_at_the_buffer_end_gets_room_for_its_offsets():
    """block_size 4096 starts with a 12288-byte buffer: strings of 12270..12289 bytes fill it to within a few
    bytes of its end (or past it), so the row offsets after the row need a larger buffer; every file reads back."""
    schema = T.RowType.of(("s", T.STRING()))
    for n in range(12270, 12290):
        values = ["a" * n, "b"]
        buf = io.BytesIO()
        with RowFileWriter(buf, schema, block_size=4096) as w:
            w.write(pa.table({"s": values}))
        assert w.metadata.block_count == 2
        buf.seek(0)
        assert RowFileReader(buf, schema).to_arrow().column("s").to_pylist() == values


def test_schema_checked_on_every_open(tmp_path):
    """A reader checks its schema once per schema object and remembers it: a schema with a type a .row file
    cannot hold is refused on every open, readers of equal schemas read alike, and what is remembered stays
    bounded however many schemas come by."""
    from paimon_engine.errors import UnsupportedTypeError
    from paimon_engine.formats.row import reader as R
    loc = str(tmp_path / "t.row")
    schema = T.RowType.of(("a", T.IntType()), ("s", T.STRING()))
    with RowFileWriter(loc, schema) as w:
        w.write(pa.table({"a": pa.array([1, None, 3], pa.int32()), "s": ["x", "y", None]}))
    bad = T.RowType.of(("a", T.IntType()), ("u", T.UuidType()))
    for _ in range(2):
        with pytest.raises(UnsupportedTypeError, match="cannot be stored"):
            RowFileReader(loc, bad)
    for i in range(3 * R._FACTS_MAX):
        s = T.RowType.of(("a", T.IntType()), ("s", T.STRING()), start_id=i)
        with RowFileReader(loc, s) as r:
            assert r.get_row(2) == {"a": 3, "s": None}
            assert r.read_all().to_pylist() == [{"a": 1, "s": "x"}, {"a": None, "s": "y"}, {"a": 3, "s": None}]
        assert len(R._FACTS) <= R._FACTS_MAX


def test_bounds_taken_block_by_block_are_those_of_all_rows():
    """With small blocks the bounds are taken over each block's rows as it is encoded: they still equal Arrow's
    min/max of everything written (extremes in late blocks, several write calls, -0.0 written after 0.0, NaN
    counted, a write whose float column is all null)."""
    import math
    import pyarrow.compute as pc
    rng = np.random.default_rng(41)
    n = 3000
    words = [f"w{int(x):05d}" for x in rng.integers(0, 99999, n)]
    words[2711] = "!first"          # the smallest, far into the file
    words[2999] = "~last"
    d = np.abs(rng.normal(size=n))
    d[rng.random(n) < 0.03] = np.nan
    d[100], d[1500], d[2900] = 0.0, 0.0, -0.0     # no negative value: the lower bound is the -0.0 of a late block
    z = -d                                      # no positive value: the upper bound is the 0.0 of a late block
    ints = rng.integers(-10**9, 10**9, n)
    ints[2500] = -2**63
    schema = T.RowType.of(("s", T.STRING()), ("d", T.DoubleType()), ("l", T.BigIntType()), ("z", T.FloatType()))
    mask = rng.random(n) < 0.1
    mask[[100, 1500, 2900]] = False
    table = pa.table({"s": words, "d": pa.array(d, mask=mask), "l": ints, "z": pa.array(z.astype(np.float32))})
    nulls = pa.table({"s": ["m"] * 5, "d": pa.array([None] * 5, pa.float64()), "l": [1] * 5,
                      "z": pa.array([None] * 5, pa.float32())})
    with RowFileWriter(io.BytesIO(), schema, block_size=256) as w:
        w.write(table.slice(0, 1000))
        w.write(nulls)
        w.write(table.slice(1000))
    assert w.metadata.block_count > 100
    written = pa.concat_tables([table.slice(0, 1000), nulls, table.slice(1000)])
    assert w.metadata.lower_bounds[0] == "!first" and w.metadata.upper_bounds[0] == "~last"
    assert w.metadata.lower_bounds[2] == -2**63
    for fid, name in ((1, "d"), (3, "z")):
        col = written[name]
        nan = pc.is_nan(col).fill_null(False)
        assert w.metadata.nan_counts[fid] == pc.sum(nan).as_py() > 0
        mm = pc.min_max(col.filter(pc.invert(nan)))
        assert (w.metadata.lower_bounds[fid], w.metadata.upper_bounds[fid]) == (mm["min"].as_py(), mm["max"].as_py())
    assert math.copysign(1, w.metadata.lower_bounds[1]) == -1 and w.metadata.lower_bounds[1] == 0
    assert math.copysign(1, w.metadata.upper_bounds[3]) == 1 and w.metadata.upper_bounds[3] == 0
