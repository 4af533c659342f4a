# Unsigned LEB128 varints and zigzag, shared by the kernels that read or write them (varint, rowcodec,
# rowindex). Readers return the position after the value, or a negative status from
# paimon_engine/_pykernels/status.py: LEB_TRUNCATED (input ended inside a value) or LEB_OVERLONG (more bytes
# than the type allows, or bits above it). Pointers are raw: callers pass ``end``, nothing reads past it.

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

cdef enum:
    LEB_TRUNCATED = -1
    LEB_OVERLONG = -2


cdef inline Py_ssize_t read_u32(const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, uint32_t* out) noexcept nogil:
    cdef uint32_t result = 0
    cdef uint8_t b
    cdef int shift = 0
    cdef int i
    for i in range(5):
        if pos >= end:
            return LEB_TRUNCATED
        b = p[pos]
        pos += 1
        if i == 4 and (b & 0xF0):
            return LEB_OVERLONG
        result |= (<uint32_t>(b & 0x7F)) << shift
        if not (b & 0x80):
            out[0] = result
            return pos
        shift += 7
    return LEB_OVERLONG


cdef inline Py_ssize_t read_u64(const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, uint64_t* out) noexcept nogil:
    cdef uint64_t result = 0
    cdef uint8_t b
    cdef int shift = 0
    cdef int i
    for i in range(10):
        if pos >= end:
            return LEB_TRUNCATED
        b = p[pos]
        pos += 1
        if i == 9 and (b & 0xFE):
            return LEB_OVERLONG
        result |= (<uint64_t>(b & 0x7F)) << shift
        if not (b & 0x80):
            out[0] = result
            return pos
        shift += 7
    return LEB_OVERLONG


cdef inline Py_ssize_t write_u32(uint8_t* p, uint32_t v) noexcept nogil:
    cdef Py_ssize_t n = 0
    while v >= 0x80:
        p[n] = <uint8_t>((v & 0x7F) | 0x80)
        v >>= 7
        n += 1
    p[n] = <uint8_t>v
    return n + 1


cdef inline Py_ssize_t write_u64(uint8_t* p, uint64_t v) noexcept nogil:
    cdef Py_ssize_t n = 0
    while v >= 0x80:
        p[n] = <uint8_t>((v & 0x7F) | 0x80)
        v >>= 7
        n += 1
    p[n] = <uint8_t>v
    return n + 1


cdef inline uint64_t zigzag_encode(int64_t v) noexcept nogil:
    return (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)


cdef inline int64_t zigzag_decode(uint64_t u) noexcept nogil:
    return <int64_t>((u >> 1) ^ (0 - (u & 1)))
