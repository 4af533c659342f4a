"""Single values: Iceberg's single-value binary serialization (manifest bounds, partition summaries), its JSON
form (field defaults), and the internal value representation used by the spec, scan and table layers.

Internal representation of values (what transforms return and partition tuples hold):
boolean -> bool, int/long -> int, float/double -> float, date -> int days since epoch, time -> int microseconds,
timestamp/timestamptz -> int microseconds (nanoseconds for the ``_ns`` types), string -> str, uuid -> bytes (16),
fixed/binary -> bytes, decimal -> ``decimal.Decimal``.
"""

from __future__ import annotations

import datetime
import decimal
import struct
import uuid as _uuid

from ..errors import CorruptFileError, UnsupportedTypeError
from .. import types as T

__all__ = ["to_bytes", "from_bytes", "from_bound_bytes", "to_internal", "from_internal", "truncate_lower",
           "truncate_upper", "type_name", "default_from_json", "default_to_json", "default_array"]

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH_TS = datetime.datetime(1970, 1, 1)
_EPOCH_TSTZ = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def type_name(t: T.DataType) -> str:
    """The Iceberg primitive name of a logical type (``long``, ``decimal(9, 2)``, ...)."""
    ice = t.to_iceberg()
    return ice if isinstance(ice, str) else ice["type"]


#: decimal arithmetic exact for any DECIMAL(38) value (the default context keeps 28 digits and would round)
EXACT = decimal.Context(prec=100)


def _unscaled_bytes(unscaled: int) -> bytes:
    n = max(1, (unscaled + (unscaled < 0)).bit_length() // 8 + 1)
    return unscaled.to_bytes(n, "big", signed=True)


def to_bytes(t: T.DataType, value) -> bytes:
    """Serialize one internal value in Iceberg's single-value binary form."""
    if isinstance(t, T.BooleanType):
        return b"\x01" if value else b"\x00"
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.DateType)):
        return struct.pack("<i", value)
    if isinstance(t, (T.BigIntType, T.TimeType, T.TimestampType, T.LocalZonedTimestampType)):
        return struct.pack("<q", value)
    if isinstance(t, T.FloatType):
        return struct.pack("<f", value)
    if isinstance(t, T.DoubleType):
        return struct.pack("<d", value)
    if isinstance(t, (T.VarCharType, T.CharType)):
        return value.encode("utf-8")
    if isinstance(t, T.UuidType):
        return value.bytes if isinstance(value, _uuid.UUID) else bytes(value)
    if isinstance(t, (T.BinaryType, T.VarBinaryType)):
        return bytes(value)
    if isinstance(t, T.DecimalType):
        if isinstance(value, decimal.Decimal):
            value = int(value.scaleb(t.scale, EXACT).to_integral_value(context=EXACT))
        return _unscaled_bytes(int(value))
    raise UnsupportedTypeError(f"no single-value serialization for {t.to_paimon_string()}")


def from_bytes(t: T.DataType, b: bytes):
    """Inverse of :func:`to_bytes`; raises CorruptFileError for a wrong length."""
    try:
        if isinstance(t, T.BooleanType):
            return b != b"\x00"
        if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.DateType)):
            if len(b) == 8:   # a promoted int->long bound read through the old type keeps working
                return struct.unpack("<q", b)[0]
            return struct.unpack("<i", b)[0]
        if isinstance(t, (T.BigIntType, T.TimeType, T.TimestampType, T.LocalZonedTimestampType)):
            if len(b) == 4:   # written as int before an int->long promotion
                return struct.unpack("<i", b)[0]
            return struct.unpack("<q", b)[0]
        if isinstance(t, T.FloatType):
            return struct.unpack("<f", b)[0]
        if isinstance(t, T.DoubleType):
            if len(b) == 4:
                return struct.unpack("<f", b)[0]
            return struct.unpack("<d", b)[0]
        if isinstance(t, (T.VarCharType, T.CharType)):
            return bytes(b).decode("utf-8")
        if isinstance(t, T.UuidType):
            if len(b) != 16:
                raise struct.error("uuid needs 16 bytes")
            return bytes(b)
        if isinstance(t, (T.BinaryType, T.VarBinaryType)):
            return bytes(b)
        if isinstance(t, T.DecimalType):
            return decimal.Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-t.scale, EXACT)
    except (struct.error, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"bad single-value bytes {bytes(b)[:32].hex()} for {type_name(t)}: {exc}") from None
    raise UnsupportedTypeError(f"no single-value serialization for {t.to_paimon_string()}")


def from_bound_bytes(t, raw: bytes, *, field: str = "?"):
    """A column bound (manifest lower/upper bound, partition summary) for pruning, in the domain of
    ``to_internal(t, value, exact=True)``. Unlike :func:`from_bytes`, lengths are checked strictly
    (CorruptFileError naming ``field``), and a bound no comparison can use (a string cut inside a character, a
    type without ordered bounds) is ``None``, which never prunes."""
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
        return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-t.scale, EXACT)
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


def _ts_unit_per_sec(t) -> int:
    return 1_000_000_000 if t.precision > 6 else 1_000_000


def to_internal(t: T.DataType, value, *, exact: bool = False):
    """A Python value (datetime, date, Decimal, UUID, ...) -> the internal representation of type ``t``.

    ``exact=False`` (a value going into the table: a partition value, a default, a bound to write): the value is
    made a value of the type: ints by ``int()``, decimals rounded to the type's scale, booleans by ``bool()``,
    binaries as ``bytes``, a datetime given for a date column cut to its date.

    ``exact=True`` (a filter literal or a file statistic compared with decoded bounds while pruning): numbers keep
    their exact value (``1.005`` for a ``decimal(9, 2)`` column stays ``1.005``, ``1.5`` for an int column stays
    ``1.5``) and other values are taken as they are, so a comparison with a bound never narrows the predicate."""
    if value is None:
        return None
    if isinstance(t, T.DateType):
        if isinstance(value, datetime.datetime) and not exact:
            value = value.date()
        if isinstance(value, datetime.date):
            return (value - _EPOCH_DATE).days
        return int(value)
    if isinstance(t, T.TimeType):
        if isinstance(value, datetime.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return int(value)
    if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        if isinstance(value, datetime.datetime):
            if value.tzinfo is not None:
                delta = value - _EPOCH_TSTZ
            else:
                delta = value - _EPOCH_TS
            micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
            return micros * 1000 if t.precision > 6 else micros
        if hasattr(value, "value") and hasattr(value, "tz_localize"):   # pandas Timestamp
            ns = int(value.value)
            return ns if t.precision > 6 else ns // 1000
        return int(value)
    if isinstance(t, T.UuidType):
        if isinstance(value, _uuid.UUID):
            return value.bytes
        if isinstance(value, str):
            return _uuid.UUID(value).bytes
        return bytes(value)
    if isinstance(t, T.DecimalType):
        if exact:
            return decimal.Decimal(value)
        if isinstance(value, decimal.Decimal):
            return value.quantize(decimal.Decimal(1).scaleb(-t.scale))
        return decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-t.scale))
    if isinstance(t, (T.FloatType, T.DoubleType)):
        return float(value)
    if exact:
        return value
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType)):
        return int(value)
    if isinstance(t, T.BooleanType):
        return bool(value)
    if isinstance(t, (T.BinaryType, T.VarBinaryType)):
        return bytes(value)
    return value


def from_internal(t: T.DataType, value):
    """Internal representation -> the natural Python value (date, datetime, UUID, ...)."""
    if value is None:
        return None
    if isinstance(t, T.DateType):
        return _EPOCH_DATE + datetime.timedelta(days=value)
    if isinstance(t, T.TimestampType):
        return _EPOCH_TS + datetime.timedelta(microseconds=value // (1000 if t.precision > 6 else 1))
    if isinstance(t, T.LocalZonedTimestampType):
        return _EPOCH_TSTZ + datetime.timedelta(microseconds=value // (1000 if t.precision > 6 else 1))
    if isinstance(t, T.TimeType):
        s, us = divmod(value, 1_000_000)
        m, s = divmod(s, 60)
        h, m = divmod(m, 60)
        return datetime.time(h, m, s, us)
    if isinstance(t, T.UuidType):
        return _uuid.UUID(bytes=bytes(value))
    return value


def truncate_lower(t: T.DataType, value, width: int = 16):
    """A lower bound no longer than ``width`` code points / bytes."""
    if isinstance(t, (T.VarCharType, T.CharType)) and len(value) > width:
        return value[:width]
    if isinstance(t, (T.VarBinaryType,)) and len(value) > width:
        return bytes(value[:width])
    return value


def truncate_upper(t: T.DataType, value, width: int = 16):
    """An upper bound no longer than ``width``: truncate, then increment the last code point / byte that can be
    incremented. ``None`` when no such bound exists (every position at its maximum)."""
    if isinstance(t, (T.VarCharType, T.CharType)) and len(value) > width:
        chars = list(value[:width])
        for i in range(len(chars) - 1, -1, -1):
            cp = ord(chars[i]) + 1
            if 0xD800 <= cp <= 0xDFFF:
                cp = 0xE000
            if cp <= 0x10FFFF:
                return "".join(chars[:i]) + chr(cp)
        return None
    if isinstance(t, (T.VarBinaryType,)) and len(value) > width:
        bs = bytearray(value[:width])
        for i in range(len(bs) - 1, -1, -1):
            if bs[i] < 0xFF:
                bs[i] += 1
                return bytes(bs[: i + 1])
        return None
    return value


# ---------------------------------------------------------------------------
# JSON single-value serialization (``initial-default`` / ``write-default`` of schema fields)
# ---------------------------------------------------------------------------

def _bad_default(t, value, field, why=""):
    from ..errors import SchemaError
    return SchemaError(f"field {field!r}: {value!r} is not a valid default for {t.to_paimon_string()}"
                       + (f" ({why})" if why else ""))


def _parse_time_of_day(text: str, per_sec: int) -> int:
    hms, _, frac = text.partition(".")
    h, m, s = (int(x) for x in hms.split(":"))
    if not (0 <= h < 24 and 0 <= m < 60 and 0 <= s < 60) or not (frac == "" or frac.isdigit()):
        raise ValueError("bad time of day")
    digits = len(str(per_sec)) - 1
    if len(frac) > digits:
        raise ValueError("too many fraction digits")
    return (h * 3600 + m * 60 + s) * per_sec + int((frac or "0").ljust(digits, "0"))


def default_from_json(t: T.DataType, value, field: str = "?"):
    """A default value in Iceberg's JSON single-value form -> a Python value ``pyarrow.scalar(v, t.to_arrow())``
    takes (dates as ``date``, times and timestamps as integer units, decimals as ``Decimal``, binary as bytes,
    structs as dicts by field name, maps as lists of pairs). A value that does not fit the type is a
    :class:`~paimon_engine.errors.SchemaError` naming the field."""
    if value is None:
        return None
    try:
        if isinstance(t, T.BooleanType):
            if type(value) is not bool:
                raise ValueError("not a JSON boolean")
            return value
        if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType)):
            if type(value) is not int:
                raise ValueError("not a JSON integer")
            return value
        if isinstance(t, (T.FloatType, T.DoubleType)):
            if type(value) not in (int, float):
                raise ValueError("not a JSON number")
            return float(value)
        if isinstance(t, T.DecimalType):
            d = decimal.Decimal(value) if isinstance(value, str) else None
            if d is None or not d.is_finite() or -d.as_tuple().exponent != t.scale:
                raise ValueError(f"a string with exactly {t.scale} fraction digits is expected")
            return d
        if isinstance(t, T.DateType):
            return datetime.date.fromisoformat(value)
        if isinstance(t, T.TimeType):
            return _parse_time_of_day(value, 1_000_000)
        if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
            per_sec = _ts_unit_per_sec(t)
            text = value
            if isinstance(t, T.LocalZonedTimestampType):
                if not text.endswith("+00:00"):
                    raise ValueError("a timestamptz default is written in UTC (+00:00)")
                text = text[:-6]
            day, sep, tod = text.partition("T")
            if not sep:
                raise ValueError("no 'T' between date and time")
            days = (datetime.date.fromisoformat(day) - _EPOCH_DATE).days
            return days * 86400 * per_sec + _parse_time_of_day(tod, per_sec)
        if isinstance(t, (T.CharType, T.VarCharType)):
            if not isinstance(value, str):
                raise ValueError("not a JSON string")
            return value
        if isinstance(t, T.UuidType):
            return _uuid.UUID(value).bytes
        if isinstance(t, (T.BinaryType, T.VarBinaryType)):
            raw = bytes.fromhex(value)
            if isinstance(t, T.BinaryType) and len(raw) != t.length:
                raise ValueError(f"fixed[{t.length}] needs {t.length} bytes")
            return raw
        if isinstance(t, T.RowType):
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            return {f.name: default_from_json(f.type, value.get(str(f.id)), f"{field}.{f.name}") for f in t.fields}
        if isinstance(t, T.ArrayType):
            if not isinstance(value, list):
                raise ValueError("not a JSON array")
            return [default_from_json(t.element, v, f"{field}.element") for v in value]
        if isinstance(t, T.MapType):
            keys, vals = value.get("keys"), value.get("values")
            if not isinstance(keys, list) or not isinstance(vals, list) or len(keys) != len(vals):
                raise ValueError("a map default is an object of equally long 'keys' and 'values' arrays")
            return [(default_from_json(t.key, k, f"{field}.key"), default_from_json(t.value, v, f"{field}.value"))
                    for k, v in zip(keys, vals)]
    except (ValueError, TypeError, AttributeError, decimal.InvalidOperation) as exc:
        raise _bad_default(t, value, field, str(exc)) from None
    raise _bad_default(t, value, field, "the type has no default values")


def default_to_json(t: T.DataType, value, field: str = "?"):
    """A Python value (``date``, ``datetime``, ``Decimal``, ``UUID``, bytes, dict/list for nested types) -> its
    JSON single-value form, the inverse of :func:`default_from_json`."""
    if value is None:
        return None
    try:
        if isinstance(t, T.DecimalType):
            return str(to_internal(t, value))
        if isinstance(t, T.DateType):
            return (value.date() if isinstance(value, datetime.datetime) else value).isoformat()
        if isinstance(t, T.TimeType):
            us = to_internal(t, value)
            s, frac = divmod(us, 1_000_000)
            return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{frac:06d}"
        if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
            units = to_internal(t, value)
            per_sec = _ts_unit_per_sec(t)
            secs, frac = divmod(units, per_sec)
            days, sod = divmod(secs, 86400)
            day = (_EPOCH_DATE + datetime.timedelta(days=days)).isoformat()
            digits = len(str(per_sec)) - 1
            text = f"{day}T{sod // 3600:02d}:{sod // 60 % 60:02d}:{sod % 60:02d}.{frac:0{digits}d}"
            return text + "+00:00" if isinstance(t, T.LocalZonedTimestampType) else text
        if isinstance(t, T.UuidType):
            return str(_uuid.UUID(bytes=to_internal(t, value)))
        if isinstance(t, (T.BinaryType, T.VarBinaryType)):
            return bytes(value).hex()
        if isinstance(t, T.RowType):
            return {str(f.id): default_to_json(f.type, value.get(f.name), f"{field}.{f.name}") for f in t.fields
                    if value.get(f.name) is not None}
        if isinstance(t, T.ArrayType):
            return [default_to_json(t.element, v, f"{field}.element") for v in value]
        if isinstance(t, T.MapType):
            items = list(value.items()) if isinstance(value, dict) else list(value)
            return {"keys": [default_to_json(t.key, k, f"{field}.key") for k, _ in items],
                    "values": [default_to_json(t.value, v, f"{field}.value") for _, v in items]}
        if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.FloatType, T.DoubleType,
                          T.BooleanType)):
            return to_internal(t, value)
        return value
    except (ValueError, TypeError, AttributeError, decimal.InvalidOperation) as exc:
        raise _bad_default(t, value, field, str(exc)) from None


def default_array(field: T.DataField, value, n: int):
    """``n`` copies of a field's default (JSON single-value form) as an Arrow array of the field's type."""
    import pyarrow as pa
    want = field.type.to_arrow()
    if value is None:
        return pa.nulls(n, want)
    v = default_from_json(field.type, value, field.name)
    try:
        return pa.repeat(pa.scalar(v, type=want), n)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError) as exc:
        raise _bad_default(field.type, value, field.name, str(exc)) from None
