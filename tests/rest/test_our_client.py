"""Our RestCatalog against our server: namespaces, tables, commits as requirements + updates, what pyiceberg
wrote, staged creation, OAuth2 client credentials, and 8 concurrent writers."""
import threading

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import (AlreadyExistsError, CommitFailedError, InvalidIdentifierError,
                                  NamespaceNotEmptyError, NotFoundError, PaimonEngineError)
from paimon_engine.catalog.rest import RestCatalog
from paimon_engine.rest.server import RestServer
from paimon_engine.catalog import load_catalog

from .conftest import TOKEN

DATA = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "cat": ["a", "b", "a"]})


def test_namespaces_and_tables(server, backing):
    rc = load_catalog("mine", type="rest", uri=server.uri)
    assert isinstance(rc, RestCatalog) and rc.name == "mine"
    rc.create_namespace("db", {"owner": "bob"})
    rc.create_namespace(("db", "inner"))
    assert rc.list_namespaces() == [("db",)] and rc.list_namespaces("db") == [("db", "inner")]
    assert rc.namespace_exists("db") and not rc.namespace_exists("nope")
    assert rc.load_namespace_properties("db") == {"owner": "bob"}
    assert rc.update_namespace_properties("db", ["owner"], {"t": "1"})["removed"] == ["owner"]
    with pytest.raises(AlreadyExistsError):
        rc.create_namespace("db")
    t = rc.create_table("db.t", DATA.schema, [("cat", "identity")], properties={"p": "q"})
    assert backing.load_table("db.t").metadata.table_uuid == t.metadata.table_uuid
    with pytest.raises(AlreadyExistsError):
        rc.create_table("db.t", DATA.schema)
    assert rc.list_tables("db") == [("db", "t")] and rc.table_exists("db.t") and not rc.table_exists("db.x")
    with pytest.raises(NotFoundError):
        rc.load_table("db.x")
    with pytest.raises(InvalidIdentifierError):
        rc.load_table("db.a/b")
    with pytest.raises(NamespaceNotEmptyError):
        rc.drop_namespace("db")
    t.append(DATA)
    assert sorted(backing.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    renamed = rc.rename_table("db.t", "db.u")
    assert renamed.scan().to_arrow().num_rows == 3 and backing.list_tables("db") == [("db", "u")]
    copy = rc.register_table("db.copy", renamed.metadata.metadata_location)
    assert copy.scan().to_arrow().num_rows == 3
    rc.drop_table("db.copy")
    rc.drop_table("db.u", purge=True)
    assert backing.list_tables("db") == []


def test_table_operations_commit_as_requirements_and_updates(server, backing):
    rc = RestCatalog(uri=server.uri)
    rc.create_namespace("db")
    t = rc.create_table("db.t", DATA.schema, [("cat", "identity")])
    t.append(DATA)
    t.append(pa.table({"id": pa.array([4], pa.int64()), "cat": ["c"]}))
    t.delete("id = 2")
    with t.update_schema() as update:
        update.add_column("note", T.STRING())
    t.append(pa.table({"id": pa.array([5], pa.int64()), "cat": ["c"], "note": ["x"]}))
    mine = rc.load_table("db.t")
    local = backing.load_table("db.t")
    assert [s.snapshot_id for s in mine.metadata.snapshots] == [s.snapshot_id for s in local.metadata.snapshots]
    assert len(local.metadata.snapshots) == 4
    for s in local.metadata.snapshots:
        a = mine.scan(snapshot_id=s.snapshot_id).to_arrow().sort_by("id")
        b = local.scan(snapshot_id=s.snapshot_id).to_arrow().sort_by("id")
        assert a.equals(b)
    assert local.scan().to_arrow().sort_by("id").column("id").to_pylist() == [1, 3, 4, 5]
    assert [f.name for f in local.metadata.schema().fields] == ["id", "cat", "note"]


def test_our_client_reads_what_pyiceberg_wrote(server, backing):
    from pyiceberg.catalog.rest import RestCatalog as PyIcebergRestCatalog
    py = PyIcebergRestCatalog("py", uri=server.uri)
    py.create_namespace("db")
    pt = py.create_table("db.t", DATA.schema)
    pt.append(DATA)
    pt.delete("id = 1")
    pt.append(pa.table({"id": pa.array([9], pa.int64()), "cat": ["z"]}))
    pt = py.load_table("db.t")
    ours = RestCatalog(uri=server.uri).load_table("db.t")
    for s in pt.metadata.snapshots:
        theirs = pt.scan(snapshot_id=s.snapshot_id).to_arrow().sort_by("id")
        mine = ours.scan(snapshot_id=s.snapshot_id).to_arrow().sort_by("id")
        assert mine.to_pylist() == theirs.to_pylist(), s.snapshot_id
    # and pyiceberg reads what we append
    ours.append(pa.table({"id": pa.array([10], pa.int64()), "cat": ["y"]}))
    assert sorted(py.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [2, 3, 9, 10]


def test_staged_create_lands_with_its_first_commit(server, backing):
    rc = RestCatalog(uri=server.uri)
    rc.create_namespace("db")
    staged = rc.create_table("db.ctas", DATA.schema, stage=True)
    assert not backing.table_exists("db.ctas")
    staged.append(DATA)
    assert backing.load_table("db.ctas").scan().to_arrow().num_rows == 3
    again = rc.create_table("db.ctas2", DATA.schema, stage=True)
    rc.create_table("db.ctas2", DATA.schema)          # someone else creates it first
    with pytest.raises(CommitFailedError):
        again.append(DATA)


def test_token_prefix_and_oauth2_client_credentials(backing):
    with RestServer(backing, token=TOKEN, prefix="cat1", credential="app:s3cret") as srv:
        with pytest.raises(PaimonEngineError, match="401"):
            RestCatalog(uri=srv.uri)
        with pytest.raises(PaimonEngineError, match="refused the credential"):
            RestCatalog(uri=srv.uri, credential="app:wrong")
        rc = RestCatalog(uri=srv.uri, credential="app:s3cret")
        assert rc.prefix == "cat1"
        rc.create_namespace("db")
        rc._token = "expired-or-revoked"          # the next request gets 401, exchanges again and succeeds
        assert rc.list_namespaces() == [("db",)]
        assert RestCatalog(uri=srv.uri, token=TOKEN).list_namespaces() == [("db",)]
        from pyiceberg.catalog.rest import RestCatalog as PyIcebergRestCatalog
        py = PyIcebergRestCatalog("py", uri=srv.uri, credential="app:s3cret",
                                  **{"oauth2-server-uri": f"{srv.uri}/v1/oauth/tokens"})
        assert py.list_namespaces() == [("db",)]


def test_eight_concurrent_writers_lose_no_append(server, backing):
    rc = RestCatalog(uri=server.uri)
    rc.create_namespace("db")
    rc.create_table("db.t", DATA.schema, properties={"commit.retry.num-retries": "100",
                                                     "commit.retry.min-wait-ms": "5",
                                                     "commit.retry.max-wait-ms": "200"})
    errors = []

    def writer(i):
        try:
            client = RestCatalog(uri=server.uri)
            table = client.load_table("db.t")
            for j in range(3):
                table.append(pa.table({"id": pa.array([i * 100 + j], pa.int64()), "cat": [f"w{i}"]}))
        except BaseException as exc:      # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    ids = sorted(backing.load_table("db.t").scan().to_arrow().column("id").to_pylist())
    assert ids == sorted(i * 100 + j for i in range(8) for j in range(3))
    assert len(backing.load_table("db.t").metadata.snapshots) == 24
