# Varint kernels: unsigned LEB128 (32- and 64-bit), zigzag, and the
# delta+zigzag+varint array codec of the .row block index.
#
# Every function checks reads against the buffer end and reports failure as
# a negative status (see paimon_engine/_pykernels/status.py); no function
# raises for bad input or reads past the buffer.
cimport cython
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t
from .leb128 cimport (read_u32 as _read_u32, read_u64 as _read_u64, write_u64 as _write_u64,
                     zigzag_encode as _zz_enc, zigzag_decode as _zz_dec)
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING


cdef enum:
    TRUNCATED = -1
    OVERLONG = -2


def read_uvarint32(const uint8_t[::1] buf, Py_ssize_t pos):
    """Decode one unsigned LEB128 32-bit varint at ``pos``.

    Returns ``(value, next_pos)``; ``value`` is the int32 the 32 bits spell
    (Java semantics: 5-byte varints give negative numbers). On failure
    ``next_pos`` is a negative status and ``value`` is 0.
    """
    cdef uint32_t v = 0
    cdef Py_ssize_t r
    if pos < 0:
        return 0, TRUNCATED
    r = _read_u32(&buf[0] if buf.shape[0] else NULL, pos, buf.shape[0], &v)
    if r < 0:
        return 0, r
    return <int32_t>v, r


def read_uvarint64(const uint8_t[::1] buf, Py_ssize_t pos):
    """Decode one unsigned LEB128 64-bit varint: ``(value as uint64, next_pos)``."""
    cdef uint64_t v = 0
    cdef Py_ssize_t r
    if pos < 0:
        return 0, TRUNCATED
    r = _read_u64(&buf[0] if buf.shape[0] else NULL, pos, buf.shape[0], &v)
    if r < 0:
        return 0, r
    return v, r


def encode_uvarint32(int64_t value):
    """LEB128 of the low 32 bits of ``value`` (a negative int32 takes 5 bytes)."""
    cdef uint8_t tmp[10]
    cdef Py_ssize_t n = _write_u64(tmp, <uint32_t>(<int32_t>value))
    return PyBytes_FromStringAndSize(<char*>tmp, n)


def encode_uvarint64(object value):
    """LEB128 of ``value`` taken modulo 2**64."""
    cdef uint8_t tmp[10]
    cdef uint64_t v = <uint64_t>(value & 0xFFFFFFFFFFFFFFFF)
    cdef Py_ssize_t n = _write_u64(tmp, v)
    return PyBytes_FromStringAndSize(<char*>tmp, n)


def zigzag_encode64(int64_t value):
    return _zz_enc(value)


def zigzag_decode64(uint64_t value):
    return _zz_dec(value)


def zigzag_encode32(int32_t value):
    return <uint32_t>((<uint32_t>value << 1) ^ <uint32_t>(value >> 31))


def zigzag_decode32(uint32_t value):
    return <int32_t>((value >> 1) ^ (0 - (value & 1)))


@cython.boundscheck(False)
@cython.wraparound(False)
def decode_uvarint64_array(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t count, int64_t[::1] out):
    """Decode ``count`` varints starting at ``pos`` into ``out`` (uint64 bit
    patterns stored as int64). Returns the position after the last one, or a
    negative status."""
    cdef Py_ssize_t end = buf.shape[0]
    cdef Py_ssize_t i
    cdef uint64_t v = 0
    cdef const uint8_t* p = &buf[0] if end else NULL
    if count < 0 or count > out.shape[0] or pos < 0:
        return -4
    with nogil:
        for i in range(count):
            pos = _read_u64(p, pos, end, &v)
            if pos < 0:
                break
            out[i] = <int64_t>v
    return pos


@cython.boundscheck(False)
@cython.wraparound(False)
def encode_uvarint64_array(const int64_t[::1] values):
    """LEB128 of each value (taken as uint64), concatenated."""
    cdef Py_ssize_t n = values.shape[0]
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n * 10)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t w = 0
    cdef Py_ssize_t i
    with nogil:
        for i in range(n):
            w += _write_u64(p + w, <uint64_t>values[i])
    return out[:w]


@cython.boundscheck(False)
@cython.wraparound(False)
def zigzag_encode_array(const int64_t[::1] values, int64_t[::1] out):
    """out[i] = zigzag(values[i]) as a uint64 bit pattern. Returns the count."""
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t i
    if out.shape[0] < n:
        return -4
    with nogil:
        for i in range(n):
            out[i] = <int64_t>_zz_enc(values[i])
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def zigzag_decode_array(const int64_t[::1] values, int64_t[::1] out):
    """Inverse of :func:`zigzag_encode_array`. Returns the count."""
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t i
    if out.shape[0] < n:
        return -4
    with nogil:
        for i in range(n):
            out[i] = _zz_dec(<uint64_t>values[i])
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def encode_delta_varint(const int64_t[::1] values):
    """Delta + zigzag + LEB128 over int64 with wrap-around (the .row block index)."""
    cdef Py_ssize_t n = values.shape[0]
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n * 10)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t w = 0
    cdef Py_ssize_t i
    cdef uint64_t prev = 0
    cdef uint64_t cur
    with nogil:
        for i in range(n):
            cur = <uint64_t>values[i]
            w += _write_u64(p + w, _zz_enc(<int64_t>(cur - prev)))
            prev = cur
    return out[:w]


@cython.boundscheck(False)
@cython.wraparound(False)
def decode_delta_varint(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t count, int64_t[::1] out):
    """Inverse of :func:`encode_delta_varint`: ``count`` values from ``pos``
    into ``out``. Returns the position after the last varint, or a negative
    status (a truncated last varint is an error, never dropped)."""
    cdef Py_ssize_t end = buf.shape[0]
    cdef Py_ssize_t i
    cdef uint64_t v = 0
    cdef uint64_t acc = 0
    cdef const uint8_t* p = &buf[0] if end else NULL
    if count < 0 or count > out.shape[0] or pos < 0:
        return -4
    with nogil:
        for i in range(count):
            pos = _read_u64(p, pos, end, &v)
            if pos < 0:
                break
            acc = acc + <uint64_t>_zz_dec(v)
            out[i] = <int64_t>acc
    return pos
