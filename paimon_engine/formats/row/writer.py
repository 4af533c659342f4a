"""``RowFileWriter``: column batches in, a Paimon ``.row`` file out."""

from __future__ import annotations

import math

import numpy as np

from ... import _speedups
from ... import types as T
from ..._pykernels import status
from ...batch import ColumnBatch
from ...errors import InvalidArgumentError, PaimonEngineError, SchemaError
from . import values as V
from .footer import BlockIndex, Footer

__all__ = ["RowFileWriter", "RowFileMetadata"]


class RowFileMetadata:
    """What the writer learned: sizes, counts and per-column stats keyed by field id."""

    __slots__ = ("path", "row_count", "file_size", "block_count", "value_counts", "null_counts",
                 "nan_counts", "lower_bounds", "upper_bounds")

    def __init__(self, path, row_count, file_size, block_count, value_counts, null_counts, nan_counts,
                 lower_bounds, upper_bounds):
        self.path = path
        self.row_count = row_count
        self.file_size = file_size
        self.block_count = block_count
        self.value_counts = value_counts
        self.null_counts = null_counts
        self.nan_counts = nan_counts
        self.lower_bounds = lower_bounds
        self.upper_bounds = upper_bounds

    def __repr__(self):
        return (f"RowFileMetadata(row_count={self.row_count}, file_size={self.file_size}, "
                f"block_count={self.block_count})")


def _np(buf, dtype):
    return np.frombuffer(buf, dtype=dtype) if buf is not None else np.zeros(0, dtype=dtype)


def _nulls(arr):
    """One uint8 flag per row (1 = null) or None: the validity bits unpacked and flipped."""
    if arr.null_count == 0:
        return None
    validity = arr.buffers()[0]
    if validity is None:
        return np.ones(len(arr), dtype=np.uint8)
    flags = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), count=arr.offset + len(arr),
                          bitorder="little")[arr.offset:]
    return np.bitwise_xor(flags, 1, out=flags)


def _bits(buf, offset, n):
    return np.unpackbits(_np(buf, np.uint8), bitorder="little", count=offset + n)[offset:]


_UNIT_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1000, "ns": 1}


def _descriptor(field, arr):
    """Kernel input tuple ``(kind, nulls, values, offsets, data)`` for one Arrow array."""
    import pyarrow as pa
    t = field.type
    k = V.kind_of(t)
    target = t.to_arrow()
    n = len(arr)
    if k in V.NESTED_KINDS:
        # nested values go through the per-value codec into a pre-encoded column
        pylist = arr.to_pylist()
        offsets = np.zeros(n + 1, dtype=np.int64)
        out = bytearray()
        for i, v in enumerate(pylist):
            if v is not None:
                V.encode_value(t, v, out)
            offsets[i + 1] = len(out)
        nulls = None
        if arr.null_count:
            nulls = np.fromiter((v is None for v in pylist), dtype=np.uint8, count=n)
        return (V.K_RAW, nulls, None, offsets, np.frombuffer(bytes(out) or b"\0", dtype=np.uint8))
    if k in (V.K_TS_MILLIS, V.K_TS_NANO):
        if not pa.types.is_timestamp(arr.type):
            try:
                arr = arr.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaError(f"column {field.name!r}: {arr.type} is not a timestamp ({e})") from None
        raw = _np(arr.buffers()[1], np.int64)[arr.offset:arr.offset + n]
        mult = _UNIT_NS[arr.type.unit]
        if k == V.K_TS_MILLIS:
            if mult >= 1_000_000:
                millis = raw * (mult // 1_000_000)
            else:
                millis = np.floor_divide(raw, 1_000_000 // mult)
            return (k, _nulls(arr), np.ascontiguousarray(millis, dtype=np.int64), None, None)
        if mult >= 1_000_000:
            millis = raw * (mult // 1_000_000)
            nanos = np.zeros(n, dtype=np.int64)
        else:
            millis, rem = np.divmod(raw, 1_000_000 // mult)
            nanos = rem * mult
        if t.precision <= 6:
            nanos = nanos - nanos % 1000
        return (k, _nulls(arr), np.ascontiguousarray(millis), np.ascontiguousarray(nanos), None)
    if not arr.type.equals(target):
        if k == V.K_BYTES and (pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
                               or pa.types.is_string(arr.type) or pa.types.is_binary(arr.type)):
            pass
        elif isinstance(t, T.TimeType):
            arr = _time_millis(arr, field)
        else:
            try:
                arr = arr.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaError(f"column {field.name!r}: cannot store {arr.type} as "
                                  f"{t.to_paimon_string()} ({e})") from None
    elif isinstance(t, T.TimeType):
        arr = _time_millis(arr, field)   # also checks that every value lies within a day
    bufs = arr.buffers()
    off = arr.offset
    nulls = _nulls(arr)
    if k == V.K_BOOL:
        return (k, nulls, np.ascontiguousarray(_bits(bufs[1], off, n)), None, None)
    if k == V.K_BYTES:
        large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
        offs = _np(bufs[1], np.int64 if large else np.int32)[off:off + n + 1]
        if len(offs) == 0:
            offs = np.zeros(n + 1, dtype=np.int64)
        data = _np(bufs[2], np.uint8)
        if len(data) == 0:
            data = np.zeros(1, dtype=np.uint8)
        # the array's own offsets (int32, or int64 for large types): the kernels read either width
        return (k, nulls, None, offs, data)
    if k == V.K_DEC_COMPACT:
        raw = _np(bufs[1], np.int64).reshape(-1, 2)[off:off + n, 0]
        return (k, nulls, np.ascontiguousarray(raw), None, None)
    if k == V.K_DEC_BIG:
        raw = _np(bufs[1], np.uint8)[16 * off:16 * (off + n)]
        return (k, nulls, np.ascontiguousarray(raw), None, None)
    width = {V.K_I8: 1, V.K_I16: 2, V.K_I32: 4, V.K_I64: 8, V.K_F32: 4, V.K_F64: 8}[k]
    raw = _np(bufs[1], np.uint8)[width * off:width * (off + n)]
    return (k, nulls, np.ascontiguousarray(raw), None, None)


def _time_millis(arr, field):
    """A time32/time64 array -> time32[ms] (millis of day, floored)."""
    import pyarrow as pa
    if not pa.types.is_time(arr.type):
        try:
            arr = arr.cast(field.type.to_arrow())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise SchemaError(f"column {field.name!r}: {arr.type} is not a time ({e})") from None
    unit = arr.type.unit
    raw = _np(arr.buffers()[1], np.int32 if arr.type.bit_width == 32 else np.int64)[arr.offset:arr.offset + len(arr)]
    div = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[unit]
    millis = raw.astype(np.int64) * 1000 if div is None else np.floor_divide(raw.astype(np.int64), div)
    valid = None if arr.null_count == 0 else arr.is_valid()
    mask = None if valid is None else ~valid.to_numpy(zero_copy_only=False)
    outside = (millis < 0) | (millis >= 86_400_000)
    if mask is not None:
        outside &= ~mask
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise SchemaError(f"column {field.name!r}: time value {int(raw[i])} {unit} at row {i} is outside a day")
    return pa.Array.from_pandas(millis.astype(np.int32), mask=mask, type=pa.time32("ms"))


# number columns whose bounds the ``numeric_min_max`` kernel finds: their kernel kind -> value dtype
_NUMERIC_TYPES = (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.FloatType, T.DoubleType)
_NUMERIC_DTYPES = {V.K_I8: np.dtype("<i1"), V.K_I16: np.dtype("<i2"), V.K_I32: np.dtype("<i4"),
                   V.K_I64: np.dtype("<i8"), V.K_F32: np.dtype("<f4"), V.K_F64: np.dtype("<f8")}


class _Stats:
    def __init__(self, schema):
        self.schema = schema
        self.values = {f.id: 0 for f in schema.fields}
        self.nulls = {f.id: 0 for f in schema.fields}
        self.nans = {}
        self.lower = {}
        self.upper = {}
        self.unbounded = set()

    def update(self, field, arr, desc=None):
        """Counts of ``arr``, and its bounds unless they are left to the ``column_bounds`` kernel, called as
        its rows are encoded: True then (a bytes column's, ``desc`` being its kernel descriptor: the rows of its
        extremes; an integer or float column's: NaN skipped and counted, -0.0 before 0.0), see
        :meth:`take_kernel_bounds`."""
        import pyarrow as pa
        import pyarrow.compute as pc
        fid = field.id
        self.values[fid] += len(arr)
        self.nulls[fid] += arr.null_count
        t = field.type
        if t.is_nested or isinstance(t, T.VariantType) or len(arr) == arr.null_count:
            return False
        if desc is not None and (desc[0] == V.K_BYTES or (desc[0] in _NUMERIC_DTYPES and
                                                          isinstance(t, _NUMERIC_TYPES))):
            return True
        if isinstance(t, (T.FloatType, T.DoubleType)):
            nan = pc.is_nan(arr)
            k = pc.sum(nan).as_py() or 0
            self.nans[fid] = self.nans.get(fid, 0) + k
            if k:
                arr = arr.filter(pc.invert(nan.fill_null(False)))
                if len(arr) == arr.null_count:
                    return False
        try:
            mm = pc.min_max(arr)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            return False
        try:
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
        except (OverflowError, ValueError):
            self.unbounded.add(fid)  # outside Python's datetime range: no bounds for this column
            return False
        self._bound(fid, lo, hi)
        return False

    def take_kernel_bounds(self, field, arr, desc, st):
        """The bounds ``column_bounds`` found over all of ``arr`` (``st``: its four numbers)."""
        fid = field.id
        compared = int(st[1])
        if desc[0] == V.K_BYTES:
            if compared:
                self._bound(fid, arr[int(st[2])].as_py(), arr[int(st[3])].as_py())
            return
        if isinstance(field.type, (T.FloatType, T.DoubleType)):
            self.nans[fid] = self.nans.get(fid, 0) + (len(arr) - arr.null_count - compared)
            if compared:
                lo, hi = st[2:4].view(np.float64)
                self._bound(fid, float(lo), float(hi))
        elif compared:
            self._bound(fid, int(st[2]), int(st[3]))

    def _bound(self, fid, lo, hi):
        """Widen the bounds of ``fid`` to take ``lo`` and ``hi`` (those of one write): -0.0 orders before 0.0."""
        if lo is None or fid in self.unbounded:
            return
        old = self.lower.get(fid)
        if old is None or lo < old or (lo == 0 and old == 0 and _negative_zero(lo) and not _negative_zero(old)):
            self.lower[fid] = lo
        old = self.upper.get(fid)
        if old is None or hi > old or (hi == 0 and old == 0 and _negative_zero(old) and not _negative_zero(hi)):
            self.upper[fid] = hi


def _negative_zero(v):
    return isinstance(v, float) and v == 0 and math.copysign(1.0, v) < 0


class RowFileWriter:
    """Write a Paimon ``.row`` file.

    ``sink`` is a location (written through :class:`paimon_engine.io.FileIO`) or a
    writable binary file object. Rows are encoded a column batch at a time by the
    ``rowcodec`` kernel; a block is flushed when ``rows + 4 * rowCount + 4 >=
    block_size`` (Paimon Java's rule) and compressed as one zstd frame.
    """

    def __init__(self, sink, schema: T.RowType, block_size: int = 65536, zstd_level: int = 1, file_io=None):
        if not isinstance(schema, T.RowType):
            raise InvalidArgumentError("schema must be a RowType")
        if block_size < 1 or block_size > (1 << 30):
            raise InvalidArgumentError(f"block_size must be within 1..2**30, got {block_size}")
        for f in schema.fields:
            V.kind_of(f.type)  # UnsupportedTypeError for types a .row file cannot hold
        import zstandard
        self.schema = schema
        self.block_size = int(block_size)
        self._cctx = zstandard.ZstdCompressor(level=zstd_level)
        self._kernel = _speedups.kernel("rowcodec")
        if isinstance(sink, str):
            from ...io import FileIO
            self._file_io = file_io or FileIO()
            self.path = sink
            self._out = self._file_io.open_output(sink)
            self._owns = True
        else:
            if not hasattr(sink, "write"):
                raise InvalidArgumentError("sink must be a location or a writable binary file object")
            self.path = getattr(sink, "name", None)
            self._out = sink
            self._owns = False
        self._buf = np.empty(2 * self.block_size + 4096, dtype=np.uint8)
        self._view = memoryview(self._buf)
        self._row_offsets = np.empty(self.block_size // 4 + 2, dtype=np.int32)
        self._state = np.zeros(3, dtype=np.int64)
        self._csizes, self._usizes, self._starts = [], [], []
        self._rows = 0
        self._block_first_row = 0
        self._written = 0
        self._stats = _Stats(schema)
        self._closed = False
        self.metadata = None

    # -- input -------------------------------------------------------------
    def _arrays(self, data):
        import pyarrow as pa
        if isinstance(data, ColumnBatch):
            data = data.to_arrow()
        elif type(data).__name__ == "DataFrame":
            data = pa.Table.from_pandas(data, preserve_index=False)
        if isinstance(data, pa.Table):
            data = data.combine_chunks()
            cols = {n: (c.chunk(0) if c.num_chunks == 1 else pa.concat_arrays(c.chunks) if c.num_chunks
                        else pa.array([], type=c.type)) for n, c in zip(data.column_names, data.columns)}
        elif isinstance(data, pa.RecordBatch):
            cols = dict(zip(data.schema.names, data.columns))
        else:
            raise InvalidArgumentError(f"cannot write {type(data).__name__}; expected a pyarrow Table or "
                                       "RecordBatch, a ColumnBatch or a pandas DataFrame")
        out = []
        for f in self.schema.fields:
            if f.name not in cols:
                raise SchemaError(f"input has no column {f.name!r}")
            a = cols[f.name]
            if isinstance(a, pa.ChunkedArray):
                a = pa.concat_arrays(a.chunks) if a.num_chunks != 1 else a.chunk(0)
            if pa.types.is_dictionary(a.type):
                a = a.dictionary_decode()
            if not f.nullable and a.null_count:
                raise SchemaError(f"column {f.name!r} is NOT NULL but has {a.null_count} nulls")
            out.append(a)
        return out, data.num_rows

    # -- writing -----------------------------------------------------------
    def write(self, data):
        """Append a pyarrow Table/RecordBatch, a ColumnBatch or a pandas DataFrame."""
        if self._closed:
            raise InvalidArgumentError("the writer is closed")
        arrays, n = self._arrays(data)
        if n == 0:
            return
        cols = []
        fields = self.schema.fields
        bounds = np.zeros(4 * len(fields), dtype=np.int64)
        for i, (f, a) in enumerate(zip(fields, arrays)):
            cols.append(_descriptor(f, a))
            if self._stats.update(f, a, cols[-1]):
                bounds[4 * i:4 * i + 4] = (1, 0, -1, -1)
        state = self._state
        encode = self._kernel.encode_rows
        # bounds are taken over the rows of each encoding call, right after it, while they are in the cache
        column_bounds = self._kernel.column_bounds if bounds.any() else None
        block_size = self.block_size
        r = 0
        while r < n:
            k = encode(cols, r, n, self._buf, self._row_offsets, state, block_size)
            if k < 0:
                raise PaimonEngineError(f"row encoding failed: {status.describe(k)}")
            if column_bounds is not None:
                got = column_bounds(cols, r, r + k, bounds)
                if got < 0:
                    raise PaimonEngineError(f"column bounds failed: {status.describe(got)}")
            r += k
            self._rows += k
            reason = state[2]
            if reason == 2:
                self._flush()
            elif reason == 1:
                if state[1] >= len(self._row_offsets):
                    self._row_offsets = np.concatenate([self._row_offsets, np.empty_like(self._row_offsets)])
                else:
                    self._grow(2 * len(self._buf))
        for i, (f, a) in enumerate(zip(fields, arrays)):
            if bounds[4 * i]:
                self._stats.take_kernel_bounds(f, a, cols[i], bounds[4 * i:4 * i + 4])

    def _grow(self, size):
        pos = int(self._state[0])
        grown = np.empty(size, dtype=np.uint8)
        grown[:pos] = self._buf[:pos]
        self._buf = grown
        self._view = memoryview(grown)

    def _flush(self):
        """Compress and write the block in the buffer (``finish_block`` appends its row offsets and count and
        resets the state for the next block)."""
        if not self._state[1]:
            return
        total = self._kernel.finish_block(self._buf, self._row_offsets, self._state)
        if total == status.NEED_MORE:   # the last row ran far past the block size: room for the offsets
            self._grow(int(self._state[0]) + 4 * int(self._state[1]) + 4)
            total = self._kernel.finish_block(self._buf, self._row_offsets, self._state)
        if total < 0:
            raise PaimonEngineError(f"closing a block failed: {status.describe(total)}")
        comp = self._cctx.compress(self._view[:total])
        self._out.write(comp)
        size = len(comp)
        self._written += size
        self._csizes.append(size)
        self._usizes.append(total)
        self._starts.append(self._block_first_row)
        self._block_first_row = self._rows

    def close(self) -> RowFileMetadata:
        """Flush the last block, write index and footer; returns the file's metadata."""
        if self._closed:
            return self.metadata
        self._flush()
        index = BlockIndex(self._csizes, self._usizes, self._starts, self._rows).to_bytes()
        footer = Footer(self._rows, len(self._csizes), self._written, len(index)).to_bytes()
        self._out.write(index)
        self._out.write(footer)
        self._written += len(index) + len(footer)
        if self._owns:
            self._out.close()
        elif hasattr(self._out, "flush"):
            self._out.flush()
        self._closed = True
        s = self._stats
        self.metadata = RowFileMetadata(self.path, self._rows, self._written, len(self._csizes),
                                        dict(s.values), dict(s.nulls),
                                        {f.id: s.nans.get(f.id, 0) for f in self.schema.fields
                                         if isinstance(f.type, (T.FloatType, T.DoubleType))},
                                        {k: v for k, v in s.lower.items() if k not in s.unbounded},
                                        {k: v for k, v in s.upper.items() if k not in s.unbounded})
        return self.metadata

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        elif self._owns and not self._closed:
            self._closed = True
            self._out.close()
