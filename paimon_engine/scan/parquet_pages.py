"""Parquet page headers, read only to learn how the data pages of a column chunk are encoded.

A column chunk is a sequence of pages, each a Thrift (compact protocol) ``PageHeader`` followed by
``compressed_page_size`` bytes. Parquet's footer lists the encodings a chunk uses but not which pages use them:
a writer whose dictionary grew too large (or did not pay off) writes its later pages PLAIN, and the footer of
such a chunk looks like one whose pages are all dictionary-encoded. Walking the page headers tells the two
apart. A column whose data pages are all dictionary-encoded can be read as dictionary indices and turned into
plain values by a kernel much faster than Arrow's row-by-row decoding; a PLAIN page read that way would instead
be hashed value by value, several times slower. Anything unexpected here (a short read, a malformed header,
too many pages) answers "don't know" and the column is read the ordinary way.
"""

from __future__ import annotations

import numpy as np

from .._pykernels import status
from .._speedups import kernel

__all__ = ["all_data_pages_dictionary_encoded", "page_encodings"]

# PageType
DATA_PAGE, INDEX_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 1, 2, 3
# Encoding
PLAIN_DICTIONARY, RLE_DICTIONARY = 2, 8
DICTIONARY_ENCODINGS = frozenset((PLAIN_DICTIONARY, RLE_DICTIONARY))

MAX_PAGES = 100_000
_WINDOW = 256              # bytes read at a page offset; more when a header is longer (large statistics)
_MAX_HEADER = 1 << 20

# Thrift compact protocol field types
_TRUE, _FALSE, _I8, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)


class _Short(Exception):
    """The header goes past the bytes read so far."""


class _Bad(Exception):
    """Not a valid header."""


class _Cursor:
    __slots__ = ("buf", "pos")

    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def byte(self):
        if self.pos >= len(self.buf):
            raise _Short
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self):
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise _Bad

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def skip_bytes(self, n):
        if n < 0:
            raise _Bad
        if self.pos + n > len(self.buf):
            raise _Short
        self.pos += n

    def skip(self, t, depth=0):
        if depth > 32:
            raise _Bad
        if t in (_TRUE, _FALSE):
            return
        if t == _I8:
            self.skip_bytes(1)
        elif t in (_I16, _I32, _I64):
            self.varint()
        elif t == _DOUBLE:
            self.skip_bytes(8)
        elif t == _BINARY:
            self.skip_bytes(self.varint())
        elif t in (_LIST, _SET):
            h = self.byte()
            size, et = h >> 4, h & 0x0F
            if size == 15:
                size = self.varint()
            for _ in range(size):
                if et in (_TRUE, _FALSE):
                    self.skip_bytes(1)          # list booleans are one byte each
                else:
                    self.skip(et, depth + 1)
        elif t == _MAP:
            size = self.varint()
            if size:
                kv = self.byte()
                for _ in range(size):
                    self.skip(kv >> 4, depth + 1)
                    self.skip(kv & 0x0F, depth + 1)
        elif t == _STRUCT:
            self.struct(None, depth + 1)
        else:
            raise _Bad

    def struct(self, handler, depth=0):
        """Walk a struct; ``handler(field_id, type)`` reads a field and returns True, or returns False to have
        it skipped."""
        last = 0
        while True:
            h = self.byte()
            if h == 0:
                return
            t = h & 0x0F
            delta = h >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            if handler is None or not handler(fid, t):
                self.skip(t, depth)


def _parse_header(buf):
    """-> (page type, header length, compressed page size, data page encoding or None), read by the ``parquet``
    kernel's ``page_header`` (the page decoder's own header reader)."""
    out = np.empty(12, np.int64)
    end = kernel("parquet").page_header(buf, 0, len(buf), out)
    if end == status.TRUNCATED:
        raise _Short
    ptype, size, encoding = int(out[0]), int(out[2]), int(out[4])
    if end < 0 or ptype < 0 or size < 0:
        raise _Bad
    return ptype, end, size, (encoding if ptype in (DATA_PAGE, DATA_PAGE_V2) and encoding >= 0 else None)


def _pages(read_at, start, end):
    """Yield (page type, encoding) page by page; raises _Bad if the headers cannot be walked to ``end``."""
    pos = start
    count = 0
    while pos < end:
        count += 1
        if count > MAX_PAGES:
            raise _Bad
        want = min(_WINDOW, end - pos)
        while True:
            buf = read_at(want, pos)
            try:
                ptype, hlen, size, enc = _parse_header(buf)
                break
            except _Short:
                if len(buf) < want or want >= min(_MAX_HEADER, end - pos):
                    raise _Bad from None
                want = min(want * 4, _MAX_HEADER, end - pos)
        yield ptype, enc
        pos += hlen + size
    if pos != end:
        raise _Bad


_FAILURES = (_Bad, OSError, ValueError, TypeError, RecursionError)


def page_encodings(read_at, start: int, end: int):
    """The (page type, encoding) of every page of the column chunk at ``start .. end`` (``read_at(n, offset)``
    -> bytes); None if the headers cannot be walked."""
    try:
        return list(_pages(read_at, start, end))
    except _FAILURES:
        return None


def all_data_pages_dictionary_encoded(read_at, start: int, end: int) -> bool:
    """True when the chunk has a dictionary page and every data page is dictionary-encoded (the walk stops at
    the first page that is not)."""
    has_dict = has_data = False
    try:
        for t, e in _pages(read_at, start, end):
            if t == DICTIONARY_PAGE:
                has_dict = True
            elif t in (DATA_PAGE, DATA_PAGE_V2):
                if e not in DICTIONARY_ENCODINGS or not has_dict:
                    return False
                has_data = True
    except _FAILURES:
        return False
    return has_dict and has_data
