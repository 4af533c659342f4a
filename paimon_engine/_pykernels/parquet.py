"""Pure-Python twin of ``_kernels/parquet.pyx``: Parquet page headers, definition levels, dictionary indices and
page values into Arrow-layout buffers. Same names, arguments, results and statuses as the kernel."""

from __future__ import annotations

import numpy as np

from .status import BAD_LENGTH, BAD_VALUE, OUT_OF_RANGE, OVERLONG, TRUNCATED

#: the slots ``page_header`` fills, in order
HEADER_FIELDS = ("type", "uncompressed_size", "compressed_size", "num_values", "encoding", "def_encoding",
                 "rep_encoding", "num_nulls", "num_rows", "def_length", "rep_length", "compressed")
H_TYPE, H_USIZE, H_CSIZE, H_NUM_VALUES, H_ENCODING, H_DEF_ENCODING, H_REP_ENCODING, H_NUM_NULLS, H_NUM_ROWS, \
    H_DEF_LENGTH, H_REP_LENGTH, H_COMPRESSED = range(12)
_MAX_DEPTH = 64
_INT32_MAX = 2**31 - 1


class _Fail(Exception):
    def __init__(self, code):
        self.code = code


class _Reader:
    __slots__ = ("b", "end", "pos")

    def __init__(self, b, pos, end):
        self.b, self.pos, self.end = b, pos, end

    def byte(self):
        if self.pos >= self.end:
            raise _Fail(TRUNCATED)
        v = int(self.b[self.pos])
        self.pos += 1
        return v

    def varint(self):
        r = shift = 0
        while True:
            c = self.byte()
            if shift == 63 and c & 0x7E:
                raise _Fail(OVERLONG)
            r |= (c & 0x7F) << shift
            if not c & 0x80:
                return r
            shift += 7
            if shift > 63:
                raise _Fail(OVERLONG)

    def zigzag(self):
        u = self.varint()
        return (u >> 1) ^ -(u & 1)

    def i32(self):
        v = self.zigzag()
        if not -2**31 <= v < 2**31:
            raise _Fail(OUT_OF_RANGE)
        return v

    def skip_bytes(self, n):
        if n > self.end - self.pos:
            raise _Fail(TRUNCATED)
        self.pos += n

    def field(self, fid):
        """-> (type, field id); type 0 ends the struct."""
        h = self.byte()
        if h == 0:
            return 0, fid
        if h >> 4:
            return h & 0x0F, fid + (h >> 4)
        v = self.zigzag()
        if not -32768 <= v <= 32767:
            raise _Fail(OUT_OF_RANGE)
        return h & 0x0F, v

    def skip(self, t, depth):
        if depth > _MAX_DEPTH:
            raise _Fail(BAD_VALUE)
        if t in (1, 2):
            return
        if t == 3:
            self.skip_bytes(1)
        elif t in (4, 5, 6):
            self.varint()
        elif t == 7:
            self.skip_bytes(8)
        elif t == 8:
            self.skip_bytes(self.varint())
        elif t in (9, 10):
            h = self.byte()
            size, et = h >> 4, h & 0x0F
            if size == 15:
                size = self.varint()
                if size > self.end - self.pos:
                    raise _Fail(TRUNCATED)
            if et in (1, 2):
                self.skip_bytes(size)
                return
            for _ in range(size):
                self.skip(et, depth + 1)
        elif t == 11:
            size = self.varint()
            if size == 0:
                return
            if size > self.end - self.pos:
                raise _Fail(TRUNCATED)
            h = self.byte()
            kt, vt = h >> 4, h & 0x0F
            for _ in range(size):
                self.skip(3 if kt in (1, 2) else kt, depth + 1)
                self.skip(3 if vt in (1, 2) else vt, depth + 1)
        elif t == 12:
            fid = 0
            while True:
                et, fid = self.field(fid)
                if et == 0:
                    return
                self.skip(et, depth + 1)
        else:
            raise _Fail(BAD_VALUE)


_DATA_SLOTS = {1: H_NUM_VALUES, 2: H_ENCODING, 3: H_DEF_ENCODING, 4: H_REP_ENCODING}
_DICT_SLOTS = {1: H_NUM_VALUES, 2: H_ENCODING}
_V2_SLOTS = {1: H_NUM_VALUES, 2: H_NUM_NULLS, 3: H_NUM_ROWS, 4: H_ENCODING, 5: H_DEF_LENGTH, 6: H_REP_LENGTH}


def _sub_header(r, kind, out):
    slots = {5: _DATA_SLOTS, 7: _DICT_SLOTS, 8: _V2_SLOTS}[kind]
    fid = 0
    while True:
        t, fid = r.field(fid)
        if t == 0:
            return
        slot = slots.get(fid) if t == 5 else None
        if slot is not None:
            out[slot] = r.i32()
        elif kind == 8 and fid == 7 and t in (1, 2):
            out[H_COMPRESSED] = 1 if t == 1 else 0
        else:
            r.skip(t, 1)


def page_header(buf, pos, end, out):
    if len(out) < 12 or pos < 0 or end > len(buf) or pos > end:
        return BAD_LENGTH
    for i in range(12):
        out[i] = -1
    out[H_COMPRESSED] = 1
    if end == pos:
        return TRUNCATED
    r = _Reader(buf, pos, end)
    try:
        fid = 0
        while True:
            t, fid = r.field(fid)
            if t == 0:
                return r.pos
            if t == 5 and 1 <= fid <= 3:
                out[(H_TYPE, H_USIZE, H_CSIZE)[fid - 1]] = r.i32()
            elif t == 12 and fid in (5, 7, 8):
                _sub_header(r, fid, out)
            else:
                r.skip(t, 1)
    except _Fail as f:
        return f.code


def _runs(buf, pos, end, w, n, r=None):
    """Yield (values, count) runs of the hybrid until ``n`` values: ``values`` is an int for a repeated run, or a
    list for a bit-packed one; the last run is cut to ``n``. Ends with the position after the last run read.
    ``r``: a reader at ``pos`` to walk with, whose position is after each run as it is yielded."""
    r = _Reader(buf, pos, end) if r is None else r
    done = 0
    mask = (1 << w) - 1
    while done < n:
        h = r.varint()
        if h & 1:
            groups = h >> 1
            if w > 0 and groups > end - r.pos:
                raise _Fail(TRUNCATED)
            if groups > 1 << 40:
                raise _Fail(BAD_LENGTH)
            nbytes = groups * w
            if nbytes > end - r.pos:
                raise _Fail(TRUNCATED)
            take = min(groups * 8, n - done)
            word = int.from_bytes(bytes(buf[r.pos:r.pos + nbytes]), "little")
            r.pos += nbytes
            yield [(word >> (k * w)) & mask for k in range(take)], take
        else:
            count = h >> 1
            if count > 1 << 40:
                raise _Fail(BAD_LENGTH)
            vb = (w + 7) >> 3
            if vb > end - r.pos:
                raise _Fail(TRUNCATED)
            value = int.from_bytes(bytes(buf[r.pos:r.pos + vb]), "little")
            r.pos += vb
            take = min(count, n - done)
            yield value, take
        done += take
    yield r.pos, -1


def _set_bit(v, i, on):
    if on:
        v[i >> 3] |= 1 << (i & 7)
    else:
        v[i >> 3] &= ~(1 << (i & 7)) & 0xFF


def levels_validity(buf, pos, end, bit_width, max_level, n, validity, bit_offset):
    if not 0 <= bit_width <= 32 or n < 0 or bit_offset < 0 or pos < 0 or end > len(buf) \
            or (n + bit_offset + 7) // 8 > len(validity):
        return BAD_LENGTH
    if n == 0:
        return 0
    if pos >= end:
        return TRUNCATED
    valid = done = 0
    try:
        for values, take in _runs(buf, pos, end, bit_width, n):
            if take < 0:
                break
            for k in range(take):
                lv = values if isinstance(values, int) else values[k]
                if lv > max_level:
                    return BAD_VALUE
                _set_bit(validity, bit_offset + done + k, lv == max_level)
                valid += lv == max_level
            done += take
    except _Fail as f:
        return f.code
    return valid


def _bit_width(buf, pos, end):
    """The bit width byte (at most 32) at ``pos`` that starts the indices of a dictionary-encoded page, or a
    negative status."""
    if pos >= end:
        return TRUNCATED
    w = int(buf[pos])
    return BAD_VALUE if w > 32 else w


def dictionary_indices(buf, pos, end, n, dict_size, out, out_pos):
    if n < 0 or pos < 0 or end > len(buf) or out_pos < 0 or out_pos > len(out) or n > len(out) - out_pos \
            or dict_size < 0:
        return BAD_LENGTH
    if n == 0:
        return pos
    w = _bit_width(buf, pos, end)
    if w < 0:
        return w
    done = 0
    try:
        for values, take in _runs(buf, pos + 1, end, w, n):
            if take < 0:
                return values
            for k in range(take):
                x = values if isinstance(values, int) else values[k]
                if x >= dict_size:
                    return OUT_OF_RANGE
                out[out_pos + done + k] = x
            done += take
    except _Fail as f:
        return f.code


def dictionary_indices_at(buf, pos, end, n, dict_size, rows, out):
    m = len(rows)
    if n < 0 or pos < 0 or end > len(buf) or dict_size < 0 or len(out) < m:
        return BAD_LENGTH
    if m == 0:
        return pos
    w = _bit_width(buf, pos, end)
    if w < 0:
        return w
    done = j = last = 0
    reader = _Reader(buf, pos + 1, end)
    runs = _runs(buf, pos + 1, end, w, n, reader)
    try:
        while j < m and done < n:
            values, take = next(runs)
            while j < m and rows[j] < done + take:
                if rows[j] < last:
                    return BAD_LENGTH
                last = int(rows[j])
                x = values if isinstance(values, int) else values[last - done]
                if x >= dict_size:
                    return OUT_OF_RANGE
                out[j] = x
                j += 1
            done += take
    except _Fail as f:
        return f.code
    if j < m:
        return BAD_LENGTH
    return reader.pos


def gather_fixed(dictionary, width, indices, start, n, out, out_pos):
    if width <= 0 or n < 0 or start < 0 or n > len(indices) - start or out_pos < 0 \
            or (out_pos + n) * width > len(out):
        return BAD_LENGTH
    ndict = len(dictionary) // width
    for i in range(n):
        x = int(indices[start + i])
        if not 0 <= x < ndict:
            return OUT_OF_RANGE
        o = (out_pos + i) * width
        out[o:o + width] = dictionary[x * width:(x + 1) * width]
    return n


def _valid(validity, b):
    return (validity[b >> 3] >> (b & 7)) & 1


def expand_fixed(dense, width, validity, bit_offset, n, out, out_pos):
    if width <= 0 or n < 0 or bit_offset < 0 or out_pos < 0 or (out_pos + n) * width > len(out) \
            or (bit_offset + n + 7) // 8 > len(validity):
        return BAD_LENGTH
    have = len(dense) // width
    j = 0
    for i in range(n):
        o = (out_pos + i) * width
        if _valid(validity, bit_offset + i):
            if j >= have:
                return BAD_LENGTH
            out[o:o + width] = dense[j * width:(j + 1) * width]
            j += 1
        else:
            out[o:o + width] = 0
    return j


def plain_byte_array(buf, pos, end, n, validity, bit_offset, offsets, row, data):
    all_valid = len(validity) == 0
    if n < 0 or pos < 0 or end > len(buf) or row < 0 or row + 1 + n > len(offsets) or bit_offset < 0 \
            or (not all_valid and (bit_offset + n + 7) // 8 > len(validity)):
        return BAD_LENGTH
    d = int(offsets[row])
    room = len(data)
    if not 0 <= d <= room:
        return BAD_LENGTH
    for i in range(n):
        if not all_valid and not _valid(validity, bit_offset + i):
            offsets[row + 1 + i] = d
            continue
        if end - pos < 4:
            return TRUNCATED
        ln = int.from_bytes(bytes(buf[pos:pos + 4]), "little")
        pos += 4
        if ln > end - pos:
            return TRUNCATED
        if ln > room - d:
            return BAD_LENGTH
        if d + ln > _INT32_MAX:
            return OUT_OF_RANGE
        data[d:d + ln] = np.frombuffer(buf, np.uint8, ln, pos)
        pos += ln
        d += ln
        offsets[row + 1 + i] = d
    return pos


def dictionary_bytes(dict_offsets, indices, start, n):
    ndict = len(dict_offsets) - 1
    if n < 0 or start < 0 or n > len(indices) - start or ndict < 0:
        return BAD_LENGTH
    total = 0
    for i in range(n):
        x = int(indices[start + i])
        if not 0 <= x < ndict:
            return OUT_OF_RANGE
        total += int(dict_offsets[x + 1]) - int(dict_offsets[x])
    return total


def gather_byte_array(dict_offsets, dict_data, indices, start, n, validity, bit_offset, offsets, row, data):
    all_valid = len(validity) == 0
    ndict = len(dict_offsets) - 1
    if n < 0 or start < 0 or row < 0 or row + 1 + n > len(offsets) or bit_offset < 0 or ndict < 0 \
            or (not all_valid and (bit_offset + n + 7) // 8 > len(validity)):
        return BAD_LENGTH
    d = int(offsets[row])
    room, dlen = len(data), len(dict_data)
    if not 0 <= d <= room:
        return BAD_LENGTH
    j = start
    for i in range(n):
        if not all_valid and not _valid(validity, bit_offset + i):
            offsets[row + 1 + i] = d
            continue
        if j >= len(indices):
            return BAD_LENGTH
        x = int(indices[j])
        j += 1
        if not 0 <= x < ndict:
            return OUT_OF_RANGE
        a, e = int(dict_offsets[x]), int(dict_offsets[x + 1])
        if a < 0 or e < a or e > dlen:
            return OUT_OF_RANGE
        if e - a > room - d:
            return BAD_LENGTH
        if d + (e - a) > _INT32_MAX:
            return OUT_OF_RANGE
        data[d:d + e - a] = np.frombuffer(dict_data, np.uint8, e - a, a)
        d += e - a
        offsets[row + 1 + i] = d
    return j - start


def _flags(keep, n):
    """The keep flags of ``n`` rows (None: every row), or BAD_LENGTH."""
    if keep is None or len(keep) == 0:
        return None
    if n < 0 or len(keep) < n:
        return BAD_LENGTH
    return [bool(x) for x in keep[:n]]


def dictionary_fixed(buf, pos, end, n, dictionary, width, out, out_pos, keep=None):
    kp = _flags(keep, n)
    if isinstance(kp, int):
        return kp
    if width <= 0 or n < 0 or pos < 0 or end > len(buf) or out_pos < 0 \
            or (kp is None and n > len(out) // width - out_pos) \
            or (kp is not None and sum(kp) + 1 > len(out) // width - out_pos):
        return BAD_LENGTH
    if n == 0:
        return pos
    w = _bit_width(buf, pos, end)
    if w < 0:
        return w
    ndict = min(len(dictionary) // width, _INT32_MAX)
    done = j = 0
    try:
        for values, take in _runs(buf, pos + 1, end, w, n):
            if take < 0:
                return values
            for k in range(take):
                x = values if isinstance(values, int) else values[k]
                if x >= ndict:
                    return OUT_OF_RANGE
                if kp is not None and not kp[done + k]:
                    continue
                o = (out_pos + j) * width
                out[o:o + width] = dictionary[x * width:(x + 1) * width]
                j += 1
            done += take
    except _Fail as f:
        return f.code


def dictionary_byte_array(buf, pos, end, n, dict_offsets, dict_data, offsets, row, data, keep=None):
    kp = _flags(keep, n)
    if isinstance(kp, int):
        return kp
    ndict = len(dict_offsets) - 1
    if n < 0 or pos < 0 or end > len(buf) or row < 0 or ndict < 0 \
            or (kp is None and row + 1 + n > len(offsets)) or (kp is not None and row + 2 + sum(kp) > len(offsets)):
        return BAD_LENGTH
    d = int(offsets[row])
    room, dlen = len(data), len(dict_data)
    if not 0 <= d <= room:
        return BAD_LENGTH
    if n == 0:
        return pos
    w = _bit_width(buf, pos, end)
    if w < 0:
        return w
    ndict = min(ndict, _INT32_MAX)
    done = j = 0
    try:
        for values, take in _runs(buf, pos + 1, end, w, n):
            if take < 0:
                return values
            for k in range(take):
                x = values if isinstance(values, int) else values[k]
                if x >= ndict:
                    return OUT_OF_RANGE
                if kp is not None and not kp[done + k]:
                    continue
                a, e = int(dict_offsets[x]), int(dict_offsets[x + 1])
                if a < 0 or e < a or e > dlen:
                    return OUT_OF_RANGE
                if e - a > room - d:
                    return BAD_LENGTH
                if d + (e - a) > _INT32_MAX:
                    return OUT_OF_RANGE
                data[d:d + e - a] = np.frombuffer(dict_data, np.uint8, e - a, a)
                d += e - a
                offsets[row + 1 + j] = d
                j += 1
            done += take
    except _Fail as f:
        return f.code


def count_flags(keep, start, n):
    if start < 0 or n < 0 or n > len(keep) - start:
        return BAD_LENGTH
    return int(np.count_nonzero(np.asarray(keep[start:start + n])))


def vector_paths(enabled=None):
    """The twin has no vector paths: always False."""
    return False


def vector_unpack():
    """The twin unpacks indices one at a time: always False."""
    return False


def keep_fixed(src, width, n, keep, out, out_pos):
    if width <= 0 or n < 0 or out_pos < 0 or len(keep) < n or n > len(src) // width:
        return BAD_LENGTH
    if n == 0:
        return 0
    kept = [i for i in range(n) if keep[i]]
    if len(kept) + 1 > len(out) // width - out_pos:
        return BAD_LENGTH
    for j, i in enumerate(kept):
        out[(out_pos + j) * width:(out_pos + j + 1) * width] = src[i * width:(i + 1) * width]
    return len(kept)


def keep_bits(src, n, keep, out, out_bit):
    if n < 0 or out_bit < 0 or len(keep) < n or (n + 7) // 8 > len(src):
        return BAD_LENGTH
    if n == 0:
        return 0
    if out_bit + sum(1 for i in range(n) if keep[i]) > len(out) * 8:
        return BAD_LENGTH
    o = out_bit
    ones = 0
    for i in range(n):
        if keep[i]:
            on = int(_valid(src, i))
            _set_bit(out, o, on)
            ones += on
            o += 1
    return ones


def keep_byte_array(src_offsets, src_data, n, keep, offsets, row, data):
    if n < 0 or len(keep) < n or len(src_offsets) < n + 1 or row < 0 or row >= len(offsets):
        return BAD_LENGTH
    d = int(offsets[row])
    room, slen = len(data), len(src_data)
    if not 0 <= d <= room:
        return BAD_LENGTH
    if n == 0:
        return 0
    if row + 1 + sum(1 for i in range(n) if keep[i]) > len(offsets):
        return BAD_LENGTH
    j = 0
    for i in range(n):
        if not keep[i]:
            continue
        a, e = int(src_offsets[i]), int(src_offsets[i + 1])
        if a < 0 or e < a or e > slen or e - a > room - d:
            return BAD_LENGTH
        if d + (e - a) > _INT32_MAX:
            return OUT_OF_RANGE
        data[d:d + e - a] = np.frombuffer(src_data, np.uint8, e - a, a) if e > a else data[d:d]
        d += e - a
        offsets[row + 1 + j] = d
        j += 1
    return j


DELTA_MAX_BLOCK = 1 << 24


def delta_binary_packed(buf, pos, end, n, width, out, out_pos):
    if width not in (4, 8) or n < 0 or pos < 0 or end > len(buf) or pos > end or out_pos < 0 \
            or out_pos > len(out) // width or n > len(out) // width - out_pos:
        return BAD_LENGTH
    if pos == end:
        return TRUNCATED
    r = _Reader(buf, pos, end)
    try:
        block, minis, total, first = r.varint(), r.varint(), r.varint(), r.zigzag()
        if block == 0 or block % 128 or block > DELTA_MAX_BLOCK or minis == 0 or block % minis \
                or (block // minis) % 32 or total != n:
            return BAD_VALUE
        if width == 4 and not -2**31 <= first < 2**31:
            return OUT_OF_RANGE
        if n == 0:
            return r.pos
        bits = 8 * width
        mask = (1 << bits) - 1
        vpm = block // minis
        values = [first & mask]
        cur = first
        while len(values) < n:
            mind = r.zigzag()
            if width == 4 and not -2**31 <= mind < 2**31:
                return OUT_OF_RANGE
            if minis > r.end - r.pos:
                return TRUNCATED
            widths = bytes(buf[r.pos:r.pos + minis])
            r.pos += minis
            for bw in widths:
                if len(values) >= n:
                    break
                if bw > bits:
                    return BAD_VALUE
                take = min(vpm, n - len(values))
                need = (take * bw + 7) // 8
                if need > r.end - r.pos:
                    return TRUNCATED
                packed = int.from_bytes(bytes(buf[r.pos:r.pos + need]), "little")
                for i in range(take):
                    cur = (cur + mind + ((packed >> (i * bw)) & ((1 << bw) - 1))) & mask
                    values.append(cur)
                r.pos += min(vpm // 8 * bw, r.end - r.pos)
    except _Fail as f:
        return f.code
    dt = np.uint32 if width == 4 else np.uint64
    out[out_pos * width:(out_pos + n) * width] = np.array(values, dt).view(np.uint8)
    return r.pos
