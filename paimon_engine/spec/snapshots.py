"""Which snapshot a read sees and which files it lists: snapshot resolution (id, branch or tag, as of a time),
the live manifest entries of a snapshot, the partition type of a spec over a schema's history, and the check
that metadata files stay inside the table location.

These are spec concepts over :class:`~paimon_engine.spec.metadata.TableMetadata` and the manifests; the scan
planner and the table's write operations both build on them.
"""

from __future__ import annotations

import datetime as _dt

from ..errors import CorruptFileError, InvalidArgumentError, NotFoundError
from .manifest import CONTENT_DATA, CONTENT_EQUALITY_DELETES, CONTENT_POSITION_DELETES, read_manifest
from .manifest_list import read_manifest_list

__all__ = ["resolve_snapshot", "live_entries", "check_inside_table", "inside_table_check", "partition_type_of", "row_file_schema"]


def _to_millis(as_of):
    if isinstance(as_of, _dt.datetime):
        if as_of.tzinfo is None:
            as_of = as_of.replace(tzinfo=_dt.timezone.utc)
        return int(as_of.timestamp() * 1000)
    if isinstance(as_of, (int, float)):
        return int(as_of)
    if isinstance(as_of, str):
        return _to_millis(_dt.datetime.fromisoformat(as_of))
    raise InvalidArgumentError(f"as_of must be a datetime, an ISO string or epoch milliseconds, got {as_of!r}")


def resolve_snapshot(md, snapshot_id=None, as_of=None, ref=None):
    """The snapshot a read sees: by id, by branch or tag name, as of a time (datetime, ISO string or epoch ms),
    else the current one (None for an empty table or a ref with no snapshot yet)."""
    if sum(x is not None for x in (snapshot_id, as_of, ref)) > 1:
        raise InvalidArgumentError("give at most one of snapshot_id, as_of and ref")
    if snapshot_id is not None:
        s = md.snapshot_by_id(int(snapshot_id))
        if s is None:
            raise NotFoundError(f"no snapshot with id {snapshot_id}")
        return s
    if ref is not None:
        s = md.snapshot_by_ref(ref)
        if s is None:
            if ref in (md.refs or {}):
                return None
            raise NotFoundError(f"no branch or tag named {ref!r}")
        return s
    if as_of is not None:
        try:
            ms = _to_millis(as_of)
        except ValueError:
            raise InvalidArgumentError(f"as_of must be a datetime, an ISO string or epoch milliseconds, "
                                       f"got {as_of!r}") from None
        s = md.snapshot_as_of(ms)
        if s is None:
            raise NotFoundError(f"no snapshot was current at {as_of!r}")
        return s
    return md.current_snapshot()


def check_inside_table(md, path, what):
    """Metadata files must live under the table location (or ``write.metadata.path``) unless the table property
    ``read.allow-external-metadata`` is ``true``: a hostile metadata file must not make us read arbitrary files."""
    inside_table_check(md)(path, what)


def inside_table_check(md):
    """:func:`check_inside_table` for many paths of one table: ``check(path, what)``."""
    from ..io import normalize_location
    if md.properties.get("read.allow-external-metadata", "false").lower() == "true":
        return lambda path, what: None
    roots = [normalize_location(md.location).rstrip("/") + "/"]
    extra = md.properties.get("write.metadata.path")
    if extra:
        roots.append(normalize_location(extra).rstrip("/") + "/")
    roots = tuple(roots)
    inside = _INSIDE.get(roots)
    if inside is None:
        if len(_INSIDE) >= 64:
            _INSIDE.clear()
        inside = _INSIDE.setdefault(roots, set())

    def check(path, what):
        if path in inside:
            return
        p = normalize_location(path)
        if not p.startswith(roots) or ".." in p.split("/"):
            raise CorruptFileError(f"{what} {path!r} is outside the table location {md.location!r} "
                                   f"(set read.allow-external-metadata=true to allow)", path=md.metadata_location)
        if len(inside) >= 65536:
            inside.clear()
        inside.add(path)
    return check


#: table roots -> paths already found inside them (the answer depends on the path and the roots only); planning a
#: table again checks its manifests by one set lookup each
_INSIDE: dict = {}


def partition_type_of(spec, md):
    """The partition tuple type of ``spec``; its source columns may have been dropped from the current schema,
    so every schema is tried."""
    for s in [md.schema()] + list(reversed(md.schemas)):
        try:
            return spec.partition_type(s)
        except Exception:
            continue
    return spec.partition_type(md.schema())


def live_entries(io, md, snapshot):
    """(data entries, delete entries) live in ``snapshot`` (ManifestEntry lists with inherited seq numbers)."""
    if snapshot is None:
        return [], []
    if snapshot.manifest_list:
        check_inside_table(md, snapshot.manifest_list, "manifest list")
        manifests = read_manifest_list(io, snapshot.manifest_list)
    else:
        from .manifest_list import ManifestFile
        manifests = [ManifestFile(p, 0, 0, 0, 0, 0, snapshot.snapshot_id) for p in snapshot.manifests or []]
    specs = md.specs_by_id()
    data, deletes = [], []
    for m in manifests:
        check_inside_table(md, m.manifest_path, "manifest")
        spec = specs.get(m.partition_spec_id)
        if spec is None:
            raise CorruptFileError(f"manifest {m.manifest_path} uses unknown partition spec {m.partition_spec_id}",
                                   path=snapshot.manifest_list)
        for e in read_manifest(io, m, partition_type_of(spec, md), include_deleted=False):
            (data if e.data_file.content == CONTENT_DATA else deletes).append(e)
    return data, deletes


def row_file_schema(df, md, schema):
    """The RowType a ``row`` file was written with (row files store no schema)."""
    from .. import types as T
    from .schema import POSITION_DELETE_FIELDS
    if df.content == CONTENT_POSITION_DELETES:
        return T.RowType(POSITION_DELETE_FIELDS)
    if df.content == CONTENT_EQUALITY_DELETES:
        base = md.schema() if md is not None else schema
        return T.RowType([base.find_field(i) for i in df.equality_ids or []])
    struct = md.schema(df.writer_schema_id).struct if df.writer_schema_id is not None and md is not None \
        else schema.struct
    if df.lineage_field_ids:
        # the row-lineage columns a rewrite stored after the writer schema's columns
        from .schema import LINEAGE_COLUMNS, lineage_field
        by_id = {fid: name for name, fid in LINEAGE_COLUMNS.items()}
        struct = T.RowType(list(struct.fields) + [lineage_field(by_id[i]) for i in df.lineage_field_ids])
    return struct
