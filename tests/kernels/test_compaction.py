"""Compaction kernels (runs of kept rows copied out of Arrow buffers): compiled and twin agree, and
``scan.deletes.compact`` equals Arrow's filter for every flat type, with nulls, slices and chunks."""
import datetime
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine import _speedups
from paimon_engine.scan import deletes as D

from .impls import implementations

IMPLS = implementations("deletes")


def _runs(kernel, keep):
    keep = np.asarray(keep, dtype=np.uint8)
    s = np.zeros((len(keep) + 1) // 2 or 1, np.int64)
    ln = np.zeros_like(s)
    k = kernel.mask_runs(keep, s, ln)
    return k, s[:max(k, 0)].tolist(), ln[:max(k, 0)].tolist()


@pytest.mark.parametrize("kernel", IMPLS)
@settings(max_examples=60, deadline=None)
@given(keep=st.lists(st.booleans(), max_size=70))
def test_mask_runs(kernel, keep):
    k, s, ln = _runs(kernel, keep)
    want = [i for i, v in enumerate(keep) if v]
    assert [i for a, n in zip(s, ln) for i in range(a, a + n)] == want
    assert all(n > 0 for n in ln) and all(a + n < b for a, n, b in zip(s, ln, s[1:]))
    assert (k, s, ln) == _runs(_speedups.twin("deletes"), keep)


@pytest.mark.parametrize("kernel", IMPLS)
def test_mask_runs_reports_short_outputs(kernel):
    keep = np.array([1, 0, 1, 0, 1], np.uint8)
    s = np.zeros(2, np.int64)
    assert kernel.mask_runs(keep, s, s.copy()) == -4


@pytest.mark.parametrize("kernel", IMPLS)
@settings(max_examples=60, deadline=None)
@given(pos=st.lists(st.integers(-3, 60), max_size=30), start=st.integers(0, 8), count=st.integers(0, 50))
def test_position_runs_kernel(kernel, pos, start, count):
    pos = np.array(sorted(pos), np.int64)             # sorted, repeats allowed
    s, ln = np.zeros(len(pos) + 1, np.int64), np.zeros(len(pos) + 1, np.int64)
    k = kernel.position_runs(pos, start, count, s, ln)
    kept = [r for r in range(start, start + count) if r not in set(pos.tolist())]
    assert [start + a + i for a, n in zip(s[:k], ln[:k]) for i in range(n)] == kept
    assert all(n > 0 for n in ln[:k]) and all(a + n < b for a, n, b in zip(s[:k], ln[:k], s[1:k]))
    s2, ln2 = np.zeros_like(s), np.zeros_like(ln)
    assert _speedups.twin("deletes").position_runs(pos, start, count, s2, ln2) == k
    assert (s2[:k].tolist(), ln2[:k].tolist()) == (s[:k].tolist(), ln[:k].tolist())


@pytest.mark.parametrize("kernel", IMPLS)
def test_position_runs_kernel_rejects_bad_input(kernel):
    s, ln = np.zeros(4, np.int64), np.zeros(4, np.int64)
    assert kernel.position_runs(np.array([5, 2, 7], np.int64), 0, 10, s, ln) == -5      # not sorted
    assert kernel.position_runs(np.array([1, 3, 5, 7], np.int64), 0, 10, s[:2], ln) == -4  # 5 runs, room for 2
    assert kernel.position_runs(np.array([1], np.int64), -1, 10, s, ln) == -4          # negative start
    assert kernel.position_runs(np.array([1], np.int64), 0, -1, s, ln) == -4           # negative count
    assert kernel.position_runs(np.array([1], np.int64), 2**62, 2**62, s, ln) == -4    # end past int64
    with pytest.raises(Exception, match="not sorted|invalid value"):
        D.position_runs(np.array([5, 2, 7], np.int64), 0, 10)


@pytest.mark.parametrize("kernel", IMPLS)
def test_take_runs_kernels_agree_and_check_ranges(kernel):
    twin = _speedups.twin("deletes")
    src = np.arange(40, dtype=np.uint8)
    starts = np.array([0, 3, 7], np.int64)
    lengths = np.array([2, 1, 3], np.int64)
    for impl in (kernel, twin):
        out = np.zeros(24, np.uint8)
        assert impl.take_runs_fixed_columns([src], [4], starts, lengths, 3, [out]) == 6
        assert out.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39]
        bad = np.array([2, 1, 4], np.int64)
        assert impl.take_runs_fixed_columns([src], [4], starts, bad, 3, [out]) == -4                # past the source
        assert impl.take_runs_fixed_columns([src], [4], starts, lengths, 3, [np.zeros(23, np.uint8)]) == -4  # short
        offs = np.array([0, 1, 3, 3, 6, 10, 10, 11, 15, 15, 20], np.int32)
        data = np.frombuffer(b"abcdefghijklmnopqrst", np.uint8)
        assert impl.runs_data_size(offs, starts, lengths, 3, 20) == 15
        oo, od = np.zeros(7, np.int32), np.zeros(15, np.uint8)
        assert impl.take_runs_binary(offs, data, starts, lengths, 3, oo, od) == 6
        assert oo.tolist() == [0, 1, 3, 6, 10, 10, 15] and od.tobytes() == b"abcdeflmnopqrst"
        assert impl.runs_data_size(offs, starts, lengths, 3, 19) == -4       # offsets past the data
        assert impl.take_runs_binary(offs, data, starts, lengths, 3, oo, od[:14]) == -4
        bits = np.packbits(np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0], np.uint8), bitorder="little")
        ob = np.zeros(1, np.uint8)
        assert impl.take_runs_bits(bits, 1, starts, lengths, 3, ob) == 4
        assert np.unpackbits(ob, bitorder="little")[:6].tolist() == [0, 1, 0, 1, 1, 1]
        assert impl.take_runs_bits(bits, 7, starts, lengths, 3, ob) == -4   # 9 bits left, runs need 10


FLAT = [
    pa.array([1, None, -3, 4, 5, 6, None, 8, 9, 10], pa.int64()),
    pa.array([1, 2, None, 4, 5, 6, 7, 8, 9, 10], pa.int8()),
    pa.array([0.5, None, 2.5, -1.0, 3.0, 1e300, 2.0, None, 0.0, -0.0], pa.float32()),
    pa.array([True, None, False, True, True, False, None, True, False, True]),
    pa.array(["a", None, "", "dd", "é" * 5, "f", "ggg", None, "i", "jj"]),
    pa.array([b"a", None, b"", b"dd", b"e", b"f", b"ggg", None, b"i", b"jj"], pa.large_binary()),
    pa.array(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"], pa.large_string()),
    pa.array([decimal.Decimal("1.10"), None] + [decimal.Decimal(i) for i in range(8)], pa.decimal128(10, 2)),
    pa.array([datetime.date(2020, 1, i + 1) for i in range(10)], pa.date32()),
    pa.array(list(range(10)), pa.timestamp("us", tz="UTC")),
    pa.array([b"abcd"] * 9 + [None], pa.binary(4)),
    pa.array([[1], None, [], [2, 3], [4], [5], [6], [7], [8], [9]]),                   # nested: Arrow's filter
    pa.array(["x", "y"] * 5).dictionary_encode(),
]


@pytest.mark.parametrize("arr", FLAT, ids=lambda a: str(a.type))
@settings(max_examples=25, deadline=None)
@given(keep=st.lists(st.booleans(), min_size=10, max_size=10), cut=st.integers(0, 10), chunked=st.booleans())
def test_compact_equals_arrow_filter(arr, keep, cut, chunked):
    keep = np.array(keep)
    want = pc.filter(arr, pa.array(keep))
    runs = D.keep_runs(keep)
    col = pa.chunked_array([arr.slice(0, cut), arr.slice(cut)], type=arr.type) if chunked else arr
    got = D.compact(col, runs)
    got = got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got
    got.validate(full=True)
    assert got.equals(want)
    # a slice (non-zero offset) of a longer array
    big = pa.concat_arrays([arr, arr])
    assert D.compact(big.slice(10), runs).equals(want)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 300), data=st.data())
def test_position_runs_match_keep_mask(n, data):
    pos = np.array(sorted(set(data.draw(st.lists(st.integers(-5, n + 5), max_size=40)))), np.int64)
    start = data.draw(st.integers(0, 5))
    runs = D.position_runs(pos, start, n)
    keep = D.keep_mask(pos, start, n)
    assert runs.keep().tolist() == keep.tolist()
    assert runs.kept == int(keep.sum())
    again = D.keep_runs(keep)
    assert (again.starts[:again.count].tolist(), again.lengths[:again.count].tolist()) == \
        (runs.starts[:runs.count].tolist(), runs.lengths[:runs.count].tolist())


# ---------------------------------------------------------------- dictionary columns

def _dict_case(data):
    values = data.draw(st.lists(st.binary(max_size=20), min_size=1, max_size=8))
    n = data.draw(st.integers(0, 60))
    idx = data.draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n))
    valid = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keep = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return values, np.array(idx, np.int32), valid, keep


@pytest.mark.parametrize("kernel", IMPLS)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), with_nulls=st.booleans())
def test_dictionary_kernels_agree(kernel, data, with_nulls):
    values, idx, valid, keep = _dict_case(data)
    offs = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int32)
    blob = np.frombuffer(b"".join(values) + b"\0", np.uint8)[:offs[-1]]
    vbits = np.packbits(np.array(valid, np.uint8), bitorder="little") if with_nulls else np.zeros(0, np.uint8)
    if with_nulls:
        idx = np.where(valid, idx, 1000).astype(np.int32)       # indices of null rows are never looked at
    runs = D.keep_runs(np.array(keep, bool))
    want = [b"" if with_nulls and not valid[i] else values[idx[i]] for i in range(len(idx)) if keep[i]]
    results = []
    for impl in (kernel, _speedups.twin("deletes")):
        size = impl.dictionary_data_size(offs, len(blob), idx, vbits, 0, runs.starts, runs.lengths, runs.count)
        assert size == sum(len(v) for v in want)
        oo, od = np.zeros(runs.kept + 1, np.int32), np.zeros(size, np.uint8)
        assert impl.take_runs_dictionary(offs, blob, idx, vbits, 0, runs.starts, runs.lengths, runs.count,
                                         oo, od) == runs.kept
        got = [od[oo[i]:oo[i + 1]].tobytes() for i in range(runs.kept)]
        assert got == want
        results.append((oo.tolist(), od.tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("kernel", IMPLS)
def test_dictionary_kernels_reject_bad_input(kernel):
    offs = np.array([0, 2, 5], np.int32)
    blob = np.frombuffer(b"abcde", np.uint8)
    one = (np.array([0], np.int64), np.array([3], np.int64), 1)
    ok = np.array([0, 1, 0], np.int32)
    assert kernel.dictionary_data_size(offs, 5, ok, np.zeros(0, np.uint8), 0, *one) == 7
    assert kernel.dictionary_data_size(offs, 5, np.array([0, 2, 0], np.int32), np.zeros(0, np.uint8), 0, *one) == -5
    assert kernel.dictionary_data_size(offs, 5, np.array([0, -1, 0], np.int32), np.zeros(0, np.uint8), 0, *one) == -5
    assert kernel.dictionary_data_size(np.array([0, 2, 9], np.int32), 5, ok, np.zeros(0, np.uint8), 0, *one) == -5
    assert kernel.dictionary_data_size(offs, 5, ok, np.zeros(0, np.uint8), 0, np.array([1], np.int64),
                                       np.array([3], np.int64), 1) == -4                  # run past the rows
    assert kernel.dictionary_data_size(offs, 5, np.zeros(9, np.int32), np.zeros(1, np.uint8), 0, *one) == -4
    oo, od = np.zeros(4, np.int32), np.zeros(7, np.uint8)
    assert kernel.take_runs_dictionary(offs, blob, np.array([0, 2, 0], np.int32), np.zeros(0, np.uint8), 0,
                                       *one, oo, od) == -5
    assert kernel.take_runs_dictionary(offs, blob, ok, np.zeros(0, np.uint8), 0, *one, oo, od[:6]) == -4
    assert kernel.take_runs_dictionary(offs, blob, ok, np.zeros(0, np.uint8), 0, *one, oo[:3], od) == -4
    assert kernel.take_runs_dictionary(offs, blob, ok, np.zeros(0, np.uint8), 0, *one, oo, od) == 3
    assert od.tobytes() == b"abcdeab"


_TARGETS = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]


@pytest.mark.parametrize("target", _TARGETS, ids=str)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_decode_dictionary_equals_arrow(target, data):
    text = pa.types.is_string(target) or pa.types.is_large_string(target)
    vals = st.text(max_size=12) if text else st.binary(max_size=12)
    vtype = data.draw(st.sampled_from([pa.string(), pa.large_string()] if text else [pa.binary(), pa.large_binary()]))
    chunks = []
    for _ in range(data.draw(st.integers(1, 3))):
        values = pa.array(data.draw(st.lists(vals, min_size=1, max_size=6, unique=True)), vtype)
        n = data.draw(st.integers(0, 30))
        idx = data.draw(st.lists(st.one_of(st.none(), st.integers(0, len(values) - 1)), min_size=n, max_size=n))
        arr = pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), values)
        cut = data.draw(st.integers(0, n))
        chunks.append(arr.slice(cut // 2))                           # offsets inside a chunk
    col = pa.chunked_array(chunks, type=chunks[0].type)
    dense = col.cast(target)
    def chunked(x):
        x.validate(full=True)
        return x if isinstance(x, pa.ChunkedArray) else pa.chunked_array([x], type=x.type)
    got = chunked(D.decode_dictionary(col, target))
    assert got.type == target and got.equals(dense)
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(col), max_size=len(col))), bool)
    got = chunked(D.decode_dictionary(col, target, D.keep_runs(keep)))
    assert got.equals(pc.filter(dense, pa.array(keep)))


def test_decode_dictionary_reports_bad_indices():
    bad = pa.DictionaryArray.from_arrays(pa.array([0, 5, 1], pa.int32()), pa.array(["a", "b"]), safe=False)
    with pytest.raises(D.CorruptFileError, match="dictionary"):
        D.decode_dictionary(bad, pa.string())
    assert D.dictionary_decodable(pa.string(), pa.large_string())
    assert not D.dictionary_decodable(pa.binary(), pa.string())
    assert not D.dictionary_decodable(pa.int32(), pa.string())


@pytest.mark.parametrize("kernel", IMPLS)
@settings(max_examples=40, deadline=None)
@given(keep=st.lists(st.booleans(), max_size=60), widths=st.lists(st.sampled_from([1, 2, 4, 8, 16]), max_size=4))
def test_take_runs_fixed_columns_keeps_the_rows_of_the_runs(kernel, keep, widths):
    runs = D.keep_runs(np.array(keep, bool))
    rng = np.random.default_rng(len(keep))
    srcs = [rng.integers(0, 256, len(keep) * w).astype(np.uint8) for w in widths]
    outs = [np.zeros(runs.kept * w, np.uint8) for w in widths]
    assert kernel.take_runs_fixed_columns(srcs, widths, runs.starts, runs.lengths, runs.count, outs) == \
        (runs.kept if widths else 0)
    kept = np.flatnonzero(np.array(keep, bool))      # the expected rows, without the runs
    for src, w, out in zip(srcs, widths, outs):
        assert out.tolist() == src.reshape(-1, w)[kept].ravel().tolist()


@pytest.mark.parametrize("kernel", IMPLS)
def test_take_runs_fixed_columns_checks_every_column(kernel):
    starts, lengths = np.array([0, 3], np.int64), np.array([2, 2], np.int64)
    a, b = np.arange(40, dtype=np.uint8), np.arange(20, dtype=np.uint8)
    ok = [np.zeros(32, np.uint8), np.zeros(16, np.uint8)]
    assert kernel.take_runs_fixed_columns([a, b], [8, 4], starts, lengths, 2, ok) == 4
    assert kernel.take_runs_fixed_columns([a, b[:19]], [8, 4], starts, lengths, 2, ok) == -4   # b too short
    assert kernel.take_runs_fixed_columns([a, b], [8, 4], starts, lengths, 2, [ok[0], ok[1][:15]]) == -4
    assert kernel.take_runs_fixed_columns([a, b], [8, 0], starts, lengths, 2, ok) == -4         # zero width
    assert kernel.take_runs_fixed_columns([a], [8, 4], starts, lengths, 2, ok) == -4            # lists differ
    assert kernel.take_runs_fixed_columns([], [], starts, lengths, 2, []) == 0


@settings(max_examples=30, deadline=None)
@given(keep=st.lists(st.booleans(), min_size=10, max_size=10), cut=st.integers(0, 10))
def test_compact_fixed_columns_equals_arrow_filter(keep, cut):
    keep = np.array(keep)
    cols = [a.slice(cut // 3) for a in FLAT if D.fusable(a)]
    assert len(cols) >= 6
    runs = D.keep_runs(keep[cut // 3:])
    for got, a in zip(D.compact_fixed_columns(cols, runs), cols):
        got.validate(full=True)
        assert got.equals(pc.filter(a, pa.array(keep[cut // 3:])))
    assert not D.fusable(pa.chunked_array([FLAT[0], FLAT[0]])) and not D.fusable(FLAT[4])
