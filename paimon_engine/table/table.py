"""The :class:`Table` API: metadata access, time travel, reads, and write operations that each end in one atomic
commit (``append``, ``overwrite``, ``delete``, ``row_delta``/``upsert``, ``rewrite_files``), plus maintenance
(``expire_snapshots``, ``remove_orphan_files``) and evolution (``update_schema``, ``update_spec``, properties)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import time
import uuid

import numpy as np

from ..batch import numbers_to_arrow
from ..errors import CommitFailedError, InvalidArgumentError, NotFoundError, SchemaError, UnsafeLocationError
from .commit import SnapshotProducer, commit_metadata_change
from .locations import check_deletable_root, check_within, comparable
from .data_writer import (partition_groups, prepare_arrow, write_data_files, write_equality_deletes,
                          write_position_deletes)
from ..spec.manifest import read_manifest
from ..spec.manifest_list import read_manifest_list
from ..spec.metadata import SnapshotRef
from ..spec.partitioning import PartitionSpec, evolve_spec
from ..spec.snapshots import partition_type_of
from .snapshot_files import SnapshotFiles
from ..spec.schema import Schema, SchemaUpdate

if TYPE_CHECKING:  # annotations only
    from .transaction import Transaction


__all__ = ["Table", "TableSnapshot", "RowDelta", "UpsertResult"]


class _Name(str):
    """The table name as a string (``"db.t"``); called, the identifier tuple as pyiceberg's ``name()``."""

    def __new__(cls, identifier):
        obj = super().__new__(cls, ".".join(p for p in identifier if p))
        obj.identifier = tuple(identifier)
        return obj

    def __call__(self):
        return self.identifier


class _Location(str):
    """The table location as a string; called, the same string as pyiceberg's ``location()``."""

    def __call__(self):
        return str(self)


class UpsertResult:
    """pyiceberg's upsert result: ``rows_updated`` and ``rows_inserted``."""

    __slots__ = ("rows_updated", "rows_inserted")

    def __init__(self, rows_updated: int, rows_inserted: int):
        self.rows_updated = rows_updated
        self.rows_inserted = rows_inserted

    def __repr__(self):
        return f"UpsertResult(rows_updated={self.rows_updated}, rows_inserted={self.rows_inserted})"


def _as_filter(f):
    from ..expressions import AlwaysTrue, Expression, parse
    if f is None:
        return AlwaysTrue()
    if isinstance(f, str):
        return parse(f)
    if isinstance(f, Expression):
        return f
    raise InvalidArgumentError(f"filter must be an expression or a string, got {type(f).__name__}")


class Table:
    def __init__(self, identifier, metadata, io, catalog, location=None):
        self.identifier = tuple(identifier)
        self.metadata = metadata
        self.io = io
        self.catalog = catalog
        self._fs_location = location

    # -- metadata ------------------------------------------------------------
    @property
    def name(self) -> str:
        """``"db.t"``; ``name()`` gives the identifier tuple, as pyiceberg."""
        return _Name(self.identifier)

    @property
    def location(self) -> str:
        """The table location; also callable, as pyiceberg's ``location()``."""
        return _Location(self.metadata.location)

    @property
    def metadata_dir(self) -> str:
        return self.metadata.properties.get("write.metadata.path", f"{self.metadata.location}/metadata")

    @property
    def metadata_location(self) -> str:
        return self.metadata.metadata_location

    @property
    def format_version(self) -> int:
        return self.metadata.format_version

    @property
    def properties(self) -> dict:
        return dict(self.metadata.properties)

    def schema(self) -> Schema:
        return self.metadata.schema()

    def spec(self) -> PartitionSpec:
        return self.metadata.spec()

    def sort_order(self):
        return self.metadata.sort_order()

    def current_snapshot(self):
        return self.metadata.current_snapshot()

    def snapshots(self):
        return list(self.metadata.snapshots)

    def schemas(self) -> dict:
        return {sc.schema_id: sc for sc in self.metadata.schemas}

    def specs(self) -> dict:
        return dict(self.metadata.specs_by_id())

    def snapshot_by_id(self, snapshot_id: int):
        """The snapshot with this id, or None (as pyiceberg)."""
        return self.metadata.snapshot_by_id(snapshot_id)

    def snapshot_by_name(self, name: str):
        """The snapshot a branch or tag points at, or None."""
        return self.metadata.snapshot_by_ref(name)

    @property
    def inspect(self):
        """Metadata tables as Arrow (pyiceberg's ``table.inspect``): ``snapshots()``, ``refs()``, ``history()``,
        ``manifests()``, ``files()``, ``data_files()``, ``delete_files()``, ``entries()``, ``partitions()``."""
        from .inspect import InspectTable
        return InspectTable(self)

    def manage_snapshots(self) -> "ManageSnapshots":
        """Tags, branches and rollback: ``t.manage_snapshots().create_tag(sid, "v1").commit()``."""
        return ManageSnapshots(self)

    def snapshot(self, snapshot_id: int):
        s = self.metadata.snapshot_by_id(snapshot_id)
        if s is None:
            raise NotFoundError(f"table {self.name} has no snapshot {snapshot_id}")
        return s

    def history(self):
        return list(self.metadata.snapshot_log)

    def refresh(self) -> "Table":
        self.metadata = self._refresh_metadata()
        return self

    def __repr__(self):
        return f"Table({self.name!r}, {self.metadata!r})"

    # -- catalog hooks used by commits (the catalog is a TableCatalog) ------------
    def _refresh_metadata(self):
        return self.catalog.refresh_table(self)

    def _commit(self, base, new):
        return self.catalog.commit_table(self, base, new)

    def _set_metadata(self, md):
        self.metadata = md

    def _check_writable(self):
        """Refuse to write when the metadata names a location no table can own (a file-system root, the
        warehouse or above it): data, manifests and metadata would land outside any table."""
        check_deletable_root(self.io, self.metadata.location or "", getattr(self.catalog, "warehouse", None),
                             f"write to table {self.name}")

    # -- time travel and reads -------------------------------------------------
    def _resolve_snapshot(self, snapshot_id=None, as_of=None, ref=None):
        from ..spec.snapshots import resolve_snapshot
        return resolve_snapshot(self.metadata, snapshot_id, as_of, ref)

    def at(self, snapshot_id=None, as_of=None, ref=None) -> "TableSnapshot":
        """A read-only handle on one snapshot (by id, timestamp in ms or datetime, or branch/tag name), read with
        the schema that was current when it was written."""
        snap = self._resolve_snapshot(snapshot_id, as_of, ref)
        schema = self.metadata.schema(snap.schema_id) if snap is not None and snap.schema_id is not None \
            else self.metadata.schema()
        return TableSnapshot(self, snap, schema)

    def to_arrow(self, filter=None, columns=None, snapshot_id=None, as_of=None, ref=None):
        """The table's rows (or those of the snapshot chosen by id, time or ref) as Arrow: planned and read by
        :meth:`scan`, so pruning, file indexes and deletes apply exactly as there."""
        return self.scan(filter=filter, columns=columns, snapshot_id=snapshot_id, as_of=as_of, ref=ref).to_arrow()

    def to_pandas(self, filter=None, columns=None, **kw):
        return self.to_arrow(filter, columns, **kw).to_pandas()

    def scan(self, row_filter=None, selected_fields=None, case_sensitive: bool = True, snapshot_id=None,
             options=None, limit=None, *, filter=None, columns=None, as_of=None, ref=None, workers=None):
        """A :class:`~paimon_engine.scan.TableScan`: pruned planning, deletes applied, parallel reads.

        pyiceberg's keywords (``row_filter``, ``selected_fields``, ``case_sensitive``, ``snapshot_id``,
        ``options``, ``limit``) and ours (``filter``, ``columns``, ``as_of``, ``ref``, ``workers``) both work."""
        from ..scan.planner import TableScan
        if row_filter is not None and filter is not None:
            raise InvalidArgumentError("give row_filter or filter, not both")
        if selected_fields is not None and columns is not None:
            raise InvalidArgumentError("give selected_fields or columns, not both")
        return TableScan(self.metadata, self.io, filter=row_filter if filter is None else filter,
                         columns=selected_fields if columns is None else columns, snapshot_id=snapshot_id,
                         as_of=as_of, ref=ref, case_sensitive=case_sensitive, workers=workers, table=self,
                         limit=limit, options=options)

    def data_files(self, snapshot_id=None):
        """Live data-file entries of a snapshot (default current)."""
        snap = self._resolve_snapshot(snapshot_id)
        return SnapshotFiles(self.io, self.metadata, snap).data

    def delete_files(self, snapshot_id=None):
        snap = self._resolve_snapshot(snapshot_id)
        return SnapshotFiles(self.io, self.metadata, snap).deletes

    # -- writes ------------------------------------------------------------------
    def _write(self, data, spec=None, progress=None):
        self._check_writable()
        schema = self.schema()
        tbl = prepare_arrow(data, schema)
        return write_data_files(self.io, self.location, tbl, spec or self.spec(), schema,
                                self.metadata.properties, progress=progress)

    def new_snapshot(self, operation: str, branch: str = "main") -> SnapshotProducer:
        """A low-level producer to add/remove files yourself and ``commit()``."""
        return SnapshotProducer(self, operation, branch)

    def append(self, data, branch: str = "main", progress=None):
        """Append rows (Arrow, pandas, ColumnBatch, dict of lists); -> the new Snapshot.
        ``progress(step, done, total)`` is told the rows written after each data file."""
        files = self._write(data, progress=progress)
        p = SnapshotProducer(self, "append", branch)
        for f in files:
            p.add_data_file(f)
        p.commit()
        return self.metadata.snapshot_by_ref(branch)

    def _rewrite_matching(self, producer, bound, keep_matching: bool):
        """Copy-on-write: for each live data file, drop rows that match ``bound`` (or all rows when bound is
        None). Returns the number of rows removed."""
        from ..expressions import evaluate_numpy
        files = SnapshotFiles(self.io, self.metadata, self.metadata.current_snapshot())
        schema = self.schema()
        removed_rows = 0
        touched = set()
        lineage = self.format_version >= 3
        for e in files.data:
            if bound is None:
                producer.remove_file(e.data_file)
                touched.add(e.data_file.file_path)
                continue
            tbl, keep = files.read(e, schema, lineage=lineage)
            live = tbl.filter(numbers_to_arrow(keep)) if not keep.all() else tbl
            match = evaluate_numpy(bound, live)
            n = int(match.sum())
            if n == 0 and keep.all():
                continue
            if n == 0:
                continue
            removed_rows += n
            producer.remove_file(e.data_file)
            touched.add(e.data_file.file_path)
            rest = live.filter(numbers_to_arrow(~match))
            if rest.num_rows:
                spec = self.metadata.spec(e.data_file.spec_id)
                for df in write_data_files(self.io, self.location, self._moved_rows(rest, schema), spec, schema,
                                           self.metadata.properties):
                    producer.add_data_file(df)
        # delete files that only reference removed data files go too
        for d in files.deletes:
            ref = d.data_file.referenced_data_file
            if bound is None or (ref is not None and ref in touched):
                producer.remove_file(d.data_file)
        return removed_rows

    @staticmethod
    def _moved_rows(tbl, schema):
        """Rows a rewrite moves to a new file, prepared for writing; in v3 with their ``_row_id`` and
        ``_last_updated_sequence_number`` (the spec: a row keeps both when it moves unchanged)."""
        from ..scan.reader import LAST_UPDATED_COLUMN, ROW_ID_COLUMN
        from .data_writer import with_lineage
        if ROW_ID_COLUMN not in tbl.column_names:
            return prepare_arrow(tbl, schema)
        data = tbl.drop_columns([ROW_ID_COLUMN, LAST_UPDATED_COLUMN])
        return with_lineage(prepare_arrow(data, schema), tbl.column(ROW_ID_COLUMN), tbl.column(LAST_UPDATED_COLUMN))

    def overwrite(self, data, filter=None, *, overwrite_filter=None):
        """Replace the rows matching ``filter`` (pyiceberg: ``overwrite_filter``; all rows when None) with
        ``data``, copy-on-write; one snapshot with operation ``overwrite``."""
        from ..expressions import AlwaysTrue
        if overwrite_filter is not None:
            if filter is not None:
                raise InvalidArgumentError("give filter or overwrite_filter, not both")
            filter = overwrite_filter
        bound = None if filter is None else _as_filter(filter).bind(self.schema().struct)
        p = SnapshotProducer(self, "overwrite")
        p.conflict_filter = bound if bound is not None else AlwaysTrue()
        self._rewrite_matching(p, bound, False)
        for f in self._write(data):
            p.add_data_file(f)
        p.commit()
        return self.current_snapshot()

    def delete(self, delete_filter=None, mode: str | None = None, equality_columns=None, *, filter=None):
        """Delete rows matching ``filter``.

        ``mode`` (default: table property ``write.delete.mode``, else ``merge-on-read``):
        ``merge-on-read`` writes one sorted position-delete file per affected data file (format version 3: one
        deletion vector per affected data file, merged with its current one, all in one Puffin file; a data file
        whose rows all go is removed instead); ``equality`` writes equality-delete files on ``equality_columns`` (default
        the identifier fields); ``copy-on-write`` rewrites the affected data files.
        Returns the new snapshot (or the current one when nothing matched).
        """
        import pyarrow as pa

        from ..expressions import evaluate_numpy
        if (delete_filter is None) == (filter is None):
            raise InvalidArgumentError("give the rows to delete as delete_filter (or filter)")
        filter = delete_filter if filter is None else filter
        self._check_writable()
        mode = mode or self.metadata.properties.get("write.delete.mode", "merge-on-read")
        if mode not in ("merge-on-read", "copy-on-write", "equality"):
            raise InvalidArgumentError(f"unknown delete mode {mode!r}")
        if mode != "copy-on-write" and self.format_version < 2:
            mode = "copy-on-write"     # v1 tables cannot hold delete files
        schema = self.schema()
        bound = _as_filter(filter).bind(schema.struct)
        if mode == "copy-on-write":
            p = SnapshotProducer(self, "delete")
            p.conflict_filter = bound
            if self._rewrite_matching(p, bound, False) == 0:
                return self.current_snapshot()
            if p.added_data:
                p.operation = "overwrite"
            p.commit()
            return self.current_snapshot()
        files = SnapshotFiles(self.io, self.metadata, self.metadata.current_snapshot())
        p = SnapshotProducer(self, "delete")
        p.conflict_filter = bound
        fmt = self.metadata.properties.get("write.delete.format.default",
                                           self.metadata.properties.get("write.format.default", "parquet"))
        eq_cols = None
        if mode == "equality":
            eq_cols = list(equality_columns or schema.identifier_field_names)
            if not eq_cols:
                raise InvalidArgumentError("equality deletes need equality_columns or identifier fields")
            for c in eq_cols:
                from .. import types as T
                if isinstance(schema.find_type(c), (T.FloatType, T.DoubleType)):
                    raise SchemaError(f"float/double column {c!r} cannot be an equality-delete column")
        eq_keys = {}
        changed = 0
        vectors = []       # v3: (data entry, newly deleted positions) -> one merged deletion vector per data file
        for e in files.data:
            tbl, keep = files.read(e, schema)
            match = evaluate_numpy(bound, tbl) & keep
            n = int(match.sum())
            if n == 0:
                continue
            changed += n
            df = e.data_file
            if mode == "equality":
                keys = tbl.select(eq_cols).filter(numbers_to_arrow(match))
                eq_keys.setdefault((df.spec_id, df.partition), []).append(keys)
                continue
            if n == int(keep.sum()):
                p.remove_file(df)
                for d in files.pos_by_file.get(df.file_path, []):
                    p.remove_file(d.data_file)
                continue
            if self.format_version >= 3:
                vectors.append((e, np.flatnonzero(match)))
                continue
            path = f"{self.location}/data/{self._part_dir(df)}{uuid.uuid4()}-deletes.{self._ext(fmt)}"
            p.add_delete_file(write_position_deletes(self.io, path, df.file_path, np.flatnonzero(match),
                                                     df.partition, df.spec_id, fmt))
        if vectors:
            self._add_deletion_vectors(p, files, vectors)
        if mode == "equality":
            ids = [schema.find_field(c).id for c in eq_cols]
            for (spec_id, part), tables in eq_keys.items():
                keys = pa.concat_tables(tables)
                path = f"{self.location}/data/{self._part_dir_of(spec_id, part)}{uuid.uuid4()}-eq-deletes." \
                       f"{self._ext(fmt)}"
                p.add_delete_file(write_equality_deletes(self.io, path, keys, ids, part, spec_id, fmt))
        if changed == 0:
            return self.current_snapshot()
        p.commit()
        return self.current_snapshot()

    def _add_deletion_vectors(self, producer, files, vectors):
        """v3 merge-on-read: one Puffin file with a deletion vector per changed data file, each holding the new
        positions merged with the file's current vector or position deletes; the replaced vector and the
        position-delete files scoped to that data file are removed in the same commit."""
        from .commit import is_deletion_vector
        from .data_writer import write_deletion_vectors
        merged = []
        for e, new in vectors:
            old, old_entries = files.deleted_positions(e)
            merged.append((e.data_file, np.union1d(old, new)))
            for d in old_entries:
                if is_deletion_vector(d.data_file) or d.data_file.referenced_data_file == e.data_file.file_path:
                    producer.remove_file(d.data_file)
        path = f"{self.location}/data/{uuid.uuid4()}-dv.puffin"
        for dv in write_deletion_vectors(self.io, path, merged):
            producer.add_delete_file(dv)

    @staticmethod
    def _ext(fmt):
        return "row" if fmt == "row" else "parquet"

    def _part_dir(self, df):
        return self._part_dir_of(df.spec_id, df.partition)

    def _part_dir_of(self, spec_id, part):
        spec = self.metadata.spec(spec_id)
        if not spec.fields:
            return ""
        return spec.partition_path(part, self.schema()) + "/"

    def row_delta(self) -> "RowDelta":
        """Add data files and delete files atomically: ``t.row_delta().add_rows(df).delete_keys(keys).commit()``."""
        return RowDelta(self)

    def upsert(self, data, key_columns=None, *, join_cols=None, when_matched_update_all: bool = True,
               when_not_matched_insert_all: bool = True) -> UpsertResult:
        """Insert or replace rows by key (``key_columns`` or pyiceberg's ``join_cols``; default: the identifier
        fields): rows whose key exists and whose other values differ replace the old row, rows with a new key are
        inserted, unchanged rows are left alone. One snapshot (equality deletes on the key plus the new rows).
        -> :class:`UpsertResult` (``rows_updated``, ``rows_inserted``)."""
        from .data_writer import to_arrow_table
        if join_cols is not None:
            if key_columns is not None:
                raise InvalidArgumentError("give key_columns or join_cols, not both")
            key_columns = join_cols
        keys = list(key_columns or self.schema().identifier_field_names)
        if not keys:
            raise InvalidArgumentError("upsert needs join_cols (key columns) or identifier fields")
        tbl = to_arrow_table(data)
        missing = [c for c in keys if c not in tbl.column_names]
        if missing:
            raise SchemaError(f"key columns {missing} are not in the data")
        names = [c for c in tbl.column_names if c in self.schema().names]
        incoming = tbl.select(names).to_pylist()
        seen = set()
        for r in incoming:
            k = tuple(r[c] for c in keys)
            if k in seen:
                raise InvalidArgumentError(f"duplicate rows in the data for key {dict(zip(keys, k))}")
            seen.add(k)
        existing = {}
        located = {}        # v3: key -> (data file, position, row id) of the row an update replaces
        v3 = self.format_version >= 3
        meta = ["_file", "_pos", "_row_id"] if v3 else []
        if self.current_snapshot() is not None and incoming:
            for r in self.to_arrow(columns=names + meta).to_pylist():
                k = tuple(r[c] for c in keys)
                if k in seen:
                    if v3:
                        located[k] = tuple(r.pop(c) for c in meta)
                    existing[k] = r
        updates, inserts = [], []
        for i, r in enumerate(incoming):
            old = existing.get(tuple(r[c] for c in keys))
            if old is None:
                if when_not_matched_insert_all:
                    inserts.append(i)
            elif when_matched_update_all and old != r:
                updates.append(i)
        if not updates and not inserts:
            return UpsertResult(0, 0)
        if v3 and updates:
            self._upsert_with_deletion_vectors(tbl, [tuple(r[c] for c in keys) for r in incoming], updates, inserts,
                                               located)
            return UpsertResult(len(updates), len(inserts))
        rd = RowDelta(self)
        if updates:
            rd.delete_keys(tbl.take(numbers_to_arrow(np.asarray(updates, np.int64))), keys)
        rd.add_rows(tbl.take(numbers_to_arrow(np.asarray(sorted(updates + inserts), np.int64))))
        rd.commit()
        return UpsertResult(len(updates), len(inserts))

    def _upsert_with_deletion_vectors(self, tbl, row_keys, updates, inserts, located):
        """v3 upsert, as Iceberg Java's merge-on-read MERGE/UPDATE writes it: the replaced rows are deleted through
        deletion vectors (merged with each data file's current one), the new versions keep their ``_row_id`` and
        get a null ``_last_updated_sequence_number`` (so they read as updated by this commit); inserted rows get
        new row ids. One snapshot, operation ``overwrite``."""
        from .data_writer import with_lineage
        self._check_writable()
        schema = self.schema()
        files = SnapshotFiles(self.io, self.metadata, self.metadata.current_snapshot())
        entries = {e.data_file.file_path: e for e in files.data}
        by_file = {}
        for i in updates:
            path, pos, _ = located[row_keys[i]]
            by_file.setdefault(path, []).append(pos)
        p = SnapshotProducer(self, "overwrite")
        vectors = []
        for path, pos in by_file.items():
            e = entries.get(path)
            if e is None:
                raise CommitFailedError(f"upsert on {self.name}: data file {path} is no longer live")
            pos = np.unique(np.asarray(pos, dtype=np.int64))
            old, _ = files.deleted_positions(e)
            if np.union1d(old, pos).size == e.data_file.record_count:
                p.remove_file(e.data_file)          # every row of the file is gone: drop it, not a full vector
                for d in files.pos_by_file.get(path, []):
                    p.remove_file(d.data_file)
            else:
                vectors.append((e, pos))
        if vectors:
            self._add_deletion_vectors(p, files, vectors)
        order = sorted(updates + inserts)
        updated = set(updates)
        # an updated row keeps its row id, an inserted one gets none (null: inherited from its new file)
        row_ids = np.zeros(len(order), dtype=np.int64)
        has_id = np.zeros(len(order), dtype=np.bool_)
        for j, i in enumerate(order):
            rid = located[row_keys[i]][2] if i in updated else None
            if rid is not None:
                row_ids[j] = rid
                has_id[j] = True
        rows = with_lineage(prepare_arrow(tbl.take(numbers_to_arrow(np.asarray(order, np.int64))), schema),
                            numbers_to_arrow(row_ids, has_id), None)
        for df in write_data_files(self.io, self.location, rows, self.spec(), schema, self.metadata.properties):
            p.add_data_file(df)
        p.commit()

    def rewrite_files(self, target_file_size: int | None = None, progress=None):
        """Compaction: rewrite all live data with deletes applied into new files of the current spec, dropping
        every delete file; operation ``replace``. Returns the new snapshot (current one if nothing to do).
        ``progress(step, done, total)``: step ``"read"`` per data file read, then ``"write"`` per rows written."""
        files = SnapshotFiles(self.io, self.metadata, self.metadata.current_snapshot())
        if not files.data and not files.deletes:
            return self.current_snapshot()
        p = SnapshotProducer(self, "replace")
        schema = self.schema()
        pieces = []
        import pyarrow as pa
        for i, e in enumerate(files.data):
            tbl, keep = files.read(e, schema, lineage=self.format_version >= 3)
            pieces.append(tbl.filter(numbers_to_arrow(keep)) if not keep.all() else tbl)
            p.remove_file(e.data_file)
            if progress is not None:
                progress("read", i + 1, len(files.data))
        for d in files.deletes:
            p.remove_file(d.data_file)
        props = dict(self.metadata.properties)
        if target_file_size:
            props["write.target-file-size-bytes"] = str(target_file_size)
        if pieces:
            merged = pa.concat_tables(pieces)
            if merged.num_rows:
                for df in write_data_files(self.io, self.location, self._moved_rows(merged, schema), self.spec(),
                                           schema, props, progress=progress):
                    p.add_data_file(df)
        p.commit()
        return self.current_snapshot()

    # -- evolution ---------------------------------------------------------------
    def update_schema(self) -> "_TableSchemaUpdate":
        """``with t.update_schema() as u: u.add_column("x", IntType())`` (or call ``.commit()``)."""
        return _TableSchemaUpdate(self)

    def transaction(self) -> "Transaction":
        """``with t.transaction() as tx: tx.append(df); tx.delete("id < 3"); tx.set_properties(a="1")``: the
        operations commit together as one new metadata version, or not at all (see
        :class:`~paimon_engine.table.transaction.Transaction`)."""
        from .transaction import Transaction
        return Transaction(self)

    def update_spec(self, add=(), remove=(), rename=None, *, case_sensitive: bool = True):
        """Partition evolution: new spec becomes the default (an identical existing spec is reused).

        Without arguments, pyiceberg's builder: ``with t.update_spec() as u: u.add_identity("city")``
        (``add_field(source, transform, name)``, ``remove_field(name)``, ``rename_field(name, new_name)``)."""
        if not add and not remove and not rename:
            return _TableSpecUpdate(self)
        return self._evolve_spec(add, remove, rename)

    def _evolve_spec(self, add=(), remove=(), rename=None):
        def change(md):
            new = evolve_spec(md.spec(), md.schema(), md.last_partition_id, md.format_version, add=add,
                              remove=remove, rename=rename)
            for s in md.specs:
                if s.compatible_with(new):
                    md.default_spec_id = s.spec_id
                    return md
            new = PartitionSpec(new.fields, max(s.spec_id for s in md.specs) + 1)
            md.specs = list(md.specs) + [new]
            md.default_spec_id = new.spec_id
            md.last_partition_id = max(md.last_partition_id, new.last_assigned_field_id)
            return md
        commit_metadata_change(self, change)
        return self.spec()

    def set_properties(self, properties: dict | None = None, **kw):
        """Set table properties: ``set_properties({"write.delete.mode": "copy-on-write"})``."""
        props = dict(properties or {}, **kw)

        def change(md):
            md.properties.update({str(k): str(v) for k, v in props.items()})
            return md
        commit_metadata_change(self, change)

    def update_properties(self, updates: dict | None = None, removals=()):
        def change(md):
            md.properties.update({str(k): str(v) for k, v in (updates or {}).items()})
            for k in removals:
                md.properties.pop(k, None)
            return md
        commit_metadata_change(self, change)

    def upgrade_format_version(self, version: int = 2):
        """Raise the table's format version (1 -> 2 -> 3). Existing snapshots stay as they are and readable;
        upgrading to 3 starts row lineage at ``next-row-id`` 0 (rows of older snapshots have no row ids)."""
        if version < self.format_version:
            raise InvalidArgumentError(f"cannot downgrade format version {self.format_version} to {version}")
        if version not in (1, 2, 3):
            raise InvalidArgumentError(f"unsupported format version {version}")

        def change(md):
            if version >= 3 and md.format_version < 3:
                md.next_row_id = 0
            md.format_version = version
            return md
        commit_metadata_change(self, change)

    def create_tag(self, name: str, snapshot_id: int | None = None, max_ref_age_ms: int | None = None):
        return self._set_ref(name, "tag", snapshot_id, max_ref_age_ms)

    def create_branch(self, name: str, snapshot_id: int | None = None):
        return self._set_ref(name, "branch", snapshot_id, None)

    def _set_ref(self, name, kind, snapshot_id, max_ref_age_ms):
        sid = snapshot_id if snapshot_id is not None else self.metadata.current_snapshot_id
        if sid is None or self.metadata.snapshot_by_id(sid) is None:
            raise NotFoundError(f"no snapshot {sid} to point {kind} {name!r} at")
        if name == "main":
            raise InvalidArgumentError("'main' is managed by commits")

        def change(md):
            if name in md.refs:
                raise InvalidArgumentError(f"ref {name!r} exists already")
            md.refs[name] = SnapshotRef(sid, kind, max_ref_age_ms=max_ref_age_ms)
            return md
        commit_metadata_change(self, change)

    # -- maintenance ---------------------------------------------------------------
    def _reachable(self, md, snapshots, include_deleted_entries=False):
        """Files referenced by ``snapshots``: manifest lists, manifests, data and delete files, file indexes."""
        io = self.io
        out = set()
        seen_manifests = set()
        specs = md.specs_by_id()
        for s in snapshots:
            if s.manifest_list:
                out.add(s.manifest_list)
                try:
                    manifests = read_manifest_list(io, s.manifest_list)
                except NotFoundError:
                    continue
            else:
                manifests = []
                out.update(s.manifests or [])
            for m in manifests:
                out.add(m.manifest_path)
                if m.manifest_path in seen_manifests:
                    continue
                seen_manifests.add(m.manifest_path)
                spec = specs.get(m.partition_spec_id)
                try:
                    entries = read_manifest(io, m, _ptype(md, spec))
                except NotFoundError:
                    continue
                for e in entries:
                    if e.status != 2 or include_deleted_entries:
                        out.add(e.data_file.file_path)
                        index = e.data_file.file_index
                        if index and not index.startswith("base64:"):
                            out.add(index)  # a <data file>.index lives and dies with its data file
        return out

    def expire_snapshots(self, older_than_ms: int | None = None, retain_last: int = 1, snapshot_ids=None,
                         delete_files: bool = True):
        """Remove snapshots older than ``older_than_ms`` (default: all but the newest ``retain_last`` of the
        current branch), never a ref's head; then delete files only they referenced. -> list of expired ids."""
        before = self.metadata
        if delete_files:
            self._owned_root(before, "expire snapshots and delete their files")
        expired = []

        def change(md):
            keep = set()
            for ref in md.refs.values():
                keep.add(ref.snapshot_id)
            for i, s in enumerate(md.ancestors()):
                if i < max(retain_last, 1):
                    keep.add(s.snapshot_id)
            cutoff = older_than_ms if older_than_ms is not None else float("inf")
            explicit = set(snapshot_ids or ())
            gone = []
            for s in md.snapshots:
                if s.snapshot_id in keep:
                    continue
                if (explicit and s.snapshot_id in explicit) or (not explicit and s.timestamp_ms < cutoff):
                    gone.append(s.snapshot_id)
            gone_set = set(gone)
            md.snapshots = [s for s in md.snapshots if s.snapshot_id not in gone_set]
            md.snapshot_log = [e for e in md.snapshot_log if e.snapshot_id not in gone_set]
            md._snap_by_id = None
            expired[:] = gone
            return md
        after = commit_metadata_change(self, change)
        if delete_files and expired:
            gone = [before.snapshot_by_id(i) for i in expired if before.snapshot_by_id(i) is not None]
            candidates = self._reachable(before, gone, include_deleted_entries=True)
            alive = self._reachable(after, after.snapshots)
            doomed = sorted(candidates - alive)
            root = self._owned_root(after, f"delete the files of expired snapshots {expired}")
            check_within(self.io, doomed, root, f"delete the files of expired snapshots {expired} (the snapshots "
                                                f"are expired; their files are left in place)")
            for path in doomed:
                self.io.delete(path)
        return expired

    def _owned_root(self, md, what) -> str:
        """The location this table's maintenance may delete under: the table location, which must not be a
        file-system root or the warehouse (or above it), and for a file-system catalog must be the table's own
        directory."""
        root = md.location.rstrip("/") or "/"
        own = self.catalog.table_directory(self)
        if own is not None:
            if comparable(self.io, own, True) != comparable(self.io, root, True):
                raise UnsafeLocationError(f"refusing to {what}: the metadata names location {root} but the table "
                                        f"lives in {own}; nothing was deleted", path=root, root=own)
        check_deletable_root(self.io, root, getattr(self.catalog, "warehouse", None), what)
        return root

    def _referenced_files(self, md) -> list:
        """Every file the metadata references: metadata files (current and logged), manifest lists, manifests,
        data and delete files (also entries marked deleted), file indexes, statistics and partition statistics."""
        out = set(self._reachable(md, md.snapshots, include_deleted_entries=True))
        for p in [md.metadata_location] + [e.metadata_file for e in md.metadata_log]:
            if p:
                out.add(p)
        for stats in list(md.statistics or []) + list(md.partition_statistics or []):
            if isinstance(stats, dict) and stats.get("statistics-path"):
                out.add(stats["statistics-path"])
        return sorted(out)

    def remove_orphan_files(self, older_than=None, dry_run: bool = False, progress=None, *,
                            older_than_ms: int | None = None):
        """Files under the table location that nothing references (left by failed or killed writers): no
        snapshot of any branch or tag, no metadata file (current or in the metadata log), manifest list,
        manifest, data or delete file, file index, statistics or partition-statistics file. Only files last
        modified before ``older_than`` (a datetime, or milliseconds since the epoch; default 3 days ago, as
        Iceberg) count, so a commit in flight keeps its files. -> sorted list; deleted unless ``dry_run``.

        Refused with UnsafeLocationError, before anything is deleted, when the location is a file-system root, the
        warehouse or above it, holds another table's metadata, or a listed file resolves (symlinks) outside it."""
        from ..io import normalize_location
        if older_than is not None and older_than_ms is not None:
            raise InvalidArgumentError("give older_than or older_than_ms, not both")
        if older_than is None:
            older_than = older_than_ms
        if older_than is None:
            older_than = int(time.time() * 1000) - 3 * 24 * 3600 * 1000
        elif hasattr(older_than, "timestamp"):
            older_than = int(older_than.timestamp() * 1000)
        elif isinstance(older_than, (int, float)) and not isinstance(older_than, bool):
            older_than = int(older_than)
        else:
            raise InvalidArgumentError(f"older_than must be a datetime or milliseconds, got {older_than!r}")
        older_than_ms = older_than
        md = self.refresh().metadata
        root = self._owned_root(md, "remove orphan files")
        referenced = {normalize_location(p) for p in self._referenced_files(md)}
        from ..spec.metadata import is_metadata_file_name
        own_metadata = comparable(self.io, f"{root}/metadata", True)
        listed = []
        for info in self.io.list(md.location):
            path = info.path if info.path.startswith("/") or "://" in info.path else "/" + info.path
            if "://" in md.location and "://" not in path:
                path = md.location.split("://", 1)[0] + "://" + info.path
            name = path.rsplit("/", 1)[-1]
            if (name == "version-hint.text" or is_metadata_file_name(name)) and \
                    comparable(self.io, path).rsplit("/", 1)[0] != own_metadata:
                raise UnsafeLocationError(f"refusing to remove orphan files: another table's metadata lies inside "
                                        f"{root} ({path}); nothing was deleted", path=path, root=root)
            listed.append((path, info))
        orphans = []
        for path, info in listed:
            name = path.rsplit("/", 1)[-1]
            if name == "version-hint.text":
                continue
            if normalize_location(path) in referenced:
                continue
            if _is_newer_version_file(path, md.metadata_location):
                continue
            mtime = info.mtime.timestamp() * 1000 if info.mtime is not None else 0
            if mtime >= older_than_ms:
                continue
            orphans.append(path)
        check_within(self.io, orphans, root, "remove orphan files")
        if not dry_run:
            for i, p in enumerate(orphans):
                self.io.delete(p)
                if progress is not None:
                    progress("delete", i + 1, len(orphans))
        return sorted(orphans)


def _is_newer_version_file(path, current):
    import re
    m1 = re.search(r"/v(\d+)\.metadata\.json$", path)
    m2 = re.search(r"/v(\d+)\.metadata\.json$", current or "")
    return bool(m1 and m2 and int(m1.group(1)) > int(m2.group(1)))


def _ptype(md, spec):
    if spec is None:
        return None
    return partition_type_of(spec, md)


class TableSnapshot:
    """A read-only view of one snapshot of a table."""

    def __init__(self, table, snapshot, schema):
        self.table = table
        self.snapshot = snapshot
        self.schema = schema

    @property
    def snapshot_id(self):
        return None if self.snapshot is None else self.snapshot.snapshot_id

    def scan(self, filter=None, columns=None, **options):
        """A :class:`~paimon_engine.scan.TableScan` of this snapshot."""
        from ..scan.planner import TableScan
        t = self.table
        if self.snapshot is None:
            return TableScan(t.metadata, t.io, filter=filter, columns=columns, table=t, **options)
        return TableScan(t.metadata, t.io, filter=filter, columns=columns, snapshot_id=self.snapshot.snapshot_id,
                         table=t, **options)

    def to_arrow(self, filter=None, columns=None):
        return self.scan(filter, columns).to_arrow()

    def to_pandas(self, filter=None, columns=None):
        return self.to_arrow(filter, columns).to_pandas()

    def data_files(self):
        return SnapshotFiles(self.table.io, self.table.metadata, self.snapshot).data


class RowDelta:
    """Data files and delete files committed together (operation ``overwrite``, or ``delete`` when only deletes
    are added, ``append`` when only data)."""

    def __init__(self, table):
        self.table = table
        self._data = []
        self._deletes = []

    def add_rows(self, data):
        self._data.extend(self.table._write(data))
        return self

    def add_data_file(self, df):
        self._data.append(df)
        return self

    def add_delete_file(self, df):
        self._deletes.append(df)
        return self

    def delete_keys(self, data, key_columns=None):
        """Equality deletes for the key values in ``data`` (default keys: identifier fields), partitioned by the
        table's spec (``data`` must hold the partition source columns of a partitioned table)."""
        import pyarrow as pa
        from .data_writer import to_arrow_table
        t = self.table
        t._check_writable()
        schema = t.schema()
        keys = list(key_columns or schema.identifier_field_names)
        if not keys:
            raise InvalidArgumentError("equality deletes need key columns or identifier fields")
        tbl = to_arrow_table(data)
        spec = t.spec()
        missing = [c for c in keys if c not in tbl.column_names]
        if missing:
            raise SchemaError(f"key columns {missing} are not in the data")
        from .. import types as T
        for c in keys:
            if isinstance(schema.find_type(c), (T.FloatType, T.DoubleType)):
                raise SchemaError(f"float/double column {c!r} cannot be an equality-delete column")
        needed = {schema.column_name(f.source_id) for f in spec.fields}
        if spec.fields and not needed <= set(tbl.column_names):
            raise SchemaError(f"a partitioned table needs the partition columns {sorted(needed)} to place deletes")
        ids = [schema.find_field(c).id for c in keys]
        sub_schema = schema.select(keys)
        fmt = t.metadata.properties.get("write.delete.format.default",
                                        t.metadata.properties.get("write.format.default", "parquet"))
        full = prepare_arrow(tbl.select([c for c in tbl.column_names if c in schema.names]), schema)
        for part, sub in partition_groups(full, spec, schema):
            key_tbl = pa.Table.from_arrays([sub.column(c) for c in keys], schema=sub_schema.to_arrow())
            path = f"{t.location}/data/{t._part_dir_of(spec.spec_id, part)}{uuid.uuid4()}-eq-deletes." \
                   f"{t._ext(fmt)}"
            self._deletes.append(write_equality_deletes(t.io, path, key_tbl, ids, part, spec.spec_id, fmt))
        return self

    def commit(self):
        op = "overwrite" if (self._data and self._deletes) else ("delete" if self._deletes else "append")
        p = SnapshotProducer(self.table, op)
        for df in self._data:
            p.add_data_file(df)
        for df in self._deletes:
            p.add_delete_file(df)
        p.commit()
        return self.table.current_snapshot()


class _TableSpecUpdate:
    """pyiceberg's ``UpdateSpec``: queue partition-field changes, committed as one new default spec on leaving a
    ``with`` block (or by ``commit()``)."""

    def __init__(self, table):
        self.table = table
        self._add, self._remove, self._rename = [], [], {}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *rest):
        if exc_type is None:
            self.commit()

    def add_field(self, source_column_name: str, transform, partition_field_name: str | None = None):
        """Partition by ``transform`` (a transform object or string: ``"day"``, ``"bucket[16]"``) of a column."""
        if partition_field_name is not None and partition_field_name in [a[2] for a in self._add if len(a) > 2]:
            raise InvalidArgumentError(f"partition field {partition_field_name!r} is added twice")
        item = (source_column_name, transform) if partition_field_name is None else \
            (source_column_name, transform, partition_field_name)
        self._add.append(item)
        return self

    def add_identity(self, source_column_name: str):
        return self.add_field(source_column_name, "identity")

    def remove_field(self, name: str):
        if name in self._rename:
            raise InvalidArgumentError(f"cannot rename and remove partition field {name!r}")
        self._remove.append(name)
        return self

    def rename_field(self, name: str, new_name: str):
        if name in self._remove:
            raise InvalidArgumentError(f"cannot rename and remove partition field {name!r}")
        self._rename[name] = new_name
        return self

    def commit(self):
        if self._add or self._remove or self._rename:
            return self.table._evolve_spec(self._add, self._remove, self._rename)
        return self.table.spec()


class _TableSchemaUpdate(SchemaUpdate):
    def __init__(self, table):
        md = table.metadata
        super().__init__(md.schema(), md.last_column_id)
        self.table = table
        self._base_schema_id = md.current_schema_id

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *rest):
        if exc_type is None:
            self.commit()

    def update_column(self, path, field_type=None, required: bool | None = None, doc: str | None = None):
        """pyiceberg's argument order: promote the type, make a required column optional, change the doc."""
        return super().update_column(path, field_type, doc=doc, required=required)

    def make_column_optional(self, path):
        return super().update_column(path, required=False)

    def commit(self):
        self.check_format_version(self.table.format_version)
        new_schema, last_col = self.apply()

        def change(md):
            if md.current_schema_id != self._base_schema_id:
                raise CommitFailedError("the schema changed concurrently; redo the schema update")
            for s in md.schemas:
                if s.same_fields(new_schema):
                    md.current_schema_id = s.schema_id
                    break
            else:
                sid = max(s.schema_id for s in md.schemas) + 1
                md.schemas = list(md.schemas) + [Schema(new_schema.struct, sid, new_schema.identifier_field_ids,
                                                         field_extra=new_schema.field_extra)]
                md.current_schema_id = sid
            md.last_column_id = max(md.last_column_id, last_col)
            return md
        commit_metadata_change(self.table, change)
        return self.table.schema()


class ManageSnapshots:
    """pyiceberg's ``manage_snapshots()``: queue tag, branch and rollback changes, then ``commit()`` them as one
    metadata change (also committed on leaving a ``with`` block)."""

    def __init__(self, table):
        self.table = table
        self._ops = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *rest):
        if exc_type is None:
            self.commit()

    def _need(self, md, snapshot_id):
        if md.snapshot_by_id(snapshot_id) is None:
            raise NotFoundError(f"table {self.table.name} has no snapshot {snapshot_id}")

    def create_tag(self, snapshot_id: int, tag_name: str, max_ref_age_ms: int | None = None):
        def op(md):
            self._need(md, snapshot_id)
            if tag_name in md.refs:
                raise InvalidArgumentError(f"ref {tag_name!r} exists already")
            md.refs[tag_name] = SnapshotRef(snapshot_id, "tag", max_ref_age_ms=max_ref_age_ms)
        self._ops.append(op)
        return self

    def create_branch(self, snapshot_id: int, branch_name: str, max_ref_age_ms: int | None = None,
                      max_snapshot_age_ms: int | None = None, min_snapshots_to_keep: int | None = None):
        def op(md):
            self._need(md, snapshot_id)
            if branch_name in md.refs:
                raise InvalidArgumentError(f"ref {branch_name!r} exists already")
            md.refs[branch_name] = SnapshotRef(snapshot_id, "branch", min_snapshots_to_keep, max_snapshot_age_ms,
                                               max_ref_age_ms)
        self._ops.append(op)
        return self

    def _remove(self, name, kind):
        def op(md):
            ref = md.refs.get(name)
            if ref is None or ref.type != kind:
                raise NotFoundError(f"table {self.table.name} has no {kind} {name!r}")
            if name == "main":
                raise InvalidArgumentError("'main' cannot be removed")
            del md.refs[name]
        self._ops.append(op)
        return self

    def remove_tag(self, tag_name: str):
        return self._remove(tag_name, "tag")

    def remove_branch(self, branch_name: str):
        return self._remove(branch_name, "branch")

    def set_current_snapshot(self, snapshot_id: int | None = None, ref_name: str | None = None):
        """Point ``main`` at a snapshot (by id, or the one ``ref_name`` points at)."""
        def op(md):
            from ..spec.metadata import SnapshotLogEntry
            sid = snapshot_id
            if ref_name is not None:
                s = md.snapshot_by_ref(ref_name)
                if s is None:
                    raise NotFoundError(f"table {self.table.name} has no branch or tag {ref_name!r}")
                sid = s.snapshot_id
            self._need(md, sid)
            md.refs["main"] = SnapshotRef(sid, "branch")
            md.current_snapshot_id = sid
            md.snapshot_log.append(SnapshotLogEntry(int(time.time() * 1000), sid))
        self._ops.append(op)
        return self

    def rollback_to_snapshot(self, snapshot_id: int):
        """Set ``main`` back to an ancestor of the current snapshot."""
        def op(md):
            if snapshot_id not in {s.snapshot_id for s in md.ancestors()}:
                raise InvalidArgumentError(f"snapshot {snapshot_id} is not an ancestor of the current snapshot")
        self._ops.append(op)
        return self.set_current_snapshot(snapshot_id)

    def commit(self):
        ops, self._ops = self._ops, []

        def change(md):
            for op in ops:
                op(md)
            return md
        if ops:
            commit_metadata_change(self.table, change)
        return self.table
