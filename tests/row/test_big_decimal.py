"""DECIMAL with precision > 18: the minimal two's-complement bytes Java's ``BigInteger.toByteArray()`` writes.

The expected bytes come from the rule, stated independently of the code under test: the unscaled value ``u`` takes
the smallest ``n`` bytes with ``-2**(8n-1) <= u < 2**(8n-1)``, big-endian. Edge values are the powers of two and
their neighbours, where an off-by-one in the length shows (-128 is ``80``, -129 is ``ff7f``, 128 is ``0080``).
"""
import decimal
import io

import numpy as np
import pyarrow as pa
import pytest
import zstandard

from paimon_engine import _speedups
from paimon_engine import types as T
from paimon_engine.formats import fory
from paimon_engine.formats.row import RowFileReader, RowFileWriter
from paimon_engine.formats.row.values import big_decimal_bytes, encode_value
from paimon_engine.spec import conversions


def java_to_byte_array(u: int) -> bytes:
    n = 1
    while not -(1 << (8 * n - 1)) <= u < (1 << (8 * n - 1)):
        n += 1
    return u.to_bytes(n, "big", signed=True)


def uvarint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def edge_values(kmax: int):
    vals = []
    for k in range(kmax + 1):
        p = 1 << k
        vals += [p, -p, p - 1, -(p - 1)]
    return list(dict.fromkeys(vals))


# values whose bytes a reader can check by eye (BigInteger.toByteArray of each)
LITERAL = {
    0: "00", 1: "01", -1: "ff", 127: "7f", 128: "0080", -128: "80", -129: "ff7f", 255: "00ff", -256: "ff00",
    32767: "7fff", -32768: "8000", -32769: "ff7fff", -(1 << 63): "8000000000000000",
    (1 << 63): "008000000000000000", -(1 << 63) - 1: "ff7fffffffffffffff",
    -(1 << 127): "80" + "00" * 15, (1 << 127) - 1: "7f" + "ff" * 15,
}

# DECIMAL(38, 0) holds |u| <= 10**38 - 1, so every edge value up to 2**126 (2**127 - 1 is larger)
FILE_VALUES = [u for u in edge_values(127) if abs(u) < 10 ** 38]


@pytest.mark.parametrize("u,hexed", sorted(LITERAL.items()))
def test_literal_vectors(u, hexed):
    assert java_to_byte_array(u).hex() == hexed
    assert big_decimal_bytes(u).hex() == hexed


def test_every_power_of_two_edge_up_to_2_127_has_the_minimal_length():
    for u in edge_values(127) + [-(1 << 128), (1 << 128) - 1]:
        got = big_decimal_bytes(u)
        assert got == java_to_byte_array(u), u
        assert int.from_bytes(got, "big", signed=True) == u
        # minimal: one byte fewer cannot hold u
        assert len(got) == 1 or not -(1 << (8 * len(got) - 9)) <= u < (1 << (8 * len(got) - 9))


def test_nested_value_encoding_uses_the_minimal_form():
    t = T.DecimalType(38, 0)
    for u in FILE_VALUES:
        out = bytearray()
        encode_value(t, decimal.Decimal(u), out)
        raw = java_to_byte_array(u)
        assert bytes(out) == uvarint(len(raw)) + raw, u


def _blocks(data: bytes, count: int):
    """The first ``count`` zstd frames of a .row file (one per block), decompressed."""
    rest, out = data, []
    for _ in range(count):
        d = zstandard.ZstdDecompressor().decompressobj()
        out.append(d.decompress(rest))
        rest = d.unused_data
    return out


@pytest.mark.parametrize("kernel", ["compiled", "twin"])
def test_row_file_bytes_top_level_and_nested(kernel):
    if kernel == "compiled" and _speedups.compiled("rowcodec") is None:
        pytest.skip("compiled kernels not built in this run")
    impl = _speedups.compiled("rowcodec") if kernel == "compiled" else _speedups.twin("rowcodec")
    dec = T.DecimalType(38, 0)
    schema = T.RowType.of(("d", dec), ("r", T.RowType.of(("x", dec))), ("a", T.ArrayType(dec)))
    vals = [decimal.Decimal(u) for u in FILE_VALUES]
    table = pa.table({
        "d": pa.array(vals, pa.decimal128(38, 0)),
        "r": pa.array([{"x": v} for v in vals], schema.fields[1].type.to_arrow()),
        "a": pa.array([[v] for v in vals], schema.fields[2].type.to_arrow()),
    })
    buf = io.BytesIO()
    w = RowFileWriter(buf, schema, block_size=1)  # one row per block
    w._kernel = impl
    w.write(table)
    w.close()
    data = buf.getvalue()
    for u, block in zip(FILE_VALUES, _blocks(data, len(FILE_VALUES))):
        v = uvarint(len(java_to_byte_array(u))) + java_to_byte_array(u)
        # row: null bitmap, d, r (its own bitmap + x), a (count 1, element bitmap, element)
        row = b"\x00" + v + b"\x00" + v + uvarint(1) + b"\x00" + v
        assert block == row + (0).to_bytes(4, "little") + (1).to_bytes(4, "little"), u
    r = RowFileReader(io.BytesIO(data), schema)
    r._kernel = impl
    assert r.read_all().to_arrow_table().to_pylist() == table.to_pylist()


@pytest.mark.parametrize("layout", ["standard", "compact"])
@pytest.mark.parametrize("kernel", ["compiled", "twin"])
def test_fory_decimal_is_32_byte_sign_extended(layout, kernel):
    # Fory Java writes a DECIMAL as a fixed 32-byte little-endian sign-extended unscaled value, not the minimal form
    mod = _speedups.compiled("foryrow") if kernel == "compiled" else _speedups.twin("foryrow")
    if mod is None:
        pytest.skip("compiled kernels not built in this run")
    schema = pa.schema([pa.field("d", pa.decimal128(38, 0), nullable=False)])
    vals = [decimal.Decimal(u) for u in FILE_VALUES]
    rb = pa.RecordBatch.from_pylist([{"d": v} for v in vals], schema=schema)
    saved = _speedups._loaded.get("foryrow")
    _speedups._loaded["foryrow"] = mod
    try:
        buf, offsets = fory.encode_rows(rb, layout=layout)
        back = fory.decode_rows(buf, offsets, schema, layout)
    finally:
        if saved is None:
            _speedups._loaded.pop("foryrow", None)
        else:
            _speedups._loaded["foryrow"] = saved
    buf = np.asarray(buf).tobytes()
    for i, u in enumerate(FILE_VALUES):
        row = buf[offsets[i]:offsets[i + 1]]
        assert row[-32:] == u.to_bytes(32, "little", signed=True), u
    assert back.column(0).to_pylist() == vals


def test_iceberg_single_value_decimal_is_minimal():
    # Iceberg's single-value form of a decimal is the same minimal big-endian two's complement
    t = T.DecimalType(38, 0)
    for u in FILE_VALUES:
        got = conversions.to_bytes(t, decimal.Decimal(u))
        assert got == java_to_byte_array(u), u
        assert conversions.from_bytes(t, got) == decimal.Decimal(u)


def test_iceberg_bucket_and_truncate_of_wide_decimals_are_exact():
    # bucket hashes the minimal bytes of the unscaled value; 38-digit values must not be rounded to 28 digits first
    import mmh3

    from paimon_engine.spec.transforms import TruncateTransform, bucket_hash
    t = T.DecimalType(38, 2)
    for u in FILE_VALUES:
        v = decimal.Decimal(u).scaleb(-2, decimal.Context(prec=80))
        assert bucket_hash(t, v) == mmh3.hash(java_to_byte_array(u), 0, signed=True), u
        got = TruncateTransform(10).apply_value(t, v)
        assert got == decimal.Decimal(u - u % 10).scaleb(-2, decimal.Context(prec=80)), u
