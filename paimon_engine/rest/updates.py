"""Table commits of the Iceberg REST protocol: requirements checked against the current metadata, updates applied
to a copy of it, and (for a client) the requirements and updates that turn one metadata into another.

Requirements: ``assert-create``, ``assert-table-uuid``, ``assert-ref-snapshot-id``,
``assert-last-assigned-field-id``, ``assert-current-schema-id``, ``assert-last-assigned-partition-id``,
``assert-default-spec-id``, ``assert-default-sort-order-id``. A requirement that does not hold raises
:class:`~paimon_engine.errors.CommitFailedError` naming it; a malformed one raises
:class:`~paimon_engine.errors.InvalidArgumentError`.

Updates: ``assign-uuid``, ``upgrade-format-version``, ``add-schema``, ``set-current-schema``, ``add-spec``,
``set-default-spec``, ``add-sort-order``, ``set-default-sort-order``, ``add-snapshot``, ``set-snapshot-ref``,
``remove-snapshots``, ``remove-snapshot-ref``, ``set-location``, ``set-properties``, ``remove-properties``. An
unknown type or a malformed update raises InvalidArgumentError.
"""

from __future__ import annotations

import time

from ..errors import CommitFailedError, InvalidArgumentError, PaimonEngineError
from ..spec.metadata import (MAIN_BRANCH, SUPPORTED_FORMAT_VERSIONS, Snapshot, SnapshotLogEntry, SnapshotRef,
                              TableMetadata)
from ..spec.partitioning import PARTITION_FIELD_ID_START, PartitionSpec
from ..spec.schema import Schema
from ..spec.sorting import SortOrder

__all__ = ["check_requirements", "apply_updates", "empty_metadata", "commit_changes", "REQUIREMENTS", "UPDATES"]


def _get(d, key, kind, what, optional=False):
    if not isinstance(d, dict):
        raise InvalidArgumentError(f"{what} must be a JSON object, got {type(d).__name__}")
    if key not in d or d[key] is None:
        if optional:
            return None
        raise InvalidArgumentError(f"{what} is missing required field {key!r}")
    v = d[key]
    ok = (isinstance(v, int) and not isinstance(v, bool)) if kind is int else isinstance(v, kind)
    if not ok:
        raise InvalidArgumentError(f"{what}: field {key!r} must be {kind.__name__}, got {v!r:.80}")
    return v


# -- requirements ---------------------------------------------------------------------------
def _assert_create(md, r, what):
    if md is not None:
        raise CommitFailedError(f"requirement failed: {what}: the table exists already")


def _assert_uuid(md, r, what):
    want = _get(r, "uuid", str, what)
    if md.table_uuid != want:
        raise CommitFailedError(f"requirement failed: {what}: table uuid is {md.table_uuid}, not {want}")


def _assert_ref(md, r, what):
    name = _get(r, "ref", str, what)
    want = _get(r, "snapshot-id", int, what, optional=True)
    ref = md.refs.get(name)
    if want is None:
        if ref is not None:
            raise CommitFailedError(f"requirement failed: {what}: branch or tag {name!r} was created "
                                    f"concurrently (it points at snapshot {ref.snapshot_id})")
    elif ref is None:
        raise CommitFailedError(f"requirement failed: {what}: branch or tag {name!r} does not exist "
                                f"(expected snapshot {want})")
    elif ref.snapshot_id != want:
        raise CommitFailedError(f"requirement failed: {what}: branch or tag {name!r} points at snapshot "
                                f"{ref.snapshot_id}, not {want}")


def _assert_int(key, attr, label):
    def check(md, r, what):
        want = _get(r, key, int, what)
        have = getattr(md, attr)
        if have != want:
            raise CommitFailedError(f"requirement failed: {what}: {label} is {have}, not {want}")
    return check


REQUIREMENTS = {
    "assert-create": _assert_create,
    "assert-table-uuid": _assert_uuid,
    "assert-ref-snapshot-id": _assert_ref,
    "assert-last-assigned-field-id": _assert_int("last-assigned-field-id", "last_column_id",
                                                 "the last assigned field id"),
    "assert-current-schema-id": _assert_int("current-schema-id", "current_schema_id", "the current schema id"),
    "assert-last-assigned-partition-id": _assert_int("last-assigned-partition-id", "last_partition_id",
                                                     "the last assigned partition field id"),
    "assert-default-spec-id": _assert_int("default-spec-id", "default_spec_id", "the default partition spec id"),
    "assert-default-sort-order-id": _assert_int("default-sort-order-id", "default_sort_order_id",
                                                "the default sort order id"),
}


def _kind(item, what, key="type"):
    return _get(item, key, str, what)


def check_requirements(md: TableMetadata | None, requirements) -> None:
    """Check every requirement against ``md`` (None: the table does not exist)."""
    if not isinstance(requirements, list):
        raise InvalidArgumentError(f"'requirements' must be a list, got {type(requirements).__name__}")
    for i, r in enumerate(requirements):
        what = f"requirement {i}"
        kind = _kind(r, what)
        check = REQUIREMENTS.get(kind)
        if check is None:
            raise InvalidArgumentError(f"{what}: unknown requirement type {kind!r}")
        what = f"{kind} (requirement {i})"
        if md is None and kind != "assert-create":
            raise CommitFailedError(f"requirement failed: {what}: the table does not exist")
        check(md, r, what)


# -- updates ----------------------------------------------------------------------------------
class _State:
    """The ids added by this commit, so that ``-1`` ("the last one added") resolves."""

    def __init__(self):
        self.last_schema = None
        self.last_spec = None
        self.last_order = None
        self.added_snapshots = set()


def _wrap(fn, what, *args):
    try:
        return fn(*args)
    except InvalidArgumentError:
        raise
    except (PaimonEngineError, TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise InvalidArgumentError(f"{what}: {exc}") from None


def _assign_uuid(md, u, st, what):
    want = _get(u, "uuid", str, what)
    if md.table_uuid and md.table_uuid != want and md.metadata_location is not None:
        raise InvalidArgumentError(f"{what}: cannot change the uuid of an existing table")
    md.table_uuid = want


def _upgrade(md, u, st, what):
    fv = _get(u, "format-version", int, what)
    if fv not in SUPPORTED_FORMAT_VERSIONS:
        raise InvalidArgumentError(f"{what}: unsupported format version {fv}; supported: "
                                   f"{SUPPORTED_FORMAT_VERSIONS}")
    if md.format_version is not None and fv < md.format_version:
        raise InvalidArgumentError(f"{what}: cannot downgrade format version {md.format_version} to {fv}")
    md.format_version = fv


def _add_schema(md, u, st, what):
    d = _get(u, "schema", dict, what)
    schema = _wrap(Schema.from_dict, f"{what}: bad schema", d, 0)
    last = _get(u, "last-column-id", int, what, optional=True)
    for s in md.schemas:
        if s.struct == schema.struct and s.identifier_field_ids == schema.identifier_field_ids:
            st.last_schema = s.schema_id
            return
    new_id = max((s.schema_id for s in md.schemas), default=-1) + 1
    schema = Schema(schema.struct, new_id, schema.identifier_field_ids, schema.extra, schema.field_extra)
    md.schemas = list(md.schemas) + [schema]
    md.last_column_id = max(md.last_column_id or 0, schema.highest_field_id, last or 0)
    st.last_schema = new_id


def _resolve_added(requested, last, existing, kind, what):
    """``requested``, or for -1 the id of the ``kind`` added earlier in this commit; it must be one of ``existing``."""
    if requested == -1:
        if last is None:
            raise InvalidArgumentError(f"{what}: {kind} id -1 (the last added) but no {kind} was added")
        requested = last
    if requested not in existing:
        raise InvalidArgumentError(f"{what}: the table has no {kind} with id {requested}")
    return requested


def _set_current_schema(md, u, st, what):
    md.current_schema_id = _resolve_added(_get(u, "schema-id", int, what), st.last_schema,
                                          {s.schema_id for s in md.schemas}, "schema", what)


def _add_spec(md, u, st, what):
    spec = _wrap(PartitionSpec.from_dict, f"{what}: bad partition spec", _get(u, "spec", dict, what))
    for s in md.specs:
        if s.compatible_with(spec):
            st.last_spec = s.spec_id
            return
    new_id = max((s.spec_id for s in md.specs), default=-1) + 1
    spec = PartitionSpec(spec.fields, new_id, spec.extra)
    md.specs = list(md.specs) + [spec]
    md.last_partition_id = max(md.last_partition_id if md.last_partition_id is not None
                               else PARTITION_FIELD_ID_START - 1, spec.last_assigned_field_id)
    st.last_spec = new_id


def _set_default_spec(md, u, st, what):
    md.default_spec_id = _resolve_added(_get(u, "spec-id", int, what), st.last_spec,
                                        {s.spec_id for s in md.specs}, "partition spec", what)


def _add_order(md, u, st, what):
    order = _wrap(SortOrder.from_dict, f"{what}: bad sort order", _get(u, "sort-order", dict, what))
    for o in md.sort_orders:
        if o.fields == order.fields:
            st.last_order = o.order_id
            return
    new_id = max((o.order_id for o in md.sort_orders), default=0) + 1 if order.fields else 0
    order = SortOrder(order.fields, new_id, order.extra)
    md.sort_orders = list(md.sort_orders) + [order]
    st.last_order = new_id


def _set_default_order(md, u, st, what):
    md.default_sort_order_id = _resolve_added(_get(u, "sort-order-id", int, what), st.last_order,
                                              {o.order_id for o in md.sort_orders}, "sort order", what)


def _add_snapshot(md, u, st, what):
    d = _get(u, "snapshot", dict, what)
    snap = _wrap(Snapshot.from_dict, f"{what}: bad snapshot", d, md.format_version or 2)
    if md.snapshot_by_id(snap.snapshot_id) is not None:
        raise InvalidArgumentError(f"{what}: snapshot {snap.snapshot_id} exists already")
    if md.format_version >= 2 and snap.sequence_number <= (md.last_sequence_number or 0) \
            and snap.parent_snapshot_id is not None:
        raise InvalidArgumentError(f"{what}: snapshot {snap.snapshot_id} has sequence number "
                                   f"{snap.sequence_number}, not above the table's last "
                                   f"{md.last_sequence_number}")
    md.snapshots = list(md.snapshots) + [snap]
    md._snap_by_id = None
    md.last_sequence_number = max(md.last_sequence_number or 0, snap.sequence_number)
    st.added_snapshots.add(snap.snapshot_id)


def _set_ref(md, u, st, what):
    name = _get(u, "ref-name", str, what)
    sid = _get(u, "snapshot-id", int, what)
    kind = _get(u, "type", str, what)
    snap = md.snapshot_by_id(sid)
    if snap is None:
        raise InvalidArgumentError(f"{what}: the table has no snapshot {sid}")
    if kind not in ("branch", "tag"):
        raise InvalidArgumentError(f"{what}: ref type must be 'branch' or 'tag', got {kind!r}")
    if name == MAIN_BRANCH and kind != "branch":
        raise InvalidArgumentError(f"{what}: {MAIN_BRANCH!r} must be a branch")
    opts = [_get(u, k, int, what, optional=True)
            for k in ("min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms")]
    md.refs = dict(md.refs)
    md.refs[name] = SnapshotRef(sid, kind, *opts)
    if name == MAIN_BRANCH and md.current_snapshot_id != sid:
        md.current_snapshot_id = sid
        stamp = snap.timestamp_ms if sid in st.added_snapshots else int(time.time() * 1000)
        md.snapshot_log = list(md.snapshot_log) + [SnapshotLogEntry(stamp, sid)]


def _remove_snapshots(md, u, st, what):
    ids = _get(u, "snapshot-ids", list, what)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise InvalidArgumentError(f"{what}: 'snapshot-ids' must be a list of integers")
    gone = set(ids)
    md.snapshots = [s for s in md.snapshots if s.snapshot_id not in gone]
    md._snap_by_id = None
    md.refs = {n: r for n, r in md.refs.items() if r.snapshot_id not in gone}
    if md.current_snapshot_id in gone:
        md.current_snapshot_id = None
    md.snapshot_log = [e for e in md.snapshot_log if e.snapshot_id not in gone]


def _remove_ref(md, u, st, what):
    name = _get(u, "ref-name", str, what)
    md.refs = {n: r for n, r in md.refs.items() if n != name}
    if name == MAIN_BRANCH:
        md.current_snapshot_id = None


def _set_location(md, u, st, what):
    loc = _get(u, "location", str, what)
    if not loc:
        raise InvalidArgumentError(f"{what}: the location is empty")
    md.location = loc.rstrip("/") or "/"


def _set_props(md, u, st, what):
    updates = _get(u, "updates", dict, what)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in updates.items()):
        raise InvalidArgumentError(f"{what}: 'updates' must map strings to strings")
    md.properties = {**md.properties, **updates}


def _remove_props(md, u, st, what):
    removals = _get(u, "removals", list, what)
    if not all(isinstance(k, str) for k in removals):
        raise InvalidArgumentError(f"{what}: 'removals' must be a list of strings")
    md.properties = {k: v for k, v in md.properties.items() if k not in set(removals)}


UPDATES = {
    "assign-uuid": _assign_uuid,
    "upgrade-format-version": _upgrade,
    "add-schema": _add_schema,
    "set-current-schema": _set_current_schema,
    "add-spec": _add_spec,
    "set-default-spec": _set_default_spec,
    "add-sort-order": _add_order,
    "set-default-sort-order": _set_default_order,
    "add-snapshot": _add_snapshot,
    "set-snapshot-ref": _set_ref,
    "remove-snapshots": _remove_snapshots,
    "remove-snapshot-ref": _remove_ref,
    "set-location": _set_location,
    "set-properties": _set_props,
    "remove-properties": _remove_props,
}


def empty_metadata(location: str | None = None) -> TableMetadata:
    """The starting point of a table created by a commit (``assert-create``): no schema, spec or order yet."""
    return TableMetadata(format_version=1, table_uuid=None, location=location, last_sequence_number=0,
                         last_updated_ms=int(time.time() * 1000), last_column_id=0, schemas=[],
                         current_schema_id=None, specs=[], default_spec_id=None,
                         last_partition_id=PARTITION_FIELD_ID_START - 1, properties={}, current_snapshot_id=None,
                         snapshots=[], snapshot_log=[], metadata_log=[], sort_orders=[],
                         default_sort_order_id=None, refs={}, statistics=[], partition_statistics=[], extra={},
                         metadata_location=None)


def apply_updates(md: TableMetadata, updates) -> TableMetadata:
    """A copy of ``md`` with every update applied in order (``md`` itself is not changed)."""
    if not isinstance(updates, list):
        raise InvalidArgumentError(f"'updates' must be a list, got {type(updates).__name__}")
    new = md.copy()
    st = _State()
    for i, u in enumerate(updates):
        what = f"update {i}"
        kind = _kind(u, what, "action")
        fn = UPDATES.get(kind)
        if fn is None:
            raise InvalidArgumentError(f"{what}: unknown update type {kind!r}; known: {', '.join(UPDATES)}")
        fn(new, u, st, f"{kind} (update {i})")
    _check_complete(new)
    return new


def _check_complete(md):
    """The result must be a table: a schema, a spec and an order that exist, a location, a uuid."""
    missing = [name for name, v in (("schema", md.current_schema_id), ("partition spec", md.default_spec_id),
                                    ("sort order", md.default_sort_order_id), ("location", md.location),
                                    ("table uuid", md.table_uuid)) if v is None]
    if missing:
        raise InvalidArgumentError(f"the updates leave the table without a current {', '.join(missing)}")
    if md.current_snapshot_id is not None and md.snapshot_by_id(md.current_snapshot_id) is None:
        raise InvalidArgumentError(f"current snapshot {md.current_snapshot_id} is not a snapshot of the table")


# -- client side: base -> new as requirements + updates -------------------------------------------------------
def commit_changes(base: TableMetadata | None, new: TableMetadata) -> tuple:
    """(requirements, updates) that turn ``base`` (None: create the table) into ``new``, as the REST protocol
    carries a commit. The requirements pin what the change was computed from: the table uuid, the head of every
    branch it moves, and the schema/spec/order ids and last assigned ids where the change adds to them."""
    reqs, ups = [], []
    if base is None:
        reqs.append({"type": "assert-create"})
        ups.append({"action": "assign-uuid", "uuid": new.table_uuid})
        ups.append({"action": "upgrade-format-version", "format-version": new.format_version})
        base = empty_metadata(new.location)
        base.format_version = new.format_version
        ups.append({"action": "set-location", "location": new.location})
    else:
        reqs.append({"type": "assert-table-uuid", "uuid": base.table_uuid})
        if new.format_version != base.format_version:
            ups.append({"action": "upgrade-format-version", "format-version": new.format_version})
        if new.location != base.location:
            ups.append({"action": "set-location", "location": new.location})
    old_schemas = {s.schema_id for s in base.schemas}
    added_schema = False
    for s in new.schemas:
        if s.schema_id not in old_schemas:
            ups.append({"action": "add-schema", "schema": s.to_dict(), "last-column-id": new.last_column_id})
            added_schema = True
    if added_schema and base.metadata_location is not None:
        reqs.append({"type": "assert-last-assigned-field-id", "last-assigned-field-id": base.last_column_id})
    if new.current_schema_id != base.current_schema_id:
        if base.metadata_location is not None:
            reqs.append({"type": "assert-current-schema-id", "current-schema-id": base.current_schema_id})
        ups.append({"action": "set-current-schema", "schema-id": new.current_schema_id})
    old_specs = {s.spec_id for s in base.specs}
    added_spec = False
    for s in new.specs:
        if s.spec_id not in old_specs:
            ups.append({"action": "add-spec", "spec": s.to_dict()})
            added_spec = True
    if added_spec and base.metadata_location is not None:
        reqs.append({"type": "assert-last-assigned-partition-id",
                     "last-assigned-partition-id": base.last_partition_id})
    if new.default_spec_id != base.default_spec_id:
        if base.metadata_location is not None:
            reqs.append({"type": "assert-default-spec-id", "default-spec-id": base.default_spec_id})
        ups.append({"action": "set-default-spec", "spec-id": new.default_spec_id})
    old_orders = {o.order_id for o in base.sort_orders}
    for o in new.sort_orders:
        if o.order_id not in old_orders:
            ups.append({"action": "add-sort-order", "sort-order": o.to_dict()})
    if new.default_sort_order_id != base.default_sort_order_id:
        if base.metadata_location is not None:
            reqs.append({"type": "assert-default-sort-order-id",
                         "default-sort-order-id": base.default_sort_order_id})
        ups.append({"action": "set-default-sort-order", "sort-order-id": new.default_sort_order_id})
    old_snaps = {s.snapshot_id for s in base.snapshots}
    new_snaps = {s.snapshot_id for s in new.snapshots}
    for s in new.snapshots:
        if s.snapshot_id not in old_snaps:
            ups.append({"action": "add-snapshot", "snapshot": s.to_dict(new.format_version)})
    removed = sorted(old_snaps - new_snaps)
    if removed:
        ups.append({"action": "remove-snapshots", "snapshot-ids": removed})
    for name in sorted(set(base.refs) | set(new.refs)):
        old, cur = base.refs.get(name), new.refs.get(name)
        if old == cur:
            continue
        if base.metadata_location is not None:
            reqs.append({"type": "assert-ref-snapshot-id", "ref": name,
                         "snapshot-id": None if old is None else old.snapshot_id})
        if cur is None:
            if old.snapshot_id in new_snaps:
                ups.append({"action": "remove-snapshot-ref", "ref-name": name})
        else:
            up = {"action": "set-snapshot-ref", "ref-name": name, "snapshot-id": cur.snapshot_id, "type": cur.type}
            for key, val in (("min-snapshots-to-keep", cur.min_snapshots_to_keep),
                             ("max-snapshot-age-ms", cur.max_snapshot_age_ms),
                             ("max-ref-age-ms", cur.max_ref_age_ms)):
                if val is not None:
                    up[key] = val
            ups.append(up)
    set_props = {k: v for k, v in new.properties.items() if base.properties.get(k) != v}
    removed_props = sorted(k for k in base.properties if k not in new.properties)
    if set_props:
        ups.append({"action": "set-properties", "updates": set_props})
    if removed_props:
        ups.append({"action": "remove-properties", "removals": removed_props})
    return reqs, ups
