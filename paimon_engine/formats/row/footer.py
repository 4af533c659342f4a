"""Footer and block index of a Paimon ``.row`` file, with every invariant checked."""

from __future__ import annotations

import struct

import numpy as np

from ... import _speedups
from ..._pykernels import status
from ...encoding import encode_delta_varint, encode_uvarint32
from ...errors import CorruptFileError, InvalidArgumentError

__all__ = ["FOOTER_SIZE", "MAGIC", "VERSION", "Footer", "BlockIndex", "parse_tail"]

FOOTER_SIZE = 32
MAGIC = 0x524F5753  # "ROWS" little-endian
VERSION = 1
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
    """Per-block compressed size, uncompressed size, first row and file offset (NumPy int64 arrays: views of one
    array holding the four one after the other, made on first use)."""

    __slots__ = ("_packed", "_n", "row_count", "_views")

    def __init__(self, compressed_sizes, uncompressed_sizes, row_starts, row_count):
        arrays = [np.asarray(a, dtype=np.int64).ravel() for a in (compressed_sizes, uncompressed_sizes, row_starts)]
        n = len(arrays[0])
        if any(len(a) != n for a in arrays):
            raise InvalidArgumentError("a block index needs as many uncompressed sizes and row starts as "
                                       "compressed sizes")
        offsets = np.zeros(n, dtype=np.int64)
        if n > 1:
            np.cumsum(arrays[0][:-1], out=offsets[1:])
        self._packed = np.concatenate(arrays + [offsets])
        self._n = n
        self.row_count = int(row_count)
        self._views = None

    def _view(self, k):
        views = self._views
        if views is None:
            p, n = self._packed, self._n
            views = self._views = (p[:n], p[n:2 * n], p[2 * n:3 * n], p[3 * n:4 * n])
        return views[k]

    @property
    def compressed_sizes(self) -> np.ndarray:
        return self._view(0)

    @property
    def uncompressed_sizes(self) -> np.ndarray:
        return self._view(1)

    @property
    def row_starts(self) -> np.ndarray:
        return self._view(2)

    @property
    def offsets(self) -> np.ndarray:
        return self._view(3)

    @property
    def block_count(self) -> int:
        return self._n

    def block_rows(self, b: int) -> int:
        end = self.row_starts[b + 1] if b + 1 < self.block_count else self.row_count
        return int(end - self.row_starts[b])

    def block_of(self, rows):
        """Block number of each (valid) row number."""
        return np.searchsorted(self.row_starts, rows, side="right") - 1

    def locate(self, row: int):
        """(block, file offset, compressed size, uncompressed size, first row, rows) of the block holding row
        ``row`` (one kernel call), None when no block holds it."""
        return _rowindex().locate(self._packed, self._n, self.row_count, row)

    def to_bytes(self) -> bytes:
        out = bytearray()
        for arr in (self.compressed_sizes, self.uncompressed_sizes, self.row_starts):
            enc = encode_delta_varint(arr)
            out += encode_uvarint32(len(enc)) + enc
        return bytes(out)

    @classmethod
    def _of(cls, decoded, n, row_count):
        """The index over ``decoded`` = compressed sizes, uncompressed sizes, row starts and offsets, one after
        the other in one int64 array of 4 * ``n`` (as the ``rowindex`` kernel fills it): no copies."""
        self = cls.__new__(cls)
        self._packed = decoded
        self._n = n
        self.row_count = row_count
        self._views = None
        return self

    @classmethod
    def parse(cls, data: bytes, footer: Footer, *, path=None, max_block_size=None) -> "BlockIndex":
        """Decode the index bytes and check every invariant (one kernel call); a broken one raises
        :class:`CorruptFileError` naming the block and the byte offset."""
        n = footer.block_count
        # every value takes at least one byte: the output is bounded by the bytes actually read
        decoded = np.empty(4 * n if 0 <= n <= len(data) else 0, dtype=np.int64)
        state = np.empty(5, dtype=np.int64)  # written in full when a check fails
        st = _rowindex().check_block_index(data, n, footer.row_count, footer.index_offset,
                                           -1 if max_block_size is None else int(max_block_size), decoded, state)
        if st < 0:
            _index_error(st, state.tolist(), decoded, footer, path, max_block_size)
        return cls._of(decoded, n, footer.row_count)


def parse_tail(tail: bytes, file_size: int, *, path=None, max_block_size=None):
    """(Footer, BlockIndex) from the first read of a file, ``tail`` being its last ``len(tail)`` bytes: the footer
    and the index it holds checked in one kernel call (what :meth:`Footer.parse` and :meth:`BlockIndex.parse`
    check). The BlockIndex is None when the index starts before the tail: read it and pass it to
    :meth:`BlockIndex.parse`. A broken rule raises :class:`CorruptFileError` as those two do."""
    k = _rowindex()
    st, rows, blocks, ioff, ilen, decoded, state = k.open_tail(tail, file_size,
                                                                -1 if max_block_size is None else int(max_block_size))
    if st == 0:
        return Footer(rows, blocks, ioff, ilen), BlockIndex._of(decoded, blocks, rows)
    if st == k.TAIL_FOOTER:
        # Footer.parse checks the same rules and raises naming the broken one (the caller would read and check the
        # index on its own after a footer it passed)
        return Footer.parse(tail[-FOOTER_SIZE:], file_size, path=path), None
    footer = Footer(rows, blocks, ioff, ilen)
    if st < 0:
        _index_error(st, list(state), decoded, footer, path, max_block_size)
    return footer, None


_WHAT = ("compressed sizes", "uncompressed sizes", "row starts")


def _rowindex():
    return _speedups.kernel("rowindex")


def _index_error(st, state, decoded, footer, path, max_block_size):
    """Raise the CorruptFileError for the failed check ``state`` of the ``rowindex`` kernel."""
    k = _rowindex()
    check, arr, b, pos, detail = state
    base, n = footer.index_offset, footer.block_count
    what = _WHAT[arr] if 0 <= arr < 3 else "?"
    csz, usz, starts = decoded[:n], decoded[n:2 * n], decoded[2 * n:3 * n]
    if check == k.IX_LEN_VARINT:
        msg, at = f"{status.describe(st)} while decoding a varint", base + pos
    elif check == k.IX_LEN_FIT:
        msg, at = f"block index {what}: {detail} bytes do not fit in the index", base + pos
    elif check == k.IX_COUNT_FIT:
        msg, at = f"block index {what}: {n} values cannot fit in {detail} bytes", base + pos
    elif check == k.IX_VALUES:
        msg, at = f"block index {what}: {status.describe(int(detail))} while decoding a delta-varint array", \
            base + pos
    elif check == k.IX_EXTRA:
        msg, at = f"block index {what}: {detail} bytes hold more than the footer's {n} blocks", base + pos
    elif check == k.IX_STRAY:
        msg, at = f"{detail} stray bytes after the block index", base + pos
    elif check == k.IX_EMPTY:
        msg, at = "an index without blocks in a file with rows", base
    elif check == k.IX_NEGATIVE:
        msg, at = "negative block size in the block index", base
    elif check == k.IX_CSZ_BIG:
        raise CorruptFileError(f"block {b}: {int(csz[b])} compressed bytes do not fit before the index "
                               f"at {footer.index_offset}", path=path, offset=base, block=b)
    elif check == k.IX_SUM:
        msg, at = (f"compressed block sizes sum to {sum(csz.tolist())}, the index starts at "
                   f"{footer.index_offset}"), base
    elif check == k.IX_STARTS:
        msg, at = ("block row starts are not 0, strictly increasing and below the row count "
                   f"{footer.row_count}"), base
    elif check == k.IX_SMALL:
        raise CorruptFileError(f"block {b}: uncompressed size {int(usz[b])} cannot hold {detail} rows",
                               path=path, offset=base, block=b)
    elif check == k.IX_RATIO:
        raise CorruptFileError(f"block {b}: {int(csz[b])} compressed bytes cannot hold {int(usz[b])}",
                               path=path, offset=base, block=b)
    elif check == k.IX_MAX:
        raise CorruptFileError(f"block {b}: uncompressed size {int(usz[b])} exceeds the limit "
                               f"{max_block_size}", path=path,
                               offset=base, block=b)
    else:
        msg, at = f"block index: {status.describe(st)}", base
    raise CorruptFileError(msg, path=path, offset=at)
