"""Writing data and delete files: input normalization against the table schema, partitioning by the spec's
transforms (vectorized), rolling files at a target size, Parquet with Iceberg field ids, and column metrics
(value/null/NaN counts, lower/upper bounds in single-value serialization, long strings truncated)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import uuid

import numpy as np

from .. import types as T
from ..batch import int64_values, numbers_to_arrow, repeat_string
from ..errors import InvalidArgumentError, SchemaError
from ..spec.conversions import to_bytes, truncate_lower, truncate_upper
from ..spec.schema import DELETE_FILE_PATH_ID, DELETE_POS_ID, POSITION_DELETE_FIELDS
from ..spec.manifest import CONTENT_DATA, CONTENT_EQUALITY_DELETES, CONTENT_POSITION_DELETES, DataFile

if TYPE_CHECKING:  # annotations only
    import pyarrow as pa


__all__ = ["to_arrow_table", "prepare_arrow", "partition_groups", "write_data_files", "write_parquet_file",
           "file_index_options",
           "write_position_deletes", "write_equality_deletes", "write_deletion_vectors", "POSITION_DELETE_SCHEMA", "column_metrics",
           "with_lineage"]

DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024


def to_arrow_table(data):
    """pyarrow Table / RecordBatch / pandas DataFrame / ColumnBatch / dict of lists -> pyarrow Table."""
    import pyarrow as pa
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if hasattr(data, "to_arrow_table") and not hasattr(data, "iloc"):
        return data.to_arrow_table()
    if hasattr(data, "iloc"):      # pandas
        return pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, dict):
        return pa.table(data)
    raise InvalidArgumentError(f"cannot write {type(data).__name__}; pass Arrow, pandas or a ColumnBatch")


def prepare_arrow(data, schema) -> "pa.Table":
    """Match columns by name to the table schema, cast to its types, fill a missing column with its
    ``write-default`` (nulls when it has none and is optional), reject unknown columns and nulls in required
    columns. The result carries the schema's field ids."""
    import pyarrow as pa
    T.refuse_variant(schema.struct, "write")
    tbl = to_arrow_table(data)
    target = schema.to_arrow()
    names = set(tbl.column_names)
    unknown = names - set(schema.names)
    if unknown:
        raise SchemaError(f"columns {sorted(unknown)} are not in the table schema {schema.names}")
    cols = []
    for f, af in zip(schema.fields, target):
        if f.name in names:
            c = tbl.column(f.name)
            if not c.type.equals(af.type):
                try:
                    c = c.cast(af.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                    raise SchemaError(f"column {f.name!r}: cannot write {c.type} as {af.type}: {exc}") from None
            if f.required and c.null_count:
                raise SchemaError(f"required column {f.name!r} has {c.null_count} nulls")
        elif f.write_default is not None:
            from ..spec.conversions import default_array
            c = pa.chunked_array([default_array(f, f.write_default, tbl.num_rows)])
        else:
            if f.required:
                raise SchemaError(f"required column {f.name!r} is missing")
            c = pa.chunked_array([pa.nulls(tbl.num_rows, af.type)])
        cols.append(c)
    return pa.Table.from_arrays(cols, schema=target)


def with_lineage(tbl, row_ids, last_updated):
    """``tbl`` (prepared for the table schema) plus the v3 row-lineage columns ``_row_id`` and
    ``_last_updated_sequence_number`` (field ids 2147483540, 2147483539), which :func:`write_data_files` writes
    into Parquet data files so that rows moved by a rewrite keep their lineage (a null inherits, as for new
    rows). Columns that are entirely null are left out."""
    import pyarrow as pa
    from ..scan.reader import LAST_UPDATED_COLUMN, LINEAGE_COLUMNS, ROW_ID_COLUMN
    for name, values in ((ROW_ID_COLUMN, row_ids), (LAST_UPDATED_COLUMN, last_updated)):
        if values is None:
            continue
        values = values.cast(pa.int64())
        if values.null_count == len(values):
            continue
        fid = str(LINEAGE_COLUMNS[name]).encode()
        tbl = tbl.append_column(pa.field(name, pa.int64(), metadata={b"PARQUET:field_id": fid}), values)
    return tbl


def _split_lineage(chunk):
    """(the table's columns, the row-lineage columns' names) of a chunk to write."""
    from ..scan.reader import LINEAGE_COLUMNS
    names = [n for n in chunk.column_names if n in LINEAGE_COLUMNS]
    return (chunk.drop_columns(names) if names else chunk), names


def partition_groups(tbl, spec, schema):
    """[(partition tuple, sub-table)] grouping rows by the spec's transformed values, groups in the order of
    their first row, rows in table order. Each transformed column is dictionary-encoded (nulls are a value of
    their own) and the rows' codes combined into one dense group number per row; the groups are then cut out of
    one stable sort of those numbers (a radix sort while there are at most 65536 groups), a group of adjacent
    rows as a slice of the table."""
    if not spec.fields:
        return [((), tbl)]
    n = tbl.num_rows
    if n == 0:
        return []
    import pyarrow as pa
    import pyarrow.compute as pc
    group = np.zeros(n, dtype=np.int64)
    ngroups = 1
    dictionaries, indices = [], []
    for f, st in zip(spec.fields, spec.source_types(schema)):
        col = f.transform.apply(st, _column_by_path(tbl, schema.column_name(f.source_id)).combine_chunks())
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        enc = pc.dictionary_encode(col, null_encoding="encode")
        idx = int64_values(enc.indices)
        dictionaries.append(enc.dictionary)
        indices.append(idx)
        # (dense group so far) * (values of this column) + (this column's code), made dense again: the numbers
        # present, counted (or sorted when they are far more than the rows)
        space = ngroups * len(enc.dictionary)
        group = group * len(enc.dictionary) + idx
        if space <= 4 * n + 1024:
            present = np.bincount(group, minlength=space) > 0
            group = (np.cumsum(present) - 1)[group]
            ngroups = int(np.count_nonzero(present))
        else:
            uniq, group = np.unique(group, return_inverse=True)
            group = group.reshape(-1)
            ngroups = len(uniq)
    key = group.astype(np.uint8 if ngroups <= 256 else np.uint16 if ngroups <= 65536 else np.int64)
    order = np.argsort(key, kind="stable")
    counts = np.bincount(group, minlength=ngroups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    out = []
    for g in np.argsort(order[starts], kind="stable"):
        rows = order[starts[g]:starts[g] + counts[g]]
        first = int(rows[0])
        part = tuple(d[int(i[first])].as_py() for d, i in zip(dictionaries, indices))
        # a group of adjacent rows (one partition, or input sorted by partition) is a slice, not a copy
        contiguous = int(rows[-1]) - first + 1 == len(rows)
        out.append((part, tbl.slice(first, len(rows)) if contiguous else tbl.take(numbers_to_arrow(rows))))
    return out


def _column_by_path(tbl, dotted):
    parts = dotted.split(".")
    col = tbl.column(parts[0])
    for p in parts[1:]:
        col = col.combine_chunks().field(p)
    import pyarrow as pa
    return col if isinstance(col, pa.ChunkedArray) else pa.chunked_array([col])


def column_metrics(tbl, schema_fields, truncate_length: int = 16):
    """Metrics maps keyed by field id for top-level primitive columns."""
    import pyarrow as pa
    import pyarrow.compute as pc
    vc, nc, nan, lo, hi = {}, {}, {}, {}, {}
    for f, col in zip(schema_fields, tbl.columns):
        if f.type.is_nested:
            continue
        fid = f.id
        vc[fid] = len(col)
        nc[fid] = col.null_count
        t = f.type
        valid = len(col) - col.null_count
        if isinstance(t, (T.FloatType, T.DoubleType)):
            n_nan = int(pc.sum(pc.is_nan(col)).as_py() or 0) if len(col) else 0
            nan[fid] = n_nan
            valid -= n_nan
        if valid <= 0:
            continue
        c = col
        if isinstance(t, (T.DateType,)):
            c = col.cast(pa.int32())
        elif isinstance(t, (T.TimeType, T.TimestampType, T.LocalZonedTimestampType)):
            c = col.cast(pa.int64())
        elif isinstance(t, T.UuidType) or isinstance(t, T.BooleanType):
            c = col
        try:
            mm = pc.min_max(c)
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
            continue
        mn, mx = mm["min"].as_py(), mm["max"].as_py()
        if mn is None or mx is None:
            continue
        if isinstance(t, T.UuidType):
            mn, mx = bytes(mn), bytes(mx)
        mn = truncate_lower(t, mn, truncate_length)
        mx = truncate_upper(t, mx, truncate_length)
        try:
            lo[fid] = to_bytes(t, mn)
            if mx is not None:
                hi[fid] = to_bytes(t, mx)
        except Exception:   # a type without a bound form keeps no bounds
            lo.pop(fid, None)
    return vc, nc, nan, lo, hi


def write_parquet_file(io, path, tbl, *, compression="zstd", row_group_rows=1 << 20, encodings=None):
    """Write a Parquet file; -> (file size, {field id: compressed column size}, split offsets).
    ``encodings``: column name -> Parquet encoding for columns that should not be dictionary-encoded."""
    import pyarrow.parquet as pq
    extra = {}
    if encodings:
        extra = {"use_dictionary": [n for n in tbl.schema.names if n not in encodings],
                 "column_encoding": dict(encodings)}
    with io.open_output(path) as out:
        w = pq.ParquetWriter(out, tbl.schema, compression=compression, **extra)
        w.write_table(tbl, row_group_size=row_group_rows)
        w.close()
        size = out.tell()
    md = w.writer.metadata
    sizes = {}
    offsets = []
    leaf_ids = _leaf_field_ids(tbl.schema)
    for rg in range(md.num_row_groups):
        g = md.row_group(rg)
        for ci in range(g.num_columns):
            fid = leaf_ids[ci] if ci < len(leaf_ids) else None
            if fid is not None:
                sizes[fid] = sizes.get(fid, 0) + g.column(ci).total_compressed_size
        if g.num_columns:
            c0 = g.column(0)
            off = c0.dictionary_page_offset if c0.has_dictionary_page else c0.data_page_offset
            offsets.append(int(off))
    return size, sizes, offsets


def _leaf_field_ids(schema):
    """Field ids of the Parquet leaf columns in order (None for a leaf without an id)."""
    import pyarrow as pa
    out = []
    # depth first, children in order: a loop over a stack (a closure that calls itself is a reference cycle,
    # left for the cycle collector)
    todo = list(reversed(list(schema)))
    while todo:
        field = todo.pop()
        t = field.type
        if pa.types.is_struct(t):
            todo += [t.field(i) for i in reversed(range(t.num_fields))]
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            todo.append(t.value_field)
        elif pa.types.is_map(t):
            todo += (t.item_field, t.key_field)
        else:
            meta = field.metadata or {}
            raw = meta.get(b"PARQUET:field_id")
            out.append(int(raw) if raw is not None else None)
    return out


def write_data_files(io, location, tbl, spec, schema, properties=None, *, snapshot_hint=None, progress=None):
    """Partition, roll and write data files; -> list of DataFile (content data). ``progress(step, done, total)``
    is called with step ``"write"`` and the rows written so far after each file."""
    props = properties or {}
    fmt = props.get("write.format.default", "parquet").lower()
    if fmt not in ("parquet", "row"):
        raise InvalidArgumentError(f"unsupported write.format.default {fmt!r}")
    target = int(props.get("write.target-file-size-bytes", DEFAULT_TARGET_FILE_SIZE))
    trunc = _truncate_length(props)
    data_loc = props.get("write.data.path", f"{location}/data").rstrip("/")
    compression = props.get("write.parquet.compression-codec", "zstd")
    if compression == "uncompressed":
        compression = "none"
    index_options = file_index_options(props)
    if index_options:
        # unknown index types, options or columns fail here, before any file is written
        from ..index import FileIndexBuilder
        FileIndexBuilder(T.RowType(_fields_for(schema, _split_lineage(tbl)[0])), index_options)
    out = []
    prefix = uuid.uuid4()
    k = 0
    written = 0
    for part, sub in partition_groups(tbl, spec, schema):
        if sub.num_rows == 0:
            continue
        pdir = spec.partition_path(part, schema) if spec.fields else ""
        for chunk in _roll(sub, target):
            k += 1
            name = f"{prefix}-{k:05d}.{'parquet' if fmt == 'parquet' else 'row'}"
            path = f"{data_loc}/{pdir}/{name}" if pdir else f"{data_loc}/{name}"
            df = _write_one(io, path, chunk, schema, part, spec.spec_id, fmt, trunc, compression, CONTENT_DATA)
            if index_options:
                df.file_index = _write_file_index(io, path, _split_lineage(chunk)[0], schema, index_options)
            out.append(df)
            written += chunk.num_rows
            if progress is not None:
                progress("write", written, tbl.num_rows)
    return out


def file_index_options(props) -> dict:
    """The ``file-index.*`` table properties (Paimon's option names)."""
    return {k: v for k, v in (props or {}).items() if k.startswith("file-index.")}


def _write_file_index(io, path, chunk, schema, options):
    """Build the file-index container of one data file: embedded in the manifest entry up to
    ``file-index.in-manifest-threshold`` bytes (as ``base64:<bytes>``), else ``<data file>.index`` beside it."""
    import base64

    from ..batch import ColumnBatch
    from ..index import FileIndexBuilder
    builder = FileIndexBuilder(T.RowType(_fields_for(schema, chunk)), options)
    if not builder.enabled:
        return None
    builder.add(ColumnBatch.from_arrow(chunk))
    embedded, location = builder.write(io, path)
    if embedded is not None:
        from ..index.container import EMBEDDED_INDEX_PREFIX
        return EMBEDDED_INDEX_PREFIX + base64.b64encode(embedded).decode("ascii")
    return location


def _truncate_length(props):
    mode = props.get("write.metadata.metrics.default", "truncate(16)")
    if mode.startswith("truncate(") and mode.endswith(")"):
        try:
            return int(mode[9:-1])
        except ValueError:
            pass
    return 16


def _roll(tbl, target_bytes):
    n = tbl.num_rows
    est = max(1, tbl.nbytes) / 3   # rough compression ratio
    if est <= target_bytes or n <= 1:
        yield tbl
        return
    rows = max(1, int(n * target_bytes / est))
    for start in range(0, n, rows):
        yield tbl.slice(start, rows)


def _write_one(io, path, chunk, schema, part, spec_id, fmt, trunc, compression, content, encodings=None,
               **extra):
    data, lineage = _split_lineage(chunk)
    if fmt == "row":
        # a row file stores no schema: its writer schema's columns, then the lineage columns its manifest entry
        # names (``lineage_field_ids``)
        return _write_row_file(io, path, data, schema, part, spec_id, trunc, content,
                               lineage=chunk.select(lineage) if lineage else None, **extra)
    size, sizes, offsets = write_parquet_file(io, path, chunk, compression=compression, encodings=encodings)
    vc, nc, nan, lo, hi = column_metrics(data, _fields_for(schema, data), trunc)
    return DataFile(path, "PARQUET", part, chunk.num_rows, size, content=content, column_sizes=sizes,
                    value_counts=vc, null_value_counts=nc, nan_value_counts=nan, lower_bounds=lo, upper_bounds=hi,
                    split_offsets=offsets or None, spec_id=spec_id,
                    sort_order_id=0 if content == CONTENT_DATA else None, **extra)


def _fields_for(schema, chunk):
    fields = getattr(schema, "fields", None)
    if fields is not None and len(fields) == chunk.num_columns:
        return fields
    return T.schema_from_arrow(chunk.schema).fields


def _write_row_file(io, path, chunk, schema, part, spec_id, trunc, content, lineage=None, **extra):
    try:
        from ..formats.row import RowFileWriter  # the .row format layer
    except ImportError:
        raise InvalidArgumentError("write.format.default=row needs the .row format layer "
                                   "(paimon_engine.formats.row), which is not installed") from None
    fields = _fields_for(schema, chunk)
    stored = chunk
    lineage_ids = None
    if lineage is not None and lineage.num_columns:
        import pyarrow as pa
        from ..scan.reader import LINEAGE_COLUMNS, lineage_field
        names = lineage.column_names
        lineage_ids = [LINEAGE_COLUMNS[n] for n in names]
        row_type = T.RowType(list(fields) + [lineage_field(n) for n in names])
        stored = pa.Table.from_arrays(list(chunk.columns) + list(lineage.columns),
                                      names=list(chunk.column_names) + names)
    else:
        row_type = T.RowType(fields)
    w = RowFileWriter(path, row_type, file_io=io)
    try:
        w.write(stored)
        meta = w.close()
    except BaseException:
        try:
            io.delete(path)
        finally:
            raise
    vc, nc, nan, lo, hi = column_metrics(chunk, fields, trunc)
    return DataFile(path, "ROW", part, meta.row_count, meta.file_size, content=content, value_counts=vc,
                    null_value_counts=nc, nan_value_counts=nan, lower_bounds=lo, upper_bounds=hi, spec_id=spec_id,
                    writer_schema_id=getattr(schema, "schema_id", None) if content == CONTENT_DATA else None,
                    lineage_field_ids=lineage_ids, **extra)


def POSITION_DELETE_SCHEMA():
    import pyarrow as pa
    return pa.schema([
        pa.field("file_path", pa.string(), nullable=False,
                 metadata={b"PARQUET:field_id": str(DELETE_FILE_PATH_ID).encode()}),
        pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(DELETE_POS_ID).encode()}),
    ])


class _PosDeleteSchema:
    """The position-delete file schema as table-schema-like fields (for metrics)."""
    fields = POSITION_DELETE_FIELDS
    schema_id = None


def write_position_deletes(io, path, data_file_path, positions, partition, spec_id, fmt="parquet",
                           compression="zstd"):
    """One position-delete file for one data file: sorted positions; -> DataFile (content 1) with
    ``referenced_data_file`` set."""
    import pyarrow as pa
    pos = np.unique(np.asarray(positions, dtype=np.int64))
    tbl = pa.Table.from_arrays([repeat_string(data_file_path, len(pos)), numbers_to_arrow(pos)],
                               schema=POSITION_DELETE_SCHEMA())
    # sorted positions delta-encode to a few bits each: a smaller file that decodes several times faster
    # than dictionary + zstd (DELTA_BINARY_PACKED is a core Parquet encoding every reader supports)
    return _write_one(io, path, tbl, _PosDeleteSchema, partition, spec_id, fmt, 1 << 30, compression,
                      CONTENT_POSITION_DELETES, encodings={"pos": "DELTA_BINARY_PACKED"},
                      referenced_data_file=data_file_path)


def write_deletion_vectors(io, path, vectors, created_by="paimon_engine"):
    """One Puffin file holding a ``deletion-vector-v1`` blob per data file; ``vectors``: ``(data DataFile,
    sorted positions)`` pairs, at most one per data file. -> one DataFile (content 1, format PUFFIN) per vector,
    with the data file's partition and spec, ``referenced_data_file``, ``content_offset`` and
    ``content_size_in_bytes`` set and ``record_count`` = the vector's cardinality."""
    from ..formats.puffin import PuffinWriter
    from ..index.iceberg_deletion_vector import deletion_vector_blob
    w = PuffinWriter(created_by=created_by)
    seen = set()
    placed = []
    for df, positions in vectors:
        if df.file_path in seen:
            raise InvalidArgumentError(f"two deletion vectors for {df.file_path} in one Puffin file")
        seen.add(df.file_path)
        pos = np.asarray(positions, dtype=np.int64)
        if pos.size and (int(pos.min()) < 0 or int(pos.max()) >= df.record_count):
            raise InvalidArgumentError(f"deletion vector positions outside {df.file_path} "
                                       f"({df.record_count} rows)")
        blob = deletion_vector_blob(pos, df.file_path)
        placed.append((df, w.add(blob), int(blob.properties["cardinality"])))
    data = w.finish()
    io.write_bytes(path, data)
    return [DataFile(path, "PUFFIN", df.partition, card, len(data), content=CONTENT_POSITION_DELETES,
                     referenced_data_file=df.file_path, spec_id=df.spec_id, content_offset=m.offset,
                     content_size_in_bytes=m.length) for df, m, card in placed]


def write_equality_deletes(io, path, key_table, equality_ids, partition, spec_id, fmt="parquet",
                           compression="zstd"):
    """An equality-delete file holding the given key rows (columns carry the table's field ids). A Parquet file
    with one integer key column without nulls holds its keys sorted and delta-encoded (the rows of an
    equality-delete file have no order; a dictionary of distinct keys only adds to reading them)."""
    import pyarrow as pa

    class _S:
        fields = tuple(T.schema_from_arrow(key_table.schema).fields)
        schema_id = None
    encodings = None
    if fmt != "row" and key_table.num_columns == 1 and key_table.num_rows > 1 \
            and key_table.schema.field(0).type in (pa.int32(), pa.int64()) and key_table.column(0).null_count == 0:
        name = key_table.schema.names[0]
        key_table = key_table.sort_by(name)
        encodings = {name: "DELTA_BINARY_PACKED"}
    return _write_one(io, path, key_table, _S, partition, spec_id, fmt, 16, compression,
                      CONTENT_EQUALITY_DELETES, encodings=encodings, equality_ids=list(equality_ids))
