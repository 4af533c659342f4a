"""The SQL catalog on a real PostgreSQL: bad input, pyiceberg interop both ways, mixed concurrent writers."""
import logging
import multiprocessing as mp
import socket

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import (CatalogSchemaError, CatalogUnreachableError, CommitConflictError,
                                  InvalidArgumentError)
from paimon_engine.catalog import load_catalog
from paimon_engine.catalog.sql import SqlCatalog

SCHEMA = pa.schema([("id", pa.int64()), ("w", pa.int32())])


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_database_names_host_and_port_never_the_password(tmp_path, caplog):
    port = _closed_port()
    caplog.set_level(logging.DEBUG)
    with pytest.raises(CatalogUnreachableError) as info:
        SqlCatalog("c", uri=f"postgresql+psycopg://alice:s3cr3t-pw@127.0.0.1:{port}/db",
                   warehouse=str(tmp_path), properties={"connect-timeout": "3"})
    msg = str(info.value)
    assert f"127.0.0.1:{port}" in msg
    assert "s3cr3t-pw" not in msg and "s3cr3t-pw" not in repr(info.value)
    assert info.value.__cause__ is None
    assert "s3cr3t-pw" not in caplog.text


def test_bad_uris_are_refused_without_echoing_them():
    with pytest.raises(InvalidArgumentError, match="mysql"):
        SqlCatalog("c", uri="mysql://u:hunter22@h/db")
    with pytest.raises(InvalidArgumentError) as info:
        SqlCatalog("c", uri="postgresql+psycopg://u:hunter22@:x/db")
    assert "hunter22" not in str(info.value)


def test_password_is_not_kept_in_properties_repr_or_tables(pg_server, tmp_path):
    import sqlalchemy as sa
    with sa.create_engine(pg_server.admin_uri, isolation_level="AUTOCOMMIT").connect() as c:
        c.execute(sa.text("CREATE ROLE secretive LOGIN PASSWORD 'pw-9d1f' CREATEDB"))
        c.execute(sa.text("CREATE DATABASE secretive_db OWNER secretive"))
    uri = f"postgresql+psycopg://secretive:pw-9d1f@{pg_server.host}:{pg_server.port}/secretive_db"
    cat = load_catalog("sql", uri=uri, warehouse=str(tmp_path / "wh"), properties={"uri": uri})
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA)
    t.append(pa.table({"id": [1], "w": [0]}, schema=SCHEMA))
    assert "pw-9d1f" not in repr(cat) and "pw-9d1f" not in cat.uri
    assert all("pw-9d1f" not in str(v) for v in cat.properties.values())
    assert all("pw-9d1f" not in str(v) for v in t.metadata.properties.values())
    files = [p for p in (tmp_path / "wh").rglob("*") if p.is_file()]
    assert files and all(b"pw-9d1f" not in p.read_bytes() for p in files)


def test_catalog_table_with_a_different_schema_is_refused_unchanged(pg_uri, tmp_path):
    import sqlalchemy as sa
    engine = sa.create_engine(pg_uri)
    with engine.begin() as c:
        c.execute(sa.text("CREATE TABLE iceberg_tables (catalog_name VARCHAR(255), table_namespace VARCHAR(255), "
                          "table_name VARCHAR(255), metadata_loc VARCHAR(1000))"))
    with pytest.raises(CatalogSchemaError, match="metadata_location") as info:
        SqlCatalog("c", uri=pg_uri, warehouse=str(tmp_path))
    assert info.value.column == "metadata_location"
    insp = sa.inspect(engine)
    assert [c["name"] for c in insp.get_columns("iceberg_tables")] == [
        "catalog_name", "table_namespace", "table_name", "metadata_loc"]
    assert not insp.has_table("iceberg_namespace_properties")    # refused before anything was created
    engine.dispose()


def test_tables_created_with_the_jdbc_schema(pg_uri, tmp_path):
    import sqlalchemy as sa
    SqlCatalog("c", uri=pg_uri, warehouse=str(tmp_path))
    engine = sa.create_engine(pg_uri)
    insp = sa.inspect(engine)
    assert [c["name"] for c in insp.get_columns("iceberg_tables")] == [
        "catalog_name", "table_namespace", "table_name", "metadata_location", "previous_metadata_location",
        "iceberg_type"]
    assert insp.get_pk_constraint("iceberg_tables")["constrained_columns"] == [
        "catalog_name", "table_namespace", "table_name"]
    assert insp.get_pk_constraint("iceberg_namespace_properties")["constrained_columns"] == [
        "catalog_name", "namespace", "property_key"]
    engine.dispose()
    SqlCatalog("c", uri=pg_uri, warehouse=str(tmp_path))     # a second open finds them and changes nothing


def test_stale_base_is_a_conflict_and_the_row_is_unchanged(pg_uri, tmp_path):
    cat = SqlCatalog("c", uri=pg_uri, warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA)
    stale = cat.load_table("db.t")
    t.append(pa.table({"id": [1], "w": [0]}, schema=SCHEMA))
    current = cat.load_table("db.t").metadata.metadata_location
    with pytest.raises(CommitConflictError):
        cat.commit("db.t", stale.metadata, stale.metadata)
    assert cat.load_table("db.t").metadata.metadata_location == current


def _pyiceberg(uri, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    return PySqlCatalog("default", uri=uri, warehouse=f"file://{tmp_path}/wh")


def test_pyiceberg_writes_we_read_snapshot_by_snapshot(pg_uri, tmp_path):
    theirs = _pyiceberg(pg_uri, tmp_path)
    theirs.create_namespace("db")
    pt = theirs.create_table("db.t", SCHEMA)
    pt.append(pa.table({"id": [1, 2], "w": [0, 0]}, schema=SCHEMA))
    from pyiceberg.types import StringType
    with pt.update_schema() as upd:
        upd.add_column("note", StringType())
    pt = theirs.load_table("db.t")
    pt.append(pa.table({"id": [3], "w": [1], "note": ["x"]},
                       schema=pa.schema([("id", pa.int64()), ("w", pa.int32()), ("note", pa.large_string())])))
    ours = SqlCatalog("default", uri=pg_uri, warehouse=str(tmp_path / "wh"))
    t = ours.load_table("db.t")
    snaps = t.snapshots()
    assert len(snaps) == 2
    assert sorted(t.to_arrow(snapshot_id=snaps[0].snapshot_id).column("id").to_pylist()) == [1, 2]
    last = t.to_arrow().sort_by("id")
    assert last.column("id").to_pylist() == [1, 2, 3]
    assert last.column("note").to_pylist() == [None, None, "x"]


def test_we_write_pyiceberg_reads_snapshot_by_snapshot(pg_uri, tmp_path):
    ours = SqlCatalog("default", uri=pg_uri, warehouse=str(tmp_path / "wh"))
    ours.create_namespace("db")
    t = ours.create_table("db.t", SCHEMA)
    t.append(pa.table({"id": [1, 2], "w": [0, 0]}, schema=SCHEMA))
    with t.update_schema() as u:
        u.add_column("note", T.STRING())
    t.append(pa.table({"id": [3], "w": [1], "note": ["x"]}))
    pt = _pyiceberg(pg_uri, tmp_path).load_table("db.t")
    snaps = sorted(pt.metadata.snapshots, key=lambda s: s.sequence_number)
    assert len(snaps) == 2
    first = pt.scan(snapshot_id=snaps[0].snapshot_id).to_arrow()
    assert sorted(first.column("id").to_pylist()) == [1, 2]
    last = pt.scan().to_arrow().sort_by("id")
    assert last.column("id").to_pylist() == [1, 2, 3]
    assert last.column("note").to_pylist() == [None, None, "x"]
    assert pt.metadata_location == t.metadata.metadata_location


N_WRITERS, N_APPENDS = 8, 4


def _writer(kind, uri, wh, worker, out):
    acked = []
    for i in range(N_APPENDS):
        rid = worker * 1000 + i
        data = pa.table({"id": [rid], "w": [worker]}, schema=SCHEMA)
        if kind == "ours":
            SqlCatalog("default", uri=uri, warehouse=wh).load_table("db.t").append(data)
        else:
            from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
            from pyiceberg.exceptions import CommitFailedException
            cat = PySqlCatalog("default", uri=uri, warehouse=f"file://{wh}")
            for _ in range(200):      # pyiceberg does not retry a conflicting append itself
                try:
                    cat.load_table("db.t").append(data)
                    break
                except CommitFailedException:
                    continue
            else:
                continue
        acked.append(rid)
    out.put((worker, acked))


def test_eight_mixed_writers_lose_nothing(pg_uri, tmp_path):
    wh = str(tmp_path / "wh")
    ours = SqlCatalog("default", uri=pg_uri, warehouse=wh)
    ours.create_namespace("db")
    ours.create_table("db.t", SCHEMA, properties={"commit.retry.num-retries": "200",
                                                  "commit.retry.min-wait-ms": "5",
                                                  "commit.retry.max-wait-ms": "200"})
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=("ours" if w % 2 else "theirs", pg_uri, wh, w, out))
             for w in range(N_WRITERS)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    acked = sorted(r for rows in results.values() for r in rows)
    assert len(acked) == N_WRITERS * N_APPENDS
    ids = sorted(ours.load_table("db.t").to_arrow().column("id").to_pylist())
    assert ids == acked                                   # every acknowledged append, each exactly once
    theirs_ids = sorted(_pyiceberg(pg_uri, tmp_path).load_table("db.t").scan().to_arrow().column("id").to_pylist())
    assert theirs_ids == acked
