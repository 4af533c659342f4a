"""table.transaction(), update_spec() and update_schema() as pyiceberg's context managers."""
import os

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.catalog import load_catalog
from paimon_engine.errors import CommitFailedError, SchemaError

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def _rows(ids, names=None):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": names or [f"n{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture(params=["sql", "filesystem"])
def table(request, tmp_path):
    if request.param == "sql":
        cat = load_catalog("x", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    else:
        cat = load_catalog("x", type="filesystem", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA)
    t.append(_rows([1, 2, 3]))
    return cat, t


def _files(root):
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def test_one_metadata_version_with_snapshots_in_order(table):
    cat, t = table
    log_before = len(t.metadata.metadata_log)
    first = t.current_snapshot().snapshot_id
    with t.transaction() as tx:
        tx.append(_rows([4]))
        tx.delete(delete_filter="id = 1")
        tx.overwrite(_rows([9]), overwrite_filter="id = 2")
        with tx.update_schema() as u:
            u.add_column("extra", T.IntType())
        tx.set_properties({"owner": "me", "team": "x"})
        tx.remove_properties("team")
        # nothing is visible to others before the commit
        assert cat.load_table("ns.t").current_snapshot().snapshot_id == first
    assert len(t.metadata.metadata_log) == log_before + 1
    snaps = t.snapshots()
    assert [s.operation for s in snaps] == ["append", "append", "delete", "overwrite"]
    assert [s.parent_snapshot_id for s in snaps[1:]] == [s.snapshot_id for s in snaps[:-1]]
    assert [s.sequence_number for s in snaps] == [1, 2, 3, 4]
    assert t.properties.get("owner") == "me" and "team" not in t.properties
    again = cat.load_table("ns.t")
    assert sorted(r["id"] for r in again.scan().to_arrow().to_pylist()) == [3, 4, 9]
    assert again.schema().names == ["id", "name", "extra"]
    assert [r["made_current_at"] is not None for r in again.inspect.history().to_pylist()] == [True] * 4


def test_forced_conflict_leaves_table_and_removes_files(table, tmp_path):
    cat, t = table
    root = t.location()
    before = _files(root)
    tx = t.transaction()
    tx.append(_rows([10, 11]))
    tx.delete(delete_filter="id = 3")
    tx.set_properties(owner="tx")
    written = _files(root) - before
    assert any(p.endswith(".parquet") for p in written)        # data, manifests and manifest lists
    assert sum("/snap-" in p for p in written) == 2
    other = cat.load_table("ns.t")
    other.append(_rows([20]))              # a concurrent commit wins
    theirs = _files(root) - before - written
    with pytest.raises(CommitFailedError, match="changed since the transaction started"):
        tx.commit_transaction()
    assert _files(root) == before | theirs  # every file the transaction wrote is gone, the others' stay
    now = cat.load_table("ns.t")
    assert now.metadata_location == other.metadata_location
    assert sorted(r["id"] for r in now.scan().to_arrow().to_pylist()) == [1, 2, 3, 20]
    assert "owner" not in now.properties


def test_exception_in_block_rolls_back(table):
    cat, t = table
    root = t.location()
    before = _files(root)
    loc = t.metadata_location
    with pytest.raises(RuntimeError):
        with t.transaction() as tx:
            tx.append(_rows([7]))
            raise RuntimeError("stop")
    assert _files(root) == before
    assert cat.load_table("ns.t").metadata_location == loc
    with pytest.raises(Exception):
        tx.append(_rows([8]))              # closed


def test_update_spec_builder(table):
    cat, t = table
    with t.update_spec() as u:
        u.add_identity("name")
        u.add_field("id", "bucket[4]", "id_b")
    assert [(f.name, str(f.transform)) for f in t.spec().fields] == [("name", "identity"), ("id_b", "bucket[4]")]
    with t.update_spec() as u:
        u.rename_field("id_b", "shard")
        u.remove_field("name")
    assert [(f.name, str(f.transform)) for f in t.spec().fields] == [("shard", "bucket[4]")]
    t.append(_rows([5]))
    assert cat.load_table("ns.t").scan(row_filter="id = 5").count() == 1
    with pytest.raises(Exception):
        with t.update_spec() as u:
            u.remove_field("nope")


def test_update_schema_pyiceberg_calls(table):
    cat, t = table
    with t.update_schema() as u:
        u.add_column("score", T.IntType(), "a doc")
        u.rename_column("name", "label")
    with t.update_schema() as u:
        u.update_column("score", T.BigIntType(), None, "new doc")     # pyiceberg order: type, required, doc
        u.delete_column("label")
    f = t.schema().find_field("score")
    assert isinstance(f.type, T.BigIntType) and f.description == "new doc"
    assert t.schema().names == ["id", "score"]
    with t.update_schema() as u:
        u.union_by_name(pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("score", pa.int64()),
                                   pa.field("tags", pa.struct([pa.field("a", pa.string())]))]))
    assert t.schema().names == ["id", "score", "tags"]
    with t.update_schema() as u:
        u.union_by_name(pa.schema([pa.field("tags", pa.struct([pa.field("b", pa.int32())]))]))
    assert [f.name for f in t.schema().find_field("tags").type.fields] == ["a", "b"]
    with pytest.raises(SchemaError, match="score"):
        t.update_schema().union_by_name(pa.schema([pa.field("score", pa.string())]))
