"""Applying deletes to rows: position keep-masks and the equality-delete anti-join.

Position deletes and deletion vectors arrive as sorted int64 row positions; :func:`keep_mask` turns them into a
boolean keep-mask for a row range in one kernel pass. :func:`compact` keeps the rows of Arrow columns that a mask
keeps, copying runs of consecutive survivors (one copy per run rather than a test per value). :class:`EqualityDeleteSet` holds the key columns of the
equality-delete rows that apply to one data file and marks the data rows whose key equals one of them, with the
spec's null semantics (a null in a delete row matches a null in the data row), across type promotions
(int -> long, float never allowed, decimal precision widening) and for columns missing from the data file (read
as null).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import _speedups
from ..batch import bitmap_bools, int64_values, pool_array
from .._pykernels import status
from ..errors import CorruptFileError, InvalidArgumentError, UnsupportedTypeError
from ..expressions import evaluate_numpy

__all__ = ["keep_mask", "merge_positions", "keep_runs", "position_runs", "compact", "compact_fixed_columns",
           "fusable", "decode_dictionary", "dictionary_indices", "dictionary_mask",
           "EqualityDeleteSet", "normalize_key_column"]

_EMPTY_U8 = np.zeros(0, dtype=np.uint8)


def _k():
    return _speedups.kernel("deletes")


def merge_positions(arrays) -> np.ndarray:
    """Merge position arrays into one sorted array without duplicates (inputs are sorted here if needed)."""
    k = _k()
    out = None
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.int64)
        if a.size == 0:
            continue
        if not k.is_sorted(a, True):
            a = np.unique(a)          # sorted, each position once
        if out is None:
            out = a
            continue
        buf = np.empty(out.size + a.size, dtype=np.int64)
        n = k.merge_sorted_unique(out, a, buf)
        out = buf[:n]
    return out if out is not None else np.zeros(0, dtype=np.int64)


def keep_mask(positions, start: int, count: int) -> np.ndarray:
    """Boolean mask of the rows ``start .. start+count`` that are NOT in ``positions`` (sorted int64)."""
    keep = np.ones(count, dtype=np.uint8)
    positions = np.ascontiguousarray(positions, dtype=np.int64)
    if positions.size and count:
        rc = _k().mask_positions(positions, int(start), int(count), keep)
        if rc < 0:  # pragma: no cover - buffers are sized here
            raise InvalidArgumentError(status.describe(rc))
    return keep.view(np.bool_)


class Runs:
    """The kept rows of a mask as runs of consecutive rows: ``starts``, ``lengths`` (int64), ``count`` runs
    holding ``kept`` rows out of ``rows``."""

    __slots__ = ("starts", "lengths", "count", "kept", "rows", "_mask")

    def __init__(self, starts, lengths, count, rows, mask):
        self.starts, self.lengths, self.count, self.rows = starts, lengths, int(count), int(rows)
        self.kept = int(lengths[:count].sum())
        self._mask = mask

    def keep(self) -> np.ndarray:
        """The keep-mask (bool) the runs describe."""
        if self._mask is None:
            # runs are maximal (a dropped row between two runs): starts and ends are distinct positions
            d = np.zeros(self.rows + 1, dtype=np.int8)
            s, ln = self.starts[:self.count], self.lengths[:self.count]
            d[s] = 1
            d[s + ln] = -1
            self._mask = np.cumsum(d[:-1], dtype=np.int8) > 0
        return self._mask

    def mask(self):
        """The keep-mask as an Arrow BooleanArray (for types compacted by Arrow's filter)."""
        bits = np.packbits(self.keep().view(np.uint8), bitorder="little")
        return pa.BooleanArray.from_buffers(pa.bool_(), self.rows, [None, pa.py_buffer(bits)])

    def clip(self, lo, hi):
        """The runs inside rows lo..hi, relative to lo."""
        s, ln = self.starts[:self.count], self.lengths[:self.count]
        e = s + ln
        sel = (e > lo) & (s < hi)
        cs = np.maximum(s[sel], lo)
        ce = np.minimum(e[sel], hi)
        return Runs(cs - lo, ce - cs, len(cs), hi - lo, None if self._mask is None else self._mask[lo:hi])


def keep_runs(keep: np.ndarray) -> Runs:
    """The runs of True in a boolean keep-mask (one kernel pass)."""
    keep = np.ascontiguousarray(keep, dtype=np.bool_)
    n = len(keep)
    room = min((n + 1) // 2, n - int(np.count_nonzero(keep)) + 1) or 1
    starts = np.empty(room, dtype=np.int64)
    lengths = np.empty_like(starts)
    count = _k().mask_runs(keep.view(np.uint8), starts, lengths)
    if count < 0:  # pragma: no cover - sized here
        raise InvalidArgumentError(status.describe(count))
    return Runs(starts, lengths, count, n, keep)


def position_runs(positions, start: int, count: int) -> Runs:
    """The runs of rows ``start .. start+count`` that are NOT in ``positions`` (sorted int64), straight from
    the positions in one kernel pass: no mask is built."""
    positions = np.ascontiguousarray(positions, dtype=np.int64)
    lo, hi = np.searchsorted(positions, [start, start + count])
    starts = np.empty(int(hi - lo) + 1, dtype=np.int64)
    lengths = np.empty_like(starts)
    k = _k().position_runs(positions, int(start), int(count), starts, lengths)
    if k < 0:
        raise InvalidArgumentError(f"cannot make runs from the delete positions: {status.describe(k)}")
    return Runs(starts, lengths, k, count, None)


def _np(buf, dtype=np.uint8):
    return np.frombuffer(buf, dtype=dtype) if buf is not None else None


def _alloc(nbytes, dtype=np.uint8, zero=False):
    """An output buffer from Arrow's memory pool (see ``batch.pool_array``) as (Arrow buffer, NumPy view)."""
    arr = pool_array(max(int(nbytes), 1) // np.dtype(dtype).itemsize or 1, dtype, zero)
    return pa.py_buffer(arr), arr

def _fixed_width(t) -> int:
    """Byte width of a fixed-width Arrow type that compacts by plain copies, else 0."""
    if pa.types.is_boolean(t) or pa.types.is_dictionary(t) or isinstance(t, pa.ExtensionType):
        return 0
    if (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t) or pa.types.is_decimal(t)
            or pa.types.is_fixed_size_binary(t)):
        try:
            bits = t.bit_width
        except ValueError:
            return 0
        return bits // 8 if bits % 8 == 0 else 0
    return 0


def _compact_validity(arr, runs, k):
    if arr.null_count == 0:
        return None, 0
    buf, out = _alloc((runs.kept + 7) // 8, zero=True)
    ones = k.take_runs_bits(_np(arr.buffers()[0]), arr.offset, runs.starts, runs.lengths, runs.count, out)
    if ones < 0:
        raise InvalidArgumentError("validity bitmap shorter than its array")
    return buf, runs.kept - ones


def _compact_array(arr: pa.Array, runs: Runs) -> pa.Array:
    k = _k()
    t = arr.type
    n = runs.kept
    w = _fixed_width(t)
    if w:
        return compact_fixed_columns([arr], runs)[0]
    if pa.types.is_boolean(t):
        validity, nulls = _compact_validity(arr, runs, k)
        buf, out = _alloc((n + 7) // 8, zero=True)
        if k.take_runs_bits(_np(arr.buffers()[1]), arr.offset, runs.starts, runs.lengths, runs.count, out) < 0:
            raise InvalidArgumentError("value bitmap shorter than its array")
        return pa.Array.from_buffers(t, n, [validity, buf], null_count=nulls)
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    if large or pa.types.is_string(t) or pa.types.is_binary(t):
        odt = np.int64 if large else np.int32
        validity, nulls = _compact_validity(arr, runs, k)
        bufs = arr.buffers()
        offsets = _np(bufs[1], odt)[arr.offset:arr.offset + len(arr) + 1]
        data = _np(bufs[2]) if bufs[2] is not None else _EMPTY_U8
        size = k.runs_data_size(offsets, runs.starts, runs.lengths, runs.count, len(data))
        if size < 0:
            raise InvalidArgumentError("offsets outside the data buffer")
        obuf, out_off = _alloc((n + 1) * np.dtype(odt).itemsize, odt)
        dbuf, out_data = _alloc(size)
        if k.take_runs_binary(offsets, data, runs.starts, runs.lengths, runs.count, out_off, out_data) < 0:
            raise InvalidArgumentError("offsets outside the data buffer")
        return pa.Array.from_buffers(t, n, [validity, obuf, dbuf], null_count=nulls)
    import pyarrow.compute as pc
    return pc.filter(arr, runs.mask())


def _one_array(column):
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else None
    return column


def fusable(column) -> bool:
    """Whether ``column`` can go to :func:`compact_fixed_columns` (one chunk of a fixed-width type)."""
    arr = _one_array(column)
    return arr is not None and _fixed_width(arr.type) > 0


def compact_fixed_columns(columns, runs: Runs) -> list:
    """:func:`compact` for several fixed-width columns (see :func:`fusable`) of the same rows: the values of all of
    them are copied in one pass over the runs."""
    k = _k()
    arrays = [_one_array(c) for c in columns]
    widths = [_fixed_width(a.type) for a in arrays]
    srcs, outs, bufs = [], [], []
    for a, w in zip(arrays, widths):
        srcs.append(_np(a.buffers()[1])[a.offset * w:(a.offset + len(a)) * w])
        buf, out = _alloc(runs.kept * w)
        bufs.append(buf)
        outs.append(out)
    if k.take_runs_fixed_columns(srcs, widths, runs.starts, runs.lengths, runs.count, outs) < 0:
        raise InvalidArgumentError("value buffer shorter than its array")
    result = []
    for a, buf in zip(arrays, bufs):
        validity, nulls = _compact_validity(a, runs, k)
        result.append(pa.Array.from_buffers(a.type, runs.kept, [validity, buf], null_count=nulls))
    return result


def compact(column, runs: Runs):
    """The rows of an Arrow array or chunked array that ``runs`` keep. Flat types (numbers, temporal, decimal,
    fixed binary, boolean, strings and binary) are copied run by run; nested and dictionary types go through
    Arrow's filter."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return _compact_array(column.chunk(0), runs)
        out, lo = [], 0
        for ch in column.chunks:
            hi = lo + len(ch)
            out.append(_compact_array(ch, runs.clip(lo, hi)))
            lo = hi
        return pa.chunked_array(out, type=column.type)
    return _compact_array(column, runs)


_BINARY_TARGETS = {pa.string(): (True, np.int32), pa.large_string(): (True, np.int64),
                   pa.binary(): (False, np.int32), pa.large_binary(): (False, np.int64)}


def dictionary_decodable(value_type, target) -> bool:
    """Whether :func:`decode_dictionary` turns dictionaries of ``value_type`` into ``target`` columns."""
    have = _BINARY_TARGETS.get(value_type)
    want = _BINARY_TARGETS.get(target)
    return have is not None and want is not None and have[0] == want[0]


def _bounded_size(d_off, rows, odt):
    """Room for ``rows`` values of a dictionary without counting their bytes: ``rows`` times its longest value,
    when that is at most twice what ``rows`` values of its mean length take (a dictionary of values of similar
    length, as low-cardinality strings are) and fits the offsets; else None (the bytes are counted first)."""
    ndict = len(d_off) - 1
    if ndict <= 0 or rows <= 0:
        return None
    lengths = np.diff(d_off)
    longest = int(lengths.max())
    total = int(d_off[-1]) - int(d_off[0])
    if longest < 0 or total < 0:
        return None
    bound = rows * longest
    if bound > 2 * rows * total // ndict + (1 << 20) or (odt is np.int32 and bound > np.iinfo(np.int32).max):
        return None
    return bound


def _decode_dictionary_chunk(arr, target, runs):
    k = _k()
    odt = _BINARY_TARGETS[target][1]
    n = len(arr) if runs is None else runs.kept
    if runs is None:
        runs = Runs(np.array([0], np.int64), np.array([len(arr)], np.int64), 1, len(arr), None)
    dictionary = arr.dictionary
    if dictionary.null_count:
        return compact(arr.cast(target), runs) if runs.kept < runs.rows else arr.cast(target)
    if dictionary.type != (pa.large_binary() if odt is np.int64 else pa.binary()) and \
            dictionary.type != (pa.large_string() if odt is np.int64 else pa.string()):
        dictionary = dictionary.cast(pa.large_binary() if odt is np.int64 else pa.binary())
    dbufs = dictionary.buffers()
    d_off = _np(dbufs[1], odt)[dictionary.offset:dictionary.offset + len(dictionary) + 1]
    d_data = _np(dbufs[2]) if dbufs[2] is not None else _EMPTY_U8
    indices = arr.indices
    if indices.type != pa.int32():
        indices = indices.cast(pa.int32())
    idx = _np(indices.buffers()[1], np.int32)[indices.offset:indices.offset + len(indices)]
    valid, valid_off = _EMPTY_U8, 0
    if arr.null_count:
        valid, valid_off = _np(arr.buffers()[0]), arr.offset
    size = _bounded_size(d_off, n, odt)
    if size is None:
        size = k.dictionary_data_size(d_off, len(d_data), idx, valid, valid_off, runs.starts, runs.lengths,
                                      runs.count)
    if size < 0:
        raise CorruptFileError(f"dictionary-encoded column: {status.describe(size)}")
    if odt is np.int32 and size > np.iinfo(np.int32).max:
        # more than 2 GiB of values: halves, each as its own chunk
        half = len(arr) // 2
        return pa.chunked_array([_decode_dictionary_chunk(arr.slice(0, half), target, runs.clip(0, half)),
                                 _decode_dictionary_chunk(arr.slice(half), target, runs.clip(half, len(arr)))],
                                type=target)
    obuf, out_off = _alloc((n + 1) * np.dtype(odt).itemsize, odt)
    dbuf, out_data = _alloc(size)
    rc = k.take_runs_dictionary(d_off, d_data, idx, valid, valid_off, runs.starts, runs.lengths, runs.count,
                                out_off, out_data)
    if rc < 0:
        raise CorruptFileError(f"dictionary-encoded column: {status.describe(rc)}")
    validity, nulls = _compact_validity(arr, runs, k) if arr.null_count else (None, 0)
    return pa.Array.from_buffers(target, n, [validity, obuf, dbuf], null_count=nulls)


def decode_dictionary(column, target, runs: Runs | None = None):
    """A dictionary-encoded string/binary array or chunked array as a plain ``target`` column (string, binary or
    their large forms), keeping only the rows of ``runs`` when given: each kept row's value is copied once
    from the dictionary, so applying deletes here costs nothing beyond the decoding."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return _decode_dictionary_chunk(column.chunk(0), target, runs)
        out, lo = [], 0
        for ch in column.chunks:
            hi = lo + len(ch)
            got = _decode_dictionary_chunk(ch, target, None if runs is None else runs.clip(lo, hi))
            out.extend(got.chunks if isinstance(got, pa.ChunkedArray) else [got])
            lo = hi
        return pa.chunked_array(out, type=target)
    return _decode_dictionary_chunk(column, target, runs)


def dictionary_indices(chunk):
    """(the int32 indices of a dictionary-encoded array as NumPy, a null row's slot reset to 0 since it holds no
    meaning; one bool per row, True where valid, or None when no row is null)."""
    indices, n = chunk.indices, len(chunk)
    idx = np.frombuffer(indices.buffers()[1], np.int32, count=indices.offset + n)[indices.offset:]
    if not chunk.null_count:
        return idx, None
    valid = bitmap_bools(indices.buffers()[0], indices.offset, n)
    return np.where(valid, idx, 0), valid


def dictionary_mask(expr, name, column, conform=None, path=None) -> np.ndarray:
    """The mask of ``expr``, whose only column is ``name``, over ``column`` (a dictionary-encoded array or chunked
    array): ``expr`` is evaluated once per dictionary value (and once on a null, when a row is null), and each row
    takes the result of its value by its index (the ``lookup_flags`` kernel), so the rows' values are never
    decoded. A row's result depends only on its own value, so this is the mask a row-by-row evaluation gives.
    ``conform``: turns a dictionary into the column's table type before the evaluation; ``path``: the file, named
    by the error an index outside the dictionary raises. One bool per row."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = np.empty(len(column), np.bool_)
    flags = out.view(np.uint8)
    at = 0
    for ch in chunks:
        n = len(ch)
        if not n:
            continue
        values = ch.dictionary if conform is None else conform(ch.dictionary)
        table = evaluate_numpy(expr, pa.table({name: values})).view(np.uint8) if len(values) else \
            np.zeros(1, np.uint8)
        idx, valid = dictionary_indices(ch)
        rc = _k().lookup_flags(table, idx, flags[at:at + n])
        if rc < 0:
            raise CorruptFileError(f"a dictionary index outside the dictionary of {len(values)} values", path=path)
        if valid is not None:
            null = evaluate_numpy(expr, pa.table({name: pa.nulls(1, values.type)}))[0]
            out[at:at + n][~valid] = null
        at += n
    return out


# ---------------------------------------------------------------------------
# equality deletes
# ---------------------------------------------------------------------------

def _validity(arr: pa.Array) -> np.ndarray:
    """One uint8 flag per row (1 = valid), or an empty array when no row is null. Read from the validity bitmap
    (Arrow's own conversions would import pandas on a first use: a cost a read's first equality delete paid)."""
    if arr.null_count == 0:
        return _EMPTY_U8
    bits = arr.buffers()[0]
    if bits is None:
        return np.ones(len(arr), dtype=np.uint8)
    return bitmap_bools(bits, arr.offset, len(arr)).view(np.uint8)


def normalize_key_column(arr, length: int | None = None):
    """One equality key column as a list of hashable parts.

    Each part is ``("i", int64 values, uint8 validity or empty)`` or ``("b", int64 offsets, uint8 data,
    validity)``. Integers, booleans, dates, times and timestamps become int64 (so int and long compare equal),
    decimals their two 64-bit halves of the unscaled value at the column's scale, strings/binary/fixed/uuid their
    bytes. ``None`` (a column missing from the file) is an all-null column of ``length`` rows.
    """
    if arr is None or (isinstance(arr, (pa.Array, pa.ChunkedArray)) and pa.types.is_null(arr.type)):
        n = length if arr is None else len(arr)
        return [("i", np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.uint8))], pa.null()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if isinstance(t, pa.ExtensionType):  # e.g. arrow.uuid
        return normalize_key_column(arr.storage, length)
    valid = _validity(arr)
    if pa.types.is_floating(t):
        raise UnsupportedTypeError(f"float/double columns cannot be equality-delete keys ({t})")
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        a64 = arr if t == pa.int64() else arr.cast(pa.int64())
        if a64.null_count:
            a64 = a64.fill_null(0)
        return [("i", int64_values(a64), valid)], "int"
    if pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_timestamp(t):
        unit_t = t
        if pa.types.is_date64(t):
            arr = arr.cast(pa.date32())
        elif pa.types.is_time32(t):
            arr = arr.cast(pa.time64("us"))
        elif pa.types.is_timestamp(t) and t.unit in ("s", "ms"):
            arr = arr.cast(pa.timestamp("us", t.tz))
        width = pa.int32() if pa.types.is_date(arr.type) else pa.int64()
        vals = arr.view(width) if arr.null_count == 0 else arr.fill_null(pa.scalar(0, width).cast(arr.type))
        if arr.null_count:
            vals = vals.view(width)
        kind = "date" if pa.types.is_date(unit_t) else ("time" if pa.types.is_time(unit_t)
                                                        else "ts:" + str(arr.type.unit))
        return [("i", int64_values(vals), valid)], kind
    if pa.types.is_decimal(t):
        if t.bit_width != 128:
            arr = arr.cast(pa.decimal128(min(t.precision, 38), t.scale))
        buf = arr.buffers()[1]
        words = np.frombuffer(buf, dtype=np.int64, count=2 * (arr.offset + len(arr)))[2 * arr.offset:]
        lo = np.ascontiguousarray(words[0::2])
        hi = np.ascontiguousarray(words[1::2])
        if arr.null_count:
            lo = np.where(valid.view(np.bool_), lo, 0)
            hi = np.where(valid.view(np.bool_), hi, 0)
        return [("i", lo, valid), ("i", hi, valid)], "dec:%d" % t.scale
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or \
            pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t) \
            or pa.types.is_string_view(t):
        if pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t) or pa.types.is_string_view(t):
            arr = arr.cast(pa.large_binary())
        n = len(arr)
        bufs = arr.buffers()
        wide = pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type)
        offs = np.frombuffer(bufs[1], dtype=np.int64 if wide else np.int32, count=arr.offset + n + 1)[arr.offset:]
        offs = np.ascontiguousarray(offs, dtype=np.int64)   # the data buffer is used in place
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else _EMPTY_U8
        return [("b", offs, data, valid)], "bytes"
    raise UnsupportedTypeError(f"unsupported equality-delete key type {t}")


def _hash_parts(parts_per_column, n) -> np.ndarray:
    k = _k()
    h = np.zeros(n, dtype=np.uint64)
    first = True
    for parts in parts_per_column:
        for part in parts:
            if part[0] == "i":
                rc = k.hash_int64(part[1], part[2], h, not first)
            else:
                rc = k.hash_binary(part[1], part[2], part[3], h, not first)
            if rc < 0:
                raise CorruptFileError("bad equality key column: " + status.describe(rc))
            first = False
    return h


def _part_validity(part):
    v = part[2] if part[0] == "i" else part[3]
    return None if v.size == 0 else v.view(np.bool_)


def _part_valid(part, n):
    v = part[2] if part[0] == "i" else part[3]
    return np.ones(n, dtype=np.bool_) if v.size == 0 else v.view(np.bool_)[:n]


def _compatible(kind_a, kind_b):
    if kind_a is None or kind_b is None or pa.null() in (kind_a, kind_b):
        return True
    if isinstance(kind_a, pa.DataType) or isinstance(kind_b, pa.DataType):
        return True
    return kind_a == kind_b or (kind_a.startswith("dec:") and kind_b.startswith("dec:") and kind_a == kind_b)


class EqualityDeleteSet:
    """The delete keys of equality-delete rows for one list of equality field ids.

    ``columns``: one Arrow array per key column (in the order of ``field_ids``), all of the same length.
    """

    def __init__(self, field_ids, columns):
        self.field_ids = tuple(field_ids)
        if len(columns) != len(self.field_ids):
            raise InvalidArgumentError("one key column per equality field id is needed")
        n = len(columns[0]) if columns else 0
        if any(len(c) != n for c in columns):
            raise InvalidArgumentError("equality key columns differ in length")
        self.num_rows = n
        norm = [normalize_key_column(c, n) for c in columns]
        self._parts = [p for p, _ in norm]
        self._kinds = [kd for _, kd in norm]
        self._index = None
        self._keyset = None
        # one integer-like key column whose values span a dense range: an exact bitmap of that range (integer
        # data keys are then probed in it, and the hash table is built only if other keys come)
        self._bitmap = _range_bitmap(self._parts[0][0]) \
            if n and len(self._parts) == 1 and len(self._parts[0]) == 1 and self._parts[0][0][0] == "i" else None

    def _hash_index(self):
        """(key hashes, open-addressing slots, bloom-style filter), built on first use."""
        if self._index is None:
            n = self.num_rows
            hashes = _hash_parts(self._parts, n)
            m = 2
            while m <= 2 * n:
                m <<= 1
            slots = np.full(m, -1, dtype=np.int64)
            rc = _k().build_hash_table(hashes, slots)
            if rc < 0:  # pragma: no cover - sized here
                raise InvalidArgumentError(status.describe(rc))
            nbytes = 64
            while nbytes * 8 < 16 * max(n, 1):
                nbytes <<= 1
            filt = np.zeros(nbytes, dtype=np.uint8)
            _k().build_filter(hashes, filt)
            self._index = (hashes, slots, filt)
        return self._index

    @property
    def _hashes(self):
        return self._hash_index()[0]

    @property
    def _slots(self):
        return self._hash_index()[1]

    @property
    def _filter(self):
        return self._hash_index()[2]

    @classmethod
    def concat(cls, field_ids, tables):
        """One set from several delete tables (each a list of key columns)."""
        cols = []
        for i in range(len(field_ids)):
            parts = [t[i] for t in tables]
            parts = [p.combine_chunks() if isinstance(p, pa.ChunkedArray) else p for p in parts]
            types = {p.type for p in parts if not pa.types.is_null(p.type)}
            if len(types) > 1:
                target = _common_type(types)
                parts = [p.cast(target) for p in parts]
            elif types:
                target = types.pop()
                parts = [p.cast(target) if pa.types.is_null(p.type) else p for p in parts]
            cols.append(pa.concat_arrays(parts) if parts else pa.array([], pa.null()))
        return cls(field_ids, cols)

    def __len__(self):
        return self.num_rows

    def matches(self, columns, num_rows: int | None = None) -> np.ndarray:
        """Boolean array: True where a data row's key equals some delete key. ``columns`` holds one Arrow array
        per key field id (``None`` for a column the data file does not have: all null)."""
        return self._probe(columns, num_rows, False)

    def misses(self, columns, num_rows: int | None = None) -> np.ndarray:
        """Boolean array: True where a data row's key equals no delete key (the rows an equality delete keeps);
        ``~matches(...)``, written in the same pass as the probe where the keys are one int64 column."""
        return self._probe(columns, num_rows, True)

    def _probe(self, columns, num_rows, miss):
        if num_rows is None:
            num_rows = next(len(c) for c in columns if c is not None)
        n = num_rows
        if self.num_rows == 0 or n == 0:
            return np.full(n, miss, dtype=np.bool_)
        norm = [normalize_key_column(c, n) for c in columns]
        parts = [p for p, _ in norm]
        for (kd_d, kd_k) in zip([kd for _, kd in norm], self._kinds):
            if not _compatible(kd_d, kd_k):
                raise InvalidArgumentError(f"equality key types differ between data ({kd_d}) and deletes ({kd_k})")
        k = _k()
        if self._bitmap is not None and len(parts) == 1 and len(parts[0]) == 1 and parts[0][0][0] == "i":
            lo, bits, nbits, null_hit = self._bitmap
            part = parts[0][0]
            out = np.empty(n, dtype=np.bool_)
            found = k.probe_int64_bitmap(part[1], part[2], lo, bits, nbits, null_hit, miss, out.view(np.uint8))
            if found < 0:  # pragma: no cover - sized here
                raise InvalidArgumentError(status.describe(found))
            return out
        # the probe writes only the hits (row, candidate build row): the outputs are sized for every row but
        # only their first `found` entries are touched; one int64 key column is hashed inside the probe
        rows = np.empty(n, dtype=np.int64)
        cand = np.empty(n, dtype=np.int64)
        hashes, slots, filt = self._hash_index()
        if len(parts) == 1 and len(parts[0]) == 1 and parts[0][0][0] == "i":
            part = parts[0][0]
            found = k.probe_int64_rows(part[1], part[2], hashes, slots, filt, rows, cand)
        else:
            found = k.probe_rows(hashes, slots, _hash_parts(parts, n), filt, rows, cand)
        if found < 0:  # pragma: no cover - sized here
            raise InvalidArgumentError(status.describe(found))
        if found == 0:
            return np.full(n, miss, dtype=np.bool_)
        rows = rows[:found]
        c = cand[:found]
        ok = np.ones(rows.size, dtype=np.bool_)
        for dparts, kparts in zip(parts, self._parts):
            for dp, kp in zip(dparts, kparts):
                if dp[0] == "i":
                    same = dp[1][rows] == kp[1][c]
                else:
                    same = _bytes_equal(dp, rows, kp, c)
                dval, kval = _part_validity(dp), _part_validity(kp)
                if dval is None and kval is None:
                    ok &= same
                    continue
                dv = np.ones(rows.size, np.bool_) if dval is None else dval[rows]
                kv = np.ones(rows.size, np.bool_) if kval is None else kval[c]
                ok &= np.where(dv & kv, same, ~dv & ~kv)
        out = np.zeros(n, dtype=np.bool_)
        out[rows[ok]] = True
        bad = rows[~ok]
        if bad.size:
            # a 64-bit hash collision between different keys: settle these rows exactly
            keys = self._python_keys()
            for r in bad.tolist():
                out[r] = _row_key(parts, r) in keys
        return np.logical_not(out, out=out) if miss else out

    def _python_keys(self):
        if self._keyset is None:
            self._keyset = {_row_key(self._parts, i) for i in range(self.num_rows)}
        return self._keyset


#: a key range is held as a bitmap when it needs at most this many bits per delete key (8 bytes: half of what
#: the hash table's slots alone take)
RANGE_BITS_PER_KEY = 64


def _range_bitmap(part):
    """(lo, bits, nbits, null_hit) for the exact bitmap of the values of one int64 key part over lo..lo+nbits,
    or None when the range is too sparse for its key count (:data:`RANGE_BITS_PER_KEY`)."""
    vals, valid = part[1], part[2]
    null_hit = bool(valid.size) and not bool(valid.all())
    v = vals[valid.view(np.bool_)] if valid.size else vals
    if v.size == 0:
        return 0, np.zeros(1, np.uint8), 0, null_hit
    lo, hi = int(v.min()), int(v.max())
    span = hi - lo + 1
    if span > RANGE_BITS_PER_KEY * max(int(v.size), 1024):
        return None
    mask = np.zeros(-(-span // 32) * 32, dtype=np.bool_)   # whole 32-bit words: the probe may read them whole
    mask[(v - np.int64(lo)).astype(np.int64)] = True   # hi - lo fits: the span is small
    return lo, np.packbits(mask, bitorder="little"), span, null_hit


def _common_type(types):
    types = list(types)
    if all(pa.types.is_integer(t) for t in types):
        return pa.int64()
    if all(pa.types.is_decimal(t) for t in types):
        scale = types[0].scale
        return pa.decimal128(38, scale)
    if all(pa.types.is_string(t) or pa.types.is_large_string(t) for t in types):
        return pa.large_string()
    if all(pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
           for t in types):
        return pa.large_binary()
    return types[0]


def _bytes_equal(dp, rows, kp, c):
    out = np.empty(rows.size, dtype=np.uint8)
    rc = _k().equal_binary(dp[1], dp[2], np.ascontiguousarray(rows, dtype=np.int64), kp[1], kp[2],
                           np.ascontiguousarray(c, dtype=np.int64), out)
    if rc < 0:
        raise CorruptFileError("bad equality key column: " + status.describe(rc))
    return out.view(np.bool_)


def _row_key(parts_per_column, r):
    key = []
    for parts in parts_per_column:
        for p in parts:
            if p[0] == "i":
                v = p[2]
                key.append(None if v.size and not v[r] else int(p[1][r]))
            else:
                v = p[3]
                key.append(None if v.size and not v[r] else bytes(p[2][p[1][r]:p[1][r + 1]]))
    return tuple(key)
