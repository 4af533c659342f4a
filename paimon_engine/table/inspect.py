"""``table.inspect``: the table's metadata as Arrow tables, with the column names and types of pyiceberg 0.12's
metadata tables (``snapshots``, ``refs``, ``history``, ``manifests``, ``files``, ``data_files``,
``delete_files``, ``entries``, ``partitions``)."""

from __future__ import annotations

from datetime import datetime, timezone

from .. import types as T
from ..errors import NotFoundError
from ..spec.manifest import CONTENT_DATA, CONTENT_EQUALITY_DELETES, CONTENT_POSITION_DELETES, read_manifest
from ..spec.manifest_list import read_manifest_list
from ..spec.snapshots import partition_type_of

__all__ = ["InspectTable"]


def _utc(ms):
    return datetime.fromtimestamp(ms / 1000.0, tz=timezone.utc)


def _arrow_type(t):
    """The Arrow type of a metric bound or partition value (strings and binaries as large types, as pyiceberg)."""
    import pyarrow as pa
    if isinstance(t, (T.VarCharType, T.CharType)):
        return pa.large_string()
    if isinstance(t, T.VarBinaryType):
        return pa.large_binary()
    if isinstance(t, T.BinaryType):
        return pa.binary(t.length) if t.length else pa.large_binary()
    if isinstance(t, T.RowType):
        return pa.struct([pa.field(f.name, _arrow_type(f.type), nullable=f.type.nullable) for f in t.fields])
    if isinstance(t, T.ArrayType):
        return pa.large_list(_arrow_type(t.element))
    if isinstance(t, T.MapType):
        return pa.map_(_arrow_type(t.key), _arrow_type(t.value))
    return t.to_arrow()


def _bound(t, raw):
    """A single-value bound -> the value Arrow takes for ``_arrow_type(t)`` (None when absent or undecodable)."""
    from ..spec.conversions import from_bytes
    if raw is None or t.is_nested:
        return None
    v = from_bytes(t, raw)
    if isinstance(t, T.UuidType):
        import uuid
        return uuid.UUID(bytes=v).bytes
    return v


class InspectTable:
    """Metadata tables of one :class:`~paimon_engine.table.table.Table`; ``t.inspect.snapshots()`` etc."""

    def __init__(self, table):
        self.tbl = table

    # -- helpers -------------------------------------------------------------------
    def _snapshot(self, snapshot_id=None):
        md = self.tbl.metadata
        if snapshot_id is not None:
            s = md.snapshot_by_id(snapshot_id)
            if s is None:
                raise NotFoundError(f"table {self.tbl.name} has no snapshot {snapshot_id}")
            return s
        s = md.current_snapshot()
        if s is None:
            raise NotFoundError(f"table {self.tbl.name} has no snapshot yet")
        return s

    def _manifests(self, snapshot):
        if snapshot is None or not snapshot.manifest_list:
            return []
        return read_manifest_list(self.tbl.io, snapshot.manifest_list)

    def _specs_struct(self, spec_ids=None):
        """Every partition field of the (given) specs, once per field id, all optional (pyiceberg's
        ``specs_struct``)."""
        md = self.tbl.metadata
        seen = {}
        for spec in md.specs:
            if spec_ids is not None and spec.spec_id not in spec_ids:
                continue
            ptype = partition_type_of(spec, md)
            for pf, f in zip(spec.fields, ptype.fields):
                if pf.field_id not in seen:
                    seen[pf.field_id] = T.DataField(pf.field_id, pf.name, f.type.copy(True))
        return T.RowType(list(seen.values()))

    def _partition_dict(self, spec_id, values):
        spec = self.tbl.metadata.specs_by_id().get(spec_id)
        if spec is None:
            return {}
        return {f.name: v for f, v in zip(spec.fields, values)}

    def _readable_metrics_type(self):
        import pyarrow as pa
        out = []
        for f in self.tbl.schema().fields:
            bt = _arrow_type(f.type)
            out.append(pa.field(f.name, pa.struct([
                pa.field("column_size", pa.int64()), pa.field("value_count", pa.int64()),
                pa.field("null_value_count", pa.int64()), pa.field("nan_value_count", pa.int64()),
                pa.field("lower_bound", bt), pa.field("upper_bound", bt)]), nullable=False))
        return pa.struct(out)

    def _readable_metrics(self, df):
        out = {}
        cs, vc = df.column_sizes or {}, df.value_counts or {}
        nc, nn = df.null_value_counts or {}, df.nan_value_counts or {}
        lo, hi = df.lower_bounds or {}, df.upper_bounds or {}
        for f in self.tbl.schema().fields:
            out[f.name] = {"column_size": cs.get(f.id), "value_count": vc.get(f.id),
                           "null_value_count": nc.get(f.id), "nan_value_count": nn.get(f.id),
                           "lower_bound": _bound(f.type, lo.get(f.id)), "upper_bound": _bound(f.type, hi.get(f.id))}
        return out

    def _read_entries(self, manifest, include_deleted):
        md = self.tbl.metadata
        spec = md.specs_by_id().get(manifest.partition_spec_id)
        ptype = partition_type_of(spec, md) if spec is not None else None
        return read_manifest(self.tbl.io, manifest, ptype, include_deleted=include_deleted)

    # -- metadata tables -----------------------------------------------------------
    def snapshots(self):
        """``committed_at, snapshot_id, parent_id, operation, manifest_list, summary``: one row per snapshot."""
        import pyarrow as pa
        schema = pa.schema([
            pa.field("committed_at", pa.timestamp("ms"), nullable=False),
            pa.field("snapshot_id", pa.int64(), nullable=False),
            pa.field("parent_id", pa.int64()),
            pa.field("operation", pa.string()),
            pa.field("manifest_list", pa.string(), nullable=False),
            pa.field("summary", pa.map_(pa.string(), pa.string()))])
        rows = []
        for s in self.tbl.metadata.snapshots:
            summary = dict(s.summary or {})
            op = summary.pop("operation", None)
            rows.append({"committed_at": _utc(s.timestamp_ms), "snapshot_id": s.snapshot_id,
                         "parent_id": s.parent_snapshot_id, "operation": str(op),
                         "manifest_list": s.manifest_list, "summary": summary if s.summary else None})
        return pa.Table.from_pylist(rows, schema=schema)

    def refs(self):
        """``name, type (BRANCH/TAG), snapshot_id, max_reference_age_in_ms, min_snapshots_to_keep,
        max_snapshot_age_in_ms``: one row per branch or tag."""
        import pyarrow as pa
        schema = pa.schema([
            pa.field("name", pa.string(), nullable=False),
            pa.field("type", pa.dictionary(pa.int32(), pa.string()), nullable=False),
            pa.field("snapshot_id", pa.int64(), nullable=False),
            pa.field("max_reference_age_in_ms", pa.int64()),
            pa.field("min_snapshots_to_keep", pa.int32()),
            pa.field("max_snapshot_age_in_ms", pa.int64())])
        rows = [{"name": name, "type": ref.type.upper(), "snapshot_id": ref.snapshot_id,
                 "max_reference_age_in_ms": ref.max_ref_age_ms, "min_snapshots_to_keep": ref.min_snapshots_to_keep,
                 "max_snapshot_age_in_ms": ref.max_snapshot_age_ms}
                for name, ref in self.tbl.metadata.refs.items()]
        return pa.Table.from_pylist(rows, schema=schema)

    def history(self):
        """``made_current_at, snapshot_id, parent_id, is_current_ancestor``: one row per snapshot-log entry."""
        import pyarrow as pa
        md = self.tbl.metadata
        schema = pa.schema([
            pa.field("made_current_at", pa.timestamp("ms"), nullable=False),
            pa.field("snapshot_id", pa.int64(), nullable=False),
            pa.field("parent_id", pa.int64()),
            pa.field("is_current_ancestor", pa.bool_(), nullable=False)])
        ancestors = {s.snapshot_id for s in md.ancestors()} if md.current_snapshot() is not None else set()
        rows = []
        for e in md.snapshot_log:
            s = md.snapshot_by_id(e.snapshot_id)
            rows.append({"made_current_at": _utc(e.timestamp_ms), "snapshot_id": e.snapshot_id,
                         "parent_id": s.parent_snapshot_id if s is not None else None,
                         "is_current_ancestor": e.snapshot_id in ancestors})
        return pa.Table.from_pylist(rows, schema=schema)

    def manifests(self):
        """One row per manifest of the current snapshot: counts by content and partition summaries (bounds as
        human strings)."""
        import pyarrow as pa
        summary_type = pa.struct([pa.field("contains_null", pa.bool_(), nullable=False),
                                  pa.field("contains_nan", pa.bool_()),
                                  pa.field("lower_bound", pa.string()), pa.field("upper_bound", pa.string())])
        schema = pa.schema([
            pa.field("content", pa.int8(), nullable=False),
            pa.field("path", pa.string(), nullable=False),
            pa.field("length", pa.int64(), nullable=False),
            pa.field("partition_spec_id", pa.int32(), nullable=False),
            pa.field("added_snapshot_id", pa.int64(), nullable=False),
            pa.field("added_data_files_count", pa.int32(), nullable=False),
            pa.field("existing_data_files_count", pa.int32(), nullable=False),
            pa.field("deleted_data_files_count", pa.int32(), nullable=False),
            pa.field("added_delete_files_count", pa.int32(), nullable=False),
            pa.field("existing_delete_files_count", pa.int32(), nullable=False),
            pa.field("deleted_delete_files_count", pa.int32(), nullable=False),
            pa.field("partition_summaries", pa.list_(summary_type), nullable=False)])
        md = self.tbl.metadata
        from ..spec.conversions import from_bytes
        rows = []
        for m in self._manifests(md.current_snapshot()):
            data, deletes = m.content == CONTENT_DATA, m.content != CONTENT_DATA
            summaries = []
            spec = md.specs_by_id().get(m.partition_spec_id)
            if m.partitions and spec is not None:
                ptype = partition_type_of(spec, md)
                sources = spec.source_types(md.schema())
                for pf, f, src, s in zip(spec.fields, ptype.fields, sources, m.partitions):
                    def human(raw):
                        return pf.transform.human_string(src, from_bytes(f.type, raw)) if raw else None
                    summaries.append({"contains_null": s.contains_null, "contains_nan": s.contains_nan,
                                      "lower_bound": human(s.lower_bound), "upper_bound": human(s.upper_bound)})
            rows.append({"content": m.content, "path": m.manifest_path, "length": m.manifest_length,
                         "partition_spec_id": m.partition_spec_id, "added_snapshot_id": m.added_snapshot_id,
                         "added_data_files_count": (m.added_files_count or 0) if data else 0,
                         "existing_data_files_count": (m.existing_files_count or 0) if data else 0,
                         "deleted_data_files_count": (m.deleted_files_count or 0) if data else 0,
                         "added_delete_files_count": (m.added_files_count or 0) if deletes else 0,
                         "existing_delete_files_count": (m.existing_files_count or 0) if deletes else 0,
                         "deleted_delete_files_count": (m.deleted_files_count or 0) if deletes else 0,
                         "partition_summaries": summaries})
        return pa.Table.from_pylist(rows, schema=schema)

    def _data_file_fields(self, partition_struct, files_table):
        """The data-file columns: ``files()`` has a dictionary-encoded ``file_format`` and a ``spec_id``,
        ``entries()``' ``data_file`` struct neither (as pyiceberg)."""
        import pyarrow as pa
        head = [pa.field("content", pa.int8(), nullable=False),
                pa.field("file_path", pa.string(), nullable=False),
                pa.field("file_format", pa.dictionary(pa.int32(), pa.string()) if files_table else pa.string(),
                         nullable=False)]
        if files_table:
            head.append(pa.field("spec_id", pa.int32(), nullable=False))
        return head + [
            pa.field("partition", partition_struct, nullable=False),
            pa.field("record_count", pa.int64(), nullable=False),
            pa.field("file_size_in_bytes", pa.int64(), nullable=False),
            pa.field("column_sizes", pa.map_(pa.int32(), pa.int64())),
            pa.field("value_counts", pa.map_(pa.int32(), pa.int64())),
            pa.field("null_value_counts", pa.map_(pa.int32(), pa.int64())),
            pa.field("nan_value_counts", pa.map_(pa.int32(), pa.int64())),
            pa.field("lower_bounds", pa.map_(pa.int32(), pa.binary())),
            pa.field("upper_bounds", pa.map_(pa.int32(), pa.binary())),
            pa.field("key_metadata", pa.binary()),
            pa.field("split_offsets", pa.list_(pa.int64())),
            pa.field("equality_ids", pa.list_(pa.int32())),
            pa.field("sort_order_id", pa.int32())]

    def _data_file_row(self, df, spec_id):
        def d(m):
            return dict(m) if m is not None else None
        return {"content": df.content, "file_path": df.file_path, "file_format": df.file_format,
                "spec_id": df.spec_id, "partition": self._partition_dict(spec_id, df.partition),
                "record_count": df.record_count, "file_size_in_bytes": df.file_size_in_bytes,
                "column_sizes": d(df.column_sizes), "value_counts": d(df.value_counts),
                "null_value_counts": d(df.null_value_counts), "nan_value_counts": d(df.nan_value_counts),
                "lower_bounds": d(df.lower_bounds), "upper_bounds": d(df.upper_bounds),
                "key_metadata": df.key_metadata,
                "split_offsets": list(df.split_offsets) if df.split_offsets is not None else None,
                "equality_ids": list(df.equality_ids) if df.equality_ids is not None else None,
                "sort_order_id": df.sort_order_id}

    def _files_schema(self):
        import pyarrow as pa
        fields = self._data_file_fields(_arrow_type(self._specs_struct()), True)
        return pa.schema(fields + [pa.field("readable_metrics", self._readable_metrics_type())])

    def _files(self, snapshot_id, contents):
        import pyarrow as pa
        schema = self._files_schema()
        if snapshot_id is None and self.tbl.metadata.current_snapshot() is None:
            return schema.empty_table()
        rows = []
        for m in self._manifests(self._snapshot(snapshot_id)):
            for e in self._read_entries(m, include_deleted=False):
                df = e.data_file
                if contents is not None and df.content not in contents:
                    continue
                row = self._data_file_row(df, m.partition_spec_id)
                row["readable_metrics"] = self._readable_metrics(df)
                rows.append(row)
        return pa.Table.from_pylist(rows, schema=schema)

    def files(self, snapshot_id=None):
        """Live data and delete files of a snapshot (default current), one row each with metrics."""
        return self._files(snapshot_id, None)

    def data_files(self, snapshot_id=None):
        return self._files(snapshot_id, {CONTENT_DATA})

    def delete_files(self, snapshot_id=None):
        return self._files(snapshot_id, {CONTENT_POSITION_DELETES, CONTENT_EQUALITY_DELETES})

    def entries(self, snapshot_id=None):
        """Every manifest entry of a snapshot (default current), deleted ones included: ``status, snapshot_id,
        sequence_number, file_sequence_number, data_file (struct), readable_metrics``."""
        import pyarrow as pa
        data_file = pa.struct(self._data_file_fields(_arrow_type(self._specs_struct()), False))
        schema = pa.schema([
            pa.field("status", pa.int8(), nullable=False),
            pa.field("snapshot_id", pa.int64(), nullable=False),
            pa.field("sequence_number", pa.int64(), nullable=False),
            pa.field("file_sequence_number", pa.int64(), nullable=False),
            pa.field("data_file", data_file, nullable=False),
            pa.field("readable_metrics", self._readable_metrics_type())])
        rows = []
        for m in self._manifests(self._snapshot(snapshot_id)):
            for e in self._read_entries(m, include_deleted=True):
                df = e.data_file
                rows.append({"status": e.status, "snapshot_id": e.snapshot_id,
                             "sequence_number": e.sequence_number, "file_sequence_number": e.file_sequence_number,
                             "data_file": self._data_file_row(df, m.partition_spec_id),
                             "readable_metrics": self._readable_metrics(df)})
        return pa.Table.from_pylist(rows, schema=schema)

    def partitions(self, snapshot_id=None, row_filter=None, case_sensitive: bool = True):
        """One row per partition of a snapshot (default current) with its record, file and delete counts and
        the last snapshot that touched it; ``row_filter`` keeps the partitions that may hold matching rows."""
        import pyarrow as pa
        md = self.tbl.metadata
        snap = self._snapshot(snapshot_id)
        cols = [
            pa.field("record_count", pa.int64(), nullable=False),
            pa.field("file_count", pa.int32(), nullable=False),
            pa.field("total_data_file_size_in_bytes", pa.int64(), nullable=False),
            pa.field("position_delete_record_count", pa.int64(), nullable=False),
            pa.field("position_delete_file_count", pa.int32(), nullable=False),
            pa.field("equality_delete_record_count", pa.int64(), nullable=False),
            pa.field("equality_delete_file_count", pa.int32(), nullable=False),
            pa.field("last_updated_at", pa.timestamp("ms")),
            pa.field("last_updated_snapshot_id", pa.int64())]
        manifests = self._manifests(snap)
        pstruct = self._specs_struct({m.partition_spec_id for m in manifests})
        if pstruct.fields:
            cols = [pa.field("partition", _arrow_type(pstruct), nullable=False),
                    pa.field("spec_id", pa.int32(), nullable=False)] + cols
        keep = None
        if row_filter is not None:
            keep = self._partition_filter(row_filter, case_sensitive)
        out = {}
        for m in manifests:
            for e in self._read_entries(m, include_deleted=False):
                df = e.data_file
                if keep is not None and not keep(df):
                    continue
                part = self._partition_dict(df.spec_id, df.partition)
                key = tuple(sorted((k, repr(v)) for k, v in part.items()))
                row = out.get(key)
                es = md.snapshot_by_id(e.snapshot_id) if e.snapshot_id is not None else None
                if row is None:
                    row = out[key] = {
                        "partition": part, "spec_id": df.spec_id, "record_count": 0, "file_count": 0,
                        "total_data_file_size_in_bytes": 0, "position_delete_record_count": 0,
                        "position_delete_file_count": 0, "equality_delete_record_count": 0,
                        "equality_delete_file_count": 0,
                        "last_updated_at": es.timestamp_ms if es else None,
                        "last_updated_snapshot_id": es.snapshot_id if es else None}
                if es is not None and (row["last_updated_at"] is None or row["last_updated_at"] < es.timestamp_ms):
                    row["last_updated_at"] = es.timestamp_ms
                    row["last_updated_snapshot_id"] = es.snapshot_id
                if df.content == CONTENT_DATA:
                    row["record_count"] += df.record_count
                    row["file_count"] += 1
                    row["total_data_file_size_in_bytes"] += df.file_size_in_bytes
                elif df.content == CONTENT_POSITION_DELETES:
                    row["position_delete_record_count"] += df.record_count
                    row["position_delete_file_count"] += 1
                else:
                    row["equality_delete_record_count"] += df.record_count
                    row["equality_delete_file_count"] += 1
        return pa.Table.from_pylist(list(out.values()), schema=pa.schema(cols))

    def _partition_filter(self, row_filter, case_sensitive):
        """A predicate on a content file: may its partition hold rows matching ``row_filter``? (the planner's
        partition pruning, per file)."""
        from ..scan.planner import TableScan
        scan = TableScan(self.tbl.metadata, self.tbl.io, filter=row_filter, case_sensitive=case_sensitive,
                         table=self.tbl)
        tasks = scan.plan_files()
        live = {t.path for t in tasks}
        live_deletes = {d.path for t in tasks for d in t.deletes}
        return lambda df: df.file_path in (live if df.content == CONTENT_DATA else live_deletes)
