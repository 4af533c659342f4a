"""Sequences of queries on one DataFrame or view: every query equals the engine's own read of the table at that
moment, whatever Spark reuses between queries."""

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.expressions import col
from paimon_engine.catalog import SqlCatalog

pytestmark = pytest.mark.spark
pytest.importorskip("pyspark.sql.datasource", reason="Python data sources need Spark 4 (read_table/write_table cover 3.5)")


@pytest.fixture()
def plain(tmp_path):
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=str(tmp_path))
    cat.create_namespace("db")
    n = 200_000
    data = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                     "k": pa.array(np.arange(n) % 1000, pa.int32()),
                     "s": pa.array([f"s{i % 13}" for i in range(n)])})
    t = cat.create_table("db.plain", data.schema, properties={"write.target-file-size-bytes": str(300_000)})
    t.append(data)
    t.delete(col("id") < 50)                                        # position deletes
    opts = {"catalog.uri": f"sqlite:///{tmp_path}/cat.db", "catalog.warehouse": str(tmp_path)}
    return cat, t, opts


def _load(spark, opts, name="db.plain", **extra):
    r = spark.read.format("paimon_engine")
    for k, v in {**opts, **extra}.items():
        r = r.option(k, v)
    return r.load(name)


def _engine_count(t, flt=None):
    t.refresh()
    return t.scan(filter=flt).count()


@pytest.mark.parametrize("pushdown_conf", ["true", "false"])
def test_filtered_then_unfiltered_on_one_dataframe(spark, plain, pushdown_conf):
    cat, t, opts = plain
    spark.conf.set("spark.sql.python.filterPushdown.enabled", pushdown_conf)
    try:
        df = _load(spark, opts)
        assert df.filter("k < 10").count() == _engine_count(t, col("k") < 10)
        assert df.count() == _engine_count(t) == 200_000 - 50
        assert df.filter("k = 5").count() == _engine_count(t, col("k") == 5)
        assert df.filter("s = 's3' and k >= 990").count() == _engine_count(t, (col("s") == "s3") & (col("k") >= 990))
        assert df.count() == 200_000 - 50
        got = sorted(r.id for r in df.filter("id < 120").select("id").collect())
        assert got == list(range(50, 120))
    finally:
        spark.conf.unset("spark.sql.python.filterPushdown.enabled")


def test_sql_view_filtered_then_unfiltered(spark, plain):
    cat, t, opts = plain
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW plain_v USING paimon_engine OPTIONS (path 'db.plain', "
              f"`catalog.uri` '{opts['catalog.uri']}', `catalog.warehouse` '{opts['catalog.warehouse']}')")
    one = spark.sql("SELECT count(*) AS c FROM plain_v WHERE k = 5").collect()[0].c
    assert one == _engine_count(t, col("k") == 5)
    assert spark.sql("SELECT count(*) AS c FROM plain_v").collect()[0].c == _engine_count(t)
    assert spark.sql("SELECT count(*) AS c FROM plain_v WHERE k > 900").collect()[0].c == \
        _engine_count(t, col("k") > 900)
    assert spark.sql("SELECT sum(id) AS c FROM plain_v").collect()[0].c == sum(range(50, 200_000))


def test_new_commit_is_seen_by_the_next_query_unless_pinned(spark, plain):
    cat, t, opts = plain
    first = t.current_snapshot().snapshot_id
    df = _load(spark, opts)
    pinned = _load(spark, opts, **{"snapshot-id": str(first)})
    assert df.count() == pinned.count() == _engine_count(t)
    t.append(pa.table({"id": pa.array([10**9, 10**9 + 1], pa.int64()), "k": pa.array([5, 6], pa.int32()),
                       "s": ["new", "new"]}))
    assert df.count() == _engine_count(t) == 200_000 - 50 + 2
    assert df.filter("k = 5").count() == _engine_count(t, col("k") == 5)
    assert sorted(r.id for r in df.filter("s = 'new'").collect()) == [10**9, 10**9 + 1]
    assert pinned.count() == 200_000 - 50
    t.delete(col("k") == 6)
    assert df.count() == _engine_count(t) == 200_000 - 50 + 2 - 200     # k = 6: 199 old rows and a new one
    assert pinned.count() == 200_000 - 50


def test_table_that_was_empty_when_first_planned(spark, tmp_path):
    from paimon_engine.catalog import FileSystemCatalog
    loc = str(tmp_path / "t")
    t = FileSystemCatalog(str(tmp_path)).create_table_at(loc, pa.schema([("id", pa.int64())]))
    df = spark.read.format("paimon_engine").load(loc)
    assert df.count() == 0
    t.append(pa.table({"id": pa.array(range(10), pa.int64())}))
    assert df.count() == 10


def test_default_conf_reads_filtered_and_logs_how_to_prune(spark, plain, caplog):
    """Without spark.sql.python.filterPushdown.enabled a filtered read works (Spark filters)."""
    cat, t, opts = plain
    assert spark.conf.get("spark.sql.python.filterPushdown.enabled", "false") == "false"
    df = _load(spark, opts)
    assert df.filter("k < 3").count() == _engine_count(t, col("k") < 3)
    import logging
    from paimon_engine.spark import source
    source._told.discard("off")
    with caplog.at_level(logging.WARNING, logger="paimon_engine.spark"):
        source.PaimonEngineDataSource({"path": "x"}).reader(None)
        source.PaimonEngineDataSource({"path": "x"}).reader(None)
    msgs = [r.getMessage() for r in caplog.records if r.name == "paimon_engine.spark"]
    assert len(msgs) == 1 and "read_table" in msgs[0] and "pushdown" in msgs[0]


def test_pushdown_option_values(spark, plain):
    from paimon_engine.errors import InvalidArgumentError
    from paimon_engine.spark import source
    with pytest.raises(InvalidArgumentError, match="pushdown must be one of true, false"):
        source.PaimonEngineDataSource({"path": "x", "pushdown": "maybe"}).reader(None)
    assert isinstance(source.PaimonEngineDataSource({"path": "x", "pushdown": "true"}).reader(None),
                      source.PushdownTableReader)
    default = source.PaimonEngineDataSource({"path": "x"}).reader(None)
    assert isinstance(default, source.PushdownTableReader) == (source.spark_version() > (4, 3))
