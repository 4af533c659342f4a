"""Parquet column chunks decoded by the engine's own page decoder.

A flat column chunk (no repetition, at most one definition level) of INT32, INT64, FLOAT, DOUBLE or BYTE_ARRAY
values, whose pages are PLAIN or dictionary-encoded (``PLAIN_DICTIONARY`` / ``RLE_DICTIONARY``), or
``DELTA_BINARY_PACKED`` for INT32 and INT64, data page v1 or v2, uncompressed or compressed with ZSTD, SNAPPY or GZIP, is read here: the chunk's bytes are read once, each
page is decompressed (ZSTD by the thread's zstd decompressor, the others through Arrow's codecs) and the
``parquet`` kernel writes its levels and values straight
into Arrow-layout buffers (validity bitmap, values, offsets + data, or dictionary indices). Anything else (nested
columns, BOOLEAN, INT96, fixed-length byte arrays, the other delta and byte-stream-split encodings, other codecs, a logical
type whose Arrow values are not the stored ones) raises :class:`Unsupported` before any output is used, and the
caller reads that column through pyarrow instead.

Nothing read from the file is trusted: page sizes are checked against the chunk, value counts against the row
group, dictionary indices against the dictionary, and every kernel checks its buffer ends. A bad chunk raises
``CorruptFileError`` naming the file and the byte offset of the page.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .._pykernels import status
from .._speedups import kernel
from ..batch import numbers_to_arrow, pool_array
from ..errors import CorruptFileError
from ..formats.zstd import thread_decompressor, zstandard
from .parquet_pages import (DATA_PAGE, DATA_PAGE_V2, DICTIONARY_PAGE, INDEX_PAGE, PLAIN_DICTIONARY,
                            RLE_DICTIONARY)

__all__ = ["Unsupported", "ColumnChunk", "chunk_of", "read_column_chunk", "iter_column_chunk", "kept_rows"]

# Encoding (the page types and dictionary encodings are parquet_pages')
PLAIN, RLE, DELTA_BINARY_PACKED = 0, 3, 5
_DICTIONARY = (PLAIN_DICTIONARY, RLE_DICTIONARY)
#: the physical types whose pages may be DELTA_BINARY_PACKED
_DELTA_TYPES = ("INT32", "INT64")

_WIDTH = {"INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8}
# the Arrow types whose values are the stored ones, per physical type
_FIXED_TYPES = {
    "INT32": (pa.int32(), pa.date32()),
    "INT64": (pa.int64(), pa.timestamp("us"), pa.timestamp("ns"), pa.time64("us"), pa.time64("ns")),
    "FLOAT": (pa.float32(),),
    "DOUBLE": (pa.float64(),),
}
_CODECS = {"ZSTD": "zstd", "SNAPPY": "snappy", "GZIP": "gzip"}
#: the least a read of a column chunk asks for (several small pages at a time)
WINDOW = 1 << 20
_HEADER_PEEK = 256          # bytes read past a page for the next page's header; more when a header is longer
_MAX_HEADER = 1 << 20
#: rows a column chunk may hold per byte of it for this decoder (beyond that, pyarrow reads it)
_ROWS_PER_BYTE = 64
_LARGE_OUTPUT = 256 << 20
#: bytes of room before a fixed-width output's first value (a multiple of 64: the values stay aligned)
FRONT = 64
#: the longest definition-level run of a page without nulls decompressed straight into its output
_DIRECT_LEVELS = 32
#: a page may not claim more decompressed bytes than this (the chunk's own total is the tighter bound)
MAX_PAGE = 1 << 31


class Unsupported(Exception):
    """The column chunk uses something this decoder does not read; pyarrow reads the column instead."""


class ColumnChunk:
    """Where one flat column chunk of a row group is and how it is stored (from the file's footer)."""

    __slots__ = ("physical", "codec", "start", "size", "num_values", "uncompressed", "max_def", "rows")

    def __init__(self, physical, codec, start, size, num_values, uncompressed, max_def, rows):
        self.physical = physical
        self.codec = codec
        self.start = start
        self.size = size
        self.num_values = num_values
        self.uncompressed = uncompressed
        self.max_def = max_def
        self.rows = rows


def _storage(arrow_type):
    """The Arrow type without a timestamp's time zone (its values are the same int64)."""
    if pa.types.is_timestamp(arrow_type) and arrow_type.tz is not None:
        return pa.timestamp(arrow_type.unit)
    return arrow_type


def decodable(physical: str, arrow_type) -> bool:
    """Whether a flat column of ``physical`` type read as ``arrow_type`` (pyarrow's type for it, or a
    dictionary of int32 indices of such a type: string, binary or fixed-width values) is read by this decoder."""
    if pa.types.is_dictionary(arrow_type):
        if arrow_type.index_type != pa.int32():
            return False
        if physical == "BYTE_ARRAY":
            return arrow_type.value_type in (pa.string(), pa.binary())
        return _storage(arrow_type.value_type) in _FIXED_TYPES.get(physical, ())
    if physical == "BYTE_ARRAY":
        return arrow_type in (pa.string(), pa.binary())
    return _storage(arrow_type) in _FIXED_TYPES.get(physical, ())


def chunk_of(column_meta, column_schema, rows, path=None) -> ColumnChunk:
    """The :class:`ColumnChunk` of pyarrow's ``ColumnChunkMetaData`` (``column_schema``: the leaf's
    ``ColumnSchema``, for its levels); :class:`Unsupported` for a chunk this decoder does not read;
    ``CorruptFileError`` (naming ``path``) for a chunk whose type is not its schema column's."""
    physical = column_meta.physical_type
    if physical != column_schema.physical_type:
        raise CorruptFileError(f"bad Parquet column chunk metadata: column {column_meta.path_in_schema!r} has chunk "
                               f"type {physical}, schema type {column_schema.physical_type}", path=path)
    if column_schema.max_repetition_level != 0 or column_schema.max_definition_level > 1:
        raise Unsupported("nested column")
    if physical not in _WIDTH and physical != "BYTE_ARRAY":
        raise Unsupported(physical)
    codec = column_meta.compression
    if codec != "UNCOMPRESSED" and codec not in _CODECS:
        raise Unsupported(codec)
    start = column_meta.data_page_offset
    if column_meta.has_dictionary_page and column_meta.dictionary_page_offset:
        start = min(start, column_meta.dictionary_page_offset)
    return ColumnChunk(physical, codec, start, column_meta.total_compressed_size, column_meta.num_values,
                       column_meta.total_uncompressed_size, column_schema.max_definition_level, rows)


class _Output:
    """The column being written: values (fixed width), offsets + data (string/binary) or dictionary indices,
    and the validity bitmap."""

    def __init__(self, chunk, arrow_type, rows=None, kept=None):
        """``rows``: a page's rows (else the chunk's); ``kept``: the rows kept of the chunk's (the outputs then
        have room for one value more, which the kernels writing only kept rows may write past them)."""
        n = self.rows = chunk.rows if rows is None else rows
        slack = 0
        if kept is not None:
            n = self.rows = kept
            slack = 1
        self.type = arrow_type
        self.as_dictionary = pa.types.is_dictionary(arrow_type)
        self.width = 4 if self.as_dictionary else _WIDTH.get(chunk.physical, 0)
        self.validity = pool_array((n + 7) // 8) if chunk.max_def else None
        self.valid = 0
        if self.width:
            # FRONT bytes before the first value: a PLAIN page may be decompressed with its definition levels
            # landing there (see _Decoder.direct_page)
            self.padded = pool_array(FRONT + (n + slack) * self.width)
            self.values = self.padded[FRONT:]
        else:
            self.offsets = pool_array(n + 1 + slack, np.int32)
            self.offsets[0] = 0
            # the footer's uncompressed size is a hint, capped by what the compressed bytes plausibly hold;
            # ``reserve`` grows the buffer as values arrive
            self.data = pool_array(max(min(chunk.uncompressed, 64 * chunk.size) if rows is None else 0, 64))
        self.end = 0

    def reserve(self, more):
        """Room for ``more`` bytes of string data after what is written."""
        need = self.end + more
        if need > len(self.data):
            grown = pool_array(max(need, 2 * len(self.data)))
            grown[:self.end] = self.data[:self.end]
            self.data = grown


class _Decoder:
    def __init__(self, path, chunk, arrow_type, window, selection=None, paged=False, keep=None):
        self.path = path
        self.chunk = chunk
        self.window = window
        self.k = kernel("parquet")
        self.type = arrow_type
        self.selection = selection
        # keep mode: one flag per row of the chunk; only the flagged rows are written (pages without one are not
        # even decompressed)
        self.keep = keep
        self.orow = 0
        self.page_validity = None
        # with a selection, each page with a selected row is decoded into an output of its own
        if keep is not None:
            self.out = _Output(chunk, arrow_type, kept=self.k.count_flags(keep, 0, len(keep)))
        else:
            self.out = _Output(chunk, arrow_type) if selection is None and not paged else None
        self.dictionary_array = None
        self.pieces = []
        # zstd pages are decompressed by the calling thread's zstd decompressor (a page-by-page read may go on in
        # another thread), into pool memory or straight into the output; other codecs through Arrow's
        self.zstd = chunk.codec == "ZSTD"
        self.codec = pa.Codec(_CODECS[chunk.codec]) if chunk.codec not in ("UNCOMPRESSED", "ZSTD") else None
        self.dictionary = None          # fixed width: the values' bytes; byte arrays: (offsets, data)
        self.dict_size = 0
        self.scratch = np.empty(0, np.int32)
        self.page_at = 0
        self.dict_longest = 0
        self.dictionary_checked = False
        self.plain_strings = False      # a PLAIN page wrote string values (else they all come from the dictionary)

    def fail(self, what, code=None):
        why = f"{what}: {status.describe(code)}" if code is not None else what
        raise CorruptFileError(f"bad Parquet page ({why})", path=self.path, offset=self.chunk.start + self.page_at)

    def decompress(self, body, size):
        if self.codec is None and not self.zstd:
            if len(body) != size:
                self.fail(f"an uncompressed page of {len(body)} bytes declares {size}")
            return body
        if size > MAX_PAGE or size > max(self.chunk.uncompressed, 0) + 64:
            self.fail(f"a page declares {size} decompressed bytes, more than its column chunk's "
                      f"{self.chunk.uncompressed}")
        if self.zstd:
            # (the decompressor kept by the thread: about 2.5% less time than Arrow's codec over these pages)
            out = pool_array(size)[:size]
            self._zstd_into(body, out)
            return out
        try:
            got = self.codec.decompress(body, decompressed_size=size, asbytes=False)
        except (pa.ArrowException, OSError, ValueError) as exc:
            self.fail(f"{self.chunk.codec.lower()} decompression failed ({exc})")
        if got.size != size:
            self.fail(f"a page decompressed to {got.size} bytes, not the {size} it declares")
        return np.frombuffer(got, np.uint8)

    def indices(self, n):
        if len(self.scratch) < n:
            self.scratch = np.empty(max(n, 1024), np.int32)
        return self.scratch

    # -- pages

    def dictionary_page(self, hdr, body):
        if self.dictionary is not None:
            self.fail("a second dictionary page")
        if hdr[4] not in (PLAIN, PLAIN_DICTIONARY):
            raise Unsupported(f"dictionary page encoding {hdr[4]}")
        n = int(hdr[3])
        if n < 0:
            self.fail("a dictionary page without a value count")
        data = self.decompress(body, int(hdr[1]))
        width = _WIDTH.get(self.chunk.physical)
        if width:
            if len(data) < n * width:
                self.fail(f"a dictionary page of {len(data)} bytes for {n} values of {width} bytes")
            self.dictionary = data[:n * width]
        else:
            if n > len(data) // 4:
                self.fail(f"a dictionary page of {len(data)} bytes for {n} values")
            offsets = np.empty(n + 1, np.int32)
            offsets[0] = 0
            dd = np.empty(len(data) + 16, np.uint8)    # 16 bytes past the last value: 16-byte value moves
            rc = self.k.plain_byte_array(data, 0, len(data), n, _NONE, 0, offsets, 0, dd)
            if rc < 0:
                self.fail("dictionary values", rc)
            self.dictionary = (offsets, dd)
            self.dict_longest = int(np.diff(offsets).max()) if n else 0
        self.dict_size = n

    def data_page(self, hdr, body, row, v2):
        out = self.out
        if self.zstd and out.width and not out.as_dictionary and hdr[4] == PLAIN \
                and self.direct_page(hdr, body, row, v2):
            return
        n, encoding, values, valid = self.page_values(hdr, body, v2, out.rows - row, out.validity, row)
        out.valid += valid
        self.values(encoding, values, row, n, valid)

    def direct_page(self, hdr, body, row, v2):
        """Decompress a PLAIN page of fixed-width values without nulls straight into the output at ``row``
        (no page-sized buffer, no copy). A v1 page's definition levels come first in its decompressed bytes: the
        page is decompressed ``usize - n * width`` bytes before the row, into the output's room before it (the
        previous rows' last bytes, saved and put back, or the FRONT bytes), and the levels are read there.
        False (nothing written that the ordinary path does not write again) when the page has nulls or is not
        laid out so."""
        out, chunk = self.out, self.chunk
        n = int(hdr[3])
        if n < 0 or n > out.rows - row:
            return False
        w = out.width
        usize = int(hdr[1])
        at = row * w
        if v2:
            if hdr[11] == 0 or hdr[7] != 0:
                return False
            rep_len, def_len = int(hdr[10]), int(hdr[9])
            if rep_len < 0 or def_len < 0 or rep_len + def_len > len(body) or usize - rep_len - def_len != n * w:
                return False
            if chunk.max_def:
                valid = self.k.levels_validity(body, rep_len, rep_len + def_len, 1, 1, n, out.validity, row)
                if valid != n:
                    return False
            self.decompress_into(body[rep_len + def_len:], out.values[at:at + n * w])
            out.valid += n
            return True
        lead = usize - n * w
        if lead < 0 or lead > _DIRECT_LEVELS or (lead == 0) != (chunk.max_def == 0) \
                or (lead and int(hdr[5]) != RLE):
            return False
        base, start = out.padded, FRONT + at - lead
        saved = bytes(base[start:start + lead]) if row else None
        try:
            self.decompress_into(body, base[start:start + usize])
            if lead:
                levels = base[start:start + lead]
                if int.from_bytes(bytes(levels[:4]), "little") != lead - 4 or \
                        self.k.levels_validity(levels, 4, lead, 1, 1, n, out.validity, row) != n:
                    return False
        finally:
            if saved:
                base[start:start + lead] = np.frombuffer(saved, np.uint8)
        out.valid += n
        return True

    def decompress_into(self, body, dst):
        """Decompress a zstd page straight into the output ``dst``, which it must fill exactly."""
        self._zstd_into(body, dst)

    def _zstd_into(self, body, dst):
        zstd = zstandard()
        try:
            # (a page may hold several frames, one after another)
            reader = thread_decompressor().stream_reader(body, read_across_frames=True)
            got = reader.readinto(dst)
            more = reader.read(1) if got == len(dst) else b""
        except zstd.ZstdError as exc:
            self.fail(f"zstd decompression failed ({exc})")
        if got != len(dst) or more:
            self.fail(f"a page decompressed to {'more than ' if more else ''}{got} bytes, not the {len(dst)} it "
                      f"declares")

    def page_rows(self, hdr, row):
        """The rows of the data page whose header is ``hdr`` and which starts at chunk row ``row``."""
        n = int(hdr[3])
        if n < 0 or n > self.chunk.rows - row:
            self.fail(f"a data page of {n} values where {self.chunk.rows - row} rows are left")
        return n

    def values(self, encoding, values, row, n, valid):
        """Write a page's values (PLAIN, dictionary-encoded or delta-encoded) into the output from ``row``."""
        if encoding == PLAIN:
            self.plain(values, row, n, valid, valid != n)
        elif encoding == DELTA_BINARY_PACKED:
            self.delta(values, row, n, valid, valid != n)
        else:
            self.dictionary_values(values, row, n, valid, valid != n)

    def page_values(self, hdr, body, v2, left, validity, bit):
        """Decompress a data page of at most ``left`` rows and write its definition levels into ``validity``
        from ``bit``: (rows, encoding, the values' bytes, valid rows)."""
        chunk, k = self.chunk, self.k
        n = int(hdr[3])
        if n < 0 or n > left:
            self.fail(f"a data page of {n} values where {left} rows are left")
        encoding = int(hdr[4])
        if encoding not in (PLAIN,) + _DICTIONARY and (encoding != DELTA_BINARY_PACKED
                                                       or chunk.physical not in _DELTA_TYPES):
            raise Unsupported(f"data page encoding {encoding}")
        usize = int(hdr[1])
        if v2:
            rep_len, def_len = int(hdr[10]), int(hdr[9])
            if rep_len < 0 or def_len < 0 or rep_len + def_len > len(body) or rep_len + def_len > usize:
                self.fail("data page v2 level lengths outside the page")
            levels = body[rep_len:rep_len + def_len]
            rest = body[rep_len + def_len:]
            size = usize - rep_len - def_len
            values = self.decompress(rest, size) if hdr[11] != 0 else rest
            if hdr[11] == 0 and len(rest) != size:
                self.fail("an uncompressed data page v2 whose size does not add up")
            lpos, lend = 0, len(levels)
        else:
            page = self.decompress(body, usize)
            values, levels, lpos, lend = page, page, 0, 0
        if chunk.max_def:
            if not v2:
                if int(hdr[5]) != RLE:
                    raise Unsupported(f"definition level encoding {int(hdr[5])}")
                if len(page) < 4:
                    self.fail("definition levels", status.TRUNCATED)
                lend = int.from_bytes(bytes(page[:4]), "little")
                if lend > len(page) - 4:
                    self.fail("definition levels longer than the page")
                lpos, lend = 4, 4 + lend
            valid = k.levels_validity(levels, lpos, lend, 1, 1, n, validity, bit)
            if valid < 0:
                self.fail("definition levels", valid)
            if not v2:
                values = page[lend:]
        else:
            valid = n
        return n, encoding, values, valid

    def kept_page(self, hdr, body, row, v2):
        """Keep mode: write the kept rows of a data page after those of the pages before it. A page without a kept
        row is skipped; a page without nulls goes through a kernel that writes only its kept rows; any other page
        is decoded on its own and its kept rows copied."""
        chunk, out, k = self.chunk, self.out, self.k
        n = self.page_rows(hdr, row)
        flags = self.keep[row:row + n]
        kept = k.count_flags(self.keep, row, n)
        if kept == 0:
            return
        orow = self.orow
        if kept == n:
            self.data_page(hdr, body, orow, v2)
            self.orow += n
            return
        pv = self.page_bits(n)
        n, encoding, values, valid = self.page_values(hdr, body, v2, n, pv, 0)
        w = out.width
        rc = None
        if valid == n and not out.as_dictionary:
            if encoding == PLAIN and w:
                if len(values) < n * w:
                    self.fail(f"{len(values)} bytes of values for {n} values of {w} bytes")
                rc = k.keep_fixed(values, w, n, flags, out.values, orow)
            elif encoding in _DICTIONARY and self.dictionary is not None and w:
                rc = k.dictionary_fixed(values, 0, len(values), n, self.dictionary, w, out.values, orow, flags)
            elif encoding in _DICTIONARY and self.dictionary is not None and not w and self._fits(n):
                out.reserve(n * self.dict_longest + 16)
                rc = k.dictionary_byte_array(values, 0, len(values), n, self.dictionary[0], self.dictionary[1],
                                             out.offsets, orow, out.data, flags)
                if rc >= 0:
                    out.end = int(out.offsets[orow + kept])
        if rc is None:
            # decoded on its own, then its kept rows copied
            page = self.page_output(encoding, values, n, pv, valid)
            if w:
                rc = k.keep_fixed(page.values, w, n, flags, out.values, orow)
            else:
                out.reserve(page.end)
                rc = k.keep_byte_array(page.offsets, page.data, n, flags, out.offsets, orow, out.data)
                if rc >= 0:
                    out.end = int(out.offsets[orow + kept])
        if rc < 0:
            self.fail("kept values" if rc != status.OUT_OF_RANGE else "kept values (index or size)", rc)
        if out.validity is not None and valid != n:
            ones = k.keep_bits(pv, n, flags, out.validity, orow)
            if ones < 0:
                self.fail("kept validity", ones)
            out.valid += ones
        else:
            if out.validity is not None:
                _set_bits(out.validity, orow, kept)
            out.valid += kept
        self.orow += kept

    def _fits(self, n):
        """Whether room for the dictionary's longest value in each of ``n`` rows is not much more than needed
        (the one-pass string kernel then moves each value without a size test)."""
        d_off, d_data = self.dictionary
        return n * self.dict_longest <= 2 * n * (len(d_data) // max(self.dict_size, 1)) + (1 << 20)

    def plain(self, values, row, n, valid, has_nulls):
        out, k = self.out, self.k
        if out.as_dictionary:
            raise Unsupported("a PLAIN page in a column read as dictionary indices")
        w = out.width
        if w:
            if len(values) < valid * w:
                self.fail(f"{len(values)} bytes of values for {valid} values of {w} bytes")
            if not has_nulls:
                out.values[row * w:(row + n) * w] = values[:n * w]
            else:
                rc = k.expand_fixed(values, w, out.validity, row, n, out.values, row)
                if rc < 0:
                    self.fail("values", rc)
            return
        self.out.reserve(len(values))
        self.plain_strings = True
        rc = k.plain_byte_array(values, 0, len(values), n, out.validity if has_nulls else _NONE, row,
                                out.offsets, row, out.data)
        if rc < 0:
            self.fail("string values" if rc != status.OUT_OF_RANGE else "more than 2 GiB of string values", rc)
        out.end = int(out.offsets[row + n])

    def delta(self, values, row, n, valid, has_nulls):
        out, k = self.out, self.k
        w = out.width
        if out.as_dictionary or w not in (4, 8):
            raise Unsupported("a DELTA_BINARY_PACKED page in a column not read as its integers")
        if not has_nulls:
            rc = k.delta_binary_packed(values, 0, len(values), n, w, out.values, row)
        else:
            dense = np.empty(valid * w, np.uint8)
            rc = k.delta_binary_packed(values, 0, len(values), valid, w, dense, 0)
            if rc >= 0:
                rc = k.expand_fixed(dense, w, out.validity, row, n, out.values, row)
        if rc < 0:
            self.fail("delta-encoded values", rc)

    def dictionary_values(self, values, row, n, valid, has_nulls):
        out, k = self.out, self.k
        if self.dictionary is None:
            self.fail("a dictionary-encoded page without a dictionary page")
        if out.as_dictionary and not has_nulls:
            rc = k.dictionary_indices(values, 0, len(values), n, self.dict_size, out.values.view(np.int32), row)
            if rc < 0:
                self.fail("dictionary indices", rc)
            return
        if not has_nulls and not out.as_dictionary:
            # indices and values in one pass
            if out.width:
                rc = k.dictionary_fixed(values, 0, len(values), n, self.dictionary, out.width, out.values, row)
                if rc < 0:
                    self.fail("dictionary values", rc)
                return
            d_off, d_data = self.dictionary
            if self._fits(n):
                # room for the longest value in every row, when that is not much more than needed
                out.reserve(n * self.dict_longest + 16)
                rc = k.dictionary_byte_array(values, 0, len(values), n, d_off, d_data, out.offsets, row, out.data)
                if rc < 0:
                    self.fail("dictionary values" if rc != status.OUT_OF_RANGE else
                              "dictionary values (index or size)", rc)
                out.end = int(out.offsets[row + n])
                return
        idx = self.indices(valid)
        rc = k.dictionary_indices(values, 0, len(values), valid, self.dict_size, idx, 0)
        if rc < 0:
            self.fail("dictionary indices", rc)
        if out.as_dictionary:
            rc = k.expand_fixed(idx[:valid].view(np.uint8), 4, out.validity, row, n, out.values, row)
        elif out.width:
            w = out.width
            if not has_nulls:
                rc = k.gather_fixed(self.dictionary, w, idx, 0, n, out.values, row)
            else:
                dense = np.empty(valid * w, np.uint8)
                rc = k.gather_fixed(self.dictionary, w, idx, 0, valid, dense, 0)
                if rc >= 0:
                    rc = k.expand_fixed(dense, w, out.validity, row, n, out.values, row)
        else:
            d_off, d_data = self.dictionary
            size = k.dictionary_bytes(d_off, idx, 0, valid)
            if size < 0:
                self.fail("dictionary indices", size)
            out.reserve(size)
            rc = k.gather_byte_array(d_off, d_data, idx, 0, n, out.validity if has_nulls else _NONE, row,
                                     out.offsets, row, out.data)
            if rc >= 0:
                out.end = int(out.offsets[row + n])
        if rc < 0:
            self.fail("dictionary values" if rc != status.OUT_OF_RANGE else "dictionary values (index or size)",
                      rc)

    def run(self):
        for hdr, body, row, v2 in self.data_pages():
            if self.keep is not None:
                self.kept_page(hdr, body, row, v2)
            elif self.selection is None:
                self.data_page(hdr, body, row, v2)
            else:
                self.selected_rows(hdr, body, row, v2)
        if self.selection is not None:
            return self.finish_selection()
        return self.finish()

    def pages(self):
        """Page mode: yield each data page's values as an array of its own (the dictionary page is read on the
        way); only one page's output is held at a time."""
        for hdr, body, row, v2 in self.data_pages():
            n = self.page_rows(hdr, row)
            self.out = _Output(self.chunk, self.type, n)
            self.data_page(hdr, body, 0, v2)
            yield self.finish()

    def data_pages(self):
        """Walk the chunk's pages: the dictionary page is read here; yield (header, body, first row, is v2) of
        each data page until the chunk's rows are covered."""
        chunk, k, window = self.chunk, self.k, self.window
        hdr = np.empty(12, np.int64)
        pos, end, row = 0, chunk.size, 0
        while row < chunk.rows:
            self.page_at = pos
            if pos >= end:
                self.fail(f"the column chunk ends after {row} of its {chunk.rows} rows")
            want = min(_HEADER_PEEK, end - pos)
            while True:
                buf, at = window.get(pos, want)
                h = k.page_header(buf, at, len(buf), hdr)
                if h != status.TRUNCATED or len(buf) - at >= end - pos or want >= _MAX_HEADER:
                    break
                want = min(4 * (len(buf) - at), end - pos, _MAX_HEADER)   # a long header (large statistics)
            if h < 0:
                self.fail("page header", h)
            ptype, usize, csize = int(hdr[0]), int(hdr[1]), int(hdr[2])
            pos += h - at
            if usize < 0 or csize < 0 or csize > end - pos:
                self.fail(f"a page of {csize} bytes where the column chunk has {end - pos} left")
            buf, at = window.get(pos, csize)
            body = buf[at:at + csize]
            pos += csize
            if ptype == DICTIONARY_PAGE:
                if row:
                    self.fail("a dictionary page after data pages")
                self.dictionary_page(hdr, body)
            elif ptype == DATA_PAGE or ptype == DATA_PAGE_V2:
                yield hdr, body, row, ptype == DATA_PAGE_V2
                row += int(hdr[3])
            elif ptype == INDEX_PAGE:
                continue
            else:
                self.fail(f"unknown page type {ptype}")

    def selected_rows(self, hdr, body, row, v2):
        """Selection mode: a page none of whose rows is selected is skipped (not decompressed). From a page
        without nulls, the selected values are gathered straight from its PLAIN values or its dictionary indices
        (fixed-width values, string dictionary indices, strings from a dictionary); any other page is decoded
        into a page-sized output and its selected rows taken."""
        n = self.page_rows(hdr, row)
        sel = self.selection
        lo, hi = np.searchsorted(sel, (row, row + n))
        if hi == lo:
            return
        rel = (sel[lo:hi] - row).astype(np.int32)
        pv = self.page_bits(n)
        n, encoding, values, valid = self.page_values(hdr, body, v2, n, pv, 0)
        piece = self.gathered(encoding, values, n, rel) if valid == n else None
        if piece is None:
            piece = self.finish(self.page_output(encoding, values, n, pv, valid)).take(numbers_to_arrow(rel))
        self.pieces.append(piece)

    def page_output(self, encoding, values, n, validity, valid):
        """A page's ``n`` rows (their decompressed ``values``, their ``validity`` and count of ``valid`` rows
        read) decoded into an output of their own."""
        page = _Output(self.chunk, self.type, n)
        if validity is not None:
            page.validity = validity
        page.valid = valid
        out, self.out = self.out, page
        try:
            self.values(encoding, values, 0, n, valid)
        finally:
            self.out = out
        return page

    def gathered(self, encoding, values, n, rel):
        """The rows ``rel`` (int32, within the page) of a page of ``n`` values without nulls, gathered from its
        decompressed ``values``; None when the page is not PLAIN fixed-width or dictionary-encoded."""
        k, t = self.k, self.type
        m = len(rel)
        as_dictionary = pa.types.is_dictionary(t)
        w = 4 if as_dictionary else _WIDTH.get(self.chunk.physical, 0)

        def fixed(source, indices, what):
            out = pool_array(m * w)
            rc = k.gather_fixed(source, w, indices, 0, m, out, 0)
            if rc < 0:
                self.fail(what, rc)
            return pa.Array.from_buffers(t, m, [None, pa.py_buffer(out)])
        if encoding == PLAIN:
            if not w or as_dictionary:
                return None
            if len(values) < n * w:
                self.fail(f"{len(values)} bytes of values for {n} values of {w} bytes")
            return fixed(values, rel, "selected values")
        if encoding not in _DICTIONARY:
            return None
        if self.dictionary is None:
            self.fail("a dictionary-encoded page without a dictionary page")
        chosen = np.empty(m, np.int32)
        rc = k.dictionary_indices_at(values, 0, len(values), n, self.dict_size, rel, chosen)
        if rc < 0:
            self.fail("dictionary indices", rc)
        if as_dictionary:
            return pa.DictionaryArray.from_arrays(pa.Array.from_buffers(pa.int32(), m, [None, pa.py_buffer(chosen)]),
                                                  self.dictionary_arrow(), safe=False)
        if w:
            return fixed(self.dictionary, chosen, "dictionary values")
        self.dictionary_arrow()          # a string dictionary is checked once for UTF-8
        d_off, d_data = self.dictionary
        size = k.dictionary_bytes(d_off, chosen, 0, m)
        if size < 0:
            self.fail("dictionary indices", size)
        offsets, data = pool_array(m + 1, np.int32), pool_array(max(size, 1))
        offsets[0] = 0
        rc = k.gather_byte_array(d_off, d_data, chosen, 0, m, _NONE, 0, offsets, 0, data)
        if rc < 0:
            self.fail("dictionary values" if rc != status.OUT_OF_RANGE else "dictionary values (index or size)", rc)
        return pa.Array.from_buffers(t, m, [None, pa.py_buffer(offsets), pa.py_buffer(data[:max(size, 1)])])

    def page_bits(self, n):
        """A reused validity bitmap for a page of ``n`` rows (None for a required column)."""
        if not self.chunk.max_def:
            return None
        if self.page_validity is None or len(self.page_validity) < (n + 7) // 8:
            self.page_validity = np.empty((n + 7) // 8, np.uint8)
        return self.page_validity

    def finish_selection(self):
        if not self.pieces:
            return _empty(self.type)
        if len(self.pieces) == 1:
            return self.pieces[0]
        return pa.concat_arrays(self.pieces)

    def dictionary_arrow(self):
        """The chunk's dictionary as an Arrow array (built once; a string one checked for UTF-8): its values'
        bytes as they are for fixed-width values."""
        dictionary = self.dictionary_array
        if dictionary is not None:
            return dictionary
        vt = self.type.value_type if pa.types.is_dictionary(self.type) else self.type
        if _WIDTH.get(self.chunk.physical):
            raw = self.dictionary if self.dictionary is not None else _NONE
            dictionary = pa.Array.from_buffers(vt, self.dict_size, [None, pa.py_buffer(raw)])
        else:
            d_off, d_data = self.dictionary if self.dictionary is not None else (np.zeros(1, np.int32), _NONE)
            dictionary = pa.Array.from_buffers(vt, len(d_off) - 1, [None, pa.py_buffer(d_off), pa.py_buffer(d_data)])
            if vt == pa.string():
                try:
                    dictionary.validate(full=True)
                except pa.ArrowInvalid as exc:
                    raise CorruptFileError(f"bad Parquet dictionary (not UTF-8): {exc}", path=self.path,
                                           offset=self.chunk.start) from None
        self.dictionary_array = dictionary
        return dictionary

    def finish(self, out=None):
        """The output (``out``, else the decoder's) as an Arrow array."""
        out = out or self.out
        n = out.rows
        nulls = n - out.valid
        validity = pa.py_buffer(out.validity) if nulls else None
        if out.as_dictionary:
            indices = pa.Array.from_buffers(pa.int32(), n, [validity, pa.py_buffer(out.values)], null_count=nulls)
            return pa.DictionaryArray.from_arrays(indices, self.dictionary_arrow(), safe=False)
        if out.width:
            return pa.Array.from_buffers(out.type, n, [validity, pa.py_buffer(out.values)], null_count=nulls)
        arr = pa.Array.from_buffers(out.type, n, [validity, pa.py_buffer(out.offsets),
                                                  pa.py_buffer(out.data[:max(out.end, 1)])], null_count=nulls)
        if out.type == pa.string():
            # values copied from the dictionary are valid when the dictionary is: only PLAIN pages make the
            # whole column worth checking
            if self.plain_strings or self.dictionary is None:
                check = arr
            elif not self.dictionary_checked:
                d_off, d_data = self.dictionary
                check = pa.Array.from_buffers(pa.string(), len(d_off) - 1,
                                              [None, pa.py_buffer(d_off), pa.py_buffer(d_data)])
            else:
                return arr
            try:
                check.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise CorruptFileError(f"bad Parquet string values (not UTF-8): {exc}", path=self.path,
                                       offset=self.chunk.start) from None
            self.dictionary_checked = check is not arr
        return arr


_NONE = np.zeros(0, np.uint8)


def _set_bits(bits, start, n):
    """Set bits ``start .. start + n`` (LSB first) of the uint8 array ``bits``."""
    end = start + n
    a, b = -(-start // 8), end // 8
    if a > b:                         # inside one byte
        bits[start // 8] |= ((1 << n) - 1) << (start % 8)
        return
    if start % 8:
        bits[start // 8] |= (0xFF << (start % 8)) & 0xFF
    bits[a:b] = 0xFF
    if end % 8:
        bits[b] |= (1 << (end % 8)) - 1


def _empty(arrow_type):
    if pa.types.is_dictionary(arrow_type):
        return pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), pa.array([], arrow_type.value_type))
    return pa.array([], arrow_type)


def read_column_chunk(path, read_at, file_size, chunk: ColumnChunk, arrow_type, selection=None,
                      keep=None) -> pa.Array:
    """Decode one column chunk as an Arrow array of ``arrow_type``. ``read_at(size, offset)`` reads the file.
    ``selection``: sorted int64 row numbers within the chunk; only those rows are returned, and pages holding
    none of them are neither decompressed nor decoded. ``keep``: instead, one flag per row of the chunk (bool
    or uint8); only the rows flagged are returned, decoded straight into the output (for deletes, which keep
    most rows). Raises :class:`Unsupported` (read it through pyarrow) or ``CorruptFileError``."""
    if selection is not None and len(selection) and (selection[0] < 0 or selection[-1] >= chunk.rows):
        raise ValueError(f"a selection of rows outside the chunk's {chunk.rows}")
    if keep is not None:
        if selection is not None:
            raise ValueError("a selection and keep flags together")
        keep = _flags(keep, chunk.rows)
    if not _check_chunk(path, file_size, chunk, arrow_type):
        return _empty(arrow_type)
    if selection is not None and not len(selection):
        return _empty(arrow_type)
    try:
        return _Decoder(path, chunk, arrow_type, _Window(path, read_at, chunk), selection, keep=keep).run()
    except MemoryError:
        raise Unsupported(f"no memory for the outputs of {chunk.rows} rows") from None


def iter_column_chunk(path, read_at, file_size, chunk: ColumnChunk, arrow_type, batch_size: int):
    """Decode one column chunk page by page, yielding arrays of ``batch_size`` rows (the last one shorter): only
    a page's output and one batch are held at a time. Raises :class:`Unsupported` (before the first array or
    later: the caller reads the rest through pyarrow) or ``CorruptFileError``."""
    if batch_size <= 0:
        raise ValueError("batch_size must be positive")
    if not _check_chunk(path, file_size, chunk, arrow_type):
        return
    pieces, have = [], 0
    try:
        for arr in _Decoder(path, chunk, arrow_type, _Window(path, read_at, chunk), paged=True).pages():
            pieces.append(arr)
            have += len(arr)
            while have >= batch_size:
                out, need = [], batch_size
                while need:
                    a = pieces[0]
                    if len(a) <= need:
                        out.append(pieces.pop(0))
                        need -= len(a)
                    else:
                        out.append(a.slice(0, need))
                        pieces[0] = a.slice(need)
                        need = 0
                have -= batch_size
                yield out[0] if len(out) == 1 else pa.concat_arrays(out)
    except MemoryError:
        raise Unsupported(f"no memory for a page of the chunk's {chunk.rows} rows") from None
    if have:
        yield pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)


def _flags(keep, rows):
    """Keep flags (bool, uint8 or any numbers: non-zero keeps) as a contiguous uint8 array (non-zero keeps), one
    per row of ``rows``; ValueError for another count."""
    keep = np.asarray(keep)
    keep = np.ascontiguousarray(keep).view(np.uint8) if keep.dtype in (np.bool_, np.uint8) else \
        (keep != 0).view(np.uint8)
    if keep.ndim != 1 or len(keep) != rows:
        raise ValueError(f"{len(keep)} keep flags for {rows} rows")
    return keep


def kept_rows(arr, keep) -> pa.Array:
    """The rows of ``arr`` (an array or chunked array) whose flag in ``keep`` (bool or uint8, one per row) is set:
    fixed-width values without nulls through the ``keep_fixed`` kernel, anything else through Arrow's filter."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
    flags = _flags(keep, len(arr))
    t = arr.type
    w = t.bit_width // 8 if pa.types.is_primitive(t) and not pa.types.is_boolean(t) else 0
    if not w or arr.null_count:
        return arr.filter(numbers_to_arrow(flags.astype(np.bool_)))
    kept = int(np.count_nonzero(flags))
    values = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * w:(arr.offset + len(arr)) * w]
    out = pool_array((kept + 1) * w)
    rc = kernel("parquet").keep_fixed(values, w, len(arr), flags, out, 0)
    if rc != kept:          # pragma: no cover - the buffers are sized here
        raise ValueError(f"keep_fixed: {status.describe(rc) if rc < 0 else rc}")
    return pa.Array.from_buffers(t, kept, [None, pa.py_buffer(out)], null_count=0)


def _check_chunk(path, file_size, chunk: ColumnChunk, arrow_type) -> bool:
    """Whether the chunk has rows to decode (False: an empty row group); raises :class:`Unsupported` or
    ``CorruptFileError`` for one the decoder does not read or that cannot be right."""
    if not decodable(chunk.physical, arrow_type):
        raise Unsupported(str(arrow_type))
    if chunk.rows == 0 and chunk.num_values == 0:
        # an empty row group (its chunk may have no pages and no offsets)
        return False
    if chunk.start < 4 or chunk.size < 0 or chunk.start + chunk.size > file_size - 8:
        raise CorruptFileError(f"column chunk [{chunk.start}, {chunk.start + chunk.size}) outside the file's "
                               f"{file_size} bytes", path=path, offset=chunk.start)
    if chunk.rows > _ROWS_PER_BYTE * chunk.size + (1 << 20) and chunk.rows * 8 > _LARGE_OUTPUT:
        # outputs are sized by the footer's row count before any page is read: a large output for a count far
        # beyond what the chunk's bytes plausibly hold (a long run-length-encoded column, or a damaged footer) is
        # left to pyarrow, which reads batch by batch
        raise Unsupported(f"{chunk.rows} rows in a column chunk of {chunk.size} bytes")
    if chunk.num_values != chunk.rows:
        raise CorruptFileError(f"a flat column chunk of {chunk.num_values} values in a row group of {chunk.rows} "
                               f"rows", path=path, offset=chunk.start)
    return True


class _Window:
    """The column chunk's bytes, read a window at a time: at least ``WINDOW`` bytes (several small pages), or one
    large page and a peek past it (usually the next page's header). A read holds one window, not the chunk."""

    __slots__ = ("path", "read_at", "chunk", "lo", "buf")

    def __init__(self, path, read_at, chunk):
        self.path, self.read_at, self.chunk = path, read_at, chunk
        self.lo, self.buf = 0, _NONE

    def get(self, pos, n):
        """(buffer, index) where the chunk's bytes [pos, pos + n) start in the buffer (n <= what is left)."""
        at = pos - self.lo
        if 0 <= at and at + n <= len(self.buf):
            return self.buf, at
        size = min(max(n + _HEADER_PEEK, WINDOW), self.chunk.size - pos)
        raw = self.read_at(size, self.chunk.start + pos)
        if len(raw) != size:
            raise CorruptFileError(f"column chunk cut short: {len(raw)} of {size} bytes read", path=self.path,
                                   offset=self.chunk.start + pos)
        self.lo, self.buf = pos, np.frombuffer(raw, np.uint8)
        return self.buf, 0
