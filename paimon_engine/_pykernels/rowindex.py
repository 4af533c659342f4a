"""Pure-Python twin of ``paimon_engine/_kernels/rowindex.pyx``."""

import struct

import numpy as np

from .status import BAD_LENGTH, BAD_VALUE
from .varint import _read_u, _to_i64, read_uvarint32, zigzag_decode64

IX_ARGS, IX_LEN_VARINT, IX_LEN_FIT, IX_COUNT_FIT, IX_VALUES, IX_EXTRA, IX_STRAY, IX_NEGATIVE, IX_CSZ_BIG, \
    IX_SUM, IX_STARTS, IX_SMALL, IX_RATIO, IX_MAX, IX_EMPTY = range(1, 16)

#: open_tail: the footer breaks a rule / the block index starts before the tail
TAIL_FOOTER, TAIL_INDEX = 1, 2
_MAGIC = 0x524F5753  # "ROWS" little-endian
_VERSION = 1
_FOOTER = struct.Struct("<qiqib3sI")

#: zstd cannot expand a frame by more than ~32768x (RLE blocks)
MAX_ZSTD_RATIO = 32768


def _fail(state, check, arr, block, pos, detail, status):
    state[0], state[1], state[2], state[3], state[4] = check, arr, block, pos, detail
    return status


def check_block_index(data, nblocks, row_count, index_offset, max_block_size, out, state):
    if len(state) < 5:
        return BAD_LENGTH
    n = int(nblocks)
    if n < 0 or row_count < 0 or index_offset < 0:
        return _fail(state, IX_ARGS, 0, 0, 0, 0, BAD_LENGTH)
    data = bytes(data)
    end = len(data)
    pos = 0
    arrays = []
    for a in range(3):
        length, pos2 = read_uvarint32(data, pos)
        if pos2 < 0:
            return _fail(state, IX_LEN_VARINT, a, 0, pos, pos2, pos2)
        if length < 0 or length > end - pos2:
            return _fail(state, IX_LEN_FIT, a, 0, pos, length, BAD_LENGTH)
        if n > length:  # every varint takes at least one byte
            return _fail(state, IX_COUNT_FIT, a, 0, pos2, length, BAD_LENGTH)
        if len(out) < 4 * n:
            return _fail(state, IX_ARGS, a, 0, pos2, 0, BAD_LENGTH)
        stop = pos2 + length
        chunk = data[:stop]
        r, acc, values = pos2, 0, []
        for b in range(n):
            v, r = _read_u(chunk, r, 10, 0xFE)
            if r < 0:
                return _fail(state, IX_VALUES, a, b, pos2, r, r)
            acc = _to_i64(acc + zigzag_decode64(v))
            values.append(acc)
        if r != stop:
            return _fail(state, IX_EXTRA, a, 0, r, length, BAD_LENGTH)
        out[a * n:(a + 1) * n] = values
        arrays.append(values)
        pos = stop
    if pos != end:
        return _fail(state, IX_STRAY, 0, 0, pos, end - pos, BAD_LENGTH)
    if n == 0:
        if row_count != 0 or index_offset != 0:
            return _fail(state, IX_EMPTY, 0, 0, 0, 0, BAD_VALUE)
        return 0
    csz, usz, starts = arrays
    for b, v in enumerate(csz + usz):
        if v < 0:
            return _fail(state, IX_NEGATIVE, b // n, b % n, 0, 0, BAD_VALUE)
    for b, c in enumerate(csz):
        if c > index_offset:
            return _fail(state, IX_CSZ_BIG, 0, b, 0, 0, BAD_VALUE)
    total = 0
    for b, c in enumerate(csz):
        out[3 * n + b] = total
        if c > index_offset - total:
            return _fail(state, IX_SUM, 0, b, 0, 0, BAD_VALUE)
        total += c
    if total != index_offset:
        return _fail(state, IX_SUM, 0, n - 1, 0, 0, BAD_VALUE)
    if starts[0] != 0:
        return _fail(state, IX_STARTS, 2, 0, 0, 0, BAD_VALUE)
    for b, s in enumerate(starts):
        if s < 0 or s >= row_count or (b > 0 and s <= starts[b - 1]):
            return _fail(state, IX_STARTS, 2, b, 0, 0, BAD_VALUE)
    for b in range(n):
        # a block holds at least its offsets and row count: 4 * rows + 4 <= size
        rows = (starts[b + 1] if b + 1 < n else row_count) - starts[b]
        if 4 * rows + 4 > usz[b]:
            return _fail(state, IX_SMALL, 1, b, 0, rows, BAD_VALUE)
    for b in range(n):
        if usz[b] > max(csz[b], 1) * MAX_ZSTD_RATIO + 1024:
            return _fail(state, IX_RATIO, 1, b, 0, 0, BAD_VALUE)
    if max_block_size >= 0:
        for b in range(n):
            if usz[b] > max_block_size:
                return _fail(state, IX_MAX, 1, b, 0, 0, BAD_VALUE)
    return 0


def open_tail(data, file_size, max_block_size):
    data = bytes(data)
    n = len(data)
    if n < 32 or file_size < n:
        return TAIL_FOOTER, 0, 0, 0, 0, None, None
    rows, blocks, ioff, ilen, version, reserved, magic = _FOOTER.unpack_from(data, n - 32)
    at = file_size - 32
    if (magic != _MAGIC or version != _VERSION or reserved != b"\0\0\0" or rows < 0 or blocks < 0 or ioff < 0
            or ilen < 0 or ioff != at - ilen or blocks > rows):
        return TAIL_FOOTER, 0, 0, 0, 0, None, None
    start = ioff - (file_size - n)
    if start < 0:
        return TAIL_INDEX, rows, blocks, ioff, ilen, None, None
    out = np.empty(4 * blocks if blocks <= ilen else 0, np.int64)
    state = [0] * 5
    r = check_block_index(data[start:start + ilen], blocks, rows, ioff, max_block_size, out, state)
    if r < 0:
        return r, rows, blocks, ioff, ilen, out, tuple(state)
    return 0, rows, blocks, ioff, ilen, out, None


def locate(packed, nblocks, row_count, row):
    if nblocks <= 0 or len(packed) < 4 * nblocks or not 0 <= row < row_count:
        return None
    starts = np.asarray(packed[2 * nblocks:3 * nblocks], dtype=np.int64)
    if starts[0] > row:
        return None
    b = int(np.searchsorted(starts, row, side="right")) - 1
    first = int(starts[b])
    end = int(starts[b + 1]) if b + 1 < nblocks else row_count
    return b, int(packed[3 * nblocks + b]), int(packed[b]), int(packed[nblocks + b]), first, end - first


def selected_rows(flags, starts, local, cuts):
    flags = np.asarray(flags, dtype=np.uint8)
    starts = np.asarray(starts, dtype=np.int64)
    nb, n = len(starts) - 1, len(flags)
    if nb < 0 or len(cuts) < nb + 1:
        return BAD_LENGTH
    if starts[0] != 0 or starts[nb] != n:
        return BAD_VALUE
    widths = np.diff(starts)
    if (widths < 0).any() or (widths > 0x7FFFFFFF).any():
        return BAD_VALUE
    rows = np.flatnonzero(flags)
    if len(rows) > len(local):
        return BAD_LENGTH
    block = np.searchsorted(starts, rows, side="right") - 1
    local[:len(rows)] = (rows - starts[block]).astype(np.int32)
    cuts[:nb + 1] = np.searchsorted(rows, starts)
    return int(len(rows))
