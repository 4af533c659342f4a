# Bitmap kernels: walking null/validity bitmaps, and the portable Roaring32 bitmaps of deletion vectors and file
# indexes (roaring_walk, roaring_clear).
#
# Two bit orders exist in the formats: "lsb" (bit i = byte[i >> 3] & (1 << (i & 7)),
# used by Paimon rows, Fory rows and Arrow) and "msb" (bit i = byte[i >> 3] &
# (0x80 >> (i & 7))). ``invert`` flips the meaning (a null bitmap vs a validity
# bitmap). Callers pass buffers of the right size; kernels check and return -4
# (BAD_LENGTH) otherwise.
cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from paimon_engine._kernels.cpu cimport pe_avx512_available

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil


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


# ---------------------------------------------------------------- portable Roaring32
# The layout Java's RoaringBitmap and CRoaring write (little-endian): a cookie (12346, then the container count;
# or 12347 + (count - 1) << 16, then one bit per container telling a run container), per container its 16-bit
# key and cardinality - 1, the containers' offsets (absent only for fewer than 4 containers with runs), then the
# containers: a run container is its run count and (start, length - 1) pairs, a container of more than 4096
# values 1024 64-bit words, any other its sorted 16-bit values.

cdef enum:
    R_TRUNCATED = -1
    R_OUT_OF_ORDER = -3
    R_BAD_LENGTH = -4
    R_BAD_VALUE = -5
    R_NO_RUN = 12346
    R_RUN = 12347
    C_ARRAY = 0
    C_BITS = 1
    C_RUN = 2


cdef inline uint32_t _u16(const uint8_t* p) noexcept nogil:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8)


cdef extern from *:
    """
    #include <string.h>
    /* how many of an array container's 16-bit little-endian values (card of them at c) are not above the one
       before (0: strictly ascending); one load per value, a loop the compiler widens */
    static Py_ssize_t pe_roaring_unsorted(const uint8_t* c, Py_ssize_t card) {
        Py_ssize_t bad = 0;
        for (Py_ssize_t j = 1; j < card; j++) {
            uint16_t a, b;
            memcpy(&a, c + 2 * j - 2, 2);
            memcpy(&b, c + 2 * j, 2);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            a = (uint16_t)((a >> 8) | (a << 8));
            b = (uint16_t)((b >> 8) | (b << 8));
    #endif
            bad += b <= a;
        }
        return bad;
    }
    #if PE_X86_VECTOR
    /* the same, 32 values to a compare (x86 is little-endian: the values load as they are) */
    __attribute__((target("avx512f,avx512bw")))
    static Py_ssize_t pe_roaring_unsorted_vector(const uint8_t* c, Py_ssize_t card) {
        Py_ssize_t j = 1;
        unsigned long long bad = 0;
        for (; j + 32 <= card; j += 32)
            bad |= _mm512_cmple_epu16_mask(_mm512_loadu_si512((const void*)(c + 2 * j)),
                                           _mm512_loadu_si512((const void*)(c + 2 * j - 2)));
        return (bad != 0) + (j < card ? pe_roaring_unsorted(c + 2 * j - 2, card - j + 1) : 0);
    }
    #else
    /* never called: without AVX-512 the switch stays off (this keeps the module compiling) */
    static Py_ssize_t pe_roaring_unsorted_vector(const uint8_t* c, Py_ssize_t card) {
        return pe_roaring_unsorted(c, card);
    }
    #endif
    """
    Py_ssize_t pe_roaring_unsorted(const uint8_t* c, Py_ssize_t card) noexcept nogil
    Py_ssize_t pe_roaring_unsorted_vector(const uint8_t* c, Py_ssize_t card) noexcept nogil


cdef bint _VECTOR_OK = pe_avx512_available()
cdef bint _vector = _VECTOR_OK


def vector_paths(enabled=None):
    """Whether ``roaring_walk`` checks an array container's order 32 values at a time with AVX-512 (only where the
    processor has it). ``enabled``: turn it on or off (on only where available), for testing both paths; returns
    the setting before the call."""
    global _vector
    before = _vector
    if enabled is not None:
        _vector = bool(enabled) and _VECTOR_OK
    return before


cdef inline uint32_t _u32(const uint8_t* p) noexcept nogil:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef Py_ssize_t _roaring_header(const uint8_t* b, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t* size,
                                Py_ssize_t* runs, Py_ssize_t* keys, Py_ssize_t* fault) noexcept nogil:
    """The header of the bitmap at ``pos``: the container count, where the run flags (-1: none) and the
    key/cardinality pairs start; returns where the first container starts, or a negative status (``fault``: its
    offset)."""
    cdef uint32_t cookie
    cdef int64_t sz
    fault[0] = pos
    if n - pos < 4:
        return R_TRUNCATED
    cookie = _u32(b + pos)
    pos += 4
    if (cookie & 0xFFFF) == R_RUN:
        sz = (cookie >> 16) + 1
        runs[0] = pos
        if n - pos < (sz + 7) // 8:
            fault[0] = pos
            return R_TRUNCATED
        pos += (sz + 7) // 8
    elif cookie == R_NO_RUN:
        if n - pos < 4:
            fault[0] = pos
            return R_TRUNCATED
        sz = <int32_t>_u32(b + pos)
        if sz < 0 or sz > 65536:
            fault[0] = pos
            return R_BAD_LENGTH
        runs[0] = -1
        pos += 4
    else:
        return R_BAD_VALUE
    keys[0] = pos
    if n - pos < 4 * sz:
        fault[0] = pos
        return R_TRUNCATED
    pos += 4 * sz
    if runs[0] < 0 or sz >= 4:
        if n - pos < 4 * sz:
            fault[0] = pos
            return R_TRUNCATED
        pos += 4 * sz
    size[0] = <Py_ssize_t>sz
    return pos


cdef inline Py_ssize_t _container(const uint8_t* b, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t runs,
                                  Py_ssize_t i, Py_ssize_t card, int* kind, Py_ssize_t* nruns) noexcept nogil:
    """Container ``i`` (cardinality ``card``) at ``pos``: its kind (C_RUN, C_BITS, C_ARRAY; ``nruns`` for a run
    container) and the offset after it, or R_TRUNCATED when ``b`` ends inside it. Its values start at ``pos``
    (``pos + 2`` for a run container)."""
    if runs >= 0 and (b[runs + (i >> 3)] >> (i & 7)) & 1:
        kind[0] = C_RUN
        if n - pos < 2:
            return R_TRUNCATED
        nruns[0] = _u16(b + pos)
        if n - pos - 2 < 4 * nruns[0]:
            return R_TRUNCATED
        return pos + 2 + 4 * nruns[0]
    if card > 4096:
        kind[0] = C_BITS
        return pos + 8192 if n - pos >= 8192 else R_TRUNCATED
    kind[0] = C_ARRAY
    return pos + 2 * card if n - pos >= 2 * card else R_TRUNCATED


@cython.boundscheck(False)
@cython.wraparound(False)
def roaring_walk(const uint8_t[::1] buf, Py_ssize_t offset, bint check, int64_t[::1] out):
    """Walk the portable Roaring32 bitmap at ``offset`` of ``buf``: its header, the containers' keys (strictly
    ascending) and every container inside ``buf``; with ``check`` also what the containers hold (an array's
    values strictly ascending, runs ascending inside the container with a gap between any two, a bitmap
    container's bits and the runs' lengths as many as the stated cardinality). Returns the offset after the bitmap, or a negative status
    (-1 truncated, -3 container keys out of order, -4 a container count beyond 65536, -5 a bad cookie, at the
    bitmap's first byte, or contents not as stated, at the container's); ``out[0]``: the bitmap's cardinality,
    ``out[1]``: the offset of a fault."""
    cdef Py_ssize_t n = buf.shape[0], pos, end, size = 0, runs = -1, keys = 0, fault = offset, i, j, card
    cdef Py_ssize_t nruns = 0
    cdef const uint8_t* b = &buf[0] if n else NULL
    cdef const uint8_t* c
    cdef int64_t total = 0, last = -1, key, start, prev, bits
    cdef uint64_t word
    cdef int rc = 0, kind = 0
    if out.shape[0] < 2:
        return R_BAD_LENGTH
    out[0] = 0
    out[1] = offset
    if offset < 0 or offset > n:
        return R_TRUNCATED
    with nogil:
        pos = _roaring_header(b, n, offset, &size, &runs, &keys, &fault)
        if pos < 0:
            rc = <int>pos
        for i in range(size if rc == 0 else 0):
            key = _u16(b + keys + 4 * i)
            card = <Py_ssize_t>_u16(b + keys + 4 * i + 2) + 1
            if key <= last:
                fault = keys + 4 * i
                rc = R_OUT_OF_ORDER
                break
            last = key
            fault = pos
            end = _container(b, n, pos, runs, i, card, &kind, &nruns)
            if end < 0:
                rc = <int>end
                break
            if check and kind == C_RUN:
                c = b + pos + 2
                prev = -2       # (the last value of the run before: a run starts at least two above it)
                bits = 0
                for j in range(nruns):
                    start = _u16(c + 4 * j)
                    if start <= prev + 1 or start + <int64_t>_u16(c + 4 * j + 2) > 65535:
                        rc = R_BAD_VALUE
                        break
                    prev = start + _u16(c + 4 * j + 2)
                    bits += _u16(c + 4 * j + 2) + 1
                if rc == 0 and bits != card:
                    rc = R_BAD_VALUE
            elif check and kind == C_BITS:
                bits = 0
                for j in range(1024):
                    memcpy(&word, b + pos + 8 * j, 8)
                    bits += __builtin_popcountll(word)
                if bits != card:
                    rc = R_BAD_VALUE
            elif check and (pe_roaring_unsorted_vector(b + pos, card) if _vector else
                            pe_roaring_unsorted(b + pos, card)):
                rc = R_BAD_VALUE
            if rc:
                break
            pos = end
            total += card
    if rc:
        out[1] = fault
        return rc
    out[0] = total
    return pos


@cython.boundscheck(False)
@cython.wraparound(False)
def roaring_clear(const uint8_t[::1] buf, Py_ssize_t offset, int64_t lo, uint8_t[::1] mask):
    """``mask[v - lo] = 0`` for every value ``v`` of the portable Roaring32 bitmap at ``offset`` of ``buf`` with
    ``lo <= v < lo + len(mask)`` (the bitmap as ``roaring_walk`` reads it: every read is bounds-checked, the
    contents are taken as they are). Returns how many values fell in that range, or a negative status."""
    cdef Py_ssize_t n = buf.shape[0], pos, end, size = 0, runs = -1, keys = 0, fault = 0, i, j, card
    cdef Py_ssize_t m = mask.shape[0], nruns = 0
    cdef const uint8_t* b = &buf[0] if n else NULL
    cdef uint8_t* o = &mask[0] if m else NULL
    cdef const uint8_t* c
    cdef int64_t base, v, a, e, hits = 0
    cdef uint64_t word
    cdef int rc = 0, kind = 0
    if offset < 0 or offset > n or lo < 0:
        return R_TRUNCATED if lo >= 0 else R_BAD_VALUE
    with nogil:
        pos = _roaring_header(b, n, offset, &size, &runs, &keys, &fault)
        if pos < 0:
            rc = <int>pos
        for i in range(size if rc == 0 else 0):
            base = (<int64_t>_u16(b + keys + 4 * i) << 16) - lo
            card = <Py_ssize_t>_u16(b + keys + 4 * i + 2) + 1
            end = _container(b, n, pos, runs, i, card, &kind, &nruns)
            if end < 0:
                rc = <int>end
                break
            if kind == C_RUN:
                c = b + pos + 2
                for j in range(nruns):
                    a = base + _u16(c + 4 * j)
                    e = a + _u16(c + 4 * j + 2) + 1
                    if a < 0:
                        a = 0
                    if e > m:
                        e = m
                    if a < e:
                        memset(o + a, 0, <size_t>(e - a))
                        hits += e - a
            elif kind == C_BITS:
                if base + 65536 > 0 and base < m:
                    for j in range(1024):
                        memcpy(&word, b + pos + 8 * j, 8)
                        while word:
                            v = base + 64 * j + __builtin_ctzll(word)
                            word &= word - 1
                            if 0 <= v < m:
                                o[v] = 0
                                hits += 1
            else:
                c = b + pos
                if base >= 0 and base + 65536 <= m:
                    for j in range(card):
                        o[base + _u16(c + 2 * j)] = 0
                    hits += card
                elif base + 65536 > 0 and base < m:
                    for j in range(card):
                        v = base + _u16(c + 2 * j)
                        if 0 <= v < m:
                            o[v] = 0
                            hits += 1
            pos = end
    return rc if rc else hits
