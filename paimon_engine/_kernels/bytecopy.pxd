# Short byte copies, shared by the kernels that copy string bodies (foryrow, foryview).

from libc.stdint cimport uint8_t
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
