"""Pure-Python twin of ``paimon_engine/_kernels/rowcodec.pyx``: same functions, same results."""

import struct
from operator import index as _as_index

import numpy as np

from .status import BAD_LENGTH, BAD_VALUE, INVALID_UTF8, NEED_MORE, OUT_OF_RANGE, OVERLONG, TRUNCATED

K_BOOL, K_I8, K_I16, K_I32, K_I64, K_F32, K_F64, K_BYTES = 1, 2, 3, 4, 5, 6, 7, 8
K_TS_MILLIS, K_TS_NANO, K_DEC_COMPACT, K_DEC_BIG, K_VARIANT = 9, 10, 11, 12, 13
K_ARRAY, K_MAP, K_ROW, K_RAW, O_SPAN = 20, 21, 22, 23, 30
_WIDTH = {K_BOOL: 1, K_I8: 1, K_I16: 2, K_I32: 4, K_F32: 4, K_I64: 8, K_F64: 8, K_TS_MILLIS: 8, K_DEC_COMPACT: 8}


class _Fail(Exception):
    pass


def _u32(p, pos, end):
    result = shift = 0
    for i in range(5):
        if pos >= end:
            raise _Fail(TRUNCATED)
        b = p[pos]
        pos += 1
        if i == 4 and b & 0xF0:
            raise _Fail(OVERLONG)
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise _Fail(OVERLONG)


def _len(p, pos, end):
    v, pos = _u32(p, pos, end)
    if v > 0x7FFFFFFF:
        raise _Fail(OUT_OF_RANGE)
    if v > end - pos:
        raise _Fail(BAD_LENGTH)
    return v, pos


def _wu32(out, v):
    v &= 0xFFFFFFFF
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def _skip_array(p, pos, end, prog, child):
    n, pos = _u32(p, pos, end)
    if n > 0x7FFFFFFF:
        raise _Fail(OUT_OF_RANGE)
    nb = (n + 7) >> 3
    if nb > end - pos:
        raise _Fail(BAD_LENGTH)
    bits = pos
    pos += nb
    for i in range(n):
        if not p[bits + (i >> 3)] & (1 << (i & 7)):
            pos = _skip(p, pos, end, prog, child)
    return pos, n


def _skip(p, pos, end, prog, node):
    kind = int(prog[node * 3])
    w = _WIDTH.get(kind)
    if w:
        if w > end - pos:
            raise _Fail(TRUNCATED)
        if kind == K_BOOL and p[pos] > 1:
            raise _Fail(BAD_VALUE)
        return pos + w
    if kind in (K_BYTES, K_DEC_BIG):
        n, pos = _len(p, pos, end)
        if kind == K_DEC_BIG and not 1 <= n <= 16:
            raise _Fail(BAD_LENGTH)
        return pos + n
    if kind == K_TS_NANO:
        if 8 > end - pos:
            raise _Fail(TRUNCATED)
        v, pos = _u32(p, pos + 8, end)
        if v > 999999:
            raise _Fail(OUT_OF_RANGE)
        return pos
    if kind == K_VARIANT:
        n, pos = _len(p, pos, end)
        n, pos = _len(p, pos + n, end)
        return pos + n
    if kind == K_ARRAY:
        return _skip_array(p, pos, end, prog, node + 1)[0]
    if kind == K_MAP:
        child = node + 1
        pos, n = _skip_array(p, pos, end, prog, child)
        pos, m = _skip_array(p, pos, end, prog, int(prog[child * 3 + 2]))
        if n != m:
            raise _Fail(BAD_VALUE)
        return pos
    if kind == K_ROW:
        n = int(prog[node * 3 + 1])
        nb = (n + 7) >> 3
        if nb > end - pos:
            raise _Fail(TRUNCATED)
        bits = pos
        pos += nb
        child = node + 1
        for i in range(n):
            if not p[bits + (i >> 3)] & (1 << (i & 7)):
                pos = _skip(p, pos, end, prog, child)
            child = int(prog[child * 3 + 2])
        return pos
    raise _Fail(BAD_VALUE)


def skip_values(buf, pos, end, program, node):
    if pos < 0 or end > len(buf) or pos > end or node < 0 or 3 * node >= len(program):
        return BAD_LENGTH
    if end == 0:
        return TRUNCATED
    try:
        return _skip(memoryview(buf).cast("B"), pos, end, program, node)
    except _Fail as e:
        return e.args[0]


def _nbytes(a):
    return 0 if a is None else a.nbytes


class BlockDecoder:
    """Rows of decompressed blocks into one set of column buffers (see the compiled kernel's docstring)."""

    def __init__(self, program, outs, capacity, datapos, state):
        self._program, self._outs, self._capacity = program, list(outs), capacity
        self._datapos, self._state = datapos, state
        self.status = 0
        if capacity < 0 or len(state) < 3 or len(datapos) < len(outs) or len(program) < 3 * len(outs) \
                or len(program) == 0:
            self.status = BAD_LENGTH
        else:
            need = _check_outs(self._outs, capacity)
            if need:
                self.status = need

    def decode(self, block, nrows, rows, nsel, out_base):
        if self.status:
            return self.status
        if out_base < 0 or nsel < 0 or out_base + nsel > self._capacity:
            return BAD_LENGTH
        return decode_block(block, nrows, self._program, self._outs, rows, nsel, out_base, self._datapos,
                            self._state)


def _decimal_bound(t):
    """A decimal output's bound 10**precision (its ``scale`` slot), or None if it is not a valid bound."""
    try:
        b = _as_index(t[1])
    except TypeError:
        return None
    return b if 1 <= b <= (10 ** 18 if t[0] == K_DEC_COMPACT else 10 ** 38) else None


def _check_outs(outs, need):
    """BAD_VALUE if a decimal output has no valid bound, BAD_LENGTH if an output buffer cannot hold ``need``
    rows, else 0."""
    for t in outs:
        if t is None:
            continue
        mode = t[0]
        if mode in (K_DEC_COMPACT, K_DEC_BIG) and _decimal_bound(t) is None:
            return BAD_VALUE
        if _nbytes(t[2]) * 8 < need:
            return BAD_LENGTH
        if mode == K_BOOL:
            width = 0
            if _nbytes(t[3]) * 8 < need:
                return BAD_LENGTH
        elif mode == K_BYTES:
            width = 0
            if _nbytes(t[4]) < 4 * (need + 1):
                return BAD_LENGTH
        elif mode in (O_SPAN, K_DEC_COMPACT, K_DEC_BIG):
            width = 16
        elif mode == K_TS_NANO:
            width = 8
        else:
            width = _WIDTH.get(mode, 0)
        if width and _nbytes(t[3]) < width * need:
            return BAD_LENGTH
    return 0


def decode_block(block, nrows, program, outs, rows, nsel, out_base, datapos, state):
    p = memoryview(block).cast("B")
    blen = len(p)
    data_end = blen - 4 - 4 * nrows
    nfields = len(outs)
    if nrows < 0 or data_end < 0 or len(state) < 3 or len(datapos) < nfields or nsel < 0:
        return BAD_LENGTH
    if rows is not None:
        if len(rows) < nsel:
            return BAD_LENGTH
    elif nsel > nrows:
        return BAD_LENGTH
    if len(program) < 3 * nfields or len(program) == 0:
        return BAD_LENGTH
    if out_base < 0:
        return BAD_LENGTH
    bad = _check_outs(outs, out_base + nsel)
    if bad:
        return bad
    views = [None if t is None else (t[0], t[1], t[2], None if t[3] is None else t[3].view(np.uint8), t[4], t[5])
             for t in outs]
    offs = struct.unpack_from("<%di" % nrows, p, data_end) if nrows else ()
    nb = (nfields + 7) >> 3
    for k in range(nsel):
        r = int(rows[k]) if rows is not None else k
        if r < 0 or r >= nrows:
            state[0], state[1], state[2] = r, -1, data_end
            return OUT_OF_RANGE
        pos = offs[r]
        end = offs[r + 1] if r + 1 < nrows else data_end
        if pos < 0 or pos > end or end > data_end:
            state[0], state[1], state[2] = r, -1, data_end + 4 * r
            return BAD_VALUE
        state[0], state[1], state[2] = r, -1, pos
        if nb > end - pos:
            return TRUNCATED
        bits = pos
        pos += nb
        o = out_base + k
        node = 0
        for f in range(nfields):
            oc = views[f]
            kind = int(program[node * 3])
            state[1], state[2] = f, pos
            try:
                if p[bits + (f >> 3)] & (1 << (f & 7)):
                    if oc is not None:
                        mode = oc[0]
                        if mode == K_BYTES:
                            oc[4][o + 1] = datapos[f]
                        elif mode in (K_DEC_COMPACT, K_DEC_BIG):
                            oc[3][16 * o:16 * o + 16] = 0
                        elif mode == K_TS_NANO:
                            oc[3][8 * o:8 * o + 8] = 0
                        elif mode in _WIDTH and mode != K_BOOL:
                            w = _WIDTH[mode]
                            oc[3][w * o:w * o + w] = 0
                elif oc is None:
                    pos = _skip(p, pos, end, program, node)
                else:
                    mode, scale, validity, values, offsets, data = oc
                    if mode != O_SPAN and mode != kind:
                        return BAD_VALUE
                    if mode == O_SPAN:
                        start = pos
                        pos = _skip(p, pos, end, program, node)
                        values[16 * o:16 * o + 16] = np.frombuffer(struct.pack("<qq", start, pos), np.uint8)
                    elif kind == K_BOOL:
                        if pos >= end:
                            return TRUNCATED
                        b = p[pos]
                        if b > 1:
                            return BAD_VALUE
                        if b:
                            values[o >> 3] |= 1 << (o & 7)
                        pos += 1
                    elif kind in _WIDTH and kind != K_DEC_COMPACT:
                        w = _WIDTH[kind]
                        if w > end - pos:
                            return TRUNCATED
                        values[w * o:w * o + w] = p[pos:pos + w]
                        pos += w
                    elif kind == K_DEC_COMPACT:
                        if 8 > end - pos:
                            return TRUNCATED
                        v = struct.unpack_from("<q", p, pos)[0]
                        if not -scale < v < scale:
                            return OUT_OF_RANGE
                        values[16 * o:16 * o + 16] = np.frombuffer(v.to_bytes(16, "little", signed=True), np.uint8)
                        pos += 8
                    elif kind == K_TS_NANO:
                        if 8 > end - pos:
                            return TRUNCATED
                        millis = struct.unpack_from("<q", p, pos)[0]
                        v, pos = _u32(p, pos + 8, end)
                        if v > 999999:
                            return OUT_OF_RANGE
                        x = millis * 1000 + v // 1000 if scale == 1000 else millis * 1000000 + v
                        x = (x + (1 << 63)) % (1 << 64) - (1 << 63)
                        values[8 * o:8 * o + 8] = np.frombuffer(struct.pack("<q", x), np.uint8)
                    elif kind == K_BYTES:
                        n, pos = _len(p, pos, end)
                        d = int(datapos[f])
                        if d + n > len(data) or d + n > 0x7FFFFFFF:
                            return BAD_LENGTH
                        if scale:
                            try:
                                bytes(p[pos:pos + n]).decode("utf-8")
                            except UnicodeDecodeError:
                                return INVALID_UTF8
                        data[d:d + n] = p[pos:pos + n]
                        datapos[f] = d + n
                        offsets[o + 1] = d + n
                        pos += n
                    elif kind == K_DEC_BIG:
                        n, pos = _len(p, pos, end)
                        if not 1 <= n <= 16:
                            return BAD_LENGTH
                        v = int.from_bytes(bytes(p[pos:pos + n]), "big", signed=True)
                        values[16 * o:16 * o + 16] = np.frombuffer(v.to_bytes(16, "little", signed=True), np.uint8)
                        if not -scale < v < scale:
                            return OUT_OF_RANGE
                        pos += n
                    else:
                        return BAD_VALUE
                    validity[o >> 3] |= 1 << (o & 7)
            except _Fail as e:
                return e.args[0]
            node = int(program[node * 3 + 2])
    return nsel


_ENCODED = (K_BOOL, K_I8, K_I16, K_I32, K_I64, K_F32, K_F64, K_TS_MILLIS, K_DEC_COMPACT, K_BYTES, K_RAW, K_TS_NANO,
            K_DEC_BIG)


def encode_rows(cols, start, stop, out, row_offsets, state, block_size):
    if start < 0 or stop < start or len(state) < 3 or len(out) == 0 or len(row_offsets) == 0:
        return BAD_LENGTH
    for kind, nulls, values, offsets, data in cols:
        if kind not in _ENCODED:
            return BAD_VALUE
        if nulls is not None and len(nulls) < stop:
            return BAD_LENGTH
        w = _WIDTH.get(kind)
        if w and _nbytes(values) < w * stop:
            return BAD_LENGTH
        width = 4 if kind == K_BYTES and np.asarray(offsets).dtype == np.int32 else 8
        if kind in (K_BYTES, K_RAW) and _nbytes(offsets) < width * (stop + 1):
            return BAD_LENGTH
        if kind == K_TS_NANO and (_nbytes(values) < 8 * stop or _nbytes(offsets) < 8 * stop):
            return BAD_LENGTH
        if kind == K_DEC_BIG and _nbytes(values) < 16 * stop:
            return BAD_LENGTH
    cols = [(k, n, None if v is None else v.view(np.uint8), o, d) for k, n, v, o, d in cols]
    ov = memoryview(out).cast("B")
    pos, nrows = int(state[0]), int(state[1])
    ncols = len(cols)
    hb = (ncols + 7) >> 3
    cap = len(out)
    state[2] = 0
    for r in range(start, stop):
        row = bytearray(hb)
        for f, (kind, nulls, values, offsets, data) in enumerate(cols):
            if nulls is not None and nulls[r]:
                row[f >> 3] |= 1 << (f & 7)
                continue
            w = _WIDTH.get(kind)
            if kind == K_BOOL:
                row.append(1 if values[r] else 0)
            elif w:
                row += values[w * r:w * r + w].tobytes()
            elif kind in (K_BYTES, K_RAW):
                a, b = int(offsets[r]), int(offsets[r + 1])
                if kind == K_BYTES:
                    _wu32(row, b - a)
                row += data[a:b].tobytes()
            elif kind == K_TS_NANO:
                row += values[8 * r:8 * r + 8].tobytes()
                _wu32(row, int(offsets[r]))
            elif kind == K_DEC_BIG:
                v = int.from_bytes(values[16 * r:16 * r + 16].tobytes(), "little", signed=True)
                # minimal two's complement: the length of ~v for negatives (-128 is one byte)
                raw = v.to_bytes((~v if v < 0 else v).bit_length() // 8 + 1, "big", signed=True)
                _wu32(row, len(raw))
                row += raw
        if nrows >= len(row_offsets) or len(row) > cap - pos:
            state[0], state[1], state[2] = pos, nrows, 1
            return r - start
        row_offsets[nrows] = pos
        nrows += 1
        ov[pos:pos + len(row)] = row
        pos += len(row)
        if pos + 4 * nrows + 4 >= block_size:
            state[0], state[1], state[2] = pos, nrows, 2
            return r - start + 1
    state[0], state[1] = pos, nrows
    return stop - start


def finish_block(out, row_offsets, state):
    """Row offsets and row count after the rows of the block in ``out`` (see the compiled kernel)."""
    if len(state) < 3:
        return BAD_LENGTH
    pos, nrows = int(state[0]), int(state[1])
    if pos < 0 or nrows < 0 or nrows > len(row_offsets) or pos > len(out):
        return BAD_LENGTH
    if (len(out) - pos) // 4 < nrows + 1:
        return NEED_MORE
    trailer = struct.pack(f"<{nrows + 1}i", *[int(x) for x in row_offsets[:nrows]], nrows)
    memoryview(out).cast("B")[pos:pos + len(trailer)] = trailer
    state[0] = state[1] = state[2] = 0
    return pos + len(trailer)


def bytes_min_max(offsets, data, nulls, n, out):
    """Rows of the smallest and the largest non-null value of a bytes column (see the compiled kernel)."""
    if n < 0 or len(offsets) < n + 1 or len(out) < 2:
        return BAD_LENGTH
    if nulls is not None and len(nulls) < n:
        return BAD_LENGTH
    d = memoryview(data).cast("B") if len(data) else b""
    dlen = len(d)
    imin = imax = -1
    vmin = vmax = None
    count = 0
    offs = [int(x) for x in offsets[:n + 1]]
    for i in range(n):
        if nulls is not None and nulls[i]:
            continue
        s, e = offs[i], offs[i + 1]
        if s < 0 or e < s or e > dlen:
            return BAD_LENGTH
        v = bytes(d[s:e])
        count += 1
        if imin < 0:
            imin = imax = i
            vmin = vmax = v
            continue
        if v < vmin:
            imin, vmin = i, v
        if v > vmax:
            imax, vmax = i, v
    out[0] = imin
    out[1] = imax
    return count


_NUM_DTYPES = {K_I8: "<i1", K_I16: "<i2", K_I32: "<i4", K_I64: "<i8", K_F32: "<f4", K_F64: "<f8"}


def numeric_min_max(values, kind, nulls, n, out):
    """Smallest and largest non-null value of a fixed-width number column (see the compiled kernel)."""
    if kind not in _NUM_DTYPES:
        return BAD_VALUE
    dtype = np.dtype(_NUM_DTYPES[kind])
    w = dtype.itemsize
    if n < 0 or _nbytes(values) < w * n or len(out) < 2 * w:
        return BAD_LENGTH
    if nulls is not None and len(nulls) < n:
        return BAD_LENGTH
    v = np.frombuffer(memoryview(values).cast("B")[:w * n], dtype=dtype) if n else np.zeros(0, dtype)
    if nulls is not None:
        v = v[np.asarray(nulls[:n]) == 0]
    if dtype.kind == "f":
        v = v[~np.isnan(v)]
    if len(v) == 0:
        return 0
    lo, hi = v.min(), v.max()
    if dtype.kind == "f":
        zeros = v[v == 0]
        if lo == 0:   # -0.0 orders before 0.0
            lo = dtype.type(-0.0) if np.signbit(zeros).any() else dtype.type(0.0)
        if hi == 0:
            hi = dtype.type(0.0) if (~np.signbit(zeros)).any() else dtype.type(-0.0)
    o = np.asarray(out).view(np.uint8)
    o[:w] = np.frombuffer(np.array([lo], dtype).tobytes(), np.uint8)
    o[w:2 * w] = np.frombuffer(np.array([hi], dtype).tobytes(), np.uint8)
    return len(v)


def column_bounds(cols, start, stop, stats):
    """Go on with the bounds of columns over their rows [start, stop) (see the compiled kernel)."""
    if start < 0 or stop < start or len(stats) < 4 * len(cols):
        return BAD_LENGTH
    n = stop - start
    for f, (kind, nulls, values, offsets, data) in enumerate(cols):
        st = stats[4 * f:4 * f + 4]
        if not st[0]:
            continue
        if nulls is not None and len(nulls) < stop:
            return BAD_LENGTH
        part_nulls = None if nulls is None else nulls[start:stop]
        if kind == K_BYTES:
            if len(offsets) < stop + 1:
                return BAD_LENGTH
            carried = [int(x) for x in st[2:4]]
            if (carried[0] >= 0 or carried[1] >= 0) and not all(0 <= i < stop for i in carried):
                return BAD_LENGTH
            if carried[0] >= 0 and not all(0 <= int(offsets[i]) <= int(offsets[i + 1]) <= len(data) for i in carried):
                return BAD_LENGTH
            rows = np.empty(2, np.int64)
            got = bytes_min_max(offsets[start:stop + 1], data, part_nulls, n, rows)
            if got < 0:
                return got
            if got:
                d = memoryview(data).cast("B")

                def value(i):
                    return bytes(d[int(offsets[i]):int(offsets[i + 1])])
                lo, hi = int(rows[0]) + start, int(rows[1]) + start
                if st[1] == 0 or value(lo) < value(int(st[2])):
                    st[2] = lo
                if st[1] == 0 or value(hi) > value(int(st[3])):
                    st[3] = hi
                st[1] += got
            continue
        if kind not in _NUM_DTYPES:
            return BAD_VALUE
        dtype = np.dtype(_NUM_DTYPES[kind])
        w = dtype.itemsize
        if _nbytes(values) < w * stop:
            return BAD_LENGTH
        if not n:
            continue
        out = np.zeros(2 * w, np.uint8)
        got = numeric_min_max(memoryview(values).cast("B")[w * start:w * stop], kind, part_nulls, n, out)
        if not got:
            continue
        lo, hi = out.view(dtype)
        if dtype.kind == "f":
            lo, hi = float(lo), float(hi)
            if st[1]:
                olo, ohi = st[2:4].view(np.float64)
                if not (lo < olo or (lo == olo and np.signbit(lo) and not np.signbit(olo))):
                    lo = float(olo)
                if not (hi > ohi or (hi == ohi and not np.signbit(hi) and np.signbit(ohi))):
                    hi = float(ohi)
            st[2:4] = np.array([lo, hi], np.float64).view(np.int64)
        else:
            if st[1] == 0 or int(lo) < st[2]:
                st[2] = int(lo)
            if st[1] == 0 or int(hi) > st[3]:
                st[3] = int(hi)
        st[1] += got
    return 0


# -- one row as Python values (RowFileReader.get_row); see the kernel for the contract ---------------------------
K_TEXT = 24
RV_OFFSET, RV_BITMAP, RV_VARINT_TRUNCATED, RV_VARINT_OVERLONG, RV_LENGTH, RV_TRUNCATED, RV_BOOL, RV_UTF8, \
    RV_ARGS = range(1, 10)
_RV_FIXED = {K_I16: struct.Struct("<h"), K_I32: struct.Struct("<i"), K_I64: struct.Struct("<q"),
             K_F32: struct.Struct("<f"), K_F64: struct.Struct("<d")}  # K_F32: its size (the value: _f32)
_I32 = struct.Struct("<i")


class _RowFail(Exception):
    pass


def _rv_fail(state, check, field, at, detail, status):
    if state is not None:
        state[0], state[1], state[2], state[3] = check, field, at, detail
    raise _RowFail(status)


def _f32(p, pos):
    """The FLOAT at ``pos`` widened to a Python float as C widens it (as Arrow's to_pylist and the kernel do; a
    signalling NaN comes out quiet, where ``struct`` keeps it on newer Pythons)."""
    return float(np.frombuffer(p, np.float32, 1, pos)[0])


def row_values(block, nrows, row, kinds, names, out, state):
    if type(names) is not tuple or type(out) is not dict:
        raise TypeError("names must be a tuple and out a dict")
    nrows, row = _ssize(nrows), _ssize(row)
    try:
        return _row_values(block if type(block) is bytes else bytes(memoryview(block)), nrows, row, kinds, names,
                           out, state)
    except _RowFail as e:
        return e.args[0]


def _ssize(v):
    """``v`` as the kernel's Py_ssize_t arguments take it (OverflowError beyond 64 bits)."""
    v = _as_index(v)
    if not -(1 << 63) <= v < 1 << 63:
        raise OverflowError("Python int too large to convert to C ssize_t")
    return v


def _row_values(p, nrows, row, kinds, names, out, state):
    blen = len(p)
    if (type(kinds) is not bytes or len(kinds) != len(names) or nrows <= 0 or not 0 <= row < nrows
            or nrows > (blen - 4) // 4):
        _rv_fail(state, RV_ARGS, 0, 0, 0, BAD_LENGTH)
    data_end = blen - 4 - 4 * nrows
    at = data_end + 4 * row
    pos = _I32.unpack_from(p, at)[0]
    end = _I32.unpack_from(p, at + 4)[0] if row + 1 < nrows else data_end
    if not 0 <= pos <= end <= data_end:
        _rv_fail(state, RV_OFFSET, 0, at, pos, BAD_VALUE)
    nb = (len(kinds) + 7) >> 3
    if nb > end - pos:
        _rv_fail(state, RV_BITMAP, 0, pos, 0, TRUNCATED)
    start = pos
    pos += nb
    for i, kind in enumerate(kinds):
        if p[start + (i >> 3)] & (1 << (i & 7)):
            out[names[i]] = None
            continue
        if kind == K_BYTES or kind == K_TEXT:
            n = shift = 0
            for j in range(5):
                if pos >= end:
                    _rv_fail(state, RV_VARINT_TRUNCATED, i, pos, 0, TRUNCATED)
                b = p[pos]
                pos += 1
                if j == 4 and b & 0xF0:
                    _rv_fail(state, RV_VARINT_OVERLONG, i, pos - 1, 0, OVERLONG)
                n |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
                shift += 7
            if n > 0x7FFFFFFF or n > end - pos:
                _rv_fail(state, RV_LENGTH, i, pos, n, BAD_LENGTH)
            v = bytes(p[pos:pos + n])
            if kind == K_TEXT:
                try:
                    v = v.decode("utf-8")
                except UnicodeDecodeError:
                    _rv_fail(state, RV_UTF8, i, pos, 0, INVALID_UTF8)
            pos += n
        elif kind in _RV_FIXED:
            st = _RV_FIXED[kind]
            if st.size > end - pos:
                _rv_fail(state, RV_TRUNCATED, i, pos, 0, TRUNCATED)
            v = _f32(p, pos) if kind == K_F32 else st.unpack_from(p, pos)[0]
            pos += st.size
        elif kind == K_I8 or kind == K_BOOL:
            if pos >= end:
                _rv_fail(state, RV_TRUNCATED, i, pos, 0, TRUNCATED)
            b = p[pos]
            if kind == K_BOOL:
                if b > 1:
                    _rv_fail(state, RV_BOOL, i, pos, b, BAD_VALUE)
                v = b == 1
            else:
                v = b - 256 if b > 127 else b
            pos += 1
        else:
            _rv_fail(state, RV_ARGS, i, 0, kind, BAD_VALUE)
        out[names[i]] = v
    return 0
