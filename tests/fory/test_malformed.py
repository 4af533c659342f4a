"""Malformed rows: truncation, bit flips and absurd lengths raise CorruptFileError, never crash."""

import struct

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine import _speedups
from paimon_engine.errors import CorruptFileError, InvalidArgumentError, ValueOutOfRangeError
from paimon_engine.formats import fory

from ..kernels.impls import implementations
from .test_golden import SCHEMA

ROWS = pa.RecordBatch.from_pylist([
    {"f1": 1, "f2": "str", "f3": ["str1", None, "str2"], "f4": [("k1", 1), ("k2", None)], "f5": {"f1": 1, "f2": "s"}},
    {"f1": None, "f2": None, "f3": [], "f4": None, "f5": None},
], schema=SCHEMA)


@pytest.fixture(params=implementations("foryrow"))
def kernel(request):
    """Both kernels (row codec and views) from one implementation."""
    pure = request.param is _speedups.twin("foryrow")
    saved = {name: _speedups._loaded.get(name) for name in ("foryrow", "foryview")}
    _speedups._loaded["foryrow"] = request.param
    _speedups._loaded["foryview"] = _speedups.twin("foryview") if pure else _speedups.compiled("foryview")
    yield request.param
    for name, module in saved.items():
        if module is None:
            _speedups._loaded.pop(name, None)
        else:
            _speedups._loaded[name] = module


def _decode_or_corrupt(data, layout="standard", source=None):
    try:
        return fory.decode_rows(data, [0, len(data)], SCHEMA, layout, source=source)
    except CorruptFileError as e:
        assert e.row == 0 and isinstance(e.offset, int) and 0 <= e.offset <= len(data)
        return e


def _view_or_corrupt(data, layout="standard"):
    try:
        return fory.RowView(data, fory.ForySchema(SCHEMA), layout).to_dict()
    except CorruptFileError as e:
        return e


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_every_truncation(kernel, layout):
    buf, offsets = fory.encode_rows(ROWS, layout=layout)
    row = bytes(buf[:offsets[1]])
    errors = 0
    for cut in range(len(row)):
        got = _decode_or_corrupt(row[:cut], layout)
        errors += isinstance(got, CorruptFileError)
        _view_or_corrupt(row[:cut], layout)
    # only cuts inside the trailing padding can still decode
    assert errors >= len(row) - 8


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_every_bit_flip(kernel, layout):
    buf, offsets = fory.encode_rows(ROWS, layout=layout)
    row = bytearray(buf[:offsets[1]])
    outcomes = set()
    for i in range(len(row) * 8):
        bad = bytearray(row)
        bad[i >> 3] ^= 1 << (i & 7)
        got = _decode_or_corrupt(bytes(bad), layout)
        outcomes.add(type(got).__name__)
        _view_or_corrupt(bytes(bad), layout)
    assert "CorruptFileError" in outcomes


def test_absurd_lengths_are_capped(kernel):
    buf, offsets = fory.encode_rows(ROWS)
    row = bytearray(buf[:offsets[1]])
    # f2 slot (bitmap 8 + slot 1): size 0xFFFFFFFF
    slot = 8 + 8
    bad = bytearray(row)
    struct.pack_into("<Q", bad, slot, (struct.unpack_from("<Q", row, slot)[0] & ~0xFFFFFFFF) | 0xFFFFFFFF)
    with pytest.raises(CorruptFileError) as info:
        fory.decode_rows(bytes(bad), [0, len(bad)], SCHEMA, source="rows.bin")
    assert info.value.offset == slot and info.value.field == "f2" and "rows.bin" in str(info.value)
    # f3 array: element count 2**40
    arr_at = struct.unpack_from("<Q", row, 8 + 16)[0] >> 32
    bad = bytearray(row)
    struct.pack_into("<q", bad, arr_at, 1 << 40)
    with pytest.raises(CorruptFileError, match="length"):
        fory.decode_rows(bytes(bad), [0, len(bad)], SCHEMA)
    with pytest.raises(CorruptFileError):
        fory.RowView(bytes(bad), fory.ForySchema(SCHEMA)).get_array(2)
    # negative count
    struct.pack_into("<q", bad, arr_at, -1)
    with pytest.raises(CorruptFileError):
        fory.decode_rows(bytes(bad), [0, len(bad)], SCHEMA)


def test_bad_offsets_name_the_row(kernel):
    buf, offsets = fory.encode_rows(ROWS)
    with pytest.raises(CorruptFileError) as info:
        fory.decode_rows(buf, [0, int(offsets[1]), len(buf) + 8], SCHEMA)
    assert info.value.row == 1
    with pytest.raises(CorruptFileError):
        fory.decode_rows(buf, [int(offsets[1]), 0], SCHEMA)
    with pytest.raises(CorruptFileError) as info:
        fory.decode_rows(buf, [0, int(offsets[1]), int(offsets[1]) + 8], SCHEMA)
    assert info.value.row == 1


def test_second_row_error_location(kernel):
    buf, offsets = fory.encode_rows(ROWS)
    bad = bytearray(buf)
    start = int(offsets[1])
    # row 1, field f3 (not null): point its array past the row
    struct.pack_into("<Q", bad, start + 8 + 16, (4096 << 32) | 16)
    with pytest.raises(CorruptFileError) as info:
        fory.decode_rows(bytes(bad), offsets, SCHEMA)
    assert info.value.row == 1 and info.value.offset == start + 24 and info.value.field == "f3"


def test_rowview_rejects_short_rows_and_wrong_types():
    schema = fory.ForySchema(SCHEMA)
    with pytest.raises(CorruptFileError):
        fory.RowView(b"\x00" * 8, schema)
    buf, offsets = fory.encode_rows(ROWS)
    v = fory.RowView(bytes(buf[:offsets[1]]), schema)
    from paimon_engine.errors import SchemaError
    with pytest.raises(SchemaError, match="f1"):
        v.get_int64(0)
    with pytest.raises(SchemaError):
        v.get_string(0)
    with pytest.raises(IndexError):
        v.get_int32(9)
    with pytest.raises(KeyError):
        v["nope"]


def test_bad_arguments():
    with pytest.raises(InvalidArgumentError):
        fory.decode_rows(b"", np.zeros((2, 2)), SCHEMA)
    with pytest.raises(InvalidArgumentError):
        fory.decode_rows(b"", [0], SCHEMA, output="nope")
    from paimon_engine.errors import SchemaError, UnsupportedTypeError
    with pytest.raises(SchemaError):
        fory.decode_rows(b"", [0], SCHEMA, layout="wide")
    with pytest.raises(UnsupportedTypeError):
        fory.ForySchema(pa.schema([("u", pa.uint32())]))
    with pytest.raises(UnsupportedTypeError):
        fory.ForySchema(pa.schema([("t", pa.timestamp("ns"))]))
    with pytest.raises(SchemaError):
        fory.encode_rows(pa.record_batch({"x": [1]}), SCHEMA)


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_random_mutations_of_a_rich_row(kernel, layout):
    from .test_pyfory import arrow_schema, as_arrow, rows
    schema = arrow_schema().append(pa.field("dec", pa.decimal128(20, 4)))
    data = [dict(as_arrow(r), dec=None) for r in rows()]
    data[0]["dec"] = __import__("decimal").Decimal("-12345.6789")
    rb = pa.RecordBatch.from_pylist(data, schema=schema)
    buf, offsets = fory.encode_rows(rb, layout=layout)
    rng = np.random.default_rng(7)
    view_schema = fory.ForySchema(schema)
    for _ in range(300):
        bad = bytearray(buf)
        for pos in rng.integers(0, len(bad), size=rng.integers(1, 6)):
            bad[pos] = int(rng.integers(0, 256))
        try:
            fory.decode_rows(bytes(bad), offsets, schema, layout)
        except CorruptFileError as e:
            assert e.row is not None and e.offset is not None
        for i in range(len(offsets) - 1):
            try:
                fory.RowView(bytes(bad[offsets[i]:offsets[i + 1]]), view_schema, layout).to_dict()
            except (CorruptFileError, ValueOutOfRangeError):   # a flipped timestamp may leave datetime's range
                pass


def test_rows_sharing_bytes_fall_back_to_counting(kernel, monkeypatch):
    """Valid rows may point several slots at one body, decoding to more bytes than they hold: the one-pass
    capacities are then too small, the kernel says so, and the rows are counted first."""
    from paimon_engine.formats.fory import codec
    schema = pa.schema([("l", pa.list_(pa.string()))])
    body = b"x" * 1000
    array = bytearray(struct.pack("<q", 10) + bytes(8))
    for _ in range(10):
        array += struct.pack("<Q", (96 << 32) | len(body))
    array += body
    row = bytes(8) + struct.pack("<Q", (16 << 32) | len(array)) + bytes(array)
    calls = []
    real = codec._allocate
    monkeypatch.setattr(codec, "_allocate", lambda *a: calls.append(1) or real(*a))
    rb = fory.decode_rows(row * 3, [0, len(row), 2 * len(row), 3 * len(row)], schema)
    assert rb.column(0).to_pylist() == [["x" * 1000] * 10] * 3
    assert len(calls) == 2  # the one-pass attempt, then the exact allocation
    calls.clear()
    plain = fory.encode_rows(pa.record_batch({"l": [["ab", "c"]]}))
    fory.decode_rows(*plain, pa.schema([("l", pa.list_(pa.string()))]))
    assert len(calls) == 1


@pytest.mark.parametrize("layout", ["standard", "compact"])
@pytest.mark.parametrize("dtype", [pa.decimal128(10, 2), pa.decimal128(38, 0), pa.decimal256(40, 3),
                                   pa.decimal256(76, 0)])
def test_decimal_beyond_its_precision(kernel, layout, dtype):
    """An unscaled value outside (-10**p, 10**p) is corrupt: decode_rows, decode_row and the views reject the same
    bytes with the same field and offset (decode_rows would otherwise return an array that is not valid)."""
    import decimal
    p, s = dtype.precision, dtype.scale
    schema = pa.schema([("d", dtype), ("l", pa.list_(dtype))])
    edge = 10 ** p - 1
    value = lambda u: decimal.Decimal(u).scaleb(-s, decimal.Context(prec=80))  # noqa: E731
    row = fory.encode_row({"d": value(edge), "l": [value(-edge), None]}, schema, layout)
    rb = fory.decode_rows(row, [0, len(row)], schema, layout)
    rb.validate(full=True)
    assert rb.to_pylist() == [{"d": value(edge), "l": [value(-edge), None]}]
    assert fory.RowView(row, fory.ForySchema(schema), layout).to_dict() == rb.to_pylist()[0]
    le32 = lambda u: u.to_bytes(32, "little", signed=True)  # noqa: E731
    for field, old in (("d", edge), ("l", -edge)):
        at = row.find(le32(old))
        assert at > 0 and row.count(le32(old)) == 1
        for new in (10 ** p, -10 ** p, (1 << (8 * dtype.byte_width - 1)) - 1):
            bad = row[:at] + le32(new) + row[at + 32:]
            with pytest.raises(CorruptFileError) as ei:
                fory.decode_rows(row + bad, [0, len(row), 2 * len(row)], schema, layout)
            e = ei.value
            assert (e.row, e.offset) == (1, len(row) + at) and e.field.startswith(field)
            with pytest.raises(CorruptFileError) as one:
                fory.decode_row(bad, schema, layout)
            assert (one.value.row, one.value.field, one.value.offset) == (0, e.field, at)
            view = fory.RowView(bad, fory.ForySchema(schema), layout)
            for read in (view.to_dict, lambda: view.get(field),
                         lambda: view.get_decimal("d") if field == "d" else view.get_array("l").get_decimal(0)):
                with pytest.raises(CorruptFileError) as v:
                    read()
                assert (v.value.field, v.value.offset) == (e.field, at)
            # the other fields of the row still read through the view
            other = "l" if field == "d" else "d"
            assert view.get(other) == rb.to_pylist()[0][other]


@pytest.mark.parametrize("impl", implementations("foryrow"))
def test_node_table_must_carry_decimal_bounds(impl):
    from paimon_engine.formats.fory import schema as S
    schema = pa.schema([("d", pa.decimal128(10, 2))])
    lay = fory.ForySchema(schema).layout("standard")
    node = lay.root.children[0].index
    assert int.from_bytes(lay.table[node, S.C_BOUND:S.C_BOUND + 4].tobytes(), "little") == 10 ** 10
    row = np.frombuffer(fory.encode_row({"d": None}, schema), np.uint8)
    for bound in (0, 1 << 127 | 1):   # no bound, or one a decimal128 cannot reach
        table = lay.table.copy()
        table[node, S.C_BOUND:S.C_BOUND + 4] = np.frombuffer(bound.to_bytes(32, "little"), np.int64)
        with pytest.raises(ValueError, match="node table"):
            impl.decode_rows(table, lay.children, row, np.array([0, len(row)], np.int64), 1, np.ones(1, np.uint8),
                             False, None, np.zeros((len(lay.nodes), 3), np.int64), np.zeros(3, np.int64))
