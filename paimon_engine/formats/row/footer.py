"""Footer and block index of a Paimon ``.row`` file, with every invariant checked."""

from __future__ import annotations

import struct

import numpy as np

from ...encoding import decode_delta_varint, encode_delta_varint, encode_uvarint32, read_uvarint32
from ...errors import CorruptFileError

__all__ = ["FOOTER_SIZE", "MAGIC", "VERSION", "Footer", "BlockIndex"]

FOOTER_SIZE = 32
MAGIC = 0x524F5753  # "ROWS" little-endian
VERSION = 1
MAX_ZSTD_RATIO = 32768
_FOOTER = struct.Struct("<qiqib3xI")


class Footer:
    """The fixed 32-byte tail: row count, block count, index location, version, magic."""

    __slots__ = ("row_count", "block_count", "index_offset", "index_length", "version")

    def __init__(self, row_count, block_count, index_offset, index_length, version=VERSION):
        self.row_count = row_count
        self.block_count = block_count
        self.index_offset = index_offset
        self.index_length = index_length
        self.version = version

    def to_bytes(self) -> bytes:
        return _FOOTER.pack(self.row_count, self.block_count, self.index_offset, self.index_length,
                            self.version, MAGIC)

    @classmethod
    def parse(cls, data: bytes, file_size: int, *, path=None) -> "Footer":
        at = file_size - FOOTER_SIZE
        if len(data) != FOOTER_SIZE:
            raise CorruptFileError(f"a .row file needs a {FOOTER_SIZE}-byte footer, the file has "
                                   f"{file_size} bytes", path=path, offset=0)
        rows, blocks, ioff, ilen, version, magic = _FOOTER.unpack(data)
        if magic != MAGIC:
            raise CorruptFileError(f"bad magic 0x{magic:08X} (expected 0x{MAGIC:08X} 'ROWS')",
                                   path=path, offset=at + 28)
        if version != VERSION:
            raise CorruptFileError(f"unsupported .row version {version}", path=path, offset=at + 24)
        if data[25:28] != b"\0\0\0":
            raise CorruptFileError("reserved footer bytes are not zero", path=path, offset=at + 25)
        if rows < 0:
            raise CorruptFileError(f"negative row count {rows}", path=path, offset=at)
        if blocks < 0:
            raise CorruptFileError(f"negative block count {blocks}", path=path, offset=at + 8)
        if ioff < 0 or ilen < 0 or ioff + ilen != at:
            raise CorruptFileError(f"block index at {ioff} of {ilen} bytes does not end at the footer "
                                   f"({at})", path=path, offset=at + 12)
        if blocks > rows:
            raise CorruptFileError(f"{blocks} blocks for {rows} rows", path=path, offset=at + 8)
        return cls(rows, blocks, ioff, ilen, version)


class BlockIndex:
    """Per-block compressed size, uncompressed size, first row and file offset (NumPy int64 arrays)."""

    __slots__ = ("compressed_sizes", "uncompressed_sizes", "row_starts", "offsets", "row_count")

    def __init__(self, compressed_sizes, uncompressed_sizes, row_starts, row_count):
        self.compressed_sizes = np.asarray(compressed_sizes, dtype=np.int64)
        self.uncompressed_sizes = np.asarray(uncompressed_sizes, dtype=np.int64)
        self.row_starts = np.asarray(row_starts, dtype=np.int64)
        self.row_count = int(row_count)
        self.offsets = np.zeros(len(self.compressed_sizes), dtype=np.int64)
        if len(self.compressed_sizes) > 1:
            np.cumsum(self.compressed_sizes[:-1], out=self.offsets[1:])

    @property
    def block_count(self) -> int:
        return len(self.compressed_sizes)

    def block_rows(self, b: int) -> int:
        end = self.row_starts[b + 1] if b + 1 < self.block_count else self.row_count
        return int(end - self.row_starts[b])

    def block_of(self, rows):
        """Block number of each (valid) row number."""
        return np.searchsorted(self.row_starts, rows, side="right") - 1

    def to_bytes(self) -> bytes:
        out = bytearray()
        for arr in (self.compressed_sizes, self.uncompressed_sizes, self.row_starts):
            enc = encode_delta_varint(arr)
            out += encode_uvarint32(len(enc)) + enc
        return bytes(out)

    @classmethod
    def parse(cls, data: bytes, footer: Footer, *, path=None, max_block_size=None) -> "BlockIndex":
        base = footer.index_offset
        pos = 0
        arrays = []
        n = footer.block_count
        for what in ("compressed sizes", "uncompressed sizes", "row starts"):
            try:
                length, pos2 = read_uvarint32(data, pos, path=path)
            except CorruptFileError as e:
                raise e.located(offset=base + pos) from None
            if length < 0 or length > len(data) - pos2:
                raise CorruptFileError(f"block index {what}: {length} bytes do not fit in the index",
                                       path=path, offset=base + pos)
            chunk = bytes(data[pos2:pos2 + length])
            try:
                values, used = decode_delta_varint(chunk, n, 0, path=path)
            except CorruptFileError as e:
                raise CorruptFileError(f"block index {what}: {e.reason}", path=path, offset=base + pos2)
            if used != length:
                raise CorruptFileError(f"block index {what}: {length} bytes hold more than the footer's "
                                       f"{n} blocks", path=path, offset=base + pos2 + used)
            arrays.append(values)
            pos = pos2 + length
        if pos != len(data):
            raise CorruptFileError(f"{len(data) - pos} stray bytes after the block index", path=path,
                                   offset=base + pos)
        csz, usz, starts = arrays
        if n:
            # every comparison below is between values already known to be in range, so no int64 product or
            # sum can wrap around (a count near 2**63 must fail here, not in an allocation)
            if (csz < 0).any() or (usz < 0).any():
                raise CorruptFileError("negative block size in the block index", path=path, offset=base)
            if (csz > footer.index_offset).any():
                b = int(np.argmax(csz > footer.index_offset))
                raise CorruptFileError(f"block {b}: {int(csz[b])} compressed bytes do not fit before the index "
                                       f"at {footer.index_offset}", path=path, offset=base, block=b)
            total = sum(csz.tolist())
            if total != footer.index_offset:
                raise CorruptFileError(f"compressed block sizes sum to {total}, the index starts "
                                       f"at {footer.index_offset}", path=path, offset=base)
            if starts[0] != 0 or (starts < 0).any() or (starts >= footer.row_count).any() or \
                    (n > 1 and (np.diff(starts) <= 0).any()):
                raise CorruptFileError("block row starts are not 0, strictly increasing and below the row "
                                       f"count {footer.row_count}", path=path, offset=base)
            nrows = np.diff(np.append(starts, footer.row_count))
            # a block holds at least its offsets and row count: 4 * rows + 4 <= size, compared without the product
            small = nrows > (usz - 4) // 4
            if small.any():
                b = int(np.argmax(small))
                raise CorruptFileError(f"block {b}: uncompressed size {int(usz[b])} cannot hold "
                                       f"{int(nrows[b])} rows", path=path, offset=base, block=b)
            # zstd cannot expand a frame by more than ~32768x (RLE blocks): a larger claim is corrupt
            # (usz > c * R + 1024, written as floor((usz - 1025) / R) >= c so that c * R is never formed)
            big = (usz > 1024) & ((usz - 1025) // MAX_ZSTD_RATIO >= np.maximum(csz, 1))
            if big.any():
                b = int(np.argmax(big))
                raise CorruptFileError(f"block {b}: {int(csz[b])} compressed bytes cannot hold {int(usz[b])}",
                                       path=path, offset=base, block=b)
            if max_block_size is not None and (usz > max_block_size).any():
                b = int(np.argmax(usz > max_block_size))
                raise CorruptFileError(f"block {b}: uncompressed size {int(usz[b])} exceeds the limit "
                                       f"{max_block_size}", path=path, offset=base, block=b)
        else:
            if footer.row_count != 0 or footer.index_offset != 0:
                raise CorruptFileError("an index without blocks in a file with rows", path=path, offset=base)
        return cls(csz, usz, starts, footer.row_count)
