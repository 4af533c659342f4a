"""Pure-Python twin of ``_kernels/deletes.pyx`` (same functions, same results)."""

import numpy as np

M64 = (1 << 64) - 1
K1 = np.uint64(0x9E3779B97F4A7C15)
K2 = np.uint64(0x632BE59BD9B4E019)
NULL_HASH = np.uint64(0x5BD1E9955BD1E995)
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def _mix(x):
    x = np.asarray(x, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def _combine(h, v):
    h = np.asarray(h, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return _mix(h ^ (v * K1 + K2 + (h << np.uint64(6)) + (h >> np.uint64(2))))


def mask_positions(positions, start, count, keep):
    positions = np.asarray(positions, dtype=np.int64)
    keep = np.asarray(keep)
    if count < 0 or keep.shape[0] < count:
        return -4
    if positions.shape[0] == 0 or count == 0:
        return 0
    lo = int(np.searchsorted(positions, start, side="left"))
    hi = lo
    n = positions.shape[0]
    # walk like the kernel: stop at the first position >= start + count
    stop = start + count
    tail = positions[lo:]
    over = np.nonzero(tail >= stop)[0]
    hi = lo + (int(over[0]) if over.size else n - lo)
    sel = positions[lo:hi]
    sel = sel[sel >= start] - start
    if sel.size == 0:
        return 0
    idx = np.unique(sel)
    cleared = int(np.count_nonzero(keep[idx]))
    keep[idx] = 0
    return cleared


def merge_sorted_unique(a, b, out):
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if out.shape[0] < a.shape[0] + b.shape[0]:
        return -4
    merged = np.union1d(a, b)
    out[:merged.shape[0]] = merged
    return int(merged.shape[0])


def is_sorted(values, strict=False):
    values = np.asarray(values, dtype=np.int64)
    if values.shape[0] < 2:
        return 1
    return int(bool(np.all(values[1:] > values[:-1]) if strict else np.all(values[1:] >= values[:-1])))


def hash_int64(values, valid, hashes, combine):
    values = np.asarray(values, dtype=np.int64)
    valid = np.asarray(valid, dtype=np.uint8)
    n = values.shape[0]
    has_valid = valid.shape[0] > 0
    if hashes.shape[0] < n or (has_valid and valid.shape[0] < n):
        return -4
    h = _mix(values.view(np.uint64))
    if has_valid:
        h[valid[:n] == 0] = NULL_HASH
    hashes[:n] = _combine(hashes[:n], h) if combine else h
    return n


def hash_binary(offsets, data, valid, hashes, combine):
    offsets = np.asarray(offsets, dtype=np.int64)
    data = bytes(data)
    valid = np.asarray(valid, dtype=np.uint8)
    n = offsets.shape[0] - 1
    if n < 0:
        return 0
    has_valid = valid.shape[0] > 0
    if hashes.shape[0] < n or (has_valid and valid.shape[0] < n):
        return -4
    a = offsets[:-1]
    b = offsets[1:]
    if n and (np.any(a < 0) or np.any(b < a) or np.any(b > len(data))):
        return -5
    raw = np.empty(n, dtype=np.uint64)
    k1 = int(K1)
    for i in range(n):
        lo, hi = int(a[i]), int(b[i])
        h = FNV_OFFSET ^ (hi - lo)
        for j in range(lo, hi, 8):
            w = int.from_bytes(data[j:min(j + 8, hi)], "little")
            x = h ^ w
            h = ((((x << 29) | (x >> 35)) & M64) * k1) & M64
        raw[i] = h
    h = _mix(raw)
    if has_valid:
        h[valid[:n] == 0] = NULL_HASH
    hashes[:n] = _combine(hashes[:n], h) if combine else h
    return n


def build_hash_table(hashes, slots):
    hashes = np.asarray(hashes, dtype=np.uint64)
    n = hashes.shape[0]
    m = slots.shape[0]
    if m <= n or (m & (m - 1)) != 0:
        return -4
    mask = m - 1
    distinct = 0
    hl = hashes.tolist()
    for i in range(n):
        h = hl[i]
        s = h & mask
        steps = 0
        while True:
            if steps >= m:
                return -5
            steps += 1
            r = int(slots[s])
            if r < 0:
                slots[s] = i
                distinct += 1
                break
            if r < n and hl[r] == h:
                break
            s = (s + 1) & mask
    return distinct


def build_filter(hashes, bits):
    hashes = np.asarray(hashes, dtype=np.uint64)
    nb = bits.shape[0]
    nbits = nb * 8
    if nb == 0 or (nbits & (nbits - 1)) != 0:
        return -4
    idx = (hashes >> np.uint64(32)) & np.uint64(nbits - 1)
    np.bitwise_or.at(bits, (idx >> np.uint64(3)).astype(np.int64),
                     (np.uint8(1) << (idx & np.uint64(7)).astype(np.uint8)).astype(np.uint8))
    return int(hashes.shape[0])


def probe_hash_table(build_hashes, slots, probe_hashes, out, bits):
    build_hashes = np.asarray(build_hashes, dtype=np.uint64)
    probe_hashes = np.asarray(probe_hashes, dtype=np.uint64)
    n = probe_hashes.shape[0]
    m = slots.shape[0]
    nbits = bits.shape[0] * 8
    if out.shape[0] < n or m == 0 or (m & (m - 1)) != 0:
        return -4
    if bits.shape[0] and (nbits & (nbits - 1)) != 0:
        return -4
    # the filter only skips hashes absent from the build side, so it cannot change the answer
    # The row standing for a hash is the first build row carrying it (what the
    # table holds once built); rows never inserted are not found.
    present = np.asarray(slots)
    present = present[(present >= 0) & (present < build_hashes.shape[0])]
    if present.size == 0 or n == 0:
        out[:n] = -1
        return 0
    keys = build_hashes[present]
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    rows = present[order]
    pos = np.searchsorted(keys, probe_hashes)
    pos_c = np.minimum(pos, keys.shape[0] - 1)
    hit = keys[pos_c] == probe_hashes
    res = np.where(hit, rows[pos_c], -1)
    out[:n] = res
    return int(np.count_nonzero(hit))


def _probe_args_ok(n, m, nbytes, rows, cands):
    nbits = nbytes * 8
    if rows.shape[0] < n or cands.shape[0] < n or m == 0 or (m & (m - 1)) != 0:
        return False
    return not (nbytes and (nbits & (nbits - 1)) != 0)


def probe_rows(build_hashes, slots, probe_hashes, bits, rows, cands):
    probe_hashes = np.asarray(probe_hashes, dtype=np.uint64)
    n = probe_hashes.shape[0]
    if not _probe_args_ok(n, slots.shape[0], bits.shape[0], rows, cands):
        return -4
    if n == 0 or np.asarray(build_hashes).shape[0] == 0:
        return 0
    out = np.empty(n, dtype=np.int64)
    probe_hash_table(build_hashes, slots, probe_hashes, out, bits)
    hit = np.flatnonzero(out >= 0)
    rows[:hit.size] = hit
    cands[:hit.size] = out[hit]
    return int(hit.size)


def probe_int64_rows(values, valid, build_hashes, slots, bits, rows, cands):
    values = np.asarray(values, dtype=np.int64)
    valid = np.asarray(valid, dtype=np.uint8)
    n = values.shape[0]
    if not _probe_args_ok(n, slots.shape[0], bits.shape[0], rows, cands):
        return -4
    if valid.shape[0] and valid.shape[0] < n:
        return -4
    hashes = np.empty(n, dtype=np.uint64)
    hash_int64(values, valid, hashes, False)
    return probe_rows(build_hashes, slots, hashes, bits, rows, cands)


def vector_paths(enabled=None):
    """The twin has no vector paths: always False."""
    return False


def probe_int64_bitmap(values, valid, lo, bits, nbits, null_hit, miss, out):
    values = np.asarray(values, dtype=np.int64)
    valid = np.asarray(valid, dtype=np.uint8)
    n = values.shape[0]
    if nbits < 0 or bits.shape[0] * 8 < nbits or out.shape[0] < n:
        return -4
    if nbits > 0 and lo + nbits - 1 > (1 << 63) - 1:
        return -4
    if valid.shape[0] and valid.shape[0] < n:
        return -4
    with np.errstate(over="ignore"):
        d = values.view(np.uint64) - np.uint64(lo & ((1 << 64) - 1))
    inside = d < np.uint64(nbits)
    hit = np.zeros(n, dtype=np.bool_)
    di = d[inside].astype(np.int64)
    hit[inside] = (np.asarray(bits)[di >> 3] >> (di & 7).astype(np.uint8)) & 1 == 1
    if valid.shape[0]:
        isnull = valid[:n] == 0
        hit[isnull] = bool(null_hit)
    out[:n] = (hit != bool(miss)).astype(np.uint8)
    return int(np.count_nonzero(hit))


def equal_binary(a_offsets, a_data, a_rows, b_offsets, b_data, b_rows, out):
    a_offsets = np.asarray(a_offsets, dtype=np.int64)
    b_offsets = np.asarray(b_offsets, dtype=np.int64)
    a_rows = np.asarray(a_rows, dtype=np.int64)
    b_rows = np.asarray(b_rows, dtype=np.int64)
    a_data = bytes(a_data)
    b_data = bytes(b_data)
    n = a_rows.shape[0]
    if b_rows.shape[0] < n or out.shape[0] < n:
        return -4
    na, nb = a_offsets.shape[0] - 1, b_offsets.shape[0] - 1
    equal = 0
    for i in range(n):
        ra, rb = int(a_rows[i]), int(b_rows[i])
        if not (0 <= ra < na and 0 <= rb < nb):
            return -5
        a0, a1, b0, b1 = int(a_offsets[ra]), int(a_offsets[ra + 1]), int(b_offsets[rb]), int(b_offsets[rb + 1])
        if a0 < 0 or a1 < a0 or a1 > len(a_data) or b0 < 0 or b1 < b0 or b1 > len(b_data):
            return -5
        same = int(a_data[a0:a1] == b_data[b0:b1])
        out[i] = same
        equal += same
    return equal


# ---------------------------------------------------------------- compaction
def mask_runs(keep, starts, lengths):
    keep = np.asarray(keep).view(np.uint8) != 0
    edges = np.diff(np.concatenate([[0], keep.astype(np.int8), [0]]))
    s = np.flatnonzero(edges == 1)
    e = np.flatnonzero(edges == -1)
    if len(starts) < len(s) or len(lengths) < len(s):
        return -4
    starts[:len(s)] = s
    lengths[:len(s)] = e - s
    return len(s)


def position_runs(positions, start, count, starts, lengths):
    if start < 0 or count < 0 or start + count > 2**63 - 1:
        return -4
    positions = np.asarray(positions, dtype=np.int64)
    stop = start + count
    lo, hi = np.searchsorted(positions, [start, stop])
    inside = positions[lo:hi]
    if inside.size > 1 and np.any(np.diff(inside) < 0):
        return -5
    inside = np.unique(inside)
    s = np.concatenate([[start], inside + 1])
    e = np.concatenate([inside, [stop]])
    keep = e > s
    s, e = s[keep], e[keep]
    if len(starts) < len(s) or len(lengths) < len(s):
        return -4
    starts[:len(s)] = s - start
    lengths[:len(s)] = e - s
    return len(s)


def _runs_ok(starts, lengths, nruns, rows):
    if nruns < 0 or len(starts) < nruns or len(lengths) < nruns:
        return None
    total = 0
    for r in range(nruns):
        s, n = int(starts[r]), int(lengths[r])
        if s < 0 or n < 0 or s > rows or n > rows - s:
            return None
        total += n
    return total


def take_runs_fixed_columns(srcs, widths, starts, lengths, nruns, outs):
    if len(srcs) != len(outs) or len(srcs) != len(widths) or nruns < 0 or len(starts) < nruns \
            or len(lengths) < nruns:
        return -4
    if not srcs:
        return 0
    if any(int(w) <= 0 for w in widths):
        return -4
    rows = min(len(s) // int(w) for s, w in zip(srcs, widths))
    room = min(len(o) // int(w) for o, w in zip(outs, widths))
    o = 0
    for r in range(nruns):
        s, n = int(starts[r]), int(lengths[r])
        if s < 0 or n < 0 or s > rows or n > rows - s or n > room - o:
            return -4
        for src, w, out in zip(srcs, widths, outs):
            w = int(w)
            out[o * w:(o + n) * w] = np.asarray(src, dtype=np.uint8)[s * w:(s + n) * w]
        o += n
    return o


def runs_data_size(offsets, starts, lengths, nruns, data_len):
    if len(offsets) < 1 or _runs_ok(starts, lengths, nruns, len(offsets) - 1) is None:
        return -4
    size = 0
    for r in range(nruns):
        a, b = int(offsets[int(starts[r])]), int(offsets[int(starts[r]) + int(lengths[r])])
        if a < 0 or b < a or b > data_len:
            return -4
        size += b - a
    return size


def take_runs_binary(offsets, data, starts, lengths, nruns, out_offsets, out_data):
    total = _runs_ok(starts, lengths, nruns, len(offsets) - 1) if len(offsets) >= 1 else None
    if total is None or len(out_offsets) < total + 1:
        return -4
    out_offsets[0] = 0
    o = d = 0
    for r in range(nruns):
        s, n = int(starts[r]), int(lengths[r])
        a, b = int(offsets[s]), int(offsets[s + n])
        if a < 0 or b < a or b > len(data) or d + (b - a) > len(out_data):
            return -4
        out_data[d:d + b - a] = data[a:b]
        out_offsets[o + 1:o + n + 1] = np.asarray(offsets[s + 1:s + n + 1], dtype=np.int64) + (d - a)
        o += n
        d += b - a
    return total


def take_runs_bits(bits, bit_offset, starts, lengths, nruns, out):
    bits = np.asarray(bits, dtype=np.uint8)
    total = _runs_ok(starts, lengths, nruns, len(bits) * 8 - bit_offset) if bit_offset >= 0 else None
    if total is None or len(out) * 8 < total:
        return -4
    flags = np.unpackbits(bits, bitorder="little")[bit_offset:]
    picked = np.concatenate([flags[int(starts[r]):int(starts[r]) + int(lengths[r])] for r in range(nruns)]
                            or [np.zeros(0, np.uint8)])
    packed = np.packbits(picked, bitorder="little")
    out[:len(packed)] |= packed
    return int(picked.sum())


def _valid_bit(valid, valid_offset, i):
    if len(valid) == 0:
        return True
    b = valid_offset + i
    return bool((int(valid[b >> 3]) >> (b & 7)) & 1)


def _dict_rows_ok(indices, valid, valid_offset, starts, lengths, nruns, ndict):
    if ndict < 0 or nruns < 0 or len(starts) < nruns or len(lengths) < nruns or valid_offset < 0:
        return False
    return not (len(valid) and len(valid) * 8 - valid_offset < len(indices))


def dictionary_data_size(dict_offsets, dict_data_len, indices, valid, valid_offset, starts, lengths, nruns):
    ndict = len(dict_offsets) - 1
    if not _dict_rows_ok(indices, valid, valid_offset, starts, lengths, nruns, ndict):
        return -4
    size = 0
    for r in range(nruns):
        s, n = int(starts[r]), int(lengths[r])
        if s < 0 or n < 0 or s > len(indices) or n > len(indices) - s:
            return -4
        for i in range(s, s + n):
            if not _valid_bit(valid, valid_offset, i):
                continue
            idx = int(indices[i])
            if idx < 0 or idx >= ndict:
                return -5
            a, b = int(dict_offsets[idx]), int(dict_offsets[idx + 1])
            if a < 0 or b < a or b > dict_data_len:
                return -5
            size += b - a
    return size


def take_runs_dictionary(dict_offsets, dict_data, indices, valid, valid_offset, starts, lengths, nruns,
                         out_offsets, out_data):
    ndict = len(dict_offsets) - 1
    if not _dict_rows_ok(indices, valid, valid_offset, starts, lengths, nruns, ndict) or len(out_offsets) < 1:
        return -4
    # the whole dictionary is checked first: offsets rising from >= 0 to <= the data's length
    offs = [int(x) for x in dict_offsets]
    if ndict > 0 and (offs[0] < 0 or offs[ndict] > len(dict_data) or any(b < a for a, b in zip(offs, offs[1:]))):
        return -5
    out_offsets[0] = 0
    o = d = 0
    for r in range(nruns):
        s, n = int(starts[r]), int(lengths[r])
        if s < 0 or n < 0 or s > len(indices) or n > len(indices) - s or n > len(out_offsets) - 1 - o:
            return -4
        for i in range(s, s + n):
            o += 1
            if _valid_bit(valid, valid_offset, i):
                idx = int(indices[i])
                if idx < 0 or idx >= ndict:
                    return -5
                a, b = int(dict_offsets[idx]), int(dict_offsets[idx + 1])
                if a < 0 or b < a or b > len(dict_data):
                    return -5
                if b - a > len(out_data) - d:
                    return -4
                out_data[d:d + b - a] = dict_data[a:b]
                d += b - a
            out_offsets[o] = d
    return o


def lookup_flags(table, indices, out):
    indices = np.asarray(indices)
    n, m = len(indices), len(table)
    if len(out) < n:
        return -4
    if n == 0:
        return 0
    if m == 0 or indices.min() < 0 or indices.max() >= m:
        return -5
    flags = np.asarray(table).view(np.uint8)[indices] != 0
    out[:n] = flags
    return int(np.count_nonzero(flags))
