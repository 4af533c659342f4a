# The block index of a Paimon .row file: three length-prefixed delta+zigzag
# varint arrays (compressed sizes, uncompressed sizes, first rows) decoded
# and checked against every invariant in one call.
#
# check_block_index(data, nblocks, row_count, index_offset, max_block_size,
#                   out, state) -> status
#   data: the index bytes; out: int64[4 * nblocks] receives the compressed
#   sizes, uncompressed sizes, row starts and block file offsets, one after
#   the other. Returns 0, or a negative status (paimon_engine/_pykernels/
#   status.py) with state[0] = the check that failed (IX_* below),
#   state[1] = the array (0, 1, 2), state[2] = the block, state[3] = the byte
#   position in ``data``, state[4] = a detail (a length or a varint status).
#   The checks run in a fixed order, so the first broken invariant is the one
#   reported. Nothing here raises for bad input or reads past ``data``.
#
# open_tail(tail, file_size, max_block_size)
#     -> (status, rows, blocks, index offset, index length, decoded, state)
#   The first read of a file: ``tail`` = its last len(tail) bytes. Checks the
#   32-byte footer (as Footer.parse does) and, when the index lies inside the
#   tail, decodes and checks it as check_block_index does, into a new int64
#   array ``decoded`` of 4 * blocks. status: 0; TAIL_FOOTER when the footer
#   breaks a rule (the footer fields are then 0); TAIL_INDEX when the index
#   starts before the tail (decoded is None); or check_block_index's negative
#   status with ``state`` its 5 values.
#
# locate(packed, nblocks, row_count, row)
#     -> (block, file offset, compressed size, uncompressed size, first row,
#         rows) of the block holding ``row``, None when there is none
#   packed: the 4 * nblocks values check_block_index writes (a checked index).
cimport cython
cimport numpy as cnp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t
from .leb128 cimport read_u32 as _read_u32, read_u64 as _read_u64, zigzag_decode
from .bytecopy cimport count_nonzero

cnp.import_array()

cdef enum:
    TRUNCATED = -1
    OVERLONG = -2
    BAD_LENGTH = -4
    BAD_VALUE = -5

cdef enum:
    C_ARGS = 1
    C_LEN_VARINT = 2
    C_LEN_FIT = 3
    C_COUNT_FIT = 4
    C_VALUES = 5
    C_EXTRA = 6
    C_STRAY = 7
    C_NEGATIVE = 8
    C_CSZ_BIG = 9
    C_SUM = 10
    C_STARTS = 11
    C_SMALL = 12
    C_RATIO = 13
    C_MAX = 14
    C_EMPTY = 15
    C_RATIO_MAX = 32768  # 1 << 15

#: open_tail: the footer breaks a rule / the block index starts before the tail
TAIL_FOOTER, TAIL_INDEX = 1, 2
_MAGIC = 0x524F5753  # "ROWS" little-endian
_VERSION = 1

IX_ARGS, IX_LEN_VARINT, IX_LEN_FIT, IX_COUNT_FIT, IX_VALUES, IX_EXTRA, IX_STRAY, IX_NEGATIVE, IX_CSZ_BIG, \
    IX_SUM, IX_STARTS, IX_SMALL, IX_RATIO, IX_MAX, IX_EMPTY = range(1, 16)

#: zstd cannot expand a frame by more than ~32768x (RLE blocks)
MAX_ZSTD_RATIO = C_RATIO_MAX


cdef inline int _fail(int64_t* st, int check, int64_t arr, int64_t block, int64_t pos, int64_t detail,
                      int status) noexcept nogil:
    st[0] = check
    st[1] = arr
    st[2] = block
    st[3] = pos
    st[4] = detail
    return status


@cython.cdivision(True)
cdef int _check(const uint8_t* p, Py_ssize_t end, int64_t n, int64_t row_count, int64_t index_offset,
                int64_t max_block_size, int64_t* o, Py_ssize_t out_len, int64_t* st) noexcept nogil:
    cdef Py_ssize_t pos = 0, pos2, stop, r
    cdef int64_t a, b, total, rows, c, u
    cdef bint bad
    cdef int32_t length
    cdef uint32_t lv = 0
    cdef uint64_t v = 0, acc
    for a in range(3):
        r = _read_u32(p, pos, end, &lv)
        if r < 0:
            return _fail(st, C_LEN_VARINT, a, 0, pos, r, <int>r)
        pos2 = r
        length = <int32_t>lv
        if length < 0 or length > end - pos2:
            return _fail(st, C_LEN_FIT, a, 0, pos, length, BAD_LENGTH)
        if n > length:  # every varint takes at least one byte
            return _fail(st, C_COUNT_FIT, a, 0, pos2, length, BAD_LENGTH)
        if out_len < 4 * n:
            return _fail(st, C_ARGS, a, 0, pos2, 0, BAD_LENGTH)
        stop = pos2 + length
        r = pos2
        acc = 0
        for b in range(n):
            # one- and two-byte values (most index deltas) without the general loop
            if r + 1 < stop and p[r] < 0x80:
                v = p[r]
                r += 1
            elif r + 1 < stop and p[r + 1] < 0x80:
                v = (p[r] & 0x7F) | (<uint64_t>p[r + 1] << 7)
                r += 2
            else:
                r = _read_u64(p, r, stop, &v)
                if r < 0:
                    return _fail(st, C_VALUES, a, b, pos2, r, <int>r)
            acc = acc + <uint64_t>zigzag_decode(v)
            o[a * n + b] = <int64_t>acc
        if r != stop:
            return _fail(st, C_EXTRA, a, 0, r, length, BAD_LENGTH)
        pos = stop
    if pos != end:
        return _fail(st, C_STRAY, 0, 0, pos, end - pos, BAD_LENGTH)
    if n == 0:
        if row_count != 0 or index_offset != 0:
            return _fail(st, C_EMPTY, 0, 0, 0, 0, BAD_VALUE)
        return 0
    # one pass over every invariant; only a broken index goes through the ordered passes below, which find the
    # first broken one (the loop stops at the first bad block, before any sum can wrap)
    total = 0
    bad = 0
    for b in range(n):
        c = o[b]
        u = o[n + b]
        a = o[2 * n + b]
        rows = (o[2 * n + b + 1] if b + 1 < n else row_count) - a
        o[3 * n + b] = total
        bad = ((c < 0) | (u < 0) | (c > index_offset - total) | (a < 0) | (a >= row_count) | (rows <= 0)
               | (rows > ((u - 4) >> 2)) | (((u - 1025) >> 15) >= (c if c > 1 else 1))
               | (max_block_size >= 0 and u > max_block_size))
        if bad:
            break
        total += c
    if not bad and total == index_offset and o[2 * n] == 0:
        return 0
    # every comparison below is between values already known to be in range: no sum or product wraps
    for b in range(2 * n):
        if o[b] < 0:
            return _fail(st, C_NEGATIVE, b // n, b % n, 0, 0, BAD_VALUE)
    for b in range(n):
        if o[b] > index_offset:
            return _fail(st, C_CSZ_BIG, 0, b, 0, 0, BAD_VALUE)
    total = 0
    for b in range(n):
        c = o[b]
        o[3 * n + b] = total
        if c > index_offset - total:
            return _fail(st, C_SUM, 0, b, 0, 0, BAD_VALUE)
        total += c
    if total != index_offset:
        return _fail(st, C_SUM, 0, n - 1, 0, 0, BAD_VALUE)
    if o[2 * n] != 0:
        return _fail(st, C_STARTS, 2, 0, 0, 0, BAD_VALUE)
    for b in range(n):
        a = o[2 * n + b]
        if a < 0 or a >= row_count or (b > 0 and a <= o[2 * n + b - 1]):
            return _fail(st, C_STARTS, 2, b, 0, 0, BAD_VALUE)
    for b in range(n):
        # a block holds at least its offsets and row count: 4 * rows + 4 <= size, without the product
        rows = (o[2 * n + b + 1] if b + 1 < n else row_count) - o[2 * n + b]
        u = o[n + b]
        if u < 4 or rows > (u - 4) // 4:
            return _fail(st, C_SMALL, 1, b, 0, rows, BAD_VALUE)
    for b in range(n):
        # usz > c * R + 1024, written as (usz - 1025) / R >= c so that c * R is never formed
        c = o[b] if o[b] > 1 else 1
        u = o[n + b]
        if u > 1024 and (u - 1025) // C_RATIO_MAX >= c:
            return _fail(st, C_RATIO, 1, b, 0, 0, BAD_VALUE)
    if max_block_size >= 0:
        for b in range(n):
            if o[n + b] > max_block_size:
                return _fail(st, C_MAX, 1, b, 0, 0, BAD_VALUE)
    return 0


def check_block_index(data, int64_t nblocks, int64_t row_count, int64_t index_offset, int64_t max_block_size,
                      out, state):
    # bytes and exact int64 NumPy arrays (what the reader passes when it opens a file) are used through their
    # data pointers; anything else goes through typed memoryviews
    if PyBytes_CheckExact(data) and _int64_array(out) and _int64_array(state):
        return _run(<const uint8_t*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), nblocks, row_count,
                    index_offset, max_block_size, <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>out),
                    cnp.PyArray_DIM(<cnp.ndarray>out, 0), <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>state),
                    cnp.PyArray_DIM(<cnp.ndarray>state, 0))
    cdef const uint8_t[::1] d = data
    cdef int64_t[::1] o = out
    cdef int64_t[::1] st = state
    return _run(&d[0] if d.shape[0] else NULL, d.shape[0], nblocks, row_count, index_offset, max_block_size,
                &o[0] if o.shape[0] else NULL, o.shape[0], &st[0] if st.shape[0] else NULL, st.shape[0])


cdef inline int64_t _le(const uint8_t* p, int nbytes) noexcept nogil:
    # a little-endian signed integer of 4 or 8 bytes
    cdef uint64_t v = 0
    cdef int i
    for i in range(nbytes - 1, -1, -1):
        v = (v << 8) | p[i]
    if nbytes == 4:
        return <int32_t>(<uint32_t>v)
    return <int64_t>v


def open_tail(data, int64_t file_size, int64_t max_block_size):
    cdef const uint8_t[::1] d
    cdef const uint8_t* p
    cdef Py_ssize_t n
    if PyBytes_CheckExact(data):  # what the reader passes: read through its pointer (no memoryview)
        p, n = <const uint8_t*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data)
    else:
        d = data
        p, n = (&d[0] if d.shape[0] else NULL), d.shape[0]
    return _open_tail(p, n, file_size, max_block_size)


cdef object _open_tail(const uint8_t* p, Py_ssize_t n, int64_t file_size, int64_t max_block_size):
    cdef const uint8_t* f
    cdef int64_t rows, blocks, ioff, ilen, at, start
    cdef int64_t state[5]
    cdef int r
    cdef cnp.ndarray out
    cdef cnp.npy_intp dim
    if n < 32 or file_size < n:
        return TAIL_FOOTER, 0, 0, 0, 0, None, None
    f = p + n - 32
    rows, blocks, ioff, ilen = _le(f, 8), _le(f + 8, 4), _le(f + 12, 8), _le(f + 20, 4)
    at = file_size - 32
    if (<uint32_t>_le(f + 28, 4) != _MAGIC or <int>(<signed char>f[24]) != _VERSION or f[25] or f[26] or f[27]
            or rows < 0 or blocks < 0 or ioff < 0 or ilen < 0 or ioff != at - ilen or blocks > rows):
        return TAIL_FOOTER, 0, 0, 0, 0, None, None
    start = ioff - (file_size - n)
    if start < 0:
        return TAIL_INDEX, rows, blocks, ioff, ilen, None, None
    # every value takes at least one byte: the output is bounded by the index's bytes
    dim = 4 * blocks if blocks <= ilen else 0
    out = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_INT64, 0)
    r = _run(p + start, ilen, blocks, rows, ioff, max_block_size, <int64_t*>cnp.PyArray_DATA(out), dim,
             state, 5)
    if r < 0:
        return r, rows, blocks, ioff, ilen, out, (state[0], state[1], state[2], state[3], state[4])
    return 0, rows, blocks, ioff, ilen, out, None


def locate(packed, int64_t nblocks, int64_t row_count, int64_t row):
    cdef const int64_t[::1] v
    cdef const int64_t* o
    cdef Py_ssize_t m
    if _int64_array(packed):
        o, m = <const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>packed), cnp.PyArray_DIM(<cnp.ndarray>packed, 0)
    else:
        v = packed
        o, m = (&v[0] if v.shape[0] else NULL), v.shape[0]
    if nblocks <= 0 or m < 4 * nblocks or not 0 <= row < row_count:
        return None
    cdef const int64_t* starts = o + 2 * nblocks
    cdef int64_t lo = 0, hi = nblocks, mid
    if starts[0] > row:
        return None
    while hi - lo > 1:  # the last block whose first row is at most ``row``
        mid = lo + (hi - lo) // 2
        if starts[mid] <= row:
            lo = mid
        else:
            hi = mid
    return (lo, o[3 * nblocks + lo], o[lo], o[nblocks + lo], starts[lo],
            (starts[lo + 1] if lo + 1 < nblocks else row_count) - starts[lo])


cdef inline bint _int64_array(object a):
    return (cnp.PyArray_CheckExact(a) and cnp.PyArray_NDIM(<cnp.ndarray>a) == 1
            and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_INT64 and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>a))


cdef int _run(const uint8_t* p, Py_ssize_t end, int64_t nblocks, int64_t row_count, int64_t index_offset,
              int64_t max_block_size, int64_t* out, Py_ssize_t out_len, int64_t* state, Py_ssize_t state_len):
    cdef int r
    if state_len < 5:
        return BAD_LENGTH
    if nblocks < 0 or row_count < 0 or index_offset < 0:
        return _fail(state, C_ARGS, 0, 0, 0, 0, BAD_LENGTH)
    with nogil:
        r = _check(p if end else NULL, end, nblocks, row_count, index_offset, max_block_size,
                   out if out_len else NULL, out_len, state)
    return r


@cython.boundscheck(False)
@cython.wraparound(False)
def selected_rows(const uint8_t[::1] flags, const int64_t[::1] starts, int32_t[::1] local, int64_t[::1] cuts):
    """The rows flagged non-zero in ``flags`` (one flag per row of a run of blocks) as block-local row numbers:
    block ``b`` holds rows ``starts[b] .. starts[b + 1] - 1`` of the run (``starts`` ascending from 0, its last
    entry the run's row count, ``len(flags)``); its selected rows go to ``local[cuts[b]:cuts[b + 1]]``, each minus
    ``starts[b]``. ``local`` needs room for every selected row; ``cuts`` one entry per entry of ``starts``.
    Returns the rows selected, or -4 (short buffers) / -5 (``starts`` not ascending from 0 to ``len(flags)``)."""
    cdef Py_ssize_t nb = starts.shape[0] - 1, n = flags.shape[0], b, i, j = 0, cap
    cdef int64_t s, e
    cdef const uint8_t* f
    cdef int32_t* o
    if nb < 0 or cuts.shape[0] < nb + 1:
        return -4
    if starts[0] != 0 or starts[nb] != n:
        return -5
    for b in range(nb):
        if starts[b + 1] < starts[b] or starts[b + 1] - starts[b] > 0x7FFFFFFF:
            return -5
    f = &flags[0] if n else NULL
    o = &local[0] if local.shape[0] else NULL
    with nogil:
        j = count_nonzero(f, n)
    if j > local.shape[0]:
        return -4
    j = 0
    cap = local.shape[0]
    with nogil:
        for b in range(nb):
            cuts[b] = j
            s = starts[b]
            e = starts[b + 1]
            # every row's number is written and only a selected one advances the output (no branch on the flag;
            # the room test fails only once every selected row is written)
            for i in range(s, e):
                if j < cap:
                    o[j] = <int32_t>(i - s)
                j += f[i] != 0
        cuts[nb] = j
    return j
