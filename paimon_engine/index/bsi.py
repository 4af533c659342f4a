"""Bit-sliced index (``bsi``), byte-compatible with Paimon's ``BitSliceIndexBitmapFileIndex``.

Serialized: ``version(1)=1 | int rowCount | bool hasPositive | [BSI] | bool hasNegative | [BSI]``;
negative values are stored by absolute value in the negative BSI. One BSI:
``version(1)=1 | long min | long max | roaring existence | int sliceCount | roaring slice[i]``
where slice ``i`` holds the rows whose ``value - min`` has bit ``i`` set and
``sliceCount = 64 - nlz(max - min)``. The Java writer always uses ``min = 0``.

Queries are exact under SQL semantics (null rows never match a comparison).
"""
from __future__ import annotations

import struct

import numpy as np
from pyroaring import BitMap

from .. import types as T
from ..errors import CorruptFileError, InvalidArgumentError, UnsupportedTypeError
from . import roaring
from .result import BitmapResult
from .values import column_keys, literal_key

__all__ = ["BsiIndex", "BitSliceIndex"]

_LONG_MIN = -(1 << 63)


def _check_type(t):
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.DateType, T.TimeType,
                      T.TimestampType, T.LocalZonedTimestampType)):
        return
    if isinstance(t, T.DecimalType) and t.precision <= 18:
        return
    raise UnsupportedTypeError(f"the bsi index does not support {t.to_paimon_string()}")


def _bm(rows) -> BitMap:
    return roaring.from_rows(rows)


class BitSliceIndex:
    """One unsigned bit-sliced index: existence bitmap and slices of ``value - min``."""

    def __init__(self, min_value, max_value, existence, slices):
        self.min = min_value
        self.max = max_value
        self.existence = existence
        self.slices = slices

    @classmethod
    def build(cls, rows: np.ndarray, values: np.ndarray) -> "BitSliceIndex":
        """``values`` >= 0 (int64 or uint64), ``min`` = 0 as the Java writer does."""
        vmax = int(values.max()) if len(values) else 0
        count = vmax.bit_length()
        u = values.astype(np.uint64)
        slices = []
        for i in range(count):
            sel = ((u >> np.uint64(i)) & np.uint64(1)).astype(bool)
            slices.append(_bm(rows[sel]))
        return cls(0, vmax, _bm(rows), slices)

    def to_bytes(self) -> bytes:
        out = [struct.pack(">bqq", 1, self.min, self.max), roaring.serialize(self.existence),
               struct.pack(">i", len(self.slices))]
        out += [roaring.serialize(s) for s in self.slices]
        return b"".join(out)

    @classmethod
    def parse(cls, buf, pos, path, base, row_count):
        if pos + 17 > len(buf):
            raise CorruptFileError("truncated bsi", path=path, offset=base + pos)
        version, vmin, vmax = struct.unpack_from(">bqq", buf, pos)
        if version != 1:
            raise CorruptFileError(f"unsupported bsi version {version}", path=path, offset=base + pos)
        if vmax < vmin:
            raise CorruptFileError(f"bsi max {vmax} < min {vmin}", path=path, offset=base + pos + 1)
        existence, pos = roaring.deserialize(buf, pos + 17, path)
        if pos + 4 > len(buf):
            raise CorruptFileError("truncated bsi", path=path, offset=base + pos)
        count = struct.unpack_from(">i", buf, pos)[0]
        if not 0 <= count <= 64:
            raise CorruptFileError(f"bad bsi slice count {count}", path=path, offset=base + pos)
        pos += 4
        slices = []
        for _ in range(count):
            s, pos = roaring.deserialize(buf, pos, path)
            slices.append(s)
        for bm in [existence] + slices:
            if len(bm) and bm.max() >= row_count:
                raise CorruptFileError("bsi bitmap names rows past the row count", path=path, offset=base + pos)
        return cls(vmin, vmax, existence, slices), pos

    def compare(self, op: str, value: int) -> BitMap:
        """Rows whose value ``op`` ``value`` (op in eq, lt, le, gt, ge)."""
        e = self.existence
        v = value - self.min
        if v < 0:
            return e.copy() if op in ("gt", "ge") else BitMap()
        if v >> len(self.slices):
            return e.copy() if op in ("lt", "le") else BitMap()
        gt, lt, eq = BitMap(), BitMap(), e.copy()
        for i in range(len(self.slices) - 1, -1, -1):
            s = self.slices[i]
            if (v >> i) & 1:
                lt |= eq - s
                eq &= s
            else:
                gt |= eq & s
                eq -= s
        return {"eq": eq, "lt": lt, "le": lt | eq, "gt": gt, "ge": gt | eq}[op]


class BsiIndex:
    """Writer (``add_column``/``to_bytes``) and reader (``from_bytes`` + queries)."""

    TYPE = "bsi"
    OPTIONS = ()

    def __init__(self, data_type: T.DataType, options: dict | None = None):
        for key in (options or {}):
            raise InvalidArgumentError(f"unknown bsi option {key!r} (the bsi index has no options)")
        _check_type(data_type)
        self.type = data_type
        self._chunks = []
        self.row_count = 0
        self.positive = None
        self.negative = None

    def add_column(self, column) -> None:
        keys, valid = column_keys(column, self.type)
        self._chunks.append((np.asarray(keys, dtype=np.int64), valid))
        self.row_count += column.length

    def add_values(self, values) -> None:
        valid = np.array([v is not None for v in values], dtype=bool)
        keys = np.array([0 if v is None else literal_key(v, self.type) for v in values], dtype=np.int64)
        self._chunks.append((keys, valid))
        self.row_count += len(valid)

    def to_bytes(self) -> bytes:
        if self._chunks:
            keys = np.concatenate([c[0] for c in self._chunks])
            valid = np.concatenate([c[1] for c in self._chunks])
        else:
            keys, valid = np.zeros(0, np.int64), np.zeros(0, bool)
        rows = np.flatnonzero(valid)
        vals = keys[rows]
        if len(vals) and vals.min() == _LONG_MIN:
            raise InvalidArgumentError("the bsi index cannot hold Long.MIN_VALUE")
        pos = vals >= 0
        out = [struct.pack(">bi", 1, self.row_count)]
        for sel, sign in ((pos, 1), (~pos, -1)):
            if sel.any():
                out.append(b"\x01")
                out.append(BitSliceIndex.build(rows[sel], vals[sel] * sign).to_bytes())
            else:
                out.append(b"\x00")
        return b"".join(out)

    # -- reading ------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data, data_type: T.DataType, path=None, offset=0) -> "BsiIndex":
        _check_type(data_type)
        buf = bytes(data)
        self = cls(data_type)
        if len(buf) < 6:
            raise CorruptFileError("truncated bsi index", path=path, offset=offset)
        version, rows = struct.unpack_from(">bi", buf, 0)
        if version != 1:
            raise CorruptFileError(f"unsupported bsi index version {version}", path=path, offset=offset)
        if rows < 0:
            raise CorruptFileError(f"negative row count {rows}", path=path, offset=offset + 1)
        self.row_count = rows
        pos = 5
        parts = []
        for _ in range(2):
            if pos >= len(buf):
                raise CorruptFileError("truncated bsi index", path=path, offset=offset + pos)
            flag = buf[pos]
            pos += 1
            if flag not in (0, 1):
                raise CorruptFileError(f"bad bsi flag {flag}", path=path, offset=offset + pos - 1)
            if flag:
                part, pos = BitSliceIndex.parse(buf, pos, path, offset, rows)
                parts.append(part)
            else:
                parts.append(None)
        self.positive, self.negative = parts
        return self

    def _side(self, which):
        s = self.positive if which > 0 else self.negative
        return s

    def _exists(self, s):
        return s.existence if s is not None else BitMap()

    def _cmp(self, op, value) -> BitMap:
        v = literal_key(value, self.type)
        p, n = self.positive, self.negative
        if op == "eq":
            if v >= 0:
                return p.compare("eq", v) if p else BitMap()
            return n.compare("eq", -v) if n else BitMap()
        if op in ("lt", "le"):
            if v >= 0:
                return self._exists(n) | (p.compare(op, v) if p else BitMap())
            return n.compare("gt" if op == "lt" else "ge", -v) if n else BitMap()
        # gt / ge
        if v >= 0:
            return p.compare(op, v) if p else BitMap()
        return self._exists(p) | (n.compare("lt" if op == "gt" else "le", -v) if n else BitMap())

    def _all(self):
        bm = BitMap()
        if self.row_count:
            bm.add_range(0, self.row_count)
        return bm

    def not_null_bitmap(self):
        return self._exists(self.positive) | self._exists(self.negative)

    def eq(self, value):
        return BitmapResult(self._cmp("eq", value))

    def lt(self, value):
        return BitmapResult(self._cmp("lt", value))

    def le(self, value):
        return BitmapResult(self._cmp("le", value))

    def gt(self, value):
        return BitmapResult(self._cmp("gt", value))

    def ge(self, value):
        return BitmapResult(self._cmp("ge", value))

    def between(self, low, high):
        return BitmapResult(self._cmp("ge", low) & self._cmp("le", high))

    def isin(self, values):
        bm = BitMap()
        for v in values:
            if v is not None:
                bm |= self._cmp("eq", v)
        return BitmapResult(bm)

    def ne(self, value):
        return BitmapResult(self.not_null_bitmap() - self._cmp("eq", value))

    def not_in(self, values):
        return BitmapResult(self.not_null_bitmap() - self.isin(values).bitmap)

    def is_null(self):
        return BitmapResult(self._all() - self.not_null_bitmap())

    def is_not_null(self):
        return BitmapResult(self.not_null_bitmap())
