"""Pure-Python twin of ``paimon_engine/_kernels/bitmap.pyx`` (NumPy-vectorised)."""

import numpy as np

from .status import BAD_LENGTH, BAD_VALUE, OUT_OF_RANGE, TRUNCATED


def _bits(bits, bit_offset, count, msb_first):
    raw = np.frombuffer(bits, dtype=np.uint8)
    first = bit_offset >> 3
    last = (bit_offset + count + 7) >> 3
    unpacked = np.unpackbits(raw[first:last], bitorder="big" if msb_first else "little")
    start = bit_offset & 7
    return unpacked[start:start + count]


def unpack_bits(bits, bit_offset, count, msb_first, invert, out):
    if count < 0 or bit_offset < 0 or len(out) < count:
        return BAD_LENGTH
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > len(bits):
        return BAD_LENGTH
    v = _bits(bits, bit_offset, count, msb_first)
    if invert:
        v = v ^ 1
    np.asarray(out)[:count] = v
    return int(v.sum())


def pack_bits(flags, msb_first, invert, out):
    f = np.frombuffer(flags, dtype=np.uint8) != 0
    n = len(f)
    nbytes = (n + 7) // 8
    if len(out) < nbytes:
        return BAD_LENGTH
    if invert:
        f = ~f
    packed = np.packbits(f, bitorder="big" if msb_first else "little")
    np.asarray(out)[:nbytes] = packed
    return int(f.sum())


def count_bits(bits, bit_offset, count, msb_first):
    if count < 0 or bit_offset < 0:
        return BAD_LENGTH
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > len(bits):
        return BAD_LENGTH
    return int(_bits(bits, bit_offset, count, msb_first).sum())


def nulls_to_validity(null_bits, bit_offset, count, msb_first, validity):
    nbytes = (count + 7) // 8
    if count < 0 or bit_offset < 0 or len(validity) < nbytes:
        return BAD_LENGTH
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > len(null_bits):
        return BAD_LENGTH
    nulls = _bits(null_bits, bit_offset, count, msb_first)
    np.asarray(validity)[:nbytes] = np.packbits(nulls ^ 1, bitorder="little")
    return int(nulls.sum())


# -- portable Roaring32 (see the compiled kernel's comments for the layout)

_R_NO_RUN = 12346
_R_RUN = 12347


def _roaring_header(b, pos):
    """(first container, count, run flags or None, key/cardinality pairs) or (status, fault offset)."""
    n = len(b)
    if n - pos < 4:
        return TRUNCATED, pos
    cookie = int.from_bytes(b[pos:pos + 4], "little")
    pos += 4
    if cookie & 0xFFFF == _R_RUN:
        size = (cookie >> 16) + 1
        if n - pos < (size + 7) // 8:
            return TRUNCATED, pos
        runs = bytes(b[pos:pos + (size + 7) // 8])
        pos += (size + 7) // 8
    elif cookie == _R_NO_RUN:
        if n - pos < 4:
            return TRUNCATED, pos
        size = int.from_bytes(b[pos:pos + 4], "little", signed=True)
        if size < 0 or size > 65536:
            return BAD_LENGTH, pos
        runs = None
        pos += 4
    else:
        return BAD_VALUE, pos - 4
    keys = pos
    if n - pos < 4 * size:
        return TRUNCATED, pos
    pos += 4 * size
    if runs is None or size >= 4:
        if n - pos < 4 * size:
            return TRUNCATED, pos
        pos += 4 * size
    pairs = np.frombuffer(bytes(b[keys:keys + 4 * size]), dtype="<u2").reshape(-1, 2).astype(np.int64)
    return pos, size, runs, pairs, keys


def _containers(b, pos, size, runs, pairs):
    """(kind, key, cardinality, start, end) of each container: kind 'run', 'bitmap' or 'array'; stops at a
    truncated one with ('truncated', ..., its offset)."""
    n = len(b)
    for i in range(size):
        key, card = int(pairs[i, 0]), int(pairs[i, 1]) + 1
        if runs is not None and (runs[i >> 3] >> (i & 7)) & 1:
            if n - pos < 2:
                yield "truncated", key, card, pos, pos
                return
            nruns = int.from_bytes(b[pos:pos + 2], "little")
            if n - pos - 2 < 4 * nruns:
                yield "truncated", key, card, pos, pos
                return
            yield "run", key, card, pos + 2, pos + 2 + 4 * nruns
            pos += 2 + 4 * nruns
        elif card > 4096:
            if n - pos < 8192:
                yield "truncated", key, card, pos, pos
                return
            yield "bitmap", key, card, pos, pos + 8192
            pos += 8192
        else:
            if n - pos < 2 * card:
                yield "truncated", key, card, pos, pos
                return
            yield "array", key, card, pos, pos + 2 * card
            pos += 2 * card


def roaring_walk(buf, offset, check, out):
    b = memoryview(buf).cast("B")
    if len(out) < 2:
        return BAD_LENGTH
    out[0] = 0
    out[1] = offset
    if offset < 0 or offset > len(b):
        return TRUNCATED
    head = _roaring_header(b, offset)
    if len(head) == 2:
        out[1] = head[1]
        return head[0]
    pos, size, runs, pairs, keys = head
    total = 0
    end = pos
    for i, (kind, key, card, start, end) in enumerate(_containers(b, pos, size, runs, pairs)):
        if i and key <= int(pairs[i - 1, 0]):
            out[1] = keys + 4 * i
            return OUT_OF_RANGE
        head_at = start - 2 if kind == "run" else start
        if kind == "truncated":
            out[1] = start
            return TRUNCATED
        if check:
            raw = bytes(b[start:end])
            if kind == "run":
                r = np.frombuffer(raw, dtype="<u2").reshape(-1, 2).astype(np.int64)
                ok = bool(np.all(r[:, 0] + r[:, 1] <= 65535)) and int((r[:, 1] + 1).sum()) == card and (
                    len(r) < 2 or bool(np.all(r[1:, 0] > r[:-1, 0] + r[:-1, 1] + 1)))
            elif kind == "bitmap":
                ok = int(np.unpackbits(np.frombuffer(raw, dtype=np.uint8)).sum()) == card
            else:
                v = np.frombuffer(raw, dtype="<u2")
                ok = bool(np.all(v[1:] > v[:-1]))
            if not ok:
                out[1] = head_at
                return BAD_VALUE
        total += card
    out[0] = total
    return end


def _values(b, kind, key, start, end):
    raw = bytes(b[start:end])
    base = key << 16
    if kind == "run":
        r = np.frombuffer(raw, dtype="<u2").reshape(-1, 2).astype(np.int64)
        if not len(r):
            return np.zeros(0, np.int64)
        return np.concatenate([np.arange(base + s, base + s + ln + 1) for s, ln in r.tolist()])
    if kind == "bitmap":
        return base + np.flatnonzero(np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little"))
    return base + np.frombuffer(raw, dtype="<u2").astype(np.int64)


def roaring_clear(buf, offset, lo, mask):
    b = memoryview(buf).cast("B")
    if lo < 0:
        return BAD_VALUE
    if offset < 0 or offset > len(b):
        return TRUNCATED
    head = _roaring_header(b, offset)
    if len(head) == 2:
        return head[0]
    pos, size, runs, pairs, _ = head
    m = np.asarray(mask)
    hits = 0
    for kind, key, card, start, end in _containers(b, pos, size, runs, pairs):
        if kind == "truncated":
            return TRUNCATED
        v = _values(b, kind, key, start, end) - lo
        v = v[(v >= 0) & (v < len(m))]
        m[v] = 0
        hits += len(v)
    return hits


def vector_paths(enabled=None):
    return False
