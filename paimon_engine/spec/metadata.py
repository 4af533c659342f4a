"""Table metadata JSON (format versions 1, 2 and 3): :class:`TableMetadata`, :class:`Snapshot`, :class:`SnapshotRef`,
snapshot and metadata logs.

``from_dict`` validates and raises :class:`~paimon_engine.errors.CorruptFileError` naming the bad field (snapshots
become objects, and are checked, when first used: ``TableMetadata.snapshots`` of a parsed file is a
:class:`SnapshotList`, so a table with thousands of snapshots loads, and counts them, without building them; their ids
and the snapshot log are checked on load);
``to_dict`` writes the spec's layout for the table's format version. Every v1/v2/v3 difference is handled in
:func:`_read_versioned` and :func:`_write_versioned` (v3 adds the table's ``next-row-id`` and, on snapshots,
``first-row-id`` and ``added-rows``). Unknown top-level, snapshot and ref fields are kept and
written back unchanged. :func:`parse_metadata` reads plain or gzip-compressed JSON; with msgspec installed (the
``fast`` extra) the common document is decoded in one typed pass (snapshots and the snapshot log as typed records),
and anything else takes the general path (a JSON library, then field-by-field checks), which gives the same
metadata and the same errors.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import time
import uuid
import zlib
from collections.abc import MutableSequence
from operator import itemgetter

from ..errors import CorruptFileError, PaimonEngineError
from .partitioning import PartitionSpec, PARTITION_FIELD_ID_START
from .schema import Schema
from .sorting import SortOrder

__all__ = ["TableMetadata", "Snapshot", "SnapshotRef", "SnapshotLogEntry", "MetadataLogEntry",
           "SnapshotList", "parse_metadata", "serialize_metadata", "new_table_metadata", "SUPPORTED_FORMAT_VERSIONS",
           "VERSION_METADATA_FILE", "CATALOG_METADATA_FILE", "is_metadata_file_name", "metadata_file_version"]

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)

#: metadata file names: ``v<N>.metadata.json`` (file-system tables) and ``<NNNNN>-<uuid>.metadata.json``
#: (catalog tables), either one optionally ``.gz``
VERSION_METADATA_FILE = re.compile(r"^v(\d+)(\.gz)?\.metadata\.json$")
CATALOG_METADATA_FILE = re.compile(r"^(\d+)-[0-9a-fA-F-]+(\.gz)?\.metadata\.json$")


def is_metadata_file_name(name) -> bool:
    """A table metadata file name of either naming (``v<N>.metadata.json``, ``<NNNNN>-<uuid>.metadata.json``)."""
    return bool(VERSION_METADATA_FILE.match(name) or CATALOG_METADATA_FILE.match(name))


def metadata_file_version(location) -> int:
    """The version number in a metadata file's name; -1 for none (or another name)."""
    if not location:
        return -1
    m = CATALOG_METADATA_FILE.match(os.path.basename(location))
    if m:
        return int(m.group(1))
    m = VERSION_METADATA_FILE.match(os.path.basename(location))
    return int(m.group(1)) if m else -1
MAIN_BRANCH = "main"


def _bad(msg, field):
    return CorruptFileError(msg, field=field)


def _req(d, key, kind, where=""):
    if key not in d or d[key] is None:
        raise _bad(f"{where}missing required field {key!r}", key)
    return _typed(d[key], key, kind, where)


def _opt(d, key, kind, default=None, where=""):
    v = d.get(key)
    if v is None:
        return default
    return _typed(v, key, kind, where)


def _typed(v, key, kind, where=""):
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise _bad(f"{where}field {key!r} must be an integer, got {v!r:.80}", key)
    elif kind is str:
        if not isinstance(v, str):
            raise _bad(f"{where}field {key!r} must be a string, got {v!r:.80}", key)
    elif kind is dict:
        if not isinstance(v, dict):
            raise _bad(f"{where}field {key!r} must be an object, got {type(v).__name__}", key)
    elif kind is list:
        if not isinstance(v, list):
            raise _bad(f"{where}field {key!r} must be a list, got {type(v).__name__}", key)
    return v


class SnapshotRef:
    """A named branch or tag pointing at a snapshot, with its retention settings."""

    __slots__ = ("snapshot_id", "type", "min_snapshots_to_keep", "max_snapshot_age_ms", "max_ref_age_ms", "extra")

    def __init__(self, snapshot_id: int, type: str = "branch", min_snapshots_to_keep=None,
                 max_snapshot_age_ms=None, max_ref_age_ms=None, extra=None):
        if type not in ("branch", "tag"):
            raise _bad(f"ref type must be 'branch' or 'tag', got {type!r}", "type")
        self.snapshot_id = int(snapshot_id)
        self.type = type
        self.min_snapshots_to_keep = min_snapshots_to_keep
        self.max_snapshot_age_ms = max_snapshot_age_ms
        self.max_ref_age_ms = max_ref_age_ms
        self.extra = dict(extra or {})

    _KEYS = ("snapshot-id", "type", "min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms")

    @classmethod
    def from_dict(cls, d, name=""):
        where = f"ref {name!r}: "
        _typed(d, name, dict, "refs: ")
        return cls(_req(d, "snapshot-id", int, where), _req(d, "type", str, where),
                   _opt(d, "min-snapshots-to-keep", int, None, where), _opt(d, "max-snapshot-age-ms", int, None, where),
                   _opt(d, "max-ref-age-ms", int, None, where),
                   {k: v for k, v in d.items() if k not in cls._KEYS})

    def to_dict(self):
        d = {"snapshot-id": self.snapshot_id, "type": self.type}
        for key, val in (("min-snapshots-to-keep", self.min_snapshots_to_keep),
                         ("max-snapshot-age-ms", self.max_snapshot_age_ms),
                         ("max-ref-age-ms", self.max_ref_age_ms)):
            if val is not None:
                d[key] = val
        d.update(self.extra)
        return d

    def __eq__(self, other):
        return isinstance(other, SnapshotRef) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return f"SnapshotRef({self.snapshot_id}, {self.type})"


class Snapshot:
    """One snapshot: id, parent, sequence number, timestamp, manifest list (or v1 inline manifests), summary."""

    __slots__ = ("snapshot_id", "parent_snapshot_id", "sequence_number", "timestamp_ms", "manifest_list",
                 "manifests", "summary", "schema_id", "extra")

    _KEYS = ("snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list", "manifests",
             "summary", "schema-id")

    def __init__(self, snapshot_id, parent_snapshot_id=None, sequence_number=0, timestamp_ms=0,
                 manifest_list=None, manifests=None, summary=None, schema_id=None, extra=None):
        self.snapshot_id = int(snapshot_id)
        self.parent_snapshot_id = parent_snapshot_id
        self.sequence_number = int(sequence_number or 0)
        self.timestamp_ms = int(timestamp_ms)
        self.manifest_list = manifest_list
        self.manifests = manifests
        self.summary = dict(summary or {"operation": "append"})
        self.schema_id = schema_id
        self.extra = dict(extra or {})

    @property
    def operation(self) -> str:
        return self.summary.get("operation", "append")

    @property
    def first_row_id(self) -> int | None:
        """v3: the first row id assigned to the rows this snapshot added (None before v3 or for snapshots from
        before an upgrade)."""
        v = self.extra.get("first-row-id")
        return v if type(v) is int else None

    @property
    def added_rows(self) -> int | None:
        """v3: how many row ids this snapshot assigned."""
        v = self.extra.get("added-rows")
        return v if type(v) is int else None

    @classmethod
    def from_dict(cls, d, format_version: int):
        fast = cls._fast(d, format_version)
        if fast is not None:
            return fast
        if not isinstance(d, dict):
            raise _bad(f"snapshot must be an object, got {type(d).__name__}", "snapshots")
        sid = _req(d, "snapshot-id", int, "snapshot: ")
        where = f"snapshot {sid}: "
        ml = _opt(d, "manifest-list", str, None, where)
        manifests = _opt(d, "manifests", list, None, where)
        if format_version >= 2:
            seq = _req(d, "sequence-number", int, where)
            if ml is None:
                raise _bad(f"{where}missing required field 'manifest-list'", "manifest-list")
        else:
            seq = _opt(d, "sequence-number", int, 0, where)
            if ml is None and manifests is None:
                raise _bad(f"{where}needs 'manifest-list' or 'manifests'", "manifest-list")
        summary = _opt(d, "summary", dict, None, where)
        if summary is not None and format_version >= 2 and "operation" not in summary:
            raise _bad(f"{where}summary is missing required field 'operation'", "summary.operation")
        if summary is not None:
            summary = {str(k): str(v) for k, v in summary.items()}
        parent = _opt(d, "parent-snapshot-id", int, None, where)
        return cls(sid, parent, seq, _req(d, "timestamp-ms", int, where), ml, manifests,
                   summary or {"operation": "append"}, _opt(d, "schema-id", int, None, where),
                   {k: v for k, v in d.items() if k not in cls._KEYS})

    @classmethod
    def _fast(cls, d, fv):
        """The common, well-formed case without per-field checks; None sends anything unusual to the checked
        path (which produces the error messages)."""
        if type(d) is not dict:
            return None
        get = d.get
        sid, ts, seq, ml = get("snapshot-id"), get("timestamp-ms"), get("sequence-number"), get("manifest-list")
        parent, summary, schema_id = get("parent-snapshot-id"), get("summary"), get("schema-id")
        if not (type(sid) is int and type(ts) is int and type(ml) is str and type(summary) is dict
                and "operation" in summary and (type(seq) is int or (seq is None and fv == 1))
                and (parent is None or type(parent) is int) and (schema_id is None or type(schema_id) is int)):
            return None
        s = cls.__new__(cls)
        s.snapshot_id = sid
        s.parent_snapshot_id = parent
        s.sequence_number = seq or 0
        s.timestamp_ms = ts
        s.manifest_list = ml
        s.manifests = None
        s.summary = summary
        s.schema_id = schema_id
        n = 4 + (seq is not None) + (parent is not None) + (schema_id is not None)
        s.extra = {k: v for k, v in d.items() if k not in cls._KEYS} if len(d) != n else {}
        return s

    def to_dict(self, format_version: int):
        d = {"snapshot-id": self.snapshot_id}
        if self.parent_snapshot_id is not None:
            d["parent-snapshot-id"] = self.parent_snapshot_id
        if format_version >= 2:
            d["sequence-number"] = self.sequence_number
        d["timestamp-ms"] = self.timestamp_ms
        d["summary"] = dict(self.summary)
        if self.manifest_list is not None:
            d["manifest-list"] = self.manifest_list
        elif self.manifests is not None:
            d["manifests"] = list(self.manifests)
        if self.schema_id is not None:
            d["schema-id"] = self.schema_id
        d.update(self.extra)
        return d

    def __repr__(self):
        return f"Snapshot({self.snapshot_id}, seq={self.sequence_number}, {self.operation})"


class SnapshotLogEntry:
    __slots__ = ("timestamp_ms", "snapshot_id")

    def __init__(self, timestamp_ms, snapshot_id):
        self.timestamp_ms = int(timestamp_ms)
        self.snapshot_id = int(snapshot_id)

    def to_dict(self):
        return {"timestamp-ms": self.timestamp_ms, "snapshot-id": self.snapshot_id}


class MetadataLogEntry:
    __slots__ = ("timestamp_ms", "metadata_file")

    def __init__(self, timestamp_ms, metadata_file):
        self.timestamp_ms = int(timestamp_ms)
        self.metadata_file = str(metadata_file)

    def to_dict(self):
        return {"timestamp-ms": self.timestamp_ms, "metadata-file": self.metadata_file}


_KNOWN = {"format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id",
          "schema", "schemas", "current-schema-id", "partition-spec", "partition-specs", "default-spec-id",
          "last-partition-id", "properties", "current-snapshot-id", "snapshots", "snapshot-log", "metadata-log",
          "sort-orders", "default-sort-order-id", "refs", "statistics", "partition-statistics", "next-row-id"}


class TableMetadata:
    """The state of a table. Treat instances as values: ``copy()`` then change, as the commit code does."""

    _FIELDS = ("format_version", "table_uuid", "location", "last_sequence_number", "last_updated_ms",
               "last_column_id", "schemas", "current_schema_id", "specs", "default_spec_id", "last_partition_id",
               "properties", "current_snapshot_id", "snapshots", "snapshot_log", "metadata_log", "sort_orders",
               "default_sort_order_id", "refs", "statistics", "partition_statistics", "next_row_id", "extra",
               "metadata_location")
    __slots__ = tuple(n for n in _FIELDS if n not in ("snapshots", "snapshot_log")) + (
        "_snapshots", "_snapshot_log", "_snap_by_id")

    def __init__(self, **kw):
        for name in self._FIELDS:
            setattr(self, name, kw.get(name))
        self._snap_by_id = None

    # the snapshots of a parsed file are a SnapshotList (objects made on first use) until every one has been
    # made; from then on the plain list it filled
    @property
    def snapshots(self):
        s = self._snapshots
        if type(s) is SnapshotList and not s._missing:
            s = self._snapshots = s._items
        return s

    @snapshots.setter
    def snapshots(self, value):
        self._snapshots = value

    @property
    def snapshot_log(self):
        log = self._snapshot_log
        if type(log) is _PendingLog:
            log = self._snapshot_log = log.all()
        return log

    @snapshot_log.setter
    def snapshot_log(self, value):
        self._snapshot_log = value

    def copy(self) -> "TableMetadata":
        new = TableMetadata(**{n: getattr(self, n) for n in self._FIELDS})
        new.schemas = list(self.schemas)
        new.specs = list(self.specs)
        new.sort_orders = list(self.sort_orders)
        new.properties = dict(self.properties)
        new.snapshots = list(self.snapshots)
        new.snapshot_log = list(self.snapshot_log)
        new.metadata_log = list(self.metadata_log)
        new.refs = dict(self.refs)
        new.extra = copy.deepcopy(self.extra)
        new._snap_by_id = None
        return new

    # -- lookups ---------------------------------------------------------------
    def schema(self, schema_id: int | None = None) -> Schema:
        sid = self.current_schema_id if schema_id is None else schema_id
        for s in self.schemas:
            if s.schema_id == sid:
                return s
        raise PaimonEngineError(f"table has no schema with id {sid}")

    def spec(self, spec_id: int | None = None) -> PartitionSpec:
        sid = self.default_spec_id if spec_id is None else spec_id
        for s in self.specs:
            if s.spec_id == sid:
                return s
        raise PaimonEngineError(f"table has no partition spec with id {sid}")

    def specs_by_id(self) -> dict:
        return {s.spec_id: s for s in self.specs}

    def sort_order(self, order_id: int | None = None) -> SortOrder:
        oid = self.default_sort_order_id if order_id is None else order_id
        for s in self.sort_orders:
            if s.order_id == oid:
                return s
        raise PaimonEngineError(f"table has no sort order with id {oid}")

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        by_id = self._snap_by_id
        if by_id is None:
            snaps = self._snapshots
            if type(snaps) is SnapshotList and snaps._missing:
                return snaps.by_id(snapshot_id)
            by_id = self._snap_by_id = {s.snapshot_id: s for s in self.snapshots}
        return by_id.get(snapshot_id)

    def current_snapshot(self) -> Snapshot | None:
        if self.current_snapshot_id is None:
            return None
        return self.snapshot_by_id(self.current_snapshot_id)

    def snapshot_by_ref(self, name: str) -> Snapshot | None:
        ref = self.refs.get(name)
        return None if ref is None else self.snapshot_by_id(ref.snapshot_id)

    def snapshot_as_of(self, timestamp_ms: int) -> Snapshot | None:
        """The snapshot that was current at ``timestamp_ms`` (from the snapshot log)."""
        found = None
        for entry in self.snapshot_log:
            if entry.timestamp_ms <= timestamp_ms:
                found = entry.snapshot_id
        return None if found is None else self.snapshot_by_id(found)

    def ancestors(self, snapshot_id: int | None = None):
        """Snapshots from ``snapshot_id`` (default current) back through parents."""
        sid = self.current_snapshot_id if snapshot_id is None else snapshot_id
        while sid is not None:
            s = self.snapshot_by_id(sid)
            if s is None:
                return
            yield s
            sid = s.parent_snapshot_id

    def __repr__(self):
        return (f"TableMetadata(v{self.format_version}, {self.location!r}, snapshots={len(self.snapshots)}, "
                f"current={self.current_snapshot_id})")

    # -- JSON ------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d) -> "TableMetadata":
        if not isinstance(d, dict):
            raise _bad(f"table metadata must be a JSON object, got {type(d).__name__}", None)
        fv = _req(d, "format-version", int)
        if fv not in SUPPORTED_FORMAT_VERSIONS:
            raise _bad(f"unsupported table format version {fv}; supported: {SUPPORTED_FORMAT_VERSIONS}",
                       "format-version")
        md = cls(format_version=fv)
        md.location = _req(d, "location", str)
        md.last_updated_ms = _req(d, "last-updated-ms", int)
        md.last_column_id = _req(d, "last-column-id", int)
        md.properties = {str(k): str(v) for k, v in _opt(d, "properties", dict, {}).items()}
        _read_versioned(md, d, fv)
        snaps = _opt(d, "snapshots", list, [])
        # only the ids are checked here; each snapshot is checked when it becomes an object (on first use)
        if snaps and type(snaps[0]) is _SnapshotJSON:   # from _split: ids typed already
            ids = [j.snapshot_id for j in snaps]
        else:
            ids = _ints_at(snaps, "snapshot-id")
        if ids is None:
            md.snapshots = [_snapshot(s, fv) for s in snaps]   # raises, naming the bad field
            ids = [s.snapshot_id for s in md.snapshots]
            distinct = len(set(ids))
        else:
            md.snapshots = lazy = SnapshotList(snaps, ids, fv)
            distinct = len(lazy._pos)
        if distinct != len(ids):
            raise _bad("duplicate snapshot ids", "snapshots")
        cur = _opt(d, "current-snapshot-id", int, None)
        md.current_snapshot_id = None if cur in (None, -1) else cur
        if md.current_snapshot_id is not None and md.snapshot_by_id(md.current_snapshot_id) is None:
            raise _bad(f"current-snapshot-id {cur} is not a known snapshot", "current-snapshot-id")
        log = _opt(d, "snapshot-log", list, [])
        # checked here, made objects on first use
        if log and type(log[0]) is not _LogEntryJSON and (
                set(map(type, log)) != _DICT_ONLY or not _all_ints_at(log, "timestamp-ms")
                or not _all_ints_at(log, "snapshot-id")):
            md.snapshot_log = _PendingLog(log).all()   # raises, naming the bad field
        else:
            md.snapshot_log = _PendingLog(log)
        md.metadata_log = []
        for e in _opt(d, "metadata-log", list, []):
            _typed(e, "metadata-log", dict)
            md.metadata_log.append(MetadataLogEntry(_req(e, "timestamp-ms", int, "metadata-log: "),
                                                    _req(e, "metadata-file", str, "metadata-log: ")))
        md.refs = {}
        for name, r in _opt(d, "refs", dict, {}).items():
            ref = SnapshotRef.from_dict(r, name)
            if md.snapshot_by_id(ref.snapshot_id) is None:
                raise _bad(f"ref {name!r} points at unknown snapshot {ref.snapshot_id}", f"refs.{name}")
            md.refs[name] = ref
        if MAIN_BRANCH not in md.refs and md.current_snapshot_id is not None:
            md.refs[MAIN_BRANCH] = SnapshotRef(md.current_snapshot_id, "branch")
        md.statistics = _opt(d, "statistics", list, [])
        md.partition_statistics = _opt(d, "partition-statistics", list, [])
        md.extra = {k: v for k, v in d.items() if k not in _KNOWN}
        return md

    def to_dict(self) -> dict:
        d = {"format-version": self.format_version, "table-uuid": self.table_uuid, "location": self.location}
        if self.format_version >= 2:
            d["last-sequence-number"] = self.last_sequence_number
        if self.format_version >= 3:
            d["next-row-id"] = self.next_row_id or 0
        d["last-updated-ms"] = self.last_updated_ms
        d["last-column-id"] = self.last_column_id
        _write_versioned(self, d)
        d["properties"] = dict(self.properties)
        d["current-snapshot-id"] = self.current_snapshot_id if self.current_snapshot_id is not None else -1
        d["refs"] = {name: r.to_dict() for name, r in self.refs.items()}
        d["snapshots"] = [s.to_dict(self.format_version) for s in self.snapshots]
        d["statistics"] = list(self.statistics or [])
        d["partition-statistics"] = list(self.partition_statistics or [])
        d["snapshot-log"] = [e.to_dict() for e in self.snapshot_log]
        d["metadata-log"] = [e.to_dict() for e in self.metadata_log]
        d.update(self.extra)
        return d


def _read_versioned(md: TableMetadata, d: dict, fv: int) -> None:
    """Every field whose presence or default differs between v1 and v2."""
    if fv >= 2:
        md.table_uuid = _req(d, "table-uuid", str)
        md.last_sequence_number = _req(d, "last-sequence-number", int)
        for key in ("schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
                    "sort-orders", "default-sort-order-id"):
            if d.get(key) is None:
                raise _bad(f"format version {fv} requires field {key!r}", key)
    else:
        md.table_uuid = _opt(d, "table-uuid", str, None) or str(uuid.uuid4())
        md.last_sequence_number = 0
    if fv >= 3:
        md.next_row_id = _req(d, "next-row-id", int)
        if md.next_row_id < 0:
            raise _bad(f"next-row-id {md.next_row_id} is negative", "next-row-id")
    else:
        md.next_row_id = None
    # schemas
    if d.get("schemas") is not None:
        md.schemas = [_schema(s, i) for i, s in enumerate(_typed(d["schemas"], "schemas", list))]
        md.current_schema_id = _req(d, "current-schema-id", int)
    elif d.get("schema") is not None:
        md.schemas = [_schema(_typed(d["schema"], "schema", dict), 0)]
        md.current_schema_id = md.schemas[0].schema_id
    else:
        raise _bad("missing required field 'schemas' (or v1 'schema')", "schemas")
    if not any(s.schema_id == md.current_schema_id for s in md.schemas):
        raise _bad(f"current-schema-id {md.current_schema_id} is not in 'schemas'", "current-schema-id")
    # partition specs
    try:
        if d.get("partition-specs") is not None:
            md.specs = [PartitionSpec.from_dict(s) for s in _typed(d["partition-specs"], "partition-specs", list)]
            md.default_spec_id = _req(d, "default-spec-id", int)
        elif d.get("partition-spec") is not None:
            md.specs = [PartitionSpec.from_fields(_typed(d["partition-spec"], "partition-spec", list), 0)]
            md.default_spec_id = 0
        else:
            raise _bad("missing required field 'partition-specs' (or v1 'partition-spec')", "partition-specs")
    except CorruptFileError:
        raise
    except (PaimonEngineError, TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        raise _bad(f"bad partition spec: {exc}", "partition-specs") from None
    if not any(s.spec_id == md.default_spec_id for s in md.specs):
        raise _bad(f"default-spec-id {md.default_spec_id} is not in 'partition-specs'", "default-spec-id")
    last_pid = _opt(d, "last-partition-id", int, None)
    if last_pid is None:
        last_pid = max((s.last_assigned_field_id for s in md.specs), default=PARTITION_FIELD_ID_START - 1)
    md.last_partition_id = last_pid
    # sort orders
    try:
        orders = _opt(d, "sort-orders", list, None)
        md.sort_orders = [SortOrder.from_dict(o) for o in orders] if orders is not None else [SortOrder((), 0)]
    except (PaimonEngineError, TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        raise _bad(f"bad sort order: {exc}", "sort-orders") from None
    md.default_sort_order_id = _opt(d, "default-sort-order-id", int, md.sort_orders[0].order_id
                                    if md.sort_orders else 0)


def _schema(s, index):
    try:
        return Schema.from_dict(s, index)
    except (PaimonEngineError, TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        raise _bad(f"bad schema: {exc}", "schemas") from None


def _write_versioned(md: TableMetadata, d: dict) -> None:
    if md.format_version == 1:
        d["schema"] = md.schema().to_dict()
    d["current-schema-id"] = md.current_schema_id
    d["schemas"] = [s.to_dict() for s in md.schemas]
    if md.format_version == 1:
        d["partition-spec"] = [f.to_dict() for f in md.spec().fields]
    d["default-spec-id"] = md.default_spec_id
    d["partition-specs"] = [s.to_dict() for s in md.specs]
    d["last-partition-id"] = md.last_partition_id
    d["default-sort-order-id"] = md.default_sort_order_id
    d["sort-orders"] = [o.to_dict() for o in md.sort_orders]


try:
    import msgspec as _msgspec
except ImportError:  # the optional "fast" extra; without it every document takes the general path
    _msgspec = None

if _msgspec is not None:
    from msgspec import UNSET as _UNSET, Struct as _Struct, UnsetType as _Unset, field as _field
    from typing import Any as _Any

    class _SnapshotJSON(_Struct, forbid_unknown_fields=True):
        """A snapshot as :func:`_split` decodes it: typed fields, the summary kept as its JSON text until the
        snapshot becomes an object (most of a snapshot's bytes are its summary, and most snapshots of a long
        history are never read). A snapshot with any other field, or a field of another type, sends the whole
        document to the general path."""
        snapshot_id: int = _field(name="snapshot-id")
        timestamp_ms: int = _field(name="timestamp-ms")
        parent_snapshot_id: int | None | _Unset = _field(name="parent-snapshot-id", default=_UNSET)
        sequence_number: int | None | _Unset = _field(name="sequence-number", default=_UNSET)
        manifest_list: str | None | _Unset = _field(name="manifest-list", default=_UNSET)
        manifests: _Any = _field(name="manifests", default=_UNSET)
        summary: _msgspec.Raw | _Unset = _UNSET   # decoded when the snapshot becomes an object (_summary_json)
        schema_id: int | None | _Unset = _field(name="schema-id", default=_UNSET)
        first_row_id: _Any = _field(name="first-row-id", default=_UNSET)
        added_rows: _Any = _field(name="added-rows", default=_UNSET)

    class _LogEntryJSON(_Struct, forbid_unknown_fields=True):   # (other fields: the general path)
        timestamp_ms: int = _field(name="timestamp-ms")
        snapshot_id: int = _field(name="snapshot-id")

    _TOP_KINDS = {"snapshots": list[_SnapshotJSON] | None, "snapshot-log": list[_LogEntryJSON] | None}
    _MetadataJSON = _msgspec.defstruct(
        "_MetadataJSON", [(k.replace("-", "_"), _TOP_KINDS.get(k, _Any) | _Unset, _field(name=k, default=_UNSET))
                          for k in sorted(_KNOWN)], forbid_unknown_fields=True)

    def _keys(struct):
        """(attribute, JSON name) of each field of a msgspec struct type."""
        return tuple(zip(struct.__struct_fields__, struct.__struct_encode_fields__))

    _ANY_DECODER = _msgspec.json.Decoder()
    _SUMMARY_DECODER = _msgspec.json.Decoder(dict[str, str])
    _ENCODER = _msgspec.json.Encoder()
    _TOP_DECODER = _msgspec.json.Decoder(_MetadataJSON)
    _TOP_KEYS, _SNAPSHOT_KEYS = _keys(_MetadataJSON), _keys(_SnapshotJSON)
else:
    _SnapshotJSON = _LogEntryJSON = type("_Never", (), {})   # no object is of these types


def _split(data):
    """The common document, decoded by msgspec in one pass: every top-level field as ``json.loads`` gives it,
    except the snapshots (:class:`_SnapshotJSON`) and the snapshot log
    (:class:`_LogEntryJSON`). None when msgspec is not installed or the document is anything else (an unknown
    field, a field of an unexpected type, text msgspec refuses); the general path then parses and checks it and
    produces the error, so both paths accept the same documents and give the same metadata. Every value but the
    snapshots' summaries is decoded (unknown fields are refused); the summaries are kept as JSON text, checked
    for syntax by msgspec, for UTF-8 here, and short enough to hold no integer longer than Python converts, so
    what the general path refuses on load is refused on load here too."""
    if _msgspec is None:
        return None
    text = data if isinstance(data, (str, bytes)) else bytes(data)   # (the summaries point into it: immutable)
    try:
        top = _TOP_DECODER.decode(text)
        if not isinstance(text, str) and not text.isascii():
            text.decode()   # msgspec checks the UTF-8 of what it decodes, not of the summaries it keeps
    except (_msgspec.MsgspecError, ValueError, RecursionError):   # ValueError: bad UTF-8 in a string
        return None
    snaps = top.snapshots
    if snaps and max((len(j.summary) for j in snaps if j.summary is not _UNSET), default=0) > _SUMMARY_MAX:
        return None
    return {key: v for name, key in _TOP_KEYS if (v := getattr(top, name)) is not _UNSET}


#: a summary longer than this is decoded with the whole document (the general path): it may hold an integer
#: longer than Python converts, which is an error on load there, not when the snapshot is first read
_SUMMARY_MAX = 4000


def _summary_json(j):
    """(the summary of a :class:`_SnapshotJSON`, whether it is a map of strings): as the spec has it, or else
    the JSON value as :func:`_loads` gives it, for the checked path to judge."""
    raw = j.summary
    if raw is _UNSET:
        return raw, False
    try:
        return _SUMMARY_DECODER.decode(raw), True
    except (_msgspec.MsgspecError, ValueError, RecursionError):
        return _loads(bytes(raw)), False   # (the standard library, if it comes to it, reads bytes, not Raw)


def _snapshot_json(j, fv):
    """A :class:`Snapshot` from a :class:`_SnapshotJSON`, exactly as ``_snapshot`` makes it from the JSON object
    (the well-formed case directly, anything else through the checked path)."""
    seq, ml, first, added = j.sequence_number, j.manifest_list, j.first_row_id, j.added_rows
    summary, strings = _summary_json(j)
    if (type(ml) is str and strings and "operation" in summary
            and (type(seq) is int or (seq is _UNSET and fv == 1)) and j.manifests is _UNSET
            and (first is _UNSET or (type(first) is int and first >= 0))
            and (added is _UNSET or (type(added) is int and added >= 0))):
        parent, schema_id = j.parent_snapshot_id, j.schema_id
        s = Snapshot.__new__(Snapshot)
        s.snapshot_id = j.snapshot_id
        s.parent_snapshot_id = None if parent is _UNSET else parent
        s.sequence_number = seq if type(seq) is int else 0   # absent: a v1 snapshot
        s.timestamp_ms = j.timestamp_ms
        s.manifest_list = ml
        s.manifests = None
        s.summary = summary
        s.schema_id = None if schema_id is _UNSET else schema_id
        s.extra = {} if first is _UNSET and added is _UNSET else {
            k: v for k, v in (("first-row-id", first), ("added-rows", added)) if v is not _UNSET}
        return s
    d = {key: v for name, key in _SNAPSHOT_KEYS if (v := getattr(j, name)) is not _UNSET}
    if summary is not _UNSET:
        d["summary"] = summary
    return _snapshot(d, fv)


def _loads(data):
    """JSON text -> objects: msgspec when installed (about twice as fast), else the standard library. Whatever
    msgspec refuses (NaN, numbers beyond a double's range, lone surrogates, UTF-16 text...) goes to the standard
    library, which accepts it or produces the error; what msgspec accepts it reads as the standard library does
    (integers of any size stay integers)."""
    if _msgspec is not None:
        try:
            return _ANY_DECODER.decode(data)
        except (_msgspec.MsgspecError, ValueError, RecursionError):   # ValueError: bad UTF-8 in a string
            pass
    return json.loads(data)


def parse_metadata(data: bytes, path: str | None = None) -> TableMetadata:
    """Parse metadata JSON bytes (gzip-compressed too); errors name the file and the bad field."""
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        doc = _split(data)
        if doc is None:
            doc = _loads(data)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise CorruptFileError(f"bad gzip-compressed table metadata: {exc}", path=path) from None
    except ValueError as exc:   # not JSON, not UTF-8, or an integer longer than Python converts
        raise CorruptFileError(f"table metadata is not valid JSON: {exc}", path=path,
                               offset=getattr(exc, "pos", None)) from None
    except RecursionError:
        raise CorruptFileError("table metadata JSON is nested too deeply", path=path) from None
    try:
        md = TableMetadata.from_dict(doc)
    except CorruptFileError as exc:
        raise exc.located(path=path) from None
    except RecursionError:
        raise CorruptFileError("table metadata schema is nested too deeply", path=path) from None
    md.metadata_location = path
    if type(md._snapshots) is SnapshotList:
        md._snapshots.path = path
    if type(md._snapshot_log) is _PendingLog:
        md._snapshot_log.path = path
    return md


def _snapshot(d, fv):
    s = Snapshot.from_dict(d, fv)
    if fv >= 3 and s.extra:
        for key in ("first-row-id", "added-rows"):
            v = s.extra.get(key)
            if v is not None and (type(v) is not int or v < 0):
                raise _bad(f"snapshot {s.snapshot_id}: {key!r} must be a non-negative long, got {v!r}", key)
    return s


_INT_ONLY, _DICT_ONLY, _STR_ONLY = {int}, {dict}, {str}


def _ints_at(objects, key):
    """``[o[key] for o in objects]`` when every object holds an integer (not a bool) at ``key``, else None (then the
    checked path names what is wrong). The checks run over whole lists at C speed."""
    try:
        values = list(map(itemgetter(key), objects))
    except (KeyError, TypeError, IndexError):
        return None
    return values if not values or set(map(type, values)) == _INT_ONLY else None


def _all_ints_at(dicts, key):
    """Every one of ``dicts`` holds an integer (not a bool) at ``key``."""
    try:
        return set(map(type, map(itemgetter(key), dicts))) == _INT_ONLY
    except KeyError:
        return False


class SnapshotList(MutableSequence):
    """The snapshots of a parsed metadata file, in file order, as a list whose items become :class:`Snapshot`
    objects (checked as ``Snapshot.from_dict`` checks them, errors naming the metadata file) when they are first
    read: by index, or by id through ``TableMetadata.snapshot_by_id``; iterating makes them all at once. Their
    count, their ids (checked on load) and the snapshots already handed out cost nothing more. A change (append,
    insert, delete, assignment) makes every snapshot an object first, then changes the list. Slices are plain
    lists."""

    __slots__ = ("_raw", "_fv", "_items", "_missing", "_pos", "path")

    def __init__(self, raw, ids, fv):
        self._raw = raw
        self._fv = fv
        self._items = [None] * len(raw)
        self._missing = len(raw)
        self._pos = dict(zip(ids, range(len(ids))))
        self.path = None

    def _make(self, i):
        raw = self._raw[i]
        try:
            s = _snapshot_json(raw, self._fv) if type(raw) is _SnapshotJSON else _snapshot(raw, self._fv)
        except CorruptFileError as exc:
            raise exc.located(path=self.path) from None
        self._items[i] = s
        self._missing -= 1
        return s

    def by_id(self, snapshot_id):
        """The snapshot with this id, or None (only while some snapshots are not objects yet)."""
        i = self._pos.get(snapshot_id)
        if i is None:
            return None
        s = self._items[i]
        return self._make(i) if s is None else s

    def _all(self):
        """Every item made (well-formed snapshots by ``Snapshot._fast`` directly, anything else by the checked
        path, which names the bad field); the plain list."""
        items = self._items
        if self._missing:
            raw, fv = self._raw, self._fv
            if raw and type(raw[0]) is _SnapshotJSON:
                for i in range(len(items)):
                    if items[i] is None:
                        self._make(i)
                return items
            fast = Snapshot._fast
            for i in range(len(items)):
                if items[i] is None:
                    s = fast(raw[i], fv)
                    if s is None or (fv >= 3 and s.extra):
                        self._make(i)
                    else:
                        items[i] = s
                        self._missing -= 1
        return items

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        if type(index) is slice:
            return [self[i] for i in range(*index.indices(len(self._items)))]
        s = self._items[index]   # IndexError and TypeError as a list raises them
        if s is None:
            return self._make(index if index >= 0 else index + len(self._items))
        return s

    def __iter__(self):
        return iter(self._all())

    def __setitem__(self, index, value):
        self._all()[index] = value

    def __delitem__(self, index):
        del self._all()[index]

    def insert(self, index, value):
        self._all().insert(index, value)

    def __eq__(self, other):
        if isinstance(other, (list, SnapshotList)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __add__(self, other):
        return list(self) + list(other)

    def __radd__(self, other):
        return list(other) + list(self)

    def copy(self):
        new = SnapshotList.__new__(SnapshotList)
        new._raw, new._fv, new._items = self._raw, self._fv, list(self._items)
        new._missing, new._pos, new.path = self._missing, self._pos, self.path
        return new

    __copy__ = copy

    def __repr__(self):
        return repr(list(self))


class _PendingLog:
    """The snapshot log of a parsed metadata file, still as JSON objects until first read."""

    __slots__ = ("raw", "path")

    def __init__(self, raw):
        self.raw = raw
        self.path = None

    def all(self):
        out = []
        try:
            for e in self.raw:
                if type(e) is _LogEntryJSON:
                    out.append(SnapshotLogEntry(e.timestamp_ms, e.snapshot_id))
                    continue
                if type(e) is dict and type(e.get("timestamp-ms")) is int and type(e.get("snapshot-id")) is int:
                    out.append(SnapshotLogEntry(e["timestamp-ms"], e["snapshot-id"]))
                    continue
                _typed(e, "snapshot-log", dict)
                out.append(SnapshotLogEntry(_req(e, "timestamp-ms", int, "snapshot-log: "),
                                            _req(e, "snapshot-id", int, "snapshot-log: ")))
        except CorruptFileError as exc:
            raise exc.located(path=self.path) from None
        return out


def _std_json(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _plain_json(value) -> bytes:
    """``value`` (ints, strings, booleans, None, lists and string-keyed maps of them: no floats) as the standard
    library writes it. msgspec writes such values alike except for characters beyond ASCII and DEL, which it
    leaves unescaped; text holding any of those, or anything it refuses (lone surrogates), goes to the standard
    library."""
    try:
        out = _ENCODER.encode(value)
    except (UnicodeEncodeError, TypeError, OverflowError):
        return _std_json(value)
    return out if out.isascii() and b"\x7f" not in out else _std_json(value)


def _plain_snapshots(snapshots) -> bool:
    """True when no snapshot holds a value of another type than its fields' own: summaries of strings, extra
    fields (v3 row lineage) of ints, v1 manifest paths of strings. Anything else (a float another writer put
    there) takes the standard library, which is what decides how floats are written."""
    for s in snapshots:
        if not set(map(type, s.summary.values())) <= _STR_ONLY:
            return False
        if s.extra and not set(map(type, s.extra.values())) <= _INT_ONLY:
            return False
        if s.manifests is not None and not set(map(type, s.manifests)) <= _STR_ONLY:
            return False
    return True


def serialize_metadata(md: TableMetadata) -> bytes:
    """The metadata as compact JSON, byte for byte what ``json.dumps(md.to_dict(), separators=(",", ":"))``
    writes. With msgspec installed the long lists (snapshots, snapshot log, metadata log: a table's metadata
    grows with them, and every commit writes it anew) are encoded by msgspec, when they hold only the types it
    writes as the standard library does (:func:`_plain_json`); every other field by the standard library."""
    doc = md.to_dict()
    if _msgspec is None:
        return _std_json(doc)
    plain = {"snapshot-log", "metadata-log"}
    if _plain_snapshots(md.snapshots):
        plain.add("snapshots")
    return b"{" + b",".join(_std_json(k) + b":" + (_plain_json(v) if k in plain else _std_json(v))
                            for k, v in doc.items()) + b"}"


def new_table_metadata(schema: Schema, spec: PartitionSpec, location: str, *, sort_order: SortOrder | None = None,
                       properties: dict | None = None, format_version: int = 2, table_uuid: str | None = None
                       ) -> TableMetadata:
    """Metadata of a new, empty table. Schema, spec and sort order get ids 0, 0 and (1 or 0)."""
    if format_version not in SUPPORTED_FORMAT_VERSIONS:
        raise PaimonEngineError(f"unsupported table format version {format_version}")
    schema = Schema(schema.struct, 0, schema.identifier_field_ids)
    spec = PartitionSpec(spec.fields, 0)
    order = sort_order if sort_order is not None else SortOrder((), 0)
    return TableMetadata(
        format_version=format_version, table_uuid=table_uuid or str(uuid.uuid4()), location=location.rstrip("/"),
        last_sequence_number=0, last_updated_ms=int(time.time() * 1000),
        last_column_id=schema.highest_field_id, schemas=[schema], current_schema_id=0, specs=[spec],
        default_spec_id=0, last_partition_id=max(spec.last_assigned_field_id, PARTITION_FIELD_ID_START - 1),
        properties=dict(properties or {}), current_snapshot_id=None, snapshots=[], snapshot_log=[],
        metadata_log=[], sort_orders=[order], default_sort_order_id=order.order_id, refs={}, statistics=[],
        partition_statistics=[], next_row_id=0 if format_version >= 3 else None, extra={}, metadata_location=None)
