"""In-place views of single Fory rows (``RowView``, ``ArrayView``, ``MapView``).

The classes come from the ``foryview`` kernel (compiled, or its pure-Python
twin); this module builds the per-layout ``ViewSchema`` they read with.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal

from ... import _speedups
from . import schema as S

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _kernel():
    return _speedups.kernel("foryview")


def _date(days):
    return _EPOCH_DATE + _dt.timedelta(days=days)


def _timestamp(tz):
    if tz:
        try:
            import zoneinfo
            zone = _dt.timezone.utc if tz in ("UTC", "utc", "Z", "+00:00") else zoneinfo.ZoneInfo(tz)
        except Exception:  # an offset string such as "+08:00"
            zone = _dt.timezone.utc
        return lambda us: (_EPOCH_UTC + _dt.timedelta(microseconds=us)).astimezone(zone)
    return lambda us: _EPOCH + _dt.timedelta(microseconds=us)


def _duration(us):
    return _dt.timedelta(microseconds=us)


_EXACT = _decimal.Context(prec=80)   # every decimal256 value exactly (the default context keeps 28 digits)


def _decimal_of(precision, scale):
    bound = 10 ** precision

    def convert(raw: bytes):
        # a ValueError here is a value beyond the precision: the view reports it as corrupt bytes
        unscaled = int.from_bytes(raw, "little", signed=True)
        if not -bound < unscaled < bound:
            raise ValueError("decimal value beyond its precision")
        return _decimal.Decimal(unscaled).scaleb(-scale, _EXACT)
    return convert


def _prim_and_convert(node):
    import pyarrow as pa
    k = _kernel()
    t = node.field.type
    if pa.types.is_boolean(t):
        return k.P_BOOL, None
    if pa.types.is_int8(t):
        return k.P_I8, None
    if pa.types.is_int16(t):
        return k.P_I16, None
    if pa.types.is_int32(t):
        return k.P_I32, None
    if pa.types.is_int64(t):
        return k.P_I64, None
    if pa.types.is_float32(t):
        return k.P_F32, None
    if pa.types.is_float64(t):
        return k.P_F64, None
    if pa.types.is_date32(t):
        return k.P_DATE, _date
    if pa.types.is_timestamp(t):
        return k.P_TS, _timestamp(t.tz)
    if pa.types.is_duration(t):
        return k.P_DUR, _duration
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return k.P_STR, None
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return k.P_BIN, None
    if pa.types.is_decimal(t):
        return k.P_DEC, _decimal_of(t.precision, t.scale)
    return k.P_NONE, None


def view_schema(lay: S.Layout):
    """The kernel's ViewSchema for one layout of a ForySchema."""
    k = _kernel()
    nodes = lay.nodes
    prims, converts, paths, typenames, names = [], [], [], [], []
    path = lay.paths()
    for n in nodes:
        p, conv = _prim_and_convert(n)
        prims.append(p)
        converts.append(conv)
        paths.append(path[n.index])
        typenames.append(str(n.field.type))
        names.append({c.field.name: i for i, c in enumerate(n.children)} if n.kind == S.K_STRUCT else {})
    col = lambda c: [int(x) for x in lay.table[:, c]]  # noqa: E731
    return k.ViewSchema(col(S.C_KIND), col(S.C_WIDTH), col(S.C_SLOT), col(S.C_OFF), col(S.C_BIT),
                        col(S.C_NULLABLE), col(S.C_INLINE), col(S.C_FIXED), col(S.C_BMOFF), col(S.C_BMSIZE),
                        [[c.index for c in n.children] for n in nodes], col(S.C_HDRROUND), prims, names,
                        lay.compact, converts, paths, typenames)


def __getattr__(name):
    if name in ("RowView", "ArrayView", "MapView", "ViewSchema"):
        return getattr(_kernel(), name)
    raise AttributeError(name)
