"""Round trips over random schemas and data, both layouts, compiled kernels against their twins."""

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_engine import _speedups
from paimon_engine.formats import fory

LEAVES = [pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(),
          pa.string(), pa.binary(), pa.date32(), pa.timestamp("us"), pa.decimal128(12, 3),
          pa.large_string(), pa.duration("us")]

names = st.text(alphabet="abcdefgh", min_size=1, max_size=4)


def fields(type_strategy):
    return st.builds(pa.field, names, type_strategy, st.booleans())


def unique_struct(type_strategy):
    return st.lists(fields(type_strategy), min_size=1, max_size=4, unique_by=lambda f: f.name).map(pa.struct)


types = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.one_of(
        st.builds(lambda f: pa.list_(f), fields(inner)),
        st.builds(lambda k, v: pa.map_(k, v), st.sampled_from([pa.string(), pa.int32()]), fields(inner)),
        unique_struct(inner),
    ),
    max_leaves=6,
)

schemas = st.lists(fields(types), min_size=1, max_size=5, unique_by=lambda f: f.name).map(pa.schema)


def values(t, nullable):
    if pa.types.is_boolean(t):
        v = st.booleans()
    elif pa.types.is_integer(t):
        v = st.integers(-(2 ** (t.bit_width - 1)), 2 ** (t.bit_width - 1) - 1)
    elif pa.types.is_float32(t):
        v = st.floats(width=32, allow_nan=False)
    elif pa.types.is_float64(t):
        v = st.floats(allow_nan=False)
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        v = st.text(max_size=20)
    elif pa.types.is_binary(t):
        v = st.binary(max_size=20)
    elif pa.types.is_date32(t):
        v = st.dates(dt.date(1900, 1, 1), dt.date(2200, 1, 1))
    elif pa.types.is_timestamp(t):
        v = st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1))
    elif pa.types.is_duration(t):
        v = st.timedeltas(dt.timedelta(days=-9999), dt.timedelta(days=9999))
    elif pa.types.is_decimal(t):
        v = st.decimals(min_value=decimal.Decimal("-999999999.999"), max_value=decimal.Decimal("999999999.999"),
                        places=3, allow_nan=False, allow_infinity=False)
    elif pa.types.is_map(t):
        v = st.lists(st.tuples(values(t.key_type, False), values(t.item_type, t.item_field.nullable)), max_size=4)
    elif pa.types.is_list(t):
        v = st.lists(values(t.value_type, t.value_field.nullable), max_size=5)
    else:
        v = st.fixed_dictionaries({f.name: values(f.type, f.nullable) for f in t})
    return st.one_of(st.none(), v) if nullable else v


@st.composite
def batches(draw):
    schema = draw(schemas)
    rows = draw(st.lists(st.fixed_dictionaries({f.name: values(f.type, f.nullable) for f in schema}),
                         min_size=0, max_size=6))
    return pa.RecordBatch.from_pylist(rows, schema=schema)


def _with(name, module, fn):
    saved = _speedups._loaded.get(name)
    _speedups._loaded[name] = module
    try:
        return fn()
    finally:
        if saved is None:
            _speedups._loaded.pop(name, None)
        else:
            _speedups._loaded[name] = saved


@pytest.mark.parametrize("layout", ["standard", "compact"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rb=batches())
def test_round_trip(layout, rb):
    buf, offsets = fory.encode_rows(rb, layout=layout)
    assert len(offsets) == rb.num_rows + 1
    out = fory.decode_rows(buf, offsets, rb.schema, layout)
    assert out.equals(rb), (out.to_pylist(), rb.to_pylist())
    expected = rb.to_pylist()
    schema = fory.ForySchema(rb.schema)
    for i, row in enumerate(fory.split_rows(buf, offsets)):
        assert fory.RowView(row, schema, layout).to_dict() == expected[i]
    # projection of the last field alone
    last = rb.schema.names[-1]
    assert fory.decode_rows(buf, offsets, rb.schema, layout, columns=[last]).column(0).equals(rb.column(last))


@pytest.mark.parametrize("layout", ["standard", "compact"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rb=batches())
def test_twins_agree(layout, rb):
    if _speedups.compiled("foryrow") is None:
        pytest.skip("compiled kernels not built in this run")
    buf, offsets = fory.encode_rows(rb, layout=layout)
    tbuf, toffsets = _with("foryrow", _speedups.twin("foryrow"), lambda: fory.encode_rows(rb, layout=layout))
    assert bytes(tbuf) == bytes(buf) and toffsets.tolist() == offsets.tolist()
    tout = _with("foryrow", _speedups.twin("foryrow"), lambda: fory.decode_rows(buf, offsets, rb.schema, layout))
    assert tout.equals(rb)
    schema = fory.ForySchema(rb.schema)
    twin_view = _speedups.twin("foryview")
    for row in fory.split_rows(buf, offsets):
        sch = _with("foryview", twin_view, lambda: fory.schema.view_schema(schema.layout(layout)))
        assert twin_view.RowView(row, sch).to_dict() == fory.RowView(row, schema, layout).to_dict()


def test_sliced_and_chunked_input():
    rb = pa.record_batch({"a": pa.array([1, None, 3, 4], pa.int64()),
                          "l": pa.array([[1], None, [2, 3], []], pa.list_(pa.int16())),
                          "s": pa.array([{"x": "p"}, {"x": None}, None, {"x": "q"}], pa.struct([("x", pa.string())]))})
    part = rb.slice(1, 3)
    buf, offsets = fory.encode_rows(part)
    assert fory.decode_rows(buf, offsets, part.schema).equals(part)
    table = pa.Table.from_batches([rb.slice(0, 2), rb.slice(2)])
    buf, offsets = fory.encode_rows(table)
    assert fory.decode_rows(buf, offsets, rb.schema).equals(rb)


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_fixed_nullable_and_list_loops_match_the_twin(layout):
    """The encoder's loops for nullable 8- and 4-byte values (no branch on the null bit) and for lists of
    fixed-width values without nulls (the standard layout's own loop; list bodies of 0 to 40 bytes), over more rows
    than one chunk and from a slice that starts inside a validity byte: the twin's bytes, and a round trip."""
    if _speedups.compiled("foryrow") is None:
        pytest.skip("compiled kernels not built in this run")
    n = 1100
    rng = np.random.default_rng(3)
    big = rng.integers(-(1 << 62), 1 << 62, n)
    counts = rng.integers(0, 6, n)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    rb = pa.record_batch({
        "i64": pa.array(big, pa.int64(), mask=rng.random(n) < 0.3),
        "f64": pa.array(rng.random(n), pa.float64(), mask=rng.random(n) < 0.5),
        "i32": pa.array(big.astype(np.int32), pa.int32(), mask=rng.random(n) < 0.1),
        "l64": pa.ListArray.from_arrays(starts, pa.array(rng.integers(-9, 1 << 40, int(starts[-1])))),
        "l32": pa.ListArray.from_arrays(starts, pa.array(rng.integers(-9, 9, int(starts[-1])), pa.int32())),
        "s": pa.array(["x" * int(k) for k in rng.integers(0, 40, n)]),
    })
    assert rb.column("i64").null_count and rb.column("i32").null_count
    for part in (rb, rb.slice(3, 1000), rb.slice(517)):
        buf, offsets = fory.encode_rows(part, layout=layout)
        tbuf, toffsets = _with("foryrow", _speedups.twin("foryrow"), lambda: fory.encode_rows(part, layout=layout))
        assert bytes(tbuf) == bytes(buf) and toffsets.tolist() == offsets.tolist()
        assert fory.decode_rows(buf, offsets, part.schema, layout).equals(part)


@pytest.fixture
def parallel(monkeypatch):
    """Force the threaded paths (row ranges for encode, field groups for decode) on small batches."""
    from paimon_engine.formats.fory import codec
    monkeypatch.setattr(codec, "PARALLEL_MIN_ROWS", 1)
    monkeypatch.setattr(codec, "_threads", lambda: 3)
    return codec


@pytest.mark.parametrize("layout", ["standard", "compact"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(rb=batches())
def test_threaded_paths_match(parallel, layout, rb):
    buf, offsets = fory.encode_rows(rb, layout=layout)
    parallel.PARALLEL_MIN_ROWS = 10 ** 9
    seq_buf, seq_offsets = fory.encode_rows(rb, layout=layout)
    parallel.PARALLEL_MIN_ROWS = 1
    assert bytes(buf) == bytes(seq_buf) and offsets.tolist() == seq_offsets.tolist()
    assert fory.decode_rows(buf, offsets, rb.schema, layout).equals(rb)


def test_threaded_decode_reports_the_first_bad_row(parallel):
    import struct
    from paimon_engine.errors import CorruptFileError
    rb = pa.record_batch({"a": pa.array(range(10), pa.int64()), "s": [f"v{i}" for i in range(10)],
                          "l": pa.array([[i] for i in range(10)], pa.list_(pa.int64()))})
    assert len(parallel._field_groups(fory.ForySchema(rb.schema).layout("standard"), [0, 1, 2], 10)) == 3
    buf, offsets = fory.encode_rows(rb)
    bad = bytearray(buf)
    # row 6: the list slot points past the row; row 8: the string slot does
    struct.pack_into("<Q", bad, int(offsets[6]) + 8 + 16, (4096 << 32) | 16)
    struct.pack_into("<Q", bad, int(offsets[8]) + 8 + 8, (4096 << 32) | 2)
    with pytest.raises(CorruptFileError) as info:
        fory.decode_rows(bytes(bad), offsets, rb.schema)
    assert info.value.row == 6 and info.value.field == "l"


def test_threaded_codec_after_fork(parallel):
    import multiprocessing
    rb = pa.record_batch({"a": pa.array(range(100), pa.int64()), "s": [str(i) for i in range(100)]})
    fory.encode_rows(rb)  # the parent's pool exists now
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        sizes = pool.apply_async(_encoded_size, (rb,)).get(timeout=60)
    buf, _ = fory.encode_rows(rb)
    assert sizes == len(buf)


def _encoded_size(rb):
    from paimon_engine.formats.fory import codec
    codec.PARALLEL_MIN_ROWS = 1
    buf, _ = fory.encode_rows(rb)
    return len(buf)
