# Bitmap kernels: walking null/validity bitmaps.
#
# Two bit orders exist in the formats: "lsb" (bit i = byte[i >> 3] & (1 << (i & 7)),
# used by Paimon rows, Fory rows and Arrow) and "msb" (bit i = byte[i >> 3] &
# (0x80 >> (i & 7))). ``invert`` flips the meaning (a null bitmap vs a validity
# bitmap). Callers pass buffers of the right size; kernels check and return -4
# (BAD_LENGTH) otherwise.
cimport cython
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil


cdef inline bint _bit(const uint8_t* p, Py_ssize_t i, bint msb) noexcept nogil:
    if msb:
        return (p[i >> 3] >> (7 - (i & 7))) & 1
    return (p[i >> 3] >> (i & 7)) & 1


@cython.boundscheck(False)
@cython.wraparound(False)
def unpack_bits(const uint8_t[::1] bits, Py_ssize_t bit_offset, Py_ssize_t count,
                bint msb_first, bint invert, uint8_t[::1] out):
    """out[i] = bit (bit_offset + i) of ``bits``, flipped if ``invert``.
    Returns how many of the written flags are 1, or -4 if a buffer is short."""
    cdef Py_ssize_t i, ones = 0
    cdef uint8_t v
    cdef const uint8_t* p
    if count < 0 or bit_offset < 0 or out.shape[0] < count:
        return -4
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > bits.shape[0]:
        return -4
    p = &bits[0]
    with nogil:
        for i in range(count):
            v = _bit(p, bit_offset + i, msb_first) ^ invert
            out[i] = v
            ones += v
    return ones


@cython.boundscheck(False)
@cython.wraparound(False)
def pack_bits(const uint8_t[::1] flags, bint msb_first, bint invert, uint8_t[::1] out):
    """Pack flags (nonzero = 1, flipped if ``invert``) into ``out`` starting
    at bit 0; trailing bits of the last byte are 0. Returns the number of set
    bits written, or -4 if ``out`` is short."""
    cdef Py_ssize_t n = flags.shape[0]
    cdef Py_ssize_t nbytes = (n + 7) // 8
    cdef Py_ssize_t i, ones = 0
    cdef uint8_t v
    if out.shape[0] < nbytes:
        return -4
    with nogil:
        for i in range(nbytes):
            out[i] = 0
        for i in range(n):
            v = (flags[i] != 0) ^ invert
            if v:
                ones += 1
                if msb_first:
                    out[i >> 3] |= <uint8_t>(0x80 >> (i & 7))
                else:
                    out[i >> 3] |= <uint8_t>(1 << (i & 7))
    return ones


@cython.boundscheck(False)
@cython.wraparound(False)
def count_bits(const uint8_t[::1] bits, Py_ssize_t bit_offset, Py_ssize_t count, bint msb_first):
    """Number of set bits among ``count`` bits from ``bit_offset``, or -4."""
    cdef Py_ssize_t i, ones = 0
    cdef const uint8_t* p
    if count < 0 or bit_offset < 0:
        return -4
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > bits.shape[0]:
        return -4
    p = &bits[0]
    with nogil:
        for i in range(count):
            ones += _bit(p, bit_offset + i, msb_first)
    return ones


@cython.boundscheck(False)
@cython.wraparound(False)
def nulls_to_validity(const uint8_t[::1] null_bits, Py_ssize_t bit_offset, Py_ssize_t count,
                      bint msb_first, uint8_t[::1] validity):
    """Turn ``count`` bits of a null bitmap (1 = null) into an Arrow validity
    bitmap (LSB order, 1 = valid, starting at bit 0). Returns the null count,
    or -4 if a buffer is short."""
    cdef Py_ssize_t i, nulls = 0
    cdef Py_ssize_t nbytes = (count + 7) // 8
    cdef const uint8_t* p
    if count < 0 or bit_offset < 0 or validity.shape[0] < nbytes:
        return -4
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > null_bits.shape[0]:
        return -4
    p = &null_bits[0]
    if (bit_offset & 7) == 0 and not msb_first:
        # Aligned LSB bitmaps: validity is the complement, a word at a time.
        return _flip_aligned(p + (bit_offset >> 3), count, &validity[0])
    with nogil:
        for i in range(nbytes):
            validity[i] = 0
        for i in range(count):
            if _bit(p, bit_offset + i, msb_first):
                nulls += 1
            else:
                validity[i >> 3] |= <uint8_t>(1 << (i & 7))
    return nulls


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _flip_aligned(const uint8_t* src, Py_ssize_t count, uint8_t* dst) noexcept nogil:
    cdef Py_ssize_t nbytes = (count + 7) // 8
    cdef Py_ssize_t words = nbytes // 8
    cdef Py_ssize_t i, nulls = 0
    cdef uint64_t w
    cdef uint8_t b
    for i in range(words):
        memcpy(&w, src + 8 * i, 8)
        nulls += __builtin_popcountll(w)
        w = ~w
        memcpy(dst + 8 * i, &w, 8)
    for i in range(words * 8, nbytes):
        b = src[i]
        if i == nbytes - 1 and (count & 7):
            b &= <uint8_t>((1 << (count & 7)) - 1)
        nulls += __builtin_popcountll(b)
        dst[i] = <uint8_t>(~b)
    if count & 7:
        dst[nbytes - 1] &= <uint8_t>((1 << (count & 7)) - 1)
        if words * 8 == nbytes:
            # the last byte was part of a word: discount nulls in its padding bits
            nulls -= __builtin_popcountll(src[nbytes - 1] & <uint8_t>(~((1 << (count & 7)) - 1)))
    return nulls
