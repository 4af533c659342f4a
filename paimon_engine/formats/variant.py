"""Variant values (Iceberg format version 3 ``variant``; the Variant binary encoding of Apache Parquet).

A variant is two byte strings: ``metadata`` (a header byte -- version 1, the ``sorted_strings`` bit, the size of
its offsets -- then a dictionary of UTF-8 key strings) and ``value`` (a header byte whose low two bits are the
basic type: primitive, short string, object or array; objects name their keys by dictionary id). In Parquet an
unshredded variant column is a group of the binaries ``metadata`` and ``value``; in Arrow a
``struct<metadata: binary, value: binary>``.

:func:`decode` turns one variant into Python objects, :func:`to_json` into JSON text; :func:`to_pylist`,
:func:`to_json_array` and :func:`validate_array` do the same for an Arrow column. Every length, offset, id and
count is checked against the bytes; a bad variant raises :class:`~paimon_engine.errors.CorruptFileError` naming
the column (``field``), the row and the byte offset inside ``value`` (or ``metadata``) where decoding failed.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
import struct
import uuid

from ..errors import CorruptFileError

__all__ = ["PRIMITIVE_NAMES", "VariantMetadata", "decode", "to_json", "to_json_array", "to_pylist",
           "validate_array"]

PRIMITIVE, SHORT_STRING, OBJECT, ARRAY = 0, 1, 2, 3
MAX_DEPTH = 256                      # nesting deeper than this is refused (no recursion blow-up)
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DATE = datetime.date(1970, 1, 1)

#: primitive type id -> name (the spec's table)
PRIMITIVE_NAMES = {0: "null", 1: "true", 2: "false", 3: "int8", 4: "int16", 5: "int32", 6: "int64", 7: "double",
                   8: "decimal4", 9: "decimal8", 10: "decimal16", 11: "date", 12: "timestamp",
                   13: "timestamp_ntz", 14: "float", 15: "binary", 16: "string", 17: "time_ntz",
                   18: "timestamp_nanos", 19: "timestamp_ntz_nanos", 20: "uuid"}
_FIXED = {3: ("<b", 1), 4: ("<h", 2), 5: ("<i", 4), 6: ("<q", 8), 7: ("<d", 8), 11: ("<i", 4), 12: ("<q", 8),
          13: ("<q", 8), 14: ("<f", 4), 17: ("<q", 8), 18: ("<q", 8), 19: ("<q", 8)}
_DECIMAL_WIDTH = {8: 4, 9: 8, 10: 16}


class _Where:
    """Where the bytes came from, for error messages."""
    __slots__ = ("column", "path", "row")

    def __init__(self, column=None, row=None, path=None):
        self.column, self.row, self.path = column, row, path

    def error(self, message, offset, part="value"):
        return CorruptFileError(f"bad variant {part}: {message} at byte {offset} of the {part}", path=self.path,
                                offset=offset, row=self.row, field=self.column)


def _uint(buf, at, size):
    return int.from_bytes(buf[at:at + size], "little")


class VariantMetadata:
    """A parsed ``metadata`` binary: its dictionary of key strings."""

    __slots__ = ("keys", "sorted_strings")

    def __init__(self, data, where=None):
        where = where or _Where()
        data = bytes(data)
        n = len(data)
        if n < 1:
            raise where.error("empty metadata", 0, "metadata")
        header = data[0]
        version = header & 0x0F
        if version != 1:
            raise where.error(f"unsupported version {version} (only 1)", 0, "metadata")
        if header & 0x20:
            raise where.error("reserved header bit 5 is set", 0, "metadata")
        self.sorted_strings = bool(header & 0x10)
        size = (header >> 6) + 1
        if n < 1 + size:
            raise where.error("truncated dictionary size", 1, "metadata")
        count = _uint(data, 1, size)
        table = 1 + size
        # dictionary_size + 1 offsets must fit before the end
        if count > (n - table) // size - 1:
            raise where.error(f"dictionary of {count} strings does not fit in {n} bytes", 1, "metadata")
        start = table + (count + 1) * size
        offsets = [_uint(data, table + i * size, size) for i in range(count + 1)]
        if offsets[0] != 0:
            raise where.error(f"first dictionary offset is {offsets[0]}, not 0", table, "metadata")
        if start + offsets[-1] != n:
            raise where.error(f"dictionary bytes end at {start + offsets[-1]}, the metadata has {n} bytes",
                              table + count * size, "metadata")
        keys = []
        for i in range(count):
            a, b = offsets[i], offsets[i + 1]
            if b < a:
                raise where.error(f"dictionary offset {b} is below the one before it ({a})",
                                  table + (i + 1) * size, "metadata")
            try:
                keys.append(data[start + a:start + b].decode("utf-8"))
            except UnicodeDecodeError:
                raise where.error(f"dictionary string {i} is not UTF-8", start + a, "metadata") from None
        self.keys = keys


class _Decoder:
    """Decodes the values of one variant; ``mode``: ``"py"`` (Python objects) or ``"json"`` (JSON-ready)."""

    __slots__ = ("data", "json", "meta", "where")

    def __init__(self, meta, data, where, as_json):
        self.meta = meta
        self.data = data
        self.where = where
        self.json = as_json

    def value(self, at, end, depth=0):
        """-> (decoded value, offset after it); the value must lie in ``[at, end)``."""
        data, where = self.data, self.where
        if at >= end:
            raise where.error("value runs past its end", at)
        header = data[at]
        basic = header & 0x03
        info = header >> 2
        if basic == SHORT_STRING:
            stop = at + 1 + info
            if stop > end:
                raise where.error(f"short string of {info} bytes runs past its end ({end})", at)
            return self._text(at + 1, stop), stop
        if basic == PRIMITIVE:
            return self._primitive(info, at, end)
        if depth >= MAX_DEPTH:
            raise where.error(f"nesting deeper than {MAX_DEPTH}", at)
        if basic == OBJECT:
            return self._object(info, at, end, depth)
        return self._array(info, at, end, depth)

    def _text(self, a, b):
        try:
            return self.data[a:b].decode("utf-8")
        except UnicodeDecodeError:
            raise self.where.error("string is not UTF-8", a) from None

    def _primitive(self, tid, at, end):
        data, where = self.data, self.where
        p = at + 1
        if tid == 0:
            return None, p
        if tid in (1, 2):
            return tid == 1, p
        fixed = _FIXED.get(tid)
        if fixed is not None:
            fmt, width = fixed
            if p + width > end:
                raise where.error(f"{PRIMITIVE_NAMES[tid]} of {width} bytes runs past its end ({end})", at)
            (v,) = struct.unpack_from(fmt, data, p)
            return self._typed(tid, v, at), p + width
        width = _DECIMAL_WIDTH.get(tid)
        if width is not None:
            if p + 1 + width > end:
                raise where.error(f"{PRIMITIVE_NAMES[tid]} of {1 + width} bytes runs past its end ({end})", at)
            scale = data[p]
            if scale > 38:
                raise where.error(f"decimal scale {scale} is above 38", p)
            unscaled = int.from_bytes(data[p + 1:p + 1 + width], "little", signed=True)
            v = decimal.Decimal(unscaled).scaleb(-scale)
            return v, p + 1 + width
        if tid in (15, 16):
            if p + 4 > end:
                raise where.error(f"{PRIMITIVE_NAMES[tid]} length runs past its end ({end})", at)
            n = _uint(data, p, 4)
            if p + 4 + n > end:
                raise where.error(f"{PRIMITIVE_NAMES[tid]} of {n} bytes runs past its end ({end})", p)
            if tid == 16:
                return self._text(p + 4, p + 4 + n), p + 4 + n
            raw = bytes(data[p + 4:p + 4 + n])
            return (base64.b64encode(raw).decode("ascii") if self.json else raw), p + 4 + n
        if tid == 20:
            if p + 16 > end:
                raise where.error(f"uuid of 16 bytes runs past its end ({end})", at)
            u = uuid.UUID(bytes=bytes(data[p:p + 16]))
            return (str(u) if self.json else u), p + 16
        raise where.error(f"unknown primitive type {tid}", at)

    def _typed(self, tid, v, at):
        """A fixed-width primitive's Python (or JSON-ready) value; ``at``: its header's offset."""
        if tid in (3, 4, 5, 6):
            return v
        if tid in (7, 14):
            if self.json and not math.isfinite(v):
                return str(v)           # JSON has no NaN or infinity (Spark writes them as strings too)
            return v
        if tid == 11:
            if not -719162 <= v <= 2932896:
                raise self.where.error(f"date {v} days is outside years 1..9999", at)
            d = _EPOCH_DATE + datetime.timedelta(days=v)
            return d.isoformat() if self.json else d
        if tid == 17:
            if not 0 <= v < 86_400_000_000:
                raise self.where.error(f"time {v} us is outside a day", at)
            s, us = divmod(v, 1_000_000)
            t = datetime.time(s // 3600, s // 60 % 60, s % 60, us)
            return t.isoformat() if self.json else t
        utc = tid in (12, 18)
        nanos = tid in (18, 19)
        if nanos:
            if self.json:
                return _iso_nanos(v, utc)
            import pyarrow as pa
            return pa.scalar(v, pa.timestamp("ns", tz="UTC" if utc else None)).as_py()
        try:
            ts = (_EPOCH_UTC if utc else _EPOCH) + datetime.timedelta(microseconds=v)
        except OverflowError:
            raise self.where.error(f"timestamp {v} us is outside years 1..9999", at) from None
        return ts.isoformat() if self.json else ts

    def _container(self, info, at, end, is_object):
        """-> (count, id size, offset size, first id/offset table offset, start of the values)."""
        data, where = self.data, self.where
        off_size = (info & 0x03) + 1
        if is_object:
            id_size = ((info >> 2) & 0x03) + 1
            large = (info >> 4) & 1
        else:
            id_size = 0
            large = (info >> 2) & 1
            if info >> 3:
                raise where.error("reserved array header bits are set", at)
        count_size = 4 if large else 1
        p = at + 1
        if p + count_size > end:
            raise where.error("element count runs past its end", at)
        n = _uint(data, p, count_size)
        p += count_size
        # the id and offset tables must fit before the end
        if n > (end - p) // (id_size + off_size):
            raise where.error(f"{n} elements do not fit in {end - p} bytes", at + 1)
        values = p + n * id_size + (n + 1) * off_size
        if values > end:
            raise where.error(f"{n} elements do not fit in {end - p} bytes", at + 1)
        return n, id_size, off_size, p, values

    def _object(self, info, at, end, depth):
        data, where, keys = self.data, self.where, self.meta.keys
        n, id_size, off_size, p, values = self._container(info, at, end, True)
        offs = p + n * id_size
        total = _uint(data, offs + n * off_size, off_size)
        stop = values + total
        if stop > end:
            raise where.error(f"object fields end at {stop}, past the value's end ({end})", offs + n * off_size)
        out = {}
        prev = None
        for i in range(n):
            kid = _uint(data, p + i * id_size, id_size)
            if kid >= len(keys):
                raise where.error(f"field id {kid} is not in the metadata dictionary ({len(keys)} keys)",
                                  p + i * id_size)
            key = keys[kid]
            kb = key.encode("utf-8")
            if prev is not None and kb <= prev:
                raise where.error(f"field {key!r} is out of order or repeated (keys must be sorted and unique)",
                                  p + i * id_size)
            prev = kb
            o = _uint(data, offs + i * off_size, off_size)
            if o >= total:
                raise where.error(f"field offset {o} is outside the object's {total} field bytes",
                                  offs + i * off_size)
            out[key], _ = self.value(values + o, stop, depth + 1)
        return out, stop

    def _array(self, info, at, end, depth):
        data, where = self.data, self.where
        n, _, off_size, p, values = self._container(info, at, end, False)
        total = _uint(data, p + n * off_size, off_size)
        stop = values + total
        if stop > end:
            raise where.error(f"array elements end at {stop}, past the value's end ({end})", p + n * off_size)
        out = []
        prev = 0
        for i in range(n):
            o = _uint(data, p + i * off_size, off_size)
            nxt = _uint(data, p + (i + 1) * off_size, off_size)
            if o < prev or nxt < o:
                raise where.error(f"element offset {o} is out of order", p + i * off_size)
            if nxt > total:
                raise where.error(f"element offset {nxt} is beyond the array's {total} element bytes",
                                  p + (i + 1) * off_size)
            prev = o
            out.append(self.value(values + o, values + nxt, depth + 1)[0])
        return out, stop


def _iso_nanos(v, utc):
    s, ns = divmod(v, 1_000_000_000)
    base = (_EPOCH + datetime.timedelta(seconds=s)).isoformat()
    return f"{base}.{ns:09d}" + ("+00:00" if utc else "")


def _decode(metadata, value, where, as_json):
    meta = metadata if isinstance(metadata, VariantMetadata) else VariantMetadata(metadata, where)
    data = bytes(value)
    v, stop = _Decoder(meta, data, where, as_json).value(0, len(data))
    if stop != len(data):
        raise where.error(f"{len(data) - stop} bytes after the value", stop)
    return v


def decode(metadata, value, *, column=None, row=None, path=None):
    """One variant -> Python: None, bool, int, float, ``Decimal``, ``date``, ``datetime`` (UTC-aware for the
    ``timestamp`` types; nanosecond timestamps as pyarrow gives ``timestamp[ns]`` values), ``time``, ``bytes``,
    ``str``, ``UUID``, ``dict`` (objects) and ``list`` (arrays)."""
    return _decode(metadata, value, _Where(column, row, path), False)


def to_json(metadata, value, *, column=None, row=None, path=None) -> str:
    """One variant -> JSON text (Spark's ``to_json`` of a variant: decimals as numbers, dates, times, timestamps
    and UUIDs as strings, binaries base64-encoded; keys in the object's sorted order)."""
    return _dump(_decode(metadata, value, _Where(column, row, path), True))


def _dump(v) -> str:
    """JSON text of a JSON-ready decoded variant; decimals keep every digit (written as plain numbers)."""
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _dump(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_dump(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def _pairs(array):
    """(metadata, value) per row of an Arrow ``struct<metadata, value>`` array (None for a null row)."""
    import pyarrow as pa
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    names = [array.type.field(i).name for i in range(array.type.num_fields)] if pa.types.is_struct(array.type) \
        else []
    if "metadata" not in names or "value" not in names:
        raise CorruptFileError(f"a variant column is struct<metadata, value>, not {array.type}")
    metas = array.field("metadata").to_pylist()
    values = array.field("value").to_pylist()
    valid = array.is_valid().to_pylist()
    return [(m, v) if ok else None for m, v, ok in zip(metas, values, valid)]


def _each(array, column, path, as_json):
    out = []
    cache = {}
    for i, pair in enumerate(_pairs(array)):
        if pair is None:
            out.append(None)
            continue
        m, v = pair
        where = _Where(column, i, path)
        if m is None or v is None:
            raise where.error("metadata or value is null in a non-null variant", 0)
        meta = cache.get(m)
        if meta is None:
            meta = cache[m] = VariantMetadata(m, where)
        out.append(_decode(meta, v, where, as_json))
    return out


def to_pylist(array, *, column=None, path=None) -> list:
    """An Arrow variant column (``struct<metadata, value>``) -> Python objects per row (None for null rows)."""
    return _each(array, column, path, False)


def to_json_array(array, *, column=None, path=None):
    """An Arrow variant column -> a ``string`` array of JSON texts (null for null rows)."""
    import pyarrow as pa
    vals = _each(array, column, path, True)
    return pa.array([_dump(v) if ok else None for v, ok in zip(vals, _valid(array))], pa.string())


def _valid(array):
    import pyarrow as pa
    if isinstance(array, pa.ChunkedArray):
        return [ok for c in array.chunks for ok in c.is_valid().to_pylist()]
    return array.is_valid().to_pylist()


def validate_array(array, *, column=None, path=None) -> None:
    """Check every variant of an Arrow variant column; CorruptFileError at the first bad one."""
    _each(array, column, path, False)
