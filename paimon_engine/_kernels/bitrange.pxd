# A run of bits of an Arrow-style bitmap (LSB first) set or cleared, shared by the kernels that write validity
# bitmaps a range at a time (parquet: runs of definition levels; rowcodec: chunks of rows).

from libc.stdint cimport uint8_t
from libc.string cimport memset


cdef inline void set_bits(uint8_t* v, Py_ssize_t start, Py_ssize_t n, bint on) noexcept nogil:
    """Bits ``start .. start + n - 1`` of ``v`` set (``on``) or cleared: a mask on the first and last bytes, whole
    bytes between."""
    cdef Py_ssize_t a, b
    cdef uint8_t first, last
    if n <= 0:
        return
    a = start >> 3
    b = (start + n - 1) >> 3
    first = <uint8_t>(0xFF << (start & 7))
    last = <uint8_t>(0xFF >> (7 - ((start + n - 1) & 7)))
    if a == b:
        first &= last
    if on:
        v[a] |= first
    else:
        v[a] &= <uint8_t>~first
    if a == b:
        return
    if b - a > 1:
        memset(v + a + 1, 0xFF if on else 0, b - a - 1)
    if on:
        v[b] |= last
    else:
        v[b] &= <uint8_t>~last
