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
def test_take_runs_kernels_agree_and_check_ranges(kernel):
    twin = _speedups.twin("deletes")
    src = np.arange(40, dtype=np.uint8)
    starts = np.array([0, 3, 7], np.int64)
    lengths = np.array([2, 1, 3], np.int64)
    for impl in (kernel, twin):
        out = np.zeros(24, np.uint8)
        assert impl.take_runs_fixed(src, 4, starts, lengths, 3, out) == 6
        assert out.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39]
        assert impl.take_runs_fixed(src, 4, starts, np.array([2, 1, 4], np.int64), 3, out) == -4  # past the source
        assert impl.take_runs_fixed(src, 4, starts, lengths, 3, np.zeros(23, np.uint8)) == -4     # short output
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
