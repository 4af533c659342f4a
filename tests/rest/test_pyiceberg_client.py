"""pyiceberg's RestCatalog (a client written elsewhere) against our server: every snapshot it writes reads the
same through the server and through our own catalog underneath."""
import pyarrow as pa
import pytest

pyiceberg_rest = pytest.importorskip("pyiceberg.catalog.rest")

from pyiceberg.exceptions import CommitFailedException, NoSuchNamespaceError  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402


def _rows(tbl):
    return sorted(tbl.to_pylist(), key=lambda r: r["id"])


def _catalog(server, **kw):
    return pyiceberg_rest.RestCatalog("ours", uri=server.uri, **kw)


SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "cat", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat"))


def test_namespaces_and_tables_through_pyiceberg(server, backing):
    rc = _catalog(server)
    rc.create_namespace("db", {"owner": "alice"})
    rc.create_namespace(("db", "sub"))
    assert rc.list_namespaces() == [("db",)]
    assert rc.list_namespaces("db") == [("db", "sub")]
    assert rc.load_namespace_properties("db") == {"owner": "alice"}
    summary = rc.update_namespace_properties("db", removals={"owner", "nope"}, updates={"team": "x"})
    assert (summary.removed, summary.updated, summary.missing) == (["owner"], ["team"], ["nope"])
    assert backing.load_namespace_properties("db") == {"team": "x"}
    assert rc.namespace_exists("db") and not rc.namespace_exists("other")
    with pytest.raises(NoSuchNamespaceError):
        rc.load_namespace_properties("other")

    rc.create_table("db.t", SCHEMA, partition_spec=SPEC)
    assert rc.list_tables("db") == [("db", "t")]
    assert rc.table_exists("db.t") and not rc.table_exists("db.nope")
    rc.rename_table("db.t", "db.u")
    assert backing.list_tables("db") == [("db", "u")]
    rc.drop_table("db.u")
    assert backing.list_tables("db") == []
    rc.drop_namespace(("db", "sub"))
    assert not backing.namespace_exists(("db", "sub"))


def test_every_snapshot_pyiceberg_writes_reads_the_same_through_our_catalog(server, backing):
    rc = _catalog(server)
    rc.create_namespace("db")
    t = rc.create_table("db.t", SCHEMA, partition_spec=SPEC, properties={"k": "v"})
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "cat": ["a", "b", "a"]}))
    t.append(pa.table({"id": pa.array([4, 5], pa.int64()), "cat": ["b", "c"]}))
    t.delete("id = 2")
    with t.update_schema() as update:
        update.add_column("note", StringType())
    t.append(pa.table({"id": pa.array([6], pa.int64()), "cat": ["c"], "note": ["new"]}))
    t = rc.load_table("db.t")

    ours = backing.load_table("db.t")
    assert ours.metadata.table_uuid == str(t.metadata.table_uuid)
    assert [s.snapshot_id for s in ours.metadata.snapshots] == [s.snapshot_id for s in t.metadata.snapshots]
    assert len(ours.metadata.snapshots) == 4
    assert ours.metadata.spec().fields[0].name == "cat"
    assert ours.metadata.properties["k"] == "v"
    assert [f.name for f in ours.metadata.schema().fields] == ["id", "cat", "note"]
    for snap in t.metadata.snapshots:
        theirs = _rows(t.scan(snapshot_id=snap.snapshot_id).to_arrow())
        mine = _rows(ours.scan(snapshot_id=snap.snapshot_id).to_arrow())
        mine = [{k: r.get(k) for k in theirs[0]} for r in mine] if theirs else mine
        assert mine == theirs, snap.snapshot_id
    assert [r["id"] for r in _rows(ours.scan().to_arrow())] == [1, 3, 4, 5, 6]
    # and the other way: what we append through the catalog underneath, pyiceberg reads through the server
    ours.append(pa.table({"id": pa.array([7], pa.int64()), "cat": ["a"], "note": [None]}))
    assert [r["id"] for r in _rows(rc.load_table("db.t").scan().to_arrow())] == [1, 3, 4, 5, 6, 7]


def test_stage_create_then_commit_creates_the_table(server, backing):
    rc = _catalog(server)
    rc.create_namespace("db")
    txn = rc.create_table_transaction("db.staged", SCHEMA, partition_spec=SPEC)
    assert not backing.table_exists("db.staged")
    txn.append(pa.table({"id": pa.array([1, 2], pa.int64()), "cat": ["a", "b"]}))
    txn.commit_transaction()
    ours = backing.load_table("db.staged")
    assert sorted(ours.scan().to_arrow().column("id").to_pylist()) == [1, 2]
    assert ours.metadata.spec().fields[0].name == "cat"


def test_a_stale_schema_change_gets_409_and_changes_nothing(server, backing):
    rc = _catalog(server)
    rc.create_namespace("db")
    rc.create_table("db.t", SCHEMA)
    first, second = rc.load_table("db.t"), rc.load_table("db.t")
    with first.update_schema() as update:
        update.add_column("a", StringType())
    before = backing.load_table("db.t").metadata.metadata_location
    with pytest.raises(CommitFailedException, match="requirement failed"):
        with second.update_schema() as update:
            update.add_column("b", StringType())
    after = backing.load_table("db.t").metadata
    assert after.metadata_location == before
    assert [f.name for f in after.schema().fields] == ["id", "cat", "a"]


def test_pyiceberg_with_the_token_and_without(token_server):
    from pyiceberg.exceptions import UnauthorizedError
    from .conftest import TOKEN
    rc = _catalog(token_server, token=TOKEN)
    rc.create_namespace("db")
    assert rc.list_namespaces() == [("db",)]
    with pytest.raises(UnauthorizedError, match="bearer token"):
        _catalog(token_server, token="wrong").list_namespaces()
    with pytest.raises(UnauthorizedError, match="bearer token"):
        _catalog(token_server).list_namespaces()


def test_pyiceberg_against_a_file_system_catalog(tmp_path):
    from paimon_engine.rest.server import RestServer
    from paimon_engine.catalog import FileSystemCatalog
    backing = FileSystemCatalog(str(tmp_path / "wh"))
    with RestServer(backing) as srv:
        rc = _catalog(srv)
        rc.create_namespace("db")
        t = rc.create_table("db.t", SCHEMA, partition_spec=SPEC)
        t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "cat": ["a", "b"]}))
        t.append(pa.table({"id": pa.array([3], pa.int64()), "cat": ["a"]}))
        ours = backing.load_table("db.t")
        assert ours.metadata.metadata_location.endswith("v3.metadata.json")
        assert [r["id"] for r in _rows(ours.scan().to_arrow())] == [1, 2, 3]
        assert rc.load_namespace_properties("db") == {}
