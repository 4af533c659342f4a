"""Pure-Python twin of ``paimon_engine/_kernels/varint.pyx``."""

from .status import OVERLONG, TRUNCATED, BAD_LENGTH

_M64 = 0xFFFFFFFFFFFFFFFF
_M32 = 0xFFFFFFFF


def _to_i64(u):
    u &= _M64
    return u - (1 << 64) if u >> 63 else u


def _read_u(buf, pos, max_bytes, last_mask):
    end = len(buf)
    result = 0
    shift = 0
    for i in range(max_bytes):
        if pos >= end:
            return 0, TRUNCATED
        b = buf[pos]
        pos += 1
        if i == max_bytes - 1 and (b & last_mask):
            return 0, OVERLONG
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    return 0, OVERLONG


def read_uvarint32(buf, pos):
    if pos < 0:
        return 0, TRUNCATED
    v, r = _read_u(memoryview(buf).cast("B") if not isinstance(buf, (bytes, bytearray)) else buf, pos, 5, 0xF0)
    if r < 0:
        return 0, r
    return (v - (1 << 32) if v >> 31 else v), r


def read_uvarint64(buf, pos):
    if pos < 0:
        return 0, TRUNCATED
    return _read_u(buf if isinstance(buf, (bytes, bytearray)) else memoryview(buf).cast("B"), pos, 10, 0xFE)


def _write(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def encode_uvarint32(value):
    return _write(value & _M32)


def encode_uvarint64(value):
    return _write(value & _M64)


def zigzag_encode64(value):
    return ((value << 1) ^ (value >> 63)) & _M64


def zigzag_decode64(value):
    return _to_i64((value >> 1) ^ -(value & 1))


def zigzag_encode32(value):
    return ((value << 1) ^ (value >> 31)) & _M32


def zigzag_decode32(value):
    r = ((value >> 1) ^ -(value & 1)) & _M32
    return r - (1 << 32) if r >> 31 else r


def decode_uvarint64_array(buf, pos, count, out):
    if count < 0 or count > len(out) or pos < 0:
        return BAD_LENGTH
    for i in range(count):
        v, pos = read_uvarint64(buf, pos)
        if pos < 0:
            return pos
        out[i] = _to_i64(v)
    return pos


def encode_uvarint64_array(values):
    return b"".join(_write(int(v) & _M64) for v in values)


def zigzag_encode_array(values, out):
    n = len(values)
    if len(out) < n:
        return BAD_LENGTH
    for i in range(n):
        out[i] = _to_i64(zigzag_encode64(int(values[i])))
    return n


def zigzag_decode_array(values, out):
    n = len(values)
    if len(out) < n:
        return BAD_LENGTH
    for i in range(n):
        out[i] = zigzag_decode64(int(values[i]) & _M64)
    return n


def encode_delta_varint(values):
    parts = []
    prev = 0
    for v in values:
        v = int(v)
        parts.append(_write(zigzag_encode64(_to_i64(v - prev))))
        prev = v
    return b"".join(parts)


def decode_delta_varint(buf, pos, count, out):
    if count < 0 or count > len(out) or pos < 0:
        return BAD_LENGTH
    acc = 0
    for i in range(count):
        v, pos = read_uvarint64(buf, pos)
        if pos < 0:
            return pos
        acc = _to_i64(acc + zigzag_decode64(v))
        out[i] = acc
    return pos
