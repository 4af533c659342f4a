"""A slow, obviously-correct reader of a table snapshot, kept as a test oracle: live data files, projected by
field id onto the read schema, minus position deletes and equality deletes (the spec's applicability rules). The
package reads only through ``paimon_engine.scan``; tests compare the two on the same tables.

Delete applicability ("seq" is the entry's data sequence number):
position deletes apply when same spec and partition (or ``referenced_data_file`` equals the data file) and
data seq <= delete seq; equality deletes when data seq < delete seq and same partition, or the delete file's spec
is unpartitioned. A null in an equality-delete row matches null.
"""

from __future__ import annotations

import numpy as np

from paimon_engine.errors import CorruptFileError, NotFoundError
from paimon_engine.spec.manifest import CONTENT_DATA, CONTENT_EQUALITY_DELETES, CONTENT_POSITION_DELETES, STATUS_DELETED, read_manifest
from paimon_engine.spec.manifest_list import read_manifest_list

__all__ = ["live_entries", "read_snapshot", "read_data_file", "delete_index", "SnapshotFiles"]


def check_inside_table(md, path, what):
    """Metadata files must live under the table location (or ``write.metadata.path``) unless the table property
    ``read.allow-external-metadata`` is ``true``: a hostile metadata file must not make us read arbitrary files."""
    from paimon_engine.io import normalize_location
    if md.properties.get("read.allow-external-metadata", "false").lower() == "true":
        return
    p = normalize_location(path)
    roots = [normalize_location(md.location).rstrip("/") + "/"]
    extra = md.properties.get("write.metadata.path")
    if extra:
        roots.append(normalize_location(extra).rstrip("/") + "/")
    if ".." in p.split("/") or not any(p.startswith(r) for r in roots):
        raise CorruptFileError(f"{what} {path!r} is outside the table location {md.location!r} "
                               f"(set read.allow-external-metadata=true to allow)", path=md.metadata_location)


def live_entries(io, md, snapshot):
    """(data entries, delete entries) live in ``snapshot`` (ManifestEntry lists with inherited seq numbers)."""
    if snapshot is None:
        return [], []
    if snapshot.manifest_list:
        check_inside_table(md, snapshot.manifest_list, "manifest list")
        manifests = read_manifest_list(io, snapshot.manifest_list)
    else:
        from paimon_engine.spec.manifest_list import ManifestFile
        manifests = [ManifestFile(p, 0, 0, 0, 0, 0, snapshot.snapshot_id) for p in snapshot.manifests or []]
    specs = md.specs_by_id()
    data, deletes = [], []
    for m in manifests:
        check_inside_table(md, m.manifest_path, "manifest")
        spec = specs.get(m.partition_spec_id)
        if spec is None:
            raise CorruptFileError(f"manifest {m.manifest_path} uses unknown partition spec {m.partition_spec_id}",
                                   path=snapshot.manifest_list)
        pt = _partition_type(spec, md)
        for e in read_manifest(io, m, pt, include_deleted=False):
            (data if e.data_file.content == CONTENT_DATA else deletes).append(e)
    return data, deletes


def _partition_type(spec, md):
    # a spec's source columns may have been dropped from the current schema: search all schemas
    for s in [md.schema()] + list(reversed(md.schemas)):
        try:
            return spec.partition_type(s)
        except Exception:
            continue
    return spec.partition_type(md.schema())


def delete_index(io, md, delete_entries):
    """Group delete files: position deletes by (spec, partition) and by referenced file; equality deletes."""
    pos_by_part, pos_by_file, eq = {}, {}, []
    specs = md.specs_by_id()
    for e in delete_entries:
        df = e.data_file
        if df.content == CONTENT_POSITION_DELETES:
            if df.referenced_data_file:
                pos_by_file.setdefault(df.referenced_data_file, []).append(e)
            else:
                pos_by_part.setdefault((df.spec_id, df.partition), []).append(e)
        elif df.content == CONTENT_EQUALITY_DELETES:
            spec = specs.get(df.spec_id)
            eq.append((e, spec is None or not spec.fields))
    return pos_by_part, pos_by_file, eq


def _read_file_table(io, path, fmt, columns=None, file_schema=None):
    """A whole data/delete file as Arrow. ``file_schema`` (a RowType with field ids) is needed for ``row`` files,
    which store no schema: their columns get these names and field ids by position."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    fmt = (fmt or "PARQUET").upper()
    try:
        if fmt == "PARQUET":
            fs, p = io.resolve(path)
            try:
                f = fs.open_input_file(p)
            except FileNotFoundError:
                raise NotFoundError(f"data file not found: {path}") from None
            with f:
                return pq.ParquetFile(f).read(columns=columns)
        if fmt == "ROW":
            if file_schema is None:
                raise CorruptFileError("a row file needs its writer schema (pe_writer_schema_id)", path=path)
            from paimon_engine.formats.row import RowFileReader
            try:
                with RowFileReader(path, file_schema, file_io=io) as r:
                    tbl = r.read_all()
            except NotFoundError:
                raise NotFoundError(f"data file not found: {path}") from None
            if hasattr(tbl, "to_arrow_table") and not isinstance(tbl, pa.Table):
                tbl = tbl.to_arrow_table()
            elif isinstance(tbl, pa.RecordBatch):
                tbl = pa.Table.from_batches([tbl])
            target = file_schema.to_arrow_schema()
            cols = [c.cast(f.type) if not c.type.equals(f.type) else c for c, f in zip(tbl.columns, target)]
            tbl = pa.Table.from_arrays(cols, schema=target)
            return tbl.select(columns) if columns is not None else tbl
    except (pa.ArrowInvalid, OSError) as exc:
        if isinstance(exc, NotFoundError):
            raise
        raise CorruptFileError(f"cannot read data file: {exc}", path=path) from None
    raise CorruptFileError(f"unsupported file format {fmt}", path=path)


def _row_file_schema(df, md, schema):
    """The RowType a ``row`` file was written with."""
    from paimon_engine.spec.schema import POSITION_DELETE_FIELDS
    from paimon_engine import types as T
    if df.content == CONTENT_POSITION_DELETES:
        return T.RowType(POSITION_DELETE_FIELDS)
    if df.content == CONTENT_EQUALITY_DELETES:
        base = md.schema() if md is not None else schema
        return T.RowType([base.find_field(i) for i in df.equality_ids or []])
    struct = md.schema(df.writer_schema_id).struct if df.writer_schema_id is not None and md is not None \
        else schema.struct
    if df.lineage_field_ids:        # row-lineage columns stored after the writer schema's
        names = {2147483540: "_row_id", 2147483539: "_last_updated_sequence_number"}
        struct = T.RowType(list(struct.fields) + [T.DataField(i, names[i], T.BigIntType())
                                                  for i in df.lineage_field_ids])
    return struct


def _field_id(field):
    meta = field.metadata or {}
    raw = meta.get(b"PARQUET:field_id")
    return int(raw) if raw is not None else None


def read_data_file(io, df, schema, md=None):
    """One data file as an Arrow table with the columns of ``schema`` (matched by field id; missing ids read as
    nulls; promoted types cast). ``md`` (the table metadata) resolves the writer schema of ``row`` files."""
    import pyarrow as pa
    file_schema = _row_file_schema(df, md, schema) if (df.file_format or "").upper() == "ROW" else None
    tbl = _read_file_table(io, df.file_path, df.file_format, file_schema=file_schema)
    by_id = {}
    by_name = {}
    for i, f in enumerate(tbl.schema):
        fid = _field_id(f)
        if fid is not None:
            by_id[fid] = i
        by_name[f.name] = i
    target = schema.to_arrow()
    cols = []
    for f, af in zip(schema.fields, target):
        idx = by_id.get(f.id)
        if idx is None and not by_id:
            idx = by_name.get(f.name)     # files without field ids: fall back to names
        if idx is None:
            cols.append(pa.nulls(tbl.num_rows, af.type))
            continue
        c = tbl.column(idx)
        if not c.type.equals(af.type):
            try:
                c = project_by_id(c.combine_chunks(), tbl.schema.field(idx), af)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise CorruptFileError(f"column {f.name!r} of type {c.type} cannot be read as {af.type}",
                                       path=df.file_path) from None
        cols.append(c)
    return pa.Table.from_arrays(cols, schema=pa.schema([pa.field(af.name, af.type, nullable=True,
                                                                 metadata=af.metadata) for af in target]))


def project_by_id(arr, file_field, target_field):
    """Reshape ``arr`` (of ``file_field``) into ``target_field``'s type matching nested fields by field id:
    renamed nested fields keep their data, fields missing from the file read as nulls, promoted types are cast."""
    import pyarrow as pa
    ft, tt = file_field.type, target_field.type
    if ft.equals(tt):
        return arr
    if pa.types.is_struct(tt) and pa.types.is_struct(ft):
        by_id = {}
        for i in range(ft.num_fields):
            fid = _field_id(ft.field(i))
            by_id[fid if fid is not None else ft.field(i).name] = i
        children = []
        for j in range(tt.num_fields):
            tf = tt.field(j)
            key = _field_id(tf)
            i = by_id.get(key if key is not None else tf.name)
            if i is None:
                children.append(pa.nulls(len(arr), tf.type))
            else:
                children.append(project_by_id(arr.field(i), ft.field(i), tf))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(tt), mask=mask)
    if (pa.types.is_list(tt) and pa.types.is_list(ft)) or (pa.types.is_large_list(tt) and pa.types.is_large_list(ft)):
        values = project_by_id(arr.values, ft.value_field, tt.value_field)
        mask = arr.is_null() if arr.null_count else None
        cls = pa.ListArray if pa.types.is_list(tt) else pa.LargeListArray
        return cls.from_arrays(arr.offsets, values, type=tt, mask=mask)
    if pa.types.is_map(tt) and pa.types.is_map(ft):
        keys = project_by_id(arr.keys, ft.key_field, tt.key_field)
        items = project_by_id(arr.items, ft.item_field, tt.item_field)
        out = pa.MapArray.from_arrays(arr.offsets, keys, items, type=tt, mask=arr.is_null() if arr.null_count
                                      else None)
        return out
    return arr.cast(tt)


def _dv_positions(io, df, record_count=None):
    """Positions of a deletion-vector entry: its blob read by range and decoded by the one DV codec."""
    from ..index.iceberg_deletion_vector import deserialize_deletion_vector
    off, size = df.content_offset, df.content_size_in_bytes
    with io.open_input(df.file_path) as f:
        if off is None or size is None or off < 0 or size < 0 or off + size > f.size:
            raise CorruptFileError(f"deletion vector range {off}+{size} outside the file ({f.size} bytes)",
                                   path=df.file_path, offset=off)
        raw = f.read_at(off, size)
    return deserialize_deletion_vector(raw, df.file_path, off, cardinality=df.record_count,
                                       record_count=record_count)


def _positions(io, entries, data_path, cache, record_count=None):
    import pyarrow.compute as pc
    out = []
    for e in entries:
        if e.data_file.content == CONTENT_POSITION_DELETES and e.data_file.file_format == "PUFFIN":
            key = ("dv", e.data_file.file_path, e.data_file.content_offset)
            pos = cache.get(key)
            if pos is None:
                pos = cache[key] = _dv_positions(io, e.data_file, record_count)
            out.append(pos)
            continue
        key = e.data_file.file_path
        t = cache.get(key)
        if t is None:
            fschema = _row_file_schema(e.data_file, None, None) if e.data_file.file_format == "ROW" else None
            t = cache[key] = _read_file_table(io, key, e.data_file.file_format, columns=["file_path", "pos"],
                                              file_schema=fschema)
        sel = t.filter(pc.equal(t.column("file_path"), data_path)) if e.data_file.referenced_data_file is None \
            else t
        out.append(np.asarray(sel.column("pos").to_numpy(), dtype=np.int64))
    return np.concatenate(out) if out else np.empty(0, np.int64)


def _eq_keep_mask(tbl, del_tbl, names):
    import pyarrow as pa
    import pyarrow.compute as pc
    if len(names) == 1:
        hit = pc.is_in(tbl.column(names[0]), value_set=del_tbl.column(names[0]).combine_chunks(), skip_nulls=False)
        return np.asarray(pc.invert(pc.fill_null(hit, False)))
    keys = set(zip(*[del_tbl.column(n).to_pylist() for n in names]))
    rows = zip(*[tbl.column(n).to_pylist() for n in names])
    return np.fromiter((r not in keys for r in rows), dtype=bool, count=tbl.num_rows)


class SnapshotFiles:
    """The live files of a snapshot with their delete index, for reading file by file."""

    def __init__(self, io, md, snapshot):
        self.io = io
        self.md = md
        self.snapshot = snapshot
        self.data, self.deletes = live_entries(io, md, snapshot)
        self.pos_by_part, self.pos_by_file, self.eq = delete_index(io, md, self.deletes)
        self._cache = {}

    def deletes_for(self, entry):
        """(position-delete entries, equality-delete entries) that apply to a data entry."""
        df = entry.data_file
        seq = entry.sequence_number or 0
        pos = [d for d in self.pos_by_file.get(df.file_path, []) + self.pos_by_part.get((df.spec_id, df.partition), [])
               if seq <= (d.sequence_number or 0)]
        dvs = [d for d in pos if d.data_file.file_format == "PUFFIN"]
        if dvs:
            if len(dvs) > 1:
                raise CorruptFileError(f"two deletion vectors for data file {df.file_path} in one snapshot: "
                                       f"{dvs[0].data_file.file_path} and {dvs[1].data_file.file_path}",
                                       path=dvs[1].data_file.file_path, offset=dvs[1].data_file.content_offset)
            pos = dvs      # a deletion vector replaces the position-delete files of its data file
        eqs = []
        for d, is_global in self.eq:
            if not (seq < (d.sequence_number or 0)):
                continue
            if not is_global and (d.data_file.spec_id != df.spec_id or d.data_file.partition != df.partition):
                continue
            eqs.append(d)
        return pos, eqs

    def deleted_positions(self, entry):
        """(sorted positions that the position deletes or deletion vector of a data entry delete, those delete
        entries)."""
        pos_entries, _ = self.deletes_for(entry)
        if not pos_entries:
            return np.zeros(0, np.int64), []
        pos = _positions(self.io, pos_entries, entry.data_file.file_path, self._cache, entry.data_file.record_count)
        pos = np.unique(pos[(pos >= 0) & (pos < entry.data_file.record_count)])
        return pos, pos_entries

    def read(self, entry, schema):
        """(table of the whole file in ``schema``, keep mask after deletes)."""
        tbl = read_data_file(self.io, entry.data_file, schema, self.md)
        keep = np.ones(tbl.num_rows, dtype=bool)
        pos_entries, eq_entries = self.deletes_for(entry)
        if pos_entries:
            pos = _positions(self.io, pos_entries, entry.data_file.file_path, self._cache,
                             entry.data_file.record_count)
            pos = pos[(pos >= 0) & (pos < tbl.num_rows)]
            keep[pos] = False
        for d in eq_entries:
            names = [self.md.schema().column_name(i) for i in d.data_file.equality_ids or []]
            dkey = ("eq", d.data_file.file_path)
            dt = self._cache.get(dkey)
            if dt is None:
                dt = self._cache[dkey] = read_data_file(self.io, d.data_file, self.md.schema().select(names), self.md)
            present = [n for n in names if n in tbl.column_names]
            if len(present) != len(names):
                continue
            keep &= _eq_keep_mask(tbl, dt, names)
        return tbl, keep


def read_snapshot(io, md, snapshot, schema=None, row_filter=None, with_positions=False):
    """The rows of ``snapshot`` as one Arrow table in ``schema`` (default: the current schema)."""
    import pyarrow as pa
    schema = schema or md.schema()
    files = SnapshotFiles(io, md, snapshot)
    bound = row_filter.bind(schema.struct) if row_filter is not None else None
    pieces = []
    for e in sorted(files.data, key=lambda e: (e.sequence_number or 0, e.data_file.file_path)):
        tbl, keep = files.read(e, schema)
        if with_positions:
            tbl = tbl.append_column("_file", pa.array([e.data_file.file_path] * tbl.num_rows, pa.string()))
            tbl = tbl.append_column("_pos", pa.array(np.arange(tbl.num_rows, dtype=np.int64)))
        if not keep.all():
            tbl = tbl.filter(pa.array(keep))
        if bound is not None:
            from paimon_engine.expressions import evaluate_arrow
            tbl = tbl.filter(evaluate_arrow(bound, tbl))
        pieces.append(tbl)
    if not pieces:
        target = schema.to_arrow()
        empty = pa.schema([pa.field(f.name, f.type, nullable=True, metadata=f.metadata) for f in target])
        if with_positions:
            empty = empty.append(pa.field("_file", pa.string())).append(pa.field("_pos", pa.int64()))
        return empty.empty_table()
    return pa.concat_tables(pieces)
