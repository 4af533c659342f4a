"""Manifest lists: one Avro file per snapshot listing its manifests (:class:`ManifestFile`) with counts, sequence
numbers and per-partition-field summaries (:class:`PartitionFieldSummary`, record ``r508``)."""

from __future__ import annotations

import io as _io
import math
import threading

from .. import types as T
from ..errors import CorruptFileError, InvalidArgumentError
from .conversions import to_bytes

__all__ = ["ManifestFile", "PartitionFieldSummary", "read_manifest_list", "write_manifest_list",
           "summarize_partitions", "manifest_list_schema", "CONTENT_DATA", "CONTENT_DELETES"]

CONTENT_DATA, CONTENT_DELETES = 0, 1


class PartitionFieldSummary:
    __slots__ = ("contains_null", "contains_nan", "lower_bound", "upper_bound")

    def __init__(self, contains_null=False, contains_nan=None, lower_bound=None, upper_bound=None):
        self.contains_null = bool(contains_null)
        self.contains_nan = contains_nan
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def __eq__(self, other):
        return isinstance(other, PartitionFieldSummary) and all(
            getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __repr__(self):
        return (f"PartitionFieldSummary(null={self.contains_null}, nan={self.contains_nan}, "
                f"{self.lower_bound!r}..{self.upper_bound!r})")


class ManifestFile:
    __slots__ = ("manifest_path", "manifest_length", "partition_spec_id", "content", "sequence_number",
                 "min_sequence_number", "added_snapshot_id", "added_files_count", "existing_files_count",
                 "deleted_files_count", "added_rows_count", "existing_rows_count", "deleted_rows_count",
                 "partitions", "key_metadata", "first_row_id")

    def __init__(self, manifest_path, manifest_length=0, partition_spec_id=0, content=CONTENT_DATA,
                 sequence_number=0, min_sequence_number=0, added_snapshot_id=None, added_files_count=None,
                 existing_files_count=None, deleted_files_count=None, added_rows_count=None,
                 existing_rows_count=None, deleted_rows_count=None, partitions=None, key_metadata=None,
                 first_row_id=None):
        self.manifest_path = manifest_path
        self.manifest_length = manifest_length
        self.partition_spec_id = partition_spec_id
        self.content = content
        self.sequence_number = sequence_number
        self.min_sequence_number = min_sequence_number
        self.added_snapshot_id = added_snapshot_id
        self.added_files_count = added_files_count
        self.existing_files_count = existing_files_count
        self.deleted_files_count = deleted_files_count
        self.added_rows_count = added_rows_count
        self.existing_rows_count = existing_rows_count
        self.deleted_rows_count = deleted_rows_count
        self.partitions = partitions
        self.key_metadata = key_metadata
        self.first_row_id = first_row_id      # v3: first row id of the data files without one (inherited)

    def has_added_files(self):
        return self.added_files_count is None or self.added_files_count > 0

    def has_existing_files(self):
        return self.existing_files_count is None or self.existing_files_count > 0

    def has_deleted_files(self):
        return self.deleted_files_count is None or self.deleted_files_count > 0

    def __repr__(self):
        kind = "deletes" if self.content else "data"
        return (f"ManifestFile({self.manifest_path!r}, {kind}, spec={self.partition_spec_id}, "
                f"seq={self.sequence_number}, +{self.added_files_count}/={self.existing_files_count}"
                f"/-{self.deleted_files_count})")


def _f(name, fid, avro_type, optional=False, default=None):
    d = {"name": name, "type": ["null", avro_type] if optional else avro_type, "field-id": fid}
    if optional:
        d["default"] = None
    elif default is not None:
        d["default"] = default
    return d


_SUMMARY = {"type": "record", "name": "r508", "fields": [
    _f("contains_null", 509, "boolean"), _f("contains_nan", 518, "boolean", optional=True),
    _f("lower_bound", 510, "bytes", optional=True), _f("upper_bound", 511, "bytes", optional=True)]}


def manifest_list_schema(format_version: int) -> dict:
    parts = _f("partitions", 507, {"type": "array", "items": _SUMMARY, "element-id": 508}, optional=True)
    if format_version == 1:
        fields = [_f("manifest_path", 500, "string"), _f("manifest_length", 501, "long"),
                  _f("partition_spec_id", 502, "int"), _f("added_snapshot_id", 503, "long", optional=True),
                  _f("added_files_count", 504, "int", optional=True),
                  _f("existing_files_count", 505, "int", optional=True),
                  _f("deleted_files_count", 506, "int", optional=True), parts,
                  _f("added_rows_count", 512, "long", optional=True),
                  _f("existing_rows_count", 513, "long", optional=True),
                  _f("deleted_rows_count", 514, "long", optional=True),
                  _f("key_metadata", 519, "bytes", optional=True)]
    else:
        fields = [_f("manifest_path", 500, "string"), _f("manifest_length", 501, "long"),
                  _f("partition_spec_id", 502, "int"), _f("content", 517, "int"),
                  _f("sequence_number", 515, "long"), _f("min_sequence_number", 516, "long"),
                  _f("added_snapshot_id", 503, "long"), _f("added_files_count", 504, "int"),
                  _f("existing_files_count", 505, "int"), _f("deleted_files_count", 506, "int"),
                  _f("added_rows_count", 512, "long"), _f("existing_rows_count", 513, "long"),
                  _f("deleted_rows_count", 514, "long"), parts, _f("key_metadata", 519, "bytes", optional=True)]
        if format_version >= 3:
            fields.append(_f("first_row_id", 520, "long", optional=True))
    return {"type": "record", "name": "manifest_file", "fields": fields}


_PARSED = {}


def _parsed(fv):
    import fastavro
    s = _PARSED.get(fv)
    if s is None:
        s = _PARSED[fv] = fastavro.parse_schema(manifest_list_schema(fv))
    return s


def summarize_partitions(partition_type: T.RowType, partitions) -> list:
    """Per partition field: contains_null, contains_nan (floats), lower and upper bound (serialized)."""
    out = []
    for i, f in enumerate(partition_type.fields):
        lo = hi = None
        has_null = False
        has_nan = False
        for p in partitions:
            v = p[i] if i < len(p) else None
            if v is None:
                has_null = True
                continue
            if isinstance(v, float) and math.isnan(v):
                has_nan = True
                continue
            if lo is None or v < lo:
                lo = v
            if hi is None or v > hi:
                hi = v
        is_float = isinstance(f.type, (T.FloatType, T.DoubleType))
        out.append(PartitionFieldSummary(has_null, has_nan if is_float else False,
                                         None if lo is None else to_bytes(f.type, lo),
                                         None if hi is None else to_bytes(f.type, hi)))
    return out


def write_manifest_list(io, path, manifests, *, format_version: int, snapshot_id: int,
                        parent_snapshot_id, sequence_number: int, next_row_id: int | None = None) -> int | None:
    """Write a manifest list. Manifests added by this commit (``sequence_number is None``) get the commit's
    sequence number; their ``min_sequence_number`` too when they hold only added entries.

    v3 (row lineage): every data manifest without a ``first_row_id`` gets one, starting at ``next_row_id`` and
    advancing by the manifest's added and existing row counts; returns the table's new ``next-row-id``
    (None below v3)."""
    import fastavro
    if format_version >= 3:
        next_row_id = int(next_row_id or 0)
        for m in manifests:
            if m.content == CONTENT_DATA and m.first_row_id is None:
                m.first_row_id = next_row_id
                next_row_id += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
    else:
        next_row_id = None
    records = []
    for m in manifests:
        seq = m.sequence_number if m.sequence_number is not None else sequence_number
        min_seq = m.min_sequence_number if m.min_sequence_number is not None else seq
        if m.sequence_number is None:
            m.sequence_number = seq
            m.min_sequence_number = min_seq
        rec = {"manifest_path": m.manifest_path, "manifest_length": m.manifest_length,
               "partition_spec_id": m.partition_spec_id, "added_snapshot_id": m.added_snapshot_id,
               "added_files_count": m.added_files_count, "existing_files_count": m.existing_files_count,
               "deleted_files_count": m.deleted_files_count, "added_rows_count": m.added_rows_count,
               "existing_rows_count": m.existing_rows_count, "deleted_rows_count": m.deleted_rows_count,
               "partitions": None if m.partitions is None else [
                   {"contains_null": s.contains_null, "contains_nan": s.contains_nan,
                    "lower_bound": s.lower_bound, "upper_bound": s.upper_bound} for s in m.partitions],
               "key_metadata": m.key_metadata}
        if format_version >= 2:
            if m.added_snapshot_id is None:
                raise InvalidArgumentError(f"{m.manifest_path}: v2 manifest lists need added_snapshot_id")
            rec["content"] = m.content
            rec["sequence_number"] = seq
            rec["min_sequence_number"] = min_seq
            for k in ("added_files_count", "existing_files_count", "deleted_files_count", "added_rows_count",
                      "existing_rows_count", "deleted_rows_count"):
                if rec[k] is None:
                    rec[k] = 0
            if format_version >= 3:
                rec["first_row_id"] = m.first_row_id
        elif m.content != CONTENT_DATA:
            raise InvalidArgumentError("format version 1 tables cannot hold delete manifests")
        records.append(rec)
    meta = {"snapshot-id": str(snapshot_id),
            "parent-snapshot-id": "null" if parent_snapshot_id is None else str(parent_snapshot_id),
            "format-version": str(format_version)}
    if format_version >= 2:
        meta["sequence-number"] = str(sequence_number)
    buf = _io.BytesIO()
    fastavro.writer(buf, _parsed(format_version), records, metadata=meta, codec="deflate")
    io.write_bytes(path, buf.getvalue())
    return next_row_id


#: recently decoded manifest lists (``shared=True``): file bytes -> ManifestFile list; at most _SHARED_ENTRIES lists
#: of at most _SHARED_MAX_BYTES each and _SHARED_MAX_TOTAL together, the oldest dropped first
_SHARED: dict = {}
_SHARED_ENTRIES = 8
_SHARED_MAX_BYTES = 1 << 20
_SHARED_MAX_TOTAL = 4 << 20
_SHARED_LOCK = threading.Lock()


def read_manifest_list(io, path, *, shared: bool = False) -> list:
    """Manifests of a manifest list; v1 lists read as v2 with content 0 and sequence numbers 0. Decoded by
    :mod:`paimon_engine.formats.avro`, the engine's one Avro decoder.

    ``shared=True`` (scan planning, which only reads the objects): a file whose bytes equal those of a list decoded
    recently gives the ManifestFile objects decoded then, so planning a snapshot again does not decode its list
    again. The bytes are read every time (a list is written once and never changed; a file that did change is
    decoded again). The caller must not change the objects."""
    data = io.read_bytes(path)
    if shared and type(data) is bytes:
        hit = _SHARED.get(data)
        if hit is not None:
            return list(hit)
        out = _decode_manifest_list(data, path)
        if len(data) <= _SHARED_MAX_BYTES:
            with _SHARED_LOCK:
                total = sum(map(len, _SHARED)) + len(data)
                while _SHARED and (len(_SHARED) >= _SHARED_ENTRIES or total > _SHARED_MAX_TOTAL):
                    oldest = next(iter(_SHARED))
                    del _SHARED[oldest]
                    total -= len(oldest)
                _SHARED[data] = out
        return list(out)
    return _decode_manifest_list(data, path)


def _decode_manifest_list(data, path) -> list:
    from ..formats.avro import read_records
    _, _, records = read_records(data, path)
    out = []
    for i, r in enumerate(records):
        try:
            parts = r.get("partitions")
            m = ManifestFile(
                r["manifest_path"], r["manifest_length"], r["partition_spec_id"], r.get("content") or 0,
                r.get("sequence_number") or 0, r.get("min_sequence_number") or 0, r.get("added_snapshot_id"),
                r.get("added_files_count", r.get("added_data_files_count")),
                r.get("existing_files_count", r.get("existing_data_files_count")),
                r.get("deleted_files_count", r.get("deleted_data_files_count")),
                r.get("added_rows_count"), r.get("existing_rows_count"), r.get("deleted_rows_count"),
                None if parts is None else [PartitionFieldSummary(p["contains_null"], p.get("contains_nan"),
                                                                  p.get("lower_bound"), p.get("upper_bound"))
                                            for p in parts],
                r.get("key_metadata"), r.get("first_row_id"))
        except (KeyError, TypeError, AttributeError) as exc:
            raise CorruptFileError(f"bad manifest list entry: {type(exc).__name__}: {exc}", path=path,
                                   row=i) from None
        if not isinstance(m.manifest_path, str) or m.content not in (0, 1):
            raise CorruptFileError("bad manifest list entry", path=path, row=i)
        if m.first_row_id is not None and (type(m.first_row_id) is not int or m.first_row_id < 0):
            raise CorruptFileError(f"bad first_row_id {m.first_row_id!r}", path=path, row=i, field="first_row_id")
        out.append(m)
    return out
