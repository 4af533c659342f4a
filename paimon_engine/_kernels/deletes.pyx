# Delete-application kernels: position deletes as keep-masks, merging sorted
# position arrays, and the hash side of the equality-delete anti-join.
#
# Hashes are 64-bit and identical in the pure-Python twin (tests compare them):
#   mix(x)      = splitmix64 finalizer
#   combine     = mix(h ^ (v * K1 + K2 + (h << 6) + (h >> 2)))   (all mod 2**64)
#   int value v = mix(v) (as uint64), null = NULL_HASH
#   bytes       = h = FNV_OFFSET ^ len; per 8-byte little-endian word w (the tail zero-padded):
#                 h = rotl(h ^ w, 29) * K1; then mix(h)
# A hash match is only a candidate: the caller verifies values.
cimport cython
from libc.stdint cimport int64_t, int32_t, uint32_t, uint64_t, uint8_t, INT64_MAX
from libc.string cimport memcpy
from libc.stdlib cimport malloc, free

from paimon_engine._kernels.bytecopy cimport copy_value
from paimon_engine._kernels.cpu cimport pe_avx512_available

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define PE_PREFETCH(p) __builtin_prefetch((const void *)(p))
    #else
    #define PE_PREFETCH(p) ((void)(p))
    #endif
    """
    void PE_PREFETCH(const void* p) noexcept nogil

cdef uint64_t K1 = 0x9E3779B97F4A7C15ULL
cdef uint64_t K2 = 0x632BE59BD9B4E019ULL
cdef uint64_t NULL_HASH = 0x5BD1E9955BD1E995ULL
cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    x ^= x >> 30
    x *= 0xBF58476D1CE4E5B9ULL
    x ^= x >> 27
    x *= 0x94D049BB133111EBULL
    x ^= x >> 31
    return x


cdef inline uint64_t _rotl(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _combine(uint64_t h, uint64_t v) noexcept nogil:
    return _mix(h ^ (v * K1 + K2 + (h << 6) + (h >> 2)))


@cython.boundscheck(False)
@cython.wraparound(False)
def mask_positions(const int64_t[::1] positions, int64_t start, int64_t count, uint8_t[::1] keep):
    """Clear keep[p - start] for every p in ``positions`` (sorted ascending)
    with start <= p < start + count. Returns how many flags went from 1 to 0,
    or -4 if ``keep`` is shorter than ``count``."""
    cdef Py_ssize_t n = positions.shape[0]
    cdef Py_ssize_t lo = 0, hi = n, mid, i
    cdef int64_t p, stop
    cdef Py_ssize_t cleared = 0
    if count < 0 or keep.shape[0] < count:
        return -4
    if n == 0 or count == 0:
        return 0
    stop = start + count
    with nogil:
        while lo < hi:
            mid = (lo + hi) >> 1
            if positions[mid] < start:
                lo = mid + 1
            else:
                hi = mid
        i = lo
        while i < n:
            p = positions[i]
            if p >= stop:
                break
            if p >= start and keep[p - start]:
                keep[p - start] = 0
                cleared += 1
            i += 1
    return cleared


@cython.boundscheck(False)
@cython.wraparound(False)
def merge_sorted_unique(const int64_t[::1] a, const int64_t[::1] b, int64_t[::1] out):
    """Merge two ascending arrays into ``out`` without duplicates (duplicates
    inside either input are dropped too). Returns the count written, or -4 if
    ``out`` is shorter than len(a) + len(b)."""
    cdef Py_ssize_t na = a.shape[0], nb = b.shape[0]
    cdef Py_ssize_t i = 0, j = 0, k = 0
    cdef int64_t v
    if out.shape[0] < na + nb:
        return -4
    with nogil:
        while i < na or j < nb:
            if j >= nb or (i < na and a[i] <= b[j]):
                v = a[i]
                i += 1
            else:
                v = b[j]
                j += 1
            if k == 0 or out[k - 1] != v:
                out[k] = v
                k += 1
    return k


@cython.boundscheck(False)
@cython.wraparound(False)
def is_sorted(const int64_t[::1] values, bint strict=False):
    """1 if ``values`` is ascending (non-strictly; with ``strict``, strictly: no value twice), else 0."""
    cdef Py_ssize_t i, n = values.shape[0]
    cdef int ok = 1
    with nogil:
        if strict:
            for i in range(1, n):
                if values[i] <= values[i - 1]:
                    ok = 0
                    break
        else:
            for i in range(1, n):
                if values[i] < values[i - 1]:
                    ok = 0
                    break
    return ok


@cython.boundscheck(False)
@cython.wraparound(False)
def hash_int64(const int64_t[::1] values, const uint8_t[::1] valid, uint64_t[::1] hashes, bint combine):
    """hashes[i] = hash of values[i] (NULL_HASH where valid[i] == 0), folded
    into the previous hashes[i] if ``combine``. ``valid`` may be empty (no
    nulls). Returns the row count, or -4 on short buffers."""
    cdef Py_ssize_t i, n = values.shape[0]
    cdef bint has_valid = valid.shape[0] > 0
    cdef uint64_t h
    if hashes.shape[0] < n or (has_valid and valid.shape[0] < n):
        return -4
    with nogil:
        for i in range(n):
            if has_valid and valid[i] == 0:
                h = NULL_HASH
            else:
                h = _mix(<uint64_t>values[i])
            hashes[i] = _combine(hashes[i], h) if combine else h
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def hash_binary(const int64_t[::1] offsets, const uint8_t[::1] data, const uint8_t[::1] valid,
                uint64_t[::1] hashes, bint combine):
    """As hash_int64 for variable-length values: value i is
    data[offsets[i]:offsets[i+1]]. Returns the row count, -4 on short buffers,
    -5 (BAD_VALUE) if offsets decrease or run past ``data``."""
    cdef Py_ssize_t i, n = offsets.shape[0] - 1
    cdef bint has_valid = valid.shape[0] > 0
    cdef int64_t a, b, j, k, size = data.shape[0]
    cdef uint64_t h, w
    cdef int bad = 0
    if n < 0:
        return 0
    if hashes.shape[0] < n or (has_valid and valid.shape[0] < n):
        return -4
    with nogil:
        for i in range(n):
            a = offsets[i]
            b = offsets[i + 1]
            if a < 0 or b < a or b > size:
                bad = 1
                break
    if bad:
        return -5
    with nogil:
        for i in range(n):
            if has_valid and valid[i] == 0:
                h = NULL_HASH
            else:
                a = offsets[i]
                b = offsets[i + 1]
                h = FNV_OFFSET ^ <uint64_t>(b - a)
                j = a
                while j + 8 <= b:
                    memcpy(&w, &data[j], 8)
                    h = _rotl(h ^ w, 29) * K1
                    j += 8
                if j < b:
                    w = 0
                    k = 0
                    while j + k < b:
                        w |= (<uint64_t>data[j + k]) << (8 * k)
                        k += 1
                    h = _rotl(h ^ w, 29) * K1
                h = _mix(h)
            hashes[i] = _combine(hashes[i], h) if combine else h
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def build_hash_table(const uint64_t[::1] hashes, int64_t[::1] slots):
    """Open addressing: insert row i at the first free slot from
    hashes[i] & (len(slots) - 1). ``slots`` must be a power of two longer
    than ``hashes`` and filled with -1. Rows with a hash already present are
    not inserted again (the first row stands for its hash). Returns the number
    of distinct hashes, or -4 if ``slots`` is too small / not a power of two."""
    cdef Py_ssize_t n = hashes.shape[0], m = slots.shape[0]
    cdef Py_ssize_t i, s, distinct = 0, steps
    cdef uint64_t mask, h
    cdef int64_t r
    cdef int bad = 0
    if m <= n or (m & (m - 1)) != 0:
        return -4
    mask = <uint64_t>(m - 1)
    with nogil:
        for i in range(n):
            if bad:
                break
            h = hashes[i]
            s = <Py_ssize_t>(h & mask)
            steps = 0
            while True:
                if steps >= m:
                    bad = 1
                    break
                steps += 1
                r = slots[s]
                if r < 0:
                    slots[s] = i
                    distinct += 1
                    break
                if r < n and hashes[r] == h:
                    break
                s = (s + 1) & <Py_ssize_t>mask
    if bad:
        return -5
    return distinct


@cython.boundscheck(False)
@cython.wraparound(False)
def build_filter(const uint64_t[::1] hashes, uint8_t[::1] bits):
    """Set bit (h >> 32) mod nbits of ``bits`` for every hash: a one-hash
    Bloom filter that lets probes skip most misses with one cache-resident
    test. len(bits) * 8 must be a power of two. Returns the number of hashes,
    or -4 if ``bits`` is empty or not a power-of-two size."""
    cdef Py_ssize_t n = hashes.shape[0], nb = bits.shape[0], i
    cdef uint64_t nbits = <uint64_t>nb * 8, idx
    if nb == 0 or (nbits & (nbits - 1)) != 0:
        return -4
    with nogil:
        for i in range(n):
            idx = (hashes[i] >> 32) & (nbits - 1)
            bits[idx >> 3] |= <uint8_t>(1 << (idx & 7))
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def probe_hash_table(const uint64_t[::1] build_hashes, const int64_t[::1] slots,
                     const uint64_t[::1] probe_hashes, int64_t[::1] out, const uint8_t[::1] bits):
    """out[i] = the build row standing for probe_hashes[i], or -1. ``bits`` is
    the build_filter of the build hashes (or empty: no filter). Returns how
    many probe rows found a candidate, or -4 on bad buffers."""
    cdef Py_ssize_t n = probe_hashes.shape[0], m = slots.shape[0], nb = build_hashes.shape[0]
    cdef Py_ssize_t i, s, found = 0, steps
    cdef uint64_t mask, h, idx
    cdef uint64_t nbits = <uint64_t>bits.shape[0] * 8
    cdef bint use_filter = bits.shape[0] > 0
    cdef int64_t r
    if out.shape[0] < n or m == 0 or (m & (m - 1)) != 0:
        return -4
    if use_filter and (nbits & (nbits - 1)) != 0:
        return -4
    mask = <uint64_t>(m - 1)
    with nogil:
        for i in range(n):
            h = probe_hashes[i]
            out[i] = -1
            if use_filter:
                idx = (h >> 32) & (nbits - 1)
                if not ((bits[idx >> 3] >> (idx & 7)) & 1):
                    continue
            s = <Py_ssize_t>(h & mask)
            steps = 0
            while steps < m:
                r = slots[s]
                if r < 0:
                    break
                if r < nb and build_hashes[r] == h:
                    out[i] = r
                    found += 1
                    break
                s = (s + 1) & <Py_ssize_t>mask
                steps += 1
    return found


cdef inline Py_ssize_t _probe_one(uint64_t h, const uint64_t* build_hashes, Py_ssize_t nb,
                                   const int64_t* slots, Py_ssize_t m, const uint8_t* bits,
                                   uint64_t nbits) noexcept nogil:
    """The build row standing for hash ``h``, or -1 (``bits``: the build filter, or NULL)."""
    cdef uint64_t idx
    cdef Py_ssize_t s, steps = 0
    cdef int64_t r
    if bits != NULL:
        idx = (h >> 32) & (nbits - 1)
        if not ((bits[idx >> 3] >> (idx & 7)) & 1):
            return -1
    s = <Py_ssize_t>(h & <uint64_t>(m - 1))
    while steps < m:
        r = slots[s]
        if r < 0:
            return -1
        if r < nb and build_hashes[r] == h:
            return <Py_ssize_t>r
        s = (s + 1) & (m - 1)
        steps += 1
    return -1


cdef inline int _probe_args_ok(Py_ssize_t n, Py_ssize_t m, Py_ssize_t nbytes, Py_ssize_t rows_len,
                               Py_ssize_t cands_len) noexcept nogil:
    cdef uint64_t nbits = <uint64_t>nbytes * 8
    if rows_len < n or cands_len < n or m == 0 or (m & (m - 1)) != 0:
        return 0
    if nbytes > 0 and (nbits & (nbits - 1)) != 0:
        return 0
    return 1


cdef enum:
    PROBE_BLOCK = 32   # rows probed per block (their filter bytes and slots are prefetched first)


cdef Py_ssize_t _probe_block(const uint64_t* hb, Py_ssize_t cnt, Py_ssize_t base, const uint64_t* build_hashes,
                             Py_ssize_t nb, const int64_t* slots, Py_ssize_t m, const uint8_t* bits,
                             uint64_t nbits, int64_t* rows, int64_t* cands, Py_ssize_t found) noexcept nogil:
    """Probe the hashes hb[0..cnt) of rows base.. : the filter bytes of the block were prefetched by the caller;
    the rows passing the filter get their first slot prefetched, then are probed. Returns the new hit count."""
    cdef Py_ssize_t j, r, npass = 0
    cdef Py_ssize_t passing[PROBE_BLOCK]
    cdef uint64_t idx
    if bits != NULL:
        for j in range(cnt):
            idx = (hb[j] >> 32) & (nbits - 1)
            if (bits[idx >> 3] >> (idx & 7)) & 1:
                passing[npass] = j
                npass += 1
                PE_PREFETCH(&slots[<Py_ssize_t>(hb[j] & <uint64_t>(m - 1))])
    else:
        for j in range(cnt):
            passing[npass] = j
            npass += 1
    for j in range(npass):
        r = _probe_one(hb[passing[j]], build_hashes, nb, slots, m, NULL, 0)
        if r >= 0:
            rows[found] = base + passing[j]
            cands[found] = r
            found += 1
    return found


@cython.boundscheck(False)
@cython.wraparound(False)
def probe_rows(const uint64_t[::1] build_hashes, const int64_t[::1] slots, const uint64_t[::1] probe_hashes,
               const uint8_t[::1] bits, int64_t[::1] rows, int64_t[::1] cands):
    """probe_hash_table written compactly: for every probe row i that finds a candidate (ascending i),
    rows[k] = i and cands[k] = the build row standing for probe_hashes[i]. Only the hits are written, so
    untouched output pages are never faulted in. Rows go in blocks (filter bytes, then the slots of the rows
    passing the filter, prefetched ahead of use). Returns the number of hits, or -4 on bad buffers."""
    cdef Py_ssize_t n = probe_hashes.shape[0], m = slots.shape[0], nb = build_hashes.shape[0]
    cdef Py_ssize_t base, j, cnt, found = 0
    cdef uint64_t nbits = <uint64_t>bits.shape[0] * 8
    cdef const uint8_t* bp = &bits[0] if bits.shape[0] > 0 else NULL
    cdef uint64_t hb[PROBE_BLOCK]
    if not _probe_args_ok(n, m, bits.shape[0], rows.shape[0], cands.shape[0]):
        return -4
    if n == 0 or nb == 0:
        return 0
    with nogil:
        base = 0
        while base < n:
            cnt = min(<Py_ssize_t>PROBE_BLOCK, n - base)
            for j in range(cnt):
                hb[j] = probe_hashes[base + j]
                if bp != NULL:
                    PE_PREFETCH(&bp[((hb[j] >> 32) & (nbits - 1)) >> 3])
            found = _probe_block(hb, cnt, base, &build_hashes[0], nb, &slots[0], m, bp, nbits,
                                 &rows[0], &cands[0], found)
            base += cnt
    return found


@cython.boundscheck(False)
@cython.wraparound(False)
def probe_int64_rows(const int64_t[::1] values, const uint8_t[::1] valid, const uint64_t[::1] build_hashes,
                     const int64_t[::1] slots, const uint8_t[::1] bits, int64_t[::1] rows, int64_t[::1] cands):
    """probe_rows for one int64 key column, hashed on the fly as hash_int64 does (NULL_HASH where
    valid[i] == 0; ``valid`` may be empty): no hash array is written. Returns the number of hits, or -4 on
    bad buffers."""
    cdef Py_ssize_t n = values.shape[0], m = slots.shape[0], nb = build_hashes.shape[0]
    cdef Py_ssize_t base, j, cnt, found = 0
    cdef bint has_valid = valid.shape[0] > 0
    cdef uint64_t nbits = <uint64_t>bits.shape[0] * 8
    cdef const uint8_t* bp = &bits[0] if bits.shape[0] > 0 else NULL
    cdef uint64_t hb[PROBE_BLOCK]
    if not _probe_args_ok(n, m, bits.shape[0], rows.shape[0], cands.shape[0]):
        return -4
    if has_valid and valid.shape[0] < n:
        return -4
    if n == 0 or nb == 0:
        return 0
    with nogil:
        base = 0
        while base < n:
            cnt = min(<Py_ssize_t>PROBE_BLOCK, n - base)
            for j in range(cnt):
                if has_valid and valid[base + j] == 0:
                    hb[j] = NULL_HASH
                else:
                    hb[j] = _mix(<uint64_t>values[base + j])
                if bp != NULL:
                    PE_PREFETCH(&bp[((hb[j] >> 32) & (nbits - 1)) >> 3])
            found = _probe_block(hb, cnt, base, &build_hashes[0], nb, &slots[0], m, bp, nbits,
                                 &rows[0], &cands[0], found)
            base += cnt
    return found


# Where the processor has AVX-512 (F, BW, VL), probe_int64_bitmap tests eight values at a time: their offsets
# from ``lo`` compared with the span as one mask, the bitmap's 32-bit words holding their bits gathered (only
# for values inside the span), each word shifted by its bit, and the eight results stored as bytes. The gather
# reads whole words, so this path runs only when the bitmap's bytes reach the end of its last word (the set's
# own bitmap is padded so); a validity column, or any other bitmap, goes through the loop below. The choice is
# made once, when the module loads; vector_paths() tells it (and turns it off, for tests of the other path).
cdef extern from *:
    """
    #if PE_X86_VECTOR
    __attribute__((target("avx512f,avx512bw,avx512vl")))
    static Py_ssize_t pe_probe_bitmap_vector(const int64_t* v, Py_ssize_t n, int64_t lo, const uint8_t* bits,
                                             uint64_t span, uint8_t flip, uint8_t* out, Py_ssize_t* found) {
        Py_ssize_t i = 0, f = 0;
        __m512i vlo = _mm512_set1_epi64(lo), vspan = _mm512_set1_epi64((long long)span);
        __m256i one = _mm256_set1_epi32(1), low5 = _mm256_set1_epi32(31);
        __m128i flips = _mm_set1_epi8((char)flip);
        for (; i + 8 <= n; i += 8) {
            __m512i d = _mm512_sub_epi64(_mm512_loadu_si512((const void*)(v + i)), vlo);
            __mmask8 in = _mm512_cmplt_epu64_mask(d, vspan);
            __m256i w = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), in, _mm512_srli_epi64(d, 5),
                                                    (const void*)bits, 4);
            __m256i h = _mm256_and_si256(_mm256_srlv_epi32(w, _mm256_and_si256(_mm512_cvtepi64_epi32(d), low5)),
                                         one);
            f += __builtin_popcount((unsigned)_mm256_test_epi32_mask(h, h));
            _mm_storel_epi64((__m128i*)(out + i), _mm_xor_si128(_mm256_cvtepi32_epi8(h), flips));
        }
        *found += f;
        return i;
    }
    #else
    /* never called: without AVX-512 the vector switch stays off (this keeps the module compiling) */
    static Py_ssize_t pe_probe_bitmap_vector(const int64_t* v, Py_ssize_t n, int64_t lo, const uint8_t* bits,
                                             uint64_t span, uint8_t flip, uint8_t* out, Py_ssize_t* found) {
        (void)v; (void)n; (void)lo; (void)bits; (void)span; (void)flip; (void)out; (void)found;
        return 0;
    }
    #endif
    """
    Py_ssize_t pe_probe_bitmap_vector(const int64_t* v, Py_ssize_t n, int64_t lo, const uint8_t* bits,
                                      uint64_t span, uint8_t flip, uint8_t* out, Py_ssize_t* found) noexcept nogil

cdef bint _VECTOR_OK = pe_avx512_available()
cdef bint _vector = _VECTOR_OK


def vector_paths(enabled=None):
    """Whether ``probe_int64_bitmap`` and ``lookup_flags`` use their AVX-512 paths (only where the processor has it). ``enabled``: turn
    it on or off (on only where available), for testing both paths; returns the setting before the call."""
    global _vector
    before = _vector
    if enabled is not None:
        _vector = bool(enabled) and _VECTOR_OK
    return before


@cython.boundscheck(False)
@cython.wraparound(False)
def probe_int64_bitmap(const int64_t[::1] values, const uint8_t[::1] valid, int64_t lo, const uint8_t[::1] bits,
                       int64_t nbits, bint null_hit, bint miss, uint8_t[::1] out):
    """Exact membership of one int64 key column in a set given as a bitmap of its value range: value v is in
    the set when 0 <= v - lo < nbits and bit (v - lo) of ``bits`` (LSB first) is set; a null (valid[i] == 0,
    ``valid`` may be empty) is in it when ``null_hit``. out[i] = 1 for a row in the set and 0 for one outside
    it, or the other way round when ``miss`` (flags of the rows to keep). Returns the number of rows in the
    set, or -4 on bad buffers or a range [lo, lo + nbits) that leaves int64 (a value below ``lo`` would then
    wrap into it)."""
    cdef Py_ssize_t n = values.shape[0], i = 0, found = 0
    cdef bint has_valid = valid.shape[0] > 0
    cdef uint64_t d, span
    cdef uint8_t h, flip = 1 if miss else 0, nullf = (1 if null_hit else 0)
    if nbits < 0 or <uint64_t>bits.shape[0] * 8 < <uint64_t>nbits or out.shape[0] < n:
        return -4
    if nbits > 0 and lo > INT64_MAX - (nbits - 1):
        return -4
    if has_valid and valid.shape[0] < n:
        return -4
    span = <uint64_t>nbits
    if n == 0:
        return 0
    with nogil:
        if _vector and not has_valid and <uint64_t>bits.shape[0] >= 4 * ((span + 31) >> 5) and span:
            i = pe_probe_bitmap_vector(&values[0], n, lo, &bits[0], span, flip, &out[0], &found)
        for i in range(i, n):
            d = <uint64_t>values[i] - <uint64_t>lo
            h = 0
            if d < span:
                h = (bits[d >> 3] >> (d & 7)) & 1
            if has_valid and valid[i] == 0:
                h = nullf
            found += h
            out[i] = h ^ flip
    return found


@cython.boundscheck(False)
@cython.wraparound(False)
def equal_binary(const int64_t[::1] a_offsets, const uint8_t[::1] a_data, const int64_t[::1] a_rows,
                 const int64_t[::1] b_offsets, const uint8_t[::1] b_data, const int64_t[::1] b_rows,
                 uint8_t[::1] out):
    """out[i] = 1 if value a_rows[i] of (a_offsets, a_data) has the same bytes
    as value b_rows[i] of (b_offsets, b_data), else 0. Returns the number of
    equal pairs, -4 on short buffers, -5 if a row or an offset is out of range."""
    cdef Py_ssize_t n = a_rows.shape[0], i
    cdef Py_ssize_t na = a_offsets.shape[0] - 1, nb = b_offsets.shape[0] - 1
    cdef int64_t ra, rb, a0, a1, b0, b1, j
    cdef Py_ssize_t equal = 0
    cdef int bad = 0
    cdef uint8_t same
    if b_rows.shape[0] < n or out.shape[0] < n:
        return -4
    with nogil:
        for i in range(n):
            ra = a_rows[i]
            rb = b_rows[i]
            if ra < 0 or ra >= na or rb < 0 or rb >= nb:
                bad = 1
                break
            a0 = a_offsets[ra]
            a1 = a_offsets[ra + 1]
            b0 = b_offsets[rb]
            b1 = b_offsets[rb + 1]
            if a0 < 0 or a1 < a0 or a1 > a_data.shape[0] or b0 < 0 or b1 < b0 or b1 > b_data.shape[0]:
                bad = 1
                break
            same = 1 if (a1 - a0) == (b1 - b0) else 0
            j = 0
            while same and j < a1 - a0:
                if a_data[a0 + j] != b_data[b0 + j]:
                    same = 0
                j += 1
            out[i] = same
            equal += same
    if bad:
        return -5
    return equal


# ---------------------------------------------------------------- compaction
# The rows that survive deletes, as runs (start, length) of consecutive kept
# rows, copied run by run out of Arrow buffers: one memcpy per run for values
# and string bytes, a shifted copy for offsets, a bit copy for bitmaps.
ctypedef fused offset_t:
    int32_t
    int64_t


@cython.boundscheck(False)
@cython.wraparound(False)
def mask_runs(const uint8_t[::1] keep, int64_t[::1] starts, int64_t[::1] lengths):
    """Runs of non-zero flags in ``keep`` into ``starts``/``lengths`` (at most (n + 1) // 2 runs; one more
    than the zero flags). Returns the number of runs, or -4 if the outputs are too short."""
    cdef Py_ssize_t n = keep.shape[0], i = 0, s, k = 0
    cdef Py_ssize_t cap = min(starts.shape[0], lengths.shape[0])
    cdef uint64_t w
    with nogil:
        while i < n:
            # skip dropped rows, then kept rows, eight flags at a time where they agree
            while i + 8 <= n:
                memcpy(&w, &keep[i], 8)
                if w != 0:
                    break
                i += 8
            while i < n and not keep[i]:
                i += 1
            if i >= n:
                break
            s = i
            while i + 8 <= n:
                memcpy(&w, &keep[i], 8)
                if (w & 0x0101010101010101ULL) != 0x0101010101010101ULL:
                    break
                i += 8
            while i < n and keep[i]:
                i += 1
            if k >= cap:
                k = -4
                break
            starts[k] = s
            lengths[k] = i - s
            k += 1
    return k


@cython.boundscheck(False)
@cython.wraparound(False)
def position_runs(const int64_t[::1] positions, int64_t start, int64_t count, int64_t[::1] starts,
                  int64_t[::1] lengths):
    """Runs of the rows ``start .. start+count`` that are NOT in ``positions`` (ascending; repeats allowed),
    relative to ``start``, into ``starts``/``lengths`` (room for one more run than the positions in the range).
    Returns the number of runs, -4 on a negative range or short outputs, -5 if the positions are not sorted."""
    cdef Py_ssize_t n = positions.shape[0], lo = 0, hi = n, mid, k = 0
    cdef Py_ssize_t cap = min(starts.shape[0], lengths.shape[0])
    cdef int64_t cur = start, stop, p
    if start < 0 or count < 0 or start > INT64_MAX - count:
        return -4
    stop = start + count
    with nogil:
        while lo < hi:
            mid = lo + (hi - lo) // 2
            if positions[mid] < start:
                lo = mid + 1
            else:
                hi = mid
        while lo < n:
            p = positions[lo]
            if p >= stop:
                break
            if p < cur:
                if p != cur - 1:    # below the previous position: not sorted
                    k = -5
                    break
            else:
                if p > cur:
                    if k >= cap:
                        k = -4
                        break
                    starts[k] = cur - start
                    lengths[k] = p - cur
                    k += 1
                cur = p + 1
            lo += 1
        if k >= 0 and cur < stop:
            if k >= cap:
                k = -4
            else:
                starts[k] = cur - start
                lengths[k] = stop - cur
                k += 1
    return k


# Each copy kernel checks every run as it copies it (no separate pass over the runs): a bad run stops the
# copy and the call returns -4; what was copied before it is left in the output.
cdef inline bint _run_bad(int64_t s, int64_t n, Py_ssize_t rows) noexcept nogil:
    return s < 0 or n < 0 or s > rows or n > rows - s


@cython.boundscheck(False)
@cython.wraparound(False)
def take_runs_fixed_columns(list srcs, list widths, const int64_t[::1] starts, const int64_t[::1] lengths,
                            Py_ssize_t nruns, list outs):
    """Fixed-width values (``widths[c]`` bytes each): the runs of every ``srcs[c]`` one after another into
    ``outs[c]`` (uint8 arrays), all columns in one pass over the runs (for short runs the pass costs as much as
    the copies). Returns the rows copied, or -4 if a run lies outside a source, an output is too short, a width
    is not positive or the lists differ in length."""
    cdef Py_ssize_t ncols = len(srcs), c, r, rows = -1, room = -1, o = 0
    cdef int64_t s, n, w
    cdef const uint8_t[::1] sv
    cdef uint8_t[::1] ov
    cdef const uint8_t** sp
    cdef uint8_t** op
    cdef int64_t* wp
    cdef bint bad = 0
    if ncols != len(outs) or ncols != len(widths) or nruns < 0 or starts.shape[0] < nruns \
            or lengths.shape[0] < nruns:
        return -4
    if ncols == 0:
        return 0
    sp = <const uint8_t**>malloc(ncols * sizeof(uint8_t*))
    op = <uint8_t**>malloc(ncols * sizeof(uint8_t*))
    wp = <int64_t*>malloc(ncols * sizeof(int64_t))
    if sp == NULL or op == NULL or wp == NULL:
        free(sp)
        free(op)
        free(wp)
        raise MemoryError()
    try:
        for c in range(ncols):
            sv = srcs[c]
            ov = outs[c]
            w = widths[c]
            if w <= 0:
                return -4
            wp[c] = w
            sp[c] = &sv[0] if sv.shape[0] else NULL
            op[c] = &ov[0] if ov.shape[0] else NULL
            if rows < 0 or sv.shape[0] // w < rows:
                rows = sv.shape[0] // w
            if room < 0 or ov.shape[0] // w < room:
                room = ov.shape[0] // w
        with nogil:
            for r in range(nruns):
                s = starts[r]
                n = lengths[r]
                if _run_bad(s, n, rows) or n > room - o:
                    bad = 1
                    break
                if n:
                    for c in range(ncols):
                        memcpy(op[c] + o * wp[c], sp[c] + s * wp[c], n * wp[c])
                    o += n
    finally:
        free(sp)
        free(op)
        free(wp)
    return -4 if bad else o


@cython.boundscheck(False)
@cython.wraparound(False)
def runs_data_size(const offset_t[::1] offsets, const int64_t[::1] starts, const int64_t[::1] lengths,
                   Py_ssize_t nruns, Py_ssize_t data_len):
    """Bytes of string/binary data in the runs (``offsets`` has rows + 1 entries, relative to a data buffer
    of ``data_len`` bytes). Returns the size, or -4 if a run or an offset is out of range."""
    cdef Py_ssize_t r, rows = offsets.shape[0] - 1
    cdef int64_t size = 0, a, b, s, n
    if rows < 0 or nruns < 0 or starts.shape[0] < nruns or lengths.shape[0] < nruns:
        return -4
    with nogil:
        for r in range(nruns):
            s = starts[r]
            n = lengths[r]
            if _run_bad(s, n, rows):
                size = -4
                break
            a = offsets[s]
            b = offsets[s + n]
            if a < 0 or b < a or b > data_len:
                size = -4
                break
            size += b - a
    return size


@cython.boundscheck(False)
@cython.wraparound(False)
def take_runs_binary(const offset_t[::1] offsets, const uint8_t[::1] data, const int64_t[::1] starts,
                     const int64_t[::1] lengths, Py_ssize_t nruns, offset_t[::1] out_offsets,
                     uint8_t[::1] out_data):
    """String/binary values of the runs: ``out_offsets`` (rows + 1, from 0) and ``out_data``. Offsets inside a
    run must be non-decreasing (Arrow-valid input). Returns the rows copied, or -4 on a range error."""
    cdef Py_ssize_t r, i, rows = offsets.shape[0] - 1
    cdef int64_t a, b, d = 0, shift, s, n, o = 0
    cdef bint bad = 0
    cdef const offset_t* src
    cdef offset_t* dst
    if rows < 0 or nruns < 0 or starts.shape[0] < nruns or lengths.shape[0] < nruns or out_offsets.shape[0] < 1:
        return -4
    with nogil:
        out_offsets[0] = 0
        for r in range(nruns):
            s = starts[r]
            n = lengths[r]
            if _run_bad(s, n, rows) or n > out_offsets.shape[0] - 1 - o:
                bad = 1
                break
            a = offsets[s]
            b = offsets[s + n]
            if a < 0 or b < a or b > data.shape[0] or d + (b - a) > out_data.shape[0]:
                bad = 1
                break
            if b > a:
                memcpy(&out_data[d], &data[a], b - a)
            # offsets of the run, shifted to where its bytes now start (a plain loop the compiler vectorizes)
            shift = d - a
            src = &offsets[s + 1]
            dst = &out_offsets[o + 1]
            for i in range(n):
                dst[i] = <offset_t>(src[i] + shift)
            o += n
            d += b - a
    return -4 if bad else o


@cython.boundscheck(False)
@cython.wraparound(False)
def take_runs_bits(const uint8_t[::1] bits, Py_ssize_t bit_offset, const int64_t[::1] starts,
                   const int64_t[::1] lengths, Py_ssize_t nruns, uint8_t[::1] out):
    """LSB-first bitmap (``bits`` from bit ``bit_offset``): the runs' bits one after another into ``out``
    (zeroed by the caller). Returns the number of set bits copied, or -4 on a range error."""
    cdef Py_ssize_t r, i, rows, room
    cdef int64_t s, n, o = 0, src
    cdef Py_ssize_t ones = 0
    cdef bint bad = 0
    if bit_offset < 0 or nruns < 0 or starts.shape[0] < nruns or lengths.shape[0] < nruns:
        return -4
    rows = bits.shape[0] * 8 - bit_offset
    room = out.shape[0] * 8
    with nogil:
        for r in range(nruns):
            s = starts[r]
            n = lengths[r]
            if _run_bad(s, n, rows) or n > room - o:
                bad = 1
                break
            src = bit_offset + s
            for i in range(n):
                if bits[(src + i) >> 3] & (1 << ((src + i) & 7)):
                    out[o >> 3] |= <uint8_t>(1 << (o & 7))
                    ones += 1
                o += 1
    return -4 if bad else ones


# ---------------------------------------------------------------- dictionary columns
# A dictionary-encoded string/binary column (int32 indices into a small dictionary, as decoded from Parquet
# dictionary pages) becomes a plain column by copying each selected row's dictionary value; with runs, only the
# kept rows are copied, so dropping deleted rows costs nothing extra. Null rows (``valid`` bit clear) become
# empty values and their indices are not looked at.

cdef inline bint _is_valid(const uint8_t* valid, Py_ssize_t bit) noexcept nogil:
    return (valid[bit >> 3] >> (bit & 7)) & 1


cdef inline bint _dict_value(const offset_t* dict_offsets, Py_ssize_t ndict, Py_ssize_t dlen, int32_t idx,
                             int64_t* a, int64_t* b) noexcept nogil:
    """The byte range [a, b) of dictionary value ``idx``; false if the index or the offsets are out of range."""
    if idx < 0 or idx >= ndict:
        return 0
    a[0] = dict_offsets[idx]
    b[0] = dict_offsets[idx + 1]
    return a[0] >= 0 and b[0] >= a[0] and b[0] <= dlen


cdef inline bint _dict_args_ok(Py_ssize_t ndict, Py_ssize_t rows, Py_ssize_t valid_len, Py_ssize_t valid_offset,
                               Py_ssize_t nstarts, Py_ssize_t nlengths, Py_ssize_t nruns) noexcept nogil:
    return not (ndict < 0 or nruns < 0 or nstarts < nruns or nlengths < nruns or valid_offset < 0
                or (valid_len > 0 and valid_len * 8 - valid_offset < rows))


@cython.boundscheck(False)
@cython.wraparound(False)
def dictionary_data_size(const offset_t[::1] dict_offsets, Py_ssize_t dict_data_len, const int32_t[::1] indices,
                         const uint8_t[::1] valid, Py_ssize_t valid_offset, const int64_t[::1] starts,
                         const int64_t[::1] lengths, Py_ssize_t nruns):
    """Bytes of the dictionary values of the rows in the runs (``valid``: LSB-first bitmap from bit
    ``valid_offset``, or empty when every row is valid). Returns the size, -4 if a run is out of range or
    ``valid`` is short, -5 if an index or a dictionary offset is out of range."""
    cdef Py_ssize_t r, i, rows = indices.shape[0], ndict = dict_offsets.shape[0] - 1
    cdef int64_t size = 0, s, n, a, b
    cdef bint has_valid = valid.shape[0] > 0
    if not _dict_args_ok(ndict, rows, valid.shape[0], valid_offset, starts.shape[0], lengths.shape[0], nruns):
        return -4
    with nogil:
        for r in range(nruns):
            s = starts[r]
            n = lengths[r]
            if _run_bad(s, n, rows):
                size = -4
                break
            for i in range(s, s + n):
                if has_valid and not _is_valid(&valid[0], valid_offset + i):
                    continue
                if not _dict_value(&dict_offsets[0], ndict, dict_data_len, indices[i], &a, &b):
                    size = -5
                    break
                size += b - a
            if size < 0:
                break
    return size


cdef inline bint _dictionary_ok(const offset_t* dict_offsets, Py_ssize_t ndict, Py_ssize_t dlen,
                                int64_t* longest) noexcept nogil:
    """The dictionary's offsets rise from >= 0 to <= ``dlen``; ``longest``: its longest value."""
    cdef Py_ssize_t i
    cdef int64_t a, b, m = 0
    if ndict == 0:
        longest[0] = 0
        return 1
    if dict_offsets[0] < 0:
        return 0
    for i in range(ndict):
        a = dict_offsets[i]
        b = dict_offsets[i + 1]
        if b < a:
            return 0
        if b - a > m:
            m = b - a
    longest[0] = m
    return dict_offsets[ndict] <= dlen


@cython.boundscheck(False)
@cython.wraparound(False)
def take_runs_dictionary(const offset_t[::1] dict_offsets, const uint8_t[::1] dict_data,
                         const int32_t[::1] indices, const uint8_t[::1] valid, Py_ssize_t valid_offset,
                         const int64_t[::1] starts, const int64_t[::1] lengths, Py_ssize_t nruns,
                         offset_t[::1] out_offsets, uint8_t[::1] out_data):
    """The dictionary values of the rows in the runs, one after another: ``out_offsets`` (rows + 1, from 0) and
    ``out_data`` (sized by ``dictionary_data_size``, or longer). Returns the rows written, -4 on a range error or
    short outputs, -5 if an index or a dictionary offset is out of range."""
    cdef Py_ssize_t r, i, rows = indices.shape[0], ndict = dict_offsets.shape[0] - 1
    cdef Py_ssize_t dlen = dict_data.shape[0], room = out_data.shape[0]
    cdef int64_t s, n, a, b, o = 0, d = 0, longest = 0
    cdef int32_t idx
    cdef int bad = 0
    cdef bint has_valid = valid.shape[0] > 0
    # raw pointers: stores through the byte pointer of the output would otherwise make the compiler reload every
    # memoryview's data pointer and the loop's variables after each copy
    cdef const offset_t* doff
    cdef const uint8_t* dd
    cdef const int32_t* ix
    cdef const uint8_t* vb
    cdef offset_t* oo
    cdef uint8_t* od
    if not _dict_args_ok(ndict, rows, valid.shape[0], valid_offset, starts.shape[0], lengths.shape[0], nruns) \
            or out_offsets.shape[0] < 1:
        return -4
    doff = &dict_offsets[0]
    dd = &dict_data[0] if dlen else NULL
    ix = &indices[0] if rows else NULL
    vb = &valid[0] if has_valid else NULL
    oo = &out_offsets[0]
    od = &out_data[0] if room else NULL
    with nogil:
        if not _dictionary_ok(doff, ndict, dlen, &longest):
            bad = -5
        oo[0] = 0
        for r in range(nruns):
            if bad:
                break
            s = starts[r]
            n = lengths[r]
            if _run_bad(s, n, rows) or n > out_offsets.shape[0] - 1 - o:
                bad = -4
                break
            if not has_valid and n * longest <= room - d and dlen >= 16:
                # room for the longest value in every row: no room test per row
                for i in range(s, s + n):
                    idx = ix[i]
                    if <uint32_t>idx >= <uint32_t>ndict:
                        bad = -5
                        break
                    a = doff[idx]
                    b = doff[idx + 1]
                    copy_value(od + d, room - d, dd + a, dlen - a, b - a)
                    d += b - a
                    o += 1
                    oo[o] = <offset_t>d
                continue
            for i in range(s, s + n):
                o += 1
                if has_valid and not _is_valid(vb, valid_offset + i):
                    oo[o] = <offset_t>d
                    continue
                idx = ix[i]
                if <uint32_t>idx >= <uint32_t>ndict:
                    bad = -5
                    break
                a = doff[idx]
                b = doff[idx + 1]
                if b - a > room - d:
                    bad = -4
                    break
                copy_value(od + d, room - d, dd + a, dlen - a, b - a)
                d += b - a
                oo[o] = <offset_t>d
    return bad if bad else o


# lookup_flags' vector path: a table of at most 1,024 flags held as a bitmap in two 512-bit registers; for 16
# indices at a time, a two-register permute picks each index's 32-bit word of the bitmap (index >> 5), a shift
# by index & 31 brings its bit down, and a test makes the 16 flags a mask, stored as 16 bytes of 0 or 1. Indices
# outside the table are found by one unsigned compare per group (their lookups mean nothing; the call fails).
cdef extern from *:
    """
    #if PE_X86_VECTOR
    __attribute__((target("avx512f,avx512bw,avx512vl")))
    static Py_ssize_t pe_lookup_flags_vector(const uint8_t* t, Py_ssize_t m, const int32_t* ix, Py_ssize_t n,
                                             uint8_t* o, int64_t* kept, uint32_t* bad) {
        uint32_t bits[32];
        Py_ssize_t i;
        int64_t k = 0;
        __mmask16 outside = 0;
        __m512i lo, hi, vm = _mm512_set1_epi32((int)m), v31 = _mm512_set1_epi32(31), one = _mm512_set1_epi32(1);
        __m128i ones = _mm_set1_epi8(1);
        if (m < 1 || m > 1024)
            return 0;
        memset(bits, 0, sizeof(bits));
        for (i = 0; i < m; i++)
            if (t[i])
                bits[i >> 5] |= 1u << (i & 31);
        lo = _mm512_loadu_si512((const void*)bits);
        hi = _mm512_loadu_si512((const void*)(bits + 16));
        for (i = 0; i + 16 <= n; i += 16) {
            __m512i x = _mm512_loadu_si512((const void*)(ix + i));
            __m512i w = _mm512_permutex2var_epi32(lo, _mm512_srli_epi32(x, 5), hi);
            __mmask16 f = _mm512_test_epi32_mask(_mm512_srlv_epi32(w, _mm512_and_si512(x, v31)), one);
            outside |= _mm512_cmpge_epu32_mask(x, vm);
            _mm_storeu_si128((__m128i*)(o + i), _mm_maskz_mov_epi8(f, ones));
            k += __builtin_popcount((unsigned)f);
        }
        *kept += k;
        if (outside)
            *bad = 1;
        return i;
    }
    #else
    static Py_ssize_t pe_lookup_flags_vector(const uint8_t* t, Py_ssize_t m, const int32_t* ix, Py_ssize_t n,
                                             uint8_t* o, int64_t* kept, uint32_t* bad) {
        (void)t; (void)m; (void)ix; (void)n; (void)o; (void)kept; (void)bad;
        return 0;
    }
    #endif
    """
    Py_ssize_t pe_lookup_flags_vector(const uint8_t* t, Py_ssize_t m, const int32_t* ix, Py_ssize_t n, uint8_t* o,
                                      int64_t* kept, uint32_t* bad) noexcept nogil


@cython.boundscheck(False)
@cython.wraparound(False)
def lookup_flags(const uint8_t[::1] table, const int32_t[::1] indices, uint8_t[::1] out):
    """A flag per row from the row's dictionary index: ``out[i] = table[indices[i]] != 0`` (``table``: one flag
    per dictionary value). Returns the number of rows flagged, -4 if ``out`` is shorter than ``indices``, -5 if
    an index is outside the table (``out`` then means nothing). A table of at most 1,024 flags is looked up 16
    indices at a time where the processor has AVX-512 (``vector_paths``)."""
    cdef Py_ssize_t n = indices.shape[0], m = table.shape[0], i = 0
    cdef int64_t kept = 0
    cdef uint32_t v, bad = 0
    cdef uint8_t f
    cdef const uint8_t* t
    cdef const int32_t* ix
    cdef uint8_t* o
    if out.shape[0] < n:
        return -4
    if n == 0:
        return 0
    if m == 0:
        return -5
    t = &table[0]
    ix = &indices[0]
    o = &out[0]
    with nogil:
        if _vector:
            i = pe_lookup_flags_vector(t, m, ix, n, o, &kept, &bad)
        for i in range(i, n):
            v = <uint32_t>ix[i]
            # an index outside the table is noted and read as 0: no branch in the loop
            bad |= v >= <uint32_t>m
            v = v if v < <uint32_t>m else 0
            f = t[v] != 0
            o[i] = f
            kept += f
    return -5 if bad else kept
