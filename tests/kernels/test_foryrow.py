"""The foryrow kernel and its twin: argument checks and identical statuses on bad rows."""

import decimal

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine._pykernels.status import BAD_LENGTH, OUT_OF_RANGE, TRUNCATED
from paimon_engine.formats.fory import ForySchema

from .impls import implementations

SCHEMA = ForySchema(pa.schema([("a", pa.int64()), ("s", pa.string()), ("l", pa.list_(pa.int32()))]))


@pytest.fixture(params=implementations("foryrow"))
def k(request):
    return request.param


def _decode(k, buf, offsets, select=(1, 1, 1), layout="standard"):
    lay = SCHEMA.layout(layout)
    counts = np.zeros((len(lay.nodes), 3), dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    st = k.decode_rows(lay.table, lay.children, np.frombuffer(buf, np.uint8), np.asarray(offsets, np.int64),
                       len(offsets) - 1, np.asarray(select, np.uint8), lay.compact, None, counts, state)
    return st, counts, state


def test_argument_checks(k):
    lay = SCHEMA.layout("standard")
    counts = np.zeros((len(lay.nodes), 3), dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    buf = np.zeros(64, np.uint8)
    # offsets shorter than nrows + 1
    assert k.decode_rows(lay.table, lay.children, buf, np.zeros(1, np.int64), 1, np.ones(3, np.uint8), False,
                         None, counts, state) == BAD_LENGTH
    # select of the wrong length
    assert k.decode_rows(lay.table, lay.children, buf, np.zeros(2, np.int64), 1, np.ones(2, np.uint8), False,
                         None, counts, state) == BAD_LENGTH
    # encode: inputs list of the wrong length
    assert k.encode_rows(lay.table, lay.children, [], 0, False, np.zeros(8, np.uint8), np.zeros(1, np.int64),
                         np.zeros(4, np.int64)) == BAD_LENGTH
    with pytest.raises(ValueError):
        k.decode_rows(np.zeros((2, 3), np.int64), lay.children, buf, np.zeros(2, np.int64), 1,
                      np.ones(3, np.uint8), False, None, counts[:2], state)


def test_statuses_and_locations(k):
    # a row shorter than its fixed region
    st, _, state = _decode(k, bytes(16), [0, 16])
    assert st == TRUNCATED and state.tolist() == [0, 0, 0]
    # the string slot points past the row (row = 8-byte bitmap + 3 slots = 32 bytes)
    row = bytearray(32)
    row[16:24] = ((40 << 32) | 1).to_bytes(8, "little")
    st, _, state = _decode(k, bytes(row), [0, 32])
    assert st == OUT_OF_RANGE and state.tolist() == [0, 16, 2]
    # an array whose count cannot fit in its bytes
    row = bytearray(48)
    row[8 + 16:8 + 24] = ((32 << 32) | 16).to_bytes(8, "little")
    row[16:24] = bytes(8)
    row[32:40] = (1000).to_bytes(8, "little")
    row[:1] = b"\x02"  # s is null
    st, _, state = _decode(k, bytes(row), [0, 48])
    assert st == BAD_LENGTH and state[0] == 0 and state[1] == 32


def test_counting_pass_counts(k):
    from paimon_engine.formats import fory
    rb = pa.record_batch({"a": pa.array([1, None], pa.int64()), "s": ["xy", None],
                          "l": pa.array([[1, 2, 3], None], pa.list_(pa.int32()))})
    buf, offsets = fory.encode_rows(rb)
    st, counts, _ = _decode(k, bytes(buf), offsets)
    assert st == 0
    lay = SCHEMA.layout("standard")
    by_name = {n.field.name: counts[n.index].tolist() for n in lay.nodes}
    # the counting pass sizes outputs; top-level fixed-width fields are counted without being visited
    assert by_name["a"][:2] == [2, 0] and by_name["s"] == [2, 2, 1] and by_name["l"] == [2, 0, 1]
    assert by_name["item"] == [3, 0, 0]
    # projection: unselected fields are not visited
    st, counts, _ = _decode(k, bytes(buf), offsets, select=(0, 1, 0))
    assert counts[lay.root.children[0].index].tolist() == [0, 0, 0]


def _encode_inputs(rb, schema, layout):
    from paimon_engine.formats.fory import codec
    lay = schema.layout(layout)
    inputs = [None] * len(lay.nodes)
    for node, arr in zip(lay.root.children, codec._conform(rb, schema)):
        codec._collect(node, arr, inputs)
    return lay, inputs


def _mixed_batch(n):
    rng = np.random.default_rng(5)
    lens = rng.integers(0, 4, n)
    return pa.record_batch({
        "a": pa.array(rng.integers(-1000, 1000, n), mask=rng.random(n) < 0.1),
        "q": pa.array(rng.integers(0, 100, n).astype(np.int32)),
        "b": pa.array(rng.random(n) < 0.5),
        "s": pa.array([None if i % 7 == 3 else "x" * (i % 19) for i in range(n)]),
        "l": pa.ListArray.from_arrays(np.concatenate([[0], np.cumsum(lens)]).astype(np.int32),
                                      pa.array(rng.integers(0, 9, int(lens.sum())).astype(np.int16),
                                               mask=rng.random(int(lens.sum())) < 0.2)),
        "st": pa.array([{"x": i, "y": None if i % 5 == 0 else str(i)} for i in range(n)]),
    }).slice(3)


def measured_both_ways(k, lay, inputs, n):
    """Row sizes and total of ``measure_rows`` over rows 0..n, checked equal between ``k`` and the twin."""
    from paimon_engine import _speedups
    sizes = np.zeros(n + 1, np.int64)
    total = k.measure_rows(lay.table, lay.children, inputs, 0, n, lay.compact, sizes)
    twin_sizes = np.zeros(n + 1, np.int64)
    assert _speedups.twin("foryrow").measure_rows(lay.table, lay.children, inputs, 0, n, lay.compact,
                                                   twin_sizes) == total
    assert (sizes == twin_sizes).all()
    return sizes, total


@pytest.mark.parametrize("string_nulls", [True, False])
@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_encode_sized_matches_twin_over_many_chunks(k, layout, string_nulls):
    # more rows than one chunk of the compiled kernel, a sliced batch (Arrow offsets), nulls at every level
    # (or a string column without nulls, lengths 0..18 around the 8-byte padding)
    from paimon_engine import _speedups
    rb = _mixed_batch(1000)
    if not string_nulls:
        rb = rb.set_column(3, "s", pa.array(["y" * (i % 19) for i in range(rb.num_rows)]))
        assert rb.column(3).null_count == 0
    schema = ForySchema(rb.schema)
    lay, inputs = _encode_inputs(rb, schema, layout)
    n = rb.num_rows
    sizes, total = measured_both_ways(k, lay, inputs, n)
    offsets = np.cumsum(sizes)
    # running sizes: a range's own offsets (from 0 for the first range, from its first row for a later one)
    run = np.full(n + 1, -1, np.int64)
    assert k.measure_rows(lay.table, lay.children, inputs, 0, 300, lay.compact, run, True) == offsets[300]
    assert k.measure_rows(lay.table, lay.children, inputs, 300, n, lay.compact, run, True) == total - offsets[300]
    assert run[0] == -1 and (run[1:301] == offsets[1:301]).all()
    assert (run[301:] == offsets[301:] - offsets[300]).all()
    out = np.full(total, 0xAB, np.uint8)   # every byte of a row is written, padding included
    state = np.array([0, 0, 0, 0], np.int64)
    assert k.encode_rows(lay.table, lay.children, inputs, n, lay.compact, out, offsets.copy(), state, True) == n
    ref = np.zeros(total, np.uint8)
    ref_offsets = np.zeros(n + 1, np.int64)
    st2 = np.array([0, 0, 0, 0], np.int64)
    assert _speedups.twin("foryrow").encode_rows(lay.table, lay.children, inputs, n, lay.compact, ref,
                                                 ref_offsets, st2) == n
    assert (ref_offsets == offsets).all() and bytes(out) == bytes(ref)
    assert state.tolist()[:2] == [n, total]
    # a buffer that holds only the first 300 rows: 300 rows written, the state says where to go on
    part = np.zeros(int(offsets[300]) + 1, np.uint8)
    state = np.array([0, 0, 0, 0], np.int64)
    assert k.encode_rows(lay.table, lay.children, inputs, n, lay.compact, part, offsets.copy(), state, True) == 300
    assert state.tolist()[:2] == [300, int(offsets[300])] and bytes(part[:-1]) == bytes(ref[:int(offsets[300])])


def _fixed_shapes_batch(n):
    # the shapes the encoder writes a field at a time: nullable fixed-width values of every width, lists (and a
    # large list) of fixed-width elements without nulls, 0..70 long (one and two bitmap words, element regions
    # with and without padding), strings of 0..40 bytes without nulls; sliced so every Arrow offset is non-zero
    rng = np.random.default_rng(11)
    m = n + 5
    cols = {}
    for name, t in [("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()), ("f32", pa.float32()),
                    ("i64", pa.int64())]:
        cols[name] = pa.array(rng.integers(-100, 100, m), type=t, mask=rng.random(m) < 0.3)
    for name, t, large in [("l8", pa.int8(), False), ("l16", pa.int16(), True), ("l32", pa.int32(), False),
                           ("l64", pa.int64(), False)]:
        lens = rng.integers(0, 71, m)
        offs = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64 if large else np.int32)
        vals = pa.array(rng.integers(-50, 50, int(offs[-1])), type=t)
        cols[name] = (pa.LargeListArray if large else pa.ListArray).from_arrays(pa.array(offs), vals.slice(0))
    cols["s"] = pa.array(["z" * int(k) for k in rng.integers(0, 41, m)])
    # fixed-width values narrower than their 8-byte slot without nulls (the slot's padding must be zero), and
    # fields the per-field loops do not cover (booleans, decimals, nullable strings) between them
    for name, t in [("n8", pa.int8()), ("n16", pa.int16()), ("n32", pa.int32()), ("nf32", pa.float32())]:
        cols[name] = pa.array(rng.integers(-100, 100, m), type=t)
    cols["b"] = pa.array(rng.random(m) < 0.5, mask=rng.random(m) < 0.2)
    cols["d"] = pa.array([None if i % 4 == 1 else decimal.Decimal(i * 7 - 300).scaleb(-2) for i in range(m)],
                         type=pa.decimal128(10, 2))
    cols["sn"] = pa.array([None if i % 3 == 0 else "q" * (i % 13) for i in range(m)])
    cols["f64"] = pa.array(rng.random(m))
    return pa.record_batch(cols).slice(5)


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_encode_field_loops_match_twin(k, layout):
    from paimon_engine import _speedups
    twin = _speedups.twin("foryrow")
    rb = _fixed_shapes_batch(700)
    schema = ForySchema(rb.schema)
    lay, inputs = _encode_inputs(rb, schema, layout)
    n = rb.num_rows
    sizes, total = measured_both_ways(k, lay, inputs, n)
    offsets = np.cumsum(sizes)
    out = np.full(total, 0xAB, np.uint8)   # padding, bitmaps and null slots must be written as zeros
    state = np.array([0, 0, 0, 0], np.int64)
    assert k.encode_rows(lay.table, lay.children, inputs, n, lay.compact, out, offsets.copy(), state, True) == n
    ref = np.zeros(total, np.uint8)
    ref_offsets = np.zeros(n + 1, np.int64)
    assert twin.encode_rows(lay.table, lay.children, inputs, n, lay.compact, ref, ref_offsets,
                            np.array([0, 0, 0, 0], np.int64)) == n
    assert (ref_offsets == offsets).all() and bytes(out) == bytes(ref)


def test_encode_names_the_first_row_with_a_null_without_null_bit(k):
    # compact layout, fields not nullable: b is null in row 10, a (an earlier field) in row 20; the first
    # failing row is 10 whichever order the fields are visited in
    a = pa.array([None if i == 20 else i for i in range(600)], pa.int64())
    b = pa.array([None if i == 10 else i for i in range(600)], pa.int32())
    rb = pa.record_batch([a, b], names=["a", "b"])
    schema = ForySchema(pa.schema([pa.field("a", pa.int64(), nullable=False),
                                   pa.field("b", pa.int32(), nullable=False)]))
    lay, inputs = _encode_inputs(rb, schema, "compact")
    sizes = np.zeros(601, np.int64)
    total = k.measure_rows(lay.table, lay.children, inputs, 0, 600, True, sizes)
    state = np.array([0, 0, 0, 0], np.int64)
    got = k.encode_rows(lay.table, lay.children, inputs, 600, True, np.zeros(total, np.uint8), np.cumsum(sizes),
                        state, True)
    assert got < 0 and state[2] == 10 and lay.paths()[int(state[3])] == "b"


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_decode_over_many_chunks_and_a_late_bad_row(k, layout):
    # top-level fixed-width fields with and without nulls over more rows than one chunk of the compiled kernel
    from paimon_engine.formats import fory
    rb = _mixed_batch(1000)
    buf, offsets = fory.encode_rows(rb, layout=layout)
    schema = ForySchema(rb.schema)
    lay = schema.layout(layout)
    n = rb.num_rows
    sel = np.ones(len(schema), np.uint8)
    counts = np.zeros((len(lay.nodes), 3), np.int64)
    state = np.zeros(3, np.int64)
    assert k.decode_rows(lay.table, lay.children, buf, offsets, n, sel, lay.compact, None, counts, state) == 0
    from paimon_engine.formats.fory import codec
    wanted = set(range(1, len(lay.nodes)))
    outs, table, _ = codec._allocate(lay, wanted, {i: (int(counts[i, 0]), int(counts[i, 1])) for i in wanted})
    fill = np.zeros_like(counts)
    assert k.decode_rows(table, lay.children, buf, offsets, n, sel, lay.compact, outs, fill, state) == 0
    outs = codec._trim(lay, outs, fill)
    got = pa.RecordBatch.from_arrays([codec._build(node, fill, outs, set()) for node in lay.root.children],
                                     schema=rb.schema)
    assert got.equals(rb)
    # row 700 cut short of its fixed region: the status names row 700 in both passes
    bad = offsets.copy()
    bad[701] = bad[700] + 4
    for outputs in (None, codec._allocate(lay, wanted, {i: (int(counts[i, 0]), int(counts[i, 1]))
                                                        for i in wanted})[0]):
        state[:] = 0
        st = k.decode_rows(lay.table, lay.children, buf, bad[:702], 701, sel, lay.compact, outputs,
                           np.zeros_like(counts), state)
        assert st == TRUNCATED and state[0] == 700
