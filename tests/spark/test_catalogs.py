"""Spark reads and writes tables of every catalog kind: SQLite, PostgreSQL (the driver commits through the
database, executors only read files) and the Iceberg REST protocol (our server in front of a SQL catalog)."""
import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.spark import read_table, write_table
from paimon_engine.catalog import load_catalog
from tests.table.pg_fixture import pg_server, pg_uri  # noqa: F401  (fixtures)

pytestmark = pytest.mark.spark


def _fill(cat):
    cat.create_namespace("db")
    data = pa.table({"id": pa.array(np.arange(1000), pa.int64()), "k": pa.array(np.arange(1000) % 4, pa.int32())})
    t = cat.create_table("db.t", data.schema, [("k", "identity")])
    t.append(data)
    t.delete("id < 10")
    return t


def _roundtrip(spark, t, props):
    want = sorted(t.scan().to_arrow().column("id").to_pylist())
    df = read_table(spark, "db.t", **props)
    assert sorted(r.id for r in df.select("id").collect()) == want
    assert read_table(spark, "db.t", row_filter="k = 1", **props).count() == sum(1 for i in want if i % 4 == 1)
    more = spark.range(1000, 1100).selectExpr("id", "cast(id % 4 as int) AS k")
    write_table(more, "db.t", mode="append", **props)
    t.refresh()
    assert t.scan().count() == len(want) + 100
    assert read_table(spark, "db.t", **props).count() == len(want) + 100


def test_postgresql_catalog(spark, pg_uri, tmp_path):
    cat = load_catalog("pg", type="sql", uri=pg_uri, warehouse=str(tmp_path / "wh"))
    t = _fill(cat)
    _roundtrip(spark, t, {"uri": pg_uri, "warehouse": str(tmp_path / "wh"), "name": "pg",
                          "connect_timeout": 5})
    # the data source (Spark 4: Python data sources) takes the same catalog options
    import importlib.util
    if importlib.util.find_spec("pyspark.sql.datasource") is not None:
        df = (spark.read.format("paimon_engine").option("catalog.uri", pg_uri).option("catalog.name", "pg")
              .option("catalog.warehouse", str(tmp_path / "wh")).load("db.t"))
        assert df.count() == t.scan().count()


def test_rest_catalog(spark, tmp_path):
    from paimon_engine.rest.server import RestServer
    backing = load_catalog("default", type="sql", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=str(tmp_path / "wh"))
    _fill(backing)
    with RestServer(backing, token="s3cret") as server:
        rest = load_catalog("r", type="rest", uri=server.uri, token="s3cret")
        t = rest.load_table("db.t")
        _roundtrip(spark, t, {"uri": server.uri, "token": "s3cret", "type": "rest"})
        assert backing.load_table("db.t").scan().count() == t.scan().count()


def test_missing_table_names_the_catalog_without_its_password(spark, pg_uri, tmp_path):
    from paimon_engine.errors import NotFoundError
    load_catalog("pg", type="sql", uri=pg_uri, warehouse=str(tmp_path / "wh")).create_namespace("db")
    with pytest.raises(NotFoundError) as ei:
        read_table(spark, "db.nope", uri=pg_uri, warehouse=str(tmp_path / "wh"))
    msg = str(ei.value)
    assert "db.nope" in msg and "SQL catalog" in msg
    from sqlalchemy.engine import make_url
    password = make_url(pg_uri).password
    assert not password or password not in msg
