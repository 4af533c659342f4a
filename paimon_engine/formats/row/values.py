"""Schema programs for the row kernels, and the compact-row codec of single values.

The kernels see a schema as a *program*: int32 triples ``(kind, arg, next)``
in preorder (``next`` = index of the node after the subtree). Nested values
(ARRAY, MAP, MULTISET, ROW) and VARIANT are encoded and decoded here, one
value at a time; flat columns never come through this module.
"""

from __future__ import annotations

import datetime
import decimal
import struct

import numpy as np

from ... import types as T
from ...errors import CorruptFileError, UnsupportedTypeError

K_BOOL, K_I8, K_I16, K_I32, K_I64, K_F32, K_F64, K_BYTES = 1, 2, 3, 4, 5, 6, 7, 8
K_TS_MILLIS, K_TS_NANO, K_DEC_COMPACT, K_DEC_BIG, K_VARIANT = 9, 10, 11, 12, 13
K_ARRAY, K_MAP, K_ROW, K_RAW, O_SPAN = 20, 21, 22, 23, 30
#: the row_values kernel's code for a UTF-8 BYTES field (returned as str; K_BYTES gives bytes)
K_TEXT = 24

NESTED_KINDS = (K_ARRAY, K_MAP, K_ROW, K_VARIANT)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def kind_of(t: T.DataType) -> int:
    """Kernel kind code of a logical type."""
    if isinstance(t, T.BooleanType):
        return K_BOOL
    if isinstance(t, T.TinyIntType):
        return K_I8
    if isinstance(t, T.SmallIntType):
        return K_I16
    if isinstance(t, (T.IntType, T.DateType, T.TimeType)):
        return K_I32
    if isinstance(t, T.BigIntType):
        return K_I64
    if isinstance(t, T.FloatType):
        return K_F32
    if isinstance(t, T.DoubleType):
        return K_F64
    if isinstance(t, (T.CharType, T.VarCharType, T.BinaryType, T.VarBinaryType)):
        return K_BYTES
    if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        return K_TS_MILLIS if t.precision <= 3 else K_TS_NANO
    if isinstance(t, T.DecimalType):
        return K_DEC_COMPACT if t.is_compact else K_DEC_BIG
    if isinstance(t, T.VariantType):
        return K_VARIANT
    if isinstance(t, T.ArrayType):
        return K_ARRAY
    if isinstance(t, (T.MapType, T.MultisetType)):
        return K_MAP
    if isinstance(t, T.RowType):
        return K_ROW
    raise UnsupportedTypeError(f"{t.to_paimon_string()} cannot be stored in a .row file")


def _emit(t, prog):
    at = len(prog)
    k = kind_of(t)
    prog.extend((k, 0, 0))
    if k == K_ARRAY:
        _emit(t.element, prog)
    elif k == K_MAP:
        m = t.as_map() if isinstance(t, T.MultisetType) else t
        _emit(m.key, prog)
        _emit(m.value, prog)
    elif k == K_ROW:
        prog[at + 1] = len(t.fields)
        for f in t.fields:
            _emit(f.type, prog)
    prog[at + 2] = len(prog) // 3


def program(schema: T.RowType) -> np.ndarray:
    """The kernel program of a top-level row: its fields' subtrees, in order."""
    prog = []
    for f in schema.fields:
        _emit(f.type, prog)
    if not prog:
        prog = [0, 0, 1]
    return np.asarray(prog, dtype=np.int32)


# ------------------------------------------------------------------ encoding
def _uvarint(out: bytearray, v: int):
    v &= 0xFFFFFFFF
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def _bytes(out, b):
    _uvarint(out, len(b))
    out += b


def unscaled(value, scale: int) -> int:
    if isinstance(value, int):
        return value
    d = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        return int(d.scaleb(scale).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def big_decimal_bytes(u: int) -> bytes:
    """Minimal big-endian two's complement, as Java's ``BigInteger.toByteArray()`` writes it.

    Java's length is ``bitLength() / 8 + 1`` where ``bitLength`` of a negative
    number is that of its complement ``~u`` (-128 is ``80``, -129 is ``ff7f``).
    """
    n = (~u if u < 0 else u).bit_length() // 8 + 1
    return u.to_bytes(n, "big", signed=True)


def epoch_nanos(v) -> int:
    """A timestamp value (datetime, pandas Timestamp or int micros) -> int nanoseconds, integer arithmetic."""
    if type(v).__name__ == "Timestamp" and hasattr(v, "value"):
        return int(v.value)  # pandas: nanoseconds of the (UTC) instant
    if isinstance(v, datetime.datetime):
        base = _EPOCH_UTC if v.tzinfo is not None else _EPOCH
        d = v - base
        return ((d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds) * 1000
    if isinstance(v, int):
        return v * 1000
    raise UnsupportedTypeError(f"cannot store {v!r} as a timestamp")


def encode_value(t: T.DataType, v, out: bytearray):
    """Append the compact encoding of non-null ``v`` of type ``t`` (a Python value as Arrow's to_pylist gives)."""
    k = kind_of(t)
    if k == K_BOOL:
        out.append(1 if v else 0)
    elif k == K_I8:
        out += struct.pack("<b", v)
    elif k == K_I16:
        out += struct.pack("<h", v)
    elif k == K_I32:
        if isinstance(t, T.DateType) and isinstance(v, datetime.date):
            v = (v - _EPOCH_DATE).days
        elif isinstance(t, T.TimeType) and isinstance(v, datetime.time):
            v = ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
        out += struct.pack("<i", v)
    elif k == K_I64:
        out += struct.pack("<q", v)
    elif k == K_F32:
        out += struct.pack("<f", v)
    elif k == K_F64:
        out += struct.pack("<d", v)
    elif k == K_BYTES:
        _bytes(out, v.encode("utf-8") if isinstance(v, str) else bytes(v))
    elif k in (K_TS_MILLIS, K_TS_NANO):
        ns = epoch_nanos(v)
        ms, nom = divmod(ns, 1_000_000)
        out += struct.pack("<q", ms)
        if k == K_TS_NANO:
            _uvarint(out, nom)
    elif k == K_DEC_COMPACT:
        out += struct.pack("<q", unscaled(v, t.scale))
    elif k == K_DEC_BIG:
        _bytes(out, big_decimal_bytes(unscaled(v, t.scale)))
    elif k == K_VARIANT:
        _bytes(out, bytes(v["value"]))
        _bytes(out, bytes(v["metadata"]))
    elif k == K_ARRAY:
        _encode_array(t.element, list(v), out)
    elif k == K_MAP:
        m = t.as_map() if isinstance(t, T.MultisetType) else t
        items = list(v.items()) if isinstance(v, dict) else list(v)
        _encode_array(m.key, [kv[0] for kv in items], out)
        _encode_array(m.value, [kv[1] for kv in items], out)
    elif k == K_ROW:
        n = len(t.fields)
        hdr = len(out)
        out += bytes((n + 7) // 8)
        for i, f in enumerate(t.fields):
            x = v.get(f.name) if isinstance(v, dict) else v[i]
            if x is None:
                out[hdr + i // 8] |= 1 << (i % 8)
            else:
                encode_value(f.type, x, out)


def _encode_array(et, items, out):
    n = len(items)
    _uvarint(out, n)
    hdr = len(out)
    out += bytes((n + 7) // 8)
    for i, x in enumerate(items):
        if x is None:
            out[hdr + i // 8] |= 1 << (i % 8)
        else:
            encode_value(et, x, out)


# ------------------------------------------------------------------ decoding
class _Bad(Exception):
    pass


def _rvar(buf, pos, end):
    result = shift = 0
    for i in range(5):
        if pos >= end:
            raise _Bad("truncated varint", pos)
        b = buf[pos]
        pos += 1
        if i == 4 and b & 0xF0:
            raise _Bad("overlong varint", pos - 1)
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise _Bad("overlong varint", pos)


def _rlen(buf, pos, end):
    n, pos = _rvar(buf, pos, end)
    if n > 0x7FFFFFFF or n > end - pos:
        raise _Bad(f"length {n} exceeds the available bytes", pos)
    return n, pos


def _need(pos, n, end):
    if n > end - pos:
        raise _Bad("truncated value", pos)


def decode_bytes(buf, pos: int, end: int, text: bool):
    """Decode one non-null BYTES value (a length, then the bytes); ``text``: UTF-8, returned as ``str``."""
    n, pos = _rlen(buf, pos, end)
    raw = bytes(buf[pos:pos + n])
    if text:
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad("invalid UTF-8", pos) from None
    return raw, pos + n


def f32_at(buf, pos: int) -> float:
    """The FLOAT at ``pos`` of ``buf`` widened to a Python float as C widens it, as Arrow's ``to_pylist`` gives it
    (a signalling NaN comes out quiet; ``struct`` keeps it on newer Pythons)."""
    return float(np.frombuffer(buf, np.float32, 1, pos)[0])


class Float32:
    """FLOAT read the way ``struct.Struct("<f")`` reads it (``size``, ``unpack_from``), widened by :func:`f32_at`."""

    size = 4

    @staticmethod
    def unpack_from(buf, pos=0):
        return (f32_at(buf, pos),)


def decode_value(t: T.DataType, buf, pos: int, end: int):
    """Decode one non-null value; returns ``(python_value, next_pos)`` (values fit ``pa.array(..., t.to_arrow())``)."""
    k = kind_of(t)
    if k in (K_BOOL, K_I8):
        _need(pos, 1, end)
        b = buf[pos]
        if k == K_BOOL:
            if b > 1:
                raise _Bad(f"boolean byte {b}", pos)
            return bool(b), pos + 1
        return (b - 256 if b > 127 else b), pos + 1
    fmt = {K_I16: "<h", K_I32: "<i", K_I64: "<q", K_F32: "<f", K_F64: "<d", K_TS_MILLIS: "<q",
           K_DEC_COMPACT: "<q"}.get(k)
    if fmt is not None:
        w = struct.calcsize(fmt)
        _need(pos, w, end)
        x = f32_at(buf, pos) if k == K_F32 else struct.unpack_from(fmt, buf, pos)[0]
        pos += w
        if k == K_I32 and isinstance(t, T.TimeType) and t.precision > 3:
            x *= 1000 if t.precision <= 6 else 1_000_000
        elif k == K_DEC_COMPACT:
            if not -10 ** t.precision < x < 10 ** t.precision:
                raise _Bad(f"decimal value beyond the precision of {t}", pos - w)
            x = decimal.Decimal(x).scaleb(-t.scale)
        return x, pos
    if k == K_TS_NANO:
        _need(pos, 8, end)
        ms = struct.unpack_from("<q", buf, pos)[0]
        nom, pos2 = _rvar(buf, pos + 8, end)
        if nom > 999999:
            raise _Bad(f"nano-of-millisecond {nom} out of range", pos + 8)
        return (ms * 1000 + nom // 1000 if t.precision <= 6 else ms * 1_000_000 + nom), pos2
    if k == K_BYTES:
        return decode_bytes(buf, pos, end, isinstance(t, (T.CharType, T.VarCharType)))
    if k == K_DEC_BIG:
        start = pos
        n, pos = _rlen(buf, pos, end)
        if n < 1 or n > 16:
            raise _Bad(f"decimal of {n} bytes", pos)
        u = int.from_bytes(bytes(buf[pos:pos + n]), "big", signed=True)
        if not -10 ** t.precision < u < 10 ** t.precision:
            raise _Bad(f"decimal value beyond the precision of {t}", start)
        with decimal.localcontext() as ctx:
            ctx.prec = 80
            return decimal.Decimal(u).scaleb(-t.scale), pos + n
    if k == K_VARIANT:
        n, pos = _rlen(buf, pos, end)
        value = bytes(buf[pos:pos + n])
        pos += n
        n, pos = _rlen(buf, pos, end)
        return {"value": value, "metadata": bytes(buf[pos:pos + n])}, pos + n
    if k == K_ARRAY:
        return _decode_array(t.element, buf, pos, end)
    if k == K_MAP:
        m = t.as_map() if isinstance(t, T.MultisetType) else t
        keys, pos = _decode_array(m.key, buf, pos, end)
        vals, pos = _decode_array(m.value, buf, pos, end)
        if len(keys) != len(vals):
            raise _Bad(f"map of {len(keys)} keys and {len(vals)} values", pos)
        if any(x is None for x in keys):
            raise _Bad("null map key", pos)
        return list(zip(keys, vals)), pos
    if k == K_ROW:
        n = len(t.fields)
        nb = (n + 7) // 8
        _need(pos, nb, end)
        bits = buf[pos:pos + nb]
        pos += nb
        out = {}
        for i, f in enumerate(t.fields):
            if bits[i // 8] & (1 << (i % 8)):
                out[f.name] = None
            else:
                out[f.name], pos = decode_value(f.type, buf, pos, end)
        return out, pos
    raise _Bad(f"unknown kind {k}", pos)


def _decode_array(et, buf, pos, end):
    n, pos = _rvar(buf, pos, end)
    nb = (n + 7) // 8
    if n > 0x7FFFFFFF or nb > end - pos:
        raise _Bad(f"array of {n} elements exceeds the available bytes", pos)
    bits = buf[pos:pos + nb]
    pos += nb
    out = []
    for i in range(n):
        if bits[i // 8] & (1 << (i % 8)):
            out.append(None)
        else:
            x, pos = decode_value(et, buf, pos, end)
            out.append(x)
    return out, pos


def decode_span(t, buf, start, end, *, path=None, block=None, row=None, field=None):
    """Decode a value that fills ``buf[start:end]`` exactly; errors become CorruptFileError."""
    try:
        v, pos = decode_value(t, buf, start, end)
    except _Bad as e:
        raise CorruptFileError(str(e.args[0]), path=path, block=block, row=row, field=field,
                               offset=e.args[1]) from None
    return v
