import copy
import gzip
import itertools
import json

import pytest

from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError, SchemaError
from paimon_engine.spec.metadata import (Snapshot, SnapshotList, TableMetadata, new_table_metadata, parse_metadata,
                                         serialize_metadata)
from paimon_engine.spec.partitioning import PartitionSpec, evolve_spec
from paimon_engine.spec.schema import Schema

from .java_docs import V1_VALID, V2_VALID


def _round(doc):
    md = TableMetadata.from_dict(copy.deepcopy(doc))
    return md, json.loads(serialize_metadata(md))


def test_v2_valid_parses_and_round_trips():
    md, out = _round(V2_VALID)
    assert md.format_version == 2 and md.last_sequence_number == 34
    assert md.schema().identifier_field_ids == (1, 2)
    assert md.schema().find_field("y").description == "comment"
    assert md.spec().fields[0].name == "x" and md.last_partition_id == 1000
    assert md.sort_order().order_id == 3 and str(md.sort_order().fields[1].transform) == "bucket[4]"
    assert md.current_snapshot().parent_snapshot_id == 3051729675574597004
    assert md.refs["main"].snapshot_id == 3055729675574597004
    assert [s.snapshot_id for s in md.ancestors()] == [3055729675574597004, 3051729675574597004]
    assert md.snapshot_as_of(1515100955771).snapshot_id == 3051729675574597004
    for key, val in V2_VALID.items():
        assert out[key] == val, key
    # a second round trip is a fixed point
    assert json.loads(serialize_metadata(TableMetadata.from_dict(out))) == out


def test_v1_valid_parses_and_round_trips():
    md, out = _round(V1_VALID)
    assert md.format_version == 1 and md.current_snapshot() is None
    assert md.spec().fields[0].field_id == 1000 and md.last_partition_id == 1000
    assert out["schema"]["fields"] == V1_VALID["schema"]["fields"]
    assert out["partition-spec"] == V1_VALID["partition-spec"]
    assert out["current-snapshot-id"] == -1
    assert "last-sequence-number" not in out
    md2 = TableMetadata.from_dict(out)
    assert md2.schema() == md.schema()


def test_unknown_fields_are_preserved():
    doc = copy.deepcopy(V2_VALID)
    doc["x-vendor"] = {"a": [1, 2]}
    doc["snapshots"][0]["x-snap"] = 7
    doc["refs"] = {"main": {"snapshot-id": 3055729675574597004, "type": "branch", "x-ref": True},
                   "tag1": {"snapshot-id": 3051729675574597004, "type": "tag", "max-ref-age-ms": 10}}
    _, out = _round(doc)
    assert out["x-vendor"] == {"a": [1, 2]}
    assert out["snapshots"][0]["x-snap"] == 7
    assert out["refs"] == doc["refs"]


def test_gzip_metadata(tmp_path):
    data = gzip.compress(json.dumps(V2_VALID).encode())
    md = parse_metadata(data, "x.gz.metadata.json")
    assert md.format_version == 2


@pytest.mark.parametrize("data", [
    gzip.compress(b"{}")[:10] + b"\x07" + bytes(8),               # deflate block of the reserved type 3
    gzip.compress(json.dumps(V2_VALID).encode())[:40] + bytes(60),  # a deflate stream cut and zero-filled
    gzip.compress(b"{}")[:12],                                      # truncated
])
def test_corrupt_gzip_metadata_is_corrupt_file(data):
    with pytest.raises(CorruptFileError, match="gzip") as ei:
        parse_metadata(data, "bad.gz.metadata.json")
    assert ei.value.path == "bad.gz.metadata.json"


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d.pop("location"), "location"),
    (lambda d: d.update({"format-version": 9}), "format-version"),
    (lambda d: d.update({"format-version": "2"}), "format-version"),
    (lambda d: d.pop("last-sequence-number"), "last-sequence-number"),
    (lambda d: d.pop("schemas"), "schemas"),
    (lambda d: d.update({"current-schema-id": 42}), "current-schema-id"),
    (lambda d: d.update({"default-spec-id": 5}), "default-spec-id"),
    (lambda d: d.update({"current-snapshot-id": 12}), "current-snapshot-id"),
    (lambda d: d["snapshots"][1].pop("manifest-list"), "manifest-list"),
    (lambda d: d["snapshots"][1].pop("sequence-number"), "sequence-number"),
    (lambda d: d["snapshots"][1].update({"summary": {"x": "y"}}), "summary.operation"),
    (lambda d: d.update({"refs": {"b": {"snapshot-id": 1, "type": "branch"}}}), "refs.b"),
    (lambda d: d.update({"refs": {"b": {"snapshot-id": 3051729675574597004, "type": "nope"}}}), "type"),
    (lambda d: d["schemas"][0].update({"fields": "x"}), "schemas"),
    (lambda d: d["schemas"][0]["fields"][0].update({"type": "varchar"}), "schemas"),
    (lambda d: d["partition-specs"][0]["fields"][0].update({"transform": "zorder"}), "partition-specs"),
    (lambda d: d["snapshot-log"].append({"snapshot-id": 1}), "timestamp-ms"),
])
def test_hostile_metadata_names_field(mutate, field):
    doc = copy.deepcopy(V2_VALID)
    mutate(doc)
    with pytest.raises(CorruptFileError) as ei:
        parse_metadata(json.dumps(doc).encode(), "/t/metadata/v3.metadata.json")
    assert ei.value.field == field
    assert ei.value.path == "/t/metadata/v3.metadata.json"
    assert "v3.metadata.json" in str(ei.value)


@pytest.mark.parametrize("data", [b"", b"{", b"[1,2]", b"\x1f\x8b\x08garbage", b"\xff\xfe", b"null",
                                  b"[" * 100000 + b"]" * 100000])
def test_garbage_metadata(data):
    with pytest.raises(CorruptFileError):
        parse_metadata(data, "m.json")


def test_new_table_metadata_and_copy():
    schema = Schema(T.RowType.of(("id", T.BigIntType(False)), ("s", T.STRING()), start_id=1))
    spec = PartitionSpec.build(schema, ("id", "bucket[4]"))
    md = new_table_metadata(schema, spec, "/w/t/", properties={"a": "b"})
    assert md.location == "/w/t" and md.last_column_id == 2 and md.last_partition_id == 1000
    out = json.loads(serialize_metadata(md))
    assert out["partition-specs"][0]["fields"][0] == {"name": "id_bucket", "transform": "bucket[4]",
                                                      "source-id": 1, "field-id": 1000}
    md2 = md.copy()
    md2.properties["c"] = "d"
    assert "c" not in md.properties
    v1 = new_table_metadata(schema, spec, "/w/t", format_version=1)
    assert TableMetadata.from_dict(json.loads(serialize_metadata(v1))).format_version == 1


def test_schema_evolution():
    s = Schema(T.RowType([
        T.DataField(1, "id", T.IntType(False)),
        T.DataField(2, "name", T.STRING()),
        T.DataField(3, "loc", T.RowType([T.DataField(4, "lat", T.FloatType()), T.DataField(5, "lon", T.FloatType())])),
    ]), 0, [1])
    new, last = (s.update(5)
                 .add_column("tags", T.ArrayType(T.STRING()))
                 .add_column("loc.alt", T.DoubleType())
                 .rename_column("name", "full_name")
                 .update_column("id", T.BigIntType())
                 .update_column("loc.lat", T.DoubleType())
                 .move_first("tags")
                 .delete_column("loc.lon")
                 .apply())
    assert last == 8
    assert new.names == ["tags", "id", "full_name", "loc"]
    assert new.find_field("tags").id == 7 and new.find_field("tags").type.element_id == 6
    assert new.find_field("loc.alt").id == 8
    assert isinstance(new.find_type("id"), T.BigIntType) and not new.find_type("id").nullable
    assert new.find_field(2).name == "full_name"
    assert new.identifier_field_ids == (1,)
    assert [f.name for f in new.find_type("loc").fields] == ["lat", "alt"]
    assert isinstance(new.find_type("loc.lat"), T.DoubleType)
    rt = Schema.from_dict(new.to_dict())
    assert rt.struct == new.struct
    with pytest.raises(SchemaError):
        s.update().update_column("name", T.IntType())
    with pytest.raises(SchemaError):
        s.update().update_column("id", T.STRING())
    with pytest.raises(SchemaError):
        s.update().add_column("name", T.IntType())
    with pytest.raises(SchemaError):
        s.update().delete_column("id")
    with pytest.raises(SchemaError):
        s.update().add_column("x", T.IntType(), required=True)
    with pytest.raises(SchemaError):
        s.update().rename_column("nope", "x")
    d = s.update().update_column("loc", None).apply()[0]
    assert d.struct == s.struct
    with pytest.raises(SchemaError):
        Schema(T.RowType([T.DataField(1, "a", T.IntType()), T.DataField(1, "b", T.IntType())]))
    with pytest.raises(SchemaError):
        Schema(T.RowType([T.DataField(1, "a", T.IntType())]), 0, [1])   # optional identifier


def test_decimal_widening_and_move():
    s = Schema(T.RowType.of(("a", T.DecimalType(9, 2)), ("b", T.IntType()), ("c", T.IntType()), start_id=1))
    n, _ = s.update().update_column("a", T.DecimalType(18, 2)).move_after("a", "c").move_before("c", "b").apply()
    assert n.names == ["c", "b", "a"] and n.find_type("a") == T.DecimalType(18, 2)
    with pytest.raises(SchemaError):
        s.update().update_column("a", T.DecimalType(18, 3))


def test_partition_evolution():
    schema = Schema(T.RowType.of(("id", T.BigIntType()), ("ts", T.TimestampType(6)), start_id=1))
    spec = PartitionSpec.build(schema, ("ts", "day"))
    assert spec.fields[0].name == "ts_day" and spec.fields[0].field_id == 1000
    v2 = evolve_spec(spec, schema, 1000, 2, add=[("id", "bucket[8]")], remove=["ts_day"])
    assert [(f.name, f.field_id) for f in v2.fields] == [("id_bucket", 1001)]
    v1 = evolve_spec(spec, schema, 1000, 1, add=[("ts", "hour")], remove=["ts_day"])
    assert [(f.name, str(f.transform), f.field_id) for f in v1.fields] == [("ts_day", "void", 1000),
                                                                           ("ts_hour", "hour", 1001)]
    r = evolve_spec(spec, schema, 1000, 2, rename={"ts_day": "d"})
    assert r.fields[0].name == "d"
    assert spec.partition_path((17486,), schema) == "ts_day=2017-11-16"
    pt = spec.partition_type(schema)
    assert pt.fields[0].id == 1000 and isinstance(pt.fields[0].type, T.DateType)


def _many_snapshots(n=50):
    doc = copy.deepcopy(V2_VALID)
    last = doc["snapshots"][-1]
    snaps, parent = [], None
    for i in range(n):
        s = dict(last, **{"snapshot-id": 100 + i, "sequence-number": i + 1, "timestamp-ms": 1_600_000_000_000 + i})
        s.pop("parent-snapshot-id", None)
        if parent is not None:
            s["parent-snapshot-id"] = parent
        parent = s["snapshot-id"]
        snaps.append(s)
    doc.update({"snapshots": snaps, "current-snapshot-id": parent, "last-sequence-number": n,
                "refs": {"main": {"snapshot-id": parent, "type": "branch"}},
                "snapshot-log": [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]} for s in snaps]})
    return doc


def test_snapshots_become_objects_on_first_use():
    doc = _many_snapshots()
    md = parse_metadata(json.dumps(doc).encode(), "/t/metadata/v9.metadata.json")
    snaps = md.snapshots
    assert type(snaps) is SnapshotList and len(snaps) == 50
    assert snaps._missing == 49             # only the current snapshot was looked at (on load)
    cur = md.current_snapshot()
    assert cur.snapshot_id == 149 and cur.parent_snapshot_id == 148
    assert md.snapshot_by_id(120).sequence_number == 21 and md.snapshot_by_id(7) is None
    assert [s.snapshot_id for s in itertools.islice(md.ancestors(), 3)] == [149, 148, 147]
    assert md.snapshot_as_of(1_600_000_000_010).snapshot_id == 110
    # the list holds the very objects already handed out
    assert md.snapshots[49] is cur and md.snapshots[-1] is cur and md.snapshots[-30] is md.snapshot_by_id(120)
    assert snaps._missing == 50 - 5              # 149, 120, 148, 147, 110
    assert [s.snapshot_id for s in md.ancestors()][:3] == [149, 148, 147] and snaps._missing == 0
    assert [s.snapshot_id for s in snaps[10:13]] == [110, 111, 112] and type(snaps[10:13]) is list
    with pytest.raises(IndexError):
        snaps[50]
    assert json.loads(serialize_metadata(md)) == json.loads(serialize_metadata(TableMetadata.from_dict(doc)))
    assert type(md.snapshots) is list and md.snapshots[49] is cur   # all made: from then on a plain list
    md2 = md.copy()
    md2.snapshots = md2.snapshots[:10]
    md2._snap_by_id = None
    assert md2.snapshot_by_id(149) is None and md.snapshot_by_id(149) is cur


def test_snapshot_list_round_trips_without_being_made():
    doc = _many_snapshots(20)
    doc["snapshots"][4]["x-foreign"] = {"kept": [1, 2]}
    data = json.dumps(doc).encode()
    md = parse_metadata(data, "/t/metadata/v9.metadata.json")
    written = json.loads(serialize_metadata(md))      # written without the snapshots having been used first
    assert written["snapshots"] == [Snapshot.from_dict(s, 2).to_dict(2) for s in doc["snapshots"]]
    assert written["snapshots"][4]["x-foreign"] == {"kept": [1, 2]}
    assert [s["snapshot-id"] for s in written["snapshots"]] == [s["snapshot-id"] for s in doc["snapshots"]]


def test_snapshot_list_is_a_list():
    doc = _many_snapshots(20)
    md = parse_metadata(json.dumps(doc).encode(), "/t/metadata/v9.metadata.json")
    eager = [Snapshot.from_dict(s, 2) for s in doc["snapshots"]]
    snaps = md.snapshots
    assert [s.snapshot_id for s in reversed(snaps)] == [s.snapshot_id for s in reversed(eager)]
    assert md.current_snapshot() in snaps and snaps.index(md.current_snapshot()) == 19
    assert snaps == list(snaps) and snaps != eager and list(snaps) + [] == snaps + [] == [] + snaps
    md = parse_metadata(json.dumps(doc).encode(), "/t/metadata/v9.metadata.json")
    snaps = md.snapshots
    new = Snapshot(500, 119, 21, 1_600_000_000_100, "s3://bucket/snap-500.avro")
    snaps.append(new)                 # a change makes every snapshot an object first
    assert len(snaps) == 21 and snaps[-1] is new and snaps._missing == 0
    assert type(md.snapshots) is list and md.snapshots[-1] is new
    del md.snapshots[0]               # the plain list and the SnapshotList handed out before stay one list
    assert len(snaps) == 20 and snaps[0].snapshot_id == 101 and list(snaps) == md.snapshots
    # a copy of a list not yet made keeps its own items
    md = parse_metadata(json.dumps(doc).encode())
    other = md.snapshots.copy()
    other.insert(0, new)
    assert len(md.snapshots) == 20 and md.snapshots[0].snapshot_id == 100 and other[0] is new
    assert [s.snapshot_id for s in other[1:]] == [s.snapshot_id for s in md.snapshots]


@pytest.mark.parametrize("mutate,field", [
    (lambda s: s.pop("timestamp-ms"), "timestamp-ms"),
    (lambda s: s.update({"summary": {"x": "y"}}), "summary.operation"),
    (lambda s: s.update({"manifest-list": 7}), "manifest-list"),
])
def test_bad_snapshot_raises_when_first_used(mutate, field):
    doc = _many_snapshots()
    mutate(doc["snapshots"][3])           # not the current snapshot: found when it is first used
    md = parse_metadata(json.dumps(doc).encode(), "/t/metadata/v9.metadata.json")
    assert md.current_snapshot().snapshot_id == 149
    assert len(md.snapshots) == 50 and md.snapshots[2].snapshot_id == 102
    for use in (lambda: md.snapshot_by_id(103), lambda: md.snapshots[3], lambda: md.snapshots[-47],
                lambda: list(md.snapshots), lambda: list(md.ancestors()), lambda: serialize_metadata(md),
                lambda: md.copy(), lambda: md.snapshots.append(md.snapshots[0])):
        with pytest.raises(CorruptFileError) as ei:
            use()
        assert ei.value.field == field and ei.value.path == "/t/metadata/v9.metadata.json"


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["snapshots"][3].update({"snapshot-id": "103"}), "snapshot-id"),
    (lambda d: d["snapshots"][3].update({"snapshot-id": 104}), "snapshots"),
    (lambda d: d["snapshots"].append(7), "snapshots"),
    (lambda d: d["snapshot-log"][3].update({"snapshot-id": None}), "snapshot-id"),
])
def test_snapshot_ids_and_log_are_checked_on_load(mutate, field):
    doc = _many_snapshots()
    mutate(doc)
    with pytest.raises(CorruptFileError) as ei:
        parse_metadata(json.dumps(doc).encode(), "/t/metadata/v9.metadata.json")
    assert ei.value.field == field and ei.value.path == "/t/metadata/v9.metadata.json"


def test_json_without_msgspec_and_what_msgspec_refuses(monkeypatch):
    from paimon_engine.spec import metadata as M
    doc = _many_snapshots(5)
    doc["properties"] = {"k": "v"}
    data = json.dumps(doc).encode()
    fast = serialize_metadata(parse_metadata(data))
    monkeypatch.setattr(M, "_msgspec", None)
    assert serialize_metadata(parse_metadata(data)) == fast
    monkeypatch.undo()
    # NaN and UTF-16 text are valid for the standard library; msgspec refuses them and hands them over
    doc["statistics"] = [{"snapshot-id": 104, "x": float("nan")}]
    md = parse_metadata(json.dumps(doc).encode("utf-16"))
    assert md.statistics[0]["x"] != md.statistics[0]["x"] and len(md.snapshots) == 5
    with pytest.raises(CorruptFileError):
        parse_metadata(b'{"format-version": 2, ', "m.json")


def test_iterating_a_snapshot_list_checks_every_snapshot_as_from_dict_does():
    # well-formed snapshots, v3 lineage fields, foreign keys and a v1 snapshot with inline manifests: iteration
    # makes the same objects as Snapshot.from_dict
    v3 = _many_snapshots(6)
    v3.update({"format-version": 3, "next-row-id": 60})
    for i, s in enumerate(v3["snapshots"]):
        s.update({"first-row-id": 10 * i, "added-rows": 10})
    v3["snapshots"][2]["x-foreign"] = [1]
    md = parse_metadata(json.dumps(v3).encode())
    assert [(s.snapshot_id, s.first_row_id, s.added_rows, s.extra.get("x-foreign")) for s in md.snapshots] == \
        [(100 + i, 10 * i, 10, [1] if i == 2 else None) for i in range(6)]
    v1 = copy.deepcopy(V1_VALID)
    v1["snapshots"] = [
        {"snapshot-id": 6, "timestamp-ms": 1, "manifest-list": "s3://b/l6.avro", "summary": {"operation": "append"}},
        {"snapshot-id": 7, "timestamp-ms": 2, "manifests": ["s3://b/m1.avro"], "summary": {"operation": "append"}},
        {"snapshot-id": 8, "timestamp-ms": 3, "manifest-list": "s3://b/l8.avro"}]     # no summary: checked path
    md1 = parse_metadata(json.dumps(v1).encode())
    assert [s.to_dict(1) for s in md1.snapshots] == [Snapshot.from_dict(s, 1).to_dict(1) for s in v1["snapshots"]]
    assert [(s.manifest_list, s.manifests, s.operation) for s in md1.snapshots] == [
        ("s3://b/l6.avro", None, "append"), (None, ["s3://b/m1.avro"], "append"), ("s3://b/l8.avro", None, "append")]
    # a bad lineage field or a bad snapshot further down raises on iteration, naming the field and the file
    for field, value in (("first-row-id", -1), ("added-rows", "10"), ("timestamp-ms", None)):
        bad = copy.deepcopy(v3)
        bad["snapshots"][4][field] = value
        md = parse_metadata(json.dumps(bad).encode(), "/t/metadata/v3.metadata.json")
        assert len(md.snapshots) == 6 and md.snapshots[3].snapshot_id == 103
        with pytest.raises(CorruptFileError) as ei:
            [s.snapshot_id for s in md.snapshots]
        assert ei.value.field == field and ei.value.path == "/t/metadata/v3.metadata.json"
