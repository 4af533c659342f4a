"""Reading scan tasks: data files by field id, delete files, and the keep-mask / anti-join / residual pipeline.

A :class:`TaskReader` is built once per scan (it caches parsed delete files and equality-delete hash tables
across tasks) and turns one :class:`~paimon_engine.scan.tasks.FileScanTask` into Arrow record batches:

1. read the projected columns, the residual's columns and the equality-key columns of the data file, matching
   columns by Parquet field id (names only for files without ids), casting promoted types and filling columns the
   file does not have with nulls (or their ``initial-default``);
2. position deletes and deletion vectors -> one sorted position array -> keep-mask (kernel);
3. equality deletes -> vectorized anti-join on the key columns (kernel hashing, null matches null);
4. the residual filter; then the projection, plus ``_file`` / ``_pos`` and the row-lineage columns ``_row_id`` /
   ``_last_updated_sequence_number`` on request (read from the file where it holds them, else inherited: the data
   file's ``first_row_id`` plus the row position, and its data sequence number; null for a file without a
   ``first_row_id``).
"""

from __future__ import annotations

import struct
import threading

import numpy as np
import pyarrow as pa

from .. import types as T
from ..batch import int64_values, numbers_to_arrow, repeat_string
from ..errors import CorruptFileError, UnsupportedTypeError
from ..expressions import AlwaysTrue, evaluate_numpy, referenced_names
from .delete_index import EQUALITY, POSITION
from .._parallel import parallel_map, submit
from .deletes import (EqualityDeleteSet, compact, compact_fixed_columns, decode_dictionary, dictionary_decodable,
                      dictionary_indices, dictionary_mask, fusable, keep_mask, keep_runs, merge_positions, position_runs)
from .parquet_pages import all_data_pages_dictionary_encoded
from ..spec.schema import (LAST_UPDATED_COLUMN, LAST_UPDATED_FIELD_ID, LINEAGE_COLUMNS, ROW_ID_COLUMN,
                           ROW_ID_FIELD_ID, lineage_field)

__all__ = ["TaskReader", "read_deletion_vector", "FILE_COLUMN", "POS_COLUMN", "ROW_ID_COLUMN",
           "LAST_UPDATED_COLUMN", "ROW_ID_FIELD_ID", "LAST_UPDATED_FIELD_ID", "LINEAGE_COLUMNS", "METADATA_COLUMNS"]

FILE_COLUMN = "_file"
POS_COLUMN = "_pos"
METADATA_COLUMNS = (FILE_COLUMN, POS_COLUMN, ROW_ID_COLUMN, LAST_UPDATED_COLUMN)


def _inherit_lineage(stored, base, positions, n):
    """A lineage column: the file's values where not null, else ``base + positions`` (``positions`` None: the
    constant ``base``); all null when ``base`` is None (a file added before row lineage)."""
    if base is None:
        fill = None
    elif positions is None:
        fill = numbers_to_arrow(np.full(n, base, dtype=np.int64))
    else:
        fill = numbers_to_arrow(np.asarray(positions, dtype=np.int64) + np.int64(base))
    if stored is None or stored.null_count == len(stored):
        return fill if fill is not None else pa.nulls(n, pa.int64())
    stored = _one_chunk(stored)
    if stored.type != pa.int64():
        stored = stored.cast(pa.int64())
    if stored.null_count == 0 or fill is None:
        return stored
    import pyarrow.compute as pc   # (imported on use: a plain read does not load it)
    return pc.coalesce(stored, fill)

def read_deletion_vector(raw: bytes, path: str = "?", offset: int = 0, cardinality: int | None = None,
                         record_count: int | None = None) -> np.ndarray:
    """Sorted int64 positions of an Iceberg ``deletion-vector-v1`` blob (see
    :func:`paimon_engine.index.iceberg_deletion_vector.deserialize_deletion_vector`).

    ``cardinality``: the deleted-row count the manifest records for the vector (checked before the positions
    are expanded); ``record_count``: the data file's row count (no position may reach it)."""
    from ..index.iceberg_deletion_vector import deserialize_deletion_vector
    return deserialize_deletion_vector(raw, path, offset, cardinality=cardinality, record_count=record_count)


# ---------------------------------------------------------------------------
# field-id resolution
# ---------------------------------------------------------------------------

def _field_id(f: pa.Field):
    meta = f.metadata or {}
    raw = meta.get(b"PARQUET:field_id") or meta.get(b"field_id")
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _variant_column(arr, path: str):
    """An unshredded variant column read from a file (a struct of the binaries ``metadata`` and ``value``) as
    ``struct<metadata, value>``, every value checked (a bad one is a CorruptFileError naming the column, the row
    and the byte offset)."""
    from ..formats.variant import validate_array
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr.type, pa.ExtensionType):      # a reader's variant extension type: its storage struct
        arr = arr.storage
    have = arr.type
    names = [have.field(i).name for i in range(have.num_fields)] if pa.types.is_struct(have) else []
    if "typed_value" in names:
        raise UnsupportedTypeError(f"column {path}: shredded variant values (typed_value) are not read yet")
    if sorted(names) != ["metadata", "value"] or not all(
            pa.types.is_binary(have.field(n).type) or pa.types.is_large_binary(have.field(n).type) for n in names):
        raise CorruptFileError(f"column {path}: a variant is stored as a group of the binaries metadata and value, "
                               f"not {have}", field=path)
    want = T.VariantType().to_arrow()
    mask = _null_mask(arr)
    out = pa.StructArray.from_arrays([arr.field("metadata").cast(pa.binary()), arr.field("value").cast(pa.binary())],
                                     fields=list(want), mask=mask)
    validate_array(out, column=path)
    return out


def _conform(arr, target: T.DataType, path: str):
    """Cast a column read from a file to the table type ``target`` (promotions, nested renames by id)."""
    if isinstance(target, T.VariantType):
        return _variant_column(arr, path)
    want = target.to_arrow()
    have = arr.type
    if have == want:
        return arr
    if isinstance(target, T.RowType) and pa.types.is_struct(have):
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        by_id = {}
        by_name = {}
        for i in range(have.num_fields):
            f = have.field(i)
            fid = _field_id(f)
            if fid is not None:
                by_id[fid] = i
            by_name[f.name] = i
        children = []
        for fld in target.fields:
            i = by_id.get(fld.id) if by_id else by_name.get(fld.name)
            if i is None:
                children.append(pa.nulls(len(arr), fld.type.to_arrow()))
            else:
                children.append(_conform(arr.field(i), fld.type, path + "." + fld.name))
        mask = _null_mask(arr)
        return pa.StructArray.from_arrays(children, fields=list(want), mask=mask)
    if isinstance(target, T.ArrayType) and (pa.types.is_list(have) or pa.types.is_large_list(have)):
        # elements are conformed by id too (renamed or promoted fields inside a list element)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        offsets, lo, hi = _offsets(arr)
        values = _conform(arr.values.slice(lo, hi - lo), target.element, path + ".element")
        mask = _null_mask(arr)
        cls = pa.LargeListArray if pa.types.is_large_list(want) else pa.ListArray
        return cls.from_arrays(offsets, values, type=want, mask=mask)
    if isinstance(target, T.MapType) and pa.types.is_map(have):
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        offsets, lo, hi = _offsets(arr)
        keys = _conform(arr.keys.slice(lo, hi - lo), target.key, path + ".key")
        items = _conform(arr.items.slice(lo, hi - lo), target.value, path + ".value")
        mask = _null_mask(arr)
        return pa.MapArray.from_arrays(offsets, keys, items, type=want, mask=mask)
    try:
        return arr.cast(want)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise UnsupportedTypeError(f"column {path}: cannot read {have} as {want}: {exc}") from None


def _null_mask(arr):
    """A boolean array that is True where ``arr`` is null, or None when nothing is."""
    if not arr.null_count:
        return None
    import pyarrow.compute as pc   # (imported on use: a plain read does not load it)
    return pc.is_null(arr)


def _offsets(arr):
    """(offsets starting at 0, first and end child index) of a list or map array, which may be a slice."""
    offsets = arr.offsets
    lo, hi = offsets[0].as_py(), offsets[len(offsets) - 1].as_py()
    if lo:
        import pyarrow.compute as pc
        offsets = pc.subtract(offsets, pa.scalar(lo, offsets.type))
    return offsets, lo, hi


def _default_array(field: T.DataField, n: int):
    """A column a data file lacks: its ``initial-default`` (JSON single-value form) on every row, else null."""
    from ..spec.conversions import default_array
    return default_array(field, field.initial_default, n)


_LOCAL_BUFFER = 1 << 20
#: late materialization takes the passing rows of the other columns when at most 1 / _LATE_ROWS of the rows pass
_LATE_ROWS = 4
#: the physical types of columns read as dictionary indices: string/binary ones, and (``fixed``) fixed-width ones
_DICTIONARY_PHYSICAL = {False: ("BYTE_ARRAY",), True: ("BYTE_ARRAY", "INT32", "INT64", "FLOAT", "DOUBLE")}


class _ParquetFile:
    """A data file opened for column reads by field id."""

    def __init__(self, io, path):
        self.path = path
        fs, p = io.resolve(path)
        from ..errors import NotFoundError
        try:
            f = fs.open_input_file(p)
        except FileNotFoundError:
            raise NotFoundError(f"data file not found: {path}") from None
        except OSError as exc:
            if not io.exists(path):
                raise NotFoundError(f"data file not found: {path}") from None
            raise CorruptFileError(f"cannot open file: {exc}", path=path) from None
        self._file = f
        try:
            self._read_footer(fs, path)
        except BaseException:
            f.close()   # (the error's traceback would otherwise hold the file open for as long as it lives)
            raise

    def _read_footer(self, fs, path):
        import pyarrow.parquet as pq
        self._lock = threading.Lock()     # seek + read of _read_buffer
        # page headers are walked only where reading them is cheap (a local file)
        self._local = getattr(fs, "type_name", "") == "local"
        # a local file's column chunks stream through a small buffer instead of being read whole into memory
        # (the compressed chunks of a file are otherwise held next to the decoded columns); remote files keep
        # one read per column chunk
        self._buffer_size = _LOCAL_BUFFER if self._local else 0
        try:
            self.pf = pq.ParquetFile(self._file, buffer_size=self._buffer_size)
            schema = self.schema_arrow = self.pf.schema_arrow   # (pyarrow builds it anew on every access)
        except (pa.ArrowException, OSError, ValueError) as exc:
            if "LogicalType that is not recognized" in str(exc):
                # a valid file whose schema uses a logical type newer than the installed pyarrow (VARIANT,
                # GEOMETRY, GEOGRAPHY as other engines write them): not corrupt, but not readable here
                raise UnsupportedTypeError(
                    f"cannot read Parquet file {path}: it uses a Parquet logical type pyarrow {pa.__version__} does "
                    f"not know (a variant or geospatial column written with its annotation); a newer pyarrow "
                    f"is needed") from None
            # ValueError: UnicodeDecodeError of a column name or key that is not UTF-8; ArrowNotImplementedError:
            # a column type Arrow has no type for (say, an integer wider than 64 bits)
            raise CorruptFileError(f"cannot read Parquet file: {exc}", path=path, offset=0) from None
        self.num_rows = self.pf.metadata.num_rows
        self.by_id = {}
        self.by_name = {}
        try:
            for i, f in enumerate(schema):
                fid = _field_id(f)
                if fid is not None:
                    self.by_id[fid] = f.name
                if f.name in self.by_name:
                    raise CorruptFileError(f"cannot read Parquet file: column name {f.name!r} appears twice",
                                           path=path, offset=0)
                self.by_name[f.name] = f.name
        except UnicodeDecodeError as exc:   # pyarrow decodes a column name on access: not UTF-8 is corrupt
            raise CorruptFileError(f"cannot read Parquet file: a column name is not UTF-8 ({exc})", path=path,
                                   offset=0) from None
        self.has_ids = bool(self.by_id)
        self._leaf = None
        self._dict_readers = {}
        self._chunk_problem = None

    def close(self):
        """Give the file back (what was read from it stays readable)."""
        self._file.close()

    def check_statistics(self):
        """Raise CorruptFileError unless every column chunk names its schema column's physical type and has
        statistics of the width of that type (:mod:`.parquet_footer`). Called before pyarrow is asked for
        statistics, which ends the process on such a chunk instead of raising."""
        if self._chunk_problem is None:
            from .parquet_footer import column_chunk_problem
            try:
                # the footer as stored (re-serializing pyarrow's copy of it can crash on such metadata):
                # FileMetaData, its length, PAR1
                size = self._file.size()
                tail = self._file.read_at(8, size - 8) if size >= 12 else b""
                n = struct.unpack("<I", tail[:4])[0] if len(tail) == 8 and tail[4:] == b"PAR1" else -1
                if not 0 <= n <= size - 12:
                    raise CorruptFileError("Parquet footer length outside the file", path=self.path,
                                           offset=max(size - 8, 0))
                footer = self._file.read_at(n, size - 8 - n)
                schema = self.pf.schema
                leaves = [(schema.column(j).physical_type, schema.column(j).length) for j in range(len(schema))]
            except (pa.ArrowException, OSError, ValueError) as exc:
                if isinstance(exc, CorruptFileError):
                    raise
                raise CorruptFileError(f"cannot read Parquet metadata: {exc}", path=self.path) from None
            self._chunk_problem = column_chunk_problem(footer, leaves) or ""
        if self._chunk_problem:
            raise CorruptFileError(f"bad Parquet column chunk metadata: {self._chunk_problem}", path=self.path)

    def column_name(self, field: T.DataField):
        if self.has_ids:
            return self.by_id.get(field.id)
        return self.by_name.get(field.name)

    is_row = False

    def row_group_rows(self):
        md = self.pf.metadata
        return [md.row_group(i).num_rows for i in range(md.num_row_groups)]

    def leaf_index(self):
        """Top-level column name -> Parquet leaf column index, for flat (non-nested) columns."""
        if self._leaf is None:
            md = self.pf.metadata
            # pyarrow's column chunk accessors end the process on a row group with more column chunks than the
            # schema has columns (and fail on one with fewer)
            n = md.num_columns
            for i in range(md.num_row_groups):
                if md.row_group(i).num_columns != n:
                    raise CorruptFileError(f"Parquet row group {i} has {md.row_group(i).num_columns} column chunks "
                                           f"for the schema's {n} columns", path=self.path, offset=0)
            out = {}
            if md.num_row_groups:
                rg = md.row_group(0)
                try:
                    for j in range(rg.num_columns):
                        path = rg.column(j).path_in_schema
                        if "." not in path:
                            out[path] = j
                except UnicodeDecodeError as exc:
                    raise CorruptFileError(f"cannot read Parquet file: a column path is not UTF-8 ({exc})",
                                           path=self.path, offset=0) from None
            self._leaf = out
        return self._leaf

    def row_span(self, task):
        """(first row, end row) of the row groups a split reads, or None for the whole file."""
        if task.start is None:
            return None
        chosen, _ = self.row_groups_in(task.start, task.length)
        if not chosen:
            return (0, 0)
        rows = self.row_group_rows()
        return (sum(rows[:chosen[0]]), sum(rows[:chosen[-1] + 1]))

    def row_groups_in(self, start, length):
        """Row groups whose first byte lies in [start, start+length), and the file row index of the first."""
        md = self.pf.metadata
        chosen, first_row, row = [], None, 0
        for i in range(md.num_row_groups):
            rg = md.row_group(i)
            c = rg.column(0) if rg.num_columns else None
            off = 0 if c is None else (c.dictionary_page_offset if c.has_dictionary_page and
                                       c.dictionary_page_offset is not None else c.data_page_offset)
            if start <= off < start + length:
                if first_row is None:
                    first_row = row
                chosen.append(i)
            row += rg.num_rows
        return chosen, (first_row or 0)

    def dictionary_names(self, names, row_groups=None, fixed=False):
        """The names among ``names`` (flat columns; the caller picks string/binary ones, or with ``fixed``
        fixed-width ones too) whose data pages are all dictionary-encoded in every row group read (see
        :mod:`.parquet_pages`): these read as dictionary indices, and a kernel makes the plain values
        (``deletes.decode_dictionary``; fixed-width ones, a filter's column: :func:`_dictionary_rows`). Only for
        local files (the check reads page headers)."""
        if not self._local or not names:
            return []
        md = self.pf.metadata
        groups = range(md.num_row_groups) if row_groups is None else row_groups
        if not len(groups):
            return []
        leaf = self.leaf_index()
        out = []
        for name in names:
            j = leaf.get(name)
            if j is None:
                continue
            ok = True
            for g in groups:
                c = md.row_group(g).column(j)
                if c.physical_type not in _DICTIONARY_PHYSICAL[fixed] or not c.has_dictionary_page \
                        or not c.dictionary_page_offset:
                    ok = False
                    break
                start = c.dictionary_page_offset
                if not all_data_pages_dictionary_encoded(self._file.read_at, start, start + c.total_compressed_size):
                    ok = False
                    break
            if ok:
                out.append(name)
        return out

    def _read_buffer(self, n, offset):
        """``n`` bytes at ``offset`` as an Arrow buffer (from Arrow's memory pool, which keeps freed memory for
        the next read instead of handing it back to the system and taking it again page by page)."""
        f = self._file
        with self._lock:
            f.seek(offset)
            return f.read_buffer(n)

    def _reader(self, dict_names):
        if not dict_names:
            return self.pf
        key = tuple(sorted(dict_names))
        r = self._dict_readers.get(key)
        if r is None:
            import pyarrow.parquet as pq
            r = self._dict_readers[key] = pq.ParquetFile(self._file, metadata=self.pf.metadata,
                                                         read_dictionary=list(key), buffer_size=self._buffer_size)
        return r

    def read(self, names, row_groups=None, dict_names=(), selection=None, keep=None):
        """The columns ``names`` of the row groups (all when None) as a table; ``dict_names`` read as dictionary
        indices; ``selection``: only these rows (sorted int64, counted from the first row of the row groups
        read); ``keep``: instead, a bool flag per row of the row groups read, and only the flagged rows (the page
        decoder writes only those). Flat columns go through the engine's page decoder (:mod:`.parquet_columns`),
        the others through pyarrow."""
        names = list(names)
        own, rest = self._decode(names, row_groups, dict_names, selection, keep) if names else ({}, names)
        if not rest:
            return pa.Table.from_arrays([own[x] for x in names], names=names)
        try:
            pf = self._reader(frozenset(dict_names) & frozenset(rest))
            if row_groups is not None:
                tbl = pf.read_row_groups(row_groups, columns=rest, use_threads=True)
            else:
                tbl = pf.read(columns=rest, use_threads=True)
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFileError(f"cannot decode Parquet data: {exc}", path=self.path) from None
        _check_strings(tbl, self.path)
        if selection is not None:
            if len(selection) and selection[-1] >= tbl.num_rows:
                raise CorruptFileError(f"the row groups hold {tbl.num_rows} rows, not the "
                                       f"{int(selection[-1]) + 1} their footer counts", path=self.path)
            tbl = tbl.take(numbers_to_arrow(np.asarray(selection, dtype=np.int64)))
        if keep is not None:
            if len(keep) != tbl.num_rows:
                raise CorruptFileError(f"the row groups hold {tbl.num_rows} rows, not the {len(keep)} their footer "
                                       f"counts", path=self.path)
            tbl = tbl.filter(numbers_to_arrow(np.asarray(keep, dtype=np.bool_)))
        if not own:
            return tbl
        try:
            return pa.Table.from_arrays([own[x] if x in own else tbl.column(x) for x in names], names=names)
        except pa.ArrowInvalid as exc:   # the row groups hold other row counts than their column chunks
            raise CorruptFileError(f"cannot read Parquet data: {exc}", path=self.path) from None

    def _leaf_and_type(self, leaf, name, dict_names):
        """(leaf column index, Arrow type to decode it as: dictionary indices for ``dict_names``) of a top-level
        column, or (None, None) when it is not a leaf of the file's schema."""
        j = leaf.get(name)
        i = self.schema_arrow.get_field_index(name)
        if j is None or i < 0:
            return None, None
        t = self.schema_arrow.field(i).type
        return j, (pa.dictionary(pa.int32(), t) if name in dict_names else t)

    def _decode(self, names, row_groups, dict_names, selection=None, keep=None):
        """({name: chunked array} of the flat columns the page decoder reads, [names left to pyarrow])."""
        from .parquet_columns import Unsupported, chunk_of, read_column_chunk
        md = self.pf.metadata
        groups = range(md.num_row_groups) if row_groups is None else row_groups
        leaf = self.leaf_index() if md.num_row_groups else {}
        pschema = self.pf.schema
        own, rest = {}, []
        size = None
        for name in names:
            j, t = self._leaf_and_type(leaf, name, dict_names)
            if j is None:
                rest.append(name)
                continue
            if size is None:
                size = self._file.size()
            try:
                chunks = []
                first = 0
                for g in groups:
                    rg = md.row_group(g)
                    chunk = chunk_of(rg.column(j), pschema.column(j), rg.num_rows, self.path)
                    sel = flags = None
                    if selection is not None:
                        a, b = np.searchsorted(selection, (first, first + rg.num_rows))
                        sel = selection[a:b] - first
                    elif keep is not None:
                        flags = keep[first:first + rg.num_rows]
                        if len(flags) != rg.num_rows:
                            raise CorruptFileError(f"row group {g} holds {rg.num_rows} rows where {len(flags)} "
                                                   f"are left", path=self.path)
                    first += rg.num_rows
                    chunks.append(read_column_chunk(self.path, self._read_buffer, size, chunk, t, sel, flags))
            except Unsupported:
                rest.append(name)
                continue
            except (pa.ArrowException, OSError) as exc:
                raise CorruptFileError(f"cannot read Parquet column {name}: {exc}", path=self.path) from None
            own[name] = pa.chunked_array(chunks, type=t)
        return own, rest

    def iter_batches(self, names, batch_size, row_groups=None, dict_names=()):
        """The columns ``names`` of the row groups (all when None) as record batches of ``batch_size`` rows (the
        last of each row group shorter). Flat columns are decoded page by page by the engine's page decoder
        (:func:`.parquet_columns.iter_column_chunk`), the others by pyarrow; a batch holds the same rows of
        every column, and memory holds a page and a batch per column."""
        from .parquet_columns import Unsupported, chunk_of, iter_column_chunk
        names = list(names)
        md = self.pf.metadata
        groups = range(md.num_row_groups) if row_groups is None else row_groups
        leaf = self.leaf_index() if md.num_row_groups else {}
        pschema = self.pf.schema
        size = self._file.size()

        def own(name, t, chunk, g):
            done = 0
            try:
                for arr in iter_column_chunk(self.path, self._read_buffer, size, chunk, t, batch_size):
                    yield arr
                    done += len(arr)
                return
            except Unsupported:
                pass     # the rest of the column through pyarrow, from the first row not yet given
            except (pa.ArrowException, OSError) as exc:
                raise CorruptFileError(f"cannot read Parquet column {name}: {exc}", path=self.path) from None
            for rb in self._pyarrow_batches([name], batch_size, g, dict_names):
                if done >= rb.num_rows:
                    done -= rb.num_rows
                    continue
                yield rb.column(0).slice(done)
                done = 0

        for g in groups:
            rg = md.row_group(g)
            n = rg.num_rows
            if n <= 0:
                continue
            columns, rest = {}, []
            for name in names:
                j, t = self._leaf_and_type(leaf, name, dict_names)
                if j is None:
                    rest.append(name)
                    continue
                try:
                    chunk = chunk_of(rg.column(j), pschema.column(j), n, self.path)
                except Unsupported:
                    rest.append(name)
                    continue
                columns[name] = own(name, t, chunk, g)
            others = self._pyarrow_batches(rest, batch_size, g, dict_names) if rest else None
            done = 0
            while done < n:
                m = min(batch_size, n - done)
                try:
                    rb = next(others) if others is not None else None
                    cols = [next(columns[x]) if x in columns else rb.column(x) for x in names]
                    batch = pa.RecordBatch.from_arrays(cols, names=names)
                except StopIteration:
                    raise CorruptFileError(f"row group {g} holds fewer rows than the {n} its footer counts",
                                           path=self.path) from None
                except pa.ArrowInvalid as exc:
                    raise CorruptFileError(f"cannot read Parquet data: {exc}", path=self.path) from None
                if batch.num_rows != m:
                    raise CorruptFileError(f"row group {g}: a batch of {batch.num_rows} rows where {m} were due",
                                           path=self.path)
                yield batch
                done += m

    def _pyarrow_batches(self, names, batch_size, g, dict_names):
        """pyarrow's record batches of the columns ``names`` of row group ``g``, cut to ``batch_size`` rows (the
        last shorter), strings checked."""
        pending, have = [], 0
        try:
            for rb in self._reader(frozenset(dict_names) & frozenset(names)).iter_batches(
                    batch_size=batch_size, columns=list(names), use_threads=True, row_groups=[g]):
                _check_strings(rb, self.path)
                pending.append(rb)
                have += rb.num_rows
                while have >= batch_size:
                    tbl = pa.Table.from_batches(pending)
                    yield tbl.slice(0, batch_size).combine_chunks().to_batches()[0] if len(pending) > 1 \
                        else pending[0].slice(0, batch_size)
                    rest = tbl.slice(batch_size)
                    pending = rest.combine_chunks().to_batches() if rest.num_rows else []
                    have -= batch_size
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFileError(f"cannot decode Parquet data: {exc}", path=self.path) from None
        if have:
            yield pa.Table.from_batches(pending).combine_chunks().to_batches()[0]


def _check_strings(data, path):
    """Raise CorruptFileError if a string column (or a string dictionary) of a table or batch pyarrow read is not
    valid UTF-8: pyarrow's Parquet reader does not check."""
    for i, t in enumerate(data.schema.types):
        if pa.types.is_dictionary(t):
            t = t.value_type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            continue
        col = data.column(i)
        chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        try:
            for ch in chunks:
                (ch.dictionary if pa.types.is_dictionary(ch.type) else ch).validate(full=True)
        except pa.ArrowInvalid as exc:
            raise CorruptFileError(f"string column {data.schema.names[i]!r} is not valid UTF-8 ({exc})",
                                   path=path) from None


class _RowFile:
    """A Paimon ``.row`` file (no embedded schema: ``file_schema`` is the RowType it was written with). It is one
    'row group'; position deletes become a row selection, so blocks holding only deleted rows are never decoded."""

    is_row = True

    def __init__(self, io, path, file_schema):
        from ..formats.row import RowFileReader
        from ..errors import NotFoundError
        if file_schema is None:
            raise CorruptFileError("a row file needs the schema it was written with", path=path)
        self.path = path
        self.schema = file_schema
        try:
            self.reader = RowFileReader(path, file_schema, file_io=io)
        except FileNotFoundError:
            raise NotFoundError(f"data file not found: {path}") from None
        self.num_rows = self.reader.num_rows
        self.by_id = {f.id: f.name for f in file_schema.fields}
        self.by_name = {f.name: f.name for f in file_schema.fields}
        self.has_ids = True

    def close(self):
        self.reader.close()

    def column_name(self, field):
        return self.by_id.get(field.id)

    def row_group_rows(self):
        return [self.num_rows]

    def row_groups_in(self, start, length):
        return ([0], 0) if start == 0 else ([], 0)

    def row_span(self, task):
        """(first row, end row) of the blocks a split reads, or None for the whole file."""
        if task.start is None:
            return None
        _, lo, hi = self.split_rows(task)
        return (lo, hi)

    def split_rows(self, task):
        """(blocks, first row, end row) of a split (``task.start``/``length``: the blocks whose first byte lies in
        the range), or (None, 0, num_rows) for the whole file."""
        if task.start is None:
            return None, 0, self.num_rows
        blocks = self.reader.blocks_in(task.start, task.length)
        lo, hi = self.reader.row_range(blocks)
        return blocks, lo, hi

    def read(self, names, row_groups=None, selection=None, blocks=None):
        batch = self.reader.read_all(columns=list(names), selection=selection, blocks=blocks)
        return batch.to_arrow_table() if hasattr(batch, "to_arrow_table") else batch.to_arrow()


def _open(io, path, fmt, file_schema=None):
    fmt = (fmt or "parquet").lower()
    if fmt == "parquet":
        return _ParquetFile(io, path)
    if fmt == "row":
        return _RowFile(io, path, file_schema)
    raise UnsupportedTypeError(f"reading {fmt} data files is not supported ({path})")


def _refuse_variants_in_collections(dtype, path=""):
    """Variant values are read as top-level columns and struct fields; inside lists and maps not yet."""
    if isinstance(dtype, T.RowType):
        for f in dtype.fields:
            _refuse_variants_in_collections(f.type, f"{path}.{f.name}" if path else f.name)
    elif isinstance(dtype, (T.ArrayType, T.MapType)):
        if T.variant_paths(dtype):
            raise UnsupportedTypeError(f"cannot read column {path!r}: variant values inside lists and maps are "
                                       f"not read yet; read the other columns by naming them")


class TaskReader:
    """Reads tasks of one scan. ``schema``: the table schema filters were bound to; ``projected``: the output
    fields (a RowType); ``metadata_columns``: a subset of ``("_file", "_pos")``; ``all_fields``: field id ->
    DataField over every schema the table has had (for equality keys of dropped columns)."""

    def __init__(self, io, schema: T.RowType, projected: T.RowType, metadata_columns=(), all_fields=None,
                 case_sensitive=True):
        self.io = io
        self.schema = schema
        self.projected = projected
        self.metadata_columns = tuple(c for c in METADATA_COLUMNS if c in set(metadata_columns))
        self.all_fields = dict(all_fields or {})
        for f in schema.fields:
            self.all_fields.setdefault(f.id, f)
        self.lineage = tuple(c for c in self.metadata_columns if c in LINEAGE_COLUMNS)
        for c in self.lineage:
            self.all_fields[LINEAGE_COLUMNS[c]] = lineage_field(c)
        _refuse_variants_in_collections(projected)
        self._pos_cache: dict = {}
        self._eq_cache: dict = {}
        self._lock = threading.Lock()
        self.output_schema = self._output_schema()

    def __getstate__(self):
        # ship to executors without caches, locks or open filesystems; FileIO is rebuilt from its settings
        d = {k: v for k, v in self.__dict__.items() if k not in ("_pos_cache", "_eq_cache", "_lock", "io")}
        d["_io_settings"] = (self.io.properties, getattr(self.io, "_fixed", None))
        return d

    def __setstate__(self, d):
        from ..io import FileIO
        props, fixed = d.pop("_io_settings")
        self.__dict__.update(d)
        self.io = FileIO(props, filesystem=fixed)
        self._pos_cache = {}
        self._eq_cache = {}
        self._lock = threading.Lock()

    def _output_schema(self):
        fields = [pa.field(f.name, f.type.to_arrow(), nullable=f.type.nullable,
                           metadata={b"PARQUET:field_id": str(f.id).encode()}) for f in self.projected.fields]
        if FILE_COLUMN in self.metadata_columns:
            fields.append(pa.field(FILE_COLUMN, pa.string(), nullable=False))
        if POS_COLUMN in self.metadata_columns:
            fields.append(pa.field(POS_COLUMN, pa.int64(), nullable=False))
        for c in self.lineage:
            fields.append(pa.field(c, pa.int64(), metadata={b"PARQUET:field_id": str(LINEAGE_COLUMNS[c]).encode()}))
        return pa.schema(fields)

    # -- delete files ------------------------------------------------------
    def _positions_for(self, delete_file, data_path, record_count=None, span=None):
        """Sorted deleted positions of ``data_path`` from one delete file, only those in rows ``span``
        (``(lo, hi)``; None: the whole file). A deletion vector is cached as its validated bitmaps and expands
        only the span's positions; a position-delete file is cached whole and sliced."""
        key = delete_file.path if not delete_file.is_deletion_vector else \
            (delete_file.path, delete_file.content_offset)
        with self._lock:
            cached = self._pos_cache.get(key)
        if cached is None:
            cached = self._load_positions(delete_file, record_count, data_path)
            with self._lock:
                self._pos_cache[key] = cached
        if delete_file.is_deletion_vector:
            return cached.positions() if span is None else cached.positions(span[0], span[1])
        pos = cached.get(_norm_path(data_path), np.zeros(0, np.int64))
        if span is not None and pos.size:
            a, b = np.searchsorted(pos, span).tolist()
            pos = pos[a:b]
        return pos

    def _load_positions(self, d, record_count=None, data_path=None):
        if d.is_deletion_vector:
            off, size = d.content_offset, d.content_size
            if off is None or size is None:
                raise CorruptFileError("deletion vector entry without content offset/size", path=d.path)
            with self.io.open_input(d.path) as f:
                if off < 0 or size < 0 or off + size > f.size:
                    raise CorruptFileError(f"deletion vector range {off}+{size} outside the file ({f.size} bytes)",
                                           path=d.path, offset=off)
                raw = f.read_at(off, size)
            rc = record_count if record_count is not None and record_count >= 0 else None
            from ..index.iceberg_deletion_vector import parse_deletion_vector
            return parse_deletion_vector(raw, d.path, off, cardinality=d.record_count or None, record_count=rc)
        try:
            return self._read_position_file(d, data_path)
        except (pa.ArrowException, UnicodeDecodeError) as exc:
            # a column Arrow cannot cast or convert (pos not an integer, file_path not UTF-8, ...)
            raise CorruptFileError(f"cannot read position delete file: {exc}", path=d.path) from None

    def _read_position_file(self, d, data_path=None):
        """{normalized data file path: its sorted deleted positions} of a position delete file. A file whose
        manifest entry names ``data_path`` as its ``referenced_data_file`` (every row deletes from that file) is
        read for ``pos`` alone; otherwise a Parquet file's ``file_path`` is read as dictionary indices."""
        pf = _open(self.io, d.path, d.file_format, d.file_schema)
        try:
            return self._read_positions(pf, d, data_path)
        finally:
            pf.close()

    @staticmethod
    def _read_positions(pf, d, data_path):
        names = {}
        for fid, want in ((2147483546, "file_path"), (2147483545, "pos")):
            n = pf.by_id.get(fid) if pf.has_ids else None
            names[want] = n or pf.by_name.get(want)
        fp, ps = names["file_path"], names["pos"]
        if fp is None or ps is None:
            raise CorruptFileError("position delete file lacks file_path/pos columns", path=d.path)
        if not pf.is_row:
            types = {f.name: f.type for f in pf.schema_arrow}
            ft, pt = types.get(fp), types.get(ps)
            if ft is None or not (pa.types.is_string(ft) or pa.types.is_large_string(ft)) \
                    or pt is None or not pa.types.is_integer(pt):
                raise CorruptFileError(f"position delete columns file_path: {ft}, pos: {pt} (want string and "
                                       f"integer)", path=d.path)
        if d.referenced_data_file is not None and data_path is not None \
                and _norm_path(d.referenced_data_file) == _norm_path(data_path):
            pos = pf.read([ps]).column(0).combine_chunks()
            if pos.null_count:
                raise CorruptFileError("null pos in a position delete file", path=d.path)
            return {_norm_path(data_path): merge_positions([_int64s(pos)])} if len(pos) else {}
        tbl = pf.read([fp, ps]) if pf.is_row else pf.read([fp, ps], dict_names=(fp,))
        paths = tbl.column(fp)
        pos = tbl.column(ps).combine_chunks()
        if paths.null_count or pos.null_count:
            raise CorruptFileError("null file_path or pos in a position delete file", path=d.path)
        pos = _int64s(pos)
        if not pa.types.is_dictionary(paths.type):
            paths = pa.chunked_array([paths.combine_chunks().dictionary_encode()])
        elif paths.num_chunks > 1:
            paths = paths.unify_dictionaries()
        if not paths.num_chunks or not len(pos):
            return {}
        dict_vals = paths.chunk(0).dictionary.to_pylist()
        codes = _int64s(pa.chunked_array([c.indices for c in paths.chunks]).combine_chunks())
        if len(dict_vals) == 1:
            return {_norm_path(dict_vals[0]): merge_positions([pos])}
        order = np.argsort(codes, kind="stable")
        sc = codes[order]
        bounds = np.flatnonzero(np.diff(sc)) + 1
        groups = {}
        for s, e in zip([0] + bounds.tolist(), bounds.tolist() + [len(sc)]):
            # (a dictionary may hold one path twice)
            groups.setdefault(_norm_path(dict_vals[sc[s]]), []).append(pos[order[s:e]])
        return {key: merge_positions(parts) for key, parts in groups.items()}

    def _equality_set(self, ids, files):
        key = (ids, tuple(sorted(d.path for d in files)))
        with self._lock:
            s = self._eq_cache.get(key)
        if s is not None:
            return s
        tables = []
        for d in files:
            pf = _open(self.io, d.path, d.file_format, d.file_schema)
            cols = []
            names = []
            for fid in ids:
                fld = self.all_fields.get(fid)
                n = pf.by_id.get(fid) if pf.has_ids else (pf.by_name.get(fld.name) if fld else None)
                names.append(n)
            try:
                if all(n is None for n in names):
                    # none of the key columns is in the file: its row count would come from the footer alone
                    raise CorruptFileError(f"equality delete file holds none of its key columns (field ids "
                                           f"{list(ids)})", path=d.path, offset=0)
                tbl = pf.read([n for n in names if n is not None])
            finally:
                pf.close()
            for n in names:
                if n is not None and n not in tbl.column_names:
                    # the key's field id names a column that reads as nothing (a struct without leaves)
                    raise CorruptFileError(f"equality delete key column {n!r} cannot be read as a key column",
                                           path=d.path, offset=0)
                cols.append(pa.nulls(tbl.num_rows) if n is None else tbl.column(n))
            tables.append((d.path, cols))
        try:
            s = EqualityDeleteSet.concat(ids, [cols for _, cols in tables])
        except (pa.ArrowException, UnicodeDecodeError) as exc:
            raise CorruptFileError(f"cannot read equality delete files: {exc}",
                                   path=tables[0][0] if len(tables) == 1 else ", ".join(p for p, _ in tables)
                                   ) from None
        with self._lock:
            self._eq_cache[key] = s
        return s

    # -- data --------------------------------------------------------------
    def _needed(self, task):
        ids = [f.id for f in self.projected.fields]
        residual = task.residual
        if residual is not None and not isinstance(residual, AlwaysTrue):
            for name in referenced_names(residual):
                top = name.split(".")[0]
                for f in self.schema.fields:
                    if f.name == top and f.id not in ids:
                        ids.append(f.id)
        for d in task.deletes:
            if d.content == EQUALITY:
                for fid in d.equality_ids:
                    if fid not in ids:
                        ids.append(fid)
        for fid in ids[len(self.projected.fields):]:       # filter and equality-key columns
            fld = self.all_fields.get(fid)
            if fld is not None and T.variant_paths(fld.type):
                T.refuse_variant(T.RowType([fld]), "filter")
        ids += [LINEAGE_COLUMNS[c] for c in self.lineage]
        return ids

    def read_task(self, task, batch_size=None):
        """Yield the task's rows as ``pyarrow.RecordBatch`` objects (one per Parquet batch when ``batch_size``
        is given, else one per file)."""
        pf = _open(self.io, task.path, task.file_format, task.file_schema)
        try:
            yield from self._read_open_task(task, pf, batch_size)
        finally:
            pf.close()   # (also when the reader stops early or the read fails)

    def _read_open_task(self, task, pf, batch_size):
        ids = self._needed(task)
        fields = [self.all_fields.get(fid) for fid in ids]
        file_cols = {}
        for fid, fld in zip(ids, fields):
            if fld is None:
                continue
            n = pf.column_name(fld)
            if n is not None:
                file_cols[fid] = n
        names = list(dict.fromkeys(file_cols.values()))
        eq_groups = self._eq_groups(task)
        if pf.is_row:
            positions = self._task_positions(task, pf)
            yield from self._read_row_file(task, pf, names, file_cols, positions, eq_groups, batch_size)
            return
        # position deletes load on the pool while the data file is read
        pending = submit("deletes", self._task_positions, task, pf) \
            if any(d.content == POSITION for d in task.deletes) else None
        try:
            yield from self._read_parquet_file(task, pf, names, file_cols, pending, eq_groups, batch_size)
        finally:
            if pending is not None and not pending.done():
                pending.cancel()

    def _read_parquet_file(self, task, pf, names, file_cols, pending, eq_groups, batch_size):
        got = []

        def positions():
            if not got:
                got.append(pending.result() if pending is not None else None)
            return got[0]
        rg_rows = pf.row_group_rows()
        rg_start = np.concatenate([[0], np.cumsum(rg_rows)]).astype(np.int64).tolist() if rg_rows else [0]
        if task.start is not None:
            chosen, _ = pf.row_groups_in(task.start, task.length)
        else:
            chosen = list(range(len(rg_rows)))
        pruned = False
        residual = task.residual
        if residual is not None and not isinstance(residual, AlwaysTrue) and len(chosen) > 1:
            keep_rgs = [i for i in chosen if self._row_group_may_match(pf, i, residual)]
            pruned = len(keep_rgs) != len(chosen)
            chosen = keep_rgs
        rows_first = None
        if not batch_size and ((residual is not None and not isinstance(residual, AlwaysTrue))
                               or any(len(e) for _, e in eq_groups)):
            rows_first = self._residual_columns(task, pf, names, file_cols, eq_groups)
        if not chosen:
            return
        # contiguous runs of row groups, so row positions stay absolute
        runs = []
        for i in chosen:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        whole = task.start is None and not pruned
        # string columns are read as dictionary indices where rows are removed (the values of the kept rows are
        # then copied once); when every row is kept the page decoder writes the values itself
        filters = (residual is not None and not isinstance(residual, AlwaysTrue)) or any(len(e) for _, e in eq_groups)
        removes = pending is not None or task.selection is not None or filters
        # rows removed only by position (deletes, a selection): known before any page is decoded
        by_flags = not batch_size and rows_first is None and not filters and \
            (pending is not None or task.selection is not None)
        for run in runs:
            first = rg_start[run[0]]
            total = rg_start[run[-1] + 1]
            rgs = None if whole else run
            if rows_first is not None:
                yield from self._read_passing_rows(task, pf, names, file_cols, rows_first, rgs, first, total,
                                                   positions, eq_groups)
                continue
            dict_names = self._dictionary_names(pf, names, file_cols, rgs) if removes or batch_size else frozenset()
            if batch_size:
                start = first
                if not names:
                    while start < total:
                        n = min(batch_size, total - start)
                        yield from _batches(self._finish(task, None, n, start, file_cols, positions(), eq_groups))
                        start += n
                    continue
                for rb in pf.iter_batches(names, batch_size, rgs, dict_names):
                    out = self._finish(task, rb, rb.num_rows, start, file_cols, positions(), eq_groups,
                                       dict_names=dict_names)
                    start += rb.num_rows
                    yield from _batches(out)
                continue
            if by_flags and names:
                # position deletes / a row selection alone: the page decoder writes only the kept rows
                keep = self._keep_flags(task, positions(), first, total - first)
                kept = int(np.count_nonzero(keep))
                if kept == 0:
                    continue
                if kept < total - first:
                    tbl = pf.read(names, rgs, keep=keep)
                    if tbl.num_rows != kept:
                        raise CorruptFileError(f"the row groups hold {tbl.num_rows} kept rows, not {kept}",
                                               path=task.path)
                    yield from _batches(self._finish(task, tbl, kept, first, file_cols, None, eq_groups, kept=keep))
                    continue
            tbl = pf.read(names, rgs, dict_names) if names else None
            n = (total - first) if tbl is None else tbl.num_rows
            yield from _batches(self._finish(task, tbl, n, first, file_cols, positions(), eq_groups,
                                             dict_names=dict_names))

    def _residual_columns(self, task, pf, names, file_cols, eq_groups=()):
        """([(top-level name, field)] the residual reads, [the file column names of those and of the equality
        delete keys, in read order]) when some column read is not one of them (reading those only for the
        kept rows saves work), else None."""
        fields = []
        if task.residual is not None and not isinstance(task.residual, AlwaysTrue):
            tops = {x.split(".")[0] for x in referenced_names(task.residual)}
            fields = [(f.name, self.all_fields[f.id]) for f in self.schema.fields if f.name in tops]
        fids = {f.id for _, f in fields}
        for ids, eqset in eq_groups:
            if len(eqset):
                fids.update(ids)
        fnames = frozenset(file_cols[fid] for fid in fids if fid in file_cols)
        if not fnames or not any(x not in fnames for x in names):
            return None
        return fields, [x for x in names if x in fnames]

    def _read_passing_rows(self, task, pf, names, file_cols, residual_columns, rgs, first, total, positions,
                           eq_groups):
        """Late materialization inside row groups: the residual's columns and the equality-delete keys are read
        first, and the residual and the equality deletes evaluated on them (with the position deletes and any row
        selection folded in); the other columns are then decoded only for the rows kept. When few rows are kept,
        their pages without such a row are not even decompressed and the kept rows are taken from the others;
        when most are, the page decoder writes only the kept rows of every page (keep flags)."""
        fields, order = residual_columns
        by_dict = self._dictionary_filter(pf, fields, file_cols, rgs, eq_groups)
        ft = pf.read(order, rgs, by_dict)
        n = ft.num_rows
        if n != total - first:
            raise CorruptFileError(f"the row groups hold {n} rows, not the {total - first} their footer counts",
                                   path=task.path)
        keep = None
        # fixed-width values read as dictionary indices: the kept rows' values are gathered from the dictionary
        # here (string/binary ones are made plain in _finish)
        fixed = frozenset(x for x in by_dict if pa.types.is_primitive(ft.schema.field(x).type.value_type))
        if by_dict:
            (top, f), = fields
            keep = dictionary_mask(task.residual, top, ft.column(file_cols[f.id]),
                                   lambda values: _conform(values, f.type, f.name), task.path)
        elif fields:
            cols = {}
            for top, f in fields:
                name = file_cols.get(f.id)
                cols[top] = _default_array(f, n) if name is None else _conform(ft.column(name), f.type, f.name)
            keep = evaluate_numpy(task.residual, pa.table(cols))
        for ids, eqset in eq_groups:
            if not len(eqset):
                continue
            keys = []
            for fid in ids:
                f = self.all_fields.get(fid)
                name = file_cols.get(fid)
                keys.append(pa.nulls(n) if f is None else _default_array(f, n) if name is None else
                            _conform(ft.column(name), f.type, f.name))
            miss = eqset.misses(keys, num_rows=n)
            keep = miss if keep is None else keep & miss
        keep = self._keep_flags(task, positions(), first, n, keep)
        kept = int(np.count_nonzero(keep))
        if kept == 0:
            return
        others = [x for x in names if x not in ft.column_names]
        if kept > n // _LATE_ROWS:
            from .parquet_columns import kept_rows
            rest = pf.read(others, rgs, keep=keep)
            tbl = pa.Table.from_arrays([_dictionary_rows(ft.column(x), keep=keep, path=task.path) if x in fixed
                                        else kept_rows(ft.column(x), keep) if x in ft.column_names
                                        else rest.column(x) for x in names], names=names)
            yield from _batches(self._finish(task, tbl, kept, first, file_cols, None, (), kept=keep,
                                             dict_names=by_dict - fixed, filtered=True))
            return
        rows = np.flatnonzero(keep).astype(np.int64)
        dict_names = self._dictionary_names(pf, others, file_cols, rgs) | (by_dict - fixed)
        rest = pf.read(others, rgs, dict_names, selection=rows)
        tbl = pa.Table.from_arrays([_dictionary_rows(ft.column(x), rows, path=task.path) if x in fixed
                                    else _take(ft.column(x), rows) if x in ft.column_names
                                    else rest.column(x) for x in names], names=names)
        yield from _batches(self._finish(task, tbl, kept, first, file_cols, None, (),
                                         row_ids=rows + first, dict_names=dict_names, filtered=True))

    def _dictionary_filter(self, pf, fields, file_cols, row_groups, eq_groups):
        """The residual's column as a set of its file column name, when the residual reads one column only and
        that column can be read as dictionary indices (string/binary read as such, see
        :meth:`_dictionary_names`, or numbers, dates and times whose stored values are the Arrow ones; every data
        page dictionary-encoded) and is no equality-delete key: the residual is then evaluated once per
        dictionary value (:func:`.deletes.dictionary_mask`) instead of on every row's decoded value. Else
        empty."""
        if len(fields) != 1:
            return frozenset()
        fid = fields[0][1].id
        name = file_cols.get(fid)
        if name is None or any(len(eqset) and fid in ids for ids, eqset in eq_groups):
            return frozenset()
        found = self._dictionary_names(pf, [name], file_cols, row_groups)
        if found:
            return found
        from .parquet_columns import decodable
        leaf = pf.leaf_index().get(name)
        i = pf.schema_arrow.get_field_index(name)
        if leaf is None or i < 0:
            return frozenset()
        physical = pf.pf.schema.column(leaf).physical_type
        as_indices = pa.dictionary(pa.int32(), pf.schema_arrow.field(i).type)
        if physical == "BYTE_ARRAY" or not decodable(physical, as_indices):
            return frozenset()
        return frozenset(pf.dictionary_names([name], row_groups, fixed=True))

    @staticmethod
    def _keep_flags(task, positions, first, n, keep=None):
        """Bool flags of the rows ``first .. first + n`` of the file kept by the position deletes, the row
        selection and ``keep`` (flags of those rows found already, not changed here)."""
        if positions is not None and positions.size:
            mask = keep_mask(positions, first, n)
            keep = mask if keep is None else keep & mask
        if task.selection is not None:
            mask = _selection_mask(task.selection, first, n)
            keep = mask if keep is None else keep & mask
        return np.ones(n, np.bool_) if keep is None else keep

    def _dictionary_names(self, pf, names, file_cols, row_groups):
        """File columns to read as dictionary indices: string/binary columns read as string/binary whose pages
        are all dictionary-encoded (``_ParquetFile.dictionary_names``)."""
        targets = {}
        for fid, name in file_cols.items():
            fld = self.all_fields.get(fid)
            if fld is not None:
                targets.setdefault(name, set()).add(fld.type.to_arrow())
        schema = pf.schema_arrow
        cands = []
        for name in names:
            want = targets.get(name)
            i = schema.get_field_index(name)
            if want and len(want) == 1 and i >= 0 and dictionary_decodable(schema.field(i).type, next(iter(want))):
                cands.append(name)
        return frozenset(pf.dictionary_names(cands, row_groups)) if cands else frozenset()

    def _read_row_file(self, task, pf, names, file_cols, positions, eq_groups, batch_size):
        """Position deletes and row selections become one selection, flags of the rows read: only blocks holding
        kept rows decode, blocks whose rows are all kept decode whole, and the others decode their kept rows."""
        # a split reads the blocks starting in its byte range: rows lo .. hi - 1 of the file
        blocks, lo, hi = pf.split_rows(task)
        n = hi - lo
        if n <= 0:
            return
        keep = None
        count = n
        if (positions is not None and positions.size) or task.selection is not None:
            keep = self._keep_flags(task, positions, lo, n)
            count = int(np.count_nonzero(keep))
            if count == 0:
                return
        selection = keep if count < n else None
        tbl = pf.read(names, selection=selection, blocks=blocks) if names else None
        out = self._finish(task, tbl, count, lo, file_cols, None, eq_groups, kept=keep)
        if batch_size and out is not None and not isinstance(out, pa.RecordBatch):
            out = out.combine_chunks()
            for off in range(0, out.num_rows, batch_size):
                yield from _batches(out.slice(off, batch_size))
            return
        yield from _batches(out)

    def _row_group_may_match(self, pf, i, residual):
        """Inclusive evaluation of the residual against one row group's Parquet statistics."""
        from ..spec.conversions import to_internal
        from .evaluators import FileStats, InclusiveMetricsEvaluator
        try:
            rg = pf.pf.metadata.row_group(i)
            leaf = pf.leaf_index()
            vc, nc, lo, hi = {}, {}, {}, {}
            for fid in _filter_ids(residual):
                fld = self.all_fields.get(fid)
                if fld is None or fld.type.is_nested:
                    continue
                name = pf.column_name(fld)
                j = leaf.get(name)
                if j is None:
                    # not in this file: every value is null (or the initial default)
                    if fld.initial_default is None:
                        vc[fid] = rg.num_rows
                        nc[fid] = rg.num_rows
                    continue
                pf.check_statistics()
                st = rg.column(j).statistics
                if st is None:
                    continue
                vc[fid] = rg.num_rows
                if st.null_count is not None:
                    nc[fid] = st.null_count
                if st.has_min_max and not isinstance(fld.type, (T.FloatType, T.DoubleType)):
                    lo[fid] = to_internal(fld.type, st.min, exact=True)
                    hi[fid] = to_internal(fld.type, st.max, exact=True)
            stats = FileStats(rg.num_rows, vc, nc, {}, lo, hi)
            return InclusiveMetricsEvaluator(residual).eval(stats)
        except CorruptFileError:
            raise
        except Exception:  # statistics are only a shortcut: read the row group
            return True

    def _task_positions(self, task, pf=None):
        """The task's deleted positions: of its rows only when it is a split (its row span in the opened data
        file ``pf``, whose row count bounds the positions; without ``pf``: the whole file, bounded by the task's
        record count)."""
        if not any(d.content == POSITION for d in task.deletes):
            return None
        if pf is None:
            rows, span = (task.record_count if task.record_count >= 0 else None), None
        else:
            rows, span = pf.num_rows, pf.row_span(task)
        arrays = [self._positions_for(d, task.path, rows, span) for d in task.deletes if d.content == POSITION]
        return arrays[0] if len(arrays) == 1 else merge_positions(arrays)

    def _eq_groups(self, task):
        groups = {}
        for d in task.deletes:
            if d.content == EQUALITY:
                groups.setdefault(tuple(d.equality_ids), []).append(d)
        return [(ids, self._equality_set(ids, files)) for ids, files in groups.items()]

    def _finish(self, task, data, n, start, file_cols, positions, eq_groups, row_ids=None, dict_names=frozenset(),
                kept=None, filtered=False):
        """``row_ids``: file row numbers of the rows in ``data`` when deletes/selection were applied already, or
        ``kept``: the flags of the rows from ``start`` on that ``data`` holds (the row numbers are then found only
        if a column needs them); ``dict_names``: columns of ``data`` read as dictionaries (made plain here,
        together with the deletes); ``filtered``: the task's residual was applied already."""
        if row_ids is None and kept is not None:
            found = []

            def row_numbers():
                if not found:
                    found.append(np.flatnonzero(kept).astype(np.int64) + start)
                return found[0]
        else:
            def row_numbers():
                return row_ids
        # position deletes alone become runs of kept rows straight from the positions; any other filter
        # (row selection, equality deletes, residual) makes a mask that the positions are folded into
        keep = None
        has_positions = positions is not None and positions.size > 0

        def fold(mask, keep):
            if keep is None:
                return mask & keep_mask(positions, start, n) if has_positions else mask
            return keep & mask
        if task.selection is not None and row_ids is None and kept is None:
            keep = fold(_selection_mask(task.selection, start, n), keep)

        plain = {}   # dictionary columns made plain before the deletes are known (for keys and filters)

        def column(fid):
            name = file_cols.get(fid)
            fld = self.all_fields[fid]
            if name is None or data is None:
                return _default_array(fld, n)
            if name in dict_names:
                got = plain.get(name)
                if got is None:
                    got = plain[name] = self._plain(data.column(name), fld.type.to_arrow(), task.path)
                return got
            try:
                return _conform(data.column(name), fld.type, fld.name)
            except CorruptFileError as exc:
                if exc.path is None:           # a bad variant: name the file and the row's position in it
                    exc.path = task.path
                    if exc.row is not None:
                        rows = row_numbers()
                        exc.row = int(rows[exc.row]) if rows is not None else start + exc.row
                    exc.args = (exc._render(),)
                raise

        for ids, eqset in eq_groups:
            if len(eqset) == 0:
                continue
            cols = [column(fid) if fid in self.all_fields else pa.nulls(n) for fid in ids]
            keep = fold(eqset.misses(cols, num_rows=n), keep)
        residual = None if filtered else task.residual
        if residual is not None and not isinstance(residual, AlwaysTrue):
            eval_cols = {f.name: column(f.id) for f in self.schema.fields
                         if f.name in {x.split(".")[0] for x in referenced_names(residual)}}
            keep = fold(evaluate_numpy(residual, pa.table(eval_cols) if eval_cols else pa.table({})), keep)
        # output columns; a dictionary column not made plain above is made plain with the deletes applied
        out_cols, deferred = [], {}
        for f in self.projected.fields:
            name = file_cols.get(f.id)
            if data is not None and name in dict_names and name not in plain:
                deferred[len(out_cols)] = (data.column(name), f.type.to_arrow())
                out_cols.append(None)
            else:
                out_cols.append(column(f.id))
        if FILE_COLUMN in self.metadata_columns:
            out_cols.append(repeat_string(task.path, n))
        if POS_COLUMN in self.metadata_columns:
            rows = row_numbers()
            out_cols.append(numbers_to_arrow(np.arange(start, start + n, dtype=np.int64) if rows is None else rows))
        if self.lineage:
            first_row_id = getattr(task, "first_row_id", None)
            for c in self.lineage:
                fid = LINEAGE_COLUMNS[c]
                stored = data.column(file_cols[fid]) if fid in file_cols and data is not None else None
                if stored is not None and not pa.types.is_integer(stored.type):
                    raise CorruptFileError(f"row-lineage column {c} is stored as {stored.type}, not long",
                                           path=task.path)
                if c == ROW_ID_COLUMN:
                    rows = row_numbers()
                    pos = np.arange(start, start + n, dtype=np.int64) if rows is None else rows
                    out_cols.append(_inherit_lineage(stored, first_row_id, pos, n))
                else:
                    seq = task.sequence_number if first_row_id is not None else None
                    out_cols.append(_inherit_lineage(stored, seq, None, n))
        runs = None
        if keep is not None:
            runs = keep_runs(keep)
        elif has_positions:
            runs = position_runs(positions, start, n)
        if not out_cols:
            # no columns at all (count-style reads): carry the row count
            return _empty_batch_with_rows(n if runs is None else runs.kept)
        if runs is not None and runs.kept == n:
            runs = None
        if runs is not None or deferred:
            # the kept rows as runs, found once and copied run by run out of every column (dictionary columns:
            # each kept row's value copied once from the dictionary); the copies run without the GIL, so
            # columns go to the pool together
            # fixed-width columns are copied together, in one pass over the runs
            fixed = [i for i, c in enumerate(out_cols) if i not in deferred and fusable(c)] \
                if runs is not None else []
            units = [tuple(fixed)] if len(fixed) > 1 else []
            units += [(i,) for i in range(len(out_cols)) if len(fixed) < 2 or i not in fixed]

            def finish(unit):
                if len(unit) > 1:
                    return compact_fixed_columns([out_cols[i] for i in unit], runs)
                i = unit[0]
                if i in deferred:
                    raw, target = deferred[i]
                    return [self._plain(raw, target, task.path, runs)]
                return [compact(out_cols[i], runs) if runs is not None else out_cols[i]]
            done = parallel_map("compact", finish, units)
            out_cols = list(out_cols)
            for unit, cols in zip(units, done):
                for i, c in zip(unit, cols):
                    out_cols[i] = c
        return pa.Table.from_arrays(out_cols, schema=self.output_schema)

    @staticmethod
    def _plain(col, target, path, runs=None):
        try:
            return decode_dictionary(col, target, runs)
        except CorruptFileError as exc:
            raise CorruptFileError(str(exc), path=path) from None


def _filter_ids(expr):
    from ..expressions import And, Not, Or, Predicate
    out = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, (And, Or)):
            stack += [e.left, e.right]
        elif isinstance(e, Not):
            stack.append(e.child)
        elif isinstance(e, Predicate) and e.field_id is not None:
            out.add(e.field_id)
    return out


def _empty_batch_with_rows(n):
    """A record batch with no columns and ``n`` rows (what a count-only read yields)."""
    return pa.RecordBatch.from_arrays([pa.nulls(n)], names=["_"]).drop_columns(["_"])


def _batches(out):
    if out is None or out.num_rows == 0:
        return
    if isinstance(out, pa.RecordBatch):
        yield out
    else:
        yield from (b for b in out.to_batches() if b.num_rows)


#: unsigned NumPy types of the fixed widths ``_take`` moves values of
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _take(column, rows):
    """Rows ``rows`` (ascending int64 NumPy row numbers) of a column: a fixed-width column without nulls by NumPy
    indexing of its values (no pyarrow.compute import), anything else by Arrow's take."""
    arr = _one_chunk(column)
    t = arr.type
    width = t.bit_width if pa.types.is_primitive(t) and not pa.types.is_boolean(t) else 0
    if width not in _UNSIGNED or arr.null_count:
        return arr.take(numbers_to_arrow(rows))
    n = len(arr)
    if len(rows) and (rows[0] < 0 or rows[-1] >= n):
        raise IndexError(f"row {int(rows[-1] if rows[-1] >= n else rows[0])} outside a column of {n} rows")
    if not n:
        return arr.slice(0, 0)
    dtype = _UNSIGNED[width]
    values = np.frombuffer(arr.buffers()[1], dtype=dtype, count=arr.offset + n)[arr.offset:]
    return pa.Array.from_buffers(t, len(rows), [None, pa.py_buffer(np.ascontiguousarray(values[rows]))])


def _dictionary_rows(column, rows=None, keep=None, path=None):
    """The values of a dictionary-encoded column of fixed-width values (a filter's column read as indices) at
    ``rows`` (ascending int64 row numbers) or where ``keep`` is set, as a plain array of the dictionary's type:
    gathered from each chunk's dictionary with NumPy (Arrow's take would import pyarrow.compute on a first
    read). Null rows stay null."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    vt = column.type.value_type
    dtype = _UNSIGNED[vt.bit_width]
    if rows is None:
        rows = np.flatnonzero(keep)
    values, valid, lo = [], [], 0
    for ch in chunks:
        n = len(ch)
        a, b = np.searchsorted(rows, (lo, lo + n))
        at = rows[a:b] - lo
        lo += n
        d = ch.dictionary
        idx, ok = dictionary_indices(ch)
        idx = idx[at]
        ok = None if ok is None else ok[at]
        dv = np.frombuffer(d.buffers()[1], dtype, count=d.offset + len(d))[d.offset:] if len(d) else np.zeros(1, dtype)
        if len(idx) and (int(idx.min()) < 0 or int(idx.max()) >= len(dv)):
            raise CorruptFileError(f"a dictionary index outside the dictionary of {len(d)} values", path=path)
        values.append(dv[idx])
        valid.append(np.ones(len(idx), np.bool_) if ok is None else ok)
    out = np.concatenate(values) if values else np.zeros(0, dtype)
    ok = np.concatenate(valid) if valid else np.zeros(0, np.bool_)
    nulls = len(ok) - int(np.count_nonzero(ok))
    bits = pa.py_buffer(np.packbits(ok, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(vt, len(out), [bits, pa.py_buffer(out)], null_count=nulls)


def _one_chunk(c):
    if isinstance(c, pa.ChunkedArray):
        return c.combine_chunks() if c.num_chunks != 1 else c.chunk(0)
    return c


def _int64s(arr) -> np.ndarray:
    """A null-free integer Arrow array as int64 NumPy values, read from its data buffer: pyarrow's
    ``to_numpy`` / ``np.asarray`` import pandas on first use, which costs a fresh process ~50 MB."""
    if isinstance(arr, pa.ChunkedArray):
        if not arr.num_chunks:
            return np.zeros(0, dtype=np.int64)
        arr = _one_chunk(arr)
    if arr.type != pa.int64():
        arr = arr.cast(pa.int64())
    return int64_values(arr)


def _selection_mask(selection, start, n):
    """A row selection (sorted positions to KEEP, or a pyroaring BitMap) as a mask for rows start..start+n."""
    if hasattr(selection, "to_array"):
        sel = np.asarray(selection.to_array(), dtype=np.int64)
    else:
        sel = np.asarray(selection, dtype=np.int64)
    drop = keep_mask(sel, start, n)  # False where selected
    return ~drop


def _norm_path(p: str) -> str:
    from ..io import normalize_location
    return normalize_location(p)
