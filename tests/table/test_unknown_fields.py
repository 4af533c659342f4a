"""Keys another writer puts into metadata.json survive our commits, at every level we parse."""
import json

import pyarrow as pa

from paimon_engine import types as T
from paimon_engine.catalog import FileSystemCatalog
from paimon_engine.spec.metadata import TableMetadata
from paimon_engine.spec.partitioning import PartitionSpec
from paimon_engine.spec.schema import Schema
from paimon_engine.spec.sorting import SortField, SortOrder

from .conftest import sample


def _latest(meta_dir):
    return max(meta_dir.glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))


def _add_extensions(d):
    """Another writer's keys at every level, the way a newer or foreign implementation might add them."""
    d["x-top"] = {"level": "table"}
    for s in d["schemas"]:
        s["x-schema"] = [1, 2]
        for f in s["fields"]:
            f["x-field"] = f"f{f['id']}"
            t = f["type"]
            if isinstance(t, dict) and t.get("type") == "list":
                t["x-list"] = True
    for spec in d["partition-specs"]:
        spec["x-spec"] = "s"
        for f in spec["fields"]:
            f["x-pfield"] = f["name"]
    for order in d["sort-orders"]:
        order["x-order"] = order["order-id"]
        for f in order["fields"]:
            f["x-sfield"] = f["source-id"]
    for snap in d["snapshots"]:
        snap["x-snapshot"] = snap["snapshot-id"]
    for ref in d["refs"].values():
        ref["x-ref"] = "r"


def _check(d, first_snapshot_id):
    assert d["x-top"] == {"level": "table"}
    old = [s for s in d["schemas"] if "x-schema" in s]
    assert old and all(s["x-schema"] == [1, 2] for s in old)
    for s in old:  # the schemas that carried the extensions keep them on every field
        for f in s["fields"]:
            assert f["x-field"] == f"f{f['id']}", (s["schema-id"], f)
            if f["name"] == "tags":
                assert f["type"]["x-list"] is True
    assert all(spec["x-spec"] == "s" for spec in d["partition-specs"])
    assert all(f["x-pfield"] == f["name"] for spec in d["partition-specs"] for f in spec["fields"])
    assert all(o["x-order"] == o["order-id"] for o in d["sort-orders"])
    assert all(f["x-sfield"] == f["source-id"] for o in d["sort-orders"] for f in o["fields"])
    snaps = {s["snapshot-id"]: s for s in d["snapshots"]}
    assert snaps[first_snapshot_id]["x-snapshot"] == first_snapshot_id
    assert d["refs"]["main"]["x-ref"] == "r"


def test_unknown_keys_survive_load_append_schema_update_and_expire(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    data = sample(6).append_column("tags", pa.array([["a"], [], None, ["b", "c"], ["d"], []], pa.list_(pa.string())))
    t = cat.create_table("db.t", data.schema, [("qty", "identity")],
                         sort_order=SortOrder([SortField(1, "identity", "asc")], 1))
    t.append(data)
    first = t.snapshots()[0].snapshot_id
    meta_dir = tmp_path / "db" / "t" / "metadata"

    # another writer commits the same state plus its own keys as the next version
    cur = _latest(meta_dir)
    d = json.loads(cur.read_text())
    _add_extensions(d)
    n = int(cur.name[1:].split(".")[0]) + 1
    (meta_dir / f"v{n}.metadata.json").write_text(json.dumps(d))
    (meta_dir / "version-hint.text").write_text(str(n))

    t = cat.load_table("db.t")
    _check(t.metadata.to_dict(), first)

    t.append(sample(3, start=10).append_column("tags", pa.array([["x"], None, []], pa.list_(pa.string()))))
    _check(json.loads(_latest(meta_dir).read_text()), first)

    with t.update_schema() as u:
        u.add_column("extra_col", T.STRING())
    d = json.loads(_latest(meta_dir).read_text())
    _check(d, first)
    newest = max(d["schemas"], key=lambda s: s["schema-id"])
    assert "x-schema" not in newest  # keys on the schema object stay with the schemas that had them
    for f in newest["fields"]:  # keys on fields that live on move into the new schema
        if f["name"] == "extra_col":
            assert not any(k.startswith("x-") for k in f)
        else:
            assert f["x-field"] == f"f{f['id']}", f
            if f["name"] == "tags":
                assert f["type"]["x-list"] is True

    t.append(sample(2, start=20).append_column("tags", pa.array([None, None], pa.list_(pa.string())))
             .append_column("extra_col", pa.array(["p", "q"])))
    second = t.snapshots()[1].snapshot_id
    assert t.expire_snapshots(snapshot_ids=[second]) == [second]
    d = json.loads(_latest(meta_dir).read_text())
    _check(d, first)
    assert second not in {s["snapshot-id"] for s in d["snapshots"]}
    assert cat.load_table("db.t").to_arrow().num_rows == 11


def test_round_trip_of_each_object_keeps_unknown_keys():
    schema = {"type": "struct", "schema-id": 3, "x-s": 1, "fields": [
        {"id": 1, "name": "a", "required": True, "type": "long", "x-f": {"k": "v"}},
        {"id": 2, "name": "m", "required": False, "x-f": 2, "type": {
            "type": "map", "key-id": 3, "key": "string", "value-id": 4, "value-required": False, "x-map": "m",
            "value": {"type": "struct", "fields": [
                {"id": 5, "name": "n", "required": False, "type": "int", "x-nested": [5]}]}}}]}
    assert Schema.from_dict(schema).to_dict() == schema
    spec = {"spec-id": 1, "x-sp": True, "fields": [
        {"name": "a_b", "transform": "bucket[4]", "source-id": 1, "field-id": 1000, "x-pf": None}]}
    assert PartitionSpec.from_dict(spec).to_dict() == spec
    order = {"order-id": 1, "x-o": "o", "fields": [
        {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first", "x-sf": 0}]}
    assert SortOrder.from_dict(order).to_dict() == order
    # extensions are not part of equality: the same spec with and without them is the same spec
    assert PartitionSpec.from_dict(spec) == PartitionSpec.from_dict({**spec, "x-sp": False})


def test_metadata_round_trip_keeps_every_level():
    md = {
        "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "/tmp/t",
        "last-sequence-number": 1, "last-updated-ms": 1, "last-column-id": 1, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "x": 1,
                     "fields": [{"id": 1, "name": "a", "required": False, "type": "long", "x": 2}]}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": [], "x": 3}], "last-partition-id": 999,
        "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": [], "x": 4}], "properties": {},
        "current-snapshot-id": 5, "refs": {"main": {"snapshot-id": 5, "type": "branch", "x": 5}},
        "snapshots": [{"snapshot-id": 5, "sequence-number": 1, "timestamp-ms": 1, "manifest-list": "/tmp/t/m.avro",
                       "summary": {"operation": "append"}, "schema-id": 0, "x": 6}],
        "statistics": [], "partition-statistics": [], "snapshot-log": [], "metadata-log": [], "x": 7,
    }
    out = TableMetadata.from_dict(md).to_dict()
    assert out["x"] == 7 and out["schemas"][0]["x"] == 1 and out["schemas"][0]["fields"][0]["x"] == 2
    assert out["partition-specs"][0]["x"] == 3 and out["sort-orders"][0]["x"] == 4
    assert out["refs"]["main"]["x"] == 5 and out["snapshots"][0]["x"] == 6
