# Fory row codec kernels (standard and compact layouts).
#
# encode_rows: Arrow column buffers -> contiguous rows + row offsets.
# decode_rows: rows -> Arrow-layout column buffers, in two calls: a counting
#   pass (validates every offset, size and count and sizes the outputs) and a
#   filling pass into buffers the caller allocated from those counts.
#
# The schema arrives as the node table of paimon_engine/formats/fory/schema.py
# (one int64 row per type node, preorder, columns C_*) plus a children index
# array. Recursion follows the schema, never the data, so its depth is bounded
# by the schema's nesting.
#
# Nothing here raises for bad input: failures are negative statuses
# (paimon_engine/_pykernels/status.py) with (row, byte offset, node) in state.
cimport cython
cimport numpy as cnp
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset
from .bytecopy cimport copy_short as _copy_short, is_ascii as _is_ascii

# 128-bit unsigned arithmetic (GCC/Clang) for the range check of a decimal128 value
cdef extern from *:
    ctypedef unsigned long long u128 "unsigned __int128"

cnp.import_array()

cdef enum:
    TRUNCATED = -1
    OUT_OF_RANGE = -3
    BAD_LENGTH = -4
    BAD_VALUE = -5
    NEED_MORE = -6
    INVALID_UTF8 = -7

cdef enum:
    K_FIXED = 1
    K_BOOL = 2
    K_BYTES = 3
    K_DECIMAL = 4
    K_LIST = 5
    K_MAP = 6
    K_STRUCT = 7

cdef enum:
    C_KIND = 0
    C_WIDTH = 1
    C_SLOT = 2
    C_OFF = 3
    C_BIT = 4
    C_NULLABLE = 5
    C_INLINE = 6
    C_FIXED = 7
    C_BMOFF = 8
    C_BMSIZE = 9
    C_NCHILD = 10
    C_CHILD0 = 11
    C_HDRROUND = 12
    C_LARGE = 13
    C_UTF8 = 14
    C_BOUND = 15       # four columns: the limbs of 10**precision (decimal nodes)
    NCOLS = 19

DEF INT32_MAX = 2147483647

ctypedef struct Node:
    int kind
    int width
    int64_t slot
    int64_t off
    int64_t bit
    int nullable
    int inline_
    int64_t fixed
    int64_t bmoff
    int64_t bmsize
    int nchild
    int64_t child0
    int hdrround
    int large
    int utf8
    # decimal: bound - 1 and 2 * (bound - 1) as little-endian 64-bit limbs, bound = 10**precision; an unscaled
    # value v is in range (|v| < bound) iff (v + dlo) mod 2**(8 * width) <= dspan
    uint64_t dlo[4]
    uint64_t dspan[4]
    # Arrow input (encode)
    const uint8_t* valid
    int64_t aoff
    const uint8_t* vals
    const uint8_t* offs
    const uint8_t* data
    # Arrow output (decode)
    uint8_t* ovalid
    uint8_t* ovals
    uint8_t* ooffs
    uint8_t* odata
    int64_t olen
    int64_t odlen
    int64_t onulls
    int64_t ocap       # values the output buffers hold (decode)
    int64_t odcap      # data bytes the output data buffer holds


ctypedef struct Ctx:
    Node* nodes
    const int64_t* kids
    int compact
    int fill
    const uint8_t* buf      # decode: the whole input buffer
    int64_t err_pos
    int64_t err_node


cdef inline uint8_t* _ptr(object a):
    if a is None:
        return NULL
    return <uint8_t*>cnp.PyArray_DATA(<cnp.ndarray>a)


cdef inline int64_t _round8(int64_t n) noexcept nogil:
    return (n + 7) & ~(<int64_t>7)


cdef inline int64_t _ld64(const uint8_t* p) noexcept nogil:
    cdef int64_t v
    memcpy(&v, p, 8)
    return v


cdef inline uint64_t _ldu64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v
    memcpy(&v, p, 8)
    return v


cdef inline int64_t _utf8_error(const uint8_t* s, int64_t n) noexcept nogil:
    # -1 if s[0:n] is valid UTF-8, else the index of the lead byte of the first bad sequence (the position
    # Python's strict decoder reports); eight ASCII bytes at a time where it can
    cdef int64_t i = 0
    cdef uint64_t w
    cdef uint8_t c, lo, hi
    cdef int need, k
    # all ASCII (the common case) without a test per byte; otherwise the exact scan finds the first bad sequence
    if _is_ascii(s, n):
        return -1
    while i < n:
        if n - i >= 8:
            memcpy(&w, s + i, 8)
            if (w & 0x8080808080808080ULL) == 0:
                i += 8
                continue
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2:
            return i
        lo = 0x80
        hi = 0xBF
        if c < 0xE0:
            need = 1
        elif c < 0xF0:
            need = 2
            if c == 0xE0:
                lo = 0xA0
            elif c == 0xED:
                hi = 0x9F
        elif c < 0xF5:
            need = 3
            if c == 0xF0:
                lo = 0x90
            elif c == 0xF4:
                hi = 0x8F
        else:
            return i
        if n - i - 1 < need:
            return i
        if s[i + 1] < lo or s[i + 1] > hi:
            return i
        for k in range(2, need + 1):
            if (s[i + k] & 0xC0) != 0x80:
                return i
        i += need + 1
    return -1


cdef inline int32_t _ld32(const uint8_t* p) noexcept nogil:
    cdef int32_t v
    memcpy(&v, p, 4)
    return v


cdef inline void _st64(uint8_t* p, uint64_t v) noexcept nogil:
    memcpy(p, &v, 8)


cdef inline void _st32(uint8_t* p, int32_t v) noexcept nogil:
    memcpy(p, &v, 4)


cdef inline void _mcpy(uint8_t* dst, const uint8_t* src, int64_t n) noexcept nogil:
    # memcpy for the short values of a row (a few words): inline word moves instead of a library call
    if n > 64:
        memcpy(dst, src, n)
        return
    if n > 16 and n <= 32:
        # two 16-byte moves (overlapping in the middle)
        memcpy(dst, src, 16)
        memcpy(dst + n - 16, src + n - 16, 16)
        return
    while n >= 8:
        memcpy(dst, src, 8)
        dst += 8
        src += 8
        n -= 8
    if n >= 4:
        memcpy(dst, src, 4)
        dst += 4
        src += 4
        n -= 4
    while n > 0:
        dst[0] = src[0]
        dst += 1
        src += 1
        n -= 1


cdef inline void _copy_w(uint8_t* dst, const uint8_t* src, int w) noexcept nogil:
    # fixed-width value copy with a constant size per case (lets the compiler use one move)
    if w == 8:
        memcpy(dst, src, 8)
    elif w == 4:
        memcpy(dst, src, 4)
    elif w == 2:
        memcpy(dst, src, 2)
    elif w == 1:
        dst[0] = src[0]
    else:
        memcpy(dst, src, w)


cdef inline bint _bit(const uint8_t* bits, int64_t i) noexcept nogil:
    return (bits[i >> 3] >> (i & 7)) & 1


cdef inline bint _is_null(Node* n, int64_t li) noexcept nogil:
    if n.valid == NULL:
        return 0
    return not _bit(n.valid, li + n.aoff)


cdef inline int64_t _aoffset(Node* n, int64_t phys) noexcept nogil:
    if n.large:
        return (<const int64_t*>n.offs)[phys]
    return (<const int32_t*>n.offs)[phys]


cdef inline Node* _child(Ctx* c, Node* n, int k) noexcept nogil:
    return &c.nodes[c.kids[n.child0 + k]]


# ------------------------------------------------------------------ encoding


cdef inline int64_t _std_header(int64_t cnt) noexcept nogil:
    # the standard layout's array header: an 8-byte count and a bitmap word per 64 elements
    return 8 + ((cnt + 63) >> 6) * 8


cdef inline int64_t _array_header(Ctx* c, Node* e, int64_t cnt) noexcept nogil:
    cdef int64_t h
    if not c.compact:
        return _std_header(cnt)
    h = 4
    if e.nullable:
        h += (cnt + 7) >> 3
    if e.hdrround:
        h = _round8(h)
    return h


cdef int64_t _size_array(Ctx* c, Node* e, int64_t start, int64_t cnt) noexcept nogil:
    cdef int64_t size = _array_header(c, e, cnt) + _round8(cnt * e.slot)
    cdef int64_t k
    if e.kind == K_FIXED or e.kind == K_BOOL or e.inline_:
        return size
    for k in range(cnt):
        if not _is_null(e, start + k):
            size += _size_body(c, e, start + k)
    return size


cdef int64_t _size_row(Ctx* c, Node* n, int64_t li) noexcept nogil:
    # bytes of the struct row of node n at logical index li (its children share li)
    cdef int64_t size = n.fixed
    cdef int k
    cdef Node* ch
    for k in range(n.nchild):
        ch = _child(c, n, k)
        if ch.kind == K_FIXED or ch.kind == K_BOOL or ch.inline_:
            continue
        if _is_null(ch, li):
            continue
        size += _size_body(c, ch, li)
    return size


cdef int64_t _size_body(Ctx* c, Node* n, int64_t li) noexcept nogil:
    # bytes a non-null variable-width value takes in its container's variable region
    cdef int64_t phys = li + n.aoff
    cdef int64_t a, b
    cdef Node* ent
    if n.kind == K_BYTES:
        return _round8(_aoffset(n, phys + 1) - _aoffset(n, phys))
    if n.kind == K_DECIMAL:
        return 32
    if n.kind == K_STRUCT:
        return _size_row(c, n, li)
    a = _aoffset(n, phys)
    b = _aoffset(n, phys + 1)
    if n.kind == K_LIST:
        return _size_array(c, _child(c, n, 0), a, b - a)
    # map: the entries struct's children are the key and value elements
    ent = _child(c, n, 0)
    return 8 + _size_array(c, _child(c, ent, 0), a, b - a) + _size_array(c, _child(c, ent, 1), a, b - a)




cdef int _write_inline(Ctx* c, Node* n, int64_t li, uint8_t* p) noexcept nogil:
    # compact inline struct at p (already zeroed): fixed children then its own bitmap
    cdef int64_t unused = 0
    return <int>_write_fields(c, n, li, p, &unused)


cdef int _write_value(Ctx* c, Node* n, int64_t li, uint8_t* base, uint8_t* slot, int64_t* cur) noexcept nogil:
    # non-null value of node n (logical index li) into its slot; variable bodies go to base + cur
    cdef int64_t phys = li + n.aoff
    cdef int64_t size, used
    cdef const uint8_t* src
    cdef int j
    cdef uint8_t ext
    if n.kind == K_FIXED:
        _copy_w(slot, n.vals + phys * n.width, n.width)
        return 0
    if n.kind == K_BOOL:
        slot[0] = 1 if _bit(n.vals, phys) else 0
        return 0
    if n.inline_:
        return _write_inline(c, n, li, slot)
    if n.kind == K_BYTES:
        src = n.data + _aoffset(n, phys)
        size = _aoffset(n, phys + 1) - _aoffset(n, phys)
        memcpy(base + cur[0], src, size)
        used = _round8(size)
        memset(base + cur[0] + size, 0, used - size)
    elif n.kind == K_DECIMAL:
        src = n.vals + phys * n.width
        memcpy(base + cur[0], src, n.width)
        if n.width < 32:
            ext = 0xFF if (src[n.width - 1] & 0x80) else 0
            memset(base + cur[0] + n.width, ext, 32 - n.width)
        size = 32
        used = 32
    else:
        size = _write_body(c, n, li, base + cur[0])
        if size < 0:
            return <int>size
        used = size
    _st64(slot, ((<uint64_t>cur[0]) << 32) | <uint64_t>(<uint32_t>size))
    cur[0] += used
    return 0


cdef int64_t _write_row(Ctx* c, Node* n, int64_t li, uint8_t* out) noexcept nogil:
    cdef int64_t cur = n.fixed
    memset(out, 0, n.fixed)
    if _write_fields(c, n, li, out, &cur) < 0:
        return BAD_VALUE
    return cur


cdef int64_t _write_fields(Ctx* c, Node* n, int64_t li, uint8_t* out, int64_t* cur) noexcept nogil:
    # the children of struct n (logical index li) into the zeroed fixed region at out; bodies at out + cur
    cdef int k
    cdef Node* ch
    for k in range(n.nchild):
        ch = _child(c, n, k)
        if _is_null(ch, li):
            if n.bmsize == 0:
                c.err_node = ch - c.nodes
                return BAD_VALUE
            out[n.bmoff + (ch.bit >> 3)] |= <uint8_t>(1 << (ch.bit & 7))
            continue
        if ch.kind == K_FIXED:
            _copy_w(out + ch.off, ch.vals + (li + ch.aoff) * ch.width, ch.width)
            continue
        if _write_value(c, ch, li, out, out + ch.off, cur) < 0:
            return BAD_VALUE
    return 0


cdef int64_t _write_array(Ctx* c, Node* e, int64_t start, int64_t cnt, uint8_t* out) noexcept nogil:
    cdef int64_t hdr = _array_header(c, e, cnt)
    cdef int64_t region = _round8(cnt * e.slot)
    cdef int64_t cur = hdr + region
    cdef int64_t k, bmpos
    memset(out, 0, cur)
    if c.compact:
        _st32(out, <int32_t>cnt)
        bmpos = 4
    else:
        _st64(out, <uint64_t>cnt)
        bmpos = 8
    cdef bint bulk = e.kind == K_FIXED
    if bulk:
        # the element region is the Arrow values, with null slots zeroed below
        memcpy(out + hdr, e.vals + (start + e.aoff) * e.width, cnt * e.width)
        if e.valid == NULL:
            return cur
    for k in range(cnt):
        if _is_null(e, start + k):
            if c.compact and not e.nullable:
                c.err_node = e - c.nodes
                return BAD_VALUE
            out[bmpos + (k >> 3)] |= <uint8_t>(1 << (k & 7))
            if bulk:
                memset(out + hdr + k * e.width, 0, e.width)
            continue
        if not bulk and _write_value(c, e, start + k, out, out + hdr + k * e.slot, &cur) < 0:
            return BAD_VALUE
    return cur


cdef int64_t _write_body(Ctx* c, Node* n, int64_t li, uint8_t* out) noexcept nogil:
    cdef int64_t phys = li + n.aoff
    cdef int64_t a, b, ks, vs
    cdef Node* ent
    if n.kind == K_STRUCT:
        return _write_row(c, n, li, out)
    a = _aoffset(n, phys)
    b = _aoffset(n, phys + 1)
    if n.kind == K_LIST:
        return _write_array(c, _child(c, n, 0), a, b - a, out)
    ent = _child(c, n, 0)
    ks = _write_array(c, _child(c, ent, 0), a, b - a, out + 8)
    if ks < 0:
        return ks
    _st64(out, <uint64_t>ks)
    vs = _write_array(c, _child(c, ent, 1), a, b - a, out + 8 + ks)
    if vs < 0:
        return vs
    return 8 + ks + vs


cdef int _load_bound(Node* n, const int64_t[:, ::1] table, Py_ssize_t i) except -1:
    cdef int j
    bound = 0
    for j in range(4):
        bound |= (<object>(<uint64_t>table[i, C_BOUND + j])) << (64 * j)
    if (n.width != 16 and n.width != 32) or not 1 <= bound <= (<object>1) << (8 * n.width - 1):
        raise ValueError("bad node table")
    lo = bound - 1
    span = 2 * lo
    for j in range(4):
        n.dlo[j] = <uint64_t>((lo >> (64 * j)) & 0xFFFFFFFFFFFFFFFF)
        n.dspan[j] = <uint64_t>((span >> (64 * j)) & 0xFFFFFFFFFFFFFFFF)
    return 0


cdef inline bint _decimal_out_of_range(Node* n, const uint8_t* src) noexcept nogil:
    # src: the 32-byte sign-extended value (for width 16 its high half was checked to be the sign extension)
    cdef uint64_t a, s, carry = 0
    cdef uint64_t t[4]
    cdef int j
    if n.width == 16:
        return ((((<u128>_ldu64(src + 8)) << 64) | _ldu64(src))
                + (((<u128>n.dlo[1]) << 64) | n.dlo[0])) > (((<u128>n.dspan[1]) << 64) | n.dspan[0])
    for j in range(4):
        a = _ldu64(src + 8 * j)
        s = a + n.dlo[j]
        t[j] = s + carry
        carry = (s < a) | (t[j] < s)
    for j in range(3, -1, -1):
        if t[j] != n.dspan[j]:
            return t[j] > n.dspan[j]
    return False


cdef int _load_nodes(Ctx* c, const int64_t[:, ::1] table, const int64_t[::1] kids) except -1:
    cdef Py_ssize_t nn = table.shape[0], i
    cdef Node* n
    if table.shape[1] != NCOLS or nn == 0:
        raise ValueError("bad node table")
    for i in range(nn):
        n = &c.nodes[i]
        memset(n, 0, sizeof(Node))
        n.kind = <int>table[i, C_KIND]
        n.width = <int>table[i, C_WIDTH]
        n.slot = table[i, C_SLOT]
        n.off = table[i, C_OFF]
        n.bit = table[i, C_BIT]
        n.nullable = <int>table[i, C_NULLABLE]
        n.inline_ = <int>table[i, C_INLINE]
        n.fixed = table[i, C_FIXED]
        n.bmoff = table[i, C_BMOFF]
        n.bmsize = table[i, C_BMSIZE]
        n.nchild = <int>table[i, C_NCHILD]
        n.child0 = table[i, C_CHILD0]
        n.hdrround = <int>table[i, C_HDRROUND]
        n.large = <int>table[i, C_LARGE]
        n.utf8 = <int>table[i, C_UTF8]
        if n.kind == K_DECIMAL:
            _load_bound(n, table, i)
        if n.child0 < 0 or n.child0 + n.nchild > kids.shape[0]:
            raise ValueError("bad node table")
    for i in range(kids.shape[0]):
        if kids[i] < 0 or kids[i] >= nn:
            raise ValueError("bad node table")
    c.kids = &kids[0]
    return 0


cdef int _open(Ctx* c, const int64_t[:, ::1] table, const int64_t[::1] kids, bint compact) except -1:
    # the context of one kernel call: its own node array (freed by the caller) loaded from the table
    c.nodes = <Node*>PyMem_Malloc(table.shape[0] * sizeof(Node))
    if c.nodes == NULL:
        raise MemoryError()
    try:
        _load_nodes(c, table, kids)
    except BaseException:
        PyMem_Free(c.nodes)
        c.nodes = NULL
        raise
    c.compact = compact
    return 0


cdef int _load_inputs(Ctx* c, list inputs) except -1:
    cdef Py_ssize_t i
    cdef Node* n
    for i in range(len(inputs)):
        t = inputs[i]
        if t is None:
            continue
        n = &c.nodes[i]
        n.valid = _ptr(t[0])
        n.aoff = t[1]
        n.vals = _ptr(t[2])
        n.offs = _ptr(t[3])
        n.data = _ptr(t[4])
    return 0


cdef void _size_rows(Ctx* c, int64_t start, int64_t stop, int64_t* sp) noexcept nogil:
    # sp[r + 1] = _size_row(root, r) for r in [start, stop), a field at a time (tight loops over the Arrow
    # buffers instead of a walk of the schema per row)
    cdef Node* n = &c.nodes[0]
    cdef Node* ch
    cdef Node* e
    cdef int64_t r, a, m, eslot
    cdef int k
    cdef const int32_t* o32
    cdef const int64_t* o64
    for r in range(start, stop):
        sp[r + 1] = n.fixed
    for k in range(n.nchild):
        ch = _child(c, n, k)
        if ch.kind == K_FIXED or ch.kind == K_BOOL or ch.inline_:
            continue
        if ch.kind == K_BYTES and ch.valid == NULL:
            if ch.large:
                o64 = (<const int64_t*>ch.offs) + ch.aoff
                for r in range(start, stop):
                    sp[r + 1] += _round8(o64[r + 1] - o64[r])
            else:
                o32 = (<const int32_t*>ch.offs) + ch.aoff
                for r in range(start, stop):
                    sp[r + 1] += _round8(<int64_t>o32[r + 1] - o32[r])
            continue
        if ch.kind == K_LIST:
            e = _child(c, ch, 0)
            if (e.kind == K_FIXED or e.kind == K_BOOL or e.inline_) and ch.valid == NULL and not ch.large \
                    and not c.compact:
                # the same in the standard layout, lists without nulls and int32 offsets (the node's fields in
                # locals: the stores could alias them)
                o32 = (<const int32_t*>ch.offs) + ch.aoff
                eslot = e.slot
                for r in range(start, stop):
                    m = <int64_t>o32[r + 1] - o32[r]
                    sp[r + 1] += _std_header(m) + _round8(m * eslot)
                continue
            if e.kind == K_FIXED or e.kind == K_BOOL or e.inline_:
                # elements of one size: the array's bytes follow from its element count
                for r in range(start, stop):
                    if not _is_null(ch, r):
                        a = _aoffset(ch, r + ch.aoff)
                        m = _aoffset(ch, r + ch.aoff + 1) - a
                        sp[r + 1] += _array_header(c, e, m) + _round8(m * e.slot)
                continue
        for r in range(start, stop):
            if not _is_null(ch, r):
                sp[r + 1] += _size_body(c, ch, r)


DEF CHUNK = 256


cdef int _encode_chunk(Ctx* c, int64_t r0, int64_t cnt, uint8_t* o, const int64_t* rowpos,
                       const int64_t* rowsize, bint zeroed) noexcept nogil:
    # rows r0 .. r0 + cnt - 1 (cnt <= CHUNK) at o + rowpos[j], a field at a time: the same bytes as _write_row
    # row by row (variable bodies still follow each row's fields in order). A row that does not come out at
    # rowsize[j] or a null without a null bit returns a negative status; the caller then encodes the chunk
    # again row by row to name the first failing row.
    cdef Node* n = &c.nodes[0]
    cdef Node* ch
    cdef Node* e
    cdef int64_t cur[CHUNK]
    cdef int64_t j, r, off, a, m, size, used, hdr, bm, vi, eslot
    cdef const int32_t* o32
    cdef int k, w
    cdef uint8_t mask
    cdef uint64_t b, u64
    cdef uint32_t u32
    cdef const uint8_t* src
    cdef const uint8_t* vbits
    cdef uint8_t* row
    cdef uint8_t* q
    # the chunk's rows lie one after another: their bytes are zeroed in one call (unless they are zero already)
    if not zeroed:
        memset(o + rowpos[0], 0, rowpos[cnt - 1] + rowsize[cnt - 1] - rowpos[0])
    for j in range(cnt):
        cur[j] = n.fixed
    for k in range(n.nchild):
        ch = _child(c, n, k)
        if ch.kind == K_FIXED and ch.valid == NULL:
            w = ch.width
            off = ch.off
            src = ch.vals + (r0 + ch.aoff) * w
            if w == 8:
                for j in range(cnt):
                    memcpy(o + rowpos[j] + off, src + 8 * j, 8)
            elif w == 4:
                for j in range(cnt):
                    memcpy(o + rowpos[j] + off, src + 4 * j, 4)
            else:
                for j in range(cnt):
                    _copy_w(o + rowpos[j] + off, src + w * j, w)
            continue
        if ch.kind == K_BYTES and ch.valid == NULL and not ch.large:
            # strings without nulls: body (its padding is zero already) and slot (the node's fields are read
            # into locals first: the loop's byte stores could otherwise alias them and force a reload per row)
            o32 = (<const int32_t*>ch.offs) + ch.aoff + r0
            src = ch.data
            off = ch.off
            for j in range(cnt):
                a = o32[j]
                size = o32[j + 1] - a
                row = o + rowpos[j]
                used = _round8(size)
                _copy_short(row + cur[j], src + a, size)
                _st64(row + off, ((<uint64_t>cur[j]) << 32) | <uint64_t>(<uint32_t>size))
                cur[j] += used
            continue
        if ch.kind == K_FIXED and n.bmsize != 0:
            # nullable fixed-width field: a value or a null bit (the zeroed slot stays zero)
            w = ch.width
            off = ch.off
            src = ch.vals + (r0 + ch.aoff) * w
            bm = n.bmoff + (ch.bit >> 3)
            mask = <uint8_t>(1 << (ch.bit & 7))
            vbits = ch.valid
            vi = r0 + ch.aoff
            if w == 8 or w == 4:
                # without a branch on the bit (nulls come in no pattern): the value masked to zero when null
                # (the slot is zero already: the same bytes), the null bit masked to zero when valid
                for j in range(cnt):
                    row = o + rowpos[j]
                    b = (vbits[(vi + j) >> 3] >> ((vi + j) & 7)) & 1
                    if w == 8:
                        memcpy(&u64, src + 8 * j, 8)
                        u64 &= <uint64_t>0 - b
                        memcpy(row + off, &u64, 8)
                    else:
                        memcpy(&u32, src + 4 * j, 4)
                        u32 &= <uint32_t>0 - <uint32_t>b
                        memcpy(row + off, &u32, 4)
                    row[bm] |= mask & <uint8_t>(b - 1)
                continue
            for j in range(cnt):
                row = o + rowpos[j]
                if _bit(vbits, vi + j):
                    _copy_w(row + off, src + w * j, w)
                else:
                    row[bm] |= mask
            continue
        if ch.kind == K_LIST and ch.valid == NULL:
            e = _child(c, ch, 0)
            if e.kind == K_FIXED and e.valid == NULL:
                # lists without nulls of fixed-width elements without nulls: the count (the bitmap and the
                # padding are zero already), the values, the slot
                w = e.width
                off = ch.off
                src = e.vals + e.aoff * w
                eslot = e.slot
                if not c.compact and not ch.large:
                    # the standard layout (its header from the count alone)
                    o32 = (<const int32_t*>ch.offs) + ch.aoff + r0
                    for j in range(cnt):
                        a = o32[j]
                        m = o32[j + 1] - a
                        row = o + rowpos[j]
                        q = row + cur[j]
                        hdr = _std_header(m)
                        used = hdr + _round8(m * eslot)
                        _st64(q, <uint64_t>m)
                        _mcpy(q + hdr, src + a * w, m * w)
                        _st64(row + off, ((<uint64_t>cur[j]) << 32) | <uint64_t>(<uint32_t>used))
                        cur[j] += used
                    continue
                for j in range(cnt):
                    r = r0 + j + ch.aoff
                    a = _aoffset(ch, r)
                    m = _aoffset(ch, r + 1) - a
                    row = o + rowpos[j]
                    q = row + cur[j]
                    hdr = _array_header(c, e, m)
                    used = hdr + _round8(m * eslot)
                    if c.compact:
                        _st32(q, <int32_t>m)
                    else:
                        _st64(q, <uint64_t>m)
                    _mcpy(q + hdr, src + a * w, m * w)
                    _st64(row + off, ((<uint64_t>cur[j]) << 32) | <uint64_t>(<uint32_t>used))
                    cur[j] += used
                continue
        for j in range(cnt):
            r = r0 + j
            row = o + rowpos[j]
            if _is_null(ch, r):
                if n.bmsize == 0:
                    return BAD_VALUE
                row[n.bmoff + (ch.bit >> 3)] |= <uint8_t>(1 << (ch.bit & 7))
                continue
            if ch.kind == K_FIXED:
                _copy_w(row + ch.off, ch.vals + (r + ch.aoff) * ch.width, ch.width)
                continue
            if _write_value(c, ch, r, row, row + ch.off, &cur[j]) < 0:
                return BAD_VALUE
    for j in range(cnt):
        if cur[j] != rowsize[j]:
            return BAD_LENGTH
    return 0


def measure_rows(const int64_t[:, ::1] table, const int64_t[::1] kids, list inputs, Py_ssize_t start,
                 Py_ssize_t stop, bint compact, int64_t[::1] sizes, bint running=False):
    """Sizes of rows ``start..stop`` of a column batch: ``sizes[r + 1]`` = bytes of row r.

    (``sizes`` has one slot more than the batch has rows, so its cumulative sum
    is the offsets array.) With ``running``, ``sizes[r + 1]`` = bytes of rows
    ``start..r`` instead (the range's own offsets, less ``sizes[start]``; a
    range starting at row 0 gets the offsets themselves). Returns the total
    bytes of the range. Ranges are independent: threads may measure disjoint
    ranges at once.
    """
    cdef Ctx c
    cdef Py_ssize_t nn = table.shape[0]
    cdef int64_t r, total = 0, size
    cdef int64_t* sp
    if len(inputs) != nn or start < 0 or stop < start or sizes.shape[0] < stop + 1:
        return BAD_LENGTH
    _open(&c, table, kids, compact)
    try:
        _load_inputs(&c, inputs)
        sp = &sizes[0]
        with nogil:
            _size_rows(&c, start, stop, sp)
            if running:
                for r in range(start, stop):
                    total += sp[r + 1]
                    sp[r + 1] = total
            else:
                for r in range(start, stop):
                    total += sp[r + 1]
        return total
    finally:
        PyMem_Free(c.nodes)


def encode_rows(const int64_t[:, ::1] table, const int64_t[::1] kids, list inputs, Py_ssize_t nrows,
                bint compact, uint8_t[::1] out, int64_t[::1] offsets, int64_t[::1] state, bint sized=False,
                bint zeroed=False):
    """Encode rows ``state[0]..nrows`` of a column batch as Fory rows (threads may encode disjoint
    ranges into one ``out`` at once).

    ``inputs[i]`` describes node ``i``'s Arrow array: ``(validity, offset,
    values, offsets, data)`` (NumPy uint8/int32/int64 arrays or None; node 0,
    the row, has None). The caller has checked the buffers against the array
    lengths. Rows are appended to ``out`` at ``state[1]``; ``offsets[r + 1]``
    receives the end of row r. Returns the number of rows written; when it is
    short of the request, ``out`` is full (grow it and call again). A negative
    status means a null in a field whose layout has no null bit; ``state[2]``
    is the row and ``state[3]`` the node. With ``sized`` the row sizes are
    taken from ``offsets`` (filled by ``measure_rows``) instead of being
    computed again; a row that does not come out at that size is BAD_LENGTH.
    ``zeroed``: the bytes of ``out`` from ``state[1]`` on are all zero (new memory from ``np.zeros``), so the
    sized rows are written without zeroing them first.
    """
    cdef Ctx c
    cdef Py_ssize_t nn = table.shape[0], i
    cdef Node* n
    cdef int64_t r, pos, size, start, cap
    cdef uint8_t* o
    cdef int64_t written = 0
    cdef int64_t expect
    cdef int64_t* op
    cdef int64_t rowpos[CHUNK]
    cdef int64_t rowsize[CHUNK]
    cdef int64_t cnt, p, j
    if len(inputs) != nn or state.shape[0] < 4 or offsets.shape[0] < nrows + 1:
        return BAD_LENGTH
    _open(&c, table, kids, compact)
    try:
        _load_inputs(&c, inputs)
        start = state[0]
        pos = state[1]
        cap = out.shape[0]
        o = &out[0] if cap else NULL
        op = &offsets[0]
        with nogil:
            # sized rows go a chunk at a time, field by field; a chunk that fails is encoded again below, row by
            # row, which stops at the first failing row and says which it is
            r = start
            while sized:
                cnt = 0
                p = pos
                while cnt < CHUNK and r + cnt < nrows:
                    size = op[r + cnt + 1] - op[r + cnt]
                    if size < 0 or size > cap - p:
                        break
                    rowpos[cnt] = p
                    rowsize[cnt] = size
                    p += size
                    cnt += 1
                if cnt == 0 or _encode_chunk(&c, r, cnt, o, rowpos, rowsize, zeroed) < 0:
                    break
                # the rows end where the offsets already say (rowpos comes from them)
                pos = p
                written += cnt
                r += cnt
            start = r
            for r in range(start, nrows):
                if sized:
                    size = op[r + 1] - op[r]
                else:
                    size = _size_row(&c, &c.nodes[0], r)
                if size > cap - pos:
                    break
                expect = size
                size = _write_row(&c, &c.nodes[0], r, o + pos)
                if size < 0:
                    state[2] = r
                    state[3] = c.err_node
                    written = size
                    break
                if size != expect:
                    state[2] = r
                    state[3] = 0
                    written = BAD_LENGTH
                    break
                pos += size
                op[r + 1] = pos
                written += 1
        if written >= 0:
            state[0] += written
            state[1] = pos
        return written
    finally:
        PyMem_Free(c.nodes)


# ------------------------------------------------------------------ decoding


cdef inline int _fail(Ctx* c, Node* n, int64_t pos, int status) noexcept nogil:
    c.err_pos = pos
    c.err_node = n - c.nodes
    return status


cdef int _append_null(Ctx* c, Node* n) noexcept nogil:
    # one null (or absent) value: its bit is set in the validity buffer, which holds null bits until the end of
    # the call inverts it (non-null values, the common case, then write no bit); values stay 0, offsets repeat
    cdef int k
    cdef int64_t i = n.olen
    if c.fill:
        if n.ovalid != NULL:
            n.ovalid[i >> 3] |= <uint8_t>(1 << (i & 7))
        if n.kind == K_BYTES or n.kind == K_LIST or n.kind == K_MAP:
            if n.large:
                (<int64_t*>n.ooffs)[i + 1] = (<int64_t*>n.ooffs)[i]
            else:
                (<int32_t*>n.ooffs)[i + 1] = (<int32_t*>n.ooffs)[i]
    n.olen += 1
    n.onulls += 1
    if n.kind == K_STRUCT:
        for k in range(n.nchild):
            _append_null(c, _child(c, n, k))
    return 0


cdef inline void _set_valid(Ctx* c, Node* n) noexcept nogil:
    # a non-null value: its validity bit is set by the inversion at the end of the call
    pass


cdef inline bint _any_bit(const uint8_t* bits, int64_t cnt) noexcept nogil:
    # any of the first cnt bits set
    cdef int64_t nb = cnt >> 3, i
    cdef uint64_t w
    i = 0
    while i + 8 <= nb:
        memcpy(&w, bits + i, 8)
        if w:
            return True
        i += 8
    while i < nb:
        if bits[i]:
            return True
        i += 1
    if cnt & 7:
        return (bits[nb] & ((1 << (cnt & 7)) - 1)) != 0
    return False


cdef void _invert_validity(Node* n) noexcept nogil:
    # null bits -> Arrow validity bits for the olen values written (bits past them stay 0)
    cdef int64_t nb = n.olen >> 3, i
    cdef uint64_t w
    cdef uint8_t* v = n.ovalid
    i = 0
    while i + 8 <= nb:
        memcpy(&w, v + i, 8)
        w = ~w
        memcpy(v + i, &w, 8)
        i += 8
    while i < nb:
        v[i] = ~v[i]
        i += 1
    if n.olen & 7:
        v[nb] = (~v[nb]) & <uint8_t>((1 << (n.olen & 7)) - 1)


cdef inline void _push_offset(Ctx* c, Node* n, int64_t count) noexcept nogil:
    # after n.olen was counted: offsets[olen] = offsets[olen - 1] + count
    if c.fill:
        if n.large:
            (<int64_t*>n.ooffs)[n.olen + 1] = (<int64_t*>n.ooffs)[n.olen] + count
        else:
            (<int32_t*>n.ooffs)[n.olen + 1] = <int32_t>((<int32_t*>n.ooffs)[n.olen] + count)


@cython.cdivision(True)
cdef int _decode_array(Ctx* c, Node* e, int64_t ab, int64_t ae, int64_t* count, bint keys) noexcept nogil:
    # the array at [ab, ae) of the buffer: append its elements to node e (map keys may not be null)
    cdef int64_t cnt, hdr, bmpos, k, need
    cdef int st
    cdef const uint8_t* p = c.buf + ab
    cdef int64_t avail = ae - ab
    if c.compact:
        if avail < 4:
            return _fail(c, e, ab, TRUNCATED)
        cnt = _ld32(p)
        bmpos = 4
    else:
        if avail < 8:
            return _fail(c, e, ab, TRUNCATED)
        cnt = _ld64(p)
        bmpos = 8
    if cnt < 0 or cnt > INT32_MAX:
        return _fail(c, e, ab, BAD_LENGTH)
    # every element takes at least one byte of header or region: cap the count by the bytes there are
    # (cnt <= INT32_MAX and slots are small, so the product cannot overflow; no division on this path)
    if cnt * e.slot > avail:
        return _fail(c, e, ab, BAD_LENGTH)
    if cnt > avail * 8:
        return _fail(c, e, ab, BAD_LENGTH)
    hdr = _array_header(c, e, cnt)
    need = hdr + cnt * e.slot
    if need > avail:
        return _fail(c, e, ab, TRUNCATED)
    count[0] = cnt
    if c.fill and cnt > e.ocap - e.olen:
        return _fail(c, e, ab, NEED_MORE)
    if e.kind == K_FIXED:
        if c.fill and cnt:
            _mcpy(e.ovals + e.olen * e.width, p + hdr, cnt * e.width)
        if (not c.compact or e.nullable) and _any_bit(p + bmpos, cnt):
            for k in range(cnt):
                if _bit(p + bmpos, k):
                    if keys:
                        return _fail(c, e, ab + bmpos + (k >> 3), BAD_VALUE)
                    if c.fill:
                        memset(e.ovals + (e.olen + k) * e.width, 0, e.width)
                        e.ovalid[(e.olen + k) >> 3] |= <uint8_t>(1 << ((e.olen + k) & 7))
                    e.onulls += 1
        e.olen += cnt
        return 0
    for k in range(cnt):
        if (not c.compact or e.nullable) and _bit(p + bmpos, k):
            if keys:
                return _fail(c, e, ab + bmpos + (k >> 3), BAD_VALUE)
            _append_null(c, e)
            continue
        st = _decode_value(c, e, p + hdr + k * e.slot, ab, ae)
        if st < 0:
            return st
    return 0


cdef int _decode_row(Ctx* c, Node* n, int64_t rb, int64_t re, const uint8_t* sel) noexcept nogil:
    # the struct row at [rb, re): append one value to each (selected) child of n
    if re - rb < n.fixed:
        return _fail(c, n, rb, TRUNCATED)
    return _decode_fields(c, n, c.buf + rb, rb, re, sel)


cdef int _decode_inline(Ctx* c, Node* n, const uint8_t* p, int64_t cb, int64_t ce) noexcept nogil:
    return _decode_fields(c, n, p, cb, ce, NULL)


cdef int _decode_fields(Ctx* c, Node* n, const uint8_t* p, int64_t cb, int64_t ce, const uint8_t* sel) noexcept nogil:
    # the children of struct n whose fixed region (checked by the caller) is at p, inside container [cb, ce)
    cdef int k, st
    cdef Node* ch
    for k in range(n.nchild):
        if sel != NULL and not sel[k]:
            continue
        ch = _child(c, n, k)
        if n.bmsize and _bit(p + n.bmoff, ch.bit):
            _append_null(c, ch)
            continue
        if ch.kind == K_FIXED:
            if c.fill:
                _copy_w(ch.ovals + ch.olen * ch.width, p + ch.off, ch.width)
            ch.olen += 1
            continue
        st = _decode_value(c, ch, p + ch.off, cb, ce)
        if st < 0:
            return st
    return 0


cdef int _decode_value(Ctx* c, Node* n, const uint8_t* slot, int64_t cb, int64_t ce) noexcept nogil:
    # non-null value of node n whose slot is at ``slot`` inside the container [cb, ce)
    cdef uint64_t v
    cdef int64_t rel, size, vb, ks, kc = 0, vc = 0
    cdef int st
    cdef int j
    cdef const uint8_t* src
    cdef Node* ent
    if n.kind == K_FIXED:
        if c.fill:
            _copy_w(n.ovals + n.olen * n.width, slot, n.width)
        _set_valid(c, n)
        n.olen += 1
        return 0
    if n.kind == K_BOOL:
        if c.fill and slot[0]:
            n.ovals[n.olen >> 3] |= <uint8_t>(1 << (n.olen & 7))
        _set_valid(c, n)
        n.olen += 1
        return 0
    if n.inline_:
        st = _decode_inline(c, n, slot, cb, ce)
        if st < 0:
            return st
        _set_valid(c, n)
        n.olen += 1
        return 0
    v = _ldu64(slot)
    rel = <int64_t>(v >> 32)
    size = <int64_t>(<uint32_t>v)
    vb = cb + rel
    if rel > ce - cb or size > ce - vb:
        return _fail(c, n, slot - c.buf, OUT_OF_RANGE)
    if n.kind == K_BYTES:
        if n.utf8:
            rel = _utf8_error(c.buf + vb, size)
            if rel >= 0:
                return _fail(c, n, vb + rel, INVALID_UTF8)
        if c.fill:
            if size > n.odcap - n.odlen:
                return _fail(c, n, slot - c.buf, NEED_MORE)
            _mcpy(n.odata + n.odlen, c.buf + vb, size)
        n.odlen += size
        _push_offset(c, n, size)
    elif n.kind == K_DECIMAL:
        if size != 32:
            return _fail(c, n, slot - c.buf, BAD_LENGTH)
        src = c.buf + vb
        if n.width < 32:
            # the high bytes must be the sign extension of the low ones
            for j in range(n.width, 32):
                if src[j] != (0xFF if (src[n.width - 1] & 0x80) else 0):
                    return _fail(c, n, vb, OUT_OF_RANGE)
        if _decimal_out_of_range(n, src):
            return _fail(c, n, vb, OUT_OF_RANGE)
        if c.fill:
            memcpy(n.ovals + n.olen * n.width, src, n.width)
    elif n.kind == K_STRUCT:
        st = _decode_row(c, n, vb, vb + size, NULL)
        if st < 0:
            return st
    elif n.kind == K_LIST:
        st = _decode_array(c, _child(c, n, 0), vb, vb + size, &kc, False)
        if st < 0:
            return st
        _push_offset(c, n, kc)
    else:
        ent = _child(c, n, 0)
        if size < 8:
            return _fail(c, n, vb, TRUNCATED)
        ks = _ld64(c.buf + vb)
        if ks < 0 or ks > size - 8:
            return _fail(c, n, vb, BAD_LENGTH)
        st = _decode_array(c, _child(c, ent, 0), vb + 8, vb + 8 + ks, &kc, True)
        if st < 0:
            return st
        st = _decode_array(c, _child(c, ent, 1), vb + 8 + ks, vb + size, &vc, False)
        if st < 0:
            return st
        if kc != vc:
            return _fail(c, n, vb, BAD_VALUE)
        # the entries struct: kc valid entries (no null bits to set)
        if c.fill and kc > ent.ocap - ent.olen:
            return _fail(c, n, vb, NEED_MORE)
        ent.olen += kc
        _push_offset(c, n, kc)
    _set_valid(c, n)
    n.olen += 1
    return 0


cdef void _fixed_column(Ctx* c, Node* root, Node* ch, const int64_t* offsets, int64_t r0, int64_t r1) noexcept nogil:
    # top-level fixed-width field ch of rows r0 .. r1 - 1 (their fixed regions checked): value or null
    cdef int64_t j
    cdef const uint8_t* p
    cdef int w = ch.width
    for j in range(r0, r1):
        p = c.buf + offsets[j]
        if root.bmsize and _bit(p + root.bmoff, ch.bit):
            _append_null(c, ch)
            continue
        if w == 8:
            memcpy(ch.ovals + ch.olen * 8, p + ch.off, 8)
        elif w == 4:
            memcpy(ch.ovals + ch.olen * 4, p + ch.off, 4)
        else:
            _copy_w(ch.ovals + ch.olen * w, p + ch.off, w)
        ch.olen += 1


def decode_rows(const int64_t[:, ::1] table, const int64_t[::1] kids, const uint8_t[::1] buf,
                const int64_t[::1] offsets, Py_ssize_t nrows, const uint8_t[::1] select, bint compact,
                list outputs, int64_t[:, ::1] counts, int64_t[::1] state):
    """Decode ``nrows`` rows (row r = ``buf[offsets[r]:offsets[r + 1]]``) into Arrow buffers.

    ``select[k]`` = 1 decodes top-level field k. With ``outputs`` None this is
    the counting pass: ``counts[i]`` = (values, data bytes, nulls) of node i
    after validating every row (null counts are only exact after the filling
    pass, which is the one that looks at every value). Otherwise ``outputs[i]`` = ``(validity,
    values, offsets, data, values capacity, data capacity)`` zeroed NumPy
    buffers (or None for nodes not decoded), and the same walk fills them: sized
    from the counts, or guessed (one pass); a value or string that does not fit
    returns NEED_MORE, never writes past a buffer. Top-level fields hold
    ``nrows`` values; struct children as many as their struct; array elements
    and string bytes are checked against the capacities. Returns 0 or a
    negative status; ``state`` = (row, byte offset, node) of the failure.
    """
    cdef Ctx c
    cdef Py_ssize_t nn = table.shape[0], i
    cdef Node* n
    cdef int64_t r, rb, re, blen = buf.shape[0]
    cdef int st = 0
    cdef const uint8_t* selp
    cdef const uint8_t* fixp
    cdef Node* root
    cdef int64_t r0, r1
    cdef Py_ssize_t nfix
    cdef int k
    if table.shape[1] != NCOLS or nn == 0:
        raise ValueError("bad node table")
    if state.shape[0] < 3 or offsets.shape[0] < nrows + 1 or counts.shape[0] != nn or counts.shape[1] < 3:
        return BAD_LENGTH
    if select.shape[0] != table[0, C_NCHILD]:
        return BAD_LENGTH
    if outputs is not None and len(outputs) != nn:
        return BAD_LENGTH
    _open(&c, table, kids, compact)
    try:
        c.fill = outputs is not None
        c.buf = &buf[0] if blen else NULL
        c.err_pos = 0
        c.err_node = 0
        if c.fill:
            for i in range(nn):
                t = outputs[i]
                if t is None:
                    continue
                n = &c.nodes[i]
                n.ovalid = _ptr(t[0])
                n.ovals = _ptr(t[1])
                n.ooffs = _ptr(t[2])
                n.odata = _ptr(t[3])
                n.ocap = t[4]
                n.odcap = t[5]
        # the counting pass need not visit top-level fixed-width fields: they hold one value per row
        csel = bytearray(select)
        if not c.fill:
            for i in range(len(csel)):
                n = &c.nodes[kids[c.nodes[0].child0 + i]]
                if csel[i] and (n.kind == K_FIXED or n.kind == K_BOOL):
                    csel[i] = 0
                    n.olen = nrows
        # the filling pass copies top-level fixed-width fields a field at a time, over chunks of rows whose
        # fixed regions the row walk has just checked
        fsel = bytearray(len(csel))
        nfix = 0
        if c.fill:
            for i in range(len(csel)):
                n = &c.nodes[kids[c.nodes[0].child0 + i]]
                if csel[i] and n.kind == K_FIXED:
                    csel[i] = 0
                    fsel[i] = 1
                    nfix += 1
        selp = <const uint8_t*><char*>csel if len(csel) else NULL
        fixp = <const uint8_t*><char*>fsel if len(fsel) else NULL
        root = &c.nodes[0]
        with nogil:
            r = 0
            while r < nrows:
                r0 = r
                r1 = min(r + CHUNK, nrows)
                while r < r1:
                    rb = offsets[r]
                    re = offsets[r + 1]
                    if rb < 0 or re < rb or re > blen:
                        st = BAD_LENGTH
                        c.err_pos = rb if rb >= 0 and rb <= blen else 0
                        c.err_node = 0
                        break
                    st = _decode_row(&c, root, rb, re, selp)
                    if st < 0:
                        break
                    r += 1
                if st < 0:
                    break
                if nfix:
                    for k in range(root.nchild):
                        if fixp[k]:
                            _fixed_column(&c, root, _child(&c, root, k), &offsets[0], r0, r1)
        if st < 0:
            state[0] = r
            state[1] = c.err_pos
            state[2] = c.err_node
            return st
        if c.fill:
            with nogil:
                for i in range(nn):
                    if c.nodes[i].ovalid != NULL and c.nodes[i].olen:
                        _invert_validity(&c.nodes[i])
        for i in range(nn):
            counts[i, 0] = c.nodes[i].olen
            counts[i, 1] = c.nodes[i].odlen
            counts[i, 2] = c.nodes[i].onulls
        return 0
    finally:
        PyMem_Free(c.nodes)
