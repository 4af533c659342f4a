# Paimon .row compact-row codec kernels.
#
# encode_rows: append rows of a column batch to an uncompressed block buffer,
#   stopping when the block is full (Java's flush rule) or the buffer is.
# decode_block: walk the rows of one decompressed block and write the
#   projected top-level fields straight into preallocated column buffers.
# row_values: one row of a block as Python values (at the end of this file).
#
# A schema is a "program" of int32 triples (kind, arg, next): nodes in
# preorder; ``next`` is the index of the node after this subtree. ARRAY has
# one child, MAP two (key, value), ROW ``arg`` children.
#
# Every function checks each read against the row end and reports failure as
# a negative status (paimon_engine/_pykernels/status.py); the location of the
# failure goes into ``state``. Nothing here raises for bad input.
cimport cython
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int8_t, int16_t, int32_t, int64_t, uint64_t
from libc.string cimport memcmp, memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_SetItem
from cpython.float cimport PyFloat_FromDouble
from cpython.long cimport PyLong_FromLongLong
from cpython.unicode cimport PyUnicode_DecodeUTF8
from .leb128 cimport read_u32 as _read_u32, write_u32 as _write_u32
from .bitrange cimport set_bits

cnp.import_array()
import numpy
from operator import index as _as_index

# 128-bit unsigned arithmetic (GCC/Clang): the decimal range check of one value is one add and one compare
cdef extern from *:
    ctypedef unsigned long long u128 "unsigned __int128"
    ctypedef long long i128 "__int128"

cdef enum:
    TRUNCATED = -1
    OVERLONG = -2
    OUT_OF_RANGE = -3
    BAD_LENGTH = -4
    BAD_VALUE = -5
    NEED_MORE = -6

cdef enum:
    K_BOOL = 1
    K_I8 = 2
    K_I16 = 3
    K_I32 = 4
    K_I64 = 5
    K_F32 = 6
    K_F64 = 7
    K_BYTES = 8
    K_TS_MILLIS = 9
    K_TS_NANO = 10
    K_DEC_COMPACT = 11
    K_DEC_BIG = 12
    K_VARIANT = 13
    K_ARRAY = 20
    K_MAP = 21
    K_ROW = 22
    K_RAW = 23
    # decode output modes
    O_SPAN = 30


cdef inline uint8_t* _ptr(object a):
    if a is None:
        return NULL
    return <uint8_t*>cnp.PyArray_DATA(<cnp.ndarray>a)


cdef inline Py_ssize_t _nbytes(object a):
    if a is None:
        return 0
    return cnp.PyArray_NBYTES(<cnp.ndarray>a)


cdef inline bint _np_out(object a, int typenum):
    """``a`` is a writable one-dimensional C-contiguous NumPy array of ``typenum``: its data pointer can be used
    without making a typed memoryview (the writer's per-block calls)."""
    return (cnp.PyArray_CheckExact(a) and cnp.PyArray_NDIM(<cnp.ndarray>a) == 1
            and cnp.PyArray_TYPE(<cnp.ndarray>a) == typenum and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>a))


cdef inline Py_ssize_t _read_len(const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t* out) noexcept nogil:
    """varint length (non-negative int32) that must fit before ``end``."""
    cdef uint32_t v = 0
    pos = _read_u32(p, pos, end, &v)
    if pos < 0:
        return pos
    if v > 0x7FFFFFFF:
        return OUT_OF_RANGE
    if <Py_ssize_t>v > end - pos:
        return BAD_LENGTH
    out[0] = <Py_ssize_t>v
    return pos


cdef inline int _fixed_width(int kind) noexcept nogil:
    if kind == K_BOOL or kind == K_I8:
        return 1
    if kind == K_I16:
        return 2
    if kind == K_I32 or kind == K_F32:
        return 4
    if kind == K_I64 or kind == K_F64 or kind == K_TS_MILLIS or kind == K_DEC_COMPACT:
        return 8
    return 0


# ---------------------------------------------------------------- skipping
@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _skip_array(const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, const int32_t* prog,
                            Py_ssize_t child, Py_ssize_t* count) noexcept nogil:
    cdef uint32_t n = 0
    cdef Py_ssize_t nb, i
    cdef const uint8_t* bits
    pos = _read_u32(p, pos, end, &n)
    if pos < 0:
        return pos
    if n > 0x7FFFFFFF:
        return OUT_OF_RANGE
    nb = (<Py_ssize_t>n + 7) >> 3
    if nb > end - pos:
        return BAD_LENGTH
    bits = p + pos
    pos += nb
    for i in range(<Py_ssize_t>n):
        if not (bits[i >> 3] & (1 << (i & 7))):
            pos = _skip_value(p, pos, end, prog, child)
            if pos < 0:
                return pos
    count[0] = n
    return pos


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _skip_value(const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, const int32_t* prog,
                            Py_ssize_t node) noexcept nogil:
    cdef int kind = prog[node * 3]
    cdef int w = _fixed_width(kind)
    cdef Py_ssize_t n = 0, m = 0, i, nb, child
    cdef uint32_t v = 0
    cdef const uint8_t* bits
    if w:
        if w > end - pos:
            return TRUNCATED
        if kind == K_BOOL and p[pos] > 1:
            return BAD_VALUE
        return pos + w
    if kind == K_BYTES or kind == K_DEC_BIG:
        pos = _read_len(p, pos, end, &n)
        if pos < 0:
            return pos
        if kind == K_DEC_BIG and (n < 1 or n > 16):
            return BAD_LENGTH
        return pos + n
    if kind == K_TS_NANO:
        if 8 > end - pos:
            return TRUNCATED
        pos = _read_u32(p, pos + 8, end, &v)
        if pos < 0:
            return pos
        if v > 999999:
            return OUT_OF_RANGE
        return pos
    if kind == K_VARIANT:
        pos = _read_len(p, pos, end, &n)
        if pos < 0:
            return pos
        pos = _read_len(p, pos + n, end, &n)
        if pos < 0:
            return pos
        return pos + n
    if kind == K_ARRAY:
        return _skip_array(p, pos, end, prog, node + 1, &n)
    if kind == K_MAP:
        child = node + 1
        pos = _skip_array(p, pos, end, prog, child, &n)
        if pos < 0:
            return pos
        pos = _skip_array(p, pos, end, prog, prog[child * 3 + 2], &m)
        if pos < 0:
            return pos
        if n != m:
            return BAD_VALUE
        return pos
    if kind == K_ROW:
        n = prog[node * 3 + 1]
        nb = (n + 7) >> 3
        if nb > end - pos:
            return TRUNCATED
        bits = p + pos
        pos += nb
        child = node + 1
        for i in range(n):
            if not (bits[i >> 3] & (1 << (i & 7))):
                pos = _skip_value(p, pos, end, prog, child)
                if pos < 0:
                    return pos
            child = prog[child * 3 + 2]
        return pos
    return BAD_VALUE


# ---------------------------------------------------------------- decoding
cdef inline Py_ssize_t _fail(int64_t* state, Py_ssize_t r, Py_ssize_t f, Py_ssize_t pos, Py_ssize_t code) noexcept nogil:
    state[0] = r
    state[1] = f
    state[2] = pos
    return code

# What the row loop does with one top-level field: a dense code, so the
# dispatch compiles to one jump table.
cdef enum:
    OP_SKIP_FIXED = 0
    OP_SKIP_BYTES = 1
    OP_SKIP_NESTED = 2
    OP_W8 = 3
    OP_W4 = 4
    OP_W2 = 5
    OP_W1 = 6
    OP_BOOL = 7
    OP_BYTES = 8
    OP_SPAN = 9
    OP_DEC_COMPACT = 10
    OP_TS_NANO = 11
    OP_DEC_BIG = 12
    OP_BAD = 13

cdef enum:
    INVALID_UTF8 = -7

ctypedef struct OutCol:
    int op            # OP_* above
    int width         # fixed width of the field's encoding, 0 if variable
    Py_ssize_t node   # the field's program node
    int scale         # TS_NANO: 1000 (micros) or 1000000 (nanos); BYTES: 1 = check UTF-8
    uint8_t* validity
    uint8_t* values
    int32_t* offsets
    uint8_t* data
    Py_ssize_t data_cap
    int64_t* dpos     # data write position of a bytes column (in the caller's datapos array)
    u128 dec_lo       # decimals: bound - 1, where bound = 10**precision (|unscaled| < bound)
    u128 dec_span     # decimals: 2 * (bound - 1); v is in range iff (v + dec_lo) mod 2**128 <= dec_span


cdef inline bint _utf8_tail_ok(const uint8_t* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 (no overlongs, surrogates or code points above U+10FFFF) of s[i:n]."""
    cdef uint8_t c, c1
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2:
            return 0
        elif c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return 0
            i += 2
        elif c < 0xF0:
            if i + 2 >= n:
                return 0
            c1 = s[i + 1]
            if c == 0xE0:
                if c1 < 0xA0 or c1 > 0xBF:
                    return 0
            elif c == 0xED:
                if c1 < 0x80 or c1 > 0x9F:
                    return 0
            elif (c1 & 0xC0) != 0x80:
                return 0
            if (s[i + 2] & 0xC0) != 0x80:
                return 0
            i += 3
        elif c < 0xF5:
            if i + 3 >= n:
                return 0
            c1 = s[i + 1]
            if c == 0xF0:
                if c1 < 0x90 or c1 > 0xBF:
                    return 0
            elif c == 0xF4:
                if c1 < 0x80 or c1 > 0x8F:
                    return 0
            elif (c1 & 0xC0) != 0x80:
                return 0
            if (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
                return 0
            i += 4
        else:
            return 0
    return 1


cdef inline bint _utf8_ok(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0
    cdef uint64_t w
    while i + 8 <= n:
        memcpy(&w, s + i, 8)
        if w & 0x8080808080808080ULL:
            return _utf8_tail_ok(s, i, n)
        i += 8
    return _utf8_tail_ok(s, i, n)


cdef bint _utf8_ok_outlined(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """_utf8_ok as a call: for the rare value that is not ASCII inside a tight loop (kept out of its body)."""
    return _utf8_ok(s, n)


cdef inline bint _ascii16(uint64_t w0, uint64_t w1, Py_ssize_t n) noexcept nogil:
    """The first ``n`` (<= 16) of the 16 little-endian bytes ``w0 w1`` are ASCII."""
    cdef uint64_t m0, m1
    if n >= 8:
        m0 = 0xFFFFFFFFFFFFFFFFULL
        m1 = 0xFFFFFFFFFFFFFFFFULL if n == 16 else ((<uint64_t>1 << (8 * (n - 8))) - 1)
    else:
        m0 = (<uint64_t>1 << (8 * n)) - 1
        m1 = 0
    return (((w0 & m0) | (w1 & m1)) & 0x8080808080808080ULL) == 0


cdef inline int32_t _load_i32(const uint8_t* p) noexcept nogil:
    cdef int32_t v
    memcpy(&v, p, 4)
    return v


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef Py_ssize_t _decode(const uint8_t* p, Py_ssize_t blen, Py_ssize_t data_end, Py_ssize_t nrows,
                        const int32_t* rows, Py_ssize_t nsel, const int32_t* prog, Py_ssize_t nfields,
                        OutCol* outs, Py_ssize_t out_base, int64_t* state) noexcept nogil:
    cdef Py_ssize_t k, r, f, pos, end, nb, start, n, o, j, d
    cdef const uint8_t* bits
    cdef OutCol* oc
    cdef int op
    cdef uint32_t v = 0
    cdef int64_t millis, i64
    cdef uint64_t w0, w1
    cdef uint8_t b
    cdef Py_ssize_t fpos = 0
    cdef const uint8_t* row_off = p + data_end
    nb = (nfields + 7) >> 3
    for k in range(nsel):
        r = rows[k] if rows != NULL else k
        if r < 0 or r >= nrows:
            return _fail(state, r, -1, data_end, OUT_OF_RANGE)
        pos = _load_i32(row_off + 4 * r)
        end = _load_i32(row_off + 4 * r + 4) if r + 1 < nrows else data_end
        if pos < 0 or pos > end or end > data_end:
            return _fail(state, r, -1, data_end + 4 * r, BAD_VALUE)
        if nb > end - pos:
            return _fail(state, r, -1, pos, TRUNCATED)
        bits = p + pos
        pos += nb
        o = out_base + k
        for f in range(nfields):
            oc = &outs[f]
            op = oc.op
            if bits[f >> 3] & (1 << (f & 7)):
                # null: validity stays 0, fixed-width values are zeroed, strings repeat the offset
                if op == OP_W8 or op == OP_TS_NANO:
                    memset(oc.values + 8 * o, 0, 8)
                elif op == OP_W4:
                    memset(oc.values + 4 * o, 0, 4)
                elif op == OP_BYTES:
                    oc.offsets[o + 1] = <int32_t>oc.dpos[0]
                elif op == OP_DEC_COMPACT or op == OP_DEC_BIG:
                    memset(oc.values + 16 * o, 0, 16)
                elif op == OP_W2:
                    memset(oc.values + 2 * o, 0, 2)
                elif op == OP_W1:
                    oc.values[o] = 0
                continue
            fpos = pos
            if op == OP_W8:
                if 8 > end - pos:
                    return _fail(state, r, f, fpos, TRUNCATED)
                memcpy(oc.values + 8 * o, p + pos, 8)
                pos += 8
            elif op == OP_BYTES:
                pos = _read_len(p, pos, end, &n)
                if pos < 0:
                    return _fail(state, r, f, fpos, pos)
                d = oc.dpos[0]
                if d + n > oc.data_cap or d + n > 0x7FFFFFFF:
                    return _fail(state, r, f, fpos, BAD_LENGTH)
                if n <= 16 and pos + 16 <= blen and d + 16 <= oc.data_cap:
                    # short string: one fixed-size copy (the block and the buffer both have 16 bytes here)
                    memcpy(&w0, p + pos, 8)
                    memcpy(&w1, p + pos + 8, 8)
                    memcpy(oc.data + d, &w0, 8)
                    memcpy(oc.data + d + 8, &w1, 8)
                    if oc.scale and not _ascii16(w0, w1, n) and not _utf8_tail_ok(p + pos, 0, n):
                        return _fail(state, r, f, fpos, INVALID_UTF8)
                else:
                    if oc.scale and not _utf8_ok(p + pos, n):
                        return _fail(state, r, f, fpos, INVALID_UTF8)
                    memcpy(oc.data + d, p + pos, n)
                d += n
                oc.dpos[0] = d
                oc.offsets[o + 1] = <int32_t>d
                pos += n
            elif op == OP_W4:
                if 4 > end - pos:
                    return _fail(state, r, f, fpos, TRUNCATED)
                memcpy(oc.values + 4 * o, p + pos, 4)
                pos += 4
            elif op == OP_SKIP_FIXED:
                if oc.width > end - pos:
                    return _fail(state, r, f, fpos, TRUNCATED)
                if prog[3 * oc.node] == K_BOOL and p[pos] > 1:
                    return _fail(state, r, f, fpos, BAD_VALUE)
                pos += oc.width
                continue
            elif op == OP_SKIP_BYTES:
                pos = _read_len(p, pos, end, &n)
                if pos < 0:
                    return _fail(state, r, f, fpos, pos)
                pos += n
                continue
            elif op == OP_SKIP_NESTED:
                pos = _skip_value(p, pos, end, prog, oc.node)
                if pos < 0:
                    return _fail(state, r, f, fpos, pos)
                continue
            elif op == OP_SPAN:
                start = pos
                pos = _skip_value(p, pos, end, prog, oc.node)
                if pos < 0:
                    return _fail(state, r, f, fpos, pos)
                (<int64_t*>oc.values)[2 * o] = start
                (<int64_t*>oc.values)[2 * o + 1] = pos
            elif op == OP_BOOL:
                if pos >= end:
                    return _fail(state, r, f, fpos, TRUNCATED)
                b = p[pos]
                if b > 1:
                    return _fail(state, r, f, fpos, BAD_VALUE)
                if b:
                    oc.values[o >> 3] |= <uint8_t>(1 << (o & 7))
                pos += 1
            elif op == OP_W1:
                if pos >= end:
                    return _fail(state, r, f, fpos, TRUNCATED)
                oc.values[o] = p[pos]
                pos += 1
            elif op == OP_W2:
                if 2 > end - pos:
                    return _fail(state, r, f, fpos, TRUNCATED)
                memcpy(oc.values + 2 * o, p + pos, 2)
                pos += 2
            elif op == OP_DEC_COMPACT:
                if 8 > end - pos:
                    return _fail(state, r, f, fpos, TRUNCATED)
                memcpy(&i64, p + pos, 8)
                if <u128>(<i128>i64) + oc.dec_lo > oc.dec_span:
                    return _fail(state, r, f, fpos, OUT_OF_RANGE)
                memcpy(oc.values + 16 * o, &i64, 8)
                i64 = -1 if i64 < 0 else 0
                memcpy(oc.values + 16 * o + 8, &i64, 8)
                pos += 8
            elif op == OP_TS_NANO:
                if 8 > end - pos:
                    return _fail(state, r, f, fpos, TRUNCATED)
                memcpy(&millis, p + pos, 8)
                pos = _read_u32(p, pos + 8, end, &v)
                if pos < 0:
                    return _fail(state, r, f, fpos, pos)
                if v > 999999:
                    return _fail(state, r, f, fpos, OUT_OF_RANGE)
                if oc.scale == 1000:
                    (<int64_t*>oc.values)[o] = millis * 1000 + v // 1000
                else:
                    (<int64_t*>oc.values)[o] = millis * 1000000 + v
            elif op == OP_DEC_BIG:
                pos = _read_len(p, pos, end, &n)
                if pos < 0:
                    return _fail(state, r, f, fpos, pos)
                if n < 1 or n > 16:
                    return _fail(state, r, f, fpos, BAD_LENGTH)
                # big-endian two's complement -> 16-byte little-endian
                b = 0xFF if p[pos] & 0x80 else 0
                memset(oc.values + 16 * o, b, 16)
                for j in range(n):
                    oc.values[16 * o + j] = p[pos + n - 1 - j]
                memcpy(&w0, oc.values + 16 * o, 8)
                memcpy(&w1, oc.values + 16 * o + 8, 8)
                if (((<u128>w1) << 64) | w0) + oc.dec_lo > oc.dec_span:
                    return _fail(state, r, f, fpos, OUT_OF_RANGE)
                pos += n
            else:
                return _fail(state, r, f, fpos, BAD_VALUE)
            oc.validity[o >> 3] |= <uint8_t>(1 << (o & 7))
    return nsel


# ---------------------------------------------------------------- flat fast path
# A decoder whose top-level fields are all fixed-width numbers (no BOOL) or bytes, read or skipped, runs
# _decode_flat. The field descriptors are copied to the stack, so stores into the output buffers cannot alias
# them, and the data write positions live there too; a row's null bitmap is read once into one word. A row
# with no nulls that is at least as long as the smallest such row (the fixed widths plus one length byte per
# bytes field) takes the fast walk: no null test per field, no bounds check on a fixed-width field, and one
# check per bytes field, that its bytes leave room for the smallest rest of the row (so every fixed-width read
# lies inside the row); the validity bits of rows it completes are collected per output byte and set when the
# loop leaves that byte (or returns). Anything the fast walk does not settle (a length of more than one byte, a
# length past that room, a data buffer near its end, bytes that are not ASCII) hands that field, with nothing
# of it written, to the careful walk, which makes every check of the general loop (_decode) in the same order:
# statuses, their locations and what is written before a failure are the same.
cdef enum:
    FLAT_MAX = 64

ctypedef struct FlatCol:
    int op
    int width         # encoded width of a fixed-width field, 0 for bytes
    int utf8
    Py_ssize_t rest   # smallest number of bytes the fields after this one take in a row without nulls
    uint8_t* validity
    uint8_t* values
    int32_t* offsets
    uint8_t* data
    Py_ssize_t data_cap
    Py_ssize_t cap    # min(data_cap, 2**31 - 1)
    Py_ssize_t d      # data write position


# A fixed-width field copied by the row-shape walk: ``width`` bytes read at the row's first field byte + ``at[nulls]``
# (the widths of the fields before it that are not null, a bytes value's length byte counted), plus the bytes
# value's length when the field comes after the bytes field (``after`` = -1, else 0), written to ``dst`` + width *
# output row, as zeros when field ``f`` is null. A list of them ends with width 0.
ctypedef struct ShapeCopy:
    uint8_t* dst
    const int16_t* at
    Py_ssize_t after
    Py_ssize_t width
    int f


# the high bits of the first n (0 <= n <= 16) bytes of two little-endian words: a mask to test them for ASCII
cdef uint64_t _ASCII_M0[17]
cdef uint64_t _ASCII_M1[17]


cdef void _init_ascii_masks():
    cdef int n
    for n in range(17):
        if n >= 8:
            _ASCII_M0[n] = 0x8080808080808080ULL
            _ASCII_M1[n] = 0x8080808080808080ULL if n == 16 else \
                (((<uint64_t>1 << (8 * (n - 8))) - 1) & 0x8080808080808080ULL)
        else:
            _ASCII_M0[n] = ((<uint64_t>1 << (8 * n)) - 1) & 0x8080808080808080ULL
            _ASCII_M1[n] = 0


_init_ascii_masks()


cdef bint _flat_ok(OutCol* outs, Py_ssize_t nfields, const int32_t* prog) noexcept nogil:
    """_decode_flat can run a decoder with these fields."""
    cdef Py_ssize_t f
    cdef int op
    if nfields > FLAT_MAX:
        return 0
    for f in range(nfields):
        op = outs[f].op
        if op == OP_SKIP_FIXED:
            if prog[3 * outs[f].node] == K_BOOL:
                return 0
        elif not (op == OP_W8 or op == OP_W4 or op == OP_W2 or op == OP_W1 or op == OP_BYTES
                  or op == OP_SKIP_BYTES):
            return 0
    return 1


cdef inline void _flat_valid(FlatCol* fc, Py_ssize_t nfields, Py_ssize_t g, uint8_t bits) noexcept nogil:
    """Validity bits ``bits`` of output byte ``g`` set in every column written."""
    cdef Py_ssize_t i
    if bits:
        for i in range(nfields):
            if fc[i].validity != NULL:
                fc[i].validity[g] |= bits


cdef inline Py_ssize_t _flat_fail(FlatCol* fc, OutCol* outs, Py_ssize_t nfields, int64_t* state, Py_ssize_t r,
                                  Py_ssize_t f, Py_ssize_t pos, Py_ssize_t code, Py_ssize_t g,
                                  uint8_t bits) noexcept nogil:
    cdef Py_ssize_t i
    _flat_valid(fc, nfields, g, bits)
    for i in range(nfields):
        if fc[i].op == OP_BYTES:
            outs[i].dpos[0] = fc[i].d
    return _fail(state, r, f, pos, code)


cdef enum:
    SHAPE_CHUNK = 256


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void _shape_copy(const ShapeCopy* cp, Py_ssize_t width, bint nulls, const uint8_t* p,
                             const Py_ssize_t* rpos, const Py_ssize_t* rsh, const uint8_t* rnul, Py_ssize_t m,
                             Py_ssize_t o0) noexcept nogil:
    """One fixed-width field of a chunk's ``m`` rows (see _shape_walk). Without ``nulls`` in the chunk every row
    has the field at the same place; with them, each row's null byte gives the place, and a null value is read
    where it would start (inside the block: at most 8 bytes past the row's end, and the row offsets follow the
    rows) and written as zeros."""
    cdef uint8_t* dst = cp.dst + width * o0
    cdef const int16_t* at = cp.at
    cdef Py_ssize_t after = cp.after, j, s = cp.at[0]
    cdef int f = cp.f
    cdef uint64_t v = 0
    cdef uint8_t b
    for j in range(m):
        if nulls:
            b = rnul[j]
            memcpy(&v, p + rpos[j] + at[b] + (rsh[j] & after), width)
            v &= <uint64_t>(((b >> f) & 1) - 1)
            memcpy(dst + width * j, &v, width)     # (the low bytes: x86 is little-endian, as are the values)
        else:
            memcpy(dst + width * j, p + rpos[j] + s + (rsh[j] & after), width)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef Py_ssize_t _shape_walk(const uint8_t* p, Py_ssize_t blen, Py_ssize_t data_end, Py_ssize_t nrows,
                            const int32_t* rows, Py_ssize_t k0, Py_ssize_t nsel, Py_ssize_t nvar, Py_ssize_t vf,
                            FlatCol* vc, const ShapeCopy* cps, FlatCol* fc, Py_ssize_t nfields,
                            Py_ssize_t out_base, const int16_t* tab) noexcept nogil:
    """The row-shape walk of a schema of at most 8 fields (one null byte) with at most one bytes field (field
    ``vf``). ``tab`` holds, per field and per value of the null byte, where the field starts after the null
    byte when the bytes value (if any, and not null) is empty and has no length byte, and, after the fields,
    the size of such a row. A row's size then gives the bytes value's length, which its one length byte must
    equal: every field is at a known place, whichever are null. From row ``k0``, rows are taken in chunks:
    first row by row (where each starts, its nulls, the bytes value), then field by field for the whole chunk,
    without a branch on nulls. A row is taken only when the careful walk would write it without a fault and
    the same way (a bytes value with a one-byte length, valid UTF-8 where checked, and room for it; 16 bytes
    are copied for one of at most 16 when there is room for 16, as the careful walk does): the walk stops at
    the first row it does not take, with nothing of that row written, and returns the number taken. The
    bytes output, if any, has a data buffer."""
    cdef Py_ssize_t rpos[SHAPE_CHUNK]
    cdef Py_ssize_t rsh[SHAPE_CHUNK]
    cdef uint8_t rnul[SHAPE_CHUNK]
    cdef Py_ssize_t nrow[SHAPE_CHUNK]       # the chunk's rows with nulls
    cdef const uint8_t* row_off = p + data_end
    cdef const int16_t* need = tab + 256 * nfields
    cdef const int16_t* vat = tab + 256 * vf
    cdef const ShapeCopy* cp
    cdef uint8_t* data = NULL
    cdef int32_t* offsets = NULL
    cdef Py_ssize_t k = k0, m, lim, r, pos, end, n, d = 0, cap = 0, o, o0, f, s, bnull, nn, i
    cdef uint64_t w0, w1, acc
    cdef uint8_t nulls, anynull
    cdef uint8_t* v
    cdef bint utf8 = 0
    if vc != NULL:
        data, offsets, d, cap, utf8 = vc.data, vc.offsets, vc.d, vc.cap, vc.utf8
    while k < nsel:
        lim = nsel - k if nsel - k < SHAPE_CHUNK else SHAPE_CHUNK
        o0 = out_base + k
        m = 0
        nn = 0
        anynull = 0
        while m < lim:
            r = k + m if rows == NULL else rows[k + m]
            if r < 0 or r >= nrows:
                break
            pos = _load_i32(row_off + 4 * r)
            end = _load_i32(row_off + 4 * r + 4) if r + 1 < nrows else data_end
            if pos < 0 or pos >= end or end > data_end:
                break
            nulls = p[pos]
            pos += 1
            n = end - pos - need[nulls]   # the bytes value's length (0 if null), or the row's slack
            if nvar:
                bnull = (nulls >> vf) & 1
                # a null bytes value leaves no slack; another's one length byte is the rest of the row
                if n < 0 or n >= 0x80 or n != (p[pos + vat[nulls]] & (bnull - 1)):
                    break
                if data != NULL:
                    s = pos + vat[nulls] + 1      # the value's bytes end at or before the row's end
                    if n <= 16 and d + 16 <= cap and s + 16 <= blen:
                        memcpy(&w0, p + s, 8)
                        memcpy(&w1, p + s + 8, 8)
                        if utf8 and ((w0 & _ASCII_M0[n]) | (w1 & _ASCII_M1[n])) and not _utf8_ok_outlined(p + s, n):
                            break
                        memcpy(data + d, &w0, 8)
                        memcpy(data + d + 8, &w1, 8)
                    elif n > 16 and d + n + 16 <= cap and s + n + 16 <= blen:
                        # 17 to 127 bytes: checked, then copied 16 at a time (room for the last 16)
                        if utf8:
                            acc = 0
                            i = 0
                            while n - i > 16:
                                memcpy(&w0, p + s + i, 8)
                                memcpy(&w1, p + s + i + 8, 8)
                                acc |= w0 | w1
                                i += 16
                            memcpy(&w0, p + s + i, 8)
                            memcpy(&w1, p + s + i + 8, 8)
                            acc |= (w0 & _ASCII_M0[n - i]) | (w1 & _ASCII_M1[n - i])
                            if (acc & 0x8080808080808080ULL) and not _utf8_ok_outlined(p + s, n):
                                break
                        i = 0
                        while i < n:
                            memcpy(&w0, p + s + i, 8)
                            memcpy(&w1, p + s + i + 8, 8)
                            memcpy(data + d + i, &w0, 8)
                            memcpy(data + d + i + 8, &w1, 8)
                            i += 16
                    else:
                        if d + n > cap or (utf8 and not _utf8_ok_outlined(p + s, n)):
                            break
                        memcpy(data + d, p + s, n)
                    d += n
                    offsets[o0 + m + 1] = <int32_t>d
                rsh[m] = n
            else:
                if n < 0:
                    break
                rsh[m] = 0
            rpos[m] = pos
            rnul[m] = nulls
            anynull |= nulls
            nrow[nn] = m
            nn += nulls != 0
            m += 1
        if m == 0:
            break
        # field by field: a null field is read where it would start (inside the block: at most 8 bytes past
        # the row's end, and the row offsets follow the rows) and written as zeros
        cp = cps
        while cp.width:
            # (literal widths: each call compiles to its own loop of fixed-size moves)
            if cp.width == 8:
                _shape_copy(cp, 8, anynull != 0, p, rpos, rsh, rnul, m, o0)
            elif cp.width == 4:
                _shape_copy(cp, 4, anynull != 0, p, rpos, rsh, rnul, m, o0)
            elif cp.width == 2:
                _shape_copy(cp, 2, anynull != 0, p, rpos, rsh, rnul, m, o0)
            else:
                _shape_copy(cp, 1, anynull != 0, p, rpos, rsh, rnul, m, o0)
            cp += 1
        # validity: set for every row, then cleared where the field is null (the bits start cleared, as the
        # decoder requires, and each field has its own)
        for f in range(nfields):
            v = fc[f].validity
            if v == NULL:
                continue
            set_bits(v, o0, m, 1)
            if (anynull >> f) & 1:
                for i in range(nn):
                    o = o0 + nrow[i]
                    v[o >> 3] &= <uint8_t>~(((rnul[nrow[i]] >> f) & 1) << (o & 7))
        k += m
        if m < lim:
            break
    if vc != NULL:
        vc.d = d
    return k - k0


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef Py_ssize_t _decode_flat(const uint8_t* p, Py_ssize_t blen, Py_ssize_t data_end, Py_ssize_t nrows,
                             const int32_t* rows, Py_ssize_t nsel, Py_ssize_t nfields,
                             OutCol* outs, Py_ssize_t out_base, int64_t* state, const int16_t* tab,
                             Py_ssize_t* shape_wait) noexcept nogil:
    cdef FlatCol fc[FLAT_MAX]
    cdef FlatCol* c
    cdef Py_ssize_t k, r, f, pos, end, nb, n, o, d, ob, fpos, j, min_row, gcur
    cdef uint64_t nulls, w0, w1
    cdef uint8_t obit, gbits
    cdef int op, w
    cdef const uint8_t* row_off = p + data_end
    # the row-shape walk (``tab`` given: at most 8 fields, at most one of them bytes)
    cdef ShapeCopy cps[FLAT_MAX + 1]
    cdef ShapeCopy* cp
    cdef Py_ssize_t ncp = 0, nvar = 0, vf = 0, kn, retry, wait, taken
    cdef FlatCol* vc = NULL
    nb = (nfields + 7) >> 3
    min_row = 0
    f = nfields - 1
    while f >= 0:
        c = &fc[f]
        c.op = outs[f].op
        c.width = outs[f].width
        c.utf8 = outs[f].scale
        c.validity = outs[f].validity
        c.values = outs[f].values
        c.offsets = outs[f].offsets
        c.data = outs[f].data
        c.data_cap = outs[f].data_cap
        c.cap = c.data_cap if c.data_cap < 0x7FFFFFFF else 0x7FFFFFFF
        c.d = outs[f].dpos[0] if c.op == OP_BYTES else 0
        c.rest = min_row
        min_row += c.width if c.width else 1
        f -= 1
    if tab != NULL:
        for f in range(nfields):
            c = &fc[f]
            if c.op == OP_BYTES or c.op == OP_SKIP_BYTES:
                nvar = 1
                vf = f
                if c.op == OP_BYTES:
                    vc = c
            elif c.op != OP_SKIP_FIXED:
                cp = &cps[ncp]
                cp.dst, cp.at, cp.after, cp.width, cp.f = c.values, tab + 256 * f, -nvar, c.width, <int>f
                ncp += 1
        cps[ncp].width = 0
    # validity of the rows the fast walk completes: collected per output byte, set when the walk leaves it
    gcur = out_base >> 3
    gbits = 0
    # all rows in order (``nsel`` <= ``nrows``) or the rows listed; the rows the row-shape walk does not take go
    # through the fast walk, then the careful walk. After a row the walk does not take it is tried again from
    # the next row; after rows it refuses at once, from ever further on (1, 3, 7 ... 1023 rows on; the decoder
    # keeps the distance from block to block), so rows it never takes cost it little
    kn = 0
    retry = 0
    wait = shape_wait[0]
    while kn < nsel:
        if tab != NULL and kn >= retry:
            taken = _shape_walk(p, blen, data_end, nrows, rows, kn, nsel, nvar, vf, vc, cps, fc, nfields,
                                out_base, tab)
            kn += taken
            if kn >= nsel:
                break
            wait = 0 if taken else (wait * 2 + 1 if wait < 1023 else wait)
            retry = kn + 1 + wait
            shape_wait[0] = wait
        k = kn
        kn += 1
        if rows == NULL:
            r = k
            pos = _load_i32(row_off + 4 * r)
        else:
            r = rows[k]
            if r < 0 or r >= nrows:
                return _flat_fail(fc, outs, nfields, state, r, -1, data_end, OUT_OF_RANGE, gcur, gbits)
            pos = _load_i32(row_off + 4 * r)
        end = _load_i32(row_off + 4 * r + 4) if r + 1 < nrows else data_end
        if pos < 0 or pos > end or end > data_end:
            return _flat_fail(fc, outs, nfields, state, r, -1, data_end + 4 * r, BAD_VALUE, gcur, gbits)
        if nb > end - pos:
            return _flat_fail(fc, outs, nfields, state, r, -1, pos, TRUNCATED, gcur, gbits)
        nulls = p[pos]
        for j in range(1, nb):
            nulls |= (<uint64_t>p[pos + j]) << (8 * j)
        pos += nb
        o = out_base + k
        ob = o >> 3
        obit = <uint8_t>(1 << (o & 7))
        if ob != gcur:
            _flat_valid(fc, nfields, gcur, gbits)
            gcur = ob
            gbits = 0
        f = 0
        if nulls == 0 and min_row <= end - pos:
            # fast walk
            while f < nfields:
                c = &fc[f]
                op = c.op
                if op == OP_W8:
                    memcpy(c.values + 8 * o, p + pos, 8)
                    pos += 8
                elif op == OP_BYTES:
                    n = p[pos]
                    if n >= 0x80 or n > end - pos - 1 - c.rest:
                        break
                    d = c.d
                    if n > 16 or d + 16 > c.cap or pos + 17 > blen:
                        break
                    memcpy(&w0, p + pos + 1, 8)
                    memcpy(&w1, p + pos + 9, 8)
                    if c.utf8 and ((w0 & _ASCII_M0[n]) | (w1 & _ASCII_M1[n])):
                        break
                    memcpy(c.data + d, &w0, 8)
                    memcpy(c.data + d + 8, &w1, 8)
                    d += n
                    c.d = d
                    c.offsets[o + 1] = <int32_t>d
                    pos += 1 + n
                elif op == OP_W4:
                    memcpy(c.values + 4 * o, p + pos, 4)
                    pos += 4
                elif op == OP_SKIP_FIXED:
                    pos += c.width
                elif op == OP_SKIP_BYTES:
                    n = p[pos]
                    if n >= 0x80 or n > end - pos - 1 - c.rest:
                        break
                    pos += 1 + n
                elif op == OP_W2:
                    memcpy(c.values + 2 * o, p + pos, 2)
                    pos += 2
                else:
                    c.values[o] = p[pos]
                    pos += 1
                f += 1
            if f == nfields:
                gbits |= obit
                continue
            # the fields the fast walk completed before handing over
            for j in range(f):
                if fc[j].validity != NULL:
                    fc[j].validity[ob] |= obit
        # careful walk (from the first field the fast walk did not settle)
        while f < nfields:
            c = &fc[f]
            op = c.op
            if (nulls >> f) & 1:
                if op == OP_W8:
                    memset(c.values + 8 * o, 0, 8)
                elif op == OP_W4:
                    memset(c.values + 4 * o, 0, 4)
                elif op == OP_BYTES:
                    c.offsets[o + 1] = <int32_t>c.d
                elif op == OP_W2:
                    memset(c.values + 2 * o, 0, 2)
                elif op == OP_W1:
                    c.values[o] = 0
                f += 1
                continue
            fpos = pos
            if op == OP_BYTES or op == OP_SKIP_BYTES:
                if pos < end and p[pos] < 0x80:
                    n = p[pos]
                    pos += 1
                    if n > end - pos:
                        return _flat_fail(fc, outs, nfields, state, r, f, fpos, BAD_LENGTH, gcur, gbits)
                else:
                    pos = _read_len(p, pos, end, &n)
                    if pos < 0:
                        return _flat_fail(fc, outs, nfields, state, r, f, fpos, pos, gcur, gbits)
                if op == OP_BYTES:
                    d = c.d
                    if d + n > c.cap:
                        return _flat_fail(fc, outs, nfields, state, r, f, fpos, BAD_LENGTH, gcur, gbits)
                    if n <= 16 and pos + 16 <= blen and d + 16 <= c.data_cap:
                        memcpy(&w0, p + pos, 8)
                        memcpy(&w1, p + pos + 8, 8)
                        memcpy(c.data + d, &w0, 8)
                        memcpy(c.data + d + 8, &w1, 8)
                        if c.utf8 and ((w0 & _ASCII_M0[n]) | (w1 & _ASCII_M1[n])) \
                                and not _utf8_tail_ok(p + pos, 0, n):
                            return _flat_fail(fc, outs, nfields, state, r, f, fpos, INVALID_UTF8, gcur, gbits)
                    else:
                        if c.utf8 and not _utf8_ok(p + pos, n):
                            return _flat_fail(fc, outs, nfields, state, r, f, fpos, INVALID_UTF8, gcur, gbits)
                        memcpy(c.data + d, p + pos, n)
                    d += n
                    c.d = d
                    c.offsets[o + 1] = <int32_t>d
                    c.validity[ob] |= obit
                pos += n
                f += 1
                continue
            w = c.width
            if w > end - pos:
                return _flat_fail(fc, outs, nfields, state, r, f, fpos, TRUNCATED, gcur, gbits)
            if op == OP_W8:
                memcpy(c.values + 8 * o, p + pos, 8)
            elif op == OP_W4:
                memcpy(c.values + 4 * o, p + pos, 4)
            elif op == OP_W2:
                memcpy(c.values + 2 * o, p + pos, 2)
            elif op == OP_W1:
                c.values[o] = p[pos]
            if op != OP_SKIP_FIXED:
                c.validity[ob] |= obit
            pos += w
            f += 1
    _flat_valid(fc, nfields, gcur, gbits)
    for f in range(nfields):
        if fc[f].op == OP_BYTES:
            outs[f].dpos[0] = fc[f].d
    return nsel

cdef int _op_of(int mode, int kind) noexcept nogil:
    if mode == 0:
        if _fixed_width(kind):
            return OP_SKIP_FIXED
        if kind == K_BYTES:
            return OP_SKIP_BYTES
        return OP_SKIP_NESTED
    if mode == O_SPAN:
        return OP_SPAN
    if mode != kind:
        return OP_BAD
    if kind == K_I64 or kind == K_F64 or kind == K_TS_MILLIS:
        return OP_W8
    if kind == K_I32 or kind == K_F32:
        return OP_W4
    if kind == K_I16:
        return OP_W2
    if kind == K_I8:
        return OP_W1
    if kind == K_BOOL:
        return OP_BOOL
    if kind == K_BYTES:
        return OP_BYTES
    if kind == K_DEC_COMPACT:
        return OP_DEC_COMPACT
    if kind == K_TS_NANO:
        return OP_TS_NANO
    if kind == K_DEC_BIG:
        return OP_DEC_BIG
    return OP_BAD


cdef bint _set_decimal_bound(OutCol* oc, object bound, int mode):
    """The range check of a decimal field from ``bound`` = 10**precision; False if the bound is not valid."""
    try:
        b = _as_index(bound)
    except TypeError:
        return False
    if b < 1 or b > (10 ** 18 if mode == K_DEC_COMPACT else 10 ** 38):
        return False
    lo = b - 1
    span = 2 * lo
    oc.dec_lo = ((<u128>(<uint64_t>(lo >> 64))) << 64) | <uint64_t>(lo & 0xFFFFFFFFFFFFFFFF)
    oc.dec_span = ((<u128>(<uint64_t>(span >> 64))) << 64) | <uint64_t>(span & 0xFFFFFFFFFFFFFFFF)
    return True


cdef bint _shape_table(const OutCol* cols, Py_ssize_t nfields, int16_t* tab) noexcept nogil:
    """The row-shape walk's table for these fields (see _shape_walk), or 0 if the walk does not take them (more
    than 8 fields, more than one bytes field, a bytes output without a data buffer: the careful walk writes
    that one)."""
    cdef Py_ssize_t f, nvar = 0
    cdef int nulls, at
    if nfields > 8 or nfields == 0:
        return 0
    for f in range(nfields):
        if cols[f].op == OP_BYTES or cols[f].op == OP_SKIP_BYTES:
            nvar += 1
            if cols[f].op == OP_BYTES and cols[f].data == NULL:
                return 0
    if nvar > 1:
        return 0
    for nulls in range(256):
        at = 0
        for f in range(nfields):
            tab[256 * f + nulls] = <int16_t>at
            if not (nulls >> f) & 1:
                at += cols[f].width if cols[f].width else 1
        tab[256 * nfields + nulls] = <int16_t>at
    return 1


cdef class BlockDecoder:
    """Decodes rows of decompressed blocks into one set of column buffers.

    ``program`` is the schema program of the top-level ROW (node 0 is the
    first field). ``outs[f]`` is None for a field that is skipped, else a
    tuple ``(mode, scale, validity, values, offsets, data)`` of NumPy arrays:
    ``mode`` is the field's kind or O_SPAN (nested values: the (start, end)
    byte span of each value in its block); ``scale`` is 1000/1000000 for
    TS_NANO, 1 for a bytes column whose values must be UTF-8, and for a
    decimal the bound ``10**precision`` (an int, at most 10**18 for
    DEC_COMPACT and 10**38 for DEC_BIG): a value whose unscaled integer is
    not strictly between -bound and bound is OUT_OF_RANGE. ``validity``
    (and a BOOL ``values`` bitmap) must be zeroed by the caller; fixed-width
    values of null rows are written as zeros. ``datapos[f]`` is the write
    position in a bytes column's ``data`` (the caller sets the start) and
    ``state`` receives (row, field, byte offset in the block) of a failure.
    The buffers are checked once here against ``capacity`` output rows.
    Decoders that write disjoint output rows (whole bitmap bytes) and disjoint
    data ranges can run on several threads at once.
    """
    cdef object _keep            # the arrays the OutCol pointers point into
    cdef object _holder
    cdef OutCol* _cols
    cdef Py_ssize_t _nfields, _capacity
    cdef const int32_t[::1] _program
    cdef int64_t[::1] _datapos
    cdef int64_t[::1] _state
    cdef readonly int status      # 0, or the status of the constructor's argument check
    cdef readonly bint flat       # the decoder runs _decode_flat
    cdef int _shape               # 0: not worked out yet, 1: the row-shape walk runs, -1: it does not
    cdef int16_t _tab[256 * 9]    # the row-shape walk's table (see _shape_walk)
    cdef Py_ssize_t _shape_wait   # rows the walk skips after refusing rows at once (see _decode_flat)

    def __cinit__(self, const int32_t[::1] program, list outs, Py_ssize_t capacity, int64_t[::1] datapos,
                  int64_t[::1] state):
        cdef Py_ssize_t nfields = len(outs)
        cdef Py_ssize_t f, node, width
        cdef OutCol* oc
        cdef int mode
        self._keep = list(outs)
        self._program = program
        self._datapos = datapos
        self._state = state
        self._nfields = nfields
        self._capacity = capacity
        self._holder = bytearray(sizeof(OutCol) * max(nfields, 1))
        self._cols = <OutCol*><char*>self._holder
        self.status = 0
        if capacity < 0 or state.shape[0] < 3 or datapos.shape[0] < nfields:
            self.status = BAD_LENGTH
            return
        if program.shape[0] < 3 * nfields or program.shape[0] == 0:
            self.status = BAD_LENGTH
            return
        node = 0
        for f in range(nfields):
            oc = &self._cols[f]
            memset(oc, 0, sizeof(OutCol))
            if node < 0 or 3 * node + 2 >= program.shape[0]:
                self.status = BAD_LENGTH
                return
            oc.node = node
            oc.width = _fixed_width(program[3 * node])
            oc.dpos = &self._datapos[f]
            t = outs[f]
            mode = 0 if t is None else t[0]
            oc.op = _op_of(mode, program[3 * node])
            node = program[3 * node + 2]
            if t is None:
                continue
            if mode == K_DEC_COMPACT or mode == K_DEC_BIG:
                if not _set_decimal_bound(oc, t[1], mode):
                    self.status = BAD_VALUE
                    return
            else:
                oc.scale = t[1]
            oc.validity = _ptr(t[2])
            oc.values = _ptr(t[3])
            oc.offsets = <int32_t*>_ptr(t[4])
            oc.data = _ptr(t[5])
            oc.data_cap = _nbytes(t[5])
            if _nbytes(t[2]) * 8 < capacity:
                self.status = BAD_LENGTH
                return
            if oc.op == OP_BOOL:
                width = 0
                if _nbytes(t[3]) * 8 < capacity:
                    self.status = BAD_LENGTH
                    return
            elif oc.op == OP_BYTES:
                width = 0
                if _nbytes(t[4]) < 4 * (capacity + 1):
                    self.status = BAD_LENGTH
                    return
            elif oc.op == OP_SPAN or oc.op == OP_DEC_COMPACT or oc.op == OP_DEC_BIG:
                width = 16
            elif oc.op == OP_TS_NANO:
                width = 8
            else:
                width = oc.width
            if width and _nbytes(t[3]) < width * capacity:
                self.status = BAD_LENGTH
                return
        self.flat = _flat_ok(self._cols, nfields, &program[0])

    def decode(self, const uint8_t[::1] block, Py_ssize_t nrows, rows, Py_ssize_t nsel, Py_ssize_t out_base):
        """Rows of one decompressed block (its row offsets start at ``len(block) - 4 - 4 * nrows``) to output
        rows ``out_base ...``: all rows in order when ``rows`` is None (``nsel`` of them), else the local row
        numbers in the int32 array ``rows``. Returns ``nsel`` or a negative status (location in ``state``)."""
        cdef Py_ssize_t blen = block.shape[0]
        cdef Py_ssize_t data_end = blen - 4 - 4 * nrows
        cdef const uint8_t* p = &block[0] if blen else NULL
        cdef const int32_t[::1] rowsv
        cdef const int32_t* rp = NULL
        cdef Py_ssize_t r
        if self.status:
            return self.status
        if nrows < 0 or data_end < 0 or nsel < 0 or out_base < 0 or out_base + nsel > self._capacity:
            return BAD_LENGTH
        if rows is not None:
            rowsv = rows
            if rowsv.shape[0] < nsel:
                return BAD_LENGTH
            if nsel:
                rp = &rowsv[0]
        elif nsel > nrows:
            return BAD_LENGTH
        if self.flat and self._shape == 0 and nsel >= 64:
            self._shape = 1 if _shape_table(self._cols, self._nfields, self._tab) else -1
        with nogil:
            if self.flat:
                r = _decode_flat(p, blen, data_end, nrows, rp, nsel, self._nfields, self._cols, out_base,
                                 &self._state[0], self._tab if self._shape == 1 else NULL, &self._shape_wait)
            else:
                r = _decode(p, blen, data_end, nrows, rp, nsel, &self._program[0], self._nfields, self._cols,
                            out_base, &self._state[0])
        return r


def decode_block(const uint8_t[::1] block, Py_ssize_t nrows, const int32_t[::1] program,
                 list outs, rows, Py_ssize_t nsel, Py_ssize_t out_base, int64_t[::1] datapos,
                 int64_t[::1] state):
    """One call of :class:`BlockDecoder` (outputs sized for ``out_base + nsel`` rows): decode rows of one
    decompressed block into column buffers. Returns ``nsel`` or a negative status."""
    if nsel < 0 or out_base < 0:
        return BAD_LENGTH
    return BlockDecoder(program, outs, out_base + nsel, datapos, state).decode(block, nrows, rows, nsel, out_base)


def skip_values(const uint8_t[::1] buf, Py_ssize_t pos, Py_ssize_t end, const int32_t[::1] program,
                Py_ssize_t node):
    """Position after the value of program node ``node`` at ``pos`` (bounded by ``end``), or a negative status."""
    if pos < 0 or end > buf.shape[0] or pos > end or node < 0 or 3 * node >= program.shape[0]:
        return BAD_LENGTH
    if end == 0:
        return TRUNCATED
    return _skip_value(&buf[0], pos, end, &program[0], node)


# ---------------------------------------------------------------- encoding
# What the encoder does with one column: a dense code (one jump table per column and chunk of rows).
cdef enum:
    E_W8 = 0          # 8 fixed bytes (BIGINT, DOUBLE, TIMESTAMP(0..3), compact DECIMAL)
    E_W4 = 1          # 4 fixed bytes (INT, FLOAT, DATE, TIME)
    E_BYTES = 2       # varint length + bytes
    E_BOOL = 3
    E_W2 = 4
    E_W1 = 5
    E_RAW = 6         # pre-encoded bytes
    E_TS_NANO = 7     # 8 bytes of millis + varint nano-of-millisecond
    E_DEC_BIG = 8     # varint length + minimal big-endian two's complement


ctypedef struct InCol:
    int op                       # E_*
    const uint8_t* nulls
    const uint8_t* values
    const int64_t* offsets
    const int32_t* offsets32     # BYTES offsets given as int32 (an Arrow string/binary array's own), else NULL
    const uint8_t* data


cdef inline int _encode_op(int kind) noexcept nogil:
    cdef int w = _fixed_width(kind)
    if kind == K_BOOL:
        return E_BOOL
    if w == 8:
        return E_W8
    if w == 4:
        return E_W4
    if w == 2:
        return E_W2
    if w == 1:
        return E_W1
    if kind == K_BYTES:
        return E_BYTES
    if kind == K_RAW:
        return E_RAW
    if kind == K_TS_NANO:
        return E_TS_NANO
    if kind == K_DEC_BIG:
        return E_DEC_BIG
    return -1


cdef inline Py_ssize_t _encode_width(int op) noexcept nogil:
    if op == E_W8:
        return 8
    if op == E_W4:
        return 4
    if op == E_W2:
        return 2
    return 1


cdef inline Py_ssize_t _varint_len(uint32_t v) noexcept nogil:
    return 1 + (v >= 0x80) + (v >= 0x4000) + (v >= 0x200000) + (v >= 0x10000000)


cdef inline Py_ssize_t _dec_big_len(const uint8_t* le) noexcept nogil:
    """Bytes of the minimal big-endian two's complement of a 16-byte little-endian value."""
    cdef Py_ssize_t j = 15
    while j > 0 and ((le[j] == 0 and not (le[j - 1] & 0x80)) or (le[j] == 0xFF and (le[j - 1] & 0x80))):
        j -= 1
    return j + 1


cdef inline void _copy_small(uint8_t* dst, const uint8_t* src, Py_ssize_t n) noexcept nogil:
    """``n`` bytes, with at most two constant-size moves up to 16 (overlapping, never past either end)."""
    cdef uint64_t a, b
    cdef uint32_t c, d
    if n >= 8:
        if n <= 16:
            memcpy(&a, src, 8)
            memcpy(&b, src + n - 8, 8)
            memcpy(dst, &a, 8)
            memcpy(dst + n - 8, &b, 8)
        else:
            memcpy(dst, src, n)
    elif n >= 4:
        memcpy(&c, src, 4)
        memcpy(&d, src + n - 4, 4)
        memcpy(dst, &c, 4)
        memcpy(dst + n - 4, &d, 4)
    elif n > 0:
        dst[0] = src[0]
        dst[n - 1] = src[n - 1]
        dst[n >> 1] = src[n >> 1]


cdef inline Py_ssize_t _put_bytes(uint8_t* out, Py_ssize_t at, const uint8_t* src, Py_ssize_t n) noexcept nogil:
    """A BYTES value (varint length, then the bytes) written at ``at``; returns the position after it."""
    if n < 0x80:
        out[at] = <uint8_t>n
        at += 1
    else:
        at += _write_u32(out + at, <uint32_t>n)
    _copy_small(out + at, src, n)
    return at + n


cdef enum:
    ENC_CHUNK = 256      # rows the encoder sizes and writes column by column at a time


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef Py_ssize_t _encode(InCol* cols, Py_ssize_t ncols, Py_ssize_t start, Py_ssize_t stop, uint8_t* out,
                        Py_ssize_t cap, int32_t* row_offsets, Py_ssize_t max_rows, int64_t* state,
                        Py_ssize_t block_size) noexcept nogil:
    # Rows go a chunk at a time, column by column: first every row's exact size (a loop per column), then the
    # rows that fit (the room check and Java's flush rule, row by row), then each column's values written at
    # every taken row's cursor (a loop per column) and the null bits set in the row headers. No move writes
    # past the value it copies, so the order in which the columns are written does not matter.
    cdef Py_ssize_t sz[ENC_CHUNK]
    cdef Py_ssize_t cur[ENC_CHUNK]
    cdef Py_ssize_t r0, m, i, k, f, pos = state[0], nrows = state[1], hb, n, s, j, first, base
    cdef InCol* c
    cdef const uint8_t* nl
    cdef const uint8_t* v
    cdef const int64_t* o
    cdef const int32_t* o32
    cdef uint8_t bit
    cdef uint8_t tmp[16]
    cdef bint full = False
    hb = (ncols + 7) >> 3
    base = hb
    for f in range(ncols):
        c = &cols[f]
        if c.nulls == NULL and (c.op == E_W8 or c.op == E_W4 or c.op == E_W2 or c.op == E_W1 or c.op == E_BOOL):
            base += _encode_width(c.op)
    state[2] = 0
    r0 = start
    while r0 < stop:
        m = stop - r0
        if m > ENC_CHUNK:
            m = ENC_CHUNK
        # exact row sizes (the fixed-width columns without null flags are in ``base``)
        for i in range(m):
            sz[i] = base
        for f in range(ncols):
            c = &cols[f]
            nl = c.nulls + r0 if c.nulls != NULL else NULL
            o = c.offsets + r0 if c.offsets != NULL else NULL
            if c.op == E_W8 or c.op == E_W4 or c.op == E_W2 or c.op == E_W1 or c.op == E_BOOL:
                if nl != NULL:
                    # no branch on the flag (nulls come in no pattern: a branch was mispredicted at each)
                    k = _encode_width(c.op)
                    for i in range(m):
                        sz[i] += k & (<Py_ssize_t>(nl[i] != 0) - 1)
            elif c.op == E_BYTES:
                o32 = c.offsets32 + r0 if c.offsets32 != NULL else NULL
                if nl == NULL and o32 != NULL:
                    # an Arrow string column without nulls (the common case) in a loop of its own
                    for i in range(m):
                        n = o32[i + 1] - o32[i]
                        sz[i] += _varint_len(<uint32_t>n) + n
                else:
                    for i in range(m):
                        if nl == NULL or not nl[i]:
                            n = (o32[i + 1] - o32[i]) if o32 != NULL else (o[i + 1] - o[i])
                            sz[i] += _varint_len(<uint32_t>n) + n
            elif c.op == E_RAW:
                for i in range(m):
                    if nl == NULL or not nl[i]:
                        sz[i] += o[i + 1] - o[i]
            elif c.op == E_TS_NANO:
                for i in range(m):
                    if nl == NULL or not nl[i]:
                        sz[i] += 8 + _varint_len(<uint32_t>o[i])
            elif c.op == E_DEC_BIG:
                for i in range(m):
                    if nl == NULL or not nl[i]:
                        n = _dec_big_len(c.values + 16 * (r0 + i))
                        sz[i] += 1 + n
        # the rows of this chunk that go into the block
        k = 0
        first = nrows
        while k < m:
            if nrows >= max_rows or sz[k] > cap - pos:
                full = True
                state[2] = 1
                break
            row_offsets[nrows] = <int32_t>pos
            nrows += 1
            cur[k] = pos + hb
            if hb == 1:
                out[pos] = 0
            else:
                memset(out + pos, 0, hb)
            pos += sz[k]
            k += 1
            if pos + 4 * nrows + 4 >= block_size:
                full = True
                state[2] = 2
                break
        # the values of those rows
        for f in range(ncols):
            c = &cols[f]
            nl = c.nulls + r0 if c.nulls != NULL else NULL
            o = c.offsets + r0 if c.offsets != NULL else NULL
            bit = <uint8_t>(1 << (f & 7))
            if nl != NULL:
                # the null bits and (below) the nullable fixed-width values without a branch on the flag: nulls
                # come in no pattern, and a branch on each was mispredicted at every null
                for i in range(k):
                    out[row_offsets[first + i] + (f >> 3)] |= bit & <uint8_t>(0 - (nl[i] != 0))
            if c.op == E_W8:
                v = c.values + 8 * r0
                if nl == NULL:
                    for i in range(k):
                        memcpy(out + cur[i], v + 8 * i, 8)
                        cur[i] += 8
                else:
                    # a null row's value goes to a scratch slot instead (its row takes no bytes for it)
                    for i in range(k):
                        memcpy((out + cur[i]) if nl[i] == 0 else tmp, v + 8 * i, 8)
                        cur[i] += 8 * (nl[i] == 0)
            elif c.op == E_W4:
                v = c.values + 4 * r0
                if nl == NULL:
                    for i in range(k):
                        memcpy(out + cur[i], v + 4 * i, 4)
                        cur[i] += 4
                else:
                    for i in range(k):
                        memcpy((out + cur[i]) if nl[i] == 0 else tmp, v + 4 * i, 4)
                        cur[i] += 4 * (nl[i] == 0)
            elif c.op == E_BYTES:
                o32 = c.offsets32 + r0 if c.offsets32 != NULL else NULL
                if nl == NULL and o32 != NULL:
                    # an Arrow string column without nulls in a loop of its own
                    for i in range(k):
                        s = o32[i]
                        cur[i] = _put_bytes(out, cur[i], c.data + s, o32[i + 1] - s)
                else:
                    for i in range(k):
                        if nl == NULL or not nl[i]:
                            if o32 != NULL:
                                s = o32[i]
                                n = o32[i + 1] - s
                            else:
                                s = o[i]
                                n = o[i + 1] - s
                            cur[i] = _put_bytes(out, cur[i], c.data + s, n)
            elif c.op == E_BOOL:
                v = c.values + r0
                for i in range(k):
                    if nl == NULL or not nl[i]:
                        out[cur[i]] = 1 if v[i] else 0
                        cur[i] += 1
            elif c.op == E_W2:
                v = c.values + 2 * r0
                for i in range(k):
                    if nl == NULL or not nl[i]:
                        memcpy(out + cur[i], v + 2 * i, 2)
                        cur[i] += 2
            elif c.op == E_W1:
                v = c.values + r0
                for i in range(k):
                    if nl == NULL or not nl[i]:
                        out[cur[i]] = v[i]
                        cur[i] += 1
            elif c.op == E_RAW:
                for i in range(k):
                    if nl == NULL or not nl[i]:
                        n = o[i + 1] - o[i]
                        memcpy(out + cur[i], c.data + o[i], n)
                        cur[i] += n
            elif c.op == E_TS_NANO:
                v = c.values + 8 * r0
                for i in range(k):
                    if nl == NULL or not nl[i]:
                        memcpy(out + cur[i], v + 8 * i, 8)
                        cur[i] += 8
                        cur[i] += _write_u32(out + cur[i], <uint32_t>o[i])
            elif c.op == E_DEC_BIG:
                # 16-byte little-endian -> minimal big-endian two's complement
                v = c.values + 16 * r0
                for i in range(k):
                    if nl == NULL or not nl[i]:
                        for j in range(16):
                            tmp[j] = v[16 * i + 15 - j]
                        n = _dec_big_len(v + 16 * i)
                        out[cur[i]] = <uint8_t>n
                        memcpy(out + cur[i] + 1, tmp + 16 - n, n)
                        cur[i] += 1 + n
        r0 += k
        if full:
            break
    state[0] = pos
    state[1] = nrows
    return r0 - start


def encode_rows(list cols, Py_ssize_t start, Py_ssize_t stop, out, row_offsets, state, Py_ssize_t block_size):
    """Append rows [start, stop) of a column batch to a block buffer.

    ``cols[f]`` = ``(kind, nulls, values, offsets, data)``: ``nulls`` a uint8
    array (1 = null) or None; ``values`` the fixed-width bytes (BOOL: one
    byte per row; TS_NANO: int64 millis; DEC_BIG: 16-byte LE unscaled);
    ``offsets`` int64 (BYTES/RAW: n+1 offsets into ``data``, int32 allowed for
    BYTES; TS_NANO: the nano-of-millisecond per row). ``state`` = (write position, rows in the
    block, stop reason): reason 1 = ``out`` or ``row_offsets`` is full (grow
    and call again), 2 = the block reached ``block_size`` (flush). Returns
    the number of rows appended or a negative status (BAD_VALUE for a kind
    it does not encode: nested values come pre-encoded as RAW).
    """
    cdef Py_ssize_t ncols = len(cols)
    cdef uint8_t[::1] outv
    cdef int32_t[::1] rov
    cdef int64_t[::1] stv
    cdef uint8_t* op
    cdef int32_t* rp
    cdef int64_t* sp
    cdef Py_ssize_t olen, rlen, slen
    cdef InCol[64] small
    cdef object holder = None
    cdef InCol* arr = small
    cdef Py_ssize_t f, r, width
    cdef int w, kind
    cdef InCol* c
    # uint8, int32 and int64 arrays (NumPy's own arrays without a typed memoryview, else through one)
    if _np_out(out, cnp.NPY_UINT8):
        op = <uint8_t*>cnp.PyArray_DATA(<cnp.ndarray>out)
        olen = cnp.PyArray_DIM(<cnp.ndarray>out, 0)
    else:
        outv = out
        olen = outv.shape[0]
        op = &outv[0] if olen else NULL
    if _np_out(row_offsets, cnp.NPY_INT32):
        rp = <int32_t*>cnp.PyArray_DATA(<cnp.ndarray>row_offsets)
        rlen = cnp.PyArray_DIM(<cnp.ndarray>row_offsets, 0)
    else:
        rov = row_offsets
        rlen = rov.shape[0]
        rp = &rov[0] if rlen else NULL
    if _np_out(state, cnp.NPY_INT64):
        sp = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>state)
        slen = cnp.PyArray_DIM(<cnp.ndarray>state, 0)
    else:
        stv = state
        slen = stv.shape[0]
        sp = &stv[0] if slen else NULL
    if start < 0 or stop < start or slen < 3 or olen == 0 or rlen == 0:
        return BAD_LENGTH
    if ncols > 64:
        holder = bytearray(sizeof(InCol) * ncols)
        arr = <InCol*><char*>holder
    for f in range(ncols):
        t = cols[f]
        c = &arr[f]
        kind = t[0]
        c.op = _encode_op(kind)
        c.nulls = _ptr(t[1])
        c.values = _ptr(t[2])
        c.offsets = NULL
        c.offsets32 = NULL
        width = 8
        if kind == K_BYTES and isinstance(t[3], cnp.ndarray) and cnp.PyArray_TYPE(<cnp.ndarray>t[3]) == cnp.NPY_INT32:
            c.offsets32 = <const int32_t*>_ptr(t[3])
            width = 4
        else:
            c.offsets = <const int64_t*>_ptr(t[3])
        c.data = _ptr(t[4])
        if c.op < 0:
            return BAD_VALUE
        if t[1] is not None and _nbytes(t[1]) < stop:
            return BAD_LENGTH
        w = _fixed_width(kind)
        if kind == K_BOOL and _nbytes(t[2]) < stop:
            return BAD_LENGTH
        if w and _nbytes(t[2]) < w * stop:
            return BAD_LENGTH
        if (kind == K_BYTES or kind == K_RAW) and _nbytes(t[3]) < width * (stop + 1):
            return BAD_LENGTH
        if kind == K_TS_NANO and (_nbytes(t[2]) < 8 * stop or _nbytes(t[3]) < 8 * stop):
            return BAD_LENGTH
        if kind == K_DEC_BIG and _nbytes(t[2]) < 16 * stop:
            return BAD_LENGTH
    with nogil:
        r = _encode(arr, ncols, start, stop, op, olen, rp, rlen, sp, block_size)
    return r


@cython.boundscheck(False)
@cython.wraparound(False)
def finish_block(out, row_offsets, state):
    """Close the block that :func:`encode_rows` filled (``state`` = its write position, row count and stop
    reason): its row offsets and then the row count, little-endian int32s, written after its rows, and
    ``state`` set to zeros for the next block. Returns the block's length, NEED_MORE (``state`` unchanged)
    when ``out`` has no room for them, or BAD_LENGTH when ``state`` does not fit the arrays."""
    cdef Py_ssize_t pos, nrows, i, total, olen, rlen, slen
    cdef uint8_t* q
    cdef uint32_t v
    cdef uint8_t[::1] outv
    cdef const int32_t[::1] rov
    cdef int64_t[::1] stv
    cdef uint8_t* op
    cdef const int32_t* rp
    cdef int64_t* sp
    if _np_out(out, cnp.NPY_UINT8):
        op = <uint8_t*>cnp.PyArray_DATA(<cnp.ndarray>out)
        olen = cnp.PyArray_DIM(<cnp.ndarray>out, 0)
    else:
        outv = out
        olen = outv.shape[0]
        op = &outv[0] if olen else NULL
    if _np_out(row_offsets, cnp.NPY_INT32):
        rp = <const int32_t*>cnp.PyArray_DATA(<cnp.ndarray>row_offsets)
        rlen = cnp.PyArray_DIM(<cnp.ndarray>row_offsets, 0)
    else:
        rov = row_offsets
        rlen = rov.shape[0]
        rp = &rov[0] if rlen else NULL
    if _np_out(state, cnp.NPY_INT64):
        sp = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>state)
        slen = cnp.PyArray_DIM(<cnp.ndarray>state, 0)
    else:
        stv = state
        slen = stv.shape[0]
        sp = &stv[0] if slen else NULL
    if slen < 3:
        return BAD_LENGTH
    pos = sp[0]
    nrows = sp[1]
    if pos < 0 or nrows < 0 or nrows > rlen or pos > olen:
        return BAD_LENGTH
    if (olen - pos) // 4 < nrows + 1:
        return NEED_MORE
    total = pos + 4 * nrows + 4
    q = op + pos
    with nogil:
        for i in range(nrows + 1):
            v = <uint32_t>(rp[i] if i < nrows else nrows)
            q[0] = <uint8_t>v
            q[1] = <uint8_t>(v >> 8)
            q[2] = <uint8_t>(v >> 16)
            q[3] = <uint8_t>(v >> 24)
            q += 4
    sp[0] = 0
    sp[1] = 0
    sp[2] = 0
    return total


# ---------------------------------------------------------------- statistics
cdef extern from *:
    uint64_t _bswap64 "__builtin_bswap64"(uint64_t) nogil


cdef inline int _cmp_bytes(const uint8_t* a, Py_ssize_t na, const uint8_t* b, Py_ssize_t nb) noexcept nogil:
    cdef int r = memcmp(a, b, na if na < nb else nb)
    if r:
        return r
    return (na > nb) - (na < nb)


# masks that keep the first n (0 <= n <= 16) bytes of two little-endian words
cdef uint64_t _BYTE_M0[17]
cdef uint64_t _BYTE_M1[17]


cdef void _init_byte_masks():
    cdef int n
    for n in range(17):
        _BYTE_M0[n] = 0xFFFFFFFFFFFFFFFFULL if n >= 8 else (<uint64_t>1 << (8 * n)) - 1
        _BYTE_M1[n] = 0 if n <= 8 else 0xFFFFFFFFFFFFFFFFULL if n == 16 else (<uint64_t>1 << (8 * (n - 8))) - 1


_init_byte_masks()


ctypedef fused _off_t:
    int32_t
    int64_t


cdef inline u128 _bytes_key(const uint8_t* d, Py_ssize_t dlen, Py_ssize_t s, Py_ssize_t ln) noexcept nogil:
    """The key of the ``ln`` bytes at ``d + s`` (inside ``d``'s ``dlen``): their first 16 bytes as one big-endian
    128-bit number, zero-padded. Keys order values up to 16 bytes long together with the length; values longer
    than 16 bytes with equal keys are compared on from their 17th byte."""
    cdef uint64_t h, l
    cdef uint8_t tmp[16]
    cdef Py_ssize_t m = ln if ln < 16 else 16
    if s + 16 <= dlen:
        memcpy(&h, d + s, 8)
        memcpy(&l, d + s + 8, 8)
        h &= _BYTE_M0[m]
        l &= _BYTE_M1[m]
    else:
        memset(tmp, 0, 16)
        if m:
            memcpy(tmp, d + s, m)
        memcpy(&h, tmp, 8)
        memcpy(&l, tmp + 8, 8)
    return ((<u128>_bswap64(h)) << 64) | _bswap64(l)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _bytes_bounds(const _off_t* offsets, const uint8_t* d, Py_ssize_t dlen, const uint8_t* nulls,
                              Py_ssize_t a, Py_ssize_t b, Py_ssize_t* bounds) noexcept nogil:
    """Go on with the rows of the smallest and the largest non-null value (``bounds[0]``, ``bounds[1]``: -1 when
    none yet, else rows before ``b``) over rows [a, b) of a bytes column (see bytes_min_max). Returns the number
    of non-null values in [a, b), or BAD_LENGTH for offsets outside ``d`` (``bounds`` as they were)."""
    cdef Py_ssize_t i, s, e, ln, count = 0
    cdef Py_ssize_t imin = bounds[0], imax = bounds[1], lmin = 0, lmax = 0
    cdef u128 kmin = 0, kmax = 0
    cdef u128 key
    cdef bint less, more
    if imin >= 0:
        if offsets[imin] < 0 or offsets[imin + 1] < offsets[imin] or offsets[imin + 1] > dlen or \
                offsets[imax] < 0 or offsets[imax + 1] < offsets[imax] or offsets[imax + 1] > dlen:
            return BAD_LENGTH
        lmin = offsets[imin + 1] - offsets[imin]
        lmax = offsets[imax + 1] - offsets[imax]
        kmin = _bytes_key(d, dlen, offsets[imin], lmin)
        kmax = _bytes_key(d, dlen, offsets[imax], lmax)
    for i in range(a, b):
        if nulls != NULL and nulls[i]:
            continue
        s = offsets[i]
        e = offsets[i + 1]
        if s < 0 or e < s or e > dlen:
            return BAD_LENGTH
        ln = e - s
        key = _bytes_key(d, dlen, s, ln)
        count += 1
        if imin < 0:
            imin = imax = i
            kmin = kmax = key
            lmin = lmax = ln
            continue
        if key < kmin:
            imin, kmin, lmin = i, key, ln
        elif key == kmin:
            if ln <= 16 or lmin <= 16:
                less = ln < lmin
            else:
                less = _cmp_bytes(d + s + 16, ln - 16, d + offsets[imin] + 16, lmin - 16) < 0
            if less:
                imin, lmin = i, ln
        if key > kmax:
            imax, kmax, lmax = i, key, ln
        elif key == kmax:
            if ln <= 16 or lmax <= 16:
                more = ln > lmax
            else:
                more = _cmp_bytes(d + s + 16, ln - 16, d + offsets[imax] + 16, lmax - 16) > 0
            if more:
                imax, lmax = i, ln
    bounds[0] = imin
    bounds[1] = imax
    return count


@cython.boundscheck(False)
@cython.wraparound(False)
def bytes_min_max(const _off_t[::1] offsets, const uint8_t[::1] data, nulls, Py_ssize_t n, int64_t[::1] out):
    """Rows of the smallest and the largest non-null value of a bytes column (unsigned byte order, a prefix
    before its extensions; the first such row on ties) into ``out[0]``, ``out[1]`` (-1 when every value is
    null). ``offsets`` are ``n + 1`` int32 or int64 positions into ``data``, ``nulls`` None or one uint8 flag
    per row.
    Returns the number of non-null values, or BAD_LENGTH for offsets outside ``data`` or arrays too short."""
    cdef Py_ssize_t dlen = data.shape[0], count = 0
    cdef Py_ssize_t bounds[2]
    cdef const uint8_t[::1] nv
    cdef const uint8_t* np_ = NULL
    cdef const uint8_t* d = &data[0] if dlen else NULL
    if n < 0 or offsets.shape[0] < n + 1 or out.shape[0] < 2:
        return BAD_LENGTH
    if nulls is not None:
        nv = nulls
        if nv.shape[0] < n:
            return BAD_LENGTH
        if n:
            np_ = &nv[0]
    bounds[0] = bounds[1] = -1
    with nogil:
        count = _bytes_bounds(&offsets[0], d, dlen, np_, 0, n, bounds)
    if count < 0:
        return count
    out[0] = bounds[0]
    out[1] = bounds[1]
    return count


# min/max of a fixed-width number column: values are read with memcpy (a sliced column need not be aligned),
# so the compiler may vectorize the loops with unaligned loads
ctypedef fused _num_t:
    int8_t
    int16_t
    int32_t
    int64_t
    float
    double


cdef extern from *:
    double __builtin_inf() nogil
    int __builtin_signbit(double) nogil


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _num_min_max(const uint8_t* p, const uint8_t* nulls, Py_ssize_t n, uint8_t* out,
                             _num_t tag) noexcept nogil:
    # ``tag`` only selects the value type
    cdef Py_ssize_t i, count = 0
    cdef _num_t v, lo, hi, v0, v1, v2, v3, lo0, lo1, lo2, lo3, hi0, hi1, hi2, hi3
    cdef bint neg_zero = False, pos_zero = False
    cdef int keep, k0, k1, k2, k3
    cdef Py_ssize_t m
    if _num_t is float or _num_t is double:
        lo = <_num_t>__builtin_inf()
        hi = -lo
    else:
        lo = <_num_t>(~(<uint64_t>0) >> (65 - 8 * sizeof(_num_t)))   # the type's largest value
        hi = -lo - 1
    # branch-free selects (NaN compares false, so it never becomes a bound) into four independent pairs of
    # bounds (no chain of dependent selects), one loop with and one without null flags
    lo0 = lo1 = lo2 = lo3 = lo
    hi0 = hi1 = hi2 = hi3 = hi
    m = n & ~(<Py_ssize_t>3)
    if nulls == NULL:
        for i in range(0, m, 4):
            memcpy(&v0, p + i * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            memcpy(&v1, p + (i + 1) * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            memcpy(&v2, p + (i + 2) * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            memcpy(&v3, p + (i + 3) * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            if _num_t is float or _num_t is double:
                count += (v0 == v0) + (v1 == v1) + (v2 == v2) + (v3 == v3)
            lo0 = v0 if v0 < lo0 else lo0
            lo1 = v1 if v1 < lo1 else lo1
            lo2 = v2 if v2 < lo2 else lo2
            lo3 = v3 if v3 < lo3 else lo3
            hi0 = v0 if v0 > hi0 else hi0
            hi1 = v1 if v1 > hi1 else hi1
            hi2 = v2 if v2 > hi2 else hi2
            hi3 = v3 if v3 > hi3 else hi3
        for i in range(m, n):
            memcpy(&v, p + i * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            if _num_t is float or _num_t is double:
                count += v == v
            lo0 = v if v < lo0 else lo0
            hi0 = v if v > hi0 else hi0
        if not (_num_t is float or _num_t is double):
            count = n
    else:
        for i in range(0, m, 4):
            memcpy(&v0, p + i * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            memcpy(&v1, p + (i + 1) * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            memcpy(&v2, p + (i + 2) * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            memcpy(&v3, p + (i + 3) * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            k0 = nulls[i] == 0
            k1 = nulls[i + 1] == 0
            k2 = nulls[i + 2] == 0
            k3 = nulls[i + 3] == 0
            if _num_t is float or _num_t is double:
                k0 = k0 & (v0 == v0)
                k1 = k1 & (v1 == v1)
                k2 = k2 & (v2 == v2)
                k3 = k3 & (v3 == v3)
            count += k0 + k1 + k2 + k3
            lo0 = v0 if k0 & (v0 < lo0) else lo0
            lo1 = v1 if k1 & (v1 < lo1) else lo1
            lo2 = v2 if k2 & (v2 < lo2) else lo2
            lo3 = v3 if k3 & (v3 < lo3) else lo3
            hi0 = v0 if k0 & (v0 > hi0) else hi0
            hi1 = v1 if k1 & (v1 > hi1) else hi1
            hi2 = v2 if k2 & (v2 > hi2) else hi2
            hi3 = v3 if k3 & (v3 > hi3) else hi3
        for i in range(m, n):
            memcpy(&v, p + i * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
            if _num_t is float or _num_t is double:
                keep = (nulls[i] == 0) & (v == v)
            else:
                keep = nulls[i] == 0
            count += keep
            lo0 = v if keep & (v < lo0) else lo0
            hi0 = v if keep & (v > hi0) else hi0
    lo0 = lo1 if lo1 < lo0 else lo0
    lo2 = lo3 if lo3 < lo2 else lo2
    lo = lo2 if lo2 < lo0 else lo0
    hi0 = hi1 if hi1 > hi0 else hi0
    hi2 = hi3 if hi3 > hi2 else hi2
    hi = hi2 if hi2 > hi0 else hi0
    if count == 0:
        return 0
    if _num_t is float or _num_t is double:
        if lo == 0 or hi == 0:
            # -0.0 orders before 0.0: the lower bound is -0.0 when one was written, the upper bound 0.0 likewise
            for i in range(n):
                if nulls != NULL and nulls[i]:
                    continue
                memcpy(&v, p + i * <Py_ssize_t>sizeof(_num_t), sizeof(_num_t))
                if v == 0:
                    if __builtin_signbit(v):
                        neg_zero = True
                    else:
                        pos_zero = True
            if lo == 0:
                lo = -(<_num_t>0.0) if neg_zero else <_num_t>0.0
            if hi == 0:
                hi = <_num_t>0.0 if pos_zero else -(<_num_t>0.0)
    memcpy(out, &lo, sizeof(_num_t))
    memcpy(out + sizeof(_num_t), &hi, sizeof(_num_t))
    return count


def numeric_min_max(const uint8_t[::1] values, int kind, nulls, Py_ssize_t n, uint8_t[::1] out):
    """Smallest and largest non-null value of a fixed-width number column (``kind`` one of I8, I16, I32, I64,
    F32, F64; ``values`` its little-endian bytes, ``nulls`` None or one uint8 flag per row): the two values,
    in the column's width, into ``out`` (the smallest first), when there is one. NaN is skipped, and -0.0 orders
    before 0.0. Returns the number of values compared (non-null, not NaN), or BAD_LENGTH for arrays too short
    (BAD_VALUE for another kind)."""
    cdef int w = _fixed_width(kind)
    cdef const uint8_t[::1] nv
    cdef const uint8_t* np_ = NULL
    cdef const uint8_t* p = &values[0] if values.shape[0] else NULL
    cdef uint8_t* o
    cdef Py_ssize_t r = 0
    if kind < K_I8 or kind > K_F64:
        return BAD_VALUE
    if n < 0 or values.shape[0] < w * n or out.shape[0] < 2 * w:
        return BAD_LENGTH
    if nulls is not None:
        nv = nulls
        if nv.shape[0] < n:
            return BAD_LENGTH
        if n:
            np_ = &nv[0]
    o = &out[0]
    with nogil:
        if kind == K_I8:
            r = _num_min_max(p, np_, n, o, <int8_t>0)
        elif kind == K_I16:
            r = _num_min_max(p, np_, n, o, <int16_t>0)
        elif kind == K_I32:
            r = _num_min_max(p, np_, n, o, <int32_t>0)
        elif kind == K_I64:
            r = _num_min_max(p, np_, n, o, <int64_t>0)
        elif kind == K_F32:
            r = _num_min_max(p, np_, n, o, <float>0)
        else:
            r = _num_min_max(p, np_, n, o, <double>0)
    return r


cdef Py_ssize_t _num_bounds(const uint8_t* p, const uint8_t* nulls, Py_ssize_t n, int64_t* st,
                            _num_t tag) noexcept nogil:
    """Go on with a number column's bounds ``st`` (see column_bounds) over ``n`` values; returns the number
    compared."""
    cdef uint8_t buf[16]
    cdef _num_t lo, hi
    cdef double dlo, dhi, olo, ohi
    cdef Py_ssize_t got = _num_min_max(p, nulls, n, buf, tag)
    if got == 0:
        return 0
    memcpy(&lo, buf, sizeof(_num_t))
    memcpy(&hi, buf + sizeof(_num_t), sizeof(_num_t))
    if _num_t is float or _num_t is double:
        dlo = lo
        dhi = hi
        if st[1]:
            # -0.0 orders before 0.0, as in _num_min_max
            memcpy(&olo, &st[2], 8)
            memcpy(&ohi, &st[3], 8)
            if not (dlo < olo or (dlo == olo and __builtin_signbit(dlo) and not __builtin_signbit(olo))):
                dlo = olo
            if not (dhi > ohi or (dhi == ohi and not __builtin_signbit(dhi) and __builtin_signbit(ohi))):
                dhi = ohi
        memcpy(&st[2], &dlo, 8)
        memcpy(&st[3], &dhi, 8)
    else:
        if st[1] == 0 or <int64_t>lo < st[2]:
            st[2] = <int64_t>lo
        if st[1] == 0 or <int64_t>hi > st[3]:
            st[3] = <int64_t>hi
    st[1] += got
    return got


@cython.boundscheck(False)
@cython.wraparound(False)
def column_bounds(list cols, Py_ssize_t start, Py_ssize_t stop, int64_t[::1] stats):
    """Go on with the bounds of columns over their rows [start, stop): ``cols[f]`` is the column's encode_rows
    tuple and ``stats[4 * f:4 * f + 4]`` = (wanted, compared, lower, upper), kept from call to call (start
    them at (1, 0, -1, -1) for a column whose bounds are wanted, (0, ...) for one left alone). A bytes column's
    bounds are the rows of its smallest and largest non-null value (as bytes_min_max: the first such row on
    ties; -1 while there is none), a number column's (I8 to F64) its smallest and largest non-null value (as
    numeric_min_max: NaN skipped, -0.0 before 0.0) as an int64, or a double's bits for F32 and F64; ``compared``
    counts the values compared. Called on the rows each encode_rows call took, the values are read while they
    are still in the cache. Returns 0, or at the first column that fails (its numbers unchanged; the columns
    before it have taken the rows): BAD_LENGTH for arrays too short, offsets outside the data or bound rows
    outside the rows given, BAD_VALUE for a kind without bounds."""
    cdef Py_ssize_t ncols = len(cols), f, got, n = stop - start, dlen
    cdef int64_t* st
    cdef const uint8_t* nl
    cdef const uint8_t* p
    cdef const uint8_t* d
    cdef const uint8_t* o
    cdef Py_ssize_t bounds[2]
    cdef int kind, w
    cdef bint o32
    if start < 0 or stop < start or stats.shape[0] < 4 * ncols:
        return BAD_LENGTH
    for f in range(ncols):
        st = &stats[4 * f]
        if not st[0]:
            continue
        t = cols[f]
        kind = t[0]
        if t[1] is not None and _nbytes(t[1]) < stop:
            return BAD_LENGTH
        if kind == K_BYTES:
            o32 = isinstance(t[3], cnp.ndarray) and cnp.PyArray_TYPE(<cnp.ndarray>t[3]) == cnp.NPY_INT32
            if _nbytes(t[3]) < (4 if o32 else 8) * (stop + 1):
                return BAD_LENGTH
            o = _ptr(t[3])
            d = _ptr(t[4])
            dlen = _nbytes(t[4]) if d != NULL else 0
            bounds[0] = st[2]
            bounds[1] = st[3]
            if (bounds[0] >= 0 or bounds[1] >= 0) and not (0 <= bounds[0] < stop and 0 <= bounds[1] < stop):
                return BAD_LENGTH
            nl = _ptr(t[1])
            with nogil:
                if o32:
                    got = _bytes_bounds(<const int32_t*>o, d, dlen, nl, start, stop, bounds)
                else:
                    got = _bytes_bounds(<const int64_t*>o, d, dlen, nl, start, stop, bounds)
            if got < 0:
                return got
            st[2] = bounds[0]
            st[3] = bounds[1]
            st[1] += got
            continue
        if kind < K_I8 or kind > K_F64:
            return BAD_VALUE
        w = _fixed_width(kind)
        if _nbytes(t[2]) < w * stop:
            return BAD_LENGTH
        p = _ptr(t[2])
        nl = _ptr(t[1])
        if n == 0:
            continue
        p += w * start
        if nl != NULL:
            nl += start
        with nogil:
            if kind == K_I8:
                _num_bounds(p, nl, n, st, <int8_t>0)
            elif kind == K_I16:
                _num_bounds(p, nl, n, st, <int16_t>0)
            elif kind == K_I32:
                _num_bounds(p, nl, n, st, <int32_t>0)
            elif kind == K_I64:
                _num_bounds(p, nl, n, st, <int64_t>0)
            elif kind == K_F32:
                _num_bounds(p, nl, n, st, <float>0)
            else:
                _num_bounds(p, nl, n, st, <double>0)
    return 0


# -- one row as Python values (RowFileReader.get_row) ---------------------------------------------------------
#
# row_values(block, nrows, row, kinds, names, out, state) -> status
#   Row ``row`` of a decompressed block of ``nrows`` rows (its rows, then one int32 offset per row, then the row
#   count) decoded into ``out`` (a dict): names[i] (a tuple) -> the value of field i, None when its null bit is
#   set. ``block``: bytes, or any buffer (read from a copy). ``kinds``: one
#   byte per field, K_BOOL .. K_F64, K_BYTES (bytes) or K_TEXT (UTF-8, str); every field of the row is one of
#   these. Returns 0, or a negative status with, when ``state`` (4 items) is given: state[0] = the check that
#   failed (RV_* below), state[1] = the field, state[2] = the byte offset in the block, state[3] = a detail (the
#   row's offset, a length, a byte). Arguments that do not fit (a block too short for ``nrows`` offsets, a row
#   outside them, kinds that are not bytes or not one per name) fail with RV_ARGS; every read is checked.

cdef enum:
    K_TEXT = 24

RV_OFFSET, RV_BITMAP, RV_VARINT_TRUNCATED, RV_VARINT_OVERLONG, RV_LENGTH, RV_TRUNCATED, RV_BOOL, RV_UTF8, \
    RV_ARGS = range(1, 10)


cdef inline int _rv_fail(object state, int64_t check, int64_t field, int64_t at, int64_t detail, int status):
    if state is not None:
        state[0] = check
        state[1] = field
        state[2] = at
        state[3] = detail
    return status


def row_values(block, Py_ssize_t nrows, Py_ssize_t row, kinds, tuple names not None, dict out not None, state):
    cdef const uint8_t* p
    cdef const uint8_t* k
    cdef Py_ssize_t blen, nk, data_end, at, pos, end, nb, i, start
    cdef int32_t i32
    cdef uint64_t u64
    cdef float f32
    cdef double f64
    cdef uint32_t n, b
    cdef int kind, shift, j, w
    cdef object v
    if not PyBytes_CheckExact(block):  # the reader passes bytes; any other buffer is read from a copy
        block = bytes(memoryview(block))
    p, blen = <const uint8_t*>PyBytes_AS_STRING(block), PyBytes_GET_SIZE(block)
    if not PyBytes_CheckExact(kinds):
        return _rv_fail(state, RV_ARGS, 0, 0, 0, BAD_LENGTH)
    k, nk = <const uint8_t*>PyBytes_AS_STRING(kinds), PyBytes_GET_SIZE(kinds)
    if nk != len(names) or nrows <= 0 or row < 0 or row >= nrows or nrows > (blen - 4) // 4:
        return _rv_fail(state, RV_ARGS, 0, 0, 0, BAD_LENGTH)
    data_end = blen - 4 - 4 * nrows
    at = data_end + 4 * row
    memcpy(&i32, p + at, 4)
    pos = i32
    if row + 1 < nrows:
        memcpy(&i32, p + at + 4, 4)
        end = i32
    else:
        end = data_end
    if not 0 <= pos <= end <= data_end:
        return _rv_fail(state, RV_OFFSET, 0, at, pos, BAD_VALUE)
    nb = (nk + 7) >> 3
    if nb > end - pos:
        return _rv_fail(state, RV_BITMAP, 0, pos, 0, TRUNCATED)
    start = pos
    pos += nb
    for i in range(nk):
        if p[start + (i >> 3)] & (1 << (i & 7)):
            PyDict_SetItem(out, names[i], None)
            continue
        kind = k[i]
        if kind == K_BYTES or kind == K_TEXT:
            n = 0
            shift = 0
            for j in range(5):
                if pos >= end:
                    return _rv_fail(state, RV_VARINT_TRUNCATED, i, pos, 0, TRUNCATED)
                b = p[pos]
                pos += 1
                if j == 4 and b & 0xF0:
                    return _rv_fail(state, RV_VARINT_OVERLONG, i, pos - 1, 0, OVERLONG)
                n |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
                shift += 7
            if n > 0x7FFFFFFF or n > end - pos:
                return _rv_fail(state, RV_LENGTH, i, pos, n, BAD_LENGTH)
            if kind == K_TEXT:
                if not _utf8_ok(p + pos, n):
                    return _rv_fail(state, RV_UTF8, i, pos, 0, INVALID_UTF8)
                v = PyUnicode_DecodeUTF8(<const char*>p + pos, n, NULL)
            else:
                v = PyBytes_FromStringAndSize(<const char*>p + pos, n)
            pos += n
        else:
            if kind == K_I64 or kind == K_F64:
                w = 8
            elif kind == K_I32 or kind == K_F32:
                w = 4
            elif kind == K_I16:
                w = 2
            elif kind == K_I8 or kind == K_BOOL:
                w = 1
            else:
                return _rv_fail(state, RV_ARGS, i, 0, kind, BAD_VALUE)
            if w > end - pos:
                return _rv_fail(state, RV_TRUNCATED, i, pos, 0, TRUNCATED)
            if kind == K_F64:
                memcpy(&f64, p + pos, 8)
                v = PyFloat_FromDouble(f64)
            elif kind == K_F32:  # widened as C widens it (as Arrow's to_pylist gives it)
                memcpy(&f32, p + pos, 4)
                v = PyFloat_FromDouble(f32)
            elif kind == K_BOOL:
                if p[pos] > 1:
                    return _rv_fail(state, RV_BOOL, i, pos, p[pos], BAD_VALUE)
                v = p[pos] == 1
            else:  # a little-endian integer of w bytes, sign-extended
                u64 = 0
                memcpy(&u64, p + pos, w)
                v = PyLong_FromLongLong(<int64_t>(u64 << (64 - 8 * w)) >> (64 - 8 * w))
            pos += w
        PyDict_SetItem(out, names[i], v)
    return 0
