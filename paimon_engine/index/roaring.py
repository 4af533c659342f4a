"""Portable RoaringBitmap32 serialization (the format Java's ``RoaringBitmap`` writes).

Java's writers run-optimize before serializing; pyroaring's ``serialize()`` after
``run_optimize()`` is byte-identical. Readers here validate the structure and compute
the serialized length first (the file index formats concatenate bitmaps without
length prefixes), so a damaged buffer raises :class:`CorruptFileError` instead of
reaching the C library.
"""
from __future__ import annotations

import struct

from pyroaring import BitMap

from ..errors import CorruptFileError

SERIAL_COOKIE_NO_RUN = 12346
SERIAL_COOKIE = 12347
NO_OFFSET_THRESHOLD = 4

__all__ = ["serialize", "deserialize", "serialized_size", "from_rows"]


def serialize(bitmap) -> bytes:
    """Portable bytes of ``bitmap`` (a copy is run-optimized, as Java does)."""
    bm = BitMap(bitmap) if not isinstance(bitmap, BitMap) else bitmap.copy()
    bm.run_optimize()
    return bm.serialize()


def serialized_size(buf, offset: int = 0, path=None) -> int:
    """Length in bytes of the portable bitmap starting at ``offset`` of ``buf``."""
    mv = memoryview(buf)
    end = len(mv)

    def need(pos, n):
        if pos + n > end:
            raise CorruptFileError("truncated roaring bitmap", path=path, offset=pos)

    pos = offset
    need(pos, 4)
    cookie = struct.unpack_from("<I", mv, pos)[0]
    pos += 4
    if cookie & 0xFFFF == SERIAL_COOKIE:
        size = (cookie >> 16) + 1
        run_bytes = (size + 7) // 8
        need(pos, run_bytes)
        runs = bytes(mv[pos:pos + run_bytes])
        pos += run_bytes
        has_run = True
    elif cookie == SERIAL_COOKIE_NO_RUN:
        need(pos, 4)
        size = struct.unpack_from("<i", mv, pos)[0]
        pos += 4
        if size < 0 or size > 65536:
            raise CorruptFileError(f"roaring bitmap with {size} containers", path=path, offset=pos - 4)
        runs = b""
        has_run = False
    else:
        raise CorruptFileError(f"bad roaring cookie {cookie:#x}", path=path, offset=offset)
    need(pos, 4 * size)
    header = pos
    pos += 4 * size
    if not has_run or size >= NO_OFFSET_THRESHOLD:
        need(pos, 4 * size)
        pos += 4 * size
    last_key = -1
    for i in range(size):
        key, card1 = struct.unpack_from("<HH", mv, header + 4 * i)
        if key <= last_key:
            raise CorruptFileError("roaring container keys out of order", path=path, offset=header + 4 * i)
        last_key = key
        card = card1 + 1
        if has_run and (runs[i >> 3] >> (i & 7)) & 1:
            need(pos, 2)
            nruns = struct.unpack_from("<H", mv, pos)[0]
            pos += 2 + 4 * nruns
        elif card > 4096:
            pos += 8192
        else:
            pos += 2 * card
        need(pos, 0)
    return pos - offset


def deserialize(buf, offset: int = 0, path=None):
    """``(BitMap, end offset)`` of the portable bitmap at ``offset``."""
    n = serialized_size(buf, offset, path)
    data = bytes(memoryview(buf)[offset:offset + n])
    try:
        bm = BitMap.deserialize(data)
    except Exception as e:  # the C library rejects inconsistent containers
        raise CorruptFileError(f"invalid roaring bitmap: {e}", path=path, offset=offset) from None
    return bm, offset + n


def from_rows(rows) -> BitMap:
    """A BitMap of the row numbers in a NumPy array (via ``array.array``, pyroaring's fast path)."""
    import array

    import numpy as np
    a = np.ascontiguousarray(rows, dtype=np.uint32)
    return BitMap(array.array("I", a.tobytes()))
