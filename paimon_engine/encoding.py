"""Checked varint and bitmap codecs built on the kernels.

These wrappers validate arguments, allocate outputs and turn kernel status
codes into :class:`~paimon_engine.errors.CorruptFileError` naming the source
and byte offset.
"""

from __future__ import annotations

import numpy as np

from . import _speedups
from ._pykernels import status
from .errors import CorruptFileError

__all__ = [
    "read_uvarint32",
    "read_uvarint64",
    "encode_uvarint32",
    "encode_uvarint64",
    "encode_delta_varint",
    "decode_delta_varint",
    "decode_uvarint64_array",
    "encode_uvarint64_array",
    "zigzag_encode",
    "zigzag_decode",
    "validity_from_nulls",
    "unpack_bits",
    "pack_bits",
]


def _raise(code, *, path, offset, what):
    raise CorruptFileError(f"{status.describe(code)} while decoding {what}", path=path, offset=offset)


def _as_u8(buf):
    if isinstance(buf, (bytes, bytearray)):
        return buf
    if isinstance(buf, np.ndarray):
        return np.ascontiguousarray(buf).view(np.uint8).reshape(-1)
    return memoryview(buf).cast("B")


def read_uvarint32(buf, pos=0, *, path=None):
    """Read one row-payload varint (unsigned LEB128 of an int32). Returns (value, next_pos)."""
    value, nxt = _speedups.varint.read_uvarint32(_as_u8(buf), pos)
    if nxt < 0:
        _raise(nxt, path=path, offset=pos, what="a varint")
    return value, nxt


def read_uvarint64(buf, pos=0, *, path=None):
    value, nxt = _speedups.varint.read_uvarint64(_as_u8(buf), pos)
    if nxt < 0:
        _raise(nxt, path=path, offset=pos, what="a varint")
    return value, nxt


def encode_uvarint32(value: int) -> bytes:
    return _speedups.varint.encode_uvarint32(int(value))


def encode_uvarint64(value: int) -> bytes:
    return _speedups.varint.encode_uvarint64(int(value))


def _i64(values):
    return np.ascontiguousarray(np.asarray(values, dtype=np.int64))


def encode_delta_varint(values) -> bytes:
    """Delta + zigzag + varint encoding of int64 values (the .row block index)."""
    return _speedups.varint.encode_delta_varint(_i64(values))


def decode_delta_varint(buf, count, pos=0, *, path=None):
    """Decode ``count`` delta+zigzag+varint int64 values. Returns (array, next_pos)."""
    if count < 0:
        raise CorruptFileError(f"negative value count {count}", path=path, offset=pos)
    data = _as_u8(buf)
    if count > len(data) - pos:  # every varint takes at least one byte
        raise CorruptFileError(
            f"{count} values cannot fit in {max(len(data) - pos, 0)} bytes", path=path, offset=pos
        )
    out = np.empty(count, dtype=np.int64)
    nxt = _speedups.varint.decode_delta_varint(data, pos, count, out)
    if nxt < 0:
        _raise(nxt, path=path, offset=pos, what="a delta-varint array")
    return out, nxt


def decode_uvarint64_array(buf, count, pos=0, *, path=None):
    data = _as_u8(buf)
    if count < 0 or count > len(data) - pos:
        raise CorruptFileError(f"{count} varints cannot fit in the buffer", path=path, offset=pos)
    out = np.empty(count, dtype=np.int64)
    nxt = _speedups.varint.decode_uvarint64_array(data, pos, count, out)
    if nxt < 0:
        _raise(nxt, path=path, offset=pos, what="a varint array")
    return out.view(np.uint64), nxt


def encode_uvarint64_array(values) -> bytes:
    return _speedups.varint.encode_uvarint64_array(np.ascontiguousarray(np.asarray(values).astype(np.uint64).view(np.int64)))


def zigzag_encode(values):
    v = _i64(values)
    out = np.empty_like(v)
    _speedups.varint.zigzag_encode_array(v, out)
    return out.view(np.uint64)


def zigzag_decode(values):
    v = np.ascontiguousarray(np.asarray(values, dtype=np.uint64)).view(np.int64)
    out = np.empty_like(v)
    _speedups.varint.zigzag_decode_array(v, out)
    return out


def unpack_bits(bits, count, *, bit_offset=0, msb_first=False, invert=False, path=None, offset=None):
    """Bitmap -> uint8 0/1 array of ``count`` flags."""
    out = np.empty(count, dtype=np.uint8)
    r = _speedups.bitmap.unpack_bits(_as_u8(bits), bit_offset, count, msb_first, invert, out)
    if r < 0:
        _raise(r, path=path, offset=offset, what="a bitmap")
    return out


def pack_bits(flags, *, msb_first=False, invert=False):
    """Flags (any array, nonzero = 1) -> packed bitmap bytes as a uint8 array."""
    f = np.ascontiguousarray(np.asarray(flags).astype(np.bool_, copy=False)).view(np.uint8)
    out = np.empty((len(f) + 7) // 8, dtype=np.uint8)
    _speedups.bitmap.pack_bits(f, msb_first, invert, out)
    return out


def validity_from_nulls(null_bits, count, *, bit_offset=0, msb_first=False, path=None, offset=None):
    """Null bitmap (1 = null) -> (Arrow validity bitmap as uint8 array, null count)."""
    out = np.empty((count + 7) // 8, dtype=np.uint8)
    r = _speedups.bitmap.nulls_to_validity(_as_u8(null_bits), bit_offset, count, msb_first, out)
    if r < 0:
        _raise(r, path=path, offset=offset, what="a null bitmap")
    return out, r
