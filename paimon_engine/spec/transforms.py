"""Partition transforms: identity, bucket[N], truncate[W], year, month, day, hour, void.

Each transform has a scalar form (``apply_value`` on the internal value representation of
:mod:`~paimon_engine.spec.conversions`) and a vectorized form (``apply`` on a pyarrow Array, returning a pyarrow
Array of the internal representation of the result type). Bucket hashing is Murmur3 x86 32 with seed 0, on the
spec's byte forms; 8-byte integers are hashed in NumPy in one pass, strings and bytes through ``mmh3``.
"""

from __future__ import annotations

import datetime
import decimal
import re
import struct

import numpy as np

from .. import types as T
from ..batch import int64_values, numbers_to_arrow, valid_bools
from ..errors import InvalidArgumentError, UnsupportedTypeError
from .conversions import EXACT, _unscaled_bytes, type_name

__all__ = ["Transform", "IdentityTransform", "BucketTransform", "TruncateTransform", "YearTransform",
           "MonthTransform", "DayTransform", "HourTransform", "VoidTransform", "parse_transform",
           "bucket_hash", "murmur3_int64"]

_M32 = np.uint32(0xFFFFFFFF)


def _rotl(x, r):
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def murmur3_int64(values: np.ndarray) -> np.ndarray:
    """Murmur3 x86 32 (seed 0) of each int64's 8 little-endian bytes, as int32 — vectorized."""
    v = np.ascontiguousarray(values, dtype="<i8").view("<u4").reshape(-1, 2)
    c1, c2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)
    h = np.zeros(len(v), dtype=np.uint32)
    with np.errstate(over="ignore"):
        for j in range(2):
            k = v[:, j].copy()
            k *= c1
            k = _rotl(k, 15)
            k *= c2
            h ^= k
            h = _rotl(h, 13)
            h = h * np.uint32(5) + np.uint32(0xE6546B64)
        h ^= np.uint32(8)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h.view(np.int32)


def _mmh3(b: bytes) -> int:
    import mmh3
    return mmh3.hash(b, 0, signed=True)


def bucket_hash(t: T.DataType, value) -> int:
    """The spec's 32-bit hash of one internal value (``hash & 0x7fffffff) % N`` is the bucket)."""
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.DateType, T.TimeType,
                      T.TimestampType, T.LocalZonedTimestampType)):
        return _mmh3(struct.pack("<q", int(value)))
    if isinstance(t, T.BooleanType):
        return _mmh3(struct.pack("<q", 1 if value else 0))
    if isinstance(t, (T.FloatType, T.DoubleType)):
        v = float(value)
        if v == 0.0:
            v = 0.0     # -0.0 hashes as 0.0
        if v != v:
            return _mmh3(struct.pack("<q", 0x7FF8000000000000))
        return _mmh3(struct.pack("<d", v))
    if isinstance(t, (T.VarCharType, T.CharType)):
        return _mmh3(value.encode("utf-8"))
    if isinstance(t, (T.UuidType, T.BinaryType, T.VarBinaryType)):
        return _mmh3(bytes(value))
    if isinstance(t, T.DecimalType):
        if isinstance(value, decimal.Decimal):
            value = int(value.scaleb(t.scale, EXACT).to_integral_value(context=EXACT))
        return _mmh3(_unscaled_bytes(int(value)))
    raise UnsupportedTypeError(f"cannot bucket {t.to_paimon_string()}")


def _is_int_like(t):
    return isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.DateType, T.TimeType,
                          T.TimestampType, T.LocalZonedTimestampType))


def _to_numpy_int64(arr):
    """(int64 values with nulls as 0, validity mask or None) of an integer-like Arrow array, in internal units."""
    import pyarrow as pa
    import pyarrow.compute as pc
    t = arr.type
    if pa.types.is_timestamp(t):
        unit = t.unit
        iv = arr.cast(pa.int64())
        if unit == "s":
            iv = pc.multiply(iv, 1_000_000)
        elif unit == "ms":
            iv = pc.multiply(iv, 1000)
    elif pa.types.is_time(t):
        iv = arr.cast(pa.time64("us")).cast(pa.int64()) if t.unit in ("s", "ms") else arr.cast(pa.int64())
    elif pa.types.is_date32(t):
        iv = arr.cast(pa.int32()).cast(pa.int64())
    elif pa.types.is_date64(t):
        iv = arr.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
    else:
        iv = arr.cast(pa.int64())
    if isinstance(iv, pa.ChunkedArray):
        iv = iv.combine_chunks()
    # from the buffers: np.asarray / to_numpy go through pyarrow's pandas shim (pandas imported on first use)
    vals = int64_values(iv)
    valid = None
    if iv.null_count:
        valid = valid_bools(iv)
        vals = np.where(valid, vals, 0)
    return vals, valid


class Transform:
    """Base of all transforms; ``str(t)`` is the spec's transform string."""

    __slots__ = ()
    name = ""

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"Transform({str(self)!r})"

    def __eq__(self, other):
        return isinstance(other, Transform) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def can_transform(self, source: T.DataType) -> bool:
        try:
            self.result_type(source)
            return True
        except UnsupportedTypeError:
            return False

    def result_type(self, source: T.DataType) -> T.DataType:
        raise NotImplementedError

    @property
    def preserves_order(self) -> bool:
        return False

    def apply_value(self, source: T.DataType, value):
        raise NotImplementedError

    def apply(self, source: T.DataType, arr):
        """Vectorized: pyarrow Array of source values -> pyarrow Array of partition values (internal repr)."""
        import pyarrow as pa
        rt = self.result_type(source)
        vals = [None if v is None else self.apply_value(source, v) for v in _internal_pylist(source, arr)]
        return pa.array(vals, type=_internal_arrow_type(rt))

    def human_string(self, source: T.DataType, value) -> str:
        """The partition value as it appears in paths (``ts_day=2017-11-16``)."""
        if value is None:
            return "null"
        return _human(self.result_type(source), value)

    def to_partition_value(self, source: T.DataType, value):
        """A natural Python value of the source column (date, datetime, Decimal...) -> partition value."""
        from .conversions import to_internal
        return None if value is None else self.apply_value(source, to_internal(source, value))


def _internal_arrow_type(t: T.DataType):
    import pyarrow as pa
    if isinstance(t, (T.DateType,)):
        return pa.int32()
    if isinstance(t, (T.TimeType, T.TimestampType, T.LocalZonedTimestampType)):
        return pa.int64()
    if isinstance(t, T.UuidType):
        return pa.binary(16)
    return t.to_arrow()


def _internal_pylist(source: T.DataType, arr):
    """Values of an Arrow array in the internal representation, as a list."""
    if _is_int_like(source):
        vals, valid = _to_numpy_int64(arr)
        out = vals.tolist()
        if valid is not None:
            out = [v if ok else None for v, ok in zip(out, valid.tolist())]
        return out
    if isinstance(source, T.UuidType):
        return [None if v is None else (v.bytes if hasattr(v, "bytes") else bytes(v)) for v in arr.to_pylist()]
    return arr.to_pylist()


def _human(t: T.DataType, value) -> str:
    from .conversions import from_internal
    if isinstance(t, T.DateType):
        return from_internal(t, value).isoformat()
    if isinstance(t, T.TimestampType):
        return from_internal(t, value).isoformat()
    if isinstance(t, T.LocalZonedTimestampType):
        return from_internal(t, value).isoformat().replace("+00:00", "Z")
    if isinstance(t, T.TimeType):
        return from_internal(t, value).isoformat()
    if isinstance(t, (T.BinaryType, T.VarBinaryType)):
        import base64
        return base64.b64encode(bytes(value)).decode()
    if isinstance(t, T.UuidType):
        return str(from_internal(t, value))
    if isinstance(t, T.BooleanType):
        return "true" if value else "false"
    return str(value)


class IdentityTransform(Transform):
    __slots__ = ()
    name = "identity"

    def result_type(self, source):
        if source.is_nested:
            raise UnsupportedTypeError(f"identity cannot partition by nested type {source.to_paimon_string()}")
        return source

    @property
    def preserves_order(self):
        return True

    def apply_value(self, source, value):
        return value

    def apply(self, source, arr):
        import pyarrow as pa
        if _is_int_like(source) and not isinstance(source, (T.TinyIntType, T.SmallIntType, T.IntType,
                                                              T.BigIntType)):
            vals, valid = _to_numpy_int64(arr)
            target = _internal_arrow_type(source)
            return numbers_to_arrow(vals, valid).cast(target)
        if isinstance(source, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType)):
            return arr.cast(source.to_arrow())
        return pa.array(_internal_pylist(source, arr), type=_internal_arrow_type(source)) \
            if isinstance(source, T.UuidType) else arr


class VoidTransform(Transform):
    __slots__ = ()
    name = "void"

    def result_type(self, source):
        return source

    def apply_value(self, source, value):
        return None

    def apply(self, source, arr):
        import pyarrow as pa
        return pa.nulls(len(arr), type=_internal_arrow_type(source))


class BucketTransform(Transform):
    __slots__ = ("num_buckets",)

    def __init__(self, num_buckets: int):
        if int(num_buckets) <= 0:
            raise InvalidArgumentError(f"bucket count must be positive, got {num_buckets}")
        self.num_buckets = int(num_buckets)

    @property
    def name(self):
        return f"bucket[{self.num_buckets}]"

    def result_type(self, source):
        if isinstance(source, (T.FloatType, T.DoubleType, T.BooleanType)) or source.is_nested:
            raise UnsupportedTypeError(f"bucket cannot partition by {type_name(source)}")
        return T.IntType()

    def apply_value(self, source, value):
        return (bucket_hash(source, value) & 0x7FFFFFFF) % self.num_buckets

    def apply(self, source, arr):
        self.result_type(source)
        if _is_int_like(source):
            vals, valid = _to_numpy_int64(arr)
            if isinstance(source, (T.TimestampType, T.LocalZonedTimestampType)) and source.precision > 6:
                vals = np.floor_divide(vals, 1000)   # nanosecond timestamps hash as microseconds
            h = murmur3_int64(vals).astype(np.int64)
            b = ((h & 0x7FFFFFFF) % self.num_buckets).astype(np.int32)
            return numbers_to_arrow(b, valid)
        return super().apply(source, arr)


class TruncateTransform(Transform):
    __slots__ = ("width",)

    def __init__(self, width: int):
        if int(width) <= 0:
            raise InvalidArgumentError(f"truncate width must be positive, got {width}")
        self.width = int(width)

    @property
    def name(self):
        return f"truncate[{self.width}]"

    def result_type(self, source):
        if isinstance(source, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.DecimalType,
                               T.VarCharType, T.CharType, T.VarBinaryType, T.BinaryType)):
            return source
        raise UnsupportedTypeError(f"truncate cannot partition by {type_name(source)}")

    @property
    def preserves_order(self):
        return True

    def apply_value(self, source, value):
        w = self.width
        if isinstance(source, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType)):
            bits = 64 if isinstance(source, T.BigIntType) else 32
            r = (value - (value % w)) & ((1 << bits) - 1)
            return r - (1 << bits) if r >= 1 << (bits - 1) else r
        if isinstance(source, T.DecimalType):
            unscaled = int(value.scaleb(source.scale, EXACT).to_integral_value(context=EXACT))
            unscaled -= unscaled % w
            return decimal.Decimal(unscaled).scaleb(-source.scale, EXACT)
        return value[:w]

    def apply(self, source, arr):
        import pyarrow.compute as pc
        self.result_type(source)
        if isinstance(source, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType)):
            vals, valid = _to_numpy_int64(arr)
            with np.errstate(over="ignore"):
                out = vals - np.mod(vals, self.width)
            # like Java's int arithmetic, truncating the type's minimum wraps around
            return numbers_to_arrow(out, valid).cast(source.to_arrow(), safe=False)
        if isinstance(source, (T.VarCharType, T.CharType)):
            return pc.utf8_slice_codeunits(arr, 0, self.width)
        if isinstance(source, (T.VarBinaryType, T.BinaryType)):
            return pc.binary_slice(arr, 0, self.width) if hasattr(pc, "binary_slice") else super().apply(source, arr)
        return super().apply(source, arr)


class _TimeTransform(Transform):
    __slots__ = ()

    def result_type(self, source):
        if isinstance(source, T.DateType) and self.name != "hour":
            return T.DateType() if self.name == "day" else T.IntType()
        if isinstance(source, (T.TimestampType, T.LocalZonedTimestampType)):
            return T.DateType() if self.name == "day" else T.IntType()
        raise UnsupportedTypeError(f"{self.name} cannot partition by {type_name(source)}")

    @property
    def preserves_order(self):
        return True

    def _days_or_micros(self, source, vals):
        if isinstance(source, T.DateType):
            return vals.astype("datetime64[D]")
        unit = "ns" if source.precision > 6 else "us"
        return vals.astype(f"datetime64[{unit}]")

    def _convert(self, dt):
        raise NotImplementedError

    def apply_value(self, source, value):
        return int(self._convert(self._days_or_micros(source, np.array([value], dtype=np.int64)))[0])

    def apply(self, source, arr):
        self.result_type(source)
        vals, valid = _to_numpy_int64(arr)
        out = self._convert(self._days_or_micros(source, vals)).astype(np.int32)
        return numbers_to_arrow(out, valid)


class YearTransform(_TimeTransform):
    __slots__ = ()
    name = "year"

    def _convert(self, dt):
        return dt.astype("datetime64[Y]").astype(np.int64)

    def human_string(self, source, value):
        return "null" if value is None else f"{1970 + value:04d}"


class MonthTransform(_TimeTransform):
    __slots__ = ()
    name = "month"

    def _convert(self, dt):
        return dt.astype("datetime64[M]").astype(np.int64)

    def human_string(self, source, value):
        if value is None:
            return "null"
        y, m = divmod(value, 12)
        return f"{1970 + y:04d}-{m + 1:02d}"


class DayTransform(_TimeTransform):
    __slots__ = ()
    name = "day"

    def _convert(self, dt):
        return dt.astype("datetime64[D]").astype(np.int64)

    def human_string(self, source, value):
        if value is None:
            return "null"
        return (datetime.date(1970, 1, 1) + datetime.timedelta(days=value)).isoformat()


class HourTransform(_TimeTransform):
    __slots__ = ()
    name = "hour"

    def result_type(self, source):
        if isinstance(source, (T.TimestampType, T.LocalZonedTimestampType)):
            return T.IntType()
        raise UnsupportedTypeError(f"hour cannot partition by {type_name(source)}")

    def _convert(self, dt):
        return dt.astype("datetime64[h]").astype(np.int64)

    def human_string(self, source, value):
        if value is None:
            return "null"
        d = datetime.datetime(1970, 1, 1) + datetime.timedelta(hours=value)
        return d.strftime("%Y-%m-%d-%H")


_PARAM = re.compile(r"^(bucket|truncate)\[\s*(\d+)\s*\]$")
_SIMPLE = {"identity": IdentityTransform, "void": VoidTransform, "year": YearTransform,
           "month": MonthTransform, "day": DayTransform, "hour": HourTransform}


def parse_transform(text) -> Transform:
    """``"bucket[16]"`` -> BucketTransform(16); raises InvalidArgumentError for unknown transforms."""
    if isinstance(text, Transform):
        return text
    if not isinstance(text, str):
        raise InvalidArgumentError(f"transform must be a string, got {text!r}")
    s = text.strip().lower()
    if s in _SIMPLE:
        return _SIMPLE[s]()
    m = _PARAM.match(s)
    if m:
        n = int(m.group(2))
        return BucketTransform(n) if m.group(1) == "bucket" else TruncateTransform(n)
    raise InvalidArgumentError(f"unknown partition transform {text!r}")
