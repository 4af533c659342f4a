import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine import encoding
from paimon_engine._pykernels import status
from paimon_engine.errors import CorruptFileError

from .impls import implementations

IMPLS = implementations("varint")
M64 = (1 << 64) - 1


def naive_leb128(u):
    out = bytearray()
    while True:
        b = u & 0x7F
        u >>= 7
        if u:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def naive_zigzag(v):
    return ((v << 1) ^ (v >> 63)) & M64


def naive_delta(values):
    out, prev = b"", 0
    for v in values:
        d = (v - prev) & M64
        d = d - (1 << 64) if d >> 63 else d
        out += naive_leb128(naive_zigzag(d))
        prev = v
    return out


# Paimon Java's golden vectors (REFERENCE-NOTES section 1).
GOLDEN = [([42], "54"), ([80, 50, 90, 80, 70], "a0013b501313"), ([64], "8001"), ([-64], "7f"), ([], "")]


@pytest.mark.parametrize("k", IMPLS)
@pytest.mark.parametrize("values,hexbytes", GOLDEN)
def test_java_golden_delta_varint(k, values, hexbytes):
    assert k.encode_delta_varint(np.array(values, dtype=np.int64)).hex() == hexbytes
    out = np.zeros(len(values), dtype=np.int64)
    end = k.decode_delta_varint(bytes.fromhex(hexbytes), 0, len(values), out)
    assert end == len(hexbytes) // 2
    assert out.tolist() == values


@pytest.mark.parametrize("k", IMPLS)
def test_truncated_delta_varint_is_an_error(k):
    out = np.zeros(1, dtype=np.int64)
    assert k.decode_delta_varint(bytes.fromhex("808080"), 0, 1, out) == status.TRUNCATED
    with pytest.raises(CorruptFileError, match="truncated"):
        encoding.decode_delta_varint(bytes.fromhex("808080"), 1)


@pytest.mark.parametrize("k", IMPLS)
def test_empty_and_short_buffers(k):
    out = np.zeros(2, dtype=np.int64)
    assert k.decode_delta_varint(b"", 0, 1, out) == status.TRUNCATED
    assert k.decode_delta_varint(b"\x02", 0, 2, out) == status.TRUNCATED
    assert k.read_uvarint32(b"", 0)[1] == status.TRUNCATED
    assert k.read_uvarint64(b"", 0)[1] == status.TRUNCATED
    assert k.read_uvarint32(b"\x01", 5)[1] == status.TRUNCATED
    assert k.read_uvarint32(b"\x01", -1)[1] < 0
    # a count larger than the output array is refused before any read
    assert k.decode_delta_varint(b"\x00" * 8, 0, 3, out) == status.BAD_LENGTH


@pytest.mark.parametrize("k", IMPLS)
def test_overlong_varints(k):
    assert k.read_uvarint32(bytes.fromhex("ffffffff7f"), 0)[1] == status.OVERLONG
    assert k.read_uvarint32(bytes.fromhex("8080808080"), 0)[1] == status.OVERLONG
    assert k.read_uvarint32(bytes.fromhex("ffffffff0f"), 0) == (-1, 5)
    assert k.read_uvarint64(bytes.fromhex("ffffffffffffffffff01"), 0) == (M64, 10)
    assert k.read_uvarint64(bytes.fromhex("ffffffffffffffffff02"), 0)[1] == status.OVERLONG
    assert k.read_uvarint64(bytes.fromhex("80" * 11), 0)[1] == status.OVERLONG
    with pytest.raises(CorruptFileError, match="overlong"):
        encoding.read_uvarint32(bytes.fromhex("ffffffff7f"), 0, path="f.row")


def test_error_names_the_file_and_offset():
    with pytest.raises(CorruptFileError) as info:
        encoding.read_uvarint32(b"\x00\x00\x80", 2, path="data/x.row")
    assert info.value.path == "data/x.row" and info.value.offset == 2
    assert "data/x.row" in str(info.value) and "offset 2" in str(info.value)


def test_absurd_count_is_refused_before_allocating():
    with pytest.raises(CorruptFileError, match="cannot fit"):
        encoding.decode_delta_varint(b"\x00\x00", 1 << 40)
    with pytest.raises(CorruptFileError):
        encoding.decode_delta_varint(b"\x00", -1)


@pytest.mark.parametrize("k", IMPLS)
def test_uvarint32_java_semantics(k):
    assert k.encode_uvarint32(-1) == bytes.fromhex("ffffffff0f")
    assert k.encode_uvarint32(300) == bytes.fromhex("ac02")
    assert k.read_uvarint32(bytes.fromhex("ac02"), 0) == (300, 2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1), max_size=60))
def test_delta_varint_roundtrip_all_implementations_agree(values):
    expected = naive_delta(values)
    arr = np.array(values, dtype=np.int64)
    for p in IMPLS:
        k = p.values[0]
        assert k.encode_delta_varint(arr) == expected
        out = np.zeros(len(values), dtype=np.int64)
        assert k.decode_delta_varint(expected, 0, len(values), out) == len(expected)
        assert out.tolist() == values


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=M64), st.integers(min_value=-(1 << 31), max_value=(1 << 31) - 1))
def test_single_varints_roundtrip(u, i32):
    for p in IMPLS:
        k = p.values[0]
        assert k.encode_uvarint64(u) == naive_leb128(u)
        assert k.read_uvarint64(naive_leb128(u), 0) == (u, len(naive_leb128(u)))
        enc = k.encode_uvarint32(i32)
        assert enc == naive_leb128(i32 & 0xFFFFFFFF)
        assert k.read_uvarint32(enc, 0) == (i32, len(enc))
        assert k.zigzag_decode64(k.zigzag_encode64(i32)) == i32
        assert k.zigzag_decode32(k.zigzag_encode32(i32)) == i32


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1), max_size=50))
def test_zigzag_and_plain_arrays(values):
    arr = np.array(values, dtype=np.int64)
    zz = encoding.zigzag_encode(arr)
    assert zz.tolist() == [naive_zigzag(v) for v in values]
    assert encoding.zigzag_decode(zz).tolist() == values
    blob = encoding.encode_uvarint64_array(zz)
    assert blob == b"".join(naive_leb128(naive_zigzag(v)) for v in values)
    back, end = encoding.decode_uvarint64_array(blob, len(values))
    assert end == len(blob) and back.tolist() == zz.tolist()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40), st.integers(min_value=0, max_value=12))
def test_random_bytes_never_crash_and_implementations_agree(data, count):
    results = []
    for p in IMPLS:
        k = p.values[0]
        out = np.zeros(count, dtype=np.int64)
        end = k.decode_delta_varint(data, 0, count, out)
        results.append((end, out.tolist() if end >= 0 else None))
        assert end <= len(data)
        results.append(k.read_uvarint32(data, 0))
        results.append(k.read_uvarint64(data, 0))
    n = len(IMPLS)
    per = len(results) // n
    for i in range(1, n):
        assert results[i * per:(i + 1) * per] == results[:per]
