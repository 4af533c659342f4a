"""Test helpers for Fory rows: an independent walker of the standard layout."""

import struct

import pyarrow as pa

GOLDEN_FOO = "java_foo_row.bin"


def _width(t):
    if pa.types.is_boolean(t) or pa.types.is_int8(t):
        return 1
    if pa.types.is_int16(t):
        return 2
    if pa.types.is_int32(t) or pa.types.is_float32(t) or pa.types.is_date32(t):
        return 4
    if pa.types.is_int64(t) or pa.types.is_float64(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t):
        return 8
    return None  # variable width: 8-byte offset+size slot


def null_slots(data: bytes, schema: pa.Schema):
    """Byte ranges of the slots of null fields/elements in a standard-layout row (straight from the spec)."""
    out = []

    def row(base, fields):
        n = len(fields)
        bm = ((n + 63) // 64) * 8
        for i, f in enumerate(fields):
            slot = base + bm + 8 * i
            if (data[base + (i >> 3)] >> (i & 7)) & 1:
                out.append((slot, slot + 8))
                continue
            value(f.type, slot, base)

    def array(base, t):
        cnt = struct.unpack_from("<q", data, base)[0]
        bm = ((cnt + 63) // 64) * 8
        w = _width(t) or 8
        for k in range(cnt):
            slot = base + 8 + bm + k * w
            if (data[base + 8 + (k >> 3)] >> (k & 7)) & 1:
                out.append((slot, slot + w))
                continue
            value(t, slot, base)

    def value(t, slot, base):
        if _width(t):
            return
        v = struct.unpack_from("<Q", data, slot)[0]
        start = base + (v >> 32)
        if pa.types.is_struct(t):
            row(start, list(t))
        elif pa.types.is_map(t):
            ks = struct.unpack_from("<q", data, start)[0]
            array(start + 8, t.key_type)
            array(start + 8 + ks, t.item_type)
        elif pa.types.is_list(t):
            array(start, t.value_type)

    row(0, list(schema))
    return out


def equal_except_null_slots(ours: bytes, theirs: bytes, schema: pa.Schema):
    """True if the rows are the same bytes, apart from the slots of null values."""
    if len(ours) != len(theirs):
        return False
    masked = set()
    for a, b in null_slots(ours, schema):
        masked.update(range(a, b))
    return all(x == y or i in masked for i, (x, y) in enumerate(zip(ours, theirs)))
