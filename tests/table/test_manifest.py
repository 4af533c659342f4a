import datetime
import decimal

import fastavro
import pytest

from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError, UnsupportedTypeError
from paimon_engine.io import FileIO
from paimon_engine.spec.conversions import to_bytes
from paimon_engine.spec.manifest import (STATUS_ADDED, STATUS_DELETED, STATUS_EXISTING, DataFile, ManifestWriter,
                                          manifest_schema, read_manifest)
from paimon_engine.spec.manifest_list import read_manifest_list, write_manifest_list
from paimon_engine.spec.partitioning import PartitionSpec
from paimon_engine.spec.schema import Schema

SCHEMA = Schema(T.RowType.of(("id", T.BigIntType(False)), ("d", T.DateType()), ("s", T.STRING()),
                             ("amt", T.DecimalType(9, 2)), ("ts", T.TimestampType(6)), start_id=1))
SPEC = PartitionSpec.build(SCHEMA, ("d", "identity"), ("id", "bucket[4]"), ("amt", "identity"), ("ts", "hour"),
                           ("s", "truncate[2]"))


def _df(path, part, rows=10, content=0, **kw):
    return DataFile(path, "PARQUET", part, rows, 1000, content=content, spec_id=0,
                    value_counts={1: rows}, null_value_counts={1: 0}, lower_bounds={1: to_bytes(T.BigIntType(), 0)},
                    upper_bounds={1: to_bytes(T.BigIntType(), rows)}, **kw)


@pytest.mark.parametrize("fv", [1, 2])
def test_manifest_round_trip_and_inheritance(tmp_path, fv):
    io = FileIO()
    w = ManifestWriter(SPEC, SCHEMA, fv, snapshot_id=55)
    p1 = (17486, 3, decimal.Decimal("1.50"), 419686, "ab")
    p2 = (None, 0, None, None, None)
    w.add(_df("/d/a.parquet", p1))
    w.add(_df("/d/b.parquet", p2), STATUS_EXISTING, snapshot_id=44, sequence_number=4, file_sequence_number=4)
    w.add(_df("/d/c.parquet", p1), STATUS_DELETED, snapshot_id=44, sequence_number=3, file_sequence_number=3)
    mf = w.write(io, str(tmp_path / "m0.avro"))
    assert (mf.added_files_count, mf.existing_files_count, mf.deleted_files_count) == (1, 1, 1)
    assert mf.sequence_number is None
    write_manifest_list(io, str(tmp_path / "snap.avro"), [mf], format_version=fv, snapshot_id=55,
                        parent_snapshot_id=44, sequence_number=7)
    [m] = read_manifest_list(io, str(tmp_path / "snap.avro"))
    assert m.sequence_number == (7 if fv == 2 else 0)
    assert m.partitions[0].contains_null and m.partitions[0].lower_bound == to_bytes(T.DateType(), 17486)
    entries = read_manifest(io, m)
    assert [e.data_file.file_path for e in entries] == ["/d/a.parquet", "/d/b.parquet", "/d/c.parquet"]
    a, b, c = entries
    assert a.data_file.partition == p1 and b.data_file.partition == p2
    assert a.snapshot_id == 55 and b.snapshot_id == 44
    if fv == 2:
        assert (a.sequence_number, a.file_sequence_number) == (7, 7)     # ADDED inherits
        assert (b.sequence_number, c.sequence_number) == (4, 3)          # others are explicit
    assert a.data_file.value_counts == {1: 10} and a.data_file.upper_bounds[1] == to_bytes(T.BigIntType(), 10)
    assert len(read_manifest(io, m, include_deleted=False)) == 2
    with open(tmp_path / "m0.avro", "rb") as f:
        r = fastavro.reader(f)
        meta = r.metadata
        ws = r.writer_schema
    assert meta["format-version"] == str(fv) and meta["partition-spec-id"] == "0"
    df_schema = ws["fields"][-1]["type"]
    assert ws["name"] == "manifest_entry" and df_schema["name"] == "r2"
    part = [f for f in df_schema["fields"] if f["name"] == "partition"][0]["type"]
    assert part["name"] == "r102" and [f["field-id"] for f in part["fields"]] == [1000, 1001, 1002, 1003, 1004]
    names = [f["name"] for f in ws["fields"]]
    assert names == (["status", "snapshot_id", "data_file"] if fv == 1 else
                     ["status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file"])


def test_schema_matches_spec_ids():
    s = manifest_schema(SPEC.partition_type(SCHEMA), 2)
    df = s["fields"][-1]["type"]
    ids = {f["name"]: f["field-id"] for f in df["fields"]}
    assert ids == {"content": 134, "file_path": 100, "file_format": 101, "partition": 102, "record_count": 103,
                   "file_size_in_bytes": 104, "column_sizes": 108, "value_counts": 109, "null_value_counts": 110,
                   "nan_value_counts": 137, "lower_bounds": 125, "upper_bounds": 128, "key_metadata": 131,
                   "split_offsets": 132, "equality_ids": 135, "sort_order_id": 140, "referenced_data_file": 143}
    lb = [f for f in df["fields"] if f["name"] == "lower_bounds"][0]["type"][1]
    assert lb["logicalType"] == "map" and lb["items"]["name"] == "k126_v127"


def test_pyiceberg_reads_our_manifests(tmp_path):
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list as pyi_read_list
    io = FileIO()
    w = ManifestWriter(SPEC, SCHEMA, 2, snapshot_id=9)
    w.add(_df(str(tmp_path / "a.parquet"), (17486, 1, decimal.Decimal("2.00"), 5, "xy")))
    w2 = ManifestWriter(SPEC, SCHEMA, 2, snapshot_id=9, content=1)
    w2.add(_df(str(tmp_path / "del.parquet"), (17486, 1, decimal.Decimal("2.00"), 5, "xy"), rows=2, content=1,
               referenced_data_file=str(tmp_path / "a.parquet")))
    mfs = [w.write(io, str(tmp_path / "m0.avro")), w2.write(io, str(tmp_path / "m1.avro"))]
    write_manifest_list(io, str(tmp_path / "l.avro"), mfs, format_version=2, snapshot_id=9, parent_snapshot_id=None,
                        sequence_number=3)
    pio = PyArrowFileIO()
    got = list(pyi_read_list(pio.new_input(str(tmp_path / "l.avro"))))
    assert [m.sequence_number for m in got] == [3, 3] and [int(m.content) for m in got] == [0, 1]
    e = got[0].fetch_manifest_entry(pio)[0]
    assert e.sequence_number == 3 and e.snapshot_id == 9
    assert e.data_file.partition[0] == 17486 and e.data_file.partition[4] == "xy"
    assert e.data_file.value_counts == {1: 10}
    d = got[1].fetch_manifest_entry(pio)[0]
    assert int(d.data_file.content) == 1


def test_corrupt_manifest_raises(tmp_path):
    io = FileIO()
    w = ManifestWriter(SPEC, SCHEMA, 2, snapshot_id=1)
    w.add(_df("/x.parquet", (1, 1, None, 1, "a")))
    mf = w.write(io, str(tmp_path / "m.avro"))
    data = (tmp_path / "m.avro").read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 3):
        (tmp_path / "bad.avro").write_bytes(data[:cut])
        mf.manifest_path = str(tmp_path / "bad.avro")
        with pytest.raises(CorruptFileError) as ei:
            read_manifest(io, mf)
        assert "bad.avro" in str(ei.value)
    flipped = bytearray(data)
    flipped[len(data) - 20] ^= 0xFF
    (tmp_path / "bad.avro").write_bytes(bytes(flipped))
    with pytest.raises(CorruptFileError):
        read_manifest(io, mf)
    (tmp_path / "bad.avro").write_bytes(b"garbage")
    with pytest.raises(CorruptFileError):
        read_manifest_list(io, str(tmp_path / "bad.avro"))
    # a damaged codec name is a damaged file; a codec the Avro specification defines (or lz4, which fastavro
    # writes) but the engine does not read is an unsupported feature
    codec = data.index(b"deflate")
    assert data[codec - 1] == 2 * 7   # the name's length (zigzag varint) before it
    for name, error in ((b"\x00eflate", CorruptFileError), (b"deflatx", CorruptFileError),
                        (b"bzip2", None), (b"lz4", None)):
        bad = data[:codec - 1] + bytes([2 * len(name)]) + name + data[codec + 7:]
        (tmp_path / "bad.avro").write_bytes(bad)
        mf.manifest_path = str(tmp_path / "bad.avro")
        with pytest.raises(error or UnsupportedTypeError) as ei:
            read_manifest(io, mf)
        assert "bad.avro" in str(ei.value)
        if error is not None:
            assert "codec" in str(ei.value) and ei.value.offset is not None


def test_other_writers_deviations_are_tolerated(tmp_path):
    """pyiceberg 0.12 writes equality_ids as list<long>; no writer is required to store schema-id; v1 manifest
    lists may name counts added_data_files_count."""
    import copy
    import io as _io
    from paimon_engine.spec.manifest_list import ManifestFile, manifest_list_schema
    schema = copy.deepcopy(manifest_schema(SPEC.partition_type(SCHEMA), 2))
    df = schema["fields"][-1]["type"]
    for f in df["fields"]:
        if f["name"] == "equality_ids":
            f["type"][1]["items"] = "long"
    rec = {"status": 1, "snapshot_id": 3, "sequence_number": None, "file_sequence_number": None,
           "data_file": {"content": 2, "file_path": "/e.parquet", "file_format": "PARQUET",
                         "partition": {"d": 1, "id_bucket": 0, "amt": None, "ts_hour": None, "s_trunc": None},
                         "record_count": 1, "file_size_in_bytes": 9, "equality_ids": [1, 3]}}
    buf = _io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [rec],
                    metadata={"schema": __import__("json").dumps(SCHEMA.to_dict()),
                              "partition-spec": __import__("json").dumps([f.to_dict() for f in SPEC.fields]),
                              "format-version": "2", "content": "deletes"})
    (tmp_path / "m.avro").write_bytes(buf.getvalue())
    m = ManifestFile(str(tmp_path / "m.avro"), 0, 0, 1, 5, 5, 3)
    [e] = read_manifest(FileIO(), m)      # partition type from the manifest's own metadata
    assert e.data_file.equality_ids == [1, 3] and e.sequence_number == 5 and e.data_file.partition[0] == 1
    v1 = copy.deepcopy(manifest_list_schema(1))
    for f in v1["fields"]:
        if f["name"] == "added_files_count":
            f["name"] = "added_data_files_count"
    buf = _io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(v1), [{"manifest_path": "/m.avro", "manifest_length": 1,
                                                       "partition_spec_id": 0, "added_snapshot_id": 1,
                                                       "added_data_files_count": 4}])
    (tmp_path / "l.avro").write_bytes(buf.getvalue())
    [mf] = read_manifest_list(FileIO(), str(tmp_path / "l.avro"))
    assert mf.added_files_count == 4 and mf.sequence_number == 0 and mf.content == 0


def test_extension_fields_are_ignored_by_pyiceberg(tmp_path):
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list as pyi_read_list
    from paimon_engine.spec.manifest import EXT_FILE_INDEX, EXT_WRITER_SCHEMA_ID
    io = FileIO()
    w = ManifestWriter(SPEC, SCHEMA, 2, snapshot_id=9)
    w.add(_df("/d/a.parquet", (1, 1, None, 1, "ab"), writer_schema_id=3, file_index="/d/a.parquet.index"))
    mf = w.write(io, str(tmp_path / "m.avro"))
    write_manifest_list(io, str(tmp_path / "l.avro"), [mf], format_version=2, snapshot_id=9,
                        parent_snapshot_id=None, sequence_number=1)
    [m] = read_manifest_list(io, str(tmp_path / "l.avro"))
    [e] = read_manifest(io, m)
    assert e.data_file.writer_schema_id == 3 and e.data_file.file_index == "/d/a.parquet.index"
    with open(tmp_path / "m.avro", "rb") as f:
        ids = {fd["field-id"] for fd in fastavro.reader(f).writer_schema["fields"][-1]["type"]["fields"]}
    assert {EXT_WRITER_SCHEMA_ID, EXT_FILE_INDEX} <= ids
    pio = PyArrowFileIO()
    [pm] = list(pyi_read_list(pio.new_input(str(tmp_path / "l.avro"))))
    [pe] = pm.fetch_manifest_entry(pio)
    assert pe.data_file.file_path == "/d/a.parquet" and pe.data_file.record_count == 10


def test_partition_filter_drops_entries_before_building_them(tmp_path):
    io = FileIO()
    w = ManifestWriter(SPEC, SCHEMA, 2, snapshot_id=55)
    parts = [(17486 + i % 3, i % 4, decimal.Decimal("1.50"), 419686, "ab") for i in range(12)]
    for i, p in enumerate(parts):
        w.add(_df(f"/d/{i}.parquet", p, rows=i + 1))
    w.add(_df("/d/gone.parquet", parts[0]), STATUS_DELETED, snapshot_id=44, sequence_number=3,
          file_sequence_number=3)
    mf = w.write(io, str(tmp_path / "m.avro"))
    mf.sequence_number = 7
    seen = []

    def keep(p):
        seen.append(p)
        return p[0] == 17487

    for kwargs in ({}, {"full": False, "metrics": False}, {"full": False, "metrics": True}):
        seen.clear()
        everything = read_manifest(io, mf, include_deleted=False, **kwargs)
        kept = read_manifest(io, mf, include_deleted=False, partition_filter=keep, **kwargs)
        assert seen == parts          # every live entry's partition tuple, as a tuple, once
        want = [e for e in everything if e.data_file.partition[0] == 17487]
        assert [e.data_file for e in kept] == [e.data_file for e in want] and len(kept) == 4
        assert [(e.status, e.snapshot_id, e.sequence_number) for e in kept] == [(1, 55, 7)] * 4
    # an entry the filter would drop is still checked
    with open(tmp_path / "m.avro", "rb") as f:
        r = fastavro.reader(f)
        schema, recs = r.writer_schema, list(r)
    recs[0]["status"] = 9
    with open(tmp_path / "bad.avro", "wb") as f:
        fastavro.writer(f, schema, recs)
    mf.manifest_path = str(tmp_path / "bad.avro")
    with pytest.raises(CorruptFileError) as ei:
        read_manifest(io, mf, partition_filter=lambda p: False, full=False)
    assert ei.value.field == "status" and ei.value.row == 0
