"""Manifests: Avro files of :class:`ManifestEntry` records, each holding a :class:`DataFile` (data or delete file).

Avro schemas are exactly the spec's for format versions 1, 2 and 3 (v3 adds ``first_row_id`` 142,
``content_offset`` 144 and ``content_size_in_bytes`` 145 to ``data_file``; record names ``manifest_entry``, ``r2``,
``r102``, ``k117_v118``..., field ids as ``field-id`` attributes, int-keyed maps as arrays with
``logicalType: map``). Reading tolerates other writers' deviations (``equality_ids`` as ``list<long>``, missing
``schema-id``, v1 column names) and applies the inheritance rules: a null snapshot id comes from the manifest's
``added_snapshot_id``; a null sequence number is inherited only by ADDED entries; a live data file's
null ``first_row_id`` is the manifest's ``first_row_id`` plus the record counts of the live files before it that
had none.

Two optional extension fields (ids 2100000001, 2100000002) record what ``row`` data files need and Iceberg has no
field for; see ``docs/format-extensions.md``. They are written only when set, and other readers ignore them.
"""

from __future__ import annotations

import decimal
import io as _io
import json

from .. import types as T
from ..errors import CorruptFileError, InvalidArgumentError
from .conversions import EXACT

__all__ = ["DataFile", "ManifestEntry", "ManifestWriter", "read_manifest", "write_manifest", "manifest_schema",
           "STATUS_EXISTING", "STATUS_ADDED", "STATUS_DELETED", "CONTENT_DATA", "CONTENT_POSITION_DELETES",
           "CONTENT_EQUALITY_DELETES", "EXT_WRITER_SCHEMA_ID", "EXT_FILE_INDEX",
           "EXT_LINEAGE_COLUMNS"]

STATUS_EXISTING, STATUS_ADDED, STATUS_DELETED = 0, 1, 2
CONTENT_DATA, CONTENT_POSITION_DELETES, CONTENT_EQUALITY_DELETES = 0, 1, 2
EXT_WRITER_SCHEMA_ID = 2100000001
EXT_FILE_INDEX = 2100000002
# the row-lineage columns a row data file stores after its writer schema's columns, as a bit mask in this order
# (an int, not a list: pyiceberg's Avro reader skips unknown primitive fields only)
EXT_LINEAGE_COLUMNS = 2100000003
_LINEAGE_BITS = (2147483540, 2147483539)    # bit 0: _row_id, bit 1: _last_updated_sequence_number


class DataFile:
    """A data or delete file and its metrics. ``partition`` is a tuple of internal values in spec field order;
    metric maps are keyed by field id; bounds are single-value serialized bytes."""

    __slots__ = ("content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
                 "column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
                 "upper_bounds", "key_metadata", "split_offsets", "equality_ids", "sort_order_id",
                 "referenced_data_file", "spec_id", "writer_schema_id", "file_index", "block_size_in_bytes",
                 "first_row_id", "content_offset", "content_size_in_bytes", "lineage_field_ids")

    def __init__(self, file_path, file_format="PARQUET", partition=(), record_count=0, file_size_in_bytes=0, *,
                 content=CONTENT_DATA, column_sizes=None, value_counts=None, null_value_counts=None,
                 nan_value_counts=None, lower_bounds=None, upper_bounds=None, key_metadata=None,
                 split_offsets=None, equality_ids=None, sort_order_id=None, referenced_data_file=None, spec_id=0,
                 writer_schema_id=None, file_index=None, block_size_in_bytes=None, first_row_id=None,
                 content_offset=None, content_size_in_bytes=None, lineage_field_ids=None):
        self.content = int(content)
        self.file_path = file_path
        self.file_format = str(file_format).upper()
        self.partition = tuple(partition)
        self.record_count = int(record_count)
        self.file_size_in_bytes = int(file_size_in_bytes)
        self.column_sizes = column_sizes
        self.value_counts = value_counts
        self.null_value_counts = null_value_counts
        self.nan_value_counts = nan_value_counts
        self.lower_bounds = lower_bounds
        self.upper_bounds = upper_bounds
        self.key_metadata = key_metadata
        self.split_offsets = split_offsets
        self.equality_ids = equality_ids
        self.sort_order_id = sort_order_id
        self.referenced_data_file = referenced_data_file
        self.spec_id = spec_id
        self.writer_schema_id = writer_schema_id
        self.file_index = file_index
        self.block_size_in_bytes = block_size_in_bytes
        self.first_row_id = first_row_id                    # v3 row lineage (data files)
        self.content_offset = content_offset                # v3 deletion vectors: the blob in the Puffin file
        self.content_size_in_bytes = content_size_in_bytes
        # the reserved field ids of the row-lineage columns a ``row`` data file stores after its writer schema's
        # columns (row files store no schema; Parquet files name theirs by field id)
        self.lineage_field_ids = list(lineage_field_ids) if lineage_field_ids else None

    def __repr__(self):
        kind = ("data", "position-deletes", "equality-deletes")[self.content]
        return f"DataFile({kind}, {self.file_path!r}, rows={self.record_count})"

    def __eq__(self, other):
        return isinstance(other, DataFile) and all(getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __hash__(self):
        return hash(self.file_path)


class ManifestEntry:
    __slots__ = ("status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file")

    def __init__(self, status, snapshot_id, data_file, sequence_number=None, file_sequence_number=None):
        self.status = int(status)
        self.snapshot_id = snapshot_id
        self.sequence_number = sequence_number
        self.file_sequence_number = file_sequence_number
        self.data_file = data_file

    def __repr__(self):
        st = ("EXISTING", "ADDED", "DELETED")[self.status]
        return f"ManifestEntry({st}, snap={self.snapshot_id}, seq={self.sequence_number}, {self.data_file!r})"


# ---------------------------------------------------------------------------
# Avro schemas
# ---------------------------------------------------------------------------

def _opt(avro_type):
    return ["null", avro_type]


def _f(name, fid, avro_type, optional=False, doc=None):
    d = {"name": name, "type": _opt(avro_type) if optional else avro_type, "field-id": fid}
    if optional:
        d["default"] = None
    if doc:
        d["doc"] = doc
    return d


def _int_map(kid, vid, value_type, name, fid):
    rec = {"type": "record", "name": f"k{kid}_v{vid}",
           "fields": [{"name": "key", "type": "int", "field-id": kid},
                      {"name": "value", "type": value_type, "field-id": vid}]}
    return _f(name, fid, {"type": "array", "items": rec, "logicalType": "map"}, optional=True)


def _decimal_bytes(precision):
    n = 1
    while 2 ** (8 * n - 1) < 10 ** precision:
        n += 1
    return n


def sanitize_avro_name(name: str) -> str:
    """Iceberg's Avro name sanitization: invalid characters become ``_x<HEX>`` (a leading digit ``_<digit>``)."""
    out = []
    for i, ch in enumerate(name):
        ok = ch.isascii() and (ch.isalpha() or ch == "_" or (i > 0 and ch.isdigit()))
        if ok:
            out.append(ch)
        elif i == 0 and ch.isdigit():
            out.append("_" + ch)
        else:
            out.append("_x" + format(ord(ch), "X"))
    return "".join(out) or "_"


def _avro_type(t: T.DataType, fixed_names):
    if isinstance(t, T.BooleanType):
        return "boolean"
    if isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType)):
        return "int"
    if isinstance(t, T.BigIntType):
        return "long"
    if isinstance(t, T.FloatType):
        return "float"
    if isinstance(t, T.DoubleType):
        return "double"
    if isinstance(t, T.DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(t, T.TimeType):
        return {"type": "long", "logicalType": "time-micros"}
    if isinstance(t, T.TimestampType):
        return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False}
    if isinstance(t, T.LocalZonedTimestampType):
        return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True}
    if isinstance(t, (T.VarCharType, T.CharType)):
        return "string"
    if isinstance(t, T.UuidType):
        return _named_fixed(fixed_names, "uuid_fixed", 16, {"logicalType": "uuid"})
    if isinstance(t, T.BinaryType):
        return _named_fixed(fixed_names, f"fixed_{t.length}", t.length, {})
    if isinstance(t, T.VarBinaryType):
        return "bytes"
    if isinstance(t, T.DecimalType):
        return _named_fixed(fixed_names, f"decimal_{t.precision}_{t.scale}", _decimal_bytes(t.precision),
                            {"logicalType": "decimal", "precision": t.precision, "scale": t.scale})
    raise InvalidArgumentError(f"partition values of type {t.to_paimon_string()} cannot be stored")


def _named_fixed(names, name, size, extra):
    if name in names:
        return name
    names.add(name)
    d = {"type": "fixed", "name": name, "size": size}
    d.update(extra)
    return d


def partition_avro(partition_type: T.RowType) -> dict:
    names = set()
    return {"type": "record", "name": "r102",
            "fields": [_f(sanitize_avro_name(f.name), f.id, _avro_type(f.type, names), optional=True)
                       for f in partition_type.fields]}


def data_file_avro(partition_type: T.RowType, format_version: int, extensions: bool = False) -> dict:
    part = _f("partition", 102, partition_avro(partition_type), doc="Partition data tuple, schema based on the "
              "partition spec")
    common_metrics = [
        _int_map(117, 118, "long", "column_sizes", 108),
        _int_map(119, 120, "long", "value_counts", 109),
        _int_map(121, 122, "long", "null_value_counts", 110),
        _int_map(138, 139, "long", "nan_value_counts", 137),
        _int_map(126, 127, "bytes", "lower_bounds", 125),
        _int_map(129, 130, "bytes", "upper_bounds", 128),
        _f("key_metadata", 131, "bytes", optional=True),
        _f("split_offsets", 132, {"type": "array", "items": "long", "element-id": 133}, optional=True),
    ]
    if format_version == 1:
        fields = [_f("file_path", 100, "string"), _f("file_format", 101, "string"), part,
                  _f("record_count", 103, "long"), _f("file_size_in_bytes", 104, "long"),
                  _f("block_size_in_bytes", 105, "long")] + common_metrics + [
                  _f("sort_order_id", 140, "int", optional=True)]
    else:
        fields = [_f("content", 134, "int"), _f("file_path", 100, "string"), _f("file_format", 101, "string"),
                  part, _f("record_count", 103, "long"), _f("file_size_in_bytes", 104, "long")] + common_metrics + [
                  _f("equality_ids", 135, {"type": "array", "items": "int", "element-id": 136}, optional=True),
                  _f("sort_order_id", 140, "int", optional=True)]
        if format_version >= 3:
            fields.append(_f("first_row_id", 142, "long", optional=True))
        fields.append(_f("referenced_data_file", 143, "string", optional=True))
        if format_version >= 3:
            fields += [_f("content_offset", 144, "long", optional=True),
                       _f("content_size_in_bytes", 145, "long", optional=True)]
    if extensions:
        fields += [_f("pe_writer_schema_id", EXT_WRITER_SCHEMA_ID, "int", optional=True),
                   _f("pe_file_index", EXT_FILE_INDEX, "string", optional=True),
                   _f("pe_lineage_columns", EXT_LINEAGE_COLUMNS, "int", optional=True)]
    return {"type": "record", "name": "r2", "fields": fields}


def manifest_schema(partition_type: T.RowType, format_version: int, extensions: bool = False) -> dict:
    df = _f("data_file", 2, data_file_avro(partition_type, format_version, extensions))
    if format_version == 1:
        fields = [_f("status", 0, "int"), _f("snapshot_id", 1, "long"), df]
    else:
        fields = [_f("status", 0, "int"), _f("snapshot_id", 1, "long", optional=True),
                  _f("sequence_number", 3, "long", optional=True),
                  _f("file_sequence_number", 4, "long", optional=True), df]
    return {"type": "record", "name": "manifest_entry", "fields": fields}


_PARSED = {}


def _parsed(partition_type, format_version, extensions):
    import fastavro
    key = (partition_type, format_version, extensions)
    s = _PARSED.get(key)
    if s is None:
        if len(_PARSED) > 256:
            _PARSED.clear()
        s = _PARSED[key] = fastavro.parse_schema(manifest_schema(partition_type, format_version, extensions))
    return s


# ---------------------------------------------------------------------------
# conversion of partition values between Avro and the internal representation
# ---------------------------------------------------------------------------

def _from_avro(t):
    """Raw Avro partition value -> internal representation: only decimals differ (unscaled big-endian bytes)."""
    if isinstance(t, T.DecimalType):
        scale = t.scale
        return lambda v: decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-scale, EXACT) \
            if isinstance(v, (bytes, bytearray)) else v
    return None


def _dict_to_map(d):
    if d is None:
        return None
    return [{"key": k, "value": v} for k, v in d.items()]


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

class ManifestWriter:
    """Collects entries for one manifest and writes it; ``to_manifest_file()`` gives the manifest-list entry.

    ``sequence_number`` / ``min_sequence_number`` of the result are None while entries inherit the sequence number
    of the commit; the manifest-list writer fills them in.
    """

    def __init__(self, spec, schema, format_version: int, snapshot_id: int, content: int = 0):
        self.spec = spec
        self.schema = schema
        self.format_version = format_version
        self.snapshot_id = snapshot_id
        self.content = content
        self.partition_type = spec.partition_type(schema)
        self.entries = []

    def add(self, data_file: DataFile, status=STATUS_ADDED, snapshot_id=None, sequence_number=None,
            file_sequence_number=None):
        if status == STATUS_ADDED:
            entry = ManifestEntry(status, self.snapshot_id, data_file, None, None)
        else:
            entry = ManifestEntry(status, snapshot_id if status == STATUS_EXISTING else self.snapshot_id,
                                  data_file, sequence_number, file_sequence_number)
        self.entries.append(entry)

    def add_entry(self, entry: ManifestEntry):
        self.entries.append(entry)

    def write(self, io, path):
        from .manifest_list import ManifestFile, summarize_partitions
        import fastavro
        fv = self.format_version
        ext = any(e.data_file.writer_schema_id is not None or e.data_file.file_index is not None
                  or e.data_file.lineage_field_ids for e in self.entries)
        parsed = _parsed(self.partition_type, fv, ext)
        names = [sanitize_avro_name(f.name) for f in self.partition_type.fields]
        records = []
        for e in self.entries:
            df = e.data_file
            if len(df.partition) != len(names):
                raise InvalidArgumentError(f"{df.file_path}: partition tuple {df.partition!r} does not match "
                                           f"spec {self.spec.spec_id}")
            rec = {"file_path": df.file_path, "file_format": df.file_format,
                   "partition": dict(zip(names, df.partition)), "record_count": df.record_count,
                   "file_size_in_bytes": df.file_size_in_bytes,
                   "column_sizes": _dict_to_map(df.column_sizes), "value_counts": _dict_to_map(df.value_counts),
                   "null_value_counts": _dict_to_map(df.null_value_counts),
                   "nan_value_counts": _dict_to_map(df.nan_value_counts),
                   "lower_bounds": _dict_to_map(df.lower_bounds), "upper_bounds": _dict_to_map(df.upper_bounds),
                   "key_metadata": df.key_metadata, "split_offsets": df.split_offsets,
                   "sort_order_id": df.sort_order_id}
            if fv == 1:
                if df.content != CONTENT_DATA:
                    raise InvalidArgumentError("format version 1 tables cannot hold delete files")
                rec["block_size_in_bytes"] = df.block_size_in_bytes or 67108864
            else:
                rec["content"] = df.content
                rec["equality_ids"] = list(df.equality_ids) if df.equality_ids is not None else None
                rec["referenced_data_file"] = df.referenced_data_file
            if fv >= 3:
                rec["first_row_id"] = df.first_row_id
                rec["content_offset"] = df.content_offset
                rec["content_size_in_bytes"] = df.content_size_in_bytes
            elif df.content_offset is not None:
                raise InvalidArgumentError(f"{df.file_path}: deletion vectors need format version 3")
            if ext:
                rec["pe_writer_schema_id"] = df.writer_schema_id
                rec["pe_file_index"] = df.file_index
                rec["pe_lineage_columns"] = _lineage_mask(df.lineage_field_ids)
            entry = {"status": e.status, "snapshot_id": e.snapshot_id, "data_file": rec}
            if fv >= 2:
                entry["sequence_number"] = e.sequence_number
                entry["file_sequence_number"] = e.file_sequence_number
            records.append(entry)
        meta = {"schema": json.dumps(self.schema.to_dict(), separators=(",", ":")),
                "schema-id": str(self.schema.schema_id),
                "partition-spec": json.dumps([f.to_dict() for f in self.spec.fields], separators=(",", ":")),
                "partition-spec-id": str(self.spec.spec_id), "format-version": str(fv)}
        if fv >= 2:
            meta["content"] = "deletes" if self.content else "data"
        buf = _io.BytesIO()
        fastavro.writer(buf, parsed, records, metadata=meta, codec="deflate")
        data = buf.getvalue()
        io.write_bytes(path, data)

        counts = {STATUS_ADDED: [0, 0], STATUS_EXISTING: [0, 0], STATUS_DELETED: [0, 0]}
        seqs = []
        for e in self.entries:
            c = counts[e.status]
            c[0] += 1
            c[1] += e.data_file.record_count
            if e.status == STATUS_EXISTING and e.sequence_number is not None:
                seqs.append(e.sequence_number)
        # added entries inherit the commit's sequence number, which the manifest-list writer fills in (and
        # which is never below an existing entry's)
        min_seq = min(seqs) if seqs else None
        return ManifestFile(
            manifest_path=path, manifest_length=len(data), partition_spec_id=self.spec.spec_id,
            content=self.content, sequence_number=None, min_sequence_number=min_seq,
            added_snapshot_id=self.snapshot_id,
            added_files_count=counts[STATUS_ADDED][0], existing_files_count=counts[STATUS_EXISTING][0],
            deleted_files_count=counts[STATUS_DELETED][0], added_rows_count=counts[STATUS_ADDED][1],
            existing_rows_count=counts[STATUS_EXISTING][1], deleted_rows_count=counts[STATUS_DELETED][1],
            partitions=summarize_partitions(self.partition_type, [e.data_file.partition for e in self.entries]))


def write_manifest(io, path, entries, spec, schema, format_version, snapshot_id, content=0):
    w = ManifestWriter(spec, schema, format_version, snapshot_id, content)
    for e in entries:
        w.add_entry(e)
    return w.write(io, path)


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------

_V1_NAMES = {"added_data_files_count": "added_files_count"}

#: data_file fields every read needs; the metric maps only when a filter or a delete index needs them; the rest
#: (column sizes, key metadata, sort order id, v1 block size) only for a full read (commits, ``Table.data_files``)
DATA_FILE_BASE = ("content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
                  "split_offsets", "equality_ids", "referenced_data_file", "pe_writer_schema_id", "pe_file_index",
                  "pe_lineage_columns", "first_row_id", "content_offset", "content_size_in_bytes")
DATA_FILE_METRICS = ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds")
MANIFEST_FIELDS = ("status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file")


def _want(metrics: bool):
    df = {n: True for n in DATA_FILE_BASE}
    if metrics:
        df.update({n: True for n in DATA_FILE_METRICS})
    want = {n: True for n in MANIFEST_FIELDS}
    want["data_file"] = df
    return want


_WANTS = {"full": None, "metrics": _want(True), "lean": _want(False)}


def read_manifest(io, manifest, partition_type: T.RowType | None = None, schema=None, spec=None,
                  include_deleted: bool = True, metrics: bool = True, full: bool = True,
                  data: bytes | None = None, partition_filter=None):
    """Entries of one manifest, with snapshot ids and sequence numbers inherited from ``manifest`` (a
    :class:`~paimon_engine.spec.manifest_list.ManifestFile`).

    ``partition_type`` defaults to the one derived from the manifest's own ``schema``/``partition-spec``
    metadata (or, without those, the writer's partition record as it is). ``full=False`` decodes only what
    planning needs (and the metric maps only when ``metrics``); skipped fields are left None. ``data``: the
    file's bytes, if already read. ``partition_filter``: a callable on an entry's partition tuple; entries it
    rejects are checked but not returned (no objects are built for them). Decoded by
    :mod:`paimon_engine.formats.avro`, the engine's one Avro decoder.
    """
    from ..formats.avro import read_records
    path = manifest.manifest_path
    if data is None:
        data = io.read_bytes(path)
    mode = "full" if full else ("metrics" if metrics else "lean")
    meta, writer_schema, records = read_records(data, path, _WANTS[mode], mode)
    if partition_type is None and "partition-spec" in meta:
        partition_type = _partition_type_from_meta(meta, path, schema, spec)
    width, plain_names, convert = _partition_plan(writer_schema, partition_type)
    inherited_snap = manifest.added_snapshot_id
    manifest_seq = manifest.sequence_number or 0
    spec_id = manifest.partition_spec_id
    next_row_id = getattr(manifest, "first_row_id", None)
    new_df = DataFile.__new__
    out = []
    append = out.append
    for i, rec in enumerate(records):
        try:
            status = rec.get("status")
            if status not in (0, 1, 2):
                raise CorruptFileError(f"bad manifest entry status {status}", path=path, row=i, field="status")
            df = rec.get("data_file")
            if type(df) is not dict or type(df.get("file_path")) is not str:
                raise CorruptFileError("manifest entry without a data file", path=path, row=i, field="data_file")
            get = df.get
            content = get("content") or 0
            first_row_id = get("first_row_id")
            if first_row_id is not None and (type(first_row_id) is not int or first_row_id < 0):
                raise CorruptFileError(f"bad first_row_id {first_row_id!r}", path=path, row=i,
                                       field="first_row_id")
            if first_row_id is None and next_row_id is not None and not content and status != STATUS_DELETED:
                rc0 = get("record_count")
                if type(rc0) is not int or rc0 < 0:
                    raise CorruptFileError("bad record count", path=path, row=i, field="record_count")
                first_row_id = next_row_id
                next_row_id += rc0
            if status == STATUS_DELETED and not include_deleted:
                continue
            part = get("partition") or {}
            if plain_names is not None:
                pvals = tuple(map(part.get, plain_names))
            else:
                pv = [None] * width
                for name, idx, conv in convert:
                    v = part.get(name)
                    if v is not None and conv is not None:
                        v = conv(v)
                    pv[idx] = v
                pvals = tuple(pv)
            rc, size = get("record_count"), get("file_size_in_bytes")
            if content not in (0, 1, 2):
                raise CorruptFileError(f"bad data file content {content}", path=path, row=i, field="content")
            if rc is None or size is None or rc < 0 or size < 0:
                raise CorruptFileError("bad record count or file size", path=path, row=i)
            if partition_filter is not None and not partition_filter(pvals):
                continue
            eq = get("equality_ids")
            fmt = get("file_format")
            datafile = new_df(DataFile)
            datafile.content = int(content)
            datafile.file_path = df["file_path"]
            datafile.file_format = fmt.upper() if type(fmt) is str else str(fmt or "PARQUET").upper()
            datafile.partition = pvals
            datafile.record_count = int(rc)
            datafile.file_size_in_bytes = int(size)
            datafile.column_sizes = get("column_sizes")
            datafile.value_counts = get("value_counts")
            datafile.null_value_counts = get("null_value_counts")
            datafile.nan_value_counts = get("nan_value_counts")
            datafile.lower_bounds = get("lower_bounds")
            datafile.upper_bounds = get("upper_bounds")
            datafile.key_metadata = get("key_metadata")
            datafile.split_offsets = get("split_offsets")
            datafile.equality_ids = [int(x) for x in eq] if eq is not None else None
            datafile.sort_order_id = get("sort_order_id")
            datafile.referenced_data_file = get("referenced_data_file")
            datafile.spec_id = spec_id
            datafile.writer_schema_id = get("pe_writer_schema_id")
            datafile.file_index = get("pe_file_index")
            datafile.block_size_in_bytes = get("block_size_in_bytes")
            datafile.first_row_id = first_row_id
            datafile.content_offset = get("content_offset")
            datafile.content_size_in_bytes = get("content_size_in_bytes")
            datafile.lineage_field_ids = _lineage_ids(get("pe_lineage_columns"), path, i)
            if content == CONTENT_POSITION_DELETES and datafile.file_format == "PUFFIN":
                _check_dv_entry(datafile, path, i)
        except CorruptFileError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptFileError(f"bad manifest entry: {type(exc).__name__}: {exc}", path=path, row=i) from None
        snap = rec.get("snapshot_id")
        if snap is None:
            snap = inherited_snap
        seq = rec.get("sequence_number")
        fseq = rec.get("file_sequence_number")
        if status == STATUS_ADDED:
            if seq is None:
                seq = manifest_seq
            if fseq is None:
                fseq = manifest_seq
        if seq is None and manifest_seq == 0:
            seq = 0
        append(ManifestEntry(status, snap, datafile, seq, fseq))
    return out


def _lineage_mask(ids):
    """A row file's stored lineage columns (field ids, in stored order) -> the ``pe_lineage_columns`` bit mask."""
    if not ids:
        return None
    if list(ids) != [i for i in _LINEAGE_BITS if i in ids]:
        raise InvalidArgumentError(f"row-lineage columns {ids!r} are not a subset of {_LINEAGE_BITS} in order")
    return sum(1 << k for k, i in enumerate(_LINEAGE_BITS) if i in ids)


def _lineage_ids(mask, path, row):
    if mask is None or mask == 0:
        return None
    if type(mask) is not int or mask < 0 or mask >= 1 << len(_LINEAGE_BITS):
        raise CorruptFileError(f"bad row-lineage column mask {mask!r}", path=path, row=row,
                               field="pe_lineage_columns")
    return [i for k, i in enumerate(_LINEAGE_BITS) if mask >> k & 1]


_PARTITION_PLANS: dict = {}
#: the last (writer schema, partition type, plan) answered, compared by identity
_LAST_PARTITION_PLAN = [(None, None, None)]


def _partition_plan(writer_schema, partition_type):
    """``(width, names, converters)`` for turning a writer's partition records into tuples: ``names`` when the
    tuple is just the writer fields of those names in order (no conversion), else None and ``converters`` as
    :func:`_partition_converters` gives them. Cached per (writer schema object, partition type): the decoder
    caches one parsed schema per distinct schema text."""
    last = _LAST_PARTITION_PLAN[0]
    if last[0] is writer_schema and last[1] is partition_type:   # the manifests of one plan: no hashing of the type
        return last[2]
    key = (id(writer_schema), partition_type)
    hit = _PARTITION_PLANS.get(key)
    if hit is not None and hit[0] is writer_schema:
        _LAST_PARTITION_PLAN[0] = (writer_schema, partition_type, hit[1])
        return hit[1]
    writer_fields = _writer_partition_fields(writer_schema)
    convert = _partition_converters(partition_type, writer_fields)
    width = len(partition_type.fields) if partition_type is not None else len(writer_fields)
    names = None
    if len(convert) == width and all(c is None and idx == j for j, (_, idx, c) in enumerate(convert)):
        names = tuple(n for n, _, _ in convert)
    plan = (width, names, convert)
    if len(_PARTITION_PLANS) > 256:
        _PARTITION_PLANS.clear()
    _PARTITION_PLANS[key] = (writer_schema, plan)
    _LAST_PARTITION_PLAN[0] = (writer_schema, partition_type, plan)
    return plan


def _check_dv_entry(df, path, row):
    """A deletion vector entry names its data file and a blob range inside its Puffin file."""
    off, size = df.content_offset, df.content_size_in_bytes
    if df.referenced_data_file is None:
        raise CorruptFileError("deletion vector entry without referenced_data_file", path=path, row=row,
                               field="referenced_data_file")
    if off is None or size is None:
        raise CorruptFileError("deletion vector entry without content_offset/content_size_in_bytes", path=path,
                               row=row, field="content_offset")
    if type(off) is not int or type(size) is not int or off < 0 or size < 0 or off + size > df.file_size_in_bytes:
        raise CorruptFileError(f"deletion vector range {off}+{size} lies outside its Puffin file "
                               f"({df.file_size_in_bytes} bytes)", path=path, row=row, field="content_offset")


def _writer_partition_fields(writer_schema):
    """``(field id or None, name)`` of each field of the writer's partition record, in order."""
    try:
        for f in writer_schema["fields"]:
            if f["name"] == "data_file":
                dt = f["type"]
                if isinstance(dt, list):
                    dt = [x for x in dt if x != "null"][0]
                for g in dt["fields"]:
                    if g["name"] == "partition":
                        t = g["type"]
                        if isinstance(t, list):
                            t = [x for x in t if x != "null"][0]
                        return [(p.get("field-id"), p["name"]) for p in t.get("fields", [])]
    except (KeyError, TypeError, IndexError, AttributeError):
        return []
    return []


def _partition_converters(partition_type, writer_fields):
    """``(writer field name, index in the partition tuple, converter)`` for every partition field found: by field
    id where the writer recorded ids, else by (sanitized) name, else by position."""
    if partition_type is None:
        return [(name, i, None) for i, (_, name) in enumerate(writer_fields)]
    by_id = {fid: name for fid, name in writer_fields if fid is not None}
    names = {name for _, name in writer_fields}
    out = []
    for i, f in enumerate(partition_type.fields):
        name = by_id.get(f.id)
        if name is None:
            aname = sanitize_avro_name(f.name)
            if aname in names:
                name = aname
            elif f.name in names:
                name = f.name
            elif i < len(writer_fields):
                name = writer_fields[i][1]
        if name is not None:
            out.append((name, i, _from_avro(f.type)))
    return out


def _partition_type_from_meta(meta, path, schema=None, spec=None):
    from .partitioning import PartitionSpec
    from .schema import Schema
    try:
        if schema is None:
            schema = Schema.from_dict(json.loads(meta["schema"]))
        if spec is None:
            spec = PartitionSpec.from_fields(json.loads(meta["partition-spec"]),
                                             int(meta.get("partition-spec-id", 0)))
        return spec.partition_type(schema)
    except Exception as exc:
        raise CorruptFileError(f"manifest metadata has no usable schema/partition-spec: {exc}", path=path) from None
