"""A small merge-on-read table writer for scan tests.

It writes real files (Parquet data files with field ids, Parquet position/equality delete files, Puffin deletion
vectors, Avro manifests and manifest lists through ``paimon_engine.table``) and keeps the ``TableMetadata`` in
memory, so scans can be planned against every snapshot it commits.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from paimon_engine import types as T
from paimon_engine.io import FileIO
from paimon_engine.scan.planner import TableScan
from paimon_engine.spec.conversions import to_bytes, to_internal
from paimon_engine.spec.manifest import (CONTENT_DATA, CONTENT_EQUALITY_DELETES, CONTENT_POSITION_DELETES,
                                          STATUS_DELETED, STATUS_EXISTING, DataFile,
                                          ManifestEntry, ManifestWriter, read_manifest)
from paimon_engine.spec.manifest_list import write_manifest_list
from paimon_engine.spec.metadata import Snapshot, SnapshotLogEntry, SnapshotRef, new_table_metadata
from paimon_engine.spec.partitioning import PartitionSpec
from paimon_engine.spec.schema import Schema

POS_SCHEMA = pa.schema([
    pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": b"2147483546"}),
    pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"2147483545"}),
])


def _metrics(tbl: pa.Table, struct_type: T.RowType):
    vc, nc, nan, lo, hi = {}, {}, {}, {}, {}
    for f in struct_type.fields:
        if f.name not in tbl.column_names or f.type.is_nested:
            continue
        col = tbl.column(f.name)
        vc[f.id] = len(col)
        nc[f.id] = col.null_count
        vals = col
        if isinstance(f.type, (T.FloatType, T.DoubleType)):
            isnan = pc.is_nan(col).fill_null(False)
            nan[f.id] = int(pc.sum(isnan).as_py() or 0)
            vals = pc.filter(col, pc.invert(isnan))
        mm = pc.min_max(vals)
        mn, mx = mm["min"].as_py(), mm["max"].as_py()
        if mn is not None:
            lo[f.id] = to_bytes(f.type, to_internal(f.type, mn))
            hi[f.id] = to_bytes(f.type, to_internal(f.type, mx))
    return dict(value_counts=vc, null_value_counts=nc, nan_value_counts=nan, lower_bounds=lo, upper_bounds=hi)


def deletion_vector_blob(positions) -> bytes:
    import pyroaring
    vec = pyroaring.BitMap64(sorted(int(p) for p in positions)).serialize()
    body = b"\xd1\xd3\x39\x64" + vec
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


class MiniTable:
    def __init__(self, root, schema: Schema, spec: PartitionSpec | None = None, format_version: int = 2):
        self.root = str(root)
        self.io = FileIO()
        self.md = new_table_metadata(schema, spec or PartitionSpec((), 0), self.root,
                                     format_version=format_version)
        self.manifests = []
        self._next_snapshot = 1000
        self._clock = 1_700_000_000_000
        self.files = {}  # path -> (DataFile, seq)
        self._counter = 0

    # -- helpers -------------------------------------------------------------
    @property
    def schema(self):
        return self.md.schema()

    @property
    def spec(self):
        return self.md.spec()

    def scan(self, **kw):
        return TableScan(self.md, self.io, **kw)

    def _path(self, kind, ext="parquet"):
        import os
        os.makedirs(f"{self.root}/{kind}", exist_ok=True)
        self._counter += 1   # deterministic names: replays of a test draw the same files
        return f"{self.root}/{kind}/{self._counter:06d}.{ext}"

    def partition_of(self, tbl: pa.Table, spec=None):
        """Partition tuple per row, in spec field order."""
        spec = spec or self.spec
        schema = self.schema
        cols = []
        for pf in spec.fields:
            src = schema.find_field(pf.source_id)
            arr = tbl.column(schema.column_name(pf.source_id)).combine_chunks()
            cols.append(pf.transform.apply(src.type, arr).to_pylist())
        n = tbl.num_rows
        return [tuple(c[i] for c in cols) for i in range(n)]

    def write_data_file(self, tbl: pa.Table, partition=(), spec=None):
        spec = spec or self.spec
        arrow_schema = self.schema.struct.to_arrow_schema()
        tbl = tbl.select([f.name for f in arrow_schema]).cast(arrow_schema)
        path = self._path("data")
        pq.write_table(tbl, path, row_group_size=max(1, min(tbl.num_rows, 50)) if tbl.num_rows > 100 else None)
        md = pq.ParquetFile(path).metadata
        offsets = [md.row_group(i).column(0).data_page_offset if not md.row_group(i).column(0).has_dictionary_page
                   else md.row_group(i).column(0).dictionary_page_offset for i in range(md.num_row_groups)]
        df = DataFile(path, "PARQUET", tuple(partition), tbl.num_rows, self.io.size(path), spec_id=spec.spec_id,
                      split_offsets=offsets, **_metrics(tbl, self.schema.struct))
        return df

    def write_position_deletes(self, data_path, positions, partition=(), spec_id=None, referenced=False):
        return self.write_position_delete_rows([(data_path, p) for p in sorted(positions)], partition, spec_id,
                                               referenced_data_file=data_path if referenced else None)

    def write_position_delete_rows(self, rows, partition=(), spec_id=None, referenced_data_file=None, **write):
        """A position delete file of ``rows`` ((data file path, position) pairs, in the order given);
        ``write``: options of ``pq.write_table``."""
        tbl = pa.table({"file_path": pa.array([r[0] for r in rows], pa.string()),
                        "pos": pa.array([r[1] for r in rows], pa.int64())}, schema=POS_SCHEMA)
        path = self._path("deletes")
        pq.write_table(tbl, path, **write)
        paths = sorted({r[0] for r in rows})
        return DataFile(path, "PARQUET", tuple(partition), tbl.num_rows, self.io.size(path),
                        content=CONTENT_POSITION_DELETES,
                        referenced_data_file=referenced_data_file,
                        spec_id=self.md.default_spec_id if spec_id is None else spec_id,
                        lower_bounds={2147483546: paths[0].encode()} if paths else {},
                        upper_bounds={2147483546: paths[-1].encode()} if paths else {},
                        value_counts={2147483546: len(rows), 2147483545: len(rows)},
                        null_value_counts={2147483546: 0, 2147483545: 0})

    def write_equality_deletes(self, field_ids, rows, partition=(), spec_id=None):
        """``rows``: list of tuples of key values (natural Python values, None allowed)."""
        schema = self.schema
        fields = []
        cols = []
        for i, fid in enumerate(field_ids):
            f = schema.find_field(fid)
            fields.append(pa.field(f.name, f.type.to_arrow(), metadata={b"PARQUET:field_id": str(fid).encode()}))
            cols.append(pa.array([r[i] for r in rows], f.type.to_arrow()))
        tbl = pa.Table.from_arrays(cols, schema=pa.schema(fields))
        path = self._path("deletes")
        pq.write_table(tbl, path)
        st = T.RowType([schema.find_field(fid) for fid in field_ids])
        return DataFile(path, "PARQUET", tuple(partition), tbl.num_rows, self.io.size(path),
                        content=CONTENT_EQUALITY_DELETES, equality_ids=list(field_ids),
                        spec_id=self.md.default_spec_id if spec_id is None else spec_id, **_metrics(tbl, st))

    # -- commits -------------------------------------------------------------
    def commit(self, added=(), removed=(), operation="append"):
        """Add DataFiles (data or deletes) and remove files by path, as one snapshot."""
        md = self.md
        snap_id = self._next_snapshot
        self._next_snapshot += 1
        seq = md.last_sequence_number + 1 if md.format_version >= 2 else 0
        removed = set(removed)
        specs = md.specs_by_id()
        schema = self.schema
        new_manifests = []
        for m in self.manifests:
            entries = read_manifest(self.io, m, specs[m.partition_spec_id].partition_type(schema),
                                    include_deleted=False)
            if not any(e.data_file.file_path in removed for e in entries):
                new_manifests.append(m)
                continue
            w = ManifestWriter(specs[m.partition_spec_id], schema, md.format_version, snap_id, m.content)
            for e in entries:
                if e.data_file.file_path in removed:
                    w.add_entry(ManifestEntry(STATUS_DELETED, snap_id, e.data_file, e.sequence_number,
                                              e.file_sequence_number))
                else:
                    w.add_entry(ManifestEntry(STATUS_EXISTING, e.snapshot_id, e.data_file, e.sequence_number,
                                              e.file_sequence_number))
            mf = w.write(self.io, self._path("metadata", "avro"))
            if mf.existing_files_count:
                new_manifests.append(mf)
            self.files = {p: v for p, v in self.files.items() if p not in removed}
        groups = {}
        for df in added:
            content = CONTENT_DATA if df.content == CONTENT_DATA else 1
            groups.setdefault((df.spec_id, content), []).append(df)
        for (spec_id, content), dfs in groups.items():
            w = ManifestWriter(specs[spec_id], schema, md.format_version, snap_id, content)
            for df in dfs:
                w.add(df)
                self.files[df.file_path] = (df, seq)
            new_manifests.insert(0, w.write(self.io, self._path("metadata", "avro")))
        ml = self._path("metadata", "avro")
        write_manifest_list(self.io, ml, new_manifests, format_version=md.format_version, snapshot_id=snap_id,
                            parent_snapshot_id=md.current_snapshot_id, sequence_number=seq)
        self.manifests = new_manifests
        self._clock += 1000
        snap = Snapshot(snap_id, md.current_snapshot_id, seq, self._clock, ml, None,
                        {"operation": operation}, md.current_schema_id)
        md.snapshots.append(snap)
        md._snap_by_id = None
        md.current_snapshot_id = snap_id
        md.last_sequence_number = seq
        md.snapshot_log.append(SnapshotLogEntry(self._clock, snap_id))
        md.refs["main"] = SnapshotRef(snap_id, "branch")
        return snap

    def append(self, tbl: pa.Table):
        """Write ``tbl`` as one data file per partition and commit; returns the DataFiles."""
        parts = self.partition_of(tbl)
        dfs = []
        uniq = list(dict.fromkeys(parts))
        for p in uniq:
            mask = np.array([q == p for q in parts], dtype=bool)
            dfs.append(self.write_data_file(tbl.filter(pa.array(mask)), p))
        if dfs:
            self.commit(dfs)
        return dfs

    # -- schema / spec evolution -------------------------------------------------
    def set_schema(self, struct: T.RowType):
        md = self.md
        sid = max(s.schema_id for s in md.schemas) + 1
        md.schemas.append(Schema(struct, sid))
        md.current_schema_id = sid
        md.last_column_id = max(md.last_column_id, Schema(struct, sid).highest_field_id)

    def add_spec(self, spec: PartitionSpec):
        md = self.md
        sid = max(s.spec_id for s in md.specs) + 1
        spec = PartitionSpec(spec.fields, sid)
        md.specs.append(spec)
        md.default_spec_id = sid
        md.last_partition_id = max(md.last_partition_id, spec.last_assigned_field_id)
        return spec
