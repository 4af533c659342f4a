import datetime
import decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from paimon_engine import _speedups
from paimon_engine.errors import UnsupportedTypeError
from paimon_engine.scan.deletes import EqualityDeleteSet, keep_mask, merge_positions, normalize_key_column


@pytest.fixture(params=["cython", "python"])
def impl(request, monkeypatch):
    if request.param == "cython":
        if _speedups.compiled("deletes") is None:
            pytest.skip("compiled kernels not built")
        monkeypatch.setitem(_speedups._loaded, "deletes", _speedups.compiled("deletes"))
    else:
        monkeypatch.setitem(_speedups._loaded, "deletes", _speedups.twin("deletes"))
    return request.param


def test_keep_mask_and_merge(impl):
    m = merge_positions([np.array([9, 1, 3]), np.array([3, 4]), np.array([], np.int64), np.array([1, 1])])
    assert m.tolist() == [1, 3, 4, 9]
    # one array: sorted with a repeat, unsorted with repeats, strictly ascending (returned as it is)
    assert merge_positions([np.array([2, 2, 5])]).tolist() == [2, 5]
    assert merge_positions([np.array([5, 2, 5, 1])]).tolist() == [1, 2, 5]
    assert merge_positions([np.array([1, 4, 6])]).tolist() == [1, 4, 6]
    k = keep_mask(m, 2, 6)
    assert k.tolist() == [True, False, False, True, True, True]
    assert keep_mask(np.array([], np.int64), 0, 3).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(-3, 3)), st.one_of(st.none(), st.sampled_from(["a", "b", "é", ""]))),
                max_size=12),
       st.lists(st.tuples(st.one_of(st.none(), st.integers(-3, 3)), st.one_of(st.none(), st.sampled_from(["a", "b", "é", ""]))),
                max_size=40))
def test_equality_anti_join_matches_model(deletes, rows):
    keys = set(deletes)  # a null in a delete row matches a null in the data row
    expected = [r in keys for r in rows]
    for k in (_speedups.twin("deletes"), _speedups.kernel("deletes")):
        _speedups._loaded["deletes"] = k
        try:
            s = EqualityDeleteSet([1, 2], [pa.array([d[0] for d in deletes], pa.int32()),
                                           pa.array([d[1] for d in deletes], pa.string())])
            got = s.matches([pa.array([r[0] for r in rows], pa.int64()), pa.array([r[1] for r in rows], pa.large_string())],
                            num_rows=len(rows))
        finally:
            _speedups._loaded.pop("deletes", None)
        assert got.tolist() == expected


def test_missing_column_reads_as_null(impl):
    s = EqualityDeleteSet([7], [pa.array([None, 5], pa.int64())])
    assert s.matches([None], num_rows=3).tolist() == [True, True, True]
    s = EqualityDeleteSet([7], [pa.array([5], pa.int64())])
    assert s.matches([None], num_rows=2).tolist() == [False, False]


def test_types(impl):
    D = decimal.Decimal
    s = EqualityDeleteSet([1], [pa.array([D("1.50"), None], pa.decimal128(5, 2))])
    got = s.matches([pa.array([D("1.50"), D("1.51"), None], pa.decimal128(20, 2))])
    assert got.tolist() == [True, False, True]
    s = EqualityDeleteSet([1], [pa.array([b"\x00\x01"], pa.binary(2))])
    assert s.matches([pa.array([b"\x00\x01", b"\x00\x02"], pa.binary())]).tolist() == [True, False]
    import datetime
    s = EqualityDeleteSet([1], [pa.array([datetime.date(2020, 1, 1)])])
    assert s.matches([pa.array([datetime.date(2020, 1, 1), datetime.date(2020, 1, 2)])]).tolist() == [True, False]
    s = EqualityDeleteSet([1], [pa.array(["x"]).dictionary_encode()])
    assert s.matches([pa.chunked_array([pa.array(["x", "y"]), pa.array(["x"])])]).tolist() == [True, False, True]
    with pytest.raises(UnsupportedTypeError):
        EqualityDeleteSet([1], [pa.array([1.5])])


def test_concat_and_hash_collision_fallback(impl):
    s = EqualityDeleteSet.concat([1], [[pa.array([1, 2], pa.int32())], [pa.array([3], pa.int64())],
                                       [pa.array([None], pa.null())]])
    assert s.matches([pa.array([1, 2, 3, 4, None])]).tolist() == [True, True, True, False, True]
    # force every hash equal: candidates are verified, so the answer stays exact (a string key: its hashes
    # come from _hash_parts; one int64 key is hashed inside the probe, see the next test)
    s = EqualityDeleteSet([1], [pa.array(["a", "b"])])
    s._hashes[:] = 7
    s._slots[:] = -1
    _speedups.kernel("deletes").build_hash_table(s._hashes, s._slots)
    s._filter[:] = 0
    _speedups.kernel("deletes").build_filter(s._hashes, s._filter)
    import paimon_engine.scan.deletes as dmod
    orig = dmod._hash_parts
    try:
        dmod._hash_parts = lambda parts, n: np.full(n, 7, dtype=np.uint64)
        assert s.matches([pa.array(["a", "b", "c"])]).tolist() == [True, True, False]
    finally:
        dmod._hash_parts = orig


def _unmix(h):
    """The int64 whose hash (the splitmix64 finalizer) is ``h``."""
    m64 = (1 << 64) - 1

    def unxorshift(y, s):
        x = y
        for _ in range(64 // s + 1):
            x = y ^ (x >> s)
        return x
    x = unxorshift(h, 31)
    x = (x * pow(0x94D049BB133111EB, -1, 1 << 64)) & m64
    x = unxorshift(x, 27)
    x = (x * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & m64
    x = unxorshift(x, 30)
    return x - (1 << 64) if x >= 1 << 63 else x


def test_int64_key_hashing_like_null_is_not_null(impl):
    # the one int64 value whose hash equals the null hash: a null key and that value must not match each other
    v = _unmix(0x5BD1E9955BD1E995)
    k = _speedups.kernel("deletes")
    h = np.zeros(1, np.uint64)
    k.hash_int64(np.array([v], np.int64), np.zeros(0, np.uint8), h, False)
    assert int(h[0]) == 0x5BD1E9955BD1E995
    s = EqualityDeleteSet([1], [pa.array([None, 5], pa.int64())])
    assert s.matches([pa.array([v, None, 5, 6], pa.int64())]).tolist() == [False, True, True, False]
    s = EqualityDeleteSet([1], [pa.array([v], pa.int64())])
    assert s.matches([pa.array([None, v, 1], pa.int64())]).tolist() == [False, True, False]


def test_large_int_join(impl):
    n = 20000 if impl == "python" else 200000
    rng = np.random.default_rng(1)
    keys = rng.choice(n, n // 20, replace=False)
    s = EqualityDeleteSet([1], [pa.array(keys.astype(np.int32))])
    got = s.matches([pa.array(np.arange(n))])
    exp = np.zeros(n, bool)
    exp[keys] = True
    assert (got == exp).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-50, 50)), max_size=40),
       st.lists(st.one_of(st.none(), st.integers(-60, 60)), max_size=60), st.sampled_from([0, 1, 1 << 40]))
def test_int64_key_paths_agree(keys, data, scale):
    """One int64 key: the range bitmap (dense keys), the fused hash probe (sparse keys) and the multi-part
    hash path give the exact answer (null matches null)."""
    import paimon_engine.scan.deletes as dmod
    keys = [None if x is None else x * scale for x in keys]
    data = [None if x is None else x * scale for x in data]
    want = [x in set(keys) for x in data]
    s = EqualityDeleteSet([1], [pa.array(keys, pa.int64())])
    assert s.matches([pa.array(data, pa.int64())], num_rows=len(data)).tolist() == want
    s._bitmap = None    # the hash probe of the same set
    assert s.matches([pa.array(data, pa.int64())], num_rows=len(data)).tolist() == want
    assert dmod._range_bitmap(dmod.normalize_key_column(pa.array([0, 1 << 40], pa.int64()))[0][0]) is None
    # two key columns (the generic probe), the second one constant
    s2 = EqualityDeleteSet([1, 2], [pa.array(keys, pa.int64()), pa.array(["a"] * len(keys))])
    got = s2.matches([pa.array(data, pa.int64()), pa.array(["a"] * len(data))], num_rows=len(data))
    assert got.tolist() == want
    # misses (the rows a delete keeps) are the exact complement on every path, the empty set's included
    keep = [not w for w in want]
    for eq, cols in ((EqualityDeleteSet([1], [pa.array(keys, pa.int64())]), [pa.array(data, pa.int64())]),
                     (s, [pa.array(data, pa.int64())]),
                     (s2, [pa.array(data, pa.int64()), pa.array(["a"] * len(data))])):
        got = eq.misses(cols, num_rows=len(data))
        assert got.dtype == np.bool_ and got.tolist() == keep
    empty = EqualityDeleteSet([1], [pa.array([], pa.int64())])
    assert empty.misses([pa.array(data, pa.int64())], num_rows=len(data)).tolist() == [True] * len(data)


@pytest.mark.parametrize("arr", [
    pa.array([5, None, -3, 7, None, 2**40], pa.int64()).slice(1, 4),
    pa.array([1, 2, None, 4], pa.int32()).slice(1),
    pa.array([True, None, False]),
    pa.array([3, None, 9], pa.uint16()),
    pa.array([datetime.date(2020, 1, 2), None, datetime.date(1969, 12, 31)]).slice(1),
    pa.array([datetime.datetime(2020, 1, 2, 3), None], pa.timestamp("ms")),
    pa.array([1, 2, 3], pa.time32("s")),
    pa.array([10, 20, 30, 40], pa.int64()).slice(2, 2),
])
def test_key_columns_read_from_their_buffers(arr):
    # values and validity taken from the Arrow buffers (sliced, with nulls) are what Arrow's own conversion gives
    parts, _ = normalize_key_column(arr)
    (kind, values, valid), = parts
    want_valid = np.array([v is not None for v in arr.to_pylist()], np.uint8)
    assert kind == "i" and values.dtype == np.int64 and len(values) == len(arr)
    if arr.null_count:
        assert valid.tolist() == want_valid.tolist()
    else:
        assert valid.size == 0
    t = arr.type
    if pa.types.is_date(t):
        plain = arr.cast(pa.int32())
    elif pa.types.is_timestamp(t):
        plain = arr.cast(pa.timestamp("us")).cast(pa.int64())
    elif pa.types.is_time(t):
        plain = arr.cast(pa.time64("us")).cast(pa.int64())
    else:
        plain = arr.cast(pa.int64())
    want = [0 if v is None else v for v in plain.to_pylist()]
    assert values.tolist() == want


# (the fixture only picks the kernel implementation: the same for every example)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "ab", "", "zz", "é"])), max_size=40),
                min_size=1, max_size=4),
       st.sampled_from(["s = 'a'", "s <> 'ab'", "s in ('a', 'zz', 'q')", "s not in ('b')", "s is null",
                        "s is not null", "not (s = 'a' or s is null)", "s >= 'b'", "s like 'a%'"]))
def test_dictionary_mask_is_the_row_by_row_mask(impl, chunks, text):
    """dictionary_mask over dictionary arrays (a chunked array: each chunk with its own dictionary, values in
    any order and repeated, null rows whose index slots hold anything) gives evaluate_numpy's mask of the
    decoded rows."""
    from paimon_engine.expressions import evaluate_numpy, parse
    from paimon_engine.scan.deletes import dictionary_mask
    expr = parse(text)
    rng = np.random.default_rng(len(chunks))
    parts = []
    for values in chunks:
        dictionary = sorted({v for v in values if v is not None}, reverse=bool(rng.integers(0, 2)))
        where = {v: i for i, v in enumerate(dictionary)}
        idx = np.array([where[v] if v is not None else int(rng.integers(-9, 1 << 30)) for v in values], np.int32)
        valid = np.array([v is not None for v in values], np.bool_)
        bits = pa.py_buffer(np.packbits(valid, bitorder="little")) if not valid.all() else None
        indices = pa.Array.from_buffers(pa.int32(), len(values), [bits, pa.py_buffer(idx)],
                                        null_count=int((~valid).sum()))
        parts.append(pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, pa.string()), safe=False))
    column = pa.chunked_array(parts, type=pa.dictionary(pa.int32(), pa.string()))
    want = evaluate_numpy(expr, pa.table({"s": pa.array([v for values in chunks for v in values], pa.string())}))
    got = dictionary_mask(expr, "s", column)
    assert got.dtype == np.bool_ and got.tolist() == want.tolist()
    if len(parts[0]):
        assert dictionary_mask(expr, "s", parts[0]).tolist() == want[:len(parts[0])].tolist()


def test_dictionary_mask_refuses_an_index_outside_the_dictionary(impl):
    from paimon_engine.errors import CorruptFileError
    from paimon_engine.expressions import parse
    from paimon_engine.scan.deletes import dictionary_mask
    for bad in (3, -1):
        arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, bad, 2] * 5, pa.int32()), pa.array(["a", "b", "c"]),
                                             safe=False)
        with pytest.raises(CorruptFileError, match="outside the dictionary of 3 values") as exc:
            dictionary_mask(parse("s = 'a'"), "s", arr, path="data/f.parquet")
        assert exc.value.path == "data/f.parquet"
    # a conform function sees each dictionary before the evaluation
    seen = []
    arr = pa.DictionaryArray.from_arrays(pa.array([1, 0, 1], pa.int32()), pa.array(["a", "b"]))
    got = dictionary_mask(parse("s = 'b'"), "s", arr, lambda d: seen.append(d) or d.cast(pa.large_string()))
    assert got.tolist() == [True, False, True] and len(seen) == 1
