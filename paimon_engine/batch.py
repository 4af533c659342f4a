"""Column batches: named columns in Arrow memory layout, held in NumPy buffers.

A :class:`Column` is exactly an Arrow array's buffers:

* fixed width (ints, floats, dates, times, timestamps, decimals as 16-byte
  little-endian values, fixed-size binary): ``values``
* boolean: ``values`` is a bit-packed uint8 bitmap (LSB first)
* string / binary: ``offsets`` (int32, or int64 for large) + ``data`` (uint8)
* list: ``offsets`` + one child; map: ``offsets`` + a struct child of (key, value)
* struct: children only

Every kind has an optional ``validity`` bitmap (LSB first, 1 = valid) and an
element ``offset`` into its buffers (Arrow's slice offset). Decoders fill
these arrays directly; :meth:`Column.to_arrow` wraps them without copying.
"""

from __future__ import annotations

import numpy as np

from .errors import InvalidArgumentError, SchemaError
from .types import RowType, schema_from_arrow

__all__ = ["Column", "ColumnBatch", "concat_batches"]


#: buffers of at least this many bytes come from NumPy instead of Arrow's pool: the pool hands blocks this large
#: back to the system when they are freed, so each one is faulted in again page by page (a 32 MiB buffer
#: allocated, filled and freed: 16 ms from the pool every time, 2.8 ms from NumPy, whose large blocks the
#: kernel backs with 2 MiB pages; 31.9 MiB from the pool: 1.3 ms)
POOL_MAX = 32 << 20


def pool_array(count: int, dtype=np.uint8, zero: bool = False) -> np.ndarray:
    """A NumPy array for an output buffer: from Arrow's default memory pool below POOL_MAX bytes, else NumPy's.

    Output buffers that end up in Arrow arrays are taken from the pool: it keeps freed memory of such sizes for
    reuse, so a read does not fault in fresh pages for every buffer (the cost that dominates a large read on a
    VM). Larger buffers are fresh memory whichever allocator gives them; NumPy's is backed in large pages and,
    zeroed, comes zeroed from the system (no pass over it here)."""
    import pyarrow as pa
    dtype = np.dtype(dtype)
    count = max(int(count), 1)
    if count * dtype.itemsize >= POOL_MAX:
        return (np.zeros if zero else np.empty)(count, dtype=dtype)
    buf = pa.allocate_buffer(count * dtype.itemsize)
    arr = np.frombuffer(buf, dtype=dtype)
    if zero:
        arr[:] = 0
    return arr


def bitmap_bools(buf, offset: int, n: int) -> np.ndarray:
    """Bits ``offset .. offset + n`` of an Arrow bitmap buffer (LSB first) as one NumPy bool per bit. Arrow's own
    conversions (``to_numpy``) go through pyarrow's pandas shim, which imports pandas on its first use."""
    if n == 0:
        return np.zeros(0, dtype=np.bool_)
    return np.unpackbits(np.frombuffer(buf, dtype=np.uint8), count=offset + n,
                         bitorder="little")[offset:].view(np.bool_)


def valid_bools(arr) -> np.ndarray:
    """One NumPy bool per row of an Arrow array: True where it is not null (read from its validity bitmap)."""
    bits = arr.buffers()[0] if arr.null_count else None
    if bits is None:
        return np.full(len(arr), arr.null_count == 0, dtype=np.bool_)
    return bitmap_bools(bits, arr.offset, len(arr))


def int64_values(arr) -> np.ndarray:
    """The values of a null-free int32 or int64 Arrow array as int64, read from its data buffer (a view of an
    int64 array's buffer; see :func:`bitmap_bools` for why not ``to_numpy``)."""
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    width = np.int64 if arr.type.bit_width == 64 else np.int32
    vals = np.frombuffer(arr.buffers()[1], dtype=width, count=arr.offset + n)[arr.offset:]
    return vals if width is np.int64 else vals.astype(np.int64)


def numbers_to_arrow(values: np.ndarray, valid=None):
    """An Arrow array over a 1-D NumPy array of fixed-width numbers or bools, without copying numbers; ``valid``
    (optional, one bool per value, False for a null) gives it a validity bitmap. ``pa.array`` converts through
    pyarrow's pandas shim, which imports pandas on its first use: a read's first call would pay for that import
    (a fifth of a second) for an array it never needs pandas for."""
    import pyarrow as pa
    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        raise InvalidArgumentError(f"numbers_to_arrow takes a 1-D array of numbers, not {values.dtype} "
                                   f"with {values.ndim} dimensions")
    values = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("="))
    n = len(values)
    bitmap, nulls = None, 0
    if valid is not None:
        valid = np.asarray(valid, dtype=np.bool_)
        if valid.shape != (n,):
            raise InvalidArgumentError(f"{valid.size} validity flags for {n} values")
        nulls = n - int(np.count_nonzero(valid))
        if nulls:
            bitmap = pa.py_buffer(np.packbits(valid.view(np.uint8), bitorder="little"))
    if values.dtype == np.bool_:
        bits = np.packbits(values.view(np.uint8), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), n, [bitmap, pa.py_buffer(bits)], null_count=nulls)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), n, [bitmap, pa.py_buffer(values)],
                                 null_count=nulls)


#: the most bytes of characters one Arrow string array (int32 offsets) addresses
STRING_ARRAY_MAX_BYTES = 0x7FFFFFFF


def repeat_string(value: str, n: int):
    """An Arrow string array of ``value`` ``n`` times (a file path per row, as position-delete files and the
    ``_file`` column hold), built from its buffers (see :func:`numbers_to_arrow` for why not ``pa.array``); a
    chunked array when the characters pass what one string array addresses (``STRING_ARRAY_MAX_BYTES``)."""
    import pyarrow as pa
    data = value.encode("utf-8")
    width = len(data)
    per = n if width == 0 else min(n, STRING_ARRAY_MAX_BYTES // width)

    def chunk(m):
        offsets = np.arange(m + 1, dtype=np.int32) * np.int32(width) if m else np.zeros(1, np.int32)
        return pa.Array.from_buffers(pa.string(), m, [None, pa.py_buffer(offsets), pa.py_buffer(data * m)])
    if per >= n:
        return chunk(n)
    sizes = [per] * (n // per) + ([n % per] if n % per else [])
    return pa.chunked_array([chunk(m) for m in sizes], pa.string())


def _buf(arr):
    import pyarrow as pa
    return None if arr is None else pa.py_buffer(arr)


def _np(buf, dtype, count=None):
    """The buffer's whole elements as a NumPy view. Arrow lets a buffer be longer than its array needs (an empty
    array's int64 values may sit in a 1-byte allocation), so a trailing partial element is left out."""
    if buf is None:
        return None
    whole = buf.size // np.dtype(dtype).itemsize
    a = np.frombuffer(buf, dtype=dtype, count=whole)
    return a if count is None else a[:count]


class Column:
    """One column's buffers in Arrow layout. Build with the ``from_*`` constructors
    or :meth:`from_arrow`; ``arrow_type`` is the pyarrow type the buffers spell."""

    __slots__ = ("arrow_type", "length", "validity", "values", "offsets", "data", "children",
                 "null_count", "offset")

    def __init__(self, arrow_type, length, *, validity=None, values=None, offsets=None, data=None,
                 children=(), null_count=-1, offset=0):
        self.arrow_type = arrow_type
        self.length = int(length)
        self.validity = validity
        self.values = values
        self.offsets = offsets
        self.data = data
        self.children = list(children)
        self.null_count = null_count
        self.offset = int(offset)

    # -- constructors ------------------------------------------------------
    @classmethod
    def from_numpy(cls, values, validity=None, arrow_type=None):
        """A fixed-width column over a 1-D NumPy array (no copy)."""
        import pyarrow as pa
        values = np.ascontiguousarray(values)
        if arrow_type is None:
            if values.dtype == np.bool_:
                from .encoding import pack_bits
                return cls(pa.bool_(), len(values), validity=validity, values=pack_bits(values),
                           null_count=-1 if validity is not None else 0)
            arrow_type = pa.from_numpy_dtype(values.dtype)
        return cls(arrow_type, len(values), validity=validity, values=values,
                   null_count=-1 if validity is not None else 0)

    @classmethod
    def from_arrow(cls, array) -> "Column":
        """Wrap a pyarrow Array's buffers (zero copy). Chunked arrays are combined."""
        import pyarrow as pa
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
        t = array.type
        if pa.types.is_dictionary(t):
            array = array.dictionary_decode()
            t = array.type
        bufs = array.buffers()
        n = len(array)
        off = array.offset
        validity = _np(bufs[0], np.uint8)
        nc = array.null_count
        types = pa.types
        if types.is_boolean(t):
            return cls(t, n, validity=validity, values=_np(bufs[1], np.uint8), null_count=nc, offset=off)
        if types.is_string(t) or types.is_binary(t) or types.is_large_string(t) or types.is_large_binary(t):
            odt = np.int64 if (types.is_large_string(t) or types.is_large_binary(t)) else np.int32
            offsets = _np(bufs[1], odt)
            if offsets is None:
                offsets = np.zeros(off + n + 1, dtype=odt)
            data = _np(bufs[2], np.uint8)
            if data is None:
                data = np.zeros(0, dtype=np.uint8)
            return cls(t, n, validity=validity, offsets=offsets, data=data, null_count=nc, offset=off)
        if (types.is_struct(t) or types.is_map(t)) and off != 0:
            # pyarrow hands out struct children already sliced by the parent's
            # offset; re-base such arrays at offset 0 (one copy) so the
            # Column's offset keeps meaning the same for every buffer.
            return cls.from_arrow(pa.concat_arrays([array]))
        if types.is_list(t) or types.is_large_list(t) or types.is_map(t):
            odt = np.int64 if types.is_large_list(t) else np.int32
            offsets = _np(bufs[1], odt)
            if offsets is None:
                offsets = np.zeros(off + n + 1, dtype=odt)
            # .values is the child that backs the list, ignoring the list's offset
            return cls(t, n, validity=validity, offsets=offsets, children=[cls.from_arrow(array.values)],
                       null_count=nc, offset=off)
        if types.is_struct(t):
            kids = [cls.from_arrow(array.field(i)) for i in range(t.num_fields)]
            return cls(t, n, validity=validity, children=kids, null_count=nc, offset=off)
        if types.is_fixed_size_list(t):
            raise SchemaError(f"fixed-size lists are not supported in column batches ({t})")
        width = t.bit_width // 8
        if width <= 0:
            raise SchemaError(f"unsupported Arrow type {t} in a column batch")
        dtype = _fixed_dtype(t)
        values = _np(bufs[1], dtype)
        if values is None:
            values = np.zeros(0, dtype=dtype)
        return cls(t, n, validity=validity, values=values, null_count=nc, offset=off)

    # -- conversions -------------------------------------------------------
    def to_arrow(self):
        """The column as a pyarrow Array, sharing these buffers."""
        import pyarrow as pa
        t = self.arrow_type
        types = pa.types
        validity = _buf(self.validity)
        nc = self.null_count if self.validity is not None else 0
        if types.is_string(t) or types.is_binary(t) or types.is_large_string(t) or types.is_large_binary(t):
            bufs = [validity, _buf(self.offsets), _buf(self.data)]
            return pa.Array.from_buffers(t, self.length, bufs, null_count=nc, offset=self.offset)
        if types.is_list(t) or types.is_large_list(t):
            child = self.children[0].to_arrow()
            return pa.Array.from_buffers(t, self.length, [validity, _buf(self.offsets)],
                                         null_count=nc, offset=self.offset, children=[child])
        if types.is_map(t):
            entries = self.children[0].to_arrow()
            return pa.Array.from_buffers(t, self.length, [validity, _buf(self.offsets)],
                                         null_count=nc, offset=self.offset, children=[entries])
        if types.is_struct(t):
            kids = [c.to_arrow() for c in self.children]
            return pa.Array.from_buffers(t, self.length, [validity], null_count=nc, offset=self.offset,
                                         children=kids)
        return pa.Array.from_buffers(t, self.length, [validity, _buf(self.values)], null_count=nc,
                                     offset=self.offset)

    def is_valid(self) -> np.ndarray:
        """Boolean array, True where the value is not null."""
        if self.validity is None:
            return np.ones(self.length, dtype=np.bool_)
        bits = np.unpackbits(self.validity, bitorder="little")
        return bits[self.offset:self.offset + self.length].astype(np.bool_)

    def to_numpy(self):
        """A ``numpy.ma.MaskedArray`` (mask = null). Fixed-width values are a view;
        strings, binaries and nested values become object arrays."""
        mask = ~self.is_valid() if self.validity is not None else np.ma.nomask
        import pyarrow as pa
        t = self.arrow_type
        if self.values is not None and not pa.types.is_boolean(t) and not pa.types.is_decimal(t) \
                and not pa.types.is_fixed_size_binary(t):
            data = self.values[self.offset:self.offset + self.length]
            temporal = _numpy_temporal(t)
            if temporal is not None:
                # 64-bit values are reinterpreted in place; date32/time32 need widening (a copy)
                data = data.view(temporal) if data.itemsize == 8 else data.astype(np.int64).view(temporal)
            return np.ma.MaskedArray(data, mask=mask)
        if pa.types.is_boolean(t):
            bits = np.unpackbits(self.values, bitorder="little")[self.offset:self.offset + self.length]
            return np.ma.MaskedArray(bits.astype(np.bool_), mask=mask)
        return np.ma.MaskedArray(np.array(self.to_arrow().to_pylist(), dtype=object), mask=mask)

    def slice(self, start: int, stop: int) -> "Column":
        """Rows [start, stop) without copying."""
        start = max(0, min(start, self.length))
        stop = max(start, min(stop, self.length))
        c = Column(self.arrow_type, stop - start, validity=self.validity, values=self.values,
                   offsets=self.offsets, data=self.data, children=self.children,
                   null_count=-1 if self.validity is not None else 0, offset=self.offset + start)
        return c

    def __len__(self):
        return self.length

    def __repr__(self):
        return f"Column({self.arrow_type}, length={self.length})"


def _fixed_dtype(t):
    """NumPy dtype of a fixed-width Arrow type's value buffer."""
    import pyarrow as pa
    types = pa.types
    if types.is_decimal(t) or types.is_fixed_size_binary(t):
        return np.uint8  # byte_width bytes per value
    if types.is_timestamp(t) or types.is_date(t) or types.is_time(t) or types.is_duration(t):
        return np.dtype("int%d" % t.bit_width)
    return np.dtype(t.to_pandas_dtype())


def _numpy_temporal(t):
    import pyarrow as pa
    types = pa.types
    if types.is_timestamp(t):
        return "datetime64[%s]" % t.unit
    if types.is_date32(t):
        return "datetime64[D]"
    if types.is_date64(t):
        return "datetime64[ms]"
    if types.is_time(t) or types.is_duration(t):
        return "timedelta64[%s]" % t.unit
    return None


class ColumnBatch:
    """Named columns of equal length with a logical schema."""

    __slots__ = ("schema", "columns", "num_rows")

    def __init__(self, schema: RowType, columns, num_rows: int | None = None):
        columns = list(columns)
        if len(columns) != len(schema.fields):
            raise SchemaError(f"{len(columns)} columns for a schema of {len(schema.fields)} fields")
        if num_rows is None:
            num_rows = len(columns[0]) if columns else 0
        for f, c in zip(schema.fields, columns):
            if len(c) != num_rows:
                raise SchemaError(f"column {f.name!r} has {len(c)} rows, expected {num_rows}")
        self.schema = schema
        self.columns = columns
        self.num_rows = int(num_rows)

    # -- construction ----------------------------------------------------
    @classmethod
    def from_arrow(cls, data, schema: RowType | None = None) -> "ColumnBatch":
        """From a pyarrow RecordBatch or Table (zero copy where Arrow allows)."""
        import pyarrow as pa
        if isinstance(data, pa.Table):
            data = data.combine_chunks()
            arrays = [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks() for c in data.columns]
            if data.num_rows == 0:
                arrays = [pa.array([], type=f.type) for f in data.schema]
        elif isinstance(data, pa.RecordBatch):
            arrays = data.columns
        else:
            raise InvalidArgumentError(f"expected a pyarrow Table or RecordBatch, got {type(data).__name__}")
        if schema is None:
            schema = schema_from_arrow(data.schema)
        return cls(schema, [Column.from_arrow(a) for a in arrays], data.num_rows)

    @classmethod
    def from_pandas(cls, frame, schema: RowType | None = None) -> "ColumnBatch":
        import pyarrow as pa
        arrow_schema = schema.to_arrow_schema() if schema is not None else None
        return cls.from_arrow(pa.Table.from_pandas(frame, schema=arrow_schema, preserve_index=False), schema)

    @classmethod
    def from_pydict(cls, mapping, schema: RowType | None = None) -> "ColumnBatch":
        import pyarrow as pa
        arrow_schema = schema.to_arrow_schema() if schema is not None else None
        return cls.from_arrow(pa.Table.from_pydict(mapping, schema=arrow_schema), schema)

    # -- access ------------------------------------------------------------
    @property
    def names(self):
        return self.schema.names

    def column(self, name_or_index) -> Column:
        i = name_or_index if isinstance(name_or_index, int) else self.schema.index(name_or_index)
        return self.columns[i]

    def __getitem__(self, name):
        return self.column(name)

    def __len__(self):
        return self.num_rows

    def __repr__(self):
        return f"ColumnBatch({self.num_rows} rows, {self.schema.to_paimon_string()})"

    def select(self, names) -> "ColumnBatch":
        idx = [self.schema.index(n) for n in names]
        return ColumnBatch(RowType([self.schema.fields[i] for i in idx]), [self.columns[i] for i in idx],
                           self.num_rows)

    def slice(self, start: int, stop: int | None = None) -> "ColumnBatch":
        """Rows [start, stop) without copying."""
        stop = self.num_rows if stop is None else stop
        start = max(0, min(start, self.num_rows))
        stop = max(start, min(stop, self.num_rows))
        return ColumnBatch(self.schema, [c.slice(start, stop) for c in self.columns], stop - start)

    # -- conversions -------------------------------------------------------
    def arrow_schema(self):
        import pyarrow as pa
        fields = []
        for f, c in zip(self.schema.fields, self.columns):
            meta = {b"PARQUET:field_id": str(f.id).encode()}
            fields.append(pa.field(f.name, c.arrow_type, nullable=f.nullable, metadata=meta))
        return pa.schema(fields)

    def to_arrow(self):
        """A pyarrow RecordBatch sharing these buffers."""
        import pyarrow as pa
        return pa.RecordBatch.from_arrays([c.to_arrow() for c in self.columns], schema=self.arrow_schema())

    def to_arrow_table(self):
        import pyarrow as pa
        return pa.Table.from_batches([self.to_arrow()])

    def to_pandas(self):
        """A pandas DataFrame with nullable extension dtypes (no object columns for numbers)."""
        return arrow_to_pandas(self.to_arrow())

    def to_numpy(self) -> dict:
        """``{name: numpy.ma.MaskedArray}``; fixed-width values are views of the batch buffers."""
        return {f.name: c.to_numpy() for f, c in zip(self.schema.fields, self.columns)}

    def to_pylist(self):
        return self.to_arrow().to_pylist()


def arrow_to_pandas(data):
    """Arrow table/batch -> pandas with nullable dtypes for numbers, booleans and strings."""
    import pandas as pd
    import pyarrow as pa
    mapping = {
        pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
        pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(), pa.bool_(): pd.BooleanDtype(),
        pa.float32(): pd.Float32Dtype(), pa.float64(): pd.Float64Dtype(), pa.string(): pd.StringDtype(),
        pa.large_string(): pd.StringDtype(),
    }
    return data.to_pandas(types_mapper=mapping.get)


def concat_batches(batches) -> ColumnBatch:
    """Concatenate batches of one schema into one batch (copies the buffers once)."""
    import pyarrow as pa
    batches = list(batches)
    if not batches:
        raise InvalidArgumentError("concat_batches needs at least one batch")
    schema = batches[0].schema
    for b in batches[1:]:
        if not b.schema.equals_ignore_nullable(schema) and b.schema != schema:
            raise SchemaError("cannot concatenate batches of different schemas")
    cols = []
    for i in range(len(schema.fields)):
        cols.append(Column.from_arrow(pa.concat_arrays([b.columns[i].to_arrow() for b in batches])))
    return ColumnBatch(schema, cols, sum(b.num_rows for b in batches))
