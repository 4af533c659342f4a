"""Pure-Python twin of ``_kernels/avro.pyx``: the same schema-program interpreter."""

import struct

OP_NULL, OP_BOOL, OP_INT, OP_LONG, OP_FLOAT, OP_DOUBLE, OP_BYTES, OP_STRING, OP_FIXED, OP_ENUM, OP_UNION, \
    OP_RECORD, OP_ARRAY, OP_MAP, OP_INTMAP = range(15)
MAX_DEPTH = 64


class _Bad(Exception):
    def __init__(self, code):
        self.code = code


class _Cursor:
    __slots__ = ("b", "pos", "end", "depth")

    def __init__(self, b):
        self.b = b
        self.pos = 0
        self.end = len(b)
        self.depth = 0


def _long(c):
    v = 0
    shift = 0
    b = c.b
    while True:
        if c.pos >= c.end:
            raise _Bad(-1)
        x = b[c.pos]
        c.pos += 1
        if shift >= 64:
            raise _Bad(-2)
        v |= (x & 0x7F) << shift
        if not x & 0x80:
            break
        shift += 7
    v &= (1 << 64) - 1
    r = (v >> 1) ^ -(v & 1)
    if r >= 1 << 63:
        r -= 1 << 64
    return r


def _len(c):
    n = _long(c)
    if n < 0 or n > c.end - c.pos:
        raise _Bad(-4)
    return n


def _read(c, node):
    op, arg, keep = node
    if op == OP_NULL:
        return None
    if op == OP_BOOL:
        if c.pos >= c.end:
            raise _Bad(-1)
        c.pos += 1
        return c.b[c.pos - 1] != 0
    if op in (OP_INT, OP_LONG):
        v = _long(c)
        if op == OP_INT and not -2147483648 <= v <= 2147483647:
            raise _Bad(-3)
        return v if keep else None
    if op == OP_FLOAT:
        if c.end - c.pos < 4:
            raise _Bad(-1)
        c.pos += 4
        return struct.unpack_from("<f", c.b, c.pos - 4)[0]
    if op == OP_DOUBLE:
        if c.end - c.pos < 8:
            raise _Bad(-1)
        c.pos += 8
        return struct.unpack_from("<d", c.b, c.pos - 8)[0]
    if op in (OP_BYTES, OP_STRING, OP_FIXED):
        if op == OP_FIXED:
            size = arg
            if size > c.end - c.pos:
                raise _Bad(-1)
        else:
            size = _len(c)
        c.pos += size
        if not keep:
            return None
        raw = bytes(c.b[c.pos - size:c.pos])
        if op == OP_STRING:
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _Bad(-5) from None
        return raw
    if op == OP_ENUM:
        v = _long(c)
        if not 0 <= v < len(arg):
            raise _Bad(-3)
        return arg[v]
    if op == OP_UNION:
        v = _long(c)
        if not 0 <= v < len(arg):
            raise _Bad(-3)
        return _read(c, arg[v])
    c.depth += 1
    if c.depth > MAX_DEPTH:
        raise _Bad(-5)
    try:
        if op == OP_RECORD:
            out = {} if keep else None
            for name, child in arg:
                val = _read(c, child)
                if keep and child[2]:
                    out[name] = val
            return out
        if op in (OP_ARRAY, OP_MAP, OP_INTMAP):
            out = ([] if op == OP_ARRAY else {}) if keep else None
            while True:
                blk = _long(c)
                if blk == 0:
                    break
                if blk < 0:
                    blk = -blk
                    _long(c)
                if blk > c.end - c.pos and blk > (c.end - c.pos) * 8 + 64:
                    raise _Bad(-4)
                for _ in range(blk):
                    if op == OP_MAP:
                        size = _len(c)
                        c.pos += size
                        key = None
                        if keep:
                            try:
                                key = bytes(c.b[c.pos - size:c.pos]).decode("utf-8")
                            except UnicodeDecodeError:   # a map key is an Avro string: UTF-8 or corrupt
                                raise _Bad(-5) from None
                        val = _read(c, arg)
                        if keep:
                            out[key] = val
                    elif op == OP_INTMAP:
                        key = _read(c, arg[0])
                        val = _read(c, arg[1])
                        if keep:
                            out[key] = val
                    else:
                        val = _read(c, arg)
                        if keep:
                            out.append(val)
            return out
    finally:
        c.depth -= 1
    raise _Bad(-5)


def decode_records(data, count, program, out):
    if count < 0:
        return -4
    c = _Cursor(memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data)
    try:
        for _ in range(count):
            out.append(_read(c, program))
    except _Bad as exc:
        return exc.code
    except RecursionError:
        return -5
    return c.pos
