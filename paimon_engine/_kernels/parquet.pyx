# Parquet page kernels: the page header (Thrift compact protocol), definition levels and dictionary indices
# (the RLE / bit-packed hybrid), and the values of PLAIN and dictionary-encoded pages, decoded straight into
# Arrow-layout column buffers. The caller (scan/parquet_columns.py) reads and decompresses the pages, allocates
# the outputs and turns a negative status into an error naming the file and the page's offset.
#
# Statuses: -1 truncated, -2 overlong varint, -3 value out of range, -4 bad length / short output,
# -5 invalid value (as paimon_engine._pykernels.status).
cimport cython
from libc.stdint cimport int64_t, int32_t, uint64_t, uint32_t, uint8_t, INT32_MAX
from libc.string cimport memcpy, memset

from paimon_engine._kernels.bytecopy cimport copy_value, count_nonzero
from paimon_engine._kernels.bitrange cimport set_bits
from paimon_engine._kernels.cpu cimport pe_avx512_available, pe_vbmi_available

# PageHeader fields written by page_header (the twin's HEADER_FIELDS names them)
cdef enum:
    H_TYPE = 0
    H_USIZE = 1
    H_CSIZE = 2
    H_NUM_VALUES = 3
    H_ENCODING = 4
    H_DEF_ENCODING = 5
    H_REP_ENCODING = 6
    H_NUM_NULLS = 7
    H_NUM_ROWS = 8
    H_DEF_LENGTH = 9
    H_REP_LENGTH = 10
    H_COMPRESSED = 11
    H_FIELDS = 12
    MAX_DEPTH = 64

#: the slots ``page_header`` fills, in order
HEADER_FIELDS = ("type", "uncompressed_size", "compressed_size", "num_values", "encoding", "def_encoding",
                 "rep_encoding", "num_nulls", "num_rows", "def_length", "rep_length", "compressed")

# ---------------------------------------------------------------- Thrift compact protocol


cdef inline int _varint(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, uint64_t* out) noexcept nogil:
    cdef uint64_t r = 0
    cdef int shift = 0
    cdef uint8_t c
    while True:
        if pos[0] >= end:
            return -1
        c = b[pos[0]]
        pos[0] += 1
        if shift == 63 and (c & 0x7E):
            return -2
        r |= (<uint64_t>(c & 0x7F)) << shift
        if not (c & 0x80):
            out[0] = r
            return 0
        shift += 7
        if shift > 63:
            return -2


cdef inline int _zigzag(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, int64_t* out) noexcept nogil:
    cdef uint64_t u
    cdef int rc = _varint(b, end, pos, &u)
    if rc:
        return rc
    out[0] = <int64_t>(u >> 1) ^ -(<int64_t>(u & 1))
    return 0


cdef inline int _i32(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, int64_t* out) noexcept nogil:
    cdef int rc = _zigzag(b, end, pos, out)
    if rc:
        return rc
    if out[0] < -2147483648 or out[0] > 2147483647:
        return -3
    return 0


cdef int _skip(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, int t, int depth) noexcept nogil:
    """Skip one value of compact type ``t``."""
    cdef uint64_t u
    cdef int rc, et, kt, vt
    cdef int64_t fid
    cdef uint8_t h
    cdef Py_ssize_t i, size
    if depth > MAX_DEPTH:
        return -5
    if t == 1 or t == 2:          # a boolean field: the value is in the type
        return 0
    if t == 3:
        if pos[0] >= end:
            return -1
        pos[0] += 1
        return 0
    if t == 4 or t == 5 or t == 6:
        return _varint(b, end, pos, &u)
    if t == 7:
        if end - pos[0] < 8:
            return -1
        pos[0] += 8
        return 0
    if t == 8:
        rc = _varint(b, end, pos, &u)
        if rc:
            return rc
        if u > <uint64_t>(end - pos[0]):
            return -1
        pos[0] += <Py_ssize_t>u
        return 0
    if t == 9 or t == 10:
        if pos[0] >= end:
            return -1
        h = b[pos[0]]
        pos[0] += 1
        size = h >> 4
        et = h & 0x0F
        if size == 15:
            rc = _varint(b, end, pos, &u)
            if rc:
                return rc
            if u > <uint64_t>(end - pos[0]):    # every element takes a byte at least
                return -1
            size = <Py_ssize_t>u
        if et == 1 or et == 2:                   # booleans in a list take a byte each
            if size > end - pos[0]:
                return -1
            pos[0] += size
            return 0
        for i in range(size):
            rc = _skip(b, end, pos, et, depth + 1)
            if rc:
                return rc
        return 0
    if t == 11:
        rc = _varint(b, end, pos, &u)
        if rc:
            return rc
        if u == 0:
            return 0
        if u > <uint64_t>(end - pos[0]):
            return -1
        size = <Py_ssize_t>u
        if pos[0] >= end:
            return -1
        h = b[pos[0]]
        pos[0] += 1
        kt = h >> 4
        vt = h & 0x0F
        for i in range(size):
            if kt == 1 or kt == 2:
                rc = _skip(b, end, pos, 3, depth + 1)
            else:
                rc = _skip(b, end, pos, kt, depth + 1)
            if rc:
                return rc
            if vt == 1 or vt == 2:
                rc = _skip(b, end, pos, 3, depth + 1)
            else:
                rc = _skip(b, end, pos, vt, depth + 1)
            if rc:
                return rc
        return 0
    if t == 12:
        fid = 0
        while True:
            rc = _field(b, end, pos, &fid, &et)
            if rc:
                return rc
            if et == 0:
                return 0
            rc = _skip(b, end, pos, et, depth + 1)
            if rc:
                return rc
    return -5


cdef inline int _field(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, int64_t* fid, int* ftype) noexcept nogil:
    """Read a field header: ``ftype`` 0 is the end of the struct; ``fid`` holds the last field id on entry."""
    cdef uint8_t h
    cdef int rc
    cdef int64_t v
    if pos[0] >= end:
        return -1
    h = b[pos[0]]
    pos[0] += 1
    if h == 0:
        ftype[0] = 0
        return 0
    ftype[0] = h & 0x0F
    if h >> 4:
        fid[0] += h >> 4
    else:
        rc = _zigzag(b, end, pos, &v)
        if rc:
            return rc
        if v < -32768 or v > 32767:
            return -3
        fid[0] = v
    return 0


cdef int _sub_header(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, int kind, int64_t* out) noexcept nogil:
    """The fields of a DataPageHeader (kind 5), DictionaryPageHeader (7) or DataPageHeaderV2 (8) that decoding
    needs; the others are skipped."""
    cdef int64_t fid = 0, v
    cdef int t, rc, slot
    while True:
        rc = _field(b, end, pos, &fid, &t)
        if rc:
            return rc
        if t == 0:
            return 0
        slot = -1
        if t == 5:
            if kind == 5 or kind == 7:
                if fid == 1:
                    slot = H_NUM_VALUES
                elif fid == 2:
                    slot = H_ENCODING
                elif fid == 3 and kind == 5:
                    slot = H_DEF_ENCODING
                elif fid == 4 and kind == 5:
                    slot = H_REP_ENCODING
            else:
                if fid == 1:
                    slot = H_NUM_VALUES
                elif fid == 2:
                    slot = H_NUM_NULLS
                elif fid == 3:
                    slot = H_NUM_ROWS
                elif fid == 4:
                    slot = H_ENCODING
                elif fid == 5:
                    slot = H_DEF_LENGTH
                elif fid == 6:
                    slot = H_REP_LENGTH
        if slot >= 0:
            rc = _i32(b, end, pos, &v)
            if rc:
                return rc
            out[slot] = v
        elif kind == 8 and fid == 7 and (t == 1 or t == 2):
            out[H_COMPRESSED] = 1 if t == 1 else 0
        else:
            rc = _skip(b, end, pos, t, 1)
            if rc:
                return rc


@cython.boundscheck(False)
@cython.wraparound(False)
def page_header(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, int64_t[::1] out):
    """Parse the Thrift ``PageHeader`` at ``buf[pos:end]`` into ``out`` (12 slots, see ``HEADER_FIELDS`` of the
    twin; -1 where the header has no such field, except ``compressed`` which defaults to 1). Returns the position
    just after the header, or a negative status."""
    cdef int64_t fid = 0, v
    cdef int t, rc = 0, i
    if out.shape[0] < H_FIELDS or pos < 0 or end > buf.shape[0] or pos > end:
        return -4
    for i in range(H_FIELDS):
        out[i] = -1
    out[H_COMPRESSED] = 1
    if end == pos:
        return -1
    with nogil:
        while True:
            rc = _field(&buf[0], end, &pos, &fid, &t)
            if rc or t == 0:
                break
            if t == 5 and 1 <= fid <= 3:
                rc = _i32(&buf[0], end, &pos, &v)
                if rc:
                    break
                out[H_TYPE if fid == 1 else (H_USIZE if fid == 2 else H_CSIZE)] = v
            elif t == 12 and (fid == 5 or fid == 7 or fid == 8):
                rc = _sub_header(&buf[0], end, &pos, <int>fid, &out[0])
                if rc:
                    break
            else:
                rc = _skip(&buf[0], end, &pos, t, 1)
                if rc:
                    break
    return rc if rc else pos


# ---------------------------------------------------------------- RLE / bit-packed hybrid

cdef inline uint32_t _unpack(const uint8_t* p, Py_ssize_t nbytes, Py_ssize_t i, int w, uint64_t mask) noexcept nogil:
    """Value ``i`` of a bit-packed run of ``nbytes`` bytes at ``p`` (LSB first, ``w`` <= 32 bits each)."""
    cdef Py_ssize_t bit = i * w
    cdef Py_ssize_t byte = bit >> 3
    cdef uint64_t word = 0
    cdef Py_ssize_t k, m
    if byte + 8 <= nbytes:
        memcpy(&word, p + byte, 8)
    else:
        m = nbytes - byte
        for k in range(m):
            word |= (<uint64_t>p[byte + k]) << (8 * k)
    return <uint32_t>((word >> (bit & 7)) & mask)


cdef inline int _run_header(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, int w, bint* packed,
                            Py_ssize_t* count, uint32_t* value, Py_ssize_t* nbytes) noexcept nogil:
    """The next run: bit-packed (``count`` values in ``nbytes`` bytes from ``pos``) or repeated ``value``."""
    cdef uint64_t h
    cdef int rc = _varint(b, end, pos, &h)
    cdef Py_ssize_t vb, k
    if rc:
        return rc
    if h & 1:
        packed[0] = 1
        h >>= 1
        if h > <uint64_t>(end - pos[0]):     # each group of 8 values takes w >= 1 bytes (w = 0: none)
            if w > 0:
                return -1
        if h > (<uint64_t>1 << 40):
            return -4
        count[0] = <Py_ssize_t>(h * 8)
        nbytes[0] = <Py_ssize_t>(h * <uint64_t>w)
        if nbytes[0] > end - pos[0]:
            return -1
        return 0
    packed[0] = 0
    h >>= 1
    if h > (<uint64_t>1 << 40):
        return -4
    count[0] = <Py_ssize_t>h
    vb = (w + 7) >> 3
    if vb > end - pos[0]:
        return -1
    value[0] = 0
    for k in range(vb):
        value[0] |= (<uint32_t>b[pos[0] + k]) << (8 * k)
    pos[0] += vb
    nbytes[0] = 0
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
def levels_validity(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, int bit_width, int max_level,
                    Py_ssize_t n, uint8_t[::1] validity, Py_ssize_t bit_offset):
    """Decode ``n`` definition levels (RLE / bit-packed hybrid, ``bit_width`` bits each) from ``buf[pos:end]``
    and set bit ``bit_offset + i`` of ``validity`` to whether level i equals ``max_level`` (a flat column: every
    lower level is a null). Returns how many levels were ``max_level``, or a negative status (-5: a level above
    ``max_level``)."""
    cdef Py_ssize_t done = 0, count, nbytes, k, take
    cdef Py_ssize_t valid = 0
    cdef uint32_t value, lv
    cdef bint packed, on
    cdef int rc = 0
    cdef uint64_t mask
    if bit_width < 0 or bit_width > 32 or n < 0 or bit_offset < 0 or pos < 0 or end > buf.shape[0] \
            or (n + bit_offset + 7) // 8 > validity.shape[0]:
        return -4
    if n == 0:
        return 0
    if pos >= end:
        return -1
    mask = (<uint64_t>1 << bit_width) - 1
    with nogil:
        while done < n:
            rc = _run_header(&buf[0], end, &pos, bit_width, &packed, &count, &value, &nbytes)
            if rc:
                break
            take = count if count < n - done else n - done
            if not packed:
                if value > <uint32_t>max_level:
                    rc = -5
                    break
                on = value == <uint32_t>max_level
                set_bits(&validity[0], bit_offset + done, take, on)
                if on:
                    valid += take
            else:
                for k in range(take):
                    lv = _unpack(&buf[pos], nbytes, k, bit_width, mask)
                    if lv > <uint32_t>max_level:
                        rc = -5
                        break
                    if lv == <uint32_t>max_level:
                        validity[(bit_offset + done + k) >> 3] |= <uint8_t>(1 << ((bit_offset + done + k) & 7))
                        valid += 1
                    else:
                        validity[(bit_offset + done + k) >> 3] &= <uint8_t>~(1 << ((bit_offset + done + k) & 7))
                if rc:
                    break
                pos += nbytes
            done += take
    return rc if rc else valid


# Where the processor has AVX-512 VBMI (with F, BW and VL), a bit-packed run of indices of at most 25 bits is
# unpacked 16 at a time: 16 indices of w bits take 2w bytes, so each group starts on a byte; one 64-byte load, one
# byte permute that puts each index's four bytes in its 32-bit lane, one shift per lane and a mask give the 16
# indices; they are checked against the dictionary's size together, and their 4- or 8-byte values gathered from
# the dictionary (or the indices stored as they are; with keep flags, the kept values compressed together and
# stored with a mask of as many lanes, so nothing is written past them). A group is taken only while its 64-byte
# load ends inside the run; a group holding an index outside the dictionary is left, with the rest of the run, to
# the scalar loop, which then stops at that index as it would have anyway. vector_paths() turns this on and off
# with the others.
cdef extern from *:
    """
    #if PE_X86_VECTOR
    /* the byte permute and the shifts that put index k of a group of 16 (w bits each) in lane k */
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
    static inline void pe_unpack_tables(int w, __m512i* vperm, __m512i* vshift) {
        uint8_t perm[64];
        uint32_t shift[16];
        int k, b;
        for (k = 0; k < 16; k++) {
            for (b = 0; b < 4; b++)
                perm[4 * k + b] = (uint8_t)(((k * w) >> 3) + b);
            shift[k] = (uint32_t)((k * w) & 7);
        }
        *vperm = _mm512_loadu_si512((const void*)perm);
        *vshift = _mm512_loadu_si512((const void*)shift);
    }

    /* the 16 indices of the group starting at value i (i a multiple of 16: byte (i / 8) * w of the run) */
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
    static inline __m512i pe_unpack_group(const uint8_t* p, Py_ssize_t i, int w, __m512i vperm, __m512i vshift) {
        __m512i raw = _mm512_loadu_si512((const void*)(p + (i >> 3) * w));
        return _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi8(vperm, raw), vshift),
                                _mm512_set1_epi32((int)((1u << w) - 1)));
    }

    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
    static Py_ssize_t pe_unpack_vector(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take,
                                       uint32_t ndict, const uint8_t* d, int width, uint8_t* o) {
        __m512i vperm, vshift, vndict = _mm512_set1_epi32((int)ndict);
        Py_ssize_t i = 0;
        if (w < 1 || w > 25 || (width != 0 && width != 4 && width != 8))
            return 0;
        pe_unpack_tables(w, &vperm, &vshift);
        while (i + 16 <= take && (i >> 3) * w + 64 <= nbytes) {
            __m512i x = pe_unpack_group(p, i, w, vperm, vshift);
            if (_mm512_cmpge_epu32_mask(x, vndict))
                break;
            if (width == 4) {
                _mm512_storeu_si512((void*)(o + 4 * i), _mm512_i32gather_epi32(x, (const void*)d, 4));
            } else if (width == 8) {
                _mm512_storeu_si512((void*)(o + 8 * i),
                                    _mm512_i32gather_epi64(_mm512_castsi512_si256(x), (const void*)d, 8));
                _mm512_storeu_si512((void*)(o + 8 * i + 64),
                                    _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(x, 1), (const void*)d, 8));
            } else {
                _mm512_storeu_si512((void*)(o + 4 * i), x);
            }
            i += 16;
        }
        return i;
    }

    /* The same with keep flags (dictionary_fixed's keep mode): a group's 4- or 8-byte values are gathered, the
       kept ones (their flags as a bit mask) compressed together and stored with a mask of as many lanes, from
       value *j of the output; nothing is written past the kept values. */
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
    static Py_ssize_t pe_unpack_keep_vector(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take,
                                            uint32_t ndict, const uint8_t* d, int width, uint8_t* o,
                                            const uint8_t* kp, Py_ssize_t* j) {
        __m512i vperm, vshift, vndict = _mm512_set1_epi32((int)ndict);
        Py_ssize_t i = 0, jj = *j;
        if (w < 1 || w > 25 || (width != 4 && width != 8))
            return 0;
        pe_unpack_tables(w, &vperm, &vshift);
        while (i + 16 <= take && (i >> 3) * w + 64 <= nbytes) {
            __m512i x = pe_unpack_group(p, i, w, vperm, vshift);
            __m128i f = _mm_loadu_si128((const __m128i*)(kp + i));
            __mmask16 m = _mm_test_epi8_mask(f, f);
            int c;
            if (_mm512_cmpge_epu32_mask(x, vndict))
                break;
            if (width == 4) {
                c = __builtin_popcount((unsigned)m);
                _mm512_mask_storeu_epi32((void*)(o + 4 * jj), (__mmask16)((1u << c) - 1),
                    _mm512_maskz_compress_epi32(m, _mm512_i32gather_epi32(x, (const void*)d, 4)));
                jj += c;
            } else {
                __mmask8 lo = (__mmask8)m, hi = (__mmask8)(m >> 8);
                c = __builtin_popcount((unsigned)lo);
                _mm512_mask_storeu_epi64((void*)(o + 8 * jj), (__mmask8)((1u << c) - 1),
                    _mm512_maskz_compress_epi64(lo, _mm512_i32gather_epi64(_mm512_castsi512_si256(x),
                                                                            (const void*)d, 8)));
                jj += c;
                c = __builtin_popcount((unsigned)hi);
                _mm512_mask_storeu_epi64((void*)(o + 8 * jj), (__mmask8)((1u << c) - 1),
                    _mm512_maskz_compress_epi64(hi, _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(x, 1),
                                                                            (const void*)d, 8)));
                jj += c;
            }
            i += 16;
        }
        *j = jj;
        return i;
    }
    #else
    /* never called: without AVX-512 the vector switch stays off (these keep the module compiling) */
    static Py_ssize_t pe_unpack_keep_vector(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take,
                                            uint32_t ndict, const uint8_t* d, int width, uint8_t* o,
                                            const uint8_t* kp, Py_ssize_t* j) {
        (void)p; (void)nbytes; (void)w; (void)take; (void)ndict; (void)d; (void)width; (void)o; (void)kp; (void)j;
        return 0;
    }
    static Py_ssize_t pe_unpack_vector(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take,
                                       uint32_t ndict, const uint8_t* d, int width, uint8_t* o) {
        (void)p; (void)nbytes; (void)w; (void)take; (void)ndict; (void)d; (void)width; (void)o;
        return 0;
    }
    #endif
    """
    Py_ssize_t pe_unpack_vector(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, uint32_t ndict,
                                const uint8_t* d, int width, uint8_t* o) noexcept nogil
    Py_ssize_t pe_unpack_keep_vector(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, uint32_t ndict,
                                     const uint8_t* d, int width, uint8_t* o, const uint8_t* kp,
                                     Py_ssize_t* j) noexcept nogil

cdef bint _VBMI_OK = pe_vbmi_available()


cdef inline bint _unpack_on() noexcept nogil:
    """Whether the vector unpacking runs: the vector paths on and AVX-512 VBMI there (its C functions leave runs of
    more than 25 bits, and widths they do not write, to the scalar loops)."""
    return _vector and _VBMI_OK


cdef inline Py_ssize_t _unpacked(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, uint32_t ndict,
                                 const uint8_t* d, int width, uint8_t* o) noexcept nogil:
    """How many of the first ``take`` values of a bit-packed run the vector path wrote (0 where it is off or
    cannot: w above 25, no VBMI, ``width`` other than 0, 4 and 8): indices (``width`` 0, int32) or their 4- or
    8-byte dictionary values. A multiple of 16, so the scalar loops go on from byte ``(done >> 3) * w`` of the
    run."""
    return pe_unpack_vector(p, nbytes, w, take, ndict, d, width, o) if _unpack_on() else 0


def vector_unpack():
    """Whether bit-packed dictionary indices are unpacked 16 at a time (the vector paths on, and the processor has
    AVX-512 VBMI)."""
    return bool(_unpack_on())


cdef int _unpack_indices(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, int32_t* o,
                         int64_t dict_size) noexcept nogil:
    """The first ``take`` values of a bit-packed run (``nbytes`` bytes at ``p``, ``w`` bits each) into ``o``;
    -3 if one is not below ``dict_size``. Values whose bits lie in 4 (w <= 25) or 8 readable bytes from their first
    byte take one unaligned load each, without a bounds test; the last few are read byte by byte."""
    cdef Py_ssize_t k, fast, bit
    cdef uint32_t v, vmax = 0, word
    cdef uint64_t mask = (<uint64_t>1 << w) - 1, word64
    cdef int span = 4 if w <= 25 else 8
    if w == 0:
        memset(o, 0, take * sizeof(int32_t))
        return -3 if take and dict_size <= 0 else 0
    # value k reads bytes [k*w >> 3, (k*w >> 3) + span): inside the run while (k*w >> 3) <= nbytes - span
    fast = ((nbytes - span) * 8) // w + 1 if nbytes >= span else 0
    if fast > take:
        fast = take
    bit = 0
    if span == 4:
        for k in range(fast):
            memcpy(&word, p + (bit >> 3), 4)
            v = (word >> (bit & 7)) & <uint32_t>mask
            vmax = v if v > vmax else vmax
            o[k] = <int32_t>v
            bit += w
    else:
        for k in range(fast):
            memcpy(&word64, p + (bit >> 3), 8)
            v = <uint32_t>((word64 >> (bit & 7)) & mask)
            vmax = v if v > vmax else vmax
            o[k] = <int32_t>v
            bit += w
    for k in range(fast, take):
        v = _unpack(p, nbytes, k, w, mask)
        vmax = v if v > vmax else vmax
        o[k] = <int32_t>v
    return -3 if take and <int64_t>vmax >= dict_size else 0


cdef inline int _bit_width(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, int* w) noexcept nogil:
    """The bit width byte that starts the indices of a dictionary-encoded page (at most 32), read at ``pos``."""
    if pos[0] >= end:
        return -1
    w[0] = b[pos[0]]
    pos[0] += 1
    return -5 if w[0] > 32 else 0


@cython.boundscheck(False)
@cython.wraparound(False)
def dictionary_indices(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t n, int64_t dict_size,
                       int32_t[::1] out, Py_ssize_t out_pos):
    """Decode the ``n`` indices of a dictionary-encoded data page (a bit-width byte, then the RLE / bit-packed
    hybrid) from ``buf[pos:end]`` into ``out[out_pos:out_pos + n]``. Returns the position after the last run
    read, or a negative status (-3: an index not below ``dict_size``)."""
    cdef Py_ssize_t done = 0, count, nbytes, k, take, first
    cdef uint32_t value
    cdef bint packed
    cdef int rc = 0, w
    cdef uint64_t mask
    cdef int32_t* o
    if n < 0 or pos < 0 or end > buf.shape[0] or out_pos < 0 or out_pos > out.shape[0] \
            or n > out.shape[0] - out_pos or dict_size < 0:
        return -4
    if n == 0:
        return pos
    rc = _bit_width(&buf[0], end, &pos, &w)
    if rc:
        return rc
    mask = (<uint64_t>1 << w) - 1
    o = &out[out_pos]
    with nogil:
        while done < n:
            rc = _run_header(&buf[0], end, &pos, w, &packed, &count, &value, &nbytes)
            if rc:
                break
            take = count if count < n - done else n - done
            if not packed:
                if take and value >= dict_size:
                    rc = -3
                    break
                for k in range(take):
                    o[done + k] = <int32_t>value
            else:
                # (the vector path's part, then the rest from the byte where it stopped)
                first = _unpacked(&buf[pos], nbytes, w, take, <uint32_t>min(dict_size, <int64_t>0xFFFFFFFF), NULL,
                                  0, <uint8_t*>(o + done))
                rc = _unpack_indices(&buf[pos + (first >> 3) * w], nbytes - (first >> 3) * w, w, take - first,
                                     o + done + first, dict_size)
                if rc:
                    break
                pos += nbytes
            done += take
    return rc if rc else pos


@cython.boundscheck(False)
@cython.wraparound(False)
def dictionary_indices_at(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t n, int64_t dict_size,
                          const int32_t[::1] rows, int32_t[::1] out):
    """The indices of rows ``rows`` (ascending, each below ``n``) of a dictionary-encoded data page of ``n`` rows
    (a bit-width byte, then the RLE / bit-packed hybrid in ``buf[pos:end]``) into ``out[:len(rows)]``, without
    decoding the others: a bit-packed run is read at the rows wanted only, and the runs after the last row wanted
    are not read. Returns the position after the last run read, or a negative status (-3: an index read is not
    below ``dict_size``; -4: rows not ascending or not below ``n``)."""
    cdef Py_ssize_t done = 0, count, nbytes, take, j = 0, m = rows.shape[0], last = 0
    cdef uint32_t value, v
    cdef bint packed
    cdef int rc = 0, w
    cdef uint64_t mask
    if n < 0 or pos < 0 or end > buf.shape[0] or dict_size < 0 or out.shape[0] < m:
        return -4
    if m == 0:
        return pos
    rc = _bit_width(&buf[0], end, &pos, &w)
    if rc:
        return rc
    mask = (<uint64_t>1 << w) - 1
    with nogil:
        while j < m and done < n:
            rc = _run_header(&buf[0], end, &pos, w, &packed, &count, &value, &nbytes)
            if rc:
                break
            take = count if count < n - done else n - done
            while j < m and rows[j] < done + take:
                if rows[j] < last:          # (so never before this run)
                    rc = -4
                    break
                last = rows[j]
                v = _unpack(&buf[pos], nbytes, last - done, w, mask) if packed else value
                if <int64_t>v >= dict_size:
                    rc = -3
                    break
                out[j] = <int32_t>v
                j += 1
            if rc:
                break
            pos += nbytes
            done += take
    if not rc and j < m:
        rc = -4
    return rc if rc else pos


# ---------------------------------------------------------------- dictionary values straight from the indices
# The indices of a dictionary-encoded page are decoded and their values written in one pass, without an index
# array between the two. In a bit-packed run, a value whose 8-byte load stays inside the run takes one
# unaligned load and no bounds test; the last few are read byte by byte.

cdef inline Py_ssize_t _fast_values(Py_ssize_t nbytes, int w, Py_ssize_t take) noexcept nogil:
    """How many of the first ``take`` values of a bit-packed run of ``nbytes`` bytes have all 8 bytes from their
    first byte inside the run (value k starts at byte (k * w) >> 3)."""
    cdef Py_ssize_t fast = ((nbytes - 8) * 8) // w + 1 if nbytes >= 8 else 0
    return fast if fast < take else take


cdef int _packed_fixed4(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, const uint8_t* d,
                        uint32_t ndict, uint8_t* o) noexcept nogil:
    """The 4-byte dictionary values of the first ``take`` indices of a bit-packed run (``nbytes`` bytes at
    ``p``, ``w`` >= 1 bits each) into ``o``; -3 at an index not below ``ndict`` (the values before it are
    written)."""
    cdef Py_ssize_t k, bit = 0, fast = _fast_values(nbytes, w, take)
    cdef uint32_t v
    cdef uint64_t word, mask = (<uint64_t>1 << w) - 1
    for k in range(fast):
        memcpy(&word, p + (bit >> 3), 8)
        v = <uint32_t>((word >> (bit & 7)) & mask)
        if v >= ndict:
            return -3
        memcpy(o + 4 * k, d + 4 * <Py_ssize_t>v, 4)
        bit += w
    for k in range(fast, take):
        v = _unpack(p, nbytes, k, w, mask)
        if v >= ndict:
            return -3
        memcpy(o + 4 * k, d + 4 * <Py_ssize_t>v, 4)
    return 0


cdef int _packed_fixed8(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, const uint8_t* d,
                        uint32_t ndict, uint8_t* o) noexcept nogil:
    """``_packed_fixed4`` for 8-byte values."""
    cdef Py_ssize_t k, bit = 0, fast = _fast_values(nbytes, w, take)
    cdef uint32_t v
    cdef uint64_t word, mask = (<uint64_t>1 << w) - 1
    for k in range(fast):
        memcpy(&word, p + (bit >> 3), 8)
        v = <uint32_t>((word >> (bit & 7)) & mask)
        if v >= ndict:
            return -3
        memcpy(o + 8 * k, d + 8 * <Py_ssize_t>v, 8)
        bit += w
    for k in range(fast, take):
        v = _unpack(p, nbytes, k, w, mask)
        if v >= ndict:
            return -3
        memcpy(o + 8 * k, d + 8 * <Py_ssize_t>v, 8)
    return 0


cdef int _packed_fixed_any(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, const uint8_t* d,
                           uint32_t ndict, int width, uint8_t* o) noexcept nogil:
    """``_packed_fixed4`` for values of any width."""
    cdef Py_ssize_t k
    cdef uint32_t v
    cdef uint64_t mask = (<uint64_t>1 << w) - 1
    if width == 4:
        return _packed_fixed4(p, nbytes, w, take, d, ndict, o)
    if width == 8:
        return _packed_fixed8(p, nbytes, w, take, d, ndict, o)
    for k in range(take):
        v = _unpack(p, nbytes, k, w, mask)
        if v >= ndict:
            return -3
        memcpy(o + k * width, d + <Py_ssize_t>v * width, width)
    return 0


# Where the processor has AVX-512 (F, BW, VL), flags are counted 64 at a time (_kept: one byte test to a bit mask
# and a popcount), and keep_fixed compacts 4- and 8-byte values 16 or 8 rows at a time: the rows' flags become a
# bit mask, one compress instruction packs the kept values of 64 bytes together and one 64-byte store writes
# them (the rows after the last whole group, and every row elsewhere, go through the loops of keep_fixed). Each
# store ends inside the room keep_fixed needs anyway (the kept rows and one value more), so the bytes it may
# touch are the same either way. The choice is made once, when the module loads; vector_paths() tells it (and
# turns it off, for tests of the other path).
cdef extern from *:
    """
    #if PE_X86_VECTOR
    __attribute__((target("avx512f,avx512bw,avx512vl")))
    static Py_ssize_t pe_keep_vector(const uint8_t* s, int width, Py_ssize_t n, const uint8_t* kp, uint8_t* o,
                                     Py_ssize_t room, Py_ssize_t* done) {
        Py_ssize_t i = 0, j = 0;
        if (width == 8) {
            while (i + 8 <= n && j + 8 <= room) {
                __m128i f = _mm_loadl_epi64((const __m128i*)(kp + i));
                __mmask16 m = _mm_test_epi8_mask(f, f);
                __m512i v = _mm512_loadu_si512((const void*)(s + 8 * i));
                _mm512_storeu_si512((void*)(o + 8 * j), _mm512_maskz_compress_epi64((__mmask8)m, v));
                j += __builtin_popcount((unsigned)m);
                i += 8;
            }
        } else if (width == 4) {
            while (i + 16 <= n && j + 16 <= room) {
                __m128i f = _mm_loadu_si128((const __m128i*)(kp + i));
                __mmask16 m = _mm_test_epi8_mask(f, f);
                __m512i v = _mm512_loadu_si512((const void*)(s + 4 * i));
                _mm512_storeu_si512((void*)(o + 4 * j), _mm512_maskz_compress_epi32(m, v));
                j += __builtin_popcount((unsigned)m);
                i += 16;
            }
        }
        *done = i;
        return j;
    }
    __attribute__((target("avx512f,avx512bw")))
    static Py_ssize_t pe_count_vector(const uint8_t* kp, Py_ssize_t n) {
        Py_ssize_t i = 0, m = 0;
        for (; i + 64 <= n; i += 64) {
            __m512i f = _mm512_loadu_si512((const void*)(kp + i));
            m += __builtin_popcountll((unsigned long long)_mm512_test_epi8_mask(f, f));
        }
        for (; i < n; i++)
            m += kp[i] != 0;
        return m;
    }
    #else
    /* never called: without AVX-512 the vector switch stays off (these keep the module compiling) */
    static Py_ssize_t pe_keep_vector(const uint8_t* s, int width, Py_ssize_t n, const uint8_t* kp, uint8_t* o,
                                     Py_ssize_t room, Py_ssize_t* done) {
        (void)s; (void)width; (void)n; (void)kp; (void)o; (void)room;
        *done = 0;
        return 0;
    }
    static Py_ssize_t pe_count_vector(const uint8_t* kp, Py_ssize_t n) {
        (void)kp; (void)n;
        return 0;
    }
    #endif
    """
    Py_ssize_t pe_keep_vector(const uint8_t* s, int width, Py_ssize_t n, const uint8_t* kp, uint8_t* o,
                              Py_ssize_t room, Py_ssize_t* done) noexcept nogil
    Py_ssize_t pe_count_vector(const uint8_t* kp, Py_ssize_t n) noexcept nogil

cdef bint _VECTOR_OK = pe_avx512_available()
cdef bint _vector = _VECTOR_OK


def vector_paths(enabled=None):
    """Whether ``keep_fixed``, the flag count and the dictionary indices' unpacking (where AVX-512 VBMI is there too;
    see ``vector_unpack``) use their AVX-512 paths (only where the processor has them). ``enabled``: turn them on or
    off (on only where available), for testing both paths; returns the setting before the call."""
    global _vector
    before = _vector
    if enabled is not None:
        _vector = bool(enabled) and _VECTOR_OK
    return before


cdef inline Py_ssize_t _kept(const uint8_t* kp, Py_ssize_t n) noexcept nogil:
    """How many of the ``n`` flags at ``kp`` are non-zero (64 at a time where the processor has AVX-512)."""
    if _vector:
        return pe_count_vector(kp, n)
    return count_nonzero(kp, n)


cdef int _packed_fixed_keep(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, const uint8_t* d,
                            uint32_t ndict, int width, uint8_t* o, const uint8_t* kp, Py_ssize_t* j) noexcept nogil:
    """``_packed_fixed_any`` writing only the rows whose flag in ``kp`` is non-zero, from value ``j[0]`` of
    ``o`` on (``j`` advances by the rows kept). Every value is written and the cursor moves only for a kept
    one (no branch on the flag), so the value after the last kept one is written too."""
    cdef Py_ssize_t k, jj = j[0], bit = 0, fast = _fast_values(nbytes, w, take)
    cdef uint32_t v
    cdef uint64_t word, mask = (<uint64_t>1 << w) - 1
    cdef int rc = 0
    if width == 8:
        for k in range(fast):
            memcpy(&word, p + (bit >> 3), 8)
            v = <uint32_t>((word >> (bit & 7)) & mask)
            if v >= ndict:
                rc = -3
                break
            memcpy(o + 8 * jj, d + 8 * <Py_ssize_t>v, 8)
            jj += kp[k] != 0
            bit += w
    elif width == 4:
        for k in range(fast):
            memcpy(&word, p + (bit >> 3), 8)
            v = <uint32_t>((word >> (bit & 7)) & mask)
            if v >= ndict:
                rc = -3
                break
            memcpy(o + 4 * jj, d + 4 * <Py_ssize_t>v, 4)
            jj += kp[k] != 0
            bit += w
    else:
        fast = 0
    if rc == 0:
        for k in range(fast, take):
            v = _unpack(p, nbytes, k, w, mask)
            if v >= ndict:
                rc = -3
                break
            memcpy(o + width * jj, d + width * <Py_ssize_t>v, width)
            jj += kp[k] != 0
    j[0] = jj
    return rc


@cython.boundscheck(False)
@cython.wraparound(False)
def dictionary_fixed(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t n,
                     const uint8_t[::1] dictionary, int width, uint8_t[::1] out, Py_ssize_t out_pos,
                     const uint8_t[::1] keep=None):
    """The values of the ``n`` indices of a dictionary-encoded data page (as ``dictionary_indices`` reads them
    from ``buf[pos:end]``) taken from ``dictionary`` (values of ``width`` bytes) into
    ``out[out_pos * width:(out_pos + n) * width]``: ``dictionary_indices`` then ``gather_fixed`` in one pass.
    ``keep`` (None or empty: every row): one flag per row; only the rows flagged non-zero are written, one
    after another from ``out_pos`` (every index is still checked). The output then needs room for the kept
    rows and one value more (a dropped row's value may be written just past the kept ones). Returns the
    position after the last run read, or a negative status (-3: an index outside the dictionary)."""
    cdef Py_ssize_t done = 0, count, nbytes, k, take, j = 0, m, first
    cdef uint32_t value, ndict
    cdef bint packed
    cdef int rc = 0, w
    cdef const uint8_t* d
    cdef const uint8_t* src
    cdef const uint8_t* kp = NULL
    cdef uint8_t* o
    if keep is not None and keep.shape[0]:
        if keep.shape[0] < n or n < 0:
            return -4
        kp = &keep[0] if n else NULL
    if width <= 0 or n < 0 or pos < 0 or end > buf.shape[0] or out_pos < 0 \
            or (kp == NULL and n > out.shape[0] // width - out_pos) \
            or (kp != NULL and _kept(kp, n) + 1 > out.shape[0] // width - out_pos):
        return -4
    if n == 0:
        return pos
    rc = _bit_width(&buf[0], end, &pos, &w)
    if rc:
        return rc
    ndict = <uint32_t>min(dictionary.shape[0] // width, <Py_ssize_t>INT32_MAX)
    d = &dictionary[0] if dictionary.shape[0] else NULL
    o = &out[out_pos * width]
    with nogil:
        while done < n:
            rc = _run_header(&buf[0], end, &pos, w, &packed, &count, &value, &nbytes)
            if rc:
                break
            take = count if count < n - done else n - done
            if kp != NULL:
                if not packed:
                    if take and value >= ndict:
                        rc = -3
                        break
                    m = _kept(kp + done, take)
                    src = d + <Py_ssize_t>value * width
                    for k in range(m):
                        memcpy(o + (j + k) * width, src, width)
                    j += m
                elif w == 0:
                    if take and ndict == 0:
                        rc = -3
                        break
                    m = _kept(kp + done, take)
                    for k in range(m):
                        memcpy(o + (j + k) * width, d, width)
                    j += m
                    pos += nbytes
                else:
                    first = pe_unpack_keep_vector(&buf[pos], nbytes, w, take, ndict, d, width, o, kp + done, &j) \
                        if _unpack_on() else 0
                    rc = _packed_fixed_keep(&buf[pos + (first >> 3) * w], nbytes - (first >> 3) * w, w, take - first,
                                            d, ndict, width, o, kp + done + first, &j)
                    if rc:
                        break
                    pos += nbytes
                done += take
                continue
            if not packed:
                if take and value >= ndict:
                    rc = -3
                    break
                src = d + <Py_ssize_t>value * width
                if width == 8:
                    for k in range(take):
                        memcpy(o + (done + k) * 8, src, 8)
                elif width == 4:
                    for k in range(take):
                        memcpy(o + (done + k) * 4, src, 4)
                else:
                    for k in range(take):
                        memcpy(o + (done + k) * width, src, width)
            else:
                if w == 0:
                    if take and ndict == 0:
                        rc = -3
                        break
                    for k in range(take):
                        memcpy(o + (done + k) * width, d, width)
                else:
                    first = _unpacked(&buf[pos], nbytes, w, take, ndict, d, width, o + done * width)
                    rc = _packed_fixed_any(&buf[pos + (first >> 3) * w], nbytes - (first >> 3) * w, w, take - first,
                                           d, ndict, width, o + (done + first) * width)
                    if rc:
                        break
                pos += nbytes
            done += take
    return rc if rc else pos


cdef inline int _one_bytes(const int32_t* doff, const uint8_t* dd, Py_ssize_t dlen, uint32_t v, uint32_t ndict,
                           uint8_t* data, Py_ssize_t room, int64_t* d) noexcept nogil:
    """Append dictionary value ``v`` at ``data + d[0]``: 0, or -3 (index or offsets out of range, more than
    2 GiB of data) / -4 (output too short)."""
    cdef int32_t a, e
    if v >= ndict:
        return -3
    a = doff[v]
    e = doff[v + 1]
    if a < 0 or e < a or e > dlen:
        return -3
    if e - a > room - d[0]:
        return -4
    if d[0] + (e - a) > INT32_MAX:
        return -3
    copy_value(data + d[0], room - d[0], dd + a, dlen - a, e - a)
    d[0] += e - a
    return 0


cdef inline int64_t _moved(const int32_t* doff, const uint8_t* dd, uint32_t v, uint8_t* od, int64_t d) noexcept nogil:
    """Append dictionary value ``v`` (below the dictionary's size) at ``od + d`` on the checked path (see
    ``_page_fits``): a 16-byte move for a value of at most 16 bytes, else a copy of its length. Returns the data's
    new end."""
    cdef int32_t a = doff[v], e = doff[v + 1]
    if e - a <= 16:
        memcpy(od + d, dd + a, 16)
    else:
        memcpy(od + d, dd + a, e - a)
    return d + (e - a)


cdef inline int64_t _moved_if(const int32_t* doff, const uint8_t* dd, uint32_t v, uint8_t* od, int64_t d,
                              bint kept) noexcept nogil:
    """``_moved``, the data's end advanced only when ``kept``: the value is moved either way and its length masked
    (a branch on the flag would be mispredicted at each dropped row)."""
    return d + ((_moved(doff, dd, v, od, d) - d) & -(<int64_t>kept))


cdef inline int _one_bytes_checked(const int32_t* doff, const uint8_t* dd, Py_ssize_t dlen, uint32_t v,
                                   uint32_t ndict, uint8_t* data, Py_ssize_t room, int64_t* d,
                                   bint checked) noexcept nogil:
    """``_one_bytes``; ``checked``: the dictionary's offsets rise inside its data and every value fits in the
    output (tested once for the page), so only the index is tested."""
    if not checked:
        return _one_bytes(doff, dd, dlen, v, ndict, data, room, d)
    if v >= ndict:
        return -3
    d[0] = _moved(doff, dd, v, data, d[0])
    return 0


cdef bint _page_fits(const int32_t* doff, Py_ssize_t ndict, Py_ssize_t dlen, Py_ssize_t n, int64_t d,
                     Py_ssize_t room) noexcept nogil:
    """The dictionary's offsets rise from >= 0 to at most ``dlen - 16``, and ``n`` of its longest value fit in
    the output from ``d`` with 16 bytes to spare (and in 2 GiB): every value is then a 16-byte move or a
    memcpy, with no test."""
    cdef Py_ssize_t i
    cdef int64_t m = 0
    if doff[0] < 0 or doff[ndict] > dlen - 16:
        return 0
    for i in range(ndict):
        if doff[i + 1] < doff[i]:
            return 0
        if doff[i + 1] - doff[i] > m:
            m = doff[i + 1] - doff[i]
    return m * n <= room - d - 16 and d + m * n <= INT32_MAX


cdef Py_ssize_t _byte_array_unpacked(const uint8_t* p, Py_ssize_t nbytes, int w, Py_ssize_t take, uint32_t ndict,
                                     const int32_t* doff, const uint8_t* dd, uint8_t* od, int64_t* dp,
                                     int32_t* oo, const uint8_t* kp, Py_ssize_t* jp) noexcept nogil:
    """``dictionary_byte_array``'s checked path (see ``_page_fits``) over the first values of a bit-packed run, their
    indices unpacked 16 at a time by the vector path (``pe_unpack_vector``) into a batch of 256 and then moved
    without unpacking a value at a time: how many values were read (a multiple of 16, so the scalar loop goes
    on from byte ``(first >> 3) * w``; 0 where the vector path cannot). A batch the vector path leaves short (an
    index outside the dictionary, or the run's last bytes) ends it, and the scalar loop reads the rest. ``kp``
    (NULL: every row): keep flags of the run's values (``_byte_array_keep``'s checked path); every value is then
    moved and only a kept one advances the data and row cursors (``*dp``, ``*jp``: the offsets written so far)."""
    cdef int32_t idx[256]
    cdef Py_ssize_t i = 0, got, want, t, s, j = jp[0] if kp != NULL else 0
    cdef int64_t d = dp[0]
    while i < take:
        want = take - i if take - i < 256 else 256
        s = (i >> 3) * w
        got = pe_unpack_vector(p + s, nbytes - s, w, want, ndict, NULL, 0, <uint8_t*>idx)
        if kp == NULL:
            for t in range(got):
                d = _moved(doff, dd, <uint32_t>idx[t], od, d)
                oo[i + t] = <int32_t>d
        else:
            for t in range(got):
                d = _moved_if(doff, dd, <uint32_t>idx[t], od, d, kp[i + t] != 0)
                oo[j] = <int32_t>d
                j += kp[i + t] != 0
        i += got
        if got < want:
            break
    dp[0] = d
    if kp != NULL:
        jp[0] = j
    return i


cdef int _byte_array_keep(const uint8_t* b, Py_ssize_t end, Py_ssize_t* pos, Py_ssize_t n, int w,
                          const int32_t* doff, const uint8_t* dd, Py_ssize_t dlen, uint32_t ndict, uint8_t* od,
                          Py_ssize_t room, int64_t* dp, int32_t* oo, const uint8_t* kp, bint checked) noexcept nogil:
    """``dictionary_byte_array`` of the rows whose flag in ``kp`` is non-zero. With ``checked`` (see
    ``_page_fits``) every value is moved and only a kept one advances the data and row cursors (no branch on
    the flag); otherwise only kept values are appended, each checked."""
    cdef Py_ssize_t done = 0, count, nbytes, k, take, fast, bit, j = 0, first
    cdef uint32_t value, v
    cdef uint64_t word, mask = (<uint64_t>1 << w) - 1
    cdef bint packed
    cdef int rc = 0
    cdef int64_t d = dp[0]
    cdef const uint8_t* p
    while done < n:
        rc = _run_header(b, end, pos, w, &packed, &count, &value, &nbytes)
        if rc:
            break
        take = count if count < n - done else n - done
        p = b + pos[0]
        fast = _fast_values(nbytes, w, take) if packed and w and checked else 0
        # the run's first values with their indices unpacked 16 at a time where the vector path is on; the scalar
        # loops go on from the first value it left
        first = _byte_array_unpacked(p, nbytes, w, take, ndict, doff, dd, od, &d, oo, kp + done, &j) \
            if packed and w and checked and _unpack_on() else 0
        bit = first * w
        if first > fast:
            fast = first
        for k in range(first, fast):
            memcpy(&word, p + (bit >> 3), 8)
            v = <uint32_t>((word >> (bit & 7)) & mask)
            bit += w
            if v >= ndict:
                rc = -3
                break
            d = _moved_if(doff, dd, v, od, d, kp[done + k] != 0)
            oo[j] = <int32_t>d
            j += kp[done + k] != 0
        if rc:
            break
        for k in range(fast, take):
            if packed:
                v = _unpack(p, nbytes, k, w, mask) if w else 0
            else:
                v = value
            if v >= ndict:
                rc = -3
                break
            if kp[done + k]:
                rc = _one_bytes_checked(doff, dd, dlen, v, ndict, od, room, &d, checked)
                if rc:
                    break
                oo[j] = <int32_t>d
                j += 1
        if rc:
            break
        if packed:
            pos[0] += nbytes
        done += take
    oo[j] = <int32_t>d
    dp[0] = d
    return rc


@cython.boundscheck(False)
@cython.wraparound(False)
def dictionary_byte_array(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t n,
                          const int32_t[::1] dict_offsets, const uint8_t[::1] dict_data, int32_t[::1] offsets,
                          Py_ssize_t row, uint8_t[::1] data, const uint8_t[::1] keep=None):
    """The values of the ``n`` indices of a dictionary-encoded data page without nulls (read as
    ``dictionary_indices`` reads them) in Arrow string layout, as ``gather_byte_array`` writes them: one pass,
    no index array. ``keep`` (None or empty: every row): one flag per row; only the rows flagged non-zero are
    written, one after another from ``row`` (every index is still checked); ``offsets`` then needs one entry
    more than the kept rows take. Returns the position after the last run read, or a negative status (-3: an
    index outside the dictionary or more than 2 GiB of data, -4: outputs too short)."""
    cdef Py_ssize_t done = 0, count, nbytes, k, take, fast, bit, j = 0, first
    cdef const uint8_t* kp = NULL
    cdef Py_ssize_t room = data.shape[0], dlen = dict_data.shape[0], ndict_ = dict_offsets.shape[0] - 1
    cdef uint32_t value, ndict, v
    cdef bint packed, checked = 0
    cdef int rc = 0, w
    cdef int64_t d
    cdef uint64_t word, mask
    cdef const uint8_t* p
    cdef const int32_t* doff
    cdef const uint8_t* dd
    cdef int32_t* oo
    cdef uint8_t* od
    if keep is not None and keep.shape[0]:
        if n < 0 or keep.shape[0] < n:
            return -4
        kp = &keep[0] if n else NULL
    if n < 0 or pos < 0 or end > buf.shape[0] or row < 0 or ndict_ < 0 \
            or (kp == NULL and row + 1 + n > offsets.shape[0]) \
            or (kp != NULL and row + 2 + _kept(kp, n) > offsets.shape[0]):
        return -4
    d = offsets[row]
    if d < 0 or d > room:
        return -4
    if n == 0:
        return pos
    rc = _bit_width(&buf[0], end, &pos, &w)
    if rc:
        return rc
    mask = (<uint64_t>1 << w) - 1
    ndict = <uint32_t>min(ndict_, <Py_ssize_t>INT32_MAX)
    doff = &dict_offsets[0]
    dd = &dict_data[0] if dlen else NULL
    od = &data[0] if room else NULL
    oo = &offsets[row + 1]
    with nogil:
        # a dictionary no larger than the page is checked once, and the values then only by their index
        if ndict_ <= n and dlen >= 16:
            checked = _page_fits(doff, ndict_, dlen, n, d, room)
        if kp != NULL:
            rc = _byte_array_keep(&buf[0], end, &pos, n, w, doff, dd, dlen, ndict, od, room, &d, oo, kp, checked)
            done = n
        while done < n:
            rc = _run_header(&buf[0], end, &pos, w, &packed, &count, &value, &nbytes)
            if rc:
                break
            take = count if count < n - done else n - done
            if not packed:
                for k in range(take):
                    rc = _one_bytes_checked(doff, dd, dlen, value, ndict, od, room, &d, checked)
                    if rc:
                        break
                    oo[done + k] = <int32_t>d
                if rc:
                    break
            else:
                p = &buf[pos]
                bit = 0
                fast = _fast_values(nbytes, w, take) if w else 0
                if checked:
                    # the run's first values with their indices unpacked 16 at a time where the vector path is on;
                    # the scalar loops go on from the first value it left
                    first = _byte_array_unpacked(p, nbytes, w, take, ndict, doff, dd, od, &d, oo + done, NULL, NULL) \
                        if w and _unpack_on() else 0
                    bit = first * w
                    if first > fast:
                        fast = first
                    for k in range(first, fast):
                        memcpy(&word, p + (bit >> 3), 8)
                        v = <uint32_t>((word >> (bit & 7)) & mask)
                        if v >= ndict:
                            rc = -3
                            break
                        d = _moved(doff, dd, v, od, d)
                        oo[done + k] = <int32_t>d
                        bit += w
                else:
                    for k in range(fast):
                        memcpy(&word, p + (bit >> 3), 8)
                        v = <uint32_t>((word >> (bit & 7)) & mask)
                        rc = _one_bytes(doff, dd, dlen, v, ndict, od, room, &d)
                        if rc:
                            break
                        oo[done + k] = <int32_t>d
                        bit += w
                if rc:
                    break
                for k in range(fast, take):
                    v = _unpack(p, nbytes, k, w, mask) if w else 0
                    rc = _one_bytes_checked(doff, dd, dlen, v, ndict, od, room, &d, checked)
                    if rc:
                        break
                    oo[done + k] = <int32_t>d
                if rc:
                    break
                pos += nbytes
            done += take
    return rc if rc else pos


# ---------------------------------------------------------------- values


@cython.boundscheck(False)
@cython.wraparound(False)
def gather_fixed(const uint8_t[::1] dictionary, int width, const int32_t[::1] indices, Py_ssize_t start,
                 Py_ssize_t n, uint8_t[::1] out, Py_ssize_t out_pos):
    """out[(out_pos + i) * width ...] = dictionary value ``indices[start + i]`` for i < n (``width`` 4 or 8, or
    any other byte width). Returns n, or a negative status (-3: an index outside the dictionary)."""
    cdef Py_ssize_t i, ndict
    cdef int32_t x
    cdef const uint8_t* d
    cdef uint8_t* o
    cdef int rc = 0
    if width <= 0 or n < 0 or start < 0 or n > indices.shape[0] - start or out_pos < 0 \
            or (out_pos + n) * width > out.shape[0]:
        return -4
    ndict = dictionary.shape[0] // width
    if n == 0:
        return 0
    d = &dictionary[0] if dictionary.shape[0] else NULL
    o = &out[out_pos * width]
    with nogil:
        if width == 8:
            for i in range(n):
                x = indices[start + i]
                if x < 0 or x >= ndict:
                    rc = -3
                    break
                memcpy(o + 8 * i, d + 8 * <Py_ssize_t>x, 8)
        elif width == 4:
            for i in range(n):
                x = indices[start + i]
                if x < 0 or x >= ndict:
                    rc = -3
                    break
                memcpy(o + 4 * i, d + 4 * <Py_ssize_t>x, 4)
        else:
            for i in range(n):
                x = indices[start + i]
                if x < 0 or x >= ndict:
                    rc = -3
                    break
                memcpy(o + width * i, d + width * <Py_ssize_t>x, width)
    return rc if rc else n


@cython.boundscheck(False)
@cython.wraparound(False)
def expand_fixed(const uint8_t[::1] dense, int width, const uint8_t[::1] validity, Py_ssize_t bit_offset,
                 Py_ssize_t n, uint8_t[::1] out, Py_ssize_t out_pos):
    """Spread the dense values of a page with nulls over its ``n`` rows: row i (validity bit ``bit_offset + i``
    set) takes the next dense value, a null row is zeroed. Returns the dense values used, or a negative status
    (-4: ``dense`` holds fewer values than the valid rows)."""
    cdef Py_ssize_t i, j = 0, have
    cdef Py_ssize_t b
    cdef uint8_t* o
    cdef int rc = 0
    if width <= 0 or n < 0 or bit_offset < 0 or out_pos < 0 or (out_pos + n) * width > out.shape[0] \
            or (bit_offset + n + 7) // 8 > validity.shape[0]:
        return -4
    if n == 0:
        return 0
    have = dense.shape[0] // width
    o = &out[out_pos * width]
    with nogil:
        for i in range(n):
            b = bit_offset + i
            if (validity[b >> 3] >> (b & 7)) & 1:
                if j >= have:
                    rc = -4
                    break
                memcpy(o + width * i, &dense[width * j], width)
                j += 1
            else:
                memset(o + width * i, 0, width)
    return rc if rc else j


@cython.boundscheck(False)
@cython.wraparound(False)
def plain_byte_array(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t n,
                     const uint8_t[::1] validity, Py_ssize_t bit_offset, int32_t[::1] offsets, Py_ssize_t row,
                     uint8_t[::1] data):
    """PLAIN BYTE_ARRAY values (a 4-byte little-endian length, then the bytes) of ``n`` rows from
    ``buf[pos:end]`` into Arrow string layout: ``offsets[row + 1 + i]`` and ``data`` from ``offsets[row]`` on.
    ``validity`` (empty: every row valid) marks the rows that have a value; a null row repeats the offset.
    Returns the position after the last value, or a negative status (-4: ``data`` or ``offsets`` too short,
    -3: more than 2 GiB of data)."""
    cdef Py_ssize_t i, b
    cdef uint32_t ln
    cdef int64_t d
    cdef bint all_valid = validity.shape[0] == 0
    cdef Py_ssize_t room = data.shape[0]
    cdef int rc = 0
    if n < 0 or pos < 0 or end > buf.shape[0] or row < 0 or row + 1 + n > offsets.shape[0] or bit_offset < 0 \
            or (not all_valid and (bit_offset + n + 7) // 8 > validity.shape[0]):
        return -4
    d = offsets[row]
    if d < 0 or d > room:
        return -4
    with nogil:
        for i in range(n):
            if not all_valid:
                b = bit_offset + i
                if not ((validity[b >> 3] >> (b & 7)) & 1):
                    offsets[row + 1 + i] = <int32_t>d
                    continue
            if end - pos < 4:
                rc = -1
                break
            memcpy(&ln, &buf[pos], 4)
            pos += 4
            if ln > <uint32_t>(end - pos):
                rc = -1
                break
            if ln > room - d:
                rc = -4
                break
            if d + ln > INT32_MAX:
                rc = -3
                break
            copy_value(&data[d], room - d, &buf[pos], end - pos, ln)
            pos += ln
            d += ln
            offsets[row + 1 + i] = <int32_t>d
    return rc if rc else pos


@cython.boundscheck(False)
@cython.wraparound(False)
def dictionary_bytes(const int32_t[::1] dict_offsets, const int32_t[::1] indices, Py_ssize_t start, Py_ssize_t n):
    """Total bytes of the dictionary values ``indices[start:start + n]`` (offsets as Arrow's, validated by the
    caller: non-decreasing from 0). Returns the total, or -3 for an index outside the dictionary."""
    cdef Py_ssize_t i, ndict = dict_offsets.shape[0] - 1
    cdef int32_t x
    cdef int64_t total = 0
    if n < 0 or start < 0 or n > indices.shape[0] - start or ndict < 0:
        return -4
    with nogil:
        for i in range(n):
            x = indices[start + i]
            if x < 0 or x >= ndict:
                total = -3
                break
            total += dict_offsets[x + 1] - dict_offsets[x]
    return total


@cython.boundscheck(False)
@cython.wraparound(False)
def gather_byte_array(const int32_t[::1] dict_offsets, const uint8_t[::1] dict_data, const int32_t[::1] indices,
                      Py_ssize_t start, Py_ssize_t n, const uint8_t[::1] validity, Py_ssize_t bit_offset,
                      int32_t[::1] offsets, Py_ssize_t row, uint8_t[::1] data):
    """The dictionary values of ``n`` rows, in Arrow string layout as ``plain_byte_array`` writes them: a valid
    row takes the value of the next index from ``indices[start:]``, a null row repeats the offset. Returns the
    indices used, or a negative status (-3: an index outside the dictionary or more than 2 GiB of data, -4:
    outputs too short)."""
    cdef Py_ssize_t i, j = start, b, ndict = dict_offsets.shape[0] - 1
    cdef Py_ssize_t room = data.shape[0], dlen = dict_data.shape[0]
    cdef int32_t x, a, e
    cdef int64_t d
    cdef bint all_valid = validity.shape[0] == 0
    cdef int rc = 0
    if n < 0 or start < 0 or row < 0 or row + 1 + n > offsets.shape[0] or bit_offset < 0 or ndict < 0 \
            or (not all_valid and (bit_offset + n + 7) // 8 > validity.shape[0]):
        return -4
    d = offsets[row]
    if d < 0 or d > room:
        return -4
    with nogil:
        for i in range(n):
            if not all_valid:
                b = bit_offset + i
                if not ((validity[b >> 3] >> (b & 7)) & 1):
                    offsets[row + 1 + i] = <int32_t>d
                    continue
            if j >= indices.shape[0]:
                rc = -4
                break
            x = indices[j]
            j += 1
            if x < 0 or x >= ndict:
                rc = -3
                break
            a = dict_offsets[x]
            e = dict_offsets[x + 1]
            if a < 0 or e < a or e > dlen:
                rc = -3
                break
            if e - a > room - d:
                rc = -4
                break
            if d + (e - a) > INT32_MAX:
                rc = -3
                break
            copy_value(&data[d], room - d, &dict_data[a], dlen - a, e - a)
            d += e - a
            offsets[row + 1 + i] = <int32_t>d
    return rc if rc else j - start


# ---------------------------------------------------------------- kept rows of a page
# With deletes or a row selection known before a page is decoded, only its kept rows go to the column: the
# dictionary kernels above take the flags themselves; these copy the kept rows of a page's values or of a page
# decoded on its own.

@cython.boundscheck(False)
@cython.wraparound(False)
def count_flags(const uint8_t[::1] keep, Py_ssize_t start, Py_ssize_t n):
    """How many of the flags ``keep[start:start + n]`` are non-zero, or -4 (outside the flags)."""
    cdef Py_ssize_t m
    if start < 0 or n < 0 or n > keep.shape[0] - start:
        return -4
    if n == 0:
        return 0
    with nogil:
        m = _kept(&keep[start], n)
    return m


# keep_fixed moves 8-byte values eight rows at a time when at most one row in this many is dropped
cdef enum:
    _SPARSE_DROPS = 48


@cython.boundscheck(False)
@cython.wraparound(False)
def keep_fixed(const uint8_t[::1] src, int width, Py_ssize_t n, const uint8_t[::1] keep, uint8_t[::1] out,
               Py_ssize_t out_pos):
    """The values (``width`` bytes each) of the rows among the first ``n`` of ``src`` whose flag in ``keep`` is
    non-zero, one after another into ``out`` from value ``out_pos`` (which needs room for one value more than
    the kept rows). Returns the rows kept, or -4 (short buffers)."""
    cdef Py_ssize_t i = 0, j = 0, m, t
    cdef uint64_t f
    cdef const uint8_t* s
    cdef const uint8_t* kp
    cdef uint8_t* o
    if width <= 0 or n < 0 or out_pos < 0 or keep.shape[0] < n or n > src.shape[0] // width:
        return -4
    if n == 0:
        return 0
    kp = &keep[0]
    m = _kept(kp, n)
    if m + 1 > out.shape[0] // width - out_pos:
        return -4
    s = &src[0]
    o = &out[out_pos * width]
    with nogil:
        if _vector and (width == 8 or width == 4):
            j = pe_keep_vector(s, width, n, kp, o, m + 1, &i)
        if width == 8:
            if (n - m) * _SPARSE_DROPS <= n:
                # few rows dropped: eight rows at a time, all kept (nearly every group) is one 64-byte move (with
                # more dropped rows the test goes either way and costs more than it saves)
                while i + 8 <= n:
                    memcpy(&f, kp + i, 8)
                    if f == 0x0101010101010101ULL:
                        memcpy(o + 8 * j, s + 8 * i, 64)
                        j += 8
                    else:
                        for t in range(8):
                            memcpy(o + 8 * j, s + 8 * (i + t), 8)
                            j += kp[i + t] != 0
                    i += 8
            # a row at a time: the rows after the last group, or every row
            while i < n:
                memcpy(o + 8 * j, s + 8 * i, 8)
                j += kp[i] != 0
                i += 1
        elif width == 4:
            while i < n:
                memcpy(o + 4 * j, s + 4 * i, 4)
                j += kp[i] != 0
                i += 1
        else:
            for i in range(n):
                memcpy(o + width * j, s + width * i, width)
                j += kp[i] != 0
    return j


@cython.boundscheck(False)
@cython.wraparound(False)
def keep_bits(const uint8_t[::1] src, Py_ssize_t n, const uint8_t[::1] keep, uint8_t[::1] out,
              Py_ssize_t out_bit):
    """The bits (LSB first) of the rows among the first ``n`` of ``src`` whose flag in ``keep`` is non-zero, one
    after another into ``out`` from bit ``out_bit`` (each written bit set or cleared). Returns the number of set
    bits written, or -4 (short buffers)."""
    cdef Py_ssize_t i, o = out_bit, ones = 0
    cdef bint on
    if n < 0 or out_bit < 0 or keep.shape[0] < n or (n + 7) // 8 > src.shape[0]:
        return -4
    if n == 0:
        return 0
    if out_bit + _kept(&keep[0], n) > out.shape[0] * 8:
        return -4
    with nogil:
        for i in range(n):
            if keep[i]:
                on = (src[i >> 3] >> (i & 7)) & 1
                if on:
                    out[o >> 3] |= <uint8_t>(1 << (o & 7))
                    ones += 1
                else:
                    out[o >> 3] &= <uint8_t>~(1 << (o & 7))
                o += 1
    return ones


@cython.boundscheck(False)
@cython.wraparound(False)
def keep_byte_array(const int32_t[::1] src_offsets, const uint8_t[::1] src_data, Py_ssize_t n,
                    const uint8_t[::1] keep, int32_t[::1] offsets, Py_ssize_t row, uint8_t[::1] data):
    """String/binary values (Arrow layout: ``src_offsets`` of ``n`` + 1 entries into ``src_data``) of the rows
    whose flag in ``keep`` is non-zero, appended as ``plain_byte_array`` appends them: ``offsets[row + 1 + j]``
    and ``data`` from ``offsets[row]``. Returns the rows kept, or a negative status (-4: short buffers or an
    offset outside ``src_data``, -3: more than 2 GiB of data)."""
    cdef Py_ssize_t i, j = 0, room = data.shape[0], slen = src_data.shape[0]
    cdef int32_t a, e
    cdef int64_t d
    cdef int rc = 0
    if n < 0 or keep.shape[0] < n or src_offsets.shape[0] < n + 1 or row < 0 or row >= offsets.shape[0]:
        return -4
    d = offsets[row]
    if d < 0 or d > room:
        return -4
    if n == 0:
        return 0
    if row + 1 + _kept(&keep[0], n) > offsets.shape[0]:
        return -4
    with nogil:
        for i in range(n):
            if not keep[i]:
                continue
            a = src_offsets[i]
            e = src_offsets[i + 1]
            if a < 0 or e < a or e > slen or e - a > room - d:
                rc = -4
                break
            if d + (e - a) > INT32_MAX:
                rc = -3
                break
            copy_value(&data[d], room - d, &src_data[a], slen - a, e - a)
            d += e - a
            offsets[row + 1 + j] = <int32_t>d
            j += 1
    return rc if rc else j


# ---------------------------------------------------------------- DELTA_BINARY_PACKED

#: the largest block of a DELTA_BINARY_PACKED page this kernel takes (values)
DELTA_MAX_BLOCK = 1 << 24


cdef inline uint64_t _packed_at(const uint8_t* b, Py_ssize_t avail, uint64_t bit, int bw) noexcept nogil:
    """``bw`` (1..64) bits LSB first from bit ``bit`` of ``b``, whose ``avail`` bytes hold them all."""
    cdef Py_ssize_t at = <Py_ssize_t>(bit >> 3)
    cdef int shift = <int>(bit & 7)
    cdef uint64_t v = 0, hi
    cdef int k
    if at + 9 <= avail:
        memcpy(&v, b + at, 8)
        v >>= shift
        if shift + bw > 64:
            hi = b[at + 8]
            v |= hi << (64 - shift)
    else:
        for k in range((shift + bw + 7) >> 3):
            v |= (<uint64_t>b[at + k]) << (8 * k) if k < 8 else 0
        v >>= shift
        if shift + bw > 64:
            hi = b[at + 8]
            v |= hi << (64 - shift)
    if bw < 64:
        v &= (<uint64_t>1 << bw) - 1
    return v


cdef inline void _put(uint8_t* o, Py_ssize_t i, int width, uint64_t v) noexcept nogil:
    cdef uint32_t c32
    if width == 8:
        memcpy(o + 8 * i, &v, 8)
    else:
        c32 = <uint32_t>v
        memcpy(o + 4 * i, &c32, 4)


cdef Py_ssize_t _delta_blocks(const uint8_t* b, Py_ssize_t p, Py_ssize_t end, Py_ssize_t n, int width,
                              Py_ssize_t vpm, Py_ssize_t minis, uint64_t cur, uint8_t* o) noexcept nogil:
    """The blocks of a DELTA_BINARY_PACKED stream from ``p``, values 1 .. n - 1 after ``cur`` (value 0)."""
    cdef Py_ssize_t done = 1, take, m, i, need, full
    cdef const uint8_t* widths
    cdef int64_t mind
    cdef uint64_t md, bit
    cdef int bw, rc
    while done < n:
        rc = _zigzag(b, end, &p, &mind)
        if rc:
            return rc
        if width == 4 and (mind < -2147483648 or mind > 2147483647):
            return -3
        md = <uint64_t>mind
        if minis > end - p:
            return -1
        widths = b + p
        p += minis
        for m in range(minis):
            if done >= n:
                break
            bw = widths[m]
            if bw > 8 * width:
                return -5
            take = vpm if vpm < n - done else n - done
            full = vpm // 8 * bw
            need = (take * bw + 7) // 8
            if need > end - p:
                return -1
            if bw == 0:
                for i in range(take):
                    cur += md
                    _put(o, done + i, width, cur)
            else:
                bit = 0
                for i in range(take):
                    cur += md + _packed_at(b + p, end - p, bit, bw)
                    bit += bw
                    _put(o, done + i, width, cur)
            done += take
            p += full if full <= end - p else end - p
    return p


@cython.boundscheck(False)
@cython.wraparound(False)
def delta_binary_packed(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t n, int width,
                        uint8_t[::1] out, Py_ssize_t out_pos):
    """The ``n`` integers (``width`` 4: INT32, 8: INT64) of a DELTA_BINARY_PACKED stream at ``buf[pos:end]``,
    little-endian into ``out`` from value ``out_pos``; sums wrap at the type's width. The stream's value count
    must be ``n``; a last miniblock may stop after its last needed value. Returns the position after the last
    miniblock read, or a negative status."""
    cdef uint64_t block, minis, total
    cdef int64_t first
    cdef Py_ssize_t p = pos, r
    cdef const uint8_t* b
    cdef uint8_t* o
    cdef int rc
    if (width != 4 and width != 8) or n < 0 or pos < 0 or end > buf.shape[0] or pos > end or out_pos < 0 \
            or out_pos > out.shape[0] // width or n > out.shape[0] // width - out_pos:
        return -4
    if pos == end:
        return -1
    b = &buf[0]
    rc = _varint(b, end, &p, &block)
    if rc == 0:
        rc = _varint(b, end, &p, &minis)
    if rc == 0:
        rc = _varint(b, end, &p, &total)
    if rc == 0:
        rc = _zigzag(b, end, &p, &first)
    if rc:
        return rc
    if block == 0 or block % 128 or block > DELTA_MAX_BLOCK or minis == 0 or block % minis \
            or (block // minis) % 32 or total != <uint64_t>n:
        return -5
    if width == 4 and (first < -2147483648 or first > 2147483647):
        return -3
    if n == 0:
        return p
    o = &out[0] + out_pos * width
    _put(o, 0, width, <uint64_t>first)
    with nogil:
        r = _delta_blocks(b, p, end, n, width, <Py_ssize_t>(block // minis), <Py_ssize_t>minis, <uint64_t>first, o)
    return r
