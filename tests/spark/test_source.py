"""The paimon_engine data source on a local[2] session."""

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.expressions import col
from paimon_engine.catalog import SqlCatalog

pytestmark = pytest.mark.spark
pytest.importorskip("pyspark.sql.datasource", reason="Python data sources need Spark 4 (read_table/write_table cover 3.5)")


def _sorted(tbl, key="id"):
    return tbl.sort_by(key)


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    """A partitioned table with position and equality deletes, three snapshots."""
    wh = tmp_path_factory.mktemp("wh")
    cat = SqlCatalog("default", uri=f"sqlite:///{wh}/cat.db", warehouse=str(wh))
    cat.create_namespace("db")
    n = 20_000
    rng = np.random.default_rng(3)
    data = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                     "k": pa.array(np.arange(n) % 4, pa.int32()),
                     "name": pa.array([f"n{i % 97}" for i in range(n)]),
                     "v": pa.array(rng.random(n))})
    t = cat.create_table("db.events", data.schema, [("k", "identity")],
                         properties={"write.target-file-size-bytes": str(60_000)})
    t.append(data)
    first = t.current_snapshot().snapshot_id
    t.delete(col("id") < 100)                                    # position deletes
    t.delete(col("name") == "n5", mode="equality", equality_columns=["name"])   # equality deletes
    opts = {"catalog.uri": f"sqlite:///{wh}/cat.db", "catalog.warehouse": str(wh)}
    return t, first, opts


def _read(spark, opts, path, **extra):
    r = spark.read.format("paimon_engine")
    for k, v in {**opts, **extra}.items():
        r = r.option(k, v)
    return r.load(path)


def test_auto_registration_and_read_equals_scan(spark, events):
    t, first, opts = events
    df = _read(spark, opts, "db.events")
    got = pa.Table.from_pandas(df.toPandas(), preserve_index=False)
    want = t.scan().to_arrow()
    assert got.num_rows == want.num_rows == 20_000 - 100 - sum(1 for i in range(100, 20_000) if i % 97 == 5)
    g, w = _sorted(got), _sorted(want)
    for c in ("id", "k", "name", "v"):
        assert g.column(c).to_pylist() == w.column(c).to_pylist()
    assert [f.name for f in df.schema.fields] == ["id", "k", "name", "v"]
    assert df.schema["id"].dataType.typeName() == "long" and df.schema["k"].dataType.typeName() == "integer"


def test_pushdown_prunes_and_filters_stay_correct(spark, events):
    """Option pushdown=true with Spark's pushdown conf: filters prune the planned tasks (one fresh DataFrame per
    query, as docs/spark.md asks up to Spark 4.3)."""
    t, first, opts = events
    on = {"pushdown": "true", "split-size": "1"}
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        full = _read(spark, opts, "db.events", **on)
        pruned = _read(spark, opts, "db.events", **on).filter("k = 1")
        assert pruned.rdd.getNumPartitions() == len(t.scan(filter=col("k") == 1).plan_files())
        assert pruned.rdd.getNumPartitions() < full.rdd.getNumPartitions()
        rows = _read(spark, opts, "db.events", pushdown="true").filter("k = 1").filter("id < 300 and v >= 0") \
            .select("id").collect()
        assert sorted(r.id for r in rows) == [i for i in range(100, 300) if i % 4 == 1 and i % 97 != 5]
        # not pushable (or): Spark evaluates it
        full = _read(spark, opts, "db.events", pushdown="true")
        assert full.filter("k = 1 or id = 150").count() == \
            t.scan(filter=(col("k") == 1) | (col("id") == 150)).count()
    finally:
        spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    # without pushdown the same queries give the same rows; Spark filters
    df = _read(spark, opts, "db.events")
    assert sorted(r.id for r in df.filter("k = 1 and id < 300").select("id").collect()) == \
        [i for i in range(100, 300) if i % 4 == 1 and i % 97 != 5]


def test_projection_and_time_travel(spark, events):
    t, first, opts = events
    df = _read(spark, opts, "db.events", columns="name,id")
    assert df.columns == ["name", "id"]
    assert df.count() == t.scan().count()
    old = _read(spark, opts, "db.events", **{"snapshot-id": str(first)})
    assert old.count() == 20_000
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW ev USING paimon_engine OPTIONS (path 'db.events', "
              f"`catalog.uri` '{opts['catalog.uri']}', `catalog.warehouse` '{opts['catalog.warehouse']}')")
    assert spark.sql("SELECT count(*) AS c FROM ev WHERE k = 2").collect()[0].c == \
        t.scan(filter=col("k") == 2).count()


def test_write_append_overwrite_and_concurrent(spark, tmp_path):
    loc = str(tmp_path / "tbl")
    df = spark.range(0, 1000, numPartitions=2).selectExpr("id", "cast(id % 3 as int) AS g")
    df.write.format("paimon_engine").option("partition-by", "g").mode("append").save(loc)
    back = spark.read.format("paimon_engine").load(loc)
    assert back.count() == 1000
    from paimon_engine.spark import register
    register(spark)                                     # explicit registration works as well
    for lo in (5000, 6000):
        spark.range(lo, lo + 100).selectExpr("id", "cast(1 as int) AS g") \
            .write.format("paimon_engine").mode("append").save(loc)
    from paimon_engine.catalog import FileSystemCatalog
    t = FileSystemCatalog(str(tmp_path)).load_table_at(loc)
    assert len(t.snapshots()) == 3
    assert t.scan().count() == 1200
    spark.range(0, 10).selectExpr("id", "cast(0 as int) AS g").write.format("paimon_engine") \
        .mode("overwrite").save(loc)
    assert sorted(r.id for r in spark.read.format("paimon_engine").load(loc).collect()) == list(range(10))


def test_failed_write_leaves_nothing(spark, tmp_path):
    from pyspark.sql.functions import udf
    loc = str(tmp_path / "tbl")
    spark.range(0, 10).write.format("paimon_engine").mode("append").save(loc)

    @udf("long")
    def boom(x):
        if x % 50_000 == 49_999:
            raise ValueError("task failure")
        return x

    # every task fails after it has written some files; each deletes what it wrote
    bad = spark.range(0, 100_000, numPartitions=2).select(boom("id").alias("id"))
    with pytest.raises(Exception):
        bad.write.format("paimon_engine").mode("append").save(loc)
    from paimon_engine.catalog import FileSystemCatalog
    t = FileSystemCatalog(str(tmp_path)).load_table_at(loc)
    assert len(t.snapshots()) == 1 and t.scan().count() == 10
    data_files = [p for p in (tmp_path / "tbl" / "data").rglob("*") if p.is_file() and p.name != "_aborted"]
    assert len(data_files) == len(t.data_files())     # no orphaned data files


def test_abort_deletes_what_tasks_reported(tmp_path):
    from paimon_engine.spark.source import TableWriter
    from paimon_engine.catalog import FileSystemCatalog
    loc = str(tmp_path / "tbl")
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_table_at(loc, pa.schema([("id", pa.int64())]))
    w = TableWriter({"path": loc}, overwrite=False, rows_per_file_batch=100)
    batches = [pa.record_batch([pa.array(range(i, i + 100), pa.int64())], names=["id"]) for i in range(0, 300, 100)]
    msg = w.write(iter(batches))
    assert len(msg.locations) == 3 and all((tmp_path / "tbl").exists() for _ in msg.locations)
    w.abort([msg, None])
    assert [p.name for p in (tmp_path / "tbl" / "data").rglob("*") if p.is_file()] == ["_aborted"]
    w = TableWriter({"path": loc}, overwrite=False, rows_per_file_batch=100)
    msg2 = w.write(iter(batches))
    w.commit([msg2, None])
    assert sorted(cat.load_table_at(loc).to_arrow().column("id").to_pylist()) == list(range(300))


def test_abort_deletes_file_indexes_too(tmp_path):
    from paimon_engine.spark.source import TableWriter
    from paimon_engine.catalog import FileSystemCatalog
    loc = str(tmp_path / "tbl")
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_table_at(loc, pa.schema([("id", pa.int64())]),
                        properties={"write.format.default": "row", "file-index.bitmap.columns": "id",
                                    "file-index.in-manifest-threshold": "8"})
    w = TableWriter({"path": loc}, overwrite=False, rows_per_file_batch=100)
    batches = [pa.record_batch([pa.array(range(i, i + 100), pa.int64())], names=["id"]) for i in range(0, 200, 100)]
    msg = w.write(iter(batches))
    assert sum(x.endswith(".index") for x in msg.locations) == 2
    w.abort([msg])
    assert [p.name for p in (tmp_path / "tbl" / "data").rglob("*") if p.is_file()] == ["_aborted"]
    w = TableWriter({"path": loc}, overwrite=False, rows_per_file_batch=100)
    msg = w.write(iter(batches))
    w.commit([msg])
    from paimon_engine.expressions import col
    t = cat.load_table_at(loc)
    scan = t.scan(filter=col("id") == 150)
    assert len(scan.plan_files()) == 1 and scan.to_arrow().column("id").to_pylist() == [150]


def test_concurrent_driver_commits_both_land(tmp_path):
    """Two jobs' commits racing on one table: the loser retries on the new metadata; nothing is duplicated."""
    import threading
    from paimon_engine.spark.source import TableWriter
    from paimon_engine.catalog import FileSystemCatalog
    loc = str(tmp_path / "tbl")
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_table_at(loc, pa.schema([("id", pa.int64())]))
    writers = [TableWriter({"path": loc}, overwrite=False) for _ in range(4)]
    msgs = [w.write(iter([pa.record_batch([pa.array(range(i * 10, i * 10 + 10), pa.int64())], names=["id"])]))
            for i, w in enumerate(writers)]
    barrier = threading.Barrier(4)
    errors = []

    def commit(w, m):
        barrier.wait()
        try:
            w.commit([m])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=commit, args=(w, m)) for w, m in zip(writers, msgs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    t = cat.load_table_at(loc)
    assert len(t.snapshots()) == 4
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(40))


def test_row_files(spark, tmp_path):
    from paimon_engine.formats.row import RowFileWriter
    from paimon_engine.types import parse_paimon_type
    schema = parse_paimon_type("ROW<id BIGINT, name STRING, ts TIMESTAMP(6), d DECIMAL(10, 2)>")
    import datetime as dt
    import decimal
    for i in range(2):
        n = 1000
        with RowFileWriter(str(tmp_path / f"part-{i}.row"), schema) as w:
            w.write(pa.table({"id": pa.array(range(i * n, (i + 1) * n), pa.int64()),
                              "name": [f"x{j}" for j in range(n)],
                              "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(seconds=j) for j in range(n)],
                                             pa.timestamp("us")),
                              "d": pa.array([decimal.Decimal(j) / 4 for j in range(n)], pa.decimal128(10, 2))}))
    df = spark.read.format("paimon_engine").option("format", "row") \
        .option("schema", schema.to_paimon_string()).load(str(tmp_path))
    assert df.count() == 2000
    assert sorted(r.id for r in df.filter("id >= 1990").collect()) == list(range(1990, 2000))
    one = spark.read.format("paimon_engine").option("schema", "id BIGINT, name STRING") \
        .load(str(tmp_path / "part-1.row"))
    assert one.orderBy("id").first().asDict() == {"id": 1000, "name": "x0"}


def test_delete_and_upsert_helpers(spark, tmp_path):
    from paimon_engine.spark import delete_rows, upsert
    from paimon_engine.catalog import FileSystemCatalog
    loc = str(tmp_path / "tbl")
    spark.range(0, 100, numPartitions=2).selectExpr("id", "if(id < 0, null, concat('v', id)) AS s") \
        .write.format("paimon_engine").mode("append").save(loc)
    delete_rows(spark.range(10, 20).selectExpr("id"), loc, key_columns=["id"])
    t = FileSystemCatalog(str(tmp_path)).load_table_at(loc)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [i for i in range(100) if not 10 <= i < 20]
    assert t.current_snapshot().operation == "delete"
    upsert(spark.createDataFrame([(1, "new"), (500, "x")], "id long, s string"), loc, key_columns=["id"])
    t.refresh()
    rows = dict(zip(*[t.to_arrow().column(c).to_pylist() for c in ("id", "s")]))
    assert rows[1] == "new" and rows[500] == "x" and len(rows) == 91
