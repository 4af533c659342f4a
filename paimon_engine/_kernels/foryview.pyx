# cython: binding=False
# In-place views of one Fory row (RowView / ArrayView / MapView).
#
# Same classes, arguments and results as paimon_engine/_pykernels/foryview.py.
# A view never reads outside its row: the fixed region is checked when the
# view is made, every offset+size slot against its container before it is
# followed. Views hold a buffer export of the bytes they read.
cimport cython
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.mem cimport PyMem_Malloc as _alloc, PyMem_Free as _free
from libc.stdint cimport uint8_t, uint32_t, int8_t, int16_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy
from .bytecopy cimport copy_short as _copy_short, is_ascii as _is_ascii
from cpython.long cimport PyLong_CheckExact
from cpython.exc cimport PyErr_Occurred, PyErr_Clear
from cpython.unicode cimport PyUnicode_DecodeUTF8

from paimon_engine._pykernels.status import describe as _describe

cdef enum:
    TRUNCATED = -1
    OUT_OF_RANGE = -3
    BAD_LENGTH = -4
    BAD_VALUE = -5
    INVALID_UTF8 = -7

K_FIXED, K_BOOL, K_BYTES, K_DECIMAL, K_LIST, K_MAP, K_STRUCT = 1, 2, 3, 4, 5, 6, 7
P_NONE, P_BOOL, P_I8, P_I16, P_I32, P_I64, P_F32, P_F64, P_DATE, P_TS, P_DUR, P_STR, P_BIN, P_DEC = range(14)

cdef enum:
    CK_FIXED = 1
    CK_BOOL = 2
    CK_BYTES = 3
    CK_DECIMAL = 4
    CK_LIST = 5
    CK_MAP = 6
    CK_STRUCT = 7

cdef enum:
    CP_NONE = 0
    CP_BOOL = 1
    CP_I8 = 2
    CP_I16 = 3
    CP_I32 = 4
    CP_I64 = 5
    CP_F32 = 6
    CP_F64 = 7
    CP_DATE = 8
    CP_TS = 9
    CP_DUR = 10
    CP_STR = 11
    CP_BIN = 12
    CP_DEC = 13


#: the source name view errors carry (a view reads bytes, not a file)
SOURCE = "<fory row>"


cdef object _corrupt(ViewSchema sch, int status, Py_ssize_t pos, Py_ssize_t node):
    from paimon_engine.errors import CorruptFileError
    return CorruptFileError(f"malformed Fory row: {_describe(status)}", path=SOURCE, field=sch.path[node],
                            offset=pos)


cdef object _out_of_range(ViewSchema sch, Py_ssize_t node, raw):
    from paimon_engine.errors import ValueOutOfRangeError
    return ValueOutOfRangeError("value outside the range of Python's datetime", field=sch.path[node], value=raw,
                                path=SOURCE)


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object)
    # declared without an error value: the caller looks for the error itself (no try block, whose entry saves
    # and restores the thread's exception state on every call)
    Py_ssize_t _int_as_ssize "PyLong_AsSsize_t"(object) noexcept


cdef inline object _ascii(const uint8_t* q, Py_ssize_t n):
    # a new compact str holding the n ASCII bytes at q
    cdef object s = PyUnicode_New(n, 127)
    _copy_short(<uint8_t*>PyUnicode_DATA(s), q, n)
    return s


cdef object _utf8(ViewSchema sch, Py_ssize_t node, const uint8_t* p, Py_ssize_t start, Py_ssize_t size):
    # the string at p[start:start + size], decoded strictly; bad UTF-8 is corrupt at the first bad byte.
    # ASCII (the common case) is copied straight into a new compact string.
    if _is_ascii(p + start, size):
        return _ascii(p + start, size)
    try:
        return PyUnicode_DecodeUTF8(<const char*>p + start, size, NULL)
    except UnicodeDecodeError as e:
        raise _corrupt(sch, INVALID_UTF8, start + e.start, node) from None


cdef object _wrong_type(ViewSchema sch, Py_ssize_t node, str wanted):
    from paimon_engine.errors import SchemaError
    return SchemaError(f"field {sch.path[node]!r} is {sch.typename[node]}, not {wanted}")


ctypedef struct VNode:
    int kind
    int prim
    int64_t slot
    int64_t off
    int64_t bit
    int nullable
    int inline_
    int64_t fixed
    int64_t bmoff
    int64_t bmsize
    int hdrround
    int nchild
    int64_t child0


cdef class ViewSchema:
    """Per-node layout facts of one ForySchema layout."""
    cdef VNode* nodes
    cdef int64_t* kids
    cdef readonly Py_ssize_t nnodes
    cdef readonly bint compact
    cdef readonly list children, names, convert, path, typename, prim

    def __cinit__(self):
        self.nodes = NULL
        self.kids = NULL

    def __init__(self, kind, width, slot, off, bit, nullable, inline, fixed, bmoff, bmsize, children,
                 hdrround, prim, names, compact, convert, path, typename):
        cdef Py_ssize_t nn = len(kind), i, k, total = 0
        self.nnodes = nn
        self.compact = compact
        self.children = [list(c) for c in children]
        self.names = list(names)
        self.convert = list(convert)
        self.path = list(path)
        self.typename = list(typename)
        self.prim = list(prim)
        for c in self.children:
            total += len(c)
        self.nodes = <VNode*>_alloc(max(nn, 1) * sizeof(VNode))
        self.kids = <int64_t*>_alloc(max(total, 1) * sizeof(int64_t))
        total = 0
        for i in range(nn):
            self.nodes[i].kind = kind[i]
            self.nodes[i].prim = prim[i]
            self.nodes[i].slot = slot[i]
            self.nodes[i].off = off[i]
            self.nodes[i].bit = bit[i]
            self.nodes[i].nullable = nullable[i]
            self.nodes[i].inline_ = inline[i]
            self.nodes[i].fixed = fixed[i]
            self.nodes[i].bmoff = bmoff[i]
            self.nodes[i].bmsize = bmsize[i]
            self.nodes[i].hdrround = hdrround[i]
            self.nodes[i].nchild = len(self.children[i])
            self.nodes[i].child0 = total
            for k in self.children[i]:
                if k < 0 or k >= nn:
                    raise ValueError("bad view schema")
                self.kids[total] = k
                total += 1

    def __dealloc__(self):
        _free(self.nodes)
        _free(self.kids)



cdef class _Bytes:
    """A buffer export kept alive for as long as views read it."""
    cdef Py_buffer view
    cdef bint held
    cdef object obj

    def __cinit__(self, obj):
        self.held = False
        self.obj = obj
        PyObject_GetBuffer(obj, &self.view, PyBUF_SIMPLE)
        self.held = True

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)


cdef inline Py_ssize_t _array_header(ViewSchema sch, VNode* e, Py_ssize_t cnt):
    cdef Py_ssize_t h
    if not sch.compact:
        return 8 + ((cnt + 63) >> 6) * 8
    h = 4
    if e.nullable:
        h += (cnt + 7) >> 3
    if e.hdrround:
        h = (h + 7) & ~7
    return h


cdef inline bint _typed_ok(int prim, int wanted):
    if prim == wanted:
        return True
    if wanted == CP_I32:
        return prim == CP_DATE
    if wanted == CP_I64:
        return prim == CP_TS or prim == CP_DUR
    return False


cdef str _prim_name(int wanted):
    return {CP_BOOL: "bool", CP_I8: "int8", CP_I16: "int16", CP_I32: "int32", CP_I64: "int64",
            CP_F32: "float32", CP_F64: "float64"}[wanted]


cdef object _read_prim(const uint8_t* p, int prim):
    cdef int8_t i8
    cdef int16_t i16
    cdef int32_t i32
    cdef int64_t i64
    cdef float f32
    cdef double f64
    if prim == CP_BOOL:
        return p[0] != 0
    if prim == CP_I8:
        return <int8_t>p[0]
    if prim == CP_I16:
        memcpy(&i16, p, 2)
        return i16
    if prim == CP_I32 or prim == CP_DATE:
        memcpy(&i32, p, 4)
        return i32
    if prim == CP_I64 or prim == CP_TS or prim == CP_DUR:
        memcpy(&i64, p, 8)
        return i64
    if prim == CP_F32:
        memcpy(&f32, p, 4)
        return f32
    memcpy(&f64, p, 8)
    return f64


cdef object _convert(ViewSchema sch, Py_ssize_t node, raw, Py_ssize_t pos):
    conv = sch.convert[node]
    if conv is None:
        return raw
    try:
        return conv(raw)
    except (OverflowError, ValueError):
        raise _out_of_range(sch, node, raw) from None


cdef inline int _follow(const uint8_t* p, Py_ssize_t slot, Py_ssize_t cb, Py_ssize_t ce,
                        Py_ssize_t* start, Py_ssize_t* size):
    cdef uint64_t v
    cdef Py_ssize_t rel, sz
    if slot + 8 > ce:
        return TRUNCATED
    memcpy(&v, p + slot, 8)
    rel = <Py_ssize_t>(v >> 32)
    sz = <Py_ssize_t>(<uint32_t>v)
    if rel > ce - cb or sz > ce - cb - rel:
        return OUT_OF_RANGE
    start[0] = cb + rel
    size[0] = sz
    return 0


cdef class RowView:
    """Typed, bounds-checked access to the fields of one row."""
    cdef _Bytes _src
    cdef const uint8_t* _p
    cdef ViewSchema _sch
    cdef VNode* _n
    cdef Py_ssize_t _node, _base, _end

    def __init__(self, data, schema, layout="standard", node=0, base=0, end=None):
        """View of the row in ``data`` (bytes-like) with ``schema`` (a ForySchema) in ``layout``.

        ``node``, ``base`` and ``end`` locate a nested row inside ``data``.
        """
        cdef ViewSchema sch = schema if isinstance(schema, ViewSchema) else schema.view_schema(layout)
        cdef _Bytes src = data if isinstance(data, _Bytes) else _Bytes(data)
        cdef Py_ssize_t blen = src.view.len
        self._src = src
        self._p = <const uint8_t*>src.view.buf
        self._sch = sch
        if node < 0 or node >= sch.nnodes:
            raise IndexError("node out of range")
        self._node = node
        self._n = &sch.nodes[self._node]
        self._base = base
        self._end = blen if end is None else end
        if self._n.kind != CK_STRUCT:
            raise _wrong_type(sch, node, "struct")
        if self._base < 0 or self._end > blen or self._base > self._end or self._end - self._base < self._n.fixed:
            raise _corrupt(sch, TRUNCATED, max(self._base, 0), node)

    cdef inline VNode* _childn(self, Py_ssize_t i) except NULL:
        if i < 0 or i >= self._n.nchild:
            raise IndexError(f"field index {i} out of range for {self._n.nchild} fields")
        return &self._sch.nodes[self._sch.kids[self._n.child0 + i]]

    cdef Py_ssize_t _index(self, i) except? -1:
        if PyLong_CheckExact(i):
            return self._int_index(i)
        return self._named(i)

    cdef inline Py_ssize_t _int_index(self, i) except? -1:
        # an exact int as Py_ssize_t; one beyond Py_ssize_t is out of range like any other index
        cdef Py_ssize_t k = _int_as_ssize(i)
        if k == -1 and PyErr_Occurred() != NULL:
            PyErr_Clear()
            raise IndexError(f"field index {i} out of range for {self._n.nchild} fields")
        return k

    cdef Py_ssize_t _named(self, i) except? -1:
        # a field name, or an integer of another type (NumPy's, bool): the name wins where both could apply
        pos = self._sch.names[self._node].get(i)
        if pos is not None:
            return pos
        if isinstance(i, str) or not hasattr(type(i), "__index__"):
            raise KeyError(i)
        return i.__index__()

    cdef inline VNode* _field(self, i) except NULL:
        # the node of field ``i`` (index or name): the typed getters' one resolution step. The errors are raised
        # in _bad_field, out of line, so this stays small enough to inline into every getter.
        cdef Py_ssize_t k
        if PyLong_CheckExact(i):
            k = _int_as_ssize(i)
            if k == -1 and PyErr_Occurred() != NULL:
                return self._bad_field(i, True)
        else:
            k = self._named(i)
        if <size_t>k >= <size_t>self._n.nchild:
            return self._bad_field(k, False)
        return &self._sch.nodes[self._sch.kids[self._n.child0 + k]]

    cdef VNode* _bad_field(self, i, bint overflow) except NULL:
        # raises the IndexError of _field (an int beyond Py_ssize_t is out of range like any other index)
        if overflow:
            PyErr_Clear()
        raise IndexError(f"field index {i} out of range for {self._n.nchild} fields")

    cdef inline bint _null(self, VNode* c) noexcept:
        if not self._n.bmsize:
            return False
        return (self._p[self._base + self._n.bmoff + (c.bit >> 3)] >> (c.bit & 7)) & 1

    def __len__(self):
        return self._n.nchild

    @property
    def num_fields(self):
        return self._n.nchild

    def keys(self):
        return list(self._sch.names[self._node])

    @cython.always_allow_keywords(False)
    def is_null(self, i):
        return self._null(self._field(i))

    # The typed getters take one positional argument (a one-argument C call, no argument parsing), resolve the
    # field in _field and read the slot the view's fixed region already holds (checked when the view was made).
    cdef object _prim(self, i, int wanted):
        cdef VNode* c = self._field(i)
        if not _typed_ok(c.prim, wanted):
            raise _wrong_type(self._sch, c - self._sch.nodes, _prim_name(wanted))
        if self._null(c):
            return None
        return _read_prim(self._p + self._base + c.off, wanted if wanted == CP_BOOL else c.prim)

    @cython.always_allow_keywords(False)
    def get_bool(self, i):
        return self._prim(i, CP_BOOL)

    @cython.always_allow_keywords(False)
    def get_int8(self, i):
        return self._prim(i, CP_I8)

    @cython.always_allow_keywords(False)
    def get_int16(self, i):
        return self._prim(i, CP_I16)

    @cython.always_allow_keywords(False)
    def get_int32(self, i):
        return self._prim(i, CP_I32)

    @cython.always_allow_keywords(False)
    def get_int64(self, i):
        cdef VNode* c = self._field(i)
        cdef int64_t v
        if c.prim != CP_I64 and c.prim != CP_TS and c.prim != CP_DUR:
            raise _wrong_type(self._sch, c - self._sch.nodes, "int64")
        if self._null(c):
            return None
        memcpy(&v, self._p + self._base + c.off, 8)
        return v

    @cython.always_allow_keywords(False)
    def get_float32(self, i):
        return self._prim(i, CP_F32)

    @cython.always_allow_keywords(False)
    def get_float64(self, i):
        return self._prim(i, CP_F64)

    cdef object _span(self, VNode* c, int kind, str wanted):
        cdef Py_ssize_t start = 0, size = 0
        cdef int st
        if c.kind != kind or c.inline_:
            raise _wrong_type(self._sch, c - self._sch.nodes, wanted)
        if self._null(c):
            return None
        st = _follow(self._p, self._base + c.off, self._base, self._end, &start, &size)
        if st < 0:
            raise _corrupt(self._sch, st, self._base + c.off, c - self._sch.nodes)
        return (start, size)

    def get_binary(self, i):
        cdef VNode* c = self._childn(self._index(i))
        sp = self._span(c, CK_BYTES, "binary")
        if sp is None:
            return None
        return (<const char*>self._p)[sp[0]:sp[0] + sp[1]]

    @cython.always_allow_keywords(False)
    def get_string(self, i):
        cdef VNode* c = self._field(i)
        cdef Py_ssize_t start = 0, size = 0
        cdef int st
        if c.prim != CP_STR or c.kind != CK_BYTES or c.inline_:
            raise _wrong_type(self._sch, c - self._sch.nodes, "string")
        if self._null(c):
            return None
        st = _follow(self._p, self._base + c.off, self._base, self._end, &start, &size)
        if st < 0:
            raise _corrupt(self._sch, st, self._base + c.off, c - self._sch.nodes)
        if _is_ascii(self._p + start, size):   # the common case, without the call to _utf8
            return _ascii(self._p + start, size)
        return _utf8(self._sch, c - self._sch.nodes, self._p, start, size)

    def get_decimal(self, i):
        cdef VNode* c = self._childn(self._index(i))
        sp = self._span(c, CK_DECIMAL, "decimal")
        if sp is None:
            return None
        if sp[1] != 32:
            raise _corrupt(self._sch, BAD_LENGTH, self._base + c.off, c - self._sch.nodes)
        try:
            return self._sch.convert[c - self._sch.nodes]((<const char*>self._p)[sp[0]:sp[0] + 32])
        except ValueError:
            raise _corrupt(self._sch, OUT_OF_RANGE, sp[0], c - self._sch.nodes) from None

    def get_struct(self, i):
        cdef VNode* c = self._childn(self._index(i))
        cdef Py_ssize_t node = c - self._sch.nodes
        if c.kind != CK_STRUCT:
            raise _wrong_type(self._sch, node, "struct")
        if self._null(c):
            return None
        if c.inline_:
            p = self._base + c.off
            return RowView(self._src, self._sch, None, node, p, p + c.fixed)
        sp = self._span(c, CK_STRUCT, "struct")
        return RowView(self._src, self._sch, None, node, sp[0], sp[0] + sp[1])

    def get_array(self, i):
        cdef VNode* c = self._childn(self._index(i))
        sp = self._span(c, CK_LIST, "array")
        if sp is None:
            return None
        return ArrayView(self._src, self._sch, self._sch.kids[c.child0], sp[0], sp[0] + sp[1])

    def get_map(self, i):
        cdef VNode* c = self._childn(self._index(i))
        sp = self._span(c, CK_MAP, "map")
        if sp is None:
            return None
        return MapView(self._src, self._sch, c - self._sch.nodes, sp[0], sp[0] + sp[1])

    def get(self, i):
        """The Python value of field ``i`` (index or name)."""
        cdef Py_ssize_t k = self._index(i)
        cdef VNode* c = self._childn(k)
        cdef Py_ssize_t node = c - self._sch.nodes
        if c.kind == CK_FIXED or c.kind == CK_BOOL:
            if self._null(c):
                return None
            raw = _read_prim(self._p + self._base + c.off, c.prim)
            return _convert(self._sch, node, raw, self._base + c.off)
        if c.kind == CK_BYTES:
            return self.get_string(k) if c.prim == CP_STR else self.get_binary(k)
        if c.kind == CK_DECIMAL:
            return self.get_decimal(k)
        if c.kind == CK_STRUCT:
            sub = self.get_struct(k)
            return None if sub is None else sub.to_dict()
        if c.kind == CK_LIST:
            arr = self.get_array(k)
            return None if arr is None else arr.to_list()
        m = self.get_map(k)
        return None if m is None else m.to_list()

    def __getitem__(self, i):
        return self.get(i)

    def to_dict(self):
        return {name: self.get(pos) for name, pos in self._sch.names[self._node].items()}

    def __repr__(self):
        return f"RowView({self.to_dict()!r})"


cdef class ArrayView:
    """Elements of one Fory array, read in place."""
    cdef _Bytes _src
    cdef const uint8_t* _p
    cdef ViewSchema _sch
    cdef VNode* _e
    cdef Py_ssize_t _elem, _base, _end, _n, _hdr, _bm

    @cython.cdivision(True)
    def __init__(self, _Bytes src, ViewSchema sch, Py_ssize_t elem, Py_ssize_t base, Py_ssize_t end):
        cdef int32_t n32
        cdef int64_t n
        cdef Py_ssize_t avail = end - base, w
        if elem < 0 or elem >= sch.nnodes or base < 0 or end > src.view.len or base > end:
            raise _corrupt(sch, BAD_LENGTH, max(base, 0), max(elem, 0))
        self._src = src
        self._p = <const uint8_t*>src.view.buf
        self._sch = sch
        self._elem = elem
        self._e = &sch.nodes[elem]
        self._base = base
        self._end = end
        if sch.compact:
            if avail < 4:
                raise _corrupt(sch, TRUNCATED, base, elem)
            memcpy(&n32, self._p + base, 4)
            n = n32
            self._bm = base + 4 if self._e.nullable else -1
        else:
            if avail < 8:
                raise _corrupt(sch, TRUNCATED, base, elem)
            memcpy(&n, self._p + base, 8)
            self._bm = base + 8
        w = self._e.slot
        if n < 0 or n > 2147483647 or (w and n > avail // w) or n > avail * 8:
            raise _corrupt(sch, BAD_LENGTH, base, elem)
        self._hdr = _array_header(sch, self._e, n)
        if self._hdr + n * w > avail:
            raise _corrupt(sch, TRUNCATED, base, elem)
        self._n = n

    def __len__(self):
        return self._n

    cdef Py_ssize_t _index(self, Py_ssize_t k) except -1:
        if k < 0:
            k += self._n
        if k < 0 or k >= self._n:
            raise IndexError(f"element {k} out of range for {self._n} elements")
        return k

    cdef inline bint _null(self, Py_ssize_t k) noexcept:
        if self._bm < 0:
            return False
        return (self._p[self._bm + (k >> 3)] >> (k & 7)) & 1

    def is_null(self, Py_ssize_t k):
        return self._null(self._index(k))

    cdef inline Py_ssize_t _slot(self, Py_ssize_t k):
        return self._base + self._hdr + k * self._e.slot

    cdef object _prim(self, Py_ssize_t k, int wanted):
        if not _typed_ok(self._e.prim, wanted):
            raise _wrong_type(self._sch, self._elem, _prim_name(wanted))
        k = self._index(k)
        if self._null(k):
            return None
        return _read_prim(self._p + self._slot(k), wanted if wanted == CP_BOOL else self._e.prim)

    def get_bool(self, Py_ssize_t k):
        return self._prim(k, CP_BOOL)

    def get_int8(self, Py_ssize_t k):
        return self._prim(k, CP_I8)

    def get_int16(self, Py_ssize_t k):
        return self._prim(k, CP_I16)

    def get_int32(self, Py_ssize_t k):
        return self._prim(k, CP_I32)

    def get_int64(self, Py_ssize_t k):
        return self._prim(k, CP_I64)

    def get_float32(self, Py_ssize_t k):
        return self._prim(k, CP_F32)

    def get_float64(self, Py_ssize_t k):
        return self._prim(k, CP_F64)

    cdef object _span(self, Py_ssize_t k, int kind, str wanted):
        cdef Py_ssize_t start = 0, size = 0
        cdef int st
        if self._e.kind != kind or self._e.inline_:
            raise _wrong_type(self._sch, self._elem, wanted)
        k = self._index(k)
        if self._null(k):
            return None
        st = _follow(self._p, self._slot(k), self._base, self._end, &start, &size)
        if st < 0:
            raise _corrupt(self._sch, st, self._slot(k), self._elem)
        return (start, size)

    def get_binary(self, Py_ssize_t k):
        sp = self._span(k, CK_BYTES, "binary")
        return None if sp is None else (<const char*>self._p)[sp[0]:sp[0] + sp[1]]

    def get_string(self, Py_ssize_t k):
        if self._e.prim != CP_STR:
            raise _wrong_type(self._sch, self._elem, "string")
        sp = self._span(k, CK_BYTES, "string")
        if sp is None:
            return None
        return _utf8(self._sch, self._elem, self._p, sp[0], sp[1])

    def get_decimal(self, Py_ssize_t k):
        sp = self._span(k, CK_DECIMAL, "decimal")
        if sp is None:
            return None
        if sp[1] != 32:
            raise _corrupt(self._sch, BAD_LENGTH, self._slot(self._index(k)), self._elem)
        try:
            return self._sch.convert[self._elem]((<const char*>self._p)[sp[0]:sp[0] + 32])
        except ValueError:
            raise _corrupt(self._sch, OUT_OF_RANGE, sp[0], self._elem) from None

    def get_struct(self, Py_ssize_t k):
        if self._e.kind != CK_STRUCT:
            raise _wrong_type(self._sch, self._elem, "struct")
        k = self._index(k)
        if self._null(k):
            return None
        if self._e.inline_:
            p = self._slot(k)
            return RowView(self._src, self._sch, None, self._elem, p, p + self._e.fixed)
        sp = self._span(k, CK_STRUCT, "struct")
        return RowView(self._src, self._sch, None, self._elem, sp[0], sp[0] + sp[1])

    def get_array(self, Py_ssize_t k):
        sp = self._span(k, CK_LIST, "array")
        if sp is None:
            return None
        return ArrayView(self._src, self._sch, self._sch.kids[self._e.child0], sp[0], sp[0] + sp[1])

    def get_map(self, Py_ssize_t k):
        sp = self._span(k, CK_MAP, "map")
        if sp is None:
            return None
        return MapView(self._src, self._sch, self._elem, sp[0], sp[0] + sp[1])

    def get(self, Py_ssize_t k):
        cdef int kind = self._e.kind
        if kind == CK_FIXED or kind == CK_BOOL:
            k = self._index(k)
            if self._null(k):
                return None
            raw = _read_prim(self._p + self._slot(k), self._e.prim)
            return _convert(self._sch, self._elem, raw, self._slot(k))
        if kind == CK_BYTES:
            return self.get_string(k) if self._e.prim == CP_STR else self.get_binary(k)
        if kind == CK_DECIMAL:
            return self.get_decimal(k)
        if kind == CK_STRUCT:
            sub = self.get_struct(k)
            return None if sub is None else sub.to_dict()
        if kind == CK_LIST:
            arr = self.get_array(k)
            return None if arr is None else arr.to_list()
        m = self.get_map(k)
        return None if m is None else m.to_list()

    def __getitem__(self, Py_ssize_t k):
        return self.get(k)

    def to_list(self):
        return [self.get(k) for k in range(self._n)]

    def __iter__(self):
        return iter(self.to_list())

    def __repr__(self):
        return f"ArrayView({self.to_list()!r})"


cdef class MapView:
    """A Fory map read in place: a keys array and a values array of equal length."""
    cdef ArrayView _keys, _values

    def __init__(self, _Bytes src, ViewSchema sch, Py_ssize_t node, Py_ssize_t base, Py_ssize_t end):
        cdef int64_t ks
        cdef Py_ssize_t ent, k
        if end - base < 8 or base < 0 or end > src.view.len:
            raise _corrupt(sch, TRUNCATED, max(base, 0), node)
        memcpy(&ks, <const uint8_t*>src.view.buf + base, 8)
        if ks < 0 or ks > end - base - 8:
            raise _corrupt(sch, BAD_LENGTH, base, node)
        ent = sch.children[node][0]
        kn, vn = sch.children[ent]
        self._keys = ArrayView(src, sch, kn, base + 8, base + 8 + ks)
        self._values = ArrayView(src, sch, vn, base + 8 + ks, end)
        if len(self._keys) != len(self._values):
            raise _corrupt(sch, BAD_LENGTH, base, node)
        for k in range(self._keys._n):
            if self._keys._null(k):   # map keys are never null
                raise _corrupt(sch, BAD_VALUE, self._keys._bm + (k >> 3), kn)

    def __len__(self):
        return len(self._keys)

    def keys(self):
        return self._keys

    def values(self):
        return self._values

    def to_list(self):
        """``[(key, value), ...]`` in stored order (Arrow's map as Python)."""
        return list(zip(self._keys.to_list(), self._values.to_list()))

    def to_dict(self):
        return dict(self.to_list())

    def __repr__(self):
        return f"MapView({self.to_list()!r})"
