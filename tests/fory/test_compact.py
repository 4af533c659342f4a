"""Java's compact layout: field order, bitmap rules, inline structs and compact arrays."""

import pyarrow as pa
import pytest

from paimon_engine.errors import InvalidArgumentError
from paimon_engine.formats import fory


def nn(name, t):
    return pa.field(name, t, nullable=False)


def test_inline_struct_example():
    # {f1:{int16 0x4242}, f2:{int32 0x12345678}} is the 7-byte row 78 56 34 12 42 42 00
    schema = pa.schema([("f1", pa.struct([nn("f1", pa.int16())])), ("f2", pa.struct([nn("f2", pa.int32())]))])
    data = fory.encode_row({"f1": {"f1": 0x4242}, "f2": {"f2": 0x12345678}}, schema, "compact")
    assert data == bytes.fromhex("78563412424200")
    assert fory.decode_row(data, schema, "compact") == {"f1": {"f1": 0x4242}, "f2": {"f2": 0x12345678}}
    assert fory.RowView(data, fory.ForySchema(schema), "compact").get_struct("f1").get_int16(0) == 0x4242


def test_sort_order_groups_then_size():
    # group 0 = size 2, 4 or a multiple of 8 (variable width counts as 8); group 1 = the rest;
    # larger first inside a group; stable
    schema = pa.schema([("a_i8", pa.int8()), ("b_str", pa.string()), ("c_i16", pa.int16()),
                        ("d_i64", pa.int64()), ("e_bool", pa.bool_()), ("f_i32", pa.int32()),
                        ("g_f64", pa.float64()), ("h_list", pa.list_(pa.int8())),
                        ("i_inline3", pa.struct([nn("x", pa.int16()), nn("y", pa.int8())])),
                        ("j_f32", pa.float32())])
    order = fory.ForySchema(schema).layout("compact").slot_order()
    assert order == ["b_str", "d_i64", "g_f64", "h_list", "f_i32", "j_f32", "c_i16",
                     "i_inline3", "a_i8", "e_bool"]
    # the standard layout keeps schema order
    assert fory.ForySchema(schema).layout("standard").slot_order() == schema.names


def test_bitmap_omitted_when_nothing_nullable_and_no_rounding_without_var_fields():
    schema = pa.schema([nn("a", pa.int32()), nn("b", pa.int8())])
    data = fory.encode_row({"a": 1, "b": 2}, schema, "compact")
    assert data == bytes.fromhex("0100000002")
    nullable = pa.schema([("a", pa.int32()), nn("b", pa.int8())])
    data = fory.encode_row({"a": None, "b": 2}, nullable, "compact")
    # bitmap over all fields (1 byte) right after the fixed region; bit = sorted ordinal
    assert data == bytes.fromhex("000000000201")
    assert fory.decode_row(data, nullable, "compact") == {"a": None, "b": 2}


def test_fixed_region_rounded_with_var_field():
    schema = pa.schema([nn("a", pa.int32()), nn("s", pa.string())])
    data = fory.encode_row({"a": 7, "s": "xy"}, schema, "compact")
    # s slot (8) then a (4): 12 bytes, rounded to 16; "xy" padded to 8
    assert len(data) == 24
    assert data[:8] == (16 << 32 | 2).to_bytes(8, "little")
    assert data[8:12] == (7).to_bytes(4, "little") and data[12:16] == bytes(4)
    assert data[16:24] == b"xy" + bytes(6)


def test_compact_array_headers():
    # int64 elements, nullable: int32 count + 1 bitmap byte, rounded to 8 (width is a multiple of 8)
    schema = pa.schema([nn("l", pa.list_(pa.int64()))])
    data = fory.encode_row({"l": [5, None]}, schema, "compact")
    arr = data[8:]
    assert arr[:4] == (2).to_bytes(4, "little") and arr[4] == 0b10 and arr[5:8] == bytes(3)
    assert arr[8:16] == (5).to_bytes(8, "little") and len(arr) == 24
    # int32 elements, not nullable: no bitmap, header of 4 not rounded, element region padded to 8
    schema = pa.schema([nn("l", pa.list_(pa.field("item", pa.int32(), nullable=False)))])
    data = fory.encode_row({"l": [1, 2, 3]}, schema, "compact")
    arr = data[8:]
    assert arr[:4] == (3).to_bytes(4, "little")
    assert arr[4:16] == b"".join(i.to_bytes(4, "little") for i in (1, 2, 3))
    assert arr[16:] == bytes(4) and len(arr) == 20
    # variable-width elements: header not rounded, 8-byte slots right after it
    schema = pa.schema([nn("l", pa.list_(pa.string()))])
    data = fory.encode_row({"l": ["ab"]}, schema, "compact")
    arr = data[8:]
    assert arr[:4] == (1).to_bytes(4, "little") and arr[4] == 0
    assert arr[5:13] == (13 << 32 | 2).to_bytes(8, "little")
    assert arr[13:21] == b"ab" + bytes(6)
    assert fory.decode_row(data, schema, "compact") == {"l": ["ab"]}


def test_inline_struct_elements_and_nested_sorting():
    point = pa.struct([nn("x", pa.int8()), nn("y", pa.int32())])
    schema = pa.schema([nn("pts", pa.list_(pa.field("item", point, nullable=False)))])
    data = fory.encode_row({"pts": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}, schema, "compact")
    arr = data[8:]
    # element = y (int32) then x (int8): 5 bytes, inline; header 4 (not a multiple-of-8 width)
    assert arr[:4] == (2).to_bytes(4, "little")
    assert arr[4:14] == bytes.fromhex("0200000001" "0400000003")
    assert fory.decode_row(data, schema, "compact") == {"pts": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}


def test_null_in_field_without_null_bit_is_refused():
    schema = pa.schema([nn("a", pa.int32()), nn("b", pa.int8())])
    rb = pa.record_batch([pa.array([1, None], pa.int32()), pa.array([1, 2], pa.int8())], names=["a", "b"])
    with pytest.raises(InvalidArgumentError, match="'a'"):
        fory.encode_rows(rb, schema, "compact")
    # the standard layout always has a null bit
    buf, offsets = fory.encode_rows(rb, schema, "standard")
    assert fory.decode_rows(buf, offsets, rb.schema).column(0).to_pylist() == [1, None]


def test_maps_in_compact_layout():
    schema = pa.schema([("m", pa.map_(pa.string(), pa.int32()))])
    value = {"m": [("a", 1), ("b", None)]}
    data = fory.encode_row(value, schema, "compact")
    assert fory.decode_row(data, schema, "compact") == value
    v = fory.RowView(data, fory.ForySchema(schema), "compact")
    assert v.get_map(0).to_list() == [("a", 1), ("b", None)]
