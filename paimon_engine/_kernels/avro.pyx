# Avro binary decoding driven by a compiled schema program (see paimon_engine/formats/avro.py).
#
# A program node is a tuple (op, arg, keep). Records decode to dicts of their kept fields only; unkept
# values are skipped without building objects; arrays of {key: int, value: X} records (Iceberg's int-keyed
# maps) decode straight to dicts. This decodes Python objects, so it runs with the GIL; it never reads past
# the buffer and reports malformed input as a negative status instead of raising.
cimport cython
from libc.stdint cimport int64_t, uint64_t, uint8_t, uint32_t
from libc.string cimport memcpy

DEF OP_NULL = 0
DEF OP_BOOL = 1
DEF OP_INT = 2
DEF OP_LONG = 3
DEF OP_FLOAT = 4
DEF OP_DOUBLE = 5
DEF OP_BYTES = 6
DEF OP_STRING = 7
DEF OP_FIXED = 8
DEF OP_ENUM = 9
DEF OP_UNION = 10
DEF OP_RECORD = 11
DEF OP_ARRAY = 12
DEF OP_MAP = 13
DEF OP_INTMAP = 14

DEF MAX_DEPTH = 64


cdef class _Cursor:
    cdef const uint8_t* p
    cdef Py_ssize_t pos
    cdef Py_ssize_t end
    cdef int err
    cdef int depth


cdef inline int64_t _long(_Cursor c) noexcept:
    cdef uint64_t v = 0
    cdef int shift = 0
    cdef uint8_t b
    while True:
        if c.pos >= c.end:
            c.err = -1
            return 0
        b = c.p[c.pos]
        c.pos += 1
        if shift >= 64:
            c.err = -2
            return 0
        v |= (<uint64_t>(b & 0x7F)) << shift
        if (b & 0x80) == 0:
            break
        shift += 7
    return <int64_t>((v >> 1) ^ (~(v & 1) + 1))


cdef inline Py_ssize_t _len(_Cursor c) noexcept:
    cdef int64_t n = _long(c)
    if c.err:
        return 0
    if n < 0 or n > c.end - c.pos:
        c.err = -4
        return 0
    return <Py_ssize_t>n


cdef class _Node:
    # a program node (op, arg, keep) with its parts in C fields: the interpreter below reads these instead of
    # indexing tuples and converting Python ints on every value
    cdef int op
    cdef bint keep
    cdef Py_ssize_t size       # OP_FIXED
    cdef tuple symbols         # OP_ENUM
    cdef tuple names           # OP_RECORD field names
    cdef list kids             # OP_RECORD fields, OP_UNION branches, OP_ARRAY/OP_MAP items, OP_INTMAP key+value


cdef _Node _compile(tuple node, dict seen):
    # named types are shared subtrees of the program: compile each once (``seen`` by identity)
    cdef _Node n = seen.get(id(node))
    if n is not None:
        return n
    n = _Node()
    n.op = node[0]
    n.keep = node[2]
    arg = node[1]
    if n.op == OP_FIXED:
        n.size = arg   # compile_program admits 0 <= size < 2**31
    elif n.op == OP_ENUM:
        n.symbols = tuple(arg)
    elif n.op == OP_UNION:
        n.kids = [_compile(x, seen) for x in arg]
    elif n.op == OP_RECORD:
        n.names = tuple([x[0] for x in arg])
        n.kids = [_compile(x[1], seen) for x in arg]
    elif n.op == OP_ARRAY or n.op == OP_MAP:
        n.kids = [_compile(arg, seen)]
    elif n.op == OP_INTMAP:
        n.kids = [_compile(arg[0], seen), _compile(arg[1], seen)]
    seen[id(node)] = n
    return n


cdef dict _COMPILED = {}


cdef _Node _compiled(tuple program):
    hit = _COMPILED.get(id(program))
    if hit is not None and (<tuple>hit)[0] is program:
        return <_Node>(<tuple>hit)[1]
    cdef _Node n = _compile(program, {})
    if len(_COMPILED) > 512:
        _COMPILED.clear()
    _COMPILED[id(program)] = (program, n)   # holds the program, so its id is not reused while cached
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
cdef object _read(_Cursor c, _Node node):
    cdef int op = node.op
    cdef bint keep = node.keep
    cdef int64_t v, n, i, blk
    cdef Py_ssize_t size, j
    cdef double d
    cdef float f
    cdef object out, key, val
    cdef list kids
    cdef tuple names
    cdef _Node kid
    if c.err:
        return None
    if op == OP_NULL:
        return None
    if op == OP_BOOL:
        if c.pos >= c.end:
            c.err = -1
            return None
        c.pos += 1
        return c.p[c.pos - 1] != 0
    if op == OP_INT or op == OP_LONG:
        v = _long(c)
        if op == OP_INT and (v < -2147483648 or v > 2147483647):
            c.err = -3
            return None
        return v if keep else None
    if op == OP_FLOAT:
        if c.end - c.pos < 4:
            c.err = -1
            return None
        memcpy(&f, c.p + c.pos, 4)
        c.pos += 4
        return f
    if op == OP_DOUBLE:
        if c.end - c.pos < 8:
            c.err = -1
            return None
        memcpy(&d, c.p + c.pos, 8)
        c.pos += 8
        return d
    if op == OP_BYTES or op == OP_STRING or op == OP_FIXED:
        if op == OP_FIXED:
            size = node.size
            if size > c.end - c.pos:
                c.err = -1
                return None
        else:
            size = _len(c)
            if c.err:
                return None
        c.pos += size
        if not keep:
            return None
        if op == OP_STRING:
            try:
                return (<const char*>(c.p + c.pos - size))[:size].decode("utf-8")
            except UnicodeDecodeError:
                c.err = -5
                return None
        return (<const char*>(c.p + c.pos - size))[:size]
    if op == OP_ENUM:
        v = _long(c)
        if c.err:
            return None
        if v < 0 or v >= len(node.symbols):
            c.err = -3
            return None
        return node.symbols[v]
    if op == OP_UNION:
        v = _long(c)
        if c.err:
            return None
        kids = node.kids
        if v < 0 or v >= len(kids):
            c.err = -3
            return None
        return _read(c, <_Node>kids[v])
    c.depth += 1
    if c.depth > MAX_DEPTH:
        c.err = -5
        return None
    try:
        if op == OP_RECORD:
            kids = node.kids
            names = node.names
            if keep:
                out = {}
                for j in range(len(kids)):
                    kid = <_Node>kids[j]
                    val = _read(c, kid)
                    if c.err:
                        return None
                    if kid.keep:
                        out[names[j]] = val
                return out
            for j in range(len(kids)):
                _read(c, <_Node>kids[j])
                if c.err:
                    return None
            return None
        if op == OP_ARRAY or op == OP_MAP or op == OP_INTMAP:
            kids = node.kids
            if op == OP_ARRAY:
                out = [] if keep else None
            else:
                out = {} if keep else None
            while True:
                blk = _long(c)
                if c.err:
                    return None
                if blk == 0:
                    break
                if blk < 0:
                    blk = -blk
                    _long(c)  # block size in bytes
                    if c.err:
                        return None
                if blk > c.end - c.pos:  # every item takes at least one byte... or none (nulls)
                    if blk > (c.end - c.pos) * 8 + 64:
                        c.err = -4
                        return None
                for i in range(blk):
                    if op == OP_MAP:
                        size = _len(c)
                        if c.err:
                            return None
                        c.pos += size
                        key = None
                        if keep:
                            try:
                                key = (<const char*>(c.p + c.pos - size))[:size].decode("utf-8")
                            except UnicodeDecodeError:  # a map key is an Avro string: UTF-8 or corrupt
                                c.err = -5
                                return None
                        val = _read(c, <_Node>kids[0])
                        if c.err:
                            return None
                        if keep:
                            out[key] = val
                    elif op == OP_INTMAP:
                        # a record {key: int, value: X}
                        key = _read(c, <_Node>kids[0])
                        val = _read(c, <_Node>kids[1])
                        if c.err:
                            return None
                        if keep:
                            out[key] = val
                    else:
                        val = _read(c, <_Node>kids[0])
                        if c.err:
                            return None
                        if keep:
                            out.append(val)
            return out
    finally:
        c.depth -= 1
    c.err = -5
    return None


def decode_records(const uint8_t[::1] data, Py_ssize_t count, tuple program, list out):
    """Decode ``count`` records of ``program`` from ``data`` into ``out``. Returns the number of bytes used,
    or a negative status (-1 truncated, -2 overlong varint, -3 value out of range, -4 bad length,
    -5 bad value)."""
    cdef _Cursor c = _Cursor()
    cdef Py_ssize_t i
    cdef const uint8_t* empty = b"\0"
    c.pos = 0
    c.end = data.shape[0]
    c.err = 0
    c.depth = 0
    c.p = empty if c.end == 0 else &data[0]
    if count < 0:
        return -4
    cdef _Node root = _compiled(program)
    for i in range(count):
        val = _read(c, root)
        if c.err:
            return c.err
        out.append(val)
    return c.pos
