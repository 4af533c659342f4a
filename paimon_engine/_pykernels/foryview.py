"""Pure-Python twin of ``paimon_engine/_kernels/foryview.pyx``: in-place views of one Fory row.

A view never reads outside the bytes of its row: the fixed region is checked
when the view is made, and every offset+size slot is checked against the
containing row, array or map before it is followed.
"""

from __future__ import annotations

import struct

from .status import BAD_LENGTH, BAD_VALUE, INVALID_UTF8, OUT_OF_RANGE, TRUNCATED

K_FIXED, K_BOOL, K_BYTES, K_DECIMAL, K_LIST, K_MAP, K_STRUCT = 1, 2, 3, 4, 5, 6, 7

# primitive codes of ViewSchema.prim
P_NONE, P_BOOL, P_I8, P_I16, P_I32, P_I64, P_F32, P_F64, P_DATE, P_TS, P_DUR, P_STR, P_BIN, P_DEC = range(14)

_TYPED = {
    "bool": (P_BOOL,), "int8": (P_I8,), "int16": (P_I16,), "int32": (P_I32, P_DATE),
    "int64": (P_I64, P_TS, P_DUR), "float32": (P_F32,), "float64": (P_F64,),
}
_FMT = {P_I8: "<b", P_I16: "<h", P_I32: "<i", P_I64: "<q", P_F32: "<f", P_F64: "<d", P_DATE: "<i",
        P_TS: "<q", P_DUR: "<q"}
_STRUCTS = {p: struct.Struct(f) for p, f in _FMT.items()}
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_I32 = struct.Struct("<i")


def _corrupt(sch, status, pos, node):
    from ..errors import CorruptFileError
    from .status import describe
    return CorruptFileError(f"malformed Fory row: {describe(status)}", path=SOURCE, field=sch.path[node],
                            offset=pos)


#: the source name view errors carry (a view reads bytes, not a file)
SOURCE = "<fory row>"


def _out_of_range(sch, node, raw):
    from ..errors import ValueOutOfRangeError
    return ValueOutOfRangeError("value outside the range of Python's datetime", field=sch.path[node], value=raw,
                                path=SOURCE)


def _utf8(sch, node, buf, start, size):
    """``buf[start:start + size]`` decoded strictly; bad UTF-8 is corrupt at the first bad byte."""
    try:
        return bytes(buf[start:start + size]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise _corrupt(sch, INVALID_UTF8, start + e.start, node) from None


def _wrong_type(sch, node, wanted):
    from ..errors import SchemaError
    return SchemaError(f"field {sch.path[node]!r} is {sch.typename[node]}, not {wanted}")


class ViewSchema:
    """Per-node layout facts of one ForySchema layout, as flat lists."""

    def __init__(self, kind, width, slot, off, bit, nullable, inline, fixed, bmoff, bmsize, children,
                 hdrround, prim, names, compact, convert, path, typename):
        self.kind = kind
        self.width = width
        self.slot = slot
        self.off = off
        self.bit = bit
        self.nullable = nullable
        self.inline = inline
        self.fixed = fixed
        self.bmoff = bmoff
        self.bmsize = bmsize
        self.children = children
        self.hdrround = hdrround
        self.prim = prim
        self.names = names          # struct node -> {name: position}
        self.compact = compact
        self.convert = convert      # node -> callable(raw) -> Python value, or None
        self.path = path            # node -> dotted field name
        self.typename = typename    # node -> type name for messages


def _round8(n):
    return (n + 7) & ~7


def _array_header(sch, e, cnt):
    if not sch.compact:
        return 8 + ((cnt + 63) >> 6) * 8
    h = 4 + ((cnt + 7) >> 3 if sch.nullable[e] else 0)
    return _round8(h) if sch.hdrround[e] else h


class RowView:
    """Typed, bounds-checked access to the fields of one row."""

    __slots__ = ("_buf", "_sch", "_node", "_base", "_end")

    def __init__(self, data, schema, layout="standard", node=0, base=0, end=None):
        """View of the row in ``data`` (bytes-like) with ``schema`` (a ForySchema) in ``layout``.

        ``node``, ``base`` and ``end`` locate a nested row inside ``data``.
        """
        sch = schema if isinstance(schema, ViewSchema) else schema.view_schema(layout)
        buf = data if isinstance(data, (bytes, bytearray)) else memoryview(data).cast("B")
        if end is None:
            end = len(buf)
        self._buf = buf
        self._sch = sch
        self._node = node
        self._base = base
        self._end = end
        if sch.kind[node] != K_STRUCT:
            raise _wrong_type(sch, node, "struct")
        if base < 0 or end > len(buf) or base > end or end - base < sch.fixed[node]:
            raise _corrupt(sch, TRUNCATED, max(base, 0), node)

    # -- field resolution ------------------------------------------------
    def _child(self, i):
        kids = self._sch.children[self._node]
        if type(i) is not int:
            # a field name, or an integer of another type (NumPy's, bool): the name wins where both could apply
            pos = self._sch.names[self._node].get(i)
            if pos is not None:
                i = pos
            elif isinstance(i, str) or not hasattr(type(i), "__index__"):
                raise KeyError(i)
            else:
                i = i.__index__()
        if i < 0 or i >= len(kids):
            raise IndexError(f"field index {i} out of range for {len(kids)} fields")
        return kids[i]

    def _null(self, c):
        sch = self._sch
        n = self._node
        if not sch.bmsize[n]:
            return False
        b = sch.bit[c]
        return (self._buf[self._base + sch.bmoff[n] + (b >> 3)] >> (b & 7)) & 1 == 1

    def __len__(self):
        return len(self._sch.children[self._node])

    @property
    def num_fields(self):
        return len(self._sch.children[self._node])

    def keys(self):
        return list(self._sch.names[self._node])

    def is_null(self, i):
        return self._null(self._child(i))

    # -- typed getters -----------------------------------------------------
    def _prim(self, i, wanted):
        c = self._child(i)
        sch = self._sch
        if sch.prim[c] not in _TYPED[wanted]:
            raise _wrong_type(sch, c, wanted)
        if self._null(c):
            return None
        pos = self._base + sch.off[c]
        if wanted == "bool":
            return self._buf[pos] != 0
        return _STRUCTS[sch.prim[c]].unpack_from(self._buf, pos)[0]

    def get_bool(self, i):
        return self._prim(i, "bool")

    def get_int8(self, i):
        return self._prim(i, "int8")

    def get_int16(self, i):
        return self._prim(i, "int16")

    def get_int32(self, i):
        return self._prim(i, "int32")

    def get_int64(self, i):
        return self._prim(i, "int64")

    def get_float32(self, i):
        return self._prim(i, "float32")

    def get_float64(self, i):
        return self._prim(i, "float64")

    def _span(self, c, kinds, wanted):
        """(start, size) of the variable-width body of child ``c`` (None if null)."""
        sch = self._sch
        if sch.kind[c] not in kinds or sch.inline[c]:
            raise _wrong_type(sch, c, wanted)
        if self._null(c):
            return None
        return _follow(self._buf, sch, c, self._base + sch.off[c], self._base, self._end)

    def get_binary(self, i):
        c = self._child(i)
        sp = self._span(c, (K_BYTES,), "binary")
        if sp is None:
            return None
        return bytes(self._buf[sp[0]:sp[0] + sp[1]])

    def get_string(self, i):
        c = self._child(i)
        if self._sch.prim[c] != P_STR:
            raise _wrong_type(self._sch, c, "string")
        sp = self._span(c, (K_BYTES,), "string")
        return None if sp is None else _utf8(self._sch, c, self._buf, sp[0], sp[1])

    def get_decimal(self, i):
        c = self._child(i)
        sp = self._span(c, (K_DECIMAL,), "decimal")
        if sp is None:
            return None
        if sp[1] != 32:
            raise _corrupt(self._sch, BAD_LENGTH, self._base + self._sch.off[c], c)
        try:
            return self._sch.convert[c](bytes(self._buf[sp[0]:sp[0] + 32]))
        except ValueError:
            raise _corrupt(self._sch, OUT_OF_RANGE, sp[0], c) from None

    def get_struct(self, i):
        c = self._child(i)
        sch = self._sch
        if sch.kind[c] != K_STRUCT:
            raise _wrong_type(sch, c, "struct")
        if self._null(c):
            return None
        if sch.inline[c]:
            p = self._base + sch.off[c]
            return RowView(self._buf, sch, None, c, p, p + sch.fixed[c])
        start, size = _follow(self._buf, sch, c, self._base + sch.off[c], self._base, self._end)
        return RowView(self._buf, sch, None, c, start, start + size)

    def get_array(self, i):
        c = self._child(i)
        sp = self._span(c, (K_LIST,), "array")
        if sp is None:
            return None
        return ArrayView(self._buf, self._sch, self._sch.children[c][0], sp[0], sp[0] + sp[1])

    def get_map(self, i):
        c = self._child(i)
        sp = self._span(c, (K_MAP,), "map")
        if sp is None:
            return None
        return MapView(self._buf, self._sch, c, sp[0], sp[0] + sp[1])

    def get(self, i):
        """The Python value of field ``i`` (index or name)."""
        c = self._child(i)
        return _value(self, c, i)

    def __getitem__(self, i):
        return self.get(i)

    def to_dict(self):
        return {name: self.get(pos) for name, pos in self._sch.names[self._node].items()}

    def __repr__(self):
        return f"RowView({self.to_dict()!r})"


def _convert(sch, node, raw, pos):
    conv = sch.convert[node]
    if conv is None:
        return raw
    try:
        return conv(raw)
    except (OverflowError, ValueError):
        raise _out_of_range(sch, node, raw) from None


def _follow(buf, sch, node, slot, cb, ce):
    """Check the offset+size slot at ``slot`` against the container [cb, ce) and return (start, size)."""
    if slot + 8 > ce:
        raise _corrupt(sch, TRUNCATED, slot, node)
    v = _U64.unpack_from(buf, slot)[0]
    rel, size = v >> 32, v & 0xFFFFFFFF
    if rel > ce - cb or size > ce - cb - rel:
        raise _corrupt(sch, OUT_OF_RANGE, slot, node)
    return cb + rel, size


def _value(view, c, i):
    sch = view._sch
    k = sch.kind[c]
    p = sch.prim[c]
    if k in (K_FIXED, K_BOOL):
        wanted = {P_BOOL: "bool", P_I8: "int8", P_I16: "int16", P_I32: "int32", P_I64: "int64",
                  P_F32: "float32", P_F64: "float64", P_DATE: "int32", P_TS: "int64", P_DUR: "int64"}[p]
        raw = view._prim(i, wanted)
        return None if raw is None else _convert(sch, c, raw, view._base + sch.off[c])
    if k == K_BYTES:
        return view.get_string(i) if p == P_STR else view.get_binary(i)
    if k == K_DECIMAL:
        return view.get_decimal(i)
    if k == K_STRUCT:
        sub = view.get_struct(i)
        return None if sub is None else sub.to_dict()
    if k == K_LIST:
        arr = view.get_array(i)
        return None if arr is None else arr.to_list()
    m = view.get_map(i)
    return None if m is None else m.to_list()


class ArrayView:
    """Elements of one Fory array, read in place."""

    __slots__ = ("_buf", "_sch", "_elem", "_base", "_end", "_n", "_hdr", "_bm")

    def __init__(self, buf, sch, elem, base, end):
        self._buf = buf
        self._sch = sch
        self._elem = elem
        self._base = base
        self._end = end
        avail = end - base
        if sch.compact:
            if avail < 4:
                raise _corrupt(sch, TRUNCATED, base, elem)
            n = _I32.unpack_from(buf, base)[0]
            self._bm = base + 4 if sch.nullable[elem] else -1
        else:
            if avail < 8:
                raise _corrupt(sch, TRUNCATED, base, elem)
            n = _I64.unpack_from(buf, base)[0]
            self._bm = base + 8
        w = sch.slot[elem]
        if n < 0 or n > 2 ** 31 - 1 or (w and n > avail // w) or n > avail * 8:
            raise _corrupt(sch, BAD_LENGTH, base, elem)
        hdr = _array_header(sch, elem, n)
        if hdr + n * w > avail:
            raise _corrupt(sch, TRUNCATED, base, elem)
        self._n = n
        self._hdr = hdr

    def __len__(self):
        return self._n

    def _index(self, k):
        if k < 0:
            k += self._n
        if k < 0 or k >= self._n:
            raise IndexError(f"element {k} out of range for {self._n} elements")
        return k

    def is_null(self, k):
        k = self._index(k)
        if self._bm < 0:
            return False
        return (self._buf[self._bm + (k >> 3)] >> (k & 7)) & 1 == 1

    def _slot(self, k):
        return self._base + self._hdr + k * self._sch.slot[self._elem]

    def _prim(self, k, wanted):
        sch = self._sch
        e = self._elem
        if sch.prim[e] not in _TYPED[wanted]:
            raise _wrong_type(sch, e, wanted)
        k = self._index(k)
        if self.is_null(k):
            return None
        pos = self._slot(k)
        if wanted == "bool":
            return self._buf[pos] != 0
        return _STRUCTS[sch.prim[e]].unpack_from(self._buf, pos)[0]

    def get_bool(self, k):
        return self._prim(k, "bool")

    def get_int8(self, k):
        return self._prim(k, "int8")

    def get_int16(self, k):
        return self._prim(k, "int16")

    def get_int32(self, k):
        return self._prim(k, "int32")

    def get_int64(self, k):
        return self._prim(k, "int64")

    def get_float32(self, k):
        return self._prim(k, "float32")

    def get_float64(self, k):
        return self._prim(k, "float64")

    def _span(self, k, kinds, wanted):
        sch = self._sch
        e = self._elem
        if sch.kind[e] not in kinds or sch.inline[e]:
            raise _wrong_type(sch, e, wanted)
        k = self._index(k)
        if self.is_null(k):
            return None
        return _follow(self._buf, sch, e, self._slot(k), self._base, self._end)

    def get_binary(self, k):
        sp = self._span(k, (K_BYTES,), "binary")
        return None if sp is None else bytes(self._buf[sp[0]:sp[0] + sp[1]])

    def get_string(self, k):
        if self._sch.prim[self._elem] != P_STR:
            raise _wrong_type(self._sch, self._elem, "string")
        sp = self._span(k, (K_BYTES,), "string")
        return None if sp is None else _utf8(self._sch, self._elem, self._buf, sp[0], sp[1])

    def get_decimal(self, k):
        sp = self._span(k, (K_DECIMAL,), "decimal")
        if sp is None:
            return None
        if sp[1] != 32:
            raise _corrupt(self._sch, BAD_LENGTH, self._slot(self._index(k)), self._elem)
        try:
            return self._sch.convert[self._elem](bytes(self._buf[sp[0]:sp[0] + 32]))
        except ValueError:
            raise _corrupt(self._sch, OUT_OF_RANGE, sp[0], self._elem) from None

    def get_struct(self, k):
        sch = self._sch
        e = self._elem
        if sch.kind[e] != K_STRUCT:
            raise _wrong_type(sch, e, "struct")
        k = self._index(k)
        if self.is_null(k):
            return None
        if sch.inline[e]:
            p = self._slot(k)
            return RowView(self._buf, sch, None, e, p, p + sch.fixed[e])
        start, size = _follow(self._buf, sch, e, self._slot(k), self._base, self._end)
        return RowView(self._buf, sch, None, e, start, start + size)

    def get_array(self, k):
        sp = self._span(k, (K_LIST,), "array")
        if sp is None:
            return None
        return ArrayView(self._buf, self._sch, self._sch.children[self._elem][0], sp[0], sp[0] + sp[1])

    def get_map(self, k):
        sp = self._span(k, (K_MAP,), "map")
        if sp is None:
            return None
        return MapView(self._buf, self._sch, self._elem, sp[0], sp[0] + sp[1])

    def get(self, k):
        sch = self._sch
        e = self._elem
        kind = sch.kind[e]
        p = sch.prim[e]
        if kind in (K_FIXED, K_BOOL):
            wanted = {P_BOOL: "bool", P_I8: "int8", P_I16: "int16", P_I32: "int32", P_I64: "int64",
                      P_F32: "float32", P_F64: "float64", P_DATE: "int32", P_TS: "int64", P_DUR: "int64"}[p]
            raw = self._prim(k, wanted)
            return None if raw is None else _convert(sch, e, raw, self._slot(self._index(k)))
        if kind == K_BYTES:
            return self.get_string(k) if p == P_STR else self.get_binary(k)
        if kind == K_DECIMAL:
            return self.get_decimal(k)
        if kind == K_STRUCT:
            sub = self.get_struct(k)
            return None if sub is None else sub.to_dict()
        if kind == K_LIST:
            arr = self.get_array(k)
            return None if arr is None else arr.to_list()
        m = self.get_map(k)
        return None if m is None else m.to_list()

    def __getitem__(self, k):
        return self.get(k)

    def to_list(self):
        return [self.get(k) for k in range(self._n)]

    def __iter__(self):
        return iter(self.to_list())

    def __repr__(self):
        return f"ArrayView({self.to_list()!r})"


class MapView:
    """A Fory map read in place: a keys array and a values array of equal length."""

    __slots__ = ("_keys", "_values")

    def __init__(self, buf, sch, node, base, end):
        if end - base < 8:
            raise _corrupt(sch, TRUNCATED, base, node)
        ks = _I64.unpack_from(buf, base)[0]
        if ks < 0 or ks > end - base - 8:
            raise _corrupt(sch, BAD_LENGTH, base, node)
        ent = sch.children[node][0]
        kn, vn = sch.children[ent]
        self._keys = ArrayView(buf, sch, kn, base + 8, base + 8 + ks)
        self._values = ArrayView(buf, sch, vn, base + 8 + ks, end)
        if len(self._keys) != len(self._values):
            raise _corrupt(sch, BAD_LENGTH, base, node)
        for k in range(len(self._keys)):
            if self._keys.is_null(k):   # map keys are never null
                raise _corrupt(sch, BAD_VALUE, self._keys._bm + (k >> 3), kn)

    def __len__(self):
        return len(self._keys)

    def keys(self):
        return self._keys

    def values(self):
        return self._values

    def to_list(self):
        """``[(key, value), ...]`` in stored order (Arrow's map as Python)."""
        return list(zip(self._keys.to_list(), self._values.to_list()))

    def to_dict(self):
        return dict(self.to_list())

    def __repr__(self):
        return f"MapView({self.to_list()!r})"
