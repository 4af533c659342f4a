"""Format version 3 metadata: next-row-id, first-row-id assignment, v3 manifest fields, types, upgrade."""
import datetime
import json

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError, InvalidArgumentError, SchemaError, UnsupportedTypeError
from paimon_engine.io import FileIO
from paimon_engine.spec.manifest import (CONTENT_POSITION_DELETES, STATUS_ADDED, STATUS_DELETED, STATUS_EXISTING,
                                          DataFile, ManifestEntry, manifest_schema, read_manifest, write_manifest)
from paimon_engine.spec.manifest_list import ManifestFile, manifest_list_schema, read_manifest_list, \
    write_manifest_list
from paimon_engine.spec.metadata import TableMetadata, parse_metadata, serialize_metadata
from paimon_engine.spec.partitioning import PartitionSpec
from paimon_engine.spec.schema import Schema

from ..table.conftest import sample

SCHEMA = Schema(T.RowType([T.DataField(1, "id", T.BigIntType())]))


def _catalog(tmp_path):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _ids(fields):
    return {f["name"]: f["field-id"] for f in fields}


def test_v3_avro_schemas_have_the_spec_fields():
    df = next(f for f in manifest_schema(SCHEMA.struct.__class__([]), 3)["fields"] if f["name"] == "data_file")
    ids = _ids(df["type"]["fields"])
    assert (ids["first_row_id"], ids["referenced_data_file"], ids["content_offset"],
            ids["content_size_in_bytes"]) == (142, 143, 144, 145)
    assert "first_row_id" not in _ids(next(f for f in manifest_schema(T.RowType([]), 2)["fields"]
                                           if f["name"] == "data_file")["type"]["fields"])
    assert _ids(manifest_list_schema(3)["fields"])["first_row_id"] == 520
    assert "first_row_id" not in _ids(manifest_list_schema(2)["fields"])


def test_first_row_id_inheritance_as_in_the_spec(tmp_path):
    """The spec's example: EXISTING data1 keeps 800; ADDED data2 and data3 inherit 1000 and 1050."""
    io = FileIO()
    spec = PartitionSpec((), 0)
    entries = [ManifestEntry(STATUS_EXISTING, 1, DataFile("data1", record_count=25, first_row_id=800), 1, 1),
               ManifestEntry(STATUS_ADDED, 2, DataFile("data2", record_count=50)),
               ManifestEntry(STATUS_DELETED, 2, DataFile("gone", record_count=7), 1, 1),
               ManifestEntry(STATUS_ADDED, 2, DataFile("data3", record_count=50))]
    path = str(tmp_path / "m.avro")
    mf = write_manifest(io, path, entries, spec, SCHEMA, 3, 2)
    assert (mf.added_rows_count, mf.existing_rows_count) == (100, 25)
    # the manifest list assigns first_row_id from next-row-id by added + existing rows
    other = ManifestFile("existing.avro", 1, 0, 0, 1, 1, 1, 1, 0, 0, 75, 0, 0, first_row_id=925)
    nxt = write_manifest_list(io, str(tmp_path / "l.avro"), [mf, other], format_version=3, snapshot_id=2,
                              parent_snapshot_id=1, sequence_number=2, next_row_id=1000)
    assert nxt == 1125
    got = read_manifest_list(io, str(tmp_path / "l.avro"))
    assert [m.first_row_id for m in got] == [1000, 925]
    rows = {e.data_file.file_path: e.data_file.first_row_id for e in read_manifest(io, got[0])}
    assert rows == {"data1": 800, "data2": 1000, "data3": 1050, "gone": None}
    lean = {e.data_file.file_path: e.data_file.first_row_id for e in read_manifest(io, got[0], full=False)}
    assert lean == rows


def test_dv_manifest_fields_round_trip_and_checks(tmp_path):
    io = FileIO()
    spec = PartitionSpec((), 0)
    dv = DataFile("d.puffin", "PUFFIN", (), 3, 200, content=CONTENT_POSITION_DELETES,
                  referenced_data_file="a.parquet", content_offset=4, content_size_in_bytes=40)
    mf = write_manifest(io, str(tmp_path / "m.avro"), [ManifestEntry(STATUS_ADDED, 2, dv)], spec, SCHEMA, 3, 2)
    mf.sequence_number = 2
    (e,) = read_manifest(io, mf)
    assert (e.data_file.referenced_data_file, e.data_file.content_offset, e.data_file.content_size_in_bytes) == \
        ("a.parquet", 4, 40)
    with pytest.raises(InvalidArgumentError, match="format version 3"):
        write_manifest(io, str(tmp_path / "m2.avro"), [ManifestEntry(STATUS_ADDED, 2, dv)], spec, SCHEMA, 2, 2)
    for kw, words in (({"content_offset": None}, "content_offset"), ({"referenced_data_file": None},
                                                                     "referenced_data_file"),
                      ({"content_size_in_bytes": 400}, "outside")):
        bad = DataFile("d.puffin", "PUFFIN", (), 3, 200, content=CONTENT_POSITION_DELETES,
                       **{**dict(referenced_data_file="a.parquet", content_offset=4, content_size_in_bytes=40), **kw})
        m = write_manifest(io, str(tmp_path / "b.avro"), [ManifestEntry(STATUS_ADDED, 2, bad)], spec, SCHEMA, 3, 2)
        with pytest.raises(CorruptFileError, match=words) as ei:
            read_manifest(io, m)
        assert ei.value.row == 0


def test_v3_table_commits_assign_row_ids(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=3)
    assert t.metadata.next_row_id == 0
    t.append(sample(10))
    t.append(sample(5, start=10))
    t = cat.load_table("db.t")
    md = t.metadata
    assert md.format_version == 3 and md.next_row_id == 15
    assert [(s.first_row_id, s.added_rows) for s in md.snapshots] == [(0, 10), (10, 5)]
    ms = read_manifest_list(t.io, md.current_snapshot().manifest_list)
    assert sorted(m.first_row_id for m in ms) == [0, 10]
    doc = json.loads(serialize_metadata(md))
    assert doc["next-row-id"] == 15 and doc["snapshots"][1]["first-row-id"] == 10
    assert doc["snapshots"][1]["added-rows"] == 5
    assert t.scan().to_arrow().num_rows == 15
    # a delete rewrites the manifest: existing files keep their row ids, the rewritten manifest reserves more
    t.delete("id >= 12", mode="copy-on-write")
    t = cat.load_table("db.t")
    ms = read_manifest_list(t.io, t.current_snapshot().manifest_list)
    ids = {(e.status, e.data_file.record_count): e.data_file.first_row_id
           for m in ms for e in read_manifest(t.io, m)}
    # the 10-row file keeps 0, the removed 5-row file is recorded with its ids (10..14), and the 2 rows it
    # kept land in a new file with new ids (rewrites do not carry _row_id yet)
    assert ids == {(STATUS_ADDED, 10): 0, (STATUS_DELETED, 5): 10, (STATUS_ADDED, 2): 15}
    assert t.metadata.next_row_id == 15 + 2 and t.current_snapshot().first_row_id == 15
    assert t.current_snapshot().added_rows == 2


def test_v3_metadata_parse_errors():
    base = json.loads(serialize_metadata(_md(3)))
    del base["next-row-id"]
    with pytest.raises(CorruptFileError, match="next-row-id"):
        parse_metadata(json.dumps(base).encode(), "m.json")
    base["next-row-id"] = -4
    with pytest.raises(CorruptFileError, match="negative"):
        parse_metadata(json.dumps(base).encode(), "m.json")
    # v2 metadata never writes next-row-id
    assert "next-row-id" not in json.loads(serialize_metadata(_md(2)))
    with pytest.raises(CorruptFileError, match="unsupported table format version 4"):
        parse_metadata(json.dumps({**base, "format-version": 4}).encode())


def _md(fv):
    from paimon_engine.spec.metadata import new_table_metadata
    return new_table_metadata(SCHEMA, PartitionSpec((), 0), "/tmp/x", format_version=fv)


def test_upgrade_v2_to_v3_keeps_snapshots_readable(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=2)
    t.append(sample(10))
    t.delete("id < 2")                       # a v2 position-delete file
    old = t.current_snapshot().snapshot_id
    t.upgrade_format_version(3)
    t = cat.load_table("db.t")
    assert t.format_version == 3 and t.metadata.next_row_id == 0
    assert all(s.first_row_id is None for s in t.metadata.snapshots)
    assert t.scan(snapshot_id=old).to_arrow().num_rows == 8
    t.append(sample(4, start=100))
    t = cat.load_table("db.t")
    snap = t.current_snapshot()
    # every data manifest now has a first_row_id: the upgraded file's and the new file's rows
    assert snap.first_row_id == 0 and snap.added_rows == 14 and t.metadata.next_row_id == 14
    assert t.scan().to_arrow().num_rows == 12
    assert t.scan(snapshot_id=old).to_arrow().num_rows == 8
    with pytest.raises(InvalidArgumentError):
        t.upgrade_format_version(2)
    with pytest.raises(InvalidArgumentError):
        t.upgrade_format_version(4)


def test_pyiceberg_reads_our_v3_table(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=3)
    t.append(sample(10))
    t.append(sample(5, start=10))
    theirs = PySqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    pt = theirs.load_table("db.t")
    assert pt.metadata.format_version == 3 and pt.metadata.next_row_id == 15
    assert sorted(pt.scan().to_arrow().column("id").to_pylist()) == list(range(15))
    assert [s.first_row_id for s in pt.metadata.snapshots] == [0, 10]


def test_v3_types():
    assert isinstance(T.from_iceberg("unknown"), T.UnknownType)
    assert T.from_iceberg("unknown").to_arrow() == pa.null()
    assert T.from_iceberg("timestamp_ns").to_arrow() == pa.timestamp("ns")
    assert T.from_iceberg("timestamptz_ns").to_arrow() == pa.timestamp("ns", "UTC")
    assert T.from_iceberg("timestamptz_ns").to_iceberg() == "timestamptz_ns"
    assert T.from_arrow(pa.null()) == T.UnknownType()
    with pytest.raises(SchemaError, match="optional"):
        T.from_iceberg("unknown", nullable=False)
    for geo in ("geometry", "geometry(srid:4326)", "geography(OGC:CRS84, karney)"):
        with pytest.raises(UnsupportedTypeError, match="geospatial"):
            T.from_iceberg(geo)


def test_v3_table_with_nanosecond_timestamps(tmp_path):
    cat = _catalog(tmp_path)
    ns = pa.array([0, 1, 1_700_000_000_123_456_789], pa.timestamp("ns"))
    tbl = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "ts": ns, "tz": ns.cast(pa.timestamp("ns", "UTC"))})
    t = cat.create_table("db.ns", tbl.schema, format_version=3)
    assert [f.type.to_iceberg() for f in t.schema().struct.fields][1:] == ["timestamp_ns", "timestamptz_ns"]
    t.append(tbl)
    got = cat.load_table("db.ns").scan().to_arrow().sort_by("id")
    assert got.column("ts").to_pylist() == tbl.column("ts").to_pylist()
    assert got.column("tz").cast(pa.int64()).to_pylist() == [0, 1, 1_700_000_000_123_456_789]
