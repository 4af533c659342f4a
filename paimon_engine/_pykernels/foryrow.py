"""Pure-Python twin of ``paimon_engine/_kernels/foryrow.pyx`` (same names, arguments and results)."""

from __future__ import annotations

import struct

from .status import BAD_LENGTH, BAD_VALUE, INVALID_UTF8, NEED_MORE, OUT_OF_RANGE, TRUNCATED

K_FIXED, K_BOOL, K_BYTES, K_DECIMAL, K_LIST, K_MAP, K_STRUCT = 1, 2, 3, 4, 5, 6, 7
(C_KIND, C_WIDTH, C_SLOT, C_OFF, C_BIT, C_NULLABLE, C_INLINE, C_FIXED, C_BMOFF, C_BMSIZE, C_NCHILD,
 C_CHILD0, C_HDRROUND, C_LARGE, C_UTF8, C_BOUND) = range(16)   # C_BOUND: four columns
NCOLS = 19
INT32_MAX = 2 ** 31 - 1

_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_I32 = struct.Struct("<i")


def _utf8_error(buf, start, size):
    """-1 if ``buf[start:start + size]`` is valid UTF-8, else the index of the first byte of the first bad
    sequence (the position Python's strict decoder reports)."""
    try:
        bytes(buf[start:start + size]).decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start
    return -1


def _round8(n):
    return (n + 7) & ~7


class _Fail(Exception):
    def __init__(self, status, pos, node):
        self.status = status
        self.pos = pos
        self.node = node


class _Node:
    __slots__ = ("index", "kind", "width", "slot", "off", "bit", "nullable", "inline", "fixed", "bmoff",
                 "bmsize", "children", "hdrround", "large", "utf8", "bound", "valid", "aoff", "vals", "offs",
                 "data", "ovalid", "ovals", "ooffs", "odata", "olen", "odlen", "onulls", "ocap", "odcap")


def _load(table, kids):
    nn = table.shape[0]
    if table.shape[1] != NCOLS or nn == 0:
        raise ValueError("bad node table")
    nodes = []
    for i in range(nn):
        row = [int(x) for x in table[i]]
        n = _Node()
        n.index = i
        n.kind, n.width, n.slot, n.off, n.bit = row[C_KIND], row[C_WIDTH], row[C_SLOT], row[C_OFF], row[C_BIT]
        n.nullable, n.inline, n.fixed = row[C_NULLABLE], row[C_INLINE], row[C_FIXED]
        n.bmoff, n.bmsize, n.hdrround, n.large = row[C_BMOFF], row[C_BMSIZE], row[C_HDRROUND], row[C_LARGE]
        n.utf8 = row[C_UTF8]
        n.bound = sum((row[C_BOUND + j] & 0xFFFFFFFFFFFFFFFF) << (64 * j) for j in range(4))
        if n.kind == K_DECIMAL and (n.width not in (16, 32) or not 1 <= n.bound <= 1 << (8 * n.width - 1)):
            raise ValueError("bad node table")
        c0, nc = row[C_CHILD0], row[C_NCHILD]
        if c0 < 0 or c0 + nc > len(kids):
            raise ValueError("bad node table")
        n.children = [int(k) for k in kids[c0:c0 + nc]]
        if any(k < 0 or k >= nn for k in n.children):
            raise ValueError("bad node table")
        n.valid = n.vals = n.offs = n.data = None
        n.aoff = 0
        n.ovalid = n.ovals = n.ooffs = n.odata = None
        n.olen = n.odlen = n.onulls = 0
        n.ocap = n.odcap = 0
        nodes.append(n)
    for n in nodes:
        n.children = [nodes[k] for k in n.children]
    return nodes


def _bit(bits, i):
    return (bits[i >> 3] >> (i & 7)) & 1


def _is_null(n, li):
    return n.valid is not None and not _bit(n.valid, li + n.aoff)


def _aoffset(n, phys):
    return int(n.offs[phys])


class _Codec:
    def __init__(self, nodes, compact):
        self.nodes = nodes
        self.compact = compact
        self.fill = False
        self.buf = b""

    # ---------------------------------------------------------------- encode
    def header(self, e, cnt):
        if not self.compact:
            return 8 + ((cnt + 63) >> 6) * 8
        h = 4 + ((cnt + 7) >> 3 if e.nullable else 0)
        return _round8(h) if e.hdrround else h

    def size_array(self, e, start, cnt):
        size = self.header(e, cnt) + _round8(cnt * e.slot)
        if e.kind in (K_FIXED, K_BOOL) or e.inline:
            return size
        for k in range(cnt):
            if not _is_null(e, start + k):
                size += self.size_body(e, start + k)
        return size

    def size_row(self, n, li):
        size = n.fixed
        for ch in n.children:
            if ch.kind in (K_FIXED, K_BOOL) or ch.inline or _is_null(ch, li):
                continue
            size += self.size_body(ch, li)
        return size

    def size_body(self, n, li):
        phys = li + n.aoff
        if n.kind == K_BYTES:
            return _round8(_aoffset(n, phys + 1) - _aoffset(n, phys))
        if n.kind == K_DECIMAL:
            return 32
        if n.kind == K_STRUCT:
            return self.size_row(n, li)
        a, b = _aoffset(n, phys), _aoffset(n, phys + 1)
        if n.kind == K_LIST:
            return self.size_array(n.children[0], a, b - a)
        ent = n.children[0]
        return 8 + self.size_array(ent.children[0], a, b - a) + self.size_array(ent.children[1], a, b - a)

    def write_inline(self, n, li, out, p):
        self.write_fields(n, li, out, p, 0)

    def write_fields(self, n, li, out, p, cur):
        """The children of struct ``n`` into the zeroed fixed region at ``p``; returns the body cursor."""
        for ch in n.children:
            if _is_null(ch, li):
                if n.bmsize == 0:
                    raise _Fail(BAD_VALUE, 0, ch.index)
                out[p + n.bmoff + (ch.bit >> 3)] |= 1 << (ch.bit & 7)
                continue
            cur = self.write_value(ch, li, out, p, p + ch.off, cur)
        return cur

    def write_value(self, n, li, out, base, slot, cur):
        """Write value; returns the new cursor (relative to base)."""
        phys = li + n.aoff
        if n.kind == K_FIXED:
            w = n.width
            out[slot:slot + w] = bytes(n.vals[phys * w:(phys + 1) * w])
            return cur
        if n.kind == K_BOOL:
            out[slot] = 1 if _bit(n.vals, phys) else 0
            return cur
        if n.inline:
            self.write_inline(n, li, out, slot)
            return cur
        if n.kind == K_BYTES:
            a, b = _aoffset(n, phys), _aoffset(n, phys + 1)
            size = b - a
            out[base + cur:base + cur + size] = bytes(n.data[a:b])
            used = _round8(size)
            out[base + cur + size:base + cur + used] = bytes(used - size)
        elif n.kind == K_DECIMAL:
            w = n.width
            src = bytes(n.vals[phys * w:(phys + 1) * w])
            ext = b"\xff" if src[-1] & 0x80 else b"\x00"
            out[base + cur:base + cur + 32] = src + ext * (32 - w)
            size = used = 32
        else:
            size = self.write_body(n, li, out, base + cur)
            used = size
        _U64.pack_into(out, slot, (cur << 32) | (size & 0xFFFFFFFF))
        return cur + used

    def write_row(self, n, li, out, p):
        out[p:p + n.fixed] = bytes(n.fixed)
        return self.write_fields(n, li, out, p, n.fixed)

    def write_array(self, e, start, cnt, out, p):
        hdr = self.header(e, cnt)
        cur = hdr + _round8(cnt * e.slot)
        out[p:p + cur] = bytes(cur)
        if self.compact:
            _I32.pack_into(out, p, cnt)
            bmpos = 4
        else:
            _U64.pack_into(out, p, cnt)
            bmpos = 8
        for k in range(cnt):
            if _is_null(e, start + k):
                if self.compact and not e.nullable:
                    raise _Fail(BAD_VALUE, 0, e.index)
                out[p + bmpos + (k >> 3)] |= 1 << (k & 7)
                continue
            cur = self.write_value(e, start + k, out, p, p + hdr + k * e.slot, cur)
        return cur

    def write_body(self, n, li, out, p):
        if n.kind == K_STRUCT:
            return self.write_row(n, li, out, p)
        phys = li + n.aoff
        a, b = _aoffset(n, phys), _aoffset(n, phys + 1)
        if n.kind == K_LIST:
            return self.write_array(n.children[0], a, b - a, out, p)
        ent = n.children[0]
        ks = self.write_array(ent.children[0], a, b - a, out, p + 8)
        _U64.pack_into(out, p, ks)
        vs = self.write_array(ent.children[1], a, b - a, out, p + 8 + ks)
        return 8 + ks + vs

    # ---------------------------------------------------------------- decode
    def fail(self, n, pos, status):
        raise _Fail(status, pos, n.index)

    def append_null(self, n):
        i = n.olen
        if self.fill and n.kind in (K_BYTES, K_LIST, K_MAP):
            n.ooffs[i + 1] = n.ooffs[i]
        n.olen += 1
        n.onulls += 1
        if n.kind == K_STRUCT:
            for ch in n.children:
                self.append_null(ch)

    def set_valid(self, n):
        if self.fill:
            n.ovalid[n.olen >> 3] |= 1 << (n.olen & 7)

    def push_offset(self, n, count):
        if self.fill:
            n.ooffs[n.olen + 1] = n.ooffs[n.olen] + count

    def decode_array(self, e, ab, ae, keys=False):
        buf = self.buf
        avail = ae - ab
        if self.compact:
            if avail < 4:
                self.fail(e, ab, TRUNCATED)
            cnt = _I32.unpack_from(buf, ab)[0]
            bmpos = 4
        else:
            if avail < 8:
                self.fail(e, ab, TRUNCATED)
            cnt = _I64.unpack_from(buf, ab)[0]
            bmpos = 8
        if cnt < 0 or cnt > INT32_MAX:
            self.fail(e, ab, BAD_LENGTH)
        if cnt * e.slot > avail:
            self.fail(e, ab, BAD_LENGTH)
        if cnt > avail * 8:
            self.fail(e, ab, BAD_LENGTH)
        hdr = self.header(e, cnt)
        if hdr + cnt * e.slot > avail:
            self.fail(e, ab, TRUNCATED)
        if self.fill and cnt > e.ocap - e.olen:
            self.fail(e, ab, NEED_MORE)
        for k in range(cnt):
            if (not self.compact or e.nullable) and (buf[ab + bmpos + (k >> 3)] >> (k & 7)) & 1:
                if keys:
                    self.fail(e, ab + bmpos + (k >> 3), BAD_VALUE)
                self.append_null(e)
                continue
            self.decode_value(e, ab + hdr + k * e.slot, ab, ae)
        return cnt

    def decode_row(self, n, rb, re, sel):
        if re - rb < n.fixed:
            self.fail(n, rb, TRUNCATED)
        self.decode_fields(n, rb, rb, re, sel)

    def decode_inline(self, n, p, cb, ce):
        self.decode_fields(n, p, cb, ce, None)

    def decode_fields(self, n, p, cb, ce, sel):
        """The children of struct ``n`` whose fixed region (checked by the caller) starts at ``p``."""
        buf = self.buf
        for k, ch in enumerate(n.children):
            if sel is not None and not sel[k]:
                continue
            if n.bmsize and (buf[p + n.bmoff + (ch.bit >> 3)] >> (ch.bit & 7)) & 1:
                self.append_null(ch)
                continue
            self.decode_value(ch, p + ch.off, cb, ce)

    def decode_value(self, n, slot, cb, ce):
        buf = self.buf
        if n.kind == K_FIXED:
            if self.fill:
                w = n.width
                n.ovals[n.olen * w:(n.olen + 1) * w] = buf[slot:slot + w]
            self.set_valid(n)
            n.olen += 1
            return
        if n.kind == K_BOOL:
            if self.fill and buf[slot]:
                n.ovals[n.olen >> 3] |= 1 << (n.olen & 7)
            self.set_valid(n)
            n.olen += 1
            return
        if n.inline:
            self.decode_inline(n, slot, cb, ce)
            self.set_valid(n)
            n.olen += 1
            return
        v = _U64.unpack_from(buf, slot)[0]
        rel, size = v >> 32, v & 0xFFFFFFFF
        vb = cb + rel
        if rel > ce - cb or size > ce - vb:
            self.fail(n, slot, OUT_OF_RANGE)
        if n.kind == K_BYTES:
            if n.utf8:
                bad = _utf8_error(buf, vb, size)
                if bad >= 0:
                    self.fail(n, vb + bad, INVALID_UTF8)
            if self.fill:
                if size > n.odcap - n.odlen:
                    self.fail(n, slot, NEED_MORE)
                n.odata[n.odlen:n.odlen + size] = buf[vb:vb + size]
            n.odlen += size
            self.push_offset(n, size)
        elif n.kind == K_DECIMAL:
            if size != 32:
                self.fail(n, slot, BAD_LENGTH)
            src = buf[vb:vb + 32]
            w = n.width
            ext = 0xFF if src[w - 1] & 0x80 else 0
            if any(b != ext for b in src[w:32]):
                self.fail(n, vb, OUT_OF_RANGE)
            if not -n.bound < int.from_bytes(src[:w], "little", signed=True) < n.bound:
                self.fail(n, vb, OUT_OF_RANGE)
            if self.fill:
                n.ovals[n.olen * w:(n.olen + 1) * w] = src[:w]
        elif n.kind == K_STRUCT:
            self.decode_row(n, vb, vb + size, None)
        elif n.kind == K_LIST:
            cnt = self.decode_array(n.children[0], vb, vb + size)
            self.push_offset(n, cnt)
        else:
            ent = n.children[0]
            if size < 8:
                self.fail(n, vb, TRUNCATED)
            ks = _I64.unpack_from(buf, vb)[0]
            if ks < 0 or ks > size - 8:
                self.fail(n, vb, BAD_LENGTH)
            kc = self.decode_array(ent.children[0], vb + 8, vb + 8 + ks, keys=True)
            vc = self.decode_array(ent.children[1], vb + 8 + ks, vb + size)
            if kc != vc:
                self.fail(n, vb, BAD_VALUE)
            if self.fill and kc > ent.ocap - ent.olen:
                self.fail(n, vb, NEED_MORE)
            if self.fill:
                for j in range(kc):
                    ent.ovalid[(ent.olen + j) >> 3] |= 1 << ((ent.olen + j) & 7)
            ent.olen += kc
            self.push_offset(n, kc)
        self.set_valid(n)
        n.olen += 1


def _u8(a):
    return None if a is None else a.view("uint8")


def _mv(a):
    return None if a is None else memoryview(a.view("uint8")).cast("B")


def _load_inputs(nodes, inputs):
    for n, t in zip(nodes, inputs):
        if t is None:
            continue
        n.valid = _u8(t[0])
        n.aoff = int(t[1])
        n.vals = _u8(t[2])
        n.offs = t[3]
        n.data = _u8(t[4])


def measure_rows(table, kids, inputs, start, stop, compact, sizes, running=False):
    """See the compiled kernel."""
    if len(inputs) != table.shape[0] or start < 0 or stop < start or sizes.shape[0] < stop + 1:
        return BAD_LENGTH
    nodes = _load(table, kids)
    _load_inputs(nodes, inputs)
    codec = _Codec(nodes, bool(compact))
    total = 0
    for r in range(start, stop):
        size = codec.size_row(nodes[0], r)
        total += size
        sizes[r + 1] = total if running else size
    return total


def encode_rows(table, kids, inputs, nrows, compact, out, offsets, state, sized=False, zeroed=False):
    """See the compiled kernel (``zeroed`` only lets it skip zeroing: every byte is written here)."""
    nn = table.shape[0]
    if len(inputs) != nn or state.shape[0] < 4 or offsets.shape[0] < nrows + 1:
        return BAD_LENGTH
    nodes = _load(table, kids)
    _load_inputs(nodes, inputs)
    codec = _Codec(nodes, bool(compact))
    start, pos = int(state[0]), int(state[1])
    cap = out.shape[0]
    view = out.data.cast("B") if cap else bytearray()
    written = 0
    root = nodes[0]
    for r in range(start, nrows):
        size = int(offsets[r + 1] - offsets[r]) if sized else codec.size_row(root, r)
        if size > cap - pos:
            break
        scratch = bytearray(size)
        try:
            written_size = codec.write_row(root, r, scratch, 0)
        except _Fail as f:
            state[2] = r
            state[3] = f.node
            return f.status
        if written_size != size:
            state[2] = r
            state[3] = 0
            return BAD_LENGTH
        view[pos:pos + size] = scratch
        pos += size
        offsets[r + 1] = pos
        written += 1
    state[0] = start + written
    state[1] = pos
    return written


def decode_rows(table, kids, buf, offsets, nrows, select, compact, outputs, counts, state):
    """See the compiled kernel."""
    nn = table.shape[0]
    if table.shape[1] != NCOLS or nn == 0:
        raise ValueError("bad node table")
    if state.shape[0] < 3 or offsets.shape[0] < nrows + 1 or counts.shape[0] != nn or counts.shape[1] < 3:
        return BAD_LENGTH
    if select.shape[0] != table[0, C_NCHILD]:
        return BAD_LENGTH
    if outputs is not None and len(outputs) != nn:
        return BAD_LENGTH
    nodes = _load(table, kids)
    codec = _Codec(nodes, bool(compact))
    codec.fill = outputs is not None
    codec.buf = bytes(buf)
    if codec.fill:
        for n, t in zip(nodes, outputs):
            if t is None:
                continue
            n.ovalid = _mv(t[0])
            n.ovals = _mv(t[1])
            n.ooffs = t[2]
            n.odata = _mv(t[3])
            n.ocap = int(t[4])
            n.odcap = int(t[5])
    blen = len(codec.buf)
    sel = [int(x) for x in select]
    if not codec.fill:
        # the counting pass need not visit top-level fixed-width fields: they hold one value per row
        for i, ch in enumerate(nodes[0].children):
            if sel[i] and ch.kind in (K_FIXED, K_BOOL):
                sel[i] = 0
                ch.olen = nrows
    for r in range(nrows):
        rb, re = int(offsets[r]), int(offsets[r + 1])
        if rb < 0 or re < rb or re > blen:
            state[0], state[1], state[2] = r, (rb if 0 <= rb <= blen else 0), 0
            return BAD_LENGTH
        try:
            codec.decode_row(nodes[0], rb, re, sel)
        except _Fail as f:
            state[0], state[1], state[2] = r, f.pos, f.node
            return f.status
    for n in nodes:
        counts[n.index, 0] = n.olen
        counts[n.index, 1] = n.odlen
        counts[n.index, 2] = n.onulls
    return 0
