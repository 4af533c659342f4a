# Short byte copies, the ASCII test and a count of non-zero bytes, shared by the kernels that copy and check
# string bodies (copy_short, is_ascii: foryrow, foryview; copy_value: deletes, parquet) and that count keep flags
# (count_nonzero: parquet, rowindex).

from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy


cdef inline void copy_short(uint8_t* dst, const uint8_t* src, Py_ssize_t n) noexcept nogil:
    """memcpy of ``n`` bytes: up to 16 as two (possibly overlapping) moves that read and write only
    ``[0, n)``, longer ones through memcpy."""
    if n > 16:
        memcpy(dst, src, n)
    elif n >= 8:
        memcpy(dst, src, 8)
        memcpy(dst + n - 8, src + n - 8, 8)
    elif n >= 4:
        memcpy(dst, src, 4)
        memcpy(dst + n - 4, src + n - 4, 4)
    elif n > 0:
        dst[0] = src[0]
        dst[n >> 1] = src[n >> 1]
        dst[n - 1] = src[n - 1]


cdef inline void copy_value(uint8_t* dst, Py_ssize_t dst_room, const uint8_t* src, Py_ssize_t src_room,
                            Py_ssize_t n) noexcept nogil:
    """memcpy of ``n`` bytes; a value of at most 16 bytes is one 16-byte move when both buffers have 16 bytes
    from there (``dst_room``, ``src_room``): the bytes past ``n`` are written again by the next value or lie
    past the end of what the caller keeps."""
    if n <= 16 and dst_room >= 16 and src_room >= 16:
        memcpy(dst, src, 16)
    elif n > 0:
        memcpy(dst, src, n)


cdef inline bint is_ascii(const uint8_t* q, Py_ssize_t n) noexcept nogil:
    # every byte < 0x80; reads only q[0:n] (short strings as two possibly overlapping loads)
    cdef uint64_t acc = 0, w
    cdef uint32_t h
    cdef Py_ssize_t j = 0
    if n >= 8:
        while j + 8 <= n:
            memcpy(&w, q + j, 8)
            acc |= w
            j += 8
        # the last eight bytes (again, when n is a multiple of 8: a load is cheaper than a branch on it)
        memcpy(&w, q + n - 8, 8)
        acc |= w
    elif n >= 4:
        memcpy(&h, q, 4)
        acc = h
        memcpy(&h, q + n - 4, 4)
        acc |= h
    else:
        while j < n:
            acc |= q[j]
            j += 1
    return (acc & <uint64_t>0x8080808080808080) == 0


cdef inline Py_ssize_t count_nonzero(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """How many of the ``n`` bytes at ``p`` are non-zero. Counted in blocks of 4096 bytes with a 32-bit count, which
    the compiler turns into wide byte compares (with one count of the full width it widened every byte to 64 bits:
    about 4x slower)."""
    cdef Py_ssize_t i = 0, j, e, m = 0
    cdef uint32_t c
    while i < n:
        e = i + 4096 if n - i > 4096 else n
        c = 0
        for j in range(i, e):
            c += p[j] != 0
        m += c
        i = e
    return m
