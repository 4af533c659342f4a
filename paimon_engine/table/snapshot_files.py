"""The live files of a snapshot, for the write operations that rewrite or delete rows file by file.

Listing (which data and delete files are live) comes from the manifests; reading goes through the scan
layer's :class:`~paimon_engine.scan.reader.TaskReader`, with deletes assigned by the planner's delete-file
index, so there is one reader in the package.
"""

from __future__ import annotations

import numpy as np

from ..batch import int64_values
from ..spec.manifest import CONTENT_POSITION_DELETES
from ..spec.snapshots import live_entries, row_file_schema

__all__ = ["SnapshotFiles", "read_data_file"]


def _all_fields(md, schema):
    out = {}
    for s in reversed(md.schemas):
        for fid, entry in s.by_id().items():
            out.setdefault(fid, entry[1])
    for f in schema.struct.fields:
        out[f.id] = f
    return out


def _bare_task(io, df, md, schema, sequence_number=0):
    from ..scan.tasks import FileScanTask
    fmt = (df.file_format or "parquet").lower()
    return FileScanTask(df.file_path, fmt, df.record_count, df.file_size_in_bytes, df.spec_id,
                        tuple(df.partition or ()), sequence_number or 0, [],
                        file_schema=row_file_schema(df, md, schema) if fmt == "row" else None,
                        first_row_id=df.first_row_id)


def _read_all(reader, task):
    import pyarrow as pa
    return pa.Table.from_batches(list(reader.read_task(task)), schema=reader.output_schema)


def read_data_file(io, df, schema, md):
    """One data file (no deletes applied) as an Arrow table with the columns of ``schema``, matched by field id."""
    from ..scan.reader import TaskReader
    reader = TaskReader(io, schema.struct, schema.struct, (), _all_fields(md, schema))
    return _read_all(reader, _bare_task(io, df, md, schema))


class SnapshotFiles:
    """The live files of a snapshot: ``data`` and ``deletes`` (manifest entries), ``pos_by_file`` (position
    deletes by referenced data file) and ``read(entry, schema)`` -> (whole file, keep mask after deletes)."""

    def __init__(self, io, md, snapshot):
        self.io = io
        self.md = md
        self.snapshot = snapshot
        self.data, self.deletes = live_entries(io, md, snapshot)
        self.pos_by_file = {}
        for e in self.deletes:
            ref = e.data_file.referenced_data_file
            if e.data_file.content == CONTENT_POSITION_DELETES and ref:
                self.pos_by_file.setdefault(ref, []).append(e)
        self._tasks = None

    def _task_for(self, path):
        if self._tasks is None:
            from ..scan.planner import TableScan
            self._tasks = {} if self.snapshot is None else {
                t.path: t for t in TableScan(self.md, self.io, snapshot_id=self.snapshot.snapshot_id).plan_files()}
        return self._tasks.get(path)

    def deleted_positions(self, entry):
        """(sorted positions that the position deletes or deletion vector applying to a data entry delete, the
        manifest entries of those delete files), as the planner's delete-file index assigns them."""
        from ..scan.delete_index import POSITION
        from ..scan.reader import TaskReader
        from .. import types as T
        none = np.zeros(0, np.int64), []
        task = self._task_for(entry.data_file.file_path)
        if task is None:
            return none
        applied = [d for d in task.deletes if d.content == POSITION]
        if not applied:
            return none
        reader = TaskReader(self.io, self.md.schema().struct, T.RowType([]), ())
        pos = reader._task_positions(task.replace(deletes=applied))
        rc = entry.data_file.record_count
        pos = np.unique(pos[(pos >= 0) & (pos < rc)]) if pos is not None else np.zeros(0, np.int64)
        keys = {(d.path, d.content_offset if d.is_deletion_vector else None) for d in applied}
        entries = [e for e in self.deletes if (e.data_file.file_path, e.data_file.content_offset if
                   str(e.data_file.file_format).upper() == "PUFFIN" else None) in keys]
        return pos, entries

    def read(self, entry, schema, lineage=False):
        """(table of the whole file in ``schema``, keep mask: the rows no delete file removes).

        ``lineage``: the table also has the rows' ``_row_id`` and ``_last_updated_sequence_number`` (read or
        inherited as a scan gives them) as its last two columns, for rewrites that must keep them."""
        from ..expressions import AlwaysTrue
        from ..scan.reader import LAST_UPDATED_COLUMN, POS_COLUMN, ROW_ID_COLUMN, TaskReader
        from .. import types as T
        fields = _all_fields(self.md, schema)
        df = entry.data_file
        meta = (ROW_ID_COLUMN, LAST_UPDATED_COLUMN) if lineage else ()
        tbl = _read_all(TaskReader(self.io, schema.struct, schema.struct, meta, fields),
                        _bare_task(self.io, df, self.md, schema, entry.sequence_number))
        task = self._task_for(df.file_path)
        if task is None or not task.deletes:
            return tbl, np.ones(tbl.num_rows, dtype=bool)
        task = task.replace(residual=AlwaysTrue(), selection=None, start=None, length=None)
        live = _read_all(TaskReader(self.io, schema.struct, T.RowType([]), (POS_COLUMN,), fields), task)
        keep = np.zeros(tbl.num_rows, dtype=bool)
        pos = int64_values(live.column(POS_COLUMN).combine_chunks())
        keep[pos[(pos >= 0) & (pos < tbl.num_rows)]] = True
        return tbl, keep
