"""Portable RoaringBitmap32 serialization (the format Java's ``RoaringBitmap`` writes).

Java's writers run-optimize before serializing; pyroaring's ``serialize()`` after
``run_optimize()`` is byte-identical. Readers here validate the structure and compute
the serialized length first (the file index formats concatenate bitmaps without
length prefixes), so a damaged buffer raises :class:`CorruptFileError` instead of
reaching the C library.
"""
from __future__ import annotations

import numpy as np
from pyroaring import BitMap

from .. import _speedups
from .._pykernels import status
from ..errors import CorruptFileError

__all__ = ["serialize", "deserialize", "serialized_size", "validate", "from_rows"]


def serialize(bitmap) -> bytes:
    """Portable bytes of ``bitmap`` (a copy is run-optimized, as Java does)."""
    bm = BitMap(bitmap) if not isinstance(bitmap, BitMap) else bitmap.copy()
    bm.run_optimize()
    return bm.serialize()


def _walk(buf, offset, path, check):
    """(end offset, cardinality) of the portable bitmap at ``offset`` (the ``bitmap`` kernel's ``roaring_walk``)."""
    out = np.zeros(2, dtype=np.int64)
    try:
        rc = _speedups.kernel("bitmap").roaring_walk(buf, offset, check, out)
    except (TypeError, ValueError):         # a buffer that is not bytes-like / not contiguous
        rc = _speedups.kernel("bitmap").roaring_walk(bytes(memoryview(buf)), offset, check, out)
    if rc >= 0:
        return int(rc), int(out[0])
    at = int(out[1])
    if rc == status.TRUNCATED:
        why = "truncated roaring bitmap"
    elif rc == status.OUT_OF_RANGE:
        why = "roaring container keys out of order"
    elif rc == status.BAD_LENGTH:
        count = int.from_bytes(bytes(memoryview(buf)[at:at + 4]), "little", signed=True)
        why = f"roaring bitmap with {count} containers"
    elif at == offset:
        why = f"bad roaring cookie {int.from_bytes(bytes(memoryview(buf)[offset:offset + 4]), 'little'):#x}"
    else:
        why = "roaring container whose contents disagree with its header (values out of order or a wrong count)"
    raise CorruptFileError(why, path=path, offset=at)


def serialized_size(buf, offset: int = 0, path=None) -> int:
    """Length in bytes of the portable bitmap starting at ``offset`` of ``buf`` (its structure checked: cookie,
    container count, keys in order, every container inside ``buf``)."""
    return _walk(buf, offset, path, False)[0] - offset


def validate(buf, offset: int = 0, path=None) -> tuple[int, int]:
    """``(end offset, cardinality)`` of the portable bitmap at ``offset`` of ``buf``, its structure and the
    containers' contents checked (values in order, counts as stated); no bitmap is built."""
    return _walk(buf, offset, path, True)


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
    a = np.ascontiguousarray(rows, dtype=np.uint32)
    return BitMap(array.array("I", a.tobytes()))
