"""Column values and predicate literals in the domains the file indexes store.

Every supported type maps to a *kind*:

* ``long``: TINYINT..BIGINT, DATE (days), TIME (milliseconds), TIMESTAMP and
  TIMESTAMP_LTZ (milliseconds when precision <= 3, else microseconds), DECIMAL
  (unscaled, precision <= 18): an int64 array;
* ``float`` / ``double``: Java ``floatToIntBits`` / ``doubleToLongBits`` (canonical NaN)
  as int32 / int64;
* ``bool``: 0 / 1;
* ``bytes``: CHAR/VARCHAR (UTF-8) and BINARY/VARBINARY.

Keys of one kind compare with ``==`` exactly as Java's ``equals`` does on the boxed
value (so ``-0.0 != 0.0`` and ``NaN == NaN`` for floats, as in Java).
"""
from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import struct

import numpy as np

from .. import types as T
from ..errors import UnsupportedTypeError

__all__ = ["kind_of", "column_keys", "literal_key", "sort_key_array", "FLOAT_NAN_BITS", "DOUBLE_NAN_BITS"]

FLOAT_NAN_BITS = 0x7FC00000
DOUBLE_NAN_BITS = 0x7FF8000000000000
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_TZ = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_UNIT_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def kind_of(t: T.DataType) -> str:
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.DateType, T.TimeType,
                      T.TimestampType, T.LocalZonedTimestampType)):
        return "long"
    if isinstance(t, T.DecimalType):
        if t.precision > 18:
            raise UnsupportedTypeError(f"{t.to_paimon_string()}: only decimals of precision <= 18 are indexed")
        return "long"
    if isinstance(t, T.FloatType):
        return "float"
    if isinstance(t, T.DoubleType):
        return "double"
    if isinstance(t, T.BooleanType):
        return "bool"
    if isinstance(t, (T.CharType, T.VarCharType, T.BinaryType, T.VarBinaryType)):
        return "bytes"
    raise UnsupportedTypeError(f"type {t.to_paimon_string()} cannot be indexed")


def _timestamp_target(t):
    return 1000 if t.precision <= 3 else 1_000_000


def canonical_float_bits(values: np.ndarray) -> np.ndarray:
    v = np.ascontiguousarray(values, dtype=np.float32)
    bits = v.view(np.int32).copy()
    bits[np.isnan(v)] = FLOAT_NAN_BITS
    return bits


def canonical_double_bits(values: np.ndarray) -> np.ndarray:
    v = np.ascontiguousarray(values, dtype=np.float64)
    bits = v.view(np.int64).copy()
    bits[np.isnan(v)] = DOUBLE_NAN_BITS
    return bits


def column_keys(column, t: T.DataType):
    """``(keys, valid)`` of a :class:`~paimon_engine.batch.Column`: ``valid`` is a bool
    array; ``keys`` is an int64/int32 array for numeric kinds (garbage where null) and a
    list of ``bytes`` (``None`` where null) for the ``bytes`` kind."""
    kind = kind_of(t)
    n = column.length
    valid = column.is_valid()
    o = column.offset
    if kind == "bytes":
        offs = column.offsets[o:o + n + 1].astype(np.int64)
        data = column.data.tobytes() if column.data is not None else b""
        keys = list(map(data.__getitem__, map(slice, offs[:-1].tolist(), offs[1:].tolist())))
        if column.validity is not None:
            for i in np.flatnonzero(~valid).tolist():
                keys[i] = None
        return keys, valid
    if kind == "bool":
        bits = np.unpackbits(column.values, bitorder="little")[o:o + n]
        return bits.astype(np.int64), valid
    if isinstance(t, T.DecimalType):
        raw = column.values.reshape(-1, 16)[o:o + n] if column.values.ndim == 1 else column.values[o:o + n]
        low = np.ascontiguousarray(raw[:, :8]).view("<i8").reshape(-1)
        return low.astype(np.int64), valid
    vals = column.values[o:o + n]
    if kind == "float":
        return canonical_float_bits(vals), valid
    if kind == "double":
        return canonical_double_bits(vals), valid
    vals = vals.astype(np.int64)
    if isinstance(t, T.TimeType):
        unit = column.arrow_type.unit
        vals = vals // (_UNIT_PER_SECOND[unit] // 1000)
    elif isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        have = _UNIT_PER_SECOND[column.arrow_type.unit]
        want = _timestamp_target(t)
        if have > want:
            vals = vals // (have // want)
        elif have < want:
            vals = vals * (want // have)
    return vals, valid


def literal_key(value, t: T.DataType):
    """The key of one (bound, non-null) predicate literal."""
    kind = kind_of(t)
    if kind == "bytes":
        if isinstance(value, str):
            return value.encode("utf-8")
        return bytes(value)
    if kind == "bool":
        return int(bool(value))
    if kind == "float":
        if value != value:
            return FLOAT_NAN_BITS
        return struct.unpack(">i", struct.pack(">f", float(value)))[0]
    if kind == "double":
        if value != value:
            return DOUBLE_NAN_BITS
        return struct.unpack(">q", struct.pack(">d", float(value)))[0]
    if isinstance(t, T.DateType):
        if isinstance(value, _dt.date):
            return (value - _dt.date(1970, 1, 1)).days
        return int(value)
    if isinstance(t, T.TimeType):
        if isinstance(value, _dt.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        return int(value)
    if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                micros = (value - _EPOCH_TZ) // _dt.timedelta(microseconds=1)
            else:
                micros = (value - _EPOCH) // _dt.timedelta(microseconds=1)
            return micros // 1000 if t.precision <= 3 else micros
        return int(value)
    if isinstance(t, T.DecimalType):
        if isinstance(value, _decimal.Decimal):
            return int(value.scaleb(t.scale).to_integral_value())
        return int(value)
    return int(value)


def sort_key_array(keys: np.ndarray, kind: str) -> np.ndarray:
    """Monotone int64 image of the keys in Java's ordering (``Float/Double.compare``)."""
    k = keys.astype(np.int64)
    if kind == "float":
        k = k ^ ((k >> 31) & 0x7FFFFFFF)
    elif kind == "double":
        k = k ^ ((k >> 63) & 0x7FFFFFFFFFFFFFFF)
    return k
