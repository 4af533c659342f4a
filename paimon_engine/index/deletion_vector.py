"""Deletion vectors and Paimon's deletion-vector index file.

Index file: byte 0 is the version (1), then entries, each found by the ``(offset,
length)`` recorded for its data file:

* 32-bit: int32 BE ``size`` (= 4 + bitmap bytes), int32 BE magic ``1581511376``,
  portable Roaring32, int32 BE CRC32 of magic + bitmap; recorded ``length = size``.
* 64-bit: int32 BE ``size``, int32 **LE** magic ``1681511377``, int64 LE count of
  32-bit bitmaps, per bitmap int32 LE high key + portable Roaring32, int32 BE CRC32
  of everything after the size field; recorded ``length = size + 8``.
"""
from __future__ import annotations

import struct
import threading
import zlib
from dataclasses import dataclass

import numpy as np
from pyroaring import BitMap, BitMap64

from .. import _speedups
from ..errors import CorruptFileError, InvalidArgumentError
from . import roaring

__all__ = ["DeletionVector", "DeletionVectorMeta", "write_deletion_vector_index",
           "read_deletion_vector", "read_deletion_vector_index", "scan_deletion_vector_index",
           "VERSION", "MAGIC_32", "MAGIC_64"]

VERSION = 1
MAGIC_32 = 1581511376
MAGIC_64 = 1681511377
_MAX_32 = (1 << 32) - 1
MAX_32BIT_POSITION = (1 << 31) - 1  # Java's 32-bit deletion vector takes positions up to Integer.MAX_VALUE
_BUILD_LOCK = threading.Lock()      # storing a vector's bitmap built from its bytes


@dataclass(frozen=True)
class DeletionVectorMeta:
    """Where one data file's deletion vector lives in an index file."""
    offset: int
    length: int
    cardinality: int


class DeletionVector:
    """Deleted row positions of one data file (``BitMap``, or ``BitMap64`` beyond 2^32 rows).

    A 32-bit vector read from an index file keeps its validated Roaring bytes until its ``bitmap`` is first
    asked for: ``keep_mask`` and ``cardinality`` work on the bytes themselves (a read that only masks its rows
    builds no bitmap)."""

    __slots__ = ("_bitmap", "_raw", "_card")

    def __init__(self, positions=None, *, bit64: bool = False):
        self._raw = None
        self._card = 0
        if isinstance(positions, (BitMap, BitMap64)):
            self.bitmap = positions
        else:
            cls = BitMap64 if bit64 else BitMap
            if positions is not None:
                arr = np.asarray(list(positions) if not isinstance(positions, np.ndarray) else positions)
                if arr.size and (arr.min() < 0 or (not bit64 and arr.max() > MAX_32BIT_POSITION)):
                    raise InvalidArgumentError("deletion vector positions out of range (use bit64=True for "
                                               "positions beyond 2^31 - 1)")
                self.bitmap = BitMap64(arr.astype(np.uint64)) if bit64 else roaring.from_rows(arr)
            else:
                self.bitmap = cls()

    @classmethod
    def _of_bytes(cls, buf, at: int, cardinality: int, path=None, offset: int = 0) -> "DeletionVector":
        """A 32-bit vector over the portable Roaring32 bitmap at ``at`` of ``buf`` (immutable), already validated
        (``roaring.validate``) and holding ``cardinality`` positions; ``path``/``offset`` name it if building
        its bitmap fails."""
        dv = cls.__new__(cls)
        dv._bitmap = None
        dv._raw = (buf, at, path, offset)
        dv._card = cardinality
        return dv

    @property
    def bitmap(self):
        """The positions as a pyroaring ``BitMap`` (``BitMap64`` for a 64-bit vector), built on first use (one
        bitmap for all threads: the first one stored wins)."""
        bm = self._bitmap
        if bm is None:
            raw = self._raw
            if raw is None:         # built by another thread meanwhile (it stores the bitmap, then drops _raw)
                return self._bitmap
            buf, at, path, offset = raw
            try:
                built = roaring.deserialize(buf, at, path)[0]
            except CorruptFileError as exc:
                raise CorruptFileError(exc.reason, path=path, offset=offset) from None
            with _BUILD_LOCK:
                if self._bitmap is None:
                    self._bitmap, self._raw = built, None
                bm = self._bitmap
        return bm

    @bitmap.setter
    def bitmap(self, value):
        self._bitmap, self._raw = value, None

    def __reduce__(self):
        # (a vector read from bytes holds a view of them: it pickles and copies as its bitmap)
        return DeletionVector, (self.bitmap,)

    @property
    def is_64bit(self) -> bool:
        return self._bitmap is not None and isinstance(self._bitmap, BitMap64)

    def delete(self, position: int) -> None:
        position = int(position)
        if position < 0 or (not self.is_64bit and position > MAX_32BIT_POSITION):
            raise InvalidArgumentError(f"deletion vector position {position} out of range")
        self.bitmap.add(position)

    def is_deleted(self, position: int) -> bool:
        return int(position) in self.bitmap

    def __contains__(self, position):
        return self.is_deleted(position)

    def __len__(self):
        card, raw = self._card, self._raw
        return card if raw is not None else len(self._bitmap)

    @property
    def cardinality(self) -> int:
        return len(self)

    def merge(self, other: "DeletionVector") -> None:
        if self.is_64bit or other.is_64bit:
            self.bitmap = BitMap64(self.bitmap) | BitMap64(other.bitmap)
        else:
            self.bitmap |= other.bitmap

    def __eq__(self, other):
        if not isinstance(other, DeletionVector):
            return NotImplemented
        if self.is_64bit == other.is_64bit:
            return self.bitmap == other.bitmap
        return len(self) == len(other) and list(self.bitmap) == list(other.bitmap)

    def __repr__(self):
        return f"DeletionVector({len(self)} deleted{', 64-bit' if self.is_64bit else ''})"

    def to_selection(self, num_rows: int) -> BitMap:
        """Rows of ``[0, num_rows)`` that are NOT deleted (a reader row selection)."""
        if num_rows > _MAX_32 + 1:
            raise InvalidArgumentError("a row selection covers at most 2^32 rows")
        keep = BitMap()
        if num_rows > 0:
            keep.add_range(0, num_rows)
        if self.is_64bit:
            deleted = BitMap(np.fromiter((p for p in self.bitmap if p < num_rows), dtype=np.uint32))
        else:
            deleted = self.bitmap
        return keep - deleted

    def keep_mask(self, start: int, stop: int) -> np.ndarray:
        """Bool array for rows ``[start, stop)``: True where the row is kept."""
        if stop < start or start < 0:
            raise InvalidArgumentError(f"keep_mask needs 0 <= start <= stop, not {start}, {stop}")
        mask = np.ones(stop - start, dtype=np.bool_)
        if stop == start or not len(self):
            return mask
        raw = self._raw
        if raw is not None:
            buf, at, path, offset = raw
            if start <= _MAX_32:
                # (the bytes passed roaring.validate: the kernel fails only on what that refuses)
                hits = _speedups.kernel("bitmap").roaring_clear(buf, at, start, mask.view(np.uint8))
                if hits < 0:
                    raise CorruptFileError("bad deletion vector bitmap", path=path, offset=offset)
            return mask
        if self.is_64bit:
            sub = np.fromiter((p for p in self.bitmap if start <= p < stop), dtype=np.int64)
        else:
            if start > _MAX_32:
                return mask
            rng = BitMap()
            rng.add_range(start, min(stop, _MAX_32 + 1))
            sub = np.asarray((self.bitmap & rng).to_array(), dtype=np.int64)
        mask[sub - start] = False
        return mask

    # -- serialization -----------------------------------------------------
    def serialize(self) -> bytes:
        """One index-file entry (size, magic, bitmap, CRC)."""
        if not self.is_64bit:
            data = roaring.serialize(self.bitmap)
            payload = struct.pack(">i", MAGIC_32) + data
            return struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))
        highs = {}
        for p in self.bitmap:
            highs.setdefault(p >> 32, []).append(p & _MAX_32)
        top = max(highs) if highs else -1
        parts = [struct.pack("<i", MAGIC_64), struct.pack("<q", top + 1)]
        for key in range(top + 1):  # dense keys from 0, as Java writes them
            parts.append(struct.pack("<i", key))
            parts.append(roaring.serialize(BitMap(highs.get(key, []))))
        payload = b"".join(parts)
        return struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))

    @classmethod
    def deserialize(cls, data, offset: int = 0, length: int | None = None, path=None) -> "DeletionVector":
        """The entry at ``offset`` of ``data`` (``length``: the recorded length, checked)."""
        mv = memoryview(data)
        if offset < 0 or offset + 8 > len(mv):
            raise CorruptFileError("truncated deletion vector", path=path, offset=offset)
        size = struct.unpack_from(">i", mv, offset)[0]
        if size < 4 or offset + 4 + size + 4 > len(mv):
            raise CorruptFileError(f"bad deletion vector size {size}", path=path, offset=offset)
        # immutable bytes are read in place when the entry is a good part of them (a vector read from them keeps
        # a view, not a copy, and so keeps at most four times its own bytes)
        payload = mv[offset + 4:offset + 4 + size]
        if not isinstance(data, bytes) or 4 * size < len(mv):
            payload = bytes(payload)
        crc = struct.unpack_from(">I", mv, offset + 4 + size)[0]
        magic_be = struct.unpack_from(">i", payload, 0)[0]
        magic_le = struct.unpack_from("<i", payload, 0)[0]
        if magic_be == MAGIC_32:
            expected_length = size
        elif magic_le == MAGIC_64:
            expected_length = size + 8
        else:
            raise CorruptFileError(f"bad deletion vector magic {magic_be:#x}", path=path, offset=offset + 4)
        if length is not None and length != expected_length:
            raise CorruptFileError(f"deletion vector size {size} disagrees with the recorded length {length}",
                                   path=path, offset=offset)
        if _speedups.kernel("hashing").crc32(payload) != crc:
            raise CorruptFileError("deletion vector CRC mismatch", path=path, offset=offset + 4 + size)
        base = offset + 4
        if magic_be == MAGIC_32:
            try:
                end, card = roaring.validate(payload, 4, path)
            except CorruptFileError as exc:
                raise CorruptFileError(exc.reason, path=path,
                                       offset=base + (exc.offset if exc.offset is not None else 4)) from None
            if end != size:
                raise CorruptFileError("deletion vector bitmap shorter than its size", path=path,
                                       offset=base + end)
            return cls._of_bytes(payload, 4, card, path, base + 4)
        if size < 12:
            raise CorruptFileError("truncated 64-bit deletion vector", path=path, offset=base)
        count = struct.unpack_from("<q", payload, 4)[0]
        if count < 0 or count * 12 > size:
            raise CorruptFileError(f"bad 64-bit bitmap count {count}", path=path, offset=base + 4)
        pos = 12
        out = BitMap64()
        seen = set()
        for _ in range(count):
            if pos + 4 > size:
                raise CorruptFileError("truncated 64-bit deletion vector", path=path, offset=base + pos)
            key = struct.unpack_from("<i", payload, pos)[0]
            if key < 0 or key in seen:
                raise CorruptFileError(f"bad or duplicate high key {key}", path=path, offset=base + pos)
            seen.add(key)
            bm, pos = roaring.deserialize(payload, pos + 4, path)
            if len(bm):
                hi = key << 32
                out.update(int(v) + hi for v in bm) if key else out.update(bm)
        if pos != size:
            raise CorruptFileError("trailing bytes in a 64-bit deletion vector", path=path, offset=base + pos)
        return cls(out)


def write_deletion_vector_index(vectors: dict) -> tuple[bytes, dict]:
    """Serialize ``{data file name: DeletionVector}`` into index-file bytes and the
    ``{name: DeletionVectorMeta}`` to record."""
    out = bytearray([VERSION])
    metas = {}
    for name, dv in vectors.items():
        entry = dv.serialize()
        size = len(entry) - 8
        length = size + 8 if dv.is_64bit else size
        metas[name] = DeletionVectorMeta(len(out), length, dv.cardinality)
        out += entry
    return bytes(out), metas


def _check_version(data, path):
    if len(data) < 1:
        raise CorruptFileError("empty deletion vector index file", path=path, offset=0)
    if data[0] != VERSION:
        raise CorruptFileError(f"unsupported deletion vector index version {data[0]}", path=path, offset=0)


def read_deletion_vector(data, meta: DeletionVectorMeta, path=None) -> DeletionVector:
    _check_version(data, path)
    dv = DeletionVector.deserialize(data, meta.offset, meta.length, path)
    if meta.cardinality is not None and meta.cardinality >= 0 and dv.cardinality != meta.cardinality:
        raise CorruptFileError(f"deletion vector has {dv.cardinality} positions, recorded {meta.cardinality}",
                               path=path, offset=meta.offset)
    return dv


def read_deletion_vector_index(data, metas: dict, path=None) -> dict:
    """``{name: DeletionVector}`` for the recorded ``{name: DeletionVectorMeta}``."""
    return {name: read_deletion_vector(data, m, path) for name, m in metas.items()}


def scan_deletion_vector_index(data, path=None) -> list:
    """Walk every entry of an index file: ``[(offset, length, DeletionVector)]``."""
    _check_version(data, path)
    out = []
    pos = 1
    while pos < len(data):
        dv = DeletionVector.deserialize(data, pos, None, path)
        size = struct.unpack_from(">i", data, pos)[0]
        out.append((pos, size + 8 if dv.is_64bit else size, dv))
        pos += size + 8
    return out
