# Hash and bloom-filter kernels; see paimon_engine/_pykernels/hashing.py for the contract.
cimport cython
from libc.stdint cimport int64_t, uint64_t, int32_t, uint32_t, uint8_t
from zlib import crc32 as _zlib_crc32

from paimon_engine._kernels.cpu cimport pe_pclmul_available, pe_vpclmul_available


cdef inline int64_t _long_hash(int64_t key) noexcept nogil:
    cdef uint64_t k = <uint64_t> key
    k = (~k) + (k << 21)
    k = k ^ <uint64_t> ((<int64_t> k) >> 24)
    k = k + (k << 3) + (k << 8)
    k = k ^ <uint64_t> ((<int64_t> k) >> 14)
    k = k + (k << 2) + (k << 4)
    k = k ^ <uint64_t> ((<int64_t> k) >> 28)
    k = k + (k << 31)
    return <int64_t> k


@cython.boundscheck(False)
@cython.wraparound(False)
def long_hash(const int64_t[::1] values, int64_t[::1] out):
    cdef Py_ssize_t i, n = values.shape[0]
    if out.shape[0] < n:
        return -4
    with nogil:
        for i in range(n):
            out[i] = _long_hash(values[i])
    return n


cdef inline int64_t _probe(int64_t h, int i, int64_t num_bits) noexcept nogil:
    cdef int32_t h1 = <int32_t> h
    cdef int32_t h2 = <int32_t> (<uint64_t> h >> 32)
    cdef int32_t c = <int32_t> (<uint32_t> h1 + <uint32_t> i * <uint32_t> h2)
    if c < 0:
        c = ~c
    return c % num_bits


@cython.boundscheck(False)
@cython.wraparound(False)
def bloom_set(const int64_t[::1] hashes, int k, int64_t num_bits, uint8_t[::1] bits):
    cdef Py_ssize_t j, n = hashes.shape[0]
    cdef int i
    cdef int64_t p
    if k < 1 or num_bits < 1 or bits.shape[0] * 8 < num_bits:
        return -4
    with nogil:
        for j in range(n):
            for i in range(1, k + 1):
                p = _probe(hashes[j], i, num_bits)
                bits[p >> 3] |= <uint8_t> (1 << (p & 7))
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def bloom_test(const int64_t[::1] hashes, int k, int64_t num_bits, const uint8_t[::1] bits,
               uint8_t[::1] out):
    cdef Py_ssize_t j, n = hashes.shape[0], hits = 0
    cdef int i
    cdef int64_t p
    cdef uint8_t ok
    if k < 1 or num_bits < 1 or bits.shape[0] * 8 < num_bits or out.shape[0] < n:
        return -4
    with nogil:
        for j in range(n):
            ok = 1
            for i in range(1, k + 1):
                p = _probe(hashes[j], i, num_bits)
                if not (bits[p >> 3] >> (p & 7)) & 1:
                    ok = 0
                    break
            out[j] = ok
            hits += ok
    return hits


# ---------------------------------------------------------------- CRC-32 (the zlib / ISO-HDLC polynomial)
# Where the processor multiplies without carries (PCLMULQDQ), the bytes are folded 64 at a time: four 128-bit
# lanes, each multiplied by x^(512 +- 32) mod P and added to the next 64 bytes; the lanes are then folded into
# one (x^(128 +- 32) mod P), 16 bytes at a time to the last whole 16, and the 128 bits reduced to 32 (x^64 mod P,
# then Barrett's reduction by P and floor(x^64 / P)). Where it also has the 512-bit form (VPCLMULQDQ with
# AVX-512), inputs of 256 bytes or more are first folded 256 at a time in four 512-bit registers
# (x^(2048 +- 32) mod P) and the four folded into one (x^(512 +- 32) mod P), whose 128-bit lanes the steps above
# take on. Every constant is in the bit-reflected form the reflected CRC works in, shifted left by one. The last
# 15 bytes or fewer, and every input elsewhere, go through zlib.
cdef extern from *:
    """
    #if PE_X86_VECTOR
    #define PE_K512_HI 0x1c6e41596LL
    #define PE_K512_LO 0x154442bd4LL
    /* one 128-bit lane a folded forward over d bits and added to b: k holds x^(d - 32), x^(d + 32) mod P */
    __attribute__((target("pclmul,sse4.1")))
    static inline __m128i pe_fold128(__m128i a, __m128i k, __m128i b) {
        return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x11), _mm_clmulepi64_si128(a, k, 0x00)), b);
    }
    /* the four lanes' state (64 bytes at p and on still to fold, n of them, a multiple of 16) to the CRC register */
    __attribute__((target("pclmul,sse4.1")))
    static inline uint32_t pe_crc32_finish(__m128i a0, __m128i a1, __m128i a2, __m128i a3, const uint8_t* p,
                                           Py_ssize_t n) {
        const __m128i k512 = _mm_set_epi64x(PE_K512_HI, PE_K512_LO);
        const __m128i k128 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
        const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124LL);
        const __m128i barrett = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL);
        const __m128i low32 = _mm_set_epi32(0, -1, 0, -1);
        __m128i t;
        for (; n >= 64; p += 64, n -= 64) {
            a0 = pe_fold128(a0, k512, _mm_loadu_si128((const __m128i*)p));
            a1 = pe_fold128(a1, k512, _mm_loadu_si128((const __m128i*)(p + 16)));
            a2 = pe_fold128(a2, k512, _mm_loadu_si128((const __m128i*)(p + 32)));
            a3 = pe_fold128(a3, k512, _mm_loadu_si128((const __m128i*)(p + 48)));
        }
        /* four lanes into one, then 16 bytes at a time */
        a0 = pe_fold128(pe_fold128(pe_fold128(a0, k128, a1), k128, a2), k128, a3);
        for (; n >= 16; p += 16, n -= 16)
            a0 = pe_fold128(a0, k128, _mm_loadu_si128((const __m128i*)p));
        /* 128 bits to 64: the low half times x^(128 - 32) mod P onto the high half, then the low 32 bits of
           that times x^64 mod P onto the rest */
        a0 = _mm_xor_si128(_mm_srli_si128(a0, 8), _mm_clmulepi64_si128(a0, k128, 0x10));
        a0 = _mm_xor_si128(_mm_srli_si128(a0, 4), _mm_clmulepi64_si128(_mm_and_si128(a0, low32), k64, 0x00));
        /* Barrett: q = (low 32 bits * floor(x^64 / P)) low 32 bits; the remainder is a0 + q * P */
        t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(a0, low32), barrett, 0x10), low32);
        a0 = _mm_xor_si128(a0, _mm_clmulepi64_si128(t, barrett, 0x00));
        return (uint32_t)_mm_extract_epi32(a0, 1);
    }
    /* n >= 64, a multiple of 16; crc and the result are the CRC's register (not inverted) */
    __attribute__((target("pclmul,sse4.1")))
    static uint32_t pe_crc32_fold(const uint8_t* p, Py_ssize_t n, uint32_t crc) {
        __m128i a0 = _mm_xor_si128(_mm_loadu_si128((const __m128i*)p), _mm_cvtsi32_si128((int)crc));
        return pe_crc32_finish(a0, _mm_loadu_si128((const __m128i*)(p + 16)),
                               _mm_loadu_si128((const __m128i*)(p + 32)), _mm_loadu_si128((const __m128i*)(p + 48)),
                               p + 64, n - 64);
    }
    __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")))
    static inline __m512i pe_fold512(__m512i a, __m512i k, __m512i b) {
        return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x11), _mm512_clmulepi64_epi128(a, k, 0x00),
                                         b, 0x96);
    }
    /* pe_crc32_fold for n >= 256 */
    __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")))
    static uint32_t pe_crc32_fold_wide(const uint8_t* p, Py_ssize_t n, uint32_t crc) {
        const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(0x1322d1430LL, 0x11542778aLL));
        const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(PE_K512_HI, PE_K512_LO));
        __m512i z0 = _mm512_xor_si512(_mm512_loadu_si512((const void*)p),
                                      _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
        __m512i z1 = _mm512_loadu_si512((const void*)(p + 64));
        __m512i z2 = _mm512_loadu_si512((const void*)(p + 128));
        __m512i z3 = _mm512_loadu_si512((const void*)(p + 192));
        for (p += 256, n -= 256; n >= 256; p += 256, n -= 256) {
            z0 = pe_fold512(z0, k2048, _mm512_loadu_si512((const void*)p));
            z1 = pe_fold512(z1, k2048, _mm512_loadu_si512((const void*)(p + 64)));
            z2 = pe_fold512(z2, k2048, _mm512_loadu_si512((const void*)(p + 128)));
            z3 = pe_fold512(z3, k2048, _mm512_loadu_si512((const void*)(p + 192)));
        }
        /* the four registers into one: the state of four 128-bit lanes, 64 bytes apart */
        z3 = pe_fold512(pe_fold512(pe_fold512(z0, k512, z1), k512, z2), k512, z3);
        return pe_crc32_finish(_mm512_extracti32x4_epi32(z3, 0), _mm512_extracti32x4_epi32(z3, 1),
                               _mm512_extracti32x4_epi32(z3, 2), _mm512_extracti32x4_epi32(z3, 3), p, n);
    }
    #else
    /* never called: without carry-less multiplication the switch stays off (these keep the module compiling) */
    static uint32_t pe_crc32_fold(const uint8_t* p, Py_ssize_t n, uint32_t crc) {
        (void)p; (void)n;
        return crc;
    }
    static uint32_t pe_crc32_fold_wide(const uint8_t* p, Py_ssize_t n, uint32_t crc) {
        (void)p; (void)n;
        return crc;
    }
    #endif
    """
    uint32_t pe_crc32_fold(const uint8_t* p, Py_ssize_t n, uint32_t crc) noexcept nogil
    uint32_t pe_crc32_fold_wide(const uint8_t* p, Py_ssize_t n, uint32_t crc) noexcept nogil

cdef bint _PCLMUL_OK = pe_pclmul_available()
cdef bint _pclmul = _PCLMUL_OK
cdef bint _WIDE_OK = pe_vpclmul_available()
cdef bint _wide = _WIDE_OK


def vector_paths(enabled=None, wide=None):
    """Whether ``crc32`` folds with carry-less multiplication (only where the processor has it). ``enabled``: turn
    it on or off (on only where available); ``wide``: the same for its 512-bit form (inputs of 256 bytes or more);
    for testing every path. Returns the setting of ``enabled`` before the call."""
    global _pclmul, _wide
    before = _pclmul
    if enabled is not None:
        _pclmul = bool(enabled) and _PCLMUL_OK
    if wide is not None:
        _wide = bool(wide) and _WIDE_OK
    return before


@cython.boundscheck(False)
@cython.wraparound(False)
def crc32(data, value=0):
    """``zlib.crc32(data, value)``: the CRC-32 of ``data`` (any contiguous buffer, read as bytes), continuing
    from ``value`` (taken modulo 2**32, as zlib takes it)."""
    cdef const uint8_t[::1] b
    cdef Py_ssize_t n, head = 0
    cdef uint32_t crc = <uint32_t>(value & 0xFFFFFFFF)
    try:
        b = data
    except (TypeError, ValueError):     # a buffer of another item format (a signed-byte Arrow buffer, int64s)
        b = memoryview(data).cast("B")
    n = b.shape[0]
    if _pclmul and n >= 64:
        head = n & ~(<Py_ssize_t>15)
        with nogil:
            if _wide and head >= 256:
                crc = ~pe_crc32_fold_wide(&b[0], head, ~crc)
            else:
                crc = ~pe_crc32_fold(&b[0], head, ~crc)
        if head == n:
            return crc
    return _zlib_crc32(b[head:], crc)
