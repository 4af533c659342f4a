import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine import encoding
from paimon_engine._pykernels import status
from paimon_engine.errors import CorruptFileError

from .impls import implementations

IMPLS = implementations("bitmap")


def naive_bit(data, i, msb):
    b = data[i >> 3]
    return (b >> (7 - (i & 7))) & 1 if msb else (b >> (i & 7)) & 1


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=20), st.data(), st.booleans(), st.booleans())
def test_unpack_matches_naive(data, d, msb, invert):
    nbits = len(data) * 8
    off = d.draw(st.integers(min_value=0, max_value=nbits))
    count = d.draw(st.integers(min_value=0, max_value=nbits - off))
    expected = [naive_bit(data, off + i, msb) ^ invert for i in range(count)]
    for p in IMPLS:
        k = p.values[0]
        out = np.zeros(count, dtype=np.uint8)
        assert k.unpack_bits(data, off, count, msb, invert, out) == sum(expected)
        assert out.tolist() == expected
        assert k.count_bits(data, off, count, msb) == sum(naive_bit(data, off + i, msb) for i in range(count))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=70), st.booleans(), st.booleans())
def test_pack_roundtrip(flags, msb, invert):
    f = np.array(flags, dtype=np.uint8)
    for p in IMPLS:
        k = p.values[0]
        out = np.full((len(flags) + 7) // 8, 0xAA, dtype=np.uint8)
        ones = k.pack_bits(f, msb, invert, out)
        assert ones == sum(x ^ invert for x in flags)
        back = np.zeros(len(flags), dtype=np.uint8)
        k.unpack_bits(out.tobytes(), 0, len(flags), msb, invert, back)
        assert back.tolist() == [int(x) for x in flags]
        # trailing bits of the last byte are zero
        if len(flags) % 8:
            tail = [naive_bit(out.tobytes(), i, msb) for i in range(len(flags), len(out) * 8)]
            assert tail == [0] * len(tail)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=16), st.data(), st.booleans())
def test_nulls_to_validity_matches_arrow_semantics(data, d, msb):
    nbits = len(data) * 8
    off = d.draw(st.integers(min_value=0, max_value=nbits))
    count = d.draw(st.integers(min_value=0, max_value=nbits - off))
    nulls = [naive_bit(data, off + i, msb) for i in range(count)]
    for p in IMPLS:
        k = p.values[0]
        out = np.full((count + 7) // 8, 0xFF, dtype=np.uint8)
        assert k.nulls_to_validity(data, off, count, msb, out) == sum(nulls)
        assert [naive_bit(out.tobytes(), i, False) for i in range(count)] == [1 - x for x in nulls]


@pytest.mark.parametrize("k", IMPLS)
def test_short_buffers_are_refused(k):
    out = np.zeros(16, dtype=np.uint8)
    assert k.unpack_bits(b"\x01", 0, 9, False, False, out) == status.BAD_LENGTH
    assert k.unpack_bits(b"\x01", 4, 5, False, False, out) == status.BAD_LENGTH
    assert k.unpack_bits(b"\x01", 0, 17, False, False, out) == status.BAD_LENGTH
    assert k.count_bits(b"", 0, 1, False) == status.BAD_LENGTH
    assert k.nulls_to_validity(b"\x01", 0, 9, False, out) == status.BAD_LENGTH
    assert k.nulls_to_validity(b"\x01\x02", 0, 9, False, np.zeros(1, np.uint8)) == status.BAD_LENGTH
    assert k.pack_bits(np.ones(9, np.uint8), False, False, np.zeros(1, np.uint8)) == status.BAD_LENGTH
    assert k.unpack_bits(b"", 0, 0, False, False, out) == 0


def test_wrapper_raises_corrupt_file_error():
    with pytest.raises(CorruptFileError, match="x.row"):
        encoding.validity_from_nulls(b"\x00", 20, path="x.row", offset=7)
    v, nulls = encoding.validity_from_nulls(b"\x05", 3)
    assert nulls == 2 and v.tolist() == [0b010]
    assert encoding.pack_bits([1, 0, 1]).tolist() == [0b101]
    assert encoding.unpack_bits(b"\x80", 1, msb_first=True).tolist() == [1]


# -- portable Roaring32 ---------------------------------------------------------------

def _roaring_cases():
    from pyroaring import BitMap
    rng = np.random.default_rng(3)
    cases = [BitMap(), BitMap([0]), BitMap([1, 2, 3]), BitMap(range(5000)), BitMap(range(100, 200)),
             BitMap([65535, 65536, 1 << 31, (1 << 32) - 1])]
    for _ in range(6):
        v = np.concatenate([rng.integers(0, 1 << 22, int(rng.integers(0, 3000))),
                            np.arange(int(rng.integers(0, 1 << 20)), int(rng.integers(1 << 20, (1 << 20) + 90000))),
                            rng.integers(0, 300000, int(rng.integers(0, 120000)))])
        cases.append(BitMap(np.unique(v).astype(np.uint32)))
    out = []
    for bm in cases:
        out.append(bm)
        r = BitMap(bm)
        r.run_optimize()
        out.append(r)
    return out


@pytest.mark.parametrize("impl", IMPLS)
def test_roaring_walk_and_clear_match_pyroaring(impl):
    rng = np.random.default_rng(4)
    for bm in _roaring_cases():
        data = b"ab" + bm.serialize() + b"cd"
        for check in (True, False):
            out = np.zeros(2, np.int64)
            assert impl.roaring_walk(data, 2, check, out) == len(data) - 2
            assert out[0] == len(bm)
        values = np.array(bm.to_array(), dtype=np.int64)
        for lo, n in [(0, 1 << 20), (0, 0), (65530, 70000), (int(rng.integers(0, 1 << 21)), int(rng.integers(1, 1 << 20))),
                      ((1 << 32) - 5, 5)]:
            mask = np.ones(n, np.uint8)
            inside = values[(values >= lo) & (values < lo + n)] - lo
            want = np.ones(n, np.uint8)
            want[inside] = 0
            assert impl.roaring_clear(data, 2, lo, mask) == len(inside)
            assert (mask == want).all()


def _portable(*parts):
    return b"".join(struct.pack("<" + f, *v) if isinstance(v, tuple) else struct.pack("<" + f, v) for f, v in parts)


def _one_run(start, length_minus_1):
    # cookie 12347 with one container (a run container, no offsets), key 0, cardinality length
    return _portable(("I", 12347), ("B", 1), ("HH", (0, length_minus_1)), ("H", 1), ("HH", (start, length_minus_1)))


@pytest.mark.parametrize("impl", IMPLS)
def test_roaring_walk_refuses(impl):
    from pyroaring import BitMap
    T, R, L, V = status.TRUNCATED, status.OUT_OF_RANGE, status.BAD_LENGTH, status.BAD_VALUE

    def walk(data, check=True, offset=0):
        out = np.zeros(2, np.int64)
        rc = impl.roaring_walk(data, offset, check, out)
        return rc, int(out[1])

    good = BitMap([1, 2, 3]).serialize()           # cookie, count, key/card, offset, values at 16
    assert walk(good) == (len(good), 0)
    unsorted = good[:16] + struct.pack("<HHH", 3, 2, 1)
    assert walk(unsorted) == (V, 16)
    assert walk(unsorted, check=False)[0] == len(good)
    dup = good[:16] + struct.pack("<HHH", 1, 2, 2)
    assert walk(dup) == (V, 16)
    two = BitMap([1, 70000]).serialize()           # keys at 8 and 12
    swapped = two[:12] + struct.pack("<H", 0) + two[14:]
    assert walk(swapped, check=False) == (R, 12)
    dense = BitMap(range(0, 10000, 2)).serialize()  # one bitmap container at 16
    flipped = bytearray(dense)
    flipped[16 + 4000] ^= 0x01
    assert walk(bytes(flipped)) == (V, 16)
    assert walk(bytes(flipped), check=False)[0] == len(dense)
    assert walk(_one_run(100, 99))[0] == len(_one_run(100, 99))
    assert walk(_one_run(65500, 99)) == (V, 9)     # the run passes the container's end
    overlap = _portable(("I", 12347), ("B", 1), ("HH", (0, 19)), ("H", 2), ("HH", (10, 9)), ("HH", (15, 9)))
    assert walk(overlap) == (V, 9)
    # runs touching (10..14 then 15..19: one run written as two, which CRoaring refuses too) and apart by one
    touching = _portable(("I", 12347), ("B", 1), ("HH", (0, 9)), ("H", 2), ("HH", (10, 4)), ("HH", (15, 4)))
    assert walk(touching) == (V, 9)
    apart = _portable(("I", 12347), ("B", 1), ("HH", (0, 9)), ("H", 2), ("HH", (10, 4)), ("HH", (16, 4)))
    assert walk(apart)[0] == len(apart)
    assert walk(_portable(("I", 12347), ("B", 1), ("HH", (0, 4)), ("H", 1), ("HH", (0, 4))))[0] == 15
    short = _portable(("I", 12347), ("B", 1), ("HH", (0, 19)), ("H", 1), ("HH", (10, 9)))
    assert walk(short) == (V, 9)                   # runs of 10 values where the header says 20
    assert walk(b"\x00" * 8) == (V, 0)
    assert walk(b"\x00\x00" + b"\x00" * 8, offset=2) == (V, 2)
    assert walk(_portable(("I", 12346), ("i", 70000))) == (L, 4)
    assert walk(_portable(("I", 12346), ("i", -1))) == (L, 4)
    assert walk(_portable(("I", 12346), ("i", 2 ** 16))) == (T, 8)
    rng = np.random.default_rng(6)
    for data in (good, dense, two, _one_run(100, 99), BitMap(range(0, 300000, 7)).serialize()):
        cuts = range(len(data)) if len(data) < 100 else sorted(set(range(40)) | set(rng.integers(0, len(data), 150).tolist()))
        for cut in cuts:
            rc, at = walk(data[:cut])
            assert rc == T and 0 <= at <= cut
            clear = impl.roaring_clear(data[:cut], 0, 0, np.ones(10, np.uint8))
            assert clear == T
    assert impl.roaring_walk(good, len(good) + 1, True, np.zeros(2, np.int64)) == T
    assert impl.roaring_walk(good, 0, True, np.zeros(1, np.int64)) == L
    assert impl.roaring_clear(good, 0, -1, np.ones(4, np.uint8)) == V


def test_roaring_kernels_agree_on_damaged_bytes():
    """Truncations and bit flips of real bitmaps: the compiled kernel and its twin return the same status, fault
    offset, cardinality and mask (and the process survives)."""
    from pyroaring import BitMap
    if len(IMPLS) < 2:
        pytest.skip("pure-Python build: only the twin")
    k, p = (i.values[0] for i in IMPLS)
    rng = np.random.default_rng(5)
    for bm in _roaring_cases()[:14]:
        data = bm.serialize()
        for _ in range(40):
            d = bytearray(data)
            if rng.random() < 0.3:
                d = d[:int(rng.integers(0, len(d) + 1))]
            else:
                i = int(rng.integers(0, len(d)))
                d[i] ^= 1 << int(rng.integers(0, 8))
            d = bytes(d)
            for check in (True, False):
                a, b = np.zeros(2, np.int64), np.zeros(2, np.int64)
                assert (k.roaring_walk(d, 0, check, a), a.tolist()) == (p.roaring_walk(d, 0, check, b), b.tolist())
            ma, mb = np.ones(1 << 17, np.uint8), np.ones(1 << 17, np.uint8)
            assert k.roaring_clear(d, 0, 0, ma) == p.roaring_clear(d, 0, 0, mb)
            assert (ma == mb).all()


@pytest.mark.parametrize("impl", IMPLS)
def test_roaring_order_check_on_both_paths(impl):
    """A value not above the one before anywhere in a 1000-value array container (inside a 32-value group, at a
    group's edges, in the tail the groups leave) is refused with and without the vector path."""
    from pyroaring import BitMap
    values = np.arange(0, 3000, 3, dtype=np.uint16)
    good = BitMap(values.astype(np.uint32)).serialize()      # one array container, values from byte 16
    before = impl.vector_paths()
    try:
        for vector in (True, False):
            impl.vector_paths(vector)
            out = np.zeros(2, np.int64)
            assert impl.roaring_walk(good, 0, True, out) == len(good) and out[0] == 1000
            for at in (1, 2, 31, 32, 33, 64, 65, 500, 992, 993, 994, 999):
                bad = values.copy()
                bad[at] = bad[at - 1]
                data = good[:16] + bad.astype("<u2").tobytes()
                assert impl.roaring_walk(data, 0, True, out) == status.BAD_VALUE and out[1] == 16
                assert impl.roaring_walk(data, 0, False, out) == len(good)
    finally:
        impl.vector_paths(before)


def test_roaring_vector_path_live():
    from tests.kernels.impls import check_vector_paths_live
    check_vector_paths_live([p.values[0] for p in IMPLS])
