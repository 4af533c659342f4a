"""table.inspect: pyiceberg 0.12's metadata tables, compared column by column with pyiceberg's own on the same
tables (written by pyiceberg, then by us with position and equality deletes)."""
import pyarrow as pa
import pytest

from paimon_engine.catalog import load_catalog
from paimon_engine.errors import NotFoundError

pyiceberg = pytest.importorskip("pyiceberg")

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                    pa.field("score", pa.float64())])
TABLES = ["snapshots", "refs", "history", "manifests", "files", "data_files", "delete_files", "entries",
          "partitions"]


def _same(theirs, ours):
    for name in TABLES:
        a, b = getattr(theirs.inspect, name)(), getattr(ours.inspect, name)()
        assert a.schema == b.schema, name
        assert a.to_pylist() == b.to_pylist(), name


def test_metadata_tables_match_pyiceberg(tmp_path):
    from pyiceberg.catalog import load_catalog as pyiceberg_catalog
    uri = f"sqlite:///{tmp_path}/c.db"
    theirs = pyiceberg_catalog("x", type="sql", uri=uri, warehouse=str(tmp_path))
    theirs.create_namespace("ns")
    t1 = theirs.create_table("ns.t", schema=SCHEMA)
    with t1.update_spec() as u:
        u.add_identity("name")
    t1.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", None],
                        "score": [1.0, float("nan"), 2.0]}, schema=SCHEMA))
    t1.append(pa.table({"id": pa.array([4], pa.int64()), "name": ["a"], "score": [1.5]}, schema=SCHEMA))
    t1.delete("id = 2")
    t1.manage_snapshots().create_tag(t1.current_snapshot().snapshot_id, "v1").commit()
    ours = load_catalog("x", type="sql", uri=uri, warehouse=str(tmp_path))
    t2 = ours.load_table("ns.t")
    _same(theirs.load_table("ns.t"), t2)

    t2.append(pa.table({"id": pa.array([5, 6, 7], pa.int64()), "name": ["a", "c", "c"],
                        "score": [1.0, 3.0, 2.0]}, schema=SCHEMA))
    t2.delete("id = 6")                      # a position-delete file
    t2.upsert(pa.table({"id": pa.array([7, 9], pa.int64()), "name": ["c", "d"], "score": [9.0, 2.0]},
                       schema=SCHEMA), join_cols=["id"])   # an equality-delete file
    t1 = theirs.load_table("ns.t")
    _same(t1, t2)
    assert t2.inspect.delete_files().num_rows == 2
    assert sorted(t2.inspect.delete_files()["content"].to_pylist()) == [1, 2]
    assert t2.inspect.partitions(row_filter="name = 'c'").to_pylist() == \
        t1.inspect.partitions(row_filter="name = 'c'").to_pylist()
    first = t2.snapshots()[0].snapshot_id
    assert t2.inspect.files(first).to_pylist() == t1.inspect.files(first).to_pylist()
    assert t2.inspect.entries(first).to_pylist() == t1.inspect.entries(first).to_pylist()


def test_values_without_pyiceberg(tmp_path):
    cat = load_catalog("x", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path))
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA)
    assert t.inspect.snapshots().num_rows == 0
    assert t.inspect.files().num_rows == 0
    assert t.inspect.manifests().num_rows == 0
    with pytest.raises(NotFoundError):
        t.inspect.entries()
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", None], "score": [0.5, 2.5]},
                      schema=SCHEMA))
    s = t.current_snapshot()
    snaps = t.inspect.snapshots().to_pylist()
    assert [(r["snapshot_id"], r["operation"], dict(r["summary"])["added-records"]) for r in snaps] == \
        [(s.snapshot_id, "append", "2")]
    assert "operation" not in dict(snaps[0]["summary"])
    refs = t.inspect.refs().to_pylist()
    assert refs == [{"name": "main", "type": "BRANCH", "snapshot_id": s.snapshot_id,
                     "max_reference_age_in_ms": None, "min_snapshots_to_keep": None,
                     "max_snapshot_age_in_ms": None}]
    f = t.inspect.files().to_pylist()[0]
    assert f["record_count"] == 2 and f["file_format"] == "PARQUET"
    assert f["readable_metrics"]["score"]["lower_bound"] == 0.5
    assert f["readable_metrics"]["score"]["upper_bound"] == 2.5
    assert f["readable_metrics"]["name"]["null_value_count"] == 1
    (p,) = t.inspect.partitions().to_pylist()
    assert (p["record_count"], p["file_count"], p["last_updated_snapshot_id"]) == (2, 1, s.snapshot_id)
    assert "partition" not in t.inspect.partitions().column_names      # unpartitioned, as pyiceberg
    with pytest.raises(NotFoundError):
        t.inspect.files(12345)
