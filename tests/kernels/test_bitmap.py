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
