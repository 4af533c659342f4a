"""Values in one comparable domain for pruning: Iceberg single-value bound bytes and filter literals.

Internal forms: booleans, ints, floats as Python values; dates as days; times and timestamps as microseconds
(nanoseconds for precision 9); decimals as :class:`decimal.Decimal`; strings as ``str``; binary, fixed and uuid
as ``bytes``. Both a decoded bound and a converted literal land in the same form, so ``<`` works between them.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import struct
import uuid as _uuid

from .. import types as T
from ..errors import CorruptFileError
from ..spec.conversions import EXACT

__all__ = ["from_bound_bytes", "to_internal"]

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_TZ = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _ts_scale(t) -> int:
    return 1_000_000_000 if getattr(t, "precision", 6) and t.precision > 6 else 1_000_000


def from_bound_bytes(t, raw: bytes, *, field: str = "?"):
    """Decode one Iceberg single-value serialization of type ``t`` (a :mod:`paimon_engine.types` type)."""
    n = len(raw)

    def bad():
        return CorruptFileError(f"bound of {n} bytes is not a valid {t.to_paimon_string()} value", field=field)

    if isinstance(t, T.BooleanType):
        if n != 1:
            raise bad()
        return raw[0] != 0
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.DateType)):
        if n == 4:
            return struct.unpack("<i", raw)[0]
        if n == 8:
            return struct.unpack("<q", raw)[0]
        raise bad()
    if isinstance(t, (T.BigIntType, T.TimeType, T.TimestampType, T.LocalZonedTimestampType)):
        if n == 8:
            return struct.unpack("<q", raw)[0]
        if n == 4:  # written before an int -> long promotion
            return struct.unpack("<i", raw)[0]
        raise bad()
    if isinstance(t, T.FloatType):
        if n == 4:
            return struct.unpack("<f", raw)[0]
        raise bad()
    if isinstance(t, T.DoubleType):
        if n == 8:
            return struct.unpack("<d", raw)[0]
        if n == 4:  # float -> double promotion
            return struct.unpack("<f", raw)[0]
        raise bad()
    if isinstance(t, T.DecimalType):
        if n == 0 or n > 16:
            raise bad()
        return _decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-t.scale, EXACT)
    if isinstance(t, (T.CharType, T.VarCharType)):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            # not a usable bound (e.g. cut inside a character): unknown, so it never prunes
            return None
    if isinstance(t, T.UuidType):
        if n != 16:
            raise bad()
        return bytes(raw)
    if isinstance(t, (T.BinaryType, T.VarBinaryType)):
        return bytes(raw)
    return None  # types without usable bounds


def to_internal(value, t):
    """A (converted) literal of type ``t`` in the comparison domain of :func:`from_bound_bytes`."""
    if value is None:
        return None
    if isinstance(t, T.DateType):
        if isinstance(value, _dt.date):
            return (value - _EPOCH_DATE).days
        return int(value)
    if isinstance(t, T.TimeType):
        if isinstance(value, _dt.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return int(value)
    if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                delta = value - _EPOCH_TZ
            else:
                delta = value - _EPOCH
            micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
            return micros * 1000 if _ts_scale(t) > 1_000_000 else micros
        return int(value)
    if isinstance(t, T.UuidType):
        if isinstance(value, _uuid.UUID):
            return value.bytes
        return bytes(value)
    if isinstance(t, T.DecimalType):
        return _decimal.Decimal(value)
    if isinstance(t, (T.FloatType, T.DoubleType)):
        return float(value)
    return value
