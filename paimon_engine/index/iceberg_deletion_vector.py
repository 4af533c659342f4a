"""Iceberg deletion vectors: the ``deletion-vector-v1`` Puffin blob.

Blob bytes (Puffin spec)::

    int32 BE  length of magic + vector
    4 bytes   magic D1 D3 39 64
    vector    64-bit Roaring bitmap, portable format:
                uint64 LE  number of 32-bit bitmaps
                per bitmap, keys ascending: uint32 LE key (the high 32 bits of the positions), portable Roaring32
    int32 BE  CRC-32 of magic + vector

Positions are row positions in one data file (the key's most significant bit must be 0). Every bitmap is
run-optimized before it is written, as Iceberg Java does. The blob is stored uncompressed, with ``snapshot-id``
and ``sequence-number`` -1 and the properties ``referenced-data-file`` and ``cardinality``.

Decoding validates the framing, the CRC, every bitmap's structure (before the Roaring library sees it), key
order, the cardinality recorded for the vector and, when given, that no position reaches the data file's record
count; it then expands the positions with NumPy (one array per 32-bit bitmap), never per position in Python.
A :class:`DeletionVector` keeps the validated bitmaps and expands only the positions of a requested row range.
Paimon's own deletion vectors (32-bit and 64-bit, in Paimon index files) live in :mod:`.deletion_vector`.
"""

from __future__ import annotations

import array
import struct
import zlib

import numpy as np
from pyroaring import BitMap

from .. import _speedups
from ..errors import CorruptFileError, InvalidArgumentError
from . import roaring

__all__ = ["DV_MAGIC", "BLOB_TYPE", "ROW_POSITION_FIELD_ID", "serialize_deletion_vector", "DeletionVector",
           "parse_deletion_vector", "deserialize_deletion_vector", "deletion_vector_blob", "deletion_vector_cardinality"]

DV_MAGIC = b"\xd1\xd3\x39\x64"
BLOB_TYPE = "deletion-vector-v1"
ROW_POSITION_FIELD_ID = 2147483545          # the ``pos`` metadata column Java lists in the blob's fields
PROPERTY_REFERENCED_DATA_FILE = "referenced-data-file"
PROPERTY_CARDINALITY = "cardinality"
_MAX_KEY = (1 << 31) - 1                    # positions are positive 64-bit longs


def _positions(positions) -> np.ndarray:
    if isinstance(positions, np.ndarray):
        a = positions
    else:
        try:
            a = np.asarray(positions) if hasattr(positions, "__array__") else np.array(list(positions))
        except OverflowError:
            raise InvalidArgumentError("deletion vector position beyond 2**63 - 1") from None
    if a.dtype == object:
        raise InvalidArgumentError("deletion vector position beyond 2**63 - 1")
    if a.size and a.dtype.kind not in "iu":
        raise InvalidArgumentError(f"deletion vector positions must be integers, not {a.dtype}")
    if a.dtype == np.uint64 and a.size and int(a.max()) > (1 << 63) - 1:
        raise InvalidArgumentError("deletion vector position beyond 2**63 - 1")
    a = np.ascontiguousarray(a, dtype=np.int64)
    if a.size and int(a.min()) < 0:
        raise InvalidArgumentError(f"negative deletion vector position {int(a.min())}")
    if a.size > 1 and not bool(np.all(a[1:] > a[:-1])):
        a = np.unique(a)
    return a


def serialize_deletion_vector(positions) -> bytes:
    """The ``deletion-vector-v1`` blob of ``positions`` (any integer iterable or array; duplicates are
    merged)."""
    a = _positions(positions)
    keys = (a >> 32) if a.size else a
    parts = []
    count = 0
    if a.size:
        bounds = np.flatnonzero(np.diff(keys)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [a.size]))
        for s, e in zip(starts.tolist(), ends.tolist()):
            lows = (a[s:e] & 0xFFFFFFFF).astype(np.uint32)
            bm = BitMap(array.array("I", lows.tobytes()))
            bm.run_optimize()
            parts.append(struct.pack("<I", int(keys[s])))
            parts.append(bm.serialize())
            count += 1
    body = DV_MAGIC + struct.pack("<Q", count) + b"".join(parts)
    return struct.pack(">i", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def _split(raw, path, offset):
    """The vector bytes of a blob after checking length, magic and CRC."""
    if len(raw) < 12:
        raise CorruptFileError(f"deletion vector blob of {len(raw)} bytes is shorter than its framing",
                               path=path, offset=offset)
    (length,) = struct.unpack(">i", raw[:4])
    if length < 4 or length + 8 != len(raw):
        raise CorruptFileError(f"deletion vector length {length} does not match the blob size {len(raw)}",
                               path=path, offset=offset)
    if raw[4:8] != DV_MAGIC:
        raise CorruptFileError(f"bad deletion vector magic {bytes(raw[4:8]).hex()}", path=path, offset=offset + 4)
    mv = memoryview(raw)
    (crc,) = struct.unpack_from(">I", mv, 4 + length)
    if _speedups.kernel("hashing").crc32(mv[4:4 + length]) != crc:    # the CRC reads the blob in place (no copy)
        raise CorruptFileError("deletion vector checksum mismatch", path=path, offset=offset + 4 + length)
    return mv[8:4 + length]


def _bitmaps(raw, path, offset):
    vec = _split(raw, path, offset)
    base = offset + 8
    if len(vec) < 8:
        raise CorruptFileError("deletion vector bitmap truncated", path=path, offset=base)
    (count,) = struct.unpack_from("<Q", vec, 0)
    if count > (len(vec) - 8) // 12:      # every bitmap takes at least a key and an 8-byte header
        raise CorruptFileError(f"deletion vector claims {count} bitmaps in {len(vec)} bytes", path=path,
                               offset=base)
    pos = 8
    last = -1
    out = []
    for _ in range(count):
        if pos + 4 > len(vec):
            raise CorruptFileError("deletion vector bitmap truncated", path=path, offset=base + pos)
        (key,) = struct.unpack_from("<I", vec, pos)
        if key > _MAX_KEY:
            raise CorruptFileError(f"deletion vector key {key} is beyond any row position (>= 2**63)",
                                   path=path, offset=base + pos)
        if key <= last:
            raise CorruptFileError("deletion vector keys out of order", path=path, offset=base + pos)
        last = key
        pos += 4
        try:
            bm, end = roaring.deserialize(vec, pos)
        except CorruptFileError as exc:
            raise CorruptFileError(f"deletion vector bitmap for key {key}: {exc.reason}", path=path,
                                   offset=base + (exc.offset if exc.offset is not None else pos)) from None
        out.append((key, bm, base + pos))
        pos = end
    if pos != len(vec):
        raise CorruptFileError(f"{len(vec) - pos} bytes after the last deletion vector bitmap", path=path,
                               offset=base + pos)
    return out


def deletion_vector_cardinality(raw, path=None, offset: int = 0) -> int:
    """The number of positions in a blob (validated, nothing expanded)."""
    return sum(len(bm) for _, bm, _ in _bitmaps(raw, path, offset))


class DeletionVector:
    """A validated ``deletion-vector-v1`` blob, kept as its 32-bit Roaring bitmaps: :meth:`positions` expands
    only the positions of a row range, so a reader of part of a data file never decodes the rest."""

    __slots__ = ("bitmaps", "cardinality")

    def __init__(self, bitmaps):
        self.bitmaps = bitmaps              # [(key: the high 32 bits, BitMap of the low 32 bits)], keys ascending
        self.cardinality = sum(len(bm) for _, bm in bitmaps)

    def positions(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Sorted int64 positions ``p`` with ``lo <= p < hi`` (``hi`` None: no upper end). Each bitmap meeting
        the range is intersected with the range (Roaring range operations) before anything is expanded."""
        lo = max(0, int(lo))
        parts = []
        for key, bm in self.bitmaps:
            base = key << 32
            if hi is not None and base >= hi:
                break
            if base + (1 << 32) <= lo or not len(bm):
                continue
            l32 = max(lo - base, 0)
            h32 = (1 << 32) if hi is None else min(hi - base, 1 << 32)
            if l32 > 0 or h32 < (1 << 32):
                if l32 > bm.max() or h32 <= bm.min():
                    continue
                if l32 > bm.min() or h32 <= bm.max():
                    bm = bm & BitMap(range(l32, h32))
            if not len(bm):
                continue
            lows = np.frombuffer(bm.to_array(), dtype=np.uint32)
            parts.append(lows.astype(np.int64) + np.int64(base) if key else lows.astype(np.int64))
        if not parts:
            return np.zeros(0, np.int64)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def __len__(self):
        return self.cardinality


def parse_deletion_vector(raw, path=None, offset: int = 0, *, cardinality: int | None = None,
                          record_count: int | None = None) -> DeletionVector:
    """A :class:`DeletionVector` of a ``deletion-vector-v1`` blob, validated and not expanded.

    ``path``/``offset``: where the blob sits (for errors). ``cardinality``: the deleted-row count the manifest
    or blob metadata records (checked from the bitmaps' counts, so a small blob of run containers cannot turn
    into a huge array). ``record_count``: the data file's row count; a position at or beyond it is corrupt.
    """
    bitmaps = _bitmaps(raw, path, offset)
    n = sum(len(bm) for _, bm, _ in bitmaps)
    if cardinality is not None and n != cardinality:
        raise CorruptFileError(f"deletion vector holds {n} positions, its metadata records {cardinality}",
                               path=path, offset=offset + 8)
    if record_count is not None and n:
        key, bm, at = [b for b in bitmaps if len(b[1])][-1]
        top = (key << 32) | bm.max()
        if top >= record_count:
            raise CorruptFileError(f"deletion vector position {top} is beyond the data file's {record_count} rows",
                                   path=path, offset=at)
    return DeletionVector([(key, bm) for key, bm, _ in bitmaps])


def deserialize_deletion_vector(raw, path=None, offset: int = 0, *, cardinality: int | None = None,
                                record_count: int | None = None) -> np.ndarray:
    """Sorted int64 positions of a ``deletion-vector-v1`` blob (every position; see
    :func:`parse_deletion_vector` for the checks and for expanding a row range only)."""
    return parse_deletion_vector(raw, path, offset, cardinality=cardinality, record_count=record_count).positions()


def deletion_vector_blob(positions, referenced_data_file: str):
    """A :class:`~paimon_engine.formats.puffin.Blob` holding the deletion vector of one data file, with the
    metadata Iceberg Java writes (fields ``[pos]``, snapshot id and sequence number -1, uncompressed)."""
    from ..formats.puffin import Blob
    a = _positions(positions)
    return Blob(BLOB_TYPE, serialize_deletion_vector(a), fields=[ROW_POSITION_FIELD_ID], snapshot_id=-1,
                sequence_number=-1, compression_codec=None,
                properties={PROPERTY_REFERENCED_DATA_FILE: referenced_data_file, PROPERTY_CARDINALITY: str(a.size)})
