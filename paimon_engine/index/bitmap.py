"""Bitmap index (``bitmap``), versions 1 and 2, byte-compatible with Paimon's ``BitmapFileIndex``.

Version 2 (the default) sorts the distinct values and packs ``(value, offset, length)``
entries into index blocks of at most ``index-block-size`` bytes; the header lists the
first value and offset of every block, so a point query reads the header, one block
and one bitmap. Version 1 lists every ``(value, offset)`` in the header. Bitmap bodies (and
the v1 header) follow the iteration order of the ``java.util.HashMap`` the Java writer
fills (:mod:`.hashmap_order`), so the bytes match Java's for every key type. A value present in exactly one row stores ``-1 - row`` instead of a bitmap
(v2 length ``-1``); the null bitmap is stored only for two or more nulls and then comes
first among the bitmaps.

Queries follow Java: ``ne``/``not_in`` flip over ``[0, rowCount)`` and so include the
null rows; ``is_not_null`` is the flip of the null bitmap.
"""
from __future__ import annotations

import bisect
import struct

import numpy as np
from pyroaring import BitMap

from .. import types as T
from ..errors import CorruptFileError, InvalidArgumentError, UnsupportedTypeError
from . import roaring
from .hashmap_order import java_hash_code, java_hashmap_order
from .result import REMAIN, BitmapResult
from .values import column_keys, kind_of, literal_key, sort_key_array

__all__ = ["BitmapIndex"]

DEFAULT_BLOCK_SIZE = 16 * 1024
OPTIONS = ("version", "index-block-size")


def _parse_size(text) -> int:
    s = str(text).strip().lower().replace(" ", "")
    units = {"b": 1, "bytes": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1 << 20, "mb": 1 << 20,
             "mib": 1 << 20}
    for u in sorted(units, key=len, reverse=True):
        if s.endswith(u) and s[:-len(u)].isdigit():
            return int(s[:-len(u)]) * units[u]
    if s.isdigit():
        return int(s)
    raise InvalidArgumentError(f"bad memory size {text!r}")


def _codec(t: T.DataType):
    """(fixed size or None, encode(key) -> bytes, decode(buf, pos) -> (key, end))."""
    if isinstance(t, (T.CharType, T.VarCharType)):
        def enc(k):
            return struct.pack(">i", len(k)) + k

        def dec(buf, pos, end):
            if pos + 4 > end:
                raise IndexError
            n = struct.unpack_from(">i", buf, pos)[0]
            if n < 0 or pos + 4 + n > end:
                raise IndexError
            return bytes(buf[pos + 4:pos + 4 + n]), pos + 4 + n
        return None, enc, dec
    if isinstance(t, T.BooleanType):
        fmt = ">b"
    elif isinstance(t, T.TinyIntType):
        fmt = ">b"
    elif isinstance(t, T.SmallIntType):
        fmt = ">h"
    elif isinstance(t, (T.IntType, T.DateType, T.TimeType, T.FloatType)):
        fmt = ">i"
    elif isinstance(t, (T.BigIntType, T.TimestampType, T.LocalZonedTimestampType, T.DoubleType)):
        fmt = ">q"
    else:
        raise UnsupportedTypeError(f"the bitmap index does not support {t.to_paimon_string()}")
    st = struct.Struct(fmt)

    def enc(k):
        return st.pack(k)

    def dec(buf, pos, end):
        if pos + st.size > end:
            raise IndexError
        return st.unpack_from(buf, pos)[0], pos + st.size
    return st.size, enc, dec


def _sort_key(kind):
    if kind == "float":
        return lambda k: k ^ ((k >> 31) & 0x7FFFFFFF)
    if kind == "double":
        return lambda k: k ^ ((k >> 63) & 0x7FFFFFFFFFFFFFFF)
    return lambda k: k


class _Source:
    """Reads ranges of one serialized index: ``bytes`` or a ``read(off, n)`` callable."""

    def __init__(self, data=None, read=None, length=None, path=None, base=0):
        self.path = path
        self.base = base
        if data is not None:
            self.data = memoryview(bytes(data)) if not isinstance(data, memoryview) else data
            self.length = len(self.data)
            self._read = None
        else:
            self.data = None
            self.length = int(length)
            self._read = read
        self.bytes_read = 0

    def get(self, off, n):
        if off < 0 or n < 0 or off + n > self.length:
            raise CorruptFileError(f"range [{off}, {off + n}) outside the {self.length}-byte bitmap index",
                                   path=self.path, offset=self.base + max(off, 0))
        self.bytes_read += n
        if self.data is not None:
            return self.data[off:off + n]
        return memoryview(bytes(self._read(off, n)))


class BitmapIndex:
    """Writer (``add_column`` then ``to_bytes``) and reader (``from_bytes``/``open`` + queries)."""

    TYPE = "bitmap"

    def __init__(self, data_type: T.DataType, options: dict | None = None):
        options = dict(options or {})
        for key in options:
            if key not in OPTIONS:
                raise InvalidArgumentError(f"unknown bitmap option {key!r} (known: {', '.join(OPTIONS)})")
        self.type = data_type
        self.kind = kind_of(data_type) if not isinstance(data_type, (T.BinaryType, T.VarBinaryType,
                                                                      T.DecimalType)) else None
        if self.kind is None:
            raise UnsupportedTypeError(f"the bitmap index does not support {data_type.to_paimon_string()}")
        self.fixed, self.encode_key, self.decode_key = _codec(data_type)
        try:
            self.version = int(options.get("version", 2))
        except ValueError:
            raise InvalidArgumentError(f"bad bitmap version {options['version']!r}") from None
        if self.version not in (1, 2):
            raise InvalidArgumentError(f"bitmap index version must be 1 or 2, got {self.version}")
        self.block_size = _parse_size(options.get("index-block-size", DEFAULT_BLOCK_SIZE))
        if self.block_size <= 0:
            raise InvalidArgumentError("index-block-size must be positive")
        self._chunks = []
        self.row_count = 0

    # ------------------------------------------------------------------ writing
    def add_column(self, column) -> None:
        keys, valid = column_keys(column, self.type)
        self._chunks.append((keys, valid, self.row_count))
        self.row_count += column.length

    def add_values(self, values) -> None:
        """Add Python values (``None`` = null) as further rows."""
        keys = [None if v is None else literal_key(v, self.type) for v in values]
        valid = np.array([k is not None for k in keys], dtype=bool)
        if self.kind != "bytes":
            keys = np.array([0 if k is None else k for k in keys], dtype=np.int64)
        self._chunks.append((keys, valid, self.row_count))
        self.row_count += len(valid)

    def _groups(self):
        """(null rows, [(key, rows)] sorted in Java's comparator order, insertion order as
        indexes into that list: the order of first appearance)."""
        valid = np.concatenate([c[1] for c in self._chunks]) if self._chunks else np.zeros(0, bool)
        nulls = np.flatnonzero(~valid)
        rows = np.flatnonzero(valid)
        if self.kind == "bytes":
            import pyarrow as pa
            allkeys = [k for c in self._chunks for k in c[0]]
            arr = pa.array([allkeys[i] for i in rows.tolist()], type=pa.binary()) if len(rows) else \
                pa.array([], type=pa.binary())
            enc = arr.dictionary_encode()  # dictionary in order of first appearance
            uniq = enc.dictionary.to_pylist()
            inv = np.asarray(enc.indices, dtype=np.int64)
            order = np.argsort(inv, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(np.bincount(inv, minlength=len(uniq)))])
            grouped = rows[order]
            sorted_ids = sorted(range(len(uniq)), key=lambda i: uniq[i])
            rank = {g: i for i, g in enumerate(sorted_ids)}
            entries = [(uniq[g], grouped[bounds[g]:bounds[g + 1]]) for g in sorted_ids]
            insertion = [rank[g] for g in range(len(uniq))]
            return nulls, entries, insertion
        keys = np.concatenate([np.asarray(c[0], dtype=np.int64) for c in self._chunks]) \
            if self._chunks else np.zeros(0, np.int64)
        kv = keys[rows]
        sk = sort_key_array(kv, self.kind)
        order = np.argsort(sk, kind="stable")
        ssk = sk[order]
        starts = np.flatnonzero(np.concatenate([[True], ssk[1:] != ssk[:-1]])) if len(ssk) else \
            np.zeros(0, np.int64)
        bounds = np.concatenate([starts, [len(ssk)]])
        grouped = rows[order]
        uniq_keys = kv[order[starts]].tolist()
        first = grouped[starts]
        entries = [(uniq_keys[g], grouped[bounds[g]:bounds[g + 1]]) for g in range(len(starts))]
        insertion = np.argsort(first, kind="stable").tolist()
        return nulls, entries, insertion

    def _body_order(self, entries, insertion):
        """Indexes of ``entries`` in the iteration order of the ``java.util.HashMap`` the
        Java writer fills with ``computeIfAbsent`` in order of first appearance (bitmap
        bodies, and v1 headers)."""
        kind = self.kind
        wide = isinstance(self.type, (T.BigIntType, T.TimestampType, T.LocalZonedTimestampType))
        keys = [entries[g][0] for g in insertion]
        hashes = [java_hash_code(kind, k, wide) for k in keys]
        if kind == "bytes":
            def cmp(a, b):  # BinaryString.compareTo: unsigned bytes, then length
                return (a > b) - (a < b)
        else:
            sk = _sort_key(kind)  # Integer/Long/Float/Double/Boolean.compareTo

            def cmp(a, b):
                a, b = sk(a), sk(b)
                return (a > b) - (a < b)
        return [insertion[i] for i in java_hashmap_order(keys, hashes, cmp)]

    def to_bytes(self) -> bytes:
        nulls, entries, insertion = self._groups()
        body = bytearray()
        n_null = len(nulls)
        null_offset, null_length = None, None
        if n_null:
            null_data = roaring.serialize(roaring.from_rows(nulls))
            null_length = len(null_data)  # Java records the null bitmap's size even for one null
            if n_null == 1:
                null_offset = -1 - int(nulls[0])
            else:
                null_offset = 0
                body += null_data
        encoded = [self.encode_key(k) for k, _ in entries]
        placed = {}
        hash_order = self._body_order(entries, insertion)
        for g in hash_order:
            rows = entries[g][1]
            if len(rows) == 1:
                placed[g] = (-1 - int(rows[0]), -1)
            else:
                data = roaring.serialize(roaring.from_rows(rows))
                placed[g] = (len(body), len(data))
                body += data
        if self.version == 1:
            items = [(encoded[g],) + placed[g] for g in hash_order]
        else:
            items = [(encoded[g],) + placed[g] for g in range(len(entries))]
        head = bytearray()
        head += struct.pack(">bii", self.version, self.row_count, len(entries))
        head += struct.pack(">b", 1 if n_null else 0)
        if self.version == 1:
            if n_null:
                head += struct.pack(">i", null_offset)
            for ek, off, _ in items:
                head += ek + struct.pack(">i", off)
            return bytes(head) + bytes(body)
        if n_null:
            head += struct.pack(">ii", null_offset, null_length)
        blocks = []  # [first key bytes, block bytes]
        cur = None
        for ek, off, ln in items:
            cost = 8 + len(ek)
            if cur is None or (cur[2] > 0 and cur[1] + cost > self.block_size):
                cur = [ek, 4, 0, bytearray()]
                blocks.append(cur)
            cur[3] += ek + struct.pack(">ii", off, ln)
            cur[1] += cost
            cur[2] += 1
        head += struct.pack(">i", len(blocks))
        block_bytes = bytearray()
        for first, _, count, data in blocks:
            head += first + struct.pack(">i", len(block_bytes))
            block_bytes += struct.pack(">i", count) + data
        head += struct.pack(">i", len(block_bytes))
        return bytes(head) + bytes(block_bytes) + bytes(body)

    # ------------------------------------------------------------------ reading
    @classmethod
    def from_bytes(cls, data, data_type: T.DataType, path=None, offset=0) -> "BitmapReader":
        return BitmapReader(_Source(data=data, path=path, base=offset), data_type)

    @classmethod
    def open(cls, read, length: int, data_type: T.DataType, path=None, offset=0) -> "BitmapReader":
        """Lazy reader over ``read(off, n)`` (offsets relative to the index start)."""
        return BitmapReader(_Source(read=read, length=length, path=path, base=offset), data_type)


class BitmapReader:
    """Answers predicates from a serialized bitmap index, reading only what it needs."""

    def __init__(self, src: _Source, data_type: T.DataType):
        self.src = src
        self.type = data_type
        self.kind = kind_of(data_type)
        self.fixed, self.encode_key, self.decode_key = _codec(data_type)
        self._sk = _sort_key(self.kind)
        self._bitmaps = {}
        self._blocks = {}
        self._v1_offsets = None
        self._parse_head()

    def _corrupt(self, msg, off):
        return CorruptFileError(msg, path=self.src.path, offset=self.src.base + off)

    def _parse_head(self):
        src = self.src
        # the header is read in growing prefixes (values may be variable length)
        want = min(src.length, 4096)
        while True:
            buf = src.get(0, want) if want else memoryview(b"")
            try:
                self._parse_prefix(buf)
                return
            except IndexError:
                if want >= src.length:
                    raise self._corrupt("truncated bitmap index header", want) from None
                want = min(src.length, want * 4)

    def _parse_prefix(self, buf):
        end = len(buf)

        def take(fmt, pos):
            sz = struct.calcsize(fmt)
            if pos + sz > end:
                raise IndexError
            return struct.unpack_from(fmt, buf, pos), pos + sz

        (version,), pos = take(">b", 0)
        if version not in (1, 2):
            raise self._corrupt(f"unsupported bitmap index version {version}", 0)
        self.version = version
        (rows, nvalues, has_null), pos = take(">iib", pos)
        if rows < 0:
            raise self._corrupt(f"negative row count {rows}", 1)
        minimum = ((self.fixed or 4) + 4) if version == 1 else 1  # a v1 entry: key + int offset
        if nvalues < 0 or nvalues > rows or (version == 1 and nvalues * minimum > self.src.length):
            raise self._corrupt(f"bad distinct value count {nvalues}", 5)
        self.row_count = rows
        self.value_count = nvalues
        self.null_offset = None
        self.null_length = None
        if has_null:
            if version == 1:
                (self.null_offset,), pos = take(">i", pos)
            else:
                (self.null_offset, self.null_length), pos = take(">ii", pos)
        if version == 1:
            self.entries = {}
            for _ in range(nvalues):
                key, pos = self.decode_key(buf, pos, end)
                (off,), pos = take(">i", pos)
                self.entries[key] = (off, None)
            self.body_start = pos
            self._check_single(self.null_offset, 1)
            return
        (nblocks,), pos = take(">i", pos)
        if nblocks < 0 or nblocks > max(nvalues, 0) or (nvalues > 0 and nblocks == 0):
            raise self._corrupt(f"bad index block count {nblocks}", pos - 4)
        firsts, offs = [], []
        for _ in range(nblocks):
            key, pos = self.decode_key(buf, pos, end)
            (off,), pos = take(">i", pos)
            firsts.append(self._sk(key))
            offs.append(off)
        (body_offset,), pos = take(">i", pos)
        self.blocks_start = pos
        if body_offset < 0 or pos + body_offset > self.src.length:
            raise self._corrupt(f"bad bitmap body offset {body_offset}", pos - 4)
        bounds = offs + [body_offset]
        for i in range(nblocks):
            if not 0 <= bounds[i] < bounds[i + 1] or (i and firsts[i] <= firsts[i - 1]):
                raise self._corrupt("index blocks out of order", pos)
        self.block_firsts = firsts
        self.block_bounds = bounds
        self.body_start = pos + body_offset

    def _check_single(self, off, _):
        return off

    # -- bitmaps ---------------------------------------------------------
    def _bitmap_at(self, off, length):
        if off < 0:
            row = -1 - off
            if row >= self.row_count:
                raise self._corrupt(f"single-row value at row {row} of {self.row_count}", 0)
            return BitMap([row])
        start = self.body_start + off
        if length is None:
            # v1 records no lengths: a bitmap ends where the next one starts (or at the end)
            if self._v1_offsets is None:
                offs = {o for o, _ in self.entries.values() if o >= 0}
                if self.null_offset is not None and self.null_offset >= 0:
                    offs.add(self.null_offset)
                self._v1_offsets = sorted(offs)
            i = bisect.bisect_right(self._v1_offsets, off)
            nxt = self._v1_offsets[i] if i < len(self._v1_offsets) else self.src.length - self.body_start
            length = nxt - off
        if length < 0:
            raise self._corrupt(f"bad bitmap length {length}", start)
        data = bytes(self.src.get(start, length))
        bm, end = roaring.deserialize(data, 0, self.src.path)
        if end != length:
            raise self._corrupt("bitmap length disagrees with its content", start)
        if len(bm) and bm.max() >= self.row_count:
            raise self._corrupt("bitmap names rows past the row count", start)
        return bm

    def _block(self, i):
        blk = self._blocks.get(i)
        if blk is not None:
            return blk
        lo, hi = self.block_bounds[i], self.block_bounds[i + 1]
        buf = self.src.get(self.blocks_start + lo, hi - lo)
        end = len(buf)
        try:
            (count,) = struct.unpack_from(">i", buf, 0)
            if count < 0 or count * 9 > end:
                raise self._corrupt(f"bad entry count {count}", self.blocks_start + lo)
            pos = 4
            blk = {}
            for _ in range(count):
                key, pos = self.decode_key(buf, pos, end)
                if pos + 8 > end:
                    raise IndexError
                off, ln = struct.unpack_from(">ii", buf, pos)
                pos += 8
                blk[key] = (off, ln)
        except (IndexError, struct.error):
            raise self._corrupt("truncated bitmap index block", self.blocks_start + lo) from None
        self._blocks[i] = blk
        return blk

    def _lookup(self, key):
        if self.version == 1:
            return self.entries.get(key)
        if not self.block_firsts:
            return None
        i = bisect.bisect_right(self.block_firsts, self._sk(key)) - 1
        if i < 0:
            return None
        return self._block(i).get(key)

    def _value_bitmap(self, key) -> BitMap:
        bm = self._bitmaps.get(key)
        if bm is None:
            e = self._lookup(key)
            bm = BitMap() if e is None else self._bitmap_at(*e)
            self._bitmaps[key] = bm
        return bm

    def null_bitmap(self) -> BitMap:
        if self.null_offset is None:
            return BitMap()
        if self.null_offset < 0:
            return self._bitmap_at(self.null_offset, -1)
        return self._bitmap_at(self.null_offset, self.null_length)

    def _all(self) -> BitMap:
        bm = BitMap()
        if self.row_count:
            bm.add_range(0, self.row_count)
        return bm

    def _keys(self, values):
        return [literal_key(v, self.type) for v in values if v is not None]

    def values(self):
        """Every distinct non-null key in the index (reads every block)."""
        if self.version == 1:
            return list(self.entries)
        out = []
        for i in range(len(self.block_firsts)):
            out.extend(self._block(i))
        return out

    # -- predicates ----------------------------------------------------------
    def eq(self, value):
        return BitmapResult(self._value_bitmap(literal_key(value, self.type)))

    def isin(self, values):
        bm = BitMap()
        for k in self._keys(values):
            bm |= self._value_bitmap(k)
        return BitmapResult(bm)

    def ne(self, value):
        return BitmapResult(self._all() - self._value_bitmap(literal_key(value, self.type)))

    def not_in(self, values):
        return BitmapResult(self._all() - self.isin(values).bitmap)

    def is_null(self):
        return BitmapResult(self.null_bitmap())

    def is_not_null(self):
        return BitmapResult(self._all() - self.null_bitmap())

    # ranges: every distinct value in range (v2 skips the blocks that lie wholly outside)
    def _range(self, low, low_inc, high, high_inc):
        if self.kind in ("float", "double"):
            return REMAIN  # NaN and signed zeros: leave float ranges to the data
        sk = self._sk
        lo = None if low is None else sk(literal_key(low, self.type))
        hi = None if high is None else sk(literal_key(high, self.type))

        def ok(k):
            x = sk(k)
            if lo is not None and (x < lo or (x == lo and not low_inc)):
                return False
            if hi is not None and (x > hi or (x == hi and not high_inc)):
                return False
            return True

        if self.version == 1:
            cands = [(k, e) for k, e in self.entries.items() if ok(k)]
        else:
            cands = []
            firsts = self.block_firsts
            for i in range(len(firsts)):
                if hi is not None and firsts[i] > hi:
                    break
                if lo is not None and i + 1 < len(firsts) and firsts[i + 1] < lo:
                    continue
                cands.extend((k, e) for k, e in self._block(i).items() if ok(k))
        bm = BitMap()
        for k, e in cands:
            bm |= self._bitmap_at(*e)
        return BitmapResult(bm)

    def lt(self, value):
        return self._range(None, False, value, False)

    def le(self, value):
        return self._range(None, False, value, True)

    def gt(self, value):
        return self._range(value, False, None, False)

    def ge(self, value):
        return self._range(value, True, None, False)

    def between(self, low, high):
        return self._range(low, True, high, True)
